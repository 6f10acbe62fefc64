"""Tensor: a NumPy array plus the fields autograd needs. Every method is a one-line call into ops."""
import os
import sys
import warnings

import numpy as np

from . import _dtype, _printing
from .device import device as _device, check_device
from ._size import Size as _Size
from . import _memory_format

_tuple_new = tuple.__new__  # Size from a numpy shape (already a tuple of ints): no checks


def _to_array(data, dtype=None):
    """Array for `data` with PyTorch's dtype inference: Python floats -> default dtype, ints -> int64."""
    if isinstance(data, Tensor):
        arr = data._data
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        try:
            arr = np.asarray(data)
        except ValueError:  # NumPy's "inhomogeneous shape" message: say where, as PyTorch does
            raise ValueError(f"tensor: {_ragged(data)}") from None
        if dtype is None:
            if arr.dtype.kind == "f" and arr.dtype == np.float64 and not isinstance(data, np.floating):
                arr = arr.astype(_dtype.get_default_dtype())
            elif arr.dtype.kind in "iu" and not isinstance(data, np.integer) and arr.dtype != np.uint8:
                arr = arr.astype(np.int64)
            elif arr.dtype.kind == "c" and not isinstance(data, np.complexfloating):
                arr = arr.astype(_dtype._default_complex())  # [1+2j]: complex64, as PyTorch
            elif arr.dtype.kind not in "biufc":
                raise TypeError(f"tensor: can't build a tensor from data of dtype {arr.dtype} "
                                f"(type {type(data).__name__})")
    if dtype is not None:
        dtype = np.dtype(dtype)
        if arr.dtype != dtype:
            arr = arr.astype(dtype)
    return arr


def _ragged(data, dim=0):
    """Where a nested list stops being rectangular: PyTorch's "expected sequence of length 2 at dim 1
    (got 1)"."""
    def seq(x):
        return isinstance(x, (list, tuple))
    level = [data]
    while level and all(seq(x) for x in level):
        lengths = [len(x) for x in level]
        if any(n != lengths[0] for n in lengths):
            bad = next(n for n in lengths if n != lengths[0])
            return f"expected sequence of length {lengths[0]} at dim {dim} (got {bad})"
        level, dim = [y for x in level for y in x], dim + 1
    if level and any(seq(x) for x in level):
        return f"expected a number or a sequence at dim {dim}, got a mix of both"
    return "the nested sequences do not form a rectangular array (or hold values that are not numbers)"


def _check_cpu(device, op, meta=False):
    """minigrad computes on the CPU only: any other device is refused, naming the op; with meta=True
    'meta' is accepted too and True is returned for it (the caller makes a shape-only tensor)."""
    return check_device(device, op, meta).type == "meta"


def _meta_error(what):
    return RuntimeError(f"{what}: a meta tensor (device='meta') has a shape and a dtype but no data, so it can't "
                        f"be read or computed with; give the module real tensors (mg.func.functional_call(module, "
                        f"params, args)) or create the tensor on the CPU")


class _MetaArray(np.ndarray):
    """The data of a meta tensor: shape and dtype only (a zero-stride view of one element, so no
    memory for the shape). NumPy's functions and the reading methods refuse it (_meta_error);
    views (reshape, indexing, transpose) stay meta."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _meta_error(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        if func in _META_VIEWS:  # a view of a meta tensor is meta: its shape only changes
            if func is np.broadcast_to:
                kwargs = dict(kwargs, subok=True)
            return super().__array_function__(func, types, args, kwargs)
        raise _meta_error(func.__name__)

    def _refuse(self, *a, **k):
        raise _meta_error("reading values")

    item = tolist = tobytes = __bool__ = __float__ = __int__ = __index__ = __complex__ = _refuse
    __repr__ = __str__ = _refuse


_META_VIEWS = {np.transpose, np.reshape, np.squeeze, np.expand_dims, np.broadcast_to, np.moveaxis, np.swapaxes}


def _meta_array(shape, dtype):
    """A meta tensor's data: `shape` and `dtype`, no storage."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape)).view(_MetaArray)


_TO_SIGNATURES = (
    " * (device device = None, dtype dtype = None, bool non_blocking = False, bool copy = False, "
    "*, memory_format memory_format = None)\n"
    " * (dtype dtype, bool non_blocking = False, bool copy = False, *, memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, memory_format memory_format = None)")
# dtype names Module.to has always taken as strings (NumPy's spellings and PyTorch's aliases)
_TO_DTYPE_NAMES = {"float": "float32", "float32": "float32", "double": "float64", "float64": "float64",
                   "half": "float16", "float16": "float16"}


def _is_to_device(a):
    return isinstance(a, _device) or (isinstance(a, str) and a not in _TO_DTYPE_NAMES) or (
        isinstance(a, int) and not isinstance(a, bool))


