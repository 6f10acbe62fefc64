"""Optional parity with PyTorch: copy a torch module's weights, compare outputs, gradients and reprs."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minigrad as mg  # noqa: E402
from minigrad import nn  # noqa: E402

tnn = torch.nn


def _copy_state(t_mod, m_mod):
    """Load the torch module's state dict into the minigrad module (through NumPy)."""
    m_mod.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()})


def _run_both(t_mod, m_mod, x, target_fn=None, train=True):
    """Forward + backward of sum(out * r) in both; returns (t_out, m_out, t_xgrad, m_xgrad)."""
    t_mod.train(train)
    m_mod.train(train)
    tx = torch.tensor(x, requires_grad=True)
    mx = mg.tensor(x, dtype=x.dtype, requires_grad=True)
    t_out = t_mod(tx)
    m_out = m_mod(mx)
    r = np.random.default_rng(0).standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(r)).sum().backward()
    (m_out * mg.tensor(r, dtype=mg.float64)).sum().backward()
    return t_out.detach().numpy(), m_out.data.numpy(), tx.grad.numpy(), mx.grad.data.numpy()


def _assert_param_grads(t_mod, m_mod, rtol=1e-8, atol=1e-10):
    t_named = dict(t_mod.named_parameters())
    m_named = dict(m_mod.named_parameters())
    assert list(t_named) == list(m_named)
    for k in t_named:
        np.testing.assert_allclose(m_named[k].grad.data.numpy(), t_named[k].grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=k)


LAYERS = [
    (lambda: tnn.Linear(5, 3), lambda: nn.Linear(5, 3), (4, 5)),
    (lambda: tnn.Linear(5, 3, bias=False), lambda: nn.Linear(5, 3, bias=False), (2, 4, 5)),
    (lambda: tnn.Conv2d(3, 4, 3), lambda: nn.Conv2d(3, 4, 3), (2, 3, 7, 6)),
    (lambda: tnn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
     lambda: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2), (2, 4, 8, 7)),
    (lambda: tnn.Conv2d(2, 3, 4, padding="same", dilation=2), lambda: nn.Conv2d(2, 3, 4, padding="same", dilation=2),
     (1, 2, 9, 8)),
    (lambda: tnn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
     lambda: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), (1, 2, 5, 5)),
    (lambda: tnn.Conv2d(2, 3, 3, padding=2, padding_mode="circular", bias=False),
     lambda: nn.Conv2d(2, 3, 3, padding=2, padding_mode="circular", bias=False), (1, 2, 5, 5)),
    (lambda: tnn.MaxPool2d(2), lambda: nn.MaxPool2d(2), (2, 3, 6, 7)),
    (lambda: tnn.MaxPool2d(3, stride=2, padding=1), lambda: nn.MaxPool2d(3, stride=2, padding=1), (2, 3, 7, 7)),
    (lambda: tnn.MaxPool2d(2, ceil_mode=True), lambda: nn.MaxPool2d(2, ceil_mode=True), (1, 2, 5, 5)),
    (lambda: tnn.AvgPool2d(3, stride=2, padding=1), lambda: nn.AvgPool2d(3, stride=2, padding=1), (2, 3, 7, 6)),
    (lambda: tnn.AvgPool2d(2, count_include_pad=False, padding=1),
     lambda: nn.AvgPool2d(2, count_include_pad=False, padding=1), (1, 2, 5, 5)),
    (lambda: tnn.AdaptiveAvgPool2d((3, 2)), lambda: nn.AdaptiveAvgPool2d((3, 2)), (2, 3, 7, 5)),
    (lambda: tnn.AdaptiveAvgPool2d((None, 3)), lambda: nn.AdaptiveAvgPool2d((None, 3)), (2, 3, 5, 7)),
    (lambda: tnn.MaxPool2d(2, 1, dilation=2), lambda: nn.MaxPool2d(2, 1, dilation=2), (2, 3, 7, 7)),
    (lambda: tnn.AvgPool2d(3, 2, 1, ceil_mode=True, divisor_override=4),
     lambda: nn.AvgPool2d(3, 2, 1, ceil_mode=True, divisor_override=4), (2, 3, 7, 7)),
    (lambda: tnn.Conv2d(3, 2, 3), lambda: nn.Conv2d(3, 2, 3), (3, 6, 5)),  # unbatched input
    (lambda: tnn.Conv2d(3, 2, 3, padding=(1, 2), padding_mode="replicate"),
     lambda: nn.Conv2d(3, 2, 3, padding=(1, 2), padding_mode="replicate"), (2, 3, 5, 6)),
    (lambda: tnn.LayerNorm(6), lambda: nn.LayerNorm(6), (3, 4, 6)),
    (lambda: tnn.LayerNorm((4, 6), bias=False), lambda: nn.LayerNorm((4, 6), bias=False), (3, 4, 6)),
    (lambda: tnn.Flatten(), lambda: nn.Flatten(), (2, 3, 4)),
    (lambda: tnn.Unflatten(1, (2, 3)), lambda: nn.Unflatten(1, (2, 3)), (4, 6)),
    (lambda: tnn.ReLU(), lambda: nn.ReLU(), (3, 5)),
    (lambda: tnn.LeakyReLU(0.2), lambda: nn.LeakyReLU(0.2), (3, 5)),
    (lambda: tnn.GELU(), lambda: nn.GELU(), (3, 5)),
    (lambda: tnn.GELU("tanh"), lambda: nn.GELU("tanh"), (3, 5)),
    (lambda: tnn.SiLU(), lambda: nn.SiLU(), (3, 5)),
    (lambda: tnn.ELU(0.7), lambda: nn.ELU(0.7), (3, 5)),
    (lambda: tnn.Sigmoid(), lambda: nn.Sigmoid(), (3, 5)),
    (lambda: tnn.Tanh(), lambda: nn.Tanh(), (3, 5)),
    (lambda: tnn.Softmax(dim=-1), lambda: nn.Softmax(dim=-1), (3, 5)),
    (lambda: tnn.LogSoftmax(dim=1), lambda: nn.LogSoftmax(dim=1), (3, 5)),
    (lambda: tnn.Softplus(beta=2.0, threshold=3.0), lambda: nn.Softplus(beta=2.0, threshold=3.0), (3, 5)),
    (lambda: tnn.Identity(), lambda: nn.Identity(), (3, 5)),
]


