"""Parameter: a Tensor that a Module registers as one of its learnable weights."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .._dtype import get_default_dtype


class Parameter(Tensor):
    r"""A Tensor that is to be considered a module parameter, as ``torch.nn.Parameter``.

    Assigning a Parameter as an attribute of a [`Module`][minigrad.nn.Module] registers it in the module's
    ``parameters()``. A Parameter is always a leaf; it shares memory with the tensor or array it is
    made from.

    Args:
        data (Tensor or array_like, optional): the parameter's values. Default: an empty float tensor.
        requires_grad (bool): whether the parameter requires gradient. Default: ``True``.

    Example:
        >>> w = nn.Parameter(mg.zeros(3))
        >>> w.requires_grad, w.is_leaf
        (True, True)
    """

    def __init__(self, data: Tensor | np.ndarray | None = None, requires_grad: bool = True) -> None:
        if data is None:
            arr = np.empty((0,), dtype=get_default_dtype())
        elif isinstance(data, Tensor):
            arr = data._data
        else:
            arr = np.asarray(data)
            if arr.dtype == np.float64 and not isinstance(data, np.ndarray):
                arr = arr.astype(get_default_dtype())  # Python floats: the default float dtype
        super().__init__(arr, dtype=arr.dtype, requires_grad=requires_grad)
        self._data = arr  # share memory with the source, as PyTorch does

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        if self.is_meta:  # a meta parameter's copy is meta too (no data to copy)
            from ..tensor import _meta_array
            out = type(self)(np.zeros(self.shape, self.dtype), self.requires_grad)
            out._data = _meta_array(self.shape, self.dtype)
        else:
            out = type(self)(self._data.copy(), self.requires_grad)
        if self.grad is not None and self.grad.is_meta:
            out.grad = self.grad.to("meta")
        elif self.grad is not None:
            out.grad = Tensor(self.grad._data.copy(), dtype=self.grad.dtype)
        memo[id(self)] = out
        return out
