"""N-d pooling on conv_nd's window geometry: max pooling with indices (max_pool1d/3d), average pooling
(avg_pool1d/3d), adaptive max pooling (1d/2d/3d) and max unpooling (1d/2d/3d).

The max ops return PyTorch's indices (the flat index of each maximum in its input plane) from the
Function itself, so a tracer records them; their backward scatters g to those indices with Tensor ops
(ScatterAdd, whose backward gathers), so the gradient is twice differentiable. max_pool2d and
avg_pool2d keep their tuned 2-D kernels (ops/pooling.py).
"""
import itertools

import numpy as np

from ..autograd.function import Function, NoRule
from .._memory_format import _c_order
from ..tensor import Tensor
from .conv_nd import _padded, _spread_windows, _windows, check_geom_nd

__all__ = []  # Function classes only: their public wrappers are nn.functional's


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _index_tensor(idx):
    """The forward's index array as a Tensor, reshaped with Tensor ops: a tracer recording the
    backward then sees the forward's own output (by identity), not a copy baked in as a constant."""
    return idx if isinstance(idx, Tensor) else Tensor._make(idx)


def _scatter_to(g, idx, in_shape):
    """dx of in_shape (N, C, *size) with g (N, C, *out) added at the flat plane indices idx."""
    N, C = in_shape[:2]
    P = int(np.prod(idx.shape[2:]))  # explicit sizes: N or C may be 0
    zeros = Tensor._make(np.zeros((N, C, int(np.prod(in_shape[2:]))), dtype=g.dtype))
    return zeros.scatter_add(2, _index_tensor(idx).reshape(N, C, P), g.reshape(N, C, P)).reshape(*in_shape)


def _gather_at(t, idx):
    """t (N, C, *size) read at the flat plane indices idx (N, C, *out)."""
    N, C = t.shape[:2]
    S, P = int(np.prod(t.shape[2:])), int(np.prod(idx.shape[2:]))
    return t.reshape(N, C, S).gather(2, _index_tensor(idx).reshape(N, C, P)).reshape(*idx.shape)


def _pick_max(flat):
    """PyTorch's choice in each window (..., K): the last NaN if any (each NaN replaces the running
    maximum), else the first maximum; `none` marks windows whose maximum is the lowest value (all -inf
    or padding), where PyTorch keeps its initial index, the window's first element in the input."""
    k = flat.argmax(axis=-1)  # the first maximum (or the first NaN)
    val = np.take_along_axis(flat, k[..., None], -1)[..., 0]
    if flat.dtype.kind == "f":
        isn = np.isnan(flat)
        has_nan = isn.any(axis=-1)
        if has_nan.any():
            k = np.where(has_nan, flat.shape[-1] - 1 - isn[..., ::-1].argmax(axis=-1), k)
        none = ~has_nan & (val == _lowest(flat.dtype))
    else:
        none = val == _lowest(flat.dtype)
    return k, val, none


def _scatter_masked(g, idx, valid, in_shape):
    """dx: g added at the flat indices idx where valid (PyTorch's index of a window with no input
    element points outside the input: that gradient has nowhere to go)."""
    if valid is None:
        return _scatter_to(g, idx, in_shape)
    v = Tensor._make(valid.astype(g.dtype))
    return _scatter_to(g * v, np.where(valid, idx, 0), in_shape)