@pytest.mark.parametrize("make_t, make_m, shape", LAYERS, ids=lambda v: repr(v()) if callable(v) else str(v))
def test_layer_parity(make_t, make_m, shape):
    t_mod = make_t().double()
    m_mod = make_m().double()
    assert repr(m_mod) == repr(t_mod)
    assert list(m_mod.state_dict()) == list(t_mod.state_dict())
    _copy_state(t_mod, m_mod)
    x = np.random.default_rng(1).standard_normal(shape) * 3
    t_out, m_out, t_g, m_g = _run_both(t_mod, m_mod, x)
    np.testing.assert_allclose(m_out, t_out, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(m_g, t_g, rtol=1e-8, atol=1e-10)
    _assert_param_grads(t_mod, m_mod)


@pytest.mark.parametrize("cls, shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (4, 3, 5, 5))])
@pytest.mark.parametrize("kwargs", [dict(), dict(momentum=0.3, eps=1e-3), dict(momentum=None), dict(affine=False),
                                    dict(track_running_stats=False)])
def test_batchnorm_parity_train_then_eval(cls, shape, kwargs):
    t_mod = getattr(tnn, cls)(3, **kwargs).double()
    m_mod = getattr(nn, cls)(3, **kwargs).double()
    assert repr(m_mod) == repr(t_mod)
    assert list(m_mod.state_dict()) == list(t_mod.state_dict())
    if t_mod.affine:
        with torch.no_grad():
            t_mod.weight.copy_(torch.tensor([0.5, 1.5, -2.0]))
            t_mod.bias.copy_(torch.tensor([0.1, -0.3, 0.7]))
    _copy_state(t_mod, m_mod)
    rng = np.random.default_rng(2)
    for step in range(3):
        x = rng.standard_normal(shape) * (step + 1) + step
        t_out, m_out, t_g, m_g = _run_both(t_mod, m_mod, x, train=True)
        np.testing.assert_allclose(m_out, t_out, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(m_g, t_g, rtol=1e-8, atol=1e-10)
    for k, v in t_mod.state_dict().items():
        np.testing.assert_allclose(m_mod.state_dict()[k].data.numpy(), v.numpy(), rtol=1e-12, err_msg=k)
    x = rng.standard_normal(shape)
    t_out, m_out, t_g, m_g = _run_both(t_mod, m_mod, x, train=False)
    np.testing.assert_allclose(m_out, t_out, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(m_g, t_g, rtol=1e-8, atol=1e-10)


def test_maxpool_return_indices_parity():
    x = np.random.default_rng(7).standard_normal((2, 3, 6, 6))
    t_out, t_idx = tnn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    m_out, m_idx = nn.MaxPool2d(2, return_indices=True)(mg.tensor(x, dtype=mg.float64))
    np.testing.assert_allclose(m_out.data.numpy(), t_out.numpy())
    np.testing.assert_array_equal(m_idx.data.numpy(), t_idx.numpy())


def test_embedding_max_norm_parity():
    t_mod = tnn.Embedding(5, 3, max_norm=1.0).double()
    m_mod = nn.Embedding(5, 3, max_norm=1.0).double()
    assert repr(m_mod) == repr(t_mod)
    _copy_state(t_mod, m_mod)
    idx = np.array([0, 2, 2])
    np.testing.assert_allclose(m_mod(mg.tensor(idx)).data.numpy(), t_mod(torch.tensor(idx)).detach().numpy())
    np.testing.assert_allclose(m_mod.weight.data.numpy(), t_mod.weight.detach().numpy())  # renormalised in place


def test_embedding_parity():
    t_mod = tnn.Embedding(10, 4, padding_idx=2).double()
    m_mod = nn.Embedding(10, 4, padding_idx=2).double()
    assert repr(m_mod) == repr(t_mod)
    _copy_state(t_mod, m_mod)
    idx = np.array([[1, 2, 3], [2, 9, 1]])
    t_out = t_mod(torch.tensor(idx))
    m_out = m_mod(mg.tensor(idx))
    np.testing.assert_allclose(m_out.data.numpy(), t_out.detach().numpy())
    r = np.random.default_rng(3).standard_normal(t_out.shape)
    (t_out * torch.tensor(r)).sum().backward()
    (m_out * mg.tensor(r, dtype=mg.float64)).sum().backward()
    np.testing.assert_allclose(m_mod.weight.grad.data.numpy(), t_mod.weight.grad.numpy(), rtol=1e-12)


LOSSES = [
    ("CrossEntropyLoss", dict(), "class"),
    ("CrossEntropyLoss", dict(reduction="sum", label_smoothing=0.2), "class"),
    ("CrossEntropyLoss", dict(weight=[1.0, 2.0, 0.5, 1.5], ignore_index=1), "class"),
    ("CrossEntropyLoss", dict(weight=[1.0, 2.0, 0.5, 1.5], label_smoothing=0.1), "class"),
    ("NLLLoss", dict(), "class"),
    ("NLLLoss", dict(weight=[1.0, 2.0, 0.5, 1.5], reduction="none"), "class"),
    ("MSELoss", dict(), "real"),
    ("L1Loss", dict(reduction="sum"), "real"),
    ("SmoothL1Loss", dict(beta=0.5), "real"),
    ("HuberLoss", dict(delta=0.7, reduction="none"), "real"),
    ("BCELoss", dict(), "prob"),
    ("BCELoss", dict(weight=[1.0, 2.0, 0.5, 1.5]), "prob"),
    ("BCEWithLogitsLoss", dict(pos_weight=[2.0, 1.0, 0.5, 3.0]), "binary"),
    ("BCEWithLogitsLoss", dict(weight=[1.0, 2.0, 0.5, 1.5], reduction="sum"), "binary"),
]


@pytest.mark.parametrize("name, kwargs, kind", LOSSES)
def test_loss_parity(name, kwargs, kind):
    rng = np.random.default_rng(4)
    t_kw = {k: torch.tensor(v, dtype=torch.float64) if isinstance(v, list) else v for k, v in kwargs.items()}
    m_kw = {k: mg.tensor(v, dtype=mg.float64) if isinstance(v, list) else v for k, v in kwargs.items()}
    t_loss, m_loss = getattr(tnn, name)(**t_kw), getattr(nn, name)(**m_kw)
    assert repr(m_loss) == repr(t_loss)
    assert list(m_loss.state_dict()) == list(t_loss.state_dict())
    x = rng.standard_normal((5, 4))
    if kind == "class":
        y_t, y_m = torch.tensor(rng.integers(0, 4, 5)), None
        y_m = mg.tensor(y_t.numpy())
        if name == "NLLLoss":
            x = x - np.log(np.exp(x).sum(1, keepdims=True))
    elif kind == "prob":
        x = 1 / (1 + np.exp(-x))
        y = rng.random((5, 4))
        y_t, y_m = torch.tensor(y), mg.tensor(y, dtype=mg.float64)
    elif kind == "binary":
        y = (rng.random((5, 4)) > 0.5).astype(np.float64)
        y_t, y_m = torch.tensor(y), mg.tensor(y, dtype=mg.float64)
    else:
        y = rng.standard_normal((5, 4))
        y_t, y_m = torch.tensor(y), mg.tensor(y, dtype=mg.float64)
    tx = torch.tensor(x, requires_grad=True)
    mx = mg.tensor(x, dtype=mg.float64, requires_grad=True)
    t_out, m_out = t_loss(tx, y_t), m_loss(mx, y_m)
    np.testing.assert_allclose(m_out.data.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    t_out.sum().backward()
    m_out.sum().backward()
    np.testing.assert_allclose(mx.grad.data.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_mlp_parity_state_dict_and_training_steps():
    torch.manual_seed(0)
    t_net = tnn.Sequential(tnn.Linear(6, 8), tnn.ReLU(), tnn.Dropout(0.0), tnn.Linear(8, 3)).double()
    m_net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.0), nn.Linear(8, 3)).double()
    assert repr(m_net) == repr(t_net)
    assert list(m_net.state_dict()) == list(t_net.state_dict())
    _copy_state(t_net, m_net)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((10, 6))
    y = rng.integers(0, 3, 10)
    t_loss_fn, m_loss_fn = tnn.CrossEntropyLoss(), nn.CrossEntropyLoss()
    for _ in range(5):
        t_net.zero_grad()
        m_net.zero_grad()
        t_loss = t_loss_fn(t_net(torch.tensor(x)), torch.tensor(y))
        m_loss = m_loss_fn(m_net(mg.tensor(x, dtype=mg.float64)), mg.tensor(y))
        t_loss.backward()
        m_loss.backward()
        assert m_loss.item() == pytest.approx(t_loss.item(), rel=1e-10)
        t_total = torch.nn.utils.clip_grad_norm_(t_net.parameters(), 0.5)
        m_total = nn.utils.clip_grad_norm_(m_net.parameters(), 0.5)
        assert m_total.item() == pytest.approx(t_total.item(), rel=1e-10)
        with torch.no_grad():
            for p in t_net.parameters():
                p -= 0.3 * p.grad
        with mg.no_grad():
            for p in m_net.parameters():
                p.sub_(0.3 * p.grad)
    for k, v in t_net.state_dict().items():
        np.testing.assert_allclose(m_net.state_dict()[k].data.numpy(), v.numpy(), rtol=1e-9, err_msg=k)


def test_clip_grad_parity_norm_types():
    rng = np.random.default_rng(6)
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    for norm_type in (2.0, 1.0, 3.0, float("inf")):
        t_ps = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
        m_ps = [nn.Parameter(mg.zeros(*g.shape, dtype=mg.float64)) for g in grads]
        for tp, mp, g in zip(t_ps, m_ps, grads):
            tp.grad = torch.tensor(g)
            mp.grad = mg.tensor(g, dtype=mg.float64)
        t_total = torch.nn.utils.clip_grad_norm_(t_ps, 0.7, norm_type=norm_type)
        m_total = nn.utils.clip_grad_norm_(m_ps, 0.7, norm_type=norm_type)
        assert m_total.item() == pytest.approx(t_total.item(), rel=1e-12)
        for tp, mp in zip(t_ps, m_ps):
            np.testing.assert_allclose(mp.grad.data.numpy(), tp.grad.numpy(), rtol=1e-12)


def test_repr_tree_parity_nested():
    t = tnn.Sequential(tnn.Conv2d(1, 8, 3, padding=1), tnn.BatchNorm2d(8), tnn.ReLU(), tnn.MaxPool2d(2),
                       tnn.ModuleList([tnn.Linear(2, 2), tnn.Linear(2, 2), tnn.Tanh()]),
                       tnn.ModuleDict({"a": tnn.Dropout(0.25), "b": tnn.Sequential()}),
                       tnn.Flatten(), tnn.Linear(784, 10))
    m = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                      nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Tanh()]),
                      nn.ModuleDict({"a": nn.Dropout(0.25), "b": nn.Sequential()}),
                      nn.Flatten(), nn.Linear(784, 10))
    assert repr(m) == repr(t)
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in m.named_modules()] == [n for n, _ in t.named_modules()]
    assert list(m.state_dict()) == list(t.state_dict())


def test_default_init_distribution_matches_torch_bounds():
    for t_mod, m_mod in [(tnn.Linear(300, 200), nn.Linear(300, 200)),
                         (tnn.Conv2d(16, 32, 3), nn.Conv2d(16, 32, 3))]:
        fan_in, _ = tnn.init._calculate_fan_in_and_fan_out(t_mod.weight)
        bound = 1 / np.sqrt(fan_in)  # PyTorch's bound for both weight and bias
        for (name, tp), (_, mp) in zip(t_mod.named_parameters(), m_mod.named_parameters()):
            t_arr, m_arr = tp.detach().numpy(), mp.data.numpy()
            assert m_arr.dtype == np.float32 and m_arr.shape == t_arr.shape
            assert np.abs(m_arr).max() <= bound and np.abs(t_arr).max() <= bound
            if name == "weight":  # many samples: the range is filled and the spread matches
                assert np.abs(m_arr).max() > 0.98 * bound
                assert m_arr.std() == pytest.approx(t_arr.std(), rel=0.05)
