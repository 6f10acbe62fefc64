"""Reductions (dim: int, tuple or None; keepdim) and the fused softmax family."""
import builtins
import math
from collections import namedtuple

import numpy as np

from ..autograd.function import Function, NoRule, holomorphic
from .._memory_format import _c_order
from ..tensor import Tensor
from .elementwise import exp, sign, where, abs as _abs, cast
from .shape import Expand
from .. import _dtype
from .._aliases import dim_alias as _dim_alias

# the public ops of this family: exported by minigrad.ops and minigrad (ops/__init__.py derives from it)
__all__ = [
    "sum", "mean", "var", "std", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all",
    "logsumexp", "softmax", "log_softmax", "norm", "cumsum",
]

values_indices = namedtuple("values_indices", ["values", "indices"])


def _axes(dim, ndim, op):
    """Normalise dim (None, int, tuple/list) to a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not (-builtins.max(ndim, 1) <= d < builtins.max(ndim, 1)):
            raise IndexError(f"{op}: dimension {d} out of range for a tensor of {ndim} dimensions")
        out.append(d % ndim if ndim else 0)
    return tuple(sorted(set(out))) if ndim else ()


def _keep_shape(shape, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _reduced(ctx, x, out_kept, axes, keepdim):
    """Return the op's output (squeezed unless keepdim) and save (x, output) for backward."""
    ctx.axes, ctx.keepdim, ctx.shape = axes, keepdim, x.shape
    out = _c_order(out_kept if keepdim else np.squeeze(out_kept, axis=axes))  # PyTorch's layout
    ctx.save_for_backward(x, out)
    return out


def _saved_kept(ctx):
    """(x, output with the reduced axes kept) from what _reduced saved; differentiable in both."""
    x, out = ctx.saved_tensors
    if not ctx.keepdim and ctx.axes:
        out = out.reshape(_keep_shape(ctx.shape, ctx.axes))
    return x, out


def _expand_back(g, shape, axes, keepdim):
    """g of the reduced shape -> broadcastable against the input (re-insert the reduced axes)."""
    if not keepdim and axes and g.ndim:  # (a 0-d g broadcasts as it is)
        g = g.reshape(_keep_shape(shape, axes))
    return Expand.apply(g, shape)  # not g.expand(shape): the shape is valid by construction, no checks


def _reduce_onnx(op):
    """ReduceX over forward's (x, axes, keepdim)."""
    def onnx(e, c):
        x, axes, keepdim = e.args[:3]
        return c.reduce(op, x.name, axes, keepdim, c.out(e), len(x.shape))
    return staticmethod(onnx)


class Sum(Function):
    """out = sum(x, axes);  dx = g broadcast back over the summed axes"""
    batching = "reduce_axes"
    onnx = _reduce_onnx("ReduceSum")

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        ctx.shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        return _c_order(x.sum(axis=axes, keepdims=keepdim))  # the method skips np.sum's Python wrapper

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g, ctx.shape, ctx.axes, ctx.keepdim), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Sum.apply(t, ctx.axes, ctx.keepdim)


def sum(input, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):  # noqa: A001
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("sum", dim, axis, keepdim, keepdims, None)
    if dtype is not None:
        input = cast(input, dtype)
    elif input.dtype.kind in "bu" or input.dtype.kind == "i" and input.dtype != np.int64:
        input = cast(input, _dtype.int64)  # PyTorch sums bool and small ints as int64
    return Sum.apply(input, _axes(dim, input.ndim, "sum"), keepdim)


