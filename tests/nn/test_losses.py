"""Losses of nn.functional: values against NumPy references, reductions, ignore_index / weight /
label_smoothing, stability at extreme logits, gradcheck / gradgradcheck, warnings and errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)


def t64(a, requires_grad=True):
    return mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def log_softmax_ref(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def ce_ref(x, t, weight=None, ignore_index=-100, reduction="mean", eps=0.0):
    """PyTorch's definition, written out: class dim 1, targets (N, d...)."""
    C = x.shape[1]
    logp = log_softmax_ref(x)
    w = np.ones(C) if weight is None else weight
    valid = t != ignore_index
    tt = np.where(valid, t, 0)
    picked = np.take_along_axis(logp, tt[:, None], 1)[:, 0]
    wt = w[tt] * valid
    nll = -wt * picked
    wb = w.reshape((1, C) + (1,) * (x.ndim - 2))
    smooth = -(logp * wb).sum(1) * valid
    if reduction == "none":
        return (1 - eps) * nll + eps / C * smooth
    if reduction == "sum":
        return (1 - eps) * nll.sum() + eps / C * smooth.sum()
    return ((1 - eps) * nll.sum() + eps / C * smooth.sum()) / wt.sum()


# -- cross_entropy -----------------------------------------------------------------------------------

CE_OPTS = [
    dict(),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(eps=0.1),
    dict(weight=True),
    dict(weight=True, eps=0.2, ignore_index=1),
    dict(ignore_index=0, reduction="none"),
    dict(weight=True, reduction="sum", eps=0.05),
]


def _ce_call(kw):
    kw = dict(kw)
    return dict(weight=kw.pop("weight", None), ignore_index=kw.pop("ignore_index", -100),
                reduction=kw.pop("reduction", "mean"), label_smoothing=kw.pop("eps", 0.0))


@pytest.mark.parametrize("opts", CE_OPTS)
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 2, 2)])
def test_cross_entropy_matches_reference(opts, shape):
    x = RNG.standard_normal(shape) * 2
    t = RNG.integers(0, 4, shape[:1] + shape[2:])
    call = _ce_call(opts)
    w = RNG.random(4) + 0.5 if call["weight"] is not None else None
    call["weight"] = mg.tensor(w) if w is not None else None
    out = F.cross_entropy(t64(x, False), mg.tensor(t), **call)
    ref = ce_ref(x, t, w, call["ignore_index"], call["reduction"], call["label_smoothing"])
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda a: F.cross_entropy(a, mg.tensor(t), **call), (t64(x),))


def test_cross_entropy_gradgradcheck():
    x = t64(RNG.standard_normal((3, 4)))
    t = mg.tensor([0, 3, 1])
    w = mg.tensor(RNG.random(4) + 0.5)
    assert gradgradcheck(lambda a: F.cross_entropy(a, t, weight=w, label_smoothing=0.1), (x,))
    assert gradgradcheck(lambda a: F.cross_entropy(a, t, reduction="none", ignore_index=3), (x,))


def test_cross_entropy_unbatched_and_float32():
    x = RNG.standard_normal(5)
    out = F.cross_entropy(t64(x, False), mg.tensor(2))
    assert out.shape == ()
    assert out.item() == pytest.approx(-log_softmax_ref(x[None])[0, 2])
    assert F.cross_entropy(t64(x, False), mg.tensor(2), reduction="none").shape == ()
    x32 = mg.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x32, mg.tensor([0, 1, 2, 0]))
    loss.backward()
    assert loss.dtype == mg.float32 and x32.grad.dtype == mg.float32


def test_cross_entropy_gradient_is_softmax_minus_onehot():
    x = RNG.standard_normal((4, 3))
    t = np.array([2, 0, 1, 1])
    xt = t64(x)
    F.cross_entropy(xt, mg.tensor(t)).backward()
    p = np.exp(log_softmax_ref(x))
    np.testing.assert_allclose(xt.grad.numpy(), (p - np.eye(3)[t]) / 4, rtol=1e-12)


