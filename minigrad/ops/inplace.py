"""In-place ops: computed out of place, written into the tensor's memory, graph rebased onto the result.

Every in-place write bumps the tensor's version counter (shared with its views), so a backward
that needs the old value raises instead of silently using the new one.
"""
import sys

import numpy as np

from ..autograd.function import Function, NoRule
from ..autograd import function as _function
from ..autograd import forward_ad as _forward_ad
from ..autograd.grad_mode import _state
from ..tensor import Tensor


def _requires(v):
    return isinstance(v, Tensor) and v.requires_grad


def write_inplace(x, name, compute, others=(), fast=None):
    """x <- compute(x). compute(alias) returns the out-of-place result as a Tensor."""
    vm = sys.modules.get("minigrad.func.vmap")
    if vm is not None and vm._running() and (vm._level_of(x) or any(vm._level_of(o) for o in others)):
        # inside vmap, batched: the write goes to x's physical tensor
        return _write_in_vmap(vm, x, name, compute, others)
    if _function._state.tracer is not None:  # mg.graph.trace records the write as an effect (graph/trace.py)
        compute, fast = _function._state.tracer.inplace(x, name, compute), None
    if _forward_ad._open():  # forward AD: compute out of place so the result's tangent is known
        fast = None
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


def _write_in_vmap(vm, x, name, compute, others):
    """An in-place op inside vmap. x batched: computed out of place on a copy, the result moved to
    x's physical layout and written into x's physical tensor (itself batched at an outer level, or
    plain). x not batched at the innermost level of an operand: each sample would write a different
    value into one tensor, which raises (as torch.func.vmap)."""
    lx = vm._level_of(x)
    lo = max((vm._level_of(o) for o in others), default=0)
    if lo > lx:
        raise RuntimeError(f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor in "
                           f"extra_args that is batched while self is not (an in-place write of per-sample "
                           f"values into one tensor); use the out-of-place op instead")
    res = compute(x.clone())
    phys = vm._physical_as(res, x)
    write_inplace(x._value, name, lambda a: phys, (phys,))
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
    t = Tensor._make(x._data.copy(), x.requires_grad, x.grad_fn, x._output_nr)
    if "_fw" in x.__dict__:  # forward AD: the tangent comes along
        t._fw = x._fw
    return t


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
    if "_fw" in res.__dict__ or "_fw" in x.__dict__:  # forward AD: x takes the result's tangent
        fw = res.__dict__.get("_fw")
        if fw:
            x._fw = dict(fw)
        else:
            x.__dict__.pop("_fw", None)


def inplace(x, op, *args, name):
    """x.op_(*args) for add_, mul_, clamp_, ... : op(x, *args) written back into x.

    With no graph to record (an optimizer step under no_grad), ops that are one NumPy ufunc write
    straight into x's memory (`Into`): no temporary, no copy."""
    ufunc = _ufunc_of(op)
    fast = None
    if ufunc is not None and _fits(x, args):
        fast = lambda: Into.apply(ufunc, x._data, x, *[_operand(a, x) for a in args])  # noqa: E731
    return write_inplace(x, name, lambda a: op(a, *args), args, fast=fast)


class Into(Function):
    """out[...] = ufunc(*xs) with NumPy's out=: the kernel of a one-ufunc in-place op (add_, mul_,
    sqrt_, ...), used only when no graph is recorded; with one, the op is computed out of place
    and x takes the result's place in the graph (write_inplace)."""
    batching = NoRule("an in-place write into a given array: one write per sample")
    jvp = NoRule("forward mode runs the double-VJP identity (no rule of its own yet)")
    onnx = NoRule("the kernel of an in-place op when no graph is recorded: mg.trace records the op and an assign instead")

    @staticmethod
    def forward(ctx, ufunc, out, *xs):
        return ufunc(*xs, out=out)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("Into is never recorded: an in-place op on a graph is computed out of place")


