"""Embedding bags: EmbeddingBag (sums, means or maxima of embedding rows over bags of indices, one
node) and its wrapper nn.functional.embedding_bag, as torch.nn.functional.embedding_bag.

The forward is NumPy: the rows looked up, scaled (per_sample_weights, 1/bag size for "mean", 0 at
padding_idx) and reduced per bag with np.add.reduceat / np.maximum.reduceat. The backward and the JVP
are written with the embedding ops (ops/embedding.py: Embedding gathers rows, EmbeddingDenseBackward
adds rows at indices), so they are differentiable again.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from .embedding import Embedding, EmbeddingDenseBackward, renorm_rows_

__all__ = []  # the Function class only: its public wrapper is nn.functional's (embedding_bag below)

_MODES = ("sum", "mean", "max")


def _const(a):
    return Tensor._make(np.ascontiguousarray(a))


class EmbeddingBag(Function):
    """out[b] = reduce over n in bag b of c[n] * weight[idx[n]]: reduce = sum (c = per_sample_weights
    or 1), mean (c = 1 / bag size) or max (per column; c = 1); entries equal to padding_idx are left
    out, empty bags give zeros.  dweight = the rows of g[bag(n)] * c[n] added at idx[n] (max: g at each
    column's maximising row);  dper_sample_weights[n] = g[bag(n)] . weight[idx[n]] (0 at padding)."""
    _torch_edges = (0, 1)  # weight, per_sample_weights (an edge in PyTorch even when None)
    batching = NoRule("embedding_bag has no vmap rule yet: vmap runs it once per sample")
    onnx = NoRule("embedding_bag has no ONNX mapping yet (ONNX has no EmbeddingBag operator; it would be "
                  "Gather then a segment reduction)")

    op_name = "embedding_bag"

    @staticmethod
    def forward(ctx, w, psw, idx, offsets, include_last_offset, mode, pad, scale_grad_by_freq):
        ctx.save_for_backward(w, psw)        # psw as passed (the input's shape): reshaped in backward
        idx, starts, ends = _bags(idx, offsets, include_last_offset)
        psw = None if psw is None else psw.reshape(-1)
        B, (V, D) = starts.size, w.shape
        M = int(ends[-1]) if B else 0        # entries past the last bag (include_last_offset) are in none
        sel = idx[:M]
        lengths = ends - starts
        bag_of = np.repeat(np.arange(B), lengths)
        valid = np.ones(M, bool) if pad is None else sel != pad
        ne = lengths > 0                     # reduceat over the non-empty bags only (an empty segment
        first = starts[ne]                   # would give the row at its start, not a zero)
        out = np.zeros((B, D), w.dtype)
        ctx.sel, ctx.bag_of, ctx.mode, ctx.V, ctx.B, ctx.valid = sel, bag_of, mode, V, B, valid
        if mode == "max":
            rows = w[sel]
            rows[~valid] = -np.inf
            amax = np.full((B, D), -1, np.int64)
            if M:
                best = np.maximum.reduceat(rows, first, axis=0)
                # the first row reaching each column's maximum (PyTorch keeps the first on ties)
                cand = np.where(rows == np.repeat(best, lengths[ne], axis=0), np.arange(M)[:, None], M)
                amax[ne] = sel[np.minimum.reduceat(cand, first, axis=0)]   # the entry's table row
                has = np.add.reduceat(valid, first) > 0
                best[~has] = 0
                amax[np.flatnonzero(ne)[~has]] = -1
                out[ne] = best
            # the backward's index arrays, made here: ctx's arrays are what a compiled backward rebinds
            ctx.flat, ctx.has = _flat(amax, D), (amax >= 0).astype(w.dtype)
            return out
        coef = valid.astype(w.dtype)
        if mode == "mean":
            count = np.bincount(bag_of, weights=valid, minlength=B)
            coef /= np.maximum(count, 1)[bag_of].astype(w.dtype)
        ctx.coef = coef                      # without per_sample_weights (they are a differentiable input)
        ctx.wcoef = coef                     # the weight gradient's coefficients
        if scale_grad_by_freq and M:         # ... with row v's divided by v's count in the input
            ctx.wcoef = coef / np.bincount(idx, minlength=V)[sel].astype(w.dtype)
        ctx.validf = valid.astype(w.dtype)
        if M:
            c = coef if psw is None else coef * psw[:M]
            out[ne] = np.add.reduceat(w[sel] * c[:, None], first, axis=0)
        return out

    @staticmethod
    def backward(ctx, g):
        w, psw = ctx.saved_tensors
        psw_shape = None if psw is None else psw.shape
        psw = None if psw is None else psw.reshape(-1)
        nw, npsw = ctx.needs_input_grad[:2]
        dw = dpsw = None
        M = ctx.sel.size
        if ctx.mode == "max":
            if nw:
                B, D = ctx.has.shape
                dw = EmbeddingDenseBackward.apply((g * _const(ctx.has)).reshape(B * D, 1), ctx.flat, ctx.V * D,
                                                  None).reshape(ctx.V, D)
            return (dw, None) + (None,) * 6
        gb = Embedding.apply(g, ctx.bag_of, None)                      # (M, D): each entry's bag gradient
        if nw:
            c = _const(ctx.wcoef)
            if psw is not None:
                c = c * psw[:M]
            dw = EmbeddingDenseBackward.apply(gb * c.unsqueeze(-1), ctx.sel, ctx.V, None)
        if npsw:
            dpsw = (gb * Embedding.apply(w, ctx.sel, None)).sum(-1) * _const(ctx.validf)
            if M < psw.shape[0]:
                from .shape import cat
                dpsw = cat([dpsw, _const(np.zeros(psw.shape[0] - M, g.dtype))])
            dpsw = dpsw.reshape(psw_shape)
        return (dw, dpsw) + (None,) * 6

    @staticmethod
    def jvp(ctx, tw, tpsw, *_static):
        w, psw = ctx.saved_tensors
        psw = None if psw is None else psw.reshape(-1)
        tpsw = None if tpsw is None else tpsw.reshape(-1)
        M = ctx.sel.size
        if ctx.mode == "max":
            if tw is None:
                return None
            B, D = ctx.has.shape
            return Embedding.apply(tw.reshape(-1, 1), ctx.flat, None).reshape(B, D) * _const(ctx.has)
        out = None
        if tw is not None:
            c = _const(ctx.coef) if psw is None else _const(ctx.coef) * psw[:M]
            out = _bag_sum(Embedding.apply(tw, ctx.sel, None) * c.unsqueeze(-1), ctx)
        if tpsw is not None:
            t = _bag_sum(Embedding.apply(w, ctx.sel, None) * (tpsw[:M] * _const(ctx.coef)).unsqueeze(-1), ctx)
            out = t if out is None else out + t
        return out


def _bag_sum(rows, ctx):
    """(M, D) rows added per bag: (B, D)."""
    return EmbeddingDenseBackward.apply(rows, ctx.bag_of, ctx.B, None)


def _flat(amax, D):
    """amax (B, D) row indices as indices into the (V * D, 1) view of the table; -1 (no row) -> 0."""
    return np.where(amax >= 0, amax * D + np.arange(D), 0).reshape(-1)


def _bags(idx, offsets, include_last_offset):
    """(indices (N,), starts (B,), ends (B,)) of the bags: a 2-D input's rows, or a 1-D input cut at
    offsets (checked here, in the op, so that traced and vmapped calls check them too)."""
    if idx.ndim == 2:
        B, L = idx.shape
        starts = np.arange(B, dtype=np.int64) * L
        return idx.reshape(-1), starts, starts + L
    off = offsets.astype(np.int64).reshape(-1)
    N = idx.size
    if off.size and off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                           f"from position 0. However, got {int(off[0])}")
    if off.size and off[-1] > N:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {N} but got offsets[-1] "
                           f"of {int(off[-1])}")
    if np.any(np.diff(off) < 0):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}")
    if include_last_offset:
        if off.size == 0:
            raise RuntimeError("embedding_bag: include_last_offset=True needs at least one offset "
                               "(the end of the last bag)")
        return idx, off[:-1], off[1:]
    return idx, off, np.append(off[1:], N).astype(np.int64)


