"""minigrad.nn.functional: activations, losses, convolution, pooling and normalisation, as torch.nn.functional.

Most functions are compositions of differentiable Tensor ops. Fused `Function`s are used where
PyTorch fuses for speed or numerical stability (cross_entropy, nll_loss, the BCE losses, conv's
im2col, pooling, batch/layer norm). Their forward is NumPy; their backward either uses Tensor ops
(so it can be differentiated again) or, when no graph is being recorded (create_graph=False), an
equivalent NumPy fast path.
"""
from __future__ import annotations

import math
import numbers
import threading
import warnings
from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

import minigrad as mg
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from .. import ops as _ops
from ..random import get_rng
from ..ops.random import DropoutMask
from ..tensor import Tensor

__all__ = [
    "relu", "relu6", "hardtanh", "sigmoid", "tanh", "softmax", "log_softmax", "leaky_relu", "gelu",
    "silu", "elu", "softplus", "logsigmoid", "pad", "linear", "dropout", "one_hot", "normalize",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "conv2d", "unfold", "fold", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
    "batch_norm", "layer_norm", "embedding",
]


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


def _pair(v, name, op):
    if isinstance(v, numbers.Integral):
        return (int(v), int(v))
    v = tuple(v)
    if len(v) == 1:
        return (int(v[0]), int(v[0]))
    if len(v) != 2 or not all(isinstance(e, numbers.Integral) for e in v):
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, got {v!r}")
    return (int(v[0]), int(v[1]))


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's deprecated size_average/reduce arguments, mapped to a `reduction` string."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' "
                  "(or 'sum'/'none') instead.", UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


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
            raise ValueError(f"{op}: input of shape {tuple(input.shape)} and target of shape "
                             f"{tuple(target.shape)} cannot be broadcast") from None


# -- activations ----------------------------------------------------------------------------------

def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """out = max(x, 0);  dx = g * (x > 0). See :func:`minigrad.relu`."""
    return _inplace_result(input, mg.relu(input), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """out = min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """out = clamp(x, min_val, max_val)."""
    return _inplace_result(input, mg.clamp(input, min_val, max_val), inplace)


def sigmoid(input: Tensor) -> Tensor:
    """out = 1 / (1 + exp(-x)). See :func:`minigrad.sigmoid`."""
    return mg.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """out = tanh(x). See :func:`minigrad.tanh`."""
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
    r"""out_i = x_i - logsumexp(x) along `dim` (numerically stable). Arguments as :func:`softmax`."""
    if dim is None:
        dim = _softmax_dim(input.ndim, "log_softmax")
    if dtype is not None:
        input = input.to(dtype)
    return mg.log_softmax(input, dim)


class _LeakyReLU(Function):
    """out = x if x > 0 else slope * x;  dx = g * (1 if x > 0 else slope)"""

    op_name = "leaky_relu"

    @staticmethod
    def forward(ctx, x, slope):
        pos = x > 0
        if ctx.needs_input_grad:
            # the derivative is piecewise constant, so the backward g * d is exact to any order
            ctx.d = np.where(pos, np.asarray(1, x.dtype), np.asarray(slope, x.dtype))
        return np.where(pos, x, x * np.asarray(slope, x.dtype))

    @staticmethod
    def backward(ctx, g):
        return g * _arr(ctx.d), None


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    r"""out = x if x > 0 else negative_slope * x;  dx = g * (1 if x > 0 else negative_slope).

    Args:
        input (Tensor): the input.
        negative_slope (float): the slope for x <= 0. Default: 0.01.
        inplace (bool): write the result into `input` (when autograd does not need the original).
    """
    return _inplace_result(input, _LeakyReLU.apply(input, float(negative_slope)), inplace)


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

class _Pad(Function):
    """out = x padded by widths (negative widths crop) with `value`;  dx = pad(g, -widths) (a crop)"""

    op_name = "pad"

    @staticmethod
    def forward(ctx, x, widths, value):
        ctx.widths = widths
        crop = tuple(slice(-lo if lo < 0 else 0, n + hi if hi < 0 else n) for (lo, hi), n in zip(widths, x.shape))
        x = x[crop]
        pos = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
        shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, pos))
        out = np.full(shape, value, dtype=x.dtype)
        out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape, pos))] = x
        return out

    @staticmethod
    def backward(ctx, g):
        # zero padding and cropping are each other's adjoints
        return _Pad.apply(g, tuple((-lo, -hi) for lo, hi in ctx.widths), 0), None, None


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    r"""Pad `input`; `pad` lists (left, right) widths starting from the LAST dimension, as PyTorch:
    ``(left, right, top, bottom, front, back, ...)``.

    Args:
        input (Tensor): the input.
        pad (tuple of ints): an even number of widths, at most 2 * input.dim(). Negative widths crop
            (constant mode).
        mode (str): ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``. Default: ``'constant'``.
        value (float): the fill value for constant mode. Default: 0.

    Example:
        >>> F.pad(mg.ones(2, 3), (1, 1)).shape   # pads the last dimension
        (2, 5)
    """
    pad = tuple(int(p) for p in pad)
    ndim = input.ndim
    if len(pad) % 2 or len(pad) // 2 > ndim:
        raise ValueError(f"pad: padding length {len(pad)} must be even and at most 2 * input.dim() "
                         f"= {2 * ndim} (input shape {tuple(input.shape)})")
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "zeros":
        mode = "constant"
    if mode == "constant":
        for d, (lo, hi) in enumerate(widths):
            if input.shape[d] + lo + hi < 0:
                raise ValueError(f"pad: padding {(lo, hi)} of dimension {d} (size {input.shape[d]}) "
                                 f"gives a negative size")
        return _Pad.apply(input, tuple(widths), 0 if value is None else value)
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
    if value:
        raise ValueError(f"pad: padding mode {mode!r} doesn't take in value argument")
    out = input
    for d, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        n = input.shape[d]
        if lo < 0 or hi < 0:
            raise ValueError(f"pad: negative padding is only supported in constant mode, got {(lo, hi)}")
        if mode == "reflect" and (lo >= n or hi >= n):
            raise ValueError(f"pad: padding size should be less than the corresponding input dimension, "
                             f"but got: padding {(lo, hi)} at dimension {d} of input {tuple(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise ValueError(f"pad: padding value causes wrapping around more than once: padding "
                             f"{(lo, hi)} at dimension {d} of input {tuple(input.shape)}")
        if mode == "replicate" and n == 0:
            raise ValueError(f"pad: cannot replicate-pad an empty dimension {d}")
        idx = np.pad(np.arange(n), (lo, hi), mode=_PAD_MODES[mode])
        out = out.index_select(d, _arr(idx.astype(np.int64)))  # repeated indices accumulate their grads
    return out


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""out = x @ weight.T + bias.

    Shape:
        - input: (*, in_features);  weight: (out_features, in_features);  bias: (out_features,)
        - output: (*, out_features)
    """
    if weight.ndim not in (1, 2) or input.shape[-1:] != weight.shape[-1:]:
        raise ValueError(f"linear: input of shape {tuple(input.shape)} and weight of shape "
                         f"{tuple(weight.shape)}: in_features differ")
    return _ops.linear(input, weight, bias)  # one fused node (minigrad/ops/linalg.py)


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
        raise ValueError("one_hot: class values must be non-negative")
    if num_classes == -1:
        num_classes = int(t.max()) + 1 if t.size else 0
    elif t.size and t.max() >= num_classes:
        raise ValueError(f"one_hot: class values must be smaller than num_classes ({num_classes}), "
                         f"got {int(t.max())}")
    return _arr((t[..., None] == np.arange(num_classes)).astype(np.int64))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """out = x / max(||x||_p, eps) along `dim`."""
    return input / mg.clamp(input.norm(p, dim, keepdim=True), min=eps)


# -- losses ----------------------------------------------------------------------------------------

def _class_target_info(input, target, op):
    """Validate (input, class-index target); returns C. Input (N, C, d1, ...) with target (N, d1, ...)."""
    if target.dtype.kind not in "iu":
        raise TypeError(f"{op}: expected an integer (class index) target, got dtype {target.dtype} "
                        f"(input {tuple(input.shape)}, target {tuple(target.shape)})")
    expected = input.shape[:1] + input.shape[2:]
    if tuple(target.shape) != tuple(expected):
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} needs a class-index target of shape "
                         f"{tuple(expected)}, got target of shape {tuple(target.shape)}")
    return input.shape[1]


