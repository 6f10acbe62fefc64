"""Registry entries of the elementwise ops (ops/elementwise.py): unary math, clamp/clip, pow, binary
arithmetic, maximum/minimum, where, atan2, the fused optimizer updates (lerp, addcmul, addcdiv),
rounding toward zero, exp2/log2/log10, inverse and hyperbolic trig, logaddexp(2), hypot, copysign,
and their in-place forms; the special functions xlogy and sinc (ops/special.py).
"""
from functools import partial

import numpy as np

import minigrad as mg

from .core import (ALL_NUMERIC, BINARY_SHAPES, EMPTY_PAIRS, OpInfo, SampleInput, _inplace_form, _np_erf,
                   _np_sigmoid, binary_samples, nonzero, positive, sample, samples, unary_samples)


# -- unary math, clamp/clip, pow, binary arithmetic, where, atan2, lerp/addcmul/addcdiv ----------
def _ew(name, ref, sampler=sample, *, kinks=(), op=None, **kw):
    """An elementwise one-input op with the standard samples."""
    return OpInfo(name, op or getattr(mg, name), ref, unary_samples(sampler, kinks), **kw)


_STEPS = partial(sample, away=(-2, -1, 0, 1, 2))

ops = [
    _ew("neg", np.negative),
    _ew("neg", np.negative, op=lambda x: -x, variant="dunder"),
    _ew("abs", np.abs, nonzero, kinks=([-1.0, 0.0, 2.0],)),
    _ew("abs", np.abs, nonzero, op=lambda x: abs(x), variant="dunder"),
    _ew("exp", np.exp),
    _ew("square", np.square, grad_fn="Pow"),
    _ew("square", np.square, op=lambda x: x.square(), variant="method", torch_op=lambda torch, x: x.square(),
        grad_fn="Pow"),
    _ew("log", np.log, positive),
    _ew("log1p", np.log1p, partial(sample, low=-0.7, high=2.0), grad_fn="Log1P"),
    _ew("expm1", np.expm1),
    _ew("sqrt", np.sqrt, positive),
    _ew("rsqrt", lambda x: 1 / np.sqrt(x), positive),
    _ew("reciprocal", np.reciprocal, nonzero),
    _ew("sin", np.sin),
    _ew("cos", np.cos),
    _ew("tan", np.tan, partial(sample, low=-1.2, high=1.2)),
    _ew("tanh", np.tanh),
    _ew("sigmoid", _np_sigmoid, kinks=([-800.0, -30.0, 0.0, 30.0, 800.0],)),
    _ew("relu", lambda x: np.maximum(x, 0), nonzero, kinks=([-1.0, 0.0, 2.0],)),
    _ew("erf", _np_erf),
    _ew("sign", np.sign, nonzero, kinks=([-1.0, 0.0, 1.0],)),
    _ew("floor", np.floor, _STEPS, kinks=([-1.5, 0.5, 1.0, 2.7],)),
    _ew("ceil", np.ceil, _STEPS, kinks=([-1.5, 0.5, 1.0, 2.7],)),
    _ew("round", np.round, partial(sample, away=(-1.5, -0.5, 0.5, 1.5)), kinks=([0.5, 1.5, 2.5, -0.5],)),
]

# clamp: bounds as scalars (ClampBackward1) or tensors (ClampBackward0); PyTorch passes the
# gradient where lo <= x <= hi, bounds included
_CLAMP_X = partial(sample, away=(-0.5, 0.7))


def _clamp_tensor_samples(rng):
    def lo(shape):
        return rng.uniform(-1.5, -0.5, size=shape)

    def hi(shape):
        return rng.uniform(0.5, 1.5, size=shape)

    def x(shape):  # a mix of below, inside and above, away from both bounds
        return sample(shape, rng, low=-3, high=3, away=(-1.5, -0.5, 0.5, 1.5), margin=0.12)
    out = [SampleInput((x(a), lo(b), hi(c))) for a, b, c in [((2, 3), (2, 1), (1, 3)), ((2, 3), (), (3,))]]
    out.append(SampleInput((np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), np.full(5, -1.0), np.full(5, 1.0)),
                           name="at_bounds", kink=True))
    return out


