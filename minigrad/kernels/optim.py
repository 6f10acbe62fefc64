"""One parameter's SGD or Adam/AdamW update in one pass (numba; imported only by minigrad.kernels).

The NumPy paths (optim/sgd.py's SGDStep, optim/adam.py's AdamStep) make two to six passes over
each parameter for SGD (the scaled direction into a scratch array, then the add; more with weight
decay and momentum) and about a dozen for Adam (lerp, the second moment, sqrt, two divisions, ...). Here every
element goes through the same float operations in the same order, in the parameter's dtype (the
scalars arrive in it), without fused multiply-adds: the result is bit for bit the NumPy path's.
"""
import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True, inline="always")
def _max(a, b):
    return a if (a >= b or a != a) else b  # np.maximum: nan from either side


@numba.njit(cache=True, nogil=True)
def adam(p, g, m, v, vmax, amsgrad, maximize, wd_mode, wd, small_w, w, b2, use_c2, c2, bc2, eps, use_nss, nss):
    """One parameter's Adam/AdamW step (AdamStep's loop) over C-contiguous arrays of one shape and
    dtype, the scalars in that dtype. wd_mode: 0 none, 1 decoupled (p = p * wd first), 2 g = g + p,
    3 g = g + p * wd. m = lerp(m, g, w): m + (g - m) * w when small_w, else g - (g - m) * (1 - w) (w
    holds 1 - w then). v = v * b2 + g * g (* c2 when use_c2); p = p + m / (sqrt(v or max(vmax, v))
    / bc2 + eps) (* nss when use_nss)."""
    n = p.size
    p = p.reshape(n)
    g = g.reshape(n)
    m = m.reshape(n)
    v = v.reshape(n)
    vmax = vmax.reshape(vmax.size)
    for i in range(n):
        gi = -g[i] if maximize else g[i]
        if wd_mode == 1:
            p[i] = p[i] * wd
        elif wd_mode == 2:
            gi = gi + p[i]
        elif wd_mode == 3:
            gi = gi + p[i] * wd
        diff = gi - m[i]
        if small_w:
            m[i] = m[i] + diff * w
        else:
            m[i] = gi - diff * w
        prod = gi * gi
        if use_c2:
            prod = prod * c2
        vi = v[i] * b2 + prod
        v[i] = vi
        if amsgrad:
            vi = _max(vmax[i], vi)
            vmax[i] = vi
        d = np.sqrt(vi) / bc2 + eps
        q = m[i] / d
        if use_nss:
            q = q * nss
        p[i] = p[i] + q
