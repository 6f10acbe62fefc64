"""Adam (and, with decoupled weight decay, AdamW), as torch.optim.Adam."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, _bump_step, _step_tensor, _wrap

__all__ = ["Adam"]


def _lerp_(x: np.ndarray, end: np.ndarray, w: float) -> None:
    """x = lerp(x, end, w) in place, with PyTorch's two branches (its rounding differs around 0.5)."""
    if abs(w) < 0.5:
        x += w * (end - x)
    else:
        x[...] = end - (end - x) * (1 - w)


def _check_adam_args(lr, betas, eps, weight_decay) -> None:
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


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
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = None if closure is None else self._run_closure(closure)
        state = self.state
        for group in self.param_groups:
            lr = float(group["lr"])
            beta1, beta2 = (float(b) for b in group["betas"])
            eps = float(group["eps"])
            weight_decay = float(group["weight_decay"])
            amsgrad = group["amsgrad"]
            maximize = group["maximize"]
            decoupled = group.get("decoupled_weight_decay", False)
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                d = p._data
                g = grad._data
                st = state[p]
                if len(st) == 0:
                    st["step"] = _step_tensor()
                    st["exp_avg"] = _wrap(np.zeros_like(d))
                    st["exp_avg_sq"] = _wrap(np.zeros_like(d))
                    if amsgrad:
                        st["max_exp_avg_sq"] = _wrap(np.zeros_like(d))
                if maximize:
                    g = -g
                step = _bump_step(st)
                if weight_decay != 0:
                    if decoupled:
                        d *= 1 - lr * weight_decay
                    else:
                        g = g + weight_decay * d
                m = st["exp_avg"]._data
                v = st["exp_avg_sq"]._data
                # same operations in the same order as PyTorch's, through one scratch buffer
                w = 1 - beta1
                tmp = np.empty_like(m)
                np.subtract(g, m, out=tmp)
                if abs(w) < 0.5:  # lerp(m, g, w), PyTorch's two branches
                    tmp *= w
                    m += tmp
                else:
                    tmp *= 1 - w
                    np.subtract(g, tmp, out=m)
                v *= beta2
                np.multiply(g, 1 - beta2, out=tmp)
                tmp *= g
                v += tmp
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                if amsgrad:
                    vmax = st.get("max_exp_avg_sq")
                    if vmax is None:  # amsgrad switched on after the state was made
                        vmax = st["max_exp_avg_sq"] = _wrap(np.zeros_like(d))
                    vmax = vmax._data
                    np.maximum(vmax, v, out=vmax)
                    denom = np.sqrt(vmax)
                else:
                    denom = np.sqrt(v)
                denom /= bias_correction2_sqrt
                denom += eps
                np.multiply(m, -step_size, out=tmp)
                tmp /= denom
                d += tmp
                p._bump_version()  # as an in-place op: a graph that saved p now raises
        return loss
