"""Elementwise ops. Each: forward in NumPy, backward in Tensor ops (so it can be differentiated again).

Backward rules return the gradient in the broadcast (output) shape; the engine sums it back.
"""
import math

import numpy as np

from .. import _dtype
from ..autograd.function import Function
from ..autograd.grad_mode import _state
from ..tensor import Tensor


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


_scalars = {}


def _scalar(v, dtype):
    """The Python float v as a cached constant 0-d tensor of dtype (read-only, never requires grad).

    NumPy's array-with-0-d-array loop is about twice as fast as its array-with-Python-float path,
    and the same scalars recur op after op (1.0, 0.5, a learning rate). Zeros (0.0 == -0.0 would
    share an entry) and nan (never equal to itself) are passed through uncached.
    """
    key = (v, dtype)
    t = _scalars.get(key)
    if t is None:
        if v == 0.0 or v != v or len(_scalars) >= 1024:
            return v
        arr = np.array(v, dtype=dtype)
        arr.flags.writeable = False
        t = _scalars[key] = Tensor._make(arr)
    return t


def _cast_to(v, dtype):
    if isinstance(v, Tensor):
        return v if v.dtype == dtype else cast(v, dtype)
    return Tensor._make(np.asarray(v, dtype=dtype))


class Cast(Function):
    """out = x.astype(dtype);  dx = g.astype(x.dtype)"""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.src = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return cast(g, ctx.src), None


def cast(x, dtype):
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return Cast.apply(x, dtype)


class Add(Function):
    """out = x + y;  dx = g,  dy = g"""
    _fast = staticmethod(np.add)

    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, g):
        return g, g


def add(x, y):
    if type(y) is float and type(x) is Tensor and x._data.dtype.kind == "f":
        return Add.apply(x, _scalar(y, x._data.dtype))  # tensor op Python float: the common case
    return Add.apply(*_promote(x, y))


class Sub(Function):
    """out = x - y;  dx = g,  dy = -g"""
    _fast = staticmethod(np.subtract)

    @staticmethod
    def forward(ctx, x, y):
        return x - y

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)


def sub(x, y):
    if type(y) is float and type(x) is Tensor and x._data.dtype.kind == "f":
        return Sub.apply(x, _scalar(y, x._data.dtype))  # tensor op Python float: the common case
    return Sub.apply(*_promote(x, y))


class Mul(Function):
    """out = x * y;  dx = g * y,  dy = g * x"""
    _fast = staticmethod(np.multiply)

    @staticmethod
    def forward(ctx, x, y):
        nx, ny = ctx.needs_input_grad
        ctx.save_for_backward(x if ny else None, y if nx else None)  # only what backward reads
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (g * y if nx else None), (g * x if ny else None)


def mul(x, y):
    if type(y) is float and type(x) is Tensor and x._data.dtype.kind == "f":
        return Mul.apply(x, _scalar(y, x._data.dtype))  # tensor op Python float: the common case
    return Mul.apply(*_promote(x, y))


class Div(Function):
    """out = x / y;  dx = g / y,  dy = -g * x / y**2"""
    _fast = staticmethod(np.true_divide)

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x / y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (g / y if nx else None), (-g * x / (y * y) if ny else None)


def div(x, y, rounding_mode=None):
    if rounding_mode == "floor":
        return floor_divide(x, y)
    if rounding_mode == "trunc":
        q = div(x, y)
        return Tensor._make(np.trunc(q._data))
    x, y = _promote(x, y)
    if not _is_float(x) and not _is_float(y):  # true division of integers gives the default float
        x = _cast_to(x, _dtype.get_default_dtype())
        y = _cast_to(y, _dtype.get_default_dtype())
    return Div.apply(x, y)


def _is_float(v):
    return (v.dtype.kind == "f") if isinstance(v, Tensor) else isinstance(v, float)


class Neg(Function):
    """out = -x;  dx = -g"""
    _fast = staticmethod(np.negative)

    @staticmethod
    def forward(ctx, x):
        return -x

    @staticmethod
    def backward(ctx, g):
        return -g


def neg(x):
    return Neg.apply(x)