ops += [
    OpInfo("clamp", lambda x: mg.clamp(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7),
           unary_samples(_CLAMP_X, kinks=([-2.0, -0.5, 0.0, 0.7, 2.0],)),
           torch_op=lambda torch, x: torch.clamp(x, -0.5, 0.7)),
    OpInfo("clamp", lambda x: x.clamp(min=-0.5), lambda x: np.maximum(x, -0.5),
           unary_samples(partial(sample, away=(-0.5,)), kinks=([-1.0, -0.5, 1.0],)), variant="min",
           torch_op=lambda torch, x: x.clamp(min=-0.5)),
    OpInfo("clamp", lambda x: x.clamp(max=0.7), lambda x: np.minimum(x, 0.7),
           unary_samples(partial(sample, away=(0.7,)), kinks=([-1.0, 0.7, 1.0],)), variant="max",
           torch_op=lambda torch, x: x.clamp(max=0.7)),
    OpInfo("clamp", mg.clamp, lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), _clamp_tensor_samples,
           variant="tensor_bounds"),
    OpInfo("clamp", mg.clamp, lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), lambda rng: [SampleInput((
        sample((3,), rng, low=-3, high=3, away=(-1.5, -0.5, 0.5, 1.5), margin=0.12), rng.uniform(-1.5, -0.5, size=()),
        rng.uniform(0.5, 1.5, size=(2, 3))))], variant="tensor_bounds_broadcast_x",
        skips={"torch": "PyTorch's clamp does not broadcast the input to the bounds' shape (minigrad does)"}),
    OpInfo("clip", lambda x: mg.clip(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7),
           unary_samples(_CLAMP_X), torch_op=lambda torch, x: torch.clip(x, -0.5, 0.7), grad_fn="Clamp"),
    # pow: scalar exponent (PowBackward0), tensor exponent (PowBackward1), scalar base (PowBackward2)
    OpInfo("pow", lambda x: x ** 2, np.square, unary_samples(kinks=([0.0, 3.0],)), variant="square",
           torch_op=lambda torch, x: x ** 2),
    OpInfo("pow", lambda x: x ** 3, lambda x: x ** 3, unary_samples(), variant="cube",
           torch_op=lambda torch, x: x ** 3),
    OpInfo("pow", lambda x: x ** 0.5, np.sqrt, unary_samples(positive), variant="half",
           torch_op=lambda torch, x: x ** 0.5),
    OpInfo("pow", lambda x: x ** -1, np.reciprocal, unary_samples(nonzero), variant="neg1",
           torch_op=lambda torch, x: x ** -1),
    OpInfo("pow", lambda x: x.pow(-1.5), lambda x: x ** -1.5, unary_samples(positive), variant="neg_float",
           torch_op=lambda torch, x: x.pow(-1.5)),
    OpInfo("pow", lambda x: x ** 0, lambda x: x ** 0, unary_samples(kinks=([0.0, 3.0],)), variant="zero",
           torch_op=lambda torch, x: x ** 0),
    OpInfo("pow", lambda x: 2.0 ** x, lambda x: 2.0 ** x, unary_samples(kinks=([0.0, 1.0, -1.0],)),
           variant="rpow", torch_op=lambda torch, x: 2.0 ** x),
    OpInfo("pow", lambda x: 0.0 ** x, lambda x: 0.0 ** x, samples(
        SampleInput((np.array([1.0, 2.0]),), name="zero_base", kink=True)), variant="rpow_zero_base",
        torch_op=lambda torch, x: 0.0 ** x),
    OpInfo("pow", lambda x, y: x ** y, np.power,
           binary_samples(positive, sample, kinks=(([0.0, 0.0, 0.0, 2.0], [0.0, 1.0, 2.0, 3.0]),)),
           variant="dunder", torch_op=lambda torch, x, y: x ** y),
    OpInfo("pow", mg.pow, np.power, binary_samples(positive, sample)),
    OpInfo("mul", lambda x: x * x, np.square, unary_samples(), variant="square",
           torch_op=lambda torch, x: x * x),
]


def _binary(name, ref, sx=sample, sy=sample, *, op=None, kinks=(), **kw):
    return OpInfo(name, op or getattr(mg, name), ref, binary_samples(sx, sy, kinks), **kw)


def _where_samples(rng):
    out = []
    for a, b in BINARY_SHAPES + EMPTY_PAIRS:
        cond = np.asarray(rng.random(np.broadcast_shapes(a, b)) < 0.5)
        out.append(SampleInput((cond, sample(a, rng), sample(b, rng))))
    return out