def test_cross_entropy_stable_at_huge_logits():
    x = t64([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4]])
    t = mg.tensor([0, 0])
    loss = F.cross_entropy(x, t, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [0.0, 1e4 + np.log(2)], rtol=1e-12)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 0], [-1, 0.5, 0.5]], atol=1e-12)
    x32 = mg.tensor([[1e4, -1e4, 0.0]], requires_grad=True)
    l32 = F.cross_entropy(x32, mg.tensor([1]), label_smoothing=0.1)
    l32.backward()
    assert np.isfinite(l32.item()) and np.isfinite(x32.grad.numpy()).all()


def test_cross_entropy_class_probabilities():
    x = RNG.standard_normal((4, 3, 2))
    y = RNG.random((4, 3, 2))
    y /= y.sum(1, keepdims=True)
    w = RNG.random(3) + 0.5
    logp = log_softmax_ref(x)
    ys = y * 0.8 + 0.2 / 3
    ref = -(ys * logp * w[None, :, None]).sum(1).mean()  # the mean is over samples, not weights
    out = F.cross_entropy(t64(x, False), t64(y, False), weight=mg.tensor(w), label_smoothing=0.2)
    assert out.item() == pytest.approx(ref, rel=1e-12)
    wt = mg.tensor(w)
    assert gradcheck(lambda a, b: F.cross_entropy(a, b, weight=wt, label_smoothing=0.2), (t64(x), t64(y)))
    assert gradgradcheck(lambda a, b: F.cross_entropy(a, b, reduction="sum"), (t64(x), t64(y)))
    # one-hot probabilities give the same loss as class indices
    t = RNG.integers(0, 3, (4, 2))
    onehot = np.moveaxis(np.eye(3)[t], -1, 1)
    np.testing.assert_allclose(F.cross_entropy(t64(x, False), t64(onehot, False)).item(),
                               F.cross_entropy(t64(x, False), mg.tensor(t)).item(), rtol=1e-12)


def test_cross_entropy_all_ignored_mean_is_nan():
    out = F.cross_entropy(t64(np.zeros((2, 3)), False), mg.tensor([-100, -100]))
    assert np.isnan(out.item())  # 0 / 0, as PyTorch


@pytest.mark.parametrize("fn, eps", [("cross_entropy", 0.0), ("cross_entropy", 0.3), ("nll_loss", 0.0)])
@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 2)])
def test_no_target_counts_mean_gradient_as_pytorch(fn, eps, shape):
    """'mean' with nothing to average over (every target ignored, or every counted target of
    weight 0): the loss is nan (0/0) and so is the gradient of a row whose target counts, but a row
    whose target is ignored gets none -- as PyTorch; it was nan everywhere, with warnings."""
    x = RNG.standard_normal(shape)
    tshape = shape[:1] + shape[2:]
    kw = {"label_smoothing": eps} if eps else {}
    cases = [(np.ones(tshape, int), None),  # every target ignored
             (np.where(np.arange(np.prod(tshape)).reshape(tshape) % 2, 1, 0), np.array([0.0, 2, 0, 4]))]
    for t, w in cases:  # the second: class 0 (weight 0) or ignored 1: nothing counts
        a = t64(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no divide-by-zero RuntimeWarning
            loss = getattr(F, fn)(a, mg.tensor(t), weight=None if w is None else t64(w, False),
                                  ignore_index=1, **kw)
            loss.backward()
        assert np.isnan(loss.item())
        g = np.moveaxis(a.grad.numpy(), 1, -1)  # (N, d..., C): one row of C per target
        ignored = t == 1
        np.testing.assert_array_equal(g[ignored], 0.0)
        counted = g[~ignored]
        if fn == "cross_entropy":  # the nan reaches every class through the softmax
            assert np.isnan(counted).all()
        else:  # -w[t] / 0 at the target, 0 elsewhere
            tc = t[~ignored]
            assert np.isnan(counted[np.arange(len(tc)), tc]).all()
            counted[np.arange(len(tc)), tc] = 0
            np.testing.assert_array_equal(counted, 0.0)


def test_cross_entropy_ignore_index_inside_class_range_gets_no_gradient():
    x = t64(RNG.standard_normal((3, 4)))
    F.cross_entropy(x, mg.tensor([1, 2, 1]), ignore_index=1).backward()
    np.testing.assert_array_equal(x.grad.numpy()[[0, 2]], 0.0)
    assert np.abs(x.grad.numpy()[1]).sum() > 0


def test_cross_entropy_errors():
    x = mg.randn(4, 10)
    with pytest.raises(IndexError, match="cross_entropy: target 12 is out of bounds for 10 classes"):
        F.cross_entropy(x, mg.tensor([1, 12, 0, 3]))
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(x, mg.tensor([1, -1, 0, 3]))
    with pytest.raises(ValueError, match=r"cross_entropy: input of shape \(4, 10\).*\(4,\).*\(5,\)"):
        F.cross_entropy(x, mg.tensor([1, 2, 0, 3, 1]))
    with pytest.raises(ValueError, match="probabilities"):
        F.cross_entropy(x, mg.rand(4, 9))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, mg.tensor([1, 2, 0, 3]), reduction="avg")
    with pytest.raises(ValueError, match="weight"):
        F.cross_entropy(x, mg.tensor([1, 2, 0, 3]), weight=mg.ones(3))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, mg.tensor([1, 2, 0, 3]), label_smoothing=1.5)


