"""Loss modules: thin wrappers over nn.functional's losses, as torch.nn's."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        reduction = F._legacy_reduction(size_average, reduce, reduction)
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    r"""Mean absolute error :math:`\ell_n = |x_n - y_n|`, as ``torch.nn.L1Loss``.

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - Input: :math:`(*)`.
        - Target: :math:`(*)`, the same shape.
        - Output: scalar; :math:`(*)` with ``reduction='none'``.

    Example:
        >>> nn.L1Loss()(mg.randn(3, 5, requires_grad=True), mg.randn(3, 5)).backward()
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    r"""Mean squared error :math:`\ell_n = (x_n - y_n)^2`, as ``torch.nn.MSELoss``.

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - Input: :math:`(*)`.
        - Target: :math:`(*)`, the same shape (shapes that broadcast to another warn).
        - Output: scalar; :math:`(*)` with ``reduction='none'``.

    Example:
        >>> nn.MSELoss()(mg.randn(3, 5, requires_grad=True), mg.randn(3, 5)).backward()
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    r"""Squared error below ``beta``, absolute error above, as ``torch.nn.SmoothL1Loss``.

    :math:`\ell_n = 0.5 (x_n - y_n)^2 / \beta` if :math:`|x_n - y_n| < \beta`, else
    :math:`|x_n - y_n| - 0.5 \beta`.

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        beta (float): the threshold between the two regimes. Default: 1.0.

    Shape:
        - Input: :math:`(*)`; Target: the same shape; Output: scalar, or :math:`(*)` for ``'none'``.

    Example:
        >>> nn.SmoothL1Loss(beta=0.5)(mg.randn(3, requires_grad=True), mg.randn(3)).backward()
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    r"""Squared error below ``delta``, ``delta``-scaled absolute error above, as ``torch.nn.HuberLoss``.

    :math:`\ell_n = 0.5 (x_n - y_n)^2` if :math:`|x_n - y_n| < \delta`, else
    :math:`\delta (|x_n - y_n| - 0.5 \delta)`.

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        delta (float): the threshold between the two regimes. Default: 1.0.

    Shape:
        - Input: :math:`(*)`; Target: the same shape; Output: scalar, or :math:`(*)` for ``'none'``.

    Example:
        >>> nn.HuberLoss(delta=2.0)(mg.randn(3, requires_grad=True), mg.randn(3)).backward()
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    r"""Negative log likelihood of class indices given log-probabilities, as ``torch.nn.NLLLoss``.

    :math:`\ell_n = -w_{y_n} x_{n, y_n}`; ``'mean'`` divides by :math:`\sum_n w_{y_n}` over the
    targets that are not ``ignore_index``.

    Args:
        weight (Tensor, optional): a weight per class, shape :math:`(C,)` (a buffer).
        ignore_index (int): targets equal to it contribute nothing. Default: -100.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - Input: :math:`(N, C)` or :math:`(N, C, d_1, ...)` log-probabilities.
        - Target: :math:`(N)` or :math:`(N, d_1, ...)` int64 class indices in :math:`[0, C)`.
        - Output: scalar; the target's shape with ``reduction='none'``.

    Example:
        >>> logp = nn.LogSoftmax(dim=1)(mg.randn(3, 5, requires_grad=True))
        >>> nn.NLLLoss()(logp, mg.tensor([1, 0, 4])).backward()
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    r"""Cross entropy between logits and class indices, as ``torch.nn.CrossEntropyLoss``.

    Equivalent to ``NLLLoss()(log_softmax(input, 1), target)``, computed in one stable fused step.
    With ``label_smoothing`` :math:`\epsilon` the target distribution is
    :math:`(1 - \epsilon)\,\text{onehot} + \epsilon / C`.

    Args:
        weight (Tensor, optional): a weight per class, shape :math:`(C,)` (a buffer).
        ignore_index (int): targets equal to it contribute nothing. Default: -100.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        label_smoothing (float): in [0, 1]. Default: 0.0.

    Shape:
        - Input: :math:`(N, C)` or :math:`(N, C, d_1, ...)` logits (or :math:`(C)`).
        - Target: :math:`(N)` or :math:`(N, d_1, ...)` int64 class indices
          (class probabilities of the input's shape where the functional form supports them).
        - Output: scalar; the target's shape with ``reduction='none'``.

    Example:
        >>> loss = nn.CrossEntropyLoss()(mg.randn(3, 5, requires_grad=True), mg.tensor([1, 0, 4]))
        >>> loss.backward()
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    r"""Binary cross entropy between probabilities and targets, as ``torch.nn.BCELoss``.

    :math:`\ell_n = -w_n [y_n \log x_n + (1 - y_n) \log(1 - x_n)]`, the logs clamped at -100.

    Args:
        weight (Tensor, optional): rescaling weight, broadcast to the input (a buffer).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - Input: :math:`(*)`, probabilities in [0, 1]; Target: the same shape; Output: scalar, or
          :math:`(*)` for ``'none'``.

    Example:
        >>> p = nn.Sigmoid()(mg.randn(3, requires_grad=True))
        >>> nn.BCELoss()(p, mg.tensor([0.0, 1.0, 1.0])).backward()
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    r"""Sigmoid and binary cross entropy in one stable step, as ``torch.nn.BCEWithLogitsLoss``.

    :math:`\ell_n = -w_n [p\, y_n \log \sigma(x_n) + (1 - y_n) \log(1 - \sigma(x_n))]`, stable for
    logits of :math:`\pm 10^4`.

    Args:
        weight (Tensor, optional): rescaling weight, broadcast to the input (a buffer).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        pos_weight (Tensor, optional): weight of positive examples per class, broadcast along the
            last dimension (a buffer).

    Shape:
        - Input: :math:`(*)` logits; Target: the same shape; Output: scalar, or :math:`(*)` for ``'none'``.

    Example:
        >>> nn.BCEWithLogitsLoss()(mg.randn(3, requires_grad=True), mg.tensor([0.0, 1.0, 1.0])).backward()
    """

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence with the input as log-probabilities, as torch.nn.KLDivLoss."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        batchmean = reduction == "batchmean"  # KL's own reduction (the others are _Loss's)
        super().__init__(size_average, reduce, "mean" if batchmean else reduction)
        if batchmean:
            self.reduction = "batchmean"
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_Loss):
    """max(0, -y (x1 - x2) + margin), as torch.nn.MarginRankingLoss."""

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(d(a, p) - d(a, n) + margin, 0), as torch.nn.TripletMarginLoss."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                     reduction=self.reduction)


class CTCLoss(_Loss):
    r"""The Connectionist Temporal Classification loss, as ``torch.nn.CTCLoss``: the negative log of
    the total probability of every alignment of a target sequence to the input frames (blank and
    repeated labels collapsed).

    Args:
        blank (int): the blank label. Default: 0.
        reduction (str): ``'none'`` | ``'mean'`` (each loss divided by its target length, then the
            mean over the batch) | ``'sum'``. Default: ``'mean'``.
        zero_infinity (bool): set infinite losses and their gradients to zero. Default: ``False``.

    Shape:
        - log_probs: :math:`(T, N, C)` or :math:`(T, C)`, log-probabilities (e.g. a log_softmax).
        - targets: :math:`(N, S)` padded or :math:`(\sum_n S_n)` concatenated.
        - input_lengths, target_lengths: :math:`(N)` tensors or sequences of ints.
        - Output: scalar; :math:`(N)` with ``reduction='none'``.

    Example:
        >>> lp = mg.randn(6, 2, 4, requires_grad=True).log_softmax(2)
        >>> nn.CTCLoss()(lp, mg.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]).backward()
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
