"""nn.RNN / nn.LSTM / nn.GRU and their cells against PyTorch: outputs, final states, the gradients of the
input, the initial states and every parameter (float64 to 1e-10; float32 to the bound stated), state_dict
interchange both ways, packed sequences with unsorted lengths, unbatched input, dropout between layers,
double backward, and the errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn.utils import rnn as mrnn

torch = pytest.importorskip("torch")
tnn = torch.nn

RTOL, ATOL = 1e-10, 1e-12   # float64


def _pair(kind, *args, dtype=torch.float64, **kw):
    """(torch module, minigrad module) of the same class and arguments, the torch weights copied in."""
    torch.manual_seed(0)
    t = getattr(tnn, kind)(*args, **kw).to(dtype)
    m = getattr(nn, kind)(*args, **kw, dtype=mg.float32 if dtype == torch.float32 else mg.float64)
    m.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, m


def _leaf(a, lib):
    return torch.tensor(a, requires_grad=True) if lib == "torch" else mg.tensor(a, requires_grad=True)


def _flat(out):
    """The tensors of a recurrent module's result, in order: output, h_n (, c_n)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    if isinstance(out, (torch.nn.utils.rnn.PackedSequence, mrnn.PackedSequence)):
        return [out.data]
    return [out]


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _check(t_mod, m_mod, inputs, rtol=RTOL, atol=ATOL, call=None):
    """Run both modules on the same arrays (each a leaf), backward a fixed random weighting of every
    output, and compare outputs, input gradients and every parameter's gradient."""
    call = call or (lambda mod, xs: mod(*xs))
    tx, mx = _leaves_of(inputs, "torch"), _leaves_of(inputs, "mg")
    t_out, m_out = _flat(call(t_mod, tx)), _flat(call(m_mod, mx))
    assert len(t_out) == len(m_out)
    rng = np.random.default_rng(1)
    t_loss = m_loss = 0
    for a, b in zip(t_out, m_out):
        assert tuple(a.shape) == tuple(b.shape)
        assert a.dtype == torch.float64 or b.dtype == mg.float32
        np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol)
        r = rng.standard_normal(tuple(a.shape))
        t_loss = t_loss + (a * torch.tensor(r, dtype=a.dtype)).sum()
        m_loss = m_loss + (b * mg.tensor(r, dtype=b.dtype)).sum()
    t_loss.backward()
    m_loss.backward()
    for a, b in zip(_leaves(tx), _leaves(mx)):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=rtol, atol=atol)
    tp, mp = dict(t_mod.named_parameters()), dict(m_mod.named_parameters())
    assert list(tp) == list(mp)
    for k in tp:
        np.testing.assert_allclose(mp[k].grad.numpy(), tp[k].grad.numpy(), rtol=rtol, atol=atol, err_msg=k)
    return t_out, m_out


def _leaves_of(xs, lib):
    """The arrays as leaf tensors of lib (a list of arrays -- the LSTM's (h, c) -- becomes a tuple)."""
    return [tuple(_leaves_of(x, lib)) if isinstance(x, list) else (_leaf(x, lib) if isinstance(x, np.ndarray) else x)
            for x in xs]


def _leaves(xs):
    out = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            out += _leaves(x)
        elif isinstance(x, (torch.Tensor, mg.Tensor)) and x.requires_grad:
            out.append(x)
    return out


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


CONFIGS = [
    ("RNN", dict(num_layers=2, nonlinearity="tanh")),
    ("RNN", dict(nonlinearity="relu", bidirectional=True, batch_first=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3, batch_first=True)),
    ("LSTM", dict(bias=False)),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("GRU", dict(bias=False)),
]


@pytest.mark.parametrize("kind,kw", CONFIGS, ids=[f"{k}-{'-'.join(f'{a}={b}' for a, b in kw.items())}"
                                                  for k, kw in CONFIGS])
def test_matches_torch_with_initial_state(kind, kw):
    I, H, T, B = 4, 5, 6, 3
    t, m = _pair(kind, I, H, **kw)
    D, L = 1 + kw.get("bidirectional", False), kw.get("num_layers", 1)
    P = kw.get("proj_size", 0) or H
    x = _rand(B, T, I) if kw.get("batch_first") else _rand(T, B, I)
    h0 = _rand(L * D, B, P, seed=2)
    hx = [h0, _rand(L * D, B, H, seed=3)] if kind == "LSTM" else h0
    _check(t, m, [x, hx])


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_matches_torch_without_initial_state_and_in_eval(kind):
    t, m = _pair(kind, 3, 4, num_layers=2)
    t.eval(), m.eval()
    _check(t, m, [_rand(5, 2, 3)])