class Mean(Function):
    """out = mean(x, axes);  dx = g / n broadcast back"""
    batching = "reduce_axes"
    onnx = _reduce_onnx("ReduceMean")

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        ctx.shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        ctx.n = math.prod([x.shape[a] for a in axes]) if axes else 1
        return _c_order(x.mean(axis=axes, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g / ctx.n, ctx.shape, ctx.axes, ctx.keepdim), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Mean.apply(t, ctx.axes, ctx.keepdim)


def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("mean", dim, axis, keepdim, keepdims, None)
    if dtype is not None:
        input = cast(input, dtype)
    if input.dtype.kind not in "fc":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {input.dtype}")
    return Mean.apply(input, _axes(dim, input.ndim, "mean"), keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """var = sum((x - mean)^2) / (n - correction); composite, so twice differentiable."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("var", dim, axis, keepdim, keepdims, None)
    axes = _axes(dim, input.ndim, "var")
    n = math.prod([input.shape[a] for a in axes]) if axes else 1
    d = input - input.mean(axes, keepdim=True)
    if d.dtype.kind == "c":  # |d|^2: a complex variance is real, as PyTorch's
        d = _abs(d)
    return (d * d).sum(axes, keepdim=keepdim) / builtins.max(n - _correction(unbiased, correction), 0)


class Std(Function):
    """std's last step, out = sqrt(v) of the variance v;  dv = g / (2 * out), 0 where out == 0 (PyTorch's std backward: constant input -> 0, not nan)"""
    batching = "elementwise"
    fusion = NoRule("the square root ending a reduction, with its static arguments")
    onnx = "Sqrt"

    @staticmethod
    def forward(ctx, v):
        out = np.asarray(np.sqrt(v))  # an ndarray even for 0-d, so the saved output stays in the graph
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        zero = out == 0
        return where(zero, 0.0, g / where(zero, 1.0, out * 2.0))

    @staticmethod
    def jvp(ctx, t):
        out, = ctx.saved_tensors
        zero = out == 0
        return where(zero, 0.0, t / where(zero, 1.0, out * 2.0))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("std", dim, axis, keepdim, keepdims, None)
    return Std.apply(var(input, dim, unbiased, keepdim, correction=correction))


class Prod(Function):
    """out = prod(x);  dx = g * prod of the other elements (exact with zeros)"""
    batching = "reduce_axes"
    onnx = _reduce_onnx("ReduceProd")

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        out = np.prod(x, axis=axes, keepdims=True)
        return _reduced(ctx, x, out, axes, keepdim)

    @staticmethod
    def backward(ctx, g):
        x, out_kept = _saved_kept(ctx)
        g = _expand_back(g, ctx.shape, ctx.axes, ctx.keepdim)
        if not (x._data == 0).any():
            return g * (out_kept / x), None, None  # differentiable again
        # with zeros, out / x is 0/0: the product of the other elements, exact (and differentiable)
        return g * ProdOthers.apply(x, ctx.axes), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        x, out_kept = _saved_kept(ctx)
        others = out_kept / x if not (x._data == 0).any() else ProdOthers.apply(x, ctx.axes)
        return Sum.apply(t * others, ctx.axes, ctx.keepdim)


class ProdOthers(Function):
    """out_i = product of the other elements of x_i's reduction group (exact with zeros);
    dx_j = sum over i != j of gg_i * prod_{k != i, j} x_k  (itself ProdOthers of x with x_j set to 1,
    so prod is differentiable to any order at zeros, as PyTorch's)"""
    batching = "reduce_axes"
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    @staticmethod
    def forward(ctx, x, axes):
        ctx.save_for_backward(x)
        ctx.axes = axes
        return _prod_others(x, axes)

    @staticmethod
    def backward(ctx, gg):
        x, = ctx.saved_tensors
        axes = ctx.axes
        keep = [d for d in range(x.ndim) if d not in axes]
        perm = keep + list(axes)
        xp, gp = x.permute(*perm), gg.permute(*perm)
        n = math.prod([x.shape[a] for a in axes]) if axes else 1
        lead = xp.shape[:len(keep)]
        x2, g2 = xp.reshape(lead + (n,)), gp.reshape(lead + (n,))
        eye = Tensor._make(np.eye(n, dtype=bool))
        y = where(eye, 1.0, x2.unsqueeze(-2))  # [..., j, k] = x_k, with x_j replaced by 1
        p = ProdOthers.apply(y, (y.ndim - 1,))  # [..., j, i] = prod over k != i, j (i != j)
        dx = where(eye, 0.0, p * g2.unsqueeze(-2)).sum(-1)
        return dx.reshape(xp.shape).permute(*np.argsort(perm).tolist()), None

    @staticmethod
    def jvp(ctx, t, _axes):
        return ProdOthers.backward(ctx, t)[0]  # the Jacobian is symmetric: J t = J^T t


def _prod_others(x, axes):
    """For each element, the product of the other elements in its reduction group."""
    moved = np.moveaxis(x, axes, tuple(range(len(axes))))
    flat = moved.reshape((-1,) + moved.shape[len(axes):])
    left = np.concatenate([np.ones_like(flat[:1]), np.cumprod(flat, 0)[:-1]], 0)
    right = np.concatenate([np.cumprod(flat[::-1], 0)[:-1][::-1], np.ones_like(flat[:1])], 0)
    res = (left * right).reshape(moved.shape)
    return np.moveaxis(res, tuple(range(len(axes))), axes)


def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("prod", dim, axis, keepdim, keepdims, None)
    if dtype is not None:
        input = cast(input, dtype)
    elif input.dtype.kind in "bu" or input.dtype.kind == "i" and input.dtype != np.int64:
        input = cast(input, _dtype.int64)
    return Prod.apply(input, _axes(dim, input.ndim, "prod"), keepdim)


def _tie_count(mask, axes, dtype):
    """The number of ties per reduced slice (axes kept), in dtype: computed with ops, so that a traced
    backward recounts them on new inputs instead of baking this run's count in."""
    return cast(Sum.apply(mask, axes, True), dtype)


class Amax(Function):
    """out = amax(x, axes);  dx = g / (number of ties) at the maxima (ties share evenly)"""
    batching = "reduce_axes"
    onnx = _reduce_onnx("ReduceMax")

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        out = np.amax(x, axis=axes, keepdims=True)
        return _reduced(ctx, x, out, axes, keepdim)

    @staticmethod
    def backward(ctx, g):
        x, out_kept = _saved_kept(ctx)
        mask = x == out_kept
        count = _tie_count(mask, ctx.axes, g.dtype)
        g = _expand_back(g, ctx.shape, ctx.axes, ctx.keepdim)
        return where(mask, g / count, 0.0), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        x, out_kept = _saved_kept(ctx)
        mask = x == out_kept  # ties share evenly, as the backward
        count = _tie_count(mask, ctx.axes, t.dtype)
        return Sum.apply(where(mask, t / count, 0.0), ctx.axes, ctx.keepdim)


class Amin(Amax):
    """out = amin(x, axes);  dx = g / (number of ties) at the minima (ties share evenly)"""
    batching = "reduce_axes"
    onnx = _reduce_onnx("ReduceMin")

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        out = np.amin(x, axis=axes, keepdims=True)
        return _reduced(ctx, x, out, axes, keepdim)


class Max(Amax):
    """out = max(x) over all elements;  dx as amax (ties share evenly, as PyTorch's max())"""
    batching = "reduce_axes"


class Min(Amin):
    """out = min(x) over all elements;  dx as amin (ties share evenly, as PyTorch's min())"""
    batching = "reduce_axes"


def _check_nonempty(x, op):
    if x.numel() == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                           f"Specify the reduction dim with the 'dim' argument (shape {x.shape})")


def amax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("amax", dim, axis, keepdim, keepdims, None)
    _check_nonempty(input, "amax")
    return Amax.apply(input, _axes(dim, input.ndim, "amax"), keepdim)


def amin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("amin", dim, axis, keepdim, keepdims, None)
    _check_nonempty(input, "amin")
    return Amin.apply(input, _axes(dim, input.ndim, "amin"), keepdim)


def _max_min(x, dim, keepdim, arg, full):
    if dim is None:
        _check_nonempty(x, full.__name__.lower())
        return full.apply(x, tuple(range(x.ndim)), False)
    d = _axes(dim, x.ndim, "max")[0] if x.ndim else 0
    idx = arg(x, d, True)
    from .indexing import take_along_dim
    values = take_along_dim(x, idx, d) if x.ndim else x
    if not keepdim and x.ndim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values_indices(values, idx)


def max(input, dim=None, keepdim=False, *, other=None, axis=None, keepdims=None):  # noqa: A001
    """max(x): the largest element (ties share the gradient); max(x, dim): (values, indices);
    max(x, other) (or other=): the elementwise maximum, as PyTorch's overload."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("max", dim, axis, keepdim, keepdims, None)
    if other is not None or isinstance(dim, Tensor):
        from .elementwise import maximum
        return maximum(input, dim if other is None else other)
    return _max_min(input, dim, keepdim, argmax, Max)


def min(input, dim=None, keepdim=False, *, other=None, axis=None, keepdims=None):  # noqa: A001
    """min(x): the smallest element (ties share the gradient); min(x, dim): (values, indices);
    min(x, other) (or other=): the elementwise minimum, as PyTorch's overload."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("min", dim, axis, keepdim, keepdims, None)
    if other is not None or isinstance(dim, Tensor):
        from .elementwise import minimum
        return minimum(input, dim if other is None else other)
    return _max_min(input, dim, keepdim, argmin, Min)


class _NoGradReduction(Function):
    """Base of the reductions without a gradient (argmax, argmin, any, all): the output is an index
    or a bool, never differentiable; they go through Function.apply like every op."""
    jvp = NoRule("integer or bool outputs: no tangent")

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"{ctx.name()}: this op is not differentiable")


