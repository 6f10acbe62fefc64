"""parameters_to_vector / vector_to_parameters, as torch.nn.utils."""
from __future__ import annotations

from typing import Iterable

from ...tensor import Tensor


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    r"""Flatten and concatenate ``parameters`` into one 1-D tensor (differentiable).

    Example:
        >>> vec = nn.utils.parameters_to_vector(model.parameters())
    """
    from ... import cat  # the public op, imported late so minigrad.nn loads while minigrad does
    if isinstance(parameters, Tensor):
        raise TypeError(f"expected an iterable of Tensors, but got: {type(parameters).__name__}")
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    r"""Copy slices of the 1-D ``vec`` into ``parameters``, in order (each ``.data`` replaced by a view).

    Args:
        vec (Tensor): a 1-D tensor with as many elements as all ``parameters`` together.
        parameters (iterable of Tensors): the tensors to overwrite.

    Example:
        >>> nn.utils.vector_to_parameters(vec * 0.5, model.parameters())
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.dim() != 1 or vec.numel() != total:
        raise ValueError(f"vector_to_parameters: vec has shape {tuple(vec.shape)}, the parameters hold "
                         f"{total} elements")
    pointer = 0
    for p in params:
        n = p.numel()
        p._data = vec._data[pointer:pointer + n].reshape(p.shape).astype(p.dtype, copy=False)
        pointer += n
