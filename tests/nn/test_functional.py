"""nn.functional (activations, pad, linear, dropout, one_hot, conv, pooling, normalisation, embedding):
forward against NumPy references, gradcheck / gradgradcheck in float64, and the error messages."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.ops import conv, pooling

RNG = np.random.default_rng(1234)


def t64(a, requires_grad=True):
    return mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def away_from_zero(*shape, lo=0.2):
    """Random values with |x| >= lo, so finite differences never straddle a kink at 0."""
    x = RNG.uniform(lo, 2.0, shape)
    return x * RNG.choice([-1.0, 1.0], shape)


# -- activations ------------------------------------------------------------------------------------

_erf = np.vectorize(math.erf)


def _sig(x):
    return 1 / (1 + np.exp(-x))


ACTS = {
    "relu": (lambda x: F.relu(x), lambda x: np.maximum(x, 0)),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    "gelu": (lambda x: F.gelu(x), lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "silu": (lambda x: F.silu(x), lambda x: x * _sig(x)),
    "elu": (lambda x: F.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    "softplus": (lambda x: F.softplus(x, beta=2.0, threshold=2.0),
                 lambda x: np.where(2 * x > 2, x, np.log1p(np.exp(2 * x)) / 2)),
    "sigmoid": (lambda x: F.sigmoid(x), _sig),
    "tanh": (lambda x: F.tanh(x), np.tanh),
    "logsigmoid": (lambda x: F.logsigmoid(x), lambda x: np.log(_sig(x))),
    "hardtanh": (lambda x: F.hardtanh(x, -1.0, 1.5), lambda x: np.clip(x, -1.0, 1.5)),
}
SMOOTH = ["gelu", "gelu_tanh", "silu", "sigmoid", "tanh", "logsigmoid", "elu", "softplus", "leaky_relu"]


@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_forward(name):
    fn, ref = ACTS[name]
    x = away_from_zero(3, 4) * 2
    np.testing.assert_allclose(fn(t64(x, False)).numpy(), ref(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_gradcheck(name):
    # |x| avoids the kinks (0, and softplus's threshold 1.0, hardtanh's bounds)
    x = np.array([[-1.7, -0.6, 0.3, 0.7], [1.3, -0.35, 2.2, -2.4]])
    assert gradcheck(ACTS[name][0], (t64(x),))


@pytest.mark.parametrize("name", SMOOTH)
def test_activation_gradgradcheck(name):
    x = np.array([[-1.7, -0.6, 0.3, 0.7], [1.3, -0.35, 2.2, -2.4]])
    assert gradgradcheck(ACTS[name][0], (t64(x),))


def test_activations_keep_float32():
    x = mg.randn(5)
    for name, (fn, _) in ACTS.items():
        assert fn(x).dtype == mg.float32, name


def test_elu_softplus_no_overflow_in_unused_branch():
    x = t64([-1000.0, 1000.0])
    for fn in (lambda a: F.elu(a), lambda a: F.softplus(a)):
        y = fn(x)
        y.sum().backward()
        assert np.isfinite(y.detach().numpy()).all() and np.isfinite(x.grad.numpy()).all()
        x.grad = None
    np.testing.assert_allclose(F.softplus(t64([1000.0], False)).numpy(), [1000.0])


def test_leaky_relu_gradient_at_zero_is_slope():
    x = t64([0.0])
    F.leaky_relu(x, 0.3).backward(mg.tensor([1.0], dtype=mg.float64))
    assert x.grad.item() == pytest.approx(0.3)  # PyTorch: x > 0 ? 1 : slope


def test_relu_inplace_without_grad():
    x = mg.tensor([-1.0, 2.0])
    y = F.relu(x, inplace=True)
    assert y is x and x.tolist() == [0.0, 2.0]


def test_softmax_and_log_softmax():
    x = RNG.standard_normal((2, 3, 4))
    e = np.exp(x - x.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(F.softmax(t64(x, False), dim=1).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(t64(x, False), 1).numpy(), np.log(ref), rtol=1e-12)
    assert gradcheck(lambda a: F.log_softmax(a, dim=-1), (t64(x),))
    with pytest.warns(UserWarning, match="Implicit dimension"):
        F.softmax(t64(x[0], False))


def test_gelu_bad_approximate():
    with pytest.raises(ValueError, match="gelu"):
        F.gelu(mg.ones(2), approximate="fast")


# -- pad ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes_match_numpy(mode, np_mode):
    x = RNG.standard_normal((2, 3, 4, 5))
    out = F.pad(t64(x, False), (1, 2, 3, 0), mode=mode).numpy()
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (0, 0), (3, 0), (1, 2)), mode=np_mode))
    assert gradcheck(lambda a: F.pad(a, (1, 2, 2, 1), mode=mode), (t64(RNG.standard_normal((1, 2, 3, 3))),))


def test_pad_constant_value_negative_and_grads():
    x = RNG.standard_normal((3, 4))
    out = F.pad(t64(x, False), (2, -1, 0, 1), value=7.0).numpy()
    ref = np.pad(x[:, :3], ((0, 1), (2, 0)), constant_values=7.0)
    np.testing.assert_array_equal(out, ref)
    assert out.shape == (4, 5)
    xt = t64(x)
    assert gradcheck(lambda a: F.pad(a, (2, -1, 0, 1), value=7.0), (xt,))
    assert gradgradcheck(lambda a: F.pad(a, (1, 1)), (xt,))


def test_pad_errors():
    with pytest.raises(RuntimeError, match="pad"):  # RuntimeError as PyTorch (ValueError before issue 33)
        F.pad(mg.ones(2, 3), (1,))
    with pytest.raises(RuntimeError, match="pad"):
        F.pad(mg.ones(2, 3), (1, 1, 1, 1, 1, 1))
    with pytest.raises(RuntimeError, match="less than"):
        F.pad(mg.ones(1, 2, 3), (3, 0), mode="reflect")
    with pytest.raises(NotImplementedError, match="mode"):  # as PyTorch (ValueError before issue 7)
        F.pad(mg.ones(2, 3), (1, 1), mode="mirror")


# -- linear, dropout, one_hot --------------------------------------------------------------------------

def test_linear():
    x, w, b = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((4, 3)), RNG.standard_normal(4)
    np.testing.assert_allclose(F.linear(t64(x, False), t64(w, False), t64(b, False)).numpy(), x @ w.T + b,
                               rtol=1e-12)
    np.testing.assert_allclose(F.linear(t64(x, False), t64(w, False)).numpy(), x @ w.T, rtol=1e-12)
    assert gradcheck(F.linear, (t64(x[0]), t64(w), t64(b)))
    assert gradgradcheck(F.linear, (t64(x[0]), t64(w), t64(b)))
    with pytest.raises(RuntimeError, match=r"linear: .*\(2, 5, 3\).*\(4, 2\)"):  # as PyTorch (issue 7)
        F.linear(t64(x, False), t64(w[:, :2], False))


def test_dropout_scaling_and_mask_gradient():
    x = mg.ones(200, 50, requires_grad=True)
    y = F.dropout(x, p=0.3, generator=mg.Generator().manual_seed(0))
    vals = np.unique(y.detach().numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.7], rtol=1e-6)
    frac = (y.detach().numpy() == 0).mean()
    assert abs(frac - 0.3) < 0.02
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # d/dx = mask / (1 - p)
    assert y.dtype == mg.float32


def test_dropout_identity_cases_and_reproducible():
    x = mg.randn(4, 5)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert (F.dropout(x, 1.0).numpy() == 0).all()
    a = F.dropout(x, 0.5, generator=mg.Generator().manual_seed(3)).numpy()
    b = F.dropout(x, 0.5, generator=mg.Generator().manual_seed(3)).numpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


def test_one_hot():
    t = mg.tensor([[0, 2], [1, 0]])
    out = F.one_hot(t)
    assert out.shape == (2, 2, 3) and out.dtype == mg.int64
    np.testing.assert_array_equal(out.numpy(), np.eye(3, dtype=np.int64)[t.numpy()])
    assert F.one_hot(t, 5).shape == (2, 2, 5)
    with pytest.raises(ValueError, match="num_classes"):
        F.one_hot(t, 2)
    with pytest.raises(TypeError, match="integer"):
        F.one_hot(mg.tensor([0.0, 1.0]))


# -- conv2d / unfold / fold ------------------------------------------------------------------------------

def conv_ref(x, w, b, stride, padding, dilation, groups):
    """A direct loop over output positions."""
    N, C, H, W = x.shape
    O, Cg, kh, kw = w.shape
    (sh, sw), (dh, dw) = stride, dilation
    pt, pb, pl, pr = padding
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    OH = (H + pt + pb - dh * (kh - 1) - 1) // sh + 1
    OW = (W + pl + pr - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((N, O, OH, OW))
    og = O // groups
    for o in range(O):
        g = o // og
        for i in range(OH):
            for j in range(OW):
                patch = xp[:, g * Cg:(g + 1) * Cg, i * sh:i * sh + dh * (kh - 1) + 1:dh, j * sw:j * sw + dw * (kw - 1) + 1:dw]
                out[:, o, i, j] = (patch * w[o]).sum((1, 2, 3)) + (b[o] if b is not None else 0)
    return out


CONVS = [
    dict(stride=1, padding=0, dilation=1, groups=1),
    dict(stride=2, padding=1, dilation=1, groups=1),
    dict(stride=(1, 2), padding=(2, 1), dilation=(2, 1), groups=1),
    dict(stride=1, padding=1, dilation=1, groups=2),
]


def _conv_case(kw):
    groups = kw["groups"]
    x = RNG.standard_normal((2, 4, 6, 7))
    w = RNG.standard_normal((6, 4 // groups, 3, 2))
    b = RNG.standard_normal(6)
    return x, w, b


@pytest.mark.parametrize("kw", CONVS)
def test_conv2d_forward(kw):
    x, w, b = _conv_case(kw)
    s, d = conv._pair(kw["stride"], "", ""), conv._pair(kw["dilation"], "", "")
    ph, pw = conv._pair(kw["padding"], "", "")
    ref = conv_ref(x, w, b, s, (ph, ph, pw, pw), d, kw["groups"])
    out = F.conv2d(t64(x, False), t64(w, False), t64(b, False), **kw)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_conv2d_float32_output_and_no_bias():
    x = mg.randn(2, 3, 5, 5)
    w = mg.randn(4, 3, 3, 3)
    out = F.conv2d(x, w, padding=1)
    assert out.dtype == mg.float32 and out.shape == (2, 4, 5, 5)
    ref = conv_ref(x.numpy(), w.numpy(), None, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)


def test_conv2d_same_valid_and_unbatched():
    x = RNG.standard_normal((3, 5, 6))
    w = RNG.standard_normal((2, 3, 4, 3))
    out = F.conv2d(t64(x, False), t64(w, False), padding="same", dilation=(1, 2))
    assert out.shape == (2, 5, 6)
    # 'same' with an even kernel: total padding d(k-1) = 3 rows, the extra one at the bottom
    ref = conv_ref(x[None], w, None, (1, 1), (1, 2, 2, 2), (1, 2), 1)[0]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    assert F.conv2d(t64(x, False), t64(w, False), padding="valid").shape == (2, 2, 4)


@pytest.mark.parametrize("kw", CONVS)
def test_conv2d_gradcheck(kw):
    x = RNG.standard_normal((2, 2, 5, 4))
    w = RNG.standard_normal((2, 2 // kw["groups"], 3, 2))
    b = RNG.standard_normal(2)
    assert gradcheck(lambda a, c, d: F.conv2d(a, c, d, **kw), (t64(x), t64(w), t64(b)))


def test_conv2d_gradgradcheck():
    x = RNG.standard_normal((1, 2, 4, 4))
    w = RNG.standard_normal((2, 1, 2, 2))
    b = RNG.standard_normal(2)
    assert gradgradcheck(lambda a, c, d: F.conv2d(a, c, d, stride=1, padding=1, groups=2), (t64(x), t64(w), t64(b)))
    assert gradgradcheck(lambda a, c: F.conv2d(a, c, stride=2, dilation=(1, 2)),
                         (t64(RNG.standard_normal((1, 1, 5, 6))), t64(RNG.standard_normal((2, 1, 2, 2)))))


def test_conv2d_only_weight_requires_grad():
    x = mg.randn(2, 1, 6, 6)
    w = mg.randn(3, 1, 3, 3, requires_grad=True)
    F.conv2d(x, w, padding=1).sum().backward()
    ref = conv_ref(np.ones((2, 3, 6, 6)), np.ones((1, 3, 3, 3)), None, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    # d sum / dw[o, 0, i, j] = sum of the input entries that kernel position meets
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)))
    for i in range(3):
        for j in range(3):
            np.testing.assert_allclose(w.grad.numpy()[:, 0, i, j], xp[:, 0, i:i + 6, j:j + 6].sum(), rtol=1e-4)
    assert ref.shape == (2, 1, 6, 6)


def test_conv2d_errors():
    x = mg.randn(2, 3, 5, 5)
    # shape errors are RuntimeError, as PyTorch (ValueError before issue 7)
    with pytest.raises(RuntimeError, match=r"conv2d: .*3 channels.*\(4, 2, 3, 3\)"):
        F.conv2d(x, mg.randn(4, 2, 3, 3))
    with pytest.raises(RuntimeError, match="conv2d: weight must be 4-D"):
        F.conv2d(x, mg.randn(4, 3, 3))
    with pytest.raises(RuntimeError, match="conv2d: expected a 3-D"):
        F.conv2d(mg.randn(5, 5), mg.randn(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="smaller than the"):
        F.conv2d(x, mg.randn(4, 3, 7, 7))
    with pytest.raises(ValueError, match="strided"):
        F.conv2d(x, mg.randn(4, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.conv2d(x, mg.randn(4, 1, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match="bias"):
        F.conv2d(x, mg.randn(4, 3, 3, 3), mg.randn(3))


def test_unfold_matches_reference_and_fold_is_adjoint():
    x = RNG.standard_normal((2, 3, 5, 6))
    cols = F.unfold(t64(x, False), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)).numpy()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    OH, OW = (5 + 2 - 3) // 1 + 1, (6 + 2 - 3) // 2 + 1
    ref = np.stack([xp[:, c, 2 * i + oh, j + 2 * ow] for c in range(3) for i in range(2) for j in range(3)
                    for oh, ow in [(0, 0)]], 1)
    assert cols.shape == (2, 18, OH * OW)
    np.testing.assert_allclose(cols[:, :, 0], ref)
    y = RNG.standard_normal(cols.shape)
    back = F.fold(t64(y, False), (5, 6), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)).numpy()
    assert back.shape == x.shape
    np.testing.assert_allclose((cols * y).sum(), (x * back).sum(), rtol=1e-10)  # <Ux, y> = <x, U^T y>
    assert gradgradcheck(lambda a: F.unfold(a, 2, stride=1), (t64(RNG.standard_normal((1, 2, 3, 3))),))


# -- pooling ------------------------------------------------------------------------------------------

def pool_ref(x, k, s, p, d=(1, 1), reduce=np.max, fill=-np.inf):
    N, C, H, W = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)
    OH = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    OW = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.empty((N, C, OH, OW))
    for i in range(OH):
        for j in range(OW):
            win = xp[:, :, i * s[0]:i * s[0] + d[0] * (k[0] - 1) + 1:d[0], j * s[1]:j * s[1] + d[1] * (k[1] - 1) + 1:d[1]]
            out[:, :, i, j] = reduce(win, axis=(2, 3))
    return out


@pytest.mark.parametrize("k,s,p,d", [((2, 2), (2, 2), (0, 0), (1, 1)), ((3, 3), (2, 2), (1, 1), (1, 1)),
                                     ((2, 3), (1, 2), (1, 1), (2, 1))])
def test_max_pool2d_forward_and_gradcheck(k, s, p, d):
    x = RNG.permutation(2 * 3 * 7 * 8).reshape(2, 3, 7, 8) / 10.0  # distinct values: no ties
    out = F.max_pool2d(t64(x, False), k, s, p, d)
    np.testing.assert_array_equal(out.numpy(), pool_ref(x, k, s, p, d))
    assert gradcheck(lambda a: F.max_pool2d(a, k, s, p, d), (t64(x[:1, :2]),), eps=1e-4)


def test_max_pool2d_padding_is_minus_inf_and_ties_go_to_first():
    x = -np.ones((1, 1, 2, 2))
    out = F.max_pool2d(t64(x, False), 2, stride=1, padding=1)
    assert (out.numpy() == -1).all()  # zero padding would have given 0
    x = t64(np.array([[[[1.0, 1.0], [1.0, 0.0]]]]))
    F.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[[1.0, 0.0], [0.0, 0.0]]]])


@pytest.mark.parametrize("channel_major", [False, True])
def test_max_pool2d_2x2_fast_path_equals_general_path_with_ties(channel_major, monkeypatch):
    # small integers: most windows hold tied maxima, which must go to the first (row-major) one
    x = RNG.integers(0, 3, (3, 4, 6, 8)).astype(np.float64)
    if channel_major:  # the layout conv2d's output has
        x = np.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    g = RNG.standard_normal((3, 4, 3, 4))

    def run():
        a = mg.tensor(x, requires_grad=True)
        out, idx = F.max_pool2d(a, 2, return_indices=True)
        out.backward(mg.tensor(g))
        return out.detach().numpy(), idx.numpy(), a.grad.numpy()

    fast = run()
    monkeypatch.setattr(pooling, "_is_2x2_tiling", lambda geo: False)
    general = run()
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a, b)
    assert (fast[2] != 0).sum() == g.size  # exactly one element of each window takes the gradient


def test_max_pool2d_2x2_fast_path_gradgradcheck_and_no_grad_indices():
    x = RNG.permutation(2 * 2 * 4 * 6).reshape(2, 2, 4, 6) / 10.0
    assert gradcheck(lambda a: F.max_pool2d(a, 2), (t64(x),), eps=1e-4)
    assert gradgradcheck(lambda a: F.max_pool2d(a, 2), (t64(x),))
    with mg.no_grad():
        out, idx = F.max_pool2d(t64(x), 2, return_indices=True)
    flat = x.reshape(4, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(4, -1), 1).reshape(out.shape),
                                  out.numpy())


def test_max_pool2d_overlapping_windows_accumulate():
    x = t64(np.array([[[[0.0, 5.0, 0.0, 1.0]]]]))
    F.max_pool2d(x, (1, 2), stride=1).sum().backward()  # windows [0,5], [5,0], [0,1]
    np.testing.assert_array_equal(x.grad.numpy(), [[[[0.0, 2.0, 0.0, 1.0]]]])


def test_max_pool2d_gradgradcheck_indices_unbatched_ceil():
    x = RNG.permutation(32).reshape(2, 4, 4) / 7.0
    assert gradgradcheck(lambda a: F.max_pool2d(a, 2, 1), (t64(x),))
    out, idx = F.max_pool2d(t64(x, False), 2, return_indices=True)
    assert out.shape == (2, 2, 2) and idx.shape == (2, 2, 2)
    flat = x.reshape(2, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, -1), 1).reshape(2, 2, 2),
                                  out.numpy())
    assert F.max_pool2d(mg.randn(1, 1, 5, 5), 2, ceil_mode=True).shape == (1, 1, 3, 3)
    assert F.max_pool2d(mg.randn(1, 1, 5, 5), 2).shape == (1, 1, 2, 2)
    with pytest.raises(RuntimeError, match="at most half"):
        F.max_pool2d(mg.randn(1, 1, 5, 5), 2, padding=2)


@pytest.mark.parametrize("k,s,p", [((2, 2), (2, 2), (0, 0)), ((3, 2), (2, 1), (1, 1))])
def test_avg_pool2d(k, s, p):
    x = RNG.standard_normal((2, 3, 6, 5))
    out = F.avg_pool2d(t64(x, False), k, s, p)
    np.testing.assert_allclose(out.numpy(), pool_ref(x, k, s, p, reduce=np.mean, fill=0.0), rtol=1e-12)
    xs = t64(x[:1, :2])
    assert gradcheck(lambda a: F.avg_pool2d(a, k, s, p), (xs,))
    assert gradgradcheck(lambda a: F.avg_pool2d(a, k, s, p), (xs,))


def test_avg_pool2d_count_include_pad_false_and_divisor():
    x = np.ones((1, 1, 3, 3))
    out = F.avg_pool2d(t64(x, False), 3, 1, 1, count_include_pad=False).numpy()
    np.testing.assert_allclose(out, 1.0)  # padding not counted: mean of ones
    corner = F.avg_pool2d(t64(x, False), 3, 1, 1).numpy()[0, 0, 0, 0]
    assert corner == pytest.approx(4 / 9)
    assert F.avg_pool2d(t64(x, False), 3, divisor_override=2).item() == pytest.approx(4.5)


def adaptive_ref(x, oh, ow):
    N, C, H, W = x.shape
    out = np.empty((N, C, oh, ow))
    for i in range(oh):
        h0, h1 = (i * H) // oh, -(-((i + 1) * H) // oh)
        for j in range(ow):
            w0, w1 = (j * W) // ow, -(-((j + 1) * W) // ow)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean((2, 3))
    return out


@pytest.mark.parametrize("size", [(3, 2), 1, (None, 4)])
def test_adaptive_avg_pool2d(size):
    x = RNG.standard_normal((2, 3, 7, 5))
    out = F.adaptive_avg_pool2d(t64(x, False), size).numpy()
    oh, ow = (size, size) if isinstance(size, int) else size
    np.testing.assert_allclose(out, adaptive_ref(x, oh or 7, ow or 5), rtol=1e-12)
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, size), (t64(x[:1, :1]),))


def test_adaptive_avg_pools_keep_an_inf_in_its_own_bins():
    """The averaging matrix's zeros times an inf or nan gave nan in every bin of the row; PyTorch's
    bins read only their own elements (values are PyTorch 2.13's; 'area' is the same pooling)."""
    inf, nan = np.inf, np.nan
    x = mg.tensor([[[0.0, 2.0, inf, 4.0, 5.0, 6.0, -inf]]], requires_grad=True)
    out = F.adaptive_avg_pool1d(x, 3)
    np.testing.assert_array_equal(out.detach().numpy(), [[[inf, inf, -inf]]])
    out.sum().backward()  # the gradient is 1 / bin size, whatever the values
    np.testing.assert_allclose(x.grad.numpy()[0, 0], [1 / 3, 1 / 3, 2 / 3, 1 / 3, 2 / 3, 1 / 3, 1 / 3])
    x = np.arange(30.0).reshape(1, 1, 5, 6)
    x[0, 0, 1, 1], x[0, 0, 4, 5] = inf, nan
    want = [[inf, inf, 9.5, 10.5], [18.5, 19.5, 21.5, nan]]
    np.testing.assert_array_equal(F.adaptive_avg_pool2d(mg.tensor(x), (2, 4)).numpy()[0, 0], want)
    np.testing.assert_array_equal(F.interpolate(mg.tensor(x), size=(2, 4), mode="area").numpy()[0, 0], want)
    x = np.arange(60.0).reshape(1, 1, 3, 4, 5)
    x[0, 0, 1, 1, 1] = -inf
    np.testing.assert_array_equal(F.adaptive_avg_pool3d(mg.tensor(x), (2, 3, 2)).numpy().ravel()[:6],
                                  [-inf, 15.5, -inf, 20.5, 23.5, 25.5])


# -- normalisation, embedding --------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 2, 2)])
def test_batch_norm_training_stats_and_grads(shape):
    x = RNG.standard_normal(shape) * 3 + 1
    rm, rv = mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    out = F.batch_norm(t64(x, False), rm, rv, t64(w, False), t64(b, False), training=True, momentum=0.1)
    axes = (0,) + tuple(range(2, len(shape)))
    bs = (1, 3) + (1,) * (len(shape) - 2)
    mean, var = x.mean(axes), x.var(axes)
    ref = (x - mean.reshape(bs)) / np.sqrt(var.reshape(bs) + 1e-5) * w.reshape(bs) + b.reshape(bs)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)
    n = x.size // 3
    np.testing.assert_allclose(rm.numpy(), 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * var * n / (n - 1), rtol=1e-12)  # unbiased
    fn = lambda a, c, d: F.batch_norm(a, None, None, c, d, training=True)  # noqa: E731
    args = (t64(x), t64(w), t64(b))
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


