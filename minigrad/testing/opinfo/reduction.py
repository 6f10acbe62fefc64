"""Registry entries of the reductions (ops/reduction.py): sum, mean, prod, amax/amin, logsumexp,
var/std, the p-norms, max/min (full and along a dim), softmax/log_softmax, cumsum, argmax/argmin,
any/all, and the fused statistics var_mean/std_mean.
"""
import numpy as np

import minigrad as mg

from .core import (ALL_NUMERIC, UNARY_SHAPES, OpInfo, SampleInput, _np_log_softmax, _np_softmax, distinct,
                   nonzero, sample, samples)


# -- reductions ------------------------------------------------------------------------------------
# (shape, dim) pairs: None, int, negative int, tuple, negative tuple, and 0-d
REDUCTION_DIMS = [((), None), ((3,), None), ((3,), 0), ((2, 3), None), ((2, 3), 1), ((2, 3), -2),
                  ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, -2)), ((2, 3, 4), 1)]


def _group_size(shape, dim):
    if dim is None:
        return int(np.prod(shape)) if shape else 1
    dims = dim if isinstance(dim, tuple) else (dim,)
    return int(np.prod([shape[d] for d in dims])) if shape else 1


def reduction_samples(sampler=sample, min_group=1, empty=True, extra=(), **fixed):
    """dim None/int/negative/tuple and keepdim False/True over REDUCTION_DIMS, plus empty inputs."""
    def gen(rng):
        out = []
        for shape, dim in REDUCTION_DIMS:
            if _group_size(shape, dim) < min_group:
                continue
            for keep in (False, True):
                kw = dict(fixed, dim=dim, keepdim=keep)
                out.append(SampleInput((sampler(shape, rng),), kw,
                                       name=f"{shape}-dim{dim}{'-keep' if keep else ''}".replace(" ", "")))
        if empty:
            out.append(SampleInput((np.zeros((2, 0)),), dict(fixed, dim=1), name="empty(2,0)-dim1"))
        for e in extra:
            out.append(e)
        return out
    return gen


def _np_reduce(fn, **np_kw):
    def ref(x, dim=None, keepdim=False, **_):
        axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
        if x.ndim == 0:
            axis = None
        return np.asarray(fn(x, axis=axis, keepdims=keepdim, **np_kw))
    return ref


def _torch_red(name):
    """x.<name>(dim, keepdim) in PyTorch, with dim None/tuple spelled the way each op accepts."""
    def call(torch, x, dim=None, keepdim=False, **kw):
        if dim is None:
            dim = tuple(range(x.ndim))
        if x.ndim == 0:
            return getattr(x, name)(0, keepdim=keepdim, **kw) if name in ("logsumexp", "prod") \
                else getattr(x, name)(**kw)
        if name == "prod" and isinstance(dim, tuple):  # one dim at a time
            for d in sorted((d % x.ndim for d in dim), reverse=True):
                x = x.prod(d, keepdim=True)
            return x if keepdim else x.reshape([s for i, s in enumerate(x.shape)
                                                if i not in {d % x.ndim for d in dim}])
        return getattr(x, name)(dim, keepdim=keepdim, **kw)
    return call