class Pow(Function):
    """out = x ** y;  dx = g * y * x**(y-1) (0 where y == 0),  dy = g * out * log(x) (0 where x == 0, y >= 0)"""

    @staticmethod
    def forward(ctx, x, y):
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 ** -1 = inf, silently, as PyTorch
            out = np.power(x, y)
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


def pow(x, y):
    if isinstance(y, (int, float)) and isinstance(x, Tensor):
        if x.dtype.kind in "iub" and isinstance(y, float):
            x = cast(x, _dtype.get_default_dtype())
        return Pow.apply(x, y)
    x, y = _promote(x, y)
    if not isinstance(x, Tensor):
        x = Tensor._make(np.asarray(x, dtype=y.dtype))
    return Pow.apply(x, y)


def _unary(name, np_fn, doc, grad, save="x"):
    """Build a one-input Function whose backward is grad(g, x_or_out) in Tensor ops."""

    def forward(ctx, x):
        out = np_fn(x)
        ctx.save_for_backward(out if save == "out" else x)
        return out

    def backward(ctx, g):
        v, = ctx.saved_tensors
        return grad(g, v)

    cls = type(name, (Function,), {"__doc__": doc, "forward": staticmethod(forward),
                                   "backward": staticmethod(backward), "_fast": staticmethod(np_fn),
                                   "__module__": __name__})
    return cls


Exp = _unary("Exp", np.exp, "out = exp(x);  dx = g * out", lambda g, out: g * out, save="out")
Log = _unary("Log", np.log, "out = log(x);  dx = g / x", lambda g, x: g / x)
Log1p = _unary("Log1p", np.log1p, "out = log(1 + x);  dx = g / (1 + x)", lambda g, x: g / (x + 1.0))
Expm1 = _unary("Expm1", np.expm1, "out = exp(x) - 1;  dx = g * (out + 1)", lambda g, out: g * (out + 1.0), save="out")
Sqrt = _unary("Sqrt", np.sqrt, "out = sqrt(x);  dx = g / (2 * out)", lambda g, out: g / (out * 2.0), save="out")
Rsqrt = _unary("Rsqrt", lambda x: 1.0 / np.sqrt(x), "out = 1 / sqrt(x);  dx = -g * out**3 / 2",
               lambda g, out: g * out * out * out * -0.5, save="out")
Reciprocal = _unary("Reciprocal", np.reciprocal, "out = 1 / x;  dx = -g * out**2",
                    lambda g, out: -g * out * out, save="out")
Sin = _unary("Sin", np.sin, "out = sin(x);  dx = g * cos(x)", lambda g, x: g * cos(x))
Cos = _unary("Cos", np.cos, "out = cos(x);  dx = -g * sin(x)", lambda g, x: -g * sin(x))
Tan = _unary("Tan", np.tan, "out = tan(x);  dx = g * (1 + out**2)", lambda g, out: g * (out * out + 1.0), save="out")
Tanh = _unary("Tanh", np.tanh, "out = tanh(x);  dx = g * (1 - out**2)", lambda g, out: g * (1.0 - out * out), save="out")
Abs = _unary("Abs", np.abs, "out = |x|;  dx = g * sign(x)  (0 at x == 0, as PyTorch)", lambda g, x: g * sign(x))


def _sigmoid_np(x):
    # exp of a negative number only: stable for large |x|
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


Sigmoid = _unary("Sigmoid", _sigmoid_np, "out = 1 / (1 + exp(-x));  dx = g * out * (1 - out)",
                 lambda g, out: g * (out * (1.0 - out)), save="out")


