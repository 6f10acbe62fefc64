"""Dropout."""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class Dropout(Module):
    r"""Zero each element with probability ``p`` during training, as ``torch.nn.Dropout``.

    The kept elements are scaled by :math:`1/(1-p)`, so that evaluation (where the module is the
    identity) needs no rescaling. Masks are drawn from the default generator (``mg.manual_seed``).

    Args:
        p (float): probability of an element being zeroed. Default: 0.5.
        inplace (bool): do it in place. Default: ``False``.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> m = nn.Dropout(p=0.2)
        >>> m(mg.randn(20, 16)).shape
        (20, 16)
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        if not self.training or self.p == 0:
            return input  # the identity in evaluation mode, as PyTorch
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class _DropoutNd(Dropout):
    _f = None

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._f(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) / (C, L) input during training, as ``torch.nn.Dropout1d``.

    Args:
        p (float): probability of a channel being zeroed. Default: 0.5.
        inplace (bool): do it in place. Default: ``False``.
    """
    _f = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) input during training, as ``torch.nn.Dropout2d``.

    Args:
        p (float): probability of a channel being zeroed. Default: 0.5.
        inplace (bool): do it in place. Default: ``False``.
    """
    _f = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) / (C, D, H, W) input during training, as ``torch.nn.Dropout3d``.

    Args:
        p (float): probability of a channel being zeroed. Default: 0.5.
        inplace (bool): do it in place. Default: ``False``.
    """
    _f = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Alpha dropout for SELU networks, as ``torch.nn.AlphaDropout``: during training each element is
    set to SELU's negative saturation value with probability ``p`` and the result is mapped affinely
    so that zero-mean unit-variance inputs keep that mean and variance; the identity in eval mode.

    Args:
        p (float): probability of an element being dropped. Default: 0.5.
        inplace (bool): do it in place. Default: ``False``.

    Example:
        >>> m = nn.AlphaDropout(p=0.2)
        >>> m(mg.randn(20, 16)).shape
        (20, 16)
    """
    _f = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels of an (N, C, ...) input, as ``torch.nn.FeatureAlphaDropout``.

    Args:
        p (float): probability of a channel being dropped. Default: 0.5.
        inplace (bool): do it in place. Default: ``False``.
    """
    _f = staticmethod(F.feature_alpha_dropout)
