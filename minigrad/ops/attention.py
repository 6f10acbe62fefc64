"""Attention: scaled_dot_product_attention's core as one op (ScaledDotProductAttention).

    Z = q @ k^T * scale (+ the mask: -inf where a bool mask is False or above the causal diagonal, or
        an additive float mask),  P = softmax(Z) over the keys,  out = P @ v

Written as one node rather than its composite (matmul, mul, masked_fill, softmax, matmul) because
it is the inner loop of every Transformer: the composite made five to eight nodes per call, each
with its own (B, H, L, S) temporaries and passes over them (the masked_fill/where passes alone were
a fifth of a GPT step). Here the scores are one array, masked, exponentiated and normalised in
place; backward saves q, k, v and P (the only (B, H, L, S) array kept; PyTorch's math path keeps
the attention weights too, its flash kernel recomputes them from a per-row log-sum-exp):

    dv = P^T @ g,   dZ = P * (g @ v^T - rowsum(P * (g @ v^T))),   dq = dZ @ k * scale,
    dk = dZ^T @ q * scale,   d(float mask) = dZ

A query whose every key is masked (its row of Z all -inf) gets zero weights, a zero output and no
gradient, as PyTorch's _safe_softmax (softmax would give 0 / 0 = nan). Leading dimensions broadcast
as matmul's; the engine sums each gradient back to its input's shape. Dropout on P is not part of
the op: F.scaled_dot_product_attention with dropout_p > 0 runs the composite.
"""
import numpy as np

from .. import _pool
from ..autograd import function as _function, levels as _levels
from ..autograd.function import Function, NoRule, _plain

__all__ = []  # the public wrapper is nn.functional.scaled_dot_product_attention


def _scores(q, k, mask, scale, causal, softmax=False):
    """Z (a new array) with the mask applied; NumPy. softmax: P instead (_softmax_ of Z). Large
    scores with the threads chosen: the scaling, the causal mask and the softmax over row blocks on
    the pool (_rows_scale_mask, _softmax_rows)."""
    z = _pool.matmul(q, k.swapaxes(-1, -2))  # (the method: np.swapaxes is a Python wrapper)
    if z.size >= _ROWS_MIN and _pool.threads() > 1 and z.ndim >= 2 and z.flags.c_contiguous:
        _rows_scale_mask(z, scale, causal, softmax and mask is None)
        if mask is None:
            return z
        z = _mask(z, mask)
        return _softmax_rows(z) if softmax else z
    z *= z.dtype.type(scale)
    if causal:
        L, S = z.shape[-2:]
        np.copyto(z, -np.inf, where=~np.tri(L, S, dtype=bool))
    if mask is not None:
        z = _mask(z, mask)
    return _softmax_(z) if softmax else z


def _mask(z, mask):
    """z with a bool (False: -inf) or float (added) mask applied, in place where the shapes allow."""
    if mask is not None:
        shape = np.broadcast_shapes(z.shape, mask.shape)
        if shape != z.shape:     # a mask with more leading dims than the scores: the result has them
            z = np.broadcast_to(z, shape).copy()
        if mask.dtype == np.bool_:
            np.copyto(z, -np.inf, where=~mask)
        else:
            z += mask
    return z


# -- the pool (minigrad/_pool.py): the (B, H, L, S) passes split over rows (one query's scores) -----
# Every pass below works row by row (the scaling and masking elementwise, the softmax's reductions
# over one row's S scores), so a block of whole rows does exactly the serial pass's ufunc calls on
# its rows: the results are bitwise the serial ones for any thread count (tested in
# tests/perf_kernels/test_pool_seq.py). Chunks of whole rows fixed by the size (_pool.run_rows). The
# pool is used from _ROWS_MIN elements (the size whose serial time is _pool.WORK_NS), measured on
# the char-GPT's (32, 4, 128, 128) float32 scores: scale + causal mask + softmax ~2.2 ns per score,
# backward's dz pass ~1.1 ns (serial, best of 15, loaded shared 2-core machine): the lower one
# chosen for both. Each thread goes through its rows _SUB chunks (~128K scores) at a time, so the
# five passes of a block run in cache (single chunks cost more in calls than they saved).
_ROWS_MIN = _pool.min_elements(1.1)
_SUB = 4


def _by_chunks(fn, rows, S):
    """fn(lo, hi) over `rows` rows of S on the pool, each thread's range _SUB chunks (_pool.chunks)
    at a time: every pass of fn then runs over a block in cache instead of the thread's whole range
    (the rows are independent, so the grouping changes no bit)."""
    per = _pool.per_chunk(S) * _SUB

    def ranges(lo, hi):
        for b in range(lo, hi, per):
            fn(b, min(hi, b + per))
    _pool.run_rows(ranges, rows, S)