ops += [
    _binary("add", np.add, dtypes=ALL_NUMERIC),
    _binary("add", np.add, op=lambda x, y: x + y, variant="dunder", torch_op=lambda torch, x, y: x + y),
    _binary("add", lambda x, y: x + 2 * y, op=lambda x, y: x.add(y, alpha=2.0), variant="alpha",
            torch_op=lambda torch, x, y: x.add(y, alpha=2.0)),
    _binary("sub", np.subtract, dtypes=ALL_NUMERIC),
    _binary("sub", np.subtract, op=lambda x, y: x - y, variant="dunder", torch_op=lambda torch, x, y: x - y),
    _binary("mul", np.multiply, dtypes=ALL_NUMERIC),
    _binary("mul", np.multiply, op=lambda x, y: x * y, variant="dunder", torch_op=lambda torch, x, y: x * y),
    _binary("div", np.divide, sample, nonzero),
    _binary("div", np.divide, sample, nonzero, op=lambda x, y: x / y, variant="dunder",
            torch_op=lambda torch, x, y: x / y),
    _binary("maximum", np.maximum, kinks=(([1.0, 2.0, 3.0], [1.0, 0.0, 5.0]),
                                          ([1.0, 1.0, 2.0], [1.0]))),
    _binary("minimum", np.minimum, kinks=(([1.0, 2.0, 3.0], [1.0, 0.0, 5.0]),
                                          ([[1.0, 2.0], [0.0, 1.0]], [1.0]))),
    _binary("max", np.maximum, op=lambda x, y: mg.max(x, y), variant="binary", grad_fn="Maximum",
            torch_op=lambda torch, x, y: torch.max(x, y)),
    _binary("min", np.minimum, op=lambda x, y: mg.min(x, y), variant="binary", grad_fn="Minimum",
            torch_op=lambda torch, x, y: torch.min(x, y)),
    OpInfo("where", mg.where, np.where, _where_samples),
    # atan2(input, other): the angle of (other, input); PyTorch's gradient at the origin is 0
    _binary("atan2", np.arctan2, nonzero, nonzero, aliases=("arctan2",)),
    _binary("atan2", np.arctan2, nonzero, nonzero, op=lambda y, x: y.atan2(x), variant="method",
            torch_op=lambda torch, y, x: y.atan2(x)),
    OpInfo("atan2", mg.arctan2, np.arctan2, samples(SampleInput(
        (np.array([0.0, 1.0, 0.0, -2.0]), np.array([0.0, 0.0, -1.0, 3.0])), name="origin", kink=True)),
        variant="origin", skips={"torch_double_backward": "PyTorch's second derivative at (0, 0) is nan; "
                                                          "minigrad's is 0 (finite)"}),
]


# lerp / addcmul / addcdiv: the optimizers' fused updates; in-place forms write into the first input
_TERNARY_SHAPES = [((), (), ()), ((3,), (3,), (3,)), ((2, 3), (2, 3), (2, 3)), ((2, 3), (1, 3), (2, 1)),
                   ((2, 1), (1, 3), ()), ((0, 3), (3,), (1,))]


def _ternary_samples(s1=sample, s2=sample, s3=sample, inplace=False, **kwargs):
    # in place: only shapes whose broadcast is the first input's (the result is written into it)
    shapes = [t for t in _TERNARY_SHAPES if not inplace or np.broadcast_shapes(*t) == t[0]]

    def gen(rng):
        return [SampleInput((s1(a, rng), s2(b, rng), s3(c, rng)), kwargs) for a, b, c in shapes]
    return gen


def _np_lerp(x, end, w):
    return x + w * (end - x)


