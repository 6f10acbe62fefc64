"""The gradient doctor: one test per mistake of the twelve, each asserting that the diagnosis names
the cause and this file's line; anomaly mode; no false alarms on a normal training loop; and no
extra work on the op path while the doctor is idle."""
import inspect
import sys
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.debug import GradientMistakeWarning

nn = mg.nn
HERE = __file__.rsplit("/", 1)[-1]


def line_of(marker):
    """The line number in this file of the source line containing `marker` (a unique comment)."""
    src = inspect.getsource(sys.modules[__name__]).splitlines()
    hits = [i + 1 for i, l in enumerate(src) if l.rstrip().endswith("# " + marker)]
    assert len(hits) == 1, marker
    return hits[0]


def where(marker):
    return f"{HERE}:{line_of(marker)}"


def mlp():
    mg.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))


def data():
    mg.manual_seed(1)
    return mg.randn(8, 3), mg.randn(8, 1)


def watched_warnings(fn, **kw):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with mg.debug.watch(**kw) as w:
            fn()
    return [str(r.message) for r in rec if issubclass(r.category, GradientMistakeWarning)], w


# -- 1, 2: the graph cut by detach() / no_grad --------------------------------------------------
def test_1_detach_named_in_error_and_explain():
    model, (x, y) = mlp(), data()
    with mg.debug.watch():
        h = model[1](model[0](x))
        out = model[2](h.detach())  # MARK-detach
        loss = ((out - y) ** 2).mean()
        loss.backward()
    report = mg.debug.explain(loss, model)
    f = report["0.weight"]
    assert f.status == "missing" and f.mistake == 1
    assert "detach()" in f.cause and where("MARK-detach") in f.cause
    assert report["2.weight"].status == "ok"
    # always on, outside a watch: backward on the detached tensor itself names the line
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    d = w.detach()  # MARK-detach-direct
    with pytest.raises(RuntimeError, match=r"\.detach\(\) at .*" + where("MARK-detach-direct")):
        d.sum().backward() if False else d.backward(mg.ones(2))
    # ... and on a result computed from it outside any watch or no_grad, the detached tensor not
    # kept in a variable (the error used to guess from the caller's locals)
    with pytest.raises(RuntimeError, match=r"\.detach\(\) at .*" + where("MARK-detach-chain")):
        ((w.detach().exp() * 2 + 1).sum()).backward()  # MARK-detach-chain


def test_explain_says_when_a_grad_is_left_by_an_earlier_backward():
    # issue 32 item 9: the first layer's .grad came from the previous step's backward; this loss is
    # cut by detach() and cannot have written it, yet explain() reported it 'ok'
    model, (x, y) = mlp(), data()
    ((model(x) - y) ** 2).mean().backward()  # an earlier step: every parameter gets a gradient
    with mg.debug.watch():
        out = model[2](model[1](model[0](x)).detach())  # MARK-stale-detach
        loss = ((out - y) ** 2).mean()
        loss.backward()
    report = mg.debug.explain(loss, model)
    f = report["0.weight"]
    assert model[0].weight.grad is not None and f.status == "stale"
    assert "left by an earlier backward()" in f.cause and "zero_grad()" in f.cause
    assert "detach()" in f.cause and where("MARK-stale-detach") in f.cause
    assert report["2.weight"].status == "ok"
    assert "0.weight: STALE GRADIENT (from an earlier backward)" in str(report)
    # cleared as it should be: the same cut is reported missing, as before
    model.zero_grad()
    loss = ((model[2](model[1](model[0](x)).detach()) - y) ** 2).mean()
    loss.backward()
    assert mg.debug.explain(loss, model)["0.weight"].status == "missing"


def test_2_no_grad_named_in_error_and_explain():
    model, (x, y) = mlp(), data()
    with mg.no_grad():  # MARK-nograd
        out = model(x)
    loss = ((out - y) ** 2).mean()
    with pytest.raises(RuntimeError, match=r"no_grad \(entered at .*" + where("MARK-nograd")):
        loss.backward()
    with mg.debug.watch():
        with mg.no_grad():  # MARK-nograd-watch
            h = model[0](x)
        loss = (model[2](model[1](h)) ** 2).mean()
        loss.backward()
    f = mg.debug.explain(loss, model)["0.bias"]
    assert f.status == "missing" and f.mistake == 2 and where("MARK-nograd-watch") in f.cause


