"""Batching rules for mg.func.vmap: the family rules an op names in its `batching` attribute
(`batching = "elementwise"` on the op class; the few rules written for one op live here too).

A rule is `rule(cls, level, args) -> output(s)`: args are the op's Function.apply arguments, some
of them BatchedTensors at vmap level `level` (the innermost level among them). The rule calls ops
on the physical tensors (so autograd records them as usual) and returns BatchedTensors. A rule
may `raise Fallback` for a case it does not cover (the loop fallback then runs, with its one-time
performance warning). An op declaring `batching = NoRule(why)` loops the same way.

Families:
  elementwise / broadcasting: batch dim to the front, ranks aligned (a size-1 dim inserted after
    it for lower-rank operands), same op;
  reductions and dim-taking ops: batch dim to the front, dims shifted by one;
  shape ops: batch dim to the front, the target shape/dims given one more leading entry;
  indexing: a full slice in front of the index (the batch dim moves behind the advanced-index
    dims when NumPy puts those first);
  matmul / linear / einsum: broadcast over the batch, or fold it into the matrices' batch;
  conv2d / pooling: the batch folded into N (or, for per-sample weights, into the channel groups);
  losses: the per-sample losses from reduction='none' over the folded batch, reduced per sample.
"""
import numpy as np

from .vmap import BatchedTensor, _Physical, _front, _wrap, _is_batched, _expand_to, _size
from ..autograd.function import Function, NoRule


class Fallback(Exception):
    """Raised by a rule for a case it does not cover: the loop fallback runs instead."""


def rule_for(cls):
    """The op's batching rule as a function, or None (the loop): its `batching` attribute, a family
    rule of this module named by a string, or a function."""
    rule = cls.batching
    if type(rule) is str:
        return globals()[rule]
    return None if rule is None or type(rule) is NoRule else rule


def _out(out, level, bdim=0):
    if type(out) is tuple:
        return tuple(_wrap(o, bdim, level) if hasattr(o, "_data") else o for o in out)
    return _wrap(out, bdim, level)


def _no_static_arrays(args):
    for a in args:
        if type(a) is _Physical:
            raise Fallback
        if type(a) is tuple and any(type(v) is _Physical for v in a):
            raise Fallback


def _aligned(a, level, rank):
    """a's physical tensor, batch first, with size-1 dims after it up to logical rank `rank`."""
    p = _front(a)
    r = a.ndim
    if r < rank:
        p = p.reshape(p.shape[:1] + (1,) * (rank - r) + tuple(p.shape[1:]))
    return p


# -- elementwise -------------------------------------------------------------------------------------
def elementwise(cls, level, args):
    _no_static_arrays(args)
    from ..tensor import Tensor
    rank = max(a.ndim for a in args if isinstance(a, Tensor))
    new = [_aligned(a, level, rank) if _is_batched(a, level) else a for a in args]
    return _out(cls.apply(*new), level)


def elementwise_no_out(cls, level, args):
    """lerp / addcmul / addcdiv: the in-place form (an output array) loops."""
    if args[-1] is not None:
        raise Fallback
    return elementwise(cls, level, args)


# -- reductions and dim-taking ops ---------------------------------------------------------------------
def _shift(d, ndim):
    return d % max(ndim, 1) + 1 if ndim else 1


def reduce_axes(cls, level, args):
    """(x, axes, keepdim, *rest): axes a tuple of logical dims, or None (all)."""
    x, axes = args[0], args[1]
    if not _is_batched(x, level) or any(_is_batched(a, level) for a in args[2:]):
        raise Fallback
    axes = tuple(range(1, x.ndim + 1)) if axes is None else tuple(_shift(a, x.ndim) for a in axes)
    return _out(cls.apply(_front(x), axes, *args[2:]), level)


def dim_arg(pos):
    """An op whose argument at `pos` is one logical dim (None: fall back), the rest passed through."""
    def rule(cls, level, args):
        x, d = args[0], args[pos]
        if not _is_batched(x, level) or d is None or any(_is_batched(a, level) for a in args[1:]):
            raise Fallback
        new = list(args)
        new[0] = _front(x)
        new[pos] = _shift(d, x.ndim)
        return _out(cls.apply(*new), level)
    return rule


