"""SyncBatchNorm: batch normalisation with the statistics of the global batch across MPI ranks."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor import Tensor
from ...autograd.grad_mode import no_grad
from .batchnorm import _BatchNorm
from .module import Module


class SyncBatchNorm(_BatchNorm):
    r"""Batch normalisation whose mean and variance are those of the whole batch over all ranks,
    as ``torch.nn.SyncBatchNorm``.

    In training mode with a process group of more than one rank, each rank computes per-channel
    sums of its shard, which are summed over ranks (a differentiable all-reduce: the backward sums
    the gradients of the statistics over ranks too, so the input gradients are those of
    BatchNorm over the global batch). Ranks may hold shards of different sizes. Otherwise (eval
    mode, one rank, no process group) it is plain batch normalisation. Accepts any input of at
    least 2 dimensions (N, C, ...).

    Args:
        num_features (int): the number of channels :math:`C`.
        eps, momentum, affine, track_running_stats: as [`BatchNorm1d`][minigrad.nn.BatchNorm1d].
        process_group: only ``None`` (the default group).

    Example:
        >>> model = nn.SyncBatchNorm.convert_sync_batchnorm(model)   # every BatchNorm*d replaced
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        if process_group is not None:
            raise ValueError("SyncBatchNorm: only the default process group (process_group=None) is supported")
        self.process_group = None

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        """Normalise with the global batch's statistics (training, several ranks), else as BatchNorm."""
        from ... import distributed as dist
        self._check_input_dim(input)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        if not (bn_training and dist.is_initialized() and dist.get_world_size() > 1):
            return super().forward(input)
        if input.shape[1] != self.num_features:
            raise ValueError(f"SyncBatchNorm: input {tuple(input.shape)} has {input.shape[1]} channels, "
                             f"expected {self.num_features}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        return _sync_batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                                factor, self.eps, update=self.training and self.track_running_stats)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """Return ``module`` with every BatchNorm1d/2d (at any depth) replaced by a SyncBatchNorm
        sharing its parameters and buffers; a BatchNorm passed directly is returned converted."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


def _sync_batch_norm(x, running_mean, running_var, weight, bias, momentum, eps, update):
    """Batch norm of x with statistics summed over ranks, from differentiable Tensor ops."""
    from ... import distributed as dist
    from ...distributed.nn.functional import all_reduce
    C = x.shape[1]
    bshape = (1, C) + (1,) * (x.ndim - 2)
    axes = (0,) + tuple(range(2, x.ndim))
    count = Tensor._make(np.array([x.numel() // C], dtype=np.int64))
    dist.all_reduce(count)
    n = int(count._data[0])
    if n <= 1:
        raise ValueError(f"SyncBatchNorm: expected more than 1 value per channel when training, got {n} "
                         f"over all ranks (input {tuple(x.shape)} here)")
    mean = all_reduce(x.sum(axes)) / n
    xc = x - mean.reshape(bshape)
    var = all_reduce((xc * xc).sum(axes)) / n
    out = xc * (var + eps).rsqrt().reshape(bshape)
    if weight is not None:
        out = out * weight.reshape(bshape)
    if bias is not None:
        out = out + bias.reshape(bshape)
    if update:
        with no_grad():
            if running_mean is not None:
                m = mean.detach()._data.astype(running_mean.dtype)
                running_mean.mul_(1.0 - momentum).add_(Tensor._make(m * running_mean.dtype.type(momentum)))
            if running_var is not None:
                v = (var.detach()._data * (n / (n - 1))).astype(running_var.dtype)
                running_var.mul_(1.0 - momentum).add_(Tensor._make(v * running_var.dtype.type(momentum)))
    return out

