"""Registry entries of integer division and remainder (remainder and fmod are differentiable, as in
PyTorch), comparisons, logic, the isnan/isinf/isfinite tests, equal, allclose and isclose.
"""
import numpy as np

import minigrad as mg

from .core import ALL_NUMERIC, BINARY_SHAPES, OpInfo, SampleInput, nonzero, sample, samples


# -- integer division, remainder, comparisons, logic, tests --------------------------------------
def _cmp_samples(rng):
    out = [SampleInput((sample(a, rng), sample(b, rng))) for a, b in BINARY_SHAPES]
    out.append(SampleInput((np.array([1.0, 2.0, 3.0]), np.array([[2.0], [1.0]])), name="ties"))
    out.append(SampleInput((np.array([1.0, 2.0, 3.0]), 2.0), name="scalar"))
    out.append(SampleInput((np.array([1.0, 2.0, 3.0]), 2), name="int_scalar"))
    return out


def _logic_samples(rng):
    a, b = np.array([True, True, False]), np.array([True, False, False])
    return [SampleInput((a, b)), SampleInput((rng.random((2, 3)) < 0.5, rng.random((3,)) < 0.5))]


def _div_samples(rng):
    return [SampleInput((np.array([-7.0, -3.5, 2.0, 7.5]), np.array([2.0, 2.0, -3.0, 2.0]))),
            SampleInput((np.array([-7.0, -3.5, 2.0, 7.5]), 2), name="scalar"),
            SampleInput((7, np.array([2.0, 2.0, -3.0, 2.0])), name="rscalar"),
            SampleInput((sample((2, 3), rng), nonzero((3,), rng)))]


def _mod_samples(rng):
    """Quotients away from integers (remainder and fmod jump there: finite differences do not apply)."""
    return [SampleInput((np.array([-7.0, -3.5, 2.5, 7.5]), np.array([2.0, 2.0, -3.0, 2.0]))),
            SampleInput((np.array([-7.0, -3.5, 2.5, 7.5]), 2), name="scalar"),
            SampleInput((sample((2, 3), rng), nonzero((3,), rng)))]


def _mod_rscalar(rng):
    return [SampleInput((7, np.array([2.0, 2.5, -3.0, 2.0])), name="rscalar")]


ops = [
    OpInfo("floor_divide", mg.floor_divide, np.floor_divide, _div_samples, supports_grad=False, dtypes=ALL_NUMERIC)] + [
    # d/dx = 1, d/dy = -floor(x / y) (remainder) or -trunc(x / y) (fmod), as PyTorch's
    OpInfo(n, getattr(mg, n), getattr(np, n), _mod_samples, dtypes=ALL_NUMERIC, grad_fn=g)
    for n, g in [("remainder", "Remainder"), ("fmod", "Fmod")]] + [
    OpInfo(n, getattr(mg, n), getattr(np, n), _mod_rscalar, variant="rscalar", dtypes=ALL_NUMERIC, grad_fn=g,
           skips={"torch": why})
    for n, g, why in [("remainder", "Remainder", "PyTorch has no derivative for remainder(Scalar, Tensor) "
                       "(it raises at backward); minigrad's is -floor(x / y), as for two tensors"),
                      ("fmod", "Fmod", "PyTorch's fmod takes no Python number as its first argument")]] + [
    OpInfo(n, getattr(mg, n), getattr(np, f), _cmp_samples, supports_grad=False, dtypes=ALL_NUMERIC)
    for n, f in [("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                 ("ge", "greater_equal")]] + [
    OpInfo(n, getattr(mg, n), getattr(np, n), _logic_samples, supports_grad=False, dtypes=("bool",))
    for n in ("logical_and", "logical_or", "logical_xor")] + [
    OpInfo("logical_not", mg.logical_not, np.logical_not, samples(
        SampleInput((np.array([True, False, False]),)), SampleInput((np.array([[1.0, 0.0]]),), name="float")),
        supports_grad=False, dtypes=("bool",)),
    OpInfo("logical_not", lambda x: ~x, np.logical_not, samples(SampleInput((np.array([True, False]),))),
           variant="invert", supports_grad=False, torch_op=lambda torch, x: ~x, dtypes=("bool",))] + [
    OpInfo(n, getattr(mg, n), getattr(np, n), samples(
        SampleInput((np.array([1.0, float("nan"), float("inf"), -float("inf")]),)),
        lambda rng: SampleInput((sample((2, 3), rng),)), SampleInput((np.zeros(0),), name="empty")),
        supports_grad=False)
    for n in ("isnan", "isinf", "isfinite")] + [
    OpInfo("equal", mg.equal, lambda x, y: x.shape == y.shape and bool(np.array_equal(x, y)), samples(
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.0]))), SampleInput((np.array([1.0, 2.0]), np.array([1.0, 3.0]))),
        SampleInput((np.array([1.0, 2.0]), np.array([[1.0, 2.0]])), name="shapes")), supports_grad=False),
    OpInfo("allclose", mg.allclose, np.allclose, samples(
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))),
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.1]))),
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.1])), {"atol": 0.2}, name="atol")), supports_grad=False),
]


def _isclose_samples(rng):
    a = np.array([1.0, 2.0, np.nan, np.inf, -np.inf, 0.0])
    b = np.array([1.0 + 1e-9, 2.1, np.nan, np.inf, np.inf, 1e-9])
    return [SampleInput((a, b)), SampleInput((a, b), {"equal_nan": True}, name="equal_nan"),
            SampleInput((a, b), {"rtol": 0.1, "atol": 0.0}, name="rtol"),
            SampleInput((sample((2, 1), rng), sample((1, 3), rng)), {"atol": 1.0}, name="broadcast"),
            SampleInput((np.array([1, 2, 3]), np.array([1, 3, 3])), name="int64")]


ops += [
    OpInfo("isclose", mg.isclose, np.isclose, _isclose_samples, supports_grad=False, dtypes=ALL_NUMERIC),
    OpInfo("isclose", lambda x, y, **kw: x.isclose(y, **kw), np.isclose, _isclose_samples, variant="method",
           supports_grad=False, torch_op=lambda torch, x, y, **kw: x.isclose(y, **kw)),
    OpInfo("allclose", lambda x, y, **kw: x.allclose(y, **kw), np.allclose, samples(
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))),
        SampleInput((np.array([1.0, np.nan]), np.array([1.0, np.nan])), {"equal_nan": True}, name="nan")),
        variant="method", supports_grad=False, torch_op=lambda torch, x, y, **kw: x.allclose(y, **kw)),
]
