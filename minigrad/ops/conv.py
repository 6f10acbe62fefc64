"""Convolution, one family for 1-, 2- and 3-d windows: the window geometry, im2col / col2im, unfold /
fold (Im2Col, Col2Im), convolution (Convolution, with its backward ConvolutionBackward) and transposed
convolution (ConvTranspose).

Three bilinear ops close under differentiation, so any derivative order stays in the family:
Convolution(x, w), ConvolutionBackward(g, x, w) -> (dx, dw, db) (dx = col2im(W^T g), dw = g cols^T)
and ConvTranspose(g, w) (the input gradient as an op of its own, with a bias). Each one's VJP and JVP
are the others (or itself) on the tangents.

For 2-D windows the family picks conv2d's tuned backends (ops/_conv2d.py): numba im2col / col2im,
Winograd F(2x2, 3x3), the direct weight gradient of few-channel 3x3 convolutions, the flat-grid input
gradient and the bias in the GEMM, by the same rules and kernel-selection keys
(mg.backends.cpu.benchmark, kernels/select.py); 1-d and 3-d windows take the N-d im2col + GEMM.
"""
import itertools
import numbers
from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import _pool
from .._memory_format import _c_order
from ..autograd.function import Function, NoRule, _spread
from . import _conv2d as _k2

__all__ = []  # Function classes only: their public wrappers are nn.functional's


# -- arguments and the window geometry --------------------------------------------------------------

def _ntuple(v, n, name, op):
    """An int or a 1- or n-sequence of ints as an n-tuple of ints (PyTorch's _ntuple), with a clear error."""
    tv = type(v)
    if tv is int:  # the common cases first, without the ABC checks
        return (v,) * n
    if tv is tuple and len(v) == n and all(type(e) is int for e in v):
        return v
    if isinstance(v, numbers.Integral):
        return (int(v),) * n
    v = tuple(v)
    if len(v) == 1:
        v = v * n
    if len(v) != n or not all(isinstance(e, numbers.Integral) for e in v):
        what = "a pair of ints" if n == 2 else f"a tuple of {n} ints"
        raise ValueError(f"{op}: {name} must be an int or {what}, got {v!r}")
    return tuple(int(e) for e in v)


def _pair(v, name, op):
    """_ntuple(v, 2, ...): PyTorch's _pair."""
    return _ntuple(v, 2, name, op)


def _same_padding(kernel, dilation):
    """padding='same' per spatial dimension as (before, after): PyTorch puts the odd extra one after."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _conv_pads(op, padding, kernel, dilation, stride):
    """A convolution's padding argument (int, tuple, 'valid' or 'same') as (before, after) per dimension."""
    n = len(kernel)
    if type(padding) is int:
        return ((padding, padding),) * n
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
            return _same_padding(kernel, dilation)
        raise ValueError(f"{op}: padding string must be 'same' or 'valid', got {padding!r}")
    return tuple((p, p) for p in _ntuple(padding, n, "padding", op))


# N, C: batch and channels of the (convolution's) input; size, kernel, stride, dilation, out: one entry
# per spatial dimension; pads: (before, after) per spatial dimension
_GeomNd = namedtuple("_GeomNd", "N C size kernel stride dilation pads out")

_GEOMS = {}  # memo of _make_geom's results (valid geometries only: an invalid one raises every time)


def _make_geom(op, shape, kernel, stride, dilation, pads, ceil_mode=False):
    """The geometry of a window op (convolution, pooling, unfold / fold) over x of `shape` (N, C, *size);
    pads as (before, after) pairs; op names the caller in errors. Memoised: a training loop asks for
    the same few every step.

    ceil_mode (pooling): PyTorch's rule, the output rounds up but the last window must start inside
    the input or the left padding; the right padding then grows to hold that last window."""
    key = (tuple(shape), tuple(kernel), tuple(stride), tuple(dilation), tuple(pads), bool(ceil_mode))
    geo = _GEOMS.get(key)
    if geo is None:
        geo = _new_geom(op, *key)
        if len(_GEOMS) >= 1024:
            _GEOMS.clear()
        _GEOMS[key] = geo
    return geo


