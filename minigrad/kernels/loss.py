"""cross_entropy's common case (2-d logits, class indices, no weights or smoothing) in one pass
per row (numba; imported only by minigrad.kernels).

The NumPy path makes about ten calls on the (N, C) logits each way (a row max, a subtraction, exp,
a row sum, log, a gather, the division for the probabilities; in backward a product and a
scatter), each of them a few microseconds at the small C of a classifier. Here forward reads each
row twice (its max; then exp, sum, log) and writes the probabilities once; backward writes the
gradient in one pass. Sums and logs are taken in float64 and stored in the logits' dtype.
"""
import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _targets_ok(t, C, ignore_index):
    """Whether every target is in [0, C) and none is ignore_index."""
    for i in range(t.shape[0]):
        ti = t[i]
        if ti == ignore_index or ti < 0 or ti >= C:
            return False
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _forward_rows(z, t, p, loss, lo, hi):
    """forward's rows lo .. hi - 1, the targets checked already."""
    N, C = z.shape
    if t.shape[0] != N or p.shape[0] != N or p.shape[1] != C or loss.shape[0] != N:
        raise ValueError("cross_entropy kernel: shapes of the targets and outputs do not fit the logits")
    for i in range(lo, hi):
        m = z[i, 0]
        for c in range(1, C):
            if z[i, c] > m:
                m = z[i, c]
        s = 0.0
        for c in range(C):
            e = np.exp(np.float64(z[i, c] - m))
            p[i, c] = e
            s += e
        for c in range(C):
            p[i, c] = p[i, c] / s
        loss[i] = np.log(s) - (z[i, t[i]] - m)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _backward(p, t, gi, dz, lo, hi):
    """dz = gi * (p - onehot(t)), gi a scalar in p's dtype: dz = p * gi, then dz[i, t_i] -= gi, as
    the NumPy path's two steps (rows lo .. hi - 1)."""
    N, C = p.shape
    if t.shape[0] != N or dz.shape[0] != N or dz.shape[1] != C:
        raise ValueError("cross_entropy backward kernel: shapes of the targets and gradient do not fit")
    for i in range(lo, hi):
        if t[i] < 0 or t[i] >= C:  # never write outside dz, whatever the caller passes
            raise IndexError("cross_entropy backward kernel: a target is out of range")
        for c in range(C):
            dz[i, c] = p[i, c] * gi
        dz[i, t[i]] -= gi


@numba.njit(cache=True, nogil=True)
def in_range(t, C):
    """Whether every class index of the 1-d t lies in [0, C): one pass, where t.min() and t.max() are
    two reductions of ~1 us each at a batch's size."""
    for i in range(t.shape[0]):
        if t[i] < 0 or t[i] >= C:
            return False
    return True


# -- the pool (minigrad/_pool.py): the entry points ops call -------------------------------------------
# Rows are independent (each row's max, sum and log its own), so the results are bitwise the serial
# loop's for any thread count; rows go over the pool from the size whose serial time is
# _pool.WORK_NS (serial ns per element measured, _pool.py).

from .. import _pool  # noqa: E402

# serial ns per float32 element, measured ((512, 512) logits, best of 40, loaded shared 2-core machine)
_FWD_MIN = _pool.min_elements(5.2)    # forward: an exp in double per element, 5.2 ns
_BWD_MIN = _pool.min_elements(0.12)   # backward: 0.12 ns


def forward(z, t, ignore_index, p, loss):
    """z (N, C) logits, t (N,) class indices: p = softmax(z) by row, loss[i] = logsumexp(z_i) - z[i, t_i].
    Returns False without writing anything when a target is ignore_index or outside [0, C) (the
    caller takes the general path, which masks or names it). Rows over the pool when large."""
    N, C = z.shape
    if not _targets_ok(t, C, ignore_index):
        return False
    if z.size < _FWD_MIN:
        _forward_rows(z, t, p, loss, 0, N)
    else:
        _pool.run_rows(lambda lo, hi: _forward_rows(z, t, p, loss, lo, hi), N, C)
    return True


def backward(p, t, gi, dz):
    """dz = gi * (p - onehot(t)) (see _backward), rows over the pool when large."""
    N, C = p.shape
    if p.size < _BWD_MIN:
        return _backward(p, t, gi, dz, 0, N)
    _pool.run_rows(lambda lo, hi: _backward(p, t, gi, dz, lo, hi), N, C)
