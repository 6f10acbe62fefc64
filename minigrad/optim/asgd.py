"""ASGD (averaged stochastic gradient descent), as torch.optim.ASGD."""
from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import Optimizer, _check_args, _collect, _step_tensor, _zeros

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged SGD, step for step as PyTorch's.

    For each parameter with a gradient, at step t (eta and mu from the previous step; eta_0 = lr, mu_0 = 1)::

        g = -grad if maximize else grad
        g = g + weight_decay * p                                  (if weight_decay != 0)
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax)      (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t)**alpha;  mu = 1 / max(1, t - t0)

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-2).
        lambd (float): decay term (default: 1e-4).
        alpha (float): power for the eta update (default: 0.75).
        t0 (float): the step at which averaging starts (default: 1e6).
        weight_decay (float): L2 penalty (default: 0).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State: ``'step'``, ``'eta'``, ``'mu'`` and ``'ax'`` (the averaged parameter).

    Example:
        >>> opt = mg.optim.ASGD(model.parameters(), lr=0.01, t0=100)
    """

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, *, maximize: bool = False) -> None:
        _check_args(lr=lr, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize))

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["eta"] = _step_tensor(float(group["lr"]))
        st["mu"] = _step_tensor(1.0)
        st["ax"] = _zeros(p)

    def _update(self, group, params, grads, states) -> None:
        _single_tensor_asgd(params, grads, *_collect(states, "ax", "mu", "eta", "step"),
                            lambd=float(group["lambd"]), lr=float(group["lr"]), t0=float(group["t0"]),
                            alpha=float(group["alpha"]), weight_decay=float(group["weight_decay"]),
                            maximize=group["maximize"])


def _single_tensor_asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor], mus: list[Tensor],
                        etas: list[Tensor], state_steps: list[Tensor], *, lambd: float, lr: float, t0: float,
                        alpha: float, weight_decay: float, maximize: bool) -> None:
    """One ASGD step for each parameter, in place, as PyTorch's single-tensor ASGD."""
    for param, grad, ax, mu, eta, step_t in zip(params, grads, axs, mus, etas, state_steps):
        if maximize:
            grad = -grad
        step = step_t.add_(1).item()
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)  # decay term
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:  # averaging
            ax.add_(param.sub(ax).mul_(mu.item()))
        else:
            ax.copy_(param)
        eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
        mu.fill_(1 / max(1, step - t0))
