"""Adadelta, as torch.optim.Adadelta (the optimizer of PyTorch's official MNIST example)."""
from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import (Optimizer, _addcmul_, _check_args, _collect, _hyper, _like, _nz, _scaled, _step_tensor,
                        _zeros)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta, step for step as PyTorch's.

    For each parameter with a gradient::

        g = -grad if maximize else grad
        g = g + weight_decay * p                                  (if weight_decay != 0)
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): coefficient that scales delta before it is applied (default: 1.0).
        rho (float): decay rate of the running averages of squared gradients and updates (default: 0.9).
        eps (float): added inside the square roots for numerical stability (default: 1e-6).
        weight_decay (float): L2 penalty (default: 0).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State: ``'step'``, ``'square_avg'`` (v) and ``'acc_delta'`` (u).

    Example:
        >>> opt = mg.optim.Adadelta(model.parameters(), lr=1.0)
    """

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, *, maximize: bool = False) -> None:
        _check_args(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize))

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["square_avg"] = _zeros(p)
        st["acc_delta"] = _zeros(p)

    def _update(self, group, params, grads, states) -> None:
        _single_tensor_adadelta(params, grads, *_collect(states, "square_avg", "acc_delta", "step"),
                                lr=_hyper(group, "lr"), rho=_hyper(group, "rho"), eps=_hyper(group, "eps"),
                                weight_decay=_hyper(group, "weight_decay"), maximize=group["maximize"])


def _single_tensor_adadelta(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
                            acc_deltas: list[Tensor], state_steps: list[Tensor], *, lr, rho, eps, weight_decay,
                            maximize: bool) -> None:
    """One Adadelta step for each parameter, in place, as PyTorch's single-tensor Adadelta. The
    hyper-parameters are floats, or 0-d tensors under mg.graph.trace (optimizer._hyper)."""
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step.add_(1)
        if maximize:
            grad = -grad
        if _nz(weight_decay):
            grad = grad + _scaled(param, weight_decay)
        _addcmul_(square_avg.mul_(_like(rho, square_avg)), grad, grad, 1 - rho)
        std = square_avg.add(_like(eps, square_avg)).sqrt_()
        delta = acc_delta.add(_like(eps, acc_delta)).sqrt_()
        delta.div_(std).mul_(grad)
        _addcmul_(acc_delta.mul_(_like(rho, acc_delta)), delta, delta, 1 - rho)
        param.add_(_scaled(delta, -lr))