_LERP_SCALAR = binary_samples()
ops += [
    OpInfo("lerp", lambda x, e: mg.lerp(x, e, 0.3), lambda x, e: _np_lerp(x, e, 0.3), _LERP_SCALAR,
           variant="scalar_weight", torch_op=lambda torch, x, e: torch.lerp(x, e, 0.3)),
    OpInfo("lerp", lambda x, e: mg.lerp(x, e, 0.8), lambda x, e: _np_lerp(x, e, 0.8), _LERP_SCALAR,
           variant="scalar_weight_high", torch_op=lambda torch, x, e: torch.lerp(x, e, 0.8)),
    OpInfo("lerp", mg.lerp, _np_lerp, _ternary_samples(s3=partial(sample, away=(-0.5, 0.5)))),
    OpInfo("addcmul", lambda x, a, b: mg.addcmul(x, a, b, value=-0.7), lambda x, a, b: x - 0.7 * a * b,
           _ternary_samples(), torch_op=lambda torch, x, a, b: torch.addcmul(x, a, b, value=-0.7)),
    OpInfo("addcdiv", lambda x, a, b: mg.addcdiv(x, a, b, value=0.4), lambda x, a, b: x + 0.4 * a / b,
           _ternary_samples(s3=nonzero), torch_op=lambda torch, x, a, b: torch.addcdiv(x, a, b, value=0.4)),
    OpInfo("lerp", _inplace_form("lerp_"), _np_lerp, _ternary_samples(s3=partial(sample, away=(-0.5, 0.5)),
                                                                     inplace=True),
           variant="inplace", torch_op=lambda torch, x, e, w: x.clone().lerp_(e, w), aliases=("lerp_",),
           grad_fn=None),
    OpInfo("addcmul", _inplace_form("addcmul_"), lambda x, a, b: x + a * b, _ternary_samples(inplace=True),
           variant="inplace", torch_op=lambda torch, x, a, b: x.clone().addcmul_(a, b), aliases=("addcmul_",),
           grad_fn=None),
    OpInfo("addcdiv", _inplace_form("addcdiv_"), lambda x, a, b: x + a / b,
           _ternary_samples(s3=nonzero, inplace=True),
           variant="inplace", torch_op=lambda torch, x, a, b: x.clone().addcdiv_(a, b), aliases=("addcdiv_",),
           grad_fn=None),
    OpInfo("sqrt", _inplace_form("sqrt_"), np.sqrt, unary_samples(positive), variant="inplace",
           torch_op=lambda torch, x: x.clone().sqrt_(), aliases=("sqrt_",), grad_fn=None),
]


# -- rounding toward zero, exp2/log2/log10, inverse and hyperbolic trig, and their in-place forms --
_NO_TORCH_INPLACE_GRAD = {"torch": "PyTorch has no derivative for the in-place form (NotImplementedError)"}


def _ew_inplace(name, ref, sampler=sample, **kw):
    """x.clone().<name>_(): the in-place form, checked through its graph rebase."""
    return OpInfo(name, _inplace_form(name + "_"), ref, unary_samples(sampler), variant="inplace",
                  torch_op=lambda torch, x: getattr(x.clone(), name + "_")(), aliases=(name + "_",),
                  grad_fn=None, **kw)


_UNIT = partial(sample, low=-0.9, high=0.9)  # inside asin/acos/atanh's domain, away from the poles
_ABOVE_ONE = partial(sample, low=1.2, high=3.0)  # acosh

ops += [
    _ew("trunc", np.trunc, _STEPS, kinks=([-1.5, -0.5, 0.5, 1.0, 2.7],), aliases=("fix",)),
    _ew("trunc", np.trunc, _STEPS, op=lambda x: x.fix(), variant="fix_method",
        torch_op=lambda torch, x: x.fix()),
    _ew("frac", lambda x: x - np.trunc(x), _STEPS, kinks=([-1.5, -0.5, 0.5, 2.7],)),
    _ew("exp2", np.exp2),
    _ew("log2", np.log2, positive),
    _ew("log10", np.log10, positive),
    _ew("asin", np.arcsin, _UNIT, aliases=("arcsin",)),
    _ew("acos", np.arccos, _UNIT, aliases=("arccos",)),
    _ew("atan", np.arctan, aliases=("arctan",)),
    _ew("sinh", np.sinh),
    _ew("cosh", np.cosh),
    _ew("asinh", np.arcsinh, aliases=("arcsinh",)),
    _ew("acosh", np.arccosh, _ABOVE_ONE, aliases=("arccosh",)),
    _ew("atanh", np.arctanh, _UNIT, aliases=("arctanh",)),
    _ew("asin", np.arcsin, _UNIT, op=lambda x: x.arcsin(), variant="method", torch_op=lambda torch, x: x.arcsin()),
    _ew("atanh", np.arctanh, _UNIT, op=lambda x: x.atanh(), variant="method", torch_op=lambda torch, x: x.atanh()),
    _ew_inplace("trunc", np.trunc, _STEPS),
    _ew_inplace("frac", lambda x: x - np.trunc(x), _STEPS),
    _ew_inplace("exp2", np.exp2),
    _ew_inplace("log2", np.log2, positive),
    _ew_inplace("log10", np.log10, positive),
    _ew_inplace("asin", np.arcsin, _UNIT),
    _ew_inplace("acos", np.arccos, _UNIT),
    _ew_inplace("atan", np.arctan),
    _ew_inplace("sinh", np.sinh),
    _ew_inplace("cosh", np.cosh),
    _ew_inplace("asinh", np.arcsinh, skips=_NO_TORCH_INPLACE_GRAD),
    _ew_inplace("acosh", np.arccosh, _ABOVE_ONE, skips=_NO_TORCH_INPLACE_GRAD),
    _ew_inplace("atanh", np.arctanh, _UNIT, skips=_NO_TORCH_INPLACE_GRAD),
]


