"""What the distributions need beyond mg.special: the implicit reparameterisation gradients of
Gamma and Dirichlet samples (PyTorch's _standard_gamma_grad and _dirichlet_grad) and the random
draws; lgamma, digamma, polygamma, erfinv and gammainc are mg.special's ops, on tensors made from
numbers where a distribution passes numbers."""
import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from .. import _specfun
from ..ops import special as _sp

digamma_np = _specfun.digamma

_NO_ONNX = NoRule("a private helper of minigrad.distributions, not exported to ONNX")
_NO_FUSION = NoRule("a private helper of minigrad.distributions, computed in NumPy")


def _f64(x):
    return np.asarray(x, dtype=np.float64)


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
    return _sp.lgamma(_t(x))


def digamma(x):
    return _sp.digamma(_t(x))


def polygamma(n, x):
    return _sp.polygamma(int(n), _t(x))


def erfinv(x):
    return _sp.erfinv(_t(x))


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
def gammainc(a, x):
    """P(a, x) (mg.special.gammainc): differentiable in x; in a it raises, as PyTorch's."""
    return _sp.igamma(_t(a), _t(x))


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
