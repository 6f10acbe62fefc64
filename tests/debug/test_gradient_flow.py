"""mg.debug.gradient_flow: per-layer and per-time-step gradient norms (checked against mg.autograd.grad),
vanishing / exploding detection through an unrolled tanh RNN and across layers, the warning (once, naming
the layer, the step and the calling line), numbers unchanged, report() and plot()."""
import sys
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
from minigrad.debug import GradientFlowWarning, gradient_flow

T, B, F, H = 16, 3, 4, 6


class TanhRNN(nn.Module):
    """h_t = tanh(W_ih x_t + W_hh h_{t-1}), h_0 = 0, over x (T, B, F); returns h_T. W_hh = scale x an
    orthogonal matrix, so the Jacobian through one step is scale x a rotation (times tanh')."""

    def __init__(self, scale, seed=0):
        super().__init__()
        self.ih = nn.Linear(F, H, dtype=mg.float64)
        self.hh = nn.Linear(H, H, bias=False, dtype=mg.float64)
        q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((H, H)))
        with mg.no_grad():
            self.hh.weight.copy_(mg.tensor(scale * q))
            self.ih.bias.zero_()

    def forward(self, x):
        h = mg.zeros(x.shape[1], H, dtype=x.dtype)
        for t in range(x.shape[0]):
            h = mg.tanh(self.ih(x[t]) + self.hh(h))
        return h


