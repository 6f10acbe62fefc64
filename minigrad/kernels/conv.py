"""conv2d's im2col and col2im in one pass each, and the weight gradient of 3x3 convolutions of few
channels in one pass (numba; imported only by minigrad.kernels).

The NumPy paths (ops/_conv2d.py) build the columns with a padded copy of the input and one 6-D strided
copy, and add the input gradient back with one slice-add per kernel tap: for a small convolution
(batch 1) those are NumPy calls over short rows, slower than the GEMM they feed. Here

* ``im2col`` writes cols[(c, i, j), (n, oh, ow)] = xpad[n, c, oh*sh + i*dh, ow*sw + j*dw] straight
  from the unpadded input (padding positions get zeros); for a stride-1 convolution whose output
  is as wide as its input (padding 'same'), each tap's rows are one long shifted copy per image,
  then the padding columns are zeroed;
* ``col2im`` computes, row by row of the input, the sum of the column entries of the taps that
  read it, in tap order (i, j) from a zero start -- the same additions in the same order as
  ops/_conv2d.py's _col2im, so the same float result -- and writes dx in (C, N, H, W) memory order
  (channel-major, as the NumPy paths hand conv2d's input gradient back), with no padded buffer;
* both are independent per input channel c (the rows (c, i, j) of cols, the plane dx[c]): from a
  size threshold the channels are split over minigrad's pool (minigrad/_pool.py, once the user chose
  the threads), the same arithmetic in the same order, so bitwise the serial pass for any thread count;
* ``weight_grad3x3`` computes a 3x3 stride-1 convolution's weight and bias gradients directly
  (see its section below), where the GEMM on im2col's columns would have a 9-wide result.

Every inner loop runs over a slice from index 0 (a provably non-negative index), which lets LLVM
drop numba's negative-index wraparound and vectorise: 3-4x faster than the same loops indexed by
offsets.
"""
import numba
import numpy as np

from . import SUMS


