"""Registry entries for the nn.functional ops and for the backward Functions (op-as-backward
Functions such as ThresholdBackward, whose forward is the NumPy VJP): `ops`.

Same OpInfo/SampleInput as the other families (core.py). nn.functional entries are named
"nn.functional.<name>" (the default torch_op is then torch.nn.functional.<name>); backward-Function
entries take kind="backward", op=lambda g, *saved: SomeBackward.apply(g, *saved), ref = the NumPy VJP
(None where only finite differences and gradgradcheck check it).

grad_fn is PyTorch's node name where our node is PyTorch's op; None where the result's last node is
a composite's (l1_loss's mean, unfold's permute, linear without bias: PyTorch's Mm, ...).
"""
from functools import partial

import numpy as np

from .core import (OpInfo, SampleInput, Const, unary_samples, binary_samples, samples, sample,  # noqa: F401
                     positive, distinct, _np_erf, _np_sigmoid, _np_softmax, _np_log_softmax)


def _f(fn):
    """fn(F, *xs) as an OpInfo op (fn(L, ...) with L minigrad or torch): L.nn.functional is F."""
    return lambda L, *xs, **kw: fn(L.nn.functional, *xs, **kw)


def fcase(name, variant, inputs, fn, ref, *, torch=True, kinks=(), **kw):
    """An nn.functional entry: fn(F, *xs); inputs are shapes (sampled), arrays or Const."""
    def conv(i, rng):
        if isinstance(i, tuple) and all(isinstance(d, int) for d in i):
            return sample(i, rng)
        if callable(i):
            return i(rng)
        return i if isinstance(i, Const) else np.asarray(i)

    def gen(rng):
        out = [SampleInput(tuple(conv(i, rng) for i in inputs))]
        out += [SampleInput(tuple(np.asarray(v, dtype=np.float64) for v in k), kink=True,
                            name=f"kink{j}") for j, k in enumerate(kinks)]
        return out
    call = _f(fn)
    return OpInfo("nn.functional." + name, partial(call, _Mg), ref, gen, variant=variant,
                  torch_op=call if torch else None, **kw)


class _MgLib:
    """minigrad as the `L` of an entry (imported lazily: this module is imported by minigrad.testing)."""

    @property
    def nn(self):
        import minigrad.nn
        return minigrad.nn


_Mg = _MgLib()


def _away(*points, low=-2.0, high=2.0):
    return lambda shape: (lambda rng: sample(shape, rng, low=low, high=high, away=points))


def _pos(shape, low=0.3, high=2.0):
    return lambda rng: positive(shape, rng, low, high)


def _distinct(shape):
    return lambda rng: distinct(shape, rng)


def _probs(shape, axis=1):
    def gen(rng):
        p = rng.random(shape) + 0.1
        return p / p.sum(axis, keepdims=True)
    return gen


def _np_ctc(x, targets, input_lengths, target_lengths, blank=0):
    """CTC loss per sample of logits x (T, N, C) (log_softmax taken here): the alpha recursion written
    out per sample and position in probability space (short samples: no underflow)."""
    p = np.exp(x - x.max(2, keepdims=True))
    p /= p.sum(2, keepdims=True)
    out = []
    for n, (T, S) in enumerate(zip(input_lengths, target_lengths)):
        ext = [blank]
        for lab in targets[n][:S]:
            ext += [int(lab), blank]
        a = np.zeros(len(ext))
        a[0] = p[0, n, ext[0]]
        if S:
            a[1] = p[0, n, ext[1]]
        for t in range(1, T):
            prev = a.copy()
            for s in range(len(ext)):
                v = prev[s] + (prev[s - 1] if s >= 1 else 0.0)
                if s >= 2 and s % 2 == 1 and ext[s] != ext[s - 2]:
                    v += prev[s - 2]
                a[s] = v * p[t, n, ext[s]]
        total = a[-1] + (a[-2] if S else 0.0)
        with np.errstate(divide="ignore"):
            out.append(-np.log(total))
    return np.array(out)


def _np_softplus(x):
    return np.logaddexp(0.0, x)


def _np_ce(z, t, weight=None, reduction="mean", label_smoothing=0.0):
    """cross_entropy of logits z (N, C, ...) with class indices t (N, ...) or probabilities."""
    z = np.asarray(z)
    C = z.shape[1]
    logp = _np_log_softmax(z, 1)
    w = np.ones(C) if weight is None else np.asarray(weight)
    wb = w.reshape((1, -1) + (1,) * (z.ndim - 2))
    if np.asarray(t).dtype.kind == "f":
        q = (np.asarray(t) * (1 - label_smoothing) + label_smoothing / C) * wb
        loss = -(q * logp).sum(1)
        return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]
    t = np.asarray(t)
    onehot = np.moveaxis(np.eye(C)[t], -1, 1)
    q = (onehot * (1 - label_smoothing) + label_smoothing / C) * wb
    loss = -(q * logp).sum(1)
    denom = w[t].sum()
    return {"mean": loss.sum() / denom, "sum": loss.sum(), "none": loss}[reduction]


def _np_nll(x, t, reduction="mean"):
    picked = -np.take_along_axis(x, t[:, None], 1)[:, 0]
    return {"mean": picked.mean(), "sum": picked.sum(), "none": picked}[reduction]


def _np_pad(x, pad, mode="constant"):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return np.pad(x, widths, mode={"replicate": "edge", "circular": "wrap"}.get(mode, mode))


def _np_rms_norm(x, shape, w=None, eps=None):
    eps = np.finfo(x.dtype).eps if eps is None else eps
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    out = x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
    return out * w if w is not None else out