def _check_class_range(t, C, ignore_index, op):
    if t.size == 0 or (t.min() >= 0 and t.max() < C):  # the usual case, in two reductions
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


def _bshape(w, ndim):
    """w of shape (C,) viewed so it broadcasts along dim 1 of an ndim-dimensional (N, C, ...) array."""
    return w.reshape((1, -1) + (1,) * (ndim - 2))


class _CrossEntropy(Function):
    """loss_i = -sum_c q_ic * log_softmax(z)_ic;  dz = g_i * (sum_c q_ic * softmax(z)_i - q_i)

    q is the weighted (and smoothed) target distribution: for class indices
    q_ic = (1-eps) w_t [c == t] + eps/C w_c; for probabilities q_ic = w_c ((1-eps) y_ic + eps/C).
    """

    op_name = "cross_entropy"

    @staticmethod
    def forward(ctx, z, target, w, probs, ignore_index, reduction, eps):
        C = z.shape[1]
        dt = z.dtype
        zs = z - z.max(axis=1, keepdims=True)
        e = np.exp(zs)
        s = e.sum(axis=1, keepdims=True)
        logp = zs
        logp -= np.log(s)
        wb = _bshape(w, z.ndim) if w is not None else None
        if probs:
            y = target.astype(dt, copy=False)
            q = y * dt.type(1.0 - eps) + dt.type(eps / C) if eps else y
            if wb is not None:
                q = q * wb
            loss = -(q * logp).sum(axis=1)
            denom = loss.size
            ctx.q = q
        else:
            valid = target != ignore_index
            tt = np.where(valid, target, 0)[:, None]  # ignored targets may lie outside [0, C)
            if z.ndim == 2:  # plain fancy indexing is a few times cheaper than take_along_axis
                picked = logp[np.arange(len(tt)), tt[:, 0]]
            else:
                picked = np.take_along_axis(logp, tt, axis=1)[:, 0]
            wt = (w[tt[:, 0]] * valid) if w is not None else valid.astype(dt)
            a = wt * dt.type(1.0 - eps) if eps else wt
            loss = -a * picked
            S = a
            if eps:
                b = valid.astype(dt) * dt.type(eps / C)
                smooth = -(logp * wb).sum(axis=1) if wb is not None else -logp.sum(axis=1)
                loss = loss + b * smooth
                S = a + b * (w.sum() if w is not None else dt.type(C))
                ctx.b = b
            denom = wt.sum()
            ctx.tt, ctx.a, ctx.S = tt, a, S
        ctx.denom = denom
        if ctx.needs_input_grad and ctx.needs_input_grad[0]:
            e /= s
            ctx.p = e
        if probs and ctx.needs_input_grad and ctx.needs_input_grad[1]:
            ctx.logp = logp
        ctx.save_for_backward(z, target)
        ctx.w, ctx.probs, ctx.reduction, ctx.eps = w, probs, reduction, eps
        if reduction == "mean":
            if denom == 0:  # every target ignored: nan, as PyTorch, without a warning
                with np.errstate(invalid="ignore", divide="ignore"):
                    return np.asarray(loss.sum() / denom, dtype=dt)
            return np.asarray(loss.sum() / denom, dtype=dt)
        if reduction == "sum":
            return np.asarray(loss.sum(), dtype=dt)
        return loss.astype(dt, copy=False)

    @staticmethod
    def backward(ctx, g):
        z, target = ctx.saved_tensors
        red, eps, w, probs = ctx.reduction, ctx.eps, ctx.w, ctx.probs
        nz, ny = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        C = z.shape[1]
        ndim = z.ndim
        if is_grad_enabled():
            # create_graph: the same rule in Tensor ops of z (and y), so it can be differentiated again
            gi = g / float(ctx.denom) if red == "mean" else (g if red == "sum" else g.unsqueeze(1))
            wb = _arr(_bshape(w, ndim)) if w is not None else None
            dz = dy = None
            if probs:
                q = target * (1.0 - eps) + eps / C if eps else target
                if wb is not None:
                    q = q * wb
                if nz:
                    dz = gi * (q.sum(1, keepdim=True) * mg.softmax(z, 1) - q)
                if ny:
                    dy = -gi * mg.log_softmax(z, 1) * (1.0 - eps)
                    if wb is not None:
                        dy = dy * wb
            elif nz:
                q = np.zeros(z.shape, dtype=z.dtype)
                np.put_along_axis(q, ctx.tt, ctx.a[:, None], axis=1)
                if eps:
                    q += ctx.b[:, None] * (_bshape(w, ndim) if w is not None else 1.0)
                dz = gi * (_arr(ctx.S[:, None]) * mg.softmax(z, 1) - _arr(q))
            return dz, dy, None, None, None, None, None
        gd = g._data
        dt = z.dtype
        if red == "mean":
            gi = (gd / dt.type(ctx.denom)).astype(dt)
        elif red == "sum":
            gi = gd.astype(dt, copy=False)
        else:
            gi = gd[:, None]
        dz = dy = None
        if probs:
            if nz:
                q = ctx.q
                dz = ctx.p * q.sum(axis=1, keepdims=True)
                dz -= q
                dz *= gi
            if ny:
                dy = ctx.logp * (-(1.0 - eps) * gi)
                if w is not None:
                    dy = dy * _bshape(w, ndim)
                dy = _arr(dy.astype(dt, copy=False))
        elif nz:
            p, tt, a, S = ctx.p, ctx.tt, ctx.a, ctx.S
            gi_el = gi[:, 0] if red == "none" else gi
            dz = p * (gi_el * S)[:, None]
            if ndim == 2:
                dz[np.arange(dz.shape[0]), tt[:, 0]] -= gi_el * a
            else:
                vals = np.take_along_axis(dz, tt, axis=1)
                vals -= (gi_el * a)[:, None]
                np.put_along_axis(dz, tt, vals, axis=1)
            if eps:
                sm = (gi_el * ctx.b)[:, None]
                dz -= sm * _bshape(w, ndim) if w is not None else sm
        if dz is not None:
            dz = _arr(dz.astype(dt, copy=False))
        return dz, dy, None, None, None, None, None


