"""Helpers for layer constructors: parameter dtypes, the CPU-only device check."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ...device import check_device
from ..._dtype import get_default_dtype


def _factory_dtype(dtype: Any) -> np.dtype:
    """The dtype for a layer's new parameters: the one given, else the default float dtype."""
    return np.dtype(dtype) if dtype is not None else get_default_dtype()


def _empty(*shape: int, dtype: Any = None) -> np.ndarray:
    """A float array for a new parameter (reset_parameters fills it). A bad size (nn.Linear(-1, 5))
    raises naming the module and the size, as mg.empty does, instead of NumPy's bare message."""
    from ...creation import _size
    owner = sys._getframe(1).f_locals.get("self")
    _size(shape, f"nn.{type(owner).__name__}" if owner is not None else "nn module")
    return np.zeros(shape, dtype=_factory_dtype(dtype))


def _check_cpu(device: Any) -> None:
    check_device(device, "nn module")

