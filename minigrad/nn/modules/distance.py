"""Distance modules, as torch.nn's: CosineSimilarity, PairwiseDistance."""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class CosineSimilarity(Module):
    """Cosine similarity of x1 and x2 along dim, as torch.nn.CosineSimilarity."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p over the last dim, as torch.nn.PairwiseDistance."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
