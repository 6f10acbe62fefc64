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
def sgd(p, g, buf, first, nlr, weight_decay, momentum, damp, nesterov, maximize):
    """p, g, buf: C-contiguous arrays of one shape and dtype (buf unused without momentum); first: buf receives the
    direction (the momentum buffer's first step). nlr = -lr; damp = 1 - dampening; the scalars in p's
    dtype. As SGDStep's loop: g = -g (maximize); g = g + p * wd; buf = buf * m + g * damp (or + g when
    damp is 1); g = g + buf * m (Nesterov) or buf; p = p + g * nlr."""
    n = p.size
    p = p.reshape(n)
    g = g.reshape(n)
    buf = buf.reshape(n)
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
def adam(p, g, m, v, vmax, amsgrad, maximize, wd_mode, wd, small_w, w, b2, c2, bc2, eps, nss):
    """One parameter's Adam/AdamW step (AdamStep's loop) over C-contiguous arrays of one shape and
    dtype (vmax is read only with amsgrad: pass any other array otherwise, not one of the four, or
    the loop cannot be vectorised), the scalars in that dtype. wd_mode: 0 none, 1 decoupled (p = p *
    wd first), 2 g = g + p, 3 g = g + p * wd. m = lerp(m, g, w): m + (g - m) * w when small_w, else
    g - (g - m) * w (w holds 1 - w then). v = v * b2 + g * g * c2; p = p + m / (sqrt(v, or max(vmax,
    v)) / bc2 + eps) * nss. Where the NumPy path skips a product by 1 (c2, nss), this multiplies by
    1: the same numbers."""
    n = p.size
    p = p.reshape(n)
    g = g.reshape(n)
    m = m.reshape(n)
    v = v.reshape(n)
    if amsgrad:
        vmax = vmax.reshape(n)
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