# -- nll_loss -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    x = log_softmax_ref(RNG.standard_normal((5, 4, 3)))
    t = RNG.integers(0, 4, (5, 3))
    t[0, 0] = -100
    w = RNG.random(4) + 0.5
    out = F.nll_loss(t64(x, False), mg.tensor(t), weight=mg.tensor(w), reduction=reduction)
    np.testing.assert_allclose(out.numpy(), ce_ref(x, t, w, -100, reduction), rtol=1e-10)
    fn = lambda a: F.nll_loss(a, mg.tensor(t), weight=mg.tensor(w), reduction=reduction)  # noqa: E731
    assert gradcheck(fn, (t64(x),))
    assert gradgradcheck(lambda a: fn(a) * fn(a), (t64(x),))


def test_nll_of_log_softmax_equals_cross_entropy():
    x = t64(RNG.standard_normal((6, 5)), False)
    t = mg.tensor(RNG.integers(0, 5, 6))
    assert F.nll_loss(F.log_softmax(x, 1), t).item() == pytest.approx(F.cross_entropy(x, t).item(), rel=1e-12)
    with pytest.raises(IndexError, match="nll_loss: target 5"):
        F.nll_loss(x, mg.tensor([5, 0, 0, 0, 0, 0]))
    with pytest.raises(TypeError, match="nll_loss: expected an integer"):
        F.nll_loss(x, mg.zeros(6))


# -- regression losses -------------------------------------------------------------------------------

def _smooth_l1_ref(d, beta):
    a = np.abs(d)
    return np.where(a < beta, 0.5 * a * a / beta, a - 0.5 * beta)


def _huber_ref(d, delta):
    a = np.abs(d)
    return np.where(a < delta, 0.5 * a * a, delta * (a - 0.5 * delta))


POINTWISE = {
    "mse_loss": (F.mse_loss, {}, lambda d: d * d),
    "l1_loss": (F.l1_loss, {}, np.abs),
    "smooth_l1_loss": (F.smooth_l1_loss, {"beta": 0.5}, lambda d: _smooth_l1_ref(d, 0.5)),
    "huber_loss": (F.huber_loss, {"delta": 0.7}, lambda d: _huber_ref(d, 0.7)),
}


@pytest.mark.parametrize("name", sorted(POINTWISE))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_pointwise_losses(name, reduction):
    fn, kw, ref = POINTWISE[name]
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    r = ref(x - y)
    expected = {"mean": r.mean(), "sum": r.sum(), "none": r}[reduction]
    out = fn(t64(x, False), t64(y, False), reduction=reduction, **kw)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda a, b: fn(a, b, reduction=reduction, **kw), (t64(x), t64(y)))