class LogSigmoid(Function):
    """out = log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|));  dx = g * sigmoid(-x)   (F.logsigmoid)

    One op, not a composition of relu/abs: their zero subgradients at 0 gave dx = 0 there
    (PyTorch: 0.5)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * Sigmoid.apply(-x)


class Relu(Function):
    """out = max(x, 0);  dx = ThresholdBackward(g, out) = g * (out > 0)   (gradient 0 at x == 0, as PyTorch)"""

    @staticmethod
    def forward(ctx, x):
        out = np.maximum(x, 0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return ThresholdBackward.apply(g, out)


def _threshold_backward(g, y):
    return g * (y > 0)


class ThresholdBackward(Function):
    """relu's backward as an op (PyTorch's threshold_backward): out = g * (y > 0);
    dg = ThresholdBackward(gg, y), dy = 0 (the mask is piecewise constant in y)"""

    _fast = staticmethod(_threshold_backward)  # one multiply when no graph is recorded

    @staticmethod
    def forward(ctx, g, y):
        ctx.save_for_backward(y)
        return _threshold_backward(g, y)

    @staticmethod
    def backward(ctx, gg):
        y, = ctx.saved_tensors
        return ThresholdBackward.apply(gg, y), None


_erf_scalar = np.frompyfunc(math.erf, 1, 1)


def _erf_np(x):
    # NumPy has no erf; math.erf is exact to double precision (slow for huge arrays, fine here)
    return np.asarray(_erf_scalar(x), dtype=x.dtype if x.dtype.kind == "f" else np.float64)


Erf = _unary("Erf", _erf_np, "out = erf(x);  dx = g * 2/sqrt(pi) * exp(-x**2)",
             lambda g, x: g * (exp(-(x * x)) * (2.0 / math.sqrt(math.pi))))


def exp(x): return Exp.apply(x)
def log(x): return Log.apply(x)
def log1p(x): return Log1p.apply(x)
def expm1(x): return Expm1.apply(x)
def sqrt(x): return Sqrt.apply(x)
def rsqrt(x): return Rsqrt.apply(x)
def reciprocal(x): return Reciprocal.apply(_float(x))
def sin(x): return Sin.apply(x)
def cos(x): return Cos.apply(x)
def tan(x): return Tan.apply(x)
def tanh(x): return Tanh.apply(x)
def sigmoid(x): return Sigmoid.apply(x)
def relu(x): return Relu.apply(x)
def abs(x): return Abs.apply(x)  # noqa: A001
def erf(x): return Erf.apply(x)


def _float(x):
    return x if x.dtype.kind == "f" else cast(x, _dtype.get_default_dtype())


class _Piecewise(Function):
    """sign, floor, ceil, round: piecewise constant, so the gradient is 0 (as PyTorch gives)."""

    @staticmethod
    def forward(ctx, x, fn):
        return fn(x)

    @staticmethod
    def backward(ctx, g):
        return g * 0.0, None


class Sign(_Piecewise):
    """out = sign(x);  dx = 0"""


class Floor(_Piecewise):
    """out = floor(x);  dx = 0"""


class Ceil(_Piecewise):
    """out = ceil(x);  dx = 0"""


class Round(_Piecewise):
    """out = round(x) (half to even, as PyTorch);  dx = 0"""


def sign(x): return Sign.apply(x, np.sign)
def floor(x): return Floor.apply(x, np.floor) if x.dtype.kind == "f" else x
def ceil(x): return Ceil.apply(x, np.ceil) if x.dtype.kind == "f" else x
def round(x, decimals=0): return Round.apply(x, lambda a: np.round(a, decimals))  # noqa: A001


class Clamp(Function):
    """out = min(max(x, lo), hi);  dx = g where lo <= x <= hi;  dlo = g where x < lo;  dhi = g where x > hi"""

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
        dx = where(inside, g, 0.0) if nx else None
        dlo = where(x < lo, g, 0.0) if nlo else None
        dhi = where(x > hi, g, 0.0) if nhi else None
        return dx, dlo, dhi


def clamp(x, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    return Clamp.apply(x, min, max)


clip = clamp


class Maximum(Function):
    """out = max(x, y);  dx = g where x > y, g/2 at ties (as PyTorch);  dy likewise"""

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


class Minimum(Function):
    """out = min(x, y);  dx = g where x < y, g/2 at ties (as PyTorch);  dy likewise"""

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


def maximum(x, y, *, out=None):
    if out is not None:  # PyTorch's out= (the optimizers' running maximum): written in place
        from .inplace import into
        return into(out, maximum, x, y, name="maximum")
    return Maximum.apply(*_promote(x, y))


def minimum(x, y): return Minimum.apply(*_promote(x, y))


class Where(Function):
    """out = cond ? x : y;  dx = g where cond,  dy = g where not cond"""

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


def where(condition, x, y):
    if isinstance(condition, Tensor) and condition.dtype != np.bool_:
        condition = Tensor._make(condition._data.astype(bool))
    elif not isinstance(condition, Tensor):
        condition = Tensor._make(np.asarray(condition, dtype=bool))
    if isinstance(x, Tensor) and not isinstance(y, Tensor):
        y = Tensor._make(np.asarray(y, dtype=x.dtype))
    elif isinstance(y, Tensor) and not isinstance(x, Tensor):
        x = Tensor._make(np.asarray(x, dtype=y.dtype))
    elif not isinstance(x, Tensor):
        x, y = Tensor(x), Tensor(y)
    x, y = _promote(x, y)
    return Where.apply(condition, x, y)


# -- no gradient: integer division, remainder, comparisons, logic, tests -------------------------
def _raw(v):
    return v._data if isinstance(v, Tensor) else v


def _nograd(name, fn, promote=True):
    def op(x, y):
        if promote:
            x, y = _promote(x, y)
        try:
            return Tensor._make(np.asarray(fn(_raw(x), _raw(y))))
        except ValueError as e:
            if "broadcast" in str(e):
                raise ValueError(f"{name}: shapes {np.shape(_raw(x))} and {np.shape(_raw(y))} "
                                 "cannot be broadcast") from None
            raise
    op.__name__ = name
    op.__doc__ = f"{name}(x, y): elementwise, not differentiable."
    return op


floor_divide = _nograd("floor_divide", np.floor_divide)
remainder = _nograd("remainder", np.remainder)
fmod = _nograd("fmod", np.fmod)
eq = _nograd("eq", np.equal)
ne = _nograd("ne", np.not_equal)
lt = _nograd("lt", np.less)
le = _nograd("le", np.less_equal)
gt = _nograd("gt", np.greater)
ge = _nograd("ge", np.greater_equal)
logical_and = _nograd("logical_and", np.logical_and, promote=False)
logical_or = _nograd("logical_or", np.logical_or, promote=False)
logical_xor = _nograd("logical_xor", np.logical_xor, promote=False)


def logical_not(x): return Tensor._make(np.logical_not(x._data))
def isnan(x): return Tensor._make(np.isnan(x._data))
def isinf(x): return Tensor._make(np.isinf(x._data))
def isfinite(x): return Tensor._make(np.isfinite(x._data))


def equal(x, y):
    """True if x and y have the same shape and elements."""
    return x.shape == y.shape and bool(np.array_equal(x._data, y._data))


def allclose(x, y, rtol=1e-5, atol=1e-8, equal_nan=False):
    return bool(np.allclose(_raw(x), _raw(y), rtol=rtol, atol=atol, equal_nan=equal_nan))


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


def lerp(input, end, weight):  # noqa: A002
    """lerp(input, end, weight) = input + weight * (end - input), as torch.lerp (weight: number or tensor)."""
    if not isinstance(weight, Tensor):
        weight = float(weight)
    _check_float("lerp", input, end, weight)
    x, (end, weight) = _same_dtype("lerp", input, end, weight)
    return Lerp.apply(x, end, weight, None)


class Addcmul(Function):
    """out = x + value * t1 * t2;  dx = g,  dt1 = g * value * t2,  dt2 = g * value * t1"""

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


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """addcmul(input, tensor1, tensor2, value=1) = input + value * tensor1 * tensor2, as torch.addcmul."""
    x, (t1, t2) = _same_dtype("addcmul", input, tensor1, tensor2)
    return Addcmul.apply(x, t1, t2, value, None)


class Addcdiv(Function):
    """out = x + value * t1 / t2;  dx = g,  dt1 = g * value / t2,  dt2 = -g * value * t1 / t2**2"""

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


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """addcdiv(input, tensor1, tensor2, value=1) = input + value * tensor1 / tensor2, as torch.addcdiv."""
    _check_float("addcdiv", tensor1, tensor2)
    x, (t1, t2) = _same_dtype("addcdiv", input, tensor1, tensor2)
    return Addcdiv.apply(x, t1, t2, value, None)


def _check_float(name, *operands):
    for o in operands:
        if isinstance(o, Tensor) and o.dtype.kind != "f":
            kinds = ", ".join(str(v.dtype) if isinstance(v, Tensor) else type(v).__name__ for v in operands)
            raise RuntimeError(f"{name}: expected floating point tensors, got ({kinds})")
