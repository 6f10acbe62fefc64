"""minigrad.nn.functional: activations, losses, convolution, pooling and normalisation, as torch.nn.functional.

The public API only: argument checking, then either a composition of differentiable Tensor ops
or one fused op of the op layer (minigrad/ops: conv.py, pooling.py, resize.py,
loss.py, normalization.py, activation.py, padding.py, embedding.py), as torch.nn.functional over ATen.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from .._errors import ShapeError

import minigrad as mg
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd.graph import is_recomputing
from .. import kernels as _kernels
from .. import ops as _ops
from ..ops.activation import Gelu, LeakyRelu
from ..ops.attention import ScaledDotProductAttention, _probs as _sdpa_probs
from ..ops.elementwise import _promote
from ..ops.conv import Col2Im, Convolution, ConvTranspose, Im2Col, _GeomNd, _conv_pads, _make_geom, _ntuple, _pair
from ..ops.embedding import Embedding, renorm_rows_
from ..ops.loss import (BinaryCrossEntropy, BinaryCrossEntropyWithLogits, CrossEntropyLoss, MseLoss,
                        NllLoss)
from ..ops.normalization import NativeBatchNorm, NativeLayerNorm
from ..ops.padding import ConstantPadNd
from ..ops.pooling import AdaptiveMaxPoolNd, AvgPool, MaxPool, MaxUnpoolNd, avg_divisor
from ..random import get_rng
from ..ops.random import DropoutMask
from ..tensor import Tensor, _shape_of

__all__ = [
    "relu", "relu6", "hardtanh", "sigmoid", "tanh", "softmax", "log_softmax", "leaky_relu", "gelu",
    "silu", "elu", "softplus", "logsigmoid", "pad", "linear", "dropout", "one_hot", "normalize",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "conv2d", "unfold", "fold", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
    "batch_norm", "layer_norm", "rms_norm", "embedding",
]
from ..ops.embedding_bag import embedding_bag  # noqa: E402 - its wrapper lives with the op; exported here
__all__ += ["embedding_bag"]


# -- small helpers ------------------------------------------------------------------------------

def _arr(a):
    """A Tensor wrapping ndarray `a` (no copy, dtype kept)."""
    return mg.from_numpy(np.ascontiguousarray(a) if not isinstance(a, np.ndarray) else a)


def _as_tensor(x, like=None):
    """x as a Tensor; numbers and arrays take the dtype of `like` when it is given."""
    if isinstance(x, Tensor):
        return x
    arr = np.asarray(x)
    if like is not None and arr.dtype.kind in "fiu":
        return mg.tensor(arr, dtype=like.dtype)
    return mg.tensor(arr)


def _inplace_result(input, out, inplace):
    """Write `out` into `input` when inplace was asked and autograd does not need the original."""
    if inplace and not (is_grad_enabled() and (input.requires_grad or out.requires_grad)):
        with no_grad():
            input.copy_(out)
        return input
    return out


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's deprecated size_average/reduce arguments, mapped to a `reduction` string."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else ("mean" if size_average else "sum")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
                  f"instead.", UserWarning, stacklevel=3)
    return reduction


def _check_reduction(reduction, op):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction "
                         f"(expected 'mean', 'sum' or 'none')")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_pointwise_target(input, target, op):
    """PyTorch's warning for a target whose size differs from the input's, and a clear error when they
    cannot broadcast at all."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({tuple(target.shape)}) that is different to the input size "
                      f"({tuple(input.shape)}). This will likely lead to incorrect results due to "
                      f"broadcasting. Please ensure they have the same size.", UserWarning, stacklevel=3)
        try:
            np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
        except ValueError:
            raise ShapeError(f"{op}: input of shape {tuple(input.shape)} and target of shape "
                             f"{tuple(target.shape)} cannot be broadcast") from None


# -- activations ----------------------------------------------------------------------------------

