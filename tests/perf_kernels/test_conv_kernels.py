"""conv2d's fast kernels against their plain NumPy definitions: the stride-1 input gradient
(flat-grid GEMM + shifted adds, split into image chunks) equals col2im of W^T g exactly as a sum,
for batches that are one chunk, several chunks and several chunks with a remainder; the numba
im2col / col2im (minigrad/kernels/conv.py) equal the NumPy paths bit for bit, over strides,
dilations, asymmetric padding, both memory layouts and both float dtypes; conv2d's gradients on
both paths (gradcheck) and without numba."""
import sys

import numpy as np
import pytest

import minigrad as mg
from helpers import kernels_enabled
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.ops import _conv2d as C


def _reference_dx(g, w, geo, groups):
    """dx = col2im(W2^T @ g2): the textbook im2col adjoint, in float64."""
    O = w.shape[0]
    L = geo.N * geo.OH * geo.OW
    g2 = g.transpose(1, 0, 2, 3).reshape(groups, O // groups, L).astype(np.float64)
    w3 = w.reshape(groups, O // groups, -1).transpose(0, 2, 1).astype(np.float64)
    cols = np.matmul(w3, g2).reshape(-1, L)
    return C._col2im(cols, geo)


@pytest.mark.parametrize("N,Ci,O,H,k,pad,dil,groups", [
    (64, 8, 16, 14, 3, 1, 1, 1),    # the bench CNN's second conv: several chunks
    (37, 32, 64, 14, 3, 1, 1, 1),   # several chunks and a short last one
    (1, 32, 64, 14, 3, 1, 1, 1),    # batch 1: one chunk
    (5, 3, 6, 9, 5, 2, 1, 1),
    (3, 4, 6, 8, 3, 0, 2, 1),       # dilation, no padding
    (4, 4, 6, 7, 3, 1, 1, 2),       # groups: the unchunked path
])
def test_conv_dx_flat_matches_col2im(N, Ci, O, H, k, pad, dil, groups):
    rng = np.random.default_rng(N * 100 + O)
    w = rng.standard_normal((O, Ci // groups, k, k)).astype(np.float32)
    geo = C._make_geom("conv2d", (N, Ci, H, H + 1), (k, k), (1, 1), (dil, dil), (pad, pad, pad, pad))
    g = rng.standard_normal((N, O, geo.OH, geo.OW)).astype(np.float32)
    w3 = w.reshape(groups, O // groups, -1).transpose(0, 2, 1)
    got = C._conv_dx_flat(g, w3, geo)
    assert got.shape == (N, Ci, H, H + 1)
    ref = _reference_dx(g, w, geo, groups)
    # float32 sums of O*k*k terms of size ~1 against the float64 reference
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.sqrt(O * k * k))
    # a second call reuses the scratch buffers: same answer bitwise
    np.testing.assert_array_equal(C._conv_dx_flat(g, w3, geo), got)


# (N, C, H, W, kernel, stride, padding (top, bottom, left, right), dilation)
_GEOMS = [
    (1, 32, 14, 14, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),   # the 32/64 CNN's second conv, batch 1
    (2, 1, 28, 28, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    (3, 4, 9, 9, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1)),      # 'same' width, 5x5
    (2, 3, 10, 11, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),    # dilation, wider than 'same'
    (2, 3, 10, 10, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),    # no padding: the row-by-row copy
    (2, 3, 9, 8, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),      # stride 2
    (2, 3, 9, 11, (5, 5), (2, 2), (2, 2, 2, 2), (2, 2)),
    (3, 2, 7, 6, (2, 2), (3, 3), (0, 0, 0, 0), (1, 1)),      # positions no window reads
    (2, 2, 5, 7, (3, 2), (2, 1), (0, 1, 1, 0), (1, 2)),      # asymmetric everything
    (1, 2, 4, 4, (3, 3), (1, 1), (3, 3, 3, 3), (1, 1)),      # padding wider than the kernel reach
]


@pytest.mark.parametrize("N,Ci,H,W,k,s,pads,d", _GEOMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("channel_major", [False, True])
def test_numba_im2col_col2im_equal_numpy_paths_bitwise(N, Ci, H, W, k, s, pads, d, dtype, channel_major):
    pytest.importorskip("numba", reason="the numba kernels are an optional extra")
    rng = np.random.default_rng(N * 1000 + Ci * 10 + H)
    x = rng.standard_normal((N, Ci, H, W)).astype(dtype)
    if channel_major:  # a conv output's layout: (C, N, H, W) in memory
        x = x.transpose(1, 0, 2, 3).copy().transpose(1, 0, 2, 3)
    geo = C._make_geom("conv2d", x.shape, k, s, d, pads)
    old = kernels.set_enabled(False)
    try:
        cols_np = C._im2col(x, geo).copy()
        dcols = rng.standard_normal(cols_np.shape).astype(dtype)
        dx_np = C._col2im(dcols, geo).copy()
    finally:
        kernels.set_enabled(old)
    assert kernels.available()
    cols = C._im2col(x, geo)
    assert cols.dtype == dtype and np.array_equal(cols, cols_np)
    dx = C._col2im(dcols, geo)
    assert dx.shape == (N, Ci, H, W) and dx.dtype == dtype
    assert np.array_equal(dx, dx_np)  # the same additions in the same order


@pytest.mark.parametrize("use_numba", [True, False])
@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 1, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1), (1, 1, 1, 2)])
def test_conv2d_gradcheck_on_both_paths(use_numba, stride, padding, dilation, groups):
    with kernels_enabled(use_numba):
        rng = np.random.default_rng(7)
        x = mg.tensor(rng.standard_normal((2, 4, 6, 7)), requires_grad=True)
        w = mg.tensor(rng.standard_normal((6, 4 // groups, 3, 3)), requires_grad=True)
        b = mg.tensor(rng.standard_normal(6), requires_grad=True)

        def f(x, w, b):
            return F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
        assert mg.autograd.gradcheck(f, (x, w, b))
        assert mg.autograd.gradgradcheck(f, (x, w, b))


def test_conv2d_numba_and_numpy_paths_agree_batch1_float32():
    """The batch-1 CNN conv in float32: forward and all three gradients on both paths (the input
    gradient's GEMM differs in shape between the paths, so its sums may differ in the last ulp)."""
    pytest.importorskip("numba", reason="the numba kernels are an optional extra")
    rng = np.random.default_rng(11)
    xs = rng.standard_normal((1, 32, 14, 14)).astype(np.float32)
    ws = (rng.standard_normal((64, 32, 3, 3)) / 17).astype(np.float32)
    bs = rng.standard_normal(64).astype(np.float32)
    gs = rng.standard_normal((1, 64, 14, 14)).astype(np.float32)
    results = []
    for use_numba in (False, True):
        old = kernels.set_enabled(use_numba)
        try:
            x, w, b = (mg.tensor(a.copy(), requires_grad=True) for a in (xs, ws, bs))
            out = F.conv2d(x, w, b, padding=1)
            out.backward(mg.tensor(gs))
            results.append([out.detach().numpy().copy()] + [t.grad.numpy().copy() for t in (x, w, b)])
        finally:
            kernels.set_enabled(old)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_conv2d_runs_without_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now raises ImportError
    monkeypatch.setattr(kernels, "_numba", None)
    monkeypatch.setattr(kernels, "_enabled", True)
    assert not kernels.available()
    rng = np.random.default_rng(5)
    x = mg.tensor(rng.standard_normal((1, 3, 8, 8)).astype(np.float32), requires_grad=True)
    w = mg.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), requires_grad=True)
    out = F.conv2d(x, w, padding=1)
    out.sum().backward()
    ref = C._col2im(np.matmul(w.detach().numpy().reshape(4, -1).T, np.ones((4, 64), np.float32)),
                    C._make_geom("conv2d", (1, 3, 8, 8), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)))
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("use_numba", [True, False])
@pytest.mark.parametrize("N,Ci,O,H,bias_grad", [(1, 1, 32, 12, True), (3, 8, 16, 7, True), (2, 3, 5, 6, False)])
def test_bias_in_gemm_matches_separate_bias_pass(monkeypatch, use_numba, N, Ci, O, H, bias_grad):
    """conv2d's bias riding in the GEMMs (a row of ones under the columns, for short weight rows)
    gives what the separate bias add and bias-gradient sum give, to float32 rounding."""
    if use_numba:
        pytest.importorskip("numba", reason="the numba kernels are an optional extra")
    rng = np.random.default_rng(N + Ci + O)
    xs = rng.standard_normal((N, Ci, H, H)).astype(np.float32)
    ws = rng.standard_normal((O, Ci, 3, 3)).astype(np.float32)
    bs = rng.standard_normal(O).astype(np.float32)
    gs = rng.standard_normal((N, O, H, H)).astype(np.float32)
    results = []
    old = kernels.set_enabled(use_numba)
    try:
        for limit in (0, 10 ** 6):  # never / always in the GEMM
            monkeypatch.setattr(C, "_BIAS_IN_GEMM", limit)
            x, w = (mg.tensor(a.copy(), requires_grad=True) for a in (xs, ws))
            b = mg.tensor(bs.copy(), requires_grad=bias_grad)
            out = F.conv2d(x, w, b, padding=1)
            out.backward(mg.tensor(gs))
            grads = [t.grad.numpy().copy() for t in ((x, w, b) if bias_grad else (x, w))]
            assert bias_grad or b.grad is None
            results.append([out.detach().numpy().copy()] + grads)
    finally:
        kernels.set_enabled(old)
    for a, c in zip(*results):
        assert a.shape == c.shape and a.dtype == c.dtype
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-4)
