"""NAdam (Adam with Nesterov momentum), as torch.optim.NAdam."""
from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import Optimizer, _check_args, _collect, _step_tensor, _zeros

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam, step for step as PyTorch's.

    For each parameter with a gradient, at step t::

        g = -grad if maximize else grad
        p = p * (1 - lr * weight_decay)      if decoupled_weight_decay
        g = g + weight_decay * p             otherwise, if weight_decay != 0
        mu_t = beta1 * (1 - 0.5 * 0.96**(t * momentum_decay));  prod = prod * mu_t   (prod of all mu_i)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - prod) * g / denom - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / denom

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 2e-3).
        betas (tuple[float, float]): running-average coefficients (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        momentum_decay (float): momentum decay psi (default: 4e-3).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW (NAdamW) (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State: ``'step'``, ``'mu_product'``, ``'exp_avg'`` and ``'exp_avg_sq'``.

    Example:
        >>> opt = mg.optim.NAdam(model.parameters(), lr=2e-3)
    """

    def __init__(self, params: Iterable, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None:
        _check_args(betas, lr=lr, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize))

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["mu_product"] = _step_tensor(1.0)
        st["exp_avg"] = _zeros(p)
        st["exp_avg_sq"] = _zeros(p)

    def _update(self, group, params, grads, states) -> None:
        beta1, beta2 = (float(b) for b in group["betas"])
        _single_tensor_nadam(params, grads, *_collect(states, "exp_avg", "exp_avg_sq", "mu_product", "step"),
                             beta1=beta1, beta2=beta2, lr=float(group["lr"]),
                             weight_decay=float(group["weight_decay"]),
                             momentum_decay=float(group["momentum_decay"]), eps=float(group["eps"]),
                             decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])


def _single_tensor_nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                         exp_avg_sqs: list[Tensor], mu_products: list[Tensor], state_steps: list[Tensor], *,
                         beta1: float, beta2: float, lr: float, weight_decay: float, momentum_decay: float,
                         eps: float, decoupled_weight_decay: bool, maximize: bool) -> None:
    """One NAdam step for each parameter, in place, as PyTorch's single-tensor NAdam."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq, mu_product = exp_avgs[i], exp_avg_sqs[i], mu_products[i]
        step = state_steps[i].add_(1).item()
        bias_correction2 = 1 - beta2**step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        # the momentum cache mu_t and mu_{t+1}
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        prod = mu_product.mul_(mu).item()
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt_().add_(eps)
        param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - prod))
        param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - prod * mu_next))
