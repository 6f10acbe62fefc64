"""mg.jit / mg.compile: the compiled program equals eager (training steps with Dropout, BatchNorm,
SGD+momentum, Adam and a scheduler, for 100 steps), guards retrace exactly when they must, the
repeated-tracing warning names the changing argument, graph breaks fall back to eager with the
user's line, and explain shows the passes."""
import io
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.compiler.jit import JitWarning
from minigrad.debug import GradientMistakeWarning


# -- the models of tests/optim/test_traced_steps.py, with Dropout / BatchNorm ---------------------
def _mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(16, 12), nn.ReLU(), nn.Dropout(0.3), nn.Linear(12, 5))


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Dropout(0.25), nn.Linear(4 * 4 * 4, 5))


OPTS = {
    "sgd_momentum": lambda p: mg.optim.SGD(p, lr=0.05, momentum=0.9),
    "adam": lambda p: mg.optim.Adam(p, lr=1e-2),
}


def _setup(model_name, opt_name):
    mg.manual_seed(1)
    model = {"mlp": _mlp, "cnn": _cnn}[model_name]()
    opt = OPTS[opt_name](model.parameters())
    sched = mg.optim.lr_scheduler.StepLR(opt, step_size=7, gamma=0.8)
    shape = (8, 16) if model_name == "mlp" else (8, 1, 8, 8)
    data = mg.Generator().manual_seed(3)
    batches = [(mg.randn(*shape, generator=data), mg.randint(0, 5, (8,), generator=data)) for _ in range(5)]

    def train_step(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    mg.manual_seed(7)  # the generator Dropout draws from: the same stream in both runs
    return model, opt, sched, train_step, batches


def _fused(jitted):
    return any("fuse" in e.prim for en in jitted._cache.values() if en.optimized is not None
               for e in en.optimized.eqns)


def _same(a, b, exact):
    a, b = np.asarray(a), np.asarray(b)
    if exact:
        return a.dtype == b.dtype and np.array_equal(a, b)
    return np.allclose(a, b, rtol=1e-6, atol=0)


def _snapshot(model, opt):
    out = {f"state_dict.{k}": v.numpy().copy() for k, v in model.state_dict().items()}  # incl. BN stats
    for n, p in model.named_parameters():
        out[f"grad.{n}"] = p.grad.numpy().copy()
    for i, p in enumerate(opt.param_groups[0]["params"]):
        for k, v in opt.state[p].items():
            out[f"opt.{i}.{k}"] = v.numpy().copy() if isinstance(v, mg.Tensor) else v
    out["lr"] = opt.param_groups[0]["lr"]
    return out


def _run(step, sched, batches, n):
    losses = []
    for i in range(n):
        losses.append(step(*batches[i % len(batches)]).item())
        sched.step()
    return losses


@pytest.mark.parametrize("opt_name", sorted(OPTS))
@pytest.mark.parametrize("model_name", ["mlp", "cnn"])
def test_a_jitted_train_step_is_a_drop_in_replacement_for_100_steps(model_name, opt_name):
    m1, o1, s1, step1, batches = _setup(model_name, opt_name)
    l1 = _run(step1, s1, batches, 100)
    eager = _snapshot(m1, o1)

    m2, o2, s2, step2, batches = _setup(model_name, opt_name)
    jitted = mg.jit(step2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no graph break, no eager fallback, no retrace warning
        l2 = _run(jitted, s2, batches, 100)
    jit = _snapshot(m2, o2)
    exact = not _fused(jitted)
    # first call traces; the second traces again once (the optimizer state and the grads now
    # exist); every later step runs the compiled program, while the scheduler changes the lr
    assert jitted.cache_info()["traces"] == 2 and jitted.code is not None
    assert s1.get_last_lr() == s2.get_last_lr() and jit["lr"] < o2.defaults["lr"]
    assert _same(l1, l2, exact)
    assert eager.keys() == jit.keys()
    for k in eager:
        assert _same(eager[k], jit[k], exact), k
    if model_name == "cnn":
        assert m2[1].num_batches_tracked.item() == 100 and not np.all(m2[1].running_var.numpy() == 1)
    if opt_name == "adam":
        assert all(o2.state[p]["step"].item() == 100 for p in m2.parameters())


def test_dropout_draws_a_fresh_mask_at_each_compiled_call():
    mg.manual_seed(0)
    drop = nn.Dropout(0.5)
    f = mg.jit(lambda x: drop(x) * 1.0)
    x = mg.ones(64)
    masks = [f(x).numpy() for _ in range(4)]
    assert f.cache_info()["traces"] == 1
    assert not any(np.array_equal(masks[i], masks[j]) for i in range(4) for j in range(i))


def test_after_jit_training_the_state_is_usable_from_eager_code(tmp_path):
    """Switch eager -> jit -> eager -> jit mid-training: the same trajectory as eager all along;
    then state_dict, mg.save / mg.load and load_state_dict work as usual. (The two runs share the
    default generator, which Dropout draws from: each runs whole, one after the other.)"""
    m1, o1, s1, step1, batches = _setup("cnn", "adam")
    l1 = _run(step1, s1, batches, 30)
    a30 = _snapshot(m1, o1)
    l1 += _run(step1, s1, batches, 3)
    m2, o2, s2, step2, batches = _setup("cnn", "adam")
    jitted = mg.jit(step2)
    l2 = _run(step2, s2, batches, 5) + _run(jitted, s2, batches, 15) + _run(step2, s2, batches, 10)
    b30 = _snapshot(m2, o2)
    l2 += _run(jitted, s2, batches, 3)  # back to the compiled step after eager steps
    exact = not _fused(jitted)
    assert jitted.cache_info()["traces"] == 1  # the eager steps left the same state: no retrace
    assert _same(l1, l2, exact)
    for k in a30:
        assert _same(a30[k], b30[k], exact), k
    mg.save({"model": m2.state_dict(), "opt": o2.state_dict()}, tmp_path / "ckpt.mg")
    ckpt = mg.load(tmp_path / "ckpt.mg")
    m3 = _cnn()
    o3 = OPTS["adam"](m3.parameters())
    m3.load_state_dict(ckpt["model"])
    o3.load_state_dict(ckpt["opt"])
    for (k, x), (_, y) in zip(m1.state_dict().items(), m3.state_dict().items()):
        assert _same(x.numpy(), y.numpy(), exact), k
    assert all(st["step"].item() == 33 for st in o3.state_dict()["state"].values())


def test_a_scheduler_stepping_every_call_does_not_retrace():
    m, opt, sched, step, batches = _setup("mlp", "sgd_momentum")
    sched = mg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)  # a new lr at every call
    jitted = mg.jit(step)
    _run(jitted, sched, batches, 20)
    assert jitted.cache_info() == {"traces": 2, "retraces": 1, "entries": 2, "eager_entries": 0}
    names = jitted._last.graph.state_names()
    assert "opt.param_groups[0].lr" in names and "rng" in names  # inputs, not guards


def test_a_hyper_parameter_the_step_branched_on_retraces():
    m, opt, sched, step, batches = _setup("mlp", "sgd_momentum")
    jitted = mg.jit(step)
    for x, y in batches[:3]:
        jitted(x, y)
    traces = jitted.traces
    opt.param_groups[0]["weight_decay"] = 0.01  # was 0 when traced: the program skipped it
    jitted(*batches[3])
    assert jitted.traces == traces + 1
    opt.param_groups[0]["nesterov"] = True      # an option baked into the program: a guard
    jitted(*batches[4])
    assert jitted.traces == traces + 2


def test_the_training_flag_shapes_dtypes_requires_grad_and_grad_mode_are_guards():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5))
    f = mg.jit(lambda x: model(x).sum(), fullgraph=True)
    x = mg.randn(2, 4)
    with mg.no_grad():
        f(x)
        f(x)
        assert f.traces == 1
        model.eval()
        out = f(x)
        assert f.traces == 2 and np.allclose(out.item(), model(x).sum().item(), rtol=1e-6)
        f(mg.randn(3, 4))
        model.double()  # new parameter tensors
        f(x.double())
        assert f.traces == 4
        model.float()
    with pytest.warns(JitWarning, match="requires grad"):
        f(x.requires_grad_())  # grad mode on, requires_grad: a new key (and an eager fallback)
    assert f.traces == 5


