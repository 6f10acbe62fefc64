"""Adam (and, with decoupled weight decay, AdamW), as torch.optim.Adam."""
from __future__ import annotations

from collections.abc import Iterable

from .. import ops
from ..tensor import Tensor
from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check_args, _host_math, _hyper, _like, _nz, _scalar, _scaled,
                        _state_tensor, _step_tensor, _zeros)

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Adam, step for step as PyTorch's.

    For each parameter with a gradient, at step t::

        g = -grad if maximize else grad
        p = p * (1 - lr * weight_decay)      if decoupled_weight_decay   (AdamW)
        g = g + weight_decay * p             otherwise, if weight_decay != 0
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        vmax = max(vmax, v)  and use vmax for v                            (if amsgrad)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-3).
        betas (tuple[float, float]): decay rates of the gradient's running mean and of its square
            (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        amsgrad (bool): use the maximum of the past second moments (AMSGrad) (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW (default: False).

    State: ``'step'``, ``'exp_avg'``, ``'exp_avg_sq'`` and, with amsgrad, ``'max_exp_avg_sq'``.

    Example:
        >>> opt = mg.optim.Adam(model.parameters(), lr=1e-3)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_args(betas, lr=lr, eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["exp_avg"] = _zeros(p)
        st["exp_avg_sq"] = _zeros(p)
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = _zeros(p)

    def _update(self, group, params, grads, states) -> None:
        amsgrad = group["amsgrad"]
        _single_tensor_adam(
            params, grads, [st["exp_avg"] for st in states], [st["exp_avg_sq"] for st in states],
            [_state_tensor(st, "max_exp_avg_sq", p) for st, p in zip(states, params)] if amsgrad else [],
            [st["step"] for st in states], amsgrad=amsgrad, beta1=_hyper(group, "betas", 0),
            beta2=_hyper(group, "betas", 1), lr=_hyper(group, "lr"), weight_decay=_hyper(group, "weight_decay"),
            eps=_hyper(group, "eps"), maximize=group["maximize"],
            decoupled_weight_decay=group.get("decoupled_weight_decay", False))


def _single_tensor_adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                        exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *,
                        amsgrad: bool, beta1, beta2, lr, weight_decay, eps, maximize: bool,
                        decoupled_weight_decay: bool) -> None:
    """One Adam/AdamW step for each parameter, in place, as PyTorch's single-tensor Adam. The
    hyper-parameters are floats, or 0-d tensors under mg.trace (optimizer._hyper)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t.add_(1)
        if _nz(weight_decay):
            if decoupled_weight_decay:
                param.mul_(_like(1 - lr * weight_decay, param))
            else:
                grad = grad + _scaled(param, weight_decay)
        exp_avg.lerp_(grad, _like(1 - beta1, exp_avg))
        _addcmul_(exp_avg_sq.mul_(_like(beta2, exp_avg_sq)), grad, grad, 1 - beta2)
        step_size, bias_correction2_sqrt = _host_math("adam_bias", _scalar(step_t), lr, beta1, beta2)
        if amsgrad:
            ops.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = (max_exp_avg_sqs[i].sqrt() / _like(bias_correction2_sqrt, param)).add_(_like(eps, param))
        else:
            denom = (exp_avg_sq.sqrt() / _like(bias_correction2_sqrt, param)).add_(_like(eps, param))
        _addcdiv_(param, exp_avg, denom, -step_size)
