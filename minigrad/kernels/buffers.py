"""Recycled arrays for the large results and temporaries the conv and pooling ops make every step.

A training step makes the same large arrays step after step (im2col columns, conv outputs, pooling
outputs and masks, their gradients). Fresh ones cost page faults: glibc hands memory of that size
back to the system when it is freed and maps it again, zero-filled, on the next request. Here an
op asks ``empty(shape, dtype)`` instead of ``np.empty``: a pool per thread keeps every array it
handed out, and hands one out again only once nothing else references it -- no Tensor, graph node,
view or caller: ``sys.getrefcount`` counts them all (a view holds its base) -- so a result is never
overwritten while anything can still read it. Pure NumPy (no numba needed); arrays under
``MIN_BYTES`` go to np.empty (malloc reuses small blocks without faults), and the pool holds at most
``MAX_BYTES`` per thread: past it, arrays no longer in use are dropped (oldest shapes first), and
if none is, the new array is an ordinary one.
"""
import sys
import threading
from math import prod as _prod

import numpy as np

__all__ = ["empty", "like", "result", "ufunc", "clear"]

MIN_BYTES = 1 << 18    # 256 KiB
MAX_BYTES = 256 << 20  # per thread
_local = threading.local()


def _refs(items, i):
    return sys.getrefcount(items[i])


# the count of an array only the pool's list references, measured through the very call that tests it
_FREE = _refs([np.empty(0)], 0)


def empty(shape, dtype):
    """An uninitialised array like np.empty(shape, dtype), recycled when nothing else holds it."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    n = _prod(shape) * dtype.itemsize
    if n < MIN_BYTES:
        return np.empty(shape, dtype)
    pools = getattr(_local, "pools", None)
    if pools is None:
        pools = _local.pools = {}
        _local.held = 0
    key = (shape, dtype)
    items = pools.get(key)
    if items is None:
        items = pools[key] = []
    for i in range(len(items)):
        if _refs(items, i) == _FREE:
            return items[i]
    a = np.empty(shape, dtype)
    if _local.held + n > MAX_BYTES:
        _evict(pools, n)
    if _local.held + n <= MAX_BYTES:
        pools.setdefault(key, items).append(a)  # (_evict drops empty lists, this one too)
        _local.held += n
    return a


def _evict(pools, n):
    """Drop arrays nothing else holds (other shapes: a workload that changed) until n bytes fit."""
    for key in list(pools):
        items = pools[key]
        i = 0
        while i < len(items) and _local.held + n > MAX_BYTES:
            if _refs(items, i) == _FREE:
                _local.held -= items.pop(i).nbytes
            else:
                i += 1
        if not items:
            del pools[key]


def clear():
    """Drop this thread's pool (the arrays still in use elsewhere live on as ordinary arrays)."""
    _local.pools = {}
    _local.held = 0


def like(a, *others, dtype=None):
    """A recycled array of a's shape and memory layout (C order, or channel-major as conv2d's
    output) and of dtype (default a's), to pass as a ufunc's ``out=``: or None -- the ufunc then
    allocates as usual -- when a is small, not a float array, laid out otherwise, or when one of
    others has another shape (the result would broadcast)."""
    if a.dtype.kind != "f" or a.nbytes < MIN_BYTES:
        return None
    for o in others:
        if getattr(o, "shape", None) != a.shape:
            return None
    dtype = a.dtype if dtype is None else dtype
    if a.flags.c_contiguous:
        return empty(a.shape, dtype)
    if a.ndim == 4 and a.transpose(1, 0, 2, 3).flags.c_contiguous:
        s = a.shape
        return empty((s[1], s[0], s[2], s[3]), dtype).transpose(1, 0, 2, 3)
    return None


def result(x, y=None):
    """A recycled array for the result of an elementwise float op on x (and y), to pass as the
    ufunc's ``out=``: or None (the ufunc then allocates as usual). Only when the result has x's
    shape, dtype and C layout for sure: x a large C-contiguous float array; y absent, a Python
    number, or an array of x's dtype that is 0-d or of x's shape and C-contiguous."""
    if x.nbytes < MIN_BYTES or x.dtype.kind != "f" or not x.flags.c_contiguous:
        return None
    if y is not None and type(y) is not float and type(y) is not int:
        if type(y) is not np.ndarray or y.dtype != x.dtype:
            return None
        if y.ndim and (y.shape != x.shape or not y.flags.c_contiguous):
            return None
    return empty(x.shape, x.dtype)


def ufunc(f, x, y=None):
    """f(x) or f(x, y) for a NumPy ufunc whose float result has x's dtype (add, exp, ...): a large
    result goes into a recycled array (see result) rather than fresh memory the system must
    zero-fill; a unary op's keeps x's layout where `like` can (channel-major too). The declared ops'
    recorded eager path, their plain path and codegen's calls all get their buffer from here or from
    the same result/like choice."""
    if type(x) is np.ndarray and x.nbytes >= MIN_BYTES:
        return f(x, out=like(x)) if y is None else f(x, y, out=result(x, y))
    return f(x) if y is None else f(x, y)
