"""Convolution layers: Conv1d, Conv2d, Conv3d and ConvTranspose1d/2d/3d (one _ConvNd base, as PyTorch's)."""
from __future__ import annotations

import math
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ...ops.conv import _ntuple, _same_padding
from ._utils import _check_cpu, _empty
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """The parameters, initialisation and repr shared by the convolution layers (n spatial dims)."""

    _n = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None, output_padding: Any = 0) -> None:
        super().__init__()
        _check_cpu(device)
        name, n = type(self).__name__, self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size = _ntuple(kernel_size, n, "kernel_size", name)
        stride, dilation = _ntuple(stride, n, "stride", name), _ntuple(dilation, n, "dilation", name)
        if isinstance(padding, str):
            if self._transposed:
                raise ValueError(f"{name}: padding must be an int or a tuple of ints, got {padding!r}")
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, n, "padding", name)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n, "output_padding", name)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad takes (left, right, top, bottom, ...): the last dimension first
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * n
            if padding == "same":
                self._reversed_padding_repeated_twice = [
                    p for lo_hi in reversed(_same_padding(kernel_size, dilation)) for p in lo_hi]
        else:
            self._reversed_padding_repeated_twice = [p for p in padding[::-1] for _ in range(2)]
        if self._transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_empty(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weight and bias as PyTorch's convolution layers do."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv(self, input: Tensor, weight: Tensor, bias: Tensor | None, padding: Any) -> Tensor:
        return (F.conv1d, F.conv2d, F.conv3d)[self._n - 1](input, weight, bias, self.stride, padding,
                                                          self.dilation, self.groups)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            return self._conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                              weight, bias, (0,) * self._n)
        return self._conv(input, weight, bias, self.padding)

    def forward(self, input: Tensor) -> Tensor:
        """The convolution of `input` with this layer's weight and bias."""
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """PyTorch's repr of the layer's arguments (those away from their defaults)."""
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
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

    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: str | int | tuple[int, int] = 0,
                 dilation: int | tuple[int, int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class Conv1d(_ConvNd):
    r"""A 1-D convolution (cross-correlation) over an input signal of several channels, as ``torch.nn.Conv1d``.

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels produced by the convolution.
        kernel_size (int or tuple): size of the kernel.
        stride (int or tuple): stride of the convolution. Default: 1.
        padding (int, tuple or str): padding on both sides, or ``'valid'`` / ``'same'``. Default: 0.
        dilation (int or tuple): spacing between kernel elements. Default: 1.
        groups (int): blocked connections from input to output channels. Default: 1.
        bias (bool): learn an additive bias. Default: ``True``.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``. Default: ``'zeros'``.
        dtype: the parameters' dtype. Default: ``mg.get_default_dtype()``.

    Shape:
        - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
        - Output: :math:`(N, C_{out}, L_{out})` with
          :math:`L_{out} = \lfloor (L_{in} + 2p - d (k - 1) - 1) / s + 1 \rfloor`.

    Attributes:
        weight: shape ``(out_channels, in_channels / groups, kL)``, kaiming-uniform with ``a=sqrt(5)``.
        bias: shape ``(out_channels,)``.

    Example:
        >>> nn.Conv1d(16, 33, 3, stride=2)(mg.randn(20, 16, 50)).shape
        (20, 33, 24)
    """

    _n = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class Conv3d(_ConvNd):
    r"""A 3-D convolution (cross-correlation) over an input volume of several channels, as ``torch.nn.Conv3d``.

    Args: as [`Conv1d`][minigrad.nn.Conv1d], each an int or a 3-tuple.

    Shape:
        - Input: :math:`(N, C_{in}, D, H, W)` or :math:`(C_{in}, D, H, W)`.
        - Output: :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})`, each as [`Conv1d`][minigrad.nn.Conv1d]'s.

    Attributes:
        weight: shape ``(out_channels, in_channels / groups, kD, kH, kW)``.
        bias: shape ``(out_channels,)``.

    Example:
        >>> nn.Conv3d(4, 8, 3, padding=1)(mg.randn(2, 4, 5, 6, 7)).shape
        (2, 8, 5, 6, 7)
    """

    _n = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    """The transposed convolution layers: PyTorch's output_size -> output_padding rule."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple:
        """output_padding, or the one that gives `output_size` (within one stride of the smallest size)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        lead = 2 if input.ndim == n + 2 else 1
        output_size = tuple(int(s) for s in output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"{type(self).__name__}: output_size must have {n} or {n + lead} elements "
                             f"(got {len(output_size)})")
        mins = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        maxs = [m + s - 1 for m, s in zip(mins, self.stride)]
        for size, lo, hi in zip(output_size, mins, maxs):
            if not lo <= size <= hi:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid sizes range from "
                                 f"{mins} to {maxs} (for an input of {list(input.shape[lead:])})")
        return tuple(s - m for s, m in zip(output_size, mins))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        """The transposed convolution of `input`; output_size picks the output_padding that gives it."""
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._n - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding, self._output_padding(input, output_size),
                  self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    r"""A 1-D transposed convolution (the gradient of [`Conv1d`][minigrad.nn.Conv1d] with respect to its input), as
    ``torch.nn.ConvTranspose1d``.

    Args:
        in_channels (int), out_channels (int), kernel_size (int or tuple), stride (int or tuple): as
            [`Conv1d`][minigrad.nn.Conv1d].
        padding (int or tuple): crops ``padding`` from both sides of the full output. Default: 0.
        output_padding (int or tuple): extra size on one side of the output (smaller than stride or
            dilation). Default: 0.
        groups (int): Default: 1.
        bias (bool): Default: ``True``.
        dilation (int or tuple): Default: 1.
        padding_mode (str): only ``'zeros'``.

    Shape:
        - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
        - Output: :math:`L_{out} = (L_{in} - 1) s - 2p + d (k - 1) + \text{output\_padding} + 1`.

    Attributes:
        weight: shape ``(in_channels, out_channels / groups, kL)``.
        bias: shape ``(out_channels,)``.

    Example:
        >>> nn.ConvTranspose1d(16, 33, 3, stride=2)(mg.randn(20, 16, 50)).shape
        (20, 33, 101)
    """

    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    r"""A 2-D transposed convolution (the gradient of [`Conv2d`][minigrad.nn.Conv2d] with respect to its input), as
    ``torch.nn.ConvTranspose2d``. Arguments as [`ConvTranspose1d`][minigrad.nn.ConvTranspose1d], each an int
    or a pair.

    Shape:
        - Input: :math:`(N, C_{in}, H_{in}, W_{in})` or :math:`(C_{in}, H_{in}, W_{in})`.
        - Output: :math:`H_{out} = (H_{in} - 1) s_0 - 2p_0 + d_0 (k_0 - 1) + \text{output\_padding}_0 + 1`,
          likewise W.

    Attributes:
        weight: shape ``(in_channels, out_channels / groups, kH, kW)``.
        bias: shape ``(out_channels,)``.

    Example:
        >>> up = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1)
        >>> up(mg.randn(1, 16, 6, 6), output_size=(12, 12)).shape
        (1, 8, 12, 12)
    """

    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    r"""A 3-D transposed convolution (the gradient of [`Conv3d`][minigrad.nn.Conv3d] with respect to its input), as
    ``torch.nn.ConvTranspose3d``. Arguments as [`ConvTranspose1d`][minigrad.nn.ConvTranspose1d], each an int
    or a 3-tuple.

    Attributes:
        weight: shape ``(in_channels, out_channels / groups, kD, kH, kW)``.
        bias: shape ``(out_channels,)``.
    """

    _n = 3
