"""Special functions: xlogy and sinc, the gamma family (lgamma, digamma, polygamma, mvlgamma, igamma,
igammac), erfc / erfinv, logit, i0, and the torch.special-only ops (erfcx, xlog1py, entr, i0e, i1,
i1e, ndtr, ndtri, log_ndtr, zeta, bessel_j0/j1/y0/y1; exported by minigrad.special, which also
names the aliases: gammaln, psi, multigammaln, gammainc, gammaincc, expit, ...).

Each op is one class that carries every rule (docs/adding-an-op.md): forward in NumPy, backward in
Tensor ops (so it differentiates again), its JVP, its batching rule, its ONNX mapping, and the
elementwise family's fast path; the wrapper promotes dtypes as PyTorch does. The special functions
compute in float64 (minigrad/_specfun.py) and round to the input's dtype; where PyTorch has no
derivative (igamma's and zeta's first argument) backward raises its NotImplementedError, and the
Bessel functions J/Y are not differentiable (no grad_fn), as in PyTorch.
"""
import math

import numpy as np

from .. import _dtype, _specfun
from ..autograd.function import ALWAYS, INPUT, BinaryUfunc, Function, Kernel, NoRule, UnaryUfunc
from ..tensor import Tensor
from .elementwise import (_NonDifferentiable, _cast_to, _float, _float_pair, _inplace_of, _is_float, _no_grad_out,
                          _promote, cos, exp, log, sign, where)

__all__ = ["xlogy", "sinc", "lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "erfc", "erfinv",
           "logit", "i0"]
__methods__ = ["xlogy", "sinc", "xlogy_", "sinc_", "lgamma", "digamma", "mvlgamma", "igamma",
               "igammac", "erfc", "erfinv", "logit", "i0", "lgamma_", "digamma_", "polygamma_", "mvlgamma_",
               "igamma_", "igammac_", "erfc_", "erfinv_", "logit_", "i0_"]


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
    if type(x) is Tensor and (out := Xlogy._try(x, y)) is not None:
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
    return Sinc._call(_float(input))


xlogy_ = _inplace_of(xlogy, "xlogy_")
sinc_ = _inplace_of(sinc, "sinc_")


# -- the special functions computed in float64 (minigrad/_specfun.py) ------------------------------
_NO_FUSION = NoRule("a special function computed by a NumPy algorithm in float64 (series, recurrences, "
                    "continued fractions): no one-line loop body")
_NO_ONNX = NoRule("ONNX has no operator for this special function")
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _run(kernel, *arrays, static=()):
    """kernel on the float64 values of arrays, rounded to their (float) dtype; the result takes the
    inputs' memory layout as a NumPy ufunc's would (a transposed input gives a transposed result)."""
    dt = np.result_type(*arrays)
    flat = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays))
    with np.errstate(all="ignore"):  # poles and overflows give inf/nan as PyTorch, without warnings
        out = kernel(*(a.reshape(-1) for a in flat), *static)  # 1-d: the kernels index with masks
    res = np.empty_like(arrays[0], dtype=dt) if len(arrays) == 1 else np.asarray(np.add(*arrays, dtype=dt))
    res[...] = np.asarray(out, dtype=np.float64).reshape(flat[0].shape)
    return res


class _SpecialUnary(Function):
    """An elementwise special function of one input (and static arguments): forward is `_kernel` in
    float64; backward and jvp multiply by `_deriv(x, out, *static)`, written in Tensor ops so the
    derivative differentiates again."""
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @classmethod
    def forward(cls, ctx, x, *static):
        out = _run(cls._kernel, x, static=static)
        ctx.save_for_backward(x, out)
        ctx.static = static
        return out

    @classmethod
    def backward(cls, ctx, g):
        x, out = ctx.saved_tensors
        return (g * cls._deriv(x, out, *ctx.static),) + (None,) * len(ctx.static)

    @classmethod
    def jvp(cls, ctx, t, *_static):
        x, out = ctx.saved_tensors
        return t * cls._deriv(x, out, *ctx.static)