def _np_layer_norm(x, shape, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    xhat = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return xhat * (1 if w is None else w) + (0 if b is None else b)


def _np_batch_norm_train(x, rm, rv, w=None, b=None, training=True, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    xhat = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return xhat * w.reshape(shape) + b.reshape(shape)


_X23 = (2, 3)
_IDX4 = Const(np.array([1, 0, 2, 2]))

functional_ops = [
    # activations
    fcase("relu", "", [_away(0.0)(_X23)], lambda F, x: F.relu(x), lambda x: np.maximum(x, 0),
          grad_fn="Relu", kinks=[([-1.0, 0.0, 2.0],)]),
    fcase("relu6", "", [_away(0.0, 6.0, low=-2.0, high=8.0)(_X23)], lambda F, x: F.relu6(x),
          lambda x: np.clip(x, 0, 6), grad_fn=None, kinks=[([-1.0, 0.0, 3.0, 6.0, 7.0],)]),
    # the kink samples: gradient 0 at both ends, as PyTorch's hardtanh_backward (clamp passes it there)
    fcase("hardtanh", "", [_away(-1.0, 1.0)(_X23)], lambda F, x: F.hardtanh(x),
          lambda x: np.clip(x, -1, 1), grad_fn=None, kinks=[([-2.0, -1.0, 0.0, 1.0, 2.0],)]),
    fcase("sigmoid", "", [_X23], lambda F, x: F.sigmoid(x), _np_sigmoid, grad_fn="Sigmoid"),
    fcase("tanh", "", [_X23], lambda F, x: F.tanh(x), np.tanh, grad_fn="Tanh"),
    fcase("softmax", "", [_X23], lambda F, x: F.softmax(x, dim=1), lambda x: _np_softmax(x, 1), grad_fn=None),
    fcase("log_softmax", "", [_X23], lambda F, x: F.log_softmax(x, dim=1), lambda x: _np_log_softmax(x, 1),
          grad_fn="LogSoftmax"),
    fcase("leaky_relu", "", [_away(0.0)(_X23)], lambda F, x: F.leaky_relu(x, 0.1),
          lambda x: np.where(x > 0, x, 0.1 * x), grad_fn="LeakyRelu", kinks=[([-1.0, 0.0, 2.0],)]),
    fcase("gelu", "", [_X23], lambda F, x: F.gelu(x), lambda x: x * 0.5 * (1 + _np_erf(x / np.sqrt(2))),
          grad_fn="Gelu"),
    fcase("gelu", "large", [(9, 12)], lambda F, x: F.gelu(x), lambda x: x * 0.5 * (1 + _np_erf(x / np.sqrt(2))),
          grad_fn="Gelu"),   # >= 64 elements: the numba loop where installed
    fcase("gelu", "tanh", [_X23], lambda F, x: F.gelu(x, approximate="tanh"),
          lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), grad_fn=None),
    fcase("silu", "", [_X23], lambda F, x: F.silu(x), lambda x: x * _np_sigmoid(x), grad_fn=None),
    fcase("elu", "", [_away(0.0)(_X23)], lambda F, x: F.elu(x), lambda x: np.where(x > 0, x, np.expm1(x)),
          grad_fn=None),
    fcase("softplus", "", [_X23], lambda F, x: F.softplus(x), _np_softplus, grad_fn=None),
    fcase("logsigmoid", "", [_X23], lambda F, x: F.logsigmoid(x), lambda x: -_np_softplus(-x), grad_fn=None),
    # pad, linear, dropout, one_hot, normalize
    fcase("pad", "", [_X23], lambda F, x: F.pad(x, (1, 2)), lambda x: _np_pad(x, (1, 2)),
          grad_fn="ConstantPadNd"),
    fcase("pad", "crop", [(2, 4)], lambda F, x: F.pad(x, (-1, 1, 1, 0)), None, grad_fn="ConstantPadNd"),
    fcase("pad", "reflect", [(1, 2, 4)], lambda F, x: F.pad(x, (2, 1), mode="reflect"),
          lambda x: _np_pad(x, (2, 1), "reflect"), grad_fn=None),
    fcase("linear", "", [(5, 3), (4, 3), (4,)], lambda F, x, w, b: F.linear(x, w, b),
          lambda x, w, b: x @ w.T + b, grad_fn="Addmm"),
    fcase("linear", "nobias", [(5, 3), (4, 3)], lambda F, x, w: F.linear(x, w), lambda x, w: x @ w.T,
          grad_fn=None),  # PyTorch: Mm; ours is the one fused node either way
    fcase("linear", "3d", [(2, 5, 3), (4, 3), (4,)], lambda F, x, w, b: F.linear(x, w, b),
          lambda x, w, b: x @ w.T + b, grad_fn=None),  # PyTorch: View of an Addmm
    fcase("dropout", "p0", [_X23], lambda F, x: F.dropout(x, 0.0), lambda x: x, grad_fn=None),
    fcase("dropout", "p1", [_X23], lambda F, x: F.dropout(x, 1.0), lambda x: np.zeros_like(x), grad_fn=None),
    fcase("dropout", "eval", [_X23], lambda F, x: F.dropout(x, 0.5, training=False), lambda x: x, grad_fn=None),
    *[c for _n, _s in (("dropout1d", (2, 3, 4)), ("dropout2d", (2, 3, 2, 2)), ("dropout3d", (3, 2, 2, 2))) for c in (
        fcase(_n, "p0", [_s], lambda F, x, _n=_n: getattr(F, _n)(x, 0.0), lambda x: x, grad_fn=None),
        fcase(_n, "p1", [_s], lambda F, x, _n=_n: getattr(F, _n)(x, 1.0), lambda x: np.zeros_like(x), grad_fn=None),
        fcase(_n, "eval", [_s], lambda F, x, _n=_n: getattr(F, _n)(x, 0.5, training=False), lambda x: x,
              grad_fn=None))],
    *[c for _n, _s in (("alpha_dropout", (2, 3)), ("feature_alpha_dropout", (2, 3, 2))) for c in (
        fcase(_n, "p0", [_s], lambda F, x, _n=_n: getattr(F, _n)(x, 0.0, training=True), lambda x: x, grad_fn=None),
        fcase(_n, "p1", [_s], lambda F, x, _n=_n: getattr(F, _n)(x, 1.0, training=True), lambda x: np.zeros_like(x),
              grad_fn=None),
        fcase(_n, "eval", [_s], lambda F, x, _n=_n: getattr(F, _n)(x, 0.5), lambda x: x, grad_fn=None))],
    fcase("one_hot", "", [np.array([0, 2, 1])], lambda F, t: F.one_hot(t, 4),
          lambda t: np.eye(4, dtype=np.int64)[t], supports_grad=False, dtypes=("int64",), grad_fn=None),
    fcase("normalize", "", [_X23], lambda F, x: F.normalize(x, dim=1),
          lambda x: x / np.linalg.norm(x, axis=1, keepdims=True), grad_fn=None),
    # losses
    fcase("cross_entropy", "", [(4, 3), _IDX4], lambda F, z, t: F.cross_entropy(z, t), _np_ce,
          grad_fn="CrossEntropyLoss"),
    fcase("cross_entropy", "weight_smoothing_sum", [(4, 3), _IDX4],
          lambda F, z, t: F.cross_entropy(z, t, weight=F_weight(F, z), reduction="sum", label_smoothing=0.2),
          lambda z, t: _np_ce(z, t, np.array([0.5, 1.0, 2.0]), "sum", 0.2), grad_fn="CrossEntropyLoss",
          torch=False),
    fcase("cross_entropy", "none_3d", [(2, 3, 2), Const(np.array([[0, 2], [1, 1]]))],
          lambda F, z, t: F.cross_entropy(z, t, reduction="none"),
          lambda z, t: _np_ce(z, t, reduction="none"), grad_fn="CrossEntropyLoss"),
    fcase("cross_entropy", "probs", [(4, 3), _probs((4, 3))],
          lambda F, z, y: F.cross_entropy(z, y, label_smoothing=0.1),
          lambda z, y: _np_ce(z, y, label_smoothing=0.1), grad_fn="CrossEntropyLoss"),
    # ctc_loss through a log_softmax (PyTorch's gradient is the derivative there: see F.ctc_loss)
    fcase("ctc_loss", "", [(6, 3, 4), Const(np.array([[1, 2, 2], [3, 1, 0], [2, 3, 0]]))],
          lambda F, x, t: F.ctc_loss(x.log_softmax(2), t, [6, 5, 6], [3, 2, 2], reduction="none"),
          lambda x, t: _np_ctc(x, t, [6, 5, 6], [3, 2, 2]), grad_fn="CtcLoss", supports_gradgrad=False),
    fcase("ctc_loss", "concatenated_mean", [(5, 2, 3), Const(np.array([1, 1, 2]))],
          lambda F, x, t: F.ctc_loss(x.log_softmax(2), t, [5, 4], [2, 1]),
          lambda x, t: np.mean(_np_ctc(x, np.array([[1, 1], [2, 0]]), [5, 4], [2, 1]) / np.array([2, 1])),
          grad_fn=None, supports_gradgrad=False),
    fcase("ctc_loss", "zero_infinity_sum", [(3, 2, 3), Const(np.array([[1, 1, 1], [2, 1, 0]]))],
          lambda F, x, t: F.ctc_loss(x.log_softmax(2), t, [3, 3], [3, 2], blank=0, reduction="sum",
                                     zero_infinity=True),
          lambda x, t: np.nan_to_num(_np_ctc(x, t, [3, 3], [3, 2]), posinf=0.0).sum(), grad_fn=None,
          supports_gradgrad=False),
    fcase("nll_loss", "", [(4, 3), _IDX4], lambda F, x, t: F.nll_loss(x, t), _np_nll, grad_fn="NllLoss"),
    fcase("nll_loss", "none", [(4, 3), _IDX4], lambda F, x, t: F.nll_loss(x, t, reduction="none"),
          lambda x, t: _np_nll(x, t, "none"), grad_fn="NllLoss"),
    fcase("mse_loss", "", [_X23, _X23], lambda F, x, y: F.mse_loss(x, y), lambda x, y: ((x - y) ** 2).mean(),
          grad_fn="MseLoss"),
    fcase("mse_loss", "none", [_X23, _X23], lambda F, x, y: F.mse_loss(x, y, reduction="none"),
          lambda x, y: (x - y) ** 2, grad_fn="MseLoss"),
    fcase("l1_loss", "", [_X23, _X23], lambda F, x, y: F.l1_loss(x, y), lambda x, y: np.abs(x - y).mean(),
          grad_fn=None, skips={"torch_double_backward": "PyTorch's second derivative of abs is a ZeroTensor, "
                                                        "which cannot be read as an array"}),
    fcase("smooth_l1_loss", "", [_X23, _X23], lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.5),
          None, grad_fn=None),
    fcase("huber_loss", "", [_X23, _X23], lambda F, x, y: F.huber_loss(x, y, delta=0.5), None, grad_fn=None),
    fcase("binary_cross_entropy", "none", [_pos(_X23, 0.1, 0.9), _pos(_X23, 0.0, 1.0)],
          lambda F, x, y: F.binary_cross_entropy(x, y, reduction="none"),
          lambda x, y: -(y * np.log(x) + (1 - y) * np.log1p(-x)), grad_fn="BinaryCrossEntropy"),
    fcase("binary_cross_entropy_with_logits", "none", [_X23, _pos(_X23, 0.0, 1.0)],
          lambda F, x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"),
          lambda x, y: (1 - y) * x + _np_softplus(-x), grad_fn="BinaryCrossEntropyWithLogits"),
    fcase("binary_cross_entropy_with_logits", "pos_weight", [_X23, _pos(_X23, 0.0, 1.0), lambda rng: Const(positive((3,), rng, 0.5, 2.0))],
          lambda F, x, y, pw: F.binary_cross_entropy_with_logits(x, y, reduction="none", pos_weight=pw),
          lambda x, y, pw: (1 - y) * x + (1 + (pw - 1) * y) * _np_softplus(-x),
          grad_fn="BinaryCrossEntropyWithLogits"),
    # convolution and pooling
    fcase("conv2d", "", [(2, 3, 5, 5), (4, 3, 3, 3), (4,)], lambda F, x, w, b: F.conv2d(x, w, b, padding=1),
          None, grad_fn="Convolution"),
    fcase("conv2d", "stride_dilation", [(1, 2, 7, 6), (3, 2, 2, 3)],
          lambda F, x, w: F.conv2d(x, w, stride=(2, 1), dilation=(1, 2)), None, grad_fn="Convolution"),
    fcase("conv2d", "groups", [(2, 4, 4, 4), (6, 2, 3, 3)], lambda F, x, w: F.conv2d(x, w, groups=2),
          None, grad_fn="Convolution"),
    fcase("unfold", "", [(2, 2, 4, 4)], lambda F, x: F.unfold(x, 2, padding=1, stride=2), None, grad_fn=None),
    fcase("fold", "", [(2, 8, 9)], lambda F, x: F.fold(x, (4, 4), 2, padding=1, stride=2), None,
          grad_fn="Col2Im"),
    fcase("avg_pool2d", "", [(2, 2, 4, 6)], lambda F, x: F.avg_pool2d(x, 2), None, grad_fn="AvgPool2D"),
    fcase("avg_pool2d", "pad", [(1, 2, 5, 5)],
          lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False), None,
          grad_fn="AvgPool2D"),
    fcase("adaptive_avg_pool2d", "", [(2, 2, 5, 7)], lambda F, x: F.adaptive_avg_pool2d(x, (2, 3)), None,
          grad_fn=None),
    # normalisation, embedding
    fcase("batch_norm", "", [(4, 3, 2), (3,), (3,)],
          lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
          lambda x, w, b: _np_batch_norm_train(x, None, None, w, b), grad_fn="NativeBatchNorm"),
    fcase("batch_norm", "eval", [(4, 3), Const(np.array([0.1, -0.2, 0.3])), Const(np.array([1.0, 2.0, 0.5])),
                                 (3,), (3,)],
          lambda F, x, rm, rv, w, b: F.batch_norm(x, rm, rv, w, b, training=False),
          lambda x, rm, rv, w, b: (x - rm) / np.sqrt(rv + 1e-5) * w + b, grad_fn=None),
    fcase("layer_norm", "", [(2, 4, 3), (3,), (3,)], lambda F, x, w, b: F.layer_norm(x, (3,), w, b),
          lambda x, w, b: _np_layer_norm(x, (3,), w, b), grad_fn="NativeLayerNorm"),
    fcase("layer_norm", "2d_noaffine", [(2, 3, 4)], lambda F, x: F.layer_norm(x, (3, 4)),
          lambda x: _np_layer_norm(x, (3, 4)), grad_fn="NativeLayerNorm"),
    fcase("rms_norm", "", [(2, 4, 3), (3,)], lambda F, x, w: F.rms_norm(x, (3,), w),
          lambda x, w: _np_rms_norm(x, (3,), w), grad_fn=None),
    fcase("rms_norm", "2d_noaffine_eps", [(2, 3, 4)], lambda F, x: F.rms_norm(x, (3, 4), eps=1e-3),
          lambda x: _np_rms_norm(x, (3, 4), eps=1e-3), grad_fn=None),
    fcase("embedding", "", [Const(np.array([[1, 0], [3, 1]])), (4, 3)], lambda F, i, w: F.embedding(i, w),
          lambda i, w: w[i], grad_fn="Embedding"),
    fcase("embedding", "padding_idx", [Const(np.array([1, 0, 3, 1])), (4, 3)],
          lambda F, i, w: F.embedding(i, w, padding_idx=1), lambda i, w: w[i], grad_fn="Embedding",
          skips={t: "row padding_idx gets no gradient by definition (as PyTorch's), unlike finite "
                    "differences; the gradient is compared with PyTorch's" for t in ("gradcheck", "gradgradcheck")}),
]


