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
pass over its arrays (ops/conv.py does the GEMMs and the weight transforms):

* ``inputs``:  V[xi, c, p] = (B^T d B)[xi] of the 4x4 input patch of tile p (padding: zeros);
* ``outputs``: out[o, n, 2th+a, 2tw+b] = (A^T M[:, o, p] A)[a, b] + bias[o], the valid part of
  each 2x2 tile (an odd output size has a half tile at the edge);
* ``outputs_adjoint`` and ``inputs_adjoint``: the transposes of those two linear maps, for the
  backward: dM = A g A^T per tile (zeros past the edge) and dx = the sum over tiles of B dV B^T
  added back into each tile's 4x4 patch (patches overlap by two rows and columns).

The gradients are those of the function the forward computes (dU = dM @ V^T, dV = U^T @ dM, then
the adjoint transforms), so a second backward and gradcheck see one consistent function. It equals
im2col's convolution up to float rounding: the transforms only add and subtract (and G halves), so
the results differ from im2col's by a few ulps of the sums (tests/perf_kernels/test_winograd.py).
"""
import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def _image_buffer(H, W, pt, pl, TH, TW, dtype):
    """A zeroed (2TH + 2, 2TW + 2) buffer for one padded image (the patches of its TH x TW tiles), and
    the input rows [h_lo, h_hi) and columns [w_lo, w_hi) that land inside it (at + pt, + pl)."""
    Hp, Wp = 2 * TH + 2, 2 * TW + 2
    buf = np.zeros((Hp, Wp), dtype)
    return buf, max(0, -pt), min(H, Hp - pt), max(0, -pl), min(W, Wp - pl)


@numba.njit(cache=True, nogil=True)
def inputs(x, cm, V, pt, pl, TH, TW):
    """x: the input, C-contiguous in memory order (N, C, H, W), or (C, N, H, W) when cm; V: (16, C,
    N*TH*TW) C-contiguous, tile p = (n*TH + th)*TW + tw reads input rows 2th-pt..2th-pt+3 and
    columns 2tw-pl..2tw-pl+3."""
    A, B, H, W = x.shape
    if cm:
        N, C = B, A
    else:
        N, C = A, B
    T = TH * TW
    # one image, zero-padded: every image fills the same interior, so the border stays zero
    buf, h_lo, h_hi, w_lo, w_hi = _image_buffer(H, W, pt, pl, TH, TW, x.dtype)
    for c in range(C):
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
                    # rows of B^T d
                    a0, a1, a2, a3 = r0[k] - r2[k], r1[k] + r2[k], r2[k] - r1[k], r1[k] - r3[k]
                    b0 = r0[k + 1] - r2[k + 1]
                    b1 = r1[k + 1] + r2[k + 1]
                    b2 = r2[k + 1] - r1[k + 1]
                    b3 = r1[k + 1] - r3[k + 1]
                    c0 = r0[k + 2] - r2[k + 2]
                    c1 = r1[k + 2] + r2[k + 2]
                    c2 = r2[k + 2] - r1[k + 2]
                    c3 = r1[k + 2] - r3[k + 2]
                    d0 = r0[k + 3] - r2[k + 3]
                    d1 = r1[k + 3] + r2[k + 3]
                    d2 = r2[k + 3] - r1[k + 3]
                    d3 = r1[k + 3] - r3[k + 3]
                    p = p0 + tw
                    # (B^T d) B: column j of the row above is a (j=0), b, c, d
                    V[0, c, p] = a0 - c0
                    V[1, c, p] = b0 + c0
                    V[2, c, p] = c0 - b0
                    V[3, c, p] = b0 - d0
                    V[4, c, p] = a1 - c1
                    V[5, c, p] = b1 + c1
                    V[6, c, p] = c1 - b1
                    V[7, c, p] = b1 - d1
                    V[8, c, p] = a2 - c2
                    V[9, c, p] = b2 + c2
                    V[10, c, p] = c2 - b2
                    V[11, c, p] = b2 - d2
                    V[12, c, p] = a3 - c3
                    V[13, c, p] = b3 + c3
                    V[14, c, p] = c3 - b3
                    V[15, c, p] = b3 - d3


@numba.njit(cache=True, nogil=True)
def outputs(M, out, bias, has_bias):
    """M: (16, O, N*TH*TW); out: (O, N, OH, OW) C-contiguous (channel-major), TH = ceil(OH/2),
    TW = ceil(OW/2); bias: (O,) (read when has_bias)."""
    O, N, OH, OW = out.shape
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    T = TH * TW
    zero = out.dtype.type(0)
    for o in range(O):
        bo = bias[o] if has_bias else zero
        for n in range(N):
            img = out[o, n]
            for th in range(TH):
                p0 = n * T + th * TW
                h = 2 * th
                full_h = h + 1 < OH
                for tw in range(TW):
                    p = p0 + tw
                    m0, m1, m2, m3 = M[0, o, p], M[1, o, p], M[2, o, p], M[3, o, p]
                    m4, m5, m6, m7 = M[4, o, p], M[5, o, p], M[6, o, p], M[7, o, p]
                    m8, m9, m10, m11 = M[8, o, p], M[9, o, p], M[10, o, p], M[11, o, p]
                    m12, m13, m14, m15 = M[12, o, p], M[13, o, p], M[14, o, p], M[15, o, p]
                    # A^T m: two rows of four
                    s0 = m0 + m4 + m8
                    s1 = m1 + m5 + m9
                    s2 = m2 + m6 + m10
                    s3 = m3 + m7 + m11
                    t0 = m4 - m8 - m12
                    t1 = m5 - m9 - m13
                    t2 = m6 - m10 - m14
                    t3 = m7 - m11 - m15
                    w = 2 * tw
                    img[h, w] = s0 + s1 + s2 + bo
                    if w + 1 < OW:
                        img[h, w + 1] = s1 - s2 - s3 + bo
                    if full_h:
                        img[h + 1, w] = t0 + t1 + t2 + bo
                        if w + 1 < OW:
                            img[h + 1, w + 1] = t1 - t2 - t3 + bo


@numba.njit(cache=True, nogil=True)
def outputs_adjoint(g, cm, dM):
    """The transpose of ``outputs`` (without the bias): dM[:, o, p] = A g_tile A^T, g_tile the 2x2
    block of the output gradient at tile p (zeros past an odd edge). g: C-contiguous in memory order
    (N, O, OH, OW), or (O, N, OH, OW) when cm; dM: (16, O, N*TH*TW)."""
    A, B, OH, OW = g.shape
    if cm:
        N, O = B, A
    else:
        N, O = A, B
    TH, TW = (OH + 1) // 2, (OW + 1) // 2
    T = TH * TW
    zero = g.dtype.type(0)
    for o in range(O):
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
                    # A g: four rows of two (A = [[1, 0], [1, 1], [1, -1], [0, -1]])
                    u0, v0 = g00, g01
                    u1, v1 = g00 + g10, g01 + g11
                    u2, v2 = g00 - g10, g01 - g11
                    u3, v3 = -g10, -g11
                    p = p0 + tw
                    # (A g) A^T: row r gives (u, u + v, u - v, -v)
                    dM[0, o, p] = u0
                    dM[1, o, p] = u0 + v0
                    dM[2, o, p] = u0 - v0
                    dM[3, o, p] = -v0
                    dM[4, o, p] = u1
                    dM[5, o, p] = u1 + v1
                    dM[6, o, p] = u1 - v1
                    dM[7, o, p] = -v1
                    dM[8, o, p] = u2
                    dM[9, o, p] = u2 + v2
                    dM[10, o, p] = u2 - v2
                    dM[11, o, p] = -v2
                    dM[12, o, p] = u3
                    dM[13, o, p] = u3 + v3
                    dM[14, o, p] = u3 - v3
                    dM[15, o, p] = -v3


@numba.njit(cache=True, nogil=True)
def inputs_adjoint(dV, dx, pt, pl, TH, TW):
    """The transpose of ``inputs``: dx[c, n] = the sum over tiles p of B dV[:, c, p] B^T, added
    into each tile's 4x4 patch and cropped to the input. dV: (16, C, N*TH*TW); dx: (C, N, H, W)
    C-contiguous (channel-major, as conv2d's other input-gradient paths hand it back)."""
    C, N, H, W = dx.shape
    T = TH * TW
    buf, h_lo, h_hi, w_lo, w_hi = _image_buffer(H, W, pt, pl, TH, TW, dx.dtype)
    for c in range(C):
        for n in range(N):
            buf[:] = 0
            base = n * T
            for th in range(TH):
                r0, r1, r2, r3 = buf[2 * th], buf[2 * th + 1], buf[2 * th + 2], buf[2 * th + 3]
                p0 = base + th * TW
                for tw in range(TW):
                    p = p0 + tw
                    v0, v1, v2, v3 = dV[0, c, p], dV[1, c, p], dV[2, c, p], dV[3, c, p]
                    v4, v5, v6, v7 = dV[4, c, p], dV[5, c, p], dV[6, c, p], dV[7, c, p]
                    v8, v9, v10, v11 = dV[8, c, p], dV[9, c, p], dV[10, c, p], dV[11, c, p]
                    v12, v13, v14, v15 = dV[12, c, p], dV[13, c, p], dV[14, c, p], dV[15, c, p]
                    # B v over the row index (B = [[1,0,0,0],[0,1,-1,1],[-1,1,1,0],[0,0,0,-1]])
                    e0, e1, e2, e3 = v0, v1, v2, v3
                    f0, f1, f2, f3 = v4 - v8 + v12, v5 - v9 + v13, v6 - v10 + v14, v7 - v11 + v15
                    h0, h1, h2, h3 = v4 + v8 - v0, v5 + v9 - v1, v6 + v10 - v2, v7 + v11 - v3
                    i0, i1, i2, i3 = -v12, -v13, -v14, -v15
                    k = 2 * tw
                    # then over the column index, each row y -> (y0, y1 - y2 + y3, y1 + y2 - y0, -y3)
                    r0[k] += e0
                    r0[k + 1] += e1 - e2 + e3
                    r0[k + 2] += e1 + e2 - e0
                    r0[k + 3] -= e3
                    r1[k] += f0
                    r1[k + 1] += f1 - f2 + f3
                    r1[k + 2] += f1 + f2 - f0
                    r1[k + 3] -= f3
                    r2[k] += h0
                    r2[k + 1] += h1 - h2 + h3
                    r2[k + 2] += h1 + h2 - h0
                    r2[k + 3] -= h3
                    r3[k] += i0
                    r3[k + 1] += i1 - i2 + i3
                    r3[k + 2] += i1 + i2 - i0
                    r3[k + 3] -= i3
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
