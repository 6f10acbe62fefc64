"""2x2 / stride-2 max pooling's forward in one pass (numba; imported only by minigrad.kernels).

The NumPy path (ops/pooling.py: _max_2x2) takes two pairwise maxima over the input in memory order,
with two temporaries; the kernel reads each window once and writes the same three results: the
maxima (NaN propagates, as np.maximum), ih ("the second of each horizontal pair is strictly
greater", for both rows of every window) and iv ("the bottom row's maximum is strictly greater"),
so that the first maximum in row-major window order wins ties, as PyTorch. The backward routes
the gradient down the same two choices in one pass, with the NumPy path's multiplications by the
0/1 masks (so even the signs of its zeros are the same).
"""
import numba
import numpy as np

from . import buffers


@numba.njit(cache=True, inline="always")
def _max(a, b):
    # np.maximum: NaN if either is NaN, else the larger, a on ties (branch-free: a select)
    return a if (a >= b) | (a != a) else b


@numba.njit(cache=True, nogil=True)
def max2x2_forward(x, out, ih, iv):
    """x: the (rows of windows, 2, W) view of the input in memory order; out, iv: (rows, W / 2);
    ih: (rows, 2, W / 2). Branch-free: random maxima would mispredict every other branch."""
    R, OW = out.shape
    for r in range(R):
        for j in range(OW):
            p = x[r, 0, 2 * j]
            q = x[r, 0, 2 * j + 1]
            u = x[r, 1, 2 * j]
            v = x[r, 1, 2 * j + 1]
            top = _max(p, q)
            bot = _max(u, v)
            out[r, j] = _max(top, bot)
            ih[r, 0, j] = q > p
            ih[r, 1, j] = v > u
            iv[r, j] = bot > top


@numba.njit(cache=True, nogil=True)
def max2x2_backward(g, ih, iv, dx):
    """g, iv: (rows, W / 2); ih (rows, 2, W / 2) and iv as uint8; dx: (rows, 2, W). Multiplies by
    the masks, as _max_2x2_scatter (a select instead measured slower: it does not vectorise)."""
    R, OW = iv.shape
    one = dx.dtype.type(1)
    for r in range(R):
        for j in range(OW):
            gv = g[r, j]
            a = dx.dtype.type(iv[r, j])
            top = gv * (one - a)
            bot = gv * a
            h0 = dx.dtype.type(ih[r, 0, j])
            h1 = dx.dtype.type(ih[r, 1, j])
            dx[r, 0, 2 * j] = top * (one - h0)
            dx[r, 0, 2 * j + 1] = top * h0
            dx[r, 1, 2 * j] = bot * (one - h1)
            dx[r, 1, 2 * j + 1] = bot * h1


def backward(gm, ih, iv):
    """dx as a flat (rows * 2 * W,) array in memory order, from gm (rows, W / 2) C-contiguous in the
    same order and the forward's ih, iv."""
    R, OW = iv.shape
    dx = buffers.empty((R * 4 * OW,), gm.dtype)
    max2x2_backward(gm, ih.reshape(R, 2, OW).view(np.uint8), iv.view(np.uint8), dx.reshape(R, 2, 2 * OW))
    return dx


def forward(xm, OH, OW):
    """(out (A, B, OH, OW), ih (A*B*2*OH*OW,), iv (A*B*OH, OW)) for a C-contiguous (A, B, 2*OH, 2*OW)
    array xm: what _max_2x2 computes, in the same layouts."""
    A, B = xm.shape[:2]
    R = A * B * OH
    out = buffers.empty((A, B, OH, OW), xm.dtype)
    ih = buffers.empty((R * 2 * OW,), np.bool_)
    iv = buffers.empty((R, OW), np.bool_)
    max2x2_forward(xm.reshape(R, 2, 2 * OW), out.reshape(R, OW), ih.reshape(R, 2, OW), iv)
    return out, ih, iv