def F_weight(F, z):
    """A class weight of z's dtype (cross_entropy's weight must match the logits)."""
    import minigrad as mg
    return mg.tensor(np.array([0.5, 1.0, 2.0]), dtype=z.dtype)


# -- the backward Functions (op-as-backward): forward = the NumPy VJP, backward = the 2nd derivative --

def _bcase(name, inputs, op, ref=None, **kw):
    def gen(rng):
        return [SampleInput(tuple(i(rng) if callable(i) else (sample(i, rng) if isinstance(i, tuple) else i)
                                  for i in inputs))]
    return OpInfo(name, op, ref, gen, kind="backward", torch_op=None, **{"grad_fn": name, **kw})


def _threshold_backward(g, y):
    from minigrad.ops.elementwise import ThresholdBackward
    return ThresholdBackward.apply(g, y)


def _gelu_backward(g, x):
    from minigrad.ops.activation import GeluBackward
    return GeluBackward.apply(g, x)


def _np_gelu_grad(g, x):
    return g * (0.5 * (1 + _np_erf(x / np.sqrt(2))) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi))


def _addmm_backward(g, x, w):
    from minigrad.ops.linalg import AddmmBackward
    return AddmmBackward.apply(g, x, w, (True, True, True))


def _conv_geo(x, w, stride=(1, 1), pads=((1, 1), (1, 1))):
    from minigrad.ops.conv import _make_geom
    return _make_geom("conv2d", x.shape, w.shape[2:], stride, (1, 1), pads)


