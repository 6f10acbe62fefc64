"""RAdam (Adam with a rectified adaptive learning rate), as torch.optim.RAdam."""
from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import Optimizer, _check_args, _collect, _step_tensor, _zeros

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam, step for step as PyTorch's.

    For each parameter with a gradient, at step t::

        g = -grad if maximize else grad
        p = p * (1 - lr * weight_decay)      if decoupled_weight_decay
        g = g + weight_decay * p             otherwise, if weight_decay != 0
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        rho_t > 5:  r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
                    p = p - lr * m / (1 - beta1**t) * r * sqrt(1 - beta2**t) / (sqrt(v) + eps)
        otherwise:  p = p - lr * m / (1 - beta1**t)

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-3).
        betas (tuple[float, float]): running-average coefficients (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State: ``'step'``, ``'exp_avg'`` and ``'exp_avg_sq'``.

    Example:
        >>> opt = mg.optim.RAdam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 maximize: bool = False) -> None:
        _check_args(betas, lr=lr, eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize))

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["exp_avg"] = _zeros(p)
        st["exp_avg_sq"] = _zeros(p)

    def _update(self, group, params, grads, states) -> None:
        beta1, beta2 = (float(b) for b in group["betas"])
        _single_tensor_radam(params, grads, *_collect(states, "exp_avg", "exp_avg_sq", "step"),
                             beta1=beta1, beta2=beta2, lr=float(group["lr"]),
                             weight_decay=float(group["weight_decay"]), eps=float(group["eps"]),
                             decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])


def _single_tensor_radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                         exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *, beta1: float, beta2: float,
                         lr: float, weight_decay: float, eps: float, decoupled_weight_decay: bool,
                         maximize: bool) -> None:
    """One RAdam step for each parameter, in place, as PyTorch's single-tensor RAdam."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        step = state_steps[i].add_(1).item()
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        # the length of the approximated simple moving average, and its maximum
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:  # the variance is tractable: rectify the adaptive learning rate
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