dim_at_1 = dim_arg(1)  # softmax, cumsum, sort, kthvalue, ...: (x, dim, ...)
dim_at_2 = dim_arg(2)  # topk: (x, k, dim, ...)


def argmax(cls, level, args):
    x, d, keepdim = args
    if not _is_batched(x, level):
        raise Fallback
    p = _front(x)
    if d is None:
        return _out(cls.apply(p.reshape(p.shape[0], -1), 1, False), level)
    return _out(cls.apply(p, _shift(d, x.ndim), keepdim), level)


def leading_batch(cls, level, args):
    """Ops that already broadcast over leading batch dims of their (single) tensor input."""
    x = args[0]
    if not _is_batched(x, level) or any(_is_batched(a, level) for a in args[1:]):
        raise Fallback
    _no_static_arrays(args[1:])
    return _out(cls.apply(_front(x), *args[1:]), level)


def solve(cls, level, args):
    A, B, vector = args
    return _out(cls.apply(_expand_to(A, level), _expand_to(B, level), vector), level)


# -- shape ops -----------------------------------------------------------------------------------------
def view(cls, level, args):
    x, shp = args
    p = _front(x)
    return _out(cls.apply(p, (p.shape[0],) + tuple(shp)), level)


def permute(cls, level, args):
    x, dims = args
    if len(dims) != x.ndim:
        raise Fallback
    return _out(cls.apply(_front(x), (0,) + tuple(_shift(d, x.ndim) for d in dims)), level)


def expand(cls, level, args):
    x, shp = args
    p = _aligned(x, level, len(shp))
    return _out(cls.apply(p, (p.shape[0],) + tuple(shp)), level)


def repeat(cls, level, args):
    x, reps = args
    p = _aligned(x, level, len(reps))
    return _out(cls.apply(p, (1,) + tuple(reps)), level)


def flip(cls, level, args):
    x, dims = args
    return _out(cls.apply(_front(x), tuple(_shift(d, x.ndim) for d in dims)), level)


def cat(cls, level, args):
    d, xs = args[0], args[1:]
    return _out(cls.apply(_shift(d, xs[0].ndim), *[_expand_to(x, level) for x in xs]), level)


def stack(cls, level, args):
    d, xs = args[0], args[1:]
    return _out(cls.apply(d % (xs[0].ndim + 1) + 1, *[_expand_to(x, level) for x in xs]), level)


def diagonal(cls, level, args):
    x, offset, d1, d2 = args
    return _out(cls.apply(_front(x), offset, _shift(d1, x.ndim), _shift(d2, x.ndim)), level)


def pad(cls, level, args):
    x, widths, value = args
    if len(widths) != x.ndim or _is_batched(value, level):
        raise Fallback
    return _out(cls.apply(_front(x), ((0, 0),) + tuple(widths), value), level)


# -- indexing ------------------------------------------------------------------------------------------
def getitem(cls, level, args):
    x, index = args
    _no_static_arrays(args)
    if not _is_batched(x, level):
        raise Fallback
    idx = index if isinstance(index, tuple) else (index,)
    return _out(cls.apply(_front(x), (slice(None),) + idx), level, _index_bdim(idx))


def _index_bdim(idx):
    """Where x[(slice(None),) + idx] puts the batch dim: 0, or after the advanced-index dims when
    NumPy moves those first (advanced indices not adjacent)."""
    arrays = [i for i in idx if isinstance(i, np.ndarray)]
    if arrays:
        adv = [k for k, i in enumerate(idx) if isinstance(i, np.ndarray)
               or isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))]
        if adv[-1] - adv[0] + 1 != len(adv):
            shapes = [(int(i.sum()),) if i.dtype == np.bool_ else i.shape for i in arrays]
            return len(np.broadcast_shapes(*shapes))
    return 0


