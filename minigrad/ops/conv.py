"""Convolution: im2col / col2im kernels, unfold / fold (Im2Col, Col2Im) and conv2d (Convolution).

conv2d's backward is itself an op (ConvolutionBackward): its forward is the NumPy gradient code (one
BLAS call per gradient), its backward gives the second derivative, so the same definition serves an
ordinary backward and create_graph.

With numba (minigrad.kernels), im2col and col2im are one compiled pass each (minigrad/kernels/conv.py,
the same values as the NumPy paths bit for bit), and the input gradient is W^T g then col2im; without
it, the NumPy paths here serve (the stride-1 input gradient as a flat-grid GEMM and shifted adds).
For short weight rows the bias rides in the GEMMs (_BIAS_IN_GEMM).
"""
import numbers
import threading
from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import kernels
from ..autograd.function import Function
from ..kernels import buffers

__all__ = []  # Function classes only: their public wrappers are nn.functional's


def _pair(v, name, op):
    """An int or a 1- or 2-sequence of ints as a pair of ints (PyTorch's _pair, with a clear error)."""
    tv = type(v)
    if tv is int:  # the common cases first, without the ABC checks
        return (v, v)
    if tv is tuple and len(v) == 2 and type(v[0]) is int and type(v[1]) is int:
        return v
    if isinstance(v, numbers.Integral):
        return (int(v), int(v))
    v = tuple(v)
    if len(v) == 1:
        return (int(v[0]), int(v[0]))
    if len(v) != 2 or not all(isinstance(e, numbers.Integral) for e in v):
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, got {v!r}")
    return (int(v[0]), int(v[1]))


def _same_padding(kernel, dilation):
    """padding='same' per spatial dimension as (before, after): PyTorch puts the odd extra one after."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def _conv_pads(op, padding, kernel, dilation, stride):
    """conv2d's padding argument (int, pair, 'valid' or 'same') as (top, bottom, left, right)."""
    if type(padding) is int:
        return (padding, padding, padding, padding)
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding == "same":
            if stride != (1, 1):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
            (pt, pb), (pl, pr) = _same_padding(kernel, dilation)
            return (pt, pb, pl, pr)
        raise ValueError(f"{op}: padding string must be 'same' or 'valid', got {padding!r}")
    ph, pw = _pair(padding, "padding", op)
    return (ph, ph, pw, pw)


# -- geometry and scratch buffers ----------------------------------------------------------------

# N, C, H, W: input; kh, kw: kernel; sh, sw: stride; dh, dw: dilation; pt, pb, pl, pr: padding
# (top, bottom, left, right); OH, OW: output size.
_Geom = namedtuple("_Geom", "N C H W kh kw sh sw dh dw pt pb pl pr OH OW")


_GEOMS = {}  # memo of _make_geom's results (valid geometries only: an invalid one raises every time)


def _make_geom(op, shape, kernel, stride, dilation, pads, ceil_mode=False):
    """The _Geom of a window op (conv2d, pooling, unfold/fold) on an input of shape (N, C, H, W);
    op names the caller in errors. Memoised: a training loop asks for the same few every step."""
    key = (tuple(shape), tuple(kernel), tuple(stride), tuple(dilation), tuple(pads), bool(ceil_mode))
    geo = _GEOMS.get(key)
    if geo is None:
        geo = _new_geom(op, *key)
        if len(_GEOMS) >= 1024:
            _GEOMS.clear()
        _GEOMS[key] = geo
    return geo


