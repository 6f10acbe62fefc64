"""SGD: stochastic gradient descent with optional (Nesterov) momentum, as torch.optim.SGD."""
from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import Optimizer, _check_args

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum), step for step as PyTorch's.

    For each parameter with a gradient::

        g = -grad if maximize else grad
        g = g + weight_decay * p                                  (if weight_decay != 0)
        b = g (first step)  or  b = momentum * b + (1 - dampening) * g    (if momentum != 0)
        g = g + momentum * b  if nesterov  else  b
        p = p - lr * g

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-3).
        momentum (float): momentum factor (default: 0).
        dampening (float): dampening of the momentum (default: 0).
        weight_decay (float): L2 penalty (default: 0).
        nesterov (bool): Nesterov momentum; needs momentum > 0 and dampening 0 (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State: ``'momentum_buffer'`` per parameter when momentum is non-zero.

    Example:
        >>> opt = mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check_args(lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, group, params, grads, states) -> None:
        bufs = [st.get("momentum_buffer") for st in states]
        _single_tensor_sgd(params, grads, bufs, lr=float(group["lr"]), momentum=float(group["momentum"]),
                           dampening=float(group["dampening"]), weight_decay=float(group["weight_decay"]),
                           nesterov=group["nesterov"], maximize=group["maximize"])
        if group["momentum"] != 0:
            for st, buf in zip(states, bufs):
                st["momentum_buffer"] = buf


def _single_tensor_sgd(params: list[Tensor], grads: list[Tensor], momentum_buffers: list[Tensor | None], *,
                       lr: float, momentum: float, dampening: float, weight_decay: float, nesterov: bool,
                       maximize: bool) -> None:
    """One SGD step for each parameter; a None momentum buffer is made (in the list) on first use."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffers[i]
            if buf is None:
                buf = momentum_buffers[i] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)
