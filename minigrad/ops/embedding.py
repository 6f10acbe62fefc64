"""Embedding lookup (Embedding) and its backward op (EmbeddingDenseBackward, rows added at the indices)."""
import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor

__all__ = []  # Function classes only: their public wrappers are nn.functional's


class Embedding(Function):
    """out = weight[idx];  dweight = EmbeddingDenseBackward(g): rows of g added at idx (none at padding_idx)"""
    batching = "embedding_rule"

    op_name = "embedding"

    @staticmethod
    def forward(ctx, w, idx, pad):
        ctx.idx, ctx.pad, ctx.V = idx, pad, w.shape[0]
        return np.take(w, idx, axis=0)

    @staticmethod
    def backward(ctx, g):
        return EmbeddingDenseBackward.apply(g, ctx.idx, ctx.V, ctx.pad), None, None

    @staticmethod
    def jvp(ctx, tw, _idx, _pad):
        # the lookup is linear in the weight: the tangent's rows, padding row included (as PyTorch's
        # forward-mode embedding; only the backward leaves the padding row out)
        return None if tw is None else Embedding.apply(tw, ctx.idx, None)

    @staticmethod
    def onnx(e, c):
        return c.add("Gather", [e.args[0].name, c.operand(e.args[1], np.int64)], c.out(e), axis=0)


class EmbeddingDenseBackward(Function):
    """dw[v] = sum of g rows whose idx == v (zero at pad);  dg = gg[idx] (zero where idx == pad)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    jvp = NoRule("forward mode runs the double-VJP identity (no rule of its own yet)")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "embedding_backward"

    @staticmethod
    def forward(ctx, g, idx, V, pad):
        ctx.idx, ctx.pad = idx, pad
        D = g.shape[-1]
        out = np.zeros((V, D), dtype=g.dtype)
        np.add.at(out, idx.reshape(-1), g.reshape(-1, D))
        if pad is not None:
            out[pad] = 0
        return out

    @staticmethod
    def backward(ctx, gg):
        out = Embedding.apply(gg, ctx.idx, None)
        if ctx.pad is not None:
            out = out * Tensor._make((ctx.idx != ctx.pad)[..., None].astype(gg.dtype))
        return out, None, None, None


def renorm_rows_(weight, idx, max_norm, norm_type):
    """Scale the rows of weight that idx looks up to norm at most max_norm, in place (as PyTorch's
    embedding_renorm_): a write into the weight, so its version counter is bumped and a graph that
    saved the old weight raises at backward instead of using the new values."""
    rows = np.unique(idx)
    wd = weight._data
    norms = np.linalg.norm(wd[rows], ord=norm_type, axis=1)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(wd.dtype)
    wd[rows] *= scale[:, None]
    weight._bump_version()
