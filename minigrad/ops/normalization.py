"""Normalisation: batch_norm (NativeBatchNorm) and layer_norm (NativeLayerNorm), one kernel for both.

Both normalise over `axes` and then scale and shift: they differ only in the axes and in their name
(grad_fn, errors). Each backward is itself an op (NativeBatchNormBackward, NativeLayerNormBackward):
its forward is the NumPy gradient, its backward the second derivative.
"""
import math

import numpy as np

from .. import kernels
from ..autograd.function import Function, NoRule, _spread
from ..autograd.engine import sum_axes, sum_to
from .elementwise import rsqrt

__all__ = []  # Function classes only: their public wrappers are nn.functional's


def _layout(a):
    """"c" (C-contiguous), "cm" (channel-major, as conv2d's output) or None (another layout)."""
    if a.flags.c_contiguous:
        return "c"
    if a.swapaxes(0, 1).flags.c_contiguous:
        return "cm"
    return None


def _kernel_layout(x, axes):
    """With numba: x's layout (see _layout) when the statistics run over every dimension but dim 1
    (batch_norm's) of a non-empty float array laid out so that kernels/norm.py can take it as an
    (N, C, L) view; else None."""
    if (x.ndim < 2 or x.size == 0 or x.dtype.kind != "f" or axes != (0,) + tuple(range(2, x.ndim))
            or not kernels.available()):
        return None
    return _layout(x)


def _empty(x, layout):
    """An uninitialised array of x's shape and dtype in the given layout."""
    if layout == "c":
        return np.empty(x.shape, x.dtype)
    return np.empty((x.shape[1], x.shape[0]) + x.shape[2:], x.dtype).swapaxes(0, 1)


def _ncl(a, layout):
    """a as the C-contiguous 3-d view the kernels take: (N, C, L), or (C, N, L) when channel-major."""
    if layout == "c":
        return a.reshape(a.shape[0], a.shape[1], -1)
    return a.swapaxes(0, 1).reshape(a.shape[1], a.shape[0], -1)


def _per_channel(v, C, dtype, fill):
    return np.full(C, fill, dtype) if v is None else v.reshape(C)


def _forward_kernel(ctx, x, w, b, axes, eps, stats, layout):
    C = x.shape[1]
    dt = x.dtype
    out = _empty(x, layout)
    mean, var, rstd = np.empty(C, dt), np.empty(C, dt), np.empty(C, dt)
    kernels.load("norm").forward(_ncl(x, layout), layout == "cm", _per_channel(w, C, dt, 1),
                                 _per_channel(b, C, dt, 0), eps, _ncl(out, layout), mean, var, rstd)
    kshape = (1, C) + (1,) * (x.ndim - 2)
    if stats is not None:
        stats["mean"], stats["var"] = mean.reshape(kshape), var.reshape(kshape)
    # no xhat kept: the backward recomputes it from x and these statistics as it reads x
    ctx.xhat, ctx.mean, ctx.rstd = None, mean.reshape(kshape), rstd.reshape(kshape)
    ctx.axes, ctx.eps = axes, eps
    ctx.save_for_backward(x, w)
    return out


def _rows_ok(x, axes, *params):
    """With numba: x a non-empty C-contiguous float array normalised over its trailing `axes` (layer
    norm's), its parameters None or contiguous arrays of x's dtype and of those dims' shape."""
    k, n, dt = len(axes), x.ndim, x.dtype
    if not k or x.size == 0 or dt.kind != "f" or not x.flags.c_contiguous or not kernels.available():
        return False
    if tuple(a % n for a in axes) != tuple(range(n - k, n)):
        return False
    tail = x.shape[n - k:]
    for p in params:  # (a loop, not all() of a generator: this runs per layer norm call)
        if p is not None and (p.dtype != dt or p.shape != tail or not p.flags.c_contiguous):
            return False
    return True


def _rows(a, k):
    """a as the (rows, D) view the row kernels take, D the product of its last k dims."""
    return a.reshape(-1, math.prod(a.shape[a.ndim - k:]))


def _rows_forward(ctx, x, w, b, axes, eps):
    k = len(axes)
    X = _rows(x, k)
    D = X.shape[1]
    dt = x.dtype
    out = np.empty(x.shape, dt)
    mean, rstd = np.empty(X.shape[0], dt), np.empty(X.shape[0], dt)
    kernels.load("norm").rows_forward(X, np.ones(D, dt) if w is None else w.reshape(D),
                                      np.zeros(D, dt) if b is None else b.reshape(D), eps, _rows(out, k), mean, rstd)
    kshape = x.shape[:x.ndim - k] + (1,) * k
    ctx.xhat, ctx.mean, ctx.rstd, ctx.axes, ctx.eps = None, mean.reshape(kshape), rstd.reshape(kshape), axes, eps
    ctx.save_for_backward(x, w)
    return out


