"""conv2d's tuned 2-D backends, which the convolution family (ops/conv.py) and 2-D pooling
(ops/pooling.py) pick for 2-D windows: im2col / col2im (numba's one pass each, or NumPy's strided copy),
Winograd F(2x2, 3x3), the direct weight gradient, the flat-grid input gradient and the GEMMs.

They read the window geometry as a flat 2-D view (`_Geom`, from `flat(geo)` of the family's N-d
geometry, memoised) so the hot loops read plain fields (geo.kh, geo.OH, ...).

With numba (minigrad.kernels), im2col and col2im are one compiled pass each (minigrad/kernels/conv.py,
the same values as the NumPy paths bit for bit), and the input gradient is W^T g then col2im; without
it, the NumPy paths here serve (the stride-1 input gradient as a flat-grid GEMM and shifted adds).
For short weight rows the bias rides in the GEMMs (_BIAS_IN_GEMM). With numba, 3x3 stride-1
convolutions with enough channels and tiles run as Winograd F(2x2, 3x3) instead (_winograd;
minigrad/kernels/winograd.py): 16 thinner GEMMs on transformed tiles, 4 multiplications per output
instead of 9, forward and both gradients; and the weight gradient of a 3x3 stride-1 convolution of
few channels (a first layer) is one direct pass (_direct_weight_grad; kernels/conv.py
weight_grad3x3) instead of a GEMM with a 9-wide result.
"""
import threading
from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import _pool, kernels
from .._memory_format import _c_order
from ..kernels import buffers, select

__all__ = []  # backends only: the ops are ops/conv.py's and ops/pooling.py's

# -- the flat 2-D view of the window geometry -------------------------------------------------------

# N, C, H, W: input; kh, kw: kernel; sh, sw: stride; dh, dw: dilation; pt, pb, pl, pr: padding
# (top, bottom, left, right); OH, OW: output size.
_Geom = namedtuple("_Geom", "N C H W kh kw sh sw dh dw pt pb pl pr OH OW")
_FLAT = {}  # memo: id of an N-d geometry -> (it, its flat view)


def flat(geo):
    """The flat 2-D view (_Geom) of a 2-D window geometry (ops/conv.py's _GeomNd), memoised."""
    hit = _FLAT.get(id(geo))  # by identity: _make_geom hands out the same object for the same geometry
    if hit is not None and hit[0] is geo:
        return hit[1]
    (H, W), (kh, kw), (sh, sw), (dh, dw), ((pt, pb), (pl, pr)), (OH, OW) = \
        geo.size, geo.kernel, geo.stride, geo.dilation, geo.pads, geo.out
    f = _Geom(geo.N, geo.C, H, W, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, OH, OW)
    if len(_FLAT) >= 1024:
        _FLAT.clear()
    _FLAT[id(geo)] = (geo, f)  # (geo kept alive, so its id is not reused while the entry stands)
    return f


def _make_geom(op, shape, kernel, stride, dilation, pads, ceil_mode=False):
    """The flat view of the family's geometry (ops/conv.py's _make_geom) for callers that hold the
    padding as (top, bottom, left, right), as the kernels' tests and benchmarks do."""
    from .conv import _make_geom as make
    pt, pb, pl, pr = pads
    return flat(make(op, shape, kernel, stride, dilation, ((pt, pb), (pl, pr)), ceil_mode))


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
            _pool.matmul(wc, gf[:, t0:t1], out=d)
            _tap_adds(dxp[:, t0:t1], d.reshape(C, taps, L), offs)
    else:
        dcols = _workspace(("conv_dx_cols", G, K, T, g.dtype), lambda: np.empty((G, K, T), g.dtype))
        _pool.matmul(w3, grid.reshape(G, Og, T), out=dcols)
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



# -- Winograd F(2x2, 3x3) --------------------------------------------------------------------------

