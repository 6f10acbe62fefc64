"""RMSprop, as torch.optim.RMSprop."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .adam import _lerp_
from .optimizer import Optimizer, _bump_step, _step_tensor, _wrap

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
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = None if closure is None else self._run_closure(closure)
        state = self.state
        for group in self.param_groups:
            lr = float(group["lr"])
            alpha = float(group["alpha"])
            eps = float(group["eps"])
            weight_decay = float(group["weight_decay"])
            momentum = float(group["momentum"])
            centered = group["centered"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                d = p._data
                g = grad._data
                st = state[p]
                if len(st) == 0:
                    st["step"] = _step_tensor()
                    st["square_avg"] = _wrap(np.zeros_like(d))
                    if momentum > 0:
                        st["momentum_buffer"] = _wrap(np.zeros_like(d))
                    if centered:
                        st["grad_avg"] = _wrap(np.zeros_like(d))
                if maximize:
                    g = -g
                _bump_step(st)
                if weight_decay != 0:
                    g = g + weight_decay * d
                v = st["square_avg"]._data
                v *= alpha
                v += (1 - alpha) * g * g
                if centered:
                    a = _state_array(st, "grad_avg", d)
                    _lerp_(a, g, 1 - alpha)
                    avg = np.sqrt(v - a * a)
                else:
                    avg = np.sqrt(v)
                avg += eps
                if momentum > 0:
                    b = _state_array(st, "momentum_buffer", d)
                    b *= momentum
                    b += g / avg
                    d -= lr * b
                else:
                    d += (-lr) * g / avg
                p._bump_version()  # as an in-place op: a graph that saved p now raises
        return loss


def _state_array(st: dict, key: str, d: np.ndarray) -> np.ndarray:
    t = st.get(key)
    if t is None:  # the option was switched on after the state was made
        t = st[key] = _wrap(np.zeros_like(d))
    return t._data
