"""Gradient clipping: clip_grad_norm_, clip_grad_value_, as torch.nn.utils."""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ...tensor import Tensor
from ...autograd import forward_ad as _forward_ad
from ...autograd import function as _function
from ...autograd.grad_mode import no_grad

_TensorOrTensors = Tensor | Iterable[Tensor]


def _as_list(tensors: _TensorOrTensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _norm_of(x: np.ndarray, norm_type: float) -> np.floating:
    x = x.ravel()
    if norm_type == math.inf:
        return np.max(np.abs(x)) if x.size else np.zeros((), x.dtype)[()]
    if norm_type == -math.inf:
        return np.min(np.abs(x)) if x.size else np.full((), np.inf, x.dtype)[()]
    if norm_type == 2:
        return np.sqrt(np.dot(x, x))
    if norm_type == 1:
        return np.sum(np.abs(x))
    if norm_type == 0:
        return np.asarray(np.count_nonzero(x), dtype=x.dtype)[()]
    return np.sum(np.abs(x) ** norm_type) ** (1.0 / norm_type)


_NONFINITE = ("The total norm of order {} for gradients from `parameters` is non-finite, so it cannot be "
              "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
              "`error_if_nonfinite=False`")


def get_total_norm(tensors: _TensorOrTensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    r"""The norm of the norms of ``tensors``, as if they were concatenated into one vector.

    Args:
        tensors (Tensor or iterable of Tensors): e.g. the gradients.
        norm_type (float): the p of the p-norm; ``inf`` for the max norm. Default: 2.0.
        error_if_nonfinite (bool): raise if the total is nan or inf. Default: ``False``.
        foreach (bool, optional): accepted for compatibility; ignored.

    Returns:
        the total norm, a 0-d Tensor.
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor(np.array(0.0, dtype=np.float32))
    dtype = tensors[0].dtype
    if _function._state.tracer is not None:
        # under mg.graph.trace / mg.jit: the same norms as ops, so a compiled step reads each call's
        # gradients (NumPy here would bake the traced call's norm into the program as a constant)
        from ...ops.reduction import norm
        from ...ops.shape import stack
        total = norm(stack([norm(t.detach().to(dtype), norm_type) for t in tensors]), norm_type)
        if error_if_nonfinite and not bool(total.isfinite()):   # a graph break: it needs the value
            raise RuntimeError(_NONFINITE.format(norm_type))
        return total
    norms = np.array([_norm_of(t._data, norm_type) for t in tensors], dtype=dtype)
    total = np.asarray(_norm_of(norms, norm_type), dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(_NONFINITE.format(norm_type))
    return Tensor(total, dtype=dtype)


def clip_grads_with_norm_(parameters: _TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    r"""Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``, in place.

    The coefficient is computed in ``total_norm``'s dtype and every gradient is multiplied by it in
    one NumPy pass over its memory (no op per gradient, no graph), as PyTorch's ``_foreach_mul_``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    if _function._state.tracer is not None and isinstance(total_norm, Tensor) and total_norm.dtype.kind == "f":
        # under mg.graph.trace / mg.jit: the coefficient as ops on the traced norm (see get_total_norm)
        with no_grad():
            coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
            for g in grads:
                g.mul_(coef)
        return
    total = total_norm._data if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    if total.dtype.kind != "f":
        total = total.astype(np.float32)
    ft = total.dtype.type
    coef = ft(max_norm) / (total + ft(1e-6))
    coef = np.minimum(coef, ft(1.0)) if not np.isnan(coef) else coef    # clamp(max=1.0): nan stays nan
    fused = _function._state.tracer is None and not _forward_ad._open()   # as the optimizers' fused steps
    with no_grad():
        for g in grads:
            a = g._data
            if fused and a.flags.writeable and a.dtype.kind == "f" and a.ndim:
                np.multiply(a, coef, out=a, casting="same_kind")
                g._bump_version()
            else:   # under mg.graph.trace or forward AD, or a read-only / 0-d gradient: the Tensor op
                g.mul_(Tensor(np.asarray(coef)))


def clip_grad_norm_(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    r"""Clip the gradient norm of ``parameters`` in place, as ``torch.nn.utils.clip_grad_norm_``.

    The norm is computed over all gradients together, as if concatenated into one vector. When it
    exceeds ``max_norm`` every gradient is multiplied by ``max_norm / (total_norm + 1e-6)``.

    Args:
        parameters (Tensor or iterable of Tensors): the tensors whose ``.grad`` is clipped.
        max_norm (float): the largest allowed norm.
        norm_type (float): the p of the p-norm; ``inf`` for the max norm. Default: 2.0.
        error_if_nonfinite (bool): raise ``RuntimeError`` if the total norm is nan or inf.
            Default: ``False``.
        foreach (bool, optional): accepted for compatibility; ignored.

    Returns:
        the total norm of the gradients before clipping, a 0-d Tensor.

    Example:
        >>> loss.backward()
        >>> total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters: _TensorOrTensors, clip_value: float, foreach: bool | None = None) -> None:
    r"""Clamp every gradient of ``parameters`` into ``[-clip_value, clip_value]`` in place.

    Args:
        parameters (Tensor or iterable of Tensors): the tensors whose ``.grad`` is clipped.
        clip_value (float): the largest allowed absolute value.
        foreach (bool, optional): accepted for compatibility; ignored.

    Example:
        >>> nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