def _new_geom(op, shape, kernel, stride, dilation, pads, ceil_mode):
    N, C, size = shape[0], shape[1], tuple(shape[2:])
    if min(kernel + stride + dilation) <= 0:
        raise RuntimeError(f"{op}: kernel size, stride and dilation must be positive, got kernel {kernel}, "
                           f"stride {stride}, dilation {dilation}")
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise RuntimeError(f"{op}: padding must be non-negative, got {pads}")
    out, new_pads = [], []
    for n, k, s, d, (lo, hi) in zip(size, kernel, stride, dilation, pads):
        # PyTorch's pooling_output_shape: in ceil_mode the (dilated) kernel may overhang the end
        span = n + lo + hi - d * (k - 1) - 1
        o = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= n + lo:
            o -= 1
        if o < 1:
            raise RuntimeError(f"{op}: input of spatial size {size} with padding {pads} is smaller than the "
                               f"(dilated) kernel {tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))}: "
                               f"the output would be empty")
        hi = max(hi, (o - 1) * s + d * (k - 1) + 1 - n - lo)
        out.append(o)
        new_pads.append((lo, hi))
    return _GeomNd(N, C, size, tuple(kernel), tuple(stride), tuple(dilation), tuple(new_pads), tuple(out))


def _int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def check_geom(op, geo, x=None, *, out=None, cols=None, channels=True):
    """Refuse a geometry that does not describe the arrays it is applied to, before a strided view or
    kernel reads memory (a tampered graph file's parameters reach the ops as they are): geo must be a
    _GeomNd of ints, kernel, stride, dilation and output sizes positive, padding non-negative, every
    window inside the padded input; x must be (N, C, *size), out (N, C or any (channels=False), *out)
    and cols (C * prod(kernel), N * prod(out))."""
    if _CHECKED.get(id(geo)) is not geo:
        _check_fields(op, geo)
    for name, a, want in (("input", x, None), ("output gradient", out, None), ("columns", cols, None)):
        if a is None:
            continue
        if name == "input":
            want = (geo.N, geo.C) + geo.size
        elif name == "output gradient":
            want = (geo.N, geo.C if channels else None) + geo.out
        else:
            want = (geo.C * _prod(geo.kernel), geo.N * _prod(geo.out))
        if a.ndim != len(want) or any(w is not None and d != w for d, w in zip(a.shape, want)):
            raise ValueError(f"{op}: {name} of shape {tuple(a.shape)} does not match the window geometry, which "
                             f"expects {tuple('*' if w is None else w for w in want)}")


_CHECKED = {}  # id -> geometry already found valid (kept alive, so its id is not reused)


def _check_fields(op, geo):
    """check_geom's check of the geometry itself (once per geometry object)."""
    ok = type(geo) is _GeomNd and _int(geo.N) and _int(geo.C) and geo.N >= 0 and geo.C >= 0
    if ok:
        parts = (geo.size, geo.kernel, geo.stride, geo.dilation, geo.out, geo.pads)
        ok = all(type(t) is tuple and len(t) == len(geo.size) for t in parts) and all(
            _int(v) for t in parts[:5] for v in t) and all(
            type(p) is tuple and len(p) == 2 and _int(p[0]) and _int(p[1]) and 0 <= p[0] <= 1 << 31
            and 0 <= p[1] <= 1 << 31 for p in geo.pads)
    if ok:
        ok = all(n >= 0 and k >= 1 and s >= 1 and d >= 1 and o >= 1 and (o - 1) * s + d * (k - 1) + 1 <= n + lo + hi
                 for n, k, s, d, o, (lo, hi) in zip(geo.size, geo.kernel, geo.stride, geo.dilation, geo.out, geo.pads))
    if not ok:
        raise ValueError(f"{op}: invalid window geometry {geo!r:.300}: its windows leave the padded input, or a "
                         f"size is not positive")
    if len(_CHECKED) >= 1024:
        _CHECKED.clear()
    _CHECKED[id(geo)] = geo


def _prod(t):
    p = 1
    for v in t:
        p *= v
    return p


def _check_conv_weights(op, geo, w, b, groups, out_channels=None):
    """w (O, C/groups, *kernel) and b (O,) must fit the geometry's C input channels (out_channels:
    the gradient's channels, which must be O)."""
    C = geo.C
    if not isinstance(groups, (int, np.integer)) or groups <= 0 or C % groups or w.ndim != 2 + len(geo.size) \
            or w.shape[0] % groups or w.shape[1] * groups != C or tuple(w.shape[2:]) != geo.kernel \
            or (b is not None and b.shape != (w.shape[0],)) or out_channels not in (None, w.shape[0]):
        raise ValueError(f"{op}: weight of shape {tuple(w.shape)}"
                         f"{'' if b is None else f' and bias of shape {tuple(b.shape)}'} with groups={groups!r} "
                         f"do not fit an input of {C} channels, kernel {geo.kernel}"
                         f"{'' if out_channels is None else f' and a gradient of {out_channels} channels'}")


