"""SGD: stochastic gradient descent with optional (Nesterov) momentum, as torch.optim.SGD."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, _wrap

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
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = None if closure is None else self._run_closure(closure)
        state = self.state
        for group in self.param_groups:
            lr = float(group["lr"])
            momentum = float(group["momentum"])
            dampening = float(group["dampening"])
            weight_decay = float(group["weight_decay"])
            nesterov = group["nesterov"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                d = p._data
                g = grad._data
                if maximize:
                    g = -g
                if weight_decay != 0:
                    g = g + weight_decay * d
                if momentum != 0:
                    st = state[p]
                    buf = st.get("momentum_buffer")
                    if buf is None:
                        b = np.array(g, dtype=d.dtype, copy=True)
                        st["momentum_buffer"] = _wrap(b)
                    else:
                        b = buf._data
                        b *= momentum
                        if dampening == 0:
                            b += g  # (1 - 0) * g is g exactly
                        else:
                            b += (1 - dampening) * g
                    g = g + momentum * b if nesterov else b
                d -= lr * g
                p._bump_version()  # as an in-place op: a graph that saved p now raises
        return loss
