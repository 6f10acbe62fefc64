"""Winograd F(2x2, 3x3) transforms for conv2d's 3x3 stride-1 convolutions (numba; imported only by
minigrad.kernels).

A 3x3 convolution computes each 2x2 block of outputs from a 4x4 patch d of the (padded) input:

    Y = A^T [ (G w G^T) * (B^T d B) ] A        (* elementwise over the 4x4 "frequencies" xi)

    B^T = [[1, 0, -1, 0],      G = [[1,   0,   0 ],      A^T = [[1, 1,  1,  0],
           [0, 1,  1, 0],           [1/2, 1/2, 1/2],            [0, 1, -1, -1]]
           [0, -1, 1, 0],           [1/2, -1/2, 1/2],
           [0, 1,  0, -1]]          [0,   0,   1 ]]

so summing over input channels, the convolution is 16 GEMMs M[xi] = U[xi] @ V[xi], with
U[xi] (O, C) the transformed weights and V[xi] (C, P) the transformed patches of all P = N*TH*TW
output tiles: 4 multiplications per output instead of im2col's 9, and V is 16/9 of the input
instead of im2col's 9 copies. The kernels here are the transforms around those GEMMs, each one
pass over its arrays (ops/_conv2d.py does the GEMMs and the weight transforms):

* ``inputs``:  V[xi, c, p] = (B^T d B)[xi] of the 4x4 input patch of tile p (padding: zeros);
* ``outputs``: out[o, n, 2th+a, 2tw+b] = (A^T M[:, o, p] A)[a, b] + bias[o], the valid part of
  each 2x2 tile (an odd output size has a half tile at the edge);
* ``outputs_adjoint`` and ``inputs_adjoint``: the transposes of those two linear maps, for the
  backward: dM = A g A^T per tile (zeros past the edge; with the bias gradient, the sum of g, as it
  reads g) and dx = the sum over tiles of B dV B^T
  added back into each tile's 4x4 patch (patches overlap by two rows and columns).

Each pass is independent per channel (input channel c for ``inputs`` / ``inputs_adjoint``, output
channel o for the other two, the bias gradient's sum included), so from a size threshold the
channels are split over minigrad's pool (minigrad/_pool.py, once the user chose the threads): the
same arithmetic on every element in the same order, so the bits equal the serial pass's for any
thread count.

The gradients are those of the function the forward computes (dU = dM @ V^T, dV = U^T @ dM, then
the adjoint transforms), so a second backward and gradcheck see one consistent function. It equals
im2col's convolution up to float rounding: the transforms only add and subtract (and G halves), so
the results differ from im2col's by a few ulps of the sums (tests/perf_kernels/test_winograd.py).
"""
import numba
import numpy as np


# The four 1-D transforms, each applied along both axes of a tile (inline: the kernels below compile
# to the same straight-line code as written out by hand)

@numba.njit(cache=True, inline="always")
def _bt(x0, x1, x2, x3):
    """B^T x"""
    return x0 - x2, x1 + x2, x2 - x1, x1 - x3


@numba.njit(cache=True, inline="always")
def _b(x0, x1, x2, x3):
    """B x, the transpose of _bt"""
    return x0, x1 - x2 + x3, x1 + x2 - x0, -x3


@numba.njit(cache=True, inline="always")
def _at(x0, x1, x2, x3):
    """A^T x"""
    return x0 + x1 + x2, x1 - x2 - x3


@numba.njit(cache=True, inline="always")
def _a(x0, x1):
    """A x, the transpose of _at"""
    return x0, x0 + x1, x0 - x1, -x1


@numba.njit(cache=True, inline="always")
def _load(P, r, c, p):
    """Row r (xi = 4r .. 4r + 3) of the 4x4 tile p, channel c, of the planes P."""
    return P[4 * r, c, p], P[4 * r + 1, c, p], P[4 * r + 2, c, p], P[4 * r + 3, c, p]