def test_float32_within_bound():
    # float32 throughout (the parameters, the states, the gradients): agreement to 2e-5 relative
    # (about 170 ulps after 8 steps of a 2-layer LSTM; observed ~1e-6)
    t, m = _pair("LSTM", 6, 8, num_layers=2, dtype=torch.float32)
    x = _rand(8, 4, 6).astype(np.float32)
    _, m_out = _check(t, m, [x], rtol=2e-5, atol=2e-6)
    assert all(o.dtype == mg.float32 for o in m_out)


def test_parameters_names_shapes_order_and_init_as_torch():
    torch.manual_seed(0)
    t = tnn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=2)
    m = nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=2)
    assert [(k, tuple(v.shape)) for k, v in t.named_parameters()] == \
           [(k, tuple(v.shape)) for k, v in m.named_parameters()]
    assert m._flat_weights_names == t._flat_weights_names
    assert [[tuple(p.shape) for p in ps] for ps in m.all_weights] == \
           [[tuple(p.shape) for p in ps] for ps in t.all_weights]
    assert repr(m) == repr(t)
    bound = 1 / np.sqrt(6)
    for k, p in m.named_parameters():
        a = p.detach().numpy()
        assert np.all(np.abs(a) <= bound) and a.std() > bound / 4, k
    m.flatten_parameters()  # a no-op
    for kind in ("RNN", "GRU"):
        assert [k for k, _ in getattr(nn, kind)(2, 3, bias=False, bidirectional=True).named_parameters()] == \
               [k for k, _ in getattr(tnn, kind)(2, 3, bias=False, bidirectional=True).named_parameters()]
    assert repr(nn.GRU(2, 3, 2, batch_first=True, dropout=0.5)) == repr(tnn.GRU(2, 3, 2, batch_first=True,
                                                                                 dropout=0.5))


