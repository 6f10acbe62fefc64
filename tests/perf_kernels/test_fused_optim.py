"""The fused eager optimizer steps (SGDStep, AdamStep: one op per parameter group, PyTorch's foreach
path) against the per-tensor in-place ops they replace: bit for bit the same parameters and state."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import adam as adam_mod
from minigrad.optim import optimizer as opt_mod
from minigrad.optim import sgd as sgd_mod

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1, "maximize": True, "betas": (0.3, 0.5), "weight_decay": 1.0}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.3}),
]
SHAPES = [(5, 3), (3,), (2, 1, 4)]


def _run(monkeypatch, fused, name, kw, dtypes, steps=4):
    monkeypatch.setattr(opt_mod, "_FOREACH", fused)
    rng = np.random.default_rng(0)
    ps = [mg.tensor(rng.standard_normal(s).astype(dt), requires_grad=True) for s, dt in zip(SHAPES, dtypes)]
    opt = getattr(mg.optim, name)(ps, **kw)
    for k in range(steps):
        for i, p in enumerate(ps):
            # the first parameter misses a gradient once: it is skipped that step
            p.grad = None if (i == 0 and k == 1) else mg.tensor(rng.standard_normal(p.shape).astype(p.dtype))
        opt.step()
    return ps, opt


def _arrays(ps, opt):
    out = [p.detach().numpy().copy() for p in ps]
    for st in opt.state.values():
        for key in sorted(st):
            v = st[key]
            out.append(v.numpy().copy() if isinstance(v, mg.Tensor) else np.asarray(v))
    return out


@pytest.mark.parametrize("dtypes", [(np.float32,) * 3, (np.float64,) * 3, (np.float32, np.float64, np.float32)],
                         ids=["f32", "f64", "mixed"])
@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_fused_step_equals_per_tensor_step_bitwise(monkeypatch, name, kw, dtypes):
    calls = []
    if name.startswith("Adam"):
        orig = adam_mod.AdamStep.forward
        monkeypatch.setattr(adam_mod.AdamStep, "forward", staticmethod(lambda *a: calls.append(1) or orig(*a)))
    else:  # SGD's eager step calls SGDStep's forward function without apply's dispatch
        orig = sgd_mod._sgd_step
        monkeypatch.setattr(sgd_mod, "_sgd_step", lambda *a: calls.append(1) or orig(*a))
    a = _arrays(*_run(monkeypatch, True, name, kw, dtypes))
    assert len(calls) == 4, "the fused op did not run once per step"
    b = _arrays(*_run(monkeypatch, False, name, kw, dtypes))
    assert len(calls) == 4, "the per-tensor path ran the fused op"
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and np.array_equal(x, y), (name, kw, np.abs(x - y).max())


def test_fused_step_bumps_versions_and_keeps_the_buffers(monkeypatch):
    ps, opt = _run(monkeypatch, True, "SGD", {"lr": 0.1, "momentum": 0.9}, (np.float32,) * 3, steps=1)
    bufs = [opt.state[p]["momentum_buffer"] for p in ps]
    versions = [p._version for p in ps] + [b._version for b in bufs]
    data = [b._data for b in bufs]
    for p in ps:
        p.grad = mg.ones(p.shape)
    opt.step()
    assert all(v1 > v0 for v0, v1 in zip(versions, [p._version for p in ps] + [b._version for b in bufs]))
    assert all(opt.state[p]["momentum_buffer"]._data is d for p, d in zip(ps, data))  # updated in place


def test_a_saved_parameter_stepped_by_the_fused_op_fails_backward(monkeypatch):
    monkeypatch.setattr(opt_mod, "_FOREACH", True)
    w = mg.ones(3, requires_grad=True)
    opt = mg.optim.SGD([w], lr=0.1)
    w.grad = mg.ones(3)
    y = (w * w).sum()  # saves w
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_zero_d_parameters_and_tensor_hyperparameters_take_the_per_tensor_path(monkeypatch):
    calls = []
    orig = sgd_mod.SGDStep.forward
    monkeypatch.setattr(sgd_mod.SGDStep, "forward", staticmethod(lambda *a: calls.append(1) or orig(*a)))
    s = mg.tensor(2.0, requires_grad=True)
    opt = mg.optim.SGD([s], lr=0.5)
    s.grad = mg.tensor(1.0)
    opt.step()
    assert calls == [] and s.item() == 1.5
    v = mg.ones(2, requires_grad=True)
    opt = mg.optim.SGD([v], lr=mg.tensor(0.5))
    v.grad = mg.ones(2)
    opt.step()
    assert calls == [] and np.array_equal(v.detach().numpy(), [0.5, 0.5])