def _convolution_backward(g, x, w, stride=(1, 1)):
    from minigrad.ops.conv import ConvolutionBackward
    return ConvolutionBackward.apply(g, x, w, None, _conv_geo(x, w, stride), 1, (True, True, True))


def _per_sample(fn):
    """These entries rebuild the forward's statistics in NumPy (or from a throwaway forward's node)
    before calling the backward op: under vmap that must happen once per sample, as a public op's
    NumPy-reading wrapper does (batched_by_loop), or it would read the physical batched array."""
    from minigrad.func.vmap import batched_by_loop
    return batched_by_loop(fn)


@_per_sample
def _ce_backward(g, z, t, **kw):
    import minigrad as mg
    from minigrad.ops.loss import CrossEntropyLossBackward
    # the forward's statistics, from a throwaway forward of the same logits
    with mg.enable_grad():
        st = mg.nn.functional.cross_entropy(z.detach().requires_grad_(), t, **kw).grad_fn.st
    need = (True, t.requires_grad)
    return CrossEntropyLossBackward.apply(g, z, t, st, need)


@_per_sample
def _norm_backward(g, x, w, layer=True):
    from minigrad.ops.normalization import NativeBatchNormBackward, NativeLayerNormBackward
    xd = x.detach().numpy()
    axes = (x.ndim - 1,) if layer else (0,) + tuple(range(2, x.ndim))
    mean = xd.mean(axes, keepdims=True)
    rstd = 1.0 / np.sqrt(((xd - mean) ** 2).mean(axes, keepdims=True) + 1e-5)
    op = NativeLayerNormBackward if layer else NativeBatchNormBackward
    return op.apply(g, x, w, mean, rstd, axes, 1e-5, (True, True, True))