_UFUNCS = {}


def _ufunc_of(op):
    if not _UFUNCS:
        from . import elementwise as E
        _UFUNCS.update({E.add: np.add, E.sub: np.subtract, E.mul: np.multiply, E.div: np.true_divide,
                        E.maximum: np.maximum, E.sqrt: np.sqrt})
    return _UFUNCS.get(op)


def _fits(x, operands):
    """Can the result be written into x as it is: x a writeable float array, every operand a number
    or a tensor of x's dtype whose shape broadcasts to x's?"""
    d = x._data
    if d.dtype.kind != "f" or not d.flags.writeable:
        return False
    for o in operands:
        if isinstance(o, Tensor):
            if o._data.dtype != d.dtype:
                return False
            if o._data.shape != d.shape:
                try:
                    if np.broadcast_shapes(o._data.shape, d.shape) != d.shape:
                        return False
                except ValueError:
                    return False
        elif type(o) is not float and type(o) is not int:
            return False
    return True


def _operand(v, x):
    # a Python float as a cached 0-d array of x's dtype: NumPy's faster loop, and no float64 promotion
    if type(v) is float:
        from .elementwise import _scalar
        return _scalar(v, x._data.dtype)
    return v


def into(out, op, *operands, name):
    """op(*operands) written into out: PyTorch's out= argument (`mg.maximum(a, b, out=a)`). Not
    differentiable, as in PyTorch."""
    if _state.enabled and any(_requires(o) for o in (out, *operands)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    ufunc = _ufunc_of(op)
    tracer = _function._state.tracer
    if ufunc is not None and _fits(out, operands) and tracer is None:
        Into.apply(ufunc, out._data, *[_operand(a, out) for a in operands])
    else:
        res = op(*operands)
        _assign(out, res, name)
        if tracer is not None:  # mg.graph.trace records the write as an effect (graph/trace.py)
            tracer.assign(out, res, name)
    out._bump_version()
    return out


def sqrt_(x):
    from .elementwise import sqrt
    return inplace(x, sqrt, name="sqrt_")


def lerp_(x, end, weight):
    """x <- lerp(x, end, weight), in x's memory (PyTorch's Tensor.lerp_)."""
    from .elementwise import Lerp, lerp
    w = weight if isinstance(weight, Tensor) else float(weight)
    fast = None
    if _fits(x, (end, w)):
        fast = lambda: Lerp.apply(x, end, w, x._data)  # noqa: E731
    return write_inplace(x, "lerp_", lambda a: lerp(a, end, w), (end, w), fast=fast)


def addcmul_(x, tensor1, tensor2, value=1):
    """x <- x + value * tensor1 * tensor2, in x's memory (PyTorch's Tensor.addcmul_)."""
    from .elementwise import Addcmul, addcmul
    fast = None
    if _fits(x, (tensor1, tensor2)):
        fast = lambda: Addcmul.apply(x, tensor1, tensor2, value, x._data)  # noqa: E731
    return write_inplace(x, "addcmul_", lambda a: addcmul(a, tensor1, tensor2, value=value),
                         (tensor1, tensor2), fast=fast)


def addcdiv_(x, tensor1, tensor2, value=1):
    """x <- x + value * tensor1 / tensor2, in x's memory (PyTorch's Tensor.addcdiv_)."""
    from .elementwise import Addcdiv, addcdiv
    fast = None
    if _fits(x, (tensor1, tensor2)):
        fast = lambda: Addcdiv.apply(x, tensor1, tensor2, value, x._data)  # noqa: E731
    return write_inplace(x, "addcdiv_", lambda a: addcdiv(a, tensor1, tensor2, value=value),
                         (tensor1, tensor2), fast=fast)


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
    if src.is_meta and not x.is_meta:  # as PyTorch: no data to copy (np would copy its placeholder zeros)
        from ..tensor import _meta_error
        raise _meta_error("copy_")
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