def test_optimizer_no_grad_is_not_a_user_cut():
    model, (x, y) = mlp(), data()
    opt = mg.optim.SGD(model.parameters(), lr=0.1)
    ((model(x) - y) ** 2).mean().backward()
    opt.step()  # minigrad's own no_grad inside step(): no provenance marks
    assert all(getattr(p, "_why", None) is None for p in model.parameters())


# -- 3, 4, 6: errors PyTorch also gives, with minigrad's detail ----------------------------------
def test_3_inplace_corruption_raises_naming_the_op():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="ExpBackward0: one of the variables needed for gradient computation "
                                           "has been modified by an inplace operation"):
        y.sum().backward()


def test_4_grad_of_non_leaf_warns():
    x = mg.tensor([1.0], requires_grad=True)
    y = x * 2
    y.backward()
    with pytest.warns(UserWarning, match="retain_grad"):
        assert y.grad is None


def test_6_second_backward_names_the_first_backward_line():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()  # MARK-first-backward
    with pytest.raises(RuntimeError, match="retain_graph=True.*freed by the earlier backward\\(\\) call at .*"
                                           + where("MARK-first-backward")):
        y.backward()


# -- 5: gradients not cleared --------------------------------------------------------------------
def test_5_step_on_accumulated_gradients_warns_once_and_accumulation_can_be_declared():
    model, (x, y) = mlp(), data()
    opt = mg.optim.SGD(model.parameters(), lr=0.01)

    def loop():
        for _ in range(3):
            ((model(x) - y) ** 2).mean().backward()
            opt.step()  # MARK-step

    msgs, _ = watched_warnings(loop)
    assert len(msgs) == 1 and "mistake 5" in msgs[0] and where("MARK-step") in msgs[0]
    assert "zero_grad()" in msgs[0]
    msgs, _ = watched_warnings(loop, allow_accumulation=True)
    assert msgs == []


# -- 7: a graph kept alive across iterations -----------------------------------------------------
def test_7_total_loss_plus_loss_warns():
    model, (x, y) = mlp(), data()
    opt = mg.optim.SGD(model.parameters(), lr=0.01)

    def loop():
        total = 0.0
        for _ in range(3):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            total = total + loss  # MARK-total

    msgs, _ = watched_warnings(loop)
    assert any("mistake 7" in m and where("MARK-total") in m for m in msgs), msgs


# -- 8: retracing (the hook mg.jit calls) --------------------------------------------------------
def test_8_retrace_warning():
    with pytest.warns(GradientMistakeWarning, match="mistake 8.*traced 9 times.*argument 'x' shape"):
        mg.debug.warn_retrace("step", 9, "argument 'x' shape (7, 3) -> (5, 3)")


# -- 9: a Python number breaks the graph ---------------------------------------------------------
def test_9_item_then_tensor_warns_and_explains():
    w = mg.tensor([2.0], requires_grad=True)

    def run():
        v = (w * 3).item()  # MARK-item
        t = mg.tensor([v])  # MARK-new-tensor
        loss = t * 2
        with pytest.raises(RuntimeError, match=r"Python number: \.item\(\) at .*" + where("MARK-item")):
            loss.backward(mg.ones(1))

    msgs, _ = watched_warnings(run)
    assert len(msgs) == 1 and "mistake 9" in msgs[0]
    assert where("MARK-item") in msgs[0] and where("MARK-new-tensor") in msgs[0]


# -- 10: silent broadcasting ---------------------------------------------------------------------
def test_10_broadcast_of_n_with_n1_warns_at_the_user_line_only():
    pred, target = mg.randn(8, 1), mg.randn(8)

    def run():
        d = pred - target  # MARK-broadcast
        assert d.shape == (8, 8)
        _ = mg.randn(2, 3) + mg.randn(3)    # one operand grows: normal broadcasting, no warning
        _ = nn.functional.linear(mg.randn(4, 3), mg.randn(2, 3), mg.randn(2))  # inside minigrad: silent

    msgs, _ = watched_warnings(run)
    assert len(msgs) == 1 and "mistake 10" in msgs[0] and where("MARK-broadcast") in msgs[0]
    assert "(8, 1) with (8,) into (8, 8)" in msgs[0]