# -- windows, im2col and col2im ----------------------------------------------------------------------

def _padded(x, geo, value=0):
    """x (N, C, *size) padded per geo (x itself when there is no padding)."""
    if not any(lo or hi for lo, hi in geo.pads):
        return x
    xp = np.full(x.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(geo.size, geo.pads)), value, x.dtype)
    xp[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(geo.size, geo.pads))] = x
    return xp


def _windows(xp, geo):
    """The read-only (N, C, *out, *kernel) strided view of the windows of padded xp."""
    st = xp.strides
    sp = st[2:]
    return as_strided(xp, xp.shape[:2] + geo.out + geo.kernel,
                      st[:2] + tuple(a * s for a, s in zip(sp, geo.stride))
                      + tuple(a * d for a, d in zip(sp, geo.dilation)), writeable=False)


def _offsets(geo):
    """The kernel offsets (tuples), in row-major order."""
    return itertools.product(*(range(e) for e in geo.kernel))


def _offset_slices(geo, k):
    """The slices of the padded input that kernel offset k (a tuple) reads for every output position."""
    return (slice(None), slice(None)) + tuple(
        slice(i * d, i * d + s * (o - 1) + 1, s) for i, d, s, o in zip(k, geo.dilation, geo.stride, geo.out))


def _crop(xp, geo):
    return xp[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(geo.size, geo.pads))]


def _spread_windows(vals, geo, dtype):
    """The adjoint of _windows: vals (N, C, *out, *kernel) added into their input positions (cropped)."""
    xp = np.zeros(vals.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(geo.size, geo.pads)), dtype)
    for k in _offsets(geo):
        xp[_offset_slices(geo, k)] += vals[(Ellipsis,) + k]
    return _crop(xp, geo)


def _im2col(x, geo):
    """cols[(c, *k), (n, *o)] = xpad[n, c, o * s + k * d]: (C*K, N*L) (2-D: _conv2d's numba pass or
    strided copy)."""
    if len(geo.size) == 2:
        return _k2._im2col(x, _k2.flat(geo))
    w = _windows(_padded(x, geo), geo)  # (N, C, *out, *kernel)
    n = len(geo.size)
    perm = (1,) + tuple(range(2 + n, 2 + 2 * n)) + (0,) + tuple(range(2, 2 + n))
    return w.transpose(perm).reshape(geo.C * _prod(geo.kernel), geo.N * _prod(geo.out))


def _col2im(cols, geo):
    """The adjoint of _im2col: (C*K, N*L) columns added back into an (N, C, *size) input (2-D: _conv2d's
    numba pass or adds; the same sums in the same order)."""
    if len(geo.size) == 2:
        return _k2._col2im(cols, _k2.flat(geo))
    n = len(geo.size)
    c = cols.reshape((geo.C,) + geo.kernel + (geo.N,) + geo.out)
    perm = (1 + n, 0) + tuple(range(2 + n, 2 + 2 * n)) + tuple(range(1, 1 + n))
    return _spread_windows(c.transpose(perm), geo, cols.dtype)


def _channels_first(a):
    """(N, O, *out) -> (O, N*L) (the GEMM layout)."""
    return np.moveaxis(a, 1, 0).reshape(a.shape[1], -1)


