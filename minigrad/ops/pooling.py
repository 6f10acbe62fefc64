"""Pooling: max_pool2d (MaxPool2DWithIndices) and avg_pool2d (AvgPool2D), on conv's window geometry.

max_pool2d's backward is itself an op (MaxPool2DWithIndicesBackward: scatter the gradient to each
window's maximum), whose own backward gathers at the same positions (MaxPoolDoubleBackward).
"""
import numpy as np

from .. import kernels
from ..autograd.function import Function, NoRule
from .._memory_format import _c_order
from ..kernels import buffers, select
from .conv import _alloc, _channel_major, _mem_order, _padded, _window, check_geom

__all__ = []  # Function classes only: their public wrappers are nn.functional's


def _tiles(geo):
    """True when the windows tile the padded input exactly (kernel == stride, no dilation)."""
    return (geo.kh == geo.sh and geo.kw == geo.sw and geo.dh == 1 and geo.dw == 1
            and geo.H + geo.pt + geo.pb == geo.OH * geo.kh and geo.W + geo.pl + geo.pr == geo.OW * geo.kw)


def _scatter_windows(parts, geo, dtype, channel_major=False):
    """dx with dx[window k] += parts(k) for each kernel offset k = (i, j), cropped to the input.

    parts(k, out) writes the (N, C, OH, OW) values for offset k into out. channel_major lays dx out
    C-major, matching a gradient that flows back to conv2d (whose backward then needs no copy)."""
    N, C = geo.N, geo.C
    if _tiles(geo):
        # disjoint windows covering everything: write each offset's values straight into a
        # (N, C, OH, kh, OW, kw) buffer, no zero fill and no accumulation
        dx = _alloc((N, C, geo.OH, geo.kh, geo.OW, geo.kw), dtype, channel_major)
        for i in range(geo.kh):
            for j in range(geo.kw):
                parts(i * geo.kw + j, dx[:, :, :, i, :, j])
        dx = dx.reshape(N, C, geo.OH * geo.kh, geo.OW * geo.kw) if not channel_major else \
            dx.swapaxes(0, 1).reshape(C, N, geo.OH * geo.kh, geo.OW * geo.kw).swapaxes(0, 1)
    else:
        dx = _alloc((N, C, geo.H + geo.pt + geo.pb, geo.W + geo.pl + geo.pr), dtype, channel_major, True)
        tmp = np.empty((N, C, geo.OH, geo.OW), dtype=dtype)
        for i in range(geo.kh):
            for j in range(geo.kw):
                parts(i * geo.kw + j, tmp)
                _window(dx, geo, i, j)[...] += tmp
    if geo.pt or geo.pb or geo.pl or geo.pr:
        dx = dx[:, :, geo.pt:geo.pt + geo.H, geo.pl:geo.pl + geo.W]
    return dx


def _gather_windows(x, idx, geo):
    """out[n, c, oh, ow] = xpad[window idx[n, c, oh, ow]]."""
    xp = _padded(x, geo)
    out = np.zeros((geo.N, geo.C, geo.OH, geo.OW), dtype=x.dtype)
    for i in range(geo.kh):
        for j in range(geo.kw):
            out += _window(xp, geo, i, j) * (idx == i * geo.kw + j)
    return out


# -- max pooling -----------------------------------------------------------------------------------

def _is_2x2_tiling(geo):
    """True for 2x2 windows with stride 2 tiling the unpadded input exactly (the common CNN pooling)."""
    return (geo.kh == geo.kw == geo.sh == geo.sw == 2 and geo.dh == geo.dw == 1
            and not (geo.pt or geo.pb or geo.pl or geo.pr) and geo.H == 2 * geo.OH and geo.W == 2 * geo.OW)


def _max_2x2(x, geo):
    """2x2 / stride-2 max pooling as two pairwise maxima over flat memory-order views: first across each
    horizontal pair (a 1-D stride-2 loop), then across the two rows of each window, so no padded copy and
    long inner loops (or, with numba, minigrad/kernels/pool.py in one pass). ih / iv record "the second of the pair is strictly greater", which makes the first
    maximum in row-major window order win ties, as PyTorch (and the general path).
    Returns (out, (ih, iv, channel_major))."""
    xm, cm = _mem_order(x)
    if kernels.available() and select.choose(  # numba: the same three results in one pass over x
            "max_pool2d_2x2", [list(xm.shape), x.dtype.name, cm],
            {"numba": lambda: kernels.load("pool").forward(xm, geo.OH, geo.OW),
             "numpy": lambda: _max_2x2_numpy(xm, geo, x.dtype)}, "numba") == "numba":
        out, ih, iv = kernels.load("pool").forward(xm, geo.OH, geo.OW)
    else:
        out, ih, iv = _max_2x2_numpy(xm, geo, x.dtype)
    return (out.transpose(1, 0, 2, 3) if cm else out), (ih, iv, cm)


