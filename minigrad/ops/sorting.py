"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique.

Each value-selecting op returns (values, indices) as PyTorch's named tuples. Its backward sends the
gradient of each selected value to the element it came from (a scatter-add along dim, itself
differentiable), except median() over all elements, whose gradient is shared evenly among the
elements equal to the median, as PyTorch does.

Order conventions (PyTorch's): NaN sorts as the largest value; with stable=True equal elements keep
their order, also when descending; median is the lower of the two middle values, never their mean.
"""
from collections import namedtuple

import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from .._aliases import dim_alias as _dim_alias

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique"]

SortResult = namedtuple("sort", ["values", "indices"])
TopkResult = namedtuple("topk", ["values", "indices"])
KthvalueResult = namedtuple("kthvalue", ["values", "indices"])
MedianResult = namedtuple("median", ["values", "indices"])
ModeResult = namedtuple("mode", ["values", "indices"])


def _dim(x, dim, op):
    n = max(x.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _argsort(a, axis, descending):
    """Stable argsort along axis; descending keeps equal elements in their original order too."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    rev = np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
    return (n - 1) - rev


def _topk_order(a, k, axis, largest):
    """The first k of _argsort(a, axis, largest) (a new C-contiguous array), taken before the
    descending case's index arithmetic and with slices instead of np.flip / np.take (their Python
    wrappers are most of a small topk: generation's top-k over one row per token)."""
    lead = (slice(None),) * axis
    if not largest:
        return a.argsort(axis=axis, kind="stable")[lead + (slice(0, k),)].copy()
    n = a.shape[axis]
    # _argsort's descending order: (n - 1) - flip(argsort(flip(a))); its first k are the last k of
    # argsort(flip(a)), reversed
    rev = a[lead + (slice(None, None, -1),)].argsort(axis=axis, kind="stable")
    return (n - 1) - rev[lead + (slice(n - 1, n - 1 - k if n - 1 - k >= 0 else None, -1),)]


def _kept_index(idx, dim, keepdim):
    """The forward's index array (kept on ctx) as a Tensor with dim kept. Reshaped with an op, never
    NumPy: under mg.graph.trace the array is a value of the graph, so the traced backward picks the
    elements selected on each new input instead of this run's."""
    idx = Tensor._make(idx)
    return idx if keepdim else idx.unsqueeze(dim)


def _scatter_back(g, idx, dim, shape, keepdim):
    """The gradient of values = x.gather(dim, idx): zeros of x's shape with g added at idx."""
    if not keepdim:
        g = g.unsqueeze(dim)
    zeros = Tensor._make(np.zeros(shape, dtype=g.dtype))
    return zeros.scatter_add(dim, _kept_index(idx, dim, keepdim), g)


def _topk_onnx(e, c, k, dim, largest):
    """TopK (sorted, ties in index order as minigrad) writing values and indices."""
    x = e.args[0]
    if not x.shape:  # 0-d: the value itself, index 0
        c.result(e, x.name)
        return c.result(e, c.const(np.zeros((), np.int64)), 1)
    return c.add("TopK", [x.name, c.ints([k])], [c.out(e), c.out(e, 1)], axis=int(dim),
                 largest=int(bool(largest)), sorted=1)


class Sort(Function):
    """(values, indices) = sort(x, dim);  dx = g scattered back to indices"""
    batching = "dim_at_1"

    @staticmethod
    def forward(ctx, x, dim, descending):
        return _take_sorted(ctx, x, dim, lambda: _argsort(x, dim, descending))

    @staticmethod
    def backward(ctx, g, _):
        return _scatter_back_taken(ctx, g), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return _take_tangent(ctx, t), None

    @staticmethod
    def onnx(e, c):
        x, dim, descending = e.args[:3]
        return _topk_onnx(e, c, x.shape[int(dim)] if x.shape else 1, dim, descending)


def _take_sorted(ctx, x, dim, order):
    """(values, int64 indices) of x taken along dim at the indices order() gives (a 0-d x is its own
    value at index 0); the indices are kept on ctx for the backward."""
    if x.ndim == 0:
        idx = np.zeros((), np.int64)
        values = x.copy()
    else:
        idx = order()
        values = np.take_along_axis(x, idx, dim)
    ctx.idx, ctx.dim, ctx.shape = idx, dim, x.shape
    idx = idx.astype(np.int64, copy=False)
    ctx.mark_non_differentiable(idx)
    return values, idx


def _scatter_back_taken(ctx, g):
    """The gradient of _take_sorted's values: g scattered back to the indices (0-d: g itself)."""
    return g if g.ndim == 0 else _scatter_back(g, ctx.idx, ctx.dim, ctx.shape, True)


def _take_tangent(ctx, t):
    """The tangent of _take_sorted's values: t taken at the same indices (0-d: t itself)."""
    from .indexing import Gather
    return t if t.ndim == 0 else Gather.apply(t, ctx.dim, ctx.idx)


def sort(input, dim=-1, descending=False, stable=False, *, axis=None):  # noqa: A002
    """Sorted values and their indices along dim (ascending unless descending); a stable sort always."""
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("sort", dim, axis, default=-1)[0]
    d = _dim(input, dim, "sort")
    return SortResult(*Sort.apply(input, d, bool(descending)))


def argsort(input, dim=-1, descending=False, stable=False, *, axis=None):  # noqa: A002
    """The indices that sort input along dim."""
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("argsort", dim, axis, default=-1)[0]
    return sort(input, dim, descending, stable).indices


def msort(input):  # noqa: A002
    """input sorted along its first dimension."""
    return sort(input, 0).values


class Topk(Function):
    """(values, indices) = the k largest (or smallest) along dim;  dx = g scattered back"""
    batching = "dim_at_2"

    @staticmethod
    def forward(ctx, x, k, dim, largest, sorted_):
        return _take_sorted(ctx, x, dim, lambda: _topk_order(x, k, dim, largest))

    @staticmethod
    def backward(ctx, g, _):
        return _scatter_back_taken(ctx, g), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return _take_tangent(ctx, t), None

    @staticmethod
    def onnx(e, c):
        k, dim, largest = e.args[1:4]
        return _topk_onnx(e, c, int(k), dim, largest)


def topk(input, k, dim=-1, largest=True, sorted=True, *, axis=None):  # noqa: A002
    """The k largest elements along dim (the k smallest when largest=False), with their indices."""
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("topk", dim, axis, default=-1)[0]
    d = _dim(input, dim, "topk")
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"topk: selected index k out of range (k={k}, dimension {d} has size {size})")
    return TopkResult(*Topk.apply(input, int(k), d, bool(largest), bool(sorted)))


