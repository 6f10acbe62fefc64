"""Every write into a tensor's memory bumps its version counter: around each optimizer step and each
module call, every tensor whose bytes changed must have a new _version (checked on the bytes, not by
looking for `.data` in the code), so a graph that saved the old value raises instead of lying."""
import numpy as np
import pytest

import minigrad as mg

nn = mg.nn

OPTIMIZERS = [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01, "nesterov": True}),
    ("Adam", {"lr": 0.01}), ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01}), ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"lr": 0.1}), ("Adadelta", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("ASGD", {}),
]


def _tensors(opt, model):
    out = {f"param{i}": p for i, p in enumerate(model.parameters())}
    out.update({f"grad{i}": p.grad for i, p in enumerate(model.parameters()) if p.grad is not None})
    for i, st in enumerate(opt.state.values()):
        for k, v in st.items():
            if isinstance(v, mg.Tensor):
                out[f"state{i}.{k}"] = v
    for name, b in model.named_buffers():
        out[f"buffer.{name}"] = b
    return out


def _check(tensors_before, tensors_after, bytes_before, versions_before, where):
    for name, t in tensors_after.items():
        if name not in bytes_before:
            continue
        changed = t._data.tobytes() != bytes_before[name]
        if changed:
            assert t._version != versions_before[name], f"{where}: {name} changed without a version bump"


@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizer_steps_bump_the_version_of_everything_they_write(name, kw):
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    opt = getattr(mg.optim, name)(model.parameters(), **kw)
    x = mg.randn(5, 4)
    for step in range(3):
        opt.zero_grad(set_to_none=step % 2 == 0)
        (model(x) ** 2).sum().backward()
        ts = _tensors(opt, model)
        snap = {k: t._data.tobytes() for k, t in ts.items()}
        vers = {k: t._version for k, t in ts.items()}
        opt.step()
        _check(ts, _tensors(opt, model), snap, vers, f"{name}.step() #{step}")


@pytest.mark.parametrize("training", [True, False])
def test_module_calls_bump_the_version_of_buffers_they_write(training):
    mg.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3),
                          nn.BatchNorm1d(3), nn.Dropout(0.2), nn.LayerNorm(3))
    model.train(training)
    x = mg.randn(4, 1, 4, 4)
    ts = {n: b for n, b in model.named_buffers()} | {n: p for n, p in model.named_parameters()}
    snap = {k: t._data.tobytes() for k, t in ts.items()}
    vers = {k: t._version for k, t in ts.items()}
    model(x)
    _check(ts, ts, snap, vers, f"module call (training={training})")
    if training:  # the running statistics did change, and their versions with them
        assert model[1].running_mean._version != vers["1.running_mean"]