def _max_2x2_numpy(xm, geo, dtype):
    """_max_2x2's NumPy path on the memory-order array: (out, ih, iv), as the numba kernel's."""
    A, B = xm.shape[:2]
    p = xm.reshape(-1, 2)
    a, b = p[:, 0], p[:, 1]
    hm = np.maximum(a, b)                    # (A*B*H*OW,)
    ih = np.greater(b, a, out=buffers.empty(hm.shape, np.bool_))
    q = hm.reshape(-1, 2, geo.OW)            # (A*B*OH, top/bottom row, OW)
    t, u = q[:, 0], q[:, 1]
    out = np.maximum(t, u, out=buffers.empty((A, B, geo.OH, geo.OW), dtype).reshape(t.shape))
    iv = np.greater(u, t, out=buffers.empty(t.shape, np.bool_))
    return out.reshape(A, B, geo.OH, geo.OW), ih, iv


def _max_2x2_idx(ih, iv, cm, geo):
    """The window offsets (N, C, OH, OW) int8 k = 2 * row + col of the 2x2 path's maxima."""
    ih3 = ih.reshape(-1, 2, geo.OW)
    idx = (2 * iv + np.where(iv, ih3[:, 1], ih3[:, 0])).astype(np.int8)
    idx = idx.reshape(((geo.C, geo.N) if cm else (geo.N, geo.C)) + (geo.OH, geo.OW))
    return np.ascontiguousarray(idx.transpose(1, 0, 2, 3)) if cm else idx


def _max_2x2_scatter(g, ih, iv, cm, geo):
    """dx for the 2x2 path: g routed down the two pairwise choices, in x's memory order (so a
    channel-major conv output gets a channel-major gradient, which conv2d's backward uses as is)."""
    gm = np.ascontiguousarray(g.transpose(1, 0, 2, 3) if cm else g).reshape(-1, geo.OW)
    if kernels.available():  # numba: the same products in one pass
        dx = kernels.load("pool").backward(gm, ih, iv.reshape(gm.shape))
    else:
        dx = _scatter_pairs(gm, ih, iv, geo)
    if cm:
        return dx.reshape(geo.C, geo.N, geo.H, geo.W).transpose(1, 0, 2, 3)
    return dx.reshape(geo.N, geo.C, geo.H, geo.W)


def _scatter_pairs(gm, ih, iv, geo):
    """The NumPy path of _max_2x2_scatter: dx in memory order, flat pairs (rows * W / 2, 2)."""
    dh = buffers.empty((gm.shape[0], 2, geo.OW), gm.dtype)
    np.multiply(gm, iv, out=dh[:, 1])
    np.multiply(gm, ~iv, out=dh[:, 0])
    dh = dh.reshape(-1)
    dx = buffers.empty((dh.shape[0], 2), gm.dtype)
    np.multiply(dh, ih, out=dx[:, 1])
    np.multiply(dh, ~ih, out=dx[:, 0])
    return dx


