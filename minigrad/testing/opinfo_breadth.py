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


# -- scans (ops/scan.py) ----------------------------------------------------------------------------
from .opinfo import case, distinct  # noqa: E402


def _np_scan(fn):
    def ref(x, d):
        return fn(x.reshape(1) if x.ndim == 0 else x, axis=d if x.ndim else 0).reshape(x.shape)
    return ref


_SCAN_DIMS = [((3,), 0), ((2, 3), 1), ((2, 3), 0), ((2, 3, 4), -2), ((), 0), ((0, 2), 1)]


def _scan_samples(sampler, extra=(), empty=True):
    def gen(rng):
        return [SampleInput((sampler(s, rng), d)) for s, d in _SCAN_DIMS if empty or 0 not in s] + list(extra)
    return gen


_CUMPROD_ZEROS = [SampleInput((np.array([2.0, 0.0, 3.0, 0.5]), 0), name="one_zero"),
                  SampleInput((np.array([[0.0, 1.5, 0.0, 2.0], [1.0, -2.0, 0.0, 3.0]]), 1), name="zeros"),
                  SampleInput((np.array([[0.0, 2.0], [3.0, 0.0]]), 0), name="zeros_dim0")]


def _cum_extreme_ref(ufunc):
    def ref(x, d):
        xs = x.reshape(1) if x.ndim == 0 else x
        xm = np.moveaxis(xs, d, -1)
        out = ufunc.accumulate(xm, axis=-1)
        pos = np.broadcast_to(np.arange(xm.shape[-1]), xm.shape)
        idx = np.maximum.accumulate(np.where(xm == out, pos, -1), axis=-1)
        return np.moveaxis(out, -1, d).reshape(x.shape), np.moveaxis(idx, -1, d).reshape(x.shape)
    return ref


_CUM_TIES = [SampleInput((np.array([[1.0, 3.0, 3.0, 2.0, 5.0], [2.0, 2.0, 0.0, 2.0, -1.0]]), 1), name="ties",
                         kink=True)]

scan_ops = [
    OpInfo("cumprod", mg.cumprod, _np_scan(np.cumprod), _scan_samples(nonzero, _CUMPROD_ZEROS)),
    OpInfo("cumprod", lambda x, d: x.cumprod(d), _np_scan(np.cumprod), _scan_samples(nonzero, _CUMPROD_ZEROS[1:2]),
           variant="method", torch_op=lambda torch, x, d: x.cumprod(d)),
    OpInfo("cumprod", lambda x, d: _inplace_form("cumprod_")(x, d), _np_scan(np.cumprod),
           _scan_samples(nonzero), variant="inplace", torch_op=lambda torch, x, d: x.clone().cumprod_(d),
           aliases=("cumprod_",), grad_fn=None),
    # no empty sample for cummax/cummin: PyTorch's gradient of an empty input requires grad (a quirk)
    OpInfo("cummax", mg.cummax, _cum_extreme_ref(np.maximum), _scan_samples(distinct, _CUM_TIES, empty=False)),
    OpInfo("cummin", mg.cummin, _cum_extreme_ref(np.minimum), _scan_samples(distinct, _CUM_TIES, empty=False)),
    OpInfo("cummax", lambda x, d: x.cummax(d), _cum_extreme_ref(np.maximum), _scan_samples(distinct, empty=False),
           variant="method", torch_op=lambda torch, x, d: x.cummax(d), grad_fn="Cummax"),
    OpInfo("logcumsumexp", mg.logcumsumexp, _np_scan(np.logaddexp.accumulate), _scan_samples(sample, [
        SampleInput((np.array([800.0, -800.0, 1e4, 3.0]), 0), name="huge")])),
    OpInfo("logcumsumexp", lambda x, d: x.logcumsumexp(d), _np_scan(np.logaddexp.accumulate),
           _scan_samples(sample), variant="method", torch_op=lambda torch, x, d: x.logcumsumexp(d)),
]


