"""Indexing: t[index], t[index] = v, gather / scatter_add and friends.

GetItem and IndexAdd are each other's gradient, so indexing is differentiable to any order.
"""
import numpy as np
from .._errors import IndexRangeError, ShapeError

from ..autograd.function import Function, NoRule
from .._memory_format import _c_order
from ..tensor import Tensor
from .._aliases import dim_alias as _dim_alias, accepts_axis as _accepts_axis
from ..func.vmap import batched_by_loop, not_batchable

# the public ops of this family: exported by minigrad.ops and minigrad (ops/__init__.py derives from it)
__all__ = [
    "gather", "scatter_add", "index_select", "masked_fill", "take_along_dim",
]


def _np_index(index):
    """Translate a minigrad index (may hold Tensors and lists) to a NumPy one."""
    if isinstance(index, tuple):
        return tuple(_np_index_item(i) for i in index)
    return _np_index_item(index)


def _np_index_item(i):
    if isinstance(i, Tensor):
        return i._data
    if isinstance(i, (list, tuple)):  # a sequence inside the index tuple is an integer/bool array (NumPy, PyTorch)
        return np.asarray([_np_index_item(j) for j in i]) if any(isinstance(j, Tensor) for j in i) else np.asarray(i)
    return i


def _is_basic(index):
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer)) and not isinstance(i, bool)
               for i in items)


def _gather_onnx(e, c, items, arrays):
    x, k = e.args[0], arrays[0]
    if any(getattr(items[i], "dtype", None) == np.bool_ for i in arrays):
        raise c.unmapped("boolean mask indexing: " + "the result's shape depends on the data (boolean masks, nonzero, unique)")
    if len(arrays) != 1 or any(it is None or it is Ellipsis or isinstance(it, (int, np.integer)) for it in items):
        raise c.unmapped("advanced indexing beyond one integer index array on one axis (which maps to Gather)")
    if any(not (isinstance(it, slice) and it == slice(None)) for it in items[:k] + items[k + 1:]):
        raise c.unmapped("an index array mixed with slices other than ':' (only one array on one axis maps "
                         "to Gather)")
    idx = items[k]
    if idx.dtype.kind not in "iu":
        raise c.unmapped(f"an index array of dtype {idx.dtype}")
    ind = idx.name if c.is_var(idx) else c.const(idx.astype(np.int64))
    if idx.dtype != np.int64 and c.is_var(idx):
        ind = c.add("Cast", [ind], to=c.tp(np.int64))
    return c.add("Gather", [x.name, ind], c.out(e), axis=k)


def _slice_onnx(e, c, items):
    shape = e.args[0].shape
    if any(it is Ellipsis for it in items):
        i = items.index(Ellipsis)
        fill = len(shape) - sum(1 for it in items if it is not None and it is not Ellipsis)
        items = items[:i] + [slice(None)] * fill + items[i + 1:]
    items += [slice(None)] * (len(shape) - sum(1 for it in items if it is not None))
    starts, ends, axes, steps = [], [], [], []
    d = 0
    for it in items:
        if it is None:
            continue
        n = shape[d]
        if isinstance(it, slice):
            if it != slice(None):
                s0, s1, st = it.indices(n)
                if st < 0 and s1 < 0:
                    s1 = c.INT64_MIN
                starts.append(s0), ends.append(s1), axes.append(d), steps.append(st)
        else:
            i = int(it) % n if n else int(it)
            starts.append(i), ends.append(i + 1), axes.append(d), steps.append(1)
        d += 1
    name = c.x(e)
    if axes:
        name = c.add("Slice", [name, c.ints(starts), c.ints(ends), c.ints(axes), c.ints(steps)])
    out = list(e.outvars[0].shape)
    if c.dynamic_batch and out and 0 not in axes and items[0] == slice(None) and 0 not in out:
        out[0] = 0  # axis 0 untouched (the batch): Reshape's 0 copies its run-time size
        return c.reshape(name, out, c.out(e), copy_zeros=True)
    return c.reshape(name, out, c.out(e))


# the `onnx` rule of the ops here that have no ONNX mapping
_NO_ONNX = NoRule("writes at indices (ScatterElements/ScatterND are not mapped yet)")