def _is_to_dtype(a):
    return isinstance(a, np.dtype) or (isinstance(a, str) and a in _TO_DTYPE_NAMES) or (
        isinstance(a, type) and (issubclass(a, np.generic) or a in (float, int, bool)))


def _parse_to(args, kwargs, op):
    """(device, dtype, non_blocking, copy (None if not given), memory_format) from the arguments of Tensor.to / Module.to,
    by PyTorch's three signatures (torch._C._nn._parse_to); any other combination is a TypeError
    listing them, as PyTorch's."""
    def invalid():
        got = ", ".join([_to_type_name(a) for a in args] + [f"{k}={_to_type_name(v)}" for k, v in kwargs.items()])
        return TypeError(f"{op}() received an invalid combination of arguments - got ({got}), "
                         f"but expected one of:\n{_TO_SIGNATURES}")
    first = args[0] if args else None
    if isinstance(first, Tensor):
        names, given = ("non_blocking", "copy"), {"device": first.device, "dtype": first.dtype}
        rest = args[1:]
    elif args and _is_to_dtype(first):
        names, given, rest = ("dtype", "non_blocking", "copy"), {}, args
    elif first is None or _is_to_device(first):
        names, given, rest = ("device", "dtype", "non_blocking", "copy"), {}, args
    else:
        raise invalid()
    if len(rest) > len(names):
        raise invalid()
    given.update(zip(names, rest))
    for k, v in kwargs.items():
        # a keyword must belong to the signature the first argument chose, and come once
        if (k not in names and k != "memory_format") or k in given:
            raise invalid()
        given[k] = v
    device, dtype = given.get("device"), given.get("dtype")
    non_blocking, copy = given.get("non_blocking", False), given.get("copy")  # copy: None when not given
    fmt = given.get("memory_format")
    if (device is not None and not _is_to_device(device)) or (dtype is not None and not _is_to_dtype(dtype)) \
            or not isinstance(non_blocking, bool) or not isinstance(copy, (bool, type(None))) \
            or (fmt is not None and not isinstance(fmt, _memory_format.memory_format)):
        raise invalid()
    if isinstance(dtype, str):
        dtype = _TO_DTYPE_NAMES[dtype]
    return device, (None if dtype is None else np.dtype(dtype)), non_blocking, copy, fmt


def _to_type_name(a):
    if isinstance(a, np.dtype):
        return "dtype"
    if isinstance(a, _memory_format.memory_format):
        return "memory_format"
    return type(a).__name__


