"""Helpers for layer arguments: _pair turns an int into a 2-tuple, as torch.nn.modules.utils."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor import Tensor
from ..._dtype import get_default_dtype
from ...random import get_rng  # noqa: F401  (re-exported for layers that draw randomness)


def _pair(x: Any) -> tuple:
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x, x)


def _factory_dtype(dtype: Any) -> np.dtype:
    """The dtype for a layer's new parameters: the one given, else the default float dtype."""
    return np.dtype(dtype) if dtype is not None else get_default_dtype()


def _empty(*shape: int, dtype: Any = None) -> np.ndarray:
    """A float array for a new parameter (reset_parameters fills it)."""
    return np.zeros(shape, dtype=_factory_dtype(dtype))


def _check_cpu(device: Any) -> None:
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"minigrad runs on the CPU only; got device {device!r}")


__all__ = ["_pair", "_empty", "_factory_dtype", "_check_cpu", "Tensor"]
