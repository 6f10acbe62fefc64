"""Jitted training steps record the optimizer update of each parameter group as ONE op: the fused
SGDStep / AdamStep the eager step runs (PyTorch's foreach path, kernels/optim.py's numba loop or its
NumPy form), followed by an `assign` of each tensor it wrote. The compiled step is bit for bit the eager
one, its graph is a fraction of the tensor-by-tensor trace (SGD-momentum 65 -> 22 equations, Adam 125 ->
30, AdamW 145 -> 30 on this two-layer MLP), and the hyper-parameters stay named inputs read at each run."""
import numpy as np
import pytest

import minigrad as mg
from helpers import train_step
from minigrad import kernels, nn
from minigrad.optim import optimizer as opt_mod

CONFIGS = {
    "sgd": lambda p: mg.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: mg.optim.SGD(p, lr=0.05, momentum=0.9),
    "sgd_nesterov_wd": lambda p: mg.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "sgd_dampening_maximize": lambda p: mg.optim.SGD(p, lr=0.01, momentum=0.5, dampening=0.3, maximize=True),
    "adam": lambda p: mg.optim.Adam(p, lr=1e-2),
    "adam_wd_amsgrad": lambda p: mg.optim.Adam(p, lr=1e-2, weight_decay=1e-2, amsgrad=True),
    "adam_maximize_wd1": lambda p: mg.optim.Adam(p, lr=1e-2, betas=(0.3, 0.5), weight_decay=1.0, maximize=True),
    "adamw": lambda p: mg.optim.AdamW(p, lr=1e-2, betas=(0.8, 0.99)),
    "adamw_amsgrad": lambda p: mg.optim.AdamW(p, lr=1e-2, weight_decay=0.3, amsgrad=True),
}
FUSED = {"sgd": "sgd_step", "adam": "adam_step"}
# tensors written per parameter (an `assign` each): SGD p (+ momentum buffer); Adam p, m, v, step (+ vmax)
WRITES = {"sgd": 1, "sgd_momentum": 2, "sgd_nesterov_wd": 2, "sgd_dampening_maximize": 2, "adam": 4,
          "adam_wd_amsgrad": 5, "adam_maximize_wd1": 4, "adamw": 4, "adamw_amsgrad": 5}


def _setup(make_opt, dtype=mg.float32):
    mg.manual_seed(1)
    m = nn.Sequential(nn.Flatten(), nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 5)).to(dtype)
    opt = make_opt(m.parameters())
    mg.manual_seed(0)
    x, y = mg.randn(8, 16, dtype=dtype), mg.randint(0, 5, (8,))
    step = train_step(m, opt)
    return m, opt, step, x, y


def _tensors(m, opt):
    """(name, tensor): the parameters, then each parameter's optimizer state."""
    out = list(m.state_dict().items())
    for p in (p for g in opt.param_groups for p in g["params"]):
        out += sorted(opt.state[p].items())
    return out


def _snapshot(m, opt):
    return [(k, v.numpy().copy()) for k, v in _tensors(m, opt)]


def _same(a, b):
    assert len(a) == len(b)
    for (k, x), (_, y) in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), k


def _optimizer_eqns(g):
    """The equations after the backward's last set_grad: the optimizer's update."""
    last = max(i for i, e in enumerate(g.eqns) if e.prim == "set_grad")
    return g.eqns[last + 1:]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_jitted_step_is_one_fused_op_and_equals_eager_bitwise(name):
    steps = 5
    m1, opt1, step1, x, y = _setup(CONFIGS[name])
    l1 = [step1(x, y).item() for _ in range(steps)]
    m2, opt2, step2, x, y = _setup(CONFIGS[name])
    jitted = mg.jit(step2)
    l2 = [jitted(x, y).item() for _ in range(steps)]
    assert l1 == l2
    _same(_snapshot(m1, opt1), _snapshot(m2, opt2))  # parameters, moments, buffers, step counts
    assert jitted._last.compiled is not None        # the last steps ran the compiled program
    g = jitted._last.graph
    fused = FUSED[name[:4] if name.startswith("adam") else "sgd"]
    upd = _optimizer_eqns(g)
    # one op for the group, then one assign per tensor it wrote (4 parameters), nothing else
    assert [e.prim for e in upd] == [fused] + ["assign"] * (4 * WRITES[name])
    assert len(g.eqns) <= 13 + 1 + 4 * WRITES[name]  # forward + backward + set_grads: 13 equations
    assert len(g.eqns) <= 34  # tensor by tensor it was 53 (plain SGD) to 145 (AdamW) equations
    assert len(jitted._last.optimized.eqns) <= len(g.eqns)
    names = g.state_names()
    assert "opt.param_groups[0].lr" in names  # a named input, read at each run


@pytest.mark.parametrize("name", ["sgd_nesterov_wd", "adamw_amsgrad"])
def test_without_numba_the_compiled_step_runs_the_numpy_form_bitwise(name):
    old = kernels.set_enabled(False)
    try:
        m1, opt1, step1, x, y = _setup(CONFIGS[name], mg.float64)
        for _ in range(4):
            step1(x, y)
        m2, opt2, step2, x, y = _setup(CONFIGS[name], mg.float64)
        jitted = mg.jit(step2)
        for _ in range(4):
            jitted(x, y)
    finally:
        kernels.set_enabled(old)
    _same(_snapshot(m1, opt1), _snapshot(m2, opt2))
    assert jitted._last.compiled is not None