class MaxPoolNd(Function):
    """out = max over each window (NaN propagates: the last NaN wins, else the first maximum, as
    PyTorch), idx = its flat index in the input plane;  dx = g scattered (added) to idx"""
    batching = "fold_into_n"

    op_name = "max_pool"

    def name(self):
        return f"MaxPool{len(self.geo.size)}DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, geo):
        check_geom_nd("max_pool", geo, x)
        n = len(geo.size)
        win = _windows(_padded(x, geo, _lowest(x.dtype)), geo)
        flat = win.reshape(win.shape[:2 + n] + (int(np.prod(geo.kernel)),))  # explicit: N or C may be 0
        k, out, none = _pick_max(flat)
        # window offset -> input coordinate per dimension -> flat index in the (unpadded) plane;
        # a window without a maximum above -inf takes PyTorch's initial index: its first element
        # at or after 0 (which dilation may push past the input when the window is all padding)
        offs = np.unravel_index(k, geo.kernel)
        idx = np.zeros(k.shape, np.int64)
        valid = np.ones(k.shape, bool)
        for d in range(n):
            o = np.arange(geo.out[d]).reshape((-1,) + (1,) * (n - 1 - d))
            start = o * geo.stride[d] - geo.pads[d][0]
            first = np.where(start < 0, start + (-start + geo.dilation[d] - 1) // geo.dilation[d] * geo.dilation[d],
                             start)
            coord = np.where(none, first, start + offs[d] * geo.dilation[d])
            valid &= (coord >= 0) & (coord < geo.size[d])
            idx = idx * geo.size[d] + coord
        ctx.geo, ctx.idx, ctx.in_shape = geo, idx, x.shape
        ctx.valid = None if valid.all() else valid
        ctx.mark_non_differentiable(idx)
        return out, idx

    @staticmethod
    def backward(ctx, g, _):
        return _scatter_masked(g, ctx.idx, ctx.valid, ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, _geo):
        if ctx.valid is None:
            return _gather_at(t, ctx.idx), None
        return _gather_at(t, np.where(ctx.valid, ctx.idx, 0)) * Tensor._make(ctx.valid.astype(t.dtype)), None

    @staticmethod
    def onnx(e, c):
        geo = e.args[1]
        outs = [c.out(e), c.tmp()]
        c.add("MaxPool", [c.x(e)], outs, kernel_shape=list(geo.kernel), strides=list(geo.stride),
              dilations=list(geo.dilation), pads=[lo for lo, _ in geo.pads] + [hi for _, hi in geo.pads])
        if len(e.outvars) > 1:  # ONNX's index runs over the whole tensor; minigrad's within each plane
            plane = c.const(np.asarray(int(np.prod(geo.size)), np.int64))
            c.add("Mod", [outs[1], plane], c.out(e, 1))
        return outs[0]


class AvgPoolNd(Function):
    """out = sum over each window of xpad (zero padding) / divisor;  dx = AvgPoolNdBackward(g)"""
    batching = "fold_into_n"

    op_name = "avg_pool"

    def name(self):
        return f"AvgPool{len(self.geo.size)}DBackward0"

    @staticmethod
    def forward(ctx, x, geo, div):
        check_geom_nd("avg_pool", geo, x)
        ctx.geo, ctx.div = geo, div
        n = len(geo.size)
        win = _windows(_padded(x, geo), geo)
        return _c_order(win.sum(axis=tuple(range(2 + n, 2 + 2 * n))) / div)  # PyTorch's layout, whatever x's

    @staticmethod
    def backward(ctx, g):
        return AvgPoolNdBackward.apply(g, ctx.geo, ctx.div), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return AvgPoolNd.apply(t, ctx.geo, ctx.div)  # linear: the op itself on the tangent

    @staticmethod
    def onnx(e, c):
        x, geo, div = e.args[:3]
        name = x.name
        if any(lo or hi for lo, hi in geo.pads):
            pads = [0, 0] + [lo for lo, _ in geo.pads] + [0, 0] + [hi for _, hi in geo.pads]
            name = c.add("Pad", [name, c.ints(pads), c.scalar(0, x.dtype)], mode="constant")
        mean = c.add("AveragePool", [name], kernel_shape=list(geo.kernel), strides=list(geo.stride))
        total = c.add("Mul", [mean, c.scalar(int(np.prod(geo.kernel)), x.dtype)])
        return c.add("Div", [total, c.operand(div, x.dtype)], c.out(e))