@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss", "huber_loss"])
def test_pointwise_losses_gradgradcheck(name):
    fn, kw, _ = POINTWISE[name]
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    assert gradgradcheck(lambda a, b: fn(a, b, **kw), (t64(x), t64(y)))


def test_smooth_l1_beta_zero_is_l1():
    x, y = RNG.standard_normal(5), RNG.standard_normal(5)
    assert F.smooth_l1_loss(t64(x, False), t64(y, False), beta=0.0).item() == pytest.approx(np.abs(x - y).mean())


@pytest.mark.parametrize("fn,kw", [(F.smooth_l1_loss, "beta"), (F.huber_loss, "delta")])
def test_smooth_l1_huber_gradient_at_an_infinite_difference_as_pytorch(fn, kw):
    """The quadratic branch, not taken where |x - y| = inf, still multiplied its zero gradient by
    d = inf: nan, where PyTorch gives the linear branch's sign(d) (times delta for huber_loss)."""
    inf = np.inf
    x = t64(np.array([0.0, inf, -inf, 1.0, 3.0]))
    y = t64(np.array([inf, 0.0, 0.0, 1.5, 0.0]), False)
    loss = fn(x, y, reduction="none")
    np.testing.assert_array_equal(loss.detach().numpy(), [inf, inf, inf, 0.125, 2.5])
    loss.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, 1.0, -1.0, -0.5, 1.0])
    x.grad = None
    fn(x, y, reduction="sum", **{kw: 2.0}).backward()
    scale = 2.0 if fn is F.huber_loss else 1.0
    np.testing.assert_array_equal(x.grad.numpy(), [-scale, scale, -scale, -0.25 * scale, scale])


def test_kl_div_is_xlogy_minus_target_times_input_as_pytorch():
    """PyTorch's xlogy(t, t) - t * x: a negative target's loss is nan (it was hidden: 0) and the
    input's gradient is -t everywhere (it was 0 where t <= 0); 0 log 0 = 0, but 0 * -inf is nan.
    Values are PyTorch 2.13's. (Its target gradient at t = 0 is nan, xlogy's t / t; ours is -x.)"""
    x = mg.tensor([-1.0, 0.3, -2.0, -np.inf], dtype=mg.float64, requires_grad=True)
    t = mg.tensor([0.0, -0.5, 0.5, 0.0], dtype=mg.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(-0.5), 0 * -inf
        loss = F.kl_div(x, t, reduction="none")
        loss.backward(mg.ones(4, dtype=mg.float64))
    np.testing.assert_allclose(loss.detach().numpy(), [0.0, np.nan, 0.5 * np.log(0.5) + 1.0, np.nan], rtol=1e-15)
    np.testing.assert_array_equal(x.grad.numpy(), [-0.0, 0.5, -0.5, -0.0])
    np.testing.assert_allclose(t.grad.numpy()[1:3], [np.nan, np.log(0.5) + 1 + 2.0], rtol=1e-15)
    assert np.isnan(F.kl_div(mg.tensor([[0.1, 0.2]]), mg.tensor([[-0.5, 1.5]]), reduction="batchmean").item())


def test_broadcast_target_warns_as_pytorch():
    x = mg.randn(4, 1)
    y = mg.randn(4)
    for fn in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss):
        with pytest.warns(UserWarning, match=r"Using a target size \(\(4,\)\) that is different to the input size \(\(4, 1\)\)"):
            out = fn(x, y, reduction="none")
        assert out.shape == (4, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(x, mg.randn(4, 1))  # same shape: no warning
    with pytest.raises(ValueError, match=r"mse_loss: input of shape \(4, 1\) and target of shape \(3, 2\)"), \
            pytest.warns(UserWarning):
        F.mse_loss(x, mg.randn(3, 2))


def test_legacy_reduce_arguments():
    x, y = mg.randn(3), mg.randn(3)
    with pytest.warns(UserWarning, match="deprecated"):
        out = F.mse_loss(x, y, size_average=False)
    assert out.item() == pytest.approx(((x.numpy() - y.numpy()) ** 2).sum(), rel=1e-5)


# -- binary cross entropy ----------------------------------------------------------------------------

def test_binary_cross_entropy():
    x = RNG.uniform(0.05, 0.95, (3, 4))
    y = RNG.random((3, 4))
    w = RNG.random((3, 4))
    ref = -(w * (y * np.log(x) + (1 - y) * np.log(1 - x)))
    out = F.binary_cross_entropy(t64(x, False), t64(y, False), t64(w, False), reduction="none")
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    assert F.binary_cross_entropy(t64(x, False), t64(y, False)).item() == pytest.approx(
        -(y * np.log(x) + (1 - y) * np.log(1 - x)).mean(), rel=1e-12)
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b, t64(w, False)), (t64(x), t64(y)))
    assert gradgradcheck(lambda a: F.binary_cross_entropy(a, t64(y, False)), (t64(x),))