class Lgamma(_SpecialUnary):
    """out = log|Gamma(x)| (inf at the poles);  dx = g * digamma(x)"""
    _kernel = staticmethod(_specfun.lgamma)

    @staticmethod
    def _deriv(x, out):
        return digamma(x)


class Digamma(_SpecialUnary):
    """out = digamma(x) = d/dx log Gamma(x);  dx = g * polygamma(1, x)"""
    _kernel = staticmethod(_specfun.digamma)

    @staticmethod
    def _deriv(x, out):
        return polygamma(1, x)


def _polygamma_kernel(x, n):
    return _specfun.polygamma(n, x)


class Polygamma(_SpecialUnary):
    """out = the n-th derivative of digamma at x (n static);  dx = g * polygamma(n + 1, x)"""
    _kernel = staticmethod(_polygamma_kernel)

    @staticmethod
    def _deriv(x, out, n):
        return polygamma(n + 1, x)


class Mvlgamma(_SpecialUnary):
    """out = log of the multivariate gamma function of dimension p (static);
    dx = g * sum_j digamma(x - j/2), j < p"""
    _kernel = staticmethod(_specfun.mvlgamma)

    @classmethod
    def forward(cls, ctx, x, p):  # C order, as PyTorch's (a composite of lgamma and a sum)
        out = np.asarray(_run(cls._kernel, x, static=(p,)), order="C")
        ctx.save_for_backward(x, out)
        ctx.static = (p,)
        return out

    @staticmethod
    def _deriv(x, out, p):
        d = digamma(x)
        for j in range(1, p):
            d = d + digamma(x - j / 2)
        return d


class Erfc(_SpecialUnary):
    """out = 1 - erf(x), accurate in the right tail;  dx = -g * 2/sqrt(pi) * exp(-x^2)"""
    _kernel = staticmethod(_specfun.erfc)

    @staticmethod
    def _deriv(x, out):
        return exp(-(x * x)) * (-2.0 / _SQRT_PI)


class SpecialErfcx(_SpecialUnary):
    """out = exp(x^2) erfc(x) (torch.special.erfcx);  dx = g * (2 x erfcx(x) - 2/sqrt(pi))"""
    _kernel = staticmethod(_specfun.erfcx)

    @staticmethod
    def _deriv(x, out):
        return 2.0 * x * erfcx(x) - 2.0 / _SQRT_PI


class Erfinv(_SpecialUnary):
    """out = the inverse of erf on (-1, 1);  dx = g * sqrt(pi)/2 * exp(out^2)"""
    _kernel = staticmethod(_specfun.erfinv)

    @staticmethod
    def _deriv(x, out):
        y = erfinv(x)
        return exp(y * y) * (_SQRT_PI / 2)


class SpecialNdtr(_SpecialUnary):
    """out = the standard normal CDF, erfc(-x / sqrt 2) / 2 (torch.special.ndtr, which PyTorch records as
    a composite: MulBackward1);  dx = g * exp(-x^2 / 2) / sqrt(2 pi)"""
    _kernel = staticmethod(_specfun.ndtr)

    @staticmethod
    def _deriv(x, out):
        return exp(x * x * -0.5) * (1.0 / _SQRT_2PI)


class SpecialNdtri(_SpecialUnary):
    """out = the standard normal quantile (torch.special.ndtri);  dx = g * sqrt(2 pi) * exp(out^2 / 2)"""
    _kernel = staticmethod(_specfun.ndtri)

    @staticmethod
    def _deriv(x, out):
        y = ndtri(x)
        return exp(y * y * 0.5) * _SQRT_2PI


class SpecialLogNdtr(_SpecialUnary):
    """out = log of the standard normal CDF (torch.special.log_ndtr);
    dx = g * exp(-(out + x^2/2)) / sqrt(2 pi)  (PyTorch's formula)"""
    _kernel = staticmethod(_specfun.log_ndtr)

    @staticmethod
    def _deriv(x, out):
        return exp(-(log_ndtr(x) + x * x * 0.5)) * (1.0 / _SQRT_2PI)