def _argreduce_onnx(op):
    """ArgMax/ArgMin along dim, or over the flattened input (dim None)."""
    def onnx(e, c):
        x, dim, keepdim = e.args[:3]
        if dim is None:
            res = c.add(op, [c.reshape(x.name, [-1])], axis=0, keepdims=0)
            return c.reshape(res, [1] * len(x.shape), c.out(e)) if keepdim else c.result(e, res)
        if not x.shape:  # 0-d: the index is 0
            return c.result(e, c.const(np.zeros((), np.int64)))
        return c.add(op, [x.name], c.out(e), axis=int(dim), keepdims=int(bool(keepdim)))
    return staticmethod(onnx)


class Argmax(_NoGradReduction):
    """out = index of the (first) maximum, over all elements (dim None) or along dim"""
    batching = "argmax"
    onnx = _argreduce_onnx("ArgMax")

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        if dim is None:
            return np.asarray(np.argmax(x), dtype=np.int64)
        return np.argmax(x, axis=dim, keepdims=keepdim).astype(np.int64)


class Argmin(_NoGradReduction):
    """out = index of the (first) minimum, over all elements (dim None) or along dim"""
    batching = "argmax"
    onnx = _argreduce_onnx("ArgMin")

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        if dim is None:
            return np.asarray(np.argmin(x), dtype=np.int64)
        return np.argmin(x, axis=dim, keepdims=keepdim).astype(np.int64)


