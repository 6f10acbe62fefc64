"""Layers, activations and loss modules: shapes, forward against NumPy, gradients, init, repr."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


# ---------------------------------------------------------------- helpers
def _rng(seed=0):
    return np.random.default_rng(seed)


def _t(arr, requires_grad=False):
    return mg.tensor(np.asarray(arr, dtype=np.float64), dtype=mg.float64, requires_grad=requires_grad)


def check_module_grads(module, *inputs, eps=1e-6, atol=1e-6, rtol=1e-4, seed=0):
    """Central finite differences on every float64 input and parameter of ``module``.

    The scalar checked is ``sum(module(*inputs) * R)`` with a fixed random R; parameters and inputs
    are perturbed in place through ``.data``. Returns the number of entries compared.
    """
    module.double()
    leaves = [x for x in inputs if isinstance(x, mg.Tensor) and x.requires_grad] + list(module.parameters())
    with mg.no_grad():
        out_shape = module(*inputs).shape
    r = _rng(seed).standard_normal(out_shape)

    def scalar():
        with mg.no_grad():
            return float((module(*inputs).data.numpy() * r).sum())

    for p in leaves:
        p.grad = None
    (module(*inputs) * _t(r)).sum().backward()
    checked = 0
    for p in leaves:
        analytic = np.zeros(p.shape) if p.grad is None else p.grad.data.numpy()
        flat = p.data.numpy().reshape(-1)
        numeric = np.zeros(flat.size)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + eps
            up = scalar()
            flat[i] = orig - eps
            down = scalar()
            flat[i] = orig
            numeric[i] = (up - down) / (2 * eps)
        np.testing.assert_allclose(analytic.reshape(-1), numeric, atol=atol, rtol=rtol)
        checked += flat.size
    return checked


def conv2d_ref(x, w, b=None, stride=(1, 1), pads=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """Naive NumPy cross-correlation; pads = (top, bottom, left, right)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    sh, sw = stride
    dh, dw = dilation
    ho = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    wo = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, ho, wo))
    opg = o // groups
    for oc in range(o):
        g = oc // opg
        for i in range(ho):
            for j in range(wo):
                patch = xp[:, g * cg:(g + 1) * cg, i * sh:i * sh + dh * (kh - 1) + 1:dh,
                           j * sw:j * sw + dw * (kw - 1) + 1:dw]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def pool_ref(x, k, s, p, op, pad_value):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=pad_value)
    ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, ho, wo))
    for i in range(ho):
        for j in range(wo):
            out[:, :, i, j] = op(xp[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return out


# ---------------------------------------------------------------- Linear
def test_linear_shape_forward_and_repr():
    m = nn.Linear(4, 3)
    assert m.weight.shape == (3, 4) and m.bias.shape == (3,)
    assert isinstance(m.weight, nn.Parameter) and m.weight.dtype == mg.float32
    x = _rng().standard_normal((5, 4)).astype(np.float32)
    out = m(mg.tensor(x))
    assert out.shape == (5, 3)
    np.testing.assert_allclose(out.data.numpy(), x @ m.weight.data.numpy().T + m.bias.data.numpy(), rtol=1e-5, atol=1e-6)
    assert m(mg.tensor(x[None])).shape == (1, 5, 3)  # leading batch dimensions
    assert repr(m) == "Linear(in_features=4, out_features=3, bias=True)"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]


def test_linear_without_bias_and_dtype():
    m = nn.Linear(2, 2, bias=False, dtype=mg.float64)
    assert m.bias is None and [n for n, _ in m.named_parameters()] == ["weight"]
    assert m.weight.dtype == mg.float64
    assert repr(m) == "Linear(in_features=2, out_features=2, bias=False)"
    np.testing.assert_allclose(m(_t(np.eye(2))).data.numpy(), m.weight.data.numpy().T)


def test_linear_weight_moved_out_of_parameters_is_still_used():
    """Linear.forward reads its parameters from _parameters (fast); a weight moved out of there and
    set as a plain attribute (as PyTorch's old weight_norm and pruning do) is the one used."""
    lin = nn.Linear(3, 2)
    x = mg.tensor(_rng().standard_normal((4, 3)).astype(np.float32))
    w = lin.weight
    del lin._parameters["weight"]
    lin.weight = w.detach() * 2.0  # a plain tensor: an ordinary attribute now
    assert "weight" not in dict(lin.named_parameters())
    expected = x.numpy() @ (2 * w.detach().numpy()).T + lin.bias.detach().numpy()
    np.testing.assert_allclose(lin(x).detach().numpy(), expected, rtol=1e-6)
    lin._parameters["weight"] = nn.Parameter(w.detach() * 3.0)  # put back directly: read from there
    del lin.__dict__["weight"]
    np.testing.assert_allclose(lin(x).detach().numpy(), x.numpy() @ (3 * w.detach().numpy()).T
                               + lin.bias.detach().numpy(), rtol=1e-6)


def test_linear_init_bounds_kaiming_uniform():
    mg.manual_seed(0)
    m = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives exactly 1/sqrt(fan_in)
    w = m.weight.data.numpy()
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.99 * bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    assert abs(w.mean()) < 0.01 * bound * 10
    assert np.abs(m.bias.data.numpy()).max() <= bound and np.abs(m.bias.data.numpy()).max() > 0.9 * bound


def test_linear_init_reproducible_with_seed():
    mg.manual_seed(123)
    a = nn.Linear(5, 5)
    mg.manual_seed(123)
    b = nn.Linear(5, 5)
    np.testing.assert_array_equal(a.weight.data.numpy(), b.weight.data.numpy())
    np.testing.assert_array_equal(a.bias.data.numpy(), b.bias.data.numpy())


def test_linear_gradcheck():
    x = _t(_rng(1).standard_normal((3, 4)), requires_grad=True)
    assert check_module_grads(nn.Linear(4, 2), x) == 12 + 8 + 2


def test_linear_gradcheck_with_mg_gradcheck():
    m = nn.Linear(3, 2).double()
    x = _t(_rng(2).standard_normal((2, 3)), requires_grad=True)
    assert mg.autograd.gradcheck(lambda inp: m(inp), (x,))


# ---------------------------------------------------------------- Conv2d
@pytest.mark.parametrize("kw", [
    dict(),
    dict(stride=2, padding=1),
    dict(padding=(1, 2), dilation=(2, 1)),
    dict(groups=2, bias=False),
    dict(stride=(2, 1), padding=2, dilation=2),
])
def test_conv2d_forward_matches_numpy(kw):
    m = nn.Conv2d(4, 6, 3, **kw).double()
    x = _rng(3).standard_normal((2, 4, 7, 8))
    out = m(_t(x))
    s = m.stride
    p = m.padding
    ref = conv2d_ref(x, m.weight.data.numpy(), None if m.bias is None else m.bias.data.numpy(), s,
                     (p[0], p[0], p[1], p[1]), m.dilation, m.groups)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out.data.numpy(), ref, rtol=1e-10, atol=1e-10)


