"""conv2d's direct weight gradient for 3x3 stride-1 convolutions of few channels (a first layer):
kernels/conv.py's weight_grad3x3 against the definition in NumPy, over odd sizes, every padding,
odd output channel counts, both memory layouts of x and g and both float dtypes; conv2d's gradients
with the path forced on against the GEMM path; gradcheck and gradgradcheck through it; which
convolutions take it; and a backward whose decision differs from its forward's."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.ops import _conv2d as C

from helpers import assert_results_close, conv3x3_case

pytest.importorskip("numba", reason="the direct weight gradient is a numba kernel (an optional extra)")
if not kernels.available():
    pytest.skip("numba is switched off (MINIGRAD_NUMBA=0): the direct weight gradient is not taken", allow_module_level=True)


def _ref(x, g, pt, pl):
    """dw[o, c, i, j] = sum over n, oh, ow of g[n, o, oh, ow] * xpad[n, c, oh + i, ow + j]; db."""
    N, Ci, H, W = x.shape
    OH, OW = g.shape[2:]
    xp = np.zeros((N, Ci, OH + 2, OW + 2))
    xp[:, :, pt:pt + H, pl:pl + W] = x
    dw = np.empty((g.shape[1], Ci, 3, 3))
    for i in range(3):
        for j in range(3):
            dw[:, :, i, j] = np.einsum("nopq,ncpq->oc", g, xp[:, :, i:i + OH, j:j + OW])
    return dw, g.sum(axis=(0, 2, 3))


def _layout(a, channel_major):
    """(a in memory order, the flag): C-contiguous (N, C, H, W), or stored (C, N, H, W)."""
    if channel_major:
        return np.ascontiguousarray(a.transpose(1, 0, 2, 3)), True
    return np.ascontiguousarray(a), False


# N, C, O, H, W, pt, pl, OH, OW (pb = OH + 2 - H - pt >= 0)
_CASES = [
    (3, 1, 16, 28, 28, 1, 1, 28, 28),
    (2, 1, 5, 7, 9, 1, 1, 7, 9),      # odd sizes, an odd number of output channels
    (2, 2, 3, 6, 5, 0, 0, 4, 3),      # no padding
    (2, 3, 4, 5, 6, 2, 2, 7, 8),      # padding 2
    (1, 1, 1, 4, 7, 1, 0, 4, 5),      # asymmetric: rows padded, columns not
    (2, 1, 2, 6, 6, 1, 1, 5, 5),      # 'same'-like: padding only top-left of an even grid
    (1, 2, 3, 1, 1, 1, 1, 1, 1),      # a 1x1 image
]


@pytest.mark.parametrize("N,Ci,O,H,W,pt,pl,OH,OW", _CASES)
@pytest.mark.parametrize("x_cm", [False, True])
@pytest.mark.parametrize("g_cm", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_equals_the_definition(N, Ci, O, H, W, pt, pl, OH, OW, x_cm, g_cm, dtype):
    K = kernels.load("conv")
    rng = np.random.default_rng(N * 100 + Ci * 10 + O + H + W)
    x = rng.standard_normal((N, Ci, H, W)).astype(dtype)
    g = rng.standard_normal((N, O, OH, OW)).astype(dtype)
    dw = np.full((O, Ci, 3, 3), np.nan, dtype)
    db = np.full(O, np.nan, dtype)
    K.weight_grad3x3(*_layout(x, x_cm), *_layout(g, g_cm), dw, db, pt, pl)
    rdw, rdb = _ref(x.astype(np.float64), g.astype(np.float64), pt, pl)
    tol = 1e-14 if dtype == np.float64 else 1e-6  # (relative to the largest entry; measured <= 4e-16, 2e-7)
    assert np.abs(dw - rdw).max() <= tol * max(1.0, np.abs(rdw).max())
    assert np.abs(db - rdb).max() <= tol * max(1.0, np.abs(rdb).max())


def _force(monkeypatch, on):
    """The direct path's limits opened to every 3x3 stride-1 convolution (on) or closed (off)."""
    monkeypatch.setattr(C, "_DIRECT_DW_MAX_CO", 10 ** 9 if on else 0)
    monkeypatch.setattr(C, "_DIRECT_DW_MIN_PIXELS", 0)
    monkeypatch.setattr(C, "_DIRECT_DW_MIN_COLUMNS", 0)


def _grads(monkeypatch, direct, xs, ws, bs, gs, x_grad, **kw):
    """conv2d's output and the gradients of w, b (and x) with the direct path on or off."""
    _force(monkeypatch, direct)
    calls = []
    real = C._weight_grad3x3
    monkeypatch.setattr(C, "_weight_grad3x3", lambda *a: calls.append(1) or real(*a))
    x = mg.tensor(xs.copy(), requires_grad=x_grad)
    w = mg.tensor(ws.copy(), requires_grad=True)
    b = None if bs is None else mg.tensor(bs.copy(), requires_grad=True)
    out = F.conv2d(x, w, b, **kw)
    out.backward(mg.tensor(gs))
    assert bool(calls) == direct
    return [out.detach().numpy().copy()] + [t.grad.numpy().copy() for t in (w, b, x)
                                            if t is not None and t.requires_grad]


