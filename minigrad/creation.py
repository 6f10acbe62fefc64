"""Tensor creation: mg.tensor, zeros, ones, arange, rand, ... (PyTorch's names and defaults)."""
import numpy as np

from . import _dtype
from .autograd import observers as _observers
from .ops.random import Rand, Randint, Randn, Randperm
from .tensor import Tensor, _check_cpu, _to_array


def _size(size, op="tensor"):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(size)
    for n in size:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{op}: size must be a tuple of ints, got {list(size)}")
        if n < 0:
            raise RuntimeError(f"{op}: trying to create a tensor with negative dimension {n}: {list(size)}")
    return size


def _float_dtype(dtype):
    return np.dtype(dtype) if dtype is not None else _dtype.get_default_dtype()


def _out(arr, requires_grad):
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _drawn(t, requires_grad):
    """A random op's output as the new leaf (requires_grad as asked)."""
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, dtype=None, requires_grad=False, device=None):
    """A new leaf tensor holding a copy of data (float data -> float32 by default, ints -> int64)."""
    _check_cpu(device, "tensor")
    arr = _to_array(data, dtype)
    if isinstance(data, (np.ndarray, Tensor)) or arr is data:
        arr = arr.copy()
    t = _out(arr, requires_grad)
    if "tensor" in _observers._events:
        _observers.emit("tensor", t, data)
    return t


def as_tensor(data, dtype=None, device=None):
    _check_cpu(device, "as_tensor")
    return Tensor(data, dtype)


def from_numpy(arr):
    """A tensor sharing memory with the NumPy array arr (changes to one show in the other)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(arr).__name__})")
    return Tensor._make(arr)


def _meta(shape, dtype, requires_grad):
    """A meta (shape-only) tensor: device='meta', as PyTorch's; it refuses to be read or computed with."""
    from .tensor import _meta_array
    return _out(_meta_array(shape, dtype), requires_grad)