def test_conv2d_padding_same_and_valid():
    x = _rng(4).standard_normal((1, 2, 6, 5))
    for k, d in [(3, 1), (4, 1), (3, 2), ((2, 3), 1)]:
        m = nn.Conv2d(2, 3, k, padding="same", dilation=d).double()
        out = m(_t(x))
        assert out.shape == (1, 3, 6, 5)
        kh, kw = m.kernel_size
        th, tw = d * (kh - 1), d * (kw - 1)
        ref = conv2d_ref(x, m.weight.data.numpy(), m.bias.data.numpy(), (1, 1), (th // 2, th - th // 2, tw // 2, tw - tw // 2),
                         (d, d))
        np.testing.assert_allclose(out.data.numpy(), ref, rtol=1e-10, atol=1e-10)
    m = nn.Conv2d(2, 3, 3, padding="valid")
    assert m(mg.tensor(x.astype(np.float32))).shape == (1, 3, 4, 3)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(2, 3, 3, stride=2, padding="same")
    with pytest.raises(ValueError):
        nn.Conv2d(2, 3, 3, padding="full")


def test_conv2d_shapes_params_and_validation():
    m = nn.Conv2d(16, 33, 3, stride=2)
    assert m.weight.shape == (33, 16, 3, 3) and m.bias.shape == (33,)
    assert m(mg.randn(2, 16, 20, 30)).shape == (2, 33, 9, 14)
    assert nn.Conv2d(4, 8, (3, 5), groups=4).weight.shape == (8, 1, 3, 5)
    with pytest.raises(ValueError, match="divisible"):
        nn.Conv2d(3, 4, 3, groups=2)


def test_conv2d_repr():
    assert repr(nn.Conv2d(1, 8, 3, padding=1)) == "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    assert repr(nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1), groups=1, bias=False)) == (
        "Conv2d(16, 33, kernel_size=(3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1), bias=False)")
    assert repr(nn.Conv2d(4, 4, 3, groups=2, padding="same")) == (
        "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, groups=2)")