def test_state_dict_interchange_both_ways():
    x = _rand(4, 2, 3)
    m = nn.GRU(3, 5, num_layers=2, bidirectional=True, dtype=mg.float64)
    t = tnn.GRU(3, 5, num_layers=2, bidirectional=True).double()
    t.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})  # mg -> torch
    np.testing.assert_allclose(m(mg.tensor(x))[0].detach().numpy(), t(torch.tensor(x))[0].detach().numpy(),
                               rtol=RTOL, atol=ATOL)
    t2, m2 = _pair("LSTM", 3, 5, proj_size=2)  # torch -> mg (as every test here)
    np.testing.assert_allclose(m2(mg.tensor(x))[1][0].detach().numpy(), t2(torch.tensor(x))[1][0].detach().numpy(),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(kind):
    t, m = _pair(kind, 3, 4, num_layers=2, bidirectional=True)
    hx = [_rand(4, 4, seed=1), _rand(4, 4, seed=2)] if kind == "LSTM" else _rand(4, 4, seed=1)
    t_out, m_out = _check(t, m, [_rand(5, 3), hx])
    assert tuple(m_out[0].shape) == (5, 8) and tuple(m_out[1].shape) == (4, 4)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_unsorted_lengths_match_torch(kind, bidirectional):
    lengths = [3, 5, 1, 5, 2]
    T, B, I, H = 5, 5, 3, 4
    extra = dict(proj_size=3) if kind == "LSTM" else {}   # the LSTM with a projection of h
    t, m = _pair(kind, I, H, num_layers=2, bidirectional=bidirectional, batch_first=True, **extra)
    D = 1 + bidirectional
    x = _rand(B, T, I)
    h0 = _rand(2 * D, B, extra.get("proj_size", H), seed=2)
    hx = [h0, _rand(2 * D, B, H, seed=3)] if kind == "LSTM" else h0

    def call(mod, xs):
        lib = torch if mod is t else mg
        utils = torch.nn.utils.rnn if mod is t else mrnn
        packed = utils.pack_padded_sequence(xs[0], lengths, batch_first=True, enforce_sorted=False)
        out, h = mod(packed, xs[1])
        assert isinstance(out, utils.PackedSequence)
        padded, lens = utils.pad_packed_sequence(out, batch_first=True)
        assert list(lens.tolist()) == lengths
        return padded, h, lib
    _check(t, m, [x, hx], call=lambda mod, xs: call(mod, xs)[:2])


def test_packed_equals_padded_where_the_sequences_run():
    # unidirectional: a sequence's outputs do not depend on what follows it, so the packed run gives the
    # padded run's outputs at the valid steps, and h_n at each sequence's own last step
    lengths = [2, 4, 3]
    m = nn.LSTM(3, 4, num_layers=2, dtype=mg.float64)
    x = mg.tensor(_rand(4, 3, 3))
    out_pad, (h_pad, _) = m(x)
    out, (h, c) = m(mrnn.pack_padded_sequence(x, lengths, enforce_sorted=False))
    padded, _ = mrnn.pad_packed_sequence(out, padding_value=-7.0)
    for b, n in enumerate(lengths):
        np.testing.assert_allclose(padded.detach().numpy()[:n, b], out_pad.detach().numpy()[:n, b],
                                   rtol=RTOL, atol=ATOL)
        assert np.all(padded.detach().numpy()[n:, b] == -7.0)
        np.testing.assert_allclose(h.detach().numpy()[-1, b], out_pad.detach().numpy()[n - 1, b], rtol=RTOL, atol=ATOL)


def test_double_backward_matches_torch():
    t, m = _pair("LSTM", 2, 3, num_layers=2)
    x = _rand(3, 2, 2)
    res = []
    for mod, lib in ((t, torch), (m, mg)):
        xx = _leaf(x, "torch" if lib is torch else "mg")
        out, (h, c) = mod(xx)
        loss = (out * out).sum() + (c * h).sum()
        params = list(mod.parameters())
        grads = lib.autograd.grad(loss, [xx] + params, create_graph=True)
        gg = sum((g * g).sum() for g in grads)
        gg.backward()
        res.append([xx.grad.numpy()] + [p.grad.numpy() for p in params])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("kind", ["RNN", "GRU"])
def test_double_backward_rnn_gru(kind):
    t, m = _pair(kind, 2, 3)
    x = _rand(3, 2, 2)
    res = []
    for mod, lib in ((t, torch), (m, mg)):
        xx = _leaf(x, "torch" if lib is torch else "mg")
        out, h = mod(xx)
        g, = lib.autograd.grad((out * out).sum(), [xx], create_graph=True)
        (g * g).sum().backward()
        res.append([xx.grad.numpy()] + [p.grad.numpy() for p in mod.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-11)


# -- dropout -------------------------------------------------------------------------------------------
def test_dropout_in_eval_and_zero_dropout_equal_torch():
    t, m = _pair("LSTM", 3, 4, num_layers=3, dropout=0.5)
    t.eval(), m.eval()
    _check(t, m, [_rand(4, 2, 3)])
    t0, m0 = _pair("GRU", 3, 4, num_layers=2, dropout=0.0)  # training mode, no dropout
    _check(t0, m0, [_rand(4, 2, 3)])


def test_dropout_one_in_training_equals_torch():
    # p = 1 zeroes every layer's output but the last: deterministic, so PyTorch must agree
    t, m = _pair("LSTM", 3, 4, num_layers=2, dropout=1.0, bidirectional=True)
    _check(t, m, [_rand(4, 2, 3)])


def test_dropout_mask_only_between_layers():
    # the 2-layer module equals layer 1, F.dropout, layer 2 under the same generator state: the mask is
    # drawn once between the layers and never after the last
    m = nn.GRU(3, 4, num_layers=2, dropout=0.5, dtype=mg.float64)
    l1, l2 = nn.GRU(3, 4, dtype=mg.float64), nn.GRU(4, 4, dtype=mg.float64)
    sd = m.state_dict()
    l1.load_state_dict({k: v for k, v in sd.items() if k.endswith("l0")})
    l2.load_state_dict({k.replace("l1", "l0"): v for k, v in sd.items() if k.endswith("l1")})
    x = mg.tensor(_rand(5, 2, 3))
    mg.manual_seed(3)
    out, h = m(x)
    mg.manual_seed(3)
    mid, h1 = l1(x)
    dropped = nn.functional.dropout(mid, 0.5, True)
    out2, h2 = l2(dropped)
    assert np.any(dropped.detach().numpy() == 0) and not np.any(out.detach().numpy() == 0)
    np.testing.assert_array_equal(out.detach().numpy(), out2.detach().numpy())
    np.testing.assert_array_equal(h.detach().numpy(), np.concatenate([h1.detach().numpy(), h2.detach().numpy()]))
    m.eval()
    assert not np.array_equal(m(x)[0].detach().numpy(), out.detach().numpy())


def test_dropout_with_one_layer_warns_as_torch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(2, 3, dropout=0.3)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.GRU(2, 3, dropout=1.5)


# -- cells ---------------------------------------------------------------------------------------------
CELLS = [("RNNCell", dict()), ("RNNCell", dict(nonlinearity="relu", bias=False)), ("LSTMCell", dict()),
         ("GRUCell", dict()), ("GRUCell", dict(bias=False))]


@pytest.mark.parametrize("kind,kw", CELLS, ids=[f"{k}-{kw}" for k, kw in CELLS])
def test_cells_match_torch(kind, kw):
    t, m = _pair(kind, 4, 5, **kw)
    hx = [_rand(3, 5, seed=1), _rand(3, 5, seed=2)] if kind == "LSTMCell" else _rand(3, 5, seed=1)
    _check(t, m, [_rand(3, 4), hx])
    for mod in (t, m):
        mod.zero_grad()
    hx1 = [_rand(5, seed=1), _rand(5, seed=2)] if kind == "LSTMCell" else _rand(5, seed=1)
    _check(t, m, [_rand(4), hx1])      # unbatched
    for mod in (t, m):
        mod.zero_grad()
    _check(t, m, [_rand(2, 4)])        # no state given
    assert repr(m) == repr(t)


def test_cell_sequence_equals_the_layer():
    # the cell run step by step gives the one-layer module's outputs (the same weights)
    lstm = nn.LSTM(3, 4, dtype=mg.float64)
    cell = nn.LSTMCell(3, 4, dtype=mg.float64)
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = mg.tensor(_rand(5, 2, 3))
    out, (h_n, c_n) = lstm(x)
    h = c = mg.zeros(2, 4, dtype=mg.float64)
    for t_ in range(5):
        h, c = cell(x[t_], (h, c))
        np.testing.assert_allclose(h.detach().numpy(), out.detach().numpy()[t_], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(c.detach().numpy(), c_n.detach().numpy()[0], rtol=RTOL, atol=ATOL)


# -- errors --------------------------------------------------------------------------------------------
def _both_raise(t_call, m_call, exc, match):
    with pytest.raises(exc):
        t_call()
    with pytest.raises(exc, match=match):
        m_call()


def test_errors_name_the_module_and_shapes():
    t, m = _pair("LSTM", 4, 5, num_layers=2)
    xt, xm = torch.zeros(3, 2, 6, dtype=torch.float64), mg.zeros(3, 2, 6, dtype=mg.float64)
    _both_raise(lambda: t(xt), lambda: m(xm), RuntimeError,
                r"LSTM: input.size\(-1\) must be equal to input_size. Expected 4, got 6 \(input of shape \(3, 2, 6\)\)")
    xt, xm = torch.zeros(3, 2, 4, dtype=torch.float64), mg.zeros(3, 2, 4, dtype=mg.float64)
    h_bad = (torch.zeros(2, 3, 5, dtype=torch.float64), torch.zeros(2, 2, 5, dtype=torch.float64))
    hm_bad = (mg.zeros(2, 3, 5, dtype=mg.float64), mg.zeros(2, 2, 5, dtype=mg.float64))
    _both_raise(lambda: t(xt, h_bad), lambda: m(xm, hm_bad), RuntimeError,
                r"LSTM: Expected hidden\[0\] size \(2, 2, 5\), got \(2, 3, 5\)")
    _both_raise(lambda: t(torch.zeros(2, 2, 2, 4, dtype=torch.float64)),
                lambda: m(mg.zeros(2, 2, 2, 4, dtype=mg.float64)), ValueError,
                r"LSTM: Expected input to be 2D or 3D, got 4D instead")
    hx2 = (torch.zeros(2, 5, dtype=torch.float64),) * 2
    _both_raise(lambda: t(xt, hx2), lambda: m(xm, (mg.zeros(2, 5, dtype=mg.float64),) * 2), RuntimeError,
                r"LSTM: For batched 3-D input, hx and cx should also be 3-D but got \(2-D, 2-D\) tensors")
    tg, mgru = _pair("GRU", 4, 5)
    _both_raise(lambda: tg(xt, torch.zeros(1, 5, dtype=torch.float64)),
                lambda: mgru(xm, mg.zeros(1, 5, dtype=mg.float64)), RuntimeError,
                r"GRU: For batched 3-D input, hx should also be 3-D but got 2-D tensor")
    _both_raise(lambda: tg(xt.float()), lambda: mgru(xm.float()), ValueError,
                r"GRU: RNN input dtype \(float32\) does not match weight dtype \(float64\)")
    tc, mc = _pair("GRUCell", 4, 5)
    _both_raise(lambda: tc(torch.zeros(2, 3, dtype=torch.float64)), lambda: mc(mg.zeros(2, 3, dtype=mg.float64)),
                RuntimeError, r"GRUCell: input has inconsistent input_size: got 3 expected 4")
    _both_raise(lambda: tc(torch.zeros(2, 4, dtype=torch.float64), torch.zeros(3, 5, dtype=torch.float64)),
                lambda: mc(mg.zeros(2, 4, dtype=mg.float64), mg.zeros(3, 5, dtype=mg.float64)),
                RuntimeError, r"GRUCell: Input batch size 2 doesn't match hidden batch size 3")
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.RNN(3, 4, 2, "relu")  # nonlinearity as the 4th positional argument, as PyTorch
    assert nn.RNN(3, 4, 2, "relu").nonlinearity == "relu"


def test_one_node_per_time_step():
    # the recurrence is one fused node per step (and the input projection one GEMM for all steps)
    m = nn.LSTM(3, 4, dtype=mg.float64)
    out, (h, c) = m(mg.tensor(_rand(6, 2, 3), requires_grad=True))
    names, seen, todo = [], set(), [h.grad_fn]
    while todo:
        n = todo.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        names.append(n.name())
        todo += [f for f, _ in n.next_functions]
    assert sum(nm.startswith("LSTMStep") for nm in names) == 6, names
    assert sum(nm.startswith("Linear") or nm.startswith("Addmm") for nm in names) == 1, names


# -- transforms: forward mode, vmap, per-sample gradients ------------------------------------------
def test_forward_mode_through_a_packed_bidirectional_lstm():
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=mg.float64)
    for p in m.parameters():
        p.requires_grad_(False)
    x, v = _rand(5, 2, 3), _rand(5, 2, 3, seed=1)

    def f(t):
        return mrnn.pad_packed_sequence(m(mrnn.pack_padded_sequence(t, [3, 5], enforce_sorted=False))[0])[0]
    _, tan = mg.func.jvp(f, (mg.tensor(x),), (mg.tensor(v),))
    eps = 1e-6
    fd = (f(mg.tensor(x + eps * v)).numpy() - f(mg.tensor(x - eps * v)).numpy()) / (2 * eps)
    np.testing.assert_allclose(tan.numpy(), fd, atol=1e-8)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_vmap_and_per_sample_gradients_run_the_batching_rules(kind):
    # vmap over a module (shared weights: the vmap batch folded into the step's rows) and over grad
    # (per-sample weights: the step's composite), with no loop fallback (its warning is an error here)
    from minigrad.func import functional_call, grad, vmap
    m = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True, dtype=mg.float64)
    x = _rand(5, 2, 3)
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, xb):
        return functional_call(m, p, (xb.unsqueeze(1),))[0].pow(2).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = vmap(grad(loss), in_dims=(None, 1))(params, mg.tensor(x))
        out = vmap(lambda xb: functional_call(m, params, (xb,))[0], in_dims=1)(mg.tensor(x[:, :, None]))
    for j in range(2):
        g0 = grad(loss)(params, mg.tensor(x[:, j]))
        for k in g0:
            np.testing.assert_allclose(g[k].numpy()[j], g0[k].numpy(), rtol=RTOL, atol=ATOL, err_msg=k)
        np.testing.assert_allclose(out.numpy()[j], functional_call(m, params, (mg.tensor(x[:, j:j + 1]),))[0]
                                   .detach().numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("kind,kw", [("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
                                     ("GRU", dict(num_layers=2, bidirectional=True)),
                                     ("RNN", dict(nonlinearity="relu"))])
def test_onnx_export_of_the_traced_module(kind, kw):
    # one Loop per layer and direction, the step op lowered to its composite (MatMul, Slice, Sigmoid,
    # Tanh, ...) as its body: onnxruntime agrees
    onnx_ = pytest.importorskip("onnx", reason="the onnx extra is not installed")
    ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    del onnx_
    m = getattr(nn, kind)(3, 4, **kw).eval()
    x = mg.tensor(_rand(5, 2, 3).astype(np.float32))

    def fn(x):
        out, h = m(x)
        return out, (h[0] if kind == "LSTM" else h)
    model = mg.onnx.to_model(mg.graph.trace(fn, x))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})
    for g, w in zip(got, fn(x)):
        np.testing.assert_allclose(g, w.detach().numpy(), rtol=1e-5, atol=1e-6)   # float32, ~10 ulps
