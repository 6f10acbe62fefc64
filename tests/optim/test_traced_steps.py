"""Optimizer steps under mg.graph.trace: hyper-parameters are named graph inputs read at each run (so a
scheduler changing the learning rate does not change the program), Adam's step count and bias
corrections trace, and a traced step equals the eager one bit for bit."""
import numpy as np
import pytest

import minigrad as mg
from helpers import train_step
from minigrad import nn
from minigrad.graph import GuardFailure


def _mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 5))


def _setup(make_opt, dtype=mg.float32):
    mg.manual_seed(1)
    m = _mlp().to(dtype)
    opt = make_opt(m.parameters())
    mg.manual_seed(0)
    x, y = mg.randn(8, 16, dtype=dtype), mg.randint(0, 5, (8,))
    step = train_step(m, opt)
    return m, opt, step, x, y


def _state_arrays(opt):
    out = []
    for p in (p for g in opt.param_groups for p in g["params"]):
        for k, v in sorted(opt.state[p].items()):
            out.append((k, v.numpy().copy() if isinstance(v, mg.Tensor) else v))
    return out


CONFIGS = {
    "sgd": lambda p: mg.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: mg.optim.SGD(p, lr=0.05, momentum=0.9),
    "sgd_nesterov_wd": lambda p: mg.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "sgd_dampening_maximize": lambda p: mg.optim.SGD(p, lr=0.01, momentum=0.5, dampening=0.3, maximize=True),
    "adam": lambda p: mg.optim.Adam(p, lr=1e-2),
    "adam_wd_amsgrad": lambda p: mg.optim.Adam(p, lr=1e-2, weight_decay=1e-2, amsgrad=True),
    "adamw": lambda p: mg.optim.AdamW(p, lr=1e-2, betas=(0.8, 0.99)),
    "rmsprop": lambda p: mg.optim.RMSprop(p, lr=1e-2),
    "rmsprop_centered_momentum_wd": lambda p: mg.optim.RMSprop(p, lr=1e-2, momentum=0.9, centered=True,
                                                               weight_decay=1e-2),
    "adagrad_lr_decay_wd": lambda p: mg.optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=1e-2),
    "adamax": lambda p: mg.optim.Adamax(p, lr=1e-2, weight_decay=1e-2),
    "adadelta": lambda p: mg.optim.Adadelta(p, lr=1.0, weight_decay=1e-2),
}


@pytest.mark.parametrize("dtype", [mg.float32, mg.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_traced_step_equals_eager_bitwise(name, dtype):
    steps = 12
    m1, opt1, step1, x, y = _setup(CONFIGS[name], dtype)
    l1 = [step1(x, y).item() for _ in range(steps)]
    m2, opt2, step2, x, y = _setup(CONFIGS[name], dtype)
    l2 = [step2(x, y).item()]          # the first step makes the optimizer state
    g = mg.graph.trace(step2, x, y)           # the second runs while tracing
    l2.append(g.result.item())
    l2 += [g(x, y).item() for _ in range(steps - 2)]
    assert l1 == l2
    for (k, a), (_, b) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert np.array_equal(a.numpy(), b.numpy()), k
    for (k, a), (_, b) in zip(_state_arrays(opt1), _state_arrays(opt2)):
        assert np.array_equal(a, b), k  # momentum buffers, Adam's moments and step counts
    # the hyper-parameters are inputs, not constants
    names = g.state_names()
    assert "opt.param_groups[0].lr" in names
    if name.startswith("adam"):
        assert {"opt.param_groups[0].betas[0]", "opt.param_groups[0].betas[1]",
                "opt.param_groups[0].eps"} <= set(names)
    fused = {"sgd": "sgd_step", "adam": "adam_step"}.get(name.split("_")[0].rstrip("w"))
    if fused is not None:  # SGD, Adam, AdamW: the group's update is one op (the eager fused step's)
        assert g.count()[fused] == 1 and g.count()["hostmath"] == 0
    elif name == "adamax":
        assert g.count()["hostmath"] == 4  # the bias corrections, once per parameter tensor
    assert all(a.size == 1 for _, a in g.consts)


@pytest.mark.parametrize("name", ["sgd_momentum", "adam"])
def test_a_scheduler_changes_the_learning_rate_of_the_traced_step_without_retracing(name):
    steps = 15
    m1, opt1, step1, x, y = _setup(CONFIGS[name])
    sched1 = mg.optim.lr_scheduler.StepLR(opt1, step_size=3, gamma=0.5)
    for _ in range(steps):
        step1(x, y)
        sched1.step()
    m2, opt2, step2, x, y = _setup(CONFIGS[name])
    sched2 = mg.optim.lr_scheduler.StepLR(opt2, step_size=3, gamma=0.5)
    step2(x, y)
    sched2.step()
    g = mg.graph.trace(step2, x, y)
    sched2.step()
    for _ in range(steps - 2):
        g(x, y)
        sched2.step()
    lr0 = CONFIGS[name](_mlp().parameters()).param_groups[0]["lr"]
    assert opt1.param_groups[0]["lr"] == opt2.param_groups[0]["lr"] == lr0 * 0.5 ** (steps // 3)
    for (k, a), (_, b) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert np.array_equal(a.numpy(), b.numpy()), k


def test_a_hyper_parameter_the_step_branched_on_is_checked_at_each_run():
    m, opt, step, x, y = _setup(lambda p: mg.optim.SGD(p, lr=0.1, momentum=0.9))
    step(x, y)
    g = mg.graph.trace(step, x, y)
    opt.param_groups[0]["momentum"] = 0.5   # still non-zero: the same program, a new value
    g(x, y)
    opt.param_groups[0]["weight_decay"] = 0.1  # was 0 when traced: the program skipped it
    with pytest.raises(GuardFailure, match=r"opt\.param_groups\[0\]\.weight_decay"):
        g(x, y)


def test_a_loaded_traced_step_takes_its_learning_rate_by_name(tmp_path):
    m, opt, step, x, y = _setup(lambda p: mg.optim.SGD(p, lr=0.1))
    step(x, y)
    g = mg.graph.trace(step, x, y)
    g.save(tmp_path / "step.mgg")
    loaded = mg.load_graph(tmp_path / "step.mgg")
    kinds = {b.name: b.kind for _, b in loaded.state}
    assert kinds["opt.param_groups[0].lr"] == "hyper"
