"""Linear and Identity layers."""
from __future__ import annotations

import math
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._utils import _check_cpu, _empty
from .module import Module


class Identity(Module):
    r"""A placeholder that returns its input unchanged; its arguments are ignored.

    Shape:
        - Input: :math:`(*)`.
        - Output: :math:`(*)`, the same tensor.

    Example:
        >>> nn.Identity(54, unused="argument")(mg.randn(128, 20)).shape
        (128, 20)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    r"""Applies an affine transform :math:`y = x A^T + b`, as ``torch.nn.Linear``.

    Args:
        in_features (int): size of each input sample.
        out_features (int): size of each output sample.
        bias (bool): learn an additive bias. Default: ``True``.
        dtype: the parameters' dtype. Default: ``mg.get_default_dtype()``.

    Shape:
        - Input: :math:`(*, H_{in})` with :math:`H_{in} = \text{in\_features}`.
        - Output: :math:`(*, H_{out})` with :math:`H_{out} = \text{out\_features}`.

    Attributes:
        weight: shape ``(out_features, in_features)``, initialised from
            :math:`\mathcal{U}(-\sqrt{k}, \sqrt{k})` with :math:`k = 1/\text{in\_features}`
            (``kaiming_uniform_`` with ``a=sqrt(5)``).
        bias: shape ``(out_features,)``, from the same distribution.

    Example:
        >>> m = nn.Linear(20, 30)
        >>> m(mg.randn(128, 20)).shape
        (128, 30)
    """

    in_features: int
    out_features: int

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weight and bias as PyTorch's Linear does."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        p = self._parameters  # read directly: self.weight is found by Module.__getattr__ only after
        if "weight" in p and "bias" in p:  # a failed lookup (~0.8 us each, every step)
            return F.linear(input, p["weight"], p["bias"])
        return F.linear(input, self.weight, self.bias)  # moved out of _parameters (a reparametrisation)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    r"""out = x1^T A x2 + b, as ``torch.nn.Bilinear``: weight (out, in1, in2), bias (out,)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Uniform in [-1/sqrt(in1), 1/sqrt(in1)], as PyTorch."""
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        from ...ops.linalg import einsum
        out = einsum("...i,oij,...j->...o", input1, self.weight, input2)
        return out + self.bias if self.bias is not None else out

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
