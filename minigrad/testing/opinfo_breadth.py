"""Registry entries of issue 8's breadth ops (elementwise math, indexing/scatter, scans, statistics).

Same fields and sample helpers as minigrad/testing/opinfo.py (whose `op_db` includes this list);
the tests are the ones tests/ops/test_ops.py generates for every entry.
"""
from functools import partial

import numpy as np

import minigrad as mg
from .opinfo import (ALL_NUMERIC, OpInfo, SampleInput, _inplace_form, binary_samples, nonzero, positive,
                     sample, samples, unary_samples)


def _ew(name, ref, sampler=sample, *, kinks=(), op=None, **kw):
    return OpInfo(name, op or getattr(mg, name), ref, unary_samples(sampler, kinks), **kw)


_NO_TORCH_INPLACE_GRAD = {"torch": "PyTorch has no derivative for the in-place form (NotImplementedError)"}


def _ew_inplace(name, ref, sampler=sample, **kw):
    """x.clone().<name>_(): the in-place form, checked through its graph rebase."""
    return OpInfo(name, _inplace_form(name + "_"), ref, unary_samples(sampler), variant="inplace",
                  torch_op=lambda torch, x: getattr(x.clone(), name + "_")(), aliases=(name + "_",),
                  grad_fn=None, **kw)


_STEPS = partial(sample, away=(-2, -1, 0, 1, 2))
_UNIT = partial(sample, low=-0.9, high=0.9)  # inside asin/acos/atanh's domain, away from the poles
_ABOVE_ONE = partial(sample, low=1.2, high=3.0)  # acosh

elementwise_ops = [
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


def _binary(name, ref, sx=sample, sy=sample, *, op=None, kinks=(), **kw):
    return OpInfo(name, op or getattr(mg, name), ref, binary_samples(sx, sy, kinks), **kw)


def _np_copysign_ok(x, y):
    return np.copysign(x, y)


_BIG = partial(sample, low=-800.0, high=800.0)
elementwise_ops += [
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


def _isclose_samples(rng):
    a = np.array([1.0, 2.0, np.nan, np.inf, -np.inf, 0.0])
    b = np.array([1.0 + 1e-9, 2.1, np.nan, np.inf, np.inf, 1e-9])
    return [SampleInput((a, b)), SampleInput((a, b), {"equal_nan": True}, name="equal_nan"),
            SampleInput((a, b), {"rtol": 0.1, "atol": 0.0}, name="rtol"),
            SampleInput((sample((2, 1), rng), sample((1, 3), rng)), {"atol": 1.0}, name="broadcast"),
            SampleInput((np.array([1, 2, 3]), np.array([1, 3, 3])), name="int64")]


nondiff_ops = [
    OpInfo("isclose", mg.isclose, np.isclose, _isclose_samples, supports_grad=False, dtypes=ALL_NUMERIC),
    OpInfo("isclose", lambda x, y, **kw: x.isclose(y, **kw), np.isclose, _isclose_samples, variant="method",
           supports_grad=False, torch_op=lambda torch, x, y, **kw: x.isclose(y, **kw)),
    OpInfo("allclose", lambda x, y, **kw: x.allclose(y, **kw), np.allclose, samples(
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))),
        SampleInput((np.array([1.0, np.nan]), np.array([1.0, np.nan])), {"equal_nan": True}, name="nan")),
        variant="method", supports_grad=False, torch_op=lambda torch, x, y, **kw: x.allclose(y, **kw)),
]

breadth_op_db = elementwise_ops + nondiff_ops