def test_10_every_elementwise_pair_is_checked_comparisons_too():
    """The check follows the op's family (batching = "elementwise"), not a list of names: the
    classic accuracy bug (N, 1) == (N,) warns, as does an op added later (xlogy)."""
    pred, target = mg.randn(8, 1), mg.randn(8)

    def run():
        acc = (pred == target).float().mean()  # MARK-eq
        _ = mg.xlogy(mg.rand(3, 1), mg.rand(3) + 1)  # MARK-xlogy
        return acc

    msgs, _ = watched_warnings(run)
    assert len(msgs) == 2 and all("mistake 10" in m for m in msgs)
    assert where("MARK-eq") in msgs[0] and where("MARK-xlogy") in msgs[1]


# -- 11: a non-differentiable op -----------------------------------------------------------------
def test_11_non_differentiable_op_cuts_the_path():
    w = mg.tensor([0.3, 1.7, -0.2], requires_grad=True)
    b = mg.tensor([1.0], requires_grad=True)
    with mg.debug.watch():
        idx = (w * 2).argmax()  # MARK-argmax
        loss = idx.to(mg.float32) * 1.0 + b.sum()
        loss.backward()
    f = mg.debug.explain(loss, {"w": w, "b": b})["w"]
    assert f.status == "missing" and f.mistake == 11 and where("MARK-argmax") in f.cause


# -- 12: zero is not missing ---------------------------------------------------------------------
def test_12_zero_versus_missing_with_dead_relu_and_zero_inputs():
    model, (x, y) = mlp(), data()
    unused = nn.Parameter(mg.ones(2))
    with mg.debug.watch():
        with mg.no_grad():
            model[0].bias.fill_(-100.0)      # every ReLU input negative: all units dead
        out = model(x)  # MARK-dead-forward
        loss = ((out - y) ** 2).mean()
        loss.backward()
    params = dict(model.named_parameters())
    params["unused"] = unused
    report = mg.debug.explain(loss, params)
    assert report["0.weight"].status == "zero" and "100% of units dead" in report["0.weight"].cause
    assert "not the same as missing" in report["0.weight"].cause
    assert report["unused"].status == "missing" and "never used" in report["unused"].cause
    assert report["2.bias"].status == "ok"
    text = str(report)
    assert "ZERO GRADIENT" in text and "NO GRADIENT (None)" in text and "zero != missing" in text
    # zero inputs to a Linear
    model2 = mlp()
    with mg.debug.watch():
        out = model2[0](mg.zeros(4, 3))  # MARK-zero-input
        out.sum().backward()
    f = mg.debug.explain(out, model2)["0.weight"]
    assert f.status == "zero" and "were all zero" in f.cause and where("MARK-zero-input") in f.cause


# -- anomaly mode --------------------------------------------------------------------------------
def test_anomaly_mode_names_the_forward_op_of_a_nan():
    x = mg.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning):
        with mg.autograd.detect_anomaly():
            assert mg.autograd.is_anomaly_enabled()
            y = x.sqrt()  # MARK-sqrt
            z = (y * 0.0).sum()
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output") as e:
                z.backward()
    notes = "".join(getattr(e.value, "__notes__", []))
    assert f"line {line_of('MARK-sqrt')}" in notes and "y = x.sqrt()" in notes
    assert not mg.autograd.is_anomaly_enabled()


def test_anomaly_mode_shows_forward_site_of_an_error_in_backward():
    class Bad(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    x = mg.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mg.autograd.set_detect_anomaly(True):
            y = Bad.apply(x)  # MARK-bad
            with pytest.raises(ValueError, match="broken backward") as e:
                y.sum().backward()
    assert f"line {line_of('MARK-bad')}" in "".join(e.value.__notes__)
    assert not mg.autograd.is_anomaly_enabled()


# -- no false alarms, no idle cost ----------------------------------------------------------------
def test_no_false_alarm_on_a_normal_training_loop():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Dropout(0.1), nn.Linear(4 * 4 * 4, 10))
    opt = mg.optim.Adam(model.parameters(), lr=1e-3)
    sched = mg.optim.lr_scheduler.StepLR(opt, 2)
    x, y = mg.randn(6, 1, 8, 8), mg.randint(0, 10, (6,))

    def loop():
        total = 0.0
        for _ in range(4):
            model.train()
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            total += loss.item()
            model.eval()
            with mg.no_grad():
                acc = (model(x).argmax(1) == y).float().mean().item()
        return total, acc

    msgs, _ = watched_warnings(loop)
    assert msgs == []


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_truncated_bptt_detach_of_the_carried_state_is_not_a_mistake(kind):
    # truncated backpropagation through time: the hidden state is carried from chunk to chunk and
    # detached at the boundary, on purpose. No warning, and explain() finds every gradient; without
    # the detach the doctor warns (mistake 7) before the freed-graph error.
    mg.manual_seed(0)
    rnn = getattr(nn, kind)(3, 5)
    head = nn.Linear(5, 1)
    params = list(rnn.parameters()) + list(head.parameters())
    opt = mg.optim.SGD(params, lr=0.1)
    stream = mg.randn(24, 2, 3)

    def train(detach):
        state = None
        for start in range(0, 24, 8):
            if state is not None and detach:
                state = tuple(s.detach() for s in state) if isinstance(state, tuple) else state.detach()
            out, state = rnn(stream[start:start + 8], state)
            loss = head(out).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    box = {}
    msgs, _ = watched_warnings(lambda: box.setdefault("loss", train(detach=True)))
    assert msgs == []
    report = mg.debug.explain(box["loss"], dict(rnn.named_parameters()))
    assert report.problems == [] and len(report.findings) == 4
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            with mg.debug.watch():
                train(detach=False)
    assert any("mistake 7" in str(r.message) for r in rec)


