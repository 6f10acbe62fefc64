"""LayerNorm."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._utils import _check_cpu, _factory_dtype
from .module import Module


class LayerNorm(Module):
    r"""Layer normalisation over the last dimensions, as ``torch.nn.LayerNorm``.

    .. math:: y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    The mean and biased variance are taken over the last ``len(normalized_shape)`` dimensions,
    in training and evaluation alike.

    Args:
        normalized_shape (int or tuple): the trailing shape to normalise over.
        eps (float): added to the variance for stability. Default: 1e-5.
        elementwise_affine (bool): learn ``weight`` (ones) and ``bias`` (zeros) of shape
            ``normalized_shape``. Default: ``True``.
        bias (bool): learn the additive ``bias`` (when ``elementwise_affine``). Default: ``True``.
        dtype: the parameters' dtype. Default: ``mg.get_default_dtype()``.

    Shape:
        - Input: :math:`(N, *)`.
        - Output: the same shape.

    Example:
        >>> nn.LayerNorm(10)(mg.randn(20, 5, 10)).shape
        (20, 5, 10)
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        dtype = _factory_dtype(dtype)
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(np.zeros(self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set weight to 1 and bias to 0."""
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
