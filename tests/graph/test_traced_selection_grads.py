"""Ops whose gradient depends on which element was selected (median, kthvalue, mode, amax/amin and
their ties, max/min over all elements, norm(inf), scatter_reduce amax/amin): a traced backward must
recompute the selection on each new input, never bake in the one from trace time (a silently wrong
gradient under mg.jit) nor break the trace by counting ties with NumPy."""
import numpy as np
import pytest

import minigrad as mg

INF = float("inf")
# the ops; X1 is the trace-time input, X2 a new one whose selected elements or ties differ for each
X1 = [[1.0, 5.0, 2.0], [3.0, 5.0, 0.0], [3.0, 9.0, 2.0], [0.5, -1.0, 2.0]]
X2 = [[4.0, 5.0, -3.0], [6.0, 8.0, 6.0], [6.0, -8.0, 6.0], [8.0, 1.0, -8.0]]
OPS = {
    "median": lambda x: mg.median(x),
    "median.dim": lambda x: mg.median(x, 0).values,
    "median.dim_keepdim": lambda x: mg.median(x, 1, keepdim=True).values,
    "median.1d": lambda x: mg.median(x[:, 1], 0).values,
    "nanmedian": lambda x: mg.nanmedian(x),
    "nanmedian.dim": lambda x: mg.nanmedian(x, 1).values,
    "kthvalue": lambda x: mg.kthvalue(x, 2, 0).values,
    "mode": lambda x: mg.mode(x, 0).values,
    "amax": lambda x: mg.amax(x, 0),
    "amax.keepdim": lambda x: mg.amax(x, 1, keepdim=True),
    "amin": lambda x: mg.amin(x),
    "max.full": lambda x: mg.max(x),
    "min.full": lambda x: mg.min(x),
    "norm.inf": lambda x: mg.norm(x, INF),
    "norm.neginf": lambda x: mg.norm(x, -INF, 1),
}


def _grad_fn(op):
    def f(x):
        y = op(x).sum()
        return mg.autograd.grad(y, x)[0]
    return f


def _t(a):
    return mg.tensor(np.array(a, np.float32), requires_grad=True)


@pytest.mark.parametrize("name", sorted(OPS))
def test_traced_gradient_follows_the_new_selection(name):
    f = _grad_fn(OPS[name])
    graph = mg.graph.trace(f, _t(X1))
    old, want = f(_t(X1)).numpy(), f(_t(X2)).numpy()
    assert not np.array_equal(old, want)  # the new input selects other elements: a baked run would fail
    got = graph(_t(X2)).numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want), (name, got, want, str(graph))


@pytest.mark.parametrize("name", ["median", "median.dim", "amax", "max.full", "norm.inf"])
def test_jit_gradient_follows_the_new_selection(name):
    f = _grad_fn(OPS[name])
    jf = mg.jit(f, fullgraph=True)
    jf(_t(X1))
    got = jf(_t(X2)).numpy()
    assert jf.traces == 1  # the second call ran the compiled program
    assert np.array_equal(got, f(_t(X2)).numpy())


def test_ties_share_evenly_after_tracing():
    # three-way tie in the new input, none at trace time: each tied element gets a third
    f = _grad_fn(lambda x: mg.amax(x))
    graph = mg.graph.trace(f, _t([1.0, 2.0, 3.0, 0.0]))
    got = graph(_t([3.0, 3.0, 3.0, 0.0])).numpy()
    np.testing.assert_array_equal(got, np.array([1, 1, 1, 0], np.float32) / np.float32(3))


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_traced_scatter_reduce_gradient_follows_the_new_selection(reduce, include_self):
    idx = mg.tensor(np.array([0, 1, 0, 1, 2]))

    def f(x, s):
        y = x.scatter_reduce(0, idx, s, reduce, include_self=include_self).sum()
        return mg.autograd.grad(y, [x, s])

    x1, s1 = _t([1.0, 5.0, 3.0]), _t([1.0, 2.0, 4.0, 5.0, 0.0])
    x2, s2 = _t([4.0, 0.0, 7.0]), _t([4.0, 2.0, 2.0, -5.0, 7.0])
    graph = mg.graph.trace(f, x1, s1)
    old = [g.numpy() for g in f(x1, s1)]
    want = [g.numpy() for g in f(x2, s2)]
    assert not all(np.array_equal(a, b) for a, b in zip(old, want))
    got = [g.numpy() for g in graph(x2, s2)]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w), (reduce, include_self, got, want)
