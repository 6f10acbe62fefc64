"""Embedding and EmbeddingBag."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._utils import _check_cpu, _empty
from .module import Module


class Embedding(Module):
    r"""A lookup table of fixed-size vectors, as ``torch.nn.Embedding``.

    Args:
        num_embeddings (int): size of the dictionary.
        embedding_dim (int): size of each vector.
        padding_idx (int, optional): this row gets no gradient and starts as zeros (negative
            values count from the end).
        max_norm (float, optional): rows looked up with a larger norm are renormalised in place.
        norm_type (float): the p of the norm for ``max_norm``. Default: 2.
        scale_grad_by_freq (bool): scale gradients by the inverse word frequency. Default: ``False``.
        sparse (bool): accepted for compatibility; gradients are dense. Default: ``False``.
        _weight (Tensor, optional): initial weight of shape ``(num_embeddings, embedding_dim)``.
        _freeze (bool): the weight does not require grad. Default: ``False``.

    Attributes:
        weight: shape ``(num_embeddings, embedding_dim)``, initialised from :math:`\mathcal{N}(0, 1)`.

    Shape:
        - Input: :math:`(*)`, integer indices.
        - Output: :math:`(*, \text{embedding\_dim})`.

    Example:
        >>> emb = nn.Embedding(10, 3)
        >>> emb(mg.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])).shape
        (2, 4, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(_empty(num_embeddings, embedding_dim, dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """Draw the weight from N(0, 1) and zero the padding row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, sparse: bool = False) -> "Embedding":
        """An Embedding whose weight is ``embeddings`` (2-D); frozen unless ``freeze=False``."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)



class EmbeddingBag(Module):
    r"""Sums, means or maxima of bags of embedding rows, as ``torch.nn.EmbeddingBag``: an
    [`Embedding`][minigrad.nn.Embedding] followed by a reduction over each bag, without the per-index rows kept.

    Args:
        num_embeddings (int): size of the dictionary.
        embedding_dim (int): size of each vector.
        max_norm (float, optional): rows looked up with a larger norm are renormalised in place.
        norm_type (float): the p of the norm for ``max_norm``. Default: 2.
        scale_grad_by_freq (bool): scale gradients by the inverse index frequency (not with "max").
            Default: ``False``.
        mode (str): ``"sum"``, ``"mean"`` or ``"max"``. Default: ``"mean"``.
        sparse (bool): sparse gradients are not supported (forward raises). Default: ``False``.
        _weight (Tensor, optional): initial weight of shape ``(num_embeddings, embedding_dim)``.
        include_last_offset (bool): ``offsets`` ends with the end of the last bag. Default: ``False``.
        padding_idx (int, optional): this index is left out of every bag, gets no gradient and its row
            starts as zeros (negative values count from the end).

    Attributes:
        weight: shape ``(num_embeddings, embedding_dim)``, initialised from :math:`\mathcal{N}(0, 1)`.

    Shape:
        - Input: ``(B, N)`` (B bags of N indices, ``offsets`` None) or ``(N,)`` with ``offsets`` ``(B,)``
          (``(B + 1,)`` with ``include_last_offset``); ``per_sample_weights`` as the input (mode "sum").
        - Output: :math:`(B, \text{embedding\_dim})`.

    Example:
        >>> bag = nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag(mg.tensor([1, 2, 4, 5, 4, 3, 2, 9]), mg.tensor([0, 4])).shape
        (2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_empty(num_embeddings, embedding_dim, dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """Draw the weight from N(0, 1) and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                               self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> "EmbeddingBag":
        """An EmbeddingBag whose weight is ``embeddings`` (2-D); frozen unless ``freeze=False``."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