backward_ops = [
    _bcase("ThresholdBackward", [(2, 3), lambda rng: Const(positive((2, 3), rng) * rng.choice([0.0, 1.0], (2, 3)))],
           _threshold_backward, lambda g, y: g * (y > 0)),
    _bcase("GeluBackward", [(3, 4), (3, 4)], _gelu_backward, _np_gelu_grad),
    _bcase("AddmmBackward", [(5, 4), (5, 3), (4, 3)], _addmm_backward,
           lambda g, x, w: (g @ w, g.T @ x, g.sum(0))),
    _bcase("ConvolutionBackward", [(2, 4, 5, 5), (2, 3, 5, 5), (4, 3, 3, 3)], _convolution_backward),
    _bcase("CrossEntropyLossBackward", [(), (4, 3), _IDX4], _ce_backward),
    _bcase("CrossEntropyLossBackward", [(4,), (4, 3), _IDX4],
           lambda g, z, t: _ce_backward(g, z, t, reduction="none", label_smoothing=0.1), variant="none_smoothing"),
    _bcase("CrossEntropyLossBackward", [(), (4, 3), _probs((4, 3))],
           lambda g, z, y: _ce_backward(g, z, y, reduction="sum", label_smoothing=0.2), variant="probs"),
    _bcase("NativeLayerNormBackward", [(2, 4, 3), (2, 4, 3), (3,)], _norm_backward),
    _bcase("NativeBatchNormBackward", [(4, 3, 2), (4, 3, 2), (1, 3, 1)],
           lambda g, x, w: _norm_backward(g, x, w, layer=False)),
]

def _np_selu(x):
    return 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))


def _np_softplus1(x):
    return np.logaddexp(0, x)


def _np_cos(a, b, dim=1, eps=1e-8):
    na = np.maximum(np.sqrt((a * a).sum(dim)), eps)
    return (a * b).sum(dim) / (na * np.maximum(np.sqrt((b * b).sum(dim)), eps))


def _np_group_norm(x, g, w, b, eps=1e-5):
    n = x.shape[0]
    xs = x.reshape(n, g, -1)
    y = ((xs - xs.mean(-1, keepdims=True)) / np.sqrt(xs.var(-1, keepdims=True) + eps)).reshape(x.shape)
    sh = (1, -1) + (1,) * (x.ndim - 2)
    return y * w.reshape(sh) + b.reshape(sh)


