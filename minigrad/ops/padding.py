"""Constant padding (F.pad's 'constant' mode; the other modes are index_select compositions)."""
import numpy as np

from ..autograd.function import Function

__all__ = []  # Function classes only: their public wrappers are nn.functional's


class ConstantPadNd(Function):
    """out = x padded by widths (negative widths crop) with `value`;  dx = pad(g, -widths) (a crop)"""
    batching = "pad"

    op_name = "pad"

    @staticmethod
    def forward(ctx, x, widths, value):
        ctx.widths = widths
        crop = tuple(slice(-lo if lo < 0 else 0, n + hi if hi < 0 else n) for (lo, hi), n in zip(widths, x.shape))
        x = x[crop]
        pos = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
        shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, pos))
        out = np.full(shape, value, dtype=x.dtype)
        out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape, pos))] = x
        return out

    @staticmethod
    def backward(ctx, g):
        # zero padding and cropping are each other's adjoints
        return ConstantPadNd.apply(g, tuple((-lo, -hi) for lo, hi in ctx.widths), 0), None, None

    @staticmethod
    def jvp(ctx, t, _widths, _value):
        return ConstantPadNd.apply(t, ctx.widths, 0)  # the padding is constant: tangent 0 there

    @staticmethod
    def onnx(e, c):
        x, widths, value = e.args[:3]
        widths = [tuple(int(v) for v in w) for w in widths]
        pads = [w[0] for w in widths] + [w[1] for w in widths]
        return c.add("Pad", [x.name, c.ints(pads), c.scalar(value, x.dtype)], c.out(e), mode="constant")