def test_batch_norm_eval_uses_running_stats():
    x = RNG.standard_normal((4, 3))
    rm, rv = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64), mg.tensor([4.0, 1.0, 0.25], dtype=mg.float64)
    out = F.batch_norm(t64(x, False), rm, rv, eps=0.0)
    np.testing.assert_allclose(out.numpy(), (x - rm.numpy()) / np.sqrt(rv.numpy()), rtol=1e-12)
    assert rm.tolist() == [1.0, 2.0, 3.0]  # not updated in eval
    w, b = t64(RNG.standard_normal(3)), t64(RNG.standard_normal(3))
    assert gradcheck(lambda a, c, d: F.batch_norm(a, rm, rv, c, d), (t64(x), w, b))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(mg.randn(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match=r"running_mean of shape \(2,\)"):
        F.batch_norm(mg.randn(4, 3), mg.zeros(2), mg.ones(3))
    with pytest.raises(ValueError, match="evaluation mode"):
        F.batch_norm(mg.randn(4, 3), None, None)


def test_layer_norm():
    x = RNG.standard_normal((2, 3, 4))
    w, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    out = F.layer_norm(t64(x, False), (3, 4), t64(w, False), t64(b, False), eps=1e-5).numpy()
    mean, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-5) * w + b, rtol=1e-10, atol=1e-12)
    args = (t64(x), t64(w), t64(b))
    assert gradcheck(lambda a, c, d: F.layer_norm(a, (3, 4), c, d), args)
    assert gradgradcheck(lambda a, c, d: F.layer_norm(a, (3, 4), c, d), args)
    assert gradcheck(lambda a: F.layer_norm(a, 4), (t64(x),))
    with pytest.raises(ValueError, match="normalized_shape"):
        F.layer_norm(t64(x, False), (3,))


