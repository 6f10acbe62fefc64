"""N-d convolution (conv1d, conv3d) and transposed convolution (conv_transpose1d/2d/3d).

Three bilinear Functions close under differentiation, so any derivative order stays in the family:
ConvolutionNd(x, w) (the convolution), ConvTransposeNd(g, w) (its input gradient: col2im(W^T g)) and
ConvWeightNd(x, g) (its weight gradient). Each one's VJP is the other two; each one's JVP is itself
on the tangents (bilinear). The geometry `_GeomNd` is that of the convolution; a transposed
convolution runs the same geometry backwards. conv2d keeps its tuned 2-D kernels (ops/conv.py).
"""
import itertools
import numbers
from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..autograd.function import Function, NoRule

__all__ = []  # Function classes only: their public wrappers are nn.functional's

# N, C: batch and channels of the convolution's input; size, kernel, stride, dilation, out: one entry
# per spatial dimension; pads: (before, after) per spatial dimension
_GeomNd = namedtuple("_GeomNd", "N C size kernel stride dilation pads out")


def _ntuple(v, n, name, op):
    """An int or a 1- or n-sequence of ints as an n-tuple of ints (PyTorch's _ntuple), with a clear error."""
    if isinstance(v, numbers.Integral):
        return (int(v),) * n
    v = tuple(v)
    if len(v) == 1:
        v = v * n
    if len(v) != n or not all(isinstance(e, numbers.Integral) for e in v):
        raise ValueError(f"{op}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    return tuple(int(e) for e in v)


def _geom_nd(op, shape, kernel, stride, dilation, pads, ceil_mode=False):
    """The geometry of a window op over x of `shape` (N, C, *size); pads as (before, after) pairs.

    ceil_mode (pooling): PyTorch's rule, the output rounds up but the last window must start inside
    the input or the left padding; the right padding then grows to hold that last window."""
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


def check_geom_nd(op, geo, x=None, *, out=None, channels=True):
    """Refuse a geometry that does not describe the arrays it is applied to, before a strided view
    reads memory (a tampered graph file's parameters reach the ops as they are): geo must be a
    _GeomNd of ints, kernel, stride, dilation and output sizes positive, padding non-negative, every
    window inside the padded input; x must be (N, C, *size) and out (N, C or any, *out)."""
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
    for name, a, want in (("input", x, (geo.N, geo.C) + geo.size),
                          ("output gradient", out, (geo.N, geo.C if channels else None) + geo.out)):
        if a is not None and (a.ndim != len(want) or any(w is not None and d != w for d, w in zip(a.shape, want))):
            raise ValueError(f"{op}: {name} of shape {tuple(a.shape)} does not match the window geometry, which "
                             f"expects {tuple('*' if w is None else w for w in want)}")


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


def _offset_slices(geo, k):
    """The slices of the padded input that kernel offset k (a tuple) reads for every output position."""
    return (slice(None), slice(None)) + tuple(
        slice(i * d, i * d + s * (o - 1) + 1, s) for i, d, s, o in zip(k, geo.dilation, geo.stride, geo.out))


def _crop(xp, geo):
    return xp[(slice(None), slice(None)) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(geo.size, geo.pads))]


def _spread_windows(vals, geo, dtype):
    """The adjoint of _windows: vals (N, C, *out, *kernel) added into their input positions (cropped)."""
    n = len(geo.size)
    xp = np.zeros(vals.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(geo.size, geo.pads)), dtype)
    for k in itertools.product(*(range(e) for e in geo.kernel)):
        xp[_offset_slices(geo, k)] += vals[(Ellipsis,) + k] if n else vals
    return _crop(xp, geo)


def _im2col(x, geo):
    """cols[(c, *k), (n, *o)] = xpad[n, c, o * s + k * d]: (C*K, N*L)."""
    w = _windows(_padded(x, geo), geo)  # (N, C, *out, *kernel)
    n = len(geo.size)
    perm = (1,) + tuple(range(2 + n, 2 + 2 * n)) + (0,) + tuple(range(2, 2 + n))
    return w.transpose(perm).reshape(geo.C * int(np.prod(geo.kernel)), geo.N * int(np.prod(geo.out)))


def _col2im(cols, geo):
    """The adjoint of _im2col: (C*K, N*L) columns added back into an (N, C, *size) input."""
    n = len(geo.size)
    c = cols.reshape((geo.C,) + geo.kernel + (geo.N,) + geo.out)
    perm = (1 + n, 0) + tuple(range(2 + n, 2 + 2 * n)) + tuple(range(1, 1 + n))
    return _spread_windows(c.transpose(perm), geo, cols.dtype)


def _channels_first(a):
    """(N, O, *out) -> (O, N*L) (the GEMM layout)."""
    return np.moveaxis(a, 1, 0).reshape(a.shape[1], -1)


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