# -- scatter / index writes / selections (ops/scatter.py) -----------------------------------------
_I = np.array
indexing_ops = [
    case("scatter", "src", [(3, 4), _I([[0, 2, 1, 0], [2, 0, 0, 1]]), (2, 4)],
         lambda L, x, i, s: L.scatter(x, 0, i, s), lambda x, i, s: _np_scatter(x, 0, i, s), grad_fn=None),
    case("scatter", "src_dim1_larger", [(3, 4), _I([[3, 0], [1, 2], [0, 3]]), (3, 3)],
         lambda L, x, i, s: x.scatter(1, i, s), lambda x, i, s: _np_scatter(x, 1, i, s), grad_fn=None,
         skips={"torch": "PyTorch's backward raises for src larger than index (minigrad: 0 for the unused part)"}),
    case("scatter", "value", [(3, 4), _I([[0, 2, 1, 0]])],
         lambda L, x, i: L.scatter(x, 0, i, 1.5), lambda x, i: _np_scatter(x, 0, i, np.full(i.shape, 1.5)),
         grad_fn=None),
    case("scatter", "value_kw", [(3, 4), _I([[1], [3], [0]])],
         lambda L, x, i: x.scatter(1, i, value=-2.0), lambda x, i: _np_scatter(x, 1, i, np.full(i.shape, -2.0)),
         grad_fn=None),
    case("scatter", "reduce_add", [(3, 4), _I([[0, 0, 1, 0], [0, 2, 1, 0]]), (2, 4)],
         lambda L, x, i, s: x.scatter(0, i, s, reduce="add"), lambda x, i, s: _np_scatter_add(x, 0, i, s),
         grad_fn=None, skips={"torch": "PyTorch's scatter(reduce=) has no derivative"}),
    case("scatter", "inplace", [(3, 4), _I([[0, 2, 1, 0]]), (1, 4)],
         lambda L, x, i, s: x.clone().scatter_(0, i, s), lambda x, i, s: _np_scatter(x, 0, i, s), grad_fn=None,
         aliases=("scatter_",)),
    case("scatter_add", "inplace", [(3, 4), _I([[0, 0, 1, 0], [0, 2, 1, 0]]), (2, 4)],
         lambda L, x, i, s: x.clone().scatter_add_(0, i, s), lambda x, i, s: _np_scatter_add(x, 0, i, s),
         grad_fn=None, aliases=("scatter_add_",)),
    case("index_add", "", [(4, 3), _I([0, 2, 0]), (3, 3)], lambda L, x, i, s: L.index_add(x, 0, i, s),
         lambda x, i, s: _np_index_add(x, 0, i, s), grad_fn=None),
    case("index_add", "dim1_alpha", [(2, 4), _I([3, 3, 1]), (2, 3)],
         lambda L, x, i, s: x.index_add(1, i, s, alpha=-0.5), lambda x, i, s: _np_index_add(x, 1, i, -0.5 * s),
         grad_fn=None),
    case("index_add", "inplace", [(4, 3), _I([1, 2]), (2, 3)], lambda L, x, i, s: x.clone().index_add_(0, i, s),
         lambda x, i, s: _np_index_add(x, 0, i, s), grad_fn=None, aliases=("index_add_",)),
    case("index_copy", "", [(4, 3), _I([3, 0]), (2, 3)], lambda L, x, i, s: L.index_copy(x, 0, i, s),
         lambda x, i, s: _np_index_copy(x, 0, i, s), grad_fn=None),
    case("index_copy", "dim1", [(2, 4), _I([1, 2, 0]), (2, 3)], lambda L, x, i, s: x.index_copy(1, i, s),
         lambda x, i, s: _np_index_copy(x, 1, i, s), grad_fn=None),
    case("index_copy", "inplace", [(4, 3), _I([2]), (1, 3)], lambda L, x, i, s: x.clone().index_copy_(0, i, s),
         lambda x, i, s: _np_index_copy(x, 0, i, s), grad_fn=None, aliases=("index_copy_",)),
    case("index_fill", "", [(4, 3), _I([3, 0, 3])], lambda L, x, i: L.index_fill(x, 0, i, -1.0),
         lambda x, i: _np_index_fill(x, 0, i, -1.0), grad_fn=None),
    case("index_fill", "tensor_value", [(2, 4), _I([1]), ()], lambda L, x, i, v: x.index_fill(1, i, v * 2),
         lambda x, i, v: _np_index_fill(x, 1, i, v * 2), grad_fn=None),
    case("index_fill", "inplace", [(4, 3), _I([1])], lambda L, x, i: x.clone().index_fill_(1, i, 2.0),
         lambda x, i: _np_index_fill(x, 1, i, 2.0), grad_fn=None, aliases=("index_fill_",)),
    case("masked_select", "", [(3, 4), _I([[True, False, True, True], [False] * 4, [True, False, False, True]])],
         lambda L, x, m: L.masked_select(x, m), lambda x, m: x[m], grad_fn=None),
    case("masked_select", "broadcast", [(3, 4), _I([True, False, False, True])],
         lambda L, x, m: x.masked_select(m), lambda x, m: np.broadcast_to(x, (3, 4))[np.broadcast_to(m, (3, 4))],
         grad_fn=None),
    case("masked_select", "broadcast_input", [(4,), _I([[True], [False], [True]])],
         lambda L, x, m: L.masked_select(x, m), lambda x, m: np.broadcast_to(x, (3, 4))[np.broadcast_to(m, (3, 4))],
         grad_fn=None),
]
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _self in (True, False):
        _smp = nonzero if _red == "prod" else (distinct if _red in ("amax", "amin") else sample)
        indexing_ops.append(OpInfo(
            "scatter_reduce", lambda x, i, s, _r=_red, _s=_self: mg.scatter_reduce(x, 0, i, s, _r, include_self=_s),
            lambda x, i, s, _r=_red, _s=_self: _np_scatter_reduce(x, 0, i, s, _r, _s),
            lambda rng, _smp=_smp: [SampleInput((_smp((3, 4), rng), _I([[0, 0, 1, 0], [2, 0, 1, 0]]),
                                                 _smp((2, 4), rng))),
                                    SampleInput((_smp((3, 2), rng), _I([[1, 1], [1, 0], [1, 1]]),
                                                 _smp((3, 2), rng)))],
            variant=f"{_red}{'' if _self else '-exclude_self'}",
            torch_op=lambda torch, x, i, s, _r=_red, _s=_self: torch.scatter_reduce(x, 0, i, s, _r, include_self=_s),
            grad_fn="ScatterReduce", skips={"torch_double_backward": "PyTorch's second derivative of prod with "
                                            "include_self=False differs; minigrad's passes gradgradcheck"}
            if (_red, _self) == ("prod", False) else None))
