"""mg.graph.trace: the IR printed like a jaxpr, forward graphs equal to eager bitwise, graph breaks with
the user's line, named state inputs, random ops drawing at each run, and whole training steps."""
import inspect

import numpy as np
import pytest

import minigrad as mg
from helpers import train_step
import minigrad.nn as nn
from minigrad.graph import GraphBreak


def _line(offset=0):
    return f"{__file__}:{inspect.currentframe().f_back.f_lineno + offset}"


def test_worked_example_prints_like_a_jaxpr():
    g = mg.graph.trace(lambda a, b, c: (a + b) * c, mg.tensor(2.0), mg.tensor(3.0), mg.tensor(4.0))
    assert str(g) == ("{ lambda ; a:f32[] b:f32[] c:f32[]. let\n"
                      "    d:f32[] = add a b\n"
                      "    e:f32[] = mul d c\n"
                      "  in (e,) }")
    assert g(mg.tensor(1.0), mg.tensor(2.0), mg.tensor(5.0)).item() == 15.0


def test_mg_trace_is_the_matrix_trace_and_the_old_tracer_spelling_warns():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the matrix trace warns about nothing
        assert mg.trace(mg.eye(3)).item() == 3.0
    with pytest.warns(DeprecationWarning, match=r"use mg\.graph\.trace\(fn, \*args\)") as record:
        g = mg.trace(lambda a, b: a * b, mg.tensor(2.0), mg.tensor(3.0)); line = _line()
    assert len(record) == 1 and f"{record[0].filename}:{record[0].lineno}" == line  # the caller's line
    assert str(g) == str(mg.graph.trace(lambda a, b: a * b, mg.tensor(2.0), mg.tensor(3.0)))


def _mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 10))


def test_mlp_forward_bitwise_and_reads_parameters_at_each_run():
    mg.manual_seed(0)
    m = _mlp().eval()
    g = mg.graph.trace(m, mg.randn(8, 1, 28, 28))
    assert [e.prim for e in g.eqns] == ["reshape", "linear", "relu", "linear"]
    assert sorted(g.state_names()) == ["1.bias", "1.weight", "4.bias", "4.weight"]
    assert not g.consts
    x = mg.randn(8, 1, 28, 28)
    assert np.array_equal(g(x).numpy(), m(x).detach().numpy())
    with mg.no_grad():
        m[1].weight.mul_(2.0)  # a named input, not a baked constant
    assert np.array_equal(g(x).numpy(), m(x).detach().numpy())


def test_cnn_eval_forward_bitwise():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    from mnist_cnn import build_model
    mg.manual_seed(0)
    m = build_model()
    m.train()
    m(mg.randn(16, 1, 28, 28))  # running statistics away from their initial values
    m.eval()
    g = mg.graph.trace(m, mg.randn(4, 1, 28, 28))
    x = mg.randn(4, 1, 28, 28)
    assert np.array_equal(g(x).numpy(), m(x).detach().numpy())


def test_closure_and_global_tensors_are_named_inputs():
    w = mg.tensor([1.0, 2.0])
    g = mg.graph.trace(lambda x: x * w + GLOBAL_T, mg.tensor([1.0, 1.0]))
    assert sorted(g.state_names()) == ["GLOBAL_T", "w"]
    w.copy_(mg.tensor([3.0, 4.0]))
    assert g(mg.tensor([1.0, 1.0])).tolist() == [13.0, 14.0]


GLOBAL_T = mg.tensor([10.0, 10.0])