class ConvolutionNd(Function):
    """out[n, o] = b[o] + W2[o] @ cols[:, n] with cols = im2col(x) (per group);
    dx = ConvTransposeNd(g, w),  dw = ConvWeightNd(x, g),  db = sum of g over all but channels"""
    _torch_edges = (0, 1, 2)  # input, weight, bias (an edge in PyTorch even when None)
    batching = "convolution"

    op_name = "convolution"

    def name(self):
        return "ConvolutionBackward0"  # PyTorch's node for conv1d/2d/3d

    @staticmethod
    def forward(ctx, x, w, b, geo, groups):
        check_geom_nd("convolution", geo, x)
        ctx.geo, ctx.groups = geo, groups
        ctx.save_for_backward(x, w)
        O, G = w.shape[0], groups
        cols = _im2col(x, geo)
        if G == 1:  # a plain 2-D GEMM takes BLAS's fast path
            out = np.matmul(w.reshape(O, -1), cols)
        else:
            out = np.matmul(w.reshape(G, O // G, -1), cols.reshape(G, cols.shape[0] // G, -1)).reshape(O, -1)
        if b is not None:
            out += b[:, None]
        return np.ascontiguousarray(np.moveaxis(out.reshape((O, geo.N) + geo.out), 0, 1))

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad[:3]
        geo, G = ctx.geo, ctx.groups
        return (ConvTransposeNd.apply(g, w, None, geo, G) if nx else None,
                ConvWeightNd.apply(x, g, geo, G) if nw else None,
                _sum_but_channels(g) if nb else None, None, None)

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):
        x, w = ctx.saved_tensors
        geo, G = ctx.geo, ctx.groups
        return _tangent_sum((ConvolutionNd.apply(tx, w, None, geo, G) if tx is not None else None,
                             ConvolutionNd.apply(x, tw, None, geo, G) if tw is not None else None),
                            tb, (geo.N, w.shape[0]) + geo.out)

    @staticmethod
    def onnx(e, c):
        x, w, b, geo, groups = e.args[:5]
        ins = [x.name, w.name] + ([b.name] if c.is_var(b) else [])
        return c.add("Conv", ins, c.out(e), kernel_shape=list(geo.kernel), strides=list(geo.stride),
                     dilations=list(geo.dilation), pads=_onnx_pads(geo), group=int(groups))


class ConvTransposeNd(Function):
    """out = col2im(W2^T @ g) + b: the input gradient of the convolution of geometry geo (a transposed
    convolution);  dg = ConvolutionNd(gout, w),  dw = ConvWeightNd(gout, g),  db = sum of gout"""
    batching = "conv_transpose"
    _torch_edges = (0, 1, 2)  # input, weight, bias (an edge in PyTorch even when None)

    op_name = "conv_transpose"

    def name(self):
        return "ConvolutionBackward0"  # PyTorch's node for conv_transpose1d/2d/3d

    @staticmethod
    def forward(ctx, g, w, b, geo, groups):
        check_geom_nd("conv_transpose", geo, out=g, channels=False)
        ctx.geo, ctx.groups = geo, groups
        ctx.save_for_backward(g, w)
        O, G = w.shape[0], groups
        g2 = _channels_first(g)  # (O, N*L)
        if G == 1:
            cols = np.matmul(w.reshape(O, -1).T, g2)
        else:
            w3 = w.reshape(G, O // G, -1).transpose(0, 2, 1)  # (G, Cg*K, Og)
            cols = np.matmul(w3, g2.reshape(G, O // G, -1)).reshape(-1, g2.shape[1])
        out = _col2im(cols, geo)
        if b is not None:
            out = out + b.reshape((1, -1) + (1,) * len(geo.size))
        return np.ascontiguousarray(out)

    @staticmethod
    def backward(ctx, gout):
        g, w = ctx.saved_tensors
        ng, nw, nb = ctx.needs_input_grad[:3]
        geo, G = ctx.geo, ctx.groups
        return (ConvolutionNd.apply(gout, w, None, geo, G) if ng else None,
                ConvWeightNd.apply(gout, g, geo, G) if nw else None,
                _sum_but_channels(gout) if nb else None, None, None)

    @staticmethod
    def jvp(ctx, tg, tw, tb, *_):
        g, w = ctx.saved_tensors
        geo, G = ctx.geo, ctx.groups
        return _tangent_sum((ConvTransposeNd.apply(tg, w, None, geo, G) if tg is not None else None,
                             ConvTransposeNd.apply(g, tw, None, geo, G) if tw is not None else None),
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


class ConvWeightNd(Function):
    """dw[o, c, k] = sum over n, p of g[n, o, p] * xpad[n, c, p * s + k * d] (per group): the weight
    gradient of the convolution;  dx = ConvTransposeNd(g, gdw),  dg = ConvolutionNd(x, gdw)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "convolution_weight"

    @staticmethod
    def forward(ctx, x, g, geo, groups):
        check_geom_nd("convolution_weight", geo, x, out=g, channels=False)
        ctx.geo, ctx.groups = geo, groups
        ctx.save_for_backward(x, g)
        O, G = g.shape[1], groups
        cols = _im2col(x, geo)
        K = cols.shape[0] // G
        g2 = _channels_first(g)  # (O, N*L)
        if G == 1:  # (cols @ g2^T)^T: the long inner dimension second, BLAS's faster orientation
            dw = np.matmul(cols, g2.T).T
        else:
            dw = np.matmul(g2.reshape(G, O // G, -1), cols.reshape(G, K, -1).transpose(0, 2, 1))
        return np.ascontiguousarray(dw).reshape((O, geo.C // G) + geo.kernel)

    @staticmethod
    def backward(ctx, gdw):
        x, g = ctx.saved_tensors
        nx, ng = ctx.needs_input_grad[:2]
        geo, G = ctx.geo, ctx.groups
        return (ConvTransposeNd.apply(g, gdw, None, geo, G) if nx else None,
                ConvolutionNd.apply(x, gdw, None, geo, G) if ng else None, None, None)

    @staticmethod
    def jvp(ctx, tx, tg, *_):
        x, g = ctx.saved_tensors
        geo, G = ctx.geo, ctx.groups
        return _tangent_sum((ConvWeightNd.apply(tx, g, geo, G) if tx is not None else None,
                             ConvWeightNd.apply(x, tg, geo, G) if tg is not None else None), None, None)
