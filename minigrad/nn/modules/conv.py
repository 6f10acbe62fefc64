"""Conv2d."""
from __future__ import annotations

import math
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ...ops.conv import _pair, _same_padding
from ._utils import _check_cpu, _empty
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class Conv2d(Module):
    r"""A 2-D convolution (cross-correlation) over an input of several planes, as ``torch.nn.Conv2d``.

    Args:
        in_channels (int): channels of the input image.
        out_channels (int): channels produced by the convolution.
        kernel_size (int or tuple): size of the kernel.
        stride (int or tuple): stride of the convolution. Default: 1.
        padding (int, tuple or str): padding added to all four sides, or ``'valid'`` (none) or
            ``'same'`` (output as large as the input; stride 1 only). Default: 0.
        dilation (int or tuple): spacing between kernel elements. Default: 1.
        groups (int): blocked connections from input to output channels. Default: 1.
        bias (bool): learn an additive bias. Default: ``True``.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``. Default: ``'zeros'``.
        dtype: the parameters' dtype. Default: ``mg.get_default_dtype()``.

    Shape:
        - Input: :math:`(N, C_{in}, H_{in}, W_{in})` or :math:`(C_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, H_{out}, W_{out})` with
          :math:`H_{out} = \lfloor (H_{in} + 2p_0 - d_0 (k_0 - 1) - 1) / s_0 + 1 \rfloor`, likewise W.

    Attributes:
        weight: shape ``(out_channels, in_channels / groups, kH, kW)``, kaiming-uniform with ``a=sqrt(5)``.
        bias: shape ``(out_channels,)``, uniform in :math:`\pm 1/\sqrt{\text{fan\_in}}`.

    Example:
        >>> m = nn.Conv2d(16, 33, 3, stride=2)
        >>> m(mg.randn(20, 16, 50, 100)).shape
        (20, 33, 24, 49)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: str | int | tuple[int, int] = 0,
                 dilation: int | tuple[int, int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = (_pair(kernel_size, "kernel_size", "Conv2d"), _pair(stride, "stride", "Conv2d"),
                                         _pair(dilation, "dilation", "Conv2d"))
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _pair(padding, "padding", "Conv2d")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad takes (left, right, top, bottom): the last dimension first
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0, 0, 0]
            if padding == "same":
                self._reversed_padding_repeated_twice = [
                    p for lo_hi in reversed(_same_padding(kernel_size, dilation)) for p in lo_hi]
        else:
            self._reversed_padding_repeated_twice = [p for p in padding[::-1] for _ in range(2)]
        self.weight = Parameter(_empty(out_channels, in_channels // groups, *kernel_size, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weight and bias as PyTorch's Conv2d does."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv2d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                            weight, bias, self.stride, (0, 0), self.dilation, self.groups)
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.stride):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s