def test_binary_cross_entropy_clamps_log_at_minus_100():
    x = t64([0.0, 1.0, 0.0])
    y = t64([1.0, 0.0, 0.0], False)
    loss = F.binary_cross_entropy(x, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [100.0, 100.0, 0.0])
    loss.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_binary_cross_entropy_target_gradient_is_minus_logit_unclamped_as_pytorch():
    """dy = -g logit(x): the -100 clamp is the loss's, not the target gradient's (it gave 100 at x = 0
    and at x = 1e-50, where PyTorch gives inf and 115.13). Values are PyTorch 2.13's."""
    x = t64([0.0, 1.0, 0.5, 1e-20, 1e-50, 0.3], False)
    y = t64([0.0, 1.0, 1.0, 1.0, 0.5, 0.4])
    F.binary_cross_entropy(x, y, reduction="sum").backward()
    np.testing.assert_allclose(y.grad.numpy(), [np.inf, -np.inf, -0.0, 20 * np.log(10), 50 * np.log(10),
                                                np.log(7 / 3)], rtol=1e-14)


def test_binary_cross_entropy_errors():
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(mg.tensor([1.5]), mg.tensor([1.0]))
    with pytest.raises(ValueError, match=r"binary_cross_entropy: .*\(3,\).*\(3, 1\)"):
        F.binary_cross_entropy(mg.rand(3, 1), mg.rand(3))
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits"):
        F.binary_cross_entropy_with_logits(mg.rand(3, 1), mg.rand(3))


def test_bce_with_logits_matches_formula_and_grads():
    x = RNG.standard_normal((3, 4)) * 2
    y = RNG.random((3, 4))
    w = RNG.random((3, 4))
    pw = RNG.random(4) + 0.5
    s = 1 / (1 + np.exp(-x))
    ref = -w * (pw * y * np.log(s) + (1 - y) * np.log(1 - s))
    out = F.binary_cross_entropy_with_logits(t64(x, False), t64(y, False), t64(w, False), reduction="none",
                                             pos_weight=t64(pw, False))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    assert gradcheck(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, pos_weight=c),
                     (t64(x), t64(y), t64(pw)))
    assert gradgradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b), (t64(x), t64(y)))
    assert gradgradcheck(lambda a: F.binary_cross_entropy_with_logits(a, t64(y, False), pos_weight=t64(pw, False)),
                         (t64(x),))


def test_bce_with_logits_stable_at_extremes():
    x = t64([1e4, -1e4, 1e4, -1e4, 0.0])
    y = t64([1.0, 0.0, 0.0, 1.0, 1.0], False)
    loss = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [0.0, 0.0, 1e4, 1e4, np.log(2)], rtol=1e-12, atol=1e-12)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 1.0, -1.0, -0.5], atol=1e-12)  # sigmoid(x) - y
    x32 = mg.tensor([1e4, -1e4], requires_grad=True)
    l32 = F.binary_cross_entropy_with_logits(x32, mg.tensor([0.0, 1.0]), pos_weight=mg.tensor([3.0]))
    l32.backward()
    assert np.isfinite(l32.item()) and np.isfinite(x32.grad.numpy()).all()
    assert l32.item() == pytest.approx((1e4 + 3e4) / 2, rel=1e-6)
