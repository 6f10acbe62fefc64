"""nn.RNN / nn.LSTM / nn.GRU traced (mg.graph.trace, mg.jit): each layer and direction is one `scan`
equation (the graph's size does not depend on the sequence length), and outputs, final states and
every gradient (input, initial states, each parameter) equal eager's bit for bit; the traced backward
of a step is one *_step_backward op reading the activations the forward scan saved; packed
sequences of different lengths still unroll; ONNX export writes a Loop."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

KINDS = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}


def _model(kind, seed=0, **kw):
    mg.manual_seed(seed)
    return KINDS[kind](3, 4, **kw)


def _inputs(m, T=5, B=2, dtype=np.float32, seed=1):
    rng = np.random.default_rng(seed)
    D = 2 if m.bidirectional else 1
    P = m.proj_size or m.hidden_size
    x = rng.standard_normal((B, T, 3) if m.batch_first else (T, B, 3)).astype(dtype)
    h0 = rng.standard_normal((m.num_layers * D, B, P)).astype(dtype)
    c0 = rng.standard_normal((m.num_layers * D, B, m.hidden_size)).astype(dtype)
    return mg.tensor(x), mg.tensor(h0), mg.tensor(c0)


def _forward_and_grads(m):
    """f(x, h0, c0) -> [output, h_n, (c_n), d x, d h0, (d c0), d every parameter]."""
    lstm = m.mode == "LSTM"
    params = list(m.parameters())

    def f(x, h0, c0):
        x, h0, c0 = (t.detach().requires_grad_() for t in (x, h0, c0))
        if lstm:
            out, (h, c) = m(x, (h0, c0))
            states, ins = [h, c], [x, h0, c0]
        else:
            out, h = m(x, h0)
            states, ins = [h], [x, h0]
        loss = (out * out).sum() + sum((s * (1.5 + k)).sum() for k, s in enumerate(states))
        return [out.detach()] + [s.detach() for s in states] + list(mg.autograd.grad(loss, ins + params))
    return f


def _same(got, want):
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype and np.array_equal(a.detach().numpy(), b.detach().numpy()), k


CONFIGS = [("LSTM", {}), ("GRU", {}), ("RNN", {}), ("RNN", dict(nonlinearity="relu")),
           ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
           ("GRU", dict(num_layers=2, bidirectional=True)),
           ("RNN", dict(num_layers=2, bidirectional=True, batch_first=True)),
           ("LSTM", dict(num_layers=2, proj_size=2)), ("GRU", dict(bias=False))]


@pytest.mark.parametrize("kind,kw", CONFIGS, ids=[f"{k}-{'-'.join(f'{a}={b}' for a, b in kw.items())}"
                                                   for k, kw in CONFIGS])
def test_traced_and_jitted_equal_eager_bitwise(kind, kw):
    m = _model(kind, **kw)
    f = _forward_and_grads(m)
    args = _inputs(m)
    want = f(*args)
    g = mg.graph.trace(f, *args)
    D = 2 if m.bidirectional else 1
    # one forward and one reverse scan per layer and direction, whatever the length
    assert g.count()["scan"] == 2 * m.num_layers * D
    assert not any(p.endswith("_step") for p in g.count())   # no step outside a scan body
    _same(g.result, want)
    _same(g.run(*args), want)
    _same(mg.jit(f)(*args), want)


def test_equation_count_does_not_depend_on_the_length():
    m = _model("LSTM", num_layers=2, bidirectional=True)
    f = _forward_and_grads(m)
    g3, g35 = (mg.graph.trace(f, *_inputs(m, T=T)) for T in (3, 35))
    assert len(g3) == len(g35) and g3.count() == g35.count()
    assert g35.count()["scan"] == 8 and str(g35).count("lstm_step ") == 4 and "length=35" in str(g35)
    # forward only: one scan per layer and direction (the eager path records 35 steps each)
    fwd = mg.graph.trace(lambda x: m(x)[0], _inputs(m, T=35)[0])
    assert fwd.count()["scan"] == 4 and len(fwd) == len(mg.graph.trace(lambda x: m(x)[0], _inputs(m, T=3)[0]))


def test_jitted_training_step_with_dropout_equals_eager():
    # .grad accumulation, dropout between layers drawn as eager draws it (outside the scans), an SGD step
    def run(jit):
        m = _model("LSTM", num_layers=2, dropout=0.5).train()
        x, h0, c0 = _inputs(m, T=4, B=3)
        opt = mg.optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            out, (h, c) = m(x, (h0, c0))
            loss = out.pow(2).mean() + h.sum() * 0.1 + c.sum() * 0.2
            loss.backward()
            opt.step()
            return loss.detach()
        fn = mg.jit(step) if jit else step
        mg.manual_seed(5)
        losses = [fn(x) for _ in range(2)]
        return losses, [p.detach().clone() for p in m.parameters()], fn, x
    want, wparams, _, _ = run(False)
    got, gparams, jitted, x = run(True)
    _same(got, want)
    _same(gparams, wparams)
    text = str(jitted.explain(x).optimized)
    assert text.count("= scan[") == 4 and "lstm_step_backward" in text and "sigmoid" not in text


def test_reverse_reads_the_saved_activations():
    # the reverse scan's body is the step's backward op alone: no recomputed forward step
    m = _model("GRU")
    f = _forward_and_grads(m)
    g = mg.graph.trace(f, *_inputs(m))
    rev = [e for e in g.eqns if e.prim == "scan"][1].args[0].body.graph
    assert "gru_step_backward" in str(rev) and "gru_step " not in str(rev)


def test_unbatched_input_and_default_states():
    m = _model("LSTM", bidirectional=True)
    x = _inputs(m)[0][:, 0]   # (T, features)

    def f(x):
        out, (h, c) = m(x)
        return out, h, c
    g = mg.graph.trace(f, x)
    assert g.count()["scan"] == 2
    _same(list(g.result), list(f(x)))


def test_packed_sequences():
    from minigrad.nn.utils.rnn import pack_padded_sequence
    m = _model("GRU", bidirectional=True)
    x = _inputs(m, T=4, B=3)[0]
    for lengths, scans in (([4, 4, 4], 2), ([4, 2, 1], 0)):   # different lengths: unrolled (the batch shrinks)
        def f(x):
            out, h = m(pack_padded_sequence(x, lengths))
            return out.data, h
        g = mg.graph.trace(f, x)
        assert g.count().get("scan", 0) == scans
        _same(list(g.run(x)), list(f(x)))


def test_eager_path_is_unchanged():
    # eagerly: one step node per time step (no scan), as before
    m = _model("LSTM")
    out, _ = m(_inputs(m, T=5)[0])
    seen, todo, names = set(), [out.grad_fn], []
    while todo:
        n = todo.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.append(type(n).__name__)
        todo.extend(f for f, _ in n.next_functions)
    assert names.count("LSTMStep") == 5 and not any("Scan" in n for n in names)


def test_second_derivative_through_a_traced_layer():
    # create_graph: the steps' Tensor-op backward (differentiable again), not the fused backward op
    m = _model("RNN", dtype=mg.float64)
    x = _inputs(m, dtype=np.float64)[0]
    w = m.weight_hh_l0

    def penalty(x):
        g, = mg.autograd.grad(m(x)[0].pow(2).sum(), w, create_graph=True)
        return mg.autograd.grad(g.pow(2).sum(), w)[0]
    g = mg.graph.trace(penalty, x)
    assert g.count()["scan"] >= 3
    np.testing.assert_allclose(g.run(x).numpy(), penalty(x).numpy(), rtol=1e-12, atol=1e-13)


def test_step_backward_op_is_not_differentiated_again():
    from minigrad.ops.recurrent import LSTMStepBackward
    with pytest.raises(RuntimeError, match="LSTMStepBackward.*not differentiated again"):
        LSTMStepBackward.backward(LSTMStepBackward(), None)


def test_onnx_export_of_a_traced_lstm_is_a_loop(tmp_path):
    onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
    ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    m = _model("LSTM", num_layers=2, bidirectional=True).eval()
    x, h0, c0 = _inputs(m)

    def f(x, h0, c0):
        out, (h, c) = m(x, (h0, c0))
        return out, h, c
    path = tmp_path / "lstm.onnx"
    mg.onnx.export(f, (x, h0, c0), path)
    model = onnx.load(str(path))
    assert [n.op_type for n in model.graph.node].count("Loop") == 4
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = sess.run(None, {i.name: a.numpy() for i, a in zip(sess.get_inputs(), (x, h0, c0))})
    with mg.no_grad():
        want = f(x, h0, c0)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-5, atol=1e-6)


def test_jit_explain_shows_the_scan_and_lengths_retrace():
    m = _model("GRU", num_layers=2)
    jitted = mg.jit(lambda x: m(x)[0])
    for T in (3, 6):   # a new length is a new trace (a shape guard), one scan per layer each time
        x = _inputs(m, T=T)[0]
        _same([jitted(x)], [m(x)[0]])
    e = mg.jit.explain(lambda x: m(x)[0], _inputs(m, T=6)[0])
    assert "= scan[" in str(e) and "length=6" in str(e) and "gru_step" in str(e) and "length=3" not in str(e)


def test_saved_graph_of_a_traced_lstm_gradient_round_trips(tmp_path):
    # graph files keep the scans with their residuals (what the reverse reads): same bits after loading
    m = _model("LSTM", num_layers=2, bidirectional=True)
    f = _forward_and_grads(m)
    args = _inputs(m)
    g = mg.graph.trace(f, *args)
    g.save(tmp_path / "lstm.mgg")
    loaded = mg.load_graph(tmp_path / "lstm.mgg", bind={f"m.{n}": p for n, p in m.named_parameters()})
    assert loaded.count()["scan"] == 8
    _same(loaded.run(*args), f(*args))
