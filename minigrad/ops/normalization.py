"""Normalisation: batch_norm (NativeBatchNorm) and layer_norm (NativeLayerNorm), one kernel for both.

Both normalise over `axes` and then scale and shift: they differ only in the axes and in their name
(grad_fn, errors). Each backward is itself an op (NativeBatchNormBackward, NativeLayerNormBackward):
its forward is the NumPy gradient, its backward the second derivative.
"""
import numpy as np

from ..autograd.function import Function
from .elementwise import rsqrt

__all__ = []  # Function classes only: their public wrappers are nn.functional's


def _spread(grads, need):
    """The gradients a backward op returned (only those in need) as one entry per input, None elsewhere."""
    it = iter(grads)
    return tuple(next(it) if n else None for n in need)


class _Normalize(Function):
    """out = xhat * w + b, xhat = (x - mean) / sqrt(var + eps) over `axes` (biased var);
    (dx, dw, db) = the subclass's backward op (g, x, w)"""

    @staticmethod
    def forward(ctx, x, w, b, axes, eps, stats):
        mean = x.mean(axis=axes, keepdims=True)
        xc = x - mean
        var = np.square(xc).mean(axis=axes, keepdims=True)
        rstd = 1.0 / np.sqrt(var + x.dtype.type(eps))
        xhat = xc
        xhat *= rstd
        out = xhat * w if w is not None else xhat.copy()
        if b is not None:
            out += b
        if stats is not None:
            stats["mean"], stats["var"] = mean, var
        ctx.xhat, ctx.rstd, ctx.axes, ctx.eps = xhat, rstd, axes, eps
        ctx.save_for_backward(x, w)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = tuple(ctx.needs_input_grad[:3])
        grads = type(ctx)._backward_op.apply(g, x, w, ctx.xhat, ctx.rstd, ctx.axes, ctx.eps, need)
        return _spread(grads, need) + (None, None, None)


class _NormalizeBackward(Function):
    """dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w, dw = g * xhat, db = g
    (in x's shape: the engine sums them to w's and b's); its backward is the second derivative"""

    @staticmethod
    def forward(ctx, g, x, w, xhat, rstd, axes, eps, need):
        ctx.axes, ctx.eps, ctx.need = axes, eps, need
        ctx.save_for_backward(g, x, w)
        out = []
        if need[0]:
            gw = g * w if w is not None else g
            dx = gw - gw.mean(axis=axes, keepdims=True)
            dx -= xhat * (gw * xhat).mean(axis=axes, keepdims=True)
            dx *= rstd
            out.append(dx.astype(x.dtype, copy=False))
        if need[1]:
            out.append(g * xhat)
        if need[2]:
            out.append(g)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        # with P(v) = rstd * (v - E[v] - xhat E[v xhat]) (self-adjoint; E the mean over axes), the
        # first backward is dx = P(g w), dw = g xhat, db = g, and xhat moves with x by P(dx):
        #   d/dg = P(A) w + B xhat + C,  d/dw = P(A) g,
        #   d/dx = -rstd (E[A dx] xhat + E[g w xhat] P(A) + E[A xhat] dx) + P(g B)
        # for the incoming (A, B, C) = (gdx, gdw, gdb)
        g, x, w = ctx.saved_tensors
        A, B, C = _spread(grads, ctx.need)
        axes = ctx.axes
        ng, nx, nw = ctx.needs_input_grad[:3]

        def E(v):
            return v.mean(axes, keepdim=True)
        xc = x - E(x)
        r = rsqrt(E(xc * xc) + ctx.eps)
        u = xc * r

        def P(v):
            return r * (v - E(v) - u * E(v * u))
        gw = g * w if w is not None else g
        PA = P(A) if A is not None else None
        dg = dx = dw = None
        if ng:
            terms = [PA * w if (PA is not None and w is not None) else PA,
                     B * u if B is not None else None, C]
            for t in terms:
                if t is not None:
                    dg = t if dg is None else dg + t
        if nw and PA is not None:
            dw = PA * g
        if nx:
            if A is not None:
                dxg = P(gw)
                dx = -r * (E(A * dxg) * u + E(gw * u) * PA + E(A * u) * dxg)
            if B is not None:
                t = P(g * B)
                dx = t if dx is None else dx + t
        return dg, dx, dw, None, None, None, None, None


class NativeBatchNormBackward(_NormalizeBackward):
    """batch_norm's backward op (see _NormalizeBackward)"""

    op_name = "batch_norm_backward"


class NativeLayerNormBackward(_NormalizeBackward):
    """layer_norm's backward op (see _NormalizeBackward)"""

    op_name = "layer_norm_backward"


class NativeBatchNorm(_Normalize):
    """batch_norm in training mode: statistics over every dimension but the channel one (dim 1)"""

    op_name = "batch_norm"
    _backward_op = NativeBatchNormBackward


class NativeLayerNorm(_Normalize):
    """layer_norm: statistics over the trailing normalized_shape dimensions"""

    op_name = "layer_norm"
    _backward_op = NativeLayerNormBackward
