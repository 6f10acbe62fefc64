"""Resizing (F.interpolate): nearest, nearest-exact, linear, bilinear, bicubic and trilinear are each a
linear map per spatial dimension, out[..., j] = sum over taps t of w[t, j] * x[..., idx[t, j]], with
1 (nearest), 2 (linear) or 4 (cubic) taps. One Function applies the maps (a gather per tap) or their
adjoints (a sum over runs: every tap's idx is non-decreasing in j); the VJP of one is the other, so
the op is differentiable to any order.

The taps follow PyTorch's source-index rules (aten/src/ATen/native/UpSample.h): nearest
src = min(floor(dst * scale), in - 1) computed in float32; linear src = scale * (dst + 0.5) - 0.5
clamped at 0 (the half-pixel rule), or src = dst * (in - 1) / (out - 1) with align_corners; cubic
as linear without the clamp, Keys' kernel (A = -0.75), taps clamped to the edges.
"""
import numpy as np

from ..autograd.function import Function, NoRule

__all__ = []  # Function classes only: their public wrapper is nn.functional.interpolate


def _scale(n_in, n_out, align_corners, scale):
    """PyTorch's area_pixel_compute_scale: the source step per output step."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def nearest_taps(n_in, n_out, scale, exact=False, shortcuts=False):
    """(idx, w, n_in) of nearest (floor) or nearest-exact (round half up) sampling: one tap.
    shortcuts: PyTorch's 2-D nearest kernel copies when out == in and halves when out == 2 in,
    whatever the scale (its 1-D and 3-D forward kernels apply the scale: measured on torch 2.13; their
    backward takes the shortcuts, so there PyTorch's gradient is not its forward's adjoint; ours is)."""
    s = np.float32(1.0 / scale if scale is not None and scale > 0 else n_in / n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s if exact else dst * s).astype(np.int64)
    src = np.minimum(src, n_in - 1)
    if shortcuts and not exact and n_out in (n_in, 2 * n_in):
        src = np.arange(n_out) // (n_out // n_in)
    return src[None], np.ones((1, n_out)), n_in


def linear_taps(n_in, n_out, align_corners, scale):
    """(idx, w, n_in) of linear interpolation: two taps per output position."""
    if n_in == n_out:  # PyTorch copies, whatever the scale
        return np.arange(n_in)[None], np.ones((1, n_in)), n_in
    s = _scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * s if align_corners else np.maximum(s * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = i0 + (i0 < n_in - 1)
    l1 = np.clip(src - i0, 0.0, 1.0)
    return np.stack([i0, i1]), np.stack([1.0 - l1, l1]), n_in


def cubic_taps(n_in, n_out, align_corners, scale, A=-0.75):
    """(idx, w, n_in) of cubic convolution (Keys, A = -0.75): four taps per output position at
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
    idx = np.stack([np.clip(i0 + j - 1, 0, n_in - 1) for j in range(4)])
    return idx, np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)]), n_in


def taps_matrix(taps):
    """The dense (out, in) matrix of one dimension's taps (for tests and references)."""
    idx, w, n_in = taps
    M = np.zeros((idx.shape[1], n_in))
    for t in range(idx.shape[0]):
        np.add.at(M, (np.arange(idx.shape[1]), idx[t]), w[t])
    return M


def _weight(w, ax, ndim, dtype):
    return w.astype(dtype, copy=False).reshape((-1,) + (1,) * (ndim - 1 - ax))


_DENSE = 4096  # at most this many (out, in) matrix entries: one BLAS matmul beats the gathers


def _dense(x, taps):
    """Whether to map x by the dense matrix: small enough, and x finite (the matrix's zeros times an
    inf or nan would put nan in every output of its row; PyTorch's taps read only their own inputs)."""
    return taps[0].shape[1] * taps[2] <= _DENSE and np.isfinite(x).all()


def _matmul_along(x, ax, A):
    """x with axis ax mapped by the matrix A (out, in): one batched GEMM."""
    A = A.astype(x.dtype, copy=False)
    if ax == x.ndim - 1:
        return np.matmul(x, A.T)
    if ax == x.ndim - 2:
        return np.matmul(A, x)
    return np.matmul(x.swapaxes(ax, -1), A.T).swapaxes(ax, -1)


def _gather(x, ax, taps):
    """out[..., j, ...] = sum over taps of w[t, j] * x[..., idx[t, j], ...] along axis ax."""
    idx, w, n_in = taps
    if _dense(x, taps):
        return _matmul_along(x, ax, taps_matrix(taps))
    out = None
    for t in range(idx.shape[0]):
        v = np.take(x, idx[t], axis=ax)
        if not (w[t] == 1).all():
            v *= _weight(w[t], ax, x.ndim, x.dtype)
        out = v if out is None else np.add(out, v, out=out)
    return out