class _Select(Function):
    """values = x[..., idx, ...] at one computed index per slice along dim;  dx = g scattered back.

    Subclasses choose the index (kthvalue, median, mode): `_pick(x, dim) -> indices along dim`.
    """
    onnx = NoRule("order statistics (kthvalue, median, mode): not mapped yet (sort and topk map to TopK)")

    @staticmethod
    def _pick(x, dim, arg):
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, x, dim, keepdim, arg):
        if x.ndim == 0:
            idx = np.zeros((), np.int64)
            values = x.copy()
        else:
            idx = np.asarray(cls._pick(x, dim, arg))  # an array, also for one slice (a traced value)
            values = np.take_along_axis(x, np.expand_dims(idx, dim), dim).squeeze(dim)
            if keepdim:
                values, idx = np.expand_dims(values, dim), np.expand_dims(idx, dim)
        ctx.idx, ctx.dim, ctx.shape, ctx.keepdim = idx, dim, x.shape, keepdim
        idx = idx.astype(np.int64, copy=False)
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g, _):
        if g.ndim == 0 and len(ctx.shape) == 0:
            return g, None, None, None
        return _scatter_back(g, ctx.idx, ctx.dim, ctx.shape, ctx.keepdim), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        # the tangent at the selected index of each slice
        from .indexing import Gather
        if t.ndim == 0:
            return t, None
        out = Gather.apply(t, ctx.dim, _kept_index(ctx.idx, ctx.dim, ctx.keepdim)._data)
        return (out if ctx.keepdim else out.squeeze(ctx.dim)), None