def _index_array(t, what):
    a = t._data if isinstance(t, Tensor) else np.asarray(t)
    if a.dtype.kind not in "iu":
        raise RuntimeError(f"embedding_bag: expected {what} to have an integer dtype (int64 or int32), "
                           f"got {a.dtype}")
    return a


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    r"""Sums, means or maxima of bags of embedding rows, without the intermediate (N, D) lookups kept
    (``torch.nn.functional.embedding_bag``).

    Args:
        input (Tensor): integer indices. 2-D ``(B, N)``: B bags of N indices each (``offsets`` must be
            None); 1-D ``(N,)``: the bags are given by ``offsets``.
        weight (Tensor): the table, ``(num_embeddings, embedding_dim)``.
        offsets (Tensor, optional): 1-D, the start of each bag in a 1-D ``input`` (``offsets[0]`` is 0,
            non-decreasing); bag i is ``input[offsets[i]:offsets[i + 1]]``, the last one runs to the end.
        max_norm (float, optional): rows looked up with a larger norm are renormalised in place.
        norm_type (float): the p of the norm for ``max_norm``. Default: 2.
        scale_grad_by_freq (bool): divide the weight gradient of each row by how often it occurs in
            ``input`` (not with ``mode="max"``). Default: ``False``.
        mode (str): ``"sum"``, ``"mean"`` or ``"max"`` (per column). Default: ``"mean"``.
        sparse (bool): sparse gradients are not supported (raises). Default: ``False``.
        per_sample_weights (Tensor, optional): float weights of ``input``'s shape, multiplying each row
            before the sum; ``mode="sum"`` only. Differentiable.
        include_last_offset (bool): ``offsets`` has one more entry, the end of the last bag.
        padding_idx (int, optional): entries equal to it are left out of their bag (of the mean's
            count too) and give no gradient.

    Shape:
        output: ``(B, embedding_dim)``; an empty bag gives a row of zeros.

    Example:
        >>> w = mg.arange(10.0).reshape(5, 2)
        >>> F.embedding_bag(mg.tensor([1, 2, 4, 3]), w, mg.tensor([0, 2]), mode="sum").tolist()
        [[6.0, 8.0], [14.0, 16.0]]
    """
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding_bag: weight must be a Tensor, got {type(weight).__name__}")
    idx = _index_array(input, "indices")
    shape = tuple(input.shape) if isinstance(input, Tensor) else idx.shape   # per sample under vmap
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    psw = per_sample_weights
    off = None
    ndim = len(shape)
    if ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                             f"of fixed length sequences. However, found offsets of type {type(offsets)}")
    elif ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        off = _index_array(offsets, "offsets")
        if (len(offsets.shape) if isinstance(offsets, Tensor) else off.ndim) != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported (gradients are dense)")
    V = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= V):
        bad = idx[(idx < 0) | (idx >= V)].flat[0]
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                           f"{int(bad)} (weight {tuple(weight.shape)})")
    if padding_idx is not None:
        if not -V <= padding_idx < V:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-V} through {V - 1}, "
                               f"but got {padding_idx}")
        padding_idx = padding_idx % V
    if max_norm is not None:
        renorm_rows_(weight, idx, max_norm, norm_type)
    if psw is not None:
        if mode != "sum":
            raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is "
                                      f"only supported for mode='sum' (got mode='{mode}'). Please open a "
                                      "feature request on GitHub.")
        if not isinstance(psw, Tensor):
            raise TypeError(f"embedding_bag: per_sample_weights must be a Tensor, got {type(psw).__name__}")
        if psw.dtype != weight.dtype:
            raise RuntimeError(f"embedding_bag: expected per_sample_weights to have weight's dtype "
                               f"{weight.dtype}, got {psw.dtype}")
    return EmbeddingBag.apply(weight, psw, idx, off, ndim == 1 and bool(include_last_offset), mode, padding_idx,
                              bool(scale_grad_by_freq))
