"""Pooling, one family for 1-, 2- and 3-d windows on the convolution family's window geometry
(ops/conv.py): max pooling (MaxPool, with PyTorch's indices on request; its backward MaxPoolBackward
and double backward MaxPoolDoubleBackward), average pooling (AvgPool), adaptive max pooling
(AdaptiveMaxPoolNd) and max unpooling (MaxUnpoolNd).

Max pooling keeps each window's offset (the running maximum over the kernel offsets, one strided
comparison each), or, for 2x2 / stride-2 windows tiling a 2-D input without indices, the two pairwise
choices of its 2x2 backend (ops/_pool2d.py: minigrad/kernels/pool.py's numba pass or NumPy); both follow
PyTorch's scan of a window (NaN propagates, the last NaN wins, else the first maximum). Its backward is
itself an op (MaxPoolBackward: scatter the gradient to each window's maximum), whose own backward
gathers at the same positions (MaxPoolDoubleBackward), so the gradient is twice differentiable; the
indices (the flat index of each maximum in its input plane) come from the Function itself, so a
tracer records them. Average pooling sums the windows offset by offset (one strided add each) for
every dimension; its backward spreads g / divisor the same way.
"""
import itertools

import numpy as np

from .._memory_format import _c_order
from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from . import _conv2d as _k2
from ._conv2d import _alloc, _channel_major
from ._pool2d import _is_2x2_tiling, _max_2x2, _max_2x2_idx, _max_2x2_scatter
from .conv import _crop, _GeomNd, _offset_slices, _offsets, _padded, check_geom

__all__ = []  # Function classes only: their public wrappers are nn.functional's


def _pad(x, geo, value=0):
    """x padded per geo (2-D: keeping a channel-major layout, in a recycled buffer)."""
    if len(geo.size) == 2:
        return _k2._padded(x, _k2.flat(geo), value)
    return _padded(x, geo, value)


def _tiles(geo):
    """True when the windows tile the padded input exactly (kernel == stride, no dilation)."""
    return all(k == s and d == 1 and n + lo + hi == o * k for n, k, s, d, (lo, hi), o in
               zip(geo.size, geo.kernel, geo.stride, geo.dilation, geo.pads, geo.out))


def _scatter_windows(parts, geo, dtype, channel_major=False):
    """dx with dx[window k] += parts(k) for each kernel offset k (its row-major number), cropped to the
    input.

    parts(k, out) writes the (N, C, *out) values for offset k into out. channel_major lays dx out
    C-major, matching a gradient that flows back to conv2d (whose backward then needs no copy)."""
    N, C = geo.N, geo.C
    if _tiles(geo):
        # disjoint windows covering everything: write each offset's values straight into a
        # (N, C, O1, k1, O2, k2, ...) buffer, no zero fill and no accumulation
        dx = _alloc((N, C) + sum(zip(geo.out, geo.kernel), ()), dtype, channel_major)
        for i, k in enumerate(_offsets(geo)):
            parts(i, dx[(slice(None), slice(None)) + sum(((slice(None), j) for j in k), ())])
        full = tuple(o * k for o, k in zip(geo.out, geo.kernel))
        dx = dx.reshape((N, C) + full) if not channel_major else \
            dx.swapaxes(0, 1).reshape((C, N) + full).swapaxes(0, 1)
    else:
        dx = _alloc((N, C) + tuple(n + lo + hi for n, (lo, hi) in zip(geo.size, geo.pads)), dtype, channel_major,
                    True)
        tmp = np.empty((N, C) + geo.out, dtype=dtype)
        for i, k in enumerate(_offsets(geo)):
            parts(i, tmp)
            dx[_offset_slices(geo, k)] += tmp
    if any(lo or hi for lo, hi in geo.pads):
        dx = _crop(dx, geo)
    return dx