def _as_int64(c, x):
    """x as 0/1 int64 (nonzero -> 1), for all/any as a ReduceMin/ReduceSum."""
    b = x.name if x.dtype == np.bool_ else c.add("Cast", [x.name], to=c.tp(np.bool_))
    return c.add("Cast", [b], to=c.tp(np.int64))


class Any(_NoGradReduction):
    """out = any element true (over axes, or all elements)"""
    batching = "reduce_axes"

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        return np.asarray(np.any(x, axis=axes, keepdims=keepdim))

    @staticmethod
    def onnx(e, c):
        x, axes, keepdim = e.args[:3]
        count = c.reduce("ReduceSum", _as_int64(c, x), axes, keepdim, None, len(x.shape))
        return c.add("Greater", [count, c.const(np.zeros((), np.int64))], c.out(e))  # 0 over an empty input


class All(_NoGradReduction):
    """out = every element true (over axes, or all elements)"""
    batching = "reduce_axes"

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        return np.asarray(np.all(x, axis=axes, keepdims=keepdim))

    @staticmethod
    def onnx(e, c):
        x, axes, keepdim = e.args[:3]
        low = c.reduce("ReduceMin", _as_int64(c, x), axes, keepdim, None, len(x.shape))
        return c.add("Cast", [low], c.out(e), to=c.tp(np.bool_))