def _new_geom(op, shape, kernel, stride, dilation, pads, ceil_mode):
    N, C, H, W = shape
    kh, kw = kernel
    sh, sw = stride
    dh, dw = dilation
    pt, pb, pl, pr = pads
    if min(kh, kw, sh, sw, dh, dw) <= 0:
        raise ValueError(f"{op}: kernel size, stride and dilation must be positive, got kernel "
                         f"{kernel}, stride {stride}, dilation {dilation}")
    if min(pads) < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {pads}")
    span_h, span_w = H + pt + pb - dh * (kh - 1) - 1, W + pl + pr - dw * (kw - 1) - 1
    if ceil_mode:
        OH, OW = -(-span_h // sh) + 1, -(-span_w // sw) + 1
        # the last window must start inside the input or the left padding
        if (OH - 1) * sh >= H + pt:
            OH -= 1
        if (OW - 1) * sw >= W + pl:
            OW -= 1
        pb = max(pb, (OH - 1) * sh + dh * (kh - 1) + 1 - H - pt)
        pr = max(pr, (OW - 1) * sw + dw * (kw - 1) + 1 - W - pl)
    else:
        OH, OW = span_h // sh + 1, span_w // sw + 1
    if span_h < 0 or span_w < 0 or OH <= 0 or OW <= 0:
        raise ValueError(f"{op}: input of spatial size ({H}, {W}) with padding {pads} is smaller than the "
                         f"(dilated) kernel ({dh * (kh - 1) + 1}, {dw * (kw - 1) + 1})")
    return _Geom(N, C, H, W, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, OH, OW)


_scratch = threading.local()
_SCRATCH_SLOTS = 8


def _workspace(key, make):
    """A scratch array for key (shape, dtype and purpose), made by make() on first use and then reused
    by later calls in the same thread. Only for buffers that no result, saved tensor or caller keeps:
    the next call with the same key overwrites it. At most _SCRATCH_SLOTS are kept (oldest dropped)."""
    cache = getattr(_scratch, "bufs", None)
    if cache is None:
        cache = _scratch.bufs = {}
    buf = cache.pop(key, None)
    if buf is None:
        buf = make()
        while len(cache) >= _SCRATCH_SLOTS:
            cache.pop(next(iter(cache)))
    cache[key] = buf  # most recently used last
    return buf


def _channel_major(a):
    """True when a (N, C, H, W) array is laid out C-major (as conv2d's output is)."""
    return a.ndim == 4 and a.shape[0] > 1 and a.transpose(1, 0, 2, 3).flags.c_contiguous


def _mem_order(a):
    """(a as a C-contiguous (A, B, H, W) array in memory order, whether that is (C, N) i.e. channel-major)."""
    if _channel_major(a):
        return a.transpose(1, 0, 2, 3), True
    return np.ascontiguousarray(a), False


def _numba_for(a):
    """True when the numba conv kernels (minigrad/kernels/conv.py) serve an array of a's dtype."""
    return a.dtype.kind == "f" and a.dtype.itemsize >= 4 and kernels.available()


def _alloc(shape, dtype, channel_major, zeros=False):
    """An (N, C, ...) array, laid out C-major when asked (then a transposed view); recycled
    (kernels/buffers.py)."""
    if not channel_major:
        a = buffers.empty(shape, dtype)
    else:
        a = buffers.empty((shape[1], shape[0]) + tuple(shape[2:]), dtype).swapaxes(0, 1)
    if zeros:
        a.fill(0)
    return a


def _padded(x, geo, value=0):
    """x (N, C, H, W) padded per geo (a view of x when there is no padding)."""
    if not (geo.pt or geo.pb or geo.pl or geo.pr):
        return x
    N, C, H, W = x.shape
    xp = _alloc((N, C, H + geo.pt + geo.pb, W + geo.pl + geo.pr), x.dtype, _channel_major(x))
    xp.fill(value)
    xp[:, :, geo.pt:geo.pt + H, geo.pl:geo.pl + W] = x
    return xp


def _window(xp, geo, i, j):
    """The (N, C, OH, OW) strided view of xp at kernel offset (i, j)."""
    h0, w0 = i * geo.dh, j * geo.dw
    return xp[:, :, h0:h0 + geo.sh * (geo.OH - 1) + 1:geo.sh, w0:w0 + geo.sw * (geo.OW - 1) + 1:geo.sw]


# -- im2col / col2im -------------------------------------------------------------------------------

def _im2col(x, geo, ones_row=False):
    """cols[(c, i, j), (n, oh, ow)] = xpad[n, c, oh*sh + i*dh, ow*sw + j*dw]: one strided copy (or,
    with numba, minigrad/kernels/conv.py's one pass, padding folded in). ones_row: one more row of
    ones at the bottom (conv2d's bias and its gradient ride in the GEMMs: _BIAS_IN_GEMM)."""
    rows, L = geo.C * geo.kh * geo.kw, geo.N * geo.OH * geo.OW
    buf = buffers.empty((rows + 1 if ones_row else rows, L), x.dtype)
    cols = buf[:rows] if ones_row else buf
    if ones_row:
        buf[rows] = 1
    if _numba_for(x):
        xm, cm = _mem_order(x)
        kernels.load("conv").im2col(xm, cm, cols, geo.kh, geo.kw, geo.sh, geo.sw, geo.dh, geo.dw, geo.pt,
                                    geo.pl, geo.OH, geo.OW)
        return buf
    xp = _padded(x, geo)
    s0, s1, s2, s3 = xp.strides
    view = as_strided(xp, (geo.C, geo.kh, geo.kw, geo.N, geo.OH, geo.OW),
                      (s1, geo.dh * s2, geo.dw * s3, s0, geo.sh * s2, geo.sw * s3), writeable=False)
    np.copyto(cols.reshape(view.shape), view)
    return buf


def _col2im(cols, geo):
    """The adjoint of _im2col: add each kernel offset's slice of cols back into its input positions
    (with numba, minigrad/kernels/conv.py's one pass: the same sums in the same order)."""
    N, C, H, W = geo.N, geo.C, geo.H, geo.W
    if _numba_for(cols) and cols.flags.c_contiguous:
        dx = buffers.empty((C, N, H, W), cols.dtype)
        kernels.load("conv").col2im(cols, dx, geo.kh, geo.kw, geo.sh, geo.sw, geo.dh, geo.dw, geo.pt, geo.pl,
                                    geo.OH, geo.OW)
        return dx.transpose(1, 0, 2, 3)
    Hp, Wp = H + geo.pt + geo.pb, W + geo.pl + geo.pr
    c6 = cols.reshape(C, geo.kh, geo.kw, N, geo.OH, geo.OW)
    # accumulate in (C, N, ...) order, matching cols' layout, and hand back a transposed view
    dxp = buffers.empty((C, N, Hp, Wp), cols.dtype)
    dxp.fill(0)
    for i in range(geo.kh):
        h0 = i * geo.dh
        hs = slice(h0, h0 + geo.sh * (geo.OH - 1) + 1, geo.sh)
        for j in range(geo.kw):
            w0 = j * geo.dw
            dxp[:, :, hs, w0:w0 + geo.sw * (geo.OW - 1) + 1:geo.sw] += c6[:, i, j]
    return dxp[:, :, geo.pt:geo.pt + H, geo.pl:geo.pl + W].transpose(1, 0, 2, 3)


def _conv_dx_flat(g, w3, geo):
    """conv2d's input gradient for stride 1, with every col2im add a long contiguous 1-D add.

    g (N, O, OH, OW) is embedded, zero-filled, in the padded (Hp, Wp) grid, so that output position
    p = oh * Wp + ow of image n reads padded input p + off(i, j), off = i*dh*Wp + j*dw, for every tap:
    the columns dcols = W^T g_grid (one GEMM, on Hp*Wp positions instead of OH*OW) are then added
    back with one shifted 1-D add per tap over the whole (N*Hp*Wp) flat grid. Garbage grid positions
    carry zero gradient, so the adds that spill across rows or images add zeros."""
    N, C, H, W = geo.N, geo.C, geo.H, geo.W
    G, K, Og = w3.shape
    O = G * Og
    Hp, Wp = H + geo.pt + geo.pb, W + geo.pl + geo.pr
    T = N * Hp * Wp
    # both buffers are scratch (nothing returned or saved aliases them): reuse them per shape, which
    # spares the page faults of fresh multi-MB allocations and, for grid, the zero fill (only its
    # valid (OH, OW) corner is ever written, so the rest stays zero)
    # (the key holds the valid corner's size too: the zeros outside it must never have been written)
    grid = _workspace(("conv_dx_grid", O, N, Hp, Wp, geo.OH, geo.OW, g.dtype),
                      lambda: np.zeros((O, N, Hp, Wp), g.dtype))
    grid[:, :, :geo.OH, :geo.OW] = g.transpose(1, 0, 2, 3)
    taps = geo.kh * geo.kw
    offs = [(k // geo.kw) * geo.dh * Wp + (k % geo.kw) * geo.dw for k in range(taps)]
    dxp = buffers.empty((C, T), g.dtype)
    if G == 1:
        # a valid position's taps land inside its own image's grid, so the work splits by images:
        # chunks whose columns (~1 MiB) stay in cache between the GEMM and the adds (measured 1.5 ->
        # 1.0 ms at the bench CNN's 8->16 conv); a contiguous 2-D weight takes BLAS's fast path
        S = Hp * Wp
        nb = max(1, min(N, (1 << 20) // (G * K * S * g.itemsize)))
        wc = np.ascontiguousarray(w3[0])
        gf = grid.reshape(Og, T)
        buf = _workspace(("conv_dx_cols", K, nb * S, g.dtype), lambda: np.empty((K, nb * S), g.dtype))
        for n0 in range(0, N, nb):
            t0, t1 = n0 * S, min(N, n0 + nb) * S
            L = t1 - t0
            d = buf[:, :L]
            np.matmul(wc, gf[:, t0:t1], out=d)
            _tap_adds(dxp[:, t0:t1], d.reshape(C, taps, L), offs)
    else:
        dcols = _workspace(("conv_dx_cols", G, K, T, g.dtype), lambda: np.empty((G, K, T), g.dtype))
        np.matmul(w3, grid.reshape(G, Og, T), out=dcols)
        _tap_adds(dxp, dcols.reshape(C, taps, T), offs)
    dxp = dxp.reshape(C, N, Hp, Wp)[:, :, geo.pt:geo.pt + H, geo.pl:geo.pl + W]
    return dxp.transpose(1, 0, 2, 3)


def _tap_adds(out, d3, offs):
    """out[:, p + offs[k]] += d3[:, k, p] for every tap k: the tap at offset 0 reaches every
    position, so it is assigned (no zero fill) and the others are added."""
    L = out.shape[1]
    out[...] = d3[:, 0]
    for k in range(1, len(offs)):
        off = offs[k]
        out[:, off:] += d3[:, k, :L - off]


class Im2Col(Function):
    """cols = im2col(x): (N, C, H, W) -> (C*kh*kw, N*OH*OW);  dx = col2im(g)"""

    op_name = "unfold"

    @staticmethod
    def forward(ctx, x, geo):
        ctx.geo = geo
        return _im2col(x, geo)

    @staticmethod
    def backward(ctx, g):
        return Col2Im.apply(g, ctx.geo), None


class Col2Im(Function):
    """x = col2im(cols): (C*kh*kw, N*OH*OW) -> (N, C, H, W), overlaps summed;  dcols = im2col(g)"""

    op_name = "fold"

    @staticmethod
    def forward(ctx, cols, geo):
        ctx.geo = geo
        return _col2im(cols, geo)

    @staticmethod
    def backward(ctx, g):
        return Im2Col.apply(g, ctx.geo), None


# -- conv2d ----------------------------------------------------------------------------------------

# conv2d puts its bias into the GEMM (a row of ones under the columns) when the weight's rows are
# shorter than this: there the separate bias pass and bias-gradient sum cost more than one more
# GEMM row (measured: the 1->32 and 8->16 convs, batch 1 and 64); longer rows keep the plain path
_BIAS_IN_GEMM = 128


class Convolution(Function):
    """out[n, o] = b[o] + W2[o] @ cols[:, n] with cols = im2col(x);
    (dx, dw, db) = ConvolutionBackward(g, x, w)"""

    op_name = "conv2d"

    @staticmethod
    def forward(ctx, x, w, b, geo, groups):
        O = w.shape[0]
        K = w[0].size
        L = geo.N * geo.OH * geo.OW
        dtype = w.dtype if w.dtype == x.dtype else np.result_type(w.dtype, x.dtype)
        out = buffers.empty((O, L), dtype)
        if b is not None and groups == 1 and K < _BIAS_IN_GEMM and b.dtype == dtype == x.dtype:
            # the bias as one more weight column against a row of ones: no pass over the output
            # (and the backward's weight GEMM gives the bias gradient as its last column)
            cols = _im2col(x, geo, ones_row=True)
            wb = np.empty((O, K + 1), dtype)
            wb[:, :K] = w.reshape(O, K)
            wb[:, K] = b
            np.matmul(wb, cols, out=out)
        else:
            cols = _im2col(x, geo)
            if groups == 1:
                np.matmul(w.reshape(O, -1), cols, out=out)
            else:
                np.matmul(w.reshape(groups, O // groups, -1), cols.reshape(groups, -1, L),
                          out=out.reshape(groups, O // groups, L))
            if b is not None:
                out += b[:, None]  # on the contiguous (O, N*L) buffer, before the transposed view
        need = ctx.needs_input_grad
        ctx.cols = cols if need and need[1] else None  # the weight gradient reuses the columns
        ctx.geo, ctx.groups = geo, groups
        ctx.save_for_backward(x, w)
        return out.reshape(O, geo.N, geo.OH, geo.OW).transpose(1, 0, 2, 3)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = tuple(ctx.needs_input_grad[:3])
        cols, ctx.cols = ctx.cols, None  # freed as saved tensors are (a second backward makes them again)
        grads = ConvolutionBackward.apply(g, x, w, cols, ctx.geo, ctx.groups, need)
        return _spread(grads, need) + (None, None)


def _spread(grads, need):
    """The gradients a backward op returned (only those in need) as one entry per input, None elsewhere."""
    it = iter(grads)
    return tuple(next(it) if n else None for n in need)


class ConvolutionBackward(Function):
    """(dx, dw, db) of conv2d, each only where need says: dx = col2im(W2^T @ g2), dw = g2 @ cols^T,
    db = sum(g2), with g2 = g in (O, N*OH*OW) layout (one BLAS call each);
    second derivative: it is bilinear in (g, x) and (g, w), so dg = conv(gdx, w) + conv(x, gdw) + gdb,
    dx = dx-rule(g, gdw), dw = dw-rule(g, gdx)"""

    op_name = "conv2d_backward"

    @staticmethod
    def forward(ctx, g, x, w, cols, geo, G, need):
        ctx.geo, ctx.G, ctx.need = geo, G, need
        ctx.save_for_backward(g, x, w)
        nx, nw, nb = need
        O = w.shape[0] if w is not None else g.shape[1]
        L = geo.N * geo.OH * geo.OW
        g2 = g.transpose(1, 0, 2, 3).reshape(O, L)  # free when g kept the forward's layout
        out = []
        if nx:
            K = w[0].size
            w3 = w.reshape(G, O // G, K).transpose(0, 2, 1)  # (G, K, O/G)
            if _numba_for(g) and g.dtype == w.dtype:
                # W^T g into scratch columns, then col2im's one numba pass (faster than the flat
                # grid below at every size measured, batch 1 to 64)
                dcols = _workspace(("conv_dx_dcols", G, K, L, g.dtype), lambda: np.empty((G, K, L), g.dtype))
                np.matmul(w3, g2.reshape(G, O // G, L), out=dcols)
                out.append(_col2im(dcols.reshape(G * K, L), geo))
            elif geo.sh == geo.sw == 1:
                out.append(_conv_dx_flat(g, w3, geo))
            else:
                out.append(_col2im(np.matmul(w3, g2.reshape(G, O // G, L)).reshape(G * K, L), geo))
        db = None
        if nw:
            if cols is None:
                cols = _im2col(x, geo)
            Kc = geo.C // G * geo.kh * geo.kw
            wshape = (O, Kc // (geo.kh * geo.kw), geo.kh, geo.kw)
            if G == 1:
                # the result is an array of the weight's shape that owns its memory (not a reshaped
                # view), so the engine takes it as w.grad without another copy
                dw_out = np.empty(wshape, np.result_type(g2, cols))
                dw2 = dw_out.reshape(O, Kc)
                if L <= 4096 and cols.shape[0] == Kc:
                    # short inner dimension (batch 1): g2 @ cols^T gives (O, K) directly
                    np.matmul(g2, cols.T, out=dw2)
                else:
                    # short rows with forward's row of ones (its column is the bias gradient), or
                    # cols @ g2^T (long inner dimension second: the faster BLAS orientation here)
                    dw = np.matmul(g2, cols.T) if L <= 4096 else np.matmul(cols, g2.T).T
                    if cols.shape[0] == Kc + 1:
                        dw, db = dw[:, :Kc], dw[:, Kc]
                    np.copyto(dw2, dw)
                out.append(dw_out)
            else:
                g3 = g2.reshape(G, O // G, L)
                out.append(np.matmul(g3, cols.reshape(G, Kc, L).transpose(0, 2, 1)).reshape(wshape))
        if nb:
            out.append(np.ascontiguousarray(db) if db is not None else g2.sum(axis=1))
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        g, x, w = ctx.saved_tensors
        gdx, gdw, gdb = _spread(grads, ctx.need)
        geo, G = ctx.geo, ctx.G
        ng, nx, nw = ctx.needs_input_grad[:3]
        dg = dx = dw = None
        if ng:
            terms = []
            if gdx is not None:
                terms.append(Convolution.apply(gdx, w, None, geo, G))
            if gdw is not None:
                terms.append(Convolution.apply(x, gdw, None, geo, G))
            if gdb is not None:
                terms.append(gdb.reshape(1, -1, 1, 1).expand(*g.shape))
            for t in terms:
                dg = t if dg is None else dg + t
        if nx and gdw is not None:
            dx, = ConvolutionBackward.apply(g, None, gdw, None, geo, G, (True, False, False))
        if nw and gdx is not None:
            dw, = ConvolutionBackward.apply(g, gdx, None, None, geo, G, (False, True, False))
        return dg, dx, dw, None, None, None, None