def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """out = max(x, 0);  dx = g * (x > 0). See [`minigrad.relu()`][minigrad.relu]."""
    return _inplace_result(input, mg.relu(input), inplace) if inplace else mg.relu(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """out = min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """out = clamp(x, min_val, max_val);  dx = g where min_val < x < max_val, else 0 (PyTorch's
    hardtanh_backward: 0 at the two ends, where clamp would pass the gradient); NaN stays NaN."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    out = mg.where(input <= min_val, min_val, mg.where(input >= max_val, max_val, input))
    return _inplace_result(input, out, inplace)


def sigmoid(input: Tensor) -> Tensor:
    """out = 1 / (1 + exp(-x)). See [`minigrad.sigmoid()`][minigrad.sigmoid]."""
    return mg.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """out = tanh(x). See [`minigrad.tanh()`][minigrad.tanh]."""
    return mg.tanh(input)


def _softmax_dim(ndim, name):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  f"include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""out_i = exp(x_i) / sum_j exp(x_j) along `dim` (numerically stable).

    Args:
        input (Tensor): the input.
        dim (int): the dimension along which the softmax is taken. ``None`` picks PyTorch's legacy
            implicit choice (with a warning).
        dtype (dtype, optional): cast the input to this dtype first.

    Example:
        >>> F.softmax(mg.tensor([1.0, 2.0, 3.0]), dim=0)
    """
    if dim is None:
        dim = _softmax_dim(input.ndim, "softmax")
    if dtype is not None:
        input = input.to(dtype)
    return mg.softmax(input, dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""out_i = x_i - logsumexp(x) along `dim` (numerically stable). Arguments as
    [`softmax()`][minigrad.nn.functional.softmax]."""
    if dim is None:
        dim = _softmax_dim(input.ndim, "log_softmax")
    if dtype is not None:
        input = input.to(dtype)
    return mg.log_softmax(input, dim)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    r"""out = x if x > 0 else negative_slope * x;  dx = g * (1 if x > 0 else negative_slope).

    Args:
        input (Tensor): the input.
        negative_slope (float): the slope for x <= 0. Default: 0.01.
        inplace (bool): write the result into `input` (when autograd does not need the original).
    """
    return _inplace_result(input, LeakyRelu.apply(input, float(negative_slope)), inplace)


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    r"""out = x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2)))  (approximate='tanh':
    0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))).

    Args:
        input (Tensor): the input.
        approximate (str): ``'none'`` (exact, erf) or ``'tanh'``. Default: ``'none'``.
    """
    if approximate == "none":
        if isinstance(input, Tensor) and input.dtype.kind == "f":
            return Gelu.apply(input)   # one node (ops/activation.py), the composite's bits
        return input * 0.5 * (1.0 + mg.erf(input * _SQRT1_2))
    if approximate == "tanh":
        return input * 0.5 * (1.0 + mg.tanh(_SQRT_2_PI * (input + 0.044715 * input * input * input)))
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """out = x * sigmoid(x)  (also called swish)."""
    return _inplace_result(input, input * mg.sigmoid(input), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    r"""out = x if x > 0 else alpha * (exp(x) - 1).

    Args:
        input (Tensor): the input.
        alpha (float): the value the output approaches as x -> -inf is -alpha. Default: 1.0.
        inplace (bool): write the result into `input` (when autograd does not need the original).
    """
    # exp of clamp(x, max=0): the branch not taken must not overflow, or its zero gradient
    # would be multiplied by inf
    neg = alpha * (mg.exp(mg.clamp(input, max=0.0)) - 1.0)
    return _inplace_result(input, mg.where(input > 0, input, neg), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    r"""out = log(1 + exp(beta * x)) / beta, or x where beta * x > threshold (for stability).

    Args:
        input (Tensor): the input.
        beta (float): the sharpness. Default: 1.
        threshold (float): above this value of beta * x the function is linear. Default: 20.
    """
    bx = input * beta if beta != 1 else input
    soft = mg.log1p(mg.exp(mg.clamp(bx, max=float(threshold))))
    if beta != 1:
        soft = soft / beta
    return mg.where(bx > threshold, input, soft)


def logsigmoid(input: Tensor) -> Tensor:
    """out = log(sigmoid(x)) = -softplus(-x), stable for large |x|; gradient sigmoid(-x) (0.5 at 0)."""
    return _ops.elementwise.LogSigmoid.apply(input)


# -- pad, linear, dropout, one_hot ----------------------------------------------------------------

_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    r"""Pad `input`; `pad` lists (left, right) widths starting from the LAST dimension, as PyTorch:
    ``(left, right, top, bottom, front, back, ...)``.

    Args:
        input (Tensor): the input.
        pad (tuple of ints): an even number of widths, at most 2 * input.dim(). Negative widths crop
            (in every mode; circular crops before it wraps, as PyTorch).
        mode (str): ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``. Default: ``'constant'``.
        value (float): the fill value for constant mode. Default: 0.

    Example:
        >>> F.pad(mg.ones(2, 3), (1, 1)).shape   # pads the last dimension
        (2, 5)
    """
    pad = tuple(int(p) for p in pad)
    ndim = input.ndim
    if len(pad) % 2 or len(pad) // 2 > ndim:
        raise RuntimeError(f"pad: padding length {len(pad)} must be even and at most 2 * input.dim() "
                         f"= {2 * ndim} (input shape {tuple(input.shape)})")
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "zeros":
        mode = "constant"
    if mode == "constant":
        for d, (lo, hi) in enumerate(widths):
            if input.shape[d] + lo + hi < 0:
                raise RuntimeError(f"pad: padding {(lo, hi)} of dimension {d} (size {input.shape[d]}) "
                                   f"gives a negative size")
        return ConstantPadNd.apply(input, tuple(widths), 0 if value is None else value)
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"pad: unrecognised padding mode {mode!r} (expected 'constant', 'reflect', "
                                  "'replicate' or 'circular')")
    if value:
        raise RuntimeError(f"pad: padding mode {mode!r} doesn't take in value argument")
    k = len(pad) // 2
    if mode != "circular":
        # PyTorch's reflection/replication kernels: every dimension but the batch one non-empty, and
        # the output may be empty along some padded dimensions but not along all of them
        first = max(ndim - k - 1, 0)
        if 0 in input.shape[first:]:
            raise RuntimeError(f"pad: {mode} padding needs every dimension but the batch one non-empty, "
                               f"but got input of shape {tuple(input.shape)}")
        outs = [input.shape[d] + lo + hi for d, (lo, hi) in enumerate(widths) if d >= ndim - k]
        if max(outs) <= 0 or min(outs) < 0:
            raise RuntimeError(f"pad: input is too small for padding {pad} of input {tuple(input.shape)}: "
                               f"the output sizes would be {tuple(outs)}")
    out = input
    for d, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        out = out.index_select(d, _arr(_pad_index(mode, int(input.shape[d]), lo, hi, d, input.shape)))
    return out  # repeated indices accumulate their gradients


def _pad_index(mode, n, lo, hi, d, shape):
    """The source index of each output position of dimension d (size n) padded by (lo, hi), as
    PyTorch: negative widths crop. reflect/replicate read output j at the virtual coordinate j - lo of
    the reflected/edge-extended input; circular crops first, then wraps the cropped part."""
    m = n + lo + hi
    where = f"padding {(lo, hi)} at dimension {d} of input {tuple(shape)}"
    if m < 0:
        raise RuntimeError(f"pad: input is too small for {where}: the output size would be {m}")
    if m == 0 and mode != "circular":  # allowed when another padded dimension is not empty (checked above)
        return np.zeros(0, np.int64)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(f"pad: padding size should be less than the corresponding input dimension, "
                             f"but got: {where}")
        period = 2 * (n - 1)
        c = np.arange(m) - lo
        c = c % period if period else np.zeros_like(c)
        return np.where(c >= n, period - c, c).astype(np.int64)
    if mode == "replicate":
        return np.clip(np.arange(m) - lo, 0, n - 1).astype(np.int64)
    # circular
    start, stop = max(-lo, 0), n - max(-hi, 0)
    k = stop - start  # the cropped size, which the padding wraps around
    if k < 0:
        raise RuntimeError(f"pad: negative padding crops more than the input's size: {where}")
    if m == 0:
        return np.zeros(0, np.int64)
    if max(lo, 0) > k or max(hi, 0) > k or k <= 0:
        raise RuntimeError(f"pad: padding value causes wrapping around more than once: {where}")
    return (start + (np.arange(m) - max(lo, 0)) % k).astype(np.int64)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""out = x @ weight.T + bias.

    Shape:
        - input: (*, in_features);  weight: (out_features, in_features);  bias: (out_features,)
        - output: (*, out_features)
    """
    return _ops.linear(input, weight, bias)  # one fused node; it checks the shapes (minigrad/ops/linalg.py)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False,
            generator=None) -> Tensor:
    r"""out = x * mask / (1 - p), mask ~ Bernoulli(1 - p) (inverted dropout); identity when not training.

    Args:
        input (Tensor): the input.
        p (float): the probability of zeroing an element. Default: 0.5.
        training (bool): apply dropout only when True. Default: True.
        inplace (bool): write the result into `input` (when autograd does not need the original).
        generator (mg.Generator, optional): the source of randomness.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    dt = input.dtype if input.dtype.kind == "f" else mg.get_default_dtype()
    if p == 1.0:
        scale = np.zeros(input.shape, dtype=dt)
    else:
        return _inplace_result(input, input * DropoutMask.apply(input.shape, dt, float(p), generator), inplace)
    return _inplace_result(input, input * _arr(scale), inplace)


def _feature_dropout(name, input, p, training, inplace, generator, rank):
    """Zero whole channels: one draw per (sample, channel) for a batched input of rank + 2 dims,
    per channel for an unbatched one of rank + 1 (PyTorch's dropout1d/2d/3d)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (rank + 1, rank + 2):
        raise RuntimeError(f"{name}: Expected {'3D or 4D' if rank == 2 else f'{rank + 1}D or {rank + 2}D'} input, "
                           f"but received input of shape {tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    lead = 2 if input.ndim == rank + 2 or rank == 2 else 1  # dropout2d's 3-D input is (N, C, L), as PyTorch's
    shape = tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)
    dt = input.dtype if input.dtype.kind == "f" else mg.get_default_dtype()
    if p == 1.0:
        return _inplace_result(input, input * _arr(np.zeros(shape, dtype=dt)), inplace)
    return _inplace_result(input, input * DropoutMask.apply(shape, dt, float(p), generator), inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    r"""Zero whole channels of (N, C, L) or (C, L) input with probability p, the rest scaled by 1/(1-p).

    Args:
        input (Tensor): the input.
        p (float): the probability of zeroing a channel. Default: 0.5.
        training (bool): apply dropout only when True. Default: True.
        inplace (bool): write the result into `input`.
    """
    return _feature_dropout("dropout1d", input, p, training, inplace, None, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    r"""Zero whole channels of (N, C, H, W) input (3-D input as (N, C, L)) with probability p.

    Args:
        input (Tensor): the input.
        p (float): the probability of zeroing a channel. Default: 0.5.
        training (bool): apply dropout only when True. Default: True.
        inplace (bool): write the result into `input`.
    """
    return _feature_dropout("dropout2d", input, p, training, inplace, None, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    r"""Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p.

    Args:
        input (Tensor): the input.
        p (float): the probability of zeroing a channel. Default: 0.5.
        training (bool): apply dropout only when True. Default: True.
        inplace (bool): write the result into `input`.
    """
    return _feature_dropout("dropout3d", input, p, training, inplace, None, 3)


_SELU_ALPHA_SCALED = 1.7580993408473766  # SELU's scale * alpha: the value a dropped unit takes is minus this


def _alpha_dropout(name, input, p, training, inplace, generator, feature):
    """PyTorch's _dropout_impl with alpha_dropout: keep mask m ~ Bernoulli(1 - p) (per element, or per
    (sample, channel) for the feature form), out = a * (x * m + alpha' * (1 - m)) + b with
    alpha' = -1.7581, a = ((1 - p) (1 + p alpha'^2))^(-1/2), b = -a alpha' p, so SELU's zero-mean
    unit-variance activations keep that mean and variance; dx = g * a * m."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if feature and input.ndim < 2:
        raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in the input "
                           f"(got shape {tuple(input.shape)})")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    dt = input.dtype if input.dtype.kind == "f" else mg.get_default_dtype()
    if p == 1.0:  # as PyTorch: x * 0, not the dropped value
        return _inplace_result(input, input * _arr(np.zeros((), dtype=dt)), inplace)
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = (DropoutMask.apply(shape, dt, float(p), generator) != 0).to(dt)
    alpha = _SELU_ALPHA_SCALED
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = (keep - 1) * (alpha * a) + alpha * a * p
    return _inplace_result(input, input * (keep * a) + b, inplace)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    r"""Alpha dropout (for SELU networks), as torch.nn.functional.alpha_dropout: each element is set
    to SELU's negative saturation value with probability p, then an affine map restores the input's
    mean and variance; identity when not training (the default, as PyTorch's).

    Args:
        input (Tensor): the input.
        p (float): the probability of dropping an element. Default: 0.5.
        training (bool): apply dropout only when True. Default: False.
        inplace (bool): write the result into `input`.
    """
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, None, False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    r"""Alpha dropout of whole channels (one draw per (sample, channel) of an (N, C, ...) input), as
    torch.nn.functional.feature_alpha_dropout; identity when not training (the default).

    Args:
        input (Tensor): the input, at least 2-D.
        p (float): the probability of dropping a channel. Default: 0.5.
        training (bool): apply dropout only when True. Default: False.
        inplace (bool): write the result into `input`.
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, None, True)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    r"""out[..., c] = 1 if tensor[...] == c else 0, an int64 tensor of shape tensor.shape + (num_classes,).

    Args:
        tensor (Tensor): class indices (integers).
        num_classes (int): the number of classes; -1 infers max(tensor) + 1.
    """
    t = np.asarray(tensor._data if isinstance(tensor, Tensor) else tensor)
    if t.dtype.kind not in "iu":
        raise TypeError(f"one_hot is only applicable to index tensor (integer dtype), got {t.dtype}")
    if t.size and t.min() < 0:
        raise ShapeError("one_hot: class values must be non-negative")
    if num_classes == -1:
        num_classes = int(t.max()) + 1 if t.size else 0
    elif t.size and t.max() >= num_classes:
        raise ShapeError(f"one_hot: class values must be smaller than num_classes ({num_classes}), "
                         f"got {int(t.max())}")
    t = tensor if isinstance(tensor, Tensor) else _arr(t)
    return (t.unsqueeze(-1) == mg.arange(num_classes)).to(mg.int64)  # ops, so a tracer sees them


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """out = x / max(||x||_p, eps) along `dim`."""
    return input / mg.clamp(input.norm(p, dim, keepdim=True), min=eps)


# -- losses ----------------------------------------------------------------------------------------

def _class_target_info(input, target, op):
    """Validate (input, class-index target); returns C. Input (N, C, d1, ...) with target (N, d1, ...)."""
    if target.dtype.kind not in "iu":
        raise TypeError(f"{op}: expected an integer (class index) target, got dtype {target.dtype} "
                        f"(input {tuple(input.shape)}, target {tuple(target.shape)})")
    shape = _shape_of(input)  # plain tuples: Size's slicing and comparison are Python code
    expected = shape[:1] + shape[2:]
    if _shape_of(target) != expected:
        raise ValueError(f"{op}: input of shape {shape} needs a class-index target of shape "
                         f"{expected}, got target of shape {tuple(target.shape)}")
    return shape[1]


_min, _max = np.minimum.reduce, np.maximum.reduce  # t.min() and t.max() without their Python wrappers


def _check_class_range(t, C, ignore_index, op):
    if t.ndim == 1 and _kernels.available():
        if _kernels.load("loss").in_range(t, C):  # the usual case, in one pass (numba)
            return
    elif t.size == 0 or (_min(t, None) >= 0 and _max(t, None) < C):  # the usual case, in two reductions
        return
    bad = (t != ignore_index) & ((t < 0) | (t >= C))
    if bad.any():
        v = int(t[bad].flat[0])
        raise IndexError(f"{op}: target {v} is out of bounds for {C} classes "
                         f"(valid: 0..{C - 1}, or ignore_index={ignore_index})")


def _class_weight(weight, C, op, dtype):
    if weight is None:
        return None
    w = weight._data if isinstance(weight, Tensor) else np.asarray(weight)
    if w.shape != (C,):
        raise ValueError(f"{op}: weight of shape {tuple(w.shape)} must have one entry per class ({C},)")
    return w.astype(dtype, copy=False)


def _unbatched(input, target, op):
    """Class dimension 0 (an unbatched (C,) input): add the batch dimension to input and target."""
    if input.ndim == 0:
        raise ValueError(f"{op}: input must have at least 1 dimension (C,) or (N, C, ...), got a scalar")
    if input.ndim == 1:
        if target.ndim == 1 and target.dtype.kind == "f" and target.shape == input.shape:
            return input.unsqueeze(0), target.unsqueeze(0), True  # class probabilities of one sample
        if target.ndim == 1 and target.shape[0] == 1:  # PyTorch also takes a size-1 target here
            return input.unsqueeze(0), target, False
        if target.ndim != 0:  # named in the user's shapes, before the batch dimension is added
            raise ValueError(f"{op}: for a 1-D input (shape {tuple(input.shape)}) the target must be a "
                             f"class index of shape () or (1,) or class probabilities of shape "
                             f"{tuple(input.shape)}, got target of shape {tuple(target.shape)}")
        return input.unsqueeze(0), target.unsqueeze(0), True
    return input, target, False


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    r"""Cross entropy of logits against class indices or class probabilities:
    loss_i = -sum_c q_ic * log_softmax(input)_ic (fused and numerically stable).

    With class-index targets q_ic = (1-eps) w_t [c == t_i] + eps/C w_c, and ``reduction='mean'``
    divides by the sum of w[t_i] over targets that are not ``ignore_index`` (as PyTorch). With
    class-probability targets (a float target of the input's shape) q_ic = w_c ((1-eps) y_ic + eps/C)
    and the mean divides by the number of samples.

    Args:
        input (Tensor): logits, (C,), (N, C) or (N, C, d1, d2, ...).
        target (Tensor): class indices (int) of shape (), (N,) or (N, d1, ...), in [0, C) or
            ``ignore_index``; or class probabilities of the input's shape.
        weight (Tensor, optional): a weight per class, shape (C,).
        ignore_index (int): a target value that contributes nothing. Default: -100.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        label_smoothing (float): eps in [0, 1], the amount of smoothing. Default: 0.0.

    Example:
        >>> logits = mg.randn(4, 10, requires_grad=True)
        >>> loss = F.cross_entropy(logits, mg.tensor([1, 0, 9, 3]))
        >>> loss.backward()
    """
    # (the checks below run every training step: each is skipped cheaply in the common case)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction != "mean":
        _check_reduction(reduction, "cross_entropy")
    if label_smoothing and not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    if type(target) is not Tensor:
        target = _as_tensor(target)
    if input.dtype.kind != "f":
        raise TypeError(f"cross_entropy: input must be floating point (logits), got {input.dtype}")
    unb = False
    shape = _shape_of(input)  # a plain tuple (a training loop passes here every step)
    if len(shape) < 2:
        input, target, unb = _unbatched(input, target, "cross_entropy")
        shape = _shape_of(input)
    C = shape[1]
    probs = target.dtype.kind == "f"
    if probs:
        if tuple(target.shape) != tuple(input.shape):
            raise ValueError(f"cross_entropy: a float target holds class probabilities and must have the "
                             f"input's shape {tuple(input.shape)}, got {tuple(target.shape)}; for class "
                             f"indices use an integer target of shape {tuple(input.shape[:1] + input.shape[2:])}")
        if target.dtype != input.dtype:
            target = target.to(input.dtype)
    else:
        _class_target_info(input, target, "cross_entropy")
        _check_class_range(target._data, C, ignore_index, "cross_entropy")
    w = None if weight is None else _class_weight(weight, C, "cross_entropy", input.dtype)
    out = CrossEntropyLoss.apply(input, target, w, probs, int(ignore_index), reduction, float(label_smoothing))
    if unb and reduction == "none":
        out = out.squeeze(0)
    return out


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    r"""Negative log likelihood of log-probabilities: loss_i = -w[t_i] * input[i, t_i].

    ``reduction='mean'`` divides by the sum of w[t_i] over targets that are not ``ignore_index``.

    Args:
        input (Tensor): log-probabilities, (C,), (N, C) or (N, C, d1, ...).
        target (Tensor): class indices of shape (), (N,) or (N, d1, ...).
        weight (Tensor, optional): a weight per class, shape (C,).
        ignore_index (int): a target value that contributes nothing. Default: -100.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "nll_loss")
    target = _as_tensor(target)
    input, target, unb = _unbatched(input, target, "nll_loss")
    C = _class_target_info(input, target, "nll_loss")
    _check_class_range(target._data, C, ignore_index, "nll_loss")
    w = _class_weight(weight, C, "nll_loss", input.dtype)
    out = NllLoss.apply(input, target, w, int(ignore_index), reduction)
    if unb and reduction == "none":
        out = out.squeeze(0)
    return out


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    r"""The Connectionist Temporal Classification loss, as torch.nn.functional.ctc_loss: the negative
    log of the total probability of every alignment of each target to its input frames.

    Args:
        log_probs (Tensor): log-probabilities (T, N, C) (or (T, C) unbatched), e.g. a log_softmax
            over C classes including the blank.
        targets (Tensor): the labels, padded (N, S) or concatenated (sum(target_lengths),) (or (S,)
            unbatched); values in [0, C), the blank allowed as PyTorch's.
        input_lengths (Tensor or sequence of ints): frames used per sample, (N,), each <= T.
        target_lengths (Tensor or sequence of ints): labels per sample, (N,).
        blank (int): the blank label. Default: 0.
        reduction (str): ``'none'`` (per sample, (N,)) | ``'mean'`` (each loss divided by its target
            length, then the mean over the batch) | ``'sum'``. Default: ``'mean'``.
        zero_infinity (bool): set infinite losses (no alignment fits the frames) and their gradients
            to zero. Default: False.

    The gradient is PyTorch's: it assumes `log_probs` comes from a log_softmax (it includes the term
    that the log_softmax's backward cancels), so through a log_softmax it is the exact derivative.

    Example:
        >>> lp = mg.randn(6, 2, 4).log_softmax(2)
        >>> F.ctc_loss(lp, mg.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]).shape
        ()
    """
    from ..ops.loss import CtcLoss
    op = "ctc_loss"
    _check_reduction(reduction, op)
    if log_probs.ndim not in (2, 3) or not log_probs.is_floating_point():
        raise RuntimeError(f"{op}: log_probs must be a floating (T, N, C) or (T, C) tensor, got "
                           f"{log_probs.dtype} of shape {tuple(log_probs.shape)}")
    unb = log_probs.ndim == 2
    targets = _as_tensor(targets)
    il, tl = (_as_tensor(v) for v in (input_lengths, target_lengths))
    if targets.is_floating_point() or targets.dtype != mg.int64:
        targets = targets.long()
    il, tl = il.long(), tl.long()
    if unb:
        log_probs, il, tl = log_probs.unsqueeze(1), il.reshape(1), tl.reshape(1)
        if targets.ndim == 1:
            targets = targets.unsqueeze(0)
    T, N, C = log_probs.shape
    if not 0 <= blank < C:
        raise RuntimeError(f"{op}: blank must be in label range [0, {C}), got {blank}")
    for name, v in (("input_lengths", il), ("target_lengths", tl)):
        if tuple(v.shape) != (N,):
            raise RuntimeError(f"{op}: {name} must be of size batch_size {N}, got shape {tuple(v.shape)}")
    if targets.ndim == 2 and targets.shape[0] != N:
        raise RuntimeError(f"{op}: padded targets of shape {tuple(targets.shape)} must be (N={N}, S)")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"{op}: targets must be 1-D (concatenated) or 2-D (padded), got shape "
                           f"{tuple(targets.shape)}")
    # the checks of the values (lengths, labels) run in CtcLoss's forward, on each sample's arrays under vmap
    loss = CtcLoss.apply(log_probs, targets, il, tl, int(blank), bool(zero_infinity))
    if reduction == "mean":
        return (loss / tl.clamp(min=1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unb else loss


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""loss = (x - y)^2, reduced by `reduction` ('mean' | 'sum' | 'none').

    Warns (UserWarning) when target's size differs from input's, as PyTorch does.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "mse_loss")
    target = _as_tensor(target, input)
    _check_pointwise_target(input, target, "mse_loss")
    return MseLoss.apply(*_promote(input, target), reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""loss = |x - y|, reduced by `reduction` ('mean' | 'sum' | 'none')."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "l1_loss")
    target = _as_tensor(target, input)
    _check_pointwise_target(input, target, "l1_loss")
    return _reduce(mg.abs(input - target), reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    r"""loss = 0.5 d^2 / beta if |d| < beta else |d| - 0.5 beta, with d = x - y.

    Args:
        beta (float): where the loss changes from quadratic to linear (beta=0 gives L1). Default: 1.0.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "smooth_l1_loss")
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    target = _as_tensor(target, input)
    _check_pointwise_target(input, target, "smooth_l1_loss")
    d = mg.abs(input - target)
    if beta == 0:
        return _reduce(d, reduction)
    # the quadratic branch reads d only where it is taken: its zero gradient times d = inf is nan
    q = mg.where(d < beta, d, 0.0)
    return _reduce(mg.where(d < beta, (0.5 / beta) * q * q, d - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    r"""loss = 0.5 d^2 if |d| < delta else delta (|d| - 0.5 delta), with d = x - y.

    Args:
        delta (float): where the loss changes from quadratic to linear; must be positive. Default: 1.0.
    """
    _check_reduction(reduction, "huber_loss")
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    target = _as_tensor(target, input)
    _check_pointwise_target(input, target, "huber_loss")
    d = mg.abs(input - target)
    q = mg.where(d < delta, d, 0.0)  # as smooth_l1_loss's: no d = inf in the branch not taken
    return _reduce(mg.where(d < delta, 0.5 * q * q, delta * (d - 0.5 * delta)), reduction)


def _check_same_target(input, target, op):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: Using a target size ({tuple(target.shape)}) that is different to the "
                         f"input size ({tuple(input.shape)}) is not supported. Please ensure they have "
                         f"the same size.")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    r"""loss = -w (y log x + (1 - y) log(1 - x)), each log clamped at -100 as PyTorch.

    Args:
        input (Tensor): probabilities in [0, 1].
        target (Tensor): targets in [0, 1], of the input's shape.
        weight (Tensor, optional): a rescaling weight broadcast to the input's shape.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy")
    target = _as_tensor(target, input)
    _check_same_target(input, target, "binary_cross_entropy")
    x = input._data
    if x.size and not ((x >= 0) & (x <= 1)).all():
        raise ValueError("binary_cross_entropy: all elements of input should be between 0 and 1")
    if target.dtype != input.dtype:
        target = target.to(input.dtype)
    loss = BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * _as_tensor(weight, input)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    r"""loss = -w (pw y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))), computed stably from logits
    as (1 - y) x + (1 + (pw - 1) y) softplus(-x).

    Args:
        input (Tensor): logits.
        target (Tensor): targets in [0, 1], of the input's shape.
        weight (Tensor, optional): a rescaling weight broadcast to the input's shape.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        pos_weight (Tensor, optional): a weight of positive examples, broadcast along the last
            dimension (one entry per class).
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    target = _as_tensor(target, input)
    _check_same_target(input, target, "binary_cross_entropy_with_logits")
    if target.dtype != input.dtype:
        target = target.to(input.dtype)
    if pos_weight is not None:
        pos_weight = _as_tensor(pos_weight, input)
        try:
            np.broadcast_shapes(tuple(pos_weight.shape), tuple(input.shape))
        except ValueError:
            raise ValueError(f"binary_cross_entropy_with_logits: pos_weight of shape {tuple(pos_weight.shape)} "
                             f"cannot be broadcast to the input's shape {tuple(input.shape)}") from None
    loss = BinaryCrossEntropyWithLogits.apply(input, target, pos_weight)
    if weight is not None:
        loss = loss * _as_tensor(weight, input)
    return _reduce(loss, reduction)


# -- convolution -----------------------------------------------------------------------------------

def _spatial_input(input, op, ndim_ok=(3, 4)):
    if input.ndim not in ndim_ok:
        raise RuntimeError(f"{op}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape "
                         f"{tuple(input.shape)}")
    if input.ndim == 3:
        return input.unsqueeze(0), True
    return input, False


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    r"""2-D cross-correlation: out[n, o] = bias[o] + sum_{c, i, j} weight[o, c, i, j] *
    xpad[n, g*C/groups + c, oh*sh + i*dh, ow*sw + j*dw]  (im2col + one batched matmul).

    Args:
        input (Tensor): (N, C_in, H, W) or unbatched (C_in, H, W).
        weight (Tensor): (C_out, C_in / groups, kH, kW).
        bias (Tensor, optional): (C_out,).
        stride (int or tuple): Default: 1.
        padding (int, tuple, 'valid' or 'same'): zero padding on both sides. Default: 0.
        dilation (int or tuple): spacing between kernel elements. Default: 1.
        groups (int): split input and output channels into this many groups. Default: 1.

    Shape:
        output: (N, C_out, H_out, W_out) with H_out = floor((H + 2 pH - dH (kH - 1) - 1) / sH) + 1.

    Example:
        >>> x = mg.randn(2, 3, 8, 8)
        >>> w = mg.randn(4, 3, 3, 3, requires_grad=True)
        >>> F.conv2d(x, w, padding=1).shape
        (2, 4, 8, 8)
    """
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    r"""Extract sliding local blocks (im2col), as torch.nn.functional.unfold:
    out[n, (c, i, j), l] = xpad[n, c, oh*sh + i*dh, ow*sw + j*dw], l = oh * OW + ow.

    Shape:
        input (N, C, H, W) -> output (N, C * kH * kW, L).
    """
    x, unb = _spatial_input(input, "unfold")
    kernel = _pair(kernel_size, "kernel_size", "unfold")
    ph, pw = _pair(padding, "padding", "unfold")
    geo = _make_geom("unfold", x.shape, kernel, _pair(stride, "stride", "unfold"),
                     _pair(dilation, "dilation", "unfold"), ((ph, ph), (pw, pw)))
    cols = Im2Col.apply(x, geo)
    out = cols.reshape(cols.shape[0], geo.N, geo.out[0] * geo.out[1]).permute(1, 0, 2).contiguous()  # PyTorch's layout
    return out.squeeze(0) if unb else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    r"""Combine sliding local blocks into a tensor, summing overlaps (col2im), as
    torch.nn.functional.fold: the adjoint of [`unfold()`][minigrad.nn.functional.unfold].

    Shape:
        input (N, C * kH * kW, L) -> output (N, C, H, W) with (H, W) = output_size.
    """
    unb = input.ndim == 2
    x = input.unsqueeze(0) if unb else input
    if x.ndim != 3:
        raise ValueError(f"fold: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    kh, kw = _pair(kernel_size, "kernel_size", "fold")
    H, W = _pair(output_size, "output_size", "fold")
    N, K, L = x.shape
    if K % (kh * kw):
        raise ValueError(f"fold: input.size(1) = {K} must be divisible by the kernel's size {kh * kw}")
    ph, pw = _pair(padding, "padding", "fold")
    geo = _make_geom("fold", (N, K // (kh * kw), H, W), (kh, kw), _pair(stride, "stride", "fold"),
                     _pair(dilation, "dilation", "fold"), ((ph, ph), (pw, pw)))
    if geo.out[0] * geo.out[1] != L:
        raise ValueError(f"fold: input.size(2) = {L} does not match the {geo.out[0]} x {geo.out[1]} blocks of "
                         f"output_size {(H, W)}")
    out = Col2Im.apply(x.permute(1, 0, 2).reshape(K, N * L), geo)
    return out.squeeze(0) if unb else out


# -- pooling ---------------------------------------------------------------------------------------

def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    r"""out[n, c, oh, ow] = max over the (dilated) window of xpad, padding with -inf; the gradient goes to
    the first maximum of each window, as PyTorch. A window holding NaN gives NaN, and its index and
    gradient are its last NaN's (PyTorch's scan: a greater or NaN value replaces the maximum).

    Args:
        input (Tensor): (N, C, H, W) or (C, H, W).
        kernel_size (int or tuple): the window size.
        stride (int or tuple, optional): Default: kernel_size.
        padding (int or tuple): implicit -inf padding on both sides, at most kernel_size / 2. Default: 0.
        dilation (int or tuple): spacing of window elements. Default: 1.
        ceil_mode (bool): use ceil instead of floor for the output size. Default: False.
        return_indices (bool): also return the flat (h * W + w) input index of each maximum.
    """
    return _max_pool_nd("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    r"""out[n, c, oh, ow] = sum over the window of xpad (zero padding) / divisor.

    Args:
        input (Tensor): (N, C, H, W) or (C, H, W).
        kernel_size (int or tuple): the window size.
        stride (int or tuple, optional): Default: kernel_size.
        padding (int or tuple): implicit zero padding on both sides, at most kernel_size / 2. Default: 0.
        ceil_mode (bool): use ceil instead of floor for the output size. Default: False.
        count_include_pad (bool): count the zero padding in the divisor. Default: True.
        divisor_override (int, optional): use this divisor instead.
    """
    return _avg_pool_nd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def _adaptive_matrix(n, m, dtype):
    """A (m, n) matrix averaging PyTorch's adaptive bins: bin i covers [floor(i n/m), ceil((i+1) n/m))."""
    A = np.zeros((m, n), dtype=dtype)
    for i in range(m):
        s, e = (i * n) // m, -(-((i + 1) * n) // m)
        A[i, s:e] = 1.0 / (e - s)
    return A


def _adaptive_mean(x, d, m):
    """x averaged over PyTorch's m adaptive bins along dim d (of n = x.shape[d] != m): a matmul by the
    averaging matrix, or, when x holds an inf or nan, a mean per bin (the matrix's zeros times an inf
    would put nan in every bin of its row; PyTorch's bins read only their own elements)."""
    n = x.shape[d]
    if np.isfinite(x._data).all():
        A = _adaptive_matrix(n, m, x.dtype)
        if d == x.ndim - 2:
            return _arr(A) @ x
        if d == x.ndim - 1:
            return x @ _arr(A.T)
        return (x.transpose(d, -1) @ _arr(A.T)).transpose(d, -1)
    return mg.stack([x.narrow(d, (i * n) // m, -(-((i + 1) * n) // m) - (i * n) // m).mean(d) for i in range(m)], d)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    r"""out[n, c, i, j] = mean of input over PyTorch's adaptive bin (i, j); computed as A_h @ x @ A_w^T.

    Args:
        input (Tensor): (N, C, H, W) or (C, H, W).
        output_size (int or tuple): the target (H_out, W_out); None keeps that dimension's size.
    """
    x, unb = _spatial_input(input, "adaptive_avg_pool2d")
    H, W = x.shape[2:]
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size, output_size)
    oh, ow = output_size
    oh = H if oh is None else int(oh)
    ow = W if ow is None else int(ow)
    if oh <= 0 or ow <= 0:
        raise ValueError(f"adaptive_avg_pool2d: output_size must be positive, got {output_size}")
    out = x
    if oh != H:
        out = _adaptive_mean(out, 2, oh)
    if ow != W:
        out = _adaptive_mean(out, 3, ow)
    return out.squeeze(0) if unb else out


# -- normalisation ----------------------------------------------------------------------------------

def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    r"""out = (x - mean) / sqrt(var + eps) * weight + bias, per channel (dim 1).

    In training mode the batch statistics are used (biased variance) and the running statistics, if
    given, are updated in place: running = (1 - momentum) * running + momentum * batch (the running
    variance takes the unbiased batch variance). In eval mode the running statistics are used.

    Shape:
        input (N, C) or (N, C, *); running_mean, running_var, weight, bias: (C,).
    """
    op = "batch_norm"
    if input.ndim < 2:
        raise ValueError(f"{op}: expected an input of at least 2 dimensions (N, C, ...), got {tuple(input.shape)}")
    C = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise ShapeError(f"{op}: {name} of shape {tuple(t.shape)} must be ({C},) for input "
                             f"{tuple(input.shape)}")
    bshape = (1, C) + (1,) * (input.ndim - 2)
    axes = (0,) + tuple(range(2, input.ndim))
    w = weight.reshape(bshape) if weight is not None else None
    b = bias.reshape(bshape) if bias is not None else None
    if training:
        n = input.numel() // C
        if n <= 1:
            raise ValueError(f"{op}: expected more than 1 value per channel when training, got input size "
                             f"{tuple(input.shape)}")
        stats = {} if running_mean is not None or running_var is not None else None
        out = NativeBatchNorm.apply(input, w, b, axes, float(eps), stats)
        if stats is not None and not is_recomputing():  # a checkpoint's recomputation moves nothing
            with no_grad():
                # Tensor ops on forward's statistics (not NumPy), so mg.graph.trace records the update
                if running_mean is not None:
                    m = _arr(stats["mean"]).reshape(C).to(running_mean.dtype)
                    running_mean.mul_(1.0 - momentum).add_(m * momentum)
                if running_var is not None:
                    v = (_arr(stats["var"]).reshape(C) * (n / (n - 1))).to(running_var.dtype)
                    running_var.mul_(1.0 - momentum).add_(v * momentum)
        return out
    if running_mean is None or running_var is None:
        raise ValueError(f"{op}: running_mean and running_var must be given in evaluation mode (training=False)")
    # ops on the running statistics (the same NumPy arithmetic), so a traced graph reads them at each run
    rstd = _ops.rsqrt(running_var.to(input.dtype) + eps).reshape(bshape)
    out = (input - running_mean.to(input.dtype).reshape(bshape)) * rstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out


def _normalized_shape(normalized_shape):
    """A normalization's `normalized_shape` (an int or a sequence of ints) as a tuple of ints."""
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _trailing_axes(op, input, normalized_shape, error, **params):
    """The axes of input's trailing `normalized_shape` (layer_norm, rms_norm), after checking that
    input ends with it and that each given parameter (weight, bias) has exactly that shape."""
    normalized_shape = _normalized_shape(normalized_shape)
    k = len(normalized_shape)
    if k == 0 or k > input.ndim or tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise error(f"{op}: input of shape {tuple(input.shape)} does not end with "
                    f"normalized_shape {normalized_shape}")
    for name, t in params.items():
        if t is not None and tuple(t.shape) != normalized_shape:
            raise error(f"{op}: {name} of shape {tuple(t.shape)} must be {normalized_shape}")
    return tuple(range(input.ndim - k, input.ndim))


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    r"""out = (x - mean) / sqrt(var + eps) * weight + bias, statistics over the last
    len(normalized_shape) dimensions (biased variance).

    Shape:
        input (*, *normalized_shape); weight, bias: normalized_shape.
    """
    axes = _ln_axes(input, normalized_shape, weight, bias)
    if axes is None:  # the general checks (and their errors)
        axes = _trailing_axes("layer_norm", input, normalized_shape, ShapeError, weight=weight, bias=bias)
    return NativeLayerNorm.apply(input, weight, bias, axes, float(eps), None)


_LN_AXES = {}


def _ln_axes(input, normalized_shape, weight, bias):
    """layer_norm's axes for the common call (nn.LayerNorm's: normalized_shape a tuple of ints that
    input's shape ends with, weight and bias None or of that shape), without _trailing_axes'
    normalising and kwargs (a generated token runs nine layer norms); None: anything else."""
    if type(normalized_shape) is not tuple:
        return None
    k = len(normalized_shape)
    shape = tuple(input.shape)  # (a plain tuple: Size's slicing is Python code)
    n = len(shape)
    if (not 0 < k <= n or shape[n - k:] != normalized_shape
            or weight is not None and weight.shape != normalized_shape
            or bias is not None and bias.shape != normalized_shape):
        return None
    axes = _LN_AXES.get((n, k))
    if axes is None:
        axes = _LN_AXES[(n, k)] = tuple(range(n - k, n))
    return axes


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    r"""out = x / sqrt(mean(x**2) + eps) * weight, the mean over the last len(normalized_shape)
    dimensions (torch.nn.functional.rms_norm); eps None: the dtype's machine epsilon, as PyTorch.

    A composite of differentiable ops, so every rule (higher order, forward mode, vmap, tracing,
    ONNX) comes from theirs.

    Shape:
        input (*, *normalized_shape); weight: normalized_shape.
    """
    dims = _trailing_axes("rms_norm", input, normalized_shape, RuntimeError, weight=weight)
    if input.dtype.kind != "f":
        raise RuntimeError(f"rms_norm: expected a floating point input, got {input.dtype}")
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    out = input * mg.rsqrt((input * input).mean(dim=dims, keepdim=True) + eps)
    return out * weight if weight is not None else out


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    r"""out[...] = weight[input[...]]: rows of an embedding table looked up by index.

    Args:
        input (Tensor): integer indices of any shape, in [0, num_embeddings).
        weight (Tensor): the table, (num_embeddings, embedding_dim).
        padding_idx (int, optional): this row receives no gradient.
        max_norm (float, optional): rows looked up whose norm exceeds this are renormalised in place.
        norm_type (float): the p of the norm for max_norm. Default: 2.

    Shape:
        output: input.shape + (embedding_dim,).
    """
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse are not supported")
    # input._data as it is: inside vmap an array that remembers its batched tensor (np.asarray would
    # drop that, and the lookup would take the batch dim for an index dim)
    idx = input._data if isinstance(input, Tensor) else np.asarray(input)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {idx.dtype}")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got {tuple(weight.shape)}")
    V = weight.shape[0]
    if idx.size and (np.minimum.reduce(idx, axis=None) < 0 or np.maximum.reduce(idx, axis=None) >= V):
        bad = idx[(idx < 0) | (idx >= V)].flat[0]
        raise IndexError(f"embedding: index {int(bad)} is out of range for a table of {V} rows "
                         f"(weight {tuple(weight.shape)})")
    if padding_idx is not None:
        if not -V <= padding_idx < V:
            raise ValueError(f"embedding: padding_idx {padding_idx} must be within num_embeddings ({V})")
        padding_idx = padding_idx % V
    if max_norm is not None:
        renorm_rows_(weight, idx, max_norm, norm_type)
    return Embedding.apply(weight, idx, padding_idx)


# -- more activations, distances and losses (composites of the ops above) -----------------------

def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("celu: ZeroDivisionError: alpha cannot be 0 for CELU")
    # expm1 of x where x <= 0 only: the branch not taken must not overflow, or its zero gradient would
    # be multiplied by inf (nan at x = inf; PyTorch: 1); where, not clamp, keeps the sign of -0
    neg = mg.where(input > 0, 0.0, input)
    out = mg.where(input > 0, input, (neg / alpha).expm1() * alpha)
    return _inplace_result(input, out, inplace)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with SELU's constants."""
    neg = mg.where(input > 0, 0.0, input)  # as celu's: no expm1 of a large x, whose zero gradient * inf is nan
    out = mg.where(input > 0, input, neg.expm1() * _SELU_ALPHA) * _SELU_SCALE
    return _inplace_result(input, out, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """clamp(x / 6 + 1/2, 0, 1) (gradient 1/6 strictly inside (-3, 3), 0 at the ends, as PyTorch;
    nan stays nan, with a zero gradient, as PyTorch's min(max(x + 3, 0), 6) / 6)."""
    inside = (input > -3.0).logical_and(input < 3.0)
    outside = mg.where(mg.isnan(input), math.nan, (input >= 3.0).to(input.dtype))  # nan >= 3 is False: not 0
    out = mg.where(inside, input / 6.0 + 0.5, outside)
    return _inplace_result(input, out, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6: 0 up to -3, x (x + 3) / 6 strictly inside (-3, 3), x from 3 on; the
    gradient there 0, x / 3 + 1/2, 1 -- at the kinks 0 and 1, as PyTorch (not the clamp's)."""
    inside = (input > -3.0).logical_and(input < 3.0)
    xi = mg.where(inside, input, 0.0)  # the polynomial only where used: no inf * 0 in its gradient
    out = mg.where(input <= -3.0, input * 0.0, mg.where(inside, xi * (xi + 3.0) / 6.0, input))
    return _inplace_result(input, out, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _inplace_result(input, input * softplus(input).tanh(), inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1.0)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of input along dim."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {dim % input.ndim} is size {n}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along dim, as PyTorch: each norm is
    clamped on its own (a short vector does not borrow the other's length), and the clamp is not
    differentiated (PyTorch clamps the norms in place under no_grad): the gradient flows through
    the norm itself."""
    x1, x2 = mg.broadcast_tensors(x1, x2)
    n1 = mg.linalg.vector_norm(x1, 2, dim=dim, keepdim=True)
    n2 = mg.linalg.vector_norm(x2, 2, dim=dim, keepdim=True)
    n1 = n1 + (n1.clamp(min=eps) - n1).detach()
    n2 = n2 + (n2.clamp(min=eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim."""
    d = x1 - x2 + eps
    return mg.norm(d, p, -1, keepdim)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence with input as log-probabilities: target log target - target * input
    (0 log 0 = 0; a negative target gives nan, as PyTorch's xlogy), or exp(target) * (target - input)
    with log_target=True."""
    reduction = _legacy_reduction(size_average, reduce, reduction) if (size_average is not None or reduce is not None) else reduction
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # PyTorch's xlogy(target, target) - target * input: the input's gradient is -target everywhere
        # (the old where(target > 0, ...) gave 0 at a negative target and hid its nan loss)
        safe = mg.where(target == 0, mg.ones_like(target), target)
        loss = mg.where(target == 0, target * 0.0, target * safe.log()) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    _check_reduction(reduction, "kl_div")
    return _reduce(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "margin_ranking_loss")
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0.0), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) with d the pairwise p-distance (swap: the smaller of d(a, n), d(p, n))."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "triplet_margin_loss")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = mg.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp(min=0.0), reduction)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int(upscale_factor)
    if input.ndim < 3 or input.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={input.shape[-3] if input.ndim >= 3 else None} is "
                           f"not divisible by {r * r}")
    *lead, C, H, W = input.shape
    c = C // (r * r)
    x = input.reshape(*lead, c, r, r, H, W)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c, H * r, W * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    *lead, C, H, W = input.shape
    if H % r or W % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor "
                           f"({r}), got {H}x{W}")
    n = len(lead)
    x = input.reshape(*lead, C, H // r, r, W // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, C * r * r, H // r, W // r)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(Q K^T * scale + mask) V, with a boolean (True = keep) or additive float mask, the causal
    mask when is_causal, and dropout on the attention weights (training use); a query masked entirely
    gets 0, as PyTorch."""
    if (attn_mask is None and dropout_p == 0 and type(query) is Tensor and type(key) is Tensor
            and type(value) is Tensor):
        # the common call (a Transformer's, a generated token's): _sdpa_check's checks on the arrays
        q, k, v = query._data, key._data, value._data
        if (q.ndim >= 2 and k.ndim >= 2 and v.ndim >= 2 and q.dtype == k.dtype == v.dtype
                and k.shape[-2] == v.shape[-2] and k.shape[-2] and
                (not enable_gqa or q.ndim < 3 or k.ndim < 3 or k.shape[-3] == q.shape[-3])):
            s = (1.0 / math.sqrt(q.shape[-1])) if scale is None else scale
            return ScaledDotProductAttention.apply(query, key, value, None, float(s), bool(is_causal))
    attn_mask = _sdpa_check(query, key, value, attn_mask)
    S = key.shape[-2]
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        # grouped-query attention, as PyTorch: each key/value head serves Hq / Hkv consecutive query heads
        # (the flag was accepted and ignored: the matmul failed on the head counts)
        Hq, Hk, Hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if Hq % Hk or Hq % Hv:
            raise RuntimeError(f"scaled_dot_product_attention: number of heads in key/value ({Hk}, {Hv}) must "
                               f"divide number of heads in query ({Hq})")
        key = key.repeat_interleave(Hq // Hk, -3)
        value = value.repeat_interleave(Hq // Hv, -3)
    if S == 0:  # no keys: zeros, as PyTorch (softmax has nothing to normalise)
        return (query @ key.mT) @ value
    s = (1.0 / math.sqrt(query.shape[-1])) if scale is None else scale
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: _scaled_dot_product_attention: Explicit attn_mask "
                           "should not be set when is_causal=True")
    if dropout_p == 0 or not isinstance(query, Tensor):
        # one node (ops/attention.py): the scores masked, normalised and applied in place
        return ScaledDotProductAttention.apply(query, key, value, attn_mask, float(s), bool(is_causal))
    # dropout on the weights: the composite, its weights as the op's (masked rows 0, as PyTorch's _safe_softmax)
    weights = dropout(_sdpa_probs(query, key, attn_mask, float(s), bool(is_causal)), dropout_p, training=True)
    return weights @ value


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each group of channels of each sample over (channels in group, *spatial), then scale
    and shift per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: Expected at least 2 dimensions for input tensor but received {input.ndim}")
    N, C = input.shape[0], input.shape[1]
    if C % num_groups:
        raise RuntimeError(f"group_norm: Expected number of channels in input to be divisible by num_groups, but "
                           f"got input of shape {tuple(input.shape)} and num_groups={num_groups}")
    x = input.reshape(N, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    out = ((x - mean) / (var + eps).sqrt()).reshape(*input.shape)
    shape = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(*shape)
    if bias is not None:
        out = out + bias.reshape(*shape)
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims (running stats optional, as PyTorch)."""
    if input.ndim < 3:
        raise RuntimeError(f"instance_norm: expected an input with a batch, a channel and spatial dims, got "
                           f"shape {tuple(input.shape)}")
    N, C = input.shape[0], input.shape[1]
    axes = tuple(range(2, input.ndim))
    shape = (1, C) + (1,) * (input.ndim - 2)
    if use_input_stats:
        mean = input.mean(axes, keepdim=True)
        var = ((input - mean) ** 2).mean(axes, keepdim=True)
        if running_mean is not None and running_var is not None and not is_recomputing():
            n = int(np.prod([input.shape[a] for a in axes]))
            with no_grad():
                m = mean.detach().reshape(N, C).mean(0)
                v = var.detach().reshape(N, C).mean(0) * (n / max(n - 1, 1))
                running_mean.mul_(1 - momentum).add_(m * momentum)
                running_var.mul_(1 - momentum).add_(v * momentum)
    else:
        mean, var = running_mean.reshape(*shape), running_var.reshape(*shape)
    out = (input - mean) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight.reshape(*shape)
    if bias is not None:
        out = out + bias.reshape(*shape)
    return out


__all__ += ["celu", "selu", "hardsigmoid", "hardswish", "mish", "softsign", "tanhshrink", "glu",
            "cosine_similarity", "pairwise_distance", "kl_div", "margin_ranking_loss", "triplet_margin_loss",
            "pixel_shuffle", "pixel_unshuffle", "scaled_dot_product_attention", "group_norm", "instance_norm"]


# -- N-d convolution, transposed convolution, pooling, unpooling and resizing ---------------------
# (minigrad/ops/conv.py, pooling.py, resize.py: one family each for 1-, 2- and 3-d, which picks the
# tuned 2-D kernels of ops/_conv2d.py and kernels/*.py for 2-D windows)

def _batched(input, op, n):
    """input as (N, C, *spatial) with n spatial dims (an unbatched (C, *spatial) gets N = 1)."""
    if input.ndim not in (n + 1, n + 2):
        names = ("L",), ("H", "W"), ("D", "H", "W")
        sp = ", ".join(names[n - 1])
        raise RuntimeError(f"{op}: expected a {n + 1}-D (C, {sp}) or {n + 2}-D (N, C, {sp}) input, got shape "
                           f"{tuple(input.shape)}")
    if input.ndim == n + 1:
        return input.unsqueeze(0), True
    return input, False


def _unbatch(out, unb):
    return out.squeeze(0) if unb else out


def _conv_check(op, x, input, weight, bias, groups, n, transposed):
    """Channel/groups/bias checks of conv{n}d / conv_transpose{n}d, naming the op and the shapes."""
    if weight.ndim != n + 2:
        layout = "(C_in, C_out/groups, *kernel)" if transposed else "(C_out, C_in/groups, *kernel)"
        raise RuntimeError(f"{op}: weight must be {n + 2}-D {layout}, got shape {tuple(weight.shape)}")
    C = x.shape[1]
    if not isinstance(groups, numbers.Integral) or groups <= 0:
        raise RuntimeError(f"{op}: groups must be a positive integer, got {groups!r}")
    if transposed:
        if weight.shape[0] != C or C % groups:
            raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} has {C} channels, but weight of shape "
                               f"{tuple(weight.shape)} with groups={groups} expects {weight.shape[0]} "
                               f"(divisible by groups)")
        out_c = weight.shape[1] * groups
    else:
        O = weight.shape[0]
        if O % groups or weight.shape[1] * groups != C:
            raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} has {C} channels, but weight of shape "
                               f"{tuple(weight.shape)} with groups={groups} expects {weight.shape[1] * groups} "
                               f"(and out_channels {O} divisible by groups)")
        out_c = O
    if bias is not None and tuple(bias.shape) != (out_c,):
        raise RuntimeError(f"{op}: bias of shape {tuple(bias.shape)} must be ({out_c},)")


def _convnd(op, n, input, weight, bias, stride, padding, dilation, groups):
    x, unb = _batched(input, op, n)
    _conv_check(op, x, input, weight, bias, groups, n, False)
    kernel = tuple(weight.shape[2:])
    stride = _ntuple(stride, n, "stride", op)
    dilation = _ntuple(dilation, n, "dilation", op)
    geo = _make_geom(op, x.shape, kernel, stride, dilation, _conv_pads(op, padding, kernel, dilation, stride))
    return _unbatch(Convolution.apply(x, weight, bias, geo, int(groups)), unb)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    r"""1-D cross-correlation: out[n, o, l] = bias[o] + sum over c, k of weight[o, c, k] *
    xpad[n, g*C/groups + c, l*s + k*d] (im2col + one batched matmul per group).

    Args:
        input (Tensor): (N, C_in, L) or unbatched (C_in, L).
        weight (Tensor): (C_out, C_in / groups, kL).
        bias (Tensor, optional): (C_out,).
        stride (int or tuple): Default: 1.
        padding (int, tuple, 'valid' or 'same'): zero padding on both sides. Default: 0.
        dilation (int or tuple): spacing between kernel elements. Default: 1.
        groups (int): split input and output channels into this many groups. Default: 1.

    Shape:
        output: (N, C_out, L_out) with L_out = floor((L + 2p - d (k - 1) - 1) / s) + 1.

    Example:
        >>> F.conv1d(mg.randn(2, 3, 10), mg.randn(4, 3, 3), padding=1).shape
        (2, 4, 10)
    """
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    r"""3-D cross-correlation over (D, H, W), as [`conv1d()`][minigrad.nn.functional.conv1d] per dimension.

    Args:
        input (Tensor): (N, C_in, D, H, W) or unbatched (C_in, D, H, W).
        weight (Tensor): (C_out, C_in / groups, kD, kH, kW).
        bias (Tensor, optional): (C_out,).
        stride, padding, dilation, groups: as [`conv1d()`][minigrad.nn.functional.conv1d] (an int or a 3-tuple).

    Example:
        >>> F.conv3d(mg.randn(1, 2, 4, 5, 6), mg.randn(3, 2, 3, 3, 3), padding=1).shape
        (1, 3, 4, 5, 6)
    """
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(op, n, input, weight, bias, stride, padding, output_padding, groups, dilation):
    x, unb = _batched(input, op, n)
    _conv_check(op, x, input, weight, bias, groups, n, True)
    if isinstance(padding, str):
        raise ValueError(f"{op}: padding must be an int or a tuple of ints, got {padding!r}")
    kernel = tuple(weight.shape[2:])
    stride = _ntuple(stride, n, "stride", op)
    dilation = _ntuple(dilation, n, "dilation", op)
    pad = _ntuple(padding, n, "padding", op)
    opad = _ntuple(output_padding, n, "output_padding", op)
    if min(stride + dilation) <= 0 or min(pad + opad) < 0:
        raise RuntimeError(f"{op}: stride and dilation must be positive and padding, output_padding "
                           f"non-negative, got stride {stride}, dilation {dilation}, padding {pad}, "
                           f"output_padding {opad}")
    if any(op_ >= s and op_ >= d for op_, s, d in zip(opad, stride, dilation)):
        raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                           f"output_padding {opad}, stride {stride}, dilation {dilation}")
    size = tuple((i - 1) * s - 2 * p + d * (k - 1) + o + 1
                 for i, s, p, d, k, o in zip(x.shape[2:], stride, pad, dilation, kernel, opad))
    if min(size) <= 0:
        raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} with kernel {kernel}, stride {stride}, "
                           f"padding {pad}, dilation {dilation}, output_padding {opad} gives a non-positive "
                           f"output size {size}")
    # the geometry of the convolution whose input gradient this is: input `size`, output x's size
    geo = _GeomNd(x.shape[0], weight.shape[1] * groups, size, kernel, stride, dilation,
                  tuple((p, p) for p in pad), tuple(x.shape[2:]))
    return _unbatch(ConvTranspose.apply(x, weight, bias, geo, int(groups)), unb)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    r"""1-D transposed convolution (the input gradient of [`conv1d()`][minigrad.nn.functional.conv1d],
    sometimes called "deconvolution"): out = col2im(weight^T @ x) + bias.

    Args:
        input (Tensor): (N, C_in, L) or unbatched (C_in, L).
        weight (Tensor): (C_in, C_out / groups, kL).
        bias (Tensor, optional): (C_out,).
        stride (int or tuple): Default: 1.
        padding (int or tuple): ``dilation * (kernel_size - 1) - padding`` zero padding on both sides of
            the input, i.e. crops ``padding`` from each side of the full output. Default: 0.
        output_padding (int or tuple): extra size on one side of the output; must be smaller than
            stride or dilation. Default: 0.
        groups (int): Default: 1.
        dilation (int or tuple): Default: 1.

    Shape:
        output: (N, C_out, L_out) with L_out = (L - 1) s - 2 p + d (k - 1) + output_padding + 1.

    Example:
        >>> F.conv_transpose1d(mg.randn(2, 4, 5), mg.randn(4, 3, 3), stride=2).shape
        (2, 3, 11)
    """
    return _conv_transposend("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding,
                             groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    r"""2-D transposed convolution (the input gradient of [`conv2d()`][minigrad.nn.functional.conv2d]); arguments as
    [`conv_transpose1d()`][minigrad.nn.functional.conv_transpose1d], an int or a pair each.

    Shape:
        input (N, C_in, H, W), weight (C_in, C_out / groups, kH, kW) -> output (N, C_out, H_out, W_out)
        with H_out = (H - 1) sH - 2 pH + dH (kH - 1) + output_padding[0] + 1, likewise W.

    Example:
        >>> F.conv_transpose2d(mg.randn(1, 4, 5, 5), mg.randn(4, 2, 3, 3), stride=2, padding=1,
        ...                    output_padding=1).shape
        (1, 2, 10, 10)
    """
    return _conv_transposend("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding,
                             groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    r"""3-D transposed convolution (the input gradient of [`conv3d()`][minigrad.nn.functional.conv3d]); arguments as
    [`conv_transpose1d()`][minigrad.nn.functional.conv_transpose1d], an int or a 3-tuple each.

    Example:
        >>> F.conv_transpose3d(mg.randn(1, 2, 3, 3, 3), mg.randn(2, 1, 2, 2, 2), stride=2).shape
        (1, 1, 6, 6, 6)
    """
    return _conv_transposend("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding,
                             groups, dilation)


def _pool_nd_geo(op, n, input, kernel_size, stride, padding, dilation, ceil_mode):
    """(x, unbatched, geo, padding) of an n-d pooling: PyTorch's argument rules and errors."""
    x, unb = _batched(input, op, n)
    kernel = _ntuple(kernel_size, n, "kernel_size", op)
    if stride is None or (not isinstance(stride, numbers.Integral) and len(stride) == 0):
        stride = kernel
    stride = _ntuple(stride, n, "stride", op)
    pad = _ntuple(padding, n, "padding", op)
    dil = _ntuple(dilation, n, "dilation", op)
    if any(p * 2 > k for k, p in zip(kernel, pad)):  # PyTorch's rule: half the kernel, whatever the dilation
        raise RuntimeError(f"{op}: pad should be at most half of kernel size, but got padding {pad} and "
                           f"kernel_size {kernel}")
    geo = _make_geom(op, x.shape, kernel, stride, dil, tuple((p, p) for p in pad), ceil_mode)
    return x, unb, geo, pad


def _max_pool_nd(op, n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    x, unb, geo, _ = _pool_nd_geo(op, n, input, kernel_size, stride, padding, dilation, ceil_mode)
    if not return_indices:
        return _unbatch(MaxPool.apply(x, geo, False), unb)
    out, idx = MaxPool.apply(x, geo, True)  # the indices from the Function itself (traced, jitted)
    return _unbatch(out, unb), _unbatch(idx, unb)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    r"""out[n, c, l] = max over the (dilated) window of xpad (-inf padding); the gradient goes to the
    first maximum of each window, as PyTorch. A window holding NaN gives NaN, and its index and
    gradient are its last NaN's (PyTorch's scan: a greater or NaN value replaces the maximum).

    Args:
        input (Tensor): (N, C, L) or (C, L).
        kernel_size (int): the window size.
        stride (int, optional): Default: kernel_size.
        padding (int): implicit -inf padding on both sides, at most half the kernel size. Default: 0.
        dilation (int): spacing of window elements. Default: 1.
        ceil_mode (bool): ceil instead of floor for the output size (the last window must start inside
            the input or the left padding). Default: False.
        return_indices (bool): also return the index of each maximum in its input row (for
            [`max_unpool1d()`][minigrad.nn.functional.max_unpool1d]).

    Example:
        >>> F.max_pool1d(mg.tensor([[[1.0, 3.0, 2.0, 5.0]]]), 2)
        tensor([[[3., 5.]]])
    """
    return _max_pool_nd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    r"""3-D max pooling over (D, H, W); arguments as [`max_pool1d()`][minigrad.nn.functional.max_pool1d] (an
    int or a 3-tuple each); indices are flat (d * H * W + h * W + w) in each input volume.

    Example:
        >>> F.max_pool3d(mg.randn(1, 2, 4, 4, 4), 2).shape
        (1, 2, 2, 2, 2)
    """
    return _max_pool_nd("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool_nd(op, n, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x, unb, geo, pad = _pool_nd_geo(op, n, input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    div = avg_divisor(geo, count_include_pad, divisor_override, x.dtype)
    return _unbatch(AvgPool.apply(x, geo, div), unb)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    r"""out[n, c, l] = sum over the window of xpad (zero padding) / the window's size.

    Args:
        input (Tensor): (N, C, L) or (C, L).
        kernel_size (int): the window size.
        stride (int, optional): Default: kernel_size.
        padding (int): implicit zero padding on both sides, at most kernel_size / 2. Default: 0.
        ceil_mode (bool): ceil instead of floor for the output size. Default: False.
        count_include_pad (bool): count the zero padding in the divisor. Default: True.

    Example:
        >>> F.avg_pool1d(mg.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2)
        tensor([[[2., 4.]]])
    """
    return _avg_pool_nd("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    r"""3-D average pooling over (D, H, W); arguments as [`avg_pool1d()`][minigrad.nn.functional.avg_pool1d]
    (an int or a 3-tuple each), and divisor_override (int, optional) to divide by instead of the window size.

    Example:
        >>> F.avg_pool3d(mg.randn(1, 2, 4, 4, 4), 2).shape
        (1, 2, 2, 2, 2)
    """
    return _avg_pool_nd("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def _unpool_output_size(op, x, kernel, stride, pad, output_size):
    """PyTorch's _unpool_output_size: the default (in - 1) s + k - 2 p, or output_size when within one
    stride of it."""
    n = len(kernel)
    default = [(x.shape[2 + d] - 1) * stride[d] + kernel[d] - 2 * pad[d] for d in range(n)]
    if output_size is None:
        return tuple(default)
    output_size = tuple(int(s) for s in output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"{op}: output_size should be a sequence containing {n} or {n + 2} elements, but it "
                         f"has a length of '{len(output_size)}'")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'{op}: invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _max_unpool_nd(op, n, input, indices, kernel_size, stride, padding, output_size):
    x, unb = _batched(input, op, n)
    idx = indices.unsqueeze(0) if unb and indices.ndim == n + 1 else indices
    if not isinstance(idx, Tensor) or idx.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: indices must be an int64 tensor, got {getattr(idx, 'dtype', type(idx))}")
    if tuple(idx.shape) != tuple(x.shape):
        raise RuntimeError(f"{op}: indices of shape {tuple(indices.shape)} must have the input's shape "
                           f"{tuple(input.shape)}")
    kernel = _ntuple(kernel_size, n, "kernel_size", op)
    stride = kernel if stride is None else _ntuple(stride, n, "stride", op)
    pad = _ntuple(padding, n, "padding", op)
    size = _unpool_output_size(op, x, kernel, stride, pad, output_size)
    if min(size) <= 0:
        raise RuntimeError(f"{op}: output size {size} must be positive (input {tuple(input.shape)})")
    total = int(np.prod(size))
    iv = idx._data
    if iv.size and (iv.min() < 0 or iv.max() >= total):
        bad = int(iv[(iv < 0) | (iv >= total)].flat[0])
        raise RuntimeError(f"{op}: found an invalid max index {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    return _unbatch(MaxUnpoolNd.apply(x, idx, size), unb)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    r"""The partial inverse of [`max_pool1d()`][minigrad.nn.functional.max_pool1d]: zeros with input[n, c, l]
    written at indices[n, c, l].

    Args:
        input (Tensor): (N, C, L) or (C, L), e.g. max_pool1d's output.
        indices (Tensor): max_pool1d's indices (same shape).
        kernel_size, stride, padding: max_pool1d's (stride defaults to kernel_size).
        output_size (tuple, optional): the output's size, within one stride of the default
            (L - 1) * stride + kernel_size - 2 * padding.
    """
    return _max_unpool_nd("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    r"""The partial inverse of [`max_pool2d()`][minigrad.nn.functional.max_pool2d]: zeros with
    input[n, c, i, j] written at the flat index indices[n, c, i, j] of each output plane. Arguments as
    [`max_unpool1d()`][minigrad.nn.functional.max_unpool1d] (an int or a pair each).

    Example:
        >>> x = mg.randn(1, 1, 4, 4)
        >>> out, idx = F.max_pool2d(x, 2, return_indices=True)
        >>> F.max_unpool2d(out, idx, 2).shape
        (1, 1, 4, 4)
    """
    return _max_unpool_nd("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    r"""The partial inverse of [`max_pool3d()`][minigrad.nn.functional.max_pool3d]; arguments as
    [`max_unpool1d()`][minigrad.nn.functional.max_unpool1d] (an int or a 3-tuple each)."""
    return _max_unpool_nd("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


def _adaptive_size(op, output_size, size):
    """output_size (an int, or a tuple with None keeping that input size) as a tuple of positive ints."""
    n = len(size)
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size,) * n
    output_size = tuple(output_size)
    if len(output_size) != n:
        raise ValueError(f"{op}: output_size must be an int or a tuple of {n}, got {output_size}")
    out = tuple(s if o is None else int(o) for o, s in zip(output_size, size))
    if min(out) <= 0:
        raise ValueError(f"{op}: output_size must be positive, got {output_size}")
    if min(size) <= 0:
        raise RuntimeError(f"{op}: input of spatial size {tuple(size)} must not be empty")
    return out


def _adaptive_max_pool_nd(op, n, input, output_size, return_indices):
    x, unb = _batched(input, op, n)
    out, idx = AdaptiveMaxPoolNd.apply(x, _adaptive_size(op, output_size, x.shape[2:]))
    if return_indices:
        return _unbatch(out, unb), _unbatch(idx, unb)
    return _unbatch(out, unb)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    r"""out[n, c, i] = max of input over PyTorch's adaptive bin i: [floor(i L / m), ceil((i + 1) L / m)).

    Args:
        input (Tensor): (N, C, L) or (C, L).
        output_size (int): the target length m.
        return_indices (bool): also return the index of each maximum.
    """
    return _adaptive_max_pool_nd("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    r"""out[n, c, i, j] = max of input over adaptive bin (i, j) (as
    [`adaptive_max_pool1d()`][minigrad.nn.functional.adaptive_max_pool1d] per dimension).

    Args:
        input (Tensor): (N, C, H, W) or (C, H, W).
        output_size (int or tuple): the target (H_out, W_out); None keeps that dimension's size.
        return_indices (bool): also return the flat (h * W + w) index of each maximum.

    Example:
        >>> F.adaptive_max_pool2d(mg.randn(1, 3, 7, 9), (2, 4)).shape
        (1, 3, 2, 4)
    """
    return _adaptive_max_pool_nd("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    r"""3-D adaptive max pooling over (D, H, W); arguments as
    [`adaptive_max_pool2d()`][minigrad.nn.functional.adaptive_max_pool2d]."""
    return _adaptive_max_pool_nd("adaptive_max_pool3d", 3, input, output_size, return_indices)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    r"""out[n, c, i] = mean of input over PyTorch's adaptive bin i; computed as x @ A^T.

    Args:
        input (Tensor): (N, C, L) or (C, L).
        output_size (int): the target length.
    """
    x, unb = _batched(input, "adaptive_avg_pool1d", 1)
    m, = _adaptive_size("adaptive_avg_pool1d", output_size, x.shape[2:])
    out = x if m == x.shape[2] else _adaptive_mean(x, 2, m)
    return _unbatch(out, unb)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    r"""3-D adaptive average pooling over (D, H, W) (one averaging matrix per dimension).

    Args:
        input (Tensor): (N, C, D, H, W) or (C, D, H, W).
        output_size (int or tuple): the target (D, H, W); None keeps that dimension's size.
    """
    x, unb = _batched(input, "adaptive_avg_pool3d", 3)
    size = _adaptive_size("adaptive_avg_pool3d", output_size, x.shape[2:])
    out = x
    for d, (n, m) in enumerate(zip(x.shape[2:], size)):
        if n != m:
            out = _adaptive_mean(out, 2 + d, m)
    return _unbatch(out, unb)


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_UINT8_MODES = ("nearest", "nearest-exact", "bilinear", "bicubic")


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    r"""Resize the spatial dimensions of (N, C, *spatial) to `size` or by `scale_factor`, as
    torch.nn.functional.interpolate.

    Args:
        input (Tensor): (N, C, L), (N, C, H, W) or (N, C, D, H, W).
        size (int or tuple, optional): the output's spatial size.
        scale_factor (float or tuple, optional): multiplier of the spatial size (output size
            floor(in * scale_factor)); exactly one of size and scale_factor.
        mode (str): ``'nearest'`` (src = floor(dst * in / out)), ``'nearest-exact'`` (round half up),
            ``'linear'`` (3-D), ``'bilinear'`` (4-D), ``'bicubic'`` (4-D; Keys' cubic convolution,
            A = -0.75, edge taps clamped), ``'trilinear'`` (5-D) or ``'area'`` (adaptive average
            pooling). Default: ``'nearest'``.
        align_corners (bool, optional): linear modes only: True maps the corner pixels' centres onto
            each other, src = dst * (in - 1) / (out - 1); False (default) uses the half-pixel rule
            src = (dst + 0.5) * scale - 0.5, clamped at 0.
        recompute_scale_factor (bool, optional): with scale_factor, True computes the output size and
            then uses in / out as the scale; False/None uses 1 / scale_factor itself.
        antialias (bool): not supported (must be False).

    Example:
        >>> x = mg.tensor([[[1.0, 2.0]]])
        >>> F.interpolate(x, scale_factor=2, mode="linear")
        tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
    """
    from ..ops.resize import Interpolate, cubic_taps, linear_taps, nearest_taps
    op = "interpolate"
    dim = input.ndim - 2
    if dim not in (1, 2, 3):
        raise NotImplementedError(f"{op}: only 3-D, 4-D and 5-D input tensors are supported (got {input.ndim}-D "
                                  f"of shape {tuple(input.shape)}) for mode {mode!r}")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"{op}: Input and output must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                                 f"{list(size)}")
            out_size = tuple(int(s) for s in size)
        else:
            out_size = (int(size),) * dim
    elif scale_factor is not None:
        out_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"{op}: Input and scale_factor must have the same number of spatial dimensions, "
                                 f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                                 f"scale_factor of shape {list(scale_factor)}")
            scales = tuple(float(s) for s in scale_factor)
        else:
            scales = (float(scale_factor),) * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if out_size is None:
        out_size = tuple(int(math.floor(n * s)) for n, s in zip(input.shape[2:], scales))
        if recompute_scale_factor:
            scales = None
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _INTERP_DIMS:
        align_corners = bool(align_corners)
        if _INTERP_DIMS[mode] != dim:
            raise NotImplementedError(f"{op}: Got {input.ndim}D input, but {mode} mode needs "
                                      f"{_INTERP_DIMS[mode] + 2}D input (input shape {tuple(input.shape)})")
    else:
        raise NotImplementedError(f"{op}: mode {mode!r} is not supported (nearest, nearest-exact, linear, "
                                  f"bilinear, bicubic, trilinear, area)")
    if antialias:
        raise NotImplementedError(f"{op}: antialias=True is not supported")
    if not input.is_floating_point() and not (input.dtype == mg.uint8 and mode in _UINT8_MODES):
        # as PyTorch 2.13: uint8 images resize by nearest, nearest-exact, bilinear and bicubic; no
        # other integer or bool dtype has a kernel
        raise NotImplementedError(f"{op}: mode {mode!r} is not implemented for {input.dtype} input of shape "
                                  f"{tuple(input.shape)} (integer inputs: uint8 with nearest, nearest-exact, "
                                  f"bilinear or bicubic only, as PyTorch; convert with .float() first)")
    if min(out_size) <= 0 or min(input.shape[2:]) <= 0:
        raise RuntimeError(f"{op}: Input and output sizes should be greater than 0, but got input "
                           f"{tuple(input.shape[2:])} and output {out_size}")
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](input, out_size)
    scales = scales or (None,) * dim
    if mode in ("nearest", "nearest-exact"):
        taps = tuple(nearest_taps(n, m, s, mode == "nearest-exact", dim == 2)
                     for n, m, s in zip(input.shape[2:], out_size, scales))
    else:
        make = cubic_taps if mode == "bicubic" else linear_taps
        taps = tuple(make(n, m, align_corners, s) for n, m, s in zip(input.shape[2:], out_size, scales))
    return Interpolate.apply(input, taps, mode, False)


__all__ += ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
            "max_pool1d", "max_pool3d", "avg_pool1d", "avg_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
            "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "adaptive_avg_pool1d",
            "adaptive_avg_pool3d", "interpolate"]

from ._attention import _sdpa_check, multi_head_attention_forward  # noqa: E402,F401  (MHA, issue 36)
__all__ += ["multi_head_attention_forward", "dropout1d", "dropout2d", "dropout3d"]
__all__ += ["alpha_dropout", "feature_alpha_dropout", "ctc_loss"]
