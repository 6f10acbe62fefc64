"""Activations with a fused rule (the others are compositions in nn.functional): leaky_relu."""
import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor

__all__ = []  # Function classes only: their public wrappers are nn.functional's


class LeakyRelu(Function):
    """out = x if x > 0 else slope * x;  dx = g * (1 if x > 0 else slope)"""
    batching = "elementwise"
    fusion = NoRule("its slope is a static argument, which a fused loop body has no place for yet")

    op_name = "leaky_relu"

    @staticmethod
    def forward(ctx, x, slope):
        pos = x > 0
        if ctx.needs_input_grad:
            # the derivative is piecewise constant, so the backward g * d is exact to any order
            ctx.d = np.where(pos, np.asarray(1, x.dtype), np.asarray(slope, x.dtype))
        return np.where(pos, x, x * np.asarray(slope, x.dtype))

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.d), None

    @staticmethod
    def jvp(ctx, t, _slope):
        return t * Tensor._make(ctx.d)

    @staticmethod
    def onnx(e, c):
        return c.add("LeakyRelu", [c.x(e)], c.out(e), alpha=float(e.args[1]))