def _check_arg_nonempty(x, dim, op):
    if dim is None and x._data.size == 0:
        raise IndexError(f"{op}(): expected a reduction dim to be specified for an empty input "
                         f"(shape {x.shape})")
    if dim is not None and x.ndim and x.shape[_axes(dim, x.ndim, op)[0]] == 0:
        raise IndexError(f"{op}(): expected reduction dim {dim} to have non-zero size (shape {x.shape})")


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("argmax", dim, axis, keepdim, keepdims, None)
    _check_arg_nonempty(input, dim, "argmax")
    return Argmax.apply(input, dim, keepdim if dim is not None else False)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("argmin", dim, axis, keepdim, keepdims, None)
    _check_arg_nonempty(input, dim, "argmin")
    return Argmin.apply(input, dim, keepdim if dim is not None else False)


def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("any", dim, axis, keepdim, keepdims, None)
    return Any.apply(input, None if dim is None else _axes(dim, input.ndim, "any"), keepdim)


def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("all", dim, axis, keepdim, keepdims, None)
    return All.apply(input, None if dim is None else _axes(dim, input.ndim, "all"), keepdim)


def _shifted_lse(x, axes):
    """(x - m, log(sum(exp(x - m))), m) for m the (finite) max: the first two small, no overflow.
    Complex x: m is the max of the real parts, as PyTorch's (the principal log of the shifted sum)."""
    m = np.amax(x.real if x.dtype.kind == "c" else x, axis=axes, keepdims=True, initial=-np.inf)  # initial: an empty group gives -inf
    m = np.where(np.isfinite(m), m, 0)
    xm = x - m
    with np.errstate(divide="ignore"):  # a row of -inf has logsumexp -inf
        return xm, np.log(np.sum(np.exp(xm), axis=axes, keepdims=True)), m


def _stable_lse(x, axes):
    _, lse, m = _shifted_lse(x, axes)
    return m + lse


class Logsumexp(Function):
    """out = log(sum(exp(x)));  dx = g * exp(x - out)   (softmax; stable via the max shift)"""
    batching = "reduce_axes"
    onnx = _reduce_onnx("ReduceLogSumExp")

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        out = _stable_lse(x, axes)
        return _reduced(ctx, x, out, axes, keepdim)

    @staticmethod
    def backward(ctx, g):
        x, out_kept = _saved_kept(ctx)
        return _expand_back(g, ctx.shape, ctx.axes, ctx.keepdim) * exp(x - out_kept), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        x, out_kept = _saved_kept(ctx)
        return Sum.apply(t * exp(x - out_kept), ctx.axes, ctx.keepdim)


