"""Random primitives: each draw from a generator is an op, so a traced graph draws afresh at each run.

A Function here has no Tensor inputs; its static arguments say what to draw and from which
mg.Generator (None: the default one). `_random = True` and `_generator_arg` tell mg.graph.trace to make
that generator an input of the graph, consumed at each run exactly as eager consumes it (the same
NumPy call on the same bit generator, so a traced program and eager code draw the same numbers).
"""
import numpy as np

from ..autograd.function import Function, NoRule
from ..random import get_rng

__all__ = ["multinomial"]       # the other draws' wrappers are in creation.py and nn/init.py
__methods__ = ["multinomial"]


def _draw_dtype(dt):
    """NumPy draws float32 or float64 directly; any other dtype is drawn in float64, then cast."""
    return dt if dt in (np.float32, np.float64) else np.float64


# the `onnx` rule of the ops here that have no ONNX mapping
_NO_ONNX = NoRule("a random draw: ONNX's Random* operators draw from their own generator, so the "
                  "exported model would not reproduce minigrad's numbers")


class DropoutMask(Function):
    """out = (uniform(shape) >= p) / (1 - p): dropout's keep mask, pre-scaled (inverted dropout)"""
    jvp = NoRule("a random draw: its inputs are shapes and parameters, no tangent flows")

    op_name = "dropout_mask"
    _random, _generator_arg = True, 3
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, shape, dt, p, generator):
        rdt = dt if dt in (np.float32, np.float64) else np.float32
        scale = (get_rng(generator).random(shape, dtype=rdt) >= p).astype(dt)
        scale *= dt.type(1.0 / (1.0 - p))
        return scale


class Rand(Function):
    """out = uniform samples on [0, 1) of the given shape and dtype (mg.rand, rand_like)"""
    jvp = NoRule("a random draw: its inputs are shapes and parameters, no tangent flows")

    op_name = "rand"
    _random, _generator_arg = True, 2
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, shape, dt, generator):
        return get_rng(generator).random(shape, dtype=_draw_dtype(dt)).astype(dt, copy=False)


class Randn(Function):
    """out = standard normal samples of the given shape and dtype (mg.randn, randn_like)"""
    jvp = NoRule("a random draw: its inputs are shapes and parameters, no tangent flows")

    op_name = "randn"
    _random, _generator_arg = True, 2
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, shape, dt, generator):
        return get_rng(generator).standard_normal(shape, dtype=_draw_dtype(dt)).astype(dt, copy=False)


class Randint(Function):
    """out = integers uniform on [low, high) of the given shape, cast to dt (mg.randint, randint_like)"""
    jvp = NoRule("a random draw: its inputs are shapes and parameters, no tangent flows")

    op_name = "randint"
    _random, _generator_arg = True, 4
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, shape, low, high, dt, generator):  # shape first, as vmap's randomness='different' reads it
        return get_rng(generator).integers(low, high, size=shape).astype(dt)


class Randperm(Function):
    """out = a random permutation of 0..n-1, as dt (mg.randperm)"""
    jvp = NoRule("a random draw: its inputs are shapes and parameters, no tangent flows")

    op_name = "randperm"
    _random, _generator_arg = True, 2
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, n, dt, generator):
        return get_rng(generator).permutation(n).astype(dt)


class Uniform(Function):
    """out = uniform samples on [a, b) drawn in float64, cast to dt (nn.init.uniform_)"""
    jvp = NoRule("a random draw: its inputs are shapes and parameters, no tangent flows")

    op_name = "uniform"
    _random, _generator_arg = True, 4
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, shape, dt, a, b, generator):
        return get_rng(generator).uniform(a, b, size=shape).astype(dt)


class Normal(Function):
    """out = normal samples N(mean, std²) drawn in float64, cast to dt (nn.init.normal_)"""
    jvp = NoRule("a random draw: its inputs are shapes and parameters, no tangent flows")

    op_name = "normal"
    _random, _generator_arg = True, 4
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, shape, dt, mean, std, generator):
        return get_rng(generator).normal(mean, std, size=shape).astype(dt)


class Multinomial(Function):
    """out[..., k] = the k-th category index drawn from each row of weights p (unnormalised), with or
    without replacement (without: the keys p / Exp(1) sorted, PyTorch's algorithm: zero-weight
    categories come last, in index order); int64, no gradient"""
    jvp = NoRule("integer output: no tangent")
    onnx = NoRule("ONNX's Multinomial draws from its own generator and samples with replacement only, so "
                  "the exported model would not reproduce minigrad's draws")

    op_name = "multinomial"
    _random, _generator_arg = True, 3

    @staticmethod
    def forward(ctx, p, num_samples, replacement, generator):
        rng = get_rng(generator)
        rows = p.reshape(-1, p.shape[-1]).astype(np.float64)
        R, C = rows.shape
        if replacement:
            cdf = np.cumsum(rows, axis=1)
            cdf /= cdf[:, -1:]
            u = rng.random((R, num_samples))
            out = np.empty((R, num_samples), np.int64)
            for r in range(R):      # a binary search per draw; the last category with weight wins at u ~ 1
                out[r] = np.minimum(np.searchsorted(cdf[r], u[r], side="right"), C - 1)
            # never a zero-weight category: side="right" skips flat steps of the cdf
        else:
            e = rng.exponential(size=(R, C))
            if e.size and np.minimum.reduce(e, axis=None) > 0:
                keys = rows / e  # (no errstate context: it costs more than a row's division)
            else:
                with np.errstate(divide="ignore"):
                    keys = rows / e
            out = (-keys).argsort(axis=1, kind="stable")[:, :num_samples].astype(np.int64)
        return out.reshape(p.shape[:-1] + (num_samples,))

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("multinomial: this op is not differentiable")


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categorical distributions in the rows of input, as torch.multinomial.

    Args:
        input (Tensor): 1-D ``(C,)`` or 2-D ``(R, C)`` non-negative weights (need not sum to 1; each
            row's sum must be positive), floating point.
        num_samples (int): draws per row.
        replacement (bool): draw with replacement; without, each row's draws are distinct and
            ``num_samples`` is at most C (categories of weight 0 come after all the others).
        generator (mg.Generator, optional): the generator to draw from (default: the global one).
        out (Tensor, optional): an int64 tensor of the result's shape to write the result into
            (PyTorch would resize one of another shape; minigrad raises).

    Returns:
        An int64 tensor ``(num_samples,)`` or ``(R, num_samples)``.

    Example:
        >>> g = mg.Generator().manual_seed(0)
        >>> mg.multinomial(mg.tensor([0.0, 10.0, 3.0, 0.0]), 2, generator=g).shape
        (2,)
    """
    from ..tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim (multinomial: got input of shape {tuple(input.shape)})")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    C = input.shape[-1]
    if not replacement and num_samples > C:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"(num_samples={num_samples}, {C} categories)")
    p = input._data
    if p.size:  # (the ufuncs' reduce, not np.all / np.any / sum: their wrappers cost more than a row)
        if not _all(np.isfinite(p), axis=None) or _any(p < 0, axis=None):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if _any(np.add.reduce(p.reshape(-1, C), axis=1) <= 0, axis=None):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if out is not None and out.dtype != np.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype}")
    res = Multinomial.apply(input, num_samples, bool(replacement), generator)
    if out is None:
        return res
    from .inplace import into     # written in place; out must have the result's shape (no resize_ here)
    return into(out, _same, res, name="multinomial")


_all, _any = np.logical_and.reduce, np.logical_or.reduce


def _same(x):
    return x