def index_add(cls, level, args):
    """GetItem's backward (and its JVP) on a batched g: zeros with the batch in front, g added at
    the index behind a full slice, g's batch dim where getitem's rule put it."""
    g, index, shape = args
    _no_static_arrays(args)
    if not _is_batched(g, level):
        raise Fallback
    idx = index if isinstance(index, tuple) else (index,)
    p = _front(g)
    bdim = _index_bdim(idx)
    if bdim:
        p = p.movedim(0, bdim)
    return _out(cls.apply(p, (slice(None),) + idx, (p.shape[bdim],) + tuple(shape)), level)


def _index_at(index, level):
    """(index array batch first, True) for an array read through a tensor batched at `level`;
    (index, False) for a plain array; Fallback for one batched at another level."""
    if type(index) is _Physical:
        bt = index._bt
        if bt is None:
            return index.view(np.ndarray), False
        if bt._level != level or type(bt._value) is BatchedTensor:
            raise Fallback
        return _front(bt)._data, True
    return index, False


def gather(cls, level, args):
    x, d, index = args
    index, batched = _index_at(index, level)
    p = _expand_to(x, level)
    if not batched:
        index = np.broadcast_to(index, (p.shape[0],) + index.shape)
    return _out(cls.apply(p, _shift(d, x.ndim), index), level)


def embedding_rule(cls, level, args):
    w, idx, pad_idx = args
    idx, batched = _index_at(idx, level)
    if not _is_batched(w, level):
        if not batched:
            raise Fallback
        return _out(cls.apply(w, idx, pad_idx), level)
    if pad_idx is not None:   # one padding row per sample: not one row of the folded table
        raise Fallback
    # per-sample tables: the batch folded into the rows, sample b's indices offset by b * V
    pw = _front(w)
    B, V = pw.shape[0], pw.shape[1]
    if not batched:
        idx = np.broadcast_to(idx, (B,) + idx.shape)
    off = idx + (np.arange(B, dtype=idx.dtype) * V).reshape((B,) + (1,) * (idx.ndim - 1))
    return _out(cls.apply(pw.reshape(B * V, pw.shape[2]), off, None), level)


# -- matmul, linear, einsum -------------------------------------------------------------------------------
def matmul(cls, level, args):
    x, y = args
    rx, ry = x.ndim, y.ndim
    xs = x.unsqueeze(0) if rx == 1 else x   # logical ops: promote 1-d operands as matmul does
    ys = y.unsqueeze(1) if ry == 1 else y
    rank = max(xs.ndim, ys.ndim)
    px = _aligned(xs, level, rank) if _is_batched(xs, level) else xs
    py = _aligned(ys, level, rank) if _is_batched(ys, level) else ys
    out = cls.apply(px, py)   # physical (B, ..., M, N): the batch dim is never one of the last two
    if rx == 1:
        out = out.squeeze(-2)  # first, while N (a size-1 dim too when ry == 1) is still last
    if ry == 1:
        out = out.squeeze(-1)
    return _out(out, level)


def addmm(cls, level, args):
    x, w, b = args
    if not _is_batched(w, level) and not _is_batched(b, level):
        if x.ndim == 0:
            raise Fallback
        return _out(cls.apply(_front(x), w, b), level)
    # per-sample weights (vmap over grad's expanded parameters): one fused op on (B, N, in) rows
    if x.ndim == 0:
        raise Fallback
    B = _size(level)
    px = _expand_to(x, level)
    lead = tuple(px.shape[1:-1])
    px = px.reshape(B, -1, px.shape[-1])
    pb = None if b is None else _expand_to(b, level)
    out = PerSampleLinear.apply(px, _expand_to(w, level), pb)
    return _wrap(out.reshape(B, *lead, out.shape[-1]), 0, level)