# -- logaddexp(2), hypot, copysign ----------------------------------------------------------------
def _np_copysign_ok(x, y):
    return np.copysign(x, y)


_BIG = partial(sample, low=-800.0, high=800.0)
ops += [
    _binary("logaddexp", np.logaddexp),
    _binary("logaddexp", np.logaddexp, op=lambda x, y: x.logaddexp(y), variant="method",
            torch_op=lambda torch, x, y: x.logaddexp(y)),
    OpInfo("logaddexp", mg.logaddexp, np.logaddexp, samples(SampleInput(
        (np.array([800.0, -800.0, 1e4, 3.0]), np.array([799.0, -801.0, -1e4, 3.0])), name="huge", kink=True)),
        variant="huge"),  # no overflow: exp(800) alone is inf; kink: PyTorch's 2nd derivative at +-1e4 is nan
    _binary("logaddexp2", np.logaddexp2),
    OpInfo("logaddexp2", mg.logaddexp2, np.logaddexp2, samples(SampleInput(
        (np.array([1100.0, -1100.0, 5.0]), np.array([1099.0, -1101.0, 5.0])), name="huge")), variant="huge"),
    _binary("hypot", np.hypot, nonzero, nonzero),
    _binary("hypot", np.hypot, nonzero, nonzero, op=lambda x, y: x.hypot(y), variant="method",
            torch_op=lambda torch, x, y: x.hypot(y)),
    # copysign: dx = +-g (0 where x == 0, as PyTorch), no gradient to the sign source
    _binary("copysign", _np_copysign_ok, nonzero, nonzero,
            kinks=(([0.0, -0.0, 2.0, -3.0], [1.0, -1.0, -0.0, 0.0]),)),
    _binary("copysign", np.copysign, nonzero, nonzero, op=lambda x, y: x.copysign(y), variant="method",
            torch_op=lambda torch, x, y: x.copysign(y)),
    OpInfo("copysign", lambda x: mg.copysign(x, -1.0), lambda x: np.copysign(x, -1.0), unary_samples(nonzero),
           variant="scalar", torch_op=lambda torch, x: torch.copysign(x, -1.0)),
    OpInfo("hypot", _inplace_form("hypot_"), np.hypot, samples(lambda rng: [
        SampleInput((nonzero(a, rng), nonzero(b, rng))) for a, b in [((2, 3), (2, 3)), ((2, 3), (3,)), ((), ())]]),
        variant="inplace", torch_op=lambda torch, x, y: x.clone().hypot_(y), aliases=("hypot_",), grad_fn=None),
    OpInfo("copysign", _inplace_form("copysign_"), np.copysign, samples(lambda rng: [
        SampleInput((nonzero(a, rng), nonzero(b, rng))) for a, b in [((2, 3), (2, 3)), ((2, 3), (1, 3))]]),
        variant="inplace", torch_op=lambda torch, x, y: x.clone().copysign_(y), aliases=("copysign_",),
        grad_fn=None),
]


# -- special functions: xlogy, sinc (ops/special.py) ---------------------------------------------
def _np_xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y)).astype(np.result_type(x, y))


def _np_sinc(x):
    return np.sinc(x).astype(x.dtype)


_SINC_NEAR_0 = {"torch": "PyTorch's (cos(πx) - sinc(x)) / x cancels to 0 near 0 (at 1e-9: -0.0) and its second "
                         "derivative at 0 is nan; ours uses the Taylor series there (gradcheck and "
                         "gradgradcheck check it)"}