# -- max pooling: one op family for 1-, 2- and 3-d windows ---------------------------------------------
#
# MaxPool's forward records where each window's maximum is, in one of two forms that its backward
# (MaxPoolBackward: scatter g there) and double backward / JVP (MaxPoolDoubleBackward: gather there)
# read: `pairs`, the 2x2 backend's two pairwise choices (ops/_pool2d.py: 2x2 / stride-2 windows tiling
# a 2-D input, no indices asked for; numba or NumPy), else `idx`, each maximum's offset in its window
# (the running-maximum loop over the kernel offsets, any n). PyTorch's indices (the flat index in the
# input plane) are computed from the offsets. Both forms follow PyTorch's scan of a window: a value
# replaces the running maximum when it is greater or NaN, so the last NaN wins a window with NaN,
# else the first maximum.

def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_windows(x, geo, pairs_ok):
    """Max pooling of x (N, C, *size): (out, pairs, idx), where either pairs holds the 2x2 backend's
    choices (only when pairs_ok; idx None, built on demand by _argmax_offsets) or idx the window offset
    of each maximum."""
    if pairs_ok and len(geo.size) == 2:
        f = _k2.flat(geo)
        if _is_2x2_tiling(f):
            out, pairs = _max_2x2(x, f)
            return out, pairs, None
    # pad with the dtype's lowest value: -inf for floats, iinfo.min for integers (-inf overflowed)
    low = _lowest(x.dtype)
    xp = _pad(x, geo, low)
    offs = _offsets(geo)
    best = xp[_offset_slices(geo, next(offs))].copy(order="K")  # keeps a C-major (conv output) layout
    K = _prod(geo.kernel)
    idx = np.zeros(best.shape, dtype=np.int8 if K < 128 else np.int32)
    for k, off in enumerate(offs, 1):
        v = xp[_offset_slices(geo, off)]
        m = v > best  # strict: an equal later value does not take the gradient (as PyTorch)
        np.maximum(best, v, out=best)
        # branch-free idx[m] = k: k exceeds every index stored so far
        np.maximum(idx, np.multiply(m, idx.dtype.type(k), dtype=idx.dtype), out=idx)
    if x.dtype.kind == "f":
        nan = np.isnan(best)
        if nan.any():  # np.maximum made them NaN, `v > best` never chose a NaN: the last NaN wins
            for k, off in enumerate(_offsets(geo)):
                np.copyto(idx, idx.dtype.type(k), where=nan & np.isnan(xp[_offset_slices(geo, off)]))
    if any(lo for lo, _ in geo.pads):
        # a window whose maximum is the padding value (its elements all -inf, or the integer minimum)
        # kept offset 0, in the padding: its index pointed outside the input and its gradient was
        # lost; PyTorch's scan starts at the window's first element inside the input and keeps it
        none = best == low
        if none.any():
            k0 = np.zeros((), np.int64)  # the row-major offset of that element, per output position
            for o, s, (p, _), d, kd in zip(geo.out, geo.stride, geo.pads, geo.dilation, geo.kernel):
                start = np.arange(o) * s - p
                k0 = np.add.outer(k0 * kd, np.where(start < 0, (-start + d - 1) // d, 0))
            np.copyto(idx, np.broadcast_to(k0, idx.shape).astype(idx.dtype), where=none)
    return best, None, idx


def _prod(t):
    p = 1
    for v in t:
        p *= v
    return p


def _check_choices(op, geo, pairs, idx):
    """The forward's record of each window's maximum must fit the geometry (the kernels index by it)."""
    if pairs is not None:
        f = _k2.flat(geo) if len(geo.size) == 2 else None
        ok = f is not None and type(pairs) is tuple and len(pairs) == 3 and _is_2x2_tiling(f) and all(
            isinstance(a, np.ndarray) and a.dtype == np.bool_ for a in pairs[:2])
        R = geo.N * geo.C * geo.out[0]
        if not ok or pairs[0].size != R * 2 * geo.out[-1] or pairs[1].size != R * geo.out[-1]:
            raise ValueError(f"{op}: the 2x2 pooling choices do not fit the window geometry {tuple(geo)}")
    if idx is not None and (not isinstance(idx, np.ndarray) or idx.dtype.kind not in "iu"
                            or idx.shape != (geo.N, geo.C) + geo.out):
        raise ValueError(f"{op}: window offsets of shape {getattr(idx, 'shape', None)} do not fit the window "
                         f"geometry (expected {(geo.N, geo.C) + geo.out})")
    if pairs is None and idx is None:
        raise ValueError(f"{op}: neither the 2x2 pooling choices nor the window offsets are given")


def _argmax_offsets(pairs, idx, geo):
    """The window offset of each maximum, from whichever form _max_windows gave."""
    return idx if idx is not None else _max_2x2_idx(*pairs, _k2.flat(geo))


def _plane_indices(idx, geo):
    """PyTorch's indices: the flat index in the (unpadded) input plane of each window's maximum, from
    its window offset idx. A window entirely in padding (dilation) keeps PyTorch's initial index, its
    first element at or after 0, which may lie past the input, as PyTorch's."""
    n = len(geo.size)
    offs = np.unravel_index(idx, geo.kernel)
    flat = np.zeros(idx.shape, np.int64)
    for d in range(n):
        o = np.arange(geo.out[d]).reshape((-1,) + (1,) * (n - 1 - d))
        flat = flat * geo.size[d] + (o * geo.stride[d] - geo.pads[d][0] + offs[d] * geo.dilation[d])
    return flat


def _scatter_max(g, idx, geo):
    """dx: g added at each window's maximum (offset idx), as PyTorch's backward: zeros (+0.0 where
    nothing lands, whatever g holds), windows added in output order (the offsets in reverse row-major order are the
    windows holding one input element in row-major order); cropped to the input, so a maximum
    outside it (a window all padding) is dropped. Laid out C-major when g is (a conv2d gradient)."""
    cm = _channel_major(g)
    dx = _alloc((geo.N, geo.C) + tuple(n + lo + hi for n, (lo, hi) in zip(geo.size, geo.pads)), g.dtype, cm, True)
    K = _prod(geo.kernel)
    # g times each offset's 0/1 mask, added (twice as fast as a masked add; the -0.0 of a negative g
    # times 0 leaves every sum as it is); an inf or NaN in g would make NaN in the rest of its window
    # that way, so such a g is added only where the mask holds
    tmp = np.empty(g.shape, dtype=g.dtype) if g.dtype.kind != "f" or np.isfinite(g).all() else None
    for i, k in zip(range(K - 1, -1, -1), reversed(list(_offsets(geo)))):
        part = dx[_offset_slices(geo, k)]
        if tmp is not None:
            part += np.multiply(g, idx == i, out=tmp)
        else:
            np.add(part, g, out=part, where=idx == i)
    return _crop(dx, geo) if any(lo or hi for lo, hi in geo.pads) else dx


def _gather_max(t, idx, geo):
    """t (N, C, *size) read at each window's maximum (offset idx): the adjoint of _scatter_max, exact
    (a copy, 0 for a maximum outside the input)."""
    tp = _pad(t, geo)
    out = np.empty((geo.N, geo.C) + geo.out, dtype=t.dtype)
    for i, k in enumerate(_offsets(geo)):
        np.copyto(out, tp[_offset_slices(geo, k)], where=idx == i)
    return out


class MaxPool(Function):
    """out = max over each window (PyTorch's scan: a greater or NaN value replaces the running maximum,
    so NaN propagates, the last NaN wins, else the first maximum); with return_indices also idx, the
    flat index of each maximum in its input plane;
    dx = MaxPoolBackward(g): g scattered (added) to each window's maximum"""
    batching = "fold_into_n"

    op_name = "max_pool"

    def name(self):
        return f"MaxPool{len(self.geo.size)}DWithIndicesBackward0"

    @staticmethod
    def _kernel_keys(args):
        """The kernel-selection keys this equation's arguments (Vars) may have used (mg.jit.explain)."""
        x = args[0]
        if len(x.shape) != 4:
            return []
        N, C, H, W = x.shape
        dt = np.dtype(x.dtype).name
        return [("max_pool2d_2x2", [[N, C, H, W], dt, False]), ("max_pool2d_2x2", [[C, N, H, W], dt, True])]

    @staticmethod
    def forward(ctx, x, geo, return_indices=False):
        check_geom(f"max_pool{len(geo.size)}d" if type(geo) is _GeomNd else "max_pool", geo, x)
        # the 2x2 backend's pairs are cheaper than offsets only when no indices are asked for
        out, ctx.pairs, ctx.idx = _max_windows(x, geo, not return_indices)
        ctx.geo, ctx.return_indices = geo, bool(return_indices)
        ctx.save_for_backward(x)  # as PyTorch's node: the backward op takes it (its gradient there is 0)
        out = _c_order(out)  # PyTorch's contiguous layout (no copy for a C-order input)
        if not return_indices:
            return out
        idx = _plane_indices(ctx.idx, geo)
        ctx.mark_non_differentiable(idx)
        return out, idx

    @staticmethod
    def backward(ctx, g, *_):
        x, = ctx.saved_tensors
        return MaxPoolBackward.apply(g, x, ctx.pairs, ctx.idx, ctx.geo), None, None

    @staticmethod
    def jvp(ctx, t, *_):  # the tangent at each window's maximum
        out = MaxPoolDoubleBackward.apply(t, _argmax_offsets(ctx.pairs, ctx.idx, ctx.geo), ctx.geo)
        return (out, None) if ctx.return_indices else out

    @staticmethod
    def onnx(e, c):
        geo = e.args[1]
        # geo's end padding already covers ceil_mode's extra window, so the explicit pads with
        # ceil_mode=0 give the same windows; padding counts as -inf, as PyTorch
        outs = [c.out(e), c.tmp()] if len(e.outvars) > 1 else [c.out(e)]
        c.add("MaxPool", [c.x(e)], outs, kernel_shape=list(geo.kernel), strides=list(geo.stride),
              dilations=list(geo.dilation), pads=[lo for lo, _ in geo.pads] + [hi for _, hi in geo.pads])
        if len(e.outvars) > 1:  # ONNX's index runs over the whole tensor; minigrad's within each plane
            plane = c.const(np.asarray(_prod(geo.size), np.int64))
            c.add("Mod", [outs[1], plane], c.out(e, 1))
        return outs[0]


class MaxPoolBackward(Function):
    """dx = g scattered to the window maxima of x (pairs: the 2x2 backend's choices, else the offsets idx);
    dg = MaxPoolDoubleBackward(gg): gg gathered at the same positions; 0 for x (piecewise linear)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "max_pool_backward"

    def name(self):
        return f"MaxPool{len(self.geo.size)}DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, g, x, pairs, idx, geo):
        check_geom("max_pool_backward", geo, x, out=g)
        _check_choices("max_pool_backward", geo, pairs, idx)
        ctx.pairs, ctx.idx, ctx.geo = pairs, idx, geo
        if pairs is not None:
            return _max_2x2_scatter(g, *pairs, _k2.flat(geo))
        return _scatter_max(g, idx, geo)

    @staticmethod
    def backward(ctx, gg):
        idx = _argmax_offsets(ctx.pairs, ctx.idx, ctx.geo)
        return MaxPoolDoubleBackward.apply(gg, idx, ctx.geo), None, None, None, None

    @staticmethod
    def jvp(ctx, tg, *_):  # linear in g; x only chose the maxima (its derivative is 0)
        return MaxPoolBackward.apply(tg, None, ctx.pairs, ctx.idx, ctx.geo) if tg is not None else None


class MaxPoolDoubleBackward(Function):
    """out = x at the window positions idx (the adjoint of the scatter);  dx = MaxPoolBackward(g, idx)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "max_pool_double_backward"

    @staticmethod
    def forward(ctx, x, idx, geo):
        check_geom("max_pool_double_backward", geo, x)
        _check_choices("max_pool_double_backward", geo, None, idx)
        ctx.idx, ctx.geo = idx, geo
        return _gather_max(x, idx, geo)

    @staticmethod
    def backward(ctx, g):
        return MaxPoolBackward.apply(g, None, None, ctx.idx, ctx.geo), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return MaxPoolDoubleBackward.apply(t, ctx.idx, ctx.geo)  # linear

# -- average pooling -------------------------------------------------------------------------------

def avg_divisor(geo, count_include_pad, divisor_override, dtype):
    """The (*out) divisor of each window, as PyTorch: the window clipped to the padded input
    (count_include_pad) or to the input itself (the user's padding is each dimension's leading one)."""
    if divisor_override:
        return np.asarray(divisor_override, dtype=dtype)
    div = np.ones((), dtype=np.int64)
    for n, k, s, (p, _), o in zip(geo.size, geo.kernel, geo.stride, geo.pads, geo.out):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        sz = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        div = np.multiply.outer(div, sz)
    return div.astype(dtype)


class AvgPool(Function):
    """out = sum over each window of xpad (zero padding) / divisor (one strided add per kernel offset);
    dx = AvgPoolBackward(g): g / divisor spread over each window"""
    batching = "fold_into_n"

    op_name = "avg_pool"

    def name(self):
        return f"AvgPool{len(self.geo.size)}DBackward0"

    @staticmethod
    def forward(ctx, x, geo, div):
        check_geom("avg_pool", geo, x)
        ctx.geo, ctx.div = geo, div
        xp = _pad(x, geo)
        offs = _offsets(geo)
        out = xp[_offset_slices(geo, next(offs))].copy(order="C")  # PyTorch's contiguous layout, whatever x's
        for k in offs:
            out += xp[_offset_slices(geo, k)]
        out /= div
        return out

    @staticmethod
    def backward(ctx, g):
        return AvgPoolBackward.apply(g, ctx.geo, ctx.div), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return AvgPool.apply(t, ctx.geo, ctx.div)  # linear: the op itself on the tangent

    @staticmethod
    def onnx(e, c):
        x, geo, div = e.args[:3]
        name = x.name
        if any(lo or hi for lo, hi in geo.pads):  # zero padding, then whole windows; the divisor is minigrad's
            pads = [0, 0] + [lo for lo, _ in geo.pads] + [0, 0] + [hi for _, hi in geo.pads]
            name = c.add("Pad", [name, c.ints(pads), c.scalar(0, x.dtype)], mode="constant")
        mean = c.add("AveragePool", [name], kernel_shape=list(geo.kernel), strides=list(geo.stride))
        total = c.add("Mul", [mean, c.scalar(_prod(geo.kernel), x.dtype)])
        return c.add("Div", [total, c.operand(div, x.dtype)], c.out(e))


class AvgPoolBackward(Function):
    """dx = g / divisor spread over each window (the adjoint of average pooling);  dg = AvgPool(gg)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "avg_pool_backward"

    @staticmethod
    def forward(ctx, g, geo, div):
        check_geom("avg_pool_backward", geo, out=g)
        ctx.geo, ctx.div = geo, div
        gd = g / div

        def part(k, out):
            out[...] = gd
        return _scatter_windows(part, geo, g.dtype, _channel_major(g))

    @staticmethod
    def backward(ctx, gg):
        return AvgPool.apply(gg, ctx.geo, ctx.div), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return AvgPoolBackward.apply(t, ctx.geo, ctx.div)  # linear


# -- adaptive max pooling, max unpooling ------------------------------------------------------------

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