def logsumexp(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("logsumexp", dim, axis, keepdim, keepdims, None)
    return Logsumexp.apply(input, _axes(dim, input.ndim, "logsumexp"), keepdim)


class Softmax(Function):
    """out = exp(x - max) / sum(exp(x - max));  dx = out * (g - sum(g * out))"""
    batching = "dim_at_1"

    @staticmethod
    def forward(ctx, x, dim):
        # the ufuncs' reduce: np.amax / np.sum's arithmetic without their Python wrappers (the same
        # bits; generation's per-token softmax over one row is all call overhead)
        e = np.exp(x - np.maximum.reduce(x, axis=dim, keepdims=True))
        out = _c_order(e / np.add.reduce(e, axis=dim, keepdims=True))
        ctx.save_for_backward(out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return out * (g - (g * out).sum(ctx.dim, keepdim=True)), None

    @staticmethod
    def jvp(ctx, t, _dim):
        out, = ctx.saved_tensors
        return out * (t - (t * out).sum(ctx.dim, keepdim=True))

    @staticmethod
    def onnx(e, c):
        return c.on_axis("Softmax", e)


class LogSoftmax(Function):
    """out = x - logsumexp(x);  dx = g - exp(out) * sum(g)"""
    batching = "dim_at_1"

    @staticmethod
    def forward(ctx, x, dim):
        # (x - max) - log(sum(exp(x - max))), never x - (max + ...): at |x| ~ 1e8 in float32 the
        # sum max + log(n) rounds back to max, and every log-probability became 0
        xm, lse, _ = _shifted_lse(x, dim)
        out = _c_order(xm - lse)
        ctx.save_for_backward(out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g - exp(out) * g.sum(ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(ctx, t, _dim):
        out, = ctx.saved_tensors
        return t - (exp(out) * t).sum(ctx.dim, keepdim=True)

    @staticmethod
    def onnx(e, c):
        return c.on_axis("LogSoftmax", e)


def _softmax_dim(x, dim, op):
    if dim is None:
        raise TypeError(f"{op}: dim must be given (softmax over which dimension?)")
    if x.ndim == 0:
        return 0
    return _axes(dim, x.ndim, op)[0]


def softmax(input, dim=None, dtype=None, *, axis=None):
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("softmax", dim, axis, default=None)[0]
    if dtype is not None:
        input = cast(input, dtype)
    return Softmax.apply(input, None if input.ndim == 0 else _softmax_dim(input, dim, "softmax"))


def log_softmax(input, dim=None, dtype=None, *, axis=None):
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("log_softmax", dim, axis, default=None)[0]
    if dtype is not None:
        input = cast(input, dtype)
    return LogSoftmax.apply(input, None if input.ndim == 0 else _softmax_dim(input, dim, "log_softmax"))


class Norm2(Function):
    """out = sqrt(sum(x^2));  dx = g * x / out   (0 where out == 0, not nan, as PyTorch)"""
    batching = "reduce_axes"
    onnx = _reduce_onnx("ReduceL2")

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        out = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        return _reduced(ctx, x, out, axes, keepdim)

    @staticmethod
    def backward(ctx, g):
        x, out_kept = _saved_kept(ctx)
        g = _expand_back(g, ctx.shape, ctx.axes, ctx.keepdim)
        zero = out_kept == 0
        return x * where(zero, 0.0, g / where(zero, 1.0, out_kept)), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        x, out_kept = _saved_kept(ctx)
        zero = out_kept == 0
        return Sum.apply(x * t * where(zero, 0.0, 1.0 / where(zero, 1.0, out_kept)), ctx.axes, ctx.keepdim)


def norm(input, p="fro", dim=None, keepdim=False):
    """Vector p-norm over dim (all elements when None); p in {'fro', 2, 1, inf, -inf, 0, any float}."""
    axes = _axes(dim, input.ndim, "norm")
    if input.dtype.kind == "c":  # the norm of the magnitudes (differentiable through abs), as PyTorch
        input = _abs(input)
    if p in ("fro", 2, 2.0):
        return Norm2.apply(input, axes, keepdim)
    if p == 1:
        return _abs(input).sum(axes, keepdim=keepdim)
    if p == float("inf"):
        return amax(_abs(input), axes, keepdim)
    if p == float("-inf"):
        return amin(_abs(input), axes, keepdim)
    if p == 0:  # the count of nonzeros; differentiable with a zero gradient, as PyTorch (x ** 0's is 0)
        return where(input != 0, input ** 0, 0.0).sum(axes, keepdim=keepdim)
    return NormP.apply(input, axes, keepdim, float(p))


class NormP(Function):
    """out = sum(|x|^p)^(1/p);  dx = g * sign(x) |x|^(p-1) / out^(p-1)   (0 where x == 0 or out == 0, as PyTorch)"""
    batching = "reduce_axes"

    @staticmethod
    def forward(ctx, x, axes, keepdim, p):
        ctx.p = p
        with np.errstate(divide="ignore"):  # negative p at x == 0: |x|^p = inf, as NumPy/PyTorch
            out = np.sum(np.abs(x) ** p, axis=axes, keepdims=True) ** (1.0 / p)
        return _reduced(ctx, x, out, axes, keepdim)

    @staticmethod
    def backward(ctx, g):
        x, out_kept = _saved_kept(ctx)
        p = ctx.p
        g = _expand_back(g, ctx.shape, ctx.axes, ctx.keepdim)
        # mask with safe operands on both sides of `where`, so no inf * 0 reaches a second derivative
        xz, oz = x == 0, out_kept == 0
        scaled = where(xz, 0.0, sign(x) * where(xz, 1.0, _abs(x)) ** (p - 1))
        scale = where(oz, 0.0, g / where(oz, 1.0, out_kept) ** (p - 1))
        return scaled * scale, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        x, out_kept = _saved_kept(ctx)
        p = ctx.p
        xz, oz = x == 0, out_kept == 0
        scaled = where(xz, 0.0, sign(x) * where(xz, 1.0, _abs(x)) ** (p - 1))
        inv = where(oz, 0.0, 1.0 / where(oz, 1.0, out_kept) ** (p - 1))
        return Sum.apply(scaled * t * inv, ctx.axes, ctx.keepdim)

    @staticmethod
    def onnx(e, c):
        x, axes, keepdim, p = e.args[:4]
        powed = c.add("Pow", [c.add("Abs", [x.name]), c.scalar(p, x.dtype)])
        total = c.reduce("ReduceSum", powed, axes, keepdim, None, len(x.shape))
        return c.add("Pow", [total, c.scalar(1.0 / p, x.dtype)], c.out(e))


class Cumsum(Function):
    """out = cumsum(x, dim);  dx = reverse-cumsum of g along dim"""
    batching = "dim_at_1"

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return _c_order(np.cumsum(x, axis=dim)) if dim is not None else x.copy()  # dim None: 0-d

    @staticmethod
    def backward(ctx, g):
        d = ctx.dim
        if d is None:
            return g, None
        return g.flip(d).cumsum(d).flip(d), None

    @staticmethod
    def jvp(ctx, t, _dim):
        return Cumsum.apply(t, ctx.dim)

    @staticmethod
    def onnx(e, c):
        return c.on_axis("CumSum", e)


def cumsum(input, dim=None, *, dtype=None, axis=None):
    if axis is not None or dim is None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("cumsum", dim, axis, default=None, required=True)[0]
    if dtype is not None:
        input = cast(input, dtype)
    elif input.dtype.kind in "bu" or input.dtype.kind == "i" and input.dtype != np.int64:
        input = cast(input, _dtype.int64)  # PyTorch accumulates bool and small ints as int64
    if input.ndim == 0:
        if dim not in (-1, 0):  # a 0-d tensor has dims -1 and 0 only, as in PyTorch
            raise IndexError(f"cumsum: dimension {dim} out of range for a 0-d tensor (expected -1 or 0)")
        return Cumsum.apply(input, None)
    return Cumsum.apply(input, _axes(dim, input.ndim, "cumsum")[0])


# -- the fused statistics var_mean/std_mean (composites of var/std and mean, so twice differentiable)
__all__ += ["var_mean", "std_mean"]


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):  # noqa: A002
    """(var, mean) over dim in one call (torch.var_mean; correction as var's)."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("var_mean", dim, axis, keepdim, keepdims, None)
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):  # noqa: A002
    """(std, mean) over dim in one call (torch.std_mean; correction as std's)."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("std_mean", dim, axis, keepdim, keepdims, None)
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


# complex tensors (ops/complex.py): linear ops record complex as written; holomorphic ones conjugate
for _cls in (Sum, Mean, Cumsum):
    _cls._complex = True
for _cls in (Prod, ProdOthers, Logsumexp):
    holomorphic(_cls)
