"""Large elementwise results go into recycled arrays (kernels/buffers.py): the values are NumPy's,
a result is never an array something still reads, and the recycling happens only where the result
has the operand's shape, dtype and C layout."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.kernels import buffers

N = buffers.MIN_BYTES // 4 * 2  # float32 elements: a large array


def _pooled(arr):
    return any(arr is a for items in buffers._local.pools.values() for a in items)


@pytest.fixture(autouse=True)
def fresh_pool():
    buffers.clear()
    yield
    buffers.clear()


def test_chain_forward_backward_equals_numpy():
    rng = np.random.default_rng(0)
    xv = rng.standard_normal(N).astype(np.float32)
    x = mg.tensor(xv, requires_grad=True)
    for _ in range(3):  # later steps run on recycled arrays
        y = x
        for _ in range(5):
            y = (y * 1.5 + 0.25) / 1.25 - 0.5
        y = (-y).exp()
        x.grad = None
        y.sum().backward()
        ref = xv
        for _ in range(5):
            ref = (ref * np.float32(1.5) + np.float32(0.25)) / np.float32(1.25) - np.float32(0.5)
        np.testing.assert_array_equal(y.detach().numpy(), np.exp(-ref))
        np.testing.assert_allclose(x.grad.numpy(), -np.exp(-ref) * np.float32((1.5 / 1.25) ** 5), rtol=2e-6)
    assert _pooled(y.detach().numpy())  # the results did come from the pool


def test_a_result_in_use_is_never_written():
    x = mg.tensor(np.ones(N, np.float32))
    kept = [x * float(i + 2) for i in range(6)]          # each held by a Tensor
    view = (x + 10.0).numpy()[::2]                       # only a view of this one survives
    held = (x - 1.0).numpy()                             # only the array survives
    for _ in range(4):
        x * 7.0, x + 7.0, -x                              # new results, dropped at once
    for i, t in enumerate(kept):
        assert (t.numpy() == i + 2).all()
    assert (view == 11).all() and (held == 0).all()
    with mg.no_grad():
        for _ in range(4):
            (x * 3.0).exp()
    for i, t in enumerate(kept):
        assert (t.numpy() == i + 2).all()
    assert (view == 11).all() and (held == 0).all()


def test_saved_tensors_survive_until_backward():
    xv = np.linspace(0.5, 1.5, N).astype(np.float32)
    x = mg.tensor(xv, requires_grad=True)
    e = (x * 2.0).exp()                 # Exp saves its output for backward
    for _ in range(5):
        (x + 1.0) * 3.0                 # churn the pool meanwhile
    (e * x).sum().backward()
    ex = np.exp(xv * np.float32(2))
    np.testing.assert_allclose(x.grad.numpy(), ex * 2 * xv + ex, rtol=1e-6)


@pytest.mark.parametrize("case", ["broadcast", "strided", "int", "mixed dtype", "small"])
def test_no_recycling_where_the_result_would_differ(case):
    a = np.ones((4, N // 4), np.float32)
    if case == "broadcast":
        x, y = mg.tensor(a[:1]), mg.tensor(a)
        ref_shape = a.shape
    elif case == "strided":
        x, y = mg.from_numpy(a.T), mg.from_numpy(a.T)
        ref_shape = a.T.shape
    elif case == "int":
        x, y = mg.tensor(a.astype(np.int32)), mg.tensor(a.astype(np.int32))
        ref_shape = a.shape
    elif case == "mixed dtype":
        x, y = mg.tensor(a), mg.tensor(a.astype(np.float64))
        ref_shape = a.shape
    else:
        x, y = mg.tensor(np.ones(8, np.float32)), mg.tensor(np.ones(8, np.float32))
        ref_shape = (8,)
    out = x + y
    np.testing.assert_array_equal(out.numpy(), x.numpy() + y.numpy())
    assert out.shape == ref_shape and out.dtype == (x.numpy() + y.numpy()).dtype
    assert not _pooled(out.numpy())
    if case == "strided":  # NumPy keeps the operands' layout; so does minigrad
        assert out.numpy().strides == (x.numpy() + y.numpy()).strides


def test_buffers_result_rules():
    x = np.empty(N, np.float32)
    assert buffers.result(x).shape == x.shape and buffers.result(x).dtype == x.dtype
    assert buffers.result(x, 2.0) is not None and buffers.result(x, 3) is not None
    assert buffers.result(x, np.float32(2)) is None                 # a NumPy scalar: not an ndarray
    assert buffers.result(x, np.array(2, np.float32)) is not None   # 0-d of x's dtype
    assert buffers.result(x, np.array(2, np.float64)) is None       # the result would be float64
    assert buffers.result(x, np.empty(1, np.float32)) is None       # broadcast (1,) -> (N,): unsure
    assert buffers.result(x[::2]) is None
    assert buffers.result(np.empty(8, np.float32)) is None


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "expm1", "sqrt", "reciprocal", "sin", "cos", "tan",
                                  "tanh", "neg"])
@pytest.mark.parametrize("grad", [True, False])
def test_unary_ops_recycle_and_equal_numpy(name, grad):
    xv = np.linspace(0.1, 1.2, N).astype(np.float32)
    ref = getattr(np, {"neg": "negative"}.get(name, name))(xv)
    x = mg.tensor(xv, requires_grad=grad)
    outs = [getattr(mg, name)(x) for _ in range(3)]  # all alive: three different arrays
    for o in outs:
        np.testing.assert_array_equal(o.detach().numpy(), ref)
    assert len({id(o.detach().numpy()) for o in outs}) == 3
    del outs
    again = getattr(mg, name)(x)  # nothing holds the earlier results now: one comes back
    assert _pooled(again.detach().numpy())
    np.testing.assert_array_equal(again.detach().numpy(), ref)