def _entr_np(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -x * np.log(x)
    out = np.where(x == 0, 0.0, np.where(x < 0, -np.inf, out))
    return np.where(np.isnan(x), x, out)


class SpecialEntr(_SpecialUnary):
    """out = -x log x (0 at 0, -inf below 0; torch.special.entr);  dx = -g * (1 + log x)"""
    _kernel = staticmethod(_entr_np)

    @staticmethod
    def _deriv(x, out):
        return -(log(x) + 1.0)

    @staticmethod
    def onnx(e, c):  # Where(x == 0, 0, Where(x < 0, -inf, -x * Log(x)))
        dt = c.dt(e)
        x = c.x(e)
        zero = c.scalar(0, dt)
        body = c.add("Neg", [c.add("Mul", [x, c.add("Log", [x])])])
        neg = c.add("Where", [c.add("Less", [x, zero]), c.scalar(-math.inf, dt), body])
        return c.add("Where", [c.add("Equal", [x, zero]), zero, neg], c.out(e))


def _logit_np(x, eps):
    if eps is not None:
        x = np.clip(x, eps, 1.0 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1.0 - x))


class Logit(_SpecialUnary):
    """out = log(z / (1 - z)), z = x clamped to [eps, 1 - eps] when eps is given;
    dx = g / (x (1 - x)), 0 outside [eps, 1 - eps] (as PyTorch)"""
    _kernel = staticmethod(_logit_np)

    @staticmethod
    def _deriv(x, out, eps):
        d = 1.0 / (x * (1.0 - x))
        if eps is None:
            return d
        return where((x < eps) | (x > 1.0 - eps), 0.0, d)

    @staticmethod
    def onnx(e, c):  # Log(z / (1 - z)), z clamped first when eps is given
        dt = c.dt(e)
        x = c.x(e)
        eps = e.args[1] if len(e.args) > 1 else None
        if eps is not None:
            x = c.add("Clip", [x, c.scalar(eps, dt), c.scalar(1.0 - eps, dt)])
        return c.add("Log", [c.add("Div", [x, c.add("Sub", [c.scalar(1, dt), x])])], c.out(e))


class I0(_SpecialUnary):
    """out = the modified Bessel function I0(x);  dx = g * i1(x)"""
    _kernel = staticmethod(_specfun.i0)

    @staticmethod
    def _deriv(x, out):
        return i1(x)


class SpecialI0E(_SpecialUnary):
    """out = exp(-|x|) I0(x) (torch.special.i0e);  dx = g * (i1e(x) - sign(x) i0e(x))"""
    _kernel = staticmethod(_specfun.i0e)

    @staticmethod
    def _deriv(x, out):
        return i1e(x) - sign(x) * i0e(x)


def _safe_x(x):
    """(x == 0, x with its zeros replaced by 1): a divisor without 0 for the 1/x terms below."""
    zero = x == 0
    return zero, where(zero, 1.0, x)


class SpecialI1(_SpecialUnary):
    """out = the modified Bessel function I1(x) (torch.special.i1);  dx = g * (i0(x) - i1(x) / x), 1/2 at 0"""
    _kernel = staticmethod(_specfun.i1)

    @staticmethod
    def _deriv(x, out):
        zero, sx = _safe_x(x)
        return where(zero, 0.5, i0(sx) - i1(sx) / sx)


class SpecialI1E(_SpecialUnary):
    """out = exp(-|x|) I1(x) (torch.special.i1e);  dx = g * (i0e(x) - i1e(x) (sign(x) + 1/x)), 1/2 at 0"""
    _kernel = staticmethod(_specfun.i1e)

    @staticmethod
    def _deriv(x, out):
        zero, sx = _safe_x(x)
        return where(zero, 0.5, i0e(sx) - i1e(sx) * (sign(sx) + 1.0 / sx))


class _Bessel(_NonDifferentiable):
    """A Bessel function of the first or second kind (order 0 or 1): no derivative in PyTorch, so the
    output never requires grad (no grad_fn), as torch.special.bessel_*."""
    fusion = _NO_FUSION
    onnx = _NO_ONNX
    jvp = NoRule("not differentiable (PyTorch's bessel_j0/j1/y0/y1 have no derivative): no tangent")

    @classmethod
    def forward(cls, ctx, x):
        return _no_grad_out(ctx, _run(cls._kernel, x))