def test_idle_doctor_adds_no_calls_to_the_op_path():
    import minigrad.autograd.function as F
    assert "apply" in F.Function.__dict__
    apply_before = F.Function.__dict__["apply"]
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    with mg.debug.watch():
        pass
    with mg.no_grad():
        pass
    assert F.Function.__dict__["apply"] is apply_before  # every wrapper removed

    calls = []

    def prof(frame, event, arg):
        if event == "call":
            calls.append((frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(prof)
    try:
        loss = (a * a).sum()
    finally:
        sys.setprofile(None)
    assert not [c for c in calls if "/debug/" in c[0] or "anomaly" in c[0]]  # forward: nothing
    calls.clear()
    sys.setprofile(prof)
    try:
        loss.backward()
    finally:
        sys.setprofile(None)
    doctor = [c for c in calls if "/debug/" in c[0] or "anomaly" in c[0]]
    # backward: one look-up of the backward() call's site per call (for the freed-graph message)
    assert [n for _, n in doctor].count("user_site") == 1
    assert {n for _, n in doctor} <= {"user_site", "user_frame", "_is_internal"}


def test_gradient_mistakes_example_diagnoses_all_twelve(capsys):
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gradient_mistakes.py"
    spec = importlib.util.spec_from_file_location("gradient_mistakes", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main()
    out = capsys.readouterr().out
    sections = out.split("\n\n")[1:]
    assert len(sections) == 12
    expected = ["cut by .detach() at", "computed under no_grad (entered at", "modified by an inplace operation",
                "retain_grad", "mistake 5", "freed by the earlier backward() call at", "mistake 7", "mistake 8",
                "mistake 9", "mistake 10", "which is not differentiable", "100% of units dead"]
    for i, (sec, want) in enumerate(zip(sections, expected), 1):
        assert sec.lstrip().startswith(f"{i}."), sec
        assert want in sec, (i, sec)
        assert "gradient_mistakes.py:" in sec or i in (3, 4, 8), (i, sec)


@pytest.mark.parametrize("script,args", [
    ("mnist_mlp.py", ("--epochs", 1, "--limit", 512, "--test-limit", 256)),
    ("mnist_cnn.py", ("--epochs", 1, "--limit", 128, "--test-limit", 128)),
])
def test_examples_run_under_the_doctor_without_a_warning(tmp_path, script, args):
    """MINIGRAD_DEBUG=1 turns the doctor on for a whole run: the project's examples trigger none of
    its warnings (no false alarm)."""
    import os
    import pathlib
    import subprocess
    repo = pathlib.Path(__file__).resolve().parents[2]
    data = os.environ.get("MINIGRAD_DATA", str(repo.parent / "shared" / "data"))
    if not pathlib.Path(data, "mnist-10k").exists() and not pathlib.Path(data).name == "mnist-10k":
        pytest.skip(f"MNIST data not found at {data}")
    proc = subprocess.run([sys.executable, str(repo / "examples" / script), "--data", data, "--no-progress",
                           "--out", str(tmp_path), *map(str, args)], capture_output=True, text=True, timeout=300,
                          cwd=repo, env={**os.environ, "MINIGRAD_DEBUG": "1", "PYTHONWARNINGS": "always"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "GradientMistakeWarning" not in proc.stderr and "mistake " not in proc.stderr, proc.stderr[-3000:]