def test_python_scalars_are_static_and_tensors_are_inputs():
    f = mg.jit(lambda x, k: x * k)
    x = mg.tensor([1.0, 2.0])
    assert f(x, 2.0).tolist() == [2.0, 4.0] and f(x, 3.0).tolist() == [3.0, 6.0]
    assert f(x, -0.0).tolist() == [-0.0, -0.0] and str(f(x, -0.0).numpy()[0]) == "-0.0"
    assert f.traces == 3
    assert f(mg.tensor([5.0, 6.0]), 2.0).tolist() == [10.0, 12.0] and f.traces == 3
    g = mg.jit(lambda x, *, scale: x * scale)  # a keyword tensor is an input too
    assert g(x, scale=mg.tensor(3.0)).tolist() == [3.0, 6.0]
    assert g(x, scale=mg.tensor(4.0)).tolist() == [4.0, 8.0] and g.traces == 1


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [x for x in w if issubclass(x.category, (GradientMistakeWarning, JitWarning))]


def test_repeated_retracing_warns_once_naming_a_changing_python_value():
    f = mg.jit(lambda x, n: x * n)
    x = mg.ones(3)
    w = _warnings_of(lambda: [f(x, float(n)) for n in range(12)])
    assert len(w) == 1 and f.retraces == 11
    msg = str(w[0].message)
    assert "mistake 8" in msg and "argument 'n'" in msg and "mg.tensor" in msg
    assert w[0].filename == __file__  # the user's line, not minigrad's


