"""Shape ops: views (reshape, permute, expand, ...) and joins/splits. Their gradients only move data."""
import itertools
import math

import numpy as np
from .._errors import IndexRangeError

from ..autograd import function as _function
from ..autograd.function import Function, NoRule
from .._memory_format import _c_order
from ..tensor import Tensor
from .._aliases import dim_alias as _dim_alias, accepts_axis as _accepts_axis

# the public ops of this family: exported by minigrad.ops and minigrad (ops/__init__.py derives from it)
__all__ = [
    "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "swapaxes", "t",
    "expand", "broadcast_to", "broadcast_tensors", "repeat", "flip", "clone", "cat", "concat", "concatenate",
    "stack", "narrow", "select", "split", "chunk", "unbind", "tril", "triu",
]


def _sizes(args):
    """Accept f(2, 3) and f((2, 3))."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _dim(d, ndim, op):
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise IndexError(f"{op}: dimension {d} out of range (expected to be in range of "
                         f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
    return d % max(ndim, 1)


class View(Function):
    """out = x.reshape(shape) (a view: reshape, view, flatten, unflatten);  dx = g.reshape(x.shape)"""
    op_name = "reshape"  # the primitive a tracer records, shared by Squeeze/Unsqueeze (PyTorch names the nodes)
    _is_view = True
    batching = "view"

    # no graph recorded (generation under no_grad): the view without a ctx (kept by backward only)
    _fast = staticmethod(lambda x, shape: x.reshape(shape))  # (a method call: a NumPy scalar has it too)

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None

    @staticmethod
    def jvp(ctx, t, _shape):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent

    @staticmethod
    def onnx(e, c):
        # flatten/squeeze/unsqueeze/view are one `reshape` in the IR: all become Reshape; a dynamic
        # batch (axis 0 kept from the input) becomes -1
        shape = list(e.outvars[0].shape)
        if c.dynamic_batch and shape and shape[0] == c.batch and e.args[0].shape[:1] == (c.batch,):
            shape[0] = -1
        return c.reshape(c.x(e), shape, c.out(e))


class Squeeze(View):
    """out = x without the size-1 dims asked for;  dx = g.reshape(x.shape)"""
    batching = "view"


class Unsqueeze(View):
    """out = x with a size-1 dim inserted;  dx = g.reshape(x.shape)"""
    batching = "view"


def reshape(input, *args, shape=None):
    """reshape(x, 2, 3), reshape(x, (2, 3)) or reshape(x, shape=(2, 3)), as PyTorch."""
    if shape is None:
        shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    else:
        shape = tuple(shape)
    if type(input) is Tensor:  # a plain Tensor's shape is its array's (a BatchedTensor's: .shape)
        a = input._data
        if shape == a.shape or -1 not in shape and math.prod(shape) == a.size:
            return View.apply(input, shape)  # (nothing to infer, the element count checked)
    return View.apply(input, shape if shape == input.shape else _infer_shape(shape, input))


def _infer_shape(shape, x):
    n = x.numel()
    if -1 not in shape:  # nothing to infer: only the element count to check
        if math.prod(shape) != n:
            raise RuntimeError(f"reshape: shape {list(shape)} is invalid for input of size {n} (shape {x.shape})")
        return shape
    if shape.count(-1) > 1:
        raise RuntimeError(f"reshape: only one dimension can be inferred (shape {list(shape)})")
    known = math.prod([s for s in shape if s != -1])
    if -1 in shape:
        if known == 0 or n % known:
            raise RuntimeError(f"reshape: shape {list(shape)} is invalid for input of size {n} "
                               f"(shape {x.shape})")
        shape = tuple(n // known if s == -1 else s for s in shape)
    elif known != n:
        raise RuntimeError(f"reshape: shape {list(shape)} is invalid for input of size {n} (shape {x.shape})")
    return shape


view = reshape


def flatten(input, start_dim=0, end_dim=-1):
    shape = tuple(input.shape)  # a plain tuple: Size's slicing is Python code
    if not shape:
        return reshape(input, 1)
    s, e = _dim(start_dim, len(shape), "flatten"), _dim(end_dim, len(shape), "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return View.apply(input, shape)
    return View.apply(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])  # valid by construction


@_accepts_axis
def unflatten(input, dim, sizes):
    d = _dim(dim, input.ndim, "unflatten")
    sizes = tuple(sizes)
    if -1 in sizes:
        known = math.prod([s for s in sizes if s != -1])
        sizes = tuple(input.shape[d] // known if s == -1 else s for s in sizes)
    if math.prod(sizes) != input.shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of "
                           f"dim {dim} ({input.shape[d]}) in the input tensor")
    return reshape(input, input.shape[:d] + sizes + input.shape[d + 1:])


def squeeze(input, dim=None, *, axis=None):
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("squeeze", dim, axis, default=None)[0]
    if dim is None:
        shape = tuple(s for s in input.shape if s != 1)
    else:
        dims = {_dim(d, input.ndim, "squeeze") for d in ((dim,) if isinstance(dim, int) else dim)}
        shape = tuple(s for i, s in enumerate(input.shape) if not (i in dims and s == 1))
    return Squeeze.apply(input, shape)


def unsqueeze(input, dim=None, *, axis=None):
    if axis is not None or dim is None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("unsqueeze", dim, axis, default=None, required=True)[0]
    d = _dim(dim, input.ndim + 1, "unsqueeze")
    return Unsqueeze.apply(input, input.shape[:d] + (1,) + input.shape[d:])


class Permute(Function):
    """out = x.transpose(dims);  dx = g.transpose(inverse(dims))"""
    op_name = "permute"  # the primitive a tracer records, shared by Transpose/T (PyTorch names the nodes)
    _is_view = True
    batching = "permute"

    _fast = staticmethod(lambda x, dims: x.transpose(dims))  # no graph recorded: the view without a ctx

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, g):
        return g.permute(*np.argsort(ctx.dims).tolist()), None

    @staticmethod
    def jvp(ctx, t, _dims):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent

    @staticmethod
    def onnx(e, c):
        perm = [int(d) % max(1, len(e.args[0].shape)) for d in e.args[1]]
        return c.add("Transpose", [c.x(e)], c.out(e), perm=perm)


class Transpose(Permute):
    """out = x with two dims swapped;  dx = g with them swapped back"""
    batching = "permute"


class T(Permute):
    """out = x.t() (a matrix transposed; a 0-d or 1-d tensor as it is);  dx = g.t()"""
    batching = "permute"


def permute(input, *args, dims=None):
    dims = _sizes(args) if dims is None else tuple(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute: number of dims don't match in permute: got {len(dims)} dims "
                           f"for a tensor of shape {input.shape}")
    dims = tuple(_dim(d, input.ndim, "permute") for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"permute: repeated dim in {dims}")
    return Permute.apply(input, dims)


def transpose(input, dim0, dim1):
    n = input.ndim
    if n >= 2 and type(dim0) is int and type(dim1) is int and -n <= dim0 < n and -n <= dim1 < n:
        dims = list(range(n))  # the common call (x.transpose(1, 2)) without _dim's checks
        a, b = dim0 % n, dim1 % n
        dims[a], dims[b] = b, a
        return Transpose.apply(input, tuple(dims))
    if input.ndim < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return Transpose.apply(input, tuple(range(input.ndim)))
    dims = list(range(input.ndim))
    a, b = _dim(dim0, input.ndim, "transpose"), _dim(dim1, input.ndim, "transpose")
    dims[a], dims[b] = dims[b], dims[a]
    return Transpose.apply(input, tuple(dims))


def swapaxes(input, axis0, axis1):
    """transpose under NumPy's names (torch.swapaxes)."""
    return transpose(input, axis0, axis1)


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return T.apply(input, (1, 0) if input.ndim == 2 else tuple(range(input.ndim)))