class SpecialBesselJ0(_Bessel):
    """out = J0(x), the Bessel function of the first kind of order 0 (not differentiable)"""
    _kernel = staticmethod(_specfun.bessel_j0)


class SpecialBesselJ1(_Bessel):
    """out = J1(x), the Bessel function of the first kind of order 1 (not differentiable)"""
    _kernel = staticmethod(_specfun.bessel_j1)


class SpecialBesselY0(_Bessel):
    """out = Y0(x), the Bessel function of the second kind of order 0 (not differentiable)"""
    _kernel = staticmethod(_specfun.bessel_y0)


class SpecialBesselY1(_Bessel):
    """out = Y1(x), the Bessel function of the second kind of order 1 (not differentiable)"""
    _kernel = staticmethod(_specfun.bessel_y1)


# -- two inputs ------------------------------------------------------------------------------------
def _no_derivative(what):
    raise NotImplementedError(f"the derivative for '{what}' is not implemented.")


class _SpecialBinary(Function):
    """An elementwise special function of two inputs computed in float64 (`_kernel`)."""
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX
    _da_exists = True  # False: the first argument's derivative raises PyTorch's NotImplementedError

    @classmethod
    def forward(cls, ctx, a, x):
        ctx.save_for_backward(a, x)
        return _run(cls._kernel, a, x)

    @classmethod
    def backward(cls, ctx, g):
        a, x = ctx.saved_tensors
        na, nx = ctx.needs_input_grad
        # (forward mode's double-VJP identity asks for every float input: a constant first argument of
        # igamma/zeta then has no gradient to compute, rather than PyTorch's error)
        da = cls._da(g, a, x) if na and (a.requires_grad or cls._da_exists) else None
        return da, (cls._dx(g, a, x) if nx else None)

    @classmethod
    def jvp(cls, ctx, ta, tx):
        a, x = ctx.saved_tensors
        da = None if ta is None else cls._da(ta, a, x)
        dx = None if tx is None else cls._dx(tx, a, x)
        return dx if da is None else (da if dx is None else da + dx)


def _igamma_density(a, x):
    """x^(a-1) exp(-x) / Gamma(a), the derivative of the regularized lower incomplete gamma in x."""
    return exp(xlogy(a - 1.0, x) - x - lgamma(a))


class Igamma(_SpecialBinary):
    """out = P(a, x), the regularized lower incomplete gamma function;
    dx = g * x^(a-1) exp(-x) / Gamma(a);  da: not implemented (as PyTorch)"""
    _da_exists = False
    _kernel = staticmethod(_specfun.gammainc)

    @staticmethod
    def _da(g, a, x):
        _no_derivative("igamma: input")

    @staticmethod
    def _dx(g, a, x):
        return g * _igamma_density(a, x)


class Igammac(_SpecialBinary):
    """out = Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function;
    dx = -g * x^(a-1) exp(-x) / Gamma(a);  da: not implemented (as PyTorch)"""
    _da_exists = False
    _kernel = staticmethod(_specfun.gammaincc)

    @staticmethod
    def _da(g, a, x):
        _no_derivative("igammac: input")

    @staticmethod
    def _dx(g, a, x):
        return -g * _igamma_density(a, x)


class SpecialZeta(_SpecialBinary):
    """out = the Hurwitz zeta function sum_k (k + q)^-x (torch.special.zeta);
    dq = -g * x * zeta(x + 1, q);  dx: not implemented (as PyTorch)"""
    _da_exists = False
    _kernel = staticmethod(_specfun.zeta)

    @staticmethod
    def _da(g, x, q):
        _no_derivative("zeta")

    @staticmethod
    def _dx(g, x, q):
        return -g * x * zeta(x + 1.0, q)


def _xlog1py_np(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(x * np.log1p(y))
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), r.dtype), r).astype(r.dtype, copy=False)


