"""Pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, MaxUnpool1d/2d/3d, AdaptiveAvgPool1d/2d/3d and
AdaptiveMaxPool1d/2d/3d, as torch.nn's."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from ...ops.conv import _ntuple
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


class _AvgPoolNd(Module):
    """Average pooling over n spatial dimensions (arguments kept as given, as PyTorch's)."""

    _fn = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        """The pooled input."""
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        """PyTorch's repr of the pooling arguments."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
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

    _fn = staticmethod(F.avg_pool2d)


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


class _MaxPoolNd(Module):
    """Max pooling over n spatial dimensions (arguments kept as given, as PyTorch's _MaxPoolNd)."""

    _fn = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        """The pooled input (and the indices of the maxima when return_indices)."""
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        """PyTorch's repr of the pooling arguments."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    r"""1-D max pooling over an input of several channels, as ``torch.nn.MaxPool1d``.

    Args:
        kernel_size (int): size of the window.
        stride (int, optional): stride of the window. Default: ``kernel_size``.
        padding (int): implicit negative-infinity padding on both sides. Default: 0.
        dilation (int): spacing between window elements. Default: 1.
        return_indices (bool): also return the argmax indices (for [`MaxUnpool1d`][minigrad.nn.MaxUnpool1d]).
            Default: ``False``.
        ceil_mode (bool): use ceil instead of floor for the output size. Default: ``False``.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`L_{out} = \lfloor (L_{in} + 2p - d (k - 1) - 1) / s + 1 \rfloor`.

    Example:
        >>> nn.MaxPool1d(3, stride=2)(mg.randn(20, 16, 50)).shape
        (20, 16, 24)
    """

    _fn = staticmethod(F.max_pool1d)


class MaxPool3d(_MaxPoolNd):
    r"""3-D max pooling over an input volume of several channels, as ``torch.nn.MaxPool3d``; arguments as
    [`MaxPool1d`][minigrad.nn.MaxPool1d], each an int or a 3-tuple.

    Shape:
        - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.

    Example:
        >>> nn.MaxPool3d(2)(mg.randn(1, 2, 4, 6, 8)).shape
        (1, 2, 2, 3, 4)
    """

    _fn = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    r"""1-D average pooling over an input of several channels, as ``torch.nn.AvgPool1d``.

    Args:
        kernel_size (int): size of the window.
        stride (int, optional): stride of the window. Default: ``kernel_size``.
        padding (int): implicit zero padding on both sides. Default: 0.
        ceil_mode (bool): use ceil instead of floor for the output size. Default: ``False``.
        count_include_pad (bool): count the zero padding in the averages. Default: ``True``.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`L_{out} = \lfloor (L_{in} + 2p - k) / s + 1 \rfloor`.

    Example:
        >>> nn.AvgPool1d(3, stride=2)(mg.tensor([[[1.0, 2, 3, 4, 5, 6, 7]]]))
        tensor([[[2., 4., 6.]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        # AvgPool1d keeps 1-tuples, as PyTorch's (its repr shows them)
        self.kernel_size = _ntuple(kernel_size, 1, "kernel_size", "AvgPool1d")
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1, "stride", "AvgPool1d")
        self.padding = _ntuple(padding, 1, "padding", "AvgPool1d")
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        """The pooled input."""
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        """PyTorch's repr of the pooling arguments."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(_AvgPoolNd):
    r"""3-D average pooling over an input volume of several channels, as ``torch.nn.AvgPool3d``.

    Args:
        kernel_size (int or tuple): size of the window.
        stride (int or tuple, optional): stride of the window. Default: ``kernel_size``.
        padding (int or tuple): implicit zero padding on both sides. Default: 0.
        ceil_mode (bool): use ceil instead of floor for the output size. Default: ``False``.
        count_include_pad (bool): count the zero padding in the averages. Default: ``True``.
        divisor_override (int, optional): divide by this instead of the window size.

    Shape:
        - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.

    Example:
        >>> nn.AvgPool3d(2)(mg.randn(1, 2, 4, 4, 4)).shape
        (1, 2, 2, 2, 2)
    """

    _fn = staticmethod(F.avg_pool3d)


class _MaxUnpoolNd(Module):
    """The partial inverse of max pooling over n spatial dimensions."""

    _n = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        name, n = type(self).__name__, self._n
        self.kernel_size = _ntuple(kernel_size, n, "kernel_size", name)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n, "stride", name)
        self.padding = _ntuple(padding, n, "padding", name)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        """Zeros with input written at indices (the max pooling's); output_size picks among the sizes
        that pooling maps to input's."""
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._n - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        """PyTorch's repr of the unpooling arguments."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    r"""The partial inverse of [`MaxPool1d`][minigrad.nn.MaxPool1d] (non-maximal values set to zero), as
    ``torch.nn.MaxUnpool1d``.

    Args:
        kernel_size (int or tuple): the pooling's window size.
        stride (int or tuple, optional): the pooling's stride. Default: ``kernel_size``.
        padding (int or tuple): the pooling's padding. Default: 0.

    Shape:
        - Input: :math:`(N, C, L_{in})`; indices the same shape.
        - Output: :math:`L_{out} = (L_{in} - 1) s - 2p + k`, or ``output_size`` given to forward.
    """

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    r"""The partial inverse of [`MaxPool2d`][minigrad.nn.MaxPool2d] (non-maximal values set to zero), as
    ``torch.nn.MaxUnpool2d``. Arguments as [`MaxUnpool1d`][minigrad.nn.MaxUnpool1d], each an int or a pair.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`; indices the same shape.
        - Output: :math:`H_{out} = (H_{in} - 1) s_0 - 2p_0 + k_0`, likewise W, or ``output_size``.

    Example:
        >>> pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
        >>> out, idx = pool(mg.randn(1, 1, 5, 5))
        >>> unpool(out, idx, output_size=(5, 5)).shape
        (1, 1, 5, 5)
    """

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    r"""The partial inverse of [`MaxPool3d`][minigrad.nn.MaxPool3d], as ``torch.nn.MaxUnpool3d``. Arguments as
    [`MaxUnpool1d`][minigrad.nn.MaxUnpool1d], each an int or a 3-tuple."""

    _n = 3


class _AdaptivePool(Module):
    """Pooling to a fixed output size."""

    _fn = None

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """The input pooled to output_size."""
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        """PyTorch's repr: the output size."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    r"""1-D average pooling to a fixed output length, as ``torch.nn.AdaptiveAvgPool1d``: output i averages
    input positions [floor(i L / m), ceil((i + 1) L / m)).

    Args:
        output_size (int): the target length.

    Example:
        >>> nn.AdaptiveAvgPool1d(5)(mg.randn(1, 64, 8)).shape
        (1, 64, 5)
    """

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(_AdaptivePool):
    r"""3-D average pooling to a fixed output size, as ``torch.nn.AdaptiveAvgPool3d``.

    Args:
        output_size (int or tuple): the target ``(D, H, W)``; ``None`` in the tuple keeps that size.
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        """The input max-pooled to output_size (and the indices of the maxima when return_indices)."""
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    r"""1-D max pooling to a fixed output length, as ``torch.nn.AdaptiveMaxPool1d``.

    Args:
        output_size (int): the target length.
        return_indices (bool): also return the indices of the maxima. Default: ``False``.

    Example:
        >>> nn.AdaptiveMaxPool1d(5)(mg.randn(1, 64, 8)).shape
        (1, 64, 5)
    """

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    r"""2-D max pooling to a fixed output size, as ``torch.nn.AdaptiveMaxPool2d``.

    Args:
        output_size (int or tuple): the target ``(H, W)``; ``None`` in the tuple keeps that size.
        return_indices (bool): also return the flat indices of the maxima. Default: ``False``.

    Example:
        >>> nn.AdaptiveMaxPool2d((5, 7))(mg.randn(1, 64, 8, 9)).shape
        (1, 64, 5, 7)
    """

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    r"""3-D max pooling to a fixed output size, as ``torch.nn.AdaptiveMaxPool3d``; arguments as
    [`AdaptiveMaxPool2d`][minigrad.nn.AdaptiveMaxPool2d] with a 3-tuple."""

    _fn = staticmethod(F.adaptive_max_pool3d)