class GetItem(Function):
    """out = x[index];  dx = zeros with g added at index (repeated indices accumulate)"""
    op_name = "getitem"
    batching = "getitem"

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.index = x.shape, index
        return _c_order(x[index])  # a gather: C order as PyTorch's (NumPy may move the indexed axes)

    @staticmethod
    def backward(ctx, g):
        return IndexAdd.apply(g, ctx.index, ctx.shape), None

    @staticmethod
    def jvp(ctx, t, _index):
        return type(ctx).apply(t, ctx.index)  # linear: the same index of the tangent

    @staticmethod
    def onnx(e, c):
        # basic indexing (ints, slices, None, Ellipsis): one Slice, then a Reshape to the result's
        # shape; one integer index array on one axis (the other items ':'): Gather
        x, index = e.args[0], e.args[1]
        items = list(index) if type(index) is tuple else [index]
        arrays = [i for i, it in enumerate(items) if c.is_var(it) or isinstance(it, np.ndarray)]
        if arrays:
            return _gather_onnx(e, c, items, arrays)
        return _slice_onnx(e, c, items)


def _basic_getitem(x, index):
    """x[index] for a basic index, always a view (NumPy gives a scalar copy for a full integer index)."""
    out = x[index]
    if not isinstance(out, np.ndarray):
        out = x[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
    return out


class BasicGetItem(GetItem):
    """out = x[index] for ints/slices/None/Ellipsis: a view of x"""
    _is_view = True
    batching = "getitem"

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.index = x.shape, index
        return _basic_getitem(x, index)

    _fast = staticmethod(_basic_getitem)  # no graph recorded: the view without a ctx


class Slice(BasicGetItem):
    """out = x[slices/None/Ellipsis]: a view (PyTorch's SliceBackward)"""
    batching = "getitem"


class Select(BasicGetItem):
    """out = x[index] with an int in it: a view (PyTorch's SelectBackward)"""
    batching = "getitem"


class Index(GetItem):
    """out = x[arrays/masks ...]: a copy (PyTorch's IndexBackward)"""
    batching = "getitem"


class IndexAdd(Function):
    """out = zeros(shape); out[index] += g;  dg = out_grad[index]"""
    batching = "index_add"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, g, index, shape):
        ctx.index = index
        out = np.zeros(shape, dtype=g.dtype)
        if _is_basic(index):
            out[index] = g
        else:
            np.add.at(out, index, g)
        return out

    @staticmethod
    def backward(ctx, gg):
        return getitem(gg, ctx.index), None, None

    @staticmethod
    def jvp(ctx, t, _index, _shape):
        return IndexAdd.apply(t, ctx.index, ctx.fw_args[2])


def _split_ints(idx):
    """PyTorch's layout for an index mixing ints with arrays: the ints select first (an int is not
    an advanced index there, as it is in NumPy), then the arrays index what is left. Returns
    (basic index, advanced index), or None when NumPy's rule already gives PyTorch's result."""
    if not isinstance(idx, tuple):
        return None
    is_int = [isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in idx]
    is_arr = [isinstance(i, np.ndarray) for i in idx]
    if not (any(is_int) and any(is_arr)) or any(isinstance(i, (bool, np.bool_)) for i in idx):
        return None
    first, second = [], []
    for i, n, a in zip(idx, is_int, is_arr):
        if a:  # an array covers one dim (a bool mask its ndim): kept whole by the basic step
            first += [slice(None)] * (i.ndim if i.dtype == np.bool_ else 1)
            second.append(i)
        else:
            first.append(i)
            if not n:
                second.append(Ellipsis if i is Ellipsis else slice(None))
    return tuple(first), tuple(second)


def _basic_class(index):
    """Select or Slice for an index of Python ints, slices, None and Ellipsis only (x[:, -1, :], the
    per-token indexing of generation), classified in one pass over exact types; None: anything
    else (getitem's general path)."""
    items = index if type(index) is tuple else (index,)
    cls = Slice
    for i in items:
        t = type(i)
        if t is int:
            cls = Select
        elif t is not slice and i is not None and i is not Ellipsis:
            return None
    return cls


def getitem(x, index):
    cls = _basic_class(index)
    if cls is not None:
        idx, basic = index, True
    else:
        idx = _np_index(index)
        split = _split_ints(idx)
        if split is not None:  # two recorded ops: BasicGetItem (a view), then GetItem
            try:
                return getitem(getitem(x, split[0]), split[1])
            except IndexError as e:  # name the user's tensor, not the intermediate view
                msg = str(e).removeprefix("getitem: ").split(" (input shapes")[0]
                raise IndexError(f"getitem: {msg} (tensor of shape {x.shape}, index {index!r})") from None
        basic = _is_basic(idx)
        if not basic:
            cls = Index
        elif any(isinstance(i, (int, np.integer)) for i in (idx if isinstance(idx, tuple) else (idx,))):
            cls = Select
        else:
            cls = Slice
    try:
        out = cls.apply(x, idx)
    except IndexError as e:
        bad = _bad_index_type(idx)
        if bad is not None:  # x[1.5]: name the index's type, as PyTorch's "(got float)"
            raise IndexError(f"getitem: only integers, slices (`:`), ellipsis (`...`), None and integer or "
                             f"boolean tensors are valid indices (got {bad}; tensor of shape "
                             f"{tuple(x.shape)}, index {index!r})") from None
        if str(e).startswith("getitem: "):  # Function.apply named the op and the shapes already
            raise
        raise IndexError(f"getitem: {e} (tensor of shape {x.shape}, index {index!r})") from None
    if basic and x._base is None:
        out._view_idx = idx  # lets an in-place op on this view write through x (see ops/inplace.py)
    return out