def _viewable(oldshape, oldstride, newshape):
    """Whether `newshape` can be a view of an array of `oldshape`/`oldstride` (PyTorch's rule,
    aten/src/ATen/TensorUtils.cpp computeStride): each run of old dims that are contiguous among
    themselves (a "chunk") must be split/merged into new dims exactly, never one new dim across two
    chunks. Size-1 dims don't break a chunk; strides may be in bytes (the rule is scale-free)."""
    if not oldshape:
        return True
    numel = 1
    for n in oldshape:
        numel *= n
    if numel == 0:
        return True
    view_d = len(newshape) - 1
    chunk_base = oldstride[-1]
    tensor_numel = view_numel = 1
    for d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[d]
        if d == 0 or (oldshape[d - 1] != 1 and oldstride[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                chunk_base = oldstride[d - 1]
                tensor_numel = view_numel = 1
    return view_d == -1


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Args:
        data: array-like (list, number, ndarray or Tensor); not copied when already an ndarray.
        dtype: a minigrad/NumPy dtype; inferred as PyTorch does when None.
        requires_grad: record operations on this tensor so backward() can compute its gradient.

    Example:
        >>> a = mg.tensor(2.0, requires_grad=True)
        >>> (a * a).backward(); a.grad
        tensor(4.)
    """

    # hot fields live in slots; rarely-set ones default at class level and go to the instance
    # __dict__ only when set (a tensor is created per op, so creation cost is the per-op overhead)
    __slots__ = ("_data", "requires_grad", "grad_fn", "_output_nr", "_vc", "__dict__", "__weakref__")
    _wrapped_number = False  # True for the constants minigrad makes of Python numbers (autograd/function.py)
    __array_priority__ = 1000  # so ndarray <op> Tensor defers to Tensor's reflected operators
    _grad = None          # the accumulated gradient (read through .grad)
    _hooks = None         # hooks of a leaf (a non-leaf's hooks live on its grad_fn)
    _post_acc_hooks = None  # a leaf's hooks run after its gradient is accumulated into .grad
    _acc = None           # this leaf's AccumulateGrad node (made on first use)
    _base = None          # the tensor this one is a view of
    _view_idx = None      # the basic index that made this view from _base
    _graph_ver = 0        # a view's version when its grad_fn was last valid (see _fresh_view)
    _retains_grad = False
    _why = None           # why this tensor has no graph: ("detach" | "no_grad" | ..., site) (debug/_why.py)

    def __init__(self, data, dtype=None, requires_grad=False):
        self._data = _to_array(data, dtype)
        self.grad_fn = None
        self._output_nr = 0
        self._vc = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _make(data, requires_grad=False, grad_fn=None, output_nr=0):
        t = _new(Tensor)
        t._data = data
        t.requires_grad = requires_grad
        t.grad_fn = grad_fn
        t._output_nr = output_nr
        t._vc = None
        return t

    # -- the values ----------------------------------------------------------------------------
    @property
    def data(self):
        """A tensor sharing this one's memory, cut from the graph, with its own version counter:
        writes through it are deliberately not seen by autograd (PyTorch's documented escape hatch,
        `p.data.add_(...)`). Internals hold the NumPy array as `_data`."""
        return Tensor._make(self._data)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data: expected a Tensor, got {type(value).__name__}")
        self._data = value._data

    # -- autograd fields ------------------------------------------------------------------------
    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
                "non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of shape {value.shape} which does not "
                                   f"match the tensor's shape {self.shape}")
        self._grad = value

    @property
    def _version(self):
        return self._vc[0] if self._vc else 0

    def _bump_version(self):
        """Record a write into .data (in-place ops, optimizer steps): a backward that saved the old
        value then raises instead of silently using the new one. The counter is shared with views."""
        if _function._state.tracer is not None:  # mg.graph.trace: a write no op recorded is a graph break
            _function._state.tracer.bumped(self)
        if self._vc is None:
            self._vc = [0]
        self._vc[0] += 1

    def requires_grad_(self, requires_grad=True):
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients "
                               f"(got {self._data.dtype})")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self):
        """Keep .grad for this non-leaf tensor after backward (a no-op on leaves)."""
        if self.grad_fn is None or self._retains_grad:
            return
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        self._retains_grad = True
        self._retain_handle = self.grad_fn.register_prehook(self._output_nr, _retain_hook(self))

    def register_hook(self, hook):
        """Call hook(grad) when this tensor's gradient is computed; a returned Tensor replaces it."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn.register_prehook(self._output_nr, hook)
        from .autograd.function import _RemovableHandle
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call hook(tensor) after this leaf's gradient has been accumulated into .grad, as PyTorch.

        The hook returns None (it may read or modify ``tensor.grad`` in place); it does not run for
        ``autograd.grad``, which accumulates nothing. Returns a handle with ``remove()``.
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        from .autograd.function import _RemovableHandle
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        self._post_acc_hooks.append(hook)
        return _RemovableHandle(self._post_acc_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's .grad (PyTorch's Tensor.backward)."""
        if retain_graph is None:
            retain_graph = create_graph
        if inputs is not None:
            inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if "backward" in _observers._events:
            _observers.emit("backward", self, "begin")
            _engine.run_backward([self], [gradient], retain_graph, create_graph, inputs=inputs)
            _observers.emit("backward", self, "end")
            return
        _engine.run_backward([self], [gradient], retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A new tensor sharing this one's data, cut from the graph."""
        t = Tensor._make(self._data)
        if self._vc is None:
            self._vc = [0]
        t._vc = self._vc
        if self.requires_grad:  # remember where the user cut the graph (the gradient doctor says so)
            f = _getframe(1)
            if not f.f_code.co_filename.startswith(_PKG):
                t._why = ("detach", (f.f_code, f.f_lineno))
                _grad_mode._keep_marking()
        if "detach" in _observers._events:
            _observers.emit("detach", self, t)
        return t

    def detach_(self):
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError("detach_: can't detach a view of a tensor that requires grad in place; use detach()")
        self.grad_fn = None
        self.requires_grad = False
        return self

    # -- metadata -------------------------------------------------------------------------------
    @property
    def shape(self):
        """The tensor's shape as an mg.Size (a tuple: ``x.shape == (2, 3)``)."""
        return _tuple_new(_Size, self._data.shape)

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def ndim(self):
        return self._data.ndim

    @property
    def device(self):
        """mg.device('cpu') (minigrad computes with NumPy on the CPU), or mg.device('meta') for a
        shape-only tensor (made with device='meta' or moved by .to('meta'))."""
        from .device import CPU, META
        return META if type(self._data) is _MetaArray else CPU

    @property
    def is_meta(self):
        """Whether this is a meta (shape-only) tensor."""
        return type(self._data) is _MetaArray

    @property
    def is_cpu(self):
        """Whether the data is on the CPU (every tensor but a meta one)."""
        return type(self._data) is not _MetaArray

    is_cuda = is_xpu = is_mps = False  # PyTorch's device tests, for scripts that branch on them

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def size(self, dim=None):
        """The shape as an mg.Size, or the length of dimension ``dim`` (an int)."""
        if dim is None:
            return _tuple_new(_Size, self._data.shape)
        return self._data.shape[dim]

    def dim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    def element_size(self):
        return self._data.itemsize

    def is_contiguous(self):
        # the array's C order: a transpose or a strided slice is not, a broadcast (expand) is not
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim=None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        if dim is None:
            return strides
        if not -len(strides) <= dim < max(len(strides), 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(len(strides), 1)}, {max(len(strides), 1) - 1}], but got {dim})")
        return strides[dim]

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, "iterating over a tensor")
        return iter(self.unbind(0))

    __hash__ = object.__hash__  # identity, as PyTorch (== is elementwise); in C: tensors key dicts on hot paths

    def __reduce__(self):
        """Pickle/copy the values (and .grad) of a leaf; the graph can't cross a process boundary."""
        if self.grad_fn is not None:
            raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
                               "autograd does not support crossing process boundaries. If you just want "
                               "to transfer the data, call detach() on the tensor before serializing.")
        return (_rebuild_leaf, (type(self), self._data, self.requires_grad, self._grad))

    def __bool__(self):
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, "bool()")
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous "
                               f"(shape {self.shape})")
        return bool(self._data)

    def __float__(self):
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, "float()")
        value = float(self._data.item() if self._data.size == 1 else self.item())
        if "to_python" in _observers._events:
            _observers.emit("to_python", self, "float", value)
        return value

    def __complex__(self):
        return complex(self.item())

    def __int__(self):
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, "int()")
        value = int(self._data.item() if self._data.size == 1 else self.item())
        if "to_python" in _observers._events:
            _observers.emit("to_python", self, "int", value)
        return value

    def __format__(self, format_spec):
        # as PyTorch: a 0-d tensor formats as its Python scalar, so f"{loss:.4f}" works; anything
        # else goes to object.__format__ (str() for an empty spec, TypeError otherwise)
        if self._data.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __index__(self):
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, "using a tensor as an index")
        return int(self._data)

    # -- conversion -----------------------------------------------------------------------------
    def item(self):
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, ".item()")
        if self._data.size != 1:
            raise RuntimeError(f"item: a Tensor with {self._data.size} elements cannot be converted to "
                               f"a Python scalar (shape {self.shape})")
        value = self._data.item()
        if "to_python" in _observers._events:
            _observers.emit("to_python", self, "item", value)
        return value

    def tolist(self):
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, ".tolist()")
        value = self._data.tolist()
        if "to_python" in _observers._events:
            _observers.emit("to_python", self, "tolist", value)
        return value

    def numpy(self):
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, ".numpy()")
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if type(self._data) is _MetaArray:
            raise _meta_error("numpy()")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, "np.asarray() (__array__)")
        arr = self._data
        if type(arr) is _MetaArray:
            raise _meta_error("np.asarray()")
        if dtype is not None and arr.dtype != dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def to(self, *args, **kwargs):
        """to(dtype, non_blocking=False, copy=False, *, memory_format=None),
        to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None),
        to(other, non_blocking=False, copy=False, *, memory_format=None): PyTorch's three forms.

        Casts to ``dtype`` (differentiable); returns self when nothing changes and ``copy`` is
        False, else a new tensor. The device 'cpu' (a string, ``mg.device`` or ``other.device``)
        changes nothing and any other device is refused (minigrad runs on the CPU only);
        ``non_blocking`` is accepted and has no effect; ``memory_format=mg.contiguous_format`` gives
        C-contiguous data when a copy is made.
        """
        device, dtype, _non_blocking, copy, fmt = _parse_to(args, kwargs, "Tensor.to")
        meta = _check_cpu(device, "Tensor.to", meta=True)
        _memory_format.check_rank(fmt, self.ndim)
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        if meta or type(self._data) is _MetaArray:
            if not meta and device is not None:
                raise _meta_error("Tensor.to('cpu')")  # PyTorch: "Cannot copy out of meta tensor; no data!"
            if meta and type(self._data) is _MetaArray and dtype == self.dtype and not copy:
                return self
            return Tensor._make(_meta_array(self.shape, dtype)).requires_grad_(self.requires_grad and dtype.kind == "f")
        if dtype == self.dtype and not copy:
            return self  # PyTorch's to() aliases whenever dtype and device are unchanged and copy is False
        out = _ops.elementwise.ToCopy.apply(self, dtype)  # NumPy's astype keeps the layout: preserve_format
        return _ops.contiguous(out) if fmt is _memory_format.contiguous_format else out

    def type_as(self, other):
        return _ops.cast(self, other.dtype)

    def float(self):
        return _ops.cast(self, _dtype.float32)

    def double(self):
        return _ops.cast(self, _dtype.float64)

    def half(self):
        return _ops.cast(self, _dtype.float16)

    def long(self):
        return _ops.cast(self, _dtype.int64)

    def int(self):
        return _ops.cast(self, _dtype.int32)

    def bool(self):
        return _ops.cast(self, _dtype.bool_)

    def cpu(self):
        return self

    def __repr__(self):
        """PyTorch's format (see mg.set_printoptions): `tensor([1.0000, 2.5000], requires_grad=True)`."""
        if type(self._data) is _MetaArray:  # as PyTorch: tensor(..., device='meta', size=(2, 3))
            extra = "" if self.dtype == _dtype.get_default_dtype() else f", dtype=minigrad.{self.dtype}"
            grad = ", requires_grad=True" if self.requires_grad and self.grad_fn is None else ""
            return f"tensor(..., device='meta', size={tuple(self.shape)}{extra}{grad})"
        return _printing.tensor_repr(self)

    # -- arithmetic -----------------------------------------------------------------------------
    def __radd__(self, other): return _ops.add(other, self)
    def __rsub__(self, other): return _ops.sub(other, self)
    def __rmul__(self, other): return _ops.mul(other, self)
    def __rtruediv__(self, other): return _ops.div(other, self)
    def __pow__(self, other): return _ops.pow(self, other)
    def __rpow__(self, other): return _ops.pow(other, self)
    def __rmatmul__(self, other): return _ops.matmul(other, self)
    def __floordiv__(self, other): return _ops.floor_divide(self, other)
    def __rfloordiv__(self, other): return _ops.floor_divide(other, self)
    def __mod__(self, other): return _ops.remainder(self, other)
    def __rmod__(self, other): return _ops.remainder(other, self)
    def __neg__(self): return _ops.neg(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.abs(self)
    def __invert__(self): return _ops.bitwise_not(self)
    # another kind of object (None, a str, a list) is not compared elementwise: NotImplemented lets
    # Python fall back to identity, so t == None is False and t != None True, as in PyTorch
    def __eq__(self, other):
        return _ops.eq(self, other) if isinstance(other, _CMP_OPERANDS) else NotImplemented

    def __ne__(self, other):
        return _ops.ne(self, other) if isinstance(other, _CMP_OPERANDS) else NotImplemented
    def __lt__(self, other): return _ops.lt(self, other)
    def __le__(self, other): return _ops.le(self, other)
    def __gt__(self, other): return _ops.gt(self, other)
    def __ge__(self, other): return _ops.ge(self, other)
    # bitwise on integers (integer dtype), logical on bool, as PyTorch
    def __and__(self, other): return _ops.bitwise_and(self, other)
    def __or__(self, other): return _ops.bitwise_or(self, other)
    def __xor__(self, other): return _ops.bitwise_xor(self, other)
    def __rand__(self, other): return _ops.bitwise_and(other, self)
    def __ror__(self, other): return _ops.bitwise_or(other, self)
    def __rxor__(self, other): return _ops.bitwise_xor(other, self)
    def __lshift__(self, other): return _ops.bitwise_left_shift(self, other)
    def __rlshift__(self, other): return _ops.bitwise_left_shift(other, self)
    def __rshift__(self, other): return _ops.bitwise_right_shift(self, other)
    def __rrshift__(self, other): return _ops.bitwise_right_shift(other, self)
    def __getitem__(self, index): return _ops.getitem(self, index)
    def __setitem__(self, index, value): _ops.setitem(self, index, value)

    # Most methods are their op with self as `input` (same arguments, keywords and aliases): they
    # are bound below the class (_METHODS). Here: the ones whose arguments differ from the function.
    def where(self, condition, other): return _ops.where(condition, self, other)
    def view_as(self, other): return _ops.reshape(self, other.shape)
    def reshape_as(self, other): return _ops.reshape(self, other.shape)
    @property
    def T(self): return _ops.permute(self, *reversed(range(self.ndim)))
    @property
    def mT(self):
        if self.ndim < 2:  # PyTorch's error (transpose's IndexError before)
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return _ops.transpose(self, -2, -1)

    # the conjugate transposes (the transposes for real dtypes)
    @property
    def mH(self):
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return _ops.conj(_ops.transpose(self, -2, -1))

    @property
    def H(self):
        if self.ndim == 0:
            return self
        if self.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
        return _ops.conj(_ops.transpose(self, 0, 1))

    # complex tensors: the parts as views (a real tensor's real is itself; its imag raises)
    @property
    def real(self): return _ops.real(self)
    @property
    def imag(self): return _ops.imag(self)
    def expand_as(self, other): return _ops.expand(self, *other.shape)
    def split(self, split_size, dim=0): return _ops.split(self, split_size, dim)

    def view(self, *shape, dtype=None):
        """view(*shape): the same data in a new shape; view(dtype): the same bytes read as ``dtype``.

        As strict as PyTorch's: a shape that cannot be expressed on this tensor's strides (merging
        dims that are not contiguous among themselves, e.g. ``x.T.view(-1)``) raises RuntimeError;
        use ``reshape`` (which copies when it must). A non-contiguous tensor can still be viewed
        where the merged dims are contiguous among themselves (PyTorch's computeStride rule).

        A dtype view shares memory and is not differentiable (as in PyTorch). With a different
        element size the last dimension must be contiguous and its byte length divisible by the
        new element size; it is rescaled (int64 (2, 3) viewed as int32 is (2, 6))."""
        if dtype is None and len(shape) == 1 and _is_dtype(shape[0]):
            dtype = shape[0]
        if dtype is not None:
            return _view_dtype(self, np.dtype(dtype))
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        data = self._data
        if not data.flags.c_contiguous and data.shape == tuple(self.shape):  # (a vmap BatchedTensor: its logical shape)
            from .ops.shape import _infer_shape
            new = _infer_shape(tuple(shape), self)
            if not _viewable(data.shape, data.strides, new):
                raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                                   "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return _ops.view(self, *shape)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """type(): the type name, ``'minigrad.FloatTensor'`` (PyTorch's ``'torch.FloatTensor'``
        with the package's name); type(dtype): this tensor cast to ``dtype`` (a dtype, or a name
        such as ``'minigrad.DoubleTensor'`` / ``'torch.DoubleTensor'``); itself when already so."""
        if dtype is None:
            name = _TYPE_NAMES.get(self._data.dtype)
            if name is None:
                raise TypeError(f"type: no tensor type name for dtype {self._data.dtype}")
            return "minigrad." + name
        if isinstance(dtype, str):
            pkg, _, tname = dtype.rpartition(".")
            target = {v: k for k, v in _TYPE_NAMES.items()}.get(tname)
            if target is None or pkg not in ("minigrad", "torch"):
                raise ValueError(f"type: invalid type {dtype!r} (expected e.g. 'minigrad.FloatTensor'; "
                                 f"minigrad has CPU tensors only)")
            dtype = target
        return _ops.cast(self, dtype)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        """A new tensor of ``data`` (copied) with this tensor's dtype unless ``dtype`` is given."""
        _check_cpu(device, "Tensor.new_tensor")
        arr = np.array(data._data if isinstance(data, Tensor) else data, dtype=dtype or self._data.dtype)
        return Tensor(arr, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype unless given."""
        _check_cpu(device, "Tensor.new_full")
        return Tensor(np.full(tuple(size), fill_value, dtype=dtype or self._data.dtype), requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """Zeros of ``size`` (``new_zeros(2, 3)`` or ``new_zeros((2, 3))``), this tensor's dtype unless given."""
        return self.new_full(_size_args(size), 0, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """Ones of ``size``, with this tensor's dtype unless ``dtype`` is given."""
        return self.new_full(_size_args(size), 1, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        """An uninitialised tensor of ``size``, with this tensor's dtype unless ``dtype`` is given."""
        _check_cpu(device, "Tensor.new_empty")
        return Tensor(np.empty(_size_args(size), dtype=dtype or self._data.dtype), requires_grad=requires_grad)

    # -- in-place -------------------------------------------------------------------------------
    def add_(self, other, *args, alpha=1):
        if args:  # the deprecated add_(Number alpha, Tensor other), with PyTorch's warning
            from .ops.elementwise import _deprecated_overload
            alpha, other = _deprecated_overload("add_", (other,), args)
        return _ops.inplace(self, _ops.add, other if alpha == 1 else other * alpha, name="add_")

    def sub_(self, other, *args, alpha=1):
        if args:  # the deprecated sub_(Number alpha, Tensor other), with PyTorch's warning
            from .ops.elementwise import _deprecated_overload
            alpha, other = _deprecated_overload("sub_", (other,), args)
        return _ops.inplace(self, _ops.sub, other if alpha == 1 else other * alpha, name="sub_")
    def mul_(self, other): return _ops.inplace(self, _ops.mul, other, name="mul_")
    def div_(self, other): return _ops.inplace(self, _ops.div, other, name="div_")
    def pow_(self, exponent): return _ops.inplace(self, _ops.pow, exponent, name="pow_")
    def clamp_(self, min=None, max=None): return _ops.inplace(self, _ops.clamp, min, max, name="clamp_")
    clip_ = clamp_
    def masked_fill_(self, mask, value): return _ops.inplace(self, _ops.masked_fill, mask, value, name="masked_fill_")
    def zero_(self): return _ops.fill_(self, 0, name="zero_")
    def fill_(self, value): return _ops.fill_(self, value, name="fill_")
    def copy_(self, src): return _ops.copy_(self, src)

    # in-place draws, as PyTorch's (w.data.normal_(0, 0.02) in ported init code): the draw is an op
    # of ops.random, so mg.graph.trace draws afresh, written through copy_ (a leaf that requires grad is
    # refused outside no_grad, as PyTorch)
    def uniform_(self, from_=0.0, to=1.0, *, generator=None):
        from .ops.random import Uniform
        return _ops.copy_(self, Uniform.apply(tuple(self.shape), self.dtype, float(from_), float(to), generator))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        from .ops.random import Normal
        return _ops.copy_(self, Normal.apply(tuple(self.shape), self.dtype, float(mean), float(std), generator))

    def bernoulli_(self, p=0.5, *, generator=None):
        from .ops.random import Uniform
        u = Uniform.apply(tuple(self.shape), _dtype.float64, 0.0, 1.0, generator)
        return _ops.copy_(self, _ops.cast(u < p, self.dtype))
    def sqrt_(self): return _ops.sqrt_(self)
    def lerp_(self, end, weight): return _ops.lerp_(self, end, weight)
    def addcmul_(self, tensor1, tensor2, *args, value=1):
        if args:  # the deprecated addcmul_(Number value, Tensor tensor1, Tensor tensor2)
            from .ops.elementwise import _deprecated_overload
            value, tensor1, tensor2 = _deprecated_overload("addcmul_", (tensor1,), (tensor2,) + args, "value")
        return _ops.addcmul_(self, tensor1, tensor2, value)

    def addcdiv_(self, tensor1, tensor2, *args, value=1):
        if args:  # the deprecated addcdiv_(Number value, Tensor tensor1, Tensor tensor2)
            from .ops.elementwise import _deprecated_overload
            value, tensor1, tensor2 = _deprecated_overload("addcdiv_", (tensor1,), (tensor2,) + args, "value")
        return _ops.addcdiv_(self, tensor1, tensor2, value)
    def __iadd__(self, other): return self.add_(other)
    def __isub__(self, other): return self.sub_(other)
    def __imul__(self, other): return self.mul_(other)
    def __itruediv__(self, other): return self.div_(other)
    def __ipow__(self, other): return self.pow_(other)


_new = object.__new__
_CMP_OPERANDS = (Tensor, int, float, np.ndarray, np.generic)  # what == / != compare elementwise
_getframe = sys._getframe
_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep


_TYPE_NAMES = {np.dtype(k): v for k, v in (
    ("float32", "FloatTensor"), ("float64", "DoubleTensor"), ("float16", "HalfTensor"), ("int64", "LongTensor"),
    ("int32", "IntTensor"), ("int16", "ShortTensor"), ("int8", "CharTensor"), ("uint8", "ByteTensor"),
    ("bool", "BoolTensor"))}


def _shape_of(t):
    """t.shape as a plain tuple, without making a Size (for checks on hot paths): its array's shape,
    except inside vmap, where a BatchedTensor's array holds the whole batch (func/vmap.py)."""
    d = t._data
    return d.shape if type(d) is np.ndarray else tuple(t.shape)


def _is_dtype(a):
    return isinstance(a, (np.dtype, str)) or (isinstance(a, type) and issubclass(a, (np.generic, float, int, bool)))


def _size_args(size):
    """new_zeros(2, 3) and new_zeros((2, 3)) -> (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _view_dtype(t, dtype):
    """t's bytes read as dtype (Tensor.view(dtype)): shares memory and version counter, no graph."""
    arr = t._data
    old, new = arr.dtype.itemsize, dtype.itemsize
    if old != new:
        what = f"to view {arr.dtype} as {dtype} (different element sizes)"
        if arr.ndim == 0:
            raise RuntimeError(f"view: self.dim() cannot be 0 {what}")
        if arr.shape[-1] != 1 and arr.strides[-1] != old:
            raise RuntimeError(f"view: self.stride(-1) must be 1 {what}, but got {arr.strides[-1] // old}")
        if new > old and (arr.shape[-1] * old) % new:
            raise RuntimeError(f"view: self.size(-1) must be divisible by {new // old} {what}, "
                               f"but got {arr.shape[-1]}")
        if arr.shape[-1] != 1 and any(st % new for st in arr.strides[:-1]):
            raise RuntimeError(f"view: self.stride(k) must be divisible by {new // old} for k < self.dim() - 1 "
                               f"{what} (shape {t.shape})")
    if arr.ndim and arr.strides[-1] != old and old != new:
        arr = np.lib.stride_tricks.as_strided(arr, strides=arr.strides[:-1] + (old,))  # a size-1 last dim
    out = Tensor._make(arr.view(dtype))
    if t._vc is None:
        t._vc = [0]
    out._vc = t._vc
    return out


def _rebuild_leaf(cls, data, requires_grad, grad):
    if type(data) is _MetaArray:  # a meta tensor's copy is meta too
        data = _meta_array(data.shape, data.dtype)
        t = cls(np.zeros(data.shape, data.dtype), requires_grad=requires_grad)
        t._data = data
        t._grad = grad
        return t
    t = cls(data, requires_grad=requires_grad) if cls is not Tensor else Tensor(data, requires_grad=requires_grad)
    t._grad = grad
    return t


def _retain_hook(t):
    """The hook retain_grad() puts on t's node: stores a copy of t's gradient in t.grad."""
    import weakref
    ref = weakref.ref(t)

    def hook(g):
        t = ref()
        if t is not None:
            if t._grad is None:
                # a copy: g itself flows on through the graph and may be handed to a leaf
                t._grad = g if g.requires_grad else Tensor._make(g._data.copy())
            else:
                t._grad = t._grad + g
    return hook

from . import ops as _ops  # noqa: E402  (ops import Tensor; the methods above look them up at call time)
from .autograd import function as _function  # noqa: E402  (its _state.tracer: the mg.graph.trace level)
from .autograd import observers as _observers  # noqa: E402
from .autograd import grad_mode as _grad_mode  # noqa: E402
from .autograd import engine as _engine  # noqa: E402

# Methods that are their op with self as `input`: Tensor.sum is mg.sum, so a method takes exactly
# the function's arguments (PyTorch's keyword names, axis=/keepdims= aliases) and costs no extra call.
_METHODS = """
add sub mul div pow neg abs exp log log1p expm1 sqrt rsqrt reciprocal sin cos tan tanh sigmoid relu erf sign floor
ceil round clamp clip maximum minimum eq ne lt le gt ge logical_and logical_or logical_not logical_xor bitwise_and
bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift isnan isinf isfinite floor_divide remainder
fmod equal lerp addcmul addcdiv
sum mean var std prod max min amax amin argmax argmin logsumexp norm cumsum softmax log_softmax any all
sort argsort msort topk kthvalue median nanmedian mode unique
reshape flatten unflatten squeeze unsqueeze transpose swapaxes permute t expand broadcast_to repeat flip narrow
select contiguous clone chunk unbind tril triu
gather scatter_add index_select masked_fill take_along_dim
matmul mm bmm dot outer diagonal diag_embed diag trace kron cross
""".split()
for _name in _METHODS:
    setattr(Tensor, _name, getattr(_ops, _name))

# The in-place forms PyTorch has (x.exp_(), x.eq_(y), x.tril_()): op(self, ...) written into self.
_INPLACE = """
abs neg exp log log1p expm1 rsqrt reciprocal sin cos tan tanh sigmoid relu erf sign floor ceil round
atan2 arctan2 floor_divide remainder fmod eq ne lt le gt ge logical_and logical_or logical_not logical_xor
bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift cumsum tril triu
""".split()


def _inplace_method(name):
    op = getattr(_ops, name)

    def method(self, *args, **kwargs):
        return _ops.inplace(self, (lambda a, *r: op(a, *r, **kwargs)) if kwargs else op, *args, name=name + "_")
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place {name}: writes {name}(self, ...) into self."
    return method


for _name in _INPLACE:
    if not hasattr(Tensor, _name + "_"):
        setattr(Tensor, _name + "_", _inplace_method(_name))


def _shape_inplace_method(name):
    """x.unsqueeze_(0), x.t_(), ...: x becomes the view op(x, ...) (same memory, new shape) and takes its
    place in the graph, as PyTorch's in-place shape ops."""
    op = getattr(_ops, name)

    def method(self, *args, **kwargs):
        if _function._state.tracer is not None:
            _function._state.tracer.convert(self, f"Tensor.{name}_ (an in-place change of shape)")
        if self.requires_grad and self.grad_fn is None and _grad_mode.is_grad_enabled():
            raise RuntimeError(f"{name}_: a leaf Variable that requires grad is being used in an in-place "
                               f"operation (shape {self.shape}).")
        res = op(self, *args, **kwargs)
        self._data = res._data
        if res.grad_fn is not None:
            from .ops.inplace import _rebase
            _rebase(self, res)
        self._bump_version()  # a backward that saved self sees the change
        return self
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place {name}: self takes the shape of {name}(self, ...) (its data is not copied)."
    return method


for _name in ("squeeze", "unsqueeze", "t", "transpose", "swapaxes"):
    setattr(Tensor, _name + "_", _shape_inplace_method(_name))
del _name

# The hottest operators are bound straight to their op wrappers: one Python call fewer per op.
Tensor.__add__ = _ops.add
Tensor.__sub__ = _ops.sub
Tensor.__mul__ = _ops.mul
Tensor.__truediv__ = _ops.div
Tensor.__matmul__ = _ops.matmul
