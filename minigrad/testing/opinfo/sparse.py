"""Registry entries for the embedding-bag op (nn.functional.embedding_bag, ops/embedding_bag.py): `ops`.

Kept beside nn.py (same `fcase` entries) so that the nn family file is not edited for it. The samples
cover the three modes, 2-D input (fixed bags) and 1-D input with offsets (an empty bag included),
include_last_offset, per_sample_weights (differentiable) and padding_idx. scale_grad_by_freq (a
gradient that is not the derivative, by design) is tested in tests/nn/test_embedding_bag.py. Random float weights: the
maxima have no ties, so finite differences apply to "max" too.
"""
import numpy as np

from .core import Const
from .nn import fcase


def _np_embedding_bag(idx, w, offsets=None, mode="mean", psw=None, include_last_offset=False, padding_idx=None):
    """The bags one by one, in NumPy."""
    idx = np.asarray(idx)
    if idx.ndim == 2:
        B, L = idx.shape
        bounds = [(b * L, b * L + L) for b in range(B)]
        idx = idx.reshape(-1)
        psw = None if psw is None else np.asarray(psw).reshape(-1)
    else:
        off = list(np.asarray(offsets))
        ends = off[1:] if include_last_offset else off[1:] + [idx.size]
        bounds = list(zip(off, ends))
    out = np.zeros((len(bounds), w.shape[1]), w.dtype)
    for b, (s, e) in enumerate(bounds):
        keep = [n for n in range(s, e) if idx[n] != padding_idx]
        if not keep:
            continue
        rows = w[idx[keep]] * (1.0 if psw is None else psw[keep][:, None])
        out[b] = rows.sum(0) if mode == "sum" else rows.mean(0) if mode == "mean" else rows.max(0)
    return out


_IDX1 = Const(np.array([1, 2, 4, 4, 3, 0, 2]))
_OFF = Const(np.array([0, 2, 2, 5]))          # bags [1, 2], [], [4, 4, 3], [0, 2]
_IDX2 = Const(np.array([[1, 0, 3], [4, 4, 2]]))


_NO_TORCH_GRADGRAD = ("PyTorch has no derivative for _embedding_bag_per_sample_weights_backward; gradgradcheck "
                      "checks ours")


def _bag(mode, **kw):
    return lambda F, i, w, o: F.embedding_bag(i, w, o, mode=mode, **kw)


ops = [
    fcase("embedding_bag", "mean_2d", [_IDX2, (5, 3)], lambda F, i, w: F.embedding_bag(i, w),
          lambda i, w: _np_embedding_bag(i, w), grad_fn="EmbeddingBag"),
    fcase("embedding_bag", "sum_offsets", [_IDX1, (5, 3), _OFF], _bag("sum"),
          lambda i, w, o: _np_embedding_bag(i, w, o, "sum"), grad_fn="EmbeddingBag"),
    fcase("embedding_bag", "mean_offsets_padding", [_IDX1, (5, 3), _OFF], _bag("mean", padding_idx=4),
          lambda i, w, o: _np_embedding_bag(i, w, o, "mean", padding_idx=4), grad_fn="EmbeddingBag"),
    fcase("embedding_bag", "max_offsets", [_IDX1, (5, 3), _OFF], _bag("max"),
          lambda i, w, o: _np_embedding_bag(i, w, o, "max"), grad_fn="EmbeddingBag"),
    fcase("embedding_bag", "max_2d_padding", [_IDX2, (5, 3)],
          lambda F, i, w: F.embedding_bag(i, w, mode="max", padding_idx=4),
          lambda i, w: _np_embedding_bag(i, w, mode="max", padding_idx=4), grad_fn="EmbeddingBag"),
    fcase("embedding_bag", "sum_last_offset", [_IDX1, (5, 3), Const(np.array([0, 3, 3, 7]))],
          _bag("sum", include_last_offset=True),
          lambda i, w, o: _np_embedding_bag(i, w, o, "sum", include_last_offset=True), grad_fn="EmbeddingBag"),
    fcase("embedding_bag", "per_sample_weights", [_IDX1, (5, 3), _OFF, (7,)],
          lambda F, i, w, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p, padding_idx=2),
          lambda i, w, o, p: _np_embedding_bag(i, w, o, "sum", psw=p, padding_idx=2), grad_fn="EmbeddingBag",
          skips={"torch_double_backward": _NO_TORCH_GRADGRAD}),
    fcase("embedding_bag", "per_sample_weights_2d", [_IDX2, (5, 3), (2, 3)],
          lambda F, i, w, p: F.embedding_bag(i, w, mode="sum", per_sample_weights=p),
          lambda i, w, p: _np_embedding_bag(i, w, mode="sum", psw=p), grad_fn="EmbeddingBag",
          skips={"torch_double_backward": _NO_TORCH_GRADGRAD}),
]
