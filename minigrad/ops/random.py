"""Random primitives: each draw from a generator is an op, so a traced graph draws afresh at each run.

A Function here has no Tensor inputs; its static arguments say what to draw and from which
mg.Generator (None: the default one). `_random = True` and `_generator_arg` tell mg.trace to make
that generator an input of the graph, consumed at each run exactly as eager consumes it.
"""
import numpy as np

from ..autograd.function import Function
from ..random import get_rng


class DropoutMask(Function):
    """out = (uniform(shape) >= p) / (1 - p): dropout's keep mask, pre-scaled (inverted dropout)"""

    op_name = "dropout_mask"
    _random, _generator_arg = True, 3

    @staticmethod
    def forward(ctx, shape, dt, p, generator):
        rdt = dt if dt in (np.float32, np.float64) else np.float32
        scale = (get_rng(generator).random(shape, dtype=rdt) >= p).astype(dt)
        scale *= dt.type(1.0 / (1.0 - p))
        return scale
