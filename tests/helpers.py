"""Shared test helpers: random inputs kept away from kinks, and `check_op` (forward vs NumPy,
gradcheck in float64, optional gradgradcheck).

    from helpers import check_op, UNARY_SHAPES, BINARY_SHAPES
    check_op(lambda x, y: x * y, np.multiply, (2, 1), (1, 3))
"""
import contextlib
import threading

import numpy as np
import pytest

import minigrad as mg
from minigrad import kernels
from minigrad.autograd import gradcheck, gradgradcheck, observers

# the shapes and samplers of the op registry (one definition, shared with hand tests)
from minigrad.testing.opinfo import (  # noqa: E402,F401
    BINARY_SHAPES, UNARY_SHAPES, nonzero, positive, sample)


def ids(shapes):
    """Readable pytest ids for a list of shapes or shape tuples."""
    return [str(s).replace(" ", "") for s in shapes]


def leaf(arr, requires_grad=True):
    """A float64 leaf tensor holding a copy of arr."""
    return mg.tensor(np.array(arr, dtype=np.float64), requires_grad=requires_grad)


def check_op(fn, np_fn, *shapes, samplers=None, seed=0, gradgrad=True, grad=True,
             rtol=1e-7, atol=1e-10, grad_rtol=1e-3, grad_atol=1e-5, check_float32=True):
    """Check a differentiable op on float64 inputs of the given shapes.

    fn: takes minigrad Tensors and returns a Tensor (or a tuple of Tensors).
    np_fn: the NumPy reference taking the same arrays (None to skip the forward comparison).
    samplers: one function (shape, rng) -> ndarray per input, or one for all (default `sample`).
    Checks: the forward matches np_fn (values and shape); the output stays float32 for float32 inputs;
    gradcheck; gradgradcheck unless gradgrad=False. Returns the float64 output.
    """
    rng = np.random.default_rng(seed)
    if samplers is None:
        samplers = sample
    if callable(samplers):
        samplers = [samplers] * len(shapes)
    arrays = [s(shape, rng) for s, shape in zip(samplers, shapes)]
    inputs = [leaf(a) for a in arrays]
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    if np_fn is not None:
        ref = np_fn(*[a.copy() for a in arrays])
        refs = ref if isinstance(ref, tuple) else (ref,)
        assert len(outs) == len(refs)
        for o, r in zip(outs, refs):
            r = np.asarray(r)
            assert o.shape == r.shape, f"shape {o.shape} != NumPy's {r.shape}"
            np.testing.assert_allclose(o.data.numpy(), r, rtol=rtol, atol=atol)
    for o in outs:
        assert o.dtype == mg.float64, f"float64 inputs gave {o.dtype}"
    if check_float32:
        out32 = fn(*[mg.tensor(a.astype(np.float32), requires_grad=True) for a in arrays])
        for o in (out32 if isinstance(out32, tuple) else (out32,)):
            assert o.dtype == mg.float32, f"float32 inputs gave {o.dtype}"
    if grad:
        assert gradcheck(fn, tuple(inputs), atol=grad_atol, rtol=grad_rtol)
        if gradgrad:
            assert gradgradcheck(fn, tuple(inputs), atol=grad_atol, rtol=grad_rtol)
    return out


def grads(fn, *arrays, dtype=np.float64):
    """Evaluate fn on fresh leaves made from arrays, backward sum(out), return (out, [x.grad arrays])."""
    xs = [mg.tensor(np.array(a, dtype=dtype), requires_grad=True) for a in arrays]
    out = fn(*xs)
    out.sum().backward()
    return out, [None if x.grad is None else x.grad.data.numpy() for x in xs]


def conv3x3_case(shape, padding, dtype, bias):
    """Random float inputs for a 3x3 conv2d of shape (N, C, O, H, W) with padding (an int, a pair
    or "same"): x, w (scaled by 1/sqrt(9C)), b (None without bias) and an upstream gradient g of the
    output's shape, as arrays of dtype."""
    N, Ci, O, H, W = shape
    rng = np.random.default_rng(N + Ci + O + H + W)
    xs = rng.standard_normal((N, Ci, H, W)).astype(dtype)
    ws = (rng.standard_normal((O, Ci, 3, 3)) / np.sqrt(9 * Ci)).astype(dtype)
    bs = rng.standard_normal(O).astype(dtype) if bias else None
    ph, pw = (padding,) * 2 if isinstance(padding, int) else ((1, 1) if padding == "same" else padding)
    gs = rng.standard_normal((N, O, H + 2 * ph - 2, W + 2 * pw - 2)).astype(dtype)
    return xs, ws, bs, gs