def _np_pixel_shuffle(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // (r * r), h * r, w * r)


def _np_sdpa(q, k, v, mask=None, scale=None, is_causal=False, enable_gqa=False):
    if enable_gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], -3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], -3)
    s = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    if is_causal:
        mask = np.tril(np.ones(s.shape[-2:], bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    dead = np.isneginf(s).all(-1, keepdims=True)
    s = np.exp(np.where(dead, 0.0, s) - np.where(dead, 0.0, s).max(-1, keepdims=True))
    return np.where(dead, 0.0, s / s.sum(-1, keepdims=True)) @ v


_SDPA_KEEP = np.array([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], bool)   # query 1 sees no key
_SDPA_BIAS = np.array([[0.5, -np.inf, 0.0, 1.0, -2.0], [-np.inf] * 5, [0.1, 0.2, -0.3, 0.0, 0.4]])


_TGT3 = Const(np.array([1.0, -1.0, 1.0]))

more_functional_ops = [
    # alpha 0.5: PyTorch computes 1/alpha in float32 internally; a binary fraction keeps it exact
    fcase("celu", "", [_away(0.0)(_X23)], lambda F, x: F.celu(x, 0.5),
          lambda x: np.where(x > 0, x, 0.5 * np.expm1(x / 0.5)), grad_fn=None),
    fcase("selu", "", [_away(0.0)(_X23)], lambda F, x: F.selu(x), _np_selu, grad_fn=None),
    fcase("hardsigmoid", "", [_away(-3.0, 3.0, low=-4, high=4)(_X23)], lambda F, x: F.hardsigmoid(x),
          lambda x: np.clip(x / 6 + 0.5, 0, 1), grad_fn=None,
          skips={"torch": "PyTorch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32 "
                          "(relative error 3e-8, measured); ours is exact (gradcheck checks it)"}),
    fcase("hardswish", "", [_away(-3.0, 3.0, low=-4, high=4)(_X23)], lambda F, x: F.hardswish(x),
          lambda x: x * np.clip(x / 6 + 0.5, 0, 1), grad_fn=None),
    fcase("mish", "", [_X23], lambda F, x: F.mish(x), lambda x: x * np.tanh(_np_softplus1(x)), grad_fn=None),
    fcase("softsign", "", [_away(0.0)(_X23)], lambda F, x: F.softsign(x), lambda x: x / (1 + np.abs(x)), grad_fn=None),
    fcase("tanhshrink", "", [_X23], lambda F, x: F.tanhshrink(x), lambda x: x - np.tanh(x), grad_fn=None),
    fcase("glu", "", [(2, 4)], lambda F, x: F.glu(x, 1), lambda x: x[:, :2] / (1 + np.exp(-x[:, 2:])), grad_fn=None),
    fcase("cosine_similarity", "", [(3, 4), (3, 4)], lambda F, a, b: F.cosine_similarity(a, b), _np_cos, grad_fn=None),
    fcase("pairwise_distance", "", [(3, 4), (3, 4)], lambda F, a, b: F.pairwise_distance(a, b),
          lambda a, b: np.sqrt(((a - b + 1e-6) ** 2).sum(-1)), grad_fn=None),
    fcase("kl_div", "", [(3, 4), _pos((3, 4))], lambda F, a, b: F.kl_div(a, b, reduction="batchmean"),
          lambda a, b: (b * (np.log(b) - a)).sum() / 3, grad_fn=None),
    fcase("kl_div", "log_target", [(3, 4), (3, 4)], lambda F, a, b: F.kl_div(a, b, reduction="sum", log_target=True),
          lambda a, b: (np.exp(b) * (b - a)).sum(), grad_fn=None),
    fcase("margin_ranking_loss", "", [_away(0.0)((3,)), (3,), _TGT3],
          lambda F, a, b, y: F.margin_ranking_loss(a, b, y, 0.25),
          lambda a, b, y: np.maximum(-y * (a - b) + 0.25, 0).mean(), grad_fn=None),
    fcase("triplet_margin_loss", "", [(3, 4), (3, 4), (3, 4)], lambda F, a, p, n: F.triplet_margin_loss(a, p, n, 3.0),
          lambda a, p, n: np.maximum(np.sqrt(((a - p + 1e-6) ** 2).sum(-1)) - np.sqrt(((a - n + 1e-6) ** 2).sum(-1)) + 3.0,
                                     0).mean(), grad_fn=None),
    fcase("pixel_shuffle", "", [(1, 8, 2, 3)], lambda F, x: F.pixel_shuffle(x, 2), lambda x: _np_pixel_shuffle(x, 2),
          grad_fn=None),
    fcase("pixel_unshuffle", "", [(1, 2, 4, 6)], lambda F, x: F.pixel_unshuffle(x, 2), None, grad_fn=None),
    fcase("scaled_dot_product_attention", "", [(2, 3, 4), (2, 5, 4), (2, 5, 4)],
          lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v), _np_sdpa, grad_fn=None),
    fcase("scaled_dot_product_attention", "causal_4d", [(2, 2, 4, 3), (2, 2, 4, 3), (2, 2, 4, 5)],
          lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
          lambda q, k, v: _np_sdpa(q, k, v, is_causal=True), grad_fn=None),
    fcase("scaled_dot_product_attention", "bool_mask_dead_row", [(2, 3, 4), (2, 5, 4), (2, 5, 2), Const(_SDPA_KEEP)],
          lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), _np_sdpa, grad_fn=None),
    fcase("scaled_dot_product_attention", "float_mask_broadcast_kv", [(2, 3, 4), (1, 5, 4), (1, 5, 2), (3, 5)],
          lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.7),
          lambda q, k, v, m: _np_sdpa(q, k, v, m, scale=0.7), grad_fn=None),
    # masks (one query masked entirely: zeros, no gradient), causal with L != S, GQA (issue 36 item 3)
    fcase("scaled_dot_product_attention", "bool_mask", [(2, 3, 4), (2, 5, 4), (2, 5, 3), Const(_SDPA_KEEP)],
          lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, m), _np_sdpa, grad_fn=None),
    fcase("scaled_dot_product_attention", "float_mask", [(2, 3, 4), (2, 5, 4), (2, 5, 4), Const(_SDPA_BIAS)],
          lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, scale=0.7),
          lambda q, k, v, m: _np_sdpa(q, k, v, m, scale=0.7), grad_fn=None),
    fcase("scaled_dot_product_attention", "causal", [(2, 4, 3), (2, 3, 3), (2, 3, 3)],
          lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
          lambda q, k, v: _np_sdpa(q, k, v, is_causal=True), grad_fn=None),
    fcase("scaled_dot_product_attention", "gqa", [(1, 4, 3, 2), (1, 2, 5, 2), (1, 2, 5, 2)],
          lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
          lambda q, k, v: _np_sdpa(q, k, v, enable_gqa=True), grad_fn=None,
          skips={"torch_double_backward": "PyTorch's CPU flash-attention kernel (its path for 4-D inputs) has no "
                                          "double backward"}),
    fcase("multi_head_attention_forward", "", [(3, 2, 4), (12, 4), (12,), (4, 4), (4,)],
          lambda F, x, w, b, ow, ob: F.multi_head_attention_forward(
              x, x, x, 4, 2, w, b, None, None, False, 0.0, ow, ob, training=False, need_weights=False)[0],
          None, grad_fn=None,
          skips={"torch_double_backward": "PyTorch's CPU flash-attention kernel (need_weights=False) has no "
                                          "double backward"}),
    fcase("group_norm", "", [(2, 4, 3), (4,), (4,)], lambda F, x, w, b: F.group_norm(x, 2, w, b),
          lambda x, w, b: _np_group_norm(x, 2, w, b), grad_fn=None),
    fcase("instance_norm", "", [(2, 3, 5)], lambda F, x: F.instance_norm(x),
          lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5), grad_fn=None),
]


def _unpool_idx(shape, size, seed):
    """Distinct flat indices < size of each (n, c) plane: a valid max_unpool index tensor."""
    rng = np.random.default_rng(seed)
    n, c = shape[:2]
    k = int(np.prod(shape[2:]))
    return Const(np.stack([np.sort(rng.choice(size, k, replace=False)) for _ in range(n * c)]).reshape(shape))


def _np_unpool(x, idx, size):
    out = np.zeros(x.shape[:2] + (int(np.prod(size)),))
    np.put_along_axis(out, idx.reshape(x.shape[:2] + (-1,)), x.reshape(x.shape[:2] + (-1,)), 2)
    return out.reshape(x.shape[:2] + tuple(size))


def _np_conv1d(x, w):
    """out[n, o, l] = sum over c, k of w[o, c, k] x[n, c, l + k] (stride 1, no padding, one group)."""
    L = x.shape[-1] - w.shape[-1] + 1
    return sum(np.einsum("ncl,oc->nol", x[:, :, k:k + L], w[:, :, k]) for k in range(w.shape[-1]))


def _np_avg_pool1d(x, k):
    n = x.shape[-1] // k
    return x[..., :n * k].reshape(x.shape[:-1] + (n, k)).mean(-1)


