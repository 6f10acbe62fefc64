"""In-place ops: computed out of place, written into the tensor's memory, graph rebased onto the result.

Every in-place write bumps the tensor's version counter (shared with its views), so a backward
that needs the old value raises instead of silently using the new one.
"""
import numpy as np

from ..autograd import function as _function
from ..autograd.grad_mode import _state
from ..tensor import Tensor


def _requires(v):
    return isinstance(v, Tensor) and v.requires_grad


def write_inplace(x, name, compute, others=(), fast=None):
    """x <- compute(x). compute(alias) returns the out-of-place result as a Tensor."""
    if _function._tracer is not None:  # mg.trace records the write as an effect (graph/trace.py)
        compute, fast = _function._tracer.inplace(x, name, compute), None
    record = _state.enabled and (x.requires_grad or any(_requires(o) for o in others))
    if _state.enabled and x.requires_grad and x.grad_fn is None:
        raise RuntimeError(f"{name}: a leaf Variable that requires grad is being used in an in-place "
                           f"operation (shape {x.shape}). Wrap it in `with mg.no_grad():` or use an "
                           f"out-of-place op.")
    if not record:
        if fast is not None:
            fast()
        else:
            _assign(x, compute(x), name)
        x._bump_version()
        return x
    base = x._base
    if base is not None:
        if x._view_idx is None:
            raise RuntimeError(f"{name}: in-place modification of this view (shape {x.shape}) of a tensor "
                               f"in the graph is not supported; modify the base tensor "
                               f"(base[index] = ...) or clone() the view first")
        # write through the base, then make the view a fresh slice of the updated base
        new = compute(_snapshot(x))
        base[x._view_idx] = new
        fresh = base[x._view_idx]
        _rebase(x, fresh)
        x._graph_ver = x._vc[0]
        return x
    res = compute(_snapshot(x))
    _assign(x, res, name)
    _rebase(x, res)
    x._bump_version()
    return x


def _rebase(x, res):
    """x now holds res's value: take res's place in the graph (and move a retain_grad hook along)."""
    x.grad_fn, x._output_nr, x.requires_grad = res.grad_fn, res._output_nr, res.requires_grad
    if x._retains_grad:
        from ..tensor import _retain_hook
        x._retain_handle.remove()
        x._retain_handle = x.grad_fn.register_prehook(x._output_nr, _retain_hook(x))


def _snapshot(x):
    """A copy of x at this version, at the same place in the graph (the op may save it)."""
    return Tensor._make(x._data.copy(), x.requires_grad, x.grad_fn, x._output_nr)


def _assign(x, res, name):
    r = res._data
    if r.shape != x.shape:
        raise RuntimeError(f"{name}: output with shape {x.shape} doesn't match the broadcast shape {r.shape}")
    if r.dtype != x.dtype and not np.can_cast(r.dtype, x.dtype, "same_kind"):
        raise RuntimeError(f"{name}: result type {r.dtype} can't be cast to the desired output type {x.dtype}")
    try:
        x._data[...] = r
    except ValueError:
        raise RuntimeError(f"{name}: this tensor's memory is read-only (is it an expand()ed view? "
                           f"shape {x.shape}); clone() it first") from None


def inplace(x, op, *args, name):
    """x.op_(*args) for add_, mul_, clamp_, ... : op(x, *args) written back into x."""
    return write_inplace(x, name, lambda a: op(a, *args), args)


def _everywhere(x):
    return Tensor._make(np.ones(x.shape, dtype=bool))


def fill_(x, value, name="fill_"):
    from .elementwise import where
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"{name} only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions")
    v = value if isinstance(value, Tensor) else Tensor._make(np.asarray(value, dtype=x.dtype))

    def fast():
        x._data[...] = v._data
    return write_inplace(x, name, lambda a: where(_everywhere(a), v, a), (v,), fast=fast)


def copy_(x, src):
    from .elementwise import where
    if not isinstance(src, Tensor):
        src = Tensor(src)
    try:
        np.broadcast_shapes(src.shape, x.shape)
        if np.broadcast_shapes(src.shape, x.shape) != x.shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"copy_: the src tensor of shape {src.shape} can't be broadcast to the "
                           f"destination's shape {x.shape}") from None

    def fast():
        x._data[...] = src._data
    return write_inplace(x, "copy_", lambda a: where(_everywhere(a), src.to(a.dtype), a), (src,), fast=fast)
