"""conv2d's fast kernels against their plain NumPy definitions: the stride-1 input gradient
(flat-grid GEMM + shifted adds, split into image chunks) equals col2im of W^T g exactly as a sum,
for batches that are one chunk, several chunks and several chunks with a remainder."""
import numpy as np
import pytest

from minigrad.ops import conv as C


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