def _rows_backward(g, x, w, mean, rstd, axes, need):
    """(dx, dw, db) of layer_norm by the row kernel, those in need (dx always computed)."""
    k = len(axes)
    X = _rows(x, k)
    D = X.shape[1]
    dt = x.dtype
    dx = np.empty(x.shape, dt)
    dw, db = np.zeros(D), np.zeros(D)
    kernels.load("norm").rows_backward(_rows(np.ascontiguousarray(g, dtype=dt), k), X,
                                       np.ones(D, dt) if w is None else w.reshape(D), mean.reshape(-1),
                                       rstd.reshape(-1), _rows(dx, k), dw, db)
    pshape = x.shape[x.ndim - k:]
    res = [dx]
    if need[1]:
        res.append(dw.astype(np.result_type(g, x)).reshape(pshape))
    if need[2]:
        res.append(db.astype(g.dtype).reshape(pshape))
    return tuple(res)


class _Normalize(Function):
    """out = xhat * w + b, xhat = (x - mean) / sqrt(var + eps) over `axes` (biased var);
    (dx, dw, db) = the subclass's backward op (g, x, w)"""

    @staticmethod
    def forward(ctx, x, w, b, axes, eps, stats):
        layout = _kernel_layout(x, axes)
        if layout is not None:  # numba: three passes over x (kernels/norm.py)
            return _forward_kernel(ctx, x, w, b, axes, eps, stats, layout)
        if stats is None and _rows_ok(x, axes, w, b):  # layer_norm, numba: per row, two passes
            return _rows_forward(ctx, x, w, b, axes, eps)
        mean = x.mean(axis=axes, keepdims=True)
        xc = x - mean
        var = np.square(xc).mean(axis=axes, keepdims=True)
        rstd = 1.0 / np.sqrt(var + x.dtype.type(eps))
        xhat = xc
        xhat *= rstd
        out = xhat * w if w is not None else xhat.copy(order="K")  # x's layout, as the products keep
        if b is not None:
            out += b
        if stats is not None:
            stats["mean"], stats["var"] = mean, var
        ctx.xhat, ctx.mean, ctx.rstd, ctx.axes, ctx.eps = xhat, mean, rstd, axes, eps
        ctx.save_for_backward(x, w)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = tuple(ctx.needs_input_grad[:3])
        grads = type(ctx)._backward_op.apply(g, x, w, ctx.mean, ctx.rstd, ctx.axes, ctx.eps, need, ctx.xhat)
        return _spread(grads, need) + (None, None, None)

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):
        # xhat moves by P(tx) = rstd (tx - E[tx] - xhat E[tx xhat]): out' = P(tx) w + xhat tw + tb
        # (xhat and rstd recomputed in Tensor ops, so the tangent is differentiable in x again)
        x, w = ctx.saved_tensors
        axes = ctx.axes
        out = None
        if tx is not None or tw is not None:
            xc = x - x.mean(axes, keepdim=True)
            r = rsqrt((xc * xc).mean(axes, keepdim=True) + ctx.eps)
            u = xc * r
        if tx is not None:
            out = r * (tx - tx.mean(axes, keepdim=True) - u * (tx * u).mean(axes, keepdim=True))
            out = out * w if w is not None else out
        for t in (u * tw if tw is not None else None, tb):
            if t is not None:
                out = t if out is None else out + t
        return out


def _sum_to(a, shape):
    """Array a summed down to shape, as the engine's sum_to does for a Tensor (the same axes)."""
    axes = sum_axes(a.shape, shape)
    return a.sum(axis=axes, keepdims=True).reshape(shape) if axes else a.reshape(shape)


def _param_shape(shape, axes):
    """The shape of the weight and bias the forward broadcast against an input of shape, normalised
    over axes: batch_norm's (0, 2, ...) give (1, C, 1, ...), layer_norm's trailing ones give
    normalized_shape (its axes always hold dimension 1, or are (0,) of a 1-d input)."""
    if len(shape) >= 2 and axes and axes[0] == 0 and 1 not in axes:
        return tuple(1 if d in axes else s for d, s in enumerate(shape))
    return tuple(shape[d] for d in axes)