class AvgPoolNdBackward(Function):
    """dx = g / divisor spread over each window (the adjoint of average pooling);  dg = AvgPoolNd(gg)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "avg_pool_backward"

    @staticmethod
    def forward(ctx, g, geo, div):
        check_geom_nd("avg_pool_backward", geo, out=g)
        ctx.geo, ctx.div = geo, div
        gd = g / div
        vals = np.broadcast_to(gd.reshape(gd.shape + (1,) * len(geo.size)), gd.shape + geo.kernel)
        return np.ascontiguousarray(_spread_windows(vals, geo, g.dtype))

    @staticmethod
    def backward(ctx, gg):
        return AvgPoolNd.apply(gg, ctx.geo, ctx.div), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return AvgPoolNdBackward.apply(t, ctx.geo, ctx.div)


def avg_divisor(size, kernel, stride, padding, out, count_include_pad, divisor_override, dtype):
    """The (*out) divisor of each window, as PyTorch: the window clipped to the padded input
    (count_include_pad) or to the input itself; `padding` is the user's (symmetric) padding."""
    if divisor_override:
        return np.asarray(divisor_override, dtype=dtype)
    div = np.ones((), dtype=np.int64)
    for n, k, s, p, o in zip(size, kernel, stride, padding, out):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        sz = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        div = np.multiply.outer(div, sz)
    return div.astype(dtype)


def adaptive_bins(n, m):
    """PyTorch's adaptive bins: bin i of m over n covers [floor(i n / m), ceil((i + 1) n / m))."""
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


class AdaptiveMaxPoolNd(Function):
    """out = max over each adaptive bin (the last NaN, else the first maximum wins), idx = its flat index in
    the input plane;  dx = g scattered (added) to idx"""
    batching = "fold_into_n"
    onnx = NoRule("unpooling, adaptive max pooling and interpolation: not mapped yet")

    op_name = "adaptive_max_pool"

    def name(self):
        return f"AdaptiveMaxPool{len(self.out_size)}DBackward0"

    @staticmethod
    def forward(ctx, x, out_size):
        n = len(out_size)
        size = x.shape[2:]
        bins = [adaptive_bins(s, m) for s, m in zip(size, out_size)]
        out = np.empty(x.shape[:2] + tuple(out_size), x.dtype)
        idx = np.empty(out.shape, np.int64)
        for pos in itertools.product(*(range(m) for m in out_size)):
            b = [bins[d][pos[d]] for d in range(n)]
            win = x[(Ellipsis,) + tuple(slice(s, e) for s, e in b)]
            flat = win.reshape(win.shape[:2] + (int(np.prod(win.shape[2:])),))
            k, out[(Ellipsis,) + pos], _ = _pick_max(flat)  # all -inf: the first element, as PyTorch
            offs = np.unravel_index(k, tuple(e - s for s, e in b))
            i = np.zeros(k.shape, np.int64)
            for d in range(n):
                i = i * size[d] + b[d][0] + offs[d]
            idx[(Ellipsis,) + pos] = i
        ctx.out_size, ctx.idx, ctx.in_shape = tuple(out_size), idx, x.shape
        ctx.mark_non_differentiable(idx)
        return out, idx

    @staticmethod
    def backward(ctx, g, _):
        return _scatter_to(g, ctx.idx, ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, _size):
        return _gather_at(t, ctx.idx), None


class MaxUnpoolNd(Function):
    """out = zeros of (N, C, *size) with out[n, c, idx[n, c, p]] = x[n, c, p] (the partial inverse of
    max pooling);  dx = g gathered at idx"""
    batching = "fold_into_n"
    onnx = NoRule("unpooling, adaptive max pooling and interpolation: not mapped yet")

    op_name = "max_unpool"

    def name(self):
        return f"MaxUnpool{len(self.size)}DBackward0"

    @staticmethod
    def forward(ctx, x, idx, size):
        N, C = x.shape[:2]
        out = np.zeros((N, C, int(np.prod(size))), x.dtype)
        P = int(np.prod(x.shape[2:]))
        np.put_along_axis(out, idx.reshape(N, C, P), x.reshape(N, C, P), 2)
        ctx.idx, ctx.size = idx, tuple(size)
        return out.reshape((N, C) + tuple(size))

    @staticmethod
    def backward(ctx, g):
        return _gather_at(g, ctx.idx), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return MaxUnpoolNd.apply(t, ctx.idx, ctx.size)