@pytest.mark.parametrize("name", ["sgd_momentum", "adam", "adamw"])
def test_a_scheduler_changes_the_learning_rate_without_retracing(name):
    steps = 7
    m1, opt1, step1, x, y = _setup(CONFIGS[name])
    sched1 = mg.optim.lr_scheduler.StepLR(opt1, step_size=2, gamma=0.5)
    for _ in range(steps):
        step1(x, y)
        sched1.step()
    m2, opt2, step2, x, y = _setup(CONFIGS[name])
    sched2 = mg.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    jitted = mg.jit(step2)
    jitted(x, y)     # the first step makes the optimizer state (its trace runs eagerly)
    sched2.step()
    jitted(x, y)     # traced again, with the state: the program every later step runs
    sched2.step()
    assert jitted.cache_info()["traces"] == 2
    for _ in range(steps - 2):
        jitted(x, y)
        sched2.step()
    assert opt1.param_groups[0]["lr"] == opt2.param_groups[0]["lr"] < CONFIGS[name]([mg.ones(1)]).defaults["lr"]
    _same(_snapshot(m1, opt1), _snapshot(m2, opt2))
    assert jitted.cache_info()["traces"] == 2  # no trace per learning rate: it is read at each run
    assert jitted._last.compiled is not None


def test_a_changed_beta_is_read_at_each_run_and_a_baked_option_retraces():
    m1, opt1, step1, x, y = _setup(CONFIGS["adam"])
    m2, opt2, step2, x, y = _setup(CONFIGS["adam"])
    jitted = mg.jit(step2)
    for k in range(3):
        step1(x, y)
        jitted(x, y)
    traces = jitted.cache_info()["traces"]
    for opt in (opt1, opt2):
        opt.param_groups[0]["betas"] = (0.7, 0.95)   # hyper inputs: the same program
        opt.param_groups[0]["eps"] = 1e-6
    step1(x, y)
    jitted(x, y)
    assert jitted.cache_info()["traces"] == traces
    for opt in (opt1, opt2):
        opt.param_groups[0]["maximize"] = True  # an option baked into the program: guarded, traced again
    step1(x, y)
    jitted(x, y)
    jitted(x, y)
    step1(x, y)
    assert jitted.cache_info()["traces"] == traces + 1
    _same(_snapshot(m1, opt1), _snapshot(m2, opt2))


def test_the_first_momentum_step_is_traced_tensor_by_tensor_then_fused():
    """The step that makes SGD's momentum buffers keeps the per-tensor trace (the buffers are new
    tensors); the next trace, with the buffers in the state, is the fused op."""
    m, opt, step, x, y = _setup(CONFIGS["sgd_momentum"])
    g = mg.graph.trace(step, x, y)
    assert g.count()["sgd_step"] == 0
    h = mg.graph.trace(step, x, y)
    assert h.count()["sgd_step"] == 1


def test_the_per_tensor_switch_keeps_the_traced_form(monkeypatch):
    monkeypatch.setattr(opt_mod, "_FOREACH", False)
    m, opt, step, x, y = _setup(CONFIGS["adam"])
    step(x, y)
    g = mg.graph.trace(step, x, y)
    assert g.count()["adam_step"] == 0 and g.count()["hostmath"] == 4


def test_a_saved_adam_step_loads_and_runs_the_same_bits(tmp_path):
    m, opt, step, x, y = _setup(CONFIGS["adamw_amsgrad"])
    step(x, y)
    g = mg.graph.trace(step, x, y)
    g.save(tmp_path / "step.mgg")
    h = mg.load_graph(tmp_path / "step.mgg")
    assert str(h) == str(g) and h.count()["adam_step"] == 1
    before = _snapshot(m, opt)
    bound = {b.name: b.obj for _, b in g.state}
    la = g(x, y).item()
    after = _snapshot(m, opt)
    for (_, v), (_, t) in zip(before, _tensors(m, opt)):  # back to the state before; then the loaded graph
        t._data[...] = v
    assert h.run(x, y, state=bound).item() == la
    _same(after, _snapshot(m, opt))


def test_the_eager_step_under_an_observer_makes_the_same_momentum_buffers():
    """The eager SGD step is one SGDStep.apply, which makes the momentum buffers on the first step
    and returns them: under the profiler (an observer: the full dispatch) the same bits as without."""
    res = []
    for observed in (False, True):
        m, opt, step, x, y = _setup(CONFIGS["sgd_nesterov_wd"])
        for _ in range(3):
            if observed:
                with mg.profiler.profile():
                    step(x, y)
            else:
                step(x, y)
        res.append(_snapshot(m, opt))
    _same(*res)


def test_each_parameter_group_is_one_op_with_its_own_learning_rate():
    def make(params):
        params = list(params)
        return mg.optim.Adam([{"params": params[:2], "lr": 0.05}, {"params": params[2:]}], lr=1e-2)
    m1, opt1, step1, x, y = _setup(make)
    m2, opt2, step2, x, y = _setup(make)
    sched = [mg.optim.lr_scheduler.ExponentialLR(o, gamma=0.7) for o in (opt1, opt2)]
    jitted = mg.jit(step2)
    for _ in range(5):
        step1(x, y)
        jitted(x, y)
        for s in sched:
            s.step()
    _same(_snapshot(m1, opt1), _snapshot(m2, opt2))
    g = jitted._last.graph
    assert g.count()["adam_step"] == 2 and jitted.cache_info()["traces"] == 2
    assert {"opt.param_groups[0].lr", "opt.param_groups[1].lr"} <= set(g.state_names())
