"""Writes along a dim and selections by mask: scatter, scatter_reduce, index_add, index_copy,
index_fill, masked_select, nonzero (gather and scatter_add live in indexing.py).

index_add is IndexAdd (indexing.py's getitem gradient) on a full index tuple, so it is
differentiable to any order; scatter / index_copy / index_fill are `where` over a constant mask of the
written positions. Duplicate indices in scatter / index_copy are undefined in PyTorch (one write
wins, which one is unspecified); here the last write in index order wins, and, as PyTorch's
backward, every src element gets the gradient gathered at its index, the losing duplicates too.
"""
import numpy as np
from .._errors import IndexRangeError

from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from .._aliases import accepts_axis as _accepts_axis
from ..func.vmap import batched_by_loop, not_batchable
from .indexing import IndexAdd, _along_index, _check_index

__all__ = ["scatter", "scatter_reduce", "index_add", "index_copy", "index_fill", "masked_select", "nonzero"]
__methods__ = ["scatter", "scatter_reduce", "index_add", "index_copy", "index_fill", "masked_select", "nonzero",
               "scatter_", "scatter_reduce_", "index_add_", "index_copy_", "index_fill_", "scatter_add_"]


def _arr(v):
    return v._data if isinstance(v, Tensor) else np.asarray(v)


def _written(shape, full):
    m = np.zeros(shape, dtype=bool)
    m[full] = True
    return Tensor._make(m)


def _as_tensor(v, dtype):
    return v if isinstance(v, Tensor) else Tensor._make(np.asarray(v, dtype=dtype))


@batched_by_loop
@_accepts_axis
def scatter(input, dim, index, src=None, *, value=None, reduce=None):  # noqa: A002
    """`out = input` with `out[index[i][j]][j] = src[i][j]` along dim (torch.scatter); `value` writes a
    number instead; reduce='add' / 'multiply' combines with the existing value."""
    from .elementwise import where
    from .indexing import scatter_add
    if (src is None) == (value is None):
        if src is not None and not isinstance(src, Tensor):
            src, value = None, src  # scatter(input, dim, index, 2.0): the value overload
        else:
            raise TypeError("scatter(): expected exactly one of 'src' (a Tensor) or 'value' (a number)")
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    idx, d = _check_index("scatter", input, dim, index)
    if src is not None:
        if src.ndim != input.ndim or any(si > ss for si, ss in zip(idx.shape, src.shape)):
            raise RuntimeError(f"scatter(): index shape {idx.shape} larger than src shape {src.shape}")
        if src.dtype != input.dtype:
            raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype ({input.dtype} "
                               f"and {src.dtype})")
    else:
        src = Tensor._make(np.full(idx.shape, value, dtype=input.dtype))
    if reduce is None:
        mask = _written(input.shape, _along_index(input.shape, idx, d))
        if value is not None:
            # every write is the same number, so a duplicated index gives it once, as PyTorch (the
            # sum below gave k * value: scatter(1, [[3, 3]], 2.5) wrote 5.0)
            return where(mask, Tensor._make(np.full(input.shape, value, dtype=input.dtype)), input)
        return Scatter.apply(input, d, idx, src)
    if reduce == "add":
        return scatter_add(input, d, idx, src)
    if reduce == "multiply":
        return scatter_reduce(input, d, idx, src, "prod")
    raise RuntimeError(f"scatter(): reduce argument must be either 'add' or 'multiply', got {reduce!r}")


class Scatter(Function):
    """out = input with out[index[i][j]][j] = src[i][j] along dim (dim 0 shown); a duplicated index
    keeps the last write (PyTorch leaves which one unspecified; never a sum). dx = g where nothing was
    written, 0 where something was; dsrc = g gathered at index (every duplicate included), as PyTorch"""
    batching = NoRule("the index arrays are per sample: one scatter per sample")
    onnx = NoRule("writes at indices (ScatterElements/ScatterND are not mapped yet)")

    @staticmethod
    def forward(ctx, x, dim, index, src):
        full = _along_index(x.shape, index, dim)
        ext = tuple(slice(0, s) for s in index.shape)
        out = x.copy()
        out[full] = src[ext]  # (NumPy: with repeated indices the last value is assigned)
        written = np.zeros(x.shape, dtype=bool)
        written[full] = True
        ctx.full, ctx.ext, ctx.src_shape, ctx.written = full, ext, src.shape, written
        ctx.dim, ctx.index = dim, index
        return out

    @staticmethod
    def backward(ctx, g):
        from .elementwise import where
        nx, _, _, nsrc = ctx.needs_input_grad
        dx = where(Tensor._make(ctx.written), 0.0, g) if nx else None
        dsrc = None
        if nsrc:
            dsrc = g[ctx.full]
            if dsrc.shape != ctx.src_shape:  # index-shaped back to src's shape (0 beyond index's extent)
                dsrc = IndexAdd.apply(dsrc, ctx.ext, ctx.src_shape)
        return dx, None, None, dsrc

    @staticmethod
    def jvp(ctx, tx, _dim, _index, tsrc):
        # linear in (x, src): the same writes applied to the tangents (last write wins there too)
        x_shape = ctx.written.shape
        dt = (tx if tx is not None else tsrc).dtype
        tx = tx if tx is not None else Tensor._make(np.zeros(x_shape, dt))
        tsrc = tsrc if tsrc is not None else Tensor._make(np.zeros(ctx.src_shape, dt))
        return Scatter.apply(tx, ctx.dim, ctx.index, tsrc)