@pytest.mark.parametrize("n_old", [1, 8])  # 8: past the few answers from the young objects, one full list
def test_tensors_from_before_are_inputs_and_new_ones_constants(n_old):
    """What existed before the trace is read at each run; a tensor made inside is baked in; a NumPy
    NumPy value of an old tensor is a graph break. The collector's frozen set is left
    as it was, also after an error."""
    import gc
    olds = [mg.tensor([float(k), 1.0]) for k in range(n_old)]

    def f(x):
        new = mg.tensor([5.0, 6.0])
        for o in olds:
            x = x + o
        return x * new

    g = mg.graph.trace(f, mg.tensor([1.0, 1.0]))
    assert len(g.state) == n_old and len(g.consts) == 1
    olds[0].copy_(mg.tensor([100.0, 100.0]))
    want = (mg.tensor([1.0, 1.0]) + sum(o for o in olds)) * mg.tensor([5.0, 6.0])
    assert g(mg.tensor([1.0, 1.0])).tolist() == want.tolist()
    assert gc.get_freeze_count() == 0
    with pytest.raises(ZeroDivisionError):
        mg.graph.trace(lambda x: x * (1 / 0), mg.tensor([1.0]))
    assert gc.get_freeze_count() == 0
    old = olds[0]
    with pytest.raises(GraphBreak, match=r"\.numpy\(\) on a traced tensor"):  # an old tensor's value
        mg.graph.trace(lambda x: x + mg.from_numpy(old.numpy()[:1]), mg.tensor([1.0]))
    assert gc.get_freeze_count() == 0


def test_declared_constants_are_baked():
    w = mg.tensor([1.0, 2.0])
    g = mg.graph.trace(lambda x: x * w, mg.tensor([1.0, 1.0]), constants=[w])
    assert g.state == [] and len(g.consts) == 1