def _max_windows(x, geo):
    """Max pooling of x (N, C, H, W): (out, pairs, idx), where either pairs holds the 2x2 path's
    choices (idx None, built on demand by _argmax_offsets) or idx the window offset of each maximum."""
    if _is_2x2_tiling(geo):
        out, pairs = _max_2x2(x, geo)
        return out, pairs, None
    # pad with the dtype's lowest value: -inf for floats, iinfo.min for integers (-inf overflowed)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _padded(x, geo, low)
    best = _window(xp, geo, 0, 0).copy(order="K")  # keeps a C-major (conv output) layout
    K = geo.kh * geo.kw
    idx = np.zeros(best.shape, dtype=np.int8 if K < 128 else np.int32)
    for k in range(1, K):
        v = _window(xp, geo, *divmod(k, geo.kw))
        m = v > best  # strict: an equal later value does not take the gradient (as PyTorch)
        np.maximum(best, v, out=best)
        # branch-free idx[m] = k: k exceeds every index stored so far
        np.maximum(idx, np.multiply(m, idx.dtype.type(k), dtype=idx.dtype), out=idx)
    if geo.pt or geo.pl:
        # a window whose maximum is the padding value (its elements all -inf, or the integer minimum)
        # kept offset 0, in the padding: its index pointed outside the input and its gradient was
        # lost; PyTorch's scan starts at the window's first element inside the input and keeps it
        none = best == low
        if none.any():
            def first(n_out, s, p, d):
                start = np.arange(n_out) * s - p
                return np.where(start < 0, (-start + d - 1) // d, 0)
            k0 = first(geo.OH, geo.sh, geo.pt, geo.dh)[:, None] * geo.kw + first(geo.OW, geo.sw, geo.pl, geo.dw)
            np.copyto(idx, np.broadcast_to(k0, idx.shape).astype(idx.dtype), where=none)
    return best, None, idx


def _check_choices(op, geo, pairs, idx):
    """The forward's record of each window's maximum must fit the geometry (the 2x2 kernels index by it)."""
    if pairs is not None:
        ok = type(pairs) is tuple and len(pairs) == 3 and _is_2x2_tiling(geo) and all(
            isinstance(a, np.ndarray) and a.dtype == np.bool_ for a in pairs[:2])
        R = geo.N * geo.C * geo.OH
        if not ok or pairs[0].size != R * 2 * geo.OW or pairs[1].size != R * geo.OW:
            raise ValueError(f"{op}: the 2x2 pooling choices do not fit the window geometry {tuple(geo)}")
    if idx is not None and (not isinstance(idx, np.ndarray) or idx.dtype.kind not in "iu"
                            or idx.shape != (geo.N, geo.C, geo.OH, geo.OW)):
        raise ValueError(f"{op}: window offsets of shape {getattr(idx, 'shape', None)} do not fit the window "
                         f"geometry (expected {(geo.N, geo.C, geo.OH, geo.OW)})")


def _argmax_offsets(pairs, idx, geo):
    """The window offset of each maximum, from whichever form _max_windows gave."""
    return idx if idx is not None else _max_2x2_idx(*pairs, geo)


class MaxPool2DWithIndices(Function):
    """out = max over each window (the first maximum wins ties);
    dx = MaxPool2DWithIndicesBackward(g): g scattered to each window's maximum"""
    batching = "fold_into_n"

    op_name = "max_pool2d"

    @staticmethod
    def _kernel_keys(args):
        """The kernel-selection keys this equation's arguments (Vars) may have used (mg.jit.explain)."""
        x, _geo = args[:2]
        N, C, H, W = x.shape
        dt = np.dtype(x.dtype).name
        return [("max_pool2d_2x2", [[N, C, H, W], dt, False]), ("max_pool2d_2x2", [[C, N, H, W], dt, True])]

    @staticmethod
    def forward(ctx, x, geo):
        check_geom("max_pool2d", geo, x)
        out, ctx.pairs, ctx.idx = _max_windows(x, geo)
        ctx.geo = geo
        ctx.save_for_backward(x)  # as PyTorch's node: the backward op takes it (its gradient there is 0)
        return _c_order(out)  # PyTorch's contiguous layout (no copy for a C-order input)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return MaxPool2DWithIndicesBackward.apply(g, x, ctx.pairs, ctx.idx, ctx.geo), None

    @staticmethod
    def jvp(ctx, t, _geo):  # the tangent at each window's maximum
        return MaxPoolDoubleBackward.apply(t, _argmax_offsets(ctx.pairs, ctx.idx, ctx.geo), ctx.geo)

    @staticmethod
    def onnx(e, c):
        geo = e.args[1]
        # geo's bottom/right padding already covers ceil_mode's extra window, so the explicit pads with
        # ceil_mode=0 give the same windows; padding counts as -inf, as PyTorch
        return c.add("MaxPool", [c.x(e)], c.out(e), kernel_shape=[geo.kh, geo.kw], strides=[geo.sh, geo.sw],
                     dilations=[geo.dh, geo.dw], pads=[geo.pt, geo.pl, geo.pb, geo.pr])


class MaxPool2DWithIndicesBackward(Function):
    """dx = g scattered to the window maxima of x (pairs: the 2x2 path's choices, else the offsets idx);
    dg = MaxPoolDoubleBackward(gg): gg gathered at the same positions; 0 for x (piecewise linear)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "max_pool2d_backward"

    @staticmethod
    def forward(ctx, g, x, pairs, idx, geo):
        check_geom("max_pool2d_backward", geo, x, out=g)
        _check_choices("max_pool2d_backward", geo, pairs, idx)
        ctx.pairs, ctx.idx, ctx.geo = pairs, idx, geo
        if pairs is not None:
            return _max_2x2_scatter(g, *pairs, geo)
        return _scatter_windows(lambda k, out: np.multiply(g, idx == k, out=out), geo, g.dtype,
                                _channel_major(g))

    @staticmethod
    def backward(ctx, gg):
        idx = _argmax_offsets(ctx.pairs, ctx.idx, ctx.geo)
        return MaxPoolDoubleBackward.apply(gg, idx, ctx.geo), None, None, None, None

    @staticmethod
    def jvp(ctx, tg, *_):  # linear in g; x only chose the maxima (its derivative is 0)
        return MaxPool2DWithIndicesBackward.apply(tg, None, ctx.pairs, ctx.idx, ctx.geo) if tg is not None else None


class MaxPoolDoubleBackward(Function):
    """out = x at the window positions idx (the adjoint of the scatter);  dx = scatter(g, idx)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "max_pool_double_backward"

    @staticmethod
    def forward(ctx, x, idx, geo):
        check_geom("max_pool_double_backward", geo, x)
        _check_choices("max_pool_double_backward", geo, None, idx)
        ctx.idx, ctx.geo = idx, geo
        return _gather_windows(x, idx, geo)

    @staticmethod
    def backward(ctx, g):
        return MaxPool2DWithIndicesBackward.apply(g, None, None, ctx.idx, ctx.geo), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return MaxPoolDoubleBackward.apply(t, ctx.idx, ctx.geo)  # linear


# -- average pooling -------------------------------------------------------------------------------

def _avg_divisor(geo, count_include_pad, divisor_override, dtype):
    """The (OH, OW) divisor of each window, as PyTorch: the window clipped to the padded input
    (count_include_pad) or to the input itself."""
    if divisor_override:
        return np.asarray(divisor_override, dtype=dtype)

    def sizes(O, s, k, p, n):
        start = np.arange(O) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            return end - start
        return np.minimum(end, n) - np.maximum(start, 0)
    dh = sizes(geo.OH, geo.sh, geo.kh, geo.pt, geo.H)
    dw = sizes(geo.OW, geo.sw, geo.kw, geo.pl, geo.W)
    return (dh[:, None] * dw[None, :]).astype(dtype)


class AvgPool2D(Function):
    """out = sum over each window of xpad / divisor;  dx = AvgPool2DBackward(g): g / divisor spread
    over each window"""
    batching = "fold_into_n"

    op_name = "avg_pool2d"

    @staticmethod
    def forward(ctx, x, geo, div):
        check_geom("avg_pool2d", geo, x)
        ctx.geo, ctx.div = geo, div
        xp = _padded(x, geo)
        out = _window(xp, geo, 0, 0).copy(order="C")  # PyTorch's contiguous layout, whatever x's
        for k in range(1, geo.kh * geo.kw):
            out += _window(xp, geo, *divmod(k, geo.kw))
        out /= div
        return out

    @staticmethod
    def backward(ctx, g):
        return AvgPool2DBackward.apply(g, ctx.geo, ctx.div), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return AvgPool2D.apply(t, ctx.geo, ctx.div)  # linear

    @staticmethod
    def onnx(e, c):
        x, geo, div = e.args[:3]
        name = x.name
        if geo.pt or geo.pb or geo.pl or geo.pr:  # zero padding, then whole windows; the divisor is minigrad's
            name = c.add("Pad", [name, c.ints([0, 0, geo.pt, geo.pl, 0, 0, geo.pb, geo.pr]), c.scalar(0, x.dtype)],
                         mode="constant")
        mean = c.add("AveragePool", [name], kernel_shape=[geo.kh, geo.kw], strides=[geo.sh, geo.sw])
        total = c.add("Mul", [mean, c.scalar(geo.kh * geo.kw, x.dtype)])
        return c.add("Div", [total, c.operand(div, x.dtype)], c.out(e))


class AvgPool2DBackward(Function):
    """dx = g / divisor spread over each window (the adjoint of avg pooling);  dg = avg_pool(gg)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "avg_pool2d_backward"

    @staticmethod
    def forward(ctx, g, geo, div):
        check_geom("avg_pool2d_backward", geo, out=g)
        ctx.geo, ctx.div = geo, div
        gd = g / div

        def part(k, out):
            out[...] = gd
        return _scatter_windows(part, geo, g.dtype, _channel_major(g))

    @staticmethod
    def backward(ctx, gg):
        return AvgPool2D.apply(gg, ctx.geo, ctx.div), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return AvgPool2DBackward.apply(t, ctx.geo, ctx.div)  # linear