class _NormalizeBackward(Function):
    """dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w, dw = sum(g * xhat),
    db = sum(g) (summed to the parameters' shape, _param_shape: with numba, batch_norm's are the
    sums its dx kernel makes anyway), xhat = (x - mean) * rstd from the forward's statistics (mean
    and rstd keep the reduced dimensions; xhat: the NumPy forward's, which it had made anyway, or
    None); its backward is the second derivative"""

    @staticmethod
    def forward(ctx, g, x, w, mean, rstd, axes, eps, need, xhat=None):
        ctx.axes, ctx.eps, ctx.need = axes, eps, need
        ctx.save_for_backward(g, x, w)
        out = []
        if need[0] and xhat is None and g.dtype == x.dtype and g.shape == x.shape and _rows_ok(x, axes, w) \
                and mean.size * int(np.prod(x.shape[x.ndim - len(axes):])) == x.size:
            return _rows_backward(g, x, w, mean, rstd, axes, need)   # layer_norm, numba: per row
        pshape = _param_shape(x.shape, axes)
        sums = None
        layout = _kernel_layout(x, axes) if need[0] else None
        if layout is not None:  # numba: two passes over g and x (kernels/norm.py)
            C = x.shape[1]
            dx = _empty(x, layout)
            gl = g
            if g.dtype != x.dtype or _layout(g) != layout:  # the kernel reads g in x's layout and dtype
                gl = _empty(x, layout)
                gl[...] = g
            sums = np.empty((2, C))
            stat = [a.reshape(C).astype(x.dtype, copy=False) for a in (mean, rstd)]
            kernels.load("norm").backward_dx(_ncl(gl, layout), _ncl(x, layout), layout == "cm",
                                             _per_channel(w, C, x.dtype, 1), *stat, _ncl(dx, layout), sums)
            out.append(dx)
        else:
            if xhat is None and (need[0] or need[1]):
                xhat = (x - mean) * rstd
            if need[0]:
                gw = g * w if w is not None else g
                dx = gw - gw.mean(axis=axes, keepdims=True)
                dx -= xhat * (gw * xhat).mean(axis=axes, keepdims=True)
                dx *= rstd
                out.append(dx.astype(x.dtype, copy=False))
        dt = np.result_type(g, x if xhat is None else xhat)
        if need[1]:
            out.append(sums[1].astype(dt).reshape(pshape) if sums is not None else _sum_to(g * xhat, pshape))
        if need[2]:
            out.append(sums[0].astype(g.dtype).reshape(pshape) if sums is not None else _sum_to(g, pshape))
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
            # (B and C have the parameters' shape: they broadcast back over the summed dimensions)
            terms = [PA * w if (PA is not None and w is not None) else PA,
                     B * u if B is not None else None, C]
            for t in terms:
                if t is not None:
                    dg = t if dg is None else dg + t
            if dg is not None and dg.shape != g.shape:
                dg = dg.expand(*g.shape)
        if nw and PA is not None:
            dw = PA * g
        if nx:
            if A is not None:
                dxg = P(gw)
                dx = -r * (E(A * dxg) * u + E(gw * u) * PA + E(A * u) * dxg)
            if B is not None:
                t = P(g * B)
                dx = t if dx is None else dx + t
        return dg, dx, dw, None, None, None, None, None, None

    @staticmethod
    def jvp(ctx, tg, tx, tw, *_):
        # outputs dx = P(g w), dw = g u, db = g (those in need), u = xhat, P as in backward; with
        # u' = P(tx) and r'/r = -r E[u tx]:  P'(v) = (r'/r) P(v) - r (u' E[v u] + u E[v u'])
        g, x, w = ctx.saved_tensors
        axes = ctx.axes

        def E(v):
            return v.mean(axes, keepdim=True)
        xc = x - E(x)
        r = rsqrt(E(xc * xc) + ctx.eps)
        u = xc * r

        def P(v):
            return r * (v - E(v) - u * E(v * u))

        def add(a, b):
            return b if a is None else (a if b is None else a + b)
        du = P(tx) if tx is not None else None
        out = []
        if ctx.need[0]:
            dgw = add(tg * w if (tg is not None and w is not None) else tg,
                      g * tw if tw is not None else None)
            d = P(dgw) if dgw is not None else None
            if du is not None:
                gw = g * w if w is not None else g
                d = add(d, -r * E(u * tx) * P(gw) - r * (du * E(gw * u) + u * E(gw * du)))
            out.append(d)
        pshape = _param_shape(x.shape, axes)
        if ctx.need[1]:
            t = add(tg * u if tg is not None else None, g * du if du is not None else None)
            out.append(None if t is None else sum_to(t, pshape))
        if ctx.need[2]:
            out.append(None if tg is None else sum_to(tg, pshape))
        return tuple(out)


class NativeBatchNormBackward(_NormalizeBackward):
    """batch_norm's backward op (see _NormalizeBackward)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "batch_norm_backward"


class NativeLayerNormBackward(_NormalizeBackward):
    """layer_norm's backward op (see _NormalizeBackward)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "layer_norm_backward"


class NativeBatchNorm(_Normalize):
    """batch_norm in training mode: statistics over every dimension but the channel one (dim 1)"""
    batching = NoRule("batch statistics: per sample they are the statistics of that sample's batch")
    onnx = NoRule("batch norm with batch statistics (training=True); in eval it is elementwise and maps")

    op_name = "batch_norm"
    _backward_op = NativeBatchNormBackward


class NativeLayerNorm(_Normalize):
    """layer_norm: statistics over the trailing normalized_shape dimensions"""
    _torch_edges = (0, 1, 2)  # input, weight, bias (edges in PyTorch even when None)
    batching = "layer_norm"

    op_name = "layer_norm"
    _backward_op = NativeLayerNormBackward

    @staticmethod
    def onnx(e, c):
        x, w, b, axes, eps = e.args[:5]
        axes = sorted(int(a) % len(x.shape) for a in axes)
        if axes != list(range(axes[0], len(x.shape))):
            raise c.unmapped("normalising over axes that are not the trailing ones")
        scale = w.name if c.is_var(w) else c.const(np.ones(x.shape[axes[0]:], x.dtype))
        ins = [x.name, scale] + ([b.name] if c.is_var(b) else [])
        return c.add("LayerNormalization", ins, c.out(e), axis=axes[0], epsilon=float(eps))
