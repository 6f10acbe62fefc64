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


# -- Dirichlet (and Beta) reparameterised gradient: PyTorch's dirichlet_grad_one --------------------
def _beta_grad_alpha_small(x, alpha, beta):
    factor = digamma_np(alpha) - digamma_np(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** (-beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    factor = digamma_np(alpha + beta) - digamma_np(beta)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = np.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x))) ** -1.5
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    far = stirling * prefactor * term1234
    return np.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


_DIRICHLET_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def dirichlet_grad_np(x, alpha, total):
    """-(d/dalpha cdf(x; alpha, total - alpha)) / pdf / (1 - x) for x ~ Beta(alpha, total - alpha):
    PyTorch's dirichlet_grad_one (aten/src/ATen/native/Distributions.h), elementwise."""
    x, alpha, total = np.broadcast_arrays(_f64(x), _f64(alpha), _f64(total))
    beta = total - alpha
    boundary = total * x * (1 - x)
    with np.errstate(all="ignore"):
        small_a = _beta_grad_alpha_small(x, alpha, beta)
        small_b = -_beta_grad_beta_small(1 - x, beta, alpha)
        mid = _beta_grad_alpha_mid(x, alpha, beta)
        u = np.log(x)
        a = np.log(alpha) - u
        b = np.log(total) - a
        pu, pa = [np.ones_like(u), u, u * u], [np.ones_like(a), a, a * a]
        p = np.zeros_like(x)
        q = np.zeros_like(x)
        c = _DIRICHLET_C
        for i in range(3):
            for j in range(3):
                ua = pu[i] * pa[j]
                p = p + ua * (c[0, i, j, 0] + b * (c[0, i, j, 1] + b * (c[0, i, j, 2] + b * c[0, i, j, 3])))
                q = q + ua * (c[1, i, j, 0] + b * (c[1, i, j, 1] + b * (c[1, i, j, 2] + b * c[1, i, j, 3])))
        approx = x * (digamma_np(total) - digamma_np(alpha)) / beta
        rational = p / q * approx
    return np.where((x <= 0.5) & (boundary < 2.5), small_a,
                    np.where((x >= 0.5) & (boundary < 0.75), small_b,
                             np.where((alpha > 6) & (beta > 6), mid, rational)))


class _Dirichlet(Function):
    """out = x, a Dirichlet(concentration) sample drawn beforehand;  dconcentration = PyTorch's
    _Dirichlet_backward: dirichlet_grad(x, c, sum c) * (g - sum(x * g))"""
    batching = NoRule("a private helper of minigrad.distributions: its gradient is computed in NumPy")
    fusion = _NO_FUSION
    onnx = _NO_ONNX
    jvp = NoRule("the sample's tangent is the backward's partial; forward mode runs the double-VJP identity")

    @staticmethod
    def forward(ctx, concentration, x):
        total = np.broadcast_to(concentration.sum(-1, keepdims=True), concentration.shape)
        ctx.grad = dirichlet_grad_np(x, concentration, total).astype(x.dtype)
        ctx.x = x
        return x.copy()

    @staticmethod
    def backward(ctx, g):
        x, grad = Tensor(ctx.x), Tensor(ctx.grad)
        return grad * (g - (x * g).sum(-1, keepdim=True)), None


def dirichlet_reparam(concentration, x):
    """x (drawn from Dirichlet(concentration)) as a function of concentration for the gradient."""
    return _Dirichlet.apply(concentration, x)