def test_layer_norm_float32_grads_match_float64():
    x = RNG.standard_normal((4, 6))
    x32, x64 = mg.tensor(x.astype(np.float32), requires_grad=True), t64(x)
    g = RNG.standard_normal((4, 6))
    F.layer_norm(x32, 6).backward(mg.tensor(g.astype(np.float32)))
    F.layer_norm(x64, 6).backward(mg.tensor(g))
    assert x32.grad.dtype == mg.float32
    np.testing.assert_allclose(x32.grad.numpy(), x64.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_embedding():
    w = t64(RNG.standard_normal((5, 3)))
    idx = mg.tensor([[0, 2, 2], [4, 0, 1]])
    out = F.embedding(idx, w, padding_idx=0)
    np.testing.assert_array_equal(out.detach().numpy(), w.detach().numpy()[idx.numpy()])
    g = RNG.standard_normal((2, 3, 3))
    out.backward(mg.tensor(g))
    ref = np.zeros((5, 3))
    np.add.at(ref, idx.numpy().ravel(), g.reshape(-1, 3))
    ref[0] = 0  # padding_idx gets no gradient
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-12)
    assert gradcheck(lambda a: F.embedding(idx, a), (t64(RNG.standard_normal((5, 3))),))
    assert gradgradcheck(lambda a: F.embedding(idx, a, padding_idx=3) * a[0], (t64(RNG.standard_normal((5, 3))),))


