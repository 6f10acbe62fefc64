"""Special functions: xlogy and sinc (torch.xlogy, torch.sinc; torch.special.* has the same).

Each op is one class that carries every rule (docs/adding-an-op.md): forward in NumPy, backward in
Tensor ops (so it differentiates again), its JVP, its batching rule, its ONNX mapping, and the
elementwise family's fast path; the wrapper promotes dtypes as PyTorch does.
"""
import math

import numpy as np

from .. import _dtype
from ..autograd.function import ALWAYS, INPUT, BinaryUfunc, Kernel, UnaryUfunc, _binary, _unary
from ..tensor import Tensor
from .elementwise import _cast_to, _float, _inplace_of, _is_float, _promote, cos, where

__all__ = ["xlogy", "sinc"]
__methods__ = ["xlogy", "sinc", "xlogy_", "sinc_"]


# -- xlogy ------------------------------------------------------------------------------------------
def _xlogy_np(x, y, out=None):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(np.multiply(x, np.log(y), out=out))
    np.copyto(r, 0, where=(x == 0) & ~np.isnan(y))
    return r


def _dx(t, x, y):  # t * d xlogy / dx = t * log(y), 0 where x == 0 and y <= 0 (PyTorch's choice)
    return where((x == 0) & (y <= 0), 0.0, xlogy(t, y))


def _dy(t, x, y):  # t * d xlogy / dy
    return t * x / y


class Xlogy(BinaryUfunc):
    """out = x * log(y), 0 where x == 0 (unless y is nan);
    dx = g * log(y) (0 where x == 0 and y <= 0, as PyTorch),  dy = g * x / y"""
    _fast = staticmethod(_xlogy_np)
    _saves = (ALWAYS, ALWAYS)
    fusion = Kernel("(D(0) if ({0} == D(0) and {1} == {1}) else {0} * np.log({1}))", "xlogy({0},{1})", exact=False)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        return (_dx(g, x, y) if nx else None), (_dy(g, x, y) if ny else None)

    @staticmethod
    def jvp(ctx, tx, ty):  # elementwise: the same partials applied to the tangents, summed
        x, y = ctx.saved_tensors
        a = None if tx is None else _dx(tx, x, y)
        b = None if ty is None else _dy(ty, x, y)
        return b if a is None else (a if b is None else a + b)

    @staticmethod
    def onnx(e, c):  # Where(x == 0 and y is not nan, 0, x * Log(y))
        dt = c.dt(e)
        x, y = (c.operand(v, dt) for v in e.args[:2])
        zero = c.scalar(0, dt)
        keep = c.add("And", [c.add("Equal", [x, zero]), c.add("Not", [c.add("IsNaN", [y])])])
        return c.add("Where", [keep, zero, c.add("Mul", [x, c.add("Log", [y])])], c.out(e))


def xlogy(input, other):  # noqa: A002
    """input * log(other), 0 where input is 0 (torch.xlogy); a number may stand for either side,
    integers give the default float dtype."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"xlogy(): expected a Tensor for input or other, got ({type(input).__name__}, "
                        f"{type(other).__name__})")
    x, y = _promote(input, other)
    if not _is_float(x) and not _is_float(y):
        x, y = _cast_to(x, _dtype.get_default_dtype()), _cast_to(y, _dtype.get_default_dtype())
    # a number becomes a 0-d tensor of the result dtype (np.log(2) alone is float64)
    dt = (x if isinstance(x, Tensor) else y).dtype
    x, y = _cast_to(x, dt), _cast_to(y, dt)
    if type(x) is Tensor and (out := _binary(Xlogy, x, y)) is not None:
        return out
    return Xlogy.apply(x, y)


# -- sinc -------------------------------------------------------------------------------------------
def _sinc_np(x, out=None):
    px = np.asarray(np.multiply(x, np.asarray(math.pi, x.dtype), out=out))
    with np.errstate(invalid="ignore"):
        r = np.divide(np.sin(px), px, out=px)
    np.copyto(r, 1, where=(x == 0))
    return r


# near 0, (cos(πx) - sinc(x)) / x loses its digits (both terms are ~1): there the derivative is its
# Taylor series -π²x/3 + π⁴x³/30, whose next term is below the dtype's rounding under these bounds
_SINC_C1, _SINC_C3 = -math.pi ** 2 / 3, math.pi ** 4 / 30
_SINC_SMALL = {np.dtype(np.float64): 1e-3, np.dtype(np.float32): 0.1, np.dtype(np.float16): 0.3}


class Sinc(UnaryUfunc):
    """out = sin(πx) / (πx), 1 at x == 0;  dx = g * (cos(πx) - sinc(x)) / x, near 0 its Taylor
    series g * x * (-π²/3 + π⁴x²/30): 0 at 0 as PyTorch, accurate near 0, and differentiable
    again there (PyTorch's second derivative at 0 is nan)"""
    _fast = staticmethod(_sinc_np)
    _saves = INPUT
    fusion = Kernel("(D(1) if {0} == D(0) else np.sin({0} * D(np.pi)) / ({0} * D(np.pi)))", "sinc({0})",
                    exact=False)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        small = abs(x) < _SINC_SMALL.get(x.dtype, 1e-3)
        safe = where(small, 1.0, x)
        return where(small, g * x * (x * x * _SINC_C3 + _SINC_C1),
                     g * (cos(safe * math.pi) - sinc(safe)) / safe)

    @staticmethod
    def onnx(e, c):  # Where(x == 0, 1, Sin(πx) / (πx))
        dt = c.dt(e)
        x = c.x(e)
        zero = c.add("Equal", [x, c.scalar(0, dt)])
        px = c.add("Mul", [c.add("Where", [zero, c.scalar(1, dt), x]), c.scalar(math.pi, dt)])
        return c.add("Where", [zero, c.scalar(1, dt), c.add("Div", [c.add("Sin", [px]), px])], c.out(e))


def sinc(input):  # noqa: A002
    """sin(πx) / (πx), 1 at 0 (torch.sinc); integers and bools give the default float dtype."""
    return _unary(Sinc, _float(input))


xlogy_ = _inplace_of(xlogy, "xlogy_")
sinc_ = _inplace_of(sinc, "sinc_")