@numba.njit(cache=True, inline="always")
def _store(P, r, c, p, t):
    P[4 * r, c, p], P[4 * r + 1, c, p], P[4 * r + 2, c, p], P[4 * r + 3, c, p] = t


@numba.njit(cache=True, inline="always")
def _image_buffer(H, W, pt, pl, TH, TW, dtype):
    """A zeroed (2TH + 2, 2TW + 2) buffer for one padded image (the patches of its TH x TW tiles), and
    the input rows [h_lo, h_hi) and columns [w_lo, w_hi) that land inside it (at + pt, + pl)."""
    Hp, Wp = 2 * TH + 2, 2 * TW + 2
    buf = np.zeros((Hp, Wp), dtype)
    return buf, max(0, -pt), min(H, Hp - pt), max(0, -pl), min(W, Wp - pl)


@numba.njit(cache=True, nogil=True)
def _inputs(x, cm, V, pt, pl, TH, TW, c0, c1):
    """x: the input, C-contiguous in memory order (N, C, H, W), or (C, N, H, W) when cm; V: (16, C,
    N*TH*TW) (any strides), tile p = (n*TH + th)*TW + tw reads input rows 2th-pt..2th-pt+3 and
    columns 2tw-pl..2tw-pl+3."""
    A, B, H, W = x.shape
    N = B if cm else A   # channels c0 .. c1 - 1 of C = (A if cm else B)
    T = TH * TW
    # one image, zero-padded: every image fills the same interior, so the border stays zero
    buf, h_lo, h_hi, w_lo, w_hi = _image_buffer(H, W, pt, pl, TH, TW, x.dtype)
    for c in range(c0, c1):
        for n in range(N):
            img = x[c, n] if cm else x[n, c]
            for h in range(h_lo, h_hi):
                src = img[h, w_lo:w_hi]
                dst = buf[h + pt, w_lo + pl:w_hi + pl]
                for q in range(dst.size):
                    dst[q] = src[q]
            base = n * T
            for th in range(TH):
                r0, r1, r2, r3 = buf[2 * th], buf[2 * th + 1], buf[2 * th + 2], buf[2 * th + 3]
                p0 = base + th * TW
                for tw in range(TW):
                    k = 2 * tw
                    # B^T d down each of the patch's four columns ...
                    a = _bt(r0[k], r1[k], r2[k], r3[k])
                    b = _bt(r0[k + 1], r1[k + 1], r2[k + 1], r3[k + 1])
                    e = _bt(r0[k + 2], r1[k + 2], r2[k + 2], r3[k + 2])
                    d = _bt(r0[k + 3], r1[k + 3], r2[k + 3], r3[k + 3])
                    # ... then (B^T d) B along each row
                    p = p0 + tw
                    _store(V, 0, c, p, _bt(a[0], b[0], e[0], d[0]))
                    _store(V, 1, c, p, _bt(a[1], b[1], e[1], d[1]))
                    _store(V, 2, c, p, _bt(a[2], b[2], e[2], d[2]))
                    _store(V, 3, c, p, _bt(a[3], b[3], e[3], d[3]))