def _broadcast_view(x, shape):
    """np.broadcast_to(x, shape) -- a read-only view, stride 0 along the broadcast axes -- for a
    contiguous x (every sum's and mean's backward broadcasts its gradient so) without
    broadcast_to's Python-level setup: 2-3 us of a tiny backward's ~25. shape: broadcast-compatible."""
    if not x.size or not (x.flags.c_contiguous or x.flags.f_contiguous):
        return np.broadcast_to(x, shape)
    lead = len(shape) - x.ndim
    xs, xst = x.shape, x.strides
    strides = (0,) * lead + tuple([0 if xs[i] == 1 and shape[lead + i] != 1 else xst[i] for i in range(x.ndim)])
    out = np.ndarray(shape, x.dtype, x, 0, strides)  # a contiguous x starts its buffer: offset 0
    out.flags.writeable = False
    return out


class Expand(Function):
    """out = broadcast_to(x, shape);  dx = g   (the engine sums g back to x's shape)"""
    _is_view = True
    batching = "expand"

    @staticmethod
    def forward(ctx, x, shape):
        if x.shape == shape:
            return x.view()  # nothing to broadcast: a writeable view, not broadcast_to's read-only one
        return _broadcast_view(x, shape)

    @staticmethod
    def backward(ctx, g):
        return g, None

    @staticmethod
    def jvp(ctx, t, _shape):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent

    @staticmethod
    def onnx(e, c):
        # a target size equal to the input's is written as 1: Expand broadcasts both ways, so the result
        # is the same, and an axis left dynamic (the batch) keeps whatever size it has at run time
        out, inp = list(e.outvars[0].shape), e.args[0].shape
        k = len(out) - len(inp)
        shape = [1 if i >= k and inp[i - k] == n else n for i, n in enumerate(out)]
        return c.add("Expand", [c.x(e), c.ints(shape)], c.out(e))