indexing_ops.append(OpInfo(  # src larger than index: its unused part gets a 0 gradient (PyTorch's backward raises)
    "scatter_reduce", lambda x, i, s: mg.scatter_reduce(x, 0, i, s, "sum"),
    lambda x, i, s: _np_scatter_reduce(x, 0, i, s, "sum", True),
    lambda rng: [SampleInput((sample((3, 2), rng), _I([[1, 1], [1, 0]]), sample((3, 3), rng)))],
    variant="src_larger", skips={"torch": "PyTorch's backward raises for src larger than index"}))
indexing_ops.append(OpInfo(
    "scatter_reduce", lambda x, i, s: mg.scatter_reduce(x, 0, i, s, "amax"),
    lambda x, i, s: _np_scatter_reduce(x, 0, i, s, "amax", True),
    samples(SampleInput((np.array([[1.0, 2.0], [0.0, 5.0]]), _I([[0, 0], [0, 1]]), np.array([[1.0, 2.0], [1.0, 0.0]])),
                        name="ties", kink=True)), variant="amax-ties",
    torch_op=lambda torch, x, i, s: torch.scatter_reduce(x, 0, i, s, "amax"), grad_fn="ScatterReduce"))
indexing_ops.append(OpInfo(
    "scatter_reduce", lambda x, i, s: x.clone().scatter_reduce_(1, i, s, "sum"),
    lambda x, i, s: _np_scatter_reduce(x, 1, i, s, "sum", True),
    lambda rng: [SampleInput((sample((2, 3), rng), _I([[0, 2], [1, 1]]), sample((2, 2), rng)))],
    variant="inplace", aliases=("scatter_reduce_",), grad_fn=None,
    torch_op=lambda torch, x, i, s: x.clone().scatter_reduce_(1, i, s, "sum")))


def _full(x, dim, i):
    grids = list(np.ogrid[tuple(slice(0, s) for s in i.shape)])
    grids[dim] = i
    return tuple(grids)


def _np_scatter(x, dim, i, s):
    out = x.copy()
    out[_full(x, dim, i)] = s[tuple(slice(0, n) for n in i.shape)]
    return out


def _np_scatter_add(x, dim, i, s):
    out = x.copy()
    np.add.at(out, _full(x, dim, i), s[tuple(slice(0, n) for n in i.shape)])
    return out


def _np_scatter_reduce(x, dim, i, s, red, include_self):
    full = _full(x, dim, i)
    s = s[tuple(slice(0, n) for n in i.shape)]
    out = x.copy()
    written = np.zeros(x.shape, dtype=bool)
    written[full] = True
    groups = {}
    for k in np.ndindex(i.shape):
        groups.setdefault(tuple(f[k] if np.ndim(f) else f for f in np.broadcast_arrays(*full)), []).append(s[k])
    for tgt, vals in groups.items():
        vals = ([x[tgt]] if include_self else []) + vals
        out[tgt] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[red](vals)
    return out


def _np_index_add(x, dim, i, s):
    out = x.copy()
    np.add.at(out, (slice(None),) * dim + (i,), s)
    return out


def _np_index_copy(x, dim, i, s):
    out = x.copy()
    out[(slice(None),) * dim + (i,)] = s
    return out


def _np_index_fill(x, dim, i, v):
    out = x.copy()
    out[(slice(None),) * dim + (i,)] = v
    return out