def test_repeated_retracing_names_the_argument_and_dim_whose_shape_changes():
    def f(x, w):
        return (x @ w).relu()
    jf = mg.jit(f)
    w_ = mg.randn(4, 2)
    warns = _warnings_of(lambda: [jf(mg.randn(n, 4), w_) for n in range(1, 11)])
    assert len(warns) == 1
    msg = str(warns[0].message)
    assert "argument 'x'" in msg and "dim 0" in msg and "dynamic={'x': 0}" in msg and "mark_dynamic" in msg


@pytest.mark.parametrize("how", ["dynamic=0", "dynamic={'x': 0}", "mark_dynamic"])
def test_a_dynamic_batch_dim_gets_exact_programs_without_counting_retraces(how):
    def step(x, w):
        return (x @ w).sum(0)
    kw = {"dynamic=0": {"dynamic": 0}, "dynamic={'x': 0}": {"dynamic": {"x": 0}}, "mark_dynamic": {}}[how]
    jf = mg.jit(step, **kw)
    w = mg.randn(4, 2)
    sizes = [8, 8, 8, 3] * 2 + list(range(10, 20))  # full batches, a last partial one; then many
    out = []

    def loop():
        for n in sizes:
            x = mg.randn(n, 4)
            if how == "mark_dynamic":
                mg.jit.mark_dynamic(x, 0)
            out.append((jf(x, w).numpy(), step(x, w).numpy()))
    assert _warnings_of(loop) == []
    assert jf.retraces == 0 and jf.traces == 2 + 10  # one exact program per size, cached
    assert all(np.array_equal(a, b) for a, b in out)


