"""Scans along a dim beyond cumsum (which lives with the reductions): cumprod, cummax, cummin,
logcumsumexp. Forward in NumPy, backward in Tensor ops (differentiable again)."""
from collections import namedtuple

import numpy as np

from ..autograd.function import Function, NoRule, holomorphic
from .._memory_format import _c_order
from ..tensor import Tensor
from .._aliases import dim_alias as _dim_alias

__all__ = ["cumprod", "cummax", "cummin", "logcumsumexp"]
__methods__ = ["cumprod", "cummax", "cummin", "logcumsumexp", "cumprod_"]


def _scan_dim(op, x, dim):
    """dim normalised; a 0-d tensor accepts -1 and 0 (scanned as a 1-element vector)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    n = max(x.ndim, 1)
    if not isinstance(dim, int) or not -n <= dim < n:
        raise IndexError(f"{op}(): dimension {dim} out of range for a tensor of shape {x.shape} "
                         f"(expected to be in range of [{-n}, {n - 1}])")
    return dim % n


def _upper(n, dtype):
    """tri[k, j] = j >= k: which outputs j an input k reaches."""
    return Tensor._make(np.triu(np.ones((n, n), dtype=bool)))


# the `onnx` rule of the ops here that have no ONNX mapping
_NO_ONNX = NoRule("ONNX has no cumulative op besides CumSum")


class Cumprod(Function):
    """out_j = prod_{i<=j} x_i along dim;  dx_k = sum_{j>=k} g_j * prod_{i<=j, i!=k} x_i
    (reverse-cumsum(g * out) / x where x has no zero; the exact sum otherwise, as PyTorch)"""
    batching = "dim_at_1"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x, dim):
        out = _c_order(np.cumprod(x.reshape(-1) if x.ndim == 0 else x, axis=dim).reshape(x.shape))
        ctx.dim, ctx.zeros = dim, bool((x == 0).any())
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        d = ctx.dim
        if x.ndim == 0:
            return g, None
        if not ctx.zeros:
            return (g * out).flip(d).cumsum(d).flip(d) / x, None
        # with zeros: prod_{i<=j, i!=k} x_i is the cumprod of x with x_k set to 1 (one row per k)
        from .elementwise import where
        n = x.shape[d]
        xt = x.transpose(d, -1).unsqueeze(-2)                       # (..., 1, n)
        eye = Tensor._make(np.eye(n, dtype=bool))
        others = cumprod(where(eye, 1.0, xt), -1)                   # (..., k, j)
        gt = g.transpose(d, -1).unsqueeze(-2)                       # (..., 1, j)
        dx = where(_upper(n, x.dtype), others * gt, 0.0).sum(-1)    # (..., k)
        return dx.transpose(d, -1), None

    @staticmethod
    def jvp(ctx, t, _dim):
        # out_j' = sum_{k<=j} t_k prod_{i<=j, i!=k} x_i:  out * cumsum(t / x) without zeros, else the sum
        x, out = ctx.saved_tensors
        d = ctx.dim
        if x.ndim == 0:
            return t
        if not ctx.zeros:
            return out * (t / x).cumsum(d)
        from .elementwise import where
        n = x.shape[d]
        xt = x.transpose(d, -1).unsqueeze(-2)                       # (..., 1, n)
        eye = Tensor._make(np.eye(n, dtype=bool))
        others = cumprod(where(eye, 1.0, xt), -1)                   # (..., k, j)
        tt = t.transpose(d, -1).unsqueeze(-1)                       # (..., k, 1)
        return where(_upper(n, x.dtype), others * tt, 0.0).sum(-2).transpose(d, -1)


def cumprod(input, dim=None, *, dtype=None, axis=None):  # noqa: A002
    """Cumulative product along dim (torch.cumprod)."""
    if axis is not None or dim is None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("cumprod", dim, axis, default=None, required=True)[0]
    d = _scan_dim("cumprod", input, dim)
    x = input if dtype is None else input.to(dtype)
    return Cumprod.apply(x, d)


def cumprod_(input, dim, *, dtype=None):  # noqa: A002
    from .inplace import inplace
    return inplace(input, cumprod, dim, name="cumprod_")


class _CumExtreme(Function):
    """out_j = max (min) of x_0..x_j along dim, indices = where it was last reached (PyTorch: the last
    index on ties);  dx = g scattered to the indices (summed where several j share one)"""
    _ufunc = None

    @classmethod
    def forward(cls, ctx, x, dim):
        xm = np.moveaxis(x.reshape(-1) if x.ndim == 0 else x, dim, -1)
        out = cls._ufunc.accumulate(xm, axis=-1)
        n = xm.shape[-1]
        pos = np.broadcast_to(np.arange(n), xm.shape)
        # index of the latest element equal to the running extreme (ties: the last, as PyTorch)
        hit = (xm == out) | (np.isnan(xm) if xm.dtype.kind == "f" else False)
        idx = np.maximum.accumulate(np.where(hit, pos, -1), axis=-1)
        if xm.dtype.kind == "f" and np.isnan(xm).any():  # once nan, the nan stays the extreme
            nan_seen = np.logical_or.accumulate(np.isnan(xm), axis=-1)
            first_nan = np.maximum.accumulate(np.where(np.isnan(xm), pos, -1), axis=-1)
            out = np.where(nan_seen, np.nan, out)
            idx = np.where(nan_seen, first_nan, idx)
        out = np.array(np.moveaxis(out, -1, dim).reshape(x.shape), order="C")
        idx = np.array(np.moveaxis(idx, -1, dim).reshape(x.shape), dtype=np.int64, order="C")
        ctx.dim, ctx.shape = dim, x.shape
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        return out, idx

    @staticmethod
    def backward(ctx, g, _):
        idx, = ctx.saved_tensors
        from .indexing import scatter_add
        if g.ndim == 0:
            return g, None
        zeros = Tensor._make(np.zeros(ctx.shape, dtype=g.dtype))
        return scatter_add(zeros, ctx.dim, idx, g), None

    @staticmethod
    def jvp(ctx, t, _dim):
        # the tangent of the element each running extreme came from
        from .indexing import Gather
        idx, = ctx.saved_tensors
        return (t if t.ndim == 0 else Gather.apply(t, ctx.dim, idx._data)), None


class Cummax(_CumExtreme):
    """out = running max along dim, and its indices;  dx = g at the indices"""
    _ufunc = np.maximum
    batching = "dim_at_1"
    onnx = _NO_ONNX


class Cummin(_CumExtreme):
    """out = running min along dim, and its indices;  dx = g at the indices"""
    _ufunc = np.minimum
    batching = "dim_at_1"
    onnx = _NO_ONNX


CummaxResult = namedtuple("cummax", ["values", "indices"])
CumminResult = namedtuple("cummin", ["values", "indices"])


def _cum_extreme(cls, result, op, input, dim):  # noqa: A002
    return result(*cls.apply(input, _scan_dim(op, input, dim)))


def cummax(input, dim=None, *, axis=None):  # noqa: A002
    """(values, indices): the running maximum along dim and where it was reached (torch.cummax)."""
    if axis is not None or dim is None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("cummax", dim, axis, default=None, required=True)[0]
    return _cum_extreme(Cummax, CummaxResult, "cummax", input, dim)


def cummin(input, dim=None, *, axis=None):  # noqa: A002
    """(values, indices): the running minimum along dim and where it was reached (torch.cummin)."""
    if axis is not None or dim is None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("cummin", dim, axis, default=None, required=True)[0]
    return _cum_extreme(Cummin, CumminResult, "cummin", input, dim)


class Logcumsumexp(Function):
    """out_j = log sum_{i<=j} exp(x_i) along dim;  dx_k = sum_{j>=k} g_j * exp(x_k - out_j)
    (every exponent <= 0: no overflow)"""
    batching = "dim_at_1"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x, dim):
        out = _c_order(np.logaddexp.accumulate(x.reshape(-1) if x.ndim == 0 else x, axis=dim).reshape(x.shape))
        ctx.dim = dim
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        from .elementwise import exp, where
        x, out = ctx.saved_tensors
        d = ctx.dim
        if x.ndim == 0:
            return g, None
        n = x.shape[d]
        xt = x.transpose(d, -1).unsqueeze(-1)      # (..., k, 1)
        ot = out.transpose(d, -1).unsqueeze(-2)    # (..., 1, j)
        gt = g.transpose(d, -1).unsqueeze(-2)
        up = _upper(n, x.dtype)
        w = exp(where(up, xt - ot, 0.0))           # masked first: no exp of a positive number
        return where(up, w * gt, 0.0).sum(-1).transpose(d, -1), None

    @staticmethod
    def jvp(ctx, t, _dim):
        # out_j' = sum_{k<=j} t_k exp(x_k - out_j): the softmax-weighted running sum of the tangent
        from .elementwise import exp, where
        x, out = ctx.saved_tensors
        d = ctx.dim
        if x.ndim == 0:
            return t
        n = x.shape[d]
        xt = x.transpose(d, -1).unsqueeze(-1)      # (..., k, 1)
        ot = out.transpose(d, -1).unsqueeze(-2)    # (..., 1, j)
        tt = t.transpose(d, -1).unsqueeze(-1)
        up = _upper(n, x.dtype)
        w = exp(where(up, xt - ot, 0.0))           # masked first: no exp of a positive number
        return where(up, w * tt, 0.0).sum(-2).transpose(d, -1)


def logcumsumexp(input, dim=None, *, axis=None):  # noqa: A002
    """log(cumsum(exp(input), dim)) without overflow (torch.logcumsumexp)."""
    if axis is not None or dim is None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("logcumsumexp", dim, axis, default=None, required=True)[0]
    d = _scan_dim("logcumsumexp", input, dim)
    if input.dtype.kind != "f":
        raise RuntimeError(f"logcumsumexp: expected a floating point tensor, got {input.dtype}")
    return Logcumsumexp.apply(input, d)


# complex tensors (ops/complex.py): cumprod's backward is products and sums of the inputs
# (holomorphic: run on conj(g) and conjugated)
holomorphic(Cumprod)
