"""nn.functional against torch.nn.functional: forward values and gradients of every input (float64)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

import minigrad as mg  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402

RNG = np.random.default_rng(0)


def randn(*shape):
    return RNG.standard_normal(shape)


def compare(mg_fn, torch_fn, arrays, diff=None, atol=1e-7, rtol=1e-6):
    """Run both on the same float64 arrays (ints stay ints); compare outputs and input gradients."""
    diff = range(len(arrays)) if diff is None else diff
    m_in, t_in = [], []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        req = i in diff and a.dtype.kind == "f"
        m_in.append(mg.tensor(a.copy(), requires_grad=req))
        t_in.append(torch.tensor(a.copy(), requires_grad=req))
    mo, to = mg_fn(*m_in), torch_fn(*t_in)
    np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), atol=atol, rtol=rtol)
    if not any(t.requires_grad for t in t_in):
        return
    gout = randn(*to.shape) if to.ndim else np.array(1.3)
    mo.backward(mg.tensor(gout))
    to.backward(torch.tensor(gout))
    for m, t in zip(m_in, t_in):
        if t.requires_grad:
            assert m.grad is not None
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), atol=atol, rtol=rtol)


ACTIVATIONS = [
    ("relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("gelu", {}), ("gelu", {"approximate": "tanh"}),
    ("silu", {}), ("elu", {"alpha": 0.7}), ("softplus", {}), ("softplus", {"beta": 2, "threshold": 3}),
    ("sigmoid", {}), ("tanh", {}), ("logsigmoid", {}), ("relu6", {}), ("hardtanh", {}),
]


@pytest.mark.parametrize("name,kw", ACTIVATIONS)
def test_activations(name, kw):
    x = randn(3, 5) * 4
    compare(lambda a: getattr(F, name)(a, **kw), lambda a: getattr(TF, name)(a, **kw), [x])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax(fn):
    x = randn(2, 3, 4)
    compare(lambda a: getattr(F, fn)(a, dim=1), lambda a: getattr(TF, fn)(a, dim=1), [x])


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(mode):
    x = randn(2, 3, 4, 5)
    p = (1, 2, 2, 1)
    compare(lambda a: F.pad(a, p, mode=mode), lambda a: TF.pad(a, p, mode=mode), [x])


def test_pad_negative_and_value():
    x = randn(3, 4)
    compare(lambda a: F.pad(a, (-1, 2), value=2.5), lambda a: TF.pad(a, (-1, 2), value=2.5), [x])


def test_linear_and_one_hot():
    compare(F.linear, TF.linear, [randn(4, 3), randn(5, 3), randn(5)])
    t = np.array([0, 3, 1])
    np.testing.assert_array_equal(F.one_hot(mg.tensor(t)).numpy(), TF.one_hot(torch.tensor(t)).numpy())


CE_CASES = [
    dict(),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(label_smoothing=0.2),
    dict(weight=True),
    dict(weight=True, label_smoothing=0.1, ignore_index=1),
    dict(weight=True, reduction="none", label_smoothing=0.3),
    dict(ignore_index=2, reduction="sum"),
]


@pytest.mark.parametrize("kw", CE_CASES)
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3), (4,)])
def test_cross_entropy(kw, shape):
    kw = dict(kw)
    x = randn(*shape)
    tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    t = RNG.integers(0, shape[-1 if len(shape) == 1 else 1], tshape)
    arrays = [x, t]
    if kw.pop("weight", False):
        arrays.append(RNG.random(shape[0] if len(shape) == 1 else shape[1]) + 0.5)

        def mfn(a, b, w): return F.cross_entropy(a, b, weight=w, **kw)
        def tfn(a, b, w): return TF.cross_entropy(a, b, weight=w, **kw)
        compare(mfn, tfn, arrays, diff=[0])
    else:
        compare(lambda a, b: F.cross_entropy(a, b, **kw), lambda a, b: TF.cross_entropy(a, b, **kw), arrays)


@pytest.mark.parametrize("kw", [dict(), dict(label_smoothing=0.25, reduction="sum"), dict(reduction="none")])
def test_cross_entropy_probabilities(kw):
    x = randn(4, 5, 2)
    y = RNG.random((4, 5, 2))
    y /= y.sum(1, keepdims=True)
    w = RNG.random(5) + 0.5
    compare(lambda a, b, c: F.cross_entropy(a, b, weight=c, **kw),
            lambda a, b, c: TF.cross_entropy(a, b, weight=c, **kw), [x, y, w], diff=[0, 1])


@pytest.mark.parametrize("kw", [dict(), dict(reduction="none"), dict(ignore_index=0, reduction="sum")])
def test_nll_loss(kw):
    x = randn(6, 4)
    t = np.array([0, 1, 2, 3, 0, 1])
    w = RNG.random(4) + 0.5
    compare(lambda a, b, c: F.nll_loss(a, b, weight=c, **kw), lambda a, b, c: TF.nll_loss(a, b, weight=c, **kw),
            [x, t, w], diff=[0])


@pytest.mark.parametrize("name,kw", [("mse_loss", {}), ("l1_loss", {"reduction": "sum"}),
                                     ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
                                     ("huber_loss", {"delta": 0.7, "reduction": "none"})])
def test_regression_losses(name, kw):
    compare(lambda a, b: getattr(F, name)(a, b, **kw), lambda a, b: getattr(TF, name)(a, b, **kw),
            [randn(4, 3), randn(4, 3)])


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_bce(reduction):
    x = RNG.random((4, 3)) * 0.98 + 0.01
    y = RNG.random((4, 3))
    w = RNG.random((4, 3))
    compare(lambda a, b, c: F.binary_cross_entropy(a, b, c, reduction=reduction),
            lambda a, b, c: TF.binary_cross_entropy(a, b, c, reduction=reduction), [x, y, w], diff=[0, 1])


def test_bce_with_logits():
    x = randn(4, 3) * 3
    y = RNG.random((4, 3))
    w = RNG.random((4, 3))
    pw = RNG.random(3) + 0.5
    compare(lambda a, b, c, d: F.binary_cross_entropy_with_logits(a, b, c, pos_weight=d),
            lambda a, b, c, d: TF.binary_cross_entropy_with_logits(a, b, c, pos_weight=d), [x, y, w, pw],
            diff=[0, 1])
    compare(F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits, [x, y])


CONV_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(padding="same", dilation=2),
    dict(padding=(1, 0), stride=(1, 2), groups=2),
    dict(padding="valid", dilation=(1, 2)),
]


@pytest.mark.parametrize("kw", CONV_CASES)
def test_conv2d(kw):
    x = randn(2, 4, 7, 6)
    w = randn(6, 4 // kw.get("groups", 1), 3, 2)
    b = randn(6)
    compare(lambda a, c, d: F.conv2d(a, c, d, **kw), lambda a, c, d: TF.conv2d(a, c, d, **kw), [x, w, b])


def test_conv2d_unbatched_and_same_even_kernel():
    compare(lambda a, c: F.conv2d(a, c, padding="same"), lambda a, c: TF.conv2d(a, c, padding="same"),
            [randn(3, 6, 5), randn(2, 3, 4, 2)])


def test_unfold_fold():
    x = randn(2, 3, 6, 5)
    compare(lambda a: F.unfold(a, (2, 3), dilation=1, padding=1, stride=2),
            lambda a: TF.unfold(a, (2, 3), dilation=1, padding=1, stride=2), [x])
    cols = randn(2, 3 * 6, 18)
    compare(lambda a: F.fold(a, (5, 6), (2, 3), padding=1, stride=(2, 1)),
            lambda a: TF.fold(a, (5, 6), (2, 3), padding=1, stride=(2, 1)), [cols])


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(2, 3), stride=1, dilation=2),
                                dict(kernel_size=3, stride=2, ceil_mode=True)])
def test_max_pool2d(kw):
    x = randn(2, 3, 7, 8)
    x[0, 0, :2, :2] = 0.5  # a tie: the first maximum takes the gradient
    compare(lambda a: F.max_pool2d(a, **kw), lambda a: TF.max_pool2d(a, **kw), [x])
    _, mi = F.max_pool2d(mg.tensor(x), return_indices=True, **kw)
    _, ti = TF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(mi.numpy(), ti.numpy())


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=3, stride=2, ceil_mode=True, count_include_pad=False),
                                dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(kw):
    compare(lambda a: F.avg_pool2d(a, **kw), lambda a: TF.avg_pool2d(a, **kw), [randn(2, 3, 7, 8)])


@pytest.mark.parametrize("size", [(3, 2), 4, (None, 3), 1])
def test_adaptive_avg_pool2d(size):
    compare(lambda a: F.adaptive_avg_pool2d(a, size), lambda a: TF.adaptive_avg_pool2d(a, size), [randn(2, 3, 7, 5)])


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5, 2)])
def test_batch_norm_training(shape):
    x, w, b = randn(*shape), randn(3), randn(3)
    rm, rv = randn(3), RNG.random(3) + 0.5
    mrm, mrv = mg.tensor(rm.copy()), mg.tensor(rv.copy())
    trm, trv = torch.tensor(rm.copy()), torch.tensor(rv.copy())
    compare(lambda a, c, d: F.batch_norm(a, mrm, mrv, c, d, training=True, momentum=0.3),
            lambda a, c, d: TF.batch_norm(a, trm, trv, c, d, training=True, momentum=0.3), [x, w, b])
    np.testing.assert_allclose(mrm.numpy(), trm.numpy(), rtol=1e-6)
    np.testing.assert_allclose(mrv.numpy(), trv.numpy(), rtol=1e-6)
    compare(lambda a, c, d: F.batch_norm(a, mrm, mrv, c, d), lambda a, c, d: TF.batch_norm(a, trm, trv, c, d),
            [x, w, b])


def test_layer_norm():
    compare(lambda a, c, d: F.layer_norm(a, (3, 4), c, d), lambda a, c, d: TF.layer_norm(a, (3, 4), c, d),
            [randn(2, 3, 4), randn(3, 4), randn(3, 4)])
    compare(lambda a: F.layer_norm(a, 4), lambda a: TF.layer_norm(a, (4,)), [randn(5, 4)])


def test_embedding():
    idx = np.array([[0, 2, 2], [3, 1, 0]])
    compare(lambda w, i: F.embedding(i, w, padding_idx=0), lambda w, i: TF.embedding(i, w, padding_idx=0),
            [randn(4, 3), idx], diff=[0])


def test_init_gains_and_fans():
    import minigrad.nn.init as init
    for nl, p in [("relu", None), ("tanh", None), ("leaky_relu", 0.2), ("selu", None), ("conv2d", None)]:
        assert init.calculate_gain(nl, p) == pytest.approx(torch.nn.init.calculate_gain(nl, p))
    w = mg.empty(4, 3, 5, 2)
    assert init._calculate_fan_in_and_fan_out(w) == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(4, 3, 5, 2))
