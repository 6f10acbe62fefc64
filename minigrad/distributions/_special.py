"""The special functions the distributions need, private to this package: lgamma, digamma, polygamma,
erfinv and the implicit reparameterisation gradient of a Gamma sample (PyTorch's
_standard_gamma_grad). NumPy forwards, Tensor-op backwards (so they differentiate again where the
backward is itself one of these); mg.special will export its own versions of the public ones.
"""
import math

import numpy as np

from ..autograd.function import Function, NoRule
from ..ops.elementwise import _erf_np, exp
from ..tensor import Tensor

_NO_ONNX = NoRule("a private helper of minigrad.distributions, not exported to ONNX")
_NO_FUSION = NoRule("a private helper of minigrad.distributions, computed in NumPy")


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _lgamma_one(v):
    try:
        return math.lgamma(v)
    except ValueError:       # a pole: 0 or a negative integer
        return math.inf


_lgamma_u = np.frompyfunc(_lgamma_one, 1, 1)


def lgamma_np(x):
    x = np.asarray(x)
    return np.asarray(_lgamma_u(_f64(x)), dtype=np.float64).astype(x.dtype if x.dtype.kind == "f" else np.float64)


def digamma_np(x):
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.float64
    v = _f64(x)
    neg = v < 0.5
    y = np.where(neg, 1.0 - v, v)
    acc = np.zeros_like(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(10):                 # ψ(x) = ψ(x + 1) - 1/x until x >= 10
            m = y < 10
            if not m.any():
                break
            acc[m] -= 1.0 / y[m]
            y[m] += 1.0
        z = 1.0 / (y * y)
        series = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z * (1 / 132 - z * 691 / 32760)))))
        r = acc + np.log(y) - 0.5 / y - series
        r = np.where(neg, r - math.pi / np.tan(math.pi * v), r)   # reflection ψ(1-x) - π cot(πx)
    r = np.where(v == 0, -np.inf, r)
    r = np.where((v < 0) & (v == np.floor(v)), np.nan, r)
    return r.astype(dt)


_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]


def polygamma_np(n, x):
    """ψ^(n)(x) for n >= 1 and x > 0: recurrence up to x >= 20, then the asymptotic series."""
    if n == 0:
        return digamma_np(x)
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.float64
    y = _f64(x).copy()
    sign = (-1.0) ** (n + 1)
    fact = math.factorial(n)
    acc = np.zeros_like(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(20):
            m = y < 20
            if not m.any():
                break
            acc[m] += fact / y[m] ** (n + 1)
            y[m] += 1.0
        s = math.factorial(n - 1) / y ** n + fact / (2 * y ** (n + 1))
        for k, b in enumerate(_B2K, 1):
            s = s + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) / y ** (2 * k + n)
        r = sign * (acc + s)
    r = np.where(_f64(x) <= 0, np.nan, r)
    return r.astype(dt)


