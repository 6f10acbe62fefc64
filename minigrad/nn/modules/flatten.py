"""Flatten and Unflatten."""
from __future__ import annotations

from ...tensor import Tensor
from .module import Module


class Flatten(Module):
    r"""Flatten a contiguous range of dimensions into one, as ``torch.nn.Flatten``.

    Args:
        start_dim (int): first dimension to flatten. Default: 1 (keeps the batch dimension).
        end_dim (int): last dimension to flatten. Default: -1.

    Shape:
        - Input: :math:`(*, S_{start}, ..., S_{end}, *)`.
        - Output: :math:`(*, \prod_{i=start}^{end} S_i, *)`.

    Example:
        >>> nn.Flatten()(mg.randn(32, 1, 5, 5)).shape
        (32, 25)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Expand one dimension into a shape, as ``torch.nn.Unflatten``.

    Args:
        dim (int): the dimension to unflatten.
        unflattened_size (tuple of int): its new shape (one entry may be -1).

    Shape:
        - Input: :math:`(*, S_{dim}, *)`.
        - Output: :math:`(*, U_1, ..., U_n, *)` with :math:`\prod U_i = S_{dim}`.

    Example:
        >>> nn.Unflatten(1, (2, 5, 5))(mg.randn(2, 50)).shape
        (2, 2, 5, 5)
    """

    def __init__(self, dim: int, unflattened_size: tuple[int, ...] | list[int]) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError(f"invalid argument: 'dim' should be an int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            + type(unflattened_size).__name__)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