def _np_lse(x, axis, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def _np_pnorm(p):
    def fn(x, axis, keepdims):
        a = np.abs(x)
        if p == "fro":
            return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
        if p == float("inf"):
            return np.amax(a, axis=axis, keepdims=keepdims)
        if p == float("-inf"):
            return np.amin(a, axis=axis, keepdims=keepdims)
        if p == 0:
            return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
        return np.sum(a ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)
    return fn


def _method(name):
    """op calling the Tensor method: x.name(dim, keepdim=...) as the existing tests did."""
    def op(x, **kw):
        return getattr(x, name)(**kw)
    return op


def _norm_op(p):
    def op(x, **kw):
        return x.norm(p, **kw)
    return op


_PROD_ZEROS = [SampleInput((np.array(v),), name=f"zeros{v}") for v in
               ([2.0, 0.0, 4.0], [0.0, 0.0, 4.0], [0.0, 0.0, 0.0])] + [
    SampleInput((np.array([[1.0, 0.0, 3.0], [2.0, 3.0, 4.0], [0.0, 0.0, 1.0]]),), {"dim": 1},
                name="zeros_rows-dim1"),
    SampleInput((np.array([[1.0, 0.0, 3.0], [2.0, 3.0, 4.0], [0.0, 5.0, 1.0]]),), {"dim": 0, "keepdim": True},
                name="zeros_cols-dim0-keep")]
_TIES = [SampleInput((np.array([[1.0, 3.0], [3.0, 3.0]]),), name="ties", kink=True),
         SampleInput((np.array([[2.0, 2.0, 1.0], [0.0, 1.0, 1.0]]),), {"dim": 1}, name="ties_rows", kink=True),
         SampleInput((np.array([0.0, 5.0, 0.0]),), {"dim": 0, "keepdim": True}, name="ties_low", kink=True)]
_NORM_ZEROS = [SampleInput((np.zeros(3),), name="zero", kink=True),
               SampleInput((np.array([[0.0, 0.0], [3.0, 4.0]]),), {"dim": 1}, name="zero_row", kink=True),
               SampleInput((np.array([0.0, 1.0, -2.0]),), name="zero_elem", kink=True)]


def _red(name, np_fn, sampler=sample, *, variant="", op=None, min_group=1, extra=(), np_kw=None,
         fixed=None, empty=True, **kw):
    kw.setdefault("torch_op", _torch_red(name))
    return OpInfo(name, op or getattr(mg, name), _np_reduce(np_fn, **(np_kw or {})),
                  reduction_samples(sampler, min_group, empty, extra=extra, **(fixed or {})), variant=variant,
                  **kw)


ops = [
    _red("sum", np.sum, dtypes=ALL_NUMERIC),
    _red("sum", np.sum, op=_method("sum"), variant="method"),
    _red("mean", np.mean, op=_method("mean"), empty=False),
    _red("prod", np.prod, nonzero, op=_method("prod"), extra=_PROD_ZEROS),
    _red("amax", np.amax, distinct, op=_method("amax"), extra=_TIES, empty=False),
    _red("amin", np.amin, distinct, extra=_TIES, empty=False),
    _red("logsumexp", lambda x, axis, keepdims: _np_lse(x, axis, keepdims), op=_method("logsumexp")),
    _red("var", np.var, op=_method("var"), min_group=2, np_kw={"ddof": 1}, grad_fn=None, empty=False),
    _red("var", np.var, variant="biased", op=_method("var"), fixed={"unbiased": False}, grad_fn=None, empty=False),
    _red("var", np.var, variant="correction0", fixed={"correction": 0}, grad_fn=None, empty=False),
    _red("var", np.var, variant="correction2", fixed={"correction": 2}, min_group=3, np_kw={"ddof": 2}, empty=False,
         grad_fn=None),
    _red("std", np.std, op=_method("std"), min_group=2, np_kw={"ddof": 1}, empty=False,
         extra=[SampleInput((np.array([2.0, 2.0, 2.0]),), name="constant", kink=True)]),
    _red("std", np.std, variant="biased", fixed={"unbiased": False}, empty=False),
]
for _p, _v in (("fro", ""), (1, "p1"), (3, "p3"), (1.5, "p1.5"), (0.5, "p0.5"), (float("inf"), "inf"),
               (float("-inf"), "neginf"), (0, "p0")):
    ops.append(OpInfo(
        "norm", _norm_op(_p), _np_reduce(_np_pnorm(_p)),
        reduction_samples(nonzero, empty=_p not in (float("inf"), float("-inf")),
                          extra=_NORM_ZEROS if _p not in (float("inf"), float("-inf")) else ()),
        variant=_v, torch_op=lambda torch, x, _p=_p, dim=None, **kw: x.norm(_p, dim, **kw),
        grad_fn=None))  # p-dependent (Norm2, NormP, or abs/amax/sum composites); PyTorch: LinalgVectorNorm


def _max_dim_samples(rng):
    out = []
    for shape, dim in REDUCTION_DIMS:
        if isinstance(dim, int):
            for keep in (False, True):
                out.append(SampleInput((distinct(shape, rng), dim), {"keepdim": keep}))
    out.append(SampleInput((np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0], [5.0, 5.0, 5.0]]), 1), name="ties",
                           kink=True))
    return out


def _np_max_dim(fn, arg):
    def ref(x, dim, keepdim=False):
        return np.asarray(fn(x, axis=dim, keepdims=keepdim)), np.asarray(arg(x, axis=dim, keepdims=keepdim))
    return ref


def _softmax_samples(rng):
    out = [SampleInput((sample(s, rng, low=-3, high=3), d)) for s, d in
           [((3,), 0), ((3,), -1), ((2, 3), 1), ((2, 3), 0), ((2, 3, 4), -2), ((2, 3, 4), 2), ((), 0)]]
    out.append(SampleInput((np.array([[1e4, 0.0, -1e4], [1e4, 1e4, 1e4 - 1.0]]), -1), name="huge"))
    out.append(SampleInput((np.zeros((0, 3)), 1), name="empty"))
    return out


