"""Adagrad, as torch.optim.Adagrad."""
from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import (Optimizer, _addcdiv_, _check_args, _host_math, _hyper, _like, _nz, _scalar, _scaled,
                        _step_tensor, _zeros)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad, step for step as PyTorch's.

    For each parameter with a gradient, at step t::

        g = -grad if maximize else grad
        g = g + weight_decay * p                         (if weight_decay != 0)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (sqrt(s) + eps)

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-2).
        lr_decay (float): learning-rate decay (default: 0).
        weight_decay (float): L2 penalty (default: 0).
        initial_accumulator_value (float): starting value of the sum of squares (default: 0).
        eps (float): added to the denominator for numerical stability (default: 1e-10).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State (made at construction, as PyTorch does): ``'step'`` and ``'sum'``.

    Example:
        >>> opt = mg.optim.Adagrad(model.parameters(), lr=0.1)
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        _check_args(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                    initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], group)

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["sum"] = _zeros(p, group["initial_accumulator_value"])

    def _update(self, group, params, grads, states) -> None:
        _single_tensor_adagrad(params, grads, [st["sum"] for st in states], [st["step"] for st in states],
                               lr=_hyper(group, "lr"), weight_decay=_hyper(group, "weight_decay"),
                               lr_decay=_hyper(group, "lr_decay"), eps=_hyper(group, "eps"),
                               maximize=group["maximize"])


def _single_tensor_adagrad(params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor],
                           state_steps: list[Tensor], *, lr, weight_decay, lr_decay, eps, maximize: bool) -> None:
    """One Adagrad step for each parameter, in place, as PyTorch's single-tensor Adagrad. The
    hyper-parameters are floats, or 0-d tensors under mg.graph.trace (optimizer._hyper)."""
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step = _scalar(step_t.add_(1))
        if maximize:
            grad = -grad
        if _nz(weight_decay):
            grad = grad + _scaled(param, weight_decay)
        (clr,) = _host_math("adagrad_lr", step, lr, lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(_like(eps, state_sum))
        _addcdiv_(param, grad, std, -clr)