def expand(input, *args, size=None):
    sizes = _sizes(args) if size is None else tuple(size)
    ishape = input.shape
    lead = len(sizes) - len(ishape)
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({input.ndim})")
    shape = sizes if -1 not in sizes else tuple(ishape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    for i, s in enumerate(ishape):
        if s != 1 and s != shape[lead + i]:
            raise RuntimeError(f"expand: the expanded size of the tensor ({shape[lead + i]}) must match "
                               f"the existing size ({s}) at non-singleton dimension {lead + i}. "
                               f"Target sizes: {list(sizes)}. Tensor sizes: {list(input.shape)}")
    return Expand.apply(input, shape)


def broadcast_to(input, size):
    return expand(input, *size)


def expand_as(x, other):
    return expand(x, *other.shape)


def broadcast_tensors(*tensors):
    shape = np.broadcast_shapes(*[t.shape for t in tensors])
    return tuple(expand(t, *shape) for t in tensors)


class Repeat(Function):
    """out = tile(x, reps);  dx = g summed over the copies"""
    batching = "repeat"

    @staticmethod
    def forward(ctx, x, reps):
        ctx.shape = (1,) * (len(reps) - x.ndim) + x.shape
        ctx.reps = reps
        return np.tile(x, reps)

    @staticmethod
    def backward(ctx, g):
        inter = []
        for r, s in zip(ctx.reps, ctx.shape):
            inter += [r, s]
        axes = tuple(range(0, 2 * len(ctx.reps), 2))
        return g.reshape(inter).sum(axes), None

    @staticmethod
    def jvp(ctx, t, _reps):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent

    @staticmethod
    def onnx(e, c):
        x, reps = e.args[0], [int(r) for r in e.args[1]]
        name = x.name
        if len(reps) > len(x.shape):
            name = c.reshape(name, [1] * (len(reps) - len(x.shape)) + list(x.shape))
        return c.add("Tile", [name, c.ints(reps)], c.out(e))


def repeat(input, *args, repeats=None):
    sizes = _sizes(args) if repeats is None else tuple(repeats)
    if len(sizes) < input.ndim:
        raise RuntimeError(f"repeat: number of repeat dims ({len(sizes)}) can not be smaller than "
                           f"number of dimensions of tensor ({input.ndim})")
    return Repeat.apply(input, sizes)


class Flip(Function):
    """out = x reversed along dims;  dx = g reversed along dims"""
    batching = "flip"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.flip(x, dims).copy()

    @staticmethod
    def backward(ctx, g):
        return g.flip(ctx.dims), None

    @staticmethod
    def jvp(ctx, t, _dims):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent

    @staticmethod
    def onnx(e, c):
        dims = [int(d) for d in e.args[1]]
        n = len(dims)
        return c.add("Slice", [c.x(e), c.ints([-1] * n), c.ints([c.INT64_MIN] * n), c.ints(dims), c.ints([-1] * n)],
                     c.out(e))


def flip(input, *args, dims=None):
    """flip(x, dims) as torch.flip; x.flip(0, 1) as Tensor.flip(*dims)."""
    dims = _sizes(args) if dims is None else dims
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    ds = tuple(_dim(d, input.ndim, "flip") for d in dims)
    if len(set(ds)) != len(ds):
        d = next(d for d in ds if ds.count(d) > 1)
        raise RuntimeError(f"flip: dim {d} appears multiple times in the list of dims {dims} "
                           f"(tensor of shape {input.shape})")
    return Flip.apply(input, ds)


class Clone(Function):
    """out = copy(x);  dx = g"""
    batching = "elementwise"
    fusion = NoRule("a copy: fusion has nothing to save")
    onnx = "Identity"

    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, t):
        return Clone.apply(t)