# -- the regularised lower incomplete Gamma function (Gamma.cdf) -------------------------------------
def gammainc_np(a, x):
    """P(a, x) = γ(a, x) / Γ(a): its series where x < a + 1, else 1 - the continued fraction of Q
    (modified Lentz), each iterated to the dtype's precision."""
    a, x = np.broadcast_arrays(_f64(a), _f64(x))
    eps, tiny = np.finfo(np.float64).eps, np.finfo(np.float64).tiny
    with np.errstate(all="ignore"):
        logpre = a * np.log(x) - x - lgamma_np(a)
        # series: sum_n x^n / (a (a+1) ... (a+n))
        term = 1.0 / a
        total = term.copy()
        ap = a.copy()
        for _ in range(2000):
            ap = ap + 1
            term = term * x / ap
            total = total + term
            if np.all(np.abs(term) <= np.abs(total) * eps):
                break
        series = total * np.exp(logpre)
        # continued fraction for Q(a, x)
        b = x + 1 - a
        c = np.full_like(x, 1 / tiny)
        d = 1 / np.where(b == 0, tiny, b)
        h = d.copy()
        for i in range(1, 2000):
            an = -i * (i - a)
            b = b + 2
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1 / d
            delta = d * c
            h = h * delta
            if np.all((np.abs(delta - 1) <= eps) | ~(x >= a + 1)):
                break
        cf = 1 - np.exp(logpre) * h
        out = np.where(x < a + 1, series, cf)
    out = np.where(x == 0, 0.0, np.where(np.isposinf(x), 1.0, out))
    return np.where((a <= 0) | (x < 0) | np.isnan(a) | np.isnan(x), np.nan, out)


class _Gammainc(Function):
    """out = P(a, x), the regularised lower incomplete Gamma function;  dx = g * x^(a-1) e^(-x) / Γ(a)
    (no derivative in a: PyTorch has none either)"""
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX
    jvp = NoRule("forward mode runs the double-VJP identity")

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        return gammainc_np(a, x).astype(np.result_type(a.dtype, x.dtype))

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative of the regularised incomplete Gamma function (Gamma.cdf) "
                                      "with respect to the concentration is not implemented (nor in PyTorch)")
        return None, g * ((a - 1) * x.log() - x - lgamma(a)).exp()


def gammainc(a, x):
    return _Gammainc.apply(_t(a), _t(x))


# -- draws: one random op, so a traced or compiled program draws afresh at each run -------------------
def _draw_np(rng, shape, kind, dt, params):
    shape = tuple(shape)
    p = [np.broadcast_to(np.asarray(v, dtype=np.float64), shape) for v in params]
    if kind == "gamma":
        out = np.maximum(np.asarray(rng.standard_gamma(p[0])), np.finfo(dt).tiny)
    elif kind == "dirichlet":             # normalised Gamma draws over the last dimension
        g = np.asarray(rng.standard_gamma(p[0]))
        finfo = np.finfo(dt)
        out = np.clip(g / g.sum(-1, keepdims=True), finfo.tiny, 1 - finfo.eps)
    elif kind == "poisson":
        out = np.asarray(rng.poisson(p[0]))
    elif kind == "binomial":
        out = np.asarray(rng.binomial(p[0].astype(np.int64), p[1]))
    elif kind == "bernoulli":
        out = np.asarray(rng.random(shape)) < p[0]
    elif kind == "exponential":
        out = np.asarray(rng.standard_exponential(shape))
    else:
        raise ValueError(f"distributions: unknown draw {kind!r}")
    return np.asarray(out).astype(dt)


class _Draw(Function):
    """out = a draw of ``kind`` ('gamma', 'dirichlet', 'poisson', 'binomial', 'bernoulli',
    'exponential') of the given shape and dtype from a generator, with the parameter arrays
    broadcast to that shape; no gradient (the reparameterised ones go through _StandardGamma and
    _Dirichlet)"""
    jvp = NoRule("a random draw: no tangent flows")
    onnx = NoRule("a random draw: ONNX's Random* operators draw from their own generator")
    fusion = _NO_FUSION
    batching = NoRule("a random draw: vmap's randomness argument decides")
    _random, _generator_arg = True, 3

    @staticmethod
    def forward(ctx, shape, kind, dt, generator, *params):
        from ..random import get_rng
        return _draw_np(get_rng(generator), shape, kind, np.dtype(dt), params)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("distributions: a random draw is not differentiable")


def draw(kind, shape, dtype, *params):
    """A draw of ``kind`` (see _Draw) from minigrad's default generator, as a Tensor without grad."""
    params = [p.detach() if isinstance(p, Tensor) else Tensor(np.asarray(p, dtype=np.float64)) for p in params]
    return _Draw.apply(tuple(shape), kind, np.dtype(dtype).name, None, *params)