class SpecialXlog1Py(_SpecialBinary):
    """out = x * log1p(y), 0 where x == 0 (unless y is nan; torch.special.xlog1py);
    dx = g * log1p(y) (0 where x == 0 and y <= -1, as PyTorch),  dy = g * x / (1 + y)"""
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return _xlog1py_np(x, y)

    @staticmethod
    def _da(g, x, y):
        return where((x == 0) & (y <= -1), 0.0, xlog1py(g, y))

    @staticmethod
    def _dx(g, x, y):
        return g * x / (y + 1.0)

    @staticmethod
    def onnx(e, c):  # Where(x == 0 and y is not nan, 0, x * Log(1 + y))
        dt = c.dt(e)
        x, y = (c.operand(v, dt) for v in e.args[:2])
        zero = c.scalar(0, dt)
        keep = c.add("And", [c.add("Equal", [x, zero]), c.add("Not", [c.add("IsNaN", [y])])])
        l1p = c.add("Log", [c.add("Add", [y, c.scalar(1, dt)])])
        return c.add("Where", [keep, zero, c.add("Mul", [x, l1p])], c.out(e))


# -- the wrappers ------------------------------------------------------------------------------------
def _check_tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dtype.kind == "c":
        raise NotImplementedError(f"{name}: not implemented for complex tensors ({input.dtype})")
    return _float(input)


def _pair(name, input, other):
    x, y = _float_pair(name, input, other)
    dt = (x if isinstance(x, Tensor) else y).dtype
    return _cast_to(x, dt), _cast_to(y, dt)


def lgamma(input):  # noqa: A002
    """log |Gamma(input)| elementwise (torch.lgamma); inf at 0, the negative integers and +-inf."""
    return Lgamma.apply(_check_tensor("lgamma", input))


def digamma(input):  # noqa: A002
    """The logarithmic derivative of the gamma function (torch.digamma): -inf at +0 (inf at -0), nan at
    the negative integers."""
    return Digamma.apply(_check_tensor("digamma", input))


def polygamma(n, input):  # noqa: A002
    """The n-th derivative of digamma (torch.polygamma(n, input)); n = 0 is digamma."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return Polygamma.apply(_check_tensor("polygamma", input), int(n))


def mvlgamma(input, p):  # noqa: A002
    """The log of the multivariate gamma function of dimension p (torch.mvlgamma); every element must
    be greater than (p - 1) / 2."""
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(f"mvlgamma(): argument 'p' must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got p={p}")
    x = _check_tensor("mvlgamma", input)
    if x.numel() and not bool((x._data > (p - 1) / 2).all()):
        raise RuntimeError(f"All elements must be greater than (p-1)/2 (mvlgamma with p={p}: "
                           f"(p-1)/2 = {(p - 1) / 2})")
    return Mvlgamma.apply(x, int(p))


def igamma(input, other):  # noqa: A002
    """The regularized lower incomplete gamma function P(input, other) (torch.igamma,
    torch.special.gammainc); differentiable in other only, as PyTorch."""
    return Igamma.apply(*_pair("igamma", input, other))


def igammac(input, other):  # noqa: A002
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P (torch.igammac,
    torch.special.gammaincc); differentiable in other only, as PyTorch."""
    return Igammac.apply(*_pair("igammac", input, other))


def erfc(input):  # noqa: A002
    """The complementary error function 1 - erf(input) (torch.erfc), accurate where erf is near 1."""
    return Erfc.apply(_check_tensor("erfc", input))


def erfinv(input):  # noqa: A002
    """The inverse error function (torch.erfinv): +-inf at +-1, nan outside [-1, 1]."""
    return Erfinv.apply(_check_tensor("erfinv", input))


def logit(input, eps=None):  # noqa: A002
    """log(p / (1 - p)) (torch.logit); with eps, input is clamped to [eps, 1 - eps] first."""
    return Logit.apply(_check_tensor("logit", input), None if eps is None else float(eps))


def i0(input):  # noqa: A002
    """The modified Bessel function of the first kind of order 0 (torch.i0)."""
    return I0.apply(_check_tensor("i0", input))


def erfcx(input):  # noqa: A002
    """The scaled complementary error function exp(input^2) erfc(input) (torch.special.erfcx)."""
    return SpecialErfcx.apply(_check_tensor("erfcx", input))