def _unbatched(input, target, op):
    """Class dimension 0 (an unbatched (C,) input): add the batch dimension to input and target."""
    if input.ndim == 0:
        raise ValueError(f"{op}: input must have at least 1 dimension (C,) or (N, C, ...), got a scalar")
    if input.ndim == 1:
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
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    target = _as_tensor(target)
    if input.dtype.kind != "f":
        raise TypeError(f"cross_entropy: input must be floating point (logits), got {input.dtype}")
    input, target, unb = _unbatched(input, target, "cross_entropy")
    C = input.shape[1]
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
    w = _class_weight(weight, C, "cross_entropy", input.dtype)
    out = _CrossEntropy.apply(input, target, w, probs, int(ignore_index), reduction, float(label_smoothing))
    if unb and reduction == "none":
        out = out.squeeze(0)
    return out


class _NLLLoss(Function):
    """loss_i = -w[t_i] * x[i, t_i];  dx = scatter of -g_i * w[t_i] at t_i (constant in x)"""

    op_name = "nll_loss"

    @staticmethod
    def forward(ctx, x, t, w, ignore_index, reduction):
        dt = x.dtype
        valid = t != ignore_index
        tt = np.where(valid, t, 0)[:, None]
        wt = (w[tt[:, 0]] * valid) if w is not None else valid.astype(dt)
        loss = -wt * np.take_along_axis(x, tt, axis=1)[:, 0]
        ctx.tt, ctx.wt, ctx.reduction, ctx.shape, ctx.dtype = tt, wt, reduction, x.shape, dt
        ctx.denom = wt.sum()
        ctx.save_for_backward()
        if reduction == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.asarray(loss.sum() / ctx.denom, dtype=dt)
        if reduction == "sum":
            return np.asarray(loss.sum(), dtype=dt)
        return loss.astype(dt, copy=False)

    @staticmethod
    def backward(ctx, g):
        ctx.saved_tensors  # raises if the graph was freed
        m = np.zeros(ctx.shape, ctx.dtype)
        np.put_along_axis(m, ctx.tt, -ctx.wt[:, None], axis=1)
        red = ctx.reduction
        if red == "mean":
            g = g / float(ctx.denom)
        elif red == "none":
            g = g.unsqueeze(1)
        return g * _arr(m), None, None, None, None


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
    out = _NLLLoss.apply(input, target, w, int(ignore_index), reduction)
    if unb and reduction == "none":
        out = out.squeeze(0)
    return out


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    r"""loss = (x - y)^2, reduced by `reduction` ('mean' | 'sum' | 'none').

    Warns (UserWarning) when target's size differs from input's, as PyTorch does.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "mse_loss")
    target = _as_tensor(target, input)
    _check_pointwise_target(input, target, "mse_loss")
    d = input - target
    return _reduce(d * d, reduction)


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
    return _reduce(mg.where(d < beta, (0.5 / beta) * d * d, d - 0.5 * beta), reduction)


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
    return _reduce(mg.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


class _BCE(Function):
    """loss = -(y log x + (1-y) log(1-x)), logs clamped at -100;  dx = g (x-y) / max(x(1-x), 1e-12),
    dy = g (log(1-x) - log x)"""

    op_name = "binary_cross_entropy"

    @staticmethod
    def forward(ctx, x, y):
        with np.errstate(divide="ignore"):
            lx = np.maximum(np.log(x), -100)
            l1x = np.maximum(np.log1p(-x), -100)
        ctx.save_for_backward(x, y)
        return (-(y * lx + (1 - y) * l1x)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        dx = dy = None
        if ctx.needs_input_grad[0]:
            dx = g * (x - y) / mg.clamp(x * (1.0 - x), min=1e-12)
        if ctx.needs_input_grad[1]:
            dy = g * (mg.clamp(mg.log1p(-x), min=-100.0) - mg.clamp(mg.log(x), min=-100.0))
        return dx, dy


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
    loss = _BCE.apply(input, target)
    if weight is not None:
        loss = loss * _as_tensor(weight, input)
    return _reduce(loss, reduction)


class _BCEWithLogits(Function):
    """loss = (1-y) x + L softplus(-x), L = 1 + (pw-1) y;  dx = g (L sigmoid(x) - L + 1 - y),
    dy = g ((pw-1) softplus(-x) - x), dpw = g y softplus(-x)"""

    op_name = "binary_cross_entropy_with_logits"

    @staticmethod
    def forward(ctx, x, y, pw):
        sp = np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))  # softplus(-x) = -log(sigmoid(x)), stable
        if pw is None:
            loss = (1 - y) * x + sp
        else:
            loss = (1 - y) * x + (1 + (pw - 1) * y) * sp
        ctx.save_for_backward(x, y, pw)
        return loss.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, y, pw = ctx.saved_tensors
        need = ctx.needs_input_grad
        dx = dy = dpw = None
        sp = None
        if need[1] or (len(need) > 2 and need[2]):
            sp = logsigmoid(x).neg()
        if pw is None:
            if need[0]:
                dx = g * (mg.sigmoid(x) - y)
            if need[1]:
                dy = -g * x
        else:
            L = 1.0 + (pw - 1.0) * y
            if need[0]:
                dx = g * (L * mg.sigmoid(x) - L + 1.0 - y)
            if need[1]:
                dy = g * ((pw - 1.0) * sp - x)
            if need[2]:
                dpw = g * y * sp
        return dx, dy, dpw


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
    loss = _BCEWithLogits.apply(input, target, pos_weight)
    if weight is not None:
        loss = loss * _as_tensor(weight, input)
    return _reduce(loss, reduction)


# -- convolution: im2col / col2im ----------------------------------------------------------------

# N, C, H, W: input; kh, kw: kernel; sh, sw: stride; dh, dw: dilation; pt, pb, pl, pr: padding
# (top, bottom, left, right); OH, OW: output size.
_Geom = namedtuple("_Geom", "N C H W kh kw sh sw dh dw pt pb pl pr OH OW")


def _make_geom(op, shape, kernel, stride, dilation, pads, ceil_mode=False):
    N, C, H, W = shape
    kh, kw = kernel
    sh, sw = stride
    dh, dw = dilation
    pt, pb, pl, pr = pads
    if min(kh, kw, sh, sw, dh, dw) <= 0:
        raise ValueError(f"{op}: kernel size, stride and dilation must be positive, got kernel "
                         f"{kernel}, stride {stride}, dilation {dilation}")
    if min(pads) < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {pads}")
    span_h, span_w = H + pt + pb - dh * (kh - 1) - 1, W + pl + pr - dw * (kw - 1) - 1
    if ceil_mode:
        OH, OW = -(-span_h // sh) + 1, -(-span_w // sw) + 1
        # the last window must start inside the input or the left padding
        if (OH - 1) * sh >= H + pt:
            OH -= 1
        if (OW - 1) * sw >= W + pl:
            OW -= 1
        pb = max(pb, (OH - 1) * sh + dh * (kh - 1) + 1 - H - pt)
        pr = max(pr, (OW - 1) * sw + dw * (kw - 1) + 1 - W - pl)
    else:
        OH, OW = span_h // sh + 1, span_w // sw + 1
    if span_h < 0 or span_w < 0 or OH <= 0 or OW <= 0:
        raise ValueError(f"{op}: input of spatial size ({H}, {W}) with padding {pads} is smaller than the "
                         f"(dilated) kernel ({dh * (kh - 1) + 1}, {dw * (kw - 1) + 1})")
    return _Geom(N, C, H, W, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, OH, OW)


_scratch = threading.local()
_SCRATCH_SLOTS = 8


def _workspace(key, make):
    """A scratch array for key (shape, dtype and purpose), made by make() on first use and then reused
    by later calls in the same thread. Only for buffers that no result, saved tensor or caller keeps:
    the next call with the same key overwrites it. At most _SCRATCH_SLOTS are kept (oldest dropped)."""
    cache = getattr(_scratch, "bufs", None)
    if cache is None:
        cache = _scratch.bufs = {}
    buf = cache.pop(key, None)
    if buf is None:
        buf = make()
        while len(cache) >= _SCRATCH_SLOTS:
            cache.pop(next(iter(cache)))
    cache[key] = buf  # most recently used last
    return buf


def _channel_major(a):
    """True when a (N, C, H, W) array is laid out C-major (as conv2d's output is)."""
    return a.ndim == 4 and a.shape[0] > 1 and a.transpose(1, 0, 2, 3).flags.c_contiguous


def _alloc(shape, dtype, channel_major, zeros=False):
    """An (N, C, ...) array, laid out C-major when asked (then a transposed view)."""
    make = np.zeros if zeros else np.empty
    if not channel_major:
        return make(shape, dtype=dtype)
    return make((shape[1], shape[0]) + tuple(shape[2:]), dtype=dtype).swapaxes(0, 1)


def _padded(x, geo, value=0):
    """x (N, C, H, W) padded per geo (a view of x when there is no padding)."""
    if not (geo.pt or geo.pb or geo.pl or geo.pr):
        return x
    N, C, H, W = x.shape
    xp = _alloc((N, C, H + geo.pt + geo.pb, W + geo.pl + geo.pr), x.dtype, _channel_major(x))
    xp.fill(value)
    xp[:, :, geo.pt:geo.pt + H, geo.pl:geo.pl + W] = x
    return xp


def _window(xp, geo, i, j):
    """The (N, C, OH, OW) strided view of xp at kernel offset (i, j)."""
    h0, w0 = i * geo.dh, j * geo.dw
    return xp[:, :, h0:h0 + geo.sh * (geo.OH - 1) + 1:geo.sh, w0:w0 + geo.sw * (geo.OW - 1) + 1:geo.sw]


def _im2col(x, geo):
    """cols[(c, i, j), (n, oh, ow)] = xpad[n, c, oh*sh + i*dh, ow*sw + j*dw]: one strided copy."""
    xp = _padded(x, geo)
    s0, s1, s2, s3 = xp.strides
    view = as_strided(xp, (geo.C, geo.kh, geo.kw, geo.N, geo.OH, geo.OW),
                      (s1, geo.dh * s2, geo.dw * s3, s0, geo.sh * s2, geo.sw * s3), writeable=False)
    return view.reshape(geo.C * geo.kh * geo.kw, geo.N * geo.OH * geo.OW)


def _col2im(cols, geo):
    """The adjoint of _im2col: add each kernel offset's slice of cols back into its input positions."""
    N, C, H, W = geo.N, geo.C, geo.H, geo.W
    Hp, Wp = H + geo.pt + geo.pb, W + geo.pl + geo.pr
    c6 = cols.reshape(C, geo.kh, geo.kw, N, geo.OH, geo.OW)
    # accumulate in (C, N, ...) order, matching cols' layout, and hand back a transposed view
    dxp = np.zeros((C, N, Hp, Wp), dtype=cols.dtype)
    for i in range(geo.kh):
        h0 = i * geo.dh
        hs = slice(h0, h0 + geo.sh * (geo.OH - 1) + 1, geo.sh)
        for j in range(geo.kw):
            w0 = j * geo.dw
            dxp[:, :, hs, w0:w0 + geo.sw * (geo.OW - 1) + 1:geo.sw] += c6[:, i, j]
    return dxp[:, :, geo.pt:geo.pt + H, geo.pl:geo.pl + W].transpose(1, 0, 2, 3)


class _Unfold(Function):
    """cols = im2col(x): (N, C, H, W) -> (C*kh*kw, N*OH*OW);  dx = col2im(g)"""

    op_name = "unfold"

    @staticmethod
    def forward(ctx, x, geo):
        ctx.geo = geo
        return _im2col(x, geo)

    @staticmethod
    def backward(ctx, g):
        return _Fold.apply(g, ctx.geo), None


class _Fold(Function):
    """x = col2im(cols): (C*kh*kw, N*OH*OW) -> (N, C, H, W), overlaps summed;  dcols = im2col(g)"""

    op_name = "fold"

    @staticmethod
    def forward(ctx, cols, geo):
        ctx.geo = geo
        return _col2im(cols, geo)

    @staticmethod
    def backward(ctx, g):
        return _Unfold.apply(g, ctx.geo), None


class _Conv2d(Function):
    """out[n, o] = b[o] + W2[o] @ cols[:, n];  dW2 = g2 @ cols^T,  db = sum(g2),  dx = col2im(W2^T @ g2)
    with cols = im2col(x) and g2 = g in (O, N*OH*OW) layout (one BLAS call each way)"""

    op_name = "conv2d"

    @staticmethod
    def forward(ctx, x, w, b, geo, groups):
        O = w.shape[0]
        cols = _im2col(x, geo)
        L = geo.N * geo.OH * geo.OW
        if groups == 1:
            out = np.matmul(w.reshape(O, -1), cols)
        else:
            out = np.matmul(w.reshape(groups, O // groups, -1), cols.reshape(groups, -1, L)).reshape(O, L)
        if b is not None:
            out += b[:, None]  # on the contiguous (O, N*L) buffer, before the transposed view
        need = ctx.needs_input_grad
        if need and need[1]:
            ctx.cols = cols
        ctx.geo, ctx.groups = geo, groups
        ctx.save_for_backward(x, w)
        return out.reshape(O, geo.N, geo.OH, geo.OW).transpose(1, 0, 2, 3)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        geo, G = ctx.geo, ctx.groups
        nx, nw, nb = ctx.needs_input_grad[:3]
        O = w.shape[0]
        L = geo.N * geo.OH * geo.OW
        K = w.numel() // O
        if is_grad_enabled():
            # create_graph: the same rule in Tensor ops (im2col/col2im are each other's adjoints), so it
            # can be differentiated again
            g2 = g.permute(1, 0, 2, 3).reshape(G, O // G, L)
            dx = dw = db = None
            if nw:
                cols = _Unfold.apply(x, geo).reshape(G, K, L)
                dw = (g2 @ cols.transpose(1, 2)).reshape(w.shape)
            if nx:
                dx = _Fold.apply((w.reshape(G, O // G, K).transpose(1, 2) @ g2).reshape(G * K, L), geo)
            if nb:
                db = g2.sum((0, 2)) if G == 1 else g2.sum(2).reshape(O)
            return dx, dw, db, None, None
        gd = g._data
        g2 = gd.transpose(1, 0, 2, 3).reshape(O, L)  # free when g kept the forward's layout
        wd = w._data
        dx = dw = db = None
        if nb:
            db = _arr(g2.sum(axis=1))
        if G == 1:
            if nw:
                # cols @ g2^T (long inner dimension second) is the faster BLAS orientation here
                dw = _arr(np.ascontiguousarray(np.matmul(ctx.cols, g2.T).T).reshape(wd.shape))
        else:
            g3 = g2.reshape(G, O // G, L)
            if nw:
                dw = _arr(np.matmul(g3, ctx.cols.reshape(G, K, L).transpose(0, 2, 1)).reshape(wd.shape))
        if nx:
            w3 = wd.reshape(G, O // G, K).transpose(0, 2, 1)  # (G, K, O/G)
            if geo.sh == geo.sw == 1:
                dx = _arr(_conv_dx_flat(gd, w3, geo))
            else:
                dcols = np.matmul(w3, g2.reshape(G, O // G, L)).reshape(G * K, L)
                dx = _arr(_col2im(dcols, geo))
        return dx, dw, db, None, None


def _conv_dx_flat(g, w3, geo):
    """conv2d's input gradient for stride 1, with every col2im add a long contiguous 1-D add.

    g (N, O, OH, OW) is embedded, zero-filled, in the padded (Hp, Wp) grid, so that output position
    p = oh * Wp + ow of image n reads padded input p + off(i, j), off = i*dh*Wp + j*dw, for every tap:
    the columns dcols = W^T g_grid (one GEMM, on Hp*Wp positions instead of OH*OW) are then added
    back with one shifted 1-D add per tap over the whole (N*Hp*Wp) flat grid. Garbage grid positions
    carry zero gradient, so the adds that spill across rows or images add zeros."""
    N, C, H, W = geo.N, geo.C, geo.H, geo.W
    G, K, Og = w3.shape
    O = G * Og
    Hp, Wp = H + geo.pt + geo.pb, W + geo.pl + geo.pr
    T = N * Hp * Wp
    # both buffers are scratch (nothing returned or saved aliases them): reuse them per shape, which
    # spares the page faults of fresh multi-MB allocations and, for grid, the zero fill (only its
    # valid (OH, OW) corner is ever written, so the rest stays zero)
    # (the key holds the valid corner's size too: the zeros outside it must never have been written)
    grid = _workspace(("conv_dx_grid", O, N, Hp, Wp, geo.OH, geo.OW, g.dtype),
                      lambda: np.zeros((O, N, Hp, Wp), g.dtype))
    grid[:, :, :geo.OH, :geo.OW] = g.transpose(1, 0, 2, 3)
    dcols = _workspace(("conv_dx_cols", G, K, T, g.dtype), lambda: np.empty((G, K, T), g.dtype))
    np.matmul(w3, grid.reshape(G, Og, T), out=dcols)
    dcols = dcols.reshape(C, geo.kh * geo.kw, T)
    dxp = dcols[:, 0].copy()  # the tap at offset 0 reaches every grid position: assign, no zero fill
    for k in range(1, geo.kh * geo.kw):
        i, j = divmod(k, geo.kw)
        off = i * geo.dh * Wp + j * geo.dw
        dxp[:, off:] += dcols[:, k, :T - off]
    dxp = dxp.reshape(C, N, Hp, Wp)[:, :, geo.pt:geo.pt + H, geo.pl:geo.pl + W]
    return dxp.transpose(1, 0, 2, 3)


def _spatial_input(input, op, ndim_ok=(3, 4)):
    if input.ndim not in ndim_ok:
        raise ValueError(f"{op}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape "
                         f"{tuple(input.shape)}")
    if input.ndim == 3:
        return input.unsqueeze(0), True
    return input, False


def _conv_pads(op, padding, kernel, dilation, stride):
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding == "same":
            if stride != (1, 1):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
            # PyTorch puts the odd extra row/column of padding at the bottom/right
            th, tw = dilation[0] * (kernel[0] - 1), dilation[1] * (kernel[1] - 1)
            return (th // 2, th - th // 2, tw // 2, tw - tw // 2)
        raise ValueError(f"{op}: padding string must be 'same' or 'valid', got {padding!r}")
    ph, pw = _pair(padding, "padding", op)
    return (ph, ph, pw, pw)


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
    op = "conv2d"
    x, unb = _spatial_input(input, op)
    if weight.ndim != 4:
        raise ValueError(f"{op}: weight must be 4-D (C_out, C_in/groups, kH, kW), got shape {tuple(weight.shape)}")
    O, Cg, kh, kw = weight.shape
    N, C, H, W = x.shape
    if groups <= 0 or C % groups or O % groups:
        raise ValueError(f"{op}: in_channels ({C}) and out_channels ({O}) must be divisible by groups ({groups})")
    if Cg * groups != C:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has {C} channels, but weight of shape "
                         f"{tuple(weight.shape)} with groups={groups} expects {Cg * groups}")
    if bias is not None and tuple(bias.shape) != (O,):
        raise ValueError(f"{op}: bias of shape {tuple(bias.shape)} must be ({O},)")
    stride = _pair(stride, "stride", op)
    dilation = _pair(dilation, "dilation", op)
    pads = _conv_pads(op, padding, (kh, kw), dilation, stride)
    geo = _make_geom(op, x.shape, (kh, kw), stride, dilation, pads)
    out = _Conv2d.apply(x, weight, bias, geo, int(groups))
    return out.squeeze(0) if unb else out


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
                     _pair(dilation, "dilation", "unfold"), (ph, ph, pw, pw))
    cols = _Unfold.apply(x, geo)
    out = cols.reshape(cols.shape[0], geo.N, geo.OH * geo.OW).permute(1, 0, 2)
    return out.squeeze(0) if unb else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    r"""Combine sliding local blocks into a tensor, summing overlaps (col2im), as
    torch.nn.functional.fold: the adjoint of :func:`unfold`.

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
                     _pair(dilation, "dilation", "fold"), (ph, ph, pw, pw))
    if geo.OH * geo.OW != L:
        raise ValueError(f"fold: input.size(2) = {L} does not match the {geo.OH} x {geo.OW} blocks of "
                         f"output_size {(H, W)}")
    out = _Fold.apply(x.permute(1, 0, 2).reshape(K, N * L), geo)
    return out.squeeze(0) if unb else out


# -- pooling ---------------------------------------------------------------------------------------

def _tiles(geo):
    """True when the windows tile the padded input exactly (kernel == stride, no dilation)."""
    return (geo.kh == geo.sh and geo.kw == geo.sw and geo.dh == 1 and geo.dw == 1
            and geo.H + geo.pt + geo.pb == geo.OH * geo.kh and geo.W + geo.pl + geo.pr == geo.OW * geo.kw)


def _scatter_windows(parts, geo, dtype, channel_major=False):
    """dx with dx[window k] += parts(k) for each kernel offset k = (i, j), cropped to the input.

    parts(k, out) writes the (N, C, OH, OW) values for offset k into out. channel_major lays dx out
    C-major, matching a gradient that flows back to conv2d (whose backward then needs no copy)."""
    N, C = geo.N, geo.C
    if _tiles(geo):
        # disjoint windows covering everything: write each offset's values straight into a
        # (N, C, OH, kh, OW, kw) buffer, no zero fill and no accumulation
        dx = _alloc((N, C, geo.OH, geo.kh, geo.OW, geo.kw), dtype, channel_major)
        for i in range(geo.kh):
            for j in range(geo.kw):
                parts(i * geo.kw + j, dx[:, :, :, i, :, j])
        dx = dx.reshape(N, C, geo.OH * geo.kh, geo.OW * geo.kw) if not channel_major else \
            dx.swapaxes(0, 1).reshape(C, N, geo.OH * geo.kh, geo.OW * geo.kw).swapaxes(0, 1)
    else:
        dx = _alloc((N, C, geo.H + geo.pt + geo.pb, geo.W + geo.pl + geo.pr), dtype, channel_major, True)
        tmp = np.empty((N, C, geo.OH, geo.OW), dtype=dtype)
        for i in range(geo.kh):
            for j in range(geo.kw):
                parts(i * geo.kw + j, tmp)
                _window(dx, geo, i, j)[...] += tmp
    if geo.pt or geo.pb or geo.pl or geo.pr:
        dx = dx[:, :, geo.pt:geo.pt + geo.H, geo.pl:geo.pl + geo.W]
    return dx


def _gather_windows(x, idx, geo):
    """out[n, c, oh, ow] = xpad[window idx[n, c, oh, ow]]."""
    xp = _padded(x, geo)
    out = np.zeros((geo.N, geo.C, geo.OH, geo.OW), dtype=x.dtype)
    for i in range(geo.kh):
        for j in range(geo.kw):
            out += _window(xp, geo, i, j) * (idx == i * geo.kw + j)
    return out


def _pairs(geo):
    """True for 2x2 windows with stride 2 tiling the unpadded input exactly (the common CNN pooling)."""
    return (geo.kh == geo.kw == geo.sh == geo.sw == 2 and geo.dh == geo.dw == 1
            and not (geo.pt or geo.pb or geo.pl or geo.pr) and geo.H == 2 * geo.OH and geo.W == 2 * geo.OW)


def _mem_order(a):
    """(a as a C-contiguous (A, B, H, W) array in memory order, whether that is (C, N) i.e. channel-major)."""
    if _channel_major(a):
        return a.transpose(1, 0, 2, 3), True
    return np.ascontiguousarray(a), False


def _pool_pairs_fwd(ctx, x, geo):
    """2x2 / stride-2 max pooling as two pairwise maxima over flat memory-order views: first across each
    horizontal pair (a 1-D stride-2 loop), then across the two rows of each window, so no padded copy and
    long inner loops. ih / iv record "the second of the pair is strictly greater", which makes the first
    maximum in row-major window order win ties, as PyTorch (and the general path)."""
    xm, cm = _mem_order(x)
    A, B = xm.shape[:2]
    p = xm.reshape(-1, 2)
    a, b = p[:, 0], p[:, 1]
    hm = np.maximum(a, b)                    # (A*B*H*OW,)
    ih = np.greater(b, a)
    q = hm.reshape(-1, 2, geo.OW)            # (A*B*OH, top/bottom row, OW)
    t, u = q[:, 0], q[:, 1]
    out = np.maximum(t, u)
    iv = np.greater(u, t)
    ctx.pairs = (ih, iv, cm)
    out = out.reshape(A, B, geo.OH, geo.OW)
    return out.transpose(1, 0, 2, 3) if cm else out


def _pool_pairs_idx(ih, iv, cm, geo):
    """The window offsets (N, C, OH, OW) int8 k = 2 * row + col of the fast path's maxima."""
    ih3 = ih.reshape(-1, 2, geo.OW)
    idx = (2 * iv + np.where(iv, ih3[:, 1], ih3[:, 0])).astype(np.int8)
    idx = idx.reshape(((geo.C, geo.N) if cm else (geo.N, geo.C)) + (geo.OH, geo.OW))
    return np.ascontiguousarray(idx.transpose(1, 0, 2, 3)) if cm else idx


def _pool_pairs_bwd(g, ih, iv, cm, geo):
    """dx for the fast path: g routed down the two pairwise choices, in x's memory order (so a
    channel-major conv output gets a channel-major gradient, which conv2d's backward uses as is)."""
    gm = np.ascontiguousarray(g.transpose(1, 0, 2, 3) if cm else g).reshape(-1, geo.OW)
    dh = np.empty((gm.shape[0], 2, geo.OW), g.dtype)
    np.multiply(gm, iv, out=dh[:, 1])
    np.multiply(gm, ~iv, out=dh[:, 0])
    dh = dh.reshape(-1)
    dx = np.empty((dh.shape[0], 2), g.dtype)
    np.multiply(dh, ih, out=dx[:, 1])
    np.multiply(dh, ~ih, out=dx[:, 0])
    if cm:
        return dx.reshape(geo.C, geo.N, geo.H, geo.W).transpose(1, 0, 2, 3)
    return dx.reshape(geo.N, geo.C, geo.H, geo.W)


class _MaxPool2d(Function):
    """out = max over each window (the first maximum wins ties);  dx = g scattered to each argmax"""

    op_name = "max_pool2d"

    @staticmethod
    def forward(ctx, x, geo):
        ctx.geo = geo
        if _pairs(geo):
            ctx.idx = None  # made on demand (create_graph, return_indices) from ctx.pairs
            ctx.save_for_backward()
            return _pool_pairs_fwd(ctx, x, geo)
        ctx.pairs = None
        xp = _padded(x, geo, -np.inf)
        best = _window(xp, geo, 0, 0).copy(order="K")  # keeps a C-major (conv output) layout
        K = geo.kh * geo.kw
        idx = np.zeros(best.shape, dtype=np.int8 if K < 128 else np.int32)
        for k in range(1, K):
            v = _window(xp, geo, *divmod(k, geo.kw))
            m = v > best  # strict: an equal later value does not take the gradient (as PyTorch)
            np.maximum(best, v, out=best)
            # branch-free idx[m] = k: k exceeds every index stored so far
            np.maximum(idx, np.multiply(m, idx.dtype.type(k), dtype=idx.dtype), out=idx)
        ctx.geo, ctx.idx = geo, idx
        ctx.save_for_backward()
        return best

    @staticmethod
    def backward(ctx, g):
        ctx.saved_tensors  # raises if the graph was freed
        if ctx.pairs is not None and not is_grad_enabled():
            return _arr(_pool_pairs_bwd(g._data, *ctx.pairs, ctx.geo)), None
        return _PoolScatter.apply(g, _pool_idx(ctx), ctx.geo), None


def _pool_idx(ctx):
    """The saved window offsets of a _MaxPool2d node (built from the fast path's choices if needed)."""
    if ctx.idx is None:
        ctx.idx = _pool_pairs_idx(*ctx.pairs, ctx.geo)
    return ctx.idx


class _PoolScatter(Function):
    """dx = g scattered to the window positions idx;  dg = gather(gg, idx)"""

    op_name = "max_pool2d_backward"

    @staticmethod
    def forward(ctx, g, idx, geo):
        ctx.idx, ctx.geo = idx, geo
        return _scatter_windows(lambda k, out: np.multiply(g, idx == k, out=out), geo, g.dtype,
                                _channel_major(g))

    @staticmethod
    def backward(ctx, gg):
        return _PoolGather.apply(gg, ctx.idx, ctx.geo), None, None


class _PoolGather(Function):
    """out = x at the window positions idx;  dx = scatter(g, idx)"""

    op_name = "max_pool2d_gather"

    @staticmethod
    def forward(ctx, x, idx, geo):
        ctx.idx, ctx.geo = idx, geo
        return _gather_windows(x, idx, geo)

    @staticmethod
    def backward(ctx, g):
        return _PoolScatter.apply(g, ctx.idx, ctx.geo), None, None


def _pool_args(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    x, unb = _spatial_input(input, op)
    kernel = _pair(kernel_size, "kernel_size", op)
    stride = kernel if stride is None or (not isinstance(stride, numbers.Integral) and len(stride) == 0) \
        else _pair(stride, "stride", op)
    ph, pw = _pair(padding, "padding", op)
    dil = _pair(dilation, "dilation", op)
    if ph * 2 > kernel[0] or pw * 2 > kernel[1]:
        raise ValueError(f"{op}: pad should be at most half of effective kernel size, but got padding "
                         f"{(ph, pw)} and kernel_size {kernel}")
    geo = _make_geom(op, x.shape, kernel, stride, dil, (ph, ph, pw, pw), ceil_mode)
    return x, unb, geo


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    r"""out[n, c, oh, ow] = max over the (dilated) window of xpad, padding with -inf; the gradient goes to
    the first maximum of each window, as PyTorch.

    Args:
        input (Tensor): (N, C, H, W) or (C, H, W).
        kernel_size (int or tuple): the window size.
        stride (int or tuple, optional): Default: kernel_size.
        padding (int or tuple): implicit -inf padding on both sides, at most kernel_size / 2. Default: 0.
        dilation (int or tuple): spacing of window elements. Default: 1.
        ceil_mode (bool): use ceil instead of floor for the output size. Default: False.
        return_indices (bool): also return the flat (h * W + w) input index of each maximum.
    """
    x, unb, geo = _pool_args("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    out = _MaxPool2d.apply(x, geo)
    res = out.squeeze(0) if unb else out
    if not return_indices:
        return res
    idx = _pool_idx(out.grad_fn) if out.grad_fn is not None else _max_idx(x._data, geo)
    i, j = np.divmod(idx.astype(np.int64), geo.kw)
    h = np.arange(geo.OH)[:, None] * geo.sh + i * geo.dh - geo.pt
    w = np.arange(geo.OW)[None, :] * geo.sw + j * geo.dw - geo.pl
    flat = _arr(h * geo.W + w)
    return res, (flat.squeeze(0) if unb else flat)


def _max_idx(x, geo):
    ctx = type("ctx", (), {"needs_input_grad": (), "save_for_backward": lambda *a: None})()
    _MaxPool2d.forward(ctx, x, geo)
    return _pool_idx(ctx)


def _avg_divisor(geo, count_include_pad, divisor_override, dtype):
    """The (OH, OW) divisor of each window, as PyTorch: the window clipped to the padded input
    (count_include_pad) or to the input itself."""
    if divisor_override:
        return np.asarray(divisor_override, dtype=dtype)

    def sizes(O, s, k, p, n):
        start = np.arange(O) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            return end - start
        return np.minimum(end, n) - np.maximum(start, 0)
    dh = sizes(geo.OH, geo.sh, geo.kh, geo.pt, geo.H)
    dw = sizes(geo.OW, geo.sw, geo.kw, geo.pl, geo.W)
    return (dh[:, None] * dw[None, :]).astype(dtype)


class _AvgPool2d(Function):
    """out = sum over each window of xpad / divisor;  dx = g / divisor spread over each window"""

    op_name = "avg_pool2d"

    @staticmethod
    def forward(ctx, x, geo, div):
        ctx.geo, ctx.div = geo, div
        xp = _padded(x, geo)
        out = _window(xp, geo, 0, 0).copy(order="K")
        for k in range(1, geo.kh * geo.kw):
            out += _window(xp, geo, *divmod(k, geo.kw))
        out /= div
        return out

    @staticmethod
    def backward(ctx, g):
        return _AvgPool2dT.apply(g, ctx.geo, ctx.div), None, None


class _AvgPool2dT(Function):
    """dx = g / divisor spread over each window (the adjoint of avg pooling);  dg = avg_pool(gg)"""

    op_name = "avg_pool2d_backward"

    @staticmethod
    def forward(ctx, g, geo, div):
        ctx.geo, ctx.div = geo, div
        gd = g / div

        def part(k, out):
            out[...] = gd
        return _scatter_windows(part, geo, g.dtype, _channel_major(g))

    @staticmethod
    def backward(ctx, gg):
        return _AvgPool2d.apply(gg, ctx.geo, ctx.div), None, None


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
    x, unb, geo = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    div = _avg_divisor(geo, count_include_pad, divisor_override, x.dtype)
    out = _AvgPool2d.apply(x, geo, div)
    return out.squeeze(0) if unb else out


def _adaptive_matrix(n, m, dtype):
    """A (m, n) matrix averaging PyTorch's adaptive bins: bin i covers [floor(i n/m), ceil((i+1) n/m))."""
    A = np.zeros((m, n), dtype=dtype)
    for i in range(m):
        s, e = (i * n) // m, -(-((i + 1) * n) // m)
        A[i, s:e] = 1.0 / (e - s)
    return A


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
        out = _arr(_adaptive_matrix(H, oh, x.dtype)) @ out
    if ow != W:
        out = out @ _arr(_adaptive_matrix(W, ow, x.dtype).T)
    return out.squeeze(0) if unb else out


# -- normalisation ----------------------------------------------------------------------------------

class _Normalize(Function):
    """out = (x - mean) / sqrt(var + eps) * w + b over `axes` (biased var);
    dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w"""

    op_name = "batch_norm"

    @staticmethod
    def forward(ctx, x, w, b, axes, eps, stats):
        mean = x.mean(axis=axes, keepdims=True)
        xc = x - mean
        var = np.square(xc).mean(axis=axes, keepdims=True)
        rstd = 1.0 / np.sqrt(var + x.dtype.type(eps))
        xhat = xc
        xhat *= rstd
        out = xhat * w if w is not None else xhat.copy()
        if b is not None:
            out += b
        if stats is not None:
            stats["mean"], stats["var"] = mean, var
        ctx.xhat, ctx.rstd, ctx.axes, ctx.eps = xhat, rstd, axes, eps
        ctx.wshape = w.shape if w is not None else None
        ctx.bshape = b.shape if b is not None else None
        ctx.save_for_backward(x, w)
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        axes = ctx.axes
        nx, nw, nb = ctx.needs_input_grad[:3]
        if is_grad_enabled():
            # create_graph: recompute the statistics with Tensor ops of x, so this is differentiable
            mean = x.mean(axes, keepdim=True)
            xc = x - mean
            rstd = mg.rsqrt((xc * xc).mean(axes, keepdim=True) + ctx.eps)
            xhat = xc * rstd
            gw = g * w if w is not None else g
            dx = rstd * (gw - gw.mean(axes, keepdim=True) - xhat * (gw * xhat).mean(axes, keepdim=True)) \
                if nx else None
            return dx, (g * xhat if nw else None), (g if nb else None), None, None, None
        gd = g._data
        xhat, rstd = ctx.xhat, ctx.rstd
        dx = dw = db = None
        if nx:
            gw = gd * w._data if w is not None else gd
            gx = gw * xhat
            dxa = gw - gw.mean(axis=axes, keepdims=True)
            dxa -= xhat * gx.mean(axis=axes, keepdims=True)
            dxa *= rstd
            dx = _arr(dxa.astype(x.dtype, copy=False))
        if nw:
            dw = _arr(_sum_to_shape(gd * xhat, ctx.wshape))
        if nb:
            db = _arr(_sum_to_shape(gd, ctx.bshape))
        return dx, dw, db, None, None, None


def _sum_to_shape(a, shape):
    """a summed over the dimensions that `shape` (a trailing-aligned broadcast shape) lacks or has as 1."""
    lead = a.ndim - len(shape)
    axes = tuple(i for i in range(a.ndim) if i < lead or shape[i - lead] == 1)
    return a.sum(axis=axes).reshape(shape) if axes else a


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
            raise ValueError(f"{op}: {name} of shape {tuple(t.shape)} must be ({C},) for input "
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
        out = _Normalize.apply(input, w, b, axes, float(eps), stats)
        if stats is not None:
            with no_grad():
                if running_mean is not None:
                    m = stats["mean"].reshape(C).astype(running_mean.dtype)
                    running_mean.mul_(1.0 - momentum).add_(_arr(m * running_mean.dtype.type(momentum)))
                if running_var is not None:
                    v = (stats["var"].reshape(C) * (n / (n - 1))).astype(running_var.dtype)
                    running_var.mul_(1.0 - momentum).add_(_arr(v * running_var.dtype.type(momentum)))
        return out
    if running_mean is None or running_var is None:
        raise ValueError(f"{op}: running_mean and running_var must be given in evaluation mode (training=False)")
    rstd = (1.0 / np.sqrt(running_var._data.astype(input.dtype) + input.dtype.type(eps))).reshape(bshape)
    out = (input - _arr(running_mean._data.astype(input.dtype).reshape(bshape))) * _arr(rstd)
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    r"""out = (x - mean) / sqrt(var + eps) * weight + bias, statistics over the last
    len(normalized_shape) dimensions (biased variance).

    Shape:
        input (*, *normalized_shape); weight, bias: normalized_shape.
    """
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (int(normalized_shape),)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != normalized_shape or k > input.ndim:
        raise ValueError(f"layer_norm: input of shape {tuple(input.shape)} does not end with "
                         f"normalized_shape {normalized_shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise ValueError(f"layer_norm: {name} of shape {tuple(t.shape)} must be {normalized_shape}")
    axes = tuple(range(input.ndim - k, input.ndim))
    return _Normalize.apply(input, weight, bias, axes, float(eps), None)


class _Embedding(Function):
    """out = weight[idx];  dweight = rows of g added at idx (row padding_idx gets none)"""

    op_name = "embedding"

    @staticmethod
    def forward(ctx, w, idx, pad):
        ctx.idx, ctx.pad, ctx.V = idx, pad, w.shape[0]
        return np.take(w, idx, axis=0)

    @staticmethod
    def backward(ctx, g):
        return _EmbeddingScatter.apply(g, ctx.idx, ctx.V, ctx.pad), None, None


class _EmbeddingScatter(Function):
    """dw[v] = sum of g rows whose idx == v (zero at pad);  dg = dw_grad[idx] (zero where idx == pad)"""

    op_name = "embedding_backward"

    @staticmethod
    def forward(ctx, g, idx, V, pad):
        ctx.idx, ctx.pad = idx, pad
        D = g.shape[-1]
        out = np.zeros((V, D), dtype=g.dtype)
        np.add.at(out, idx.reshape(-1), g.reshape(-1, D))
        if pad is not None:
            out[pad] = 0
        return out

    @staticmethod
    def backward(ctx, gg):
        out = _Embedding.apply(gg, ctx.idx, None)
        if ctx.pad is not None:
            out = out * _arr((ctx.idx != ctx.pad)[..., None].astype(gg.dtype))
        return out, None, None, None


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
    idx = np.asarray(input._data if isinstance(input, Tensor) else input)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {idx.dtype}")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got {tuple(weight.shape)}")
    V = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= V):
        bad = idx[(idx < 0) | (idx >= V)].flat[0]
        raise IndexError(f"embedding: index {int(bad)} is out of range for a table of {V} rows "
                         f"(weight {tuple(weight.shape)})")
    if padding_idx is not None:
        if not -V <= padding_idx < V:
            raise ValueError(f"embedding: padding_idx {padding_idx} must be within num_embeddings ({V})")
        padding_idx = padding_idx % V
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx)
            wd = weight._data
            norms = np.linalg.norm(wd[rows], ord=norm_type, axis=1)
            scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(wd.dtype)
            wd[rows] *= scale[:, None]
    return _Embedding.apply(weight, idx, padding_idx)
