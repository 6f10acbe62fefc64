"""minigrad.kernels: the numba 2x2 max-pool forward against the NumPy path (bitwise), the NumPy path
when numba is absent, and the recycled buffers (never handed out while anything still reads them)."""
import sys

import numpy as np
import pytest

import minigrad as mg
from helpers import kernels_enabled
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.kernels import buffers
from minigrad.ops import _conv2d as C
from minigrad.ops import _pool2d as P
from minigrad.ops._conv2d import _channel_major


def _geo(x):
    return C._make_geom("max_pool2d", x.shape, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0))


def _inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    x[0, 0, 0, :2] = np.nan                 # NaN propagates (np.maximum)
    x[-1, -1, -1, -1] = np.nan
    x[0, -1, :2, :2] = 1.0                  # a four-way tie: the first maximum wins
    if shape[2] >= 4:
        x[-1, 0, 2:4, 0:2] = [[0.5, 0.25], [0.5, 0.5]]  # a tie across rows
    relu = np.maximum(x, 0)                 # ReLU outputs: many zero ties
    cm = relu.transpose(1, 0, 2, 3).copy().transpose(1, 0, 2, 3)  # channel-major, as conv2d's output
    return [x, relu, cm]


@pytest.mark.parametrize("shape", [(4, 3, 6, 8), (2, 1, 2, 2), (64, 8, 28, 28)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numba_max2x2_forward_equals_numpy_path_bitwise(shape, dtype):
    pytest.importorskip("numba", reason="the numba kernels are an optional extra")
    K = kernels.load("pool")
    for x in _inputs(shape, dtype):
        geo = _geo(x)
        xm, cm = P._mem_order(x)
        out, ih, iv = K.forward(xm, geo.OH, geo.OW)
        old = kernels.set_enabled(False)
        try:
            ref, (ih_ref, iv_ref, cm_ref) = P._max_2x2(x, geo)
        finally:
            kernels.set_enabled(old)
        assert cm == cm_ref
        got = out.transpose(1, 0, 2, 3) if cm else out
        assert np.array_equal(got, ref, equal_nan=True)
        assert np.array_equal(ih, ih_ref) and np.array_equal(iv, iv_ref.reshape(iv.shape))


@pytest.mark.parametrize("shape", [(4, 3, 6, 8), (2, 1, 2, 2), (64, 8, 28, 28)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numba_max2x2_backward_equals_numpy_path_bitwise(shape, dtype):
    pytest.importorskip("numba", reason="the numba kernels are an optional extra")
    rng = np.random.default_rng(2)
    for x in _inputs(shape, dtype):
        geo = _geo(x)
        _, (ih, iv, cm) = P._max_2x2(x, geo)
        g = rng.standard_normal((geo.N, geo.C, geo.OH, geo.OW)).astype(dtype)
        g[0, 0, 0, 0] = np.inf
        for gg in (g, g.transpose(1, 0, 2, 3).copy().transpose(1, 0, 2, 3)):
            got = P._max_2x2_scatter(gg, ih, iv, cm, geo)
            old = kernels.set_enabled(False)
            try:
                with np.errstate(invalid="ignore"):  # inf * 0 = nan, on both paths
                    ref = P._max_2x2_scatter(gg, ih, iv, cm, geo)
            finally:
                kernels.set_enabled(old)
            assert np.array_equal(got, ref, equal_nan=True)
            assert np.array_equal(np.signbit(got), np.signbit(ref))  # even the zeros' signs
            assert _channel_major(got) == _channel_major(ref)


@pytest.mark.parametrize("use_numba", [True, False])
def test_max_pool2d_gradcheck_and_indices_on_both_paths(use_numba):
    with kernels_enabled(use_numba):
        rng = np.random.default_rng(1)
        x = mg.tensor(rng.standard_normal((2, 3, 4, 6)), requires_grad=True)
        assert mg.autograd.gradcheck(lambda t: F.max_pool2d(F.relu(t), 2), (x,))
        assert mg.autograd.gradgradcheck(lambda t: F.max_pool2d(t, 2), (x,))
        torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the indices")
        out, idx = F.max_pool2d(x, 2, return_indices=True)
        tout, tidx = torch.nn.functional.max_pool2d(torch.from_numpy(x.detach().numpy()), 2, return_indices=True)
        assert np.array_equal(out.detach().numpy(), tout.numpy()) and np.array_equal(idx.numpy(), tidx.numpy())


def test_numpy_path_runs_when_numba_is_absent(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now raises ImportError
    monkeypatch.setattr(kernels, "_numba", None)
    monkeypatch.setattr(kernels, "_enabled", True)
    assert not kernels.available()
    x = mg.tensor(_inputs((3, 2, 4, 4), np.float32)[2], requires_grad=True)
    out = F.max_pool2d(x, 2)
    out.sum().backward()
    ref = x.detach().numpy().reshape(3, 2, 2, 2, 2, 2).max(axis=(3, 5))
    assert np.array_equal(out.detach().numpy(), ref, equal_nan=True)
    assert x.grad.numpy().sum() == out.numel()  # one 1 per window


def test_an_array_in_use_is_never_handed_out_again():
    buffers.clear()
    shape = (buffers.MIN_BYTES // 4 + 1,)
    a = buffers.empty(shape, np.float32)
    b = buffers.empty(shape, np.float32)
    assert a is not b
    view = a[::2]
    t = mg.Tensor._make(b)
    del a, b
    c = buffers.empty(shape, np.float32)
    assert c is not view.base and c is not t._data  # a view and a Tensor hold them
    del view
    d = buffers.empty(shape, np.float32)
    assert d.size == shape[0]
    assert buffers.empty(shape, np.float64).dtype == np.float64
    assert buffers.empty((3,), np.float32) is not buffers.empty((3,), np.float32)  # small: np.empty


def test_the_pool_stays_under_its_budget_dropping_arrays_no_longer_used(monkeypatch):
    buffers.clear()
    n = buffers.MIN_BYTES // 4
    monkeypatch.setattr(buffers, "MAX_BYTES", 3 * 4 * n + 64)
    a = buffers.empty((n,), np.float32)
    b = buffers.empty((n + 1,), np.float32)
    del b
    c = buffers.empty((n + 2,), np.float32)
    d = buffers.empty((n + 3,), np.float32)  # over budget: b's array (free) is dropped for it
    held = sum(x.nbytes for items in buffers._local.pools.values() for x in items)
    assert held == buffers._local.held <= buffers.MAX_BYTES
    assert (n + 1,) not in [k[0] for k in buffers._local.pools] and (n + 3,) in [k[0] for k in buffers._local.pools]
    e = buffers.empty((n + 4,), np.float32)  # nothing free: an ordinary array, the pool unchanged
    assert buffers._local.held == held and all(x is not e for items in buffers._local.pools.values() for x in items)
    assert a.size + c.size + d.size > 0


def test_like_keeps_the_layout():
    x = np.empty((8, 16, 32, 32), np.float32)
    cm = x.transpose(1, 0, 2, 3).copy().transpose(1, 0, 2, 3)
    assert buffers.like(x).flags.c_contiguous and buffers.like(x).shape == x.shape
    assert buffers.like(cm).shape == cm.shape and _channel_major(buffers.like(cm))
    assert buffers.like(x, dtype=bool).dtype == np.bool_
    assert buffers.like(x[:, :, ::2]) is None                   # another layout: the ufunc allocates
    assert buffers.like(x, np.empty((1, 16, 32, 32))) is None   # the result would broadcast
    assert buffers.like(np.empty((4,), np.float32)) is None     # small
    assert buffers.like(np.zeros(x.shape, np.int32)) is None


def _cnn_step(x, y, params):
    w1, b1, w2, b2, w3, b3 = params
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding=1)), 2)
    logits = F.linear(h.reshape(h.shape[0], -1), w3, b3)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    return loss, h


def test_recycled_buffers_change_no_result_and_keep_what_is_held(monkeypatch):
    """The bench CNN's step with every array recycled (MIN_BYTES = 0), holding the previous step's
    loss, pooled output and gradients: every value equals the run without recycling, and the held
    arrays are unchanged by the later steps."""
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.random((16, 1, 28, 28), dtype=np.float32))
    y = mg.tensor(rng.integers(0, 10, 16))
    shapes = [(8, 1, 3, 3), (8,), (16, 8, 3, 3), (16,), (10, 16 * 49), (10,)]
    init = [rng.uniform(-0.3, 0.3, s).astype(np.float32) for s in shapes]

    def run(min_bytes):
        monkeypatch.setattr(buffers, "MIN_BYTES", min_bytes)
        buffers.clear()
        params = [mg.tensor(a.copy(), requires_grad=True) for a in init]
        opt = mg.optim.SGD(params, lr=0.1, momentum=0.9)
        held, snaps = [], []
        for _ in range(3):
            opt.zero_grad()
            loss, h = _cnn_step(x, y, params)
            grads = [p.grad for p in params]
            opt.step()
            held.append((loss, h, grads))
            snaps.append([loss.detach().numpy().copy(), h.detach().numpy().copy()] + [g.numpy().copy() for g in grads])
        for (loss, h, grads), snap in zip(held, snaps):  # nothing held was overwritten
            now = [loss.detach().numpy(), h.detach().numpy()] + [g.numpy() for g in grads]
            assert all(np.array_equal(a, b) for a, b in zip(now, snap))
        return snaps, [p.detach().numpy().copy() for p in params]

    recycled, p1 = run(0)
    plain, p2 = run(1 << 62)
    for s1, s2 in zip(recycled, plain):
        assert all(np.array_equal(a, b) for a, b in zip(s1, s2))
    assert all(np.array_equal(a, b) for a, b in zip(p1, p2))


def test_conv_gradcheck_with_every_buffer_recycled(monkeypatch):
    monkeypatch.setattr(buffers, "MIN_BYTES", 0)
    buffers.clear()
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.standard_normal((2, 2, 6, 6)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    b = mg.tensor(rng.standard_normal(3), requires_grad=True)
    assert mg.autograd.gradcheck(lambda x, w, b: F.max_pool2d(F.relu(F.conv2d(x, w, b, padding=1)), 2), (x, w, b))
    assert mg.autograd.gradgradcheck(lambda x, w: F.conv2d(x, w, stride=2, padding=1), (x, w))