def clone(input, *, memory_format=None):
    """A copy (memory_format is accepted and ignored: NumPy copies are C-contiguous)."""
    return Clone.apply(input)


def contiguous(x):
    if x._data.flags.c_contiguous:
        return x
    return Clone.apply(x)


class Cat(Function):
    """out = concatenate(xs, dim);  dx_i = the slice of g that came from x_i"""
    batching = "cat"

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.dim = dim
        ctx.bounds = list(itertools.accumulate([x.shape[dim] for x in xs], initial=0))
        return _c_order(np.concatenate(xs, axis=dim))

    # no graph recorded (a KV cache's cat per token under no_grad): no ctx, no bounds
    _fast = staticmethod(lambda dim, *xs: _c_order(np.concatenate(xs, axis=dim)))

    @staticmethod
    def backward(ctx, g):
        d, b = ctx.dim, ctx.bounds
        return (None,) + tuple(g.narrow(d, b[i], b[i + 1] - b[i]) if need else None
                               for i, need in enumerate(ctx.needs_input_grad[1:]))

    @staticmethod
    def jvp(ctx, _dim, *ts):
        xs = ctx.fw_args[1:]  # a zero block for an input without a tangent
        return type(ctx).apply(ctx.dim, *[t if t is not None else Tensor._make(np.zeros(x.shape, x.dtype))
                                          for t, x in zip(ts, xs)])

    @staticmethod
    def onnx(e, c):
        return c.add("Concat", [x.name for x in e.args[1:]], c.out(e), axis=int(e.args[0]))


