"""Max pooling's 2-D backend for 2x2 windows with stride 2 tiling the unpadded input (the common CNN
pooling), which the max-pool family (ops/pooling.py: MaxPool, MaxPoolBackward) picks when the geometry
allows it and no indices are asked for: two pairwise maxima over flat memory-order views instead of
a running maximum over a padded copy, recording the two pairwise choices (ih, iv) instead of window
offsets; with numba, minigrad/kernels/pool.py makes each pass compiled (the same results bit for
bit; `max_pool2d_2x2` in minigrad.kernels.select picks between them). Both follow PyTorch's scan of
a window: a value replaces the running maximum when it is greater or NaN.

They read the geometry as conv2d's flat 2-D view (ops/_conv2d.py: `flat(geo)`).
"""
import numpy as np

from .. import _pool, kernels
from ..kernels import buffers, select
from ._conv2d import _mem_order

__all__ = []  # a backend only: the ops are ops/pooling.py's


def _is_2x2_tiling(geo):
    """True for 2x2 windows with stride 2 tiling the unpadded input exactly (the common CNN pooling)."""
    return (geo.kh == geo.kw == geo.sh == geo.sw == 2 and geo.dh == geo.dw == 1
            and not (geo.pt or geo.pb or geo.pl or geo.pr) and geo.H == 2 * geo.OH and geo.W == 2 * geo.OW)


def _max_2x2(x, geo):
    """2x2 / stride-2 max pooling as two pairwise maxima over flat memory-order views: first across each
    horizontal pair (a 1-D stride-2 loop), then across the two rows of each window, so no padded copy and
    long inner loops (or, with numba, minigrad/kernels/pool.py in one pass). ih / iv record "the second
    of the pair is greater or NaN", PyTorch's scan over the window in row-major order: the first maximum
    wins ties, the last NaN wins a window with NaN (as the general path).
    Returns (out, (ih, iv, channel_major))."""
    xm, cm = _mem_order(x)
    if kernels.available() and select.choose(  # numba: the same three results in one pass over x
            "max_pool2d_2x2", [list(xm.shape), x.dtype.name, cm],
            {"numba": lambda: kernels.load("pool").forward(xm, geo.OH, geo.OW),
             "numpy": lambda: _max_2x2_numpy(xm, geo, x.dtype)}, "numba") == "numba":
        out, ih, iv = kernels.load("pool").forward(xm, geo.OH, geo.OW)
    else:
        out, ih, iv = _max_2x2_numpy(xm, geo, x.dtype)
    return (out.transpose(1, 0, 2, 3) if cm else out), (ih, iv, cm)


# The pool (minigrad/_pool.py): the NumPy paths split over window rows (one output row: two input
# rows) into chunks fixed by the size, from POOL_MIN input elements: serially ~1.07 ns per input
# element forward, ~0.73 backward (the MNIST CNN's (64, 16, 28, 28) float32, best of 30, loaded shared
# 2-core machine); the lower one for both.
# Every result is its own window's select or product, so a row block does the serial path's
# operations on its rows: bitwise the same for any thread count. (The NaN fix-up below is per
# element: ORing isnan of a block without NaN changes nothing.)
POOL_MIN = _pool.min_elements(0.73)


def _max_2x2_numpy(xm, geo, dtype):
    """_max_2x2's NumPy path on the memory-order array: (out, ih, iv), as the numba kernel's."""
    if xm.size >= POOL_MIN and _pool.threads() > 1:
        return _max_2x2_numpy_rows(xm, geo, dtype)
    A, B = xm.shape[:2]
    p = xm.reshape(-1, 2)
    a, b = p[:, 0], p[:, 1]
    hm = np.maximum(a, b)                    # (A*B*H*OW,)
    ih = np.greater(b, a, out=buffers.empty(hm.shape, np.bool_))
    q = hm.reshape(-1, 2, geo.OW)            # (A*B*OH, top/bottom row, OW)
    t, u = q[:, 0], q[:, 1]
    out = np.maximum(t, u, out=buffers.empty((A, B, geo.OH, geo.OW), dtype).reshape(t.shape))
    iv = np.greater(u, t, out=buffers.empty(t.shape, np.bool_))
    if dtype.kind == "f" and out.size and np.isnan(out.min()):  # a window with NaN: the NaN is chosen
        ih |= np.isnan(b)
        iv |= np.isnan(u)
    return out.reshape(A, B, geo.OH, geo.OW), ih, iv


