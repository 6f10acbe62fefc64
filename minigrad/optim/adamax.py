"""Adamax (Adam with the infinity norm), as torch.optim.Adamax."""
from __future__ import annotations

from collections.abc import Iterable

from .. import ops
from ..tensor import Tensor
from .optimizer import Optimizer, _check_args, _collect, _step_tensor, _zeros

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
        beta1, beta2 = (float(b) for b in group["betas"])
        _single_tensor_adamax(params, grads, *_collect(states, "exp_avg", "exp_inf", "step"),
                              eps=float(group["eps"]), beta1=beta1, beta2=beta2, lr=float(group["lr"]),
                              weight_decay=float(group["weight_decay"]), maximize=group["maximize"])


def _single_tensor_adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                          exp_infs: list[Tensor], state_steps: list[Tensor], *, eps: float, beta1: float,
                          beta2: float, lr: float, weight_decay: float, maximize: bool) -> None:
    """One Adamax step for each parameter, in place, as PyTorch's single-tensor Adamax."""
    for param, grad, exp_avg, exp_inf, step_t in zip(params, grads, exp_avgs, exp_infs, state_steps):
        if maximize:
            grad = -grad
        step = step_t.add_(1).item()
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        ops.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        clr = lr / (1 - beta1**step)
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
