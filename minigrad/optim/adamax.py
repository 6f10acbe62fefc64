"""Adamax (Adam with the infinity norm), as torch.optim.Adamax."""
from __future__ import annotations

from collections.abc import Iterable

from .. import ops
from ..tensor import Tensor
from .optimizer import (Optimizer, _addcdiv_, _check_args, _collect, _host_math, _hyper, _like, _nz, _scalar,
                        _scaled, _step_tensor, _zeros)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax, step for step as PyTorch's.

    For each parameter with a gradient, at step t::

        g = -grad if maximize else grad
        g = g + weight_decay * p                                  (if weight_decay != 0)
        m = lerp(m, g, 1 - beta1)
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 2e-3).
        betas (tuple[float, float]): decay rates of the gradient's running mean and of its infinity
            norm (default: (0.9, 0.999)).
        eps (float): added to |g| for numerical stability (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State: ``'step'``, ``'exp_avg'`` (m) and ``'exp_inf'`` (u).

    Example:
        >>> opt = mg.optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, *, maximize: bool = False) -> None:
        _check_args(betas, lr=lr, eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize))

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["exp_avg"] = _zeros(p)
        st["exp_inf"] = _zeros(p)

    def _update(self, group, params, grads, states) -> None:
        _single_tensor_adamax(params, grads, *_collect(states, "exp_avg", "exp_inf", "step"),
                              eps=_hyper(group, "eps"), beta1=_hyper(group, "betas", 0),
                              beta2=_hyper(group, "betas", 1), lr=_hyper(group, "lr"),
                              weight_decay=_hyper(group, "weight_decay"), maximize=group["maximize"])


def _single_tensor_adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                          exp_infs: list[Tensor], state_steps: list[Tensor], *, eps, beta1, beta2, lr,
                          weight_decay, maximize: bool) -> None:
    """One Adamax step for each parameter, in place, as PyTorch's single-tensor Adamax. The
    hyper-parameters are floats, or 0-d tensors under mg.graph.trace (optimizer._hyper)."""
    for param, grad, exp_avg, exp_inf, step_t in zip(params, grads, exp_avgs, exp_infs, state_steps):
        if maximize:
            grad = -grad
        step = _scalar(step_t.add_(1))
        if _nz(weight_decay):
            grad = grad + _scaled(param, weight_decay)
        exp_avg.lerp_(grad, _like(1 - beta1, exp_avg))
        ops.maximum(exp_inf.mul_(_like(beta2, exp_inf)), grad.abs().add_(_like(eps, exp_inf)), out=exp_inf)
        (clr,) = _host_math("adamax_lr", step, lr, beta1)
        _addcdiv_(param, exp_avg, exp_inf, -clr)
