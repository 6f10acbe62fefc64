"""LayerNorm."""
from __future__ import annotations

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
        self.normalized_shape = F._normalized_shape(normalized_shape)
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


class RMSNorm(Module):
    r"""Root-mean-square normalisation over the last dimensions, as ``torch.nn.RMSNorm``.

    .. math:: y = \frac{x}{\sqrt{\mathrm{E}[x^2] + \epsilon}} * \gamma

    Args:
        normalized_shape (int or tuple): the trailing shape to normalise over.
        eps (float, optional): added to the mean square; None (default) uses the input dtype's
            machine epsilon, as PyTorch.
        elementwise_affine (bool): learn ``weight`` (ones) of shape ``normalized_shape``. Default: ``True``.
        dtype: the parameter's dtype. Default: ``mg.get_default_dtype()``.

    Shape:
        - Input: :math:`(N, *)`.
        - Output: the same shape.

    Example:
        >>> nn.RMSNorm(10)(mg.randn(20, 5, 10)).shape
        (20, 5, 10)
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        dtype = _factory_dtype(dtype)
        self.normalized_shape = F._normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Set weight to 1."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    r"""Group normalisation, as ``torch.nn.GroupNorm``: the channels of each sample split into
    ``num_groups`` groups, each normalised over its channels and spatial positions, then a
    per-channel affine transform."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        _check_cpu(device)
        dtype = _factory_dtype(dtype)
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        _affine_params(self, num_channels, affine, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


def _affine_params(m, n, affine, bias, dtype):
    """weight = 1 (and bias = 0 unless bias=False) when affine, else both None."""
    if affine:
        m.weight = Parameter(np.ones(n, dtype=dtype))
        if bias:
            m.bias = Parameter(np.zeros(n, dtype=dtype))
        else:
            m.register_parameter("bias", None)
    else:
        m.register_parameter("weight", None)
        m.register_parameter("bias", None)


class _InstanceNorm(Module):
    _ndim = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        _check_cpu(device)
        dtype = _factory_dtype(dtype)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_params(self, num_features, affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype=dtype)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype=dtype)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self._ndim + 1, self._ndim + 2):
            raise ValueError(f"{type(self).__name__}: expected {self._ndim + 1}D (unbatched) or {self._ndim + 2}D "
                             f"input (got {input.ndim}D input)")
        unbatched = input.ndim == self._ndim + 1
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over (N, C, L), as torch.nn.InstanceNorm1d."""
    _ndim = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over (N, C, H, W), as torch.nn.InstanceNorm2d."""
    _ndim = 2