def test_conv2d_init_bounds():
    mg.manual_seed(1)
    m = nn.Conv2d(8, 16, 3, groups=2)
    fan_in = 4 * 9
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(m.weight.data.numpy()).max() <= bound
    assert np.abs(m.weight.data.numpy()).max() > 0.95 * bound
    assert np.abs(m.bias.data.numpy()).max() <= bound


def test_conv2d_gradcheck():
    x = _t(_rng(5).standard_normal((1, 2, 4, 4)), requires_grad=True)
    check_module_grads(nn.Conv2d(2, 2, 3, stride=1, padding=1), x)
    x = _t(_rng(6).standard_normal((2, 4, 5, 5)), requires_grad=True)
    check_module_grads(nn.Conv2d(4, 2, 2, stride=2, padding=1, dilation=1, groups=2), x)


# ---------------------------------------------------------------- pooling
def test_maxpool2d_forward_and_repr():
    x = _rng(7).standard_normal((2, 3, 7, 6))
    m = nn.MaxPool2d(2)
    out = m(_t(x))
    np.testing.assert_allclose(out.data.numpy(), pool_ref(x, 2, 2, 0, np.max, -np.inf))
    out = nn.MaxPool2d(3, stride=2, padding=1)(_t(x))
    np.testing.assert_allclose(out.data.numpy(), pool_ref(x, 3, 2, 1, np.max, -np.inf))
    assert repr(m) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.MaxPool2d(3, 1, 1)) == "MaxPool2d(kernel_size=3, stride=1, padding=1, dilation=1, ceil_mode=False)"


def test_maxpool2d_gradient_routes_to_max():
    x = _t([[[[1.0, 2.0], [4.0, 3.0]]]], requires_grad=True)
    nn.MaxPool2d(2)(x).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [[[[0.0, 0.0], [1.0, 0.0]]]])


def test_avgpool2d_forward_and_repr():
    x = _rng(8).standard_normal((2, 3, 6, 7))
    np.testing.assert_allclose(nn.AvgPool2d(2)(_t(x)).data.numpy(), pool_ref(x, 2, 2, 0, np.mean, 0.0), rtol=1e-12)
    np.testing.assert_allclose(nn.AvgPool2d(3, stride=2, padding=1)(_t(x)).data.numpy(),
                               pool_ref(x, 3, 2, 1, np.mean, 0.0), rtol=1e-12)  # count_include_pad
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"


def test_pool_gradcheck():
    x = _t(_rng(9).standard_normal((1, 2, 4, 4)), requires_grad=True)
    check_module_grads(nn.AvgPool2d(2, stride=1), x)
    check_module_grads(nn.MaxPool2d(2), x)


def test_adaptive_avg_pool2d():
    x = _rng(10).standard_normal((2, 3, 7, 5))
    out = nn.AdaptiveAvgPool2d((3, 2))(_t(x))
    assert out.shape == (2, 3, 3, 2)
    ref = np.zeros((2, 3, 3, 2))
    for i in range(3):
        h0, h1 = (i * 7) // 3, -((-(i + 1) * 7) // 3)
        for j in range(2):
            w0, w1 = (j * 5) // 2, -((-(j + 1) * 5) // 2)
            ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    np.testing.assert_allclose(out.data.numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d(1)(_t(x)).data.numpy(), x.mean(axis=(2, 3), keepdims=True))
    assert repr(nn.AdaptiveAvgPool2d((5, 7))) == "AdaptiveAvgPool2d(output_size=(5, 7))"