class Kthvalue(_Select):
    """the k-th smallest element along dim (1-based k)"""
    batching = "dim_at_1"

    @staticmethod
    def _pick(x, dim, k):
        return np.take(_argsort(x, dim, False), k - 1, axis=dim)


class Median(_Select):
    """the lower median along dim (NaN if the slice holds one, as PyTorch)"""
    batching = "dim_at_1"

    def name(self):  # PyTorch's overload numbers: median(dim) is MedianBackward1
        return ("Nanmedian" if self.ignore_nan else "Median") + "Backward1"

    @classmethod
    def forward(cls, ctx, x, dim, keepdim, ignore_nan):
        ctx.ignore_nan = ignore_nan
        return super().forward.__func__(cls, ctx, x, dim, keepdim, ignore_nan)

    @staticmethod
    def _pick(x, dim, ignore_nan):
        order = _argsort(x, dim, False)
        n = x.shape[dim]
        if ignore_nan:  # the lower median of the non-NaN values (all-NaN slices give NaN's index 0)
            valid = np.sum(~np.isnan(x), axis=dim, keepdims=True)
            pos = np.maximum(valid - 1, 0) // 2
            return np.take_along_axis(order, pos, dim).squeeze(dim)
        idx = np.take(order, (n - 1) // 2, axis=dim)
        # a NaN anywhere in the slice makes the median NaN: point at the first NaN
        has_nan = np.isnan(x).any(axis=dim) if x.dtype.kind == "f" else None
        if has_nan is not None and has_nan.any():
            idx = np.where(has_nan, np.argmax(np.isnan(x), axis=dim), idx)
        return idx


class Mode(_Select):
    """the most frequent value along dim (the smallest of equally frequent ones), its last index"""
    batching = "dim_at_1"

    @staticmethod
    def _pick(x, dim, _):
        xs = np.moveaxis(x, dim, -1)
        flat = xs.reshape(-1, xs.shape[-1])
        out = np.empty(flat.shape[0], np.int64)
        for r, row in enumerate(flat):
            vals, counts = np.unique(row, return_counts=True)
            best = vals[np.argmax(counts)]          # argmax: the first, i.e. smallest, of the most frequent
            out[r] = np.flatnonzero(row == best)[-1] if best == best else np.flatnonzero(row != row)[-1]
        return out.reshape(xs.shape[:-1])


def kthvalue(input, k, dim=-1, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    """The k-th smallest element of each slice along dim, and its index."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("kthvalue", dim, axis, keepdim, keepdims, -1)
    d = _dim(input, dim, "kthvalue")
    size = input.shape[d] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} "
                           f"(k={k}, size {size})")
    return KthvalueResult(*Kthvalue.apply(input, d, bool(keepdim), int(k)))


class MedianAll(Function):
    """out = the lower median of all elements;  dx = g shared evenly among elements equal to it"""
    batching = NoRule("the median of all elements: no per-sample rule yet (median over the flattened sample)")
    onnx = NoRule("order statistics (kthvalue, median, mode): not mapped yet (sort and topk map to TopK)")

    def name(self):
        return ("Nanmedian" if self.ignore_nan else "Median") + "Backward0"

    @staticmethod
    def forward(ctx, x, ignore_nan):
        ctx.ignore_nan = ignore_nan
        flat = x.reshape(-1)
        if flat.size == 0:
            raise RuntimeError("median() input tensor cannot be empty")
        if not ignore_nan and x.dtype.kind == "f" and np.isnan(flat).any():
            out = np.asarray(np.nan, dtype=x.dtype)
        else:
            vals = flat[~np.isnan(flat)] if ignore_nan and x.dtype.kind == "f" else flat
            out = np.sort(vals)[(vals.size - 1) // 2] if vals.size else np.asarray(np.nan, x.dtype)
        ctx.save_for_backward(x)
        ctx.out = np.asarray(out, dtype=x.dtype)
        return ctx.out

    @staticmethod
    def backward(ctx, g):
        return g * _median_share(ctx), None

    @staticmethod
    def jvp(ctx, t, _ignore_nan):
        # the mean of the tangents of the elements equal to the median (the backward's even share)
        return (t * _median_share(ctx)).sum()


def _median_share(ctx):
    """1/(number of hits) at the elements equal to the median (NaN matching NaN), 0 elsewhere, in x's
    dtype. Computed with ops on the saved x and the output, so that under mg.graph.trace the hits are
    recounted on each new input instead of being baked in."""
    from .elementwise import cast, isnan, maximum
    x, = ctx.saved_tensors
    out = Tensor._make(ctx.out)  # the forward's output: a value of the graph under tracing
    hits = (x == out) | (isnan(x) & isnan(out))  # bool: no gradient flows through the selection
    count = maximum(hits.sum(), Tensor._make(np.ones((), np.int64)))
    # a float64 division, then x's dtype (the share 1/n rounded as eager always did)
    return cast(cast(hits, np.float64) / cast(count, np.float64), x.dtype)


def median(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    """median() of all elements (a tensor), or median(dim) -> (values, indices): the lower median."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("median", dim, axis, keepdim, keepdims, None)
    if dim is None:
        return MedianAll.apply(input, False)
    d = _dim(input, dim, "median")
    _nonempty(input, d, "median")
    return MedianResult(*Median.apply(input, d, bool(keepdim), False))


def nanmedian(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    """median ignoring NaN values."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("nanmedian", dim, axis, keepdim, keepdims, None)
    if dim is None:
        return MedianAll.apply(input, True)
    d = _dim(input, dim, "nanmedian")
    _nonempty(input, d, "nanmedian")
    return MedianResult(*Median.apply(input, d, bool(keepdim), True))


def mode(input, dim=-1, keepdim=False, *, axis=None, keepdims=None):  # noqa: A002
    """The most frequent value of each slice along dim (smallest among ties) and its index."""
    if axis is not None or keepdims is not None:  # NumPy's names, as PyTorch accepts
        dim, keepdim = _dim_alias("mode", dim, axis, keepdim, keepdims, -1)
    d = _dim(input, dim, "mode")
    _nonempty(input, d, "mode")
    return ModeResult(*Mode.apply(input, d, bool(keepdim), None))


def _nonempty(x, d, op):
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size (shape {tuple(x.shape)})")


class Unique(Function):
    """the sorted unique values (and optionally the inverse indices and counts); not differentiable"""
    batching = NoRule("a data-dependent output shape")
    jvp = NoRule("a data-dependent output: the identity gives the tangent of its values")
    onnx = NoRule("the result's shape depends on the data (boolean masks, nonzero, unique)")

    @staticmethod
    def forward(ctx, x, return_inverse, return_counts, dim):
        if dim is None:
            vals, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
            inv = inv.reshape(x.shape)
        else:
            vals, inv, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
            inv = inv.reshape(-1)
        outs = [vals]
        if return_inverse:
            outs.append(inv.astype(np.int64))
        if return_counts:
            outs.append(counts.astype(np.int64))
        ctx.mark_non_differentiable(*outs)
        return tuple(outs)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The unique elements of input, sorted (PyTorch's CPU unique always sorts), as torch.unique."""
    if dim is not None:
        dim = _dim(input, dim, "unique")
    outs = Unique.apply(input, bool(return_inverse), bool(return_counts), dim)
    return outs[0] if len(outs) == 1 else outs