def cat(tensors, dim=0, *, axis=None):
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("cat", dim, axis, default=0)[0]
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("cat(): expected a non-empty list of Tensors")
    fast = _cat_fast(tensors, dim)
    if fast is not None:
        return Cat.apply(fast, *tensors)
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated; "
                               "use stack, or unsqueeze it first")
    # PyTorch's legacy rule: a 1-D empty tensor (shape (0,)) is skipped, whatever the others' shapes
    # (it still takes part in the dtype promotion)
    kept = [x for x in tensors if x.shape != (0,)] or tensors
    ref = kept[0]
    d = _dim(dim, ref.ndim, "cat")
    for i, x in enumerate(tensors):
        if (x.shape != (0,) or len(kept) == len(tensors)) and (x.ndim != ref.ndim
                          or any(a != b for j, (a, b) in enumerate(zip(x.shape, ref.shape)) if j != d)):
            raise RuntimeError(f"cat: Sizes of tensors must match except in dimension {d}: tensor 0 has "
                               f"shape {ref.shape} but tensor {i} has shape {x.shape}")
    dt = tensors[0]._data.dtype
    if all(x._data.dtype == dt for x in tensors):  # nothing to promote (the common case: a KV cache)
        return Cat.apply(d, *kept)
    from .elementwise import _cast_to
    from .. import _dtype
    dt = tensors[0].dtype
    for x in tensors[1:]:
        dt = _dtype.result_type(np.empty((1,), dt), x._data)
    return Cat.apply(d, *[_cast_to(x, dt) for x in kept])


concat = concatenate = cat


def _cat_fast(tensors, dim):
    """cat's checks for the common call (a KV cache's cat([cache, new], dim) per token): plain Tensors
    (not a vmap BatchedTensor, whose logical shape is not its array's) of one dtype and rank >= 1,
    equal shapes except along an int dim in range, none the legacy 1-D empty one. The normalised
    dim, or None: the general path (which also raises the errors)."""
    x = tensors[0]
    if type(x) is not Tensor or type(dim) is not int:
        return None
    a = x._data
    ref, dt = a.shape, a.dtype
    n = len(ref)
    if not -n <= dim < n or ref == (0,):
        return None
    d = dim % n
    head, tail = ref[:d], ref[d + 1:]
    for x in tensors:
        if type(x) is not Tensor:
            return None
        a = x._data
        s = a.shape
        if a.dtype != dt or len(s) != n or s[:d] != head or s[d + 1:] != tail or s == (0,):
            return None
    return d


def stack(tensors, dim=0, *, axis=None):
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("stack", dim, axis, default=0)[0]
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {tensors[0].shape} "
                               f"at entry 0 and {x.shape} at entry {i}")
    d = _dim(dim, tensors[0].ndim + 1, "stack")
    from .elementwise import _cast_to
    from .. import _dtype
    dt = tensors[0].dtype
    for x in tensors[1:]:
        dt = _dtype.result_type(np.empty((1,), dt), x._data)
    return Stack.apply(d, *[_cast_to(x, dt) for x in tensors])


class Stack(Function):
    """out = stack(xs, dim) (a new dim);  dx_i = g.select(dim, i)"""
    batching = "stack"

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.dim = dim
        return _c_order(np.stack(xs, axis=dim))

    @staticmethod
    def backward(ctx, g):
        d = ctx.dim
        return (None,) + tuple(g[(slice(None),) * d + (i,)] if need else None
                               for i, need in enumerate(ctx.needs_input_grad[1:]))

    @staticmethod
    def jvp(ctx, _dim, *ts):
        xs = ctx.fw_args[1:]  # a zero block for an input without a tangent
        return type(ctx).apply(ctx.dim, *[t if t is not None else Tensor._make(np.zeros(x.shape, x.dtype))
                                          for t, x in zip(ts, xs)])

    @staticmethod
    def onnx(e, c):
        dim, xs = int(e.args[0]), e.args[1:]
        if dim < 0:
            dim += len(e.outvars[0].shape)
        ax = c.ints([dim])
        return c.add("Concat", [c.add("Unsqueeze", [x.name, ax]) for x in xs], c.out(e), axis=dim)


@_accepts_axis
def narrow(input, dim, start, length):
    d = _dim(dim, input.ndim, "narrow")
    if start < 0:
        start += input.shape[d]
    if not (0 <= start and start + length <= input.shape[d]):
        raise IndexRangeError(f"narrow: start ({start}) + length ({length}) exceeds dimension size "
                         f"({input.shape[d]}) of a tensor of shape {input.shape}")
    from .indexing import basic_slice
    return basic_slice(input, (slice(None),) * d + (slice(start, start + length),))


