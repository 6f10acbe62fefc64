"""Collectives that autograd can differentiate through (torch.distributed.nn.functional)."""
import numpy as np

from ...autograd import Function
from .. import distributed_c10d as c10d


class _AllReduceSum(Function):
    """out = sum over ranks of x (on every rank). Each rank's loss depends on every rank's x, so the
    gradient reaching rank r's x is the sum over ranks of their output gradients: an all-reduce too."""

    @staticmethod
    def forward(ctx, x):
        out = np.array(x, copy=True, order="C")
        _all_reduce_array(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return _AllReduceSum.apply(g)


def _all_reduce_array(arr):
    from ...tensor import Tensor
    c10d.all_reduce(Tensor._make(arr), c10d.ReduceOp.SUM)


def all_reduce(tensor, op=c10d.ReduceOp.SUM, group=None):
    """A new tensor: ``tensor`` summed over all ranks, differentiable (only ReduceOp.SUM)."""
    if op is not c10d.ReduceOp.SUM:
        raise ValueError(f"distributed.nn.functional.all_reduce: only ReduceOp.SUM is differentiable here, got {op}")
    c10d._check_group("distributed.nn.functional.all_reduce", group)
    return _AllReduceSum.apply(tensor)