def _scatter(g, ax, taps):
    """The adjoint of _gather: g's entries, weighted, summed into their source positions along ax.
    Each tap's idx is non-decreasing, so the outputs reading one source form a run (start, count):
    the sum over runs is a sum of gathers, the q-th entry of every run (masked where a run is
    shorter), so the work is gathers like the forward's, as many as the longest run (a scatter with
    fancy indexing along a trailing axis, or np.add.reduceat, measured 5-10x slower)."""
    idx, w, n_in = taps
    if _dense(g, taps):
        return _matmul_along(g, ax, taps_matrix(taps).T)
    shape = list(g.shape)
    shape[ax] = n_in
    out = np.zeros(shape, g.dtype)
    if g.shape[ax] == 0:
        return out
    bshape = (-1,) + (1,) * (g.ndim - 1 - ax)
    for t in range(idx.shape[0]):
        v = g if (w[t] == 1).all() else g * _weight(w[t], ax, g.ndim, g.dtype)
        src, starts, counts = np.unique(idx[t], return_index=True, return_counts=True)
        acc = None
        for q in range(int(counts.max())):
            part = np.take(v, np.minimum(starts + q, g.shape[ax] - 1), axis=ax)
            if not (counts > q).all():
                part *= (counts > q).astype(g.dtype).reshape(bshape)
            acc = part if acc is None else np.add(acc, part, out=acc)
        if len(src) == n_in:  # every source is read (upsampling): src is 0 .. n_in - 1
            out += acc
        else:
            sel = [slice(None)] * g.ndim
            sel[ax] = src
            out[tuple(sel)] += acc
    return out


def _uint8_resize(x, taps):
    """PyTorch's uint8 bilinear/bicubic resize (UpSampleKernelAVXAntialias.h and its generic twin):
    separable passes, the last dimension first, each in integers with the weights in 16-bit fixed
    point (the most fraction bits that keep the largest weight's double under 2 ** 15) and the result
    rounded half up and clamped to 0..255 before the next pass, so an image resizes to the same
    bytes as in PyTorch (a float pass then one rounding differs by 1 in places)."""
    out = x
    for d in reversed(range(len(taps))):
        ax = 2 + d
        if taps[d] is None or taps[d][2] == taps[d][0].shape[1]:
            continue  # PyTorch skips a pass whose size does not change
        W = taps_matrix(taps[d])
        wmax = np.abs(W).max()
        p = 22
        for q in range(22):
            if int(0.5 + wmax * (1 << (q + 1))) >= (1 << 15):
                p = q
                break
        Wi = np.trunc(W * (1 << p) + np.where(W < 0, -0.5, 0.5)).astype(np.int64)
        acc = np.moveaxis(np.moveaxis(out.astype(np.int64), ax, -1) @ Wi.T, -1, ax)
        out = np.clip((acc + (1 << (p - 1))) >> p, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(out)


_NAMES = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact",
          "linear": "UpsampleLinear", "bilinear": "UpsampleBilinear", "trilinear": "UpsampleTrilinear",
          "bicubic": "UpsampleBicubic"}


class Interpolate(Function):
    """out = x with each spatial dimension d mapped by its taps (a gather per tap), or by their
    adjoint (a grouped sum) when adjoint;  dx = Interpolate(g) with the other direction"""
    batching = "fold_into_n"
    onnx = NoRule("unpooling, adaptive max pooling and interpolation: not mapped yet")

    op_name = "interpolate"

    def name(self):
        return f"{_NAMES.get(self.mode, 'Upsample')}{len(self.taps)}DBackward0"

    @staticmethod
    def forward(ctx, x, taps, mode, adjoint=False):
        ctx.taps, ctx.mode, ctx.adjoint = taps, mode, adjoint
        if x.dtype == np.uint8 and mode in ("bilinear", "bicubic"):
            return _uint8_resize(x, taps)
        out = x
        for d, tp in enumerate(taps):
            if tp is not None:
                out = (_scatter if adjoint else _gather)(out, 2 + d, tp)
        return np.ascontiguousarray(out)

    @staticmethod
    def backward(ctx, g):
        return Interpolate.apply(g, ctx.taps, ctx.mode, not ctx.adjoint), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Interpolate.apply(t, ctx.taps, ctx.mode, ctx.adjoint)  # linear: the op itself on the tangent