def _nonzero_samples(rng):
    return [SampleInput((np.array([[0.0, 1.5], [2.0, 0.0], [0.0, 0.0]]),)),
            SampleInput((np.array([0, 3, 0, -1]),), name="int"), SampleInput((np.zeros((2, 0)),), name="empty"),
            SampleInput((np.array(2.0),), name="0d")]


indexing_ops += [
    OpInfo("nonzero", mg.nonzero, lambda x: np.argwhere(x), _nonzero_samples, supports_grad=False),
    OpInfo("nonzero", lambda x: mg.nonzero(x, as_tuple=True), lambda x: np.nonzero(x) if x.ndim else
           (np.zeros(int(x != 0), dtype=np.int64),), _nonzero_samples, variant="as_tuple", supports_grad=False,
           torch_op=lambda torch, x: torch.nonzero(x, as_tuple=True)),
    OpInfo("nonzero", lambda x: x.nonzero(), lambda x: np.argwhere(x), _nonzero_samples, variant="method",
           supports_grad=False, torch_op=lambda torch, x: x.nonzero()),
]

breadth_op_db += scan_ops + indexing_ops


# -- shape composites (ops/shape.py) and the fused statistics (ops/reduction.py) --------------------
def _np_unfold(x, d, size, step):
    n = x.shape[d]
    wins = [np.take(x, np.arange(s, s + size), axis=d) for s in range(0, n - size + 1, step)]
    return np.moveaxis(np.stack(wins, axis=d), d + 1, -1)


shape_ops = [
    case("roll", "", [(2, 3)], lambda L, x: L.roll(x, 1, 1), lambda x: np.roll(x, 1, 1), grad_fn=None),
    case("roll", "flat", [(2, 3)], lambda L, x: L.roll(x, 4), lambda x: np.roll(x, 4), grad_fn=None),
    case("roll", "dims", [(2, 3, 4)], lambda L, x: x.roll((1, -5), (0, 2)), lambda x: np.roll(x, (1, -5), (0, 2)),
         grad_fn=None),
    case("repeat_interleave", "int", [(2, 3)], lambda L, x: L.repeat_interleave(x, 2, dim=1),
         lambda x: np.repeat(x, 2, axis=1), grad_fn=None),
    case("repeat_interleave", "flat", [(2, 3)], lambda L, x: x.repeat_interleave(2), lambda x: np.repeat(x, 2),
         grad_fn=None),
    case("repeat_interleave", "tensor", [(3, 2), np.array([1, 0, 3])],
         lambda L, x, r: x.repeat_interleave(r, dim=0), lambda x, r: np.repeat(x, r, axis=0), grad_fn=None),
    OpInfo("repeat_interleave", lambda r: mg.repeat_interleave(r), lambda r: np.repeat(np.arange(r.size), r),
           samples(SampleInput((np.array([2, 0, 1]),))), variant="counts", supports_grad=False),
    case("meshgrid", "ij", [(2,), (3,)], lambda L, x, y: L.cat([g.reshape(-1) for g in L.meshgrid(x, y, indexing="ij")]),
         lambda x, y: np.concatenate([g.reshape(-1) for g in np.meshgrid(x, y, indexing="ij")]), grad_fn=None),
    case("meshgrid", "xy3", [(2,), (3,), (1,)],
         lambda L, x, y, z: L.cat([g.reshape(-1) * (k + 1.0) for k, g in enumerate(L.meshgrid(x, y, z, indexing="xy"))]),
         lambda x, y, z: np.concatenate([g.reshape(-1) * (k + 1.0) for k, g in
                                         enumerate(np.meshgrid(x, y, z, indexing="xy"))]), grad_fn=None),
    case("unfold", "", [(2, 5)], lambda L, x: x.unfold(1, 2, 2), lambda x: _np_unfold(x, 1, 2, 2), grad_fn=None,
         kind="method"),
    case("unfold", "dim0_overlap", [(5, 3)], lambda L, x: x.unfold(0, 3, 1), lambda x: _np_unfold(x, 0, 3, 1),
         grad_fn=None, kind="method"),
]
for _n, _np_fn in (("var_mean", np.var), ("std_mean", np.std)):
    for _v, _kw, _ddof in (("", {"dim": 1}, 1), ("correction0_keep", {"dim": (0, 1), "correction": 0,
                                                                       "keepdim": True}, 0), ("all", {}, 1)):
        shape_ops.append(OpInfo(
            _n, getattr(mg, _n),
            lambda x, _f=_np_fn, _d=_ddof, dim=None, keepdim=False, correction=None: (
                _f(x, axis=dim, ddof=_d, keepdims=keepdim), np.mean(x, axis=dim, keepdims=keepdim)),
            lambda rng, _kw=_kw: [SampleInput((sample((3, 4), rng),), _kw)], variant=_v, grad_fn=None))

breadth_op_db += shape_ops