# ---------------------------------------------------------------- BatchNorm
def test_batchnorm2d_train_forward_and_running_stats():
    x = _rng(11).standard_normal((4, 3, 5, 5)) * 2 + 1
    m = nn.BatchNorm2d(3, momentum=0.2).double()
    with mg.no_grad():
        m.weight.copy_(_t([1.0, 2.0, 3.0]))
        m.bias.copy_(_t([0.0, -1.0, 1.0]))
    out = m(_t(x))
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    ref = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    ref = ref * np.array([1, 2, 3])[None, :, None, None] + np.array([0, -1, 1])[None, :, None, None]
    np.testing.assert_allclose(out.data.numpy(), ref, rtol=1e-9, atol=1e-9)
    n = x.size / 3
    np.testing.assert_allclose(m.running_mean.data.numpy(), 0.8 * 0 + 0.2 * mean, rtol=1e-10)
    np.testing.assert_allclose(m.running_var.data.numpy(), 0.8 * 1 + 0.2 * var * n / (n - 1), rtol=1e-10)  # unbiased
    assert m.num_batches_tracked.item() == 1 and m.num_batches_tracked.dtype == mg.int64
    m(_t(x))
    assert m.num_batches_tracked.item() == 2


def test_batchnorm_eval_uses_running_stats():
    m = nn.BatchNorm1d(2).double()
    with mg.no_grad():
        m.running_mean.copy_(_t([1.0, -1.0]))
        m.running_var.copy_(_t([4.0, 0.25]))
    m.eval()
    x = _rng(12).standard_normal((5, 2))
    out = m(_t(x))
    ref = (x - np.array([1.0, -1.0])) / np.sqrt(np.array([4.0, 0.25]) + 1e-5)
    np.testing.assert_allclose(out.data.numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(m.running_mean.data.numpy(), [1.0, -1.0])  # not updated in eval
    assert m.num_batches_tracked.item() == 0


def test_batchnorm1d_3d_input_and_dim_check():
    m = nn.BatchNorm1d(3).double()
    x = _rng(13).standard_normal((4, 3, 6))
    out = m(_t(x))
    mean, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    np.testing.assert_allclose(out.data.numpy(), (x - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5),
                               rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        m(_t(np.zeros((1, 3, 2, 2))))
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(mg.zeros(2, 3))


def test_batchnorm_momentum_none_is_cumulative_average():
    m = nn.BatchNorm1d(1, momentum=None).double()
    batches = [_rng(i).standard_normal((8, 1)) + i for i in range(3)]
    for b in batches:
        m(_t(b))
    np.testing.assert_allclose(m.running_mean.data.numpy(), np.mean([b.mean() for b in batches]), rtol=1e-10)


def test_batchnorm_without_running_stats_and_affine():
    m = nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    assert m.weight is None and m.running_mean is None and m.num_batches_tracked is None
    assert list(m.parameters()) == [] and list(m.state_dict()) == []
    m.eval()
    x = _rng(14).standard_normal((6, 2))
    out = m(_t(x))  # batch statistics even in eval
    np.testing.assert_allclose(out.data.numpy(), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-6)


def test_batchnorm_state_dict_and_repr():
    m = nn.BatchNorm2d(4)
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert repr(m) == "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    np.testing.assert_array_equal(m.weight.data.numpy(), 1.0)
    np.testing.assert_array_equal(m.bias.data.numpy(), 0.0)
    sd = m.state_dict()
    del sd["num_batches_tracked"]  # older checkpoints lack it; they still load
    nn.BatchNorm2d(4).load_state_dict(sd)
    m.double()
    assert m.running_mean.dtype == mg.float64 and m.num_batches_tracked.dtype == mg.int64


def test_batchnorm_gradcheck_train_mode():
    x = _t(_rng(15).standard_normal((4, 3)), requires_grad=True)
    m = nn.BatchNorm1d(3)
    with mg.no_grad():
        m.weight.copy_(mg.tensor([0.5, 1.5, -1.0]))
        m.bias.copy_(mg.tensor([0.1, 0.2, 0.3]))
    check_module_grads(m, x)
    x = _t(_rng(16).standard_normal((2, 2, 3, 3)), requires_grad=True)
    check_module_grads(nn.BatchNorm2d(2), x)


# ---------------------------------------------------------------- LayerNorm
def test_layernorm_forward_and_repr():
    x = _rng(17).standard_normal((4, 5, 6))
    m = nn.LayerNorm(6).double()
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(m(_t(x)).data.numpy(), ref, rtol=1e-9, atol=1e-9)
    m2 = nn.LayerNorm((5, 6), elementwise_affine=True).double()
    assert m2.weight.shape == (5, 6)
    mu = x.mean((1, 2), keepdims=True)
    ref2 = (x - mu) / np.sqrt(x.var((1, 2), keepdims=True) + 1e-5)
    np.testing.assert_allclose(m2(_t(x)).data.numpy(), ref2, rtol=1e-9, atol=1e-9)
    assert repr(nn.LayerNorm(10)) == "LayerNorm((10,), eps=1e-05, elementwise_affine=True, bias=True)"
    nb = nn.LayerNorm(4, bias=False)
    assert nb.bias is None and [n for n, _ in nb.named_parameters()] == ["weight"]
    assert list(nn.LayerNorm(4, elementwise_affine=False).parameters()) == []


def test_layernorm_gradcheck():
    x = _t(_rng(18).standard_normal((3, 4)), requires_grad=True)
    m = nn.LayerNorm(4)
    with mg.no_grad():
        m.weight.copy_(mg.tensor([1.0, 2.0, 0.5, -1.0]))
    check_module_grads(m, x)


# ---------------------------------------------------------------- Dropout
def test_dropout_train_scaling_and_rate():
    mg.manual_seed(0)
    m = nn.Dropout(p=0.3)
    x = mg.ones(200, 100)
    out = m(x).data.numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)


def test_dropout_eval_is_identity_and_edge_cases():
    m = nn.Dropout(0.5).eval()
    x = mg.randn(4, 4)
    assert m(x) is x or np.array_equal(m(x).data.numpy(), x.data.numpy())
    assert np.array_equal(nn.Dropout(0.0)(x).data.numpy(), x.data.numpy())
    assert np.all(nn.Dropout(1.0)(x).data.numpy() == 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    assert repr(nn.Dropout()) == "Dropout(p=0.5, inplace=False)"


def test_dropout_gradient_matches_mask():
    mg.manual_seed(1)
    x = mg.ones(50, requires_grad=True)
    out = nn.Dropout(0.5)(x)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), out.data.numpy())  # d out / d x = mask / (1 - p)


