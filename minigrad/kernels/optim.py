"""One parameter's SGD or Adam/AdamW update in one pass (numba; imported only by minigrad.kernels).

The NumPy paths (optim/sgd.py's SGDStep, optim/adam.py's AdamStep) make two to six passes over
each parameter for SGD (the scaled direction into a scratch array, then the add; more with weight
decay and momentum) and about a dozen for Adam (lerp, the second moment, sqrt, two divisions, ...). Here every
element goes through the same float operations in the same order, in the parameter's dtype (the
scalars arrive in it), without fused multiply-adds: the result is bit for bit the NumPy path's.
"""
import numba
import numpy as np


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _sgd(p, g, buf, first, nlr, weight_decay, momentum, damp, nesterov, maximize, lo, hi):
    """p, g, buf: C-contiguous arrays of one shape and dtype (buf unused without momentum); first: buf receives the
    direction (the momentum buffer's first step). nlr = -lr; damp = 1 - dampening; the scalars in p's
    dtype. As SGDStep's loop: g = -g (maximize); g = g + p * wd; buf = buf * m + g * damp (or + g when
    damp is 1); g = g + buf * m (Nesterov) or buf; p = p + g * nlr. Elements lo .. hi - 1 in memory
    order."""
    n = p.size
    if g.size != n or buf.size != n:
        raise ValueError("sgd kernel: the parameter, gradient and buffer differ in size")
    p = p.reshape(n)[lo:hi]
    g = g.reshape(n)[lo:hi]
    buf = buf.reshape(n)[lo:hi]
    n = p.size
    use_wd = weight_decay != 0
    use_m = momentum != 0
    plain_damp = damp == 1
    for i in range(n):
        d = -g[i] if maximize else g[i]
        if use_wd:
            d = d + p[i] * weight_decay
        if use_m:
            if first:
                b = d
            elif plain_damp:
                b = buf[i] * momentum + d
            else:
                b = buf[i] * momentum + d * damp
            buf[i] = b
            d = d + b * momentum if nesterov else b
        p[i] = p[i] + d * nlr


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _max(a, b):
    return a if (a >= b or a != a) else b  # np.maximum: nan from either side


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _adam_moments(pi, gi, mi, vi, maximize, wd_mode, wd, small_w, w, b2, c2):
    if maximize:
        gi = -gi
    if wd_mode == 1:
        pi = pi * wd
    elif wd_mode == 2:
        gi = gi + pi
    elif wd_mode == 3:
        gi = gi + pi * wd
    diff = gi - mi
    mi = mi + diff * w if small_w else gi - diff * w
    return pi, mi, vi * b2 + gi * gi * c2


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _adam(p, g, m, v, vmax, amsgrad, maximize, wd_mode, wd, small_w, w, b2, c2, bc2, eps, nss, lo, hi):
    """One parameter's Adam/AdamW step (AdamStep's loop) over C-contiguous arrays of one shape and
    dtype (vmax is read only with amsgrad: pass any other array otherwise, not one of the four, or
    the loop cannot be vectorised), the scalars in that dtype. wd_mode: 0 none, 1 decoupled (p = p *
    wd first), 2 g = g + p, 3 g = g + p * wd. m = lerp(m, g, w): m + (g - m) * w when small_w, else
    g - (g - m) * w (w holds 1 - w then). v = v * b2 + g * g * c2; p = p + m / (sqrt(v, or max(vmax,
    v)) / bc2 + eps) * nss. Where the NumPy path skips a product by 1 (c2, nss), this multiplies by
    1: the same numbers. Elements lo .. hi - 1 in memory order."""
    n = p.size
    if g.size != n or m.size != n or v.size != n or (amsgrad and vmax.size != n):
        raise ValueError("adam kernel: the parameter, gradient and moments differ in size")
    p = p.reshape(n)[lo:hi]
    g = g.reshape(n)[lo:hi]
    m = m.reshape(n)[lo:hi]
    v = v.reshape(n)[lo:hi]
    n = p.size
    if amsgrad:
        vmax = vmax.reshape(vmax.size)[lo:hi]
        for i in range(n):
            pi, mi, vi = _adam_moments(p[i], g[i], m[i], v[i], maximize, wd_mode, wd, small_w, w, b2, c2)
            m[i] = mi
            v[i] = vi
            vx = _max(vmax[i], vi)
            vmax[i] = vx
            p[i] = pi + mi / (np.sqrt(vx) / bc2 + eps) * nss
    else:
        for i in range(n):
            pi, mi, vi = _adam_moments(p[i], g[i], m[i], v[i], maximize, wd_mode, wd, small_w, w, b2, c2)
            m[i] = mi
            v[i] = vi
            p[i] = pi + mi / (np.sqrt(vi) / bc2 + eps) * nss


# -- the pool (minigrad/_pool.py): the entry points the optimizers call -----------------------------
# Elementwise, so bitwise the serial loop's for any thread count; a parameter is split over the pool
# from the size whose serial time is _pool.WORK_NS (serial ns per element measured, _pool.py).

from .. import _pool  # noqa: E402

# serial ns per float32 element, measured (2^18 elements, best of 40, loaded shared 2-core machine)
_SGD_MIN = _pool.min_elements(0.11)    # plain SGD: 0.11 ns (momentum reads and writes one array more)
_ADAM_MIN = _pool.min_elements(0.44)   # Adam: 0.44 ns


def sgd(p, g, buf, first, nlr, weight_decay, momentum, damp, nesterov, maximize):
    """One parameter's SGD step (see _sgd), over the pool when large."""
    n = p.size
    if n < _SGD_MIN:
        return _sgd(p, g, buf, first, nlr, weight_decay, momentum, damp, nesterov, maximize, 0, n)
    _pool.run_rows(lambda lo, hi: _sgd(p, g, buf, first, nlr, weight_decay, momentum, damp, nesterov,
                                       maximize, lo, hi), n)


def adam(p, g, m, v, vmax, amsgrad, maximize, wd_mode, wd, small_w, w, b2, c2, bc2, eps, nss):
    """One parameter's Adam/AdamW step (see _adam), over the pool when large."""
    n = p.size
    if n < _ADAM_MIN:
        return _adam(p, g, m, v, vmax, amsgrad, maximize, wd_mode, wd, small_w, w, b2, c2, bc2, eps, nss, 0, n)
    _pool.run_rows(lambda lo, hi: _adam(p, g, m, v, vmax, amsgrad, maximize, wd_mode, wd, small_w, w, b2, c2,
                                        bc2, eps, nss, lo, hi), n)