@numba.njit(cache=True, inline="always")
def _ceil_div(a, b):
    return -((-a) // b)


@numba.njit(cache=True, inline="always")
def _valid(d, s, n, O):
    """The outputs o in [lo, hi) (of O) whose input o*s + d lies in [0, n): d = k*dilation - padding
    for kernel offset k, s the stride."""
    lo = min(O, max(0, _ceil_div(-d, s)))
    hi = max(lo, min(O, _ceil_div(n - d, s)))
    return lo, hi


@numba.njit(cache=True, nogil=True)
def _im2col(x, cm, cols, kh, kw, sh, sw, dh, dw, pt, pl, OH, OW, c0, c1):
    """x: the input, C-contiguous in memory order: (N, C, H, W), or (C, N, H, W) when cm (a
    channel-major conv output); cols: (C*kh*kw, N*OH*OW), C-contiguous."""
    A, B, H, W = x.shape
    if cm:
        N, C = B, A
    else:
        N, C = A, B
    if cols.shape[0] != C * kh * kw or cols.shape[1] != N * OH * OW or min(min(kh, kw), min(sh, sw)) < 1 \
            or min(min(dh, dw), min(OH, OW)) < 1 or pt < 0 or pl < 0:
        raise ValueError("im2col kernel: the columns' shape or the geometry does not fit x")
    xf = x.reshape(-1)
    cf = cols.reshape(-1)
    S = OH * OW
    L = N * S
    HW = H * W
    zero = cols.dtype.type(0)
    flat = sh == 1 and sw == 1 and W == OW
    for c in range(c0, c1):
        for i in range(kh):
            di = i * dh - pt
            oh_lo, oh_hi = _valid(di, sh, H, OH)
            for j in range(kw):
                dj = j * dw - pl
                lo, hi = _valid(dj, sw, W, OW)
                row = ((c * kh + i) * kw + j) * L
                for n in range(N):
                    img = xf[((c * N + n) if cm else (n * C + c)) * HW:][:HW]
                    out = cf[row + n * S:][:S]
                    if flat:
                        # out[k] = img[k + delta] for the valid rows, one long copy; the
                        # columns a row's copy took from its neighbour rows are zeroed after
                        delta = di * W + dj
                        k_lo = max(oh_lo * OW, -delta)
                        k_hi = max(k_lo, min(oh_hi * OW, HW - delta))
                        d = out[:k_lo]
                        for q in range(d.size):
                            d[q] = zero
                        d = out[k_hi:]
                        for q in range(d.size):
                            d[q] = zero
                        d = out[k_lo:k_hi]
                        s = img[k_lo + delta:k_hi + delta]
                        for q in range(d.size):
                            d[q] = s[q]
                        if lo > 0 or hi < OW:
                            for oh in range(oh_lo, oh_hi):
                                r = out[oh * OW:(oh + 1) * OW]
                                for q in range(lo):
                                    r[q] = zero
                                r = r[hi:]
                                for q in range(r.size):
                                    r[q] = zero
                        continue
                    d = out[:oh_lo * OW]
                    for q in range(d.size):
                        d[q] = zero
                    d = out[oh_hi * OW:]
                    for q in range(d.size):
                        d[q] = zero
                    for oh in range(oh_lo, oh_hi):
                        r = out[oh * OW:(oh + 1) * OW]
                        for q in range(lo):
                            r[q] = zero
                        src = img[(oh * sh + di) * W:][:W][lo * sw + dj:]
                        d = r[lo:hi]
                        for q in range(d.size):
                            d[q] = src[q * sw]
                        r = r[hi:]
                        for q in range(r.size):
                            r[q] = zero


@numba.njit(cache=True, nogil=True)
def _col2im(cols, dx, kh, kw, sh, sw, dh, dw, pt, pl, OH, OW, c0, c1):
    """dx: (C, N, H, W) C-contiguous; cols: (C*kh*kw, N*OH*OW), C-contiguous. Each input row is
    zeroed, then the taps (i, j) are added in order, as _col2im's slice-adds."""
    C, N, H, W = dx.shape
    if cols.shape[0] != C * kh * kw or cols.shape[1] != N * OH * OW or min(min(kh, kw), min(sh, sw)) < 1 \
            or min(min(dh, dw), min(OH, OW)) < 1 or pt < 0 or pl < 0:
        raise ValueError("col2im kernel: the columns' shape or the geometry does not fit dx")
    L = N * OH * OW
    cf = cols.reshape(-1)
    df = dx.reshape(-1)
    zero = dx.dtype.type(0)
    los = np.empty(kw, np.int64)
    his = np.empty(kw, np.int64)
    for j in range(kw):
        los[j], his[j] = _valid(j * dw - pl, sw, W, OW)
    for c in range(c0, c1):
        for n in range(N):
            for h in range(H):
                drow = df[((c * N + n) * H + h) * W:][:W]
                for w in range(W):
                    drow[w] = zero
                for i in range(kh):
                    th = h + pt - i * dh
                    if th < 0:
                        continue
                    if sh == 1:
                        oh = th
                    elif th % sh != 0:
                        continue
                    else:
                        oh = th // sh
                    if oh >= OH:
                        continue
                    base = (c * kh + i) * kw * L + (n * OH + oh) * OW
                    for j in range(kw):
                        lo, hi = los[j], his[j]
                        if hi <= lo:
                            continue
                        src = cf[base + j * L + lo:base + j * L + hi]
                        if sw == 1:
                            s = lo + j * dw - pl
                            dst = drow[s:s + hi - lo]
                            for q in range(dst.size):
                                dst[q] += src[q]
                        else:
                            dst = drow[lo * sw + j * dw - pl:]
                            for q in range(src.size):
                                dst[q * sw] += src[q]


# -- the pool (minigrad/_pool.py): the entry points ops/_conv2d.py calls -----------------------------
# Split by input channels from the size whose serial time is _pool.WORK_NS (min_elements), counted in
# elements of cols, from the serial cost per element (float32, 3x3, the lowest of (64, 16, 28x28),
# (64, 32, 14x14) and (8, 16, 16x16), best of 20, shared 2-core machine at load 2-5: loaded-machine
# figures): im2col 0.33 ns, col2im 0.34 ns.

from .. import _pool  # noqa: E402

_IM2COL_MIN = _pool.min_elements(0.33)
_COL2IM_MIN = _pool.min_elements(0.34)


def im2col(x, cm, cols, kh, kw, sh, sw, dh, dw, pt, pl, OH, OW):
    """_im2col over every channel, split over the pool by channels from the threshold."""
    C = x.shape[0] if cm else x.shape[1]
    _pool.split_rows(lambda c0, c1: _im2col(x, cm, cols, kh, kw, sh, sw, dh, dw, pt, pl, OH, OW, c0, c1), C, cols.size, _IM2COL_MIN)


def col2im(cols, dx, kh, kw, sh, sw, dh, dw, pt, pl, OH, OW):
    """_col2im over every channel, split over the pool by channels from the threshold."""
    _pool.split_rows(lambda c0, c1: _col2im(cols, dx, kh, kw, sh, sw, dh, dw, pt, pl, OH, OW, c0, c1), dx.shape[0], cols.size, _COL2IM_MIN)


# -- the weight gradient of a 3x3 convolution of few input channels (stride 1, no dilation) ---------
#
# A first layer (1 or 3 input channels) has im2col columns of 9 or 27 rows: its weight gradient
# g2 @ cols^T is a GEMM with a (O, 9) result and an inner dimension of N*OH*OW, which BLAS runs far
# below its peak (0.71 ms for 1->16 at batch 64, 28x28). Here each image's channels are copied once
# into zero-padded planes of width Wp = OW + 2 and each output channel's gradient into a grid of the
# same width (its last two columns zero), so that the 9 taps' products are 9 dot products of the
# whole grid with the plane shifted by i*Wp + j: one pass that keeps 18 sums in registers for two
# output channels at a time (0.33 ms at that shape).


@numba.njit(cache=True, nogil=True, inline="always")
def _fill_planes(x, cm, n, xp, Wp, pt, pl):
    """xp[c, (h + pt)*Wp + pl + w] = image n's x[c, h, w]; the rest of xp stays as it is (zeros)."""
    C = x.shape[0] if cm else x.shape[1]
    H, W = x.shape[2], x.shape[3]
    for c in range(C):
        img = x[c, n] if cm else x[n, c]
        plane = xp[c]
        for h in range(H):
            dst = plane[(h + pt) * Wp + pl:][:W]
            src = img[h]
            for q in range(W):
                dst[q] = src[q]


@numba.njit(cache=True, nogil=True, inline="always")
def _fill_grid(g, gcm, n, o, gb, Wp):
    """gb[oh*Wp + ow] = image n's g[o, oh, ow] (the other columns of gb stay as they are: zeros);
    returns the sum of gb."""
    img = g[o, n] if gcm else g[n, o]
    OH, OW = img.shape
    for oh in range(OH):
        d = gb[oh * Wp:][:OW]
        r = img[oh]
        for q in range(OW):
            d[q] = r[q]
    t = gb.dtype.type(0)
    for q in range(gb.size):
        t += gb[q]
    return t


@numba.njit(cache=True, nogil=True, inline="always")
def _add9(s, a0, a1, a2, a3, a4, a5, a6, a7, a8):
    """s[k] += ak for the 9 taps."""
    s[0] += a0
    s[1] += a1
    s[2] += a2
    s[3] += a3
    s[4] += a4
    s[5] += a5
    s[6] += a6
    s[7] += a7
    s[8] += a8


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def weight_grad3x3(x, cm, g, gcm, dw, db, pt, pl):
    """dw[o, c, i, j] = the sum over n, oh, ow of g[n, o, oh, ow] * xpad[n, c, oh + i, ow + j], and
    db[o] = the sum of g[:, o]: summed per image in g's dtype, over images in float64.
    x: the input in memory order, (N, C, H, W), or (C, N, H, W) when cm; g likewise (N, O, OH, OW)
    or (O, N, OH, OW) when gcm; dw: (O, C, 3, 3) and db: (O,), written."""
    O, C = dw.shape[0], dw.shape[1]
    OH, OW = g.shape[2], g.shape[3]
    N = g.shape[1] if gcm else g.shape[0]
    Wp = OW + 2
    S = OH * Wp
    xp = np.zeros((C, (OH + 2) * Wp + 2), x.dtype)  # (+ 2: the last row's shifted reads)
    gb = np.zeros((2, S), g.dtype)  # two output channels' gradients; the extra columns stay 0
    sw = np.zeros((O, C, 9))
    sb = np.zeros(O)
    zero = g.dtype.type(0)
    for n in range(N):
        _fill_planes(x, cm, n, xp, Wp, pt, pl)
        for o in range(0, O, 2):
            two = o + 1 < O
            sb[o] += _fill_grid(g, gcm, n, o, gb[0], Wp)
            if two:
                sb[o + 1] += _fill_grid(g, gcm, n, o + 1, gb[1], Wp)
            u, v = gb[0], gb[1]  # (v: zeros or a stale channel when not two; its sums are dropped)
            for c in range(C):
                p = xp[c]
                p0, p1, p2 = p[0:][:S], p[1:][:S], p[2:][:S]
                p3, p4, p5 = p[Wp:][:S], p[Wp + 1:][:S], p[Wp + 2:][:S]
                p6, p7, p8 = p[2 * Wp:][:S], p[2 * Wp + 1:][:S], p[2 * Wp + 2:][:S]
                a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = a8 = zero
                b0 = b1 = b2 = b3 = b4 = b5 = b6 = b7 = b8 = zero
                for q in range(S):
                    e0, e1, e2, e3, e4, e5, e6, e7, e8 = p0[q], p1[q], p2[q], p3[q], p4[q], p5[q], p6[q], p7[q], p8[q]
                    s, t = u[q], v[q]
                    a0 += s * e0
                    a1 += s * e1
                    a2 += s * e2
                    a3 += s * e3
                    a4 += s * e4
                    a5 += s * e5
                    a6 += s * e6
                    a7 += s * e7
                    a8 += s * e8
                    b0 += t * e0
                    b1 += t * e1
                    b2 += t * e2
                    b3 += t * e3
                    b4 += t * e4
                    b5 += t * e5
                    b6 += t * e6
                    b7 += t * e7
                    b8 += t * e8
                _add9(sw[o, c], a0, a1, a2, a3, a4, a5, a6, a7, a8)
                if two:
                    _add9(sw[o + 1, c], b0, b1, b2, b3, b4, b5, b6, b7, b8)
    for o in range(O):
        db[o] = sb[o]
        for c in range(C):
            for k in range(9):
                dw[o, c, k // 3, k % 3] = sw[o, c, k]
