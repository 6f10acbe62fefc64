"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d: modules over F.interpolate, as torch.nn's."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class Upsample(Module):
    r"""Resize a (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to `size` or by `scale_factor`, as
    ``torch.nn.Upsample`` (see [`minigrad.nn.functional.interpolate()`][minigrad.nn.functional.interpolate]
    for the modes' rules).

    Args:
        size (int or tuple, optional): the output's spatial size.
        scale_factor (float or tuple, optional): multiplier of the spatial size.
        mode (str): ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``, ``'bicubic'``, ``'trilinear'`` or
            ``'area'``. Default: ``'nearest'``.
        align_corners (bool, optional): linear modes only: map corner pixel centres onto each other.
        recompute_scale_factor (bool, optional): compute the output size, then use in / out as the scale.

    Example:
        >>> up = nn.Upsample(scale_factor=2, mode="bilinear")
        >>> up(mg.randn(1, 3, 4, 5)).shape
        (1, 3, 8, 10)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        """The resized input."""
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        """PyTorch's repr: the scale factor (or size) and the mode."""
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    r"""Nearest-neighbour upsampling of (N, C, H, W), as ``torch.nn.UpsamplingNearest2d``
    (``Upsample(mode='nearest')``).

    Args:
        size (int or tuple, optional): the output's (H, W).
        scale_factor (float or tuple, optional): multiplier of (H, W).
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    r"""Bilinear upsampling of (N, C, H, W) with ``align_corners=True``, as ``torch.nn.UpsamplingBilinear2d``.

    Args:
        size (int or tuple, optional): the output's (H, W).
        scale_factor (float or tuple, optional): multiplier of (H, W).
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