# ---------------------------------------------------------------- Embedding
def test_embedding_lookup_init_and_repr():
    mg.manual_seed(2)
    m = nn.Embedding(1000, 20)
    assert m.weight.shape == (1000, 20)
    w = m.weight.data.numpy()
    assert abs(w.mean()) < 0.02 and w.std() == pytest.approx(1.0, rel=0.03)  # N(0, 1)
    idx = mg.tensor([[1, 2, 4], [4, 3, 999]])
    out = m(idx)
    assert out.shape == (2, 3, 20)
    np.testing.assert_array_equal(out.data.numpy(), w[idx.data.numpy()])
    assert repr(nn.Embedding(10, 3)) == "Embedding(10, 3)"
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"


def test_embedding_padding_idx():
    m = nn.Embedding(5, 3, padding_idx=-1)
    assert m.padding_idx == 4
    np.testing.assert_array_equal(m.weight.data.numpy()[4], 0.0)
    m(mg.tensor([4, 1, 4])).sum().backward()
    np.testing.assert_array_equal(m.weight.grad.data.numpy()[4], 0.0)
    np.testing.assert_array_equal(m.weight.grad.data.numpy()[1], 1.0)
    with pytest.raises(AssertionError):
        nn.Embedding(5, 3, padding_idx=5)


def test_embedding_repeated_indices_accumulate_and_from_pretrained():
    m = nn.Embedding(3, 2)
    m(mg.tensor([0, 0, 2])).sum().backward()
    np.testing.assert_array_equal(m.weight.grad.data.numpy(), [[2, 2], [0, 0], [1, 1]])
    pre = mg.tensor([[1.0, 2.0], [3.0, 4.0]])
    e = nn.Embedding.from_pretrained(pre)
    assert not e.weight.requires_grad
    np.testing.assert_array_equal(e(mg.tensor([1])).data.numpy(), [[3.0, 4.0]])
    assert nn.Embedding.from_pretrained(pre, freeze=False).weight.requires_grad


# ---------------------------------------------------------------- shape layers
def test_flatten_unflatten_identity():
    x = mg.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Unflatten(1, (2, 30))(nn.Flatten()(x)).shape == (2, 2, 30)
    assert nn.Unflatten(-1, (5, 1))(x).shape == (2, 3, 4, 5, 1)
    assert nn.Identity(3, foo=1)(x) is x
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Unflatten(1, (2, 5, 5))) == "Unflatten(dim=1, unflattened_size=(2, 5, 5))"
    assert repr(nn.Identity()) == "Identity()"
    np.testing.assert_array_equal(nn.Flatten()(x).data.numpy(), x.data.numpy().reshape(2, 60))


