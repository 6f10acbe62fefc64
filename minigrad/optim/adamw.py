"""AdamW: Adam with decoupled weight decay, as torch.optim.AdamW."""
from __future__ import annotations

from collections.abc import Iterable

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""AdamW: Adam whose weight decay shrinks the weights directly instead of entering the moments.

    Each step first does ``p = p * (1 - lr * weight_decay)``, then the Adam update of
    [`Adam`][minigrad.optim.Adam] with the raw gradient.

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-3).
        betas (tuple[float, float]): running-average coefficients (default: (0.9, 0.999)).
        eps (float): denominator term for numerical stability (default: 1e-8).
        weight_decay (float): decoupled weight decay coefficient (default: 1e-2).
        amsgrad (bool): use AMSGrad (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    Example:
        >>> opt = mg.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