def _bad_index_type(idx):
    """The type name of the first index element that is not a valid index (a float, a string), or None."""
    for i in (idx if isinstance(idx, tuple) else (idx,)):
        if i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer)):
            continue
        if isinstance(i, np.ndarray) and i.dtype.kind in "biu":
            continue
        return type(i).__name__ if not isinstance(i, np.ndarray) else f"an array of dtype {i.dtype}"
    return None


def basic_slice(x, idx):
    """x[idx] for a tuple of slices already in range (narrow, split, chunk): what getitem does for
    such an index (a Slice view that in-place ops write through), without normalising the index."""
    out = Slice.apply(x, idx)
    if x._base is None:
        out._view_idx = idx
    return out


class SetItem(Function):
    """out = x with out[index] = v;  dx = g with g[index] = 0,  dv = g[index]"""
    batching = NoRule("an in-place write through a per-sample index: one write per sample")
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x, v, index):
        ctx.index = index
        out = x.copy()
        out[index] = v
        return out

    @staticmethod
    def backward(ctx, g):
        nx, nv, _ = ctx.needs_input_grad
        dx = SetItem.apply(g, 0.0, ctx.index) if nx else None
        dv = getitem(g, ctx.index) if nv else None
        return dx, dv, None

    @staticmethod
    def jvp(ctx, tx, tv, _index):
        x, v = ctx.fw_args[:2]
        tx = tx if tx is not None else Tensor._make(np.zeros(x.shape, x.dtype))
        return SetItem.apply(tx, tv if tv is not None else 0.0, ctx.index)


def setitem(x, index, value):
    from .inplace import write_inplace
    idx = _np_index(index)
    if isinstance(value, Tensor) and value.dtype != x.dtype:
        from .elementwise import cast
        value = cast(value, x.dtype)
    write_inplace(x, "setitem", lambda alias: SetItem.apply(alias, value, idx), (value,),
                  fast=lambda: _setitem_data(x, idx, value))


def _setitem_data(x, idx, value):
    v = value._data if isinstance(value, Tensor) else value
    try:
        x._data[idx] = v
    except ValueError as e:
        raise ValueError(f"setitem: {e} (tensor of shape {x.shape}, value of shape {np.shape(v)})") from None


def _along_index(shape, index, dim):
    """Full advanced-index tuple selecting index[..] along dim and the matching position elsewhere."""
    grids = np.ogrid[tuple(slice(0, s) for s in index.shape)]
    grids = list(grids)
    grids[dim] = index
    return tuple(grids)


class Gather(Function):
    """out[i][j] = x[i][index[i][j]] (along dim);  dx = scatter_add of g at index"""
    batching = "gather"

    @staticmethod
    def forward(ctx, x, dim, index):
        full = _along_index(x.shape, index, dim)
        ctx.full, ctx.shape = full, x.shape
        return _c_order(x[full])

    @staticmethod
    def backward(ctx, g):
        return IndexAdd.apply(g, ctx.full, ctx.shape), None, None

    @staticmethod
    def jvp(ctx, t, _dim, _index):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent

    @staticmethod
    def onnx(e, c):
        x, dim, index = e.args[:3]
        return c.add("GatherElements", [x.name, c.operand(index, np.int64)], c.out(e), axis=int(dim))


def _check_index(op, x, dim, index):
    # the shape checked is the tensor's (inside vmap its per-sample shape; the array read through it
    # has the batch dim too, and the op's batching rule or loop fallback reads it as such)
    if isinstance(index, Tensor):
        shape, index = tuple(index.shape), index._data
    else:
        index = np.asarray(index)
        shape = index.shape
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got {index.dtype}")
    if len(shape) != x.ndim:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as input "
                           f"tensor (index shape {shape}, input shape {x.shape})")
    d = dim % x.ndim
    for i, (si, sx) in enumerate(zip(shape, x.shape)):
        if i != d and si > sx:
            raise RuntimeError(f"{op}(): Size does not match at dimension {i}: index shape {shape}, "
                               f"input shape {x.shape}")
    if index.size and (index.min() < -x.shape[d] or index.max() >= x.shape[d]):
        raise IndexRangeError(f"{op}(): index out of range for dimension {d} of size {x.shape[d]}")
    return index, d


