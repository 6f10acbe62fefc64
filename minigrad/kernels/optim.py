"""One parameter's SGD update in one pass (numba; imported only by minigrad.kernels).

The NumPy path (optim/sgd.py's SGDStep) makes two to six passes over each parameter (the scaled
direction into a scratch array, then the add; more with weight decay and momentum). Here every
element goes through the same float operations in the same order, in the parameter's dtype (the
scalars arrive in it), without fused multiply-adds: the result is bit for bit the NumPy path's.
"""
import numba


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