@pytest.mark.parametrize("shape,kw", [
    ((4, 1, 16, 28, 28), dict(padding=1)),
    ((3, 3, 5, 7, 9), dict(padding=1)),
    ((2, 2, 4, 6, 5), dict(padding=0)),
    ((2, 1, 3, 5, 6), dict(padding=2)),
    ((2, 2, 4, 6, 7), dict(padding=(1, 0))),
    ((2, 1, 4, 6, 7), dict(padding="same")),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_grad", [False, True])
def test_conv2d_direct_weight_grad_matches_the_gemm_path(monkeypatch, shape, kw, dtype, bias, x_grad):
    xs, ws, bs, gs = conv3x3_case(shape, kw["padding"], dtype, bias)
    got = _grads(monkeypatch, True, xs, ws, bs, gs, x_grad, **kw)
    ref = _grads(monkeypatch, False, xs, ws, bs, gs, x_grad, **kw)
    assert len(got) == 2 + bias + x_grad
    assert_results_close(got, ref, dtype)


def test_conv2d_direct_weight_grad_gradcheck_and_gradgradcheck(monkeypatch):
    _force(monkeypatch, True)
    rng = np.random.default_rng(5)
    x = mg.tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    b = mg.tensor(rng.standard_normal(3), requires_grad=True)
    calls = []
    real = C._weight_grad3x3
    monkeypatch.setattr(C, "_weight_grad3x3", lambda *a: calls.append(1) or real(*a))

    def f(x, w, b):
        return F.conv2d(x, w, b, padding=1)
    assert mg.autograd.gradcheck(f, (x, w, b))
    assert mg.autograd.gradgradcheck(f, (x, w, b))
    assert calls


def _takes(shape, wshape, dtype=np.float32):
    """Whether conv2d of these shapes (3x3, padding 1) computes its weight gradient directly."""
    geo = C._make_geom("conv2d", shape, (3, 3), (1, 1), (1, 1), (1,) * 4)
    g = np.zeros((shape[0], wshape[0], geo.OH, geo.OW), dtype)
    return C._direct_weight_grad(geo, 1, wshape[0], np.zeros(shape, dtype), g)


def test_which_convolutions_take_the_direct_weight_grad():
    assert _takes((64, 1, 28, 28), (16, 1, 3, 3))             # the MNIST CNN's first layer
    assert _takes((64, 1, 28, 28), (8, 1, 3, 3))              # the bench model's
    assert _takes((64, 1, 28, 28), (32, 1, 3, 3), np.float64)  # the 32/64 model's
    assert _takes((64, 2, 28, 28), (16, 2, 3, 3))
    assert not _takes((64, 1, 28, 28), (64, 1, 3, 3))         # a wide result: the GEMM wins
    assert not _takes((64, 3, 32, 32), (64, 3, 3, 3))
    assert not _takes((64, 1, 14, 14), (32, 1, 3, 3))         # small images: the GEMM wins
    assert not _takes((4, 1, 28, 28), (16, 1, 3, 3))          # 3136 positions: the GEMM wins


@pytest.mark.parametrize("change", ["none", "stride 2", "dilation 2", "groups 2", "5x5", "two dtypes",
                                    "float16", "numba off"])
def test_only_plain_3x3_convolutions_take_a_numba_path(change):
    """The Winograd path and the direct weight gradient both serve only _plain3x3 convolutions: 3x3,
    stride 1, undilated, one group, one float32 or float64 dtype, numba on. A convolution both
    would take (8 -> 4 channels, 28x28, batch 64) is taken by neither after any one change."""
    stride = 2 if change == "stride 2" else 1
    dilation = 2 if change == "dilation 2" else 1
    groups = 2 if change == "groups 2" else 1
    k = 5 if change == "5x5" else 3
    dt = np.float16 if change == "float16" else np.float32
    x = np.zeros((64, 8, 28, 28), dt)
    w = np.zeros((4, 8 // groups, k, k), np.float64 if change == "two dtypes" else dt)
    geo = C._make_geom("conv2d", x.shape, (k, k), (stride, stride), (dilation, dilation), (k // 2,) * 4)
    g = np.zeros((64, 4, geo.OH, geo.OW), w.dtype)
    old = kernels.set_enabled(change != "numba off")
    try:
        takes = C._winograd(geo, groups, x, w), C._direct_weight_grad(geo, groups, 4, x, g)
    finally:
        kernels.set_enabled(old)
    assert takes == ((True, True) if change == "none" else (False, False))


def test_the_forward_keeps_no_columns_for_a_direct_weight_grad(monkeypatch):
    """The direct pass reads x, so the forward does not hold on to its im2col columns."""
    rng = np.random.default_rng(6)
    x = mg.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    w = mg.tensor(rng.standard_normal((16, 1, 3, 3)).astype(np.float32), requires_grad=True)
    out = F.conv2d(x, w, padding=1)
    assert out.grad_fn.cols is None
    _force(monkeypatch, False)
    out = F.conv2d(x, w, padding=1)
    assert out.grad_fn.cols is not None


def test_backward_decides_again_when_the_limits_changed(monkeypatch):
    """Forward and backward decide each for itself: forward direct (no columns kept) with a GEMM
    backward makes the columns again; forward GEMM (columns kept) with a direct backward ignores
    them. The gradients agree."""
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((2, 2, 10, 10))
    ws = rng.standard_normal((5, 2, 3, 3))
    bs = rng.standard_normal(5)
    gs = rng.standard_normal((2, 5, 10, 10))
    results = []
    for first, second in ((True, False), (False, True), (False, False), (True, True)):
        _force(monkeypatch, first)
        w, b = (mg.tensor(a.copy(), requires_grad=True) for a in (ws, bs))
        out = F.conv2d(mg.tensor(xs), w, b, padding=1)
        _force(monkeypatch, second)
        out.backward(mg.tensor(gs))
        results.append((w.grad.numpy().copy(), b.grad.numpy().copy()))
    for dw, db in results[1:]:
        np.testing.assert_allclose(dw, results[0][0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(db, results[0][1], rtol=1e-12, atol=1e-12)