def test_a_graph_break_runs_eagerly_warns_once_with_the_line_and_fullgraph_raises():
    w = mg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = mg.optim.SGD([w], lr=0.1)

    def step(x):
        loss = (w * x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() > 0:  # BREAK-LINE: a branch on a value
            return loss * 2
        return loss

    x = mg.tensor([1.0, 1.0, 1.0])
    jf = mg.jit(step)
    warns = _warnings_of(lambda: [jf(x) for _ in range(4)])
    line = next(i for i, s in enumerate(open(__file__), 1) if "BREAK-LINE" in s and "if" in s)
    assert len(warns) == 1 and warns[0].filename == __file__ and warns[0].lineno == line
    assert "graph break" in str(warns[0].message) and "runs eagerly" in str(warns[0].message)
    # the program stayed correct: four eager steps
    assert np.allclose(w.detach().numpy(), np.array([1.0, -2.0, 3.0]) - 0.4)
    # two keys (the first call had no .grad yet), each traced once; later calls run eagerly untraced
    assert jf.cache_info()["eager_entries"] == jf.traces == 2
    with pytest.raises(mg.GraphBreak, match=r"item\(\).*test_jit\.py:%d" % line):
        mg.jit(step, fullgraph=True)(x)


def test_a_result_that_needs_autograd_runs_eagerly_and_keeps_its_graph():
    lin = nn.Linear(3, 2)
    f = mg.jit(lambda x: lin(x).tanh())
    x = mg.randn(4, 3)
    warns = _warnings_of(lambda: [f(x) for _ in range(2)])
    assert len(warns) == 1 and "mg.no_grad()" in str(warns[0].message)
    out = f(x)
    assert out.grad_fn is not None
    out.sum().backward()
    assert lin.weight.grad is not None
    with mg.no_grad():  # for inference: compiled
        assert np.array_equal(f(x).numpy(), f.fn(x).numpy()) and f.code is not None and f.traces == 2


def test_compile_a_model_for_inference_and_freeze_it():
    mg.manual_seed(0)
    model = _cnn().eval()
    x = mg.randn(5, 1, 8, 8)
    with mg.no_grad():
        ref = model(x).numpy()
        fast = mg.compile(model)
        assert np.array_equal(fast(x).numpy(), ref) and np.array_equal(fast(x).numpy(), ref)
        assert "1.running_mean" in fast._last.graph.state_names()  # parameters stay named inputs
        assert fast.training is False and len(list(fast.parameters())) == 6  # the module's attributes
    frozen = mg.compile(model, freeze=True)
    out = frozen(x)  # no mg.no_grad needed: a frozen program is inference-only
    assert out.requires_grad is False and np.allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    g = frozen._last.graph
    assert not any(b.kind == "tensor" for _, b in g.state)  # parameters are constants now
    folded = [r for r in frozen._last.reports if r.name == "fold"]
    assert folded and folded[0].after["eqns"] < folded[0].before["eqns"]  # e.g. the weight transposes
    model.train()
    with pytest.raises(RuntimeError, match=r"freeze=True.*eval\(\)"):
        frozen(x)
    with pytest.raises(TypeError, match="nn.Module"):
        mg.compile(lambda x: x, freeze=True)


def test_code_and_explain_show_the_program_and_the_passes():
    m, opt, sched, step, batches = _setup("mlp", "sgd_momentum")
    jf = mg.jit(step)
    jf(*batches[0])
    buf = io.StringIO()
    ex = jf.explain(*batches[1], file=buf)
    text = buf.getvalue()
    assert text == str(ex) + "\n"
    assert "graph breaks: none" in text and "== as traced:" in text and "linear" in text
    for name in ("fold", "dce", "cse", "simplify"):
        assert f"== after {name}:" in text
    assert "intermediate bytes" in text and "memory plan:" in text
    assert "def compiled(" in jf.code and "_assign(" in jf.code  # the source that runs
    # mg.jit.explain(fn, *args) lists graph breaks with their lines
    def brk(x):
        return x * float(x.sum())
    with pytest.warns(JitWarning, match="graph break"):
        ex = mg.jit.explain(brk, mg.ones(2), file=None)
    assert len(ex.breaks) == 1 and ex.breaks[0][1].startswith(__file__ + ":")
    assert "graph breaks (1)" in str(ex)


def test_explain_shows_its_report_once(capsys):
    # issue 32 item 9: at a prompt, mg.jit.explain(...) printed the report and then its repr again
    def f(x):
        return (x * 2).exp().sum()
    ex = mg.jit.explain(f, mg.ones(3))
    assert capsys.readouterr().out == ""  # nothing printed: the prompt shows the repr, once
    assert repr(ex) == str(ex) and str(ex).startswith("mg.jit.explain(") and "graph breaks: none" in str(ex)
    print(mg.jit(f).explain(mg.ones(3)))  # a script prints it: once
    assert capsys.readouterr().out.count("mg.jit.explain(") == 1


def test_decorator_forms_and_nesting_inside_a_trace():
    @mg.jit
    def f(x):
        return x * 2 + 1

    @mg.jit(passes=[])
    def g(x):
        return f(x).exp()

    x = mg.tensor([0.5, 1.5])
    assert np.array_equal(g(x).numpy(), np.exp(x.numpy() * 2 + 1)) and g.__name__ == "g"
    assert g.fn.__name__ == "g" and f.traces == 0  # inside g's trace, f's ops were recorded inline
    graph = mg.graph.trace(lambda x: f(x), x)
    assert graph.count()["mul"] == 1 and graph.count()["add"] == 1


def test_errors_name_mg_jit():
    with pytest.raises(TypeError, match="mg.jit"):
        mg.jit(3)
    with pytest.raises(TypeError, match="dynamic"):
        mg.jit(lambda x: x, dynamic="batch")
    with pytest.raises(IndexError, match=r"mark_dynamic.*\(2, 3\)"):
        mg.jit.mark_dynamic(mg.ones(2, 3), 5)


def test_jit_on_a_method_and_a_plain_module():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        @mg.jit
        def score(self, x):
            return self.fc(x).relu().sum(1)
    mg.manual_seed(0)
    a, b = Net(), Net()
    x = mg.randn(4, 3)
    with mg.no_grad():
        for net in (a, b, a, b):  # each instance is a guard of its own (its parameters)
            assert np.array_equal(net.score(x).numpy(), net.fc(x).relu().sum(1).numpy())
        assert Net.score.traces == 2
        j = mg.jit(a.fc)
        assert np.array_equal(j(x).numpy(), a.fc(x).numpy()) and np.array_equal(j(x).numpy(), a.fc(x).numpy())


def test_trace_on_break_record_runs_on_and_lists_the_breaks():
    def f(x):
        y = x * 2
        if y.sum().item() > 0:  # RECORD-LINE
            y = y + 1
        return y
    g = mg.graph.trace(f, mg.ones(2), on_break="record")
    line = next(i for i, s in enumerate(open(__file__), 1) if "RECORD-LINE" in s and "if" in s)
    assert g.result.tolist() == [3.0, 3.0]  # the function ran to its end, eagerly
    assert len(g.breaks) == 1 and ".item()" in g.breaks[0] and g.break_sites == [f"{__file__}:{line}"]
    with pytest.raises(mg.GraphBreak):
        mg.graph.trace(f, mg.ones(2))
    with pytest.raises(ValueError, match="on_break"):
        mg.graph.trace(f, mg.ones(2), on_break="ignore")


W_GLOBAL = mg.tensor([1.0, 2.0])


def _uses_a_global(x):
    return x * W_GLOBAL


def test_a_rebound_global_tensor_and_a_changed_module_option_retrace():
    global W_GLOBAL
    f = mg.jit(_uses_a_global)
    x = mg.ones(2)
    assert f(x).tolist() == [1.0, 2.0] and f(x).tolist() == [1.0, 2.0]
    W_GLOBAL.mul_(10)  # the same tensor, new values: an input of the program
    assert f(x).tolist() == [10.0, 20.0] and f.traces == 1
    W_GLOBAL = mg.tensor([3.0, 4.0])  # another tensor: a new key
    assert f(x).tolist() == [3.0, 4.0] and f.traces == 2
    drop = nn.Dropout(0.5)
    g = mg.jit(lambda x: drop(x) * 1.0)
    g(mg.ones(1000))
    drop.p = 0.0  # baked into the program: a guard
    assert g(mg.ones(1000)).tolist() == [1.0] * 1000 and g.traces == 2


# every registry op, compiled (forward, and forward + backward) vs eager: in
# tests/graph/test_dispatch_agreement.py, with the trace, recorded and no_grad paths


def test_jit_of_a_traced_graph_compiles_it_and_keeps_random_ops_random():
    """A Graph (mg.graph.trace, mg.load_graph) given to mg.jit / mg.compile compiles as it is; re-tracing
    its interpreter would bake the random draws in as constants."""
    mg.manual_seed(0)
    g = mg.graph.trace(lambda x: x + mg.randn(3), mg.zeros(3))
    for make in (mg.jit, mg.compile):
        mg.manual_seed(1)
        eager = [(mg.zeros(3) + mg.randn(3)).numpy() for _ in range(2)]
        c = make(g)
        mg.manual_seed(1)
        got = [c(mg.zeros(3)).numpy() for _ in range(2)]
        assert not np.array_equal(got[0], got[1])  # a fresh draw per call
        assert all(np.array_equal(a, b) for a, b in zip(eager, got))


def test_jit_trace_has_torch_jit_trace_signature_and_traces_now():
    from minigrad.compiler.jit import CompiledModule, JitFunction
    from minigrad.graph import GraphBreak
    f = mg.jit.trace(lambda x, y: (x * y).exp().sum(), (mg.ones(3), mg.full((3,), 2.0)))
    assert isinstance(f, JitFunction) and f.traces == 1          # traced on the example inputs
    np.testing.assert_allclose(f(mg.ones(3), mg.ones(3)).item(), 3 * np.e, rtol=1e-6)
    assert f.traces == 1                                         # same shapes: the compiled program
    f(mg.ones(4), mg.ones(4))
    assert f.traces == 2                                         # a new shape traces again (guards)
    g = mg.jit.trace(lambda x: x * 2, mg.ones(2))                # a lone tensor is the one argument
    assert g(mg.tensor([1.0, 3.0])).tolist() == [2.0, 6.0]
    k = mg.jit.trace(lambda x, y=None: x + y, mg.ones(2), example_kwarg_inputs={"y": mg.ones(2)})
    assert k(mg.ones(2), y=mg.ones(2)).tolist() == [2.0, 2.0]
    model = nn.Linear(4, 2).eval()
    with mg.no_grad():
        c = mg.jit.trace(model, (mg.ones(3, 4),))
        assert isinstance(c, CompiledModule) and c.weight is model.weight
        np.testing.assert_array_equal(c(mg.ones(3, 4)).numpy(), model(mg.ones(3, 4)).numpy())
    with pytest.raises(GraphBreak):                              # fullgraph: no silently baked branch
        mg.jit.trace(lambda x: x * 2 if x.sum() > 0 else x, mg.ones(3))
    with pytest.raises(TypeError, match="example_inputs must be a Tensor or a tuple"):
        mg.jit.trace(lambda x: x, [mg.ones(3)])
    with pytest.raises(TypeError, match="give example_inputs"):
        mg.jit.trace(lambda x: x)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_nll_loss_training_step_reads_each_calls_targets(reduction):
    """nll_loss's gradient (a scatter of -w[t_i] at the targets) is built from the forward's arrays by
    an op, so the compiled backward reads each call's targets: bit-equal to eager over calls whose
    targets differ (it used to bake in the traced call's targets, diverging from the 4th step)."""
    def run(jit):
        mg.manual_seed(0)
        model = nn.Linear(4, 5)
        opt = mg.optim.SGD(model.parameters(), lr=0.5)

        def step(x, y, w):
            loss = nn.functional.nll_loss(nn.functional.log_softmax(model(x), 1), y, weight=w,
                                          ignore_index=2, reduction=reduction)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss
        fn = mg.jit(step) if jit else step
        rng = np.random.default_rng(0)
        w = mg.tensor([1.0, 0.5, 2.0, 1.5, 0.25])
        losses = [fn(mg.from_numpy(rng.standard_normal((6, 4)).astype(np.float32)),
                     mg.from_numpy(rng.integers(0, 5, (6,))), w).item() for _ in range(6)]
        return losses, model.weight.detach().numpy().copy()
    (eager, w_eager), (jitted, w_jit) = run(False), run(True)
    assert eager == jitted
    np.testing.assert_array_equal(w_eager, w_jit)


@pytest.mark.parametrize("norm_type", [2.0, float("inf")])
def test_clip_grad_norm_in_a_jitted_step_reads_each_calls_gradients(norm_type):
    """clip_grad_norm_ under tracing computes the norm and the coefficient as ops, so the compiled step
    scales each call's gradients by that call's norm (it used to bake the traced call's coefficient
    into the program). float32: within 1e-6 relative of eager (the norm's summation order may differ)."""
    def run(jit):
        mg.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        opt = mg.optim.SGD(model.parameters(), lr=0.5)

        def step(x, y):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            total = nn.utils.clip_grad_norm_(model.parameters(), 0.1, norm_type=norm_type)
            opt.step()
            return loss, total
        fn = mg.jit(step) if jit else step
        rng = np.random.default_rng(0)
        out = []
        for i in range(6):   # the input's scale changes the gradient norm from call to call
            x = mg.from_numpy((rng.standard_normal((5, 4)) * (1 + 3 * i)).astype(np.float32))
            loss, total = fn(x, mg.from_numpy(rng.integers(0, 3, (5,))))
            out.append((loss.item(), total.item()))
        return np.array(out), model[0].weight.detach().numpy().copy()
    (eager, w_eager), (jitted, w_jit) = run(False), run(True)
    assert len(set(np.round(eager[:, 1], 4))) == 6       # the norms differ (and all exceed 0.1: clipped)
    assert (eager[:, 1] > 0.1).all()
    np.testing.assert_allclose(jitted, eager, rtol=1e-6)
    np.testing.assert_allclose(w_jit, w_eager, rtol=1e-6, atol=1e-7)
