"""Pooling layers: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, AdaptiveMaxPool2d."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class MaxPool2d(Module):
    r"""2-D max pooling over an input of several planes, as ``torch.nn.MaxPool2d``.

    Args:
        kernel_size (int or tuple): size of the window.
        stride (int or tuple, optional): stride of the window. Default: ``kernel_size``.
        padding (int or tuple): implicit negative-infinity padding on both sides. Default: 0.
        dilation (int or tuple): spacing between window elements. Default: 1.
        return_indices (bool): also return the argmax indices. Default: ``False``.
        ceil_mode (bool): use ceil instead of floor for the output size. Default: ``False``.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` with
          :math:`H_{out} = \lfloor (H_{in} + 2p - d (k - 1) - 1) / s + 1 \rfloor`, likewise W.

    Example:
        >>> nn.MaxPool2d(2)(mg.randn(1, 3, 8, 8)).shape
        (1, 3, 4, 4)
    """

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    r"""2-D average pooling over an input of several planes, as ``torch.nn.AvgPool2d``.

    Args:
        kernel_size (int or tuple): size of the window.
        stride (int or tuple, optional): stride of the window. Default: ``kernel_size``.
        padding (int or tuple): implicit zero padding on both sides. Default: 0.
        ceil_mode (bool): use ceil instead of floor for the output size. Default: ``False``.
        count_include_pad (bool): count the zero padding in the averages. Default: ``True``.
        divisor_override (int, optional): divide by this instead of the window size.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` with
          :math:`H_{out} = \lfloor (H_{in} + 2p - k) / s + 1 \rfloor`, likewise W.

    Example:
        >>> nn.AvgPool2d(3, stride=2)(mg.randn(20, 16, 50, 32)).shape
        (20, 16, 24, 15)
    """

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    r"""2-D average pooling to a fixed output size, as ``torch.nn.AdaptiveAvgPool2d``.

    Args:
        output_size (int or tuple): the target ``(H, W)``; an int means a square; ``None`` in the
            tuple keeps that input size.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, S_0, S_1)` with :math:`S` = ``output_size``.

    Example:
        >>> nn.AdaptiveAvgPool2d((5, 7))(mg.randn(1, 64, 8, 9)).shape
        (1, 64, 5, 7)
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