def test_embedding_max_norm_and_errors():
    w = mg.tensor([[3.0, 4.0], [0.3, 0.4]])
    F.embedding(mg.tensor([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(np.linalg.norm(w.numpy(), axis=1), [1.0, 0.5], rtol=1e-5)
    with pytest.raises(IndexError, match="embedding: index 7 is out of range"):
        F.embedding(mg.tensor([7]), w)
    with pytest.raises(TypeError, match="integers"):
        F.embedding(mg.tensor([0.0]), w)


def test_float32_stays_float32_through_forward_and_backward():
    x = mg.randn(2, 3, 8, 8, requires_grad=True)
    w = mg.randn(4, 3, 3, 3, requires_grad=True)
    b = mg.randn(4, requires_grad=True)
    rm, rv = mg.zeros(4), mg.ones(4)
    h = F.conv2d(x, w, b, padding=1)
    h = F.batch_norm(h, rm, rv, training=True)
    h = F.avg_pool2d(F.max_pool2d(F.relu(h), 2), 2, 1, 1)
    h = F.layer_norm(F.adaptive_avg_pool2d(h, 2).reshape(2, -1), 16)
    loss = F.cross_entropy(h, mg.tensor([3, 7]), label_smoothing=0.1)
    loss.backward()
    for t in (h, loss, x.grad, w.grad, b.grad, rm, rv):
        assert t.dtype == mg.float32


def test_normalize():
    x = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(F.normalize(t64(x, False)).numpy(), x / np.linalg.norm(x, axis=1, keepdims=True))
    np.testing.assert_allclose(F.normalize(t64(x, False), p=1, dim=0).numpy(), x / np.abs(x).sum(0, keepdims=True))
    assert F.normalize(mg.zeros(2, 3)).tolist() == [[0.0] * 3] * 2  # eps keeps 0 / 0 away
    assert gradcheck(lambda a: F.normalize(a, dim=-1), (t64(x),))


@pytest.mark.parametrize("kw", [dict(padding="same", dilation=(2, 1)), dict(padding=(0, 2), groups=2),
                                dict(padding=1)])
def test_conv2d_stride1_input_grad_flat_grid(kw):
    """Stride-1 input gradients use the flat padded-grid col2im: they equal the general col2im path
    and satisfy the adjoint identity <conv(x), y> = <x, dx(y)>."""
    x = RNG.standard_normal((3, 4, 7, 6))
    w = RNG.standard_normal((6, 4 // kw.get("groups", 1), 3, 2))
    y = RNG.standard_normal(F.conv2d(t64(x, False), t64(w, False), **kw).shape)
    xt = t64(x)
    out = F.conv2d(xt, t64(w, False), **kw)
    (out * t64(y, False)).sum().backward()
    np.testing.assert_allclose((out.detach().numpy() * y).sum(), (x * xt.grad.numpy()).sum(), rtol=1e-10)
    # the general (any stride) col2im route gives the same numbers
    geo = out.grad_fn.geo
    G = kw.get("groups", 1)
    K = w[0].size
    L = geo.N * geo.out[0] * geo.out[1]
    w3 = w.reshape(G, 6 // G, K).transpose(0, 2, 1)
    g2 = y.transpose(1, 0, 2, 3).reshape(G, 6 // G, L)
    ref = conv._col2im(np.matmul(w3, g2).reshape(G * K, L), geo)
    np.testing.assert_allclose(xt.grad.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_conv2d_scratch_reuse_across_calls():
    """The stride-1 input gradient reuses scratch buffers per shape: convs whose padded grids share a
    size but whose kernels differ, and two forwards before their backwards, still get exact grads."""
    x = RNG.standard_normal((2, 3, 6, 6))
    w3, w1 = RNG.standard_normal((4, 3, 3, 3)), RNG.standard_normal((4, 3, 1, 1))
    grads = []
    for w in (w3, w1, w3):  # the 1x1 kernel with padding 1 writes the whole 8x8 grid the 3x3 one shares
        xt = t64(x)
        F.conv2d(xt, t64(w, False), padding=1).sum().backward()
        grads.append(xt.grad.numpy())
    np.testing.assert_array_equal(grads[2], grads[0])
    np.testing.assert_allclose(grads[1], np.broadcast_to(w1.sum((0, 2, 3))[None, :, None, None], x.shape))
    xa, xb = t64(x), t64(x)
    wa, wb = RNG.standard_normal((4, 3, 3, 3)), RNG.standard_normal((4, 3, 3, 3))
    ya = F.conv2d(xa, t64(wa, False), padding=1)
    yb = F.conv2d(xb, t64(wb, False), padding=1)
    yb.sum().backward()
    ya.sum().backward()
    for xt, w in ((xa, wa), (xb, wb)):
        xr = t64(x)
        F.conv2d(xr, t64(w, False), padding=1).sum().backward()
        np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- parity at edges (seed-fuzzing finds)
def test_hardswish_gradient_at_the_kinks_as_pytorch():
    """0 at and below -3, x/3 + 1/2 strictly inside, 1 at and above 3 (the clamp gave -1/2 and 3/2
    at the kinks); second derivative 1/3 strictly inside; values exact, -inf gives nan as PyTorch."""
    v = np.array([-np.inf, -4.0, -3.0, -2.9, -0.0, 0.0, 2.9, 3.0, 4.0, np.inf, np.nan])
    x = mg.tensor(v, requires_grad=True)
    with np.errstate(invalid="ignore"):  # -inf * 0, as PyTorch's x * relu6(x + 3) / 6
        y = F.hardswish(x)
        y.sum().backward()
    inside = (v > -3) & (v < 3)
    expected = np.where(v <= -3, v * 0.0, np.where(inside, v * (v + 3) / 6, v))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(y.detach().numpy(), expected)
    np.testing.assert_array_equal(np.signbit(y.detach().numpy()), np.signbit(expected))
    np.testing.assert_allclose(x.grad.numpy(), [0, 0, 0, -2.9 / 3 + 0.5, 0.5, 0.5, 2.9 / 3 + 0.5, 1, 1, 1, 1],
                               rtol=1e-15)
    x2 = mg.tensor(v[1:-2], requires_grad=True)
    g, = mg.autograd.grad(F.hardswish(x2).sum(), x2, create_graph=True)
    h, = mg.autograd.grad(g.sum(), x2)
    np.testing.assert_allclose(h.numpy(), [0, 0, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 0, 0], rtol=1e-15)


def test_celu_selu_gradient_at_large_and_infinite_x_as_pytorch():
    """The expm1 branch not taken was still evaluated at x: its zero gradient times exp(inf) gave
    nan at x = inf (and at x = 800, where exp overflows); PyTorch gives 1 (celu) and scale (selu).
    Values and the sign of -0 as PyTorch's; gradient at 0 is the negative branch's (1, scale * alpha)."""
    v = np.array([-np.inf, -3.0, -0.0, 0.0, 2.0, 800.0, np.inf])
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    for fn, pos, at0 in ((F.celu, 1.0, 1.0), (F.selu, scale, scale * alpha)):
        x = mg.tensor(v, requires_grad=True)
        y = fn(x)
        y.sum().backward()
        neg = np.expm1(v[:4]) * (alpha * scale if fn is F.selu else 1.0)
        np.testing.assert_allclose(y.detach().numpy(), np.concatenate([neg, pos * v[4:]]), rtol=1e-15)
        np.testing.assert_array_equal(np.signbit(y.detach().numpy()), np.signbit(v))
        np.testing.assert_allclose(x.grad.numpy(), [0, at0 * np.exp(-3), at0, at0, pos, pos, pos], rtol=1e-15)


def test_hardsigmoid_of_nan_is_nan_with_a_zero_gradient_as_pytorch():
    """nan fell to the 'outside' branch (x >= 3).to(dtype): 0, hiding the nan; PyTorch's
    min(max(x + 3, 0), 6) / 6 is nan there, its gradient 0 (1/6 only strictly inside (-3, 3))."""
    for dtype in (mg.float32, mg.float64):
        x = mg.tensor([np.nan, -np.inf, -3.0, 0.0, 3.0, np.inf], dtype=dtype, requires_grad=True)
        y = F.hardsigmoid(x)
        y.sum().backward()
        np.testing.assert_array_equal(y.detach().numpy(), [np.nan, 0.0, 0.0, 0.5, 1.0, 1.0])
        assert y.dtype == dtype and not np.signbit(y.detach().numpy()[1:3]).any()
        np.testing.assert_allclose(x.grad.numpy(), [0, 0, 0, 1 / 6, 0, 0], rtol=1e-7)


def test_scaled_dot_product_attention_fully_masked_query_gives_zero_as_pytorch():
    """A query whose keys are all masked (a boolean mask row of False, or an additive row of -inf)
    gave softmax's nan, and nan gradients; PyTorch's _safe_softmax gives 0 and no gradient there.
    Values are PyTorch 2.13's."""
    a = 1 / (1 + math.exp(-1))  # softmax([1, 0])[0]
    q = mg.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]], dtype=mg.float64, requires_grad=True)
    k = mg.tensor([[[1.0, 2.0], [0.0, -1.0]]], dtype=mg.float64, requires_grad=True)
    v = mg.tensor([[[1.0, 2.0], [3.0, 4.0]]], dtype=mg.float64, requires_grad=True)
    keep = mg.tensor([[True, True], [False, False], [False, True]])
    for mask in (keep, mg.where(keep, 0.0, float("-inf")).to(mg.float64)):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)
        np.testing.assert_allclose(out.detach().numpy()[0], [[a + 3 * (1 - a), 2 * a + 4 * (1 - a)], [0, 0], [3, 4]],
                                   rtol=1e-15)
        out.sum().backward()
        dq = 4 * a * (1 - a)  # the row-0 output sum has d/ds0 = a (1 - a) (3 - 7); ds0 / dq = k0 - k1 = (1, 3)
        np.testing.assert_allclose(q.grad.numpy()[0], [[-dq, -3 * dq], [0, 0], [0, 0]], rtol=1e-14)
        np.testing.assert_allclose(v.grad.numpy()[0], [[a, a], [2 - a, 2 - a]], rtol=1e-15)
        q.grad = k.grad = v.grad = None


def test_scaled_dot_product_attention_enable_gqa_shares_each_kv_head():
    """enable_gqa was accepted and ignored (the matmul failed on 4 query heads against 2 key heads);
    as PyTorch, key/value head j serves query heads 2j and 2j + 1, gradients summed back."""
    rng = np.random.default_rng(3)
    q, k, v = (mg.tensor(rng.standard_normal(s), requires_grad=True) for s in ((2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 7)))
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    k2, v2 = (t.detach().repeat_interleave(2, 1).requires_grad_() for t in (k, v))
    want = F.scaled_dot_product_attention(q.detach(), k2, v2)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-14)
    out.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(k.grad.numpy(), k2.grad.numpy().reshape(2, 2, 2, 6, 5).sum(2), rtol=1e-12)
    with pytest.raises(RuntimeError, match="must divide"):
        F.scaled_dot_product_attention(q, k[:, :1].expand(2, 3, 6, 5), v, enable_gqa=True)


def test_cosine_similarity_clamps_each_norm_as_pytorch():
    """Each norm clamped to eps on its own, the clamp not differentiated: a vector shorter than eps
    is not lengthened by the other's norm (the old max(|a|^2 |b|^2, eps^2) gave 1.0 here, not 0.1)."""
    a = mg.tensor(np.array([[1e-9, 0.0, 0.0]]), requires_grad=True)  # float64
    b = mg.tensor(np.array([[100.0, 0.0, 0.0]]), requires_grad=True)
    out = F.cosine_similarity(a, b)
    out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), [0.1], rtol=1e-12)  # 1e-7 / (1e-8 * 100)
    # b / (eps |b|) - (a.b) a / (eps^2 |b| |a|) = 1e8 - 1e7
    np.testing.assert_allclose(a.grad.numpy(), [[9e7, 0, 0]], rtol=1e-12)
    z = mg.tensor(np.zeros((1, 3)), requires_grad=True)  # a zero vector: the norm's subgradient 0
    F.cosine_similarity(z, mg.tensor(np.array([[3.0, 0.0, 4.0]]))).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [[6e7, 0, 8e7]], rtol=1e-12)  # b / (eps |b|)
    rng = np.random.default_rng(3)
    x1, x2 = rng.standard_normal((3, 4, 5)), rng.standard_normal((4, 1))
    ref = (x1 * x2).sum(1) / (np.linalg.norm(x1, axis=1) * np.linalg.norm(np.broadcast_to(x2, x1.shape), axis=1))
    np.testing.assert_allclose(F.cosine_similarity(mg.tensor(x1), mg.tensor(x2)).numpy(), ref, rtol=1e-12)
    assert gradcheck(lambda p, q: F.cosine_similarity(p, q, dim=-1),
                     (mg.tensor(x1[:2], requires_grad=True), mg.tensor(rng.standard_normal((2, 4, 5)), requires_grad=True)))


