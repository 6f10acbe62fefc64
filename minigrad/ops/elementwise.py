"""Elementwise ops. Each: forward in NumPy, backward in Tensor ops (so it can be differentiated again).

Backward rules return the gradient in the broadcast (output) shape; the engine sums it back.
"""
import math

import numpy as np

from .. import _dtype
from ..autograd.function import (ALWAYS, IF_OTHER, INPUT, OUTPUT, BinaryUfunc, Function, Kernel, NoRule,
                                 UnaryUfunc, _scalar)
from ..autograd.function import holomorphic as _holomorphic  # noqa: F401 (_scalar: ops/inplace.py)
from .._memory_format import _c_order
from ..tensor import Tensor
from ..func.vmap import not_batchable as _not_batchable
from .. import kernels as _kernels
from ..kernels import buffers as _buffers

# the public ops of this family: exported by minigrad.ops and minigrad (ops/__init__.py derives from it)
__all__ = [
    "add", "sub", "mul", "div", "atan2", "arctan2", "neg", "pow", "abs", "exp", "log", "log1p", "expm1",
    "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "sign", "floor", "ceil",
    "round", "clamp", "clip", "maximum", "minimum", "where", "erf", "floor_divide", "remainder", "fmod", "eq",
    "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf",
    "isfinite", "equal", "allclose", "lerp", "addcmul", "addcdiv", "square",
]
# ops whose Tensor method is the function itself (self first), attached when tensor.py has none
__methods__ = ["atan2", "arctan2", "square"]


def _promote(x, y):
    """Cast operands to PyTorch's result dtype (float32 * 2.5 stays float32; int64 * 2.5 -> float32)."""
    # fast exits first: this runs for every binary op
    if isinstance(x, Tensor):
        xa = x._data
        if isinstance(y, Tensor):
            if xa.dtype == y._data.dtype:
                return x, y
        elif type(y) is float:
            if xa.dtype.kind == "f":
                return x, y
        elif type(y) is int and xa.dtype.kind in "fiu":
            return x, y
    elif isinstance(y, Tensor):
        xa = x
        if type(x) is float:
            if y._data.dtype.kind == "f":
                return x, y
        elif type(x) is int and y._data.dtype.kind in "fiu":
            return x, y
    else:
        x = Tensor(x)
        xa = x._data
    ya = y._data if isinstance(y, Tensor) else y
    if isinstance(xa, np.generic):
        xa = xa.item()
    if isinstance(ya, np.generic):
        ya = ya.item()
    dt = _dtype.result_type(xa, ya)
    if isinstance(xa, np.ndarray) and isinstance(ya, np.ndarray) and np.result_type(xa, ya) == dt:
        return x, y  # NumPy reaches the same dtype inside the ufunc (e.g. float32 * bool): no copies
    return _cast_to(x, dt), _cast_to(y, dt)


_ufunc = _buffers.ufunc  # f(x[, y]), a large result in a recycled array


def _cast_to(v, dtype):
    if isinstance(v, Tensor):
        return v if v.dtype == dtype else cast(v, dtype)
    return _wrap_number(v, dtype)


def _wrap_number(v, dtype):
    """A Python number as a 0-d tensor operand: not a tensor input of the op (grad_fn.next_functions
    has no edge for it, as in PyTorch's Scalar overloads), unless the op says (`_torch_edges`)."""
    try:
        arr = np.asarray(v, dtype=dtype)
    except OverflowError:  # an int beyond the integer dtype: two's complement wrap, as PyTorch
        arr = np.asarray(v).astype(dtype)            # (int32 | 0xFFFFFFFF is int32 | -1)
    t = Tensor._make(arr)
    t._wrapped_number = True
    return t


class ToCopy(Function):
    """out = x.astype(dtype) (Tensor.to / .float() / .double() ...);  dx = g.astype(x.dtype)"""
    op_name = "cast"
    batching = "elementwise"
    fusion = Kernel("{0}", "cast({0})")

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.src = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        if g.dtype.kind == "c" and ctx.src.kind != "c":  # to a complex dtype: a real input's gradient is Re g
            from .complex import real
            g = real(g)
        return cast(g, ctx.src), None

    @staticmethod
    def jvp(ctx, t, _dtype):
        return t  # cast to the output's dtype by forward AD, as every tangent is

    @staticmethod
    def onnx(e, c):
        return c.add("Cast", [c.x(e)], c.out(e), to=c.tp(e.args[1]))


def cast(x, dtype):
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return ToCopy.apply(x, dtype)


class Add(BinaryUfunc):
    """out = x + y;  dx = g,  dy = g"""
    _torch_edges = (0, 1)  # PyTorch wraps a Python number as a tensor input: x * 2 has 2 edges
    _fast = staticmethod(np.add)
    fusion = Kernel("{0} + {1}", "{0}+{1}")
    onnx = "Add"

    @staticmethod
    def backward(ctx, g):
        return g, g

    @staticmethod
    def jvp(ctx, tx, ty):
        return tx if ty is None else (ty if tx is None else tx + ty)


_WARNED_OVERLOADS = set()


def _deprecated_overload(name, args, rest, scale_name="alpha"):
    """PyTorch's deprecated positional forms: add(input, Number alpha, Tensor other), sub(...) and
    addcmul/addcdiv(input, Number value, Tensor tensor1, Tensor tensor2) (and their methods and
    in-place forms). `args` are the positional arguments after `input`, the number first; `rest`
    the tensors. Returns (number, tensors...) after PyTorch's UserWarning (once per process, as
    PyTorch's TORCH_WARN_ONCE); a TypeError for any other extra positional argument."""
    number = args[0]
    if not isinstance(number, (int, float, bool)) or isinstance(number, Tensor) or \
            not all(isinstance(t, Tensor) for t in rest):
        n = (1 if scale_name == "alpha" else 2) + (0 if name.endswith("_") else 1)
        given = n + len(args) + len(rest) - (1 if scale_name == "alpha" else 2)
        raise TypeError(f"{name}() takes {n} positional argument{'s' if n > 1 else ''} but {given} were given "
                        f"({scale_name}= is keyword-only)")
    tensors = "Tensor other" if scale_name == "alpha" else "Tensor tensor1, Tensor tensor2"
    method = name.endswith("_")
    old = (f"{name}(Number {scale_name}, {tensors})" if method else
           f"{name}(Tensor input, Number {scale_name}, {tensors}, *, Tensor out = None)")
    new = (f"{name}({tensors}, *, Number {scale_name} = 1)" if method else
           f"{name}(Tensor input, {tensors}, *, Number {scale_name} = 1, Tensor out = None)")
    if old not in _WARNED_OVERLOADS:
        _WARNED_OVERLOADS.add(old)
        import warnings
        warnings.warn(f"This overload of {name} is deprecated:\n\t{old}\nConsider using one of the "
                      f"following signatures instead:\n\t{new}", UserWarning, stacklevel=3)
    return (number,) + tuple(rest)


def add(input, other, *args, alpha=1):
    """input + alpha * other, as torch.add (the deprecated add(input, Number alpha, Tensor other)
    still runs, with PyTorch's warning)."""
    if args:
        alpha, other = _deprecated_overload("add", (other,), args)
    if alpha != 1:
        other = mul(other, alpha)  # other * alpha, as PyTorch's add(input, other, alpha=)
    if type(input) is Tensor and (out := Add._try(input, other)) is not None:
        return out
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return add(other, input)  # 2 + t: the tensor is the first operand (next_functions in PyTorch's order)
    return Add.apply(*_promote(input, other))


class Sub(BinaryUfunc):
    """out = x - y;  dx = g,  dy = -g"""
    _torch_edges = (0, 1)  # PyTorch wraps a Python number as a tensor input: x * 2 has 2 edges
    _fast = staticmethod(np.subtract)
    fusion = Kernel("{0} - {1}", "{0}-{1}")
    onnx = "Sub"

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        return tx if ty is None else (-ty if tx is None else tx - ty)


