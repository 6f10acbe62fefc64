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


@numba.njit(cache=True, nogil=True, error_model="numpy")
def forward(z, t, ignore_index, p, loss):
    """z (N, C) logits, t (N,) class indices: p = softmax(z) by row, loss[i] = logsumexp(z_i) - z[i, t_i].
    Returns False without writing anything when a target is ignore_index or outside [0, C) (the
    caller takes the general path, which masks or names it)."""
    N, C = z.shape
    for i in range(N):
        ti = t[i]
        if ti == ignore_index or ti < 0 or ti >= C:
            return False
    for i in range(N):
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
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def backward(p, t, gi, dz):
    """dz = gi * (p - onehot(t)), gi a scalar in p's dtype: dz = p * gi, then dz[i, t_i] -= gi, as
    the NumPy path's two steps."""
    N, C = p.shape
    if t.shape[0] != N or dz.shape[0] != N or dz.shape[1] != C:
        raise ValueError("cross_entropy backward kernel: shapes of the targets and gradient do not fit")
    for i in range(N):
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
