"""conv2d's im2col and col2im in one pass each (numba; imported only by minigrad.kernels).

The NumPy paths (ops/conv.py) build the columns with a padded copy of the input and one 6-D strided
copy, and add the input gradient back with one slice-add per kernel tap: for a small convolution
(batch 1) those are NumPy calls over short rows, slower than the GEMM they feed. Here

* ``im2col`` writes cols[(c, i, j), (n, oh, ow)] = xpad[n, c, oh*sh + i*dh, ow*sw + j*dw] straight
  from the unpadded input (padding positions get zeros); for a stride-1 convolution whose output
  is as wide as its input (padding 'same'), each tap's rows are one long shifted copy per image,
  then the padding columns are zeroed;
* ``col2im`` computes, row by row of the input, the sum of the column entries of the taps that
  read it, in tap order (i, j) from a zero start -- the same additions in the same order as
  ops/conv.py's _col2im, so the same float result -- and writes dx in (C, N, H, W) memory order
  (channel-major, as the NumPy paths hand conv2d's input gradient back), with no padded buffer.

Every inner loop runs over a slice from index 0 (a provably non-negative index), which lets LLVM
drop numba's negative-index wraparound and vectorise: 3-4x faster than the same loops indexed by
offsets.
"""
import numba
import numpy as np


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
def im2col(x, cm, cols, kh, kw, sh, sw, dh, dw, pt, pl, OH, OW):
    """x: the input, C-contiguous in memory order: (N, C, H, W), or (C, N, H, W) when cm (a
    channel-major conv output); cols: (C*kh*kw, N*OH*OW), C-contiguous."""
    A, B, H, W = x.shape
    if cm:
        N, C = B, A
    else:
        N, C = A, B
    xf = x.reshape(-1)
    cf = cols.reshape(-1)
    S = OH * OW
    L = N * S
    HW = H * W
    zero = cols.dtype.type(0)
    flat = sh == 1 and sw == 1 and W == OW
    for c in range(C):
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
def col2im(cols, dx, kh, kw, sh, sw, dh, dw, pt, pl, OH, OW):
    """dx: (C, N, H, W) C-contiguous; cols: (C*kh*kw, N*OH*OW), C-contiguous. Each input row is
    zeroed, then the taps (i, j) are added in order, as _col2im's slice-adds."""
    C, N, H, W = dx.shape
    L = N * OH * OW
    cf = cols.reshape(-1)
    df = dx.reshape(-1)
    zero = dx.dtype.type(0)
    los = np.empty(kw, np.int64)
    his = np.empty(kw, np.int64)
    for j in range(kw):
        los[j], his[j] = _valid(j * dw - pl, sw, W, OW)
    for c in range(C):
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
