"""RMSprop, as torch.optim.RMSprop."""
from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check_args, _hyper, _like, _nz, _scaled,
                        _state_tensor, _step_tensor, _zeros)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop, step for step as PyTorch's.

    For each parameter with a gradient::

        g = -grad if maximize else grad
        g = g + weight_decay * p                                 (if weight_decay != 0)
        v = alpha * v + (1 - alpha) * g * g
        centered:  a = lerp(a, g, 1 - alpha);  avg = sqrt(v - a * a) + eps
        otherwise: avg = sqrt(v) + eps
        momentum > 0:  b = momentum * b + g / avg;  p = p - lr * b
        otherwise:     p = p - lr * g / avg

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-2).
        alpha (float): smoothing constant (default: 0.99).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        momentum (float): momentum factor (default: 0).
        centered (bool): normalize by the estimated variance of the gradient (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State: ``'step'``, ``'square_avg'``, ``'momentum_buffer'`` (momentum > 0), ``'grad_avg'`` (centered).

    Example:
        >>> opt = mg.optim.RMSprop(model.parameters(), lr=1e-3, momentum=0.9)
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check_args(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["square_avg"] = _zeros(p)
        if group["momentum"] > 0:
            st["momentum_buffer"] = _zeros(p)
        if group["centered"]:
            st["grad_avg"] = _zeros(p)

    def _update(self, group, params, grads, states) -> None:
        momentum, centered = _hyper(group, "momentum"), group["centered"]
        pairs = list(zip(states, params))
        _single_tensor_rmsprop(
            params, grads, [st["square_avg"] for st in states],
            [_state_tensor(st, "grad_avg", p) for st, p in pairs] if centered else [],
            [_state_tensor(st, "momentum_buffer", p) for st, p in pairs] if group["momentum"] > 0 else [],
            [st["step"] for st in states], lr=_hyper(group, "lr"), alpha=_hyper(group, "alpha"),
            eps=_hyper(group, "eps"), weight_decay=_hyper(group, "weight_decay"), momentum=momentum,
            centered=centered, maximize=group["maximize"])


def _single_tensor_rmsprop(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
                           grad_avgs: list[Tensor], momentum_buffers: list[Tensor], state_steps: list[Tensor], *,
                           lr, alpha, eps, weight_decay, momentum, centered: bool, maximize: bool) -> None:
    """One RMSprop step for each parameter, in place, as PyTorch's single-tensor RMSprop. The
    hyper-parameters are floats, or 0-d tensors under mg.graph.trace (optimizer._hyper)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        square_avg = square_avgs[i]
        state_steps[i].add_(1)
        if _nz(weight_decay):
            grad = grad + _scaled(param, weight_decay)
        _addcmul_(square_avg.mul_(_like(alpha, square_avg)), grad, grad, 1 - alpha)
        if centered:
            grad_avg = grad_avgs[i].lerp_(grad, _like(1 - alpha, square_avg))
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(_like(eps, avg))
        if _nz(momentum):
            buf = momentum_buffers[i]
            buf.mul_(_like(momentum, buf)).addcdiv_(grad, avg)
            param.add_(_scaled(buf, -lr))
        else:
            _addcdiv_(param, grad, avg, -lr)
