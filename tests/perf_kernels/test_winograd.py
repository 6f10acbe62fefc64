"""conv2d's Winograd F(2x2, 3x3) path (minigrad/kernels/winograd.py, ops/_conv2d.py's _wino_*):
the four numba transforms against their matrix definitions in NumPy and against each other as
adjoints; conv2d's forward and three gradients on the Winograd path against the im2col path, over
odd sizes, every padding, both memory layouts and both float dtypes; gradcheck and gradgradcheck
through it; which convolutions take it; and that a tile buffer saved for the backward survives
other convolutions of the same shape."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.ops import _conv2d as C

from helpers import assert_results_close, conv3x3_case

pytest.importorskip("numba", reason="the Winograd kernels are numba kernels (an optional extra)")
if not kernels.available():
    pytest.skip("numba is switched off (MINIGRAD_NUMBA=0): the Winograd path is not taken", allow_module_level=True)

BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)


def _tiles(x, pt, pl, TH, TW):
    """(N, C, TH, TW, 4, 4): the zero-padded 4x4 input patch of every output tile."""
    N, Ci, H, W = x.shape
    xp = np.zeros((N, Ci, 2 * TH + 2, 2 * TW + 2))
    h1, w1 = min(H, 2 * TH + 2 - pt), min(W, 2 * TW + 2 - pl)
    xp[:, :, pt:pt + h1, pl:pl + w1] = x[:, :, :h1, :w1]
    d = np.empty((N, Ci, TH, TW, 4, 4))
    for th in range(TH):
        for tw in range(TW):
            d[:, :, th, tw] = xp[:, :, 2 * th:2 * th + 4, 2 * tw:2 * tw + 4]
    return d


def _ref_inputs(x, pt, pl, TH, TW):
    """V (16, C, N*TH*TW) = B^T d B of each patch, from the definition."""
    v = BT @ _tiles(x, pt, pl, TH, TW) @ BT.T               # (N, C, TH, TW, 4, 4)
    N, Ci = x.shape[:2]
    return v.transpose(4, 5, 1, 0, 2, 3).reshape(16, Ci, N * TH * TW)


def _ref_outputs(M, N, OH, OW):
    """out (N, O, OH, OW) = A^T m A of each tile, cropped."""
    O = M.shape[1]
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    m = M.reshape(4, 4, O, N, TH, TW).transpose(3, 2, 4, 5, 0, 1)  # (N, O, TH, TW, 4, 4)
    y = AT @ m @ AT.T                                               # (N, O, TH, TW, 2, 2)
    out = y.transpose(0, 1, 2, 4, 3, 5).reshape(N, O, 2 * TH, 2 * TW)
    return out[:, :, :OH, :OW]


def _planes(C_, P, dtype):
    return C._wino_planes(C_, P, np.dtype(dtype))


def _layout(a, channel_major):
    """a (N, C, H, W) as the kernels take it: memory-order array and the channel-major flag."""
    if channel_major:
        return np.ascontiguousarray(a.transpose(1, 0, 2, 3)), True
    return np.ascontiguousarray(a), False


# (N, C, O, H, W, pt, pl, OH, OW): padding 1 ('same'), odd output sizes, no padding, padding 2,
# asymmetric (pt != pl), a tile grid wider than the input
_CASES = [(2, 3, 4, 6, 6, 1, 1, 6, 6), (3, 2, 5, 7, 5, 1, 1, 7, 5), (1, 2, 3, 5, 8, 0, 0, 3, 6),
          (2, 4, 2, 9, 7, 2, 2, 11, 9), (2, 2, 3, 4, 6, 1, 0, 4, 4), (1, 1, 1, 1, 1, 1, 1, 1, 1)]


@pytest.mark.parametrize("N,Ci,O,H,W,pt,pl,OH,OW", _CASES)
@pytest.mark.parametrize("channel_major", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transforms_equal_their_matrix_definitions(N, Ci, O, H, W, pt, pl, OH, OW, channel_major, dtype):
    K = kernels.load("winograd")
    rng = np.random.default_rng(N * 100 + Ci * 10 + H)
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    P = N * TH * TW
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)
    x = rng.standard_normal((N, Ci, H, W)).astype(dtype)
    V = _planes(Ci, P, dtype)
    K.inputs(*_layout(x, channel_major), V, pt, pl, TH, TW)
    np.testing.assert_allclose(V, _ref_inputs(x.astype(np.float64), pt, pl, TH, TW), **tol)

    M = rng.standard_normal((16, O, P)).astype(dtype)
    bias = rng.standard_normal(O).astype(dtype)
    out = np.empty((O, N, OH, OW), dtype)
    K.outputs(M, out, bias, True)
    ref = _ref_outputs(M.astype(np.float64), N, OH, OW) + bias[:, None, None]
    np.testing.assert_allclose(out.transpose(1, 0, 2, 3), ref, **tol)
    K.outputs(M, out, bias, False)  # the bias is read only when asked
    np.testing.assert_allclose(out.transpose(1, 0, 2, 3), ref - bias[:, None, None], **tol)


@pytest.mark.parametrize("N,Ci,O,H,W,pt,pl,OH,OW", _CASES)
@pytest.mark.parametrize("channel_major", [False, True])
def test_adjoint_transforms_are_transposes(N, Ci, O, H, W, pt, pl, OH, OW, channel_major):
    """<inputs(x), dV> = <x, inputs_adjoint(dV)> and <outputs(M), g> = <M, outputs_adjoint(g)>,
    in float64: the backward differentiates exactly what the forward computes."""
    K = kernels.load("winograd")
    rng = np.random.default_rng(N * 7 + O)
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    P = N * TH * TW
    x = rng.standard_normal((N, Ci, H, W))
    dV = rng.standard_normal((16, Ci, P))
    V = _planes(Ci, P, np.float64)
    K.inputs(*_layout(x, channel_major), V, pt, pl, TH, TW)
    dx = np.full((Ci, N, H, W), np.nan)  # every element must be written
    K.inputs_adjoint(_copy(dV), dx, pt, pl, TH, TW)
    np.testing.assert_allclose(np.vdot(V, dV), np.vdot(x, dx.transpose(1, 0, 2, 3)), rtol=1e-12)

    M = rng.standard_normal((16, O, P))
    g = rng.standard_normal((N, O, OH, OW))
    out = np.empty((O, N, OH, OW))
    K.outputs(M, out, np.zeros(O), False)
    dM = _planes(O, P, np.float64)
    db = np.full(O, np.nan)
    K.outputs_adjoint(*_layout(g, channel_major), dM, db)
    np.testing.assert_allclose(np.vdot(out.transpose(1, 0, 2, 3), g), np.vdot(M, dM), rtol=1e-12)
    np.testing.assert_allclose(db, g.sum(axis=(0, 2, 3)), rtol=1e-12)  # the bias's, from the same pass
    dM2 = _planes(O, P, np.float64)
    K.outputs_adjoint(*_layout(g, channel_major), dM2, np.empty(0))  # no bias gradient wanted
    np.testing.assert_array_equal(dM2, dM)


def _copy(a):
    """a in a planes array (the strided layout the kernels are handed in ops/_conv2d.py)."""
    p = _planes(a.shape[1], a.shape[2], a.dtype)
    p[...] = a
    return p


def _conv_results(monkeypatch, winograd, xs, ws, bs, gs, chain=False, **kw):
    """conv2d's output and the gradients of x, w (and b) with the Winograd path forced on or off.
    chain: x goes through a 1x1 convolution first, so the 3x3 one reads a channel-major input."""
    monkeypatch.setattr(C, "_WINOGRAD_MIN_CHANNELS", 1 if winograd else 10 ** 9)
    monkeypatch.setattr(C, "_WINOGRAD_MIN_TILES", 1)
    x, w = (mg.tensor(a.copy(), requires_grad=True) for a in (xs, ws))
    b = None if bs is None else mg.tensor(bs.copy(), requires_grad=True)
    inp = F.conv2d(x, mg.tensor(np.eye(xs.shape[1], dtype=xs.dtype)[:, :, None, None])) if chain else x
    calls = []
    real = C._wino_forward
    monkeypatch.setattr(C, "_wino_forward", lambda *a: calls.append(1) or real(*a))
    out = F.conv2d(inp, w, b, **kw)
    out.backward(mg.tensor(gs))
    assert bool(calls) == winograd
    return [out.detach().numpy().copy()] + [t.grad.numpy().copy() for t in (x, w, b) if t is not None]


@pytest.mark.parametrize("shape,kw", [
    ((4, 8, 16, 14, 14), dict(padding=1)),
    ((3, 8, 5, 7, 9), dict(padding=1)),                # odd output sizes: half tiles at the edges
    ((2, 9, 8, 6, 5), dict(padding=0)),
    ((2, 8, 8, 5, 6), dict(padding=2)),
    ((2, 8, 8, 6, 7), dict(padding=(1, 0))),
    ((2, 8, 8, 6, 7), dict(padding="same")),
    ((1, 3, 2, 1, 1), dict(padding=1)),                # a 1x1 image
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("chain", [False, True])
def test_conv2d_winograd_matches_im2col(monkeypatch, shape, kw, dtype, bias, chain):
    xs, ws, bs, gs = conv3x3_case(shape, kw["padding"], dtype, bias)
    got = _conv_results(monkeypatch, True, xs, ws, bs, gs, chain, **kw)
    ref = _conv_results(monkeypatch, False, xs, ws, bs, gs, chain, **kw)
    assert len(got) == (4 if bias else 3)
    assert_results_close(got, ref, dtype)


def test_conv2d_winograd_gradcheck_and_gradgradcheck(monkeypatch):
    monkeypatch.setattr(C, "_WINOGRAD_MIN_CHANNELS", 1)
    monkeypatch.setattr(C, "_WINOGRAD_MIN_TILES", 1)
    rng = np.random.default_rng(3)
    x = mg.tensor(rng.standard_normal((2, 3, 5, 4)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    b = mg.tensor(rng.standard_normal(4), requires_grad=True)
    geo = C._make_geom("conv2d", x.shape, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1))
    assert C._winograd(geo, 1, x.detach().numpy(), w.detach().numpy())

    def f(x, w, b):
        return F.conv2d(x, w, b, padding=1)
    assert mg.autograd.gradcheck(f, (x, w, b))
    assert mg.autograd.gradgradcheck(f, (x, w, b))


def _takes(shape, wshape, dtype=np.float32, wdtype=None, **kw):
    """Whether conv2d of these shapes runs as Winograd (with the default limits)."""
    x = np.zeros(shape, dtype)
    w = np.zeros(wshape, wdtype or dtype)
    stride, dilation = kw.get("stride", 1), kw.get("dilation", 1)
    pad = kw.get("padding", 1)
    geo = C._make_geom("conv2d", shape, wshape[2:], (stride, stride), (dilation, dilation), (pad,) * 4)
    return C._winograd(geo, kw.get("groups", 1), x, w)


def test_which_convolutions_take_winograd():
    assert _takes((64, 32, 14, 14), (64, 32, 3, 3))           # the CNN benchmark's 32->64
    assert _takes((64, 8, 14, 14), (16, 8, 3, 3))             # the bench model's 8->16
    assert _takes((64, 16, 14, 14), (32, 16, 3, 3), np.float64)
    assert not _takes((64, 1, 28, 28), (32, 1, 3, 3))         # too few input channels
    assert not _takes((1, 32, 14, 14), (64, 32, 3, 3))        # 49 tiles: batch 1 on 14x14
    assert _takes((1, 32, 28, 28), (64, 32, 3, 3))            # 196 tiles
    # (stride, dilation, groups, kernel size, dtypes, numba: test_conv_direct_dw.py's
    # test_only_plain_3x3_convolutions_take_a_numba_path)


def test_saved_tiles_survive_other_convolutions_of_the_same_shape():
    """The forward keeps its transformed tiles for the weight gradient in a recycled buffer: a
    second convolution of the same shape before the backward must get another one."""
    rng = np.random.default_rng(9)
    xs = [rng.standard_normal((8, 8, 14, 14)).astype(np.float32) for _ in range(2)]
    ws = (rng.standard_normal((8, 8, 3, 3)) / 8).astype(np.float32)
    geo = C._make_geom("conv2d", xs[0].shape, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1))
    assert C._winograd(geo, 1, xs[0], ws)

    def grads():
        w = mg.tensor(ws.copy(), requires_grad=True)
        outs = [F.conv2d(mg.tensor(x), w, padding=1) for x in xs]
        (outs[0].sum() + (outs[1] * 2).sum()).backward()
        return w.grad.numpy().copy()
    got = grads()
    old = kernels.set_enabled(False)
    try:
        ref = grads()
    finally:
        kernels.set_enabled(old)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_backward_recomputes_when_the_forward_took_the_other_path(monkeypatch):
    """The decision is made again in the backward; if it differs (here: the limit changed between
    the two), the saved tiles or columns are not misread: they are made again for that path."""
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((2, 8, 10, 10))
    ws = rng.standard_normal((4, 8, 3, 3))
    gs = rng.standard_normal((2, 4, 10, 10))
    results = []
    for first, second in ((1, 10 ** 9), (10 ** 9, 1), (1, 1)):
        monkeypatch.setattr(C, "_WINOGRAD_MIN_TILES", 1)
        monkeypatch.setattr(C, "_WINOGRAD_MIN_CHANNELS", first)
        x, w = (mg.tensor(a.copy(), requires_grad=True) for a in (xs, ws))
        out = F.conv2d(x, w, padding=1)
        monkeypatch.setattr(C, "_WINOGRAD_MIN_CHANNELS", second)
        out.backward(mg.tensor(gs))
        results.append((x.grad.numpy().copy(), w.grad.numpy().copy()))
    for dx, dw in results[1:]:
        np.testing.assert_allclose(dx, results[0][0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dw, results[0][1], rtol=1e-12, atol=1e-12)