def select(input, dim, index):  # noqa: A002
    """The slice of `input` at `index` along `dim`, that dim removed: a view, as torch.select
    (``x.select(1, 2)`` is ``x[:, 2]``; SelectBackward)."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input.ndim, "select")
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"select(): argument 'index' must be int, not {type(index).__name__}")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexRangeError(f"select(): index {index} out of range for tensor of size {list(input.shape)} "
                              f"at dimension {d}")
    return input[(slice(None),) * d + (int(index),)]


def split(tensor, split_size_or_sections, dim=0):
    d = _dim(dim, tensor.ndim, "split")
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s <= 0:
            raise RuntimeError(f"split: split_size must be positive, got {s}")
        sizes = [s] * (n // s) + ([n % s] if n % s else [])
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                               f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    if len(sizes) > 1 and type(tensor) is Tensor and tensor.requires_grad and _function._state.enabled:
        # recorded: one node whose backward is one concatenation (PyTorch's SplitBackward); each
        # piece's own slice node would scatter its gradient into a zero array of the input's size,
        # and the engine would sum those (a Transformer's qkv split: three of them per layer)
        from .recurrent import SplitWithSizes
        outs = SplitWithSizes.apply(tensor, tuple(sizes), d)
        if tensor._base is None:  # in-place ops on a piece write through the input, as narrow's views
            lead, start = (slice(None),) * d, 0
            for o, s in zip(outs, sizes):
                o._view_idx = lead + (slice(start, start + s),)
                start += s
        return tuple(outs)
    from .indexing import basic_slice
    lead = (slice(None),) * d  # narrow's views, without its per-piece checks (the sizes sum to n)
    out, start = [], 0
    for s in sizes:
        out.append(basic_slice(tensor, lead + (slice(start, start + s),)))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0, *, axis=None):
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("chunk", dim, axis, default=0)[0]
    d = _dim(dim, input.ndim, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = -(-input.shape[d] // chunks)
    return split(input, max(size, 1), d)


def unbind(input, dim=0, *, axis=None):
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("unbind", dim, axis, default=0)[0]
    d = _dim(dim, input.ndim, "unbind")
    return tuple(input[(slice(None),) * d + (i,)] for i in range(input.shape[d]))


def _trilu_onnx(upper):
    def onnx(e, c):
        k = int(e.args[1]) if len(e.args) > 1 else 0
        return c.add("Trilu", [c.x(e), c.const(np.asarray(k, np.int64))], c.out(e), upper=upper)
    return staticmethod(onnx)


class Tril(Function):
    """out = tril(x, k);  dx = tril(g, k)"""
    batching = "leading_batch"
    onnx = _trilu_onnx(0)

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return _c_order(np.tril(x, k))

    @staticmethod
    def backward(ctx, g):
        return g.tril(ctx.k), None

    @staticmethod
    def jvp(ctx, t, _k):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent


class Triu(Function):
    """out = triu(x, k);  dx = triu(g, k)"""
    batching = "leading_batch"
    onnx = _trilu_onnx(1)

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return _c_order(np.triu(x, k))

    @staticmethod
    def backward(ctx, g):
        return g.triu(ctx.k), None

    @staticmethod
    def jvp(ctx, t, _k):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent


def tril(input, diagonal=0):
    if input.ndim < 2:
        raise RuntimeError(f"tril: input tensor must have at least 2 dimensions (shape {input.shape})")
    return Tril.apply(input, diagonal)


def triu(input, diagonal=0):
    if input.ndim < 2:
        raise RuntimeError(f"triu: input tensor must have at least 2 dimensions (shape {input.shape})")
    return Triu.apply(input, diagonal)


# -- shape composites: roll, repeat_interleave, meshgrid, Tensor.unfold (composites of the ops above
# and of indexing, so each gradient is theirs and differentiable again) ---------------------------
__all__ += ["roll", "repeat_interleave", "meshgrid"]
__methods__ = ["roll", "repeat_interleave", "unfold"]


def roll(input, shifts, dims=None):  # noqa: A002
    """Elements shifted by `shifts` along `dims`, wrapping around (torch.roll); dims None rolls the
    flattened tensor and restores the shape."""
    if dims is None:
        if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
            raise RuntimeError(f"roll: shifts {tuple(shifts)} need dims of the same length")
        s = shifts[0] if isinstance(shifts, (tuple, list)) else shifts
        return roll(input.reshape(-1), s, 0).reshape(input.shape)
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts and dimensions must align (shifts {shifts}, dims {dims})")
    out = input
    for s, d in zip(shifts, dims):
        d = _dim(d, input.ndim, "roll")
        n = input.shape[d]
        s = s % n if n else 0
        if s:
            out = cat([narrow(out, d, n - s, s), narrow(out, d, 0, n - s)], d)
    return out


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None, axis=None):  # noqa: A002
    """Each element (slice along dim) repeated `repeats` times, an int or one count per element
    (torch.repeat_interleave); dim None flattens first. repeat_interleave(counts) alone gives the
    indices 0, 0, 1, ... repeated by the counts."""
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("repeat_interleave", dim, axis, default=None)[0]
    from .indexing import index_select
    from ..func.vmap import raise_if_batched
    raise_if_batched("repeat_interleave with per-sample repeats", input if repeats is None else repeats)
    if repeats is None:  # torch.repeat_interleave(repeats)
        counts = input._data if isinstance(input, Tensor) else np.asarray(input)
        if counts.ndim > 1 or counts.dtype.kind not in "iu":
            raise RuntimeError(f"repeat_interleave: repeats must be a 0-d or 1-d int tensor, got shape "
                               f"{counts.shape} ({counts.dtype})")
        return repeat_interleave(Tensor._make(np.arange(counts.size)), Tensor._make(counts.reshape(-1)), 0)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _dim(dim, max(x.ndim, 1), "repeat_interleave")
    if x.ndim == 0:
        x = x.reshape(1)
    r = repeats._data if isinstance(repeats, Tensor) else np.asarray(repeats)
    n = x.shape[d]
    if r.ndim > 1 or (r.ndim == 1 and r.size not in (1, n)):
        raise RuntimeError(f"repeat_interleave: repeats must have the same size as input along dim {d} "
                           f"(got {r.size} repeats for size {n})")
    if (r < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    idx = np.repeat(np.arange(n), np.broadcast_to(r.reshape(-1), (n,)))
    return index_select(x, d, Tensor._make(idx.astype(np.int64)))


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 1-D tensors (torch.meshgrid): indexing 'ij' (matrix) or 'xy' (Cartesian:
    the first two dims swapped). Outputs are expanded views, as PyTorch's."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid: expects 0D or 1D tensors, got shape {t.shape}")
    ts = [t.reshape(-1) for t in tensors]
    if indexing == "xy" and len(ts) >= 2:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    k = len(ts)
    grids = [t.reshape(*[-1 if i == j else 1 for i in range(k)]).expand(*shape) for j, t in enumerate(ts)]
    if indexing == "xy" and k >= 2:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def unfold(input, dimension, size, step):  # noqa: A002
    """Tensor.unfold: every window of `size` elements along `dimension`, `step` apart, as a new last
    dim of length size (dimension's length becomes the window count)."""
    from .indexing import index_select
    d = _dim(dimension, max(input.ndim, 1), "unfold")
    x = input.reshape(1) if input.ndim == 0 else input
    n = x.shape[d]
    if size > n:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    count = (n - size) // step + 1
    idx = (np.arange(count)[:, None] * step + np.arange(size)).reshape(-1)
    win = index_select(x, d, Tensor._make(idx.astype(np.int64)))
    win = win.reshape(*x.shape[:d], count, size, *x.shape[d + 1:])
    out = win.permute(*range(d + 1), *range(d + 2, win.ndim), d + 1)
    return out.reshape(size) if input.ndim == 0 else out


# -- NumPy-style composites: movedim, tensor_split and the h/v/d splits and stacks (composites of
# permute, narrow and cat, so every rule is theirs) ------------------------------------------------
__all__ += ["movedim", "moveaxis", "tensor_split", "hsplit", "vsplit", "dsplit",
            "hstack", "vstack", "row_stack", "dstack", "column_stack"]
__methods__ += ["movedim", "moveaxis", "tensor_split", "hsplit", "vsplit", "dsplit"]


def movedim(input, source, destination):  # noqa: A002
    """The dims `source` moved to the positions `destination`, the others kept in order
    (torch.movedim; moveaxis is its NumPy name)."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
                           f"the same number of dims as destination ({dst} dims)")
    n = input.ndim
    src = [_dim(s, max(n, 1), "movedim") for s in src]
    dst = [_dim(d, max(n, 1), "movedim") for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in source {src} or destination {dst}")
    if n == 0:
        return input
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    return permute(input, [o if o is not None else next(rest) for o in order])


moveaxis = movedim


def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002
    """Views of input split along dim (torch.tensor_split): an int n gives n parts, the first
    size % n of them one longer; a list of indices splits before each index (clamped to the size)."""
    d = _dim(dim, input.ndim, "tensor_split")
    n = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [min(max(int(i) if i >= 0 else int(i) + n, 0), n) for i in indices_or_sections] + [n]
    return tuple(narrow(input, d, a, max(b - a, 0)) if b > a else narrow(input, d, min(a, n), 0)
                 for a, b in zip(bounds[:-1], bounds[1:]))


def _split_like_numpy(name, input, sections, dim, min_ndim):  # noqa: A002
    if input.ndim < min_ndim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a "
                           f"tensor with {input.ndim} dimensions!")
    if isinstance(sections, int) and input.shape[dim] % sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                           f"dimension {input.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):  # noqa: A002
    """tensor_split along dim 1 (dim 0 for a 1-D tensor); an int must divide the size (torch.hsplit)."""
    return _split_like_numpy("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input, indices_or_sections):  # noqa: A002
    """tensor_split along dim 0 of a tensor of 2+ dims; an int must divide the size (torch.vsplit)."""
    return _split_like_numpy("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):  # noqa: A002
    """tensor_split along dim 2 of a tensor of 3+ dims; an int must divide the size (torch.dsplit)."""
    return _split_like_numpy("dsplit", input, indices_or_sections, 2, 3)


def _at_least(t, n):
    if t.ndim >= n:
        return t
    if n == 2:
        return t.reshape(1, -1) if t.ndim == 1 else t.reshape(1, 1)
    # n == 3: (k,) -> (1, k, 1), (a, b) -> (a, b, 1), () -> (1, 1, 1)
    return t.reshape(1, -1, 1) if t.ndim == 1 else (t.unsqueeze(-1) if t.ndim == 2 else t.reshape(1, 1, 1))


def hstack(tensors):
    """cat along dim 1 (dim 0 for 1-D tensors) (torch.hstack)."""
    ts = [t.reshape(1) if t.ndim == 0 else t for t in tensors]
    return cat(ts, 0 if ts and ts[0].ndim == 1 else 1)


def vstack(tensors):
    """cat along dim 0 of the tensors made at least 2-D (torch.vstack; row_stack is its alias)."""
    return cat([_at_least(t, 2) for t in tensors], 0)


row_stack = vstack


def dstack(tensors):
    """cat along dim 2 of the tensors made at least 3-D (torch.dstack)."""
    return cat([_at_least(t, 3) for t in tensors], 2)


def column_stack(tensors):
    """cat along dim 1 of the tensors, 0-D and 1-D ones made columns (torch.column_stack)."""
    return cat([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors], 1)


# complex tensors (ops/complex.py): moving values around is linear with real coefficients, so the
# backward is right for complex as written
for _cls in (View, Permute, Expand, Repeat, Flip, Clone, Cat, Stack, Tril, Triu):
    _cls._complex = True
