"""minigrad.nn.init: in-place parameter initialisation, as torch.nn.init.

Every function fills ``tensor`` in place (under no_grad, so a leaf that requires grad may be
initialised), draws from ``minigrad.random.get_rng(generator)``, and returns ``tensor``.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import minigrad as mg
from ..autograd.grad_mode import no_grad
from ..ops.random import Normal, Uniform
from ..random import get_rng
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
           "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "orthogonal_"]


def _fill(tensor: Tensor, values) -> Tensor:
    """tensor[...] = values (cast to tensor's dtype), in place and unrecorded."""
    arr = np.asarray(values, dtype=tensor.dtype)
    with no_grad():
        tensor.copy_(mg.from_numpy(np.ascontiguousarray(np.broadcast_to(arr, tuple(tensor.shape)))))
    return tensor


def _fill_drawn(tensor: Tensor, drawn: Tensor) -> Tensor:
    """tensor[...] = a random op's output: mg.graph.trace records the draw, so a graph draws afresh."""
    with no_grad():
        tensor.copy_(drawn)
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    r"""The recommended gain for a nonlinearity: 1 (linear, conv, sigmoid), 5/3 (tanh), sqrt(2) (relu),
    sqrt(2 / (1 + slope^2)) (leaky_relu, slope = param or 0.01), 3/4 (selu).

    Args:
        nonlinearity (str): the name of the nonlinear function.
        param (float, optional): the negative slope for ``'leaky_relu'``.

    Example:
        >>> nn.init.calculate_gain('leaky_relu', 0.2)
        1.3867504905630728
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, numbers.Number):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (receptive field =
    product of the dimensions after the first two)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    shape = tuple(tensor.shape)
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    r"""tensor ~ U(a, b), in place.

    Args:
        tensor (Tensor): the tensor to fill.
        a (float): the lower bound. Default: 0.
        b (float): the upper bound. Default: 1.
        generator (mg.Generator, optional): the source of randomness.
    """
    return _fill_drawn(tensor, Uniform.apply(tuple(tensor.shape), tensor.dtype, float(a), float(b), generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    r"""tensor ~ N(mean, std^2), in place."""
    return _fill_drawn(tensor, Normal.apply(tuple(tensor.shape), tensor.dtype, float(mean), float(std), generator))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    r"""tensor ~ N(mean, std^2) truncated to [a, b] (by redrawing values outside), in place."""
    rng = get_rng(generator)
    n = tensor.numel()
    out = np.empty(n)
    filled = 0
    while filled < n:
        draw = rng.normal(mean, std, size=max(2 * (n - filled), 16))
        draw = draw[(draw >= a) & (draw <= b)][:n - filled]
        out[filled:filled + draw.size] = draw
        filled += draw.size
    return _fill(tensor, out.reshape(tuple(tensor.shape)))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """tensor = val everywhere, in place."""
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """tensor = 1 everywhere, in place."""
    return _fill(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    """tensor = 0 everywhere, in place."""
    return _fill(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """tensor = the (rectangular) identity matrix, in place; 2-D tensors only."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    r"""tensor ~ U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010), in place."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    r"""tensor ~ N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)), in place."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
    r"""tensor ~ U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015), in place.

    Args:
        tensor (Tensor): the tensor to fill (at least 2-D).
        a (float): the negative slope of the rectifier after this layer (for ``'leaky_relu'``).
        mode (str): ``'fan_in'`` (preserve the forward variance) or ``'fan_out'`` (the backward's).
        nonlinearity (str): the nonlinearity's name, as [`calculate_gain()`][minigrad.nn.init.calculate_gain].
            Default: ``'leaky_relu'``.
        generator (mg.Generator, optional): the source of randomness.

    Example:
        >>> w = mg.empty(3, 5)
        >>> nn.init.kaiming_uniform_(w, mode='fan_in', nonlinearity='relu')
    """
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
    r"""tensor ~ N(0, std^2) with std = gain / sqrt(fan) (He et al., 2015), in place. Arguments as
    [`kaiming_uniform_()`][minigrad.nn.init.kaiming_uniform_]."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    r"""tensor = gain * a (semi-)orthogonal matrix from the QR decomposition of a normal draw (trailing
    dimensions flattened), in place."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = get_rng(generator).normal(size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))  # make the decomposition unique (uniform over the orthogonal group)
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tuple(tensor.shape)))