def zeros(*size, dtype=None, requires_grad=False, device=None):
    if _check_cpu(device, "zeros", meta=True):
        return _meta(_size(size, "zeros"), _float_dtype(dtype), requires_grad)
    return _out(np.zeros(_size(size, "zeros"), _float_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad=False, device=None):
    if _check_cpu(device, "ones", meta=True):
        return _meta(_size(size, "ones"), _float_dtype(dtype), requires_grad)
    return _out(np.ones(_size(size, "ones"), _float_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, requires_grad=False, device=None):
    if _check_cpu(device, "empty", meta=True):
        return _meta(_size(size, "empty"), _float_dtype(dtype), requires_grad)
    return _out(np.empty(_size(size, "empty"), _float_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    meta = _check_cpu(device, "full", meta=True)
    if dtype is None:
        dtype = np.asarray(_to_array(fill_value)).dtype
    size = _size((size,) if isinstance(size, (int, np.integer)) else (size,), "full")
    if meta:
        return _meta(size, np.dtype(dtype), requires_grad)
    return _out(np.full(size, fill_value, np.dtype(dtype)), requires_grad)


def zeros_like(x, dtype=None, requires_grad=False, device=None):
    if _check_cpu(device, "zeros_like", meta=True) or x.is_meta:  # a meta tensor's _like is meta, as PyTorch's
        return _meta(x.shape, np.dtype(dtype or x.dtype), requires_grad)
    return _out(np.zeros(x.shape, dtype or x.dtype), requires_grad)


def ones_like(x, dtype=None, requires_grad=False, device=None):
    if _check_cpu(device, "ones_like", meta=True) or x.is_meta:  # a meta tensor's _like is meta, as PyTorch's
        return _meta(x.shape, np.dtype(dtype or x.dtype), requires_grad)
    return _out(np.ones(x.shape, dtype or x.dtype), requires_grad)


def empty_like(x, dtype=None, requires_grad=False, device=None):
    if _check_cpu(device, "empty_like", meta=True) or x.is_meta:  # a meta tensor's _like is meta, as PyTorch's
        return _meta(x.shape, np.dtype(dtype or x.dtype), requires_grad)
    return _out(np.empty(x.shape, dtype or x.dtype), requires_grad)


def full_like(x, fill_value, dtype=None, requires_grad=False, device=None):
    if _check_cpu(device, "full_like", meta=True) or x.is_meta:  # a meta tensor's _like is meta, as PyTorch's
        return _meta(x.shape, np.dtype(dtype or x.dtype), requires_grad)
    return _out(np.full(x.shape, fill_value, dtype or x.dtype), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None):
    _check_cpu(device, "arange")
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError(f"arange: step must be nonzero (arange({start}, {end}, {step}))")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step sign "
                           f"(arange({start}, {end}, {step}))")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = _dtype.get_default_dtype() if is_float else _dtype.int64
    return _out(np.arange(start, end, step, dtype=np.dtype(dtype)), requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    """steps evenly spaced values from start to end. An integer dtype truncates toward zero, as
    PyTorch (which converts start and end to the integer type, then truncates each value)."""
    _check_cpu(device, "linspace")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise RuntimeError(f"linspace: number of steps must be a non-negative int, got {steps!r}")
    dt = _float_dtype(dtype)
    if dt.kind == "b":
        raise NotImplementedError("linspace: not implemented for dtype bool")
    if dt.kind in "iu":
        vals = np.linspace(np.trunc(start), np.trunc(end), steps, dtype=np.float64)
        return _out(np.trunc(vals).astype(dt), requires_grad)
    return _out(np.linspace(start, end, steps, dtype=dt), requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    _check_cpu(device, "eye")
    return _out(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


def rand(*size, generator=None, dtype=None, requires_grad=False, device=None):
    """Uniform samples on [0, 1). A draw is an op (ops/random.py), so mg.graph.trace records it as an
    equation that draws from the generator at each run, never a value baked in at trace time."""
    if _check_cpu(device, "rand", meta=True):
        return _meta(_size(size, "rand"), _float_dtype(dtype), requires_grad)
    return _drawn(Rand.apply(_size(size, "rand"), _float_dtype(dtype), generator), requires_grad)


def randn(*size, generator=None, dtype=None, requires_grad=False, device=None):
    """Standard normal samples (an op, as rand: traced graphs draw afresh at each run)."""
    if _check_cpu(device, "randn", meta=True):
        return _meta(_size(size, "randn"), _float_dtype(dtype), requires_grad)
    dt = _float_dtype(dtype)
    if dt.kind == "c":  # as PyTorch: real and imaginary parts each normal with variance 1/2
        from .ops.complex import view_as_complex
        parts = Randn.apply(_size(size, "randn") + (2,), np.dtype(np.float64 if dt == np.complex128 else np.float32),
                            generator)
        return _drawn(view_as_complex(parts * 0.5 ** 0.5).detach(), requires_grad)
    return _drawn(Randn.apply(_size(size, "randn"), dt, generator), requires_grad)


def randint(low, high=None, size=None, generator=None, dtype=None, requires_grad=False, device=None):
    """Integers uniform on [low, high) (randint(high, size) also works, as PyTorch); an op, as rand."""
    _check_cpu(device, "randint")
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    dt = np.dtype(dtype) if dtype is not None else np.dtype(np.int64)
    return _drawn(Randint.apply(_size((tuple(size),), "randint"), int(low), int(high), dt, generator),
                requires_grad)


def randperm(n, generator=None, dtype=None, device=None):
    """A random permutation of 0..n-1 (int64 by default); an op, as rand."""
    _check_cpu(device, "randperm")
    return Randperm.apply(int(n), np.dtype(dtype or np.int64), generator)


def rand_like(x, generator=None, dtype=None, requires_grad=False):
    return rand(*x.shape, generator=generator, dtype=dtype or x.dtype, requires_grad=requires_grad)


def randn_like(x, generator=None, dtype=None, requires_grad=False):
    return randn(*x.shape, generator=generator, dtype=dtype or x.dtype, requires_grad=requires_grad)


def randint_like(x, low, high=None, generator=None, dtype=None):
    return randint(low, high, x.shape, generator=generator, dtype=dtype or x.dtype)