def _dim_samples(cases, sampler=sample):
    def gen(rng):
        return [SampleInput((sampler(s, rng), d)) for s, d in cases]
    return gen


ops += [
    OpInfo("max", lambda x: x.max(), _np_reduce(np.max), samples(
        lambda rng: [SampleInput((distinct(s, rng),)) for s in UNARY_SHAPES], *_TIES[:1]), variant="full",
        torch_op=lambda torch, x: x.max(), grad_fn="Max"),
    OpInfo("min", lambda x: x.min(), _np_reduce(np.min), samples(
        lambda rng: [SampleInput((distinct(s, rng),)) for s in UNARY_SHAPES],
        SampleInput((np.array([0.0, 5.0, 0.0]),), name="ties", kink=True)), variant="full",
        torch_op=lambda torch, x: x.min(), grad_fn="Min"),
    OpInfo("max", mg.max, _np_max_dim(np.max, np.argmax), _max_dim_samples, variant="dim", grad_fn=None,
           torch_op=lambda torch, x, d, **kw: tuple(torch.max(x, d, **kw))),
    OpInfo("min", mg.min, _np_max_dim(np.min, np.argmin), _max_dim_samples, variant="dim", grad_fn=None,
           torch_op=lambda torch, x, d, **kw: tuple(torch.min(x, d, **kw))),
    OpInfo("softmax", mg.softmax, _np_softmax, _softmax_samples),
    OpInfo("log_softmax", mg.log_softmax, _np_log_softmax, _softmax_samples, grad_fn="LogSoftmax"),
    OpInfo("cumsum", mg.cumsum, lambda x, d: np.cumsum(x, axis=d) if x.ndim else x.copy(), _dim_samples(
        [((3,), 0), ((3,), -1), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), -2), ((), 0), ((0, 2), 1)])),
    OpInfo("cumsum", lambda x, d: x.cumsum(d), lambda x, d: np.cumsum(x, axis=d) if x.ndim else x.copy(),
           _dim_samples([((2, 3), 1), ((), 0)]), variant="method", torch_op=lambda torch, x, d: x.cumsum(d)),
]


def _nondiff_red_samples(rng):
    out = [SampleInput((sample((3, 4), rng),))]
    for d, k in [(0, False), (1, True), (-1, False)]:
        out.append(SampleInput((sample((3, 4), rng),), {"dim": d, "keepdim": k}))
    out.append(SampleInput((np.array([[1.0, 7.0], [7.0, 0.0]]),), name="ties"))
    out.append(SampleInput((np.array([[1.0, 7.0], [7.0, 0.0]]),), {"dim": 0}, name="ties_dim"))
    return out


def _bool_red_samples(rng):
    m = np.array([[True, False], [True, True]])
    return [SampleInput((m,)), SampleInput((m,), {"dim": 1}), SampleInput((m,), {"dim": 0, "keepdim": True}),
            SampleInput((np.zeros((0,), dtype=bool),), name="empty"), SampleInput((sample((2, 3), rng) > 0,))]


ops += [
    OpInfo(n, getattr(mg, n), _np_reduce(getattr(np, n)), _nondiff_red_samples, supports_grad=False)
    for n in ("argmax", "argmin")] + [
    OpInfo(n, getattr(mg, n), _np_reduce(getattr(np, n)), _bool_red_samples, supports_grad=False,
           dtypes=("bool",)) for n in ("any", "all")]


# -- the fused statistics var_mean/std_mean -----------------------------------------------------
for _n, _np_fn in (("var_mean", np.var), ("std_mean", np.std)):
    for _v, _kw, _ddof in (("", {"dim": 1}, 1), ("correction0_keep", {"dim": (0, 1), "correction": 0,
                                                                       "keepdim": True}, 0), ("all", {}, 1)):
        ops.append(OpInfo(
            _n, getattr(mg, _n),
            lambda x, _f=_np_fn, _d=_ddof, dim=None, keepdim=False, correction=None: (
                _f(x, axis=dim, ddof=_d, keepdims=keepdim), np.mean(x, axis=dim, keepdims=keepdim)),
            lambda rng, _kw=_kw: [SampleInput((sample((3, 4), rng),), _kw)], variant=_v, grad_fn=None))