class PerSampleLinear(Function):
    """out = x @ w^T + b with one weight per sample: x (B, N, in), w (B, out, in), b (B, out) or None;
    dx = g @ w,  dw = g^T x per sample,  db = g summed over N.

    vmap(grad(loss)) runs the linear layers through this (the weight a per-sample leaf expanded from
    one copy): for one row per sample dw is an outer product, written by a broadcast multiply, as
    numpy's matmul with an inner size of 1 is ~2-3x slower and was most of the per-sample gradient's
    time on the MNIST MLP."""
    batching = "per_sample_linear"
    onnx = NoRule("vmap's batched form of linear, made inside vmap only: export the function, not its vmap")

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        # batched, even where w is one weight expanded (batch stride 0): a single (B N, in) GEMM would be
        # one BLAS call, but multi-threaded BLAS on a loaded machine made it ~100x slower than these
        # small per-sample products, which BLAS runs on one thread
        out = np.matmul(x, np.swapaxes(w, -1, -2))
        if b is not None:
            out += b[:, None, :]
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad
        dx = g @ w if nx else None
        dw = None
        if nw:
            dw = g.mT * x if x.shape[-2] == 1 else g.mT @ x   # (B, out, 1) * (B, 1, in): the outer products
        return dx, dw, (g.sum(-2) if nb else None)

    @staticmethod
    def jvp(ctx, tx, tw, tb):
        x, w = ctx.saved_tensors   # tx @ w^T + x @ tw^T + tb
        out = None
        for term in (None if tx is None else PerSampleLinear.apply(tx, w, None),
                     None if tw is None else PerSampleLinear.apply(x, tw, None),
                     None if tb is None else tb.unsqueeze(-2)):
            if term is not None:
                out = term if out is None else out + term
        return out


def per_sample_linear(cls, level, args):
    """PerSampleLinear under an outer vmap: the same product in batched matmuls (logical tensors)."""
    from ..ops.linalg import matmul as mm
    x, w, b = args
    out = mm(x, w.transpose(-1, -2))
    return out + b.unsqueeze(-2) if b is not None else out


def einsum_rule(cls, level, args):
    eq, xs = args[0], args[1:]
    if "." in eq or "->" not in eq:
        raise Fallback
    lhs, rhs = eq.split("->")
    used = set(eq)
    z = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in used)
    terms = lhs.split(",")
    new_terms, new_xs = [], []
    for t, x in zip(terms, xs):
        if _is_batched(x, level):
            new_terms.append(z + t)
            new_xs.append(_front(x))
        else:
            new_terms.append(t)
            new_xs.append(x)
    return _out(cls.apply(",".join(new_terms) + "->" + z + rhs, *new_xs), level)


# -- conv and pooling ------------------------------------------------------------------------------------
def _folded_conv(cls, level, args):
    """A convolution whose weights and bias are not batched: the batch folded into N."""
    x, w, b, geo, groups = args
    N, B = geo.N, _size(level)
    p = _expand_to(x, level)
    out = cls.apply(p.reshape(B * N, *p.shape[2:]), w, b, geo._replace(N=B * N), groups)
    return _out(out.reshape(B, N, *out.shape[1:]), level)