# N-d convolution / transposed convolution, 1-d and 3-d pooling, unpooling, adaptive max pooling and
# interpolate (minigrad/ops/conv.py, pooling.py, resize.py). The 1-d pools' grad_fn is None:
# PyTorch's is a Squeeze (it runs them as 2-d pools); ours is the n-d op's node.
conv_pool_ops = [
    fcase("conv1d", "", [(2, 4, 7), (6, 2, 3), (6,)],
          lambda F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2), None,
          grad_fn="Convolution"),
    fcase("conv1d", "same_even", [(1, 3, 6), (2, 3, 4)], lambda F, x, w: F.conv1d(x, w, padding="same"),
          lambda x, w: _np_conv1d(np.pad(x, ((0, 0), (0, 0), (1, 2))), w),
          grad_fn="Convolution"),
    fcase("conv3d", "", [(1, 2, 3, 4, 3), (3, 2, 2, 2, 2), (3,)],
          lambda F, x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1)), None, grad_fn="Convolution"),
    fcase("conv3d", "groups_dilation", [(1, 4, 3, 3, 5), (2, 2, 2, 1, 2)],
          lambda F, x, w: F.conv3d(x, w, groups=2, dilation=(1, 1, 2)), None, grad_fn="Convolution"),
    fcase("conv_transpose1d", "", [(2, 4, 4), (4, 3, 3), (6,)],
          lambda F, x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1, groups=2), None,
          grad_fn="Convolution"),
    fcase("conv_transpose1d", "dilation_output_padding", [(1, 2, 4), (2, 3, 2)],
          lambda F, x, w: F.conv_transpose1d(x, w, stride=1, output_padding=1, dilation=2), None,
          grad_fn="Convolution"),
    fcase("conv_transpose2d", "", [(1, 3, 3, 4), (3, 2, 3, 2), (2,)],
          lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 1), padding=(1, 0), output_padding=(1, 0)),
          None, grad_fn="Convolution"),
    fcase("conv_transpose2d", "groups_dilation", [(1, 4, 3, 3), (4, 1, 2, 2)],
          lambda F, x, w: F.conv_transpose2d(x, w, stride=2, groups=2, dilation=2), None, grad_fn="Convolution"),
    fcase("conv_transpose3d", "", [(1, 2, 2, 3, 2), (2, 2, 2, 2, 2)],
          lambda F, x, w: F.conv_transpose3d(x, w, stride=2, padding=(1, 0, 1)), None, grad_fn="Convolution"),
    fcase("avg_pool1d", "", [(2, 3, 8)], lambda F, x: F.avg_pool1d(x, 2), lambda x: _np_avg_pool1d(x, 2),
          grad_fn=None),
    fcase("avg_pool1d", "ceil_pad", [(2, 3, 9)],
          lambda F, x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), None, grad_fn=None),
    fcase("avg_pool3d", "", [(1, 2, 4, 4, 2)], lambda F, x: F.avg_pool3d(x, 2),
          lambda x: x.reshape(1, 2, 2, 2, 2, 2, 1, 2).mean((3, 5, 7)), grad_fn="AvgPool3D"),
    fcase("avg_pool3d", "ceil_pad", [(1, 1, 5, 4, 5)],
          lambda F, x: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True), None, grad_fn="AvgPool3D"),
    fcase("avg_pool3d", "exclude_pad_divisor", [(1, 1, 4, 3, 4)],
          lambda F, x: F.avg_pool3d(x, 2, padding=1, count_include_pad=False, divisor_override=3), None,
          grad_fn="AvgPool3D"),
    fcase("max_unpool1d", "", [(1, 2, 3), _unpool_idx((1, 2, 3), 6, 0)],
          lambda F, x, i: F.max_unpool1d(x, i, 2), lambda x, i: _np_unpool(x, i, (6,)), grad_fn=None),
    fcase("max_unpool2d", "", [(1, 2, 2, 2), _unpool_idx((1, 2, 2, 2), 25, 1)],
          lambda F, x, i: F.max_unpool2d(x, i, 2, output_size=(5, 5)), lambda x, i: _np_unpool(x, i, (5, 5)),
          grad_fn="MaxUnpool2D"),
    fcase("max_unpool2d", "stride_padding", [(2, 1, 3, 2), _unpool_idx((2, 1, 3, 2), 15, 2)],
          lambda F, x, i: F.max_unpool2d(x, i, 3, stride=2, padding=1), lambda x, i: _np_unpool(x, i, (5, 3)),
          grad_fn="MaxUnpool2D"),
    fcase("max_unpool3d", "", [(1, 1, 2, 2, 1), _unpool_idx((1, 1, 2, 2, 1), 32, 3)],
          lambda F, x, i: F.max_unpool3d(x, i, 2), lambda x, i: _np_unpool(x, i, (4, 4, 2)), grad_fn="MaxUnpool3D"),
    fcase("adaptive_max_pool1d", "", [_distinct((2, 3, 10))],
          lambda F, x: F.adaptive_max_pool1d(x, 4, return_indices=True), None, grad_fn=None),
    fcase("adaptive_max_pool2d", "", [_distinct((1, 2, 5, 7))], lambda F, x: F.adaptive_max_pool2d(x, (3, 4)),
          None, grad_fn="AdaptiveMaxPool2D"),
    fcase("adaptive_max_pool2d", "none_indices", [_distinct((2, 6, 5))],
          lambda F, x: F.adaptive_max_pool2d(x, (None, 2), return_indices=True), None,
          grad_fn=None),  # unbatched: PyTorch's and ours end in a Squeeze
    fcase("adaptive_max_pool3d", "", [_distinct((1, 1, 3, 5, 4))], lambda F, x: F.adaptive_max_pool3d(x, (2, 3, 2)),
          None, grad_fn="AdaptiveMaxPool3D"),
    fcase("adaptive_avg_pool1d", "", [(2, 3, 10)], lambda F, x: F.adaptive_avg_pool1d(x, 4), None, grad_fn=None),
    fcase("adaptive_avg_pool3d", "", [(1, 2, 3, 5, 4)], lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, None)),
          None, grad_fn=None),
    fcase("interpolate", "nearest_1d", [(1, 2, 5)], lambda F, x: F.interpolate(x, scale_factor=1.7),
          lambda x: x[..., [0, 0, 1, 1, 2, 2, 3, 4]], grad_fn="UpsampleNearest1D"),
    fcase("interpolate", "nearest_2d_size", [(1, 2, 3, 4)], lambda F, x: F.interpolate(x, size=(5, 7)), None,
          grad_fn="UpsampleNearest2D"),
    fcase("interpolate", "nearest_3d", [(1, 1, 2, 3, 2)], lambda F, x: F.interpolate(x, scale_factor=2),
          lambda x: x.repeat(2, 2).repeat(2, 3).repeat(2, 4), grad_fn="UpsampleNearest3D"),
    fcase("interpolate", "nearest_exact", [(1, 2, 3, 4)],
          lambda F, x: F.interpolate(x, scale_factor=(1.5, 0.75), mode="nearest-exact"), None,
          grad_fn="UpsampleNearestExact2D"),
    fcase("interpolate", "linear", [(1, 2, 5)], lambda F, x: F.interpolate(x, size=8, mode="linear"),
          lambda x: np.stack([np.interp(np.maximum((np.arange(8) + 0.5) * 5 / 8 - 0.5, 0), np.arange(5), r)
                              for r in x.reshape(-1, 5)]).reshape(1, 2, 8), grad_fn="UpsampleLinear1D"),
    fcase("interpolate", "bilinear", [(2, 2, 3, 4)], lambda F, x: F.interpolate(x, scale_factor=1.7, mode="bilinear"),
          None, grad_fn="UpsampleBilinear2D"),
    fcase("interpolate", "bilinear_align_corners", [(1, 2, 3, 4)],
          lambda F, x: F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=True), None,
          grad_fn="UpsampleBilinear2D"),
    fcase("interpolate", "bilinear_recompute_down", [(1, 2, 5, 6)],
          lambda F, x: F.interpolate(x, scale_factor=0.6, mode="bilinear", recompute_scale_factor=True), None,
          grad_fn="UpsampleBilinear2D"),
    fcase("interpolate", "bicubic", [(1, 2, 4, 5)],
          lambda F, x: F.interpolate(x, scale_factor=(1.7, 0.6), mode="bicubic"), None, grad_fn="UpsampleBicubic2D"),
    fcase("interpolate", "bicubic_align_corners", [(1, 1, 3, 4)],
          lambda F, x: F.interpolate(x, size=(5, 7), mode="bicubic", align_corners=True), None,
          grad_fn="UpsampleBicubic2D"),
    fcase("interpolate", "trilinear", [(1, 1, 2, 3, 2)],
          lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear", align_corners=False), None,
          grad_fn="UpsampleTrilinear3D"),
    fcase("interpolate", "area", [(1, 2, 6, 8)], lambda F, x: F.interpolate(x, size=(3, 5), mode="area"), None,
          grad_fn=None),  # PyTorch: AdaptiveAvgPool2D; ours is adaptive_avg_pool2d's matmuls
    # negative widths crop, in every mode
    fcase("pad", "reflect_crop", [(1, 2, 4, 5)], lambda F, x: F.pad(x, (-1, 2, 2, -1), mode="reflect"), None,
          grad_fn=None),
    fcase("pad", "replicate_crop", [(1, 2, 4, 5)], lambda F, x: F.pad(x, (-1, 2, 2, -3), mode="replicate"), None,
          grad_fn=None),
    fcase("pad", "circular_crop", [(1, 2, 4, 5)], lambda F, x: F.pad(x, (-1, 2, 2, -1), mode="circular"),
          lambda x: np.pad(x[:, :, :3, 1:], ((0, 0), (0, 0), (2, 0), (0, 2)), mode="wrap"), grad_fn=None),
]