def _input_grad(g, w, geo, G):
    """The convolution's input gradient col2im(W^T g) (N, C, *size) (2-D: _conv2d's W^T g and col2im)."""
    O = w.shape[0]
    if len(geo.size) == 2:
        f = _k2.flat(geo)
        L = f.N * f.OH * f.OW
        return _k2._dx_col2im(_channels_first(g), w.reshape(G, O // G, -1).transpose(0, 2, 1), f, G, O, L, g)
    g2 = _channels_first(g)  # (O, N*L)
    if G == 1:
        cols = _pool.matmul(w.reshape(O, -1).T, g2)
    else:
        w3 = w.reshape(G, O // G, -1).transpose(0, 2, 1)  # (G, Cg*K, Og)
        cols = _pool.matmul(w3, g2.reshape(G, O // G, -1)).reshape(-1, g2.shape[1])
    return _col2im(cols, geo)


def _weight_grad(x, g, geo, G):
    """dw[o, c, k] = sum over n, p of g[n, o, p] * xpad[n, c, p * s + k * d] (per group)."""
    O = g.shape[1]
    cols = _im2col(x, geo)
    K = cols.shape[0] // G
    g2 = _channels_first(g)  # (O, N*L)
    if G == 1:  # (cols @ g2^T)^T: the long inner dimension second, BLAS's faster orientation
        dw = _pool.matmul(cols, g2.T).T
    else:
        dw = _pool.matmul(g2.reshape(G, O // G, -1), cols.reshape(G, K, -1).transpose(0, 2, 1))
    return np.ascontiguousarray(dw).reshape((O, geo.C // G) + geo.kernel)


def _sum_but_channels(t):
    return t.sum(dim=(0,) + tuple(range(2, t.ndim)))


def _tangent_sum(terms, tb, shape):
    """The sum of the non-None terms plus the bias tangent tb broadcast over shape (N, C, *spatial)."""
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else out + t
    if tb is not None:
        tb = tb.reshape((1, -1) + (1,) * (len(shape) - 2))
        out = tb.expand(*shape) if out is None else out + tb
    return out


def _onnx_pads(geo):
    """ONNX's pads: all the leading ones, then all the trailing ones."""
    return [lo for lo, _ in geo.pads] + [hi for _, hi in geo.pads]


# -- unfold / fold -----------------------------------------------------------------------------------

class Im2Col(Function):
    """cols = im2col(x): (N, C, *size) -> (C*K, N*L);  dx = col2im(g)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("im2col/col2im have no ONNX operator")

    op_name = "unfold"

    @staticmethod
    def forward(ctx, x, geo):
        check_geom("unfold", geo, x)
        ctx.geo = geo
        return _im2col(x, geo)

    @staticmethod
    def backward(ctx, g):
        return Col2Im.apply(g, ctx.geo), None

    @staticmethod
    def jvp(ctx, t, _geo):
        return Im2Col.apply(t, ctx.geo)  # linear


class Col2Im(Function):
    """x = col2im(cols): (C*K, N*L) -> (N, C, *size), overlaps summed;  dcols = im2col(g)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("im2col/col2im have no ONNX operator")

    op_name = "fold"

    @staticmethod
    def forward(ctx, cols, geo):
        check_geom("fold", geo, cols=cols)
        ctx.geo = geo
        return _c_order(_col2im(cols, geo))  # fold: PyTorch's contiguous layout (col2im's is channel-major)

    @staticmethod
    def backward(ctx, g):
        return Im2Col.apply(g, ctx.geo), None

    @staticmethod
    def jvp(ctx, t, _geo):
        return Col2Im.apply(t, ctx.geo)  # linear


# -- convolution -------------------------------------------------------------------------------------

def _keys_of(geo, groups, O, dtype):
    """The kernel-selection keys a convolution of this geometry may use (2-D only: mg.jit.explain)."""
    if type(geo) is not _GeomNd or len(geo.size) != 2:
        return []
    return _k2._keys_of(_k2.flat(geo), groups, O, dtype)


class Convolution(Function):
    """out[n, o] = b[o] + W2[o] @ cols[:, n] with cols = im2col(x) (per group; 2-D: Winograd or
    im2col + GEMM, ops/_conv2d.py);  (dx, dw, db) = ConvolutionBackward(g, x, w)"""
    _torch_edges = (0, 1, 2)  # input, weight, bias (an edge in PyTorch even when None)
    batching = "convolution"

    op_name = "convolution"

    @staticmethod
    def _kernel_keys(args):
        """The kernel-selection keys this equation's arguments (Vars) may have used (mg.jit.explain)."""
        x, w, _b, geo, groups = args[:5]
        return _keys_of(geo, groups, w.shape[0], x.dtype)

    @staticmethod
    def forward(ctx, x, w, b, geo, groups):
        check_geom("convolution", geo, x)
        _check_conv_weights("convolution", geo, w, b, groups)
        ctx.geo, ctx.groups = geo, groups
        ctx.save_for_backward(x, w)
        need = ctx.needs_input_grad
        if len(geo.size) == 2:
            out, ctx.cols = _k2.conv_forward(x, w, b, _k2.flat(geo), groups, bool(need and need[1]))
            return out
        ctx.cols = None
        O, G = w.shape[0], groups
        cols = _im2col(x, geo)
        if G == 1:  # a plain 2-D GEMM takes BLAS's fast path
            out = _pool.matmul(w.reshape(O, -1), cols)
        else:
            out = _pool.matmul(w.reshape(G, O // G, -1), cols.reshape(G, cols.shape[0] // G, -1)).reshape(O, -1)
        if b is not None:
            out += b[:, None]
        return np.ascontiguousarray(np.moveaxis(out.reshape((O, geo.N) + geo.out), 0, 1))

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = tuple(ctx.needs_input_grad[:3])
        cols, ctx.cols = ctx.cols, None  # freed as saved tensors are (a second backward makes them again)
        grads = ConvolutionBackward.apply(g, x, w, cols, ctx.geo, ctx.groups, need)
        return _spread(grads, need) + (None, None)

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):  # bilinear in (x, w), plus the bias
        x, w = ctx.saved_tensors
        geo, G = ctx.geo, ctx.groups
        return _tangent_sum((Convolution.apply(tx, w, None, geo, G) if tx is not None else None,
                             Convolution.apply(x, tw, None, geo, G) if tw is not None else None),
                            tb, (geo.N, w.shape[0]) + geo.out)

    @staticmethod
    def onnx(e, c):
        x, w, b, geo, groups = e.args[:5]
        ins = [x.name, w.name] + ([b.name] if c.is_var(b) else [])
        return c.add("Conv", ins, c.out(e), kernel_shape=list(geo.kernel), strides=list(geo.stride),
                     dilations=list(geo.dilation), pads=_onnx_pads(geo), group=int(groups))


class ConvolutionBackward(Function):
    """(dx, dw, db) of the convolution, each only where need says: dx = col2im(W2^T @ g2), dw = g2 @ cols^T,
    db = sum(g2), with g2 = g in (O, N*L) layout (one BLAS call each; 2-D: ops/_conv2d.py's backends);
    second derivative: it is bilinear in (g, x) and (g, w), so dg = conv(gdx, w) + conv(x, gdw) + gdb,
    dx = dx-rule(g, gdw), dw = dw-rule(g, gdx)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "convolution_backward"

    @staticmethod
    def _kernel_keys(args):
        """The kernel-selection keys this equation's arguments (Vars) may have used (mg.jit.explain)."""
        g, x, _w, _cols, geo, G = args[:6]
        return _keys_of(geo, G, g.shape[1], (x if x is not None else g).dtype)

    @staticmethod
    def forward(ctx, g, x, w, cols, geo, G, need):
        check_geom("convolution_backward", geo, x, out=g, channels=False)
        if w is not None:
            _check_conv_weights("convolution_backward", geo, w, None, G, g.shape[1])
        ctx.geo, ctx.G, ctx.need = geo, G, need
        ctx.save_for_backward(g, x, w)
        if len(geo.size) == 2:
            return _k2.conv_backward(g, x, w, cols, _k2.flat(geo), G, need)
        nx, nw, nb = need
        out = []
        if nx:
            out.append(np.ascontiguousarray(_input_grad(g, w, geo, G)))
        if nw:
            out.append(_weight_grad(x, g, geo, G))
        if nb:
            out.append(g.sum(axis=(0,) + tuple(range(2, g.ndim))))
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        g, x, w = ctx.saved_tensors
        gdx, gdw, gdb = _spread(grads, ctx.need)
        geo, G = ctx.geo, ctx.G
        ng, nx, nw = ctx.needs_input_grad[:3]
        dg = dx = dw = None
        if ng:
            dg = _tangent_sum((Convolution.apply(gdx, w, None, geo, G) if gdx is not None else None,
                               Convolution.apply(x, gdw, None, geo, G) if gdw is not None else None),
                              gdb, g.shape)
        if nx and gdw is not None:
            dx, = ConvolutionBackward.apply(g, None, gdw, None, geo, G, (True, False, False))
        if nw and gdx is not None:
            dw, = ConvolutionBackward.apply(g, gdx, None, None, geo, G, (False, True, False))
        return dg, dx, dw, None, None, None, None

    @staticmethod
    def jvp(ctx, tg, tx, tw, *_):
        """dx is bilinear in (g, w), dw in (g, x), db linear in g: each output's tangent is the same
        rule on (tangent, primal) plus (primal, tangent)."""
        g, x, w = ctx.saved_tensors
        geo, G = ctx.geo, ctx.G
        nx, nw, nb = ctx.need

        def part(gg, xx, ww, need):
            if gg is None or (xx is None and ww is None):
                return None
            return ConvolutionBackward.apply(gg, xx, ww, None, geo, G, need)[0]

        def total(*terms):
            terms = [t for t in terms if t is not None]
            return sum(terms[1:], terms[0]) if terms else None
        out = []
        if nx:
            out.append(total(part(tg, None, w, (True, False, False)), part(g, None, tw, (True, False, False))))
        if nw:
            out.append(total(part(tg, x, None, (False, True, False)), part(g, tx, None, (False, True, False))))
        if nb:
            out.append(_sum_but_channels(tg) if tg is not None else None)
        return tuple(out)


class ConvTranspose(Function):
    """out = col2im(W2^T @ g) + b: the input gradient of the convolution of geometry geo (a transposed
    convolution);  dg = Convolution(gout, w),  dw = ConvolutionBackward's weight gradient of
    (g, gout),  db = sum of gout"""
    batching = "conv_transpose"
    _torch_edges = (0, 1, 2)  # input, weight, bias (an edge in PyTorch even when None)

    op_name = "conv_transpose"

    def name(self):
        return "ConvolutionBackward0"  # PyTorch's node for conv_transpose1d/2d/3d

    @staticmethod
    def forward(ctx, g, w, b, geo, groups):
        check_geom("conv_transpose", geo, out=g, channels=False)
        _check_conv_weights("conv_transpose", geo, w, None, groups, g.shape[1])
        ctx.geo, ctx.groups = geo, groups
        ctx.save_for_backward(g, w)
        out = _input_grad(g, w, geo, groups)
        if b is not None:
            out = out + b.reshape((1, -1) + (1,) * len(geo.size))
        return _c_order(out)  # PyTorch's contiguous layout (the 2-D col2im's is channel-major)

    @staticmethod
    def backward(ctx, gout):
        g, w = ctx.saved_tensors
        ng, nw, nb = ctx.needs_input_grad[:3]
        geo, G = ctx.geo, ctx.groups
        return (Convolution.apply(gout, w, None, geo, G) if ng else None,
                ConvolutionBackward.apply(g, gout, None, None, geo, G, (False, True, False))[0] if nw else None,
                _sum_but_channels(gout) if nb else None, None, None)

    @staticmethod
    def jvp(ctx, tg, tw, tb, *_):
        g, w = ctx.saved_tensors
        geo, G = ctx.geo, ctx.groups
        return _tangent_sum((ConvTranspose.apply(tg, w, None, geo, G) if tg is not None else None,
                             ConvTranspose.apply(g, tw, None, geo, G) if tw is not None else None),
                            tb, (geo.N, geo.C) + geo.size)

    @staticmethod
    def onnx(e, c):
        # geo is the forward convolution's (input size -> out); the transposed one maps out -> size, so
        # output_padding makes up what the strided windows do not reach
        g, w, b, geo, groups = e.args[:5]
        extra = [n - (s * (o - 1) + d * (k - 1) + 1 - lo - hi) for n, o, k, s, d, (lo, hi) in
                 zip(geo.size, geo.out, geo.kernel, geo.stride, geo.dilation, geo.pads)]
        attrs = dict(kernel_shape=list(geo.kernel), strides=list(geo.stride), dilations=list(geo.dilation),
                     pads=_onnx_pads(geo), group=int(groups))
        bias = [b.name] if c.is_var(b) else []
        if all(x < s for x, s in zip(extra, geo.stride)):
            return c.add("ConvTranspose", [g.name, w.name] + bias, c.out(e), output_padding=extra, **attrs)
        # onnxruntime wants output_padding < stride (PyTorch allows < dilation too): the positions no
        # window reaches get no contribution, so pad them with zeros, then add the bias
        res = c.add("ConvTranspose", [g.name, w.name], **attrs)
        n = len(extra)
        res = c.add("Pad", [res, c.ints([0] * (n + 2) + [0, 0] + extra), c.scalar(0, g.dtype)], mode="constant")
        if bias:
            res = c.add("Add", [res, c.reshape(b.name, [1, -1] + [1] * n)])
        return c.result(e, res)