@numba.njit(cache=True, nogil=True)
def _outputs(M, out, bias, has_bias, c0, c1):
    """M: (16, O, N*TH*TW); out: (O, N, OH, OW) C-contiguous (channel-major), TH = ceil(OH/2),
    TW = ceil(OW/2); bias: (O,) (read when has_bias)."""
    O, N, OH, OW = out.shape
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    T = TH * TW
    zero = out.dtype.type(0)
    for o in range(c0, c1):
        bo = bias[o] if has_bias else zero
        for n in range(N):
            img = out[o, n]
            for th in range(TH):
                p0 = n * T + th * TW
                h = 2 * th
                full_h = h + 1 < OH
                for tw in range(TW):
                    p = p0 + tw
                    m0, m1, m2, m3 = _load(M, 0, o, p), _load(M, 1, o, p), _load(M, 2, o, p), _load(M, 3, o, p)
                    # A^T m down each column (two rows s, t of four) ...
                    s0, t0 = _at(m0[0], m1[0], m2[0], m3[0])
                    s1, t1 = _at(m0[1], m1[1], m2[1], m3[1])
                    s2, t2 = _at(m0[2], m1[2], m2[2], m3[2])
                    s3, t3 = _at(m0[3], m1[3], m2[3], m3[3])
                    # ... then (A^T m) A along each row: the 2x2 outputs, cropped at an odd edge
                    w = 2 * tw
                    y0, y1 = _at(s0, s1, s2, s3)
                    img[h, w] = y0 + bo
                    if w + 1 < OW:
                        img[h, w + 1] = y1 + bo
                    if full_h:
                        y0, y1 = _at(t0, t1, t2, t3)
                        img[h + 1, w] = y0 + bo
                        if w + 1 < OW:
                            img[h + 1, w + 1] = y1 + bo


@numba.njit(cache=True, nogil=True)
def _outputs_adjoint(g, cm, dM, db, c0, c1):
    """The transpose of ``outputs``: dM[:, o, p] = A g_tile A^T, g_tile the 2x2 block of the output
    gradient at tile p (zeros past an odd edge), and the bias's, db[o] = the sum of g[:, o] (float64
    sums; db of size 0: not wanted). g: C-contiguous in memory order (N, O, OH, OW), or (O, N, OH,
    OW) when cm; dM: (16, O, N*TH*TW)."""
    A, B, OH, OW = g.shape
    N = B if cm else A   # output channels c0 .. c1 - 1 of O = (A if cm else B)
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    T = TH * TW
    zero = g.dtype.type(0)
    want_db = db.size > 0
    for o in range(c0, c1):
        s0 = s1 = s2 = s3 = 0.0  # four chains: one add each per tile keeps the sum off the critical path
        for n in range(N):
            img = g[o, n] if cm else g[n, o]
            for th in range(TH):
                p0 = n * T + th * TW
                h = 2 * th
                full_h = h + 1 < OH
                for tw in range(TW):
                    w = 2 * tw
                    full_w = w + 1 < OW
                    g00 = img[h, w]
                    g01 = img[h, w + 1] if full_w else zero
                    g10 = img[h + 1, w] if full_h else zero
                    g11 = img[h + 1, w + 1] if full_h and full_w else zero
                    if want_db:
                        s0 += g00
                        s1 += g01
                        s2 += g10
                        s3 += g11
                    # A g down both columns (u, v: four rows of two) ...
                    u = _a(g00, g10)
                    v = _a(g01, g11)
                    # ... then (A g) A^T along each row
                    p = p0 + tw
                    _store(dM, 0, o, p, _a(u[0], v[0]))
                    _store(dM, 1, o, p, _a(u[1], v[1]))
                    _store(dM, 2, o, p, _a(u[2], v[2]))
                    _store(dM, 3, o, p, _a(u[3], v[3]))
        if want_db:
            db[o] = (s0 + s1) + (s2 + s3)