def test_mse_loss_of_nothing_is_nan_without_error():
    x = mg.tensor(np.zeros(0), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.mse_loss(x, mg.tensor(np.zeros(0)))
        loss.backward()  # was a ZeroDivisionError
    assert np.isnan(loss.item()) and x.grad.shape == (0,)


@pytest.mark.parametrize("name,shape,lead", [("dropout1d", (4, 6, 5), 2), ("dropout1d", (6, 5), 1),
                                             ("dropout2d", (4, 6, 3, 3), 2), ("dropout2d", (4, 6, 5), 2),
                                             ("dropout3d", (4, 6, 2, 2, 2), 2), ("dropout3d", (6, 2, 2, 2), 1)])
def test_feature_dropout_zeroes_whole_channels(name, shape, lead):
    # issue 33: nn.Dropout1d/2d/3d; PyTorch draws one keep/zero per (sample, channel), per channel unbatched
    mg.manual_seed(0)
    x = mg.ones(*shape, requires_grad=True)
    y = getattr(F, name)(x, 0.5)
    m = y.detach().numpy().reshape(int(np.prod(shape[:lead])), -1)
    assert set(np.unique(m)) <= {0.0, 2.0} and all(len(np.unique(row)) == 1 for row in m)
    assert 0 < (m[:, 0] == 0).sum() < len(m)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # d(x * mask)/dx = mask
    with pytest.raises(RuntimeError, match=name):
        getattr(F, name)(mg.ones(2), 0.5)
    module = {"dropout1d": mg.nn.Dropout1d, "dropout2d": mg.nn.Dropout2d, "dropout3d": mg.nn.Dropout3d}[name](0.5)
    assert module.eval()(x) is x