def ndtr(input):  # noqa: A002
    """The standard normal CDF, erfc(-input / sqrt 2) / 2 (torch.special.ndtr): accurate in the left tail."""
    return SpecialNdtr.apply(_check_tensor("ndtr", input))


def ndtri(input):  # noqa: A002
    """The standard normal quantile, the inverse of ndtr (torch.special.ndtri): -inf at 0, inf at 1."""
    return SpecialNdtri.apply(_check_tensor("ndtri", input))


def log_ndtr(input):  # noqa: A002
    """log of the standard normal CDF, accurate in both tails (torch.special.log_ndtr)."""
    return SpecialLogNdtr.apply(_check_tensor("log_ndtr", input))


def entr(input):  # noqa: A002
    """The elementwise entropy -input * log(input): 0 at 0, -inf below 0 (torch.special.entr)."""
    return SpecialEntr.apply(_check_tensor("entr", input))


def i0e(input):  # noqa: A002
    """The exponentially scaled modified Bessel function exp(-|x|) I0(x) (torch.special.i0e)."""
    return SpecialI0E.apply(_check_tensor("i0e", input))


def i1(input):  # noqa: A002
    """The modified Bessel function of the first kind of order 1 (torch.special.i1)."""
    return SpecialI1.apply(_check_tensor("i1", input))


def i1e(input):  # noqa: A002
    """The exponentially scaled modified Bessel function exp(-|x|) I1(x) (torch.special.i1e)."""
    return SpecialI1E.apply(_check_tensor("i1e", input))


def zeta(input, other):  # noqa: A002
    """The Hurwitz zeta function sum_k (k + other)^-input (torch.special.zeta); differentiable in other
    only, as PyTorch."""
    return SpecialZeta.apply(*_pair("zeta", input, other))


def xlog1py(input, other):  # noqa: A002
    """input * log1p(other), 0 where input is 0 (torch.special.xlog1py)."""
    return SpecialXlog1Py.apply(*_pair("xlog1py", input, other))


def bessel_j0(input):  # noqa: A002
    """The Bessel function of the first kind of order 0 (torch.special.bessel_j0; not differentiable)."""
    return SpecialBesselJ0.apply(_check_tensor("bessel_j0", input))


def bessel_j1(input):  # noqa: A002
    """The Bessel function of the first kind of order 1 (torch.special.bessel_j1; not differentiable)."""
    return SpecialBesselJ1.apply(_check_tensor("bessel_j1", input))


def bessel_y0(input):  # noqa: A002
    """The Bessel function of the second kind of order 0 (torch.special.bessel_y0; not differentiable)."""
    return SpecialBesselY0.apply(_check_tensor("bessel_y0", input))


def bessel_y1(input):  # noqa: A002
    """The Bessel function of the second kind of order 1 (torch.special.bessel_y1; not differentiable)."""
    return SpecialBesselY1.apply(_check_tensor("bessel_y1", input))


lgamma_ = _inplace_of(lgamma, "lgamma_")
digamma_ = _inplace_of(digamma, "digamma_")
mvlgamma_ = _inplace_of(mvlgamma, "mvlgamma_")
igamma_ = _inplace_of(igamma, "igamma_")
igammac_ = _inplace_of(igammac, "igammac_")
erfc_ = _inplace_of(erfc, "erfc_")
erfinv_ = _inplace_of(erfinv, "erfinv_")
logit_ = _inplace_of(logit, "logit_")
i0_ = _inplace_of(i0, "i0_")


def _polygamma_method(input, n):  # Tensor.polygamma(n): the tensor first  # noqa: A002
    return polygamma(n, input)


def polygamma_(input, n):  # noqa: A002
    """In-place polygamma: writes polygamma(n, self) into self (Tensor.polygamma_)."""
    from .inplace import inplace
    return inplace(input, _polygamma_method, n, name="polygamma_")


_polygamma_method.__name__ = "polygamma"
_polygamma_method.__doc__ = "self.polygamma(n) is polygamma(n, self) (Tensor.polygamma)."
if not hasattr(Tensor, "polygamma"):
    Tensor.polygamma = _polygamma_method
