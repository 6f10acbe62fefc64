"""Activation modules: thin wrappers over nn.functional, as torch.nn's."""
from __future__ import annotations

import warnings

from ...tensor import Tensor
from .. import functional as F
from .module import Module


def _inplace_str(inplace: bool, lead: bool = False) -> str:
    if not inplace:
        return ""
    return ", inplace=True" if lead else "inplace=True"


class ReLU(Module):
    r"""Applies :math:`\text{ReLU}(x) = \max(0, x)` elementwise.

    Args:
        inplace (bool): do it in place. Default: ``False``.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.ReLU()(mg.tensor([-1.0, 2.0]))
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace) if self.inplace else F.relu(input)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class LeakyReLU(Module):
    r"""Applies :math:`\max(0, x) + \text{negative\_slope} \cdot \min(0, x)` elementwise.

    Args:
        negative_slope (float): the slope for negative inputs. Default: 1e-2.
        inplace (bool): do it in place. Default: ``False``.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.LeakyReLU(0.1)(mg.tensor([-1.0, 2.0]))
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        if self.inplace:
            return F.leaky_relu(input, self.negative_slope, inplace=True)
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace, True)}"


class GELU(Module):
    r"""Applies :math:`x \Phi(x)` elementwise (:math:`\Phi` the standard normal CDF).

    Args:
        approximate (str): ``'none'`` (exact, with erf) or ``'tanh'``
            (:math:`0.5x(1 + \tanh(\sqrt{2/\pi}(x + 0.044715x^3)))`). Default: ``'none'``.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.GELU(approximate="tanh")(mg.randn(2))
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    r"""Applies :math:`x \sigma(x)` (swish) elementwise.

    Args:
        inplace (bool): do it in place. Default: ``False``.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.SiLU()(mg.randn(2))
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=True) if self.inplace else F.silu(input)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class ELU(Module):
    r"""Applies :math:`x` for :math:`x > 0` and :math:`\alpha (e^x - 1)` otherwise, elementwise.

    Args:
        alpha (float): the :math:`\alpha` value. Default: 1.0.
        inplace (bool): do it in place. Default: ``False``.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.ELU()(mg.randn(2))
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, inplace=True) if self.inplace else F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_str(self.inplace, True)}"


class Sigmoid(Module):
    r"""Applies :math:`\sigma(x) = 1 / (1 + e^{-x})` elementwise.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.Sigmoid()(mg.randn(2))
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class Tanh(Module):
    r"""Applies :math:`\tanh(x)` elementwise.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.Tanh()(mg.randn(2))
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class Softplus(Module):
    r"""Applies :math:`\frac{1}{\beta} \log(1 + e^{\beta x})` elementwise; linear above ``threshold``.

    Args:
        beta (float): the :math:`\beta` value. Default: 1.0.
        threshold (float): above :math:`\beta x >` threshold the identity is used. Default: 20.0.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.Softplus(beta=2.0)(mg.randn(2))
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


def _legacy_softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    r"""Applies :math:`\exp(x_i) / \sum_j \exp(x_j)` along ``dim`` (numerically stable).

    Args:
        dim (int): the dimension along which the outputs sum to 1. ``None`` picks PyTorch's legacy
            implicit dimension with a warning.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape, values in [0, 1].

    Example:
        >>> nn.Softmax(dim=1)(mg.randn(2, 3)).sum(1)
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        dim = self.dim if self.dim is not None else _legacy_softmax_dim("softmax", input.dim())
        return F.softmax(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    r"""Applies :math:`\log(\exp(x_i) / \sum_j \exp(x_j))` along ``dim`` (numerically stable).

    Args:
        dim (int): the dimension to normalise along. ``None`` picks PyTorch's legacy implicit
            dimension with a warning.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape, values in (-inf, 0].

    Example:
        >>> nn.LogSoftmax(dim=1)(mg.randn(2, 3))
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        dim = self.dim if self.dim is not None else _legacy_softmax_dim("log_softmax", input.dim())
        return F.log_softmax(input, dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class CELU(Module):
    """CELU(x) = max(0, x) + min(0, alpha (exp(x / alpha) - 1)), as torch.nn.CELU."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_str(self.inplace, True)}"


class _Simple(Module):
    """An activation without parameters: forward is F.<_fn>(input[, inplace])."""
    _fn = None
    _has_inplace = True

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        fn = getattr(F, self._fn)
        return fn(input, inplace=self.inplace) if self._has_inplace else fn(input)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class SELU(_Simple):
    """SELU(x) = scale (max(0, x) + min(0, alpha (exp(x) - 1))), as torch.nn.SELU."""
    _fn = "selu"


class Hardsigmoid(_Simple):
    """Hardsigmoid(x) = clamp(x / 6 + 1/2, 0, 1), as torch.nn.Hardsigmoid."""
    _fn = "hardsigmoid"


class Hardswish(_Simple):
    """Hardswish(x) = x * Hardsigmoid(x), as torch.nn.Hardswish."""
    _fn = "hardswish"


class Mish(_Simple):
    """Mish(x) = x tanh(softplus(x)), as torch.nn.Mish."""
    _fn = "mish"


class Softsign(_Simple):
    """Softsign(x) = x / (1 + |x|), as torch.nn.Softsign."""
    _fn = "softsign"
    _has_inplace = False

    def __init__(self) -> None:
        super().__init__(False)


class Tanhshrink(_Simple):
    """Tanhshrink(x) = x - tanh(x), as torch.nn.Tanhshrink."""
    _fn = "tanhshrink"
    _has_inplace = False

    def __init__(self) -> None:
        super().__init__(False)


class GLU(Module):
    """GLU(a, b) = a * sigmoid(b) over the two halves of dim, as torch.nn.GLU."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardtanh(Module):
    r"""Hardtanh(x) = clamp(x, min_val, max_val), as ``torch.nn.Hardtanh`` (gradient 1 strictly inside).

    Args:
        min_val (float): the lower end of the linear region. Default: -1.
        max_val (float): the upper end of the linear region. Default: 1.
        inplace (bool): do it in place. Default: ``False``.

    Shape:
        - Input: :math:`(*)`.
        - Output: the same shape.

    Example:
        >>> nn.Hardtanh(-2, 2)(mg.tensor([-3.0, 0.5, 3.0]))
        tensor([-2. ,  0.5,  2. ])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        if not max_val > min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """clamp(input, min_val, max_val)."""
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        """PyTorch's repr: the bounds (and inplace when set)."""
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace_str(self.inplace, lead=True)