def _max_2x2_numpy_rows(xm, geo, dtype):
    """_max_2x2_numpy over blocks of window rows on the pool (the same operations per row)."""
    A, B = xm.shape[:2]
    OW = geo.OW
    R = A * B * geo.OH
    xf = xm.reshape(-1)
    hp = buffers.empty((R * 2 * OW,), dtype)
    ih = buffers.empty((R * 2 * OW,), np.bool_)
    out = buffers.empty((A, B, geo.OH, OW), dtype)
    o2 = out.reshape(R, OW)
    iv = buffers.empty((R, OW), np.bool_)

    def fn(r0, r1):
        p = xf[r0 * 4 * OW:r1 * 4 * OW].reshape(-1, 2)
        a, b = p[:, 0], p[:, 1]
        hm = np.maximum(a, b, out=hp[r0 * 2 * OW:r1 * 2 * OW])
        ihb = np.greater(b, a, out=ih[r0 * 2 * OW:r1 * 2 * OW])
        q = hm.reshape(-1, 2, OW)
        t, u = q[:, 0], q[:, 1]
        ob = np.maximum(t, u, out=o2[r0:r1])
        ivb = np.greater(u, t, out=iv[r0:r1])
        if dtype.kind == "f" and ob.size and np.isnan(ob.min()):
            ihb |= np.isnan(b)
            ivb |= np.isnan(u)
    _pool.run_rows(fn, R, 4 * OW)
    return out, ih, iv


def _max_2x2_idx(ih, iv, cm, geo):
    """The window offsets (N, C, OH, OW) int8 k = 2 * row + col of the 2x2 path's maxima."""
    ih3 = ih.reshape(-1, 2, geo.OW)
    idx = (2 * iv + np.where(iv, ih3[:, 1], ih3[:, 0])).astype(np.int8)
    idx = idx.reshape(((geo.C, geo.N) if cm else (geo.N, geo.C)) + (geo.OH, geo.OW))
    return np.ascontiguousarray(idx.transpose(1, 0, 2, 3)) if cm else idx


def _max_2x2_scatter(g, ih, iv, cm, geo):
    """dx for the 2x2 path: g routed down the two pairwise choices, in x's memory order (so a
    channel-major conv output gets a channel-major gradient, which conv2d's backward uses as is)."""
    gm = np.ascontiguousarray(g.transpose(1, 0, 2, 3) if cm else g).reshape(-1, geo.OW)
    if kernels.available():  # numba: the same products in one pass
        dx = kernels.load("pool").backward(gm, ih, iv.reshape(gm.shape))
    else:
        dx = _scatter_pairs(gm, ih, iv, geo)
    if cm:
        return dx.reshape(geo.C, geo.N, geo.H, geo.W).transpose(1, 0, 2, 3)
    return dx.reshape(geo.N, geo.C, geo.H, geo.W)


def _scatter_pairs(gm, ih, iv, geo):
    """The NumPy path of _max_2x2_scatter: dx in memory order, flat pairs (rows * W / 2, 2)."""
    if 4 * gm.size >= POOL_MIN and _pool.threads() > 1:
        return _scatter_pairs_rows(gm, ih, iv, geo)
    dh = buffers.empty((gm.shape[0], 2, geo.OW), gm.dtype)
    np.multiply(gm, iv, out=dh[:, 1])
    np.multiply(gm, ~iv, out=dh[:, 0])
    dh = dh.reshape(-1)
    dx = buffers.empty((dh.shape[0], 2), gm.dtype)
    np.multiply(dh, ih, out=dx[:, 1])
    np.multiply(dh, ~ih, out=dx[:, 0])
    return dx


def _scatter_pairs_rows(gm, ih, iv, geo):
    """_scatter_pairs over blocks of window rows on the pool (the same operations per row)."""
    R, OW = gm.shape
    iv = iv.reshape(R, OW)
    dh = buffers.empty((R, 2, OW), gm.dtype)
    df = dh.reshape(-1)
    dx = buffers.empty((R * 2 * OW, 2), gm.dtype)

    def fn(r0, r1):
        g, v = gm[r0:r1], iv[r0:r1]
        np.multiply(g, v, out=dh[r0:r1, 1])
        np.multiply(g, ~v, out=dh[r0:r1, 0])
        k0, k1 = r0 * 2 * OW, r1 * 2 * OW
        h = ih[k0:k1]
        np.multiply(df[k0:k1], h, out=dx[k0:k1, 1])
        np.multiply(df[k0:k1], ~h, out=dx[k0:k1, 0])
    _pool.run_rows(fn, R, 4 * OW)
    return dx