@numba.njit(cache=True, nogil=True)
def _inputs_adjoint(dV, dx, pt, pl, TH, TW, c0, c1):
    """The transpose of ``inputs``: dx[c, n] = the sum over tiles p of B dV[:, c, p] B^T, added
    into each tile's 4x4 patch and cropped to the input. dV: (16, C, N*TH*TW); dx: (C, N, H, W)
    C-contiguous (channel-major, as conv2d's other input-gradient paths hand it back)."""
    C, N, H, W = dx.shape
    T = TH * TW
    buf, h_lo, h_hi, w_lo, w_hi = _image_buffer(H, W, pt, pl, TH, TW, dx.dtype)
    for c in range(c0, c1):
        for n in range(N):
            buf[:] = 0
            base = n * T
            for th in range(TH):
                r0, r1, r2, r3 = buf[2 * th], buf[2 * th + 1], buf[2 * th + 2], buf[2 * th + 3]
                p0 = base + th * TW
                for tw in range(TW):
                    p = p0 + tw
                    v0, v1, v2, v3 = _load(dV, 0, c, p), _load(dV, 1, c, p), _load(dV, 2, c, p), _load(dV, 3, c, p)
                    # B v down each column ...
                    a = _b(v0[0], v1[0], v2[0], v3[0])
                    b = _b(v0[1], v1[1], v2[1], v3[1])
                    e = _b(v0[2], v1[2], v2[2], v3[2])
                    d = _b(v0[3], v1[3], v2[3], v3[3])
                    # ... then (B v) B^T along each row, added into the patch (patches overlap)
                    k = 2 * tw
                    for r, row in ((0, r0), (1, r1), (2, r2), (3, r3)):
                        y = _b(a[r], b[r], e[r], d[r])
                        row[k] += y[0]
                        row[k + 1] += y[1]
                        row[k + 2] += y[2]
                        row[k + 3] += y[3]
            img = dx[c, n]
            for h in range(H):
                dst = img[h]
                if h < h_lo or h >= h_hi:
                    for q in range(W):
                        dst[q] = 0
                    continue
                src = buf[h + pt]
                for q in range(W):
                    dst[q] = src[q + pl] if w_lo <= q < w_hi else 0


# -- the pool (minigrad/_pool.py): the entry points ops/_conv2d.py calls -----------------------------
# Each pass is split by channels from the size whose serial time is _pool.WORK_NS (min_elements),
# counted in elements of the (16, C, P) array it writes or reads, from the serial cost per element
# (float32, the lowest of (64, 16, 28x28), (64, 32, 14x14) and (8, 16, 16x16), best of 20, on the
# shared 2-core machine at load 2-5, so read them as loaded-machine figures): inputs 2.0 ns, outputs
# 1.1 ns, outputs_adjoint 2.0 ns, inputs_adjoint 1.3 ns. (Two threads against one there: anywhere
# from 2.3x faster to 1.6x slower from call to call; the lead's quiet-machine runs decide.)

from .. import _pool  # noqa: E402

_INPUTS_MIN = _pool.min_elements(2.0)
_OUTPUTS_MIN = _pool.min_elements(1.1)
_OUTPUTS_ADJ_MIN = _pool.min_elements(2.0)
_INPUTS_ADJ_MIN = _pool.min_elements(1.3)


def inputs(x, cm, V, pt, pl, TH, TW):
    """_inputs over every channel, split over the pool by channels from the threshold."""
    C = x.shape[0] if cm else x.shape[1]
    _pool.split_rows(lambda c0, c1: _inputs(x, cm, V, pt, pl, TH, TW, c0, c1), C, V.size, _INPUTS_MIN)


def outputs(M, out, bias, has_bias):
    """_outputs over every output channel, split over the pool by channels from the threshold."""
    _pool.split_rows(lambda c0, c1: _outputs(M, out, bias, has_bias, c0, c1), out.shape[0], M.size, _OUTPUTS_MIN)


def outputs_adjoint(g, cm, dM, db):
    """_outputs_adjoint over every output channel, split over the pool by channels from the threshold."""
    O = g.shape[0] if cm else g.shape[1]
    _pool.split_rows(lambda c0, c1: _outputs_adjoint(g, cm, dM, db, c0, c1), O, dM.size, _OUTPUTS_ADJ_MIN)


def inputs_adjoint(dV, dx, pt, pl, TH, TW):
    """_inputs_adjoint over every channel, split over the pool by channels from the threshold."""
    _pool.split_rows(lambda c0, c1: _inputs_adjoint(dV, dx, pt, pl, TH, TW, c0, c1), dx.shape[0], dV.size, _INPUTS_ADJ_MIN)