def _rows_scale_mask(z, scale, causal, softmax):
    """z *= scale, -inf above the causal diagonal, then (softmax) _softmax_, over blocks of rows on
    the pool: the serial passes' operations on each row."""
    L, S = z.shape[-2:]
    z2 = z.reshape(-1, S)
    s = z.dtype.type(scale)
    above = None
    if causal:   # the mask above the diagonal repeated down enough planes for any block (query r % L)
        rows = min(z2.shape[0], _pool.per_chunk(S) * _SUB)
        above = np.tile(~np.tri(L, S, dtype=bool), (-(-rows // L) + 1, 1))

    def fn(lo, hi):
        zb = z2[lo:hi]
        zb *= s
        if above is not None:
            i = lo % L
            np.copyto(zb, -np.inf, where=above[i:i + hi - lo])
        if softmax:
            _softmax_(zb)
    _by_chunks(fn, z2.shape[0], S)


def _softmax_rows(z):
    """_softmax_(z) over blocks of rows on the pool (large C-contiguous z, the threads chosen)."""
    if z.size < _ROWS_MIN or not z.flags.c_contiguous or z.ndim < 2 or _pool.threads() <= 1:
        return _softmax_(z)
    S = z.shape[-1]
    z2 = z.reshape(-1, S)
    _by_chunks(lambda lo, hi: _softmax_(z2[lo:hi]), z2.shape[0], S)
    return z


def _dz_rows(dz, P, s, keep):
    """backward's elementwise part over blocks of rows on the pool: dz -= rowsum(dz * P); dz *= P;
    (keep: dm = a copy of dz now); dz *= s. Returns dm (or None). The serial code's operations."""
    S = dz.shape[-1]
    d2, p2 = dz.reshape(-1, S), P.reshape(-1, S)
    dm = np.empty_like(dz) if keep else None
    m2 = dm.reshape(-1, S) if keep else None

    def fn(lo, hi):
        d, pb = d2[lo:hi], p2[lo:hi]
        d -= (d * pb).sum(axis=-1, keepdims=True)
        d *= pb
        if m2 is not None:
            m2[lo:hi] = d
        d *= s
    _by_chunks(fn, d2.shape[0], S)
    return dm


def _softmax_(z):
    """softmax over the last axis in place (exp(z - max) / sum, as Softmax's forward), rows all -inf
    giving 0; returns z."""
    # the ufuncs' reduce directly (what ndarray.max/sum call, the same bits, without their Python
    # wrappers: generation runs this per token on a (B, H, 1, S) array, where the calls are the cost);
    # whether any row is all -inf from one fmin over the row maxima (fmin skips nan)
    m = _max(z, axis=-1, keepdims=True)
    any_dead = m.size != 0 and _fmin(m, axis=None) == -np.inf
    if any_dead:
        dead = m == -np.inf
        m[dead] = 0
    np.subtract(z, m, out=z)
    np.exp(z, out=z)
    tot = _sum(z, axis=-1, keepdims=True)
    if any_dead:
        tot[dead] = 1
    np.true_divide(z, tot, out=z)
    return z


_max, _sum, _fmin = np.maximum.reduce, np.add.reduce, np.fmin.reduce


def _numpy_backward():
    """Whether the backward may run in NumPy: no graph of it is recorded (no create_graph), and no
    transform or trace is open that must see its ops; an observer (the profiler, the doctor) may be."""
    f = _function
    return not f._state.enabled and (not f._intercept or (not _levels._open[0] and f._state.tracer is None))


def _traced_backward():
    """Whether the backward is being recorded by a trace (and no other transform), with no graph of
    it (no create_graph): the forward's P, which the trace holds as a side output of the forward's
    equation, is then read as it is, as the NumPy path reads it, instead of recomputed from q and k
    (two products and a softmax more, in the trace and in every run of the compiled program)."""
    f = _function
    return not f._state.enabled and f._state.tracer is not None and \
        all(lv.kind == "trace" for lv in f._state.levels)


def _probs(q, k, mask, scale, causal):
    """P in Tensor ops from Tensors (the recorded, differentiable form: for create_graph, JVP and
    F.scaled_dot_product_attention's dropout path). A query whose every score is -inf gets weights 0
    (PyTorch's _safe_softmax): its scores are zeroed before the softmax, so no nan reaches backward."""
    from ..creation import tensor
    z = (q @ k.mT) * scale
    if causal:
        L, S = z.shape[-2:]
        z = z.masked_fill(tensor(~np.tri(L, S, dtype=bool)), float("-inf"))
    if mask is not None:
        z = z.masked_fill(~mask, float("-inf")) if mask.dtype == np.bool_ else z + mask
    dead = (z == float("-inf")).all(-1, keepdim=True)
    return z.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)


class ScaledDotProductAttention(Function):
    """out = softmax(q k^T * scale + mask) v;  see the module docstring for the VJP"""
    op_name = "scaled_dot_product_attention"
    batching = "elementwise"   # leading dims broadcast: the batch dim to the front of each batched operand
    fusion = NoRule("matmul-bound (two products per call), not an elementwise loop")

    @staticmethod
    def forward(ctx, q, k, v, mask, scale, causal):
        p = _scores(q, k, mask, scale, causal, softmax=True)
        ctx.scale, ctx.causal = scale, causal
        ctx.save_for_backward(q, k, v, mask, p)
        return _pool.matmul(p, v)

    @staticmethod
    def backward(ctx, g):
        q, k, v, mask, p = ctx.saved_tensors
        nq, nk, nv, nm = ctx.needs_input_grad[:4]
        s = ctx.scale
        if not _numpy_backward():   # create_graph, a transform, a trace: in Tensor ops
            if not _traced_backward():  # P from q, k: differentiable (create_graph), or batched
                p = _probs(q, k, mask, s, ctx.causal)
            dp = g @ v.mT
            dz = p * (dp - (dp * p).sum(-1, keepdim=True))
            dzs = dz * s   # scaled before the products, as the NumPy path below (the same bits)
            return (dzs @ k if nq else None, dzs.mT @ q if nk else None,
                    p.mT @ g if nv else None, dz if nm else None, None, None)
        P, G = p._data, g._data
        dv = _pool.matmul(np.swapaxes(P, -1, -2), G) if nv else None
        dz = None
        if nq or nk or nm:
            dz = _pool.matmul(G, np.swapaxes(v._data, -1, -2))
        if dz is not None and dz.size >= _ROWS_MIN and _pool.threads() > 1 and dz.shape == P.shape \
                and dz.flags.c_contiguous and P.flags.c_contiguous and dz.dtype == P.dtype:
            dm = _dz_rows(dz, P, dz.dtype.type(s), nm)
        else:
            if dz is not None:
                dz -= (dz * P).sum(axis=-1, keepdims=True)
                dz *= P
            dm = dz.copy() if nm else None
            if dz is not None:
                dz *= dz.dtype.type(s)
        return (None if not nq else _plain(_pool.matmul(dz, k._data)),
                None if not nk else _plain(_pool.matmul(np.swapaxes(dz, -1, -2), q._data)),
                None if dv is None else _plain(dv), None if dm is None else _plain(dm), None, None)

    @staticmethod
    def jvp(ctx, tq, tk, tv, tm, *_):
        q, k, v, mask, _p = ctx.saved_tensors
        p = _probs(q, k, mask, ctx.scale, ctx.causal)
        tz = None
        for t in ((tq @ k.mT) if tq is not None else None, (q @ tk.mT) if tk is not None else None):
            if t is not None:
                tz = t if tz is None else tz + t
        if tz is not None:
            tz = tz * ctx.scale
        if tm is not None:
            tz = tm if tz is None else tz + tm
        out = None
        if tz is not None:
            out = (p * (tz - (tz * p).sum(-1, keepdim=True))) @ v
        if tv is not None:
            out = p @ tv if out is None else out + p @ tv
        return out

    @staticmethod
    def onnx(e, c):
        # MatMul(q, k^T) * scale, masked (Where / Add), Softmax, zeros for rows all -inf, MatMul with v
        q, k, v, mask, scale, causal = e.args
        dt = c.dt(e)
        r = len(k.shape)
        kt = c.add("Transpose", [k.name], perm=list(range(r - 2)) + [r - 1, r - 2])
        z = c.add("Mul", [c.add("MatMul", [q.name, kt]), c.scalar(scale, dt)])
        neg = c.scalar(-np.inf, dt)
        if causal:
            L, S = q.shape[-2], k.shape[-2]
            z = c.add("Where", [c.const(np.tri(L, S, dtype=bool)), z, neg])
        if mask is not None:
            z = c.add("Where", [mask.name, z, neg]) if mask.dtype == np.bool_ else c.add("Add", [z, mask.name])
        p = c.add("Softmax", [z], axis=-1)
        p = c.add("Where", [c.add("IsNaN", [p]), c.scalar(0, dt), p])
        return c.add("MatMul", [p, v.name], c.out(e))