def convolution(cls, level, args):
    """conv1d/2d/3d (x, w, b, geo, groups), x logical (N, C, *spatial): the batch folded into N, or,
    for per-sample weights, into the channel groups (B times as many groups)."""
    x, w, b, geo, groups = args
    if x.ndim < 3:
        raise Fallback
    if not _is_batched(w, level) and not _is_batched(b, level):
        return _folded_conv(cls, level, args)
    N, B = geo.N, _size(level)
    px = _expand_to(x, level)                                     # (B, N, C, *spatial)
    px = px.permute(1, 0, *range(2, px.ndim)).reshape(N, B * geo.C, *px.shape[3:])
    pw = _expand_to(w, level)
    pw = pw.reshape(B * pw.shape[1], *pw.shape[2:])
    pb = None if b is None else _expand_to(b, level).reshape(-1)
    out = cls.apply(px, pw, pb, geo._replace(C=B * geo.C), groups * B)
    return _out(out.reshape(N, B, out.shape[1] // B, *out.shape[2:]), level, 1)


def conv_transpose(cls, level, args):
    """conv_transpose1d/2d/3d with shared weights: the batch folded into N (per-sample weights loop)."""
    if args[0].ndim < 3 or _is_batched(args[1], level) or _is_batched(args[2], level):
        raise Fallback
    return _folded_conv(cls, level, args)


def fold_into_n(cls, level, args):
    """An op on x (N, C, *spatial) whose samples are independent along N (pooling, unpooling,
    resizing): the batch folded into N. Other tensor arguments batched as x (max_unpool's indices)
    are folded the same way; a geometry argument's N is scaled to match."""
    x = args[0]
    if x.ndim < 3 or not _is_batched(x, level):
        raise Fallback
    B, N = _size(level), x.shape[0]
    new = []
    for a in args:
        if _is_batched(a, level):
            if a.ndim != x.ndim or a.shape[0] != N:
                raise Fallback
            p = _front(a)
            new.append(p.reshape(B * N, *p.shape[2:]))
        elif hasattr(a, "_data") or type(a) is _Physical:
            raise Fallback   # a tensor shared by the batch: not of the folded layout
        elif isinstance(a, tuple) and hasattr(a, "_fields") and "N" in a._fields:
            new.append(a._replace(N=B * N))
        else:
            new.append(a)
    out = cls.apply(*new)
    outs = out if type(out) is tuple else (out,)
    res = tuple(_wrap(o.reshape(B, N, *o.shape[1:]), 0, level) for o in outs)
    return res if type(out) is tuple else res[0]


def layer_norm(cls, level, args):
    x, w, b, axes, eps, stats = args
    if _is_batched(w, level) or _is_batched(b, level) or stats is not None:
        raise Fallback
    return _out(cls.apply(_front(x), w, b, tuple(_shift(a, x.ndim) for a in axes), eps, stats), level)


# -- losses ------------------------------------------------------------------------------------------------
def _reduce_per_sample(out, reduction, level, denom=None):
    """out: physical per-element losses (B, ...); reduced over everything but the batch."""
    if reduction == "none":
        return _wrap(out, 0, level)
    flat = out.reshape(out.shape[0], -1)
    if reduction == "sum":
        return _wrap(flat.sum(1), 0, level)
    if denom is None:
        return _wrap(flat.mean(1), 0, level)
    return _wrap(flat.sum(1) / denom, 0, level)


def cross_entropy(cls, level, args):
    """CrossEntropyLoss(input, target, weight, probs, ignore_index, reduction, label_smoothing) or
    NllLoss(input, target, weight, ignore_index, reduction)."""
    ce = len(args) == 7
    if ce:
        z, target, w, probs, ignore_index, reduction, eps = args
    else:   # NllLoss(input, target, weight, ignore_index, reduction)
        (z, target, w, ignore_index, reduction), probs, eps = args, False, 0.0
    if _is_batched(w, level) or z.ndim < 2:
        raise Fallback
    B = _size(level)
    pz = _expand_to(z, level)
    pt = _expand_to(target, level)
    N = pz.shape[1]
    fz = pz.reshape(B * N, *pz.shape[2:])
    ft = pt.reshape(B * N, *pt.shape[2:])
    if ce:
        out = cls.apply(fz, ft, w, probs, ignore_index, "none", eps)
    else:
        out = cls.apply(fz, ft, w, ignore_index, "none")
    out = out.reshape(B, N, *out.shape[1:])
    denom = None
    if reduction == "mean" and not (ce and probs):
        valid = pt != ignore_index
        wt = valid.to(z.dtype)
        if w is not None:
            wt = w[pt * valid] * wt
        denom = wt.reshape(B, -1).sum(1)
    return _reduce_per_sample(out, reduction, level, denom)


def mse(cls, level, args):
    x, y, reduction = args
    rank = max(x.ndim, y.ndim)
    px = _aligned(x, level, rank) if _is_batched(x, level) else x
    py = _aligned(y, level, rank) if _is_batched(y, level) else y
    out = cls.apply(px, py, "none")
    if out.ndim == rank:   # neither operand carried the batch (cannot happen) - be safe
        raise Fallback
    return _reduce_per_sample(out, reduction, level)


# -- the table -----------------------------------------------------------------------------------------------
