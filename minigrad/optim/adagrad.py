"""Adagrad, as torch.optim.Adagrad."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, _bump_step, _step_tensor, _wrap

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad, step for step as PyTorch's.

    For each parameter with a gradient, at step t::

        g = -grad if maximize else grad
        g = g + weight_decay * p                         (if weight_decay != 0)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (sqrt(s) + eps)

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-2).
        lr_decay (float): learning-rate decay (default: 0).
        weight_decay (float): L2 penalty (default: 0).
        initial_accumulator_value (float): starting value of the sum of squares (default: 0).
        eps (float): added to the denominator for numerical stability (default: 1e-10).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State (made at construction, as PyTorch does): ``'step'`` and ``'sum'``.

    Example:
        >>> opt = mg.optim.Adagrad(model.parameters(), lr=0.1)
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group) -> dict:
        st = self.state[p]
        st["step"] = _step_tensor()
        st["sum"] = _wrap(np.full_like(p._data, group["initial_accumulator_value"]))
        return st

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = None if closure is None else self._run_closure(closure)
        state = self.state
        for group in self.param_groups:
            lr = float(group["lr"])
            lr_decay = float(group["lr_decay"])
            eps = float(group["eps"])
            weight_decay = float(group["weight_decay"])
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                d = p._data
                g = grad._data
                st = state[p]
                if len(st) == 0:  # a parameter added by add_param_group after construction
                    st = self._init_state(p, group)
                step = _bump_step(st)
                if maximize:
                    g = -g
                if weight_decay != 0:
                    g = g + weight_decay * d
                clr = lr / (1 + (step - 1) * lr_decay)
                s = st["sum"]._data
                s += g * g
                std = np.sqrt(s)
                std += eps
                d += (-clr) * g / std
                p._bump_version()  # as an in-place op: a graph that saved p now raises
        return loss