# conv2d runs its 3x3 stride-1 convolutions as Winograd F(2x2, 3x3) (minigrad/kernels/winograd.py:
# 16 GEMMs on transformed tiles, 4 multiplications per output instead of 9) when numba is there, the
# input has at least _WINOGRAD_MIN_CHANNELS channels (the GEMMs' inner dimension) and the batch has at
# least _WINOGRAD_MIN_TILES 2x2 output tiles. Measured on one conv, float32, 14x14, forward / backward
# in ms, Winograd vs im2col alternating in one process (a noisy 2-core host: ranges of 2 runs):
# 32->64 batch 64 4.1-5.0 / 7.1-8.3 vs 4.8-5.5 / 8.6-9.3; 16->32 1.5-1.9 / 3.1-3.2 vs 2.0-2.1 /
# 3.2-3.4; 8->16 0.57 / 0.88 vs 0.58-0.61 / 1.30; in the CNN benchmark's 32/64 step (batch 64)
# 18-19 ms vs 21-22. Below the limits it loses: 1->32 and 3->16 (no input gradient) 1.8-7x
# slower, 32->64 or 64->128 at batch 1 on 14x14 (49 tiles) 4-9 % slower: 16 thin GEMMs cost
# more than one
_WINOGRAD_MIN_CHANNELS = 8
_WINOGRAD_MIN_TILES = 64

# F(2x2, 3x3)'s weight transform G (4x3); kron(G, G) maps a flattened 3x3 kernel to its 16 frequencies
_WINO_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
_WINO_GG = {np.dtype(t): np.kron(_WINO_G, _WINO_G).astype(t) for t in (np.float32, np.float64)}


def _plain3x3(geo, groups, arrays):
    """True for a 3x3 kernel, stride 1, no dilation and one group, with the numba kernels present and
    one float dtype (float32 or float64) for all of arrays: what the Winograd path and the direct
    weight gradient serve."""
    if (geo.kh != 3 or geo.kw != 3 or geo.sh != 1 or geo.sw != 1 or geo.dh != 1 or geo.dw != 1
            or groups != 1):
        return False
    dt = arrays[0].dtype
    for o in arrays[1:]:
        if o.dtype != dt:
            return False
    return dt in _WINO_GG and kernels.available()