ops += [
    _binary("xlogy", _np_xlogy, sample, positive,
            kinks=(([0.0, 0.0, 1.5], [-1.0, 2.0, 0.5]),)),  # x == 0: with y < 0 (no gradient), y > 0
    OpInfo("xlogy", lambda x: mg.xlogy(x, 3.0), lambda x: _np_xlogy(x, np.asarray(3.0, x.dtype)),
           unary_samples(), variant="scalar_other", torch_op=lambda torch, x: torch.xlogy(x, 3.0)),
    OpInfo("xlogy", lambda y: mg.xlogy(2.0, y), lambda y: _np_xlogy(np.asarray(2.0, y.dtype), y),
           unary_samples(positive), variant="scalar_input", torch_op=lambda torch, y: torch.xlogy(2.0, y)),
    OpInfo("xlogy", _inplace_form("xlogy_"), _np_xlogy, samples(lambda rng: [
        SampleInput((sample(a, rng), positive(b, rng))) for a, b in [((2, 3), (2, 3)), ((2, 3), (3,))]]),
        variant="inplace", torch_op=lambda torch, x, y: x.clone().xlogy_(y), aliases=("xlogy_",), grad_fn=None),
    _ew("sinc", _np_sinc, _STEPS),
    OpInfo("sinc", mg.sinc, _np_sinc, samples(SampleInput((np.array([0.0, 1.0, -2.0, 1e-9, 5e-4, -0.05]),), name="zero")),
           variant="zero", skips=_SINC_NEAR_0),
    _ew("sinc", _np_sinc, op=lambda x: x.sinc(), variant="method", torch_op=lambda torch, x: x.sinc()),
    OpInfo("sinc", _inplace_form("sinc_"), _np_sinc, unary_samples(empty=False), variant="inplace",
           torch_op=lambda torch, x: x.clone().sinc_(), aliases=("sinc_",), grad_fn=None),
]
ops += [
    OpInfo("square", _inplace_form("square_"), np.square, unary_samples(empty=False), variant="inplace",
           torch_op=lambda torch, x: x.clone().square_(), aliases=("square_",), grad_fn=None),
]


# -- NumPy-style elementwise functions (ops/numpy_style.py): composites of mul and where ----
_NAN, _INF = float("nan"), float("inf")
ops += [
    _ew("deg2rad", np.deg2rad, grad_fn=None),
    _ew("rad2deg", np.rad2deg, grad_fn=None),
    _ew("deg2rad", np.deg2rad, op=lambda x: x.deg2rad(), variant="method", torch_op=lambda torch, x: x.deg2rad(),
        grad_fn=None),
    _binary("fmax", np.fmax, grad_fn=None, kinks=(([1.0, 2.0, 3.0], [1.0, 0.0, 5.0]), ([1.0, 1.0, 2.0], [1.0]))),
    _binary("fmin", np.fmin, grad_fn=None, kinks=(([1.0, 2.0, 3.0], [1.0, 0.0, 5.0]), ([1.0, 1.0, 2.0], [1.0]))),
    _binary("fmax", np.fmax, op=lambda x, y: x.fmax(y), variant="method", torch_op=lambda torch, x, y: x.fmax(y),
            grad_fn=None),
    OpInfo("nan_to_num", mg.nan_to_num, np.nan_to_num,
           unary_samples(kinks=([_NAN, _INF, -_INF, 1.5],)), grad_fn=None),
    OpInfo("nan_to_num", lambda x: x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0),
           lambda x: np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
           unary_samples(kinks=([_NAN, _INF, -_INF, 1.5],)), variant="method_values",
           torch_op=lambda torch, x: x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0), grad_fn=None),
    OpInfo("deg2rad", _inplace_form("deg2rad_"), np.deg2rad, unary_samples(empty=False), variant="inplace",
           torch_op=lambda torch, x: x.clone().deg2rad_(), aliases=("deg2rad_",), grad_fn=None),
    OpInfo("rad2deg", _inplace_form("rad2deg_"), np.rad2deg, unary_samples(empty=False), variant="inplace",
           torch_op=lambda torch, x: x.clone().rad2deg_(), aliases=("rad2deg_",), grad_fn=None),
    OpInfo("nan_to_num", lambda x: x.clone().nan_to_num_(posinf=5.0), lambda x: np.nan_to_num(x, posinf=5.0),
           unary_samples(empty=False, kinks=([_NAN, _INF, -_INF, 1.5],)), variant="inplace",
           torch_op=lambda torch, x: x.clone().nan_to_num_(posinf=5.0), aliases=("nan_to_num_",), grad_fn=None),
]