# ---------------------------------------------------------------- activations
_X = np.array([[-3.0, -1.0, -0.5, 0.2, 1.0, 25.0]])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _erf(x):
    return np.vectorize(math.erf)(x)


@pytest.mark.parametrize("module, ref", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.LeakyReLU(), lambda x: np.where(x > 0, x, 0.01 * x)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    (nn.GELU(approximate="tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x * _sigmoid(x)),
    (nn.ELU(), lambda x: np.where(x > 0, x, np.expm1(x))),
    (nn.ELU(alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (nn.Sigmoid(), _sigmoid),
    (nn.Tanh(), np.tanh),
    (nn.Softplus(), lambda x: np.where(x > 20, x, np.log1p(np.exp(x)))),
    (nn.Softplus(beta=2.0, threshold=5.0), lambda x: np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2)),
    (nn.Softmax(dim=1), lambda x: np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)),
    (nn.LogSoftmax(dim=1), lambda x: x - x.max(1, keepdims=True) - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True))),
])
def test_activation_forward(module, ref):
    np.testing.assert_allclose(module(_t(_X)).data.numpy(), ref(_X), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("module", [nn.ReLU(), nn.LeakyReLU(0.1), nn.GELU(), nn.GELU("tanh"), nn.SiLU(), nn.ELU(),
                                    nn.Sigmoid(), nn.Tanh(), nn.Softplus(), nn.Softmax(1), nn.LogSoftmax(1)])
def test_activation_gradients(module):
    x = _t([[-1.3, -0.4, 0.3, 0.9, 2.1]], requires_grad=True)
    check_module_grads(module, x)


def test_activation_reprs():
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.LeakyReLU(0.2, inplace=True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.SiLU()) == "SiLU()"
    assert repr(nn.ELU()) == "ELU(alpha=1.0)"
    assert repr(nn.Sigmoid()) == "Sigmoid()" and repr(nn.Tanh()) == "Tanh()"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(nn.LogSoftmax(dim=-1)) == "LogSoftmax(dim=-1)"
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension"):
        out = nn.Softmax()(mg.randn(2, 3))
    np.testing.assert_allclose(out.data.numpy().sum(1), 1.0, rtol=1e-6)


# ---------------------------------------------------------------- losses
def _log_softmax(x):
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))


def test_cross_entropy_loss_module():
    x = _rng(20).standard_normal((5, 4))
    y = np.array([0, 3, 1, 1, 2])
    lp = _log_softmax(x)
    nll = -lp[np.arange(5), y]
    assert nn.CrossEntropyLoss()(_t(x), mg.tensor(y)).item() == pytest.approx(nll.mean())
    assert nn.CrossEntropyLoss(reduction="sum")(_t(x), mg.tensor(y)).item() == pytest.approx(nll.sum())
    np.testing.assert_allclose(nn.CrossEntropyLoss(reduction="none")(_t(x), mg.tensor(y)).data.numpy(), nll)
    w = np.array([1.0, 2.0, 0.5, 3.0])
    loss = nn.CrossEntropyLoss(weight=_t(w))(_t(x), mg.tensor(y)).item()
    assert loss == pytest.approx((w[y] * nll).sum() / w[y].sum())
    y_ign = np.array([0, -100, 1, 1, -100])
    keep = y_ign != -100
    loss = nn.CrossEntropyLoss()(_t(x), mg.tensor(y_ign)).item()
    assert loss == pytest.approx(nll[keep].mean())
    eps = 0.1
    smooth = ((1 - eps) * nll - eps / 4 * lp.sum(1)).mean()
    assert nn.CrossEntropyLoss(label_smoothing=eps)(_t(x), mg.tensor(y)).item() == pytest.approx(smooth)


