"""Random primitives: each draw from a generator is an op, so a traced graph draws afresh at each run.

A Function here has no Tensor inputs; its static arguments say what to draw and from which
mg.Generator (None: the default one). `_random = True` and `_generator_arg` tell mg.graph.trace to make
that generator an input of the graph, consumed at each run exactly as eager consumes it (the same
NumPy call on the same bit generator, so a traced program and eager code draw the same numbers).
"""
import numpy as np

from ..autograd.function import Function, NoRule
from ..random import get_rng


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