class Rsub(Function):
    """out = y - x (a number minus a tensor: the tensor stays the first operand, as PyTorch);
    dx = -g,  dy = g"""
    batching = "elementwise"
    fusion = Kernel("{1} - {0}", "{1}-{0}")

    @staticmethod
    def forward(ctx, x, y):
        return y - x

    @staticmethod
    def backward(ctx, g):
        nx, ny = ctx.needs_input_grad
        return (-g if nx else None), (g if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        return -tx if ty is None else (ty if tx is None else ty - tx)

    @staticmethod
    def onnx(e, c):
        x, y = c.operands(e)  # y - x
        return c.add("Sub", [y, x], c.out(e))


def sub(input, other, *args, alpha=1):
    """input - alpha * other, as torch.sub (the deprecated sub(input, Number alpha, Tensor other)
    still runs, with PyTorch's warning)."""
    if args:
        alpha, other = _deprecated_overload("sub", (other,), args)
    if alpha != 1:
        other = mul(other, alpha)
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return Rsub.apply(*_promote(other, input))
    if type(input) is Tensor and (out := Sub._try(input, other)) is not None:
        return out
    return Sub.apply(*_promote(input, other))


class Mul(BinaryUfunc):
    """out = x * y;  dx = g * y,  dy = g * x"""
    _torch_edges = (0, 1)  # PyTorch wraps a Python number as a tensor input: x * 2 has 2 edges
    _fast = staticmethod(np.multiply)
    _saves = (IF_OTHER, IF_OTHER)  # x for dy, y for dx
    fusion = Kernel("{0} * {1}", "{0}*{1}")
    onnx = "Mul"

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (g * y if nx else None), (g * x if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        a = None if tx is None else tx * y
        b = None if ty is None else x * ty
        return b if a is None else (a if b is None else a + b)


def mul(input, other):
    if type(input) is Tensor and (out := Mul._try(input, other)) is not None:
        return out
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return mul(other, input)  # 2 * t: the tensor is the first operand (next_functions in PyTorch's order)
    return Mul.apply(*_promote(input, other))


class Div(BinaryUfunc):
    """out = x / y;  dx = g / y,  dy = -g * (x / y) / y  (PyTorch's order: y * y underflows to 0 for
    |y| < 1e-154, and overflows for |y| > 1e154, where (x / y) / y is finite)"""
    _torch_edges = (0, 1)  # PyTorch wraps a Python number as a tensor input: x * 2 has 2 edges
    _fast = staticmethod(np.true_divide)
    _saves = (IF_OTHER, ALWAYS)  # x for dy; y for both
    fusion = Kernel("{0} / {1}", "{0}/{1}")
    onnx = "Div"

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (g / y if nx else None), (-g * ((x / y) / y) if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        a = None if tx is None else tx / y
        b = None if ty is None else -ty * ((x / y) / y)
        return b if a is None else (a if b is None else a + b)


def _floor_divide_onnx(c, a, b, dt):
    if np.dtype(dt).kind in "iu":
        raise c.unmapped("integer floor division (ONNX Div truncates)")
    return c.add("Floor", [c.add("Div", [a, b])])


def _trunc_onnx(c, x, dt):
    """trunc(x) in ONNX nodes: Ceil below 0, Floor above (ONNX has no Trunc)."""
    neg = c.add("Less", [x, c.scalar(0, dt)])
    return c.add("Where", [neg, c.add("Ceil", [x]), c.add("Floor", [x])])


class DivRounding(Function):
    """out = trunc(x / y) or floor(x / y) (integers stay integers);  dx = 0,  dy = 0  (piecewise
    constant: PyTorch's zero gradient, and the graph is kept)"""
    op_name = "div"
    batching = "elementwise"
    fusion = NoRule("the rounding mode is a static argument, which a fused loop body has no place for yet")

    @staticmethod
    def forward(ctx, x, y, rounding_mode):
        if rounding_mode == "floor":
            return np.floor_divide(x, y)
        dt = np.result_type(x, y)
        if dt.kind in "iu":  # integer trunc division, exact; as arrays of dt, or a Python int widens it
            x, y = np.asarray(x, dtype=dt), np.asarray(y, dtype=dt)
            return (np.abs(x) // np.abs(y)) * (np.sign(x) * np.sign(y))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.trunc(np.true_divide(x, y))

    @staticmethod
    def backward(ctx, g):
        nx, ny, _ = ctx.needs_input_grad
        zero = g * 0.0
        return (zero if nx else None), (zero if ny else None), None

    @staticmethod
    def jvp(ctx, tx, ty, _mode):
        return (tx if tx is not None else ty) * 0.0

    @staticmethod
    def onnx(e, c):
        x, y = c.operands(e, 2)
        dt = c.dt(e)
        if e.args[2] == "floor":
            return c.result(e, _floor_divide_onnx(c, x, y, dt))
        if np.dtype(dt).kind in "iu":
            return c.add("Div", [x, y], c.out(e))  # ONNX's integer Div truncates
        return c.result(e, _trunc_onnx(c, c.add("Div", [x, y]), dt))


def div(input, other, rounding_mode=None):
    if (rounding_mode is None and type(input) is Tensor and input._data.dtype.kind == "f"
            and (out := Div._try(input, other)) is not None):
        return out
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                             f"'{rounding_mode}'")
        if not isinstance(input, Tensor) and isinstance(other, Tensor):
            input = Tensor._make(np.asarray(input, dtype=other.dtype if isinstance(input, int) or other.dtype.kind == "f"
                                        else _dtype.get_default_dtype()))
        return DivRounding.apply(*_int_zero_division("div", *_promote(input, other)), rounding_mode)
    if not isinstance(input, Tensor) and isinstance(other, Tensor) and isinstance(input, (int, float)):
        return mul(reciprocal(other), input)  # 2 / t = reciprocal(t) * 2, as PyTorch records it
    input, other = _promote(input, other)
    if not _is_float(input) and not _is_float(other):  # true division of integers gives the default float
        input = _cast_to(input, _dtype.get_default_dtype())
        other = _cast_to(other, _dtype.get_default_dtype())
    return Div.apply(input, other)


def _is_float(v):
    return (v.dtype.kind in "fc") if isinstance(v, Tensor) else isinstance(v, (float, complex))


def _atan2_onnx(c, y, x, dt):
    """atan2 from Atan and Where on the quadrant, signed zeros kept (1/y < 0 tells -0 from +0)."""
    zero = c.scalar(0, dt)
    pi, half = c.scalar(math.pi, dt), c.scalar(math.pi / 2, dt)
    yneg = c.add("Less", [c.add("Reciprocal", [y]), zero])
    xneg = c.add("Less", [c.add("Reciprocal", [x]), zero])
    x_zero = c.add("Equal", [x, zero])
    safe_x = c.add("Where", [x_zero, c.scalar(1, dt), x])
    q = c.add("Atan", [c.add("Div", [y, safe_x])])
    turn = c.add("Where", [yneg, c.add("Neg", [pi]), pi])  # x < 0: the half turn toward y's side
    off_axis = c.add("Where", [xneg, c.add("Add", [q, turn]), q])
    on_axis = c.add("Where", [c.add("Equal", [y, zero]), c.add("Where", [xneg, turn, y]),
                              c.add("Where", [yneg, c.add("Neg", [half]), half])])
    return c.add("Where", [x_zero, on_axis, off_axis])


class Atan2(Function):
    """out = atan2(y, x) (the angle of the point (x, y));  dy = g * x / (x² + y²),  dx = -g * y / (x² + y²)
    (0 at the origin, as PyTorch)"""
    _fast = staticmethod(np.arctan2)
    batching = "elementwise"
    fusion = NoRule("no fused loop body written yet")

    @staticmethod
    def forward(ctx, y, x):
        ctx.save_for_backward(y, x)
        return np.arctan2(y, x)

    @staticmethod
    def backward(ctx, g):
        y, x = ctx.saved_tensors
        ny, nx = ctx.needs_input_grad
        r2 = x * x + y * y
        origin = r2 == 0
        scale = where(origin, 0.0, g / where(origin, 1.0, r2))  # safe on both sides: finite 2nd order too
        return (scale * x if ny else None), (-scale * y if nx else None)

    @staticmethod
    def jvp(ctx, ty, tx):
        y, x = ctx.saved_tensors
        r2 = x * x + y * y
        origin = r2 == 0
        inv = where(origin, 0.0, 1.0 / where(origin, 1.0, r2))  # 0 at the origin, as the backward
        a = None if ty is None else ty * x * inv
        b = None if tx is None else -tx * y * inv
        return b if a is None else (a if b is None else a + b)

    @staticmethod
    def onnx(e, c):
        return c.result(e, _atan2_onnx(c, *c.operands(e, 2), c.dt(e)))


def atan2(input, other):  # noqa: A002
    """The angle of (other, input) in radians: torch.atan2(input, other); integers give floats."""
    y, x = _promote(input, other)
    if not _is_float(y) and not _is_float(x):
        y, x = _cast_to(y, _dtype.get_default_dtype()), _cast_to(x, _dtype.get_default_dtype())
    return Atan2.apply(y, x)


arctan2 = atan2


def square(input):  # noqa: A002
    """input * input, as torch.square: pow(input, 2) (PowBackward0); bool gives int64, integers keep
    their dtype."""
    x = cast(input, np.int64) if input.dtype.kind == "b" else input
    return pow(x, 2) if x.dtype.kind in "fc" else mul(x, x)


class Neg(UnaryUfunc):
    """out = -x;  dx = -g"""
    _fast = staticmethod(np.negative)
    fusion = Kernel("-{0}", "-{0}")
    onnx = "Neg"

    @staticmethod
    def backward(ctx, g):
        return -g


def neg(input):
    return Neg._call(input)


class Pow(Function):
    """out = x ** y;  dx = g * y * x**(y-1) (0 where y == 0),  dy = g * out * log(x) (0 where x == 0, y >= 0)"""
    batching = "elementwise"
    fusion = NoRule("no fused loop body written yet")
    onnx = "Pow"

    @staticmethod
    def forward(ctx, x, y):
        if np.asarray(x).dtype.kind in "iu" and np.asarray(y).dtype.kind in "iu" and (np.asarray(y) < 0).any():
            if np.ndim(y) == 0:  # a negative integer exponent (PyTorch raises a RuntimeError for it)
                raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
            # per element (PyTorch computes these): 1 ** -n = 1, (-1) ** -n = +-1, other bases 0
            xb, yb = np.broadcast_arrays(x, y)
            out = np.power(xb, np.abs(yb))
            neg = yb < 0
            out[neg] = np.where(xb[neg] == 1, 1, np.where(xb[neg] == -1, np.where(yb[neg] % 2 == 0, 1, -1), 0))
            ctx.save_for_backward(x, y, out)
            return out
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 ** -1 = inf, silently, as PyTorch
            out = np.power(x, y)
        if getattr(x, "ndim", 0) == 0:  # scalar ** tensor: PyTorch's result is contiguous (NumPy keeps y's layout)
            out = _c_order(out)
        ctx.save_for_backward(x, y, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, y, out = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        dx = dy = None
        if nx:
            if isinstance(y, Tensor):
                # PyTorch masks y == 0 so that 0 ** 0 has gradient 0, not nan (0 * 0 ** -1)
                zero = y == 0
                dx = where(zero, 0.0, g * y * x ** (where(zero, 1.0, y) - 1))
            elif y == 0:
                dx = g * 0.0
            else:
                dx = g * y * x ** (y - 1) if y != 2 else g * 2.0 * x
        if ny:
            # at x == 0 the log is -inf; PyTorch gives 0 there when y >= 0 (the limit of out * log x)
            if isinstance(x, Tensor):
                safe = where((x == 0) & (y >= 0), 1.0, x)
                dy = where((x == 0) & (y >= 0), 0.0, g * out * log(safe))
            else:
                dy = g * out * math.log(x) if x > 0 else g * 0.0
        return dx, dy

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y, out = ctx.saved_tensors
        a = b = None
        if tx is not None:  # the backward's masks: 0 ** 0 has derivative 0
            if isinstance(y, Tensor):
                zero = y == 0
                a = where(zero, 0.0, tx * y * x ** (where(zero, 1.0, y) - 1))
            elif y == 0:
                a = tx * 0.0
            else:
                a = tx * y * x ** (y - 1) if y != 2 else tx * 2.0 * x
        if ty is not None:
            if isinstance(x, Tensor):
                at0 = (x == 0) & (y >= 0)
                b = where(at0, 0.0, ty * out * log(where(at0, 1.0, x)))
            else:
                b = ty * out * math.log(x) if x > 0 else ty * 0.0
        return b if a is None else (a if b is None else a + b)


def pow(input, exponent):
    if isinstance(exponent, (int, float)) and isinstance(input, Tensor):
        if input.dtype.kind in "iub" and isinstance(exponent, float):
            input = cast(input, _dtype.get_default_dtype())
        return Pow.apply(input, exponent)
    input, exponent = _promote(input, exponent)
    if not isinstance(input, Tensor):
        input = _wrap_number(input, exponent.dtype)  # pow(number, tensor): one edge, as PyTorch's
    return Pow.apply(input, exponent)


def _rsqrt_np(x):
    return 1.0 / np.sqrt(x)


class Exp(UnaryUfunc):
    """out = exp(x);  dx = g * out"""
    _fast = staticmethod(np.exp)
    _saves = OUTPUT
    onnx = "Exp"

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * out


class Log(UnaryUfunc):
    """out = log(x);  dx = g / x"""
    _fast = staticmethod(np.log)
    _saves = INPUT
    onnx = "Log"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / x


class Log1P(UnaryUfunc):
    """out = log(1 + x);  dx = g / (1 + x)"""
    _fast = staticmethod(np.log1p)
    _saves = INPUT

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (x + 1.0)

    @staticmethod
    def onnx(e, c):
        return c.add("Log", [c.add("Add", [c.x(e), c.scalar(1, c.dt(e))])], c.out(e))


class Expm1(UnaryUfunc):
    """out = exp(x) - 1;  dx = g * (out + 1)"""
    _fast = staticmethod(np.expm1)
    _saves = OUTPUT

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * (out + 1.0)

    @staticmethod
    def onnx(e, c):
        return c.add("Sub", [c.add("Exp", [c.x(e)]), c.scalar(1, c.dt(e))], c.out(e))


class Sqrt(UnaryUfunc):
    """out = sqrt(x);  dx = g / (2 * out)"""
    _fast = staticmethod(np.sqrt)
    _saves = OUTPUT
    fusion = Kernel("np.sqrt({0})", "sqrt({0})")
    onnx = "Sqrt"

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g / (out * 2.0)


class Rsqrt(Function):
    """out = 1 / sqrt(x);  dx = -g * out**3 / 2"""
    _fast = staticmethod(_rsqrt_np)
    batching = "elementwise"
    fusion = Kernel("D(1.0) / np.sqrt({0})", "rsqrt({0})")

    @staticmethod
    def forward(ctx, x):
        out = _rsqrt_np(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * out * out * out * -0.5

    @staticmethod
    def jvp(ctx, t):
        out, = ctx.saved_tensors
        return t * out * out * out * -0.5

    @staticmethod
    def onnx(e, c):
        return c.add("Reciprocal", [c.add("Sqrt", [c.x(e)])], c.out(e))


class Reciprocal(UnaryUfunc):
    """out = 1 / x;  dx = -g * out**2"""
    _fast = staticmethod(np.reciprocal)
    _saves = OUTPUT
    onnx = "Reciprocal"

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return -g * out * out


class Sin(UnaryUfunc):
    """out = sin(x);  dx = g * cos(x)"""
    _fast = staticmethod(np.sin)
    _saves = INPUT
    onnx = "Sin"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * cos(x)


class Cos(UnaryUfunc):
    """out = cos(x);  dx = -g * sin(x)"""
    _fast = staticmethod(np.cos)
    _saves = INPUT
    onnx = "Cos"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return -g * sin(x)


class Tan(UnaryUfunc):
    """out = tan(x);  dx = g * (1 + out**2)"""
    _fast = staticmethod(np.tan)
    _saves = OUTPUT
    onnx = "Tan"

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * (out * out + 1.0)


class Tanh(UnaryUfunc):
    """out = tanh(x);  dx = g * (1 - out**2)"""
    _fast = staticmethod(np.tanh)
    _saves = OUTPUT
    onnx = "Tanh"

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * (1.0 - out * out)


class Abs(Function):
    """out = |x|;  dx = g * sign(x)  (0 at x == 0, as PyTorch)"""
    _fast = staticmethod(np.abs)
    batching = "elementwise"
    fusion = Kernel("np.abs({0})", "abs({0})")
    onnx = "Abs"

    @staticmethod
    def forward(ctx, x):
        out = np.abs(x)
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        if x.dtype.kind == "c":  # g z / |z| (0 at 0), as PyTorch
            from .complex import sgn
            return g * sgn(x)
        return g * sign(x)

    @staticmethod
    def jvp(ctx, t):
        x = ctx.saved_tensors[0]
        if x.dtype.kind == "c":  # Re(conj(z / |z|) t)
            from .complex import conj_physical, real, sgn
            return real(conj_physical(sgn(x)) * t)
        return t * sign(x)


def _sigmoid_np(x, out=None):
    """sigmoid(x), into `out` when given (x itself may be out): the one sigmoid, for mg.sigmoid and
    the recurrent cells' gates (ops/recurrent.py). exp of -|x| only, stable for large |x|:
    1 / (1 + e) where x >= 0, e / (1 + e) elsewhere (Sigmoid.fusion is the same loop body)."""
    if x.dtype.kind == "c":  # (the stable form below reads |x| and x >= 0: real only)
        with np.errstate(over="ignore"):
            return np.divide(1.0, 1.0 + np.exp(-x), out=out)
    e = np.abs(x, out=np.empty_like(x))  # (out=: an array for a 0-d x too, not a NumPy scalar)
    np.negative(e, out=e)
    np.exp(e, out=e)
    num = np.where(x >= 0, x.dtype.type(1.0), e)
    e += 1.0
    return np.divide(num, e, out=e if out is None else out)


class Sigmoid(Function):
    """out = 1 / (1 + exp(-x));  dx = g * out * (1 - out)"""
    _fast = staticmethod(_sigmoid_np)
    batching = "elementwise"
    onnx = "Sigmoid"
    # the loop body of _sigmoid_np: e = exp(-|x|); 1/(1+e) where x >= 0 else e/(1+e)
    fusion = Kernel("((D(1.0) / (D(1.0) + np.exp(-np.abs({0})))) if {0} >= D(0) else "
                    "(np.exp(-np.abs({0})) / (D(1.0) + np.exp(-np.abs({0})))))", "sigmoid({0})", exact=False)

    @staticmethod
    def forward(ctx, x):
        out = _sigmoid_np(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * (out * (1.0 - out))

    @staticmethod
    def jvp(ctx, t):
        out, = ctx.saved_tensors
        return t * (out * (1.0 - out))


class LogSigmoid(Function):
    """out = log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|));  dx = g * sigmoid(-x)   (F.logsigmoid)

    One op, not a composition of relu/abs: their zero subgradients at 0 gave dx = 0 there
    (PyTorch: 0.5)."""
    batching = "elementwise"
    fusion = NoRule("no fused loop body written yet")

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _c_order(np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))))  # PyTorch's is contiguous (x's layout aside)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * Sigmoid.apply(-x)

    @staticmethod
    def jvp(ctx, t):
        return t * Sigmoid.apply(-ctx.saved_tensors[0])

    @staticmethod
    def onnx(e, c):
        dt, x = c.dt(e), c.x(e)  # log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), overflow-free
        t = c.add("Log", [c.add("Add", [c.add("Exp", [c.add("Neg", [c.add("Abs", [x])])]), c.scalar(1, dt)])])
        return c.add("Sub", [c.add("Min", [x, c.scalar(0, dt)]), t], c.out(e))


_RELU_KERNEL_MIN = 4096  # elements: below, np.maximum's call costs less than the kernel's dispatch


def _memory_order(a, b):
    """(a, b, False) when both are C-contiguous; (a, b with their first two axes swapped, True) when
    both are channel-major 4-d arrays (conv2d's layout), C-contiguous so; else (None, None, False):
    the views the numba elementwise kernels walk in memory order."""
    if a.flags.c_contiguous and b.flags.c_contiguous:
        return a, b, False
    if a.ndim == 4:
        at, bt = a.transpose(1, 0, 2, 3), b.transpose(1, 0, 2, 3)
        if at.flags.c_contiguous and bt.flags.c_contiguous:
            return at, bt, True
    return None, None, False


def _relu(x, out=None):
    if x.size >= _RELU_KERNEL_MIN and x.dtype.kind == "f" and x.dtype.itemsize >= 4 and _kernels.available():
        # numba's one pass (kernels/elementwise.py), on x and out as 1-D views in memory order:
        # C-contiguous, or both channel-major (conv2d's outputs)
        if out is None:
            out = np.empty_like(x)  # (x's layout)
        if out.dtype == x.dtype and out.strides == x.strides:
            xt, ot, _ = _memory_order(x, out)
            if xt is not None:
                _kernels.load("elementwise").relu(xt.reshape(-1), ot.reshape(-1))
                return out
    return np.maximum(x, 0, out=out)


class Relu(UnaryUfunc):
    """out = max(x, 0);  dx = ThresholdBackward(g, out) = g * (out > 0)   (gradient 0 at x == 0, as PyTorch)"""
    _fast = staticmethod(_relu)
    _saves = OUTPUT
    fusion = Kernel("({0} if ({0} > D(0) or {0} != {0}) else D(0))", "relu({0})")
    onnx = "Relu"

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return ThresholdBackward.apply(g, out)  # unrecorded: its _fast, the mask from the arrays


def _threshold_backward(g, y):
    if g.dtype.kind == "f" and g.dtype == y.dtype and g.shape == y.shape and _kernels.available():
        # numba: one pass, no boolean mask; arrays C-contiguous or both channel-major (conv2d's,
        # C-contiguous once the first two axes are swapped: the result keeps that layout)
        gk, yk, cm = _memory_order(g, y)
        if gk is not None:
            out = _buffers.empty(gk.shape, g.dtype)
            _kernels.load("elementwise").threshold_backward(gk, yk, g.dtype.type(0), out)
            return out.transpose(1, 0, 2, 3) if cm else out
    return np.multiply(g, np.greater(y, 0, out=_buffers.like(y, dtype=bool)), out=_buffers.like(g, y))


class ThresholdBackward(Function):
    """relu's backward as an op (PyTorch's threshold_backward): out = g * (y > 0);
    dg = ThresholdBackward(gg, y), dy = 0 (the mask is piecewise constant in y)"""
    batching = "elementwise"
    fusion = Kernel("{0} * (D(1) if {1} > 0 else D(0))", "{0}*({1}>0)", cast=(1, 0))
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    _fast = staticmethod(_threshold_backward)  # one multiply when no graph is recorded

    @staticmethod
    def forward(ctx, g, y):
        ctx.save_for_backward(y)
        return _threshold_backward(g, y)

    @staticmethod
    def backward(ctx, gg):
        y, = ctx.saved_tensors
        return ThresholdBackward.apply(gg, y), None

    @staticmethod
    def jvp(ctx, tg, ty):
        # linear in g; the mask is piecewise constant in y
        return ThresholdBackward.apply(tg, ctx.saved_tensors[0]) if tg is not None else ty * 0.0


_erf_scalar = np.frompyfunc(math.erf, 1, 1)


def _erf_np(x):
    """erf elementwise in double precision, rounded to x's float dtype. NumPy has no erf: with numba,
    one compiled loop over the C library's erf (kernels/elementwise.py); without it, math.erf (the
    same function) called per element."""
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    if x.size >= 64 and _kernels.available():
        x64 = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        out = np.empty(x64.size, np.float64)
        _kernels.load("elementwise").erf(x64, out)
        return out.reshape(x.shape).astype(dt, copy=False)
    return np.asarray(_erf_scalar(x), dtype=dt)


class Erf(Function):
    """out = erf(x);  dx = g * 2/sqrt(pi) * exp(-x**2)"""
    _fast = staticmethod(_erf_np)
    batching = "elementwise"
    fusion = NoRule("no fused loop body written yet")
    onnx = "Erf"

    @staticmethod
    def forward(ctx, x):
        out = _erf_np(x)
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * (exp(-(x * x)) * (2.0 / math.sqrt(math.pi)))

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return t * (exp(-(x * x)) * (2.0 / math.sqrt(math.pi)))


# the float-valued ops take an integer or bool input as the default float dtype, as PyTorch (NumPy gave
# float64, or float16 for bool, and sigmoid kept int64: sigmoid(tensor([1, 2])) was [0, 0])
def exp(input): return Exp._call(_float(input))
def log(input): return Log._call(_float(input))
def log1p(input): return Log1P._call(_float(input))
def expm1(input): return Expm1._call(_float(input))
def sqrt(input): return Sqrt._call(_float(input))
def rsqrt(input): return Rsqrt.apply(_float(input))
def reciprocal(input): return Reciprocal._call(_float(input))
def sin(input): return Sin._call(_float(input))
def cos(input): return Cos._call(_float(input))
def tan(input): return Tan._call(_float(input))
def tanh(input): return Tanh._call(_float(input))
def sigmoid(input): return Sigmoid.apply(_float(input))
def relu(input): return Relu._call(input)
def abs(input): return Abs.apply(input)  # noqa: A001
def erf(input): return Erf.apply(_float(input))


def _float(x):
    # integers and bools to the default float dtype; complex stays complex (a cast would drop the
    # imaginary part: exp of 1+2j gave 2.718)
    return x if x.dtype.kind in "fc" else cast(x, _dtype.get_default_dtype())


class _Piecewise(Function):
    """sign, floor, ceil, round: piecewise constant, so the gradient is 0 (as PyTorch gives)."""
    batching = "elementwise"

    @staticmethod
    def backward(ctx, g, *_):
        return (g * 0.0,) + (None,) * (len(ctx.needs_input_grad) - 1)

    @staticmethod
    def jvp(ctx, t, *_):
        return t * 0.0


class Sign(_Piecewise):
    """out = sign(x);  dx = 0"""
    _fast = staticmethod(np.sign)
    fusion = NoRule("np.sign's zero and nan cases: no loop body checked against it yet")
    onnx = "Sign"

    @staticmethod
    def forward(ctx, x):
        return np.sign(x)


class Floor(_Piecewise):
    """out = floor(x);  dx = 0"""
    _fast = staticmethod(np.floor)
    fusion = Kernel("np.floor({0})", "floor({0})")
    onnx = "Floor"

    @staticmethod
    def forward(ctx, x):
        return np.floor(x)


class Ceil(_Piecewise):
    """out = ceil(x);  dx = 0"""
    _fast = staticmethod(np.ceil)
    fusion = Kernel("np.ceil({0})", "ceil({0})")
    onnx = "Ceil"

    @staticmethod
    def forward(ctx, x):
        return np.ceil(x)


class Round(_Piecewise):
    """out = round(x, decimals) (half to even, as PyTorch);  dx = 0"""
    fusion = NoRule("decimals is a static argument, which a fused loop body has no place for yet")

    @staticmethod
    def forward(ctx, x, decimals):
        return np.round(x, decimals)

    @staticmethod
    def onnx(e, c):
        d = e.args[1] if len(e.args) > 1 else 0
        if not d:
            return c.add("Round", [c.x(e)], c.out(e))
        s = c.scalar(10.0 ** d, c.dt(e))
        return c.add("Div", [c.add("Round", [c.add("Mul", [c.x(e), s])]), s], c.out(e))


def sign(input): return Sign.apply(input)
def floor(input): return Floor.apply(input) if input.dtype.kind == "f" else input
def ceil(input): return Ceil.apply(input) if input.dtype.kind == "f" else input
def round(input, decimals=0): return Round.apply(input, decimals)  # noqa: A001


def _clamp_bound_masks(x, lo, hi):
    """Where lo and where hi take the gradient, as PyTorch's clamp_backward_min_max: where lo > hi the
    result is hi whatever x, so hi takes it and lo none; where lo == hi and x < lo neither does."""
    out_lo = None if lo is None else x < lo
    out_hi = None if hi is None else x > hi
    if lo is not None and hi is not None:
        out_lo, out_hi = out_lo & (lo < hi), out_hi | (hi < lo)
    return out_lo, out_hi


class Clamp(Function):
    """out = min(max(x, lo), hi);  dx = g where lo <= x <= hi;  dlo = g where x < lo < hi;
    dhi = g where x > hi or hi < lo"""
    batching = "elementwise"
    fusion = NoRule("a bound may be absent or a tensor: a fused loop body for each form is not written yet")

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x, lo, hi)
        out = x
        if lo is not None:
            out = np.maximum(out, lo)
        if hi is not None:
            out = np.minimum(out, hi)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.saved_tensors
        nx, nlo, nhi = ctx.needs_input_grad
        inside = None
        if lo is not None:
            inside = x >= lo
        if hi is not None:
            inside = (x <= hi) if inside is None else inside & (x <= hi)
        out_lo, out_hi = _clamp_bound_masks(x, lo, hi)
        dx = where(inside, g, 0.0) if nx else None
        dlo = where(out_lo, g, 0.0) if nlo else None
        dhi = where(out_hi, g, 0.0) if nhi else None
        return dx, dlo, dhi

    @staticmethod
    def jvp(ctx, tx, tlo, thi):
        x, lo, hi = ctx.saved_tensors
        inside = None
        if lo is not None:
            inside = x >= lo
        if hi is not None:
            inside = (x <= hi) if inside is None else inside & (x <= hi)
        out = where(inside, tx, 0.0) if tx is not None else None
        for tb, out_of in zip((tlo, thi), _clamp_bound_masks(x, lo, hi)):
            if tb is not None:
                out = where(out_of, tb, 0.0) if out is None else out + where(out_of, tb, 0.0)
        return out

    @staticmethod
    def onnx(e, c):
        x, lo, hi = e.args[:3]
        res = x.name
        if lo is not None:
            res = c.add("Max", [res, c.operand(lo, x.dtype)])
        if hi is not None:
            res = c.add("Min", [res, c.operand(hi, x.dtype)])
        return c.result(e, res)


def clamp(input, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if input.dtype.kind in "biu":
        # PyTorch's result type: a float bound makes an integer input float (clamp(tensor([1, 2]), 0.5,
        # 1.5) is [1.0, 1.5]; the bounds were cast to the integer dtype: [1, 1]) -- a float tensor
        # bound's dtype, else the default float dtype for a Python float
        fl = [b for b in (min, max) if isinstance(b, Tensor) and b.dtype.kind == "f"]
        if fl or any(isinstance(b, float) for b in (min, max)):
            input = cast(input, fl[0].dtype if fl else _dtype.get_default_dtype())
    return Clamp.apply(input, min, max)


clip = clamp


class Maximum(Function):
    """out = max(x, y);  dx = g where x > y, g/2 at ties (as PyTorch);  dy likewise"""
    batching = "elementwise"
    onnx = "Max"
    # np.maximum(a, b): a if a > b or a is NaN, else b (so maximum(-0.0, 0.0) is 0.0, as NumPy)
    fusion = Kernel("({0} if ({0} > {1} or {0} != {0}) else {1})", "max({0},{1})")

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return np.maximum(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        share = where(x == y, g * 0.5, g)
        nx, ny = ctx.needs_input_grad
        return (where(x < y, 0.0, share) if nx else None), (where(x > y, 0.0, share) if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        tie = x == y  # ties share, as the backward
        a = None if tx is None else where(x < y, 0.0, where(tie, tx * 0.5, tx))
        b = None if ty is None else where(x > y, 0.0, where(tie, ty * 0.5, ty))
        return b if a is None else (a if b is None else a + b)


class Minimum(Function):
    """out = min(x, y);  dx = g where x < y, g/2 at ties (as PyTorch);  dy likewise"""
    batching = "elementwise"
    fusion = Kernel("({0} if ({0} < {1} or {0} != {0}) else {1})", "min({0},{1})")
    onnx = "Min"

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return np.minimum(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        share = where(x == y, g * 0.5, g)
        nx, ny = ctx.needs_input_grad
        return (where(x > y, 0.0, share) if nx else None), (where(x < y, 0.0, share) if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        tie = x == y  # ties share, as the backward
        a = None if tx is None else where(x > y, 0.0, where(tie, tx * 0.5, tx))
        b = None if ty is None else where(x < y, 0.0, where(tie, ty * 0.5, ty))
        return b if a is None else (a if b is None else a + b)


def maximum(input, other, *, out=None):
    if out is not None:  # PyTorch's out= (the optimizers' running maximum): written in place
        from .inplace import into
        return into(out, maximum, input, other, name="maximum")
    return Maximum.apply(*_promote(input, other))


def minimum(input, other): return Minimum.apply(*_promote(input, other))


class Where(Function):
    """out = cond ? x : y;  dx = g where cond,  dy = g where not cond"""
    _torch_edges = (1, 2)  # input and other, a number too; the condition is no edge (PyTorch)
    batching = "elementwise"
    fusion = Kernel("({1} if {0} else {2})", "where({0},{1},{2})", cast=(0, 1, 1))

    @staticmethod
    def forward(ctx, cond, x, y):
        ctx.save_for_backward(cond)
        return np.where(cond, x, y)

    @staticmethod
    def backward(ctx, g):
        cond, = ctx.saved_tensors
        _, nx, ny = ctx.needs_input_grad
        zero = g * 0.0
        return None, (where(cond, g, zero) if nx else None), (where(cond, zero, g) if ny else None)

    @staticmethod
    def jvp(ctx, _tc, tx, ty):
        cond, = ctx.saved_tensors
        return where(cond, 0.0 if tx is None else tx, 0.0 if ty is None else ty)

    @staticmethod
    def onnx(e, c):
        cond, x, y = e.args[:3]
        dt = e.outvars[0].dtype
        return c.add("Where", [c.operand(cond, np.bool_), c.operand(x, dt), c.operand(y, dt)], c.out(e))


_NO_ARG = object()


def where(condition, input=_NO_ARG, other=_NO_ARG):
    if input is _NO_ARG and other is _NO_ARG:  # where(cond): nonzero(cond, as_tuple=True), as PyTorch
        from .scatter import nonzero
        return nonzero(condition if isinstance(condition, Tensor) else Tensor(condition), as_tuple=True)
    if input is _NO_ARG or other is _NO_ARG:
        raise TypeError("where() takes a condition alone, or a condition, input and other")
    if not isinstance(condition, Tensor):
        condition = Tensor._make(np.asarray(condition))
    if condition.dtype != np.bool_:  # PyTorch refuses a float (or integer) condition too
        raise RuntimeError(f"where: expected condition to be a bool tensor, but got a tensor with dtype "
                           f"{condition.dtype} (shape {condition.shape}); compare it first, e.g. cond != 0")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = Tensor(input)
    # a Python scalar promotes as in a binary op (int tensor, 0.5 -> the default float), never
    # cast to the tensor's dtype (which truncated where(c, int_tensor, 0.5) to 0)
    input, other = _promote(input, other)
    if not isinstance(input, Tensor):  # a scalar left as is by _promote: the tensor's (promoted) dtype
        input = _cast_to(input, other.dtype)
    elif not isinstance(other, Tensor):
        other = _cast_to(other, input.dtype)
    return Where.apply(condition, input, other)


# -- no gradient: integer division, remainder, comparisons, logic, tests -------------------------
def _raw(v):
    return v._data if isinstance(v, Tensor) else v


class _NonDifferentiable(Function):
    """Base of the ops without a gradient: forward marks the output non-differentiable, so it never
    requires grad (as in PyTorch); they still go through Function.apply like every op."""
    batching = "elementwise"
    jvp = NoRule("integer or bool outputs: no tangent")
    fusion = NoRule("bool results (comparisons, tests, logic): fused groups compute float results")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_fast" in cls.__dict__ and "forward" not in cls.__dict__:  # the family's forward: the ufunc, marked
            cls.forward = staticmethod(_marked_forward(cls._fast))

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"{ctx.name()}: this op is not differentiable")


def _no_grad_out(ctx, out):
    out = np.asarray(out)
    ctx.mark_non_differentiable(out)
    return out


def _marked_forward(f):
    """forward(ctx, x[, y]) = f's result, marked non-differentiable: what a _NonDifferentiable op with a
    NumPy ufunc `_fast` and no forward of its own runs (its parameters name the trace's inputs)."""
    if f.nin == 1:
        return lambda ctx, x: _no_grad_out(ctx, f(x))
    return lambda ctx, x, y: _no_grad_out(ctx, f(x, y))


class FloorDivide(_NonDifferentiable):
    """out = floor(x / y);  not differentiable"""
    op_name = "floor_divide"
    _fast = staticmethod(np.floor_divide)
    fusion = NoRule("NumPy's floor division and remainder (signs, zeros, inf): no loop body checked against it yet")

    @staticmethod
    def onnx(e, c):
        return c.result(e, _floor_divide_onnx(c, *c.operands(e, 2), c.dt(e)))


class _Mod(Function):
    """remainder and fmod: out = x - q * y with q the rounded quotient;  dx = g,  dy = -g * q
    (PyTorch's derivatives; q is piecewise constant, so the second derivative is 0). Integer and
    bool inputs give outputs without a gradient."""
    batching = "elementwise"
    fusion = NoRule("NumPy's floor division and remainder (signs, zeros, inf): no loop body checked against it yet")

    @staticmethod
    def _result(ctx, out, q):
        """out, with the quotient saved for the backward (integer outputs: no gradient)."""
        if np.asarray(out).dtype.kind not in "fc":
            return _no_grad_out(ctx, out)
        ctx.save_for_backward(q)
        return out

    @staticmethod
    def backward(ctx, g):
        q, = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (g if nx else None), (-(g * q) if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        q, = ctx.saved_tensors
        b = None if ty is None else -(ty * q)
        return b if tx is None else (tx if b is None else tx + b)


class Remainder(_Mod):
    """out = x - floor(x / y) * y (the sign of y, as Python's %);  dx = g,  dy = -g * floor(x / y)"""
    _fast = staticmethod(np.remainder)

    @staticmethod
    def forward(ctx, x, y):
        q, out = np.divmod(x, y)  # (NumPy's floor division: Python's, the quotient PyTorch's 'floor' mode gives)
        return _Mod._result(ctx, out, q)

    @staticmethod
    def onnx(e, c):
        a, b = c.operands(e, 2)
        if np.dtype(c.dt(e)).kind in "iu":
            return c.add("Mod", [a, b], c.out(e))  # integer Mod takes the divisor's sign, as Python's %
        q = c.add("Floor", [c.add("Div", [a, b])])
        return c.add("Sub", [a, c.add("Mul", [q, b])], c.out(e))


class Fmod(_Mod):
    """out = x - trunc(x / y) * y (the sign of x, as C's fmod);  dx = g,  dy = -g * trunc(x / y)"""
    _fast = staticmethod(np.fmod)

    @staticmethod
    def forward(ctx, x, y):
        out = np.fmod(x, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.trunc(np.true_divide(x, y)).astype(np.result_type(out), copy=False)
        return _Mod._result(ctx, out, q)

    @staticmethod
    def onnx(e, c):
        return c.add("Mod", c.operands(e, 2), c.out(e), fmod=1)


class Eq(_NonDifferentiable):
    """out = x == y;  not differentiable"""
    _fast = staticmethod(np.equal)
    onnx = "Equal"


class Ne(_NonDifferentiable):
    """out = x != y;  not differentiable"""
    _fast = staticmethod(np.not_equal)

    @staticmethod
    def onnx(e, c):
        return c.add("Not", [c.add("Equal", c.operands(e, 2))], c.out(e))


class Lt(_NonDifferentiable):
    """out = x < y;  not differentiable"""
    _fast = staticmethod(np.less)
    onnx = "Less"


class Le(_NonDifferentiable):
    """out = x <= y;  not differentiable"""
    _fast = staticmethod(np.less_equal)
    onnx = "LessOrEqual"


class Gt(_NonDifferentiable):
    """out = x > y;  not differentiable"""
    _fast = staticmethod(np.greater)
    onnx = "Greater"


class Ge(_NonDifferentiable):
    """out = x >= y;  not differentiable"""
    _fast = staticmethod(np.greater_equal)
    onnx = "GreaterOrEqual"


def _logical_onnx(op):
    """And/Or/Xor on the operands as bools (ONNX's logical operators take bool only)."""
    def onnx(e, c):
        a, b = c.operands(e, 2)
        if c.dt(e) != np.bool_:
            a, b = (c.add("Cast", [v], to=c.tp(np.bool_)) for v in (a, b))
        return c.add(op, [a, b], c.out(e))
    return staticmethod(onnx)


class LogicalAnd(_NonDifferentiable):
    """out = x and y;  not differentiable"""
    op_name = "logical_and"
    _fast = staticmethod(np.logical_and)
    onnx = _logical_onnx("And")


class LogicalOr(_NonDifferentiable):
    """out = x or y;  not differentiable"""
    op_name = "logical_or"
    _fast = staticmethod(np.logical_or)
    onnx = _logical_onnx("Or")


class LogicalXor(_NonDifferentiable):
    """out = x xor y;  not differentiable"""
    op_name = "logical_xor"
    _fast = staticmethod(np.logical_xor)
    onnx = _logical_onnx("Xor")


class LogicalNot(_NonDifferentiable):
    """out = not x;  not differentiable"""
    op_name = "logical_not"
    _fast = staticmethod(np.logical_not)

    @staticmethod
    def onnx(e, c):
        x = c.x(e) if c.dt(e) == np.bool_ else c.add("Cast", [c.x(e)], to=c.tp(np.bool_))
        return c.add("Not", [x], c.out(e))


class IsNan(_NonDifferentiable):
    """out = x is nan;  not differentiable"""
    op_name = "isnan"
    _fast = staticmethod(np.isnan)
    onnx = "IsNaN"


class IsInf(_NonDifferentiable):
    """out = x is +-inf;  not differentiable"""
    op_name = "isinf"
    _fast = staticmethod(np.isinf)
    onnx = "IsInf"


class IsFinite(_NonDifferentiable):
    """out = x is finite;  not differentiable"""
    op_name = "isfinite"
    _fast = staticmethod(np.isfinite)

    @staticmethod
    def onnx(e, c):
        bad = c.add("Or", [c.add("IsNaN", [c.x(e)]), c.add("IsInf", [c.x(e)])])
        return c.add("Not", [bad], c.out(e))


def _int_zero_division(op, x, y):
    """x and y after promotion: an integer division by zero raises, as PyTorch's (NumPy gives 0 with
    a warning)."""
    if isinstance(x, Tensor) and x._data.dtype.kind in "iub":
        d = y._data if isinstance(y, Tensor) else y
        if d is not None and not isinstance(d, float) and np.any(np.asarray(d) == 0):
            raise RuntimeError(f"{op}: ZeroDivisionError (an integer tensor divided by zero)")
    return x, y


def floor_divide(input, other): return FloorDivide.apply(*_int_zero_division("floor_divide", *_promote(input, other)))
def remainder(input, other): return Remainder.apply(*_int_zero_division("remainder", *_promote(input, other)))
def fmod(input, other): return Fmod.apply(*_int_zero_division("fmod", *_promote(input, other)))
def eq(input, other): return Eq.apply(*_promote(input, other))
def ne(input, other): return Ne.apply(*_promote(input, other))
def lt(input, other): return Lt.apply(*_promote(input, other))
def le(input, other): return Le.apply(*_promote(input, other))
def gt(input, other): return Gt.apply(*_promote(input, other))
def ge(input, other): return Ge.apply(*_promote(input, other))
def logical_and(input, other): return LogicalAnd.apply(input, other)
def logical_or(input, other): return LogicalOr.apply(input, other)
def logical_xor(input, other): return LogicalXor.apply(input, other)
def logical_not(input): return LogicalNot.apply(input)
def isnan(input): return IsNan.apply(input)
def isinf(input): return IsInf.apply(input)
def isfinite(input): return IsFinite.apply(input)


_BOOL = "returns a Python bool (one value, not one per sample)"


@_not_batchable("equal", _BOOL)
def equal(input, other):
    """True if x and y have the same shape and elements."""
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


@_not_batchable("allclose", _BOOL)
def allclose(input, other, rtol=1e-5, atol=1e-8, equal_nan=False):
    return bool(np.allclose(_raw(input), _raw(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


# -- fused three-operand ops (the optimizers' updates) ----------------------------------------------
# Each forward takes `out`: None, or the array an in-place variant (lerp_, addcmul_, addcdiv_) writes
# into with NumPy's out= (ops/inplace.py passes it only when no graph is recorded).

def _same_dtype(name, x, *others):
    """x and the tensor operands as Tensors of one dtype (PyTorch's result type of them all)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    for o in others:
        if isinstance(o, Tensor) and o.dtype != x.dtype:
            dt = _dtype.result_type(x._data, o._data)
            if dt != x.dtype:
                x = cast(x, dt)
    return x, [(_cast_to(o, x.dtype) if isinstance(o, Tensor) else o) for o in others]


class Lerp(Function):
    """out = x + w * (end - x)  (as end - (end - x) * (1 - w) where |w| >= 0.5, PyTorch's two forms);
    dx = g * (1 - w),  dend = g * w,  dw = g * (end - x)"""
    batching = "elementwise_no_out"

    @staticmethod
    def forward(ctx, x, end, w, out):
        nx, nend, nw = ctx.needs_input_grad[:3]
        ctx.save_for_backward(x if nw else None, end if nw else None, w if (nx or nend) else None)
        diff = np.subtract(end, x)
        if isinstance(w, np.ndarray):  # a tensor weight: PyTorch's form chosen per element
            near_x = np.abs(w) < 0.5
            res = np.where(near_x, x + w * diff, end - diff * (1 - w)).astype(x.dtype, copy=False)
            if out is None:
                return res
            np.copyto(out, res)
            return out
        if abs(w) < 0.5:
            diff *= w
            return np.add(x, diff, out=out)
        diff *= 1 - w
        return np.subtract(end, diff, out=out)

    @staticmethod
    def backward(ctx, g):
        x, end, w = ctx.saved_tensors
        nx, nend, nw = ctx.needs_input_grad[:3]
        return (g * (1.0 - w) if nx else None), (g * w if nend else None), \
            (g * (end - x) if nw else None), None

    @staticmethod
    def jvp(ctx, tx, tend, tw, _out):
        x, end, w = ctx.saved_tensors
        out = None
        for term in (None if tx is None else tx * (1.0 - w), None if tend is None else tend * w,
                     None if tw is None else tw * (end - x)):
            if term is not None:
                out = term if out is None else out + term
        return out

    @staticmethod
    def onnx(e, c):
        x, end, w, out = e.args[:4]
        if out is not None:
            raise c.unmapped("the out= form")
        dt = x.dtype
        end, w = c.operand(end, dt), c.operand(w, dt)
        diff = c.add("Sub", [end, x.name])
        near_x = c.add("Add", [x.name, c.add("Mul", [w, diff])])  # PyTorch's two forms, per element
        near_end = c.add("Sub", [end, c.add("Mul", [diff, c.add("Sub", [c.scalar(1, dt), w])])])
        small = c.add("Less", [c.add("Abs", [w]), c.scalar(0.5, dt)])
        return c.add("Where", [small, near_x, near_end], c.out(e))


def lerp(input, end, weight):  # noqa: A002
    """lerp(input, end, weight) = input + weight * (end - input), as torch.lerp (weight: number or tensor)."""
    if not isinstance(weight, Tensor):
        weight = complex(weight) if isinstance(weight, complex) else float(weight)
    _check_float("lerp", input, end, weight)
    x, (end, weight) = _same_dtype("lerp", input, end, weight)
    return Lerp.apply(x, end, weight, None)


def _addc_onnx(op):
    """x + value * op(t1, t2) (addcmul: Mul, addcdiv: Div)."""
    def onnx(e, c):
        x, t1, t2, value, out = e.args[:5]
        if out is not None:
            raise c.unmapped("the out= form")
        prod = c.add(op, [c.operand(t1, x.dtype), c.operand(t2, x.dtype)])
        return c.add("Add", [x.name, c.add("Mul", [prod, c.scalar(value, x.dtype)])], c.out(e))
    return staticmethod(onnx)


class Addcmul(Function):
    """out = x + value * t1 * t2;  dx = g,  dt1 = g * value * t2,  dt2 = g * value * t1"""
    batching = "elementwise_no_out"
    onnx = _addc_onnx("Mul")

    @staticmethod
    def forward(ctx, x, t1, t2, value, out):
        _, n1, n2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(t1 if n2 else None, t2 if n1 else None)
        ctx.value = value
        prod = np.multiply(t1, t2)
        if value != 1:
            prod *= value
        return np.add(x, prod, out=out)

    @staticmethod
    def backward(ctx, g):
        t1, t2 = ctx.saved_tensors
        nx, n1, n2 = ctx.needs_input_grad[:3]
        gv = g * float(ctx.value) if (n1 or n2) and ctx.value != 1 else g
        return (g if nx else None), (gv * t2 if n1 else None), (gv * t1 if n2 else None), None, None

    @staticmethod
    def jvp(ctx, tx, tt1, tt2, _value, _out):
        t1, t2 = ctx.saved_tensors
        prod = None
        if tt1 is not None:
            prod = tt1 * t2
        if tt2 is not None:
            prod = t1 * tt2 if prod is None else prod + t1 * tt2
        if prod is not None and ctx.value != 1:
            prod = prod * float(ctx.value)
        return prod if tx is None else (tx if prod is None else tx + prod)


def addcmul(input, tensor1, tensor2, *args, value=1):  # noqa: A002
    """addcmul(input, tensor1, tensor2, value=1) = input + value * tensor1 * tensor2, as torch.addcmul
    (the deprecated addcmul(input, Number value, tensor1, tensor2) runs with PyTorch's warning)."""
    if args:
        value, tensor1, tensor2 = _deprecated_overload("addcmul", (tensor1,), (tensor2,) + args, "value")
    x, (t1, t2) = _same_dtype("addcmul", input, tensor1, tensor2)
    return Addcmul.apply(x, t1, t2, value, None)


class Addcdiv(Function):
    """out = x + value * t1 / t2;  dx = g,  dt1 = g * value / t2,  dt2 = -g * value * t1 / t2**2"""
    batching = "elementwise_no_out"
    onnx = _addc_onnx("Div")

    @staticmethod
    def forward(ctx, x, t1, t2, value, out):
        _, n1, n2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(t1 if n2 else None, t2 if (n1 or n2) else None)
        ctx.value = value
        quot = np.true_divide(t1, t2)
        if value != 1:
            quot *= value
        return np.add(x, quot, out=out)

    @staticmethod
    def backward(ctx, g):
        t1, t2 = ctx.saved_tensors
        nx, n1, n2 = ctx.needs_input_grad[:3]
        gv = g * float(ctx.value) if (n1 or n2) and ctx.value != 1 else g
        d1 = gv / t2 if n1 else None
        return (g if nx else None), d1, (-gv * t1 / (t2 * t2) if n2 else None), None, None

    @staticmethod
    def jvp(ctx, tx, tt1, tt2, _value, _out):
        t1, t2 = ctx.saved_tensors
        quot = None
        if tt1 is not None:
            quot = tt1 / t2
        if tt2 is not None:
            d = -tt2 * t1 / (t2 * t2)
            quot = d if quot is None else quot + d
        if quot is not None and ctx.value != 1:
            quot = quot * float(ctx.value)
        return quot if tx is None else (tx if quot is None else tx + quot)


def addcdiv(input, tensor1, tensor2, *args, value=1):  # noqa: A002
    """addcdiv(input, tensor1, tensor2, value=1) = input + value * tensor1 / tensor2, as torch.addcdiv
    (the deprecated addcdiv(input, Number value, tensor1, tensor2) runs with PyTorch's warning)."""
    if args:
        value, tensor1, tensor2 = _deprecated_overload("addcdiv", (tensor1,), (tensor2,) + args, "value")
    _check_float("addcdiv", tensor1, tensor2)
    x, (t1, t2) = _same_dtype("addcdiv", input, tensor1, tensor2)
    return Addcdiv.apply(x, t1, t2, value, None)


def _check_float(name, *operands):
    for o in operands:
        if isinstance(o, Tensor) and o.dtype.kind not in "fc":
            kinds = ", ".join(str(v.dtype) if isinstance(v, Tensor) else type(v).__name__ for v in operands)
            raise RuntimeError(f"{name}: expected floating point or complex tensors, got ({kinds})")


# -- rounding, exponentials, logarithms and trig: trunc/frac, exp2/log2/log10, logaddexp(2), hypot,
# inverse and hyperbolic trig, copysign, isclose. Integer inputs give the default float dtype, as in
# PyTorch.
__all__ += [
    "trunc", "fix", "frac", "exp2", "log2", "log10", "logaddexp", "logaddexp2", "hypot", "asin", "arcsin", "acos",
    "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh",
    "copysign", "isclose",
]
__methods__ += [
    "trunc", "fix", "frac", "exp2", "log2", "log10", "logaddexp", "logaddexp2", "hypot", "asin", "arcsin", "acos",
    "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh",
    "copysign", "isclose", "allclose",
]


class Trunc(_Piecewise):
    """out = trunc(x) (rounds toward zero);  dx = 0"""
    _fast = staticmethod(np.trunc)
    fusion = Kernel("np.trunc({0})", "trunc({0})")

    @staticmethod
    def forward(ctx, x):
        return np.trunc(x)

    @staticmethod
    def onnx(e, c):
        return c.result(e, _trunc_onnx(c, c.x(e), c.dt(e)))


class Frac(Function):
    """out = x - trunc(x) (the sign of x);  dx = g"""
    batching = "elementwise"
    fusion = Kernel("{0} - np.trunc({0})", "frac({0})")

    @staticmethod
    def forward(ctx, x):
        return x - np.trunc(x)

    @staticmethod
    def backward(ctx, g):
        return g

    jvp = backward  # elementwise: J is diagonal, so J t is the VJP's formula applied to t

    @staticmethod
    def onnx(e, c):
        return c.add("Sub", [c.x(e), _trunc_onnx(c, c.x(e), c.dt(e))], c.out(e))


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


class Exp2(UnaryUfunc):
    """out = 2 ** x;  dx = g * out * ln 2"""
    _fast = staticmethod(np.exp2)
    _saves = OUTPUT

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * out * _LN2

    @staticmethod
    def onnx(e, c):
        return c.add("Pow", [c.scalar(2, c.dt(e)), c.x(e)], c.out(e))


class Log2(UnaryUfunc):
    """out = log2(x);  dx = g / (x ln 2)"""
    _fast = staticmethod(np.log2)
    _saves = INPUT

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (x * _LN2)

    @staticmethod
    def onnx(e, c):
        return c.add("Div", [c.add("Log", [c.x(e)]), c.scalar(_LN2, c.dt(e))], c.out(e))


class Log10(UnaryUfunc):
    """out = log10(x);  dx = g / (x ln 10)"""
    _fast = staticmethod(np.log10)
    _saves = INPUT

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (x * _LN10)

    @staticmethod
    def onnx(e, c):
        return c.add("Div", [c.add("Log", [c.x(e)]), c.scalar(_LN10, c.dt(e))], c.out(e))


class Asin(UnaryUfunc):
    """out = asin(x);  dx = g / sqrt(1 - x²)"""
    _fast = staticmethod(np.arcsin)
    _saves = INPUT
    onnx = "Asin"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * rsqrt(1.0 - x * x)


class Acos(UnaryUfunc):
    """out = acos(x);  dx = -g / sqrt(1 - x²)"""
    _fast = staticmethod(np.arccos)
    _saves = INPUT
    onnx = "Acos"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return -g * rsqrt(1.0 - x * x)


class Atan(UnaryUfunc):
    """out = atan(x);  dx = g / (1 + x²)"""
    _fast = staticmethod(np.arctan)
    _saves = INPUT
    onnx = "Atan"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (x * x + 1.0)


class Sinh(UnaryUfunc):
    """out = sinh(x);  dx = g * cosh(x)"""
    _fast = staticmethod(np.sinh)
    _saves = INPUT
    onnx = "Sinh"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * cosh(x)


class Cosh(UnaryUfunc):
    """out = cosh(x);  dx = g * sinh(x)"""
    _fast = staticmethod(np.cosh)
    _saves = INPUT
    onnx = "Cosh"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * sinh(x)


class Asinh(UnaryUfunc):
    """out = asinh(x);  dx = g / sqrt(x² + 1)"""
    _fast = staticmethod(np.arcsinh)
    _saves = INPUT
    onnx = "Asinh"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * rsqrt(x * x + 1.0)


class Acosh(UnaryUfunc):
    """out = acosh(x) (x >= 1);  dx = g / sqrt(x² - 1)"""
    _fast = staticmethod(np.arccosh)
    _saves = INPUT
    onnx = "Acosh"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * rsqrt(x * x - 1.0)


class Atanh(UnaryUfunc):
    """out = atanh(x) (|x| < 1);  dx = g / (1 - x²)"""
    _fast = staticmethod(np.arctanh)
    _saves = INPUT
    onnx = "Atanh"

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (1.0 - x * x)


def trunc(input): return Trunc.apply(input) if input.dtype.kind == "f" else input  # noqa: A002
def frac(input): return Frac.apply(input)  # noqa: A002
def exp2(input): return Exp2._call(_float(input))  # noqa: A002
def log2(input): return Log2._call(_float(input))  # noqa: A002
def log10(input): return Log10._call(_float(input))  # noqa: A002
def asin(input): return Asin._call(_float(input))  # noqa: A002
def acos(input): return Acos._call(_float(input))  # noqa: A002
def atan(input): return Atan._call(_float(input))  # noqa: A002
def sinh(input): return Sinh._call(_float(input))  # noqa: A002
def cosh(input): return Cosh._call(_float(input))  # noqa: A002
def asinh(input): return Asinh._call(_float(input))  # noqa: A002
def acosh(input): return Acosh._call(_float(input))  # noqa: A002
def atanh(input): return Atanh._call(_float(input))  # noqa: A002


fix, arcsin, arccos, arctan, arcsinh, arccosh, arctanh = trunc, asin, acos, atan, asinh, acosh, atanh


def _float_pair(name, input, other):
    """Both operands promoted (PyTorch's result type), integers to the default float dtype."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    x, y = _promote(input, other)
    if not _is_float(x) and not _is_float(y):
        x, y = _cast_to(x, _dtype.get_default_dtype()), _cast_to(y, _dtype.get_default_dtype())
    return x, y


def _logaddexp_onnx(base):
    """log_base(base ** a + base ** b) = max + log_base(1 + base ** -|a - b|)."""
    ln_b = math.log(base)

    def onnx(e, c):
        dt = c.dt(e)
        a, b = c.operands(e, 2)
        m = c.add("Max", [a, b])
        d = c.add("Abs", [c.add("Sub", [a, b])])
        d = c.add("Where", [c.add("Equal", [a, b]), c.scalar(0, dt), d])  # inf, inf: no inf - inf
        t = c.add("Exp", [c.add("Mul", [c.add("Neg", [d]), c.scalar(ln_b, dt)])])  # base ** -d
        lg = c.add("Log", [c.add("Add", [t, c.scalar(1, dt)])])
        return c.add("Add", [m, c.add("Div", [lg, c.scalar(ln_b, dt)])], c.out(e))
    return staticmethod(onnx)


class Logaddexp(Function):
    """out = log(exp(x) + exp(y));  dx = g * sigmoid(x - y),  dy = g * sigmoid(y - x)"""
    batching = "elementwise"
    fusion = NoRule("no fused loop body written yet")
    onnx = _logaddexp_onnx(math.e)

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return np.logaddexp(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (g * sigmoid(x - y) if nx else None), (g * sigmoid(y - x) if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        a = None if tx is None else tx * sigmoid(x - y)
        b = None if ty is None else ty * sigmoid(y - x)
        return b if a is None else (a if b is None else a + b)


class Logaddexp2(Function):
    """out = log2(2**x + 2**y);  dx = g * sigmoid((x - y) ln 2),  dy = g * sigmoid((y - x) ln 2)"""
    batching = "elementwise"
    fusion = NoRule("no fused loop body written yet")
    onnx = _logaddexp_onnx(2.0)

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return np.logaddexp2(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (g * sigmoid((x - y) * _LN2) if nx else None), (g * sigmoid((y - x) * _LN2) if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        a = None if tx is None else tx * sigmoid((x - y) * _LN2)
        b = None if ty is None else ty * sigmoid((y - x) * _LN2)
        return b if a is None else (a if b is None else a + b)


class Hypot(Function):
    """out = sqrt(x² + y²);  dx = g * x / out,  dy = g * y / out  (nan at the origin, as PyTorch)"""
    batching = "elementwise"
    fusion = NoRule("no fused loop body written yet")

    @staticmethod
    def forward(ctx, x, y):
        out = np.hypot(x, y)
        ctx.save_for_backward(x, y, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, y, out = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        scale = g / out
        return (scale * x if nx else None), (scale * y if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y, out = ctx.saved_tensors
        a = None if tx is None else tx * x
        b = None if ty is None else ty * y
        return (b if a is None else (a if b is None else a + b)) / out

    @staticmethod
    def onnx(e, c):
        a, b = c.operands(e, 2)
        return c.add("Sqrt", [c.add("Add", [c.add("Mul", [a, a]), c.add("Mul", [b, b])])], c.out(e))


class Copysign(Function):
    """out = |x| with the sign of y;  dx = g * out / x (0 where x == 0, as PyTorch),  dy = 0"""
    batching = "elementwise"
    fusion = NoRule("no fused loop body written yet")

    @staticmethod
    def forward(ctx, x, y):
        out = np.copysign(x, y)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(x == 0, 0.0, out / np.where(x == 0, 1, x)).astype(out.dtype)
        ctx.save_for_backward(ratio)  # +-1 or 0: piecewise constant in x and y
        return out

    @staticmethod
    def backward(ctx, g):
        ratio, = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (g * ratio if nx else None), (g * 0.0 if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):
        ratio, = ctx.saved_tensors  # d out / d y is 0 almost everywhere
        a = ratio * 0.0 if tx is None else tx * ratio
        return a if ty is None else a + ty * 0.0

    @staticmethod
    def onnx(e, c):
        x, y = c.operands(e, 2)
        mag = c.add("Abs", [x])
        y_neg = c.add("Less", [c.add("Reciprocal", [y]), c.scalar(0, c.dt(e))])  # -0 too
        return c.add("Where", [y_neg, c.add("Neg", [mag]), mag], c.out(e))


def logaddexp(input, other):  # noqa: A002
    """log(exp(input) + exp(other)), computed without overflow (torch.logaddexp)."""
    return Logaddexp.apply(*_float_pair("logaddexp", input, other))


def logaddexp2(input, other):  # noqa: A002
    """log2(2**input + 2**other), computed without overflow (torch.logaddexp2)."""
    return Logaddexp2.apply(*_float_pair("logaddexp2", input, other))


def hypot(input, other):  # noqa: A002
    """sqrt(input² + other²) elementwise (torch.hypot; floating point inputs only, as PyTorch)."""
    _check_float("hypot", input, other)
    return Hypot.apply(*_float_pair("hypot", input, other))


def copysign(input, other):  # noqa: A002
    """|input| with the sign of other, elementwise (torch.copysign; integers give floats)."""
    return Copysign.apply(*_float_pair("copysign", input, other))


class IsClose(_NonDifferentiable):
    """out = |x - y| <= atol + rtol * |y| (nan == nan if equal_nan);  not differentiable"""
    op_name = "isclose"

    @staticmethod
    def forward(ctx, x, y, rtol, atol, equal_nan):
        return _no_grad_out(ctx, np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))

    @staticmethod
    def onnx(e, c):
        rtol, atol, equal_nan = e.args[2:5]
        dt = c.dt(e)
        a, b = c.operands(e, 2)
        if np.dtype(dt).kind != "f":  # integers compare as float64, as NumPy's isclose
            dt = np.dtype(np.float64)
            a, b = (c.add("Cast", [v], to=c.tp(dt)) for v in (a, b))
        finite = c.add("Not", [c.add("Or", [c.add("IsInf", [a]), c.add("IsInf", [b])])])
        tol = c.add("Add", [c.scalar(atol, dt), c.add("Mul", [c.scalar(rtol, dt), c.add("Abs", [b])])])
        near = c.add("And", [finite, c.add("LessOrEqual", [c.add("Abs", [c.add("Sub", [a, b])]), tol])])
        res = c.add("Or", [c.add("Equal", [a, b]), near])
        if equal_nan:
            res = c.add("Or", [res, c.add("And", [c.add("IsNaN", [a]), c.add("IsNaN", [b])])])
        return c.result(e, res)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """Elementwise closeness, |input - other| <= atol + rtol * |other| (torch.isclose)."""
    if not isinstance(other, Tensor):
        other = Tensor._make(np.asarray(other, dtype=_raw(input).dtype))
    if input.dtype != other.dtype:
        raise RuntimeError(f"isclose: {input.dtype} input and {other.dtype} other: expected the same dtype "
                           f"(as PyTorch)")
    if rtol < 0 or atol < 0:
        raise RuntimeError(f"isclose: rtol ({rtol}) and atol ({atol}) must be non-negative")
    return IsClose.apply(input, other, float(rtol), float(atol), bool(equal_nan))


def _inplace_of(op, name):
    def op_(input, *args):  # noqa: A002
        from .inplace import inplace
        return inplace(input, op, *args, name=name)
    op_.__name__ = op_.__qualname__ = name
    op_.__doc__ = f"In-place {op.__name__}: writes {op.__name__}(self, ...) into self (Tensor.{name})."
    return op_


# the in-place Tensor methods PyTorch has for these (x.asin_(), x.copysign_(y), ...)
for _name in ("trunc", "fix", "frac", "exp2", "log2", "log10", "asin", "arcsin", "acos", "arccos", "atan",
              "arctan", "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "copysign",
              "hypot", "square"):
    globals()[_name + "_"] = _inplace_of(globals()[_name], _name + "_")
    __methods__.append(_name + "_")
del _name


# -- complex tensors (ops/complex.py): which of these ops record complex inputs ---------------------
# linear with real coefficients: the backward is right for complex as written
for _cls in (Add, Sub, Rsub, Neg, Where, ToCopy, _NonDifferentiable):
    _cls._complex = True
# holomorphic: the backward g * f'(x), run on conj(g) and conjugated (autograd.function.holomorphic)
for _cls in (Mul, Div, Pow, Exp, Log, Log1P, Expm1, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tan, Tanh, Sinh, Cosh,
             Sigmoid, Exp2, Log2, Log10, Asin, Acos, Atan, Asinh, Acosh, Atanh, Addcmul, Addcdiv, Lerp):
    _holomorphic(_cls)
Abs._complex = True  # |z|: its backward and jvp have the complex case (z / |z|)