# max pooling, one op family for 1-, 2- and 3-d (minigrad/ops/pooling.py: MaxPool, MaxPoolBackward,
# MaxPoolDoubleBackward; 2x2 / stride-2 windows tiling a 2-D input take the 2x2 backend). The 1-d
# pools' grad_fn is None: PyTorch's is a Squeeze (it runs them as 2-d pools); ours is the op's node.
@_per_sample
def _max_pool_backward(g, x, k, s, p):
    from minigrad.ops.conv import _make_geom
    from minigrad.ops.pooling import MaxPoolBackward, _max_windows
    n = x.ndim - 2
    geo = _make_geom("max_pool", x.shape, (k,) * n, (s,) * n, (1,) * n, ((p, p),) * n)
    _, pairs, idx = _max_windows(x.numpy(), geo, True)
    return MaxPoolBackward.apply(g, x, pairs, idx, geo)


max_pool_ops = [
    fcase("max_pool2d", "", [_distinct((2, 2, 4, 6))], lambda F, x: F.max_pool2d(x, 2), None,
          grad_fn="MaxPool2DWithIndices"),
    fcase("max_pool2d", "overlap_pad", [_distinct((1, 2, 5, 5))],
          lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1), None, grad_fn="MaxPool2DWithIndices"),
    fcase("max_pool2d", "indices", [_distinct((1, 2, 4, 4))],
          lambda F, x: F.max_pool2d(x, 2, stride=1, return_indices=True), None, grad_fn="MaxPool2DWithIndices"),
    fcase("max_pool2d", "2x2_indices", [_distinct((2, 2, 4, 6))],
          lambda F, x: F.max_pool2d(x, 2, return_indices=True), None, grad_fn="MaxPool2DWithIndices"),
    fcase("max_pool1d", "", [_distinct((2, 3, 8))], lambda F, x: F.max_pool1d(x, 2),
          lambda x: x.reshape(2, 3, 4, 2).max(-1), grad_fn=None),
    fcase("max_pool1d", "ceil_pad_indices", [_distinct((2, 3, 9))],
          lambda F, x: F.max_pool1d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True), None,
          grad_fn=None),
    fcase("max_pool1d", "dilation", [_distinct((1, 2, 8))], lambda F, x: F.max_pool1d(x, 2, 1, dilation=3), None,
          grad_fn=None),
    fcase("max_pool3d", "", [_distinct((1, 2, 4, 4, 2))], lambda F, x: F.max_pool3d(x, 2),
          lambda x: x.reshape(1, 2, 2, 2, 2, 2, 1, 2).max((3, 5, 7)), grad_fn="MaxPool3DWithIndices"),
    fcase("max_pool3d", "ceil_pad_indices", [_distinct((1, 1, 5, 4, 5))],
          lambda F, x: F.max_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True), None,
          grad_fn="MaxPool3DWithIndices"),
    _bcase("MaxPoolBackward", [(2, 2, 2, 3), Const(np.arange(96.0).reshape(2, 2, 4, 6) % 7)],
           lambda g, x: _max_pool_backward(g, x, 2, 2, 0), grad_fn="MaxPool2DWithIndicesBackward"),
    _bcase("MaxPoolBackward", [(1, 2, 4), Const(np.arange(14.0).reshape(1, 2, 7) % 5)],
           lambda g, x: _max_pool_backward(g, x, 3, 2, 1), variant="1d_overlap_pad",
           grad_fn="MaxPool1DWithIndicesBackward"),
]


ops = functional_ops + more_functional_ops + backward_ops + conv_pool_ops + max_pool_ops