@_accepts_axis
def gather(input, dim, index):
    index, d = _check_index("gather", input, dim, index)
    return Gather.apply(input, d, index)


class ScatterAdd(Function):
    """out = x;  out[index[i][j]][j] += src[i][j] (along dim);  dx = g,  dsrc = gather(g, index)"""
    batching = NoRule("the index arrays are per sample: one scatter per sample")
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x, dim, index, src):
        full = _along_index(x.shape, index, dim)
        ctx.full, ctx.src_shape = full, src.shape
        ctx.extent = tuple(slice(0, s) for s in index.shape)
        out = x.copy()
        np.add.at(out, full, src[ctx.extent])
        return out

    @staticmethod
    def backward(ctx, g):
        _, _, _, nsrc = ctx.needs_input_grad
        dsrc = None
        if nsrc:
            dsrc = g[ctx.full]
            if dsrc.shape != ctx.src_shape:  # src larger than index: the unused part gets 0 (PyTorch raises)
                dsrc = IndexAdd.apply(dsrc, ctx.extent, ctx.src_shape)
        return g, None, None, dsrc

    @staticmethod
    def jvp(ctx, tx, _dim, _index, ts):
        x, dim, index, src = ctx.fw_args
        tx = tx if tx is not None else Tensor._make(np.zeros(x.shape, x.dtype))
        ts = ts if ts is not None else Tensor._make(np.zeros(src.shape, src.dtype))
        return ScatterAdd.apply(tx, dim, index, ts)


@_accepts_axis
def scatter_add(input, dim, index, src):
    index, d = _check_index("scatter_add", input, dim, index)
    return ScatterAdd.apply(input, d, index, src)


@batched_by_loop
@_accepts_axis
def index_select(input, dim, index):
    index = index._data if isinstance(index, Tensor) else np.asarray(index)
    if index.ndim > 1:
        raise IndexError(f"index_select(): Index is supposed to be a vector (got shape {index.shape})")
    d = dim % max(input.ndim, 1)
    return getitem(input, (slice(None),) * d + (index.reshape(-1).astype(np.int64),))


@batched_by_loop
def masked_fill(input, mask, value):
    from .elementwise import Where, where
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s)")
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill: expected a bool mask, got {m.dtype}")
    try:
        if m.shape != input.shape:  # (a mask of the tensor's own shape, the common case, broadcasts)
            np.broadcast_shapes(m.shape, input.shape)
    except ValueError:
        raise ShapeError(f"masked_fill: mask of shape {m.shape} cannot be broadcast to the tensor's "
                         f"shape {input.shape}") from None
    if not isinstance(value, Tensor):
        value = Tensor._make(np.asarray(value, dtype=input.dtype))
        if type(input) is Tensor:  # value has input's dtype: where's checks and promotion have nothing to do
            return Where.apply(Tensor._make(m), value, input).contiguous()
    return where(Tensor._make(m), value, input).contiguous()  # PyTorch's out-of-place masked_fill: a contiguous clone  # PyTorch's out-of-place masked_fill: a contiguous clone


@batched_by_loop
def take_along_dim(input, indices, dim=None, *, axis=None):
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("take_along_dim", dim, axis, default=None)[0]
    if not isinstance(indices, Tensor):
        indices = Tensor._make(np.asarray(indices))
    idx = indices._data
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = dim % input.ndim
    shape = list(np.broadcast_shapes(tuple(1 if i == d else s for i, s in enumerate(input.shape)),
                                     tuple(1 if i == d else s for i, s in enumerate(idx.shape))))
    xs = list(shape)
    xs[d] = input.shape[d]
    ishape = list(shape)
    ishape[d] = idx.shape[d]
    if tuple(xs) != input.shape:
        input = input.expand(*xs)
    # index ops, not NumPy on the arrays, so that mg.graph.trace records where the index comes from
    return gather(input, d, indices.expand(*ishape) if tuple(ishape) != idx.shape else indices)


# complex tensors (ops/complex.py): linear with real coefficients, the backward is right as written
for _cls in (GetItem, IndexAdd, Gather, ScatterAdd):
    _cls._complex = True