def test_weighted_losses_register_weight_as_buffer():
    w = mg.tensor([1.0, 2.0])
    m = nn.CrossEntropyLoss(weight=w)
    assert m.weight is w and "weight" in m._buffers and list(m.parameters()) == []
    assert list(m.state_dict()) == ["weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    b = nn.BCEWithLogitsLoss(pos_weight=mg.tensor([3.0]))
    assert "pos_weight" in b._buffers
    m.double()
    assert m.weight.dtype == mg.float64
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"


def test_nll_loss_module():
    x = _log_softmax(_rng(21).standard_normal((4, 3)))
    y = np.array([2, 0, 1, 2])
    assert nn.NLLLoss()(_t(x), mg.tensor(y)).item() == pytest.approx(-x[np.arange(4), y].mean())
    w = np.array([0.2, 1.0, 3.0])
    assert nn.NLLLoss(weight=_t(w))(_t(x), mg.tensor(y)).item() == pytest.approx(
        -(w[y] * x[np.arange(4), y]).sum() / w[y].sum())


def test_regression_losses():
    a = _rng(22).standard_normal((3, 4)) * 2
    b = _rng(23).standard_normal((3, 4))
    d = a - b
    assert nn.MSELoss()(_t(a), _t(b)).item() == pytest.approx((d ** 2).mean())
    assert nn.MSELoss(reduction="sum")(_t(a), _t(b)).item() == pytest.approx((d ** 2).sum())
    assert nn.L1Loss()(_t(a), _t(b)).item() == pytest.approx(np.abs(d).mean())
    np.testing.assert_allclose(nn.L1Loss(reduction="none")(_t(a), _t(b)).data.numpy(), np.abs(d))
    for beta in (1.0, 0.5):
        ref = np.where(np.abs(d) < beta, 0.5 * d ** 2 / beta, np.abs(d) - 0.5 * beta)
        assert nn.SmoothL1Loss(beta=beta)(_t(a), _t(b)).item() == pytest.approx(ref.mean())
    for delta in (1.0, 2.0):
        ref = np.where(np.abs(d) < delta, 0.5 * d ** 2, delta * (np.abs(d) - 0.5 * delta))
        assert nn.HuberLoss(delta=delta)(_t(a), _t(b)).item() == pytest.approx(ref.mean())


def test_bce_losses():
    logits = _rng(24).standard_normal((4, 3)) * 3
    y = (_rng(25).random((4, 3)) > 0.5).astype(np.float64)
    p = _sigmoid(logits)
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert nn.BCELoss()(_t(p), _t(y)).item() == pytest.approx(ref.mean())
    w = np.array([1.0, 2.0, 3.0])
    assert nn.BCELoss(weight=_t(w))(_t(p), _t(y)).item() == pytest.approx((ref * w).mean())
    assert nn.BCEWithLogitsLoss()(_t(logits), _t(y)).item() == pytest.approx(ref.mean())
    pw = np.array([2.0, 1.0, 0.5])
    ref_pw = -(pw * y * np.log(p) + (1 - y) * np.log(1 - p))
    assert nn.BCEWithLogitsLoss(pos_weight=_t(pw))(_t(logits), _t(y)).item() == pytest.approx(ref_pw.mean())
    big = nn.BCEWithLogitsLoss()(_t([1e4, -1e4]), _t([0.0, 1.0])).item()
    assert big == pytest.approx(1e4)  # stable for huge logits


def test_loss_modules_backward_and_legacy_args():
    x = _t(_rng(26).standard_normal((3, 5)), requires_grad=True)
    nn.CrossEntropyLoss()(x, mg.tensor([1, 0, 4])).backward()
    assert x.grad.shape == (3, 5)
    np.testing.assert_allclose(x.grad.data.numpy().sum(1), 0.0, atol=1e-12)  # softmax - onehot rows sum to 0
    with pytest.warns(UserWarning):
        m = nn.MSELoss(size_average=False)
    assert m.reduction == "sum"


# ---------------------------------------------------------------- putting it together
def test_small_cnn_trains():
    mg.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.1), nn.Linear(4 * 4 * 4, 2),
    )
    x = mg.randn(16, 1, 8, 8)
    y = mg.tensor((x.data.numpy().mean(axis=(1, 2, 3)) > 0).astype(np.int64))
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(30):
        model.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        with mg.no_grad():
            for p in model.parameters():
                p.sub_(0.1 * p.grad)
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    model.eval()
    assert model(x).shape == (16, 2)
    assert repr(model).startswith("Sequential(\n  (0): Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
                                  "  (1): BatchNorm2d(4,")