def erfinv_np(x):
    """erf⁻¹: Giles' single-precision approximation, then Newton steps on erf."""
    x = np.asarray(x)
    dt = x.dtype if x.dtype.kind == "f" else np.float64
    y = _f64(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        a = w - 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * a
        b = np.sqrt(w) - 3.0
        q = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            q = c + q * b
        r = np.where(w < 5.0, p, q) * y
        fin = np.isfinite(r)
        for _ in range(3):
            step = (_erf_np(r) - y) / (2.0 / math.sqrt(math.pi) * np.exp(-r * r))
            r = np.where(fin & np.isfinite(step), r - step, r)
    r = np.where(y == 1, np.inf, np.where(y == -1, -np.inf, r))
    r = np.where(np.abs(y) > 1, np.nan, r)
    return r.astype(dt)


def standard_gamma_grad_np(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) (implicit reparameterisation): PyTorch's
    standard_gamma_grad_one (aten/src/ATen/native/Distributions.h), elementwise."""
    a, v = np.broadcast_arrays(_f64(alpha), _f64(x))
    out = np.empty(a.shape, np.float64)
    with np.errstate(all="ignore"):
        # Taylor series for small x
        numer = np.ones_like(a)
        denom = a.copy()
        s1 = numer / denom
        s2 = numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-v / i)
            denom = denom + 1
            s1 = s1 + numer / denom
            s2 = s2 + numer / (denom * denom)
        pxa = v ** a
        pdf = v ** (a - 1) * np.exp(-v)
        cdf = pxa * s1
        cdf_a = (np.log(v) - digamma_np(a)) * cdf - pxa * s2
        small = -cdf_a / pdf
        small = np.where(np.isnan(small), 0.0, small)
        # Rice saddle point expansion for large alpha
        n1 = 1 + 24 * a * (1 + 12 * a)
        n2 = 1440 * (a * a) + 6 * v * (53 - 120 * v) - 65 * v * v / a + a * (107 + 3600 * v)
        near = n1 * n2 / (1244160 * (a * a) * (a * a))
        den = np.sqrt(8 * a)
        t2 = den / (a - v)
        t3 = (v - a - a * np.log(v / a)) ** -1.5
        t23 = np.where(v < a, t2 - t3, t2 + t3)
        t1 = np.log(v / a) * t23 - np.sqrt(2 / a) * (a + v) / ((a - v) * (a - v))
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        far = -stirling * (v * t1) / den
        # a bivariate rational approximation elsewhere
        u, w = np.log(v / a), np.log(a)
        cuv = np.array([[0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089,
                         0.0014179084],
                        [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113,
                         -0.0035938915, -0.00058392623],
                        [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642,
                         -0.0021309326, 0.00085092367, -1.5247877e-07]])
        cv = [cuv[0, i] + u * (cuv[1, i] + u * cuv[2, i]) for i in range(8)]
        p = cv[0] + w * (cv[1] + w * (cv[2] + w * cv[3]))
        q = cv[4] + w * (cv[5] + w * (cv[6] + w * cv[7]))
        rat = np.exp(p / q)
        out = np.where(v < 0.8, small,
                       np.where(a > 8.0, np.where((0.9 * a <= v) & (v <= 1.1 * a), near, far), rat))
    return out


# -- the Functions ----------------------------------------------------------------------------------
class _Lgamma(Function):
    """out = lgamma(x);  dx = g * digamma(x)"""
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return lgamma_np(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * digamma(x)

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return t * digamma(x)


class _Polygamma(Function):
    """out = polygamma(n, x);  dx = g * polygamma(n + 1, x)"""
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return polygamma_np(n, x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * polygamma(ctx.n + 1, x), None

    @staticmethod
    def jvp(ctx, t, _):
        x, = ctx.saved_tensors
        return t * polygamma(ctx.n + 1, x)


class _Erfinv(Function):
    """out = erfinv(x);  dx = g * sqrt(pi)/2 * exp(out**2)"""
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x):
        out = erfinv_np(x)
        ctx.save_for_backward(Tensor(out))
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * (exp(out * out) * (math.sqrt(math.pi) / 2))

    @staticmethod
    def jvp(ctx, t):
        out, = ctx.saved_tensors
        return t * (exp(out * out) * (math.sqrt(math.pi) / 2))


class _StandardGamma(Function):
    """out = x, a Gamma(alpha, 1) sample drawn beforehand;  dalpha = g * dx/dalpha (implicit
    reparameterisation, PyTorch's _standard_gamma_grad)"""
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX
    jvp = NoRule("the sample's tangent is the backward's partial; forward mode runs the double-VJP identity")

    @staticmethod
    def forward(ctx, alpha, x):
        ctx.grad = standard_gamma_grad_np(alpha, x).astype(x.dtype)
        return x.copy()

    @staticmethod
    def backward(ctx, g):
        return g * Tensor(ctx.grad), None


def _t(x):
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x, dtype=np.float64))


def lgamma(x):
    return _Lgamma.apply(_t(x))


def digamma(x):
    return _Polygamma.apply(_t(x), 0)


def polygamma(n, x):
    return _Polygamma.apply(_t(x), int(n))


def erfinv(x):
    return _Erfinv.apply(_t(x))


def standard_gamma_reparam(alpha, x):
    """x (drawn from Gamma(alpha, 1)) as a function of alpha for the gradient."""
    return _StandardGamma.apply(alpha, x)