def _winograd(geo, groups, a, *others):
    """True when conv2d (forward and gradients) runs as Winograd F(2x2, 3x3): _plain3x3, with the
    sizes above the limits (_WINOGRAD_MIN_CHANNELS, _WINOGRAD_MIN_TILES)."""
    return (geo.C >= _WINOGRAD_MIN_CHANNELS
            and geo.N * ((geo.OH + 1) // 2) * ((geo.OW + 1) // 2) >= _WINOGRAD_MIN_TILES
            and _plain3x3(geo, groups, (a,) + others))


def _wino_planes(C, P, dtype, scratch=None):
    """A (16, C, P) array for transformed tiles whose 16 planes lie one cache line more than C*P
    apart: planes exactly a multiple of 4 KiB apart (P = 3136 for 14x14 images, batch 64) make the
    kernels' 16 streams fight over the same cache sets, 2-9x slower. scratch: a _workspace key (the
    array is overwritten by the next call) or None (recycled by kernels/buffers.py: the forward
    saves it for the weight gradient)."""
    n = C * P + 64 // dtype.itemsize
    if scratch is None:
        buf = buffers.empty((16, n), dtype)
    else:
        buf = _workspace((scratch, C, P, dtype), lambda: np.empty((16, n), dtype))
    return buf[:, :C * P].reshape(16, C, P)


def _wino_weights(w):
    """U (16, O, C): U[xi] = (G w[o, c] G^T)[xi], xi = 4a + b."""
    O, C = w.shape[:2]
    return _pool.matmul(_WINO_GG[w.dtype], w.reshape(O * C, 9).T).reshape(16, O, C)


def _wino_tiles(geo):
    TH, TW = (geo.OH + 1) // 2, (geo.OW + 1) // 2
    return TH, TW, geo.N * TH * TW


def _wino_inputs(x, geo):
    """V (16, C, P): the transformed 4x4 input patch of every output tile."""
    TH, TW, P = _wino_tiles(geo)
    V = _wino_planes(geo.C, P, x.dtype)
    xm, cm = _mem_order(x)
    kernels.load("winograd").inputs(xm, cm, V, geo.pt, geo.pl, TH, TW)
    return V


def _wino_forward(x, w, b, geo):
    """conv2d's output (channel-major (N, O, OH, OW) view) and the V it multiplied."""
    O = w.shape[0]
    V = _wino_inputs(x, geo)
    M = _wino_planes(O, V.shape[2], x.dtype, "wino_M")
    _pool.matmul(_wino_weights(w), V, out=M)
    out = buffers.empty((O, geo.N, geo.OH, geo.OW), x.dtype)
    kernels.load("winograd").outputs(M, out, b if b is not None else np.zeros(O, x.dtype), b is not None)
    return out.transpose(1, 0, 2, 3), V


# The weight gradient's dU = dM @ V^T (16 products (O, P) @ (P, C): a small result over a long inner
# dimension, the tiles) runs 1.2-3.5x faster as a sum of products over chunks of the tiles, each
# of at most _SPLIT_K_MNK = O*C*chunk multiply-adds, than as one product: OpenBLAS (the BLAS NumPy's
# wheels ship) takes products up to about that size (100^3: its "small matrix" path) straight to a
# kernel without packing the operands, which at so few result elements costs more than the
# arithmetic. Measured (ms, float32, batch 64, one call vs chunks, 2 threads; noisy host):
# 32x16 over 3136 tiles (the MNIST CNN's 16->32 conv) 0.78-0.86 vs 0.55-0.57; 16x8 over 12544
# (an 8->16 conv on 28x28 images) 2.6-2.7 vs 0.8-1.0; 16x16 over 12544 3.7 vs 1.8-1.9; 32x32 over 3136
# 1.35 vs 1.15-1.2; 64x16 over 3136 the same (1.4); where it is not worth it, it is not taken:
# results of more than _SPLIT_K_MAX_MN elements (64x32 over 3136: 2.2-2.3 vs 2.4-2.5 in chunks),
# and products already that small (8x8 over 12544, 32x16 over 784: one call is faster).
_SPLIT_K_MNK = 1_000_000
_SPLIT_K_MAX_MN = 1024


def _matmul_split_k(a, b):
    """a @ b for stacks a (B, M, K), b (B, K, N) summed over chunks of K (see _SPLIT_K_MNK)."""
    M, K = a.shape[-2:]
    N = b.shape[-1]
    if M * N * K <= _SPLIT_K_MNK:
        return _pool.matmul(a, b)
    chunks = M * N <= _SPLIT_K_MAX_MN  # the fixed rule; mg.backends.cpu.benchmark times both instead
    if select.choose("matmul_split_k", [list(a.shape), N, a.dtype.name],
                     {"chunks": lambda: _split_k(a, b), "one": lambda: _pool.matmul(a, b)},
                     "chunks" if chunks else "one") == "one":
        return _pool.matmul(a, b)
    return _split_k(a, b)


def _split_k(a, b):
    """a @ b summed over chunks of K of at most _SPLIT_K_MNK multiply-adds each."""
    M, K = a.shape[-2:]
    N = b.shape[-1]
    n = -(-M * N * K // _SPLIT_K_MNK)
    chunk = -(-K // n)
    out = _pool.matmul(a[..., :chunk], b[..., :chunk, :])
    part = np.empty_like(out)
    for s in range(chunk, K, chunk):
        out += _pool.matmul(a[..., s:s + chunk], b[..., s:s + chunk, :], out=part)
    return out


def _wino_backward(g, x, w, V, geo, need):
    """The (dx, dw, db) of _wino_forward where need says: the transposes of its transforms around
    dU = dM @ V^T and dV = U^T @ dM, with dM the adjoint output transform of g."""
    nx, nw, nb = need
    K = kernels.load("winograd")
    O, C = g.shape[1], geo.C
    TH, TW, P = _wino_tiles(geo)
    out = []
    db = None
    if nx or nw:
        dM = _wino_planes(O, P, g.dtype, "wino_dM")
        gm, cm = _mem_order(g)
        db = np.empty(O if nb else 0)  # the bias gradient comes with the pass over g
        K.outputs_adjoint(gm, cm, dM, db)
    if nx:
        dV = _wino_planes(C, P, g.dtype, "wino_dV")
        _pool.matmul(_wino_weights(w).transpose(0, 2, 1), dM, out=dV)
        dx = buffers.empty((C, geo.N, geo.H, geo.W), g.dtype)
        K.inputs_adjoint(dV, dx, geo.pt, geo.pl, TH, TW)
        out.append(dx.transpose(1, 0, 2, 3))
    if nw:
        if V is None:
            V = _wino_inputs(x, geo)
        dU = _matmul_split_k(dM, V.transpose(0, 2, 1))  # (16, O, C)
        dw = np.empty((O, C, 3, 3), g.dtype)  # owns its memory: the engine takes it as w.grad
        _pool.matmul(dU.reshape(16, O * C).T, _WINO_GG[g.dtype], out=dw.reshape(O * C, 9))
        out.append(dw)
    if nb:
        out.append(db.astype(g.dtype) if db is not None else g.sum(axis=(0, 2, 3)))
    return tuple(out)


# -- the direct weight gradient ----------------------------------------------------------------------

# The weight gradient of a 3x3 stride-1 convolution with few input and output channels (a first
# layer: C * O <= _DIRECT_DW_MAX_CO) on images of at least _DIRECT_DW_MIN_PIXELS outputs, over more
# than _DIRECT_DW_MIN_COLUMNS output positions in all, is kernels/conv.py's weight_grad3x3: 9 dot
# products per channel pair in one pass over the images, the bias gradient with them, instead of a
# GEMM with a (O, 9C) result and an inner dimension of N*OH*OW, which BLAS runs far below its peak.
# Measured (ms, float32, padding 1, batch 64 unless said, GEMM vs direct; noisy 2-core host):
# 28x28: 1->8 0.43 vs 0.18-0.23, 1->16 0.70 vs 0.31-0.35, 1->32 0.87-0.95 vs 0.64-0.70,
# 2->16 0.69-0.72 vs 0.48-0.56; 56x56 1->16 3.2 vs 1.1. It loses where the GEMM's result is
# wider or its operands fit in cache: 1->64 1.7 vs 1.9, 3->64 (32x32) 3.4 vs 4.0, 14x14 1->32 and
# 2->16 0.22 vs 0.27 and 0.17 vs 0.19, 3136 positions or fewer (batch 4 at 28x28) 0.011 vs 0.022.
_DIRECT_DW_MAX_CO = 32
_DIRECT_DW_MIN_PIXELS = 400
_DIRECT_DW_MIN_COLUMNS = 4096


def _direct_weight_grad(geo, groups, O, x, g):
    """True when conv2d's weight gradient (with its bias gradient) is weight_grad3x3's direct pass."""
    return (geo.C * O <= _DIRECT_DW_MAX_CO and geo.OH * geo.OW >= _DIRECT_DW_MIN_PIXELS
            and geo.N * geo.OH * geo.OW > _DIRECT_DW_MIN_COLUMNS and _plain3x3(geo, groups, (x, g)))


def _weight_grad3x3(g, x, geo):
    """(dw, db) of a _direct_weight_grad convolution; dw owns its memory (it becomes w.grad as is)."""
    O = g.shape[1]
    dw = np.empty((O, geo.C, 3, 3), g.dtype)
    db = np.empty(O, g.dtype)
    xm, xcm = _mem_order(x)
    gm, gcm = _mem_order(g)
    kernels.load("conv").weight_grad3x3(xm, xcm, gm, gcm, dw, db, geo.pt, geo.pl)
    return dw, db


# -- conv2d ----------------------------------------------------------------------------------------

# conv2d puts its bias into the GEMM (a row of ones under the columns) when the weight's rows are
# shorter than this: there the separate bias pass and bias-gradient sum cost more than one more
# GEMM row (measured: the 1->32 and 8->16 convs, batch 1 and 64); longer rows keep the plain path
_BIAS_IN_GEMM = 128


def _conv_key(geo, groups, O, dtype, channel_major):
    """The kernel-selection key parts of a conv2d: its geometry, output channels, groups, dtype and
    the input's memory order (minigrad/kernels/select.py)."""
    return [list(geo[:14]), O, groups, np.dtype(dtype).name, bool(channel_major)]


def _keys_of(geo, groups, O, dtype):
    return [(op, _conv_key(geo, groups, O, dtype, cm)) for op in ("conv2d", "conv2d_input_grad", "conv2d_weight_grad")
            for cm in (False, True)]


def _use_winograd(geo, groups, x, w, b, dtype):
    """True when this conv2d runs as Winograd: the fixed rule (_winograd), or with
    mg.backends.cpu.benchmark the faster of Winograd and im2col + GEMM, timed once per key."""
    arrays = (x, w) if b is None else (x, w, b)
    rule = _winograd(geo, groups, *arrays)
    if not select.active() or not _plain3x3(geo, groups, arrays):
        return rule  # (the fixed rule: no key built, nothing looked up)
    key = _conv_key(geo, groups, w.shape[0], x.dtype, _channel_major(x))
    return select.choose("conv2d", key, {"winograd": lambda: _wino_forward(x, w, b, geo),
                                         "im2col": lambda: _gemm_forward(x, w, b, geo, groups, dtype)},
                         "winograd" if rule else "im2col") == "winograd"


def _direct_dw_choice(geo, groups, O, x, g, dtype):
    """Whether the weight gradient will be the direct pass, as far as the forward can tell: the
    choice already made for this key with benchmark on, else the fixed rule (_direct_weight_grad)."""
    rule = _direct_weight_grad(geo, groups, O, x, g)
    if not select.active() or not _plain3x3(geo, groups, (x, g)):
        return rule
    key = _conv_key(geo, groups, O, dtype, _channel_major(x))
    return select.cached("conv2d_weight_grad", key, "direct" if rule else "gemm", OPS_DW) == "direct"


OPS_DW = select.OPS["conv2d_weight_grad"]


def _gemm_forward(x, w, b, geo, groups, dtype):
    """conv2d as im2col + GEMM: (out (O, N*OH*OW), the columns)."""
    O = w.shape[0]
    K = w[0].size
    L = geo.N * geo.OH * geo.OW
    out = buffers.empty((O, L), dtype)
    if b is not None and groups == 1 and K < _BIAS_IN_GEMM and b.dtype == dtype == x.dtype:
        # the bias as one more weight column against a row of ones: no pass over the output
        # (and the backward's weight GEMM gives the bias gradient as its last column)
        cols = _im2col(x, geo, ones_row=True)
        wb = np.empty((O, K + 1), dtype)
        wb[:, :K] = w.reshape(O, K)
        wb[:, K] = b
        _pool.matmul(wb, cols, out=out)
    else:
        cols = _im2col(x, geo)
        if groups == 1:
            _pool.matmul(w.reshape(O, -1), cols, out=out)
        else:
            _pool.matmul(w.reshape(groups, O // groups, -1), cols.reshape(groups, -1, L),
                      out=out.reshape(groups, O // groups, L))
        if b is not None:
            out += b[:, None]  # on the contiguous (O, N*L) buffer, before the transposed view
    return out, cols


def _dx_col2im(g2, w3, geo, G, O, L, g):
    """conv2d's input gradient as W^T g then col2im (numba's one pass, or NumPy's adds)."""
    K = w3.shape[1]
    if _numba_for(g) and g.dtype == w3.dtype:
        # W^T g into scratch columns, then col2im's one numba pass (faster than the flat
        # grid at every size measured, batch 1 to 64)
        dcols = _workspace(("conv_dx_dcols", G, K, L, g.dtype), lambda: np.empty((G, K, L), g.dtype))
        _pool.matmul(w3, g2.reshape(G, O // G, L), out=dcols)
        return _col2im(dcols.reshape(G * K, L), geo)
    return _col2im(_pool.matmul(w3, g2.reshape(G, O // G, L)).reshape(G * K, L), geo)


def _gemm_weight_grad(g2, x, cols, geo, G, O, L):
    """(dw, db or None) of conv2d as a GEMM against the columns (made from x when cols is None)."""
    if cols is None:
        cols = _im2col(x, geo)
    db = None
    Kc = geo.C // G * geo.kh * geo.kw
    wshape = (O, Kc // (geo.kh * geo.kw), geo.kh, geo.kw)
    if G == 1:
        # the result is an array of the weight's shape that owns its memory (not a reshaped
        # view), so the engine takes it as w.grad without another copy
        dw_out = np.empty(wshape, np.result_type(g2, cols))
        dw2 = dw_out.reshape(O, Kc)
        if L <= 4096 and cols.shape[0] == Kc:
            # short inner dimension (batch 1): g2 @ cols^T gives (O, K) directly
            _pool.matmul(g2, cols.T, out=dw2)
        else:
            # short rows with forward's row of ones (its column is the bias gradient), or
            # cols @ g2^T (long inner dimension second: the faster BLAS orientation here)
            dw = _pool.matmul(g2, cols.T) if L <= 4096 else _pool.matmul(cols, g2.T).T
            if cols.shape[0] == Kc + 1:
                dw, db = dw[:, :Kc], dw[:, Kc]
            np.copyto(dw2, dw)
        return dw_out, db
    g3 = g2.reshape(G, O // G, L)
    return _pool.matmul(g3, cols.reshape(G, Kc, L).transpose(0, 2, 1)).reshape(wshape), None



def conv_forward(x, w, b, geo, groups, keep_cols):
    """conv2d's output (PyTorch's contiguous (N, O, OH, OW)) and what its weight gradient may reuse
    (Winograd's tiles or the im2col columns; None unless keep_cols): Winograd or im2col + GEMM,
    chosen by _use_winograd."""
    O = w.shape[0]
    dtype = w.dtype if w.dtype == x.dtype else np.result_type(w.dtype, x.dtype)
    if _use_winograd(geo, groups, x, w, b, dtype):
        out, V = _wino_forward(x, w, b, geo)
        return _c_order(out), (V if keep_cols else None)  # PyTorch's contiguous layout: out.view(N, -1) works
    out, cols = _gemm_forward(x, w, b, geo, groups, dtype)
    # the weight gradient reuses the columns (unless it is the direct pass, which reads x)
    keep = keep_cols and not _direct_dw_choice(geo, groups, O, x, w, x.dtype)
    # computed channel-major, returned in PyTorch's contiguous layout (one copy of the output), so
    # that conv(x).view(N, -1) (strict, as PyTorch's view) works as in PyTorch
    return _c_order(out.reshape(O, geo.N, geo.OH, geo.OW).transpose(1, 0, 2, 3)), (cols if keep else None)


def conv_backward(g, x, w, cols, geo, G, need):
    """conv2d's (dx, dw, db) where need says (a tuple of the needed ones): Winograd's transposed
    transforms when the forward took Winograd, else W^T g then col2im (or the flat grid) for dx, the
    direct pass or a GEMM against the columns for dw, and db with whichever pass gives it."""
    nx, nw, nb = need
    O = w.shape[0] if w is not None else g.shape[1]
    L = geo.N * geo.OH * geo.OW
    arrays = tuple(a for a in (g, x, w) if a is not None)
    wino = _winograd(geo, G, *arrays)
    if select.active() and _plain3x3(geo, G, arrays):
        # follow the forward's choice: its tiles or columns say which it took; else its key's
        if cols is not None:
            wino = cols.ndim == 3
        elif x is not None:
            wino = select.cached("conv2d", _conv_key(geo, G, O, x.dtype, _channel_major(x)),
                                 "winograd" if wino else "im2col", select.OPS["conv2d"]) == "winograd"
    if cols is not None and (cols.ndim == 3) != wino:
        cols = None  # the forward's Winograd tiles or im2col columns, but this path takes the other
    if wino:
        return _wino_backward(g, x, w, cols, geo, need)
    direct = nw and _direct_weight_grad(geo, G, O, x, g)  # (then db comes with dw)
    # (free when g kept the forward's layout)
    plain_dw = nw and _plain3x3(geo, G, (x, g))
    g2 = g.transpose(1, 0, 2, 3).reshape(O, L) if nx or not direct or (plain_dw and select.active()) else None
    if plain_dw:
        direct = select.choose(
            "conv2d_weight_grad", _conv_key(geo, G, O, x.dtype, _channel_major(x)),
            {"direct": lambda: _weight_grad3x3(g, x, geo),
             "gemm": lambda: _gemm_weight_grad(g2, x, cols, geo, G, O, L)},
            "direct" if direct else "gemm") == "direct"
    out = []
    if nx:
        K = w[0].size
        w3 = w.reshape(G, O // G, K).transpose(0, 2, 1)  # (G, K, O/G)
        rule = "col2im" if (_numba_for(g) and g.dtype == w.dtype) or geo.sh != 1 or geo.sw != 1 else "flat"
        if geo.sh == geo.sw == 1:
            rule = select.choose(
                "conv2d_input_grad", _conv_key(geo, G, O, g.dtype, _channel_major(g)),
                {"col2im": lambda: _dx_col2im(g2, w3, geo, G, O, L, g),
                 "flat": lambda: _conv_dx_flat(g, w3, geo)}, rule)
        out.append(_dx_col2im(g2, w3, geo, G, O, L, g) if rule == "col2im" else _conv_dx_flat(g, w3, geo))
    db = None
    if direct:
        dw, db = _weight_grad3x3(g, x, geo)
        out.append(dw)
    elif nw:
        dw, db = _gemm_weight_grad(g2, x, cols, geo, G, O, L)
        out.append(dw)
    if nb:
        out.append(np.ascontiguousarray(db) if db is not None else g2.sum(axis=1))
    return tuple(out)