def test_user_function_is_one_call_equation():
    class Cube(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            return g

    g = mg.graph.trace(lambda x: Cube.apply(x) + 1.0, mg.tensor([2.0]))
    assert [e.prim for e in g.eqns] == ["cube", "add"]
    assert g.eqns[0].fn is Cube
    assert g(mg.tensor([3.0])).tolist() == [28.0]


@pytest.mark.parametrize("what, fn", [
    (".item()", lambda x: x.sum().item()),
    ("float()", lambda x: float(x.sum())),
    ("int()", lambda x: int(x.sum())),
    ("bool()", lambda x: x if x.sum() else -x),
    (".tolist()", lambda x: x.tolist()),
    (".numpy()", lambda x: x.numpy()),
    ("iterating", lambda x: [r for r in x]),
    ("np.asarray", lambda x: np.asarray(x)),
])
def test_graph_break_names_the_conversion_and_the_users_line(what, fn):
    line = f"{__file__}:{fn.__code__.co_firstlineno}"
    with pytest.raises(GraphBreak) as info:
        mg.graph.trace(fn, mg.ones(3))
    msg = str(info.value)
    assert what in msg and line in msg, msg


def test_conversion_of_a_constant_is_not_a_break():
    g = mg.graph.trace(lambda x: x * float(mg.tensor(2.0)), mg.ones(2))
    assert g(mg.ones(2)).tolist() == [2.0, 2.0]


def test_dropout_draws_a_fresh_mask_each_run_like_eager():
    mg.manual_seed(3)
    g = mg.graph.trace(lambda x: nn.functional.dropout(x, 0.5), mg.ones(1000))
    assert [e.prim for e in g.eqns] == ["dropout_mask", "mul"]
    assert "rng" in g.state_names()
    x = mg.ones(1000)
    mg.manual_seed(11)
    eager = [nn.functional.dropout(x, 0.5).numpy() for _ in range(3)]
    mg.manual_seed(11)
    traced = [g(x).numpy() for _ in range(3)]
    for a, b in zip(eager, traced):
        assert np.array_equal(a, b)
    assert not np.array_equal(traced[0], traced[1])


def _train(build, make_opt, steps, traced):
    mg.manual_seed(0)
    x, y = mg.randn(16, 1, 28, 28), mg.randint(0, 10, (16,))
    mg.manual_seed(1)
    m = build()
    opt = make_opt(m.parameters())
    step = train_step(m, opt)
    mg.manual_seed(7)
    if not traced:
        losses = [step(x, y).item() for _ in range(steps)]
        return m, losses, None
    # one eager step makes the optimizer state (a Python branch a trace would unroll), then tracing
    # runs the second step; the graph runs the rest
    losses = [step(x, y).item()]
    try:
        g = mg.graph.trace(step, x, y)
    except GraphBreak as e:
        if "bypassed" in str(e):  # an optimizer that still updates ._data with NumPy
            pytest.skip(f"this optimizer writes parameters with NumPy, not in-place Tensor ops: {e}")
        raise
    losses.append(g.result.item())
    losses += [g(x, y).item() for _ in range(steps - 2)]
    return m, losses, g


def test_traced_sgd_step_of_the_mlp_with_dropout_equals_eager_for_100_steps():
    sgd = lambda p: mg.optim.SGD(p, lr=0.05, momentum=0.9)  # noqa: E731
    m1, l1, _ = _train(_mlp, sgd, 100, traced=False)
    m2, l2, g = _train(_mlp, sgd, 100, traced=True)
    assert l1 == l2
    for (k, a), (_, b) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert np.array_equal(a.numpy(), b.numpy()), k
    prims = g.count()
    assert prims["dropout_mask"] == 1 and prims["set_grad"] == 4 and prims["assign"] >= 8
    # the effects write named inputs: parameters and momentum buffers
    targets = {e.target for e in g.effects}
    assert {"m.1.weight", "m.1.bias", "m.4.weight", "m.4.bias"} <= targets
    assert any("momentum_buffer" in t for t in targets)


def _cnn():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    from mnist_cnn import build_model
    return build_model()


def test_traced_sgd_step_of_the_cnn_with_batchnorm_equals_eager_for_100_steps():
    sgd = lambda p: mg.optim.SGD(p, lr=0.02, momentum=0.9)  # noqa: E731
    m1, l1, _ = _train(_cnn, sgd, 100, traced=False)
    m2, l2, g = _train(_cnn, sgd, 100, traced=True)
    assert l1 == l2
    for (k, a), (_, b) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert np.array_equal(a.numpy(), b.numpy()), k  # parameters and BatchNorm running stats
    targets = {e.target for e in g.effects}
    assert {"m.1.running_mean", "m.1.running_var", "m.1.num_batches_tracked"} <= targets
    # nothing computed from the data is baked in: the constants are scalars (momentum, lr, ...)
    assert all(a.size == 1 for _, a in g.consts)


def test_traced_adam_step_of_the_mlp_equals_eager_for_30_steps():
    # Adam's step count is a state tensor bumped in the graph and its bias corrections are an op
    # (no .item()): the traced step runs on (tests/optim/test_traced_steps.py has every optimizer)
    adam = lambda p: mg.optim.Adam(p, lr=1e-3)  # noqa: E731
    m1, l1, _ = _train(_mlp, adam, 30, traced=False)
    m2, l2, g = _train(_mlp, adam, 30, traced=True)
    assert l1 == l2
    for (k, a), (_, b) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert np.array_equal(a.numpy(), b.numpy()), k
    assert "opt.param_groups[0].lr" in g.state_names()  # an input read at each run, not a constant


def test_a_numpy_write_into_a_parameter_is_a_graph_break():
    p = mg.ones(3)

    def f(x):
        y = x * p
        p._data[...] = 2.0
        p._bump_version()  # what a NumPy-writing optimizer does
        return y
    with pytest.raises(GraphBreak, match="bypassed"):
        mg.graph.trace(f, mg.ones(3))


def test_a_trace_lets_intermediates_die_and_reused_ids_are_new_values():
    """The tracer holds no traced value alive (its id tables forget an object as it dies), so a
    trace's memory is eager's; an object that gets a dead one's id is not taken for it."""
    import weakref
    dead = []

    def f(x):
        acc = x
        for _ in range(40):     # temporaries die every iteration: their ids come back
            t = acc * 1.5
            r = weakref.ref(t)
            acc = t.tanh() + x
            del t
            dead.append(r() is None)
        return acc
    x = mg.randn(64)
    g = mg.graph.trace(f, x)
    assert all(dead)
    y = mg.randn(64)
    np.testing.assert_array_equal(g(y).numpy(), f(y).numpy())
