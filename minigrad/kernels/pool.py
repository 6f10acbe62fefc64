"""2x2 / stride-2 max pooling's forward and backward (numba; imported only by minigrad.kernels).

The NumPy path (ops/_pool2d.py: _max_2x2_numpy) takes two pairwise maxima over the input in memory order,
with two temporaries; the kernel makes the same two passes compiled, with one scratch array, and
writes the same three results: the maxima (NaN propagates, as np.maximum), ih ("the second of each
horizontal pair is greater or NaN", for both rows of every window) and iv ("the bottom row's
maximum is greater or NaN"), PyTorch's scan of the window in row-major order: the first maximum wins
ties, the last NaN wins a window with NaN. The backward routes the gradient down the same two choices in reverse, with the NumPy
path's multiplications by the 0/1 masks (so even the signs of its zeros are the same). The
horizontal pass runs over the whole array as one loop (every pair is two neighbours in memory),
which vectorises; the earlier one-pass kernel ran window by window along rows of 7-14 windows, too
short to vectorise: 0.40-0.75 ms against 0.23 forward, 0.36-0.59 against 0.19 backward, on the MNIST
CNN's (64, 16, 28, 28) activation.
"""
import numba
import numpy as np

from . import buffers


@numba.njit(cache=True, inline="always")
def _max(a, b):
    # np.maximum: NaN if either is NaN, else the larger, a on ties (branch-free: a select)
    return a if (a >= b) | (a != a) else b


@numba.njit(cache=True, nogil=True)
def max2x2_forward(x, out, ih, iv, hp):
    """x: the input's memory as a flat (R*2*W,) array, R rows of windows of two input rows each;
    out, iv: (R, W / 2); ih, hp: (R*2*W/2,), hp a scratch array. Two passes, each of which
    vectorises: the horizontal pairs over the whole array (every pair is two neighbours in memory,
    whatever row it is in), then the two rows of each window. Branch-free: random maxima would
    mispredict every other branch."""
    R, OW = out.shape
    if iv.shape[0] != R or iv.shape[1] != OW or hp.size != 2 * R * OW or ih.size != hp.size \
            or x.size != 2 * hp.size:
        raise ValueError("max_pool2d kernel: array sizes do not fit a 2x2 pooling of x")
    for k in range(hp.size):
        p = x[2 * k]
        q = x[2 * k + 1]
        hp[k] = _max(p, q)
        ih[k] = (q > p) | (q != q)  # PyTorch's scan: a greater or NaN value replaces the maximum
    for r in range(R):
        top = hp[2 * r * OW:][:OW]
        bot = hp[(2 * r + 1) * OW:][:OW]
        o = out[r]
        v = iv[r]
        for j in range(OW):
            t = top[j]
            b = bot[j]
            o[j] = _max(t, b)
            v[j] = (b > t) | (b != b)


@numba.njit(cache=True, nogil=True)
def max2x2_backward(g, ih, iv, dx, gs):
    """g, iv: (R, W / 2); ih (R*2*W/2,) and iv as uint8; dx: flat (R*2*W,); gs: (R*2*W/2,) scratch.
    Multiplies by the masks, as _max_2x2_scatter (a select instead measured slower: it does not
    vectorise): first each window's gradient to its row (gs), then each row's to its column, over
    the whole array at once, as the forward's two passes in reverse."""
    R, OW = iv.shape
    if g.shape[0] != R or g.shape[1] != OW or gs.size != 2 * R * OW or ih.size != gs.size \
            or dx.size != 2 * gs.size:
        raise ValueError("max_pool2d backward kernel: array sizes do not fit a 2x2 pooling")
    one = dx.dtype.type(1)
    for r in range(R):
        top = gs[2 * r * OW:][:OW]
        bot = gs[(2 * r + 1) * OW:][:OW]
        gr = g[r]
        v = iv[r]
        for j in range(OW):
            a = dx.dtype.type(v[j])
            top[j] = gr[j] * (one - a)
            bot[j] = gr[j] * a
    for k in range(gs.size):
        h = dx.dtype.type(ih[k])
        dx[2 * k] = gs[k] * (one - h)
        dx[2 * k + 1] = gs[k] * h


# -- the pool (minigrad/_pool.py): the window rows split into chunks fixed by the size ----------------
# Every output and mask is a select of its own window's values (no reduction across windows), so a
# block of window rows is the whole kernel run on the rows' slices of every array (the same compiled
# loops: a contiguous slice has the whole array's type), bitwise the whole run's results for any
# thread count. (Kernels taking a row range, indexing from 2 * r0 * OW, ran 3x slower: their loops
# did not vectorise.) On the pool from POOL_MIN input elements: forward ~0.27 ns, backward ~0.21 ns
# per input element serially (the MNIST CNN's (64, 16, 28, 28) float32, best of 30, loaded shared
# 2-core machine); the lower one for both.
from .. import _pool  # noqa: E402

POOL_MIN = _pool.min_elements(0.21)


def backward(gm, ih, iv):
    """dx as a flat (rows * 2 * W,) array in memory order, from gm (rows, W / 2) C-contiguous in the
    same order and the forward's ih, iv."""
    R, OW = iv.shape
    dx = buffers.empty((R * 4 * OW,), gm.dtype)
    gs = buffers.empty((R * 2 * OW,), gm.dtype)
    if dx.size >= POOL_MIN and _pool.threads() > 1:
        h, v = ih.view(np.uint8), iv.view(np.uint8)
        _pool.run_rows(lambda r0, r1: max2x2_backward(gm[r0:r1], h[2 * r0 * OW:2 * r1 * OW], v[r0:r1],
                                                      dx[4 * r0 * OW:4 * r1 * OW], gs[2 * r0 * OW:2 * r1 * OW]),
                       R, 4 * OW)
    else:
        max2x2_backward(gm, ih.view(np.uint8), iv.view(np.uint8), dx, gs)
    return dx


def forward(xm, OH, OW):
    """(out (A, B, OH, OW), ih (A*B*2*OH*OW,), iv (A*B*OH, OW)) for a C-contiguous (A, B, 2*OH, 2*OW)
    array xm: what _max_2x2 (ops/_pool2d.py) computes, in the same layouts."""
    A, B = xm.shape[:2]
    R = A * B * OH
    out = buffers.empty((A, B, OH, OW), xm.dtype)
    ih = buffers.empty((R * 2 * OW,), np.bool_)
    iv = buffers.empty((R, OW), np.bool_)
    hp = buffers.empty((R * 2 * OW,), xm.dtype)
    if xm.size >= POOL_MIN and _pool.threads() > 1:
        xf, o2 = xm.reshape(-1), out.reshape(R, OW)
        _pool.run_rows(lambda r0, r1: max2x2_forward(xf[4 * r0 * OW:4 * r1 * OW], o2[r0:r1], ih[2 * r0 * OW:2 * r1 * OW],
                                                     iv[r0:r1], hp[2 * r0 * OW:2 * r1 * OW]), R, 4 * OW)
    else:
        max2x2_forward(xm.reshape(-1), out.reshape(R, OW), ih, iv, hp)
    return out, ih, iv
