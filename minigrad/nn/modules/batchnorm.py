"""Batch normalisation: BatchNorm1d, BatchNorm2d."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.graph import is_recomputing
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._utils import _check_cpu, _factory_dtype
from .module import Module


class _BatchNorm(Module):
    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        _check_cpu(device)
        dtype = _factory_dtype(dtype)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(np.ones(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(np.zeros(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype=dtype), dtype=dtype))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype=dtype), dtype=dtype))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64), dtype=np.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean to 0, running variance to 1, batch count to 0."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics and set weight to 1 and bias to 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            if not is_recomputing():  # a checkpoint's recomputation counts no batch
                with no_grad():
                    self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative moving average
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, bn_training, factor, self.eps)

    def _load_from_state_dict(self, state_dict: Mapping, prefix: str, strict: bool, missing_keys: list,
                              unexpected_keys: list, error_msgs: list, assign: bool = False) -> None:
        # a checkpoint without num_batches_tracked (older PyTorch) loads, keeping the current count
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict and isinstance(state_dict, dict):
            state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs,
                                      assign=assign)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    r"""Batch normalisation over a 2-D or 3-D input, as ``torch.nn.BatchNorm1d``.

    .. math:: y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} * \gamma + \beta

    The mean and (biased) variance are taken over the batch (and length) dimensions per channel
    in training mode; the running estimates are updated as
    ``running = (1 - momentum) * running + momentum * batch_stat`` (the running variance uses the
    unbiased batch variance). In evaluation mode the running estimates normalise.

    Args:
        num_features (int): the number of channels :math:`C`.
        eps (float): added to the variance for stability. Default: 1e-5.
        momentum (float or None): weight of the new batch statistic; ``None`` gives a cumulative
            average. Default: 0.1.
        affine (bool): learn :math:`\gamma` (``weight``, ones) and :math:`\beta` (``bias``, zeros). Default: ``True``.
        track_running_stats (bool): keep running estimates (else batch statistics are used in eval
            mode too). Default: ``True``.

    Shape:
        - Input: :math:`(N, C)` or :math:`(N, C, L)`.
        - Output: the same shape.

    Example:
        >>> nn.BatchNorm1d(100)(mg.randn(20, 100)).shape
        (20, 100)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch normalisation over a 4-D input (a batch of images), as ``torch.nn.BatchNorm2d``.

    Statistics are per channel over :math:`(N, H, W)`; see [`BatchNorm1d`][minigrad.nn.BatchNorm1d] for the formula,
    the running-statistics update and the arguments.

    Args:
        num_features (int): the number of channels :math:`C`.
        eps (float): added to the variance for stability. Default: 1e-5.
        momentum (float or None): weight of the new batch statistic. Default: 0.1.
        affine (bool): learn ``weight`` and ``bias``. Default: ``True``.
        track_running_stats (bool): keep running estimates. Default: ``True``.

    Shape:
        - Input: :math:`(N, C, H, W)`.
        - Output: the same shape.

    Example:
        >>> nn.BatchNorm2d(16)(mg.randn(4, 16, 8, 8)).shape
        (4, 16, 8, 8)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
