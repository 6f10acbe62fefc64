"""Resizing (F.interpolate): nearest, nearest-exact, linear, bilinear, bicubic and trilinear are each a linear
map per spatial dimension, so one Function applies one (out, in) matrix per dimension; its VJP is
the same Function with the transposed matrices, so it is differentiable to any order.

The matrices follow PyTorch's source-index rules (aten/src/ATen/native/UpSample.h): nearest
src = min(floor(dst * scale), in - 1) computed in float32; linear src = scale * (dst + 0.5) - 0.5
clamped at 0 (the half-pixel rule), or src = dst * (in - 1) / (out - 1) with align_corners.
"""
import numpy as np

from ..autograd.function import Function

__all__ = []  # Function classes only: their public wrapper is nn.functional.interpolate


def _scale(n_in, n_out, align_corners, scale):
    """PyTorch's area_pixel_compute_scale: the source step per output step."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def nearest_matrix(n_in, n_out, scale, exact=False, shortcuts=False):
    """(n_out, n_in) 0/1 matrix of nearest (floor) or nearest-exact (round half up) sampling.
    shortcuts: PyTorch's 2-D nearest kernel copies when out == in and halves when out == 2 in,
    whatever the scale (its 1-D and 3-D kernels apply the scale: measured on torch 2.13)."""
    s = np.float32(1.0 / scale if scale is not None and scale > 0 else n_in / n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s if exact else dst * s).astype(np.int64)
    src = np.minimum(src, n_in - 1)
    if shortcuts and not exact and n_out in (n_in, 2 * n_in):
        src = np.arange(n_out) // (n_out // n_in)
    A = np.zeros((n_out, n_in))
    A[np.arange(n_out), src] = 1.0
    return A


def linear_matrix(n_in, n_out, align_corners, scale):
    """(n_out, n_in) matrix of linear interpolation weights (two per row)."""
    if n_in == n_out:  # PyTorch copies, whatever the scale
        return np.eye(n_in)
    s = _scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * s if align_corners else np.maximum(s * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = i0 + (i0 < n_in - 1)
    l1 = np.clip(src - i0, 0.0, 1.0)
    A = np.zeros((n_out, n_in))
    np.add.at(A, (np.arange(n_out), i0), 1.0 - l1)
    np.add.at(A, (np.arange(n_out), i1), l1)
    return A


def cubic_matrix(n_in, n_out, align_corners, scale, A=-0.75):
    """(n_out, n_in) matrix of cubic convolution (Keys, A = -0.75) weights, four taps per row at
    floor(src) - 1 ... floor(src) + 2 clamped to the edges; src is the linear rule's without the clamp
    at 0 (PyTorch's cubic source index)."""
    s = _scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * s if align_corners else s * (dst + 0.5) - 0.5
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    t = np.clip(src - i0, 0.0, 1.0)

    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    M = np.zeros((n_out, n_in))
    for j, w in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
        np.add.at(M, (np.arange(n_out), np.clip(i0 + j - 1, 0, n_in - 1)), w)
    return M


_NAMES = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact",
          "linear": "UpsampleLinear", "bilinear": "UpsampleBilinear", "trilinear": "UpsampleTrilinear",
          "bicubic": "UpsampleBicubic"}


class Interpolate(Function):
    """out = x with each spatial dimension d mapped by its matrix A_d (out_d, in_d);
    dx = Interpolate(g) with the transposed matrices"""

    op_name = "interpolate"

    def name(self):
        return f"{_NAMES.get(self.mode, 'Upsample')}{len(self.mats)}DBackward0"

    @staticmethod
    def forward(ctx, x, mats, mode):
        ctx.mats, ctx.mode = mats, mode
        out = x
        for d, A in enumerate(mats):
            if A is None:
                continue
            # contract dimension ax with A's columns as one batched GEMM (tensordot + moveaxis was
            # ~100x slower: measured 114 ms -> 1 ms on (8, 16, 32, 32) x2 bilinear)
            A, ax = A.astype(x.dtype, copy=False), 2 + d
            if ax == out.ndim - 1:
                out = np.matmul(out, A.T)
            elif ax == out.ndim - 2:
                out = np.matmul(A, out)
            else:
                out = np.matmul(out.swapaxes(ax, -1), A.T).swapaxes(ax, -1)
        return np.ascontiguousarray(out)

    @staticmethod
    def backward(ctx, g):
        return Interpolate.apply(g, tuple(None if A is None else np.ascontiguousarray(A.T) for A in ctx.mats),
                                 ctx.mode), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Interpolate.apply(t, ctx.mats, ctx.mode)  # linear: the op itself on the tangent