class ScatterReduce(Function):
    """out = input with src reduced into it at index along dim (sum, prod, mean, amax, amin);
    the gradients are PyTorch's: sum: dx = g (0 where written and not include_self), dsrc = g[index];
    mean: divided by the count; amax/amin: g shared evenly among the elements equal to the result;
    prod: g * out / x (exact at zeros through the product of the others)"""
    batching = NoRule("the index arrays are per sample: one scatter per sample")
    onnx = NoRule("writes at indices (ScatterElements/ScatterND are not mapped yet)")

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce, include_self):
        full = _along_index(x.shape, index, dim)
        ext = tuple(slice(0, s) for s in index.shape)
        s = src[ext]
        written = np.zeros(x.shape, dtype=bool)
        written[full] = True
        count = np.zeros(x.shape, dtype=np.int64)
        np.add.at(count, full, 1)
        if include_self:
            count += 1
        base = x.copy()
        if not include_self:
            init = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
            base[written] = init if x.dtype.kind == "f" else (np.iinfo(x.dtype).min if reduce == "amax" else
                                                             np.iinfo(x.dtype).max if reduce == "amin" else init)
        ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
        ufunc.at(base, full, s)
        if reduce == "mean":
            base = np.where(written, base / np.maximum(count, 1), base).astype(x.dtype) if x.dtype.kind == "f" \
                else np.where(written, base // np.maximum(count, 1), base)
        ctx.full, ctx.ext, ctx.src_shape, ctx.reduce, ctx.include_self = full, ext, src.shape, reduce, include_self
        ctx.written, ctx.count = written, count
        ctx.save_for_backward(x, src, base)
        return base

    @staticmethod
    def backward(ctx, g):
        from .elementwise import where
        x, src, out = ctx.saved_tensors
        nx, _, _, nsrc, _, _ = ctx.needs_input_grad
        full, ext, red, keep = ctx.full, ctx.ext, ctx.reduce, ctx.include_self
        written = Tensor._make(ctx.written)

        def to_src(t):  # index-shaped back to src's shape (0 beyond index's extent)
            return t if t.shape == ctx.src_shape else IndexAdd.apply(t, ext, ctx.src_shape)
        s = src[ext]
        dx = dsrc = None
        if red in ("sum", "mean"):
            gg = g / Tensor._make(np.maximum(ctx.count, 1).astype(g.dtype)) if red == "mean" else g
            if nx:
                dx = where(written, gg if keep else 0.0, g)
            if nsrc:
                dsrc = to_src(gg[full])
        elif red in ("amax", "amin"):
            hit_x, hit_s, n = _ties(ctx, x, s, out, written, g.dtype)
            share = g / n
            if nx:
                dx = where(written, where(hit_x, share, 0.0), g)
            if nsrc:
                dsrc = to_src(where(hit_s, share[full], 0.0))
        else:  # prod: the product of the other factors is out / factor
            if (x._data[ctx.written] == 0).any() or (s._data == 0).any():
                raise NotImplementedError("scatter_reduce(reduce='prod'): the gradient at a zero factor is "
                                          "not implemented in minigrad yet")
            if nx:
                dx = where(written, g * out / x if keep else 0.0, g)
            if nsrc:
                dsrc = to_src(g[full] * out[full] / s)
        return dx, None, None, dsrc, None, None

    @staticmethod
    def jvp(ctx, tx, _dim, _index, tsrc, *_):
        # written positions: sum/mean add the (averaged) tangents reduced in, amax/amin the mean of the
        # tangents of the elements equal to the result (the backward's even share), prod
        # out * (sum of t/factor); elsewhere the output is x, so its tangent is tx
        from .elementwise import where
        from .indexing import IndexAdd
        x, src, out = ctx.saved_tensors
        full, ext, red, keep = ctx.full, ctx.ext, ctx.reduce, ctx.include_self
        written = Tensor._make(ctx.written)
        s = src[ext]
        tx_ = tx if tx is not None else Tensor._make(np.zeros(x.shape, x.dtype))
        ts = tsrc[ext] if tsrc is not None else Tensor._make(np.zeros(s.shape, s.dtype))
        if red in ("sum", "mean"):
            acc = IndexAdd.apply(ts, full, x.shape) + (tx_ if keep else 0.0)
            if red == "mean":
                acc = acc / Tensor._make(np.maximum(ctx.count, 1).astype(x.dtype))
        elif red in ("amax", "amin"):
            hit_x, hit_s, n = _ties(ctx, x, s, out, written, x.dtype)
            acc = IndexAdd.apply(where(hit_s, ts, 0.0), full, x.shape) + where(hit_x, tx_, 0.0)
            acc = acc / n
        else:
            if (x._data[ctx.written] == 0).any() or (s._data == 0).any():
                raise NotImplementedError("scatter_reduce(reduce='prod'): the derivative at a zero factor is "
                                          "not implemented in minigrad yet")
            acc = IndexAdd.apply(ts / s, full, x.shape) + (tx_ / x if keep else 0.0)
            acc = out * acc
        return where(written, acc, tx_)


def _ties(ctx, x, s, out, written, dtype):
    """amax/amin: (hit_x, hit_s, n): which elements of x (kept ones only) and of src equal the result
    they were reduced into, and max(1, number of such elements) per output position, in dtype. Made
    with ops, not NumPy, so that under mg.graph.trace they are values of the graph, recomputed on new inputs
    (the gradient is piecewise linear in g: the masks themselves carry no gradient)."""
    from .elementwise import cast, maximum
    full = ctx.full
    hit_s = s == out[full]
    n = IndexAdd.apply(cast(hit_s, dtype), full, x.shape)
    if ctx.include_self:
        hit_x = written & (x == out)
        n = cast(hit_x, dtype) + n
    else:
        hit_x = Tensor._make(np.zeros(x.shape, dtype=bool))
    return hit_x, hit_s, maximum(n, Tensor._make(np.ones((), dtype)))


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


@batched_by_loop
@_accepts_axis
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002
    """input with src reduced in at index along dim: reduce in 'sum', 'prod', 'mean', 'amax', 'amin'
    (torch.scatter_reduce); include_self=False leaves the written positions' old values out."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"scatter_reduce(): reduce argument must be one of {_REDUCES}, got {reduce!r}")
    idx, d = _check_index("scatter_reduce", input, dim, index)
    if not isinstance(src, Tensor) or src.dtype != input.dtype:
        raise RuntimeError(f"scatter_reduce(): Expected self.dtype to be equal to src.dtype "
                           f"({input.dtype} and {getattr(src, 'dtype', type(src).__name__)})")
    if src.ndim != input.ndim or any(si > ss for si, ss in zip(idx.shape, src.shape)):
        raise RuntimeError(f"scatter_reduce(): index shape {idx.shape} larger than src shape {src.shape}")
    return ScatterReduce.apply(input, d, idx, src, reduce, bool(include_self))


def _dim_index(op, input, dim, index):
    """(dim, the index vector, the full index tuple selecting index along dim)."""
    idx = _arr(index)
    if idx.ndim > 1 or idx.dtype.kind not in "iu":
        raise IndexError(f"{op}(): index should be a 1-D int64 tensor (got shape {idx.shape}, {idx.dtype})")
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}(): dimension {dim} out of range for a tensor of shape {input.shape}")
    d = dim % n
    size = input.shape[d] if input.ndim else 1
    idx = idx.reshape(-1).astype(np.int64)
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise IndexRangeError(f"{op}(): index out of range for dimension {d} of size {size}")
    return d, idx, (slice(None),) * d + (idx,)


@batched_by_loop
@_accepts_axis
def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    """input with alpha * source added at index along dim, repeated indices accumulating
    (torch.index_add)."""
    d, idx, full = _dim_index("index_add", input, dim, index)
    expect = input.shape[:d] + (len(idx),) + input.shape[d + 1:]
    if tuple(source.shape) != expect:
        raise RuntimeError(f"index_add(): source of shape {source.shape} does not match input {input.shape} "
                           f"with {len(idx)} indices along dim {d} (expected {expect})")
    if alpha != 1:
        source = source * alpha
    if input.ndim == 0:
        return input + source.reshape(())
    return input + IndexAdd.apply(source, full, input.shape)


@batched_by_loop
@_accepts_axis
def index_copy(input, dim, index, source):  # noqa: A002
    """input with the slices at index along dim replaced by source's (torch.index_copy)."""
    from .elementwise import where
    d, idx, full = _dim_index("index_copy", input, dim, index)
    expect = input.shape[:d] + (len(idx),) + input.shape[d + 1:]
    if tuple(source.shape) != expect:
        raise RuntimeError(f"index_copy(): source of shape {source.shape} does not match input {input.shape} "
                           f"with {len(idx)} indices along dim {d} (expected {expect})")
    m = np.zeros(input.shape, dtype=bool)
    m[full] = True
    return where(Tensor._make(m), IndexAdd.apply(source, full, input.shape), input)


@batched_by_loop
@_accepts_axis
def index_fill(input, dim, index, value):  # noqa: A002
    """input with the slices at index along dim set to value (a number or a 0-d tensor; torch.index_fill)."""
    from .elementwise import where
    d, idx, full = _dim_index("index_fill", input, dim, index)
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"index_fill(): only supports a 0-dimensional value tensor, got shape {value.shape}")
    m = np.zeros(input.shape, dtype=bool)
    m[full if input.ndim else ()] = True
    return where(Tensor._make(m), _as_tensor(value, input.dtype), input)