def assert_results_close(got, ref, dtype):
    """Two lists of arrays (an op's output and gradients by two paths) equal in shape and dtype and
    within float rounding of each other, relative to each reference's largest entry."""
    assert len(got) == len(ref)
    for a, r in zip(got, ref):
        assert a.shape == r.shape and a.dtype == r.dtype == dtype
        tol = 1e-12 if dtype == np.float64 else 2e-6
        assert np.abs(a - r).max() <= tol * np.abs(r).max(), (np.abs(a - r).max(), np.abs(r).max())


@contextlib.contextmanager
def ops_seen():
    """`with ops_seen() as seen:` the Function class of every op applied in the block, in call
    order (an op observer, autograd/observers.py: what the profiler and anomaly mode see)."""
    seen = []

    class _Spy:
        def enter(self, cls, args):
            seen.append(cls)

        def exit(self, cls, args, out, token):
            pass
    with observers.register_op_observer(_Spy()):
        yield seen


def rewrite_graph_file(src, dst, edit=None, members=None):
    """Copy the graph file (a zip) src to dst with graph.json edited (edit(manifest)) and members
    replaced: how the graph-file tests make tampered and older files."""
    import json
    import zipfile
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w") as zo:
        for n in zi.namelist():
            data = zi.read(n)
            if n == "graph.json" and edit is not None:
                m = json.loads(data)
                edit(m)
                data = json.dumps(m).encode()
            if members and n in members:
                data = members[n]
            zo.writestr(n, data)
    return dst


needs_numba = pytest.mark.skipif(not kernels.available(), reason="numba is not installed (the NumPy paths serve)")


def at_once(fn, n=8, timeout=60):
    """fn(i) for i in range(n) on n threads released together (a barrier), as n callers at once;
    raises the first exception a caller raised, and fails if a caller has not finished in time."""
    errors = []
    barrier = threading.Barrier(n)

    def caller(i):
        try:
            barrier.wait()
            fn(i)
        except BaseException as e:  # noqa: BLE001 -- raised in the test below
            errors.append(e)
    ts = [threading.Thread(target=caller, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
    if errors:
        raise errors[0]
    assert not any(t.is_alive() for t in ts), "a caller thread did not finish"


def train_step(m, opt):
    """step(x, y): one cross-entropy training step of model m with optimizer opt, returning the loss
    (the step the traced/compiled-step tests record and compare with eager)."""
    def step(x, y):
        opt.zero_grad()
        loss = mg.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


@contextlib.contextmanager
def kernels_enabled(on):
    """minigrad's numba kernels on (the test skips where numba is not installed) or off (the NumPy
    paths) inside the block; the previous setting after it."""
    if on:
        pytest.importorskip("numba", reason="the numba kernels are an optional extra")
    old = kernels.set_enabled(on)
    try:
        assert kernels.available() == on
        yield
    finally:
        kernels.set_enabled(old)


def nested_control_flow(w):
    """f(xs) -> (h, n, ys): a reversed mg.scan whose body holds an mg.cond and an inner mg.scan, a
    closure over w (3, 3) and a tuple carry; xs (T, 3). What saving, loading and exporting control
    flow must carry whole."""
    def nested(xs):
        def body(c, x):
            h, n = c
            h = mg.cond(h.sum() > 0, lambda h, x: (h @ w + x).tanh(), lambda h, x: (h - x).sigmoid(), (h, x))
            _, inner = mg.scan(lambda a, b: (a + b, a * b), mg.tensor(0.0), x)
            return (h, n + 1), inner.sum() + h.sum()
        (h, n), ys = mg.scan(body, (mg.zeros(3), mg.tensor(0)), xs, reverse=True)
        return h, n, ys
    return nested