class Net(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.rnn = TanhRNN(scale)
        self.head = nn.Linear(H, 1, dtype=mg.float64)

    def forward(self, x):
        return self.head(self.rnn(x))  # CALL-rnn


def _line(marker):
    src = open(__file__).read().splitlines()
    return next(i + 1 for i, s in enumerate(src) if s.rstrip().endswith("# " + marker))


def _data(scale_x=1.0, seed=1):
    return mg.tensor(np.random.default_rng(seed).standard_normal((T, B, F)) * scale_x)


def _manual_step_norms(model, x):
    """|d loss / d x_t| by mg.autograd.grad, without the recorder."""
    x = x.detach().requires_grad_(True)
    (g,) = mg.autograd.grad(model(x).sum(), [x])
    return np.sqrt((g.numpy() ** 2).reshape(T, -1).sum(1))


def test_vanishing_through_time_is_detected_and_the_step_named():
    mg.manual_seed(0)
    model = Net(scale=0.2)
    x = _data()
    want = _manual_step_norms(model, x)
    with pytest.warns(GradientFlowWarning) as rec:
        with gradient_flow(model, time_dims={"rnn": 0}) as flow:
            model(x).sum().backward()
    msgs = [str(w.message) for w in rec if w.category is GradientFlowWarning]
    assert len(msgs) == 1, msgs
    lf = next(l for l in flow.layers.values() if l.name == "rnn")
    np.testing.assert_allclose(lf.step_norms, want, rtol=1e-12)
    assert lf.time_dim == 0 and lf.step_norms.shape == (T,)
    assert lf.step_norms[0] < 1e-3 * lf.step_norms[-1]          # it vanishes toward the early steps
    f = next(f for f in flow.findings if f.kind == "vanishing" and f.layer == "rnn")
    # the step named: the latest t whose norm is below 1e-3 x the last step's
    below = np.flatnonzero(want < 1e-3 * want[-1])
    assert f.step == below.max() and f"step {f.step}" in msgs[0]
    assert "vanishing" in msgs[0] and "'rnn'" in msgs[0] and "TanhRNN" in msgs[0]
    assert f"test_gradient_flow.py:{_line('CALL-rnn')}" in msgs[0]
    assert rec[0].filename == __file__ and rec[0].lineno == _line("CALL-rnn")


def test_exploding_through_time_is_detected():
    mg.manual_seed(0)
    model = Net(scale=2.0)
    x = _data(scale_x=1e-6)         # tiny inputs: the recurrence stays in tanh's linear range
    want = _manual_step_norms(model, x)
    with pytest.warns(GradientFlowWarning, match=r"gradients exploding: layer 'rnn' \(TanhRNN.*step \d+"):
        with gradient_flow(model, time_dims={"rnn": 0}) as flow:
            model(x).sum().backward()
    lf = flow.layers[id(model.rnn)]
    np.testing.assert_allclose(lf.step_norms, want, rtol=1e-12)
    assert lf.step_norms[0] > 1e3 * lf.step_norms[-1]          # 2^15 through 15 steps, nearly
    assert [f.kind for f in flow.findings if f.layer == "rnn"] == ["exploding"]


def test_the_recorder_changes_no_number_and_warns_once():
    mg.manual_seed(0)
    model = Net(scale=0.2)
    x = _data()
    out0 = model(x)
    out0.sum().backward()
    grads0 = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    with pytest.warns(GradientFlowWarning) as rec:
        with gradient_flow(model, time_dims={model.rnn: 0}) as flow:
            for _ in range(3):       # three passes: one warning
                model.zero_grad()
                out = model(x)
                out.sum().backward()
    assert sum(w.category is GradientFlowWarning for w in rec) == 1
    assert flow._passes == 3
    np.testing.assert_array_equal(out.detach().numpy(), out0.detach().numpy())
    for p, g in zip(model.parameters(), grads0):
        np.testing.assert_array_equal(p.grad.numpy(), g)
    # the hooks are gone after the block
    assert not any(m._forward_pre_hooks or m._forward_hooks for m in model.modules())


class RNN(nn.Module):
    """Looks like nn.RNN to the recorder (its class name, batch_first): found without time_dims."""

    def __init__(self, scale):
        super().__init__()
        self.batch_first = True
        self.core = TanhRNN(scale)

    def forward(self, x):             # (B, T, F)
        return self.core(x.transpose(0, 1))


def test_recurrent_modules_are_found_by_themselves_batch_first():
    mg.manual_seed(0)
    model = nn.Sequential(RNN(0.9), nn.Linear(H, 1, dtype=mg.float64))
    x = _data().transpose(0, 1).contiguous()          # (B, T, F)
    xx = x.detach().requires_grad_(True)
    (g,) = mg.autograd.grad(model(xx).sum(), [xx])
    want = np.sqrt((g.numpy() ** 2).sum(axis=(0, 2)))
    with gradient_flow(model, warn=False) as flow:
        model(x).sum().backward()
    lf = flow.layers[id(model[0])]
    assert lf.time_dim == 1
    np.testing.assert_allclose(lf.step_norms, want, rtol=1e-12)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_nn_recurrent_layers_per_time_step(kind, batch_first):
    # nn.RNN / nn.LSTM / nn.GRU are found without time_dims, their time dimension read from
    # batch_first; the per-step norms are |d loss / d x_t| as mg.autograd.grad computes them
    mg.manual_seed(0)
    layer = getattr(nn, kind)(F, H, num_layers=2, batch_first=batch_first, dtype=mg.float64)
    x = mg.randn(B, T, F, dtype=mg.float64) if batch_first else mg.randn(T, B, F, dtype=mg.float64)
    td = 1 if batch_first else 0

    def loss_of(out):          # the last step's output only: every path back runs through the recurrence
        return (out[0][:, -1] if batch_first else out[0][-1]).sum()
    xx = x.detach().requires_grad_(True)
    (g,) = mg.autograd.grad(loss_of(layer(xx)), [xx])
    want = np.sqrt((np.moveaxis(g.numpy(), td, 0) ** 2).reshape(T, -1).sum(1))
    with gradient_flow(layer, warn=False) as flow:
        loss_of(layer(x)).backward()
    lf = flow.layers[id(layer)]
    assert lf.time_dim == td and lf.step_norms.shape == (T,)
    np.testing.assert_allclose(lf.step_norms, want, rtol=1e-12)
    assert lf.step_norms[0] < lf.step_norms[-1]      # the default initialisation contracts


class _Readout(nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn, self.head = rnn, nn.Linear(rnn.hidden_size, 1)

    def forward(self, x):
        out, _ = self.rnn(x)  # CALL-nn-rnn
        return self.head(out[-1])


def test_nn_rnn_vanishes_over_a_long_sequence_and_an_open_lstm_does_not():
    # docs/sequence-models.md's comparison: a tanh nn.RNN over 100 steps, read out at the last step,
    # loses the gradient toward the early steps (warned, the step named); an LSTM whose forget gate
    # is open (bias 3) carries it
    mg.manual_seed(0)
    x = mg.randn(100, 4, 8)
    mg.manual_seed(0)
    net = _Readout(nn.RNN(8, 32))
    xx = x.detach().requires_grad_(True)
    (g,) = mg.autograd.grad(net(xx).sum(), [xx])
    want = np.sqrt((g.numpy().astype(np.float64) ** 2).reshape(100, -1).sum(1))
    with pytest.warns(GradientFlowWarning) as rec:
        with gradient_flow(net) as flow:
            net(x).sum().backward()
    s = flow.layers[id(net.rnn)].step_norms
    np.testing.assert_allclose(s, want, rtol=1e-5)    # float32 gradients, norms in float64
    assert s[0] < 1e-20 * s[-1]
    f = next(f for f in flow.findings if f.layer == "rnn")
    assert f.kind == "vanishing" and f.step == np.flatnonzero(want < 1e-3 * want[-1]).max()
    msg = str(rec[0].message)
    assert "(RNN, called at" in msg and f"step {f.step}" in msg
    assert rec[0].lineno == _line("CALL-nn-rnn")

    mg.manual_seed(0)
    lstm = nn.LSTM(8, 32)
    with mg.no_grad():
        lstm.bias_hh_l0[32:64] = 3.0                  # the forget gate's bias
    net = _Readout(lstm)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GradientFlowWarning)
        with gradient_flow(net) as flow:
            net(x).sum().backward()
    s = flow.layers[id(lstm)].step_norms
    assert flow.findings == [] and s[0] > 1e-1 * s[-1]


def test_mlp_per_layer_norms_match_autograd():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    model = model.double()
    x = mg.randn(5, 4, dtype=mg.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # a healthy MLP: no warning
        with gradient_flow(model) as flow:
            (model(x) ** 2).sum().backward()
    assert flow.findings == []
    # by hand: the outputs of each layer and the gradients of the loss with respect to them
    outs, h = [], x
    for m in model:
        h = m(h)
        outs.append(h)
    gs = mg.autograd.grad((h ** 2).sum(), outs)
    names = [str(i) for i in range(5)]
    for name, m, g in zip(names, model, gs):
        lf = flow.layers[id(m)]
        assert lf.name == name and lf.calls == 1
        np.testing.assert_allclose(lf.output_grad_norm, np.linalg.norm(g.numpy()), rtol=1e-12)
        ps = list(m.parameters())
        if ps:
            want = np.sqrt(sum((p.grad.numpy() ** 2).sum() for p in ps))
            np.testing.assert_allclose(lf.param_grad_norm, want, rtol=1e-12)
        else:
            assert lf.param_grad_norm is None
    text = flow.report()
    assert "findings: none" in text and str(flow) == text
    for name in names:
        assert f"\n{name} " in text


def test_mlp_vanishing_and_exploding_across_layers():
    mg.manual_seed(0)
    layers = []
    for _ in range(8):
        lin = nn.Linear(16, 16, dtype=mg.float64)
        with mg.no_grad():
            lin.weight.mul_(0.05)
        layers += [lin, nn.Tanh()]
    model = nn.Sequential(*layers)
    x = mg.randn(4, 16, dtype=mg.float64)
    with pytest.warns(GradientFlowWarning, match=r"vanishing: layer '0' \(Linear"):
        with gradient_flow(model) as flow:
            model(x).sum().backward()
    assert {f.layer for f in flow.findings if f.kind == "vanishing"} >= {"0", "2"}
    big = nn.Linear(4, 1, dtype=mg.float64)
    with pytest.warns(GradientFlowWarning, match=r"exploding: layer '\(Linear\)'.*above 100"):
        with gradient_flow(big, explode_above=100.0):
            (big(mg.randn(4, 4, dtype=mg.float64)) * 1e4).sum().backward()
    with pytest.warns(GradientFlowWarning, match="exploding.*nan"):
        with gradient_flow(big):
            (big(mg.randn(4, 4, dtype=mg.float64)) * float("nan")).sum().backward()


def test_thresholds_are_parameters_and_autograd_grad_is_seen_at_the_end():
    mg.manual_seed(0)
    model = Net(scale=0.2)
    x = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with gradient_flow(model, time_dims={"rnn": 0}, vanish_ratio=1e-30, vanish_below=0.0) as flow:
            model(x).sum().backward()
    assert flow.findings == []
    with pytest.warns(GradientFlowWarning, match="vanishing"):
        with gradient_flow(model, time_dims={"rnn": 0}) as flow:
            xx = x.detach().requires_grad_(True)
            mg.autograd.grad(model(xx).sum(), [xx])          # no .backward(): checked when the block ends
    assert flow.layers[id(model.rnn)].step_norms is not None


def test_errors():
    with pytest.raises(TypeError, match="nn.Module"):
        gradient_flow(lambda x: x)
    with pytest.raises(ValueError, match="not a module of the model"):
        gradient_flow(Net(0.5), time_dims={"nope": 0})
    assert "nothing recorded" in gradient_flow(Net(0.5)).report()


def test_plot():
    pytest.importorskip("matplotlib")
    mg.manual_seed(0)
    model = Net(scale=0.5)
    with gradient_flow(model, time_dims={"rnn": 0}, warn=False) as flow:
        model(_data()).sum().backward()
    fig = flow.plot()
    assert len(fig.axes) == 2
    assert fig.axes[0].get_yscale() == "log" and len(fig.axes[1].lines) == 1
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), flow.layers[id(model.rnn)].step_norms)


def test_plot_without_matplotlib_says_what_to_install(monkeypatch):
    mg.manual_seed(0)
    model = Net(scale=0.5)
    with gradient_flow(model, warn=False) as flow:
        model(_data()).sum().backward()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        flow.plot()