@not_batchable('masked_select')
def masked_select(input, mask):  # noqa: A002
    """The elements of input where mask (broadcast together) is True, as a 1-D tensor (torch.masked_select)."""
    m = _arr(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {m.dtype}")
    try:
        shape = np.broadcast_shapes(m.shape, input.shape)
    except ValueError:
        raise RuntimeError(f"masked_select: mask of shape {m.shape} and input of shape {input.shape} cannot be "
                           f"broadcast") from None
    x = input if input.shape == shape else input.expand(*shape)
    mt = mask if isinstance(mask, Tensor) else Tensor._make(m)
    return x[mt if mt.shape == shape else mt.expand(*shape)].reshape(-1)  # Tensor ops: mg.graph.trace sees the mask


class Nonzero(Function):
    """out = the indices of the nonzero elements, one row each (n, ndim);  not differentiable"""
    batching = NoRule("a data-dependent output shape (the wrapper raises under vmap)")
    jvp = NoRule("integer or bool outputs: no tangent")
    onnx = NoRule("the result's shape depends on the data (boolean masks, nonzero, unique)")

    @staticmethod
    def forward(ctx, x):
        out = np.argwhere(x).astype(np.int64)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("nonzero: this op is not differentiable")


@not_batchable('nonzero')
def nonzero(input, *, as_tuple=False):  # noqa: A002
    """Indices of the nonzero elements: an (n, ndim) int64 tensor, or one 1-D tensor per dim with
    as_tuple=True (torch.nonzero)."""
    out = Nonzero.apply(input)
    if not as_tuple:
        return out
    if input.ndim == 0:  # one index (0) if the scalar is nonzero, as PyTorch
        return (Tensor._make(np.zeros(out.shape[0], dtype=np.int64)),)
    return tuple(out[:, i] for i in range(input.ndim))


def _inplace_of(op, name):
    def op_(input, *args, **kwargs):  # noqa: A002
        from .inplace import inplace
        return inplace(input, lambda a, *r: op(a, *r, **kwargs), *args, name=name)
    op_.__name__ = op_.__qualname__ = name
    op_.__doc__ = f"In-place {op.__name__} (Tensor.{name})."
    return op_


def _scatter_add(input, dim, index, src):  # noqa: A002
    from .indexing import scatter_add
    return scatter_add(input, dim, index, src)


_scatter_add.__name__ = "scatter_add"
scatter_ = _inplace_of(scatter, "scatter_")
scatter_reduce_ = _inplace_of(scatter_reduce, "scatter_reduce_")
index_add_ = _inplace_of(index_add, "index_add_")
index_copy_ = _inplace_of(index_copy, "index_copy_")
index_fill_ = _inplace_of(index_fill, "index_fill_")
scatter_add_ = _inplace_of(_scatter_add, "scatter_add_")


# complex tensors (ops/complex.py): scatter moves values (linear, real coefficients): its backward
# is right for complex as written
Scatter._complex = True
