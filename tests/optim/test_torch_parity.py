"""Optimizers against PyTorch's, step for step in float64 (skipped when torch is not installed)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minigrad as mg  # noqa: E402
import minigrad.optim as mo  # noqa: E402

STEPS = 60
TOL = 1e-10  # measured: ~1e-15 or below for every case

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, weight_decay=0.2, dampening=0.5)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, amsgrad=True, weight_decay=0.05)),
    ("Adam", dict(lr=0.02, betas=(0.3, 0.4))),  # 1 - beta1 >= 0.5: lerp's other branch
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, maximize=True, betas=(0.5, 0.9))),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01, alpha=0.3, centered=True, eps=1e-4)),  # 1 - alpha >= 0.5
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    ("Adagrad", dict(lr=0.05, maximize=True, lr_decay=0.01)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.6, eps=1e-4)),
    ("Adadelta", dict(lr=0.3, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict(lr=1.0, rho=0.95, weight_decay=0.01)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.02, betas=(0.3, 0.4))),  # 1 - beta1 >= 0.5: lerp's other branch
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.02, maximize=True, momentum_decay=0.0, eps=1e-6)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.99))),  # rho_t > 5 from step 6 on: both branches
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.7), eps=1e-6)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, t0=10)),  # averaging starts at step 10
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.02, t0=0, maximize=True)),
]

SHAPES = [(4, 3), (3,), ()]


def _ids(case):
    name, kw = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items())


def _setup(seed, dtype):
    rng = np.random.default_rng(seed)
    x0 = [rng.standard_normal(s) for s in SHAPES]
    noise = [[rng.standard_normal(s) for s in SHAPES] for _ in range(STEPS)]
    return [x.astype(dtype) for x in x0], [[n.astype(dtype) for n in ns] for ns in noise]


def _grad(t, i, x, noise):
    # gradient of a fixed quadratic plus per-step noise; the last parameter gets none every third step
    if i == len(SHAPES) - 1 and t % 3 == 2:
        return None
    return np.asarray(0.5 * x + noise[t][i])


def _trajectories(name, kw, dtype=np.float64, seed=0, two_groups=True, lr_change=True):
    x0, noise = _setup(seed, dtype)
    tp = [torch.tensor(x.copy(), requires_grad=True) for x in x0]
    mp = [mg.Tensor(x.copy(), requires_grad=True) for x in x0]

    def groups(ps):
        if not two_groups:
            return ps
        extra = {"lr": kw.get("lr", 1e-3) * 0.5} if "lr" in kw else {"lr": 5e-4}
        return [{"params": ps[:1]}, {"params": ps[1:], **extra}]

    topt = getattr(torch.optim, name)(groups(tp), **kw, foreach=False)
    mopt = getattr(mo, name)(groups(mp), **kw)
    worst = 0.0
    for t in range(STEPS):
        if lr_change and t == STEPS // 2:
            for tg, mgp in zip(topt.param_groups, mopt.param_groups):
                tg["lr"] *= 0.3
                mgp["lr"] *= 0.3
        for i, (a, b) in enumerate(zip(tp, mp)):
            ga = _grad(t, i, a.detach().numpy(), noise)
            gb = _grad(t, i, b.data.numpy(), noise)
            a.grad = None if ga is None else torch.from_numpy(ga)
            b.grad = None if gb is None else mg.Tensor(gb)
        topt.step()
        mopt.step()
        for a, b in zip(tp, mp):
            worst = max(worst, float(np.max(np.abs(a.detach().numpy() - b.data.numpy()), initial=0.0)))
    return topt, mopt, tp, mp, worst


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_trajectory_matches_torch_float64(case):
    name, kw = case
    topt, mopt, tp, mp, worst = _trajectories(name, kw)
    assert worst < TOL, f"{name} {kw}: max |torch - minigrad| over {STEPS} steps = {worst:.3e}"
    # the state buffers agree too, under the same keys
    for a, b in zip(tp, mp):
        ts, ms = topt.state[a], mopt.state[b]
        assert set(ts) == set(ms), (set(ts), set(ms))
        for k in ts:
            tv = ts[k].detach().numpy() if isinstance(ts[k], torch.Tensor) else np.asarray(ts[k])
            mv = ms[k].data.numpy() if isinstance(ms[k], mg.Tensor) else np.asarray(ms[k])
            np.testing.assert_allclose(mv, tv, rtol=0, atol=TOL * max(1.0, float(np.max(np.abs(tv), initial=0))))


@pytest.mark.parametrize("case", [c for c in CASES if c[1]][::3], ids=_ids)
def test_trajectory_matches_torch_float32(case):
    name, kw = case
    *_, tp, mp, worst = _trajectories(name, kw, dtype=np.float32, seed=1)
    for b in mp:
        assert b.data.numpy().dtype == np.float32
    assert worst < 1e-5, f"{name} {kw}: float32 max |torch - minigrad| = {worst:.3e}"


NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD"]


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_layout_matches_torch(name):
    kw = dict(lr=0.01)
    if name == "SGD":
        kw["momentum"] = 0.9
    if name in ("Adam", "AdamW"):
        kw["amsgrad"] = True
    if name == "RMSprop":
        kw.update(momentum=0.5, centered=True)
    topt, mopt, *_ = _trajectories(name, kw)
    tsd, msd = topt.state_dict(), mopt.state_dict()
    assert [g["params"] for g in tsd["param_groups"]] == [g["params"] for g in msd["param_groups"]]
    assert sorted(tsd["state"]) == sorted(msd["state"])
    for k in tsd["state"]:
        assert set(tsd["state"][k]) == set(msd["state"][k])
        step_t, step_m = tsd["state"][k].get("step"), msd["state"][k].get("step")
        if step_t is not None:
            assert float(step_t) == float(step_m.item())
    torch_only = {"foreach", "fused", "capturable", "differentiable"}
    for tg, mgp in zip(tsd["param_groups"], msd["param_groups"]):
        assert {k for k in tg if k not in torch_only} == set(mgp)
        for k in mgp:
            assert tg[k] == mgp[k], k


def test_default_hyper_parameters_match_torch():
    for name in NAMES + ["LBFGS"]:
        tg = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]).param_groups[0]
        mgp = getattr(mo, name)([mg.Tensor(np.zeros(1), requires_grad=True)]).param_groups[0]
        for k, v in mgp.items():
            if k != "params":
                assert tg[k] == v, (name, k, tg[k], v)


def test_repr_matches_torch_for_shared_keys():
    tp = torch.zeros(1, requires_grad=True)
    mp = mg.Tensor(np.zeros(1), requires_grad=True)
    tr = repr(torch.optim.SGD([tp], lr=0.1, momentum=0.9))
    mr = repr(mo.SGD([mp], lr=0.1, momentum=0.9))
    torch_only = ("foreach", "fused", "differentiable")
    tr = "\n".join(line for line in tr.splitlines() if line.strip().split(":")[0] not in torch_only)
    assert tr == mr


FORWARD_AD_CASES = [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
]


def _steps(name, kw, p0, gs, *, L, tangents=None):
    """The parameter after one step per gradient, minigrad (L=mg; with tangents: forward AD, returning
    the tangent too) or torch."""
    if L is torch:
        tp = torch.tensor(p0.copy(), requires_grad=True)
        opt = getattr(torch.optim, name)([tp], **kw)
        for g in gs:
            tp.grad = torch.tensor(g)
            opt.step()
        return tp.detach().numpy()
    from minigrad.autograd import forward_ad as fwAD
    p = mg.tensor(p0.copy(), requires_grad=True)
    opt = getattr(mo, name)([p], **kw)
    with fwAD.dual_level():
        for i, g in enumerate(gs):
            p.grad = mg.tensor(g) if tangents is None else fwAD.make_dual(mg.tensor(g), mg.tensor(tangents[i]))
            opt.step()
        t = None if tangents is None else fwAD.unpack_dual(p).tangent
        return p.detach().numpy(), (None if t is None else t.detach().numpy())


@pytest.mark.parametrize("name,kw", FORWARD_AD_CASES, ids=lambda c: str(c))
def test_forward_ad_through_steps(name, kw):
    """A tangent on the gradients carried through 4 steps into the parameter (the update written once,
    run with minigrad's ops), the primal as PyTorch's step. The tangent: for SGD as PyTorch's
    differentiable=True step carries it (its first momentum buffer is a detached copy of the
    gradient, so differences of the steps are not the oracle); for Adam/AdamW as central differences
    of the steps along it (float64; PyTorch's differentiable Adam takes its bias corrections from a
    float32 step tensor, ~1e-7 off)."""
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(6)
    gs = [rng.standard_normal(6) for _ in range(4)]
    ts = [rng.standard_normal(6) for _ in range(4)]
    ours, ours_t = _steps(name, kw, p0, gs, L=mg, tangents=ts)
    np.testing.assert_allclose(ours, _steps(name, kw, p0, gs, L=torch), rtol=TOL, atol=TOL)
    if name == "SGD":
        import torch.autograd.forward_ad as tfw
        tp = torch.tensor(p0.copy(), requires_grad=True).clone()  # (not a leaf: the step writes it in place)
        opt = torch.optim.SGD([tp], differentiable=True, **kw)
        with tfw.dual_level():
            for g, t in zip(gs, ts):
                tp.grad = tfw.make_dual(torch.tensor(g), torch.tensor(t))
                opt.step()
            ref_t = tfw.unpack_dual(tp).tangent.detach().numpy()
        np.testing.assert_allclose(ours_t, ref_t, rtol=TOL, atol=TOL)
        return
    h = 1e-6
    up = _steps(name, kw, p0, [g + h * t for g, t in zip(gs, ts)], L=mg)[0]
    down = _steps(name, kw, p0, [g - h * t for g, t in zip(gs, ts)], L=mg)[0]
    np.testing.assert_allclose(ours_t, (up - down) / (2 * h), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,kw", [("SGD", dict(momentum=0.9, weight_decay=0.01)), ("Adam", dict(weight_decay=0.01)),
                                     ("RMSprop", dict(momentum=0.5, weight_decay=0.01))], ids=lambda c: str(c))
def test_tensor_hyper_parameters_eagerly_as_torch(name, kw):
    """momentum / weight_decay given as 0-d tensors (PyTorch accepts them) step as PyTorch's."""
    g = np.array([1.0, -2.0, 3.0])
    p = mg.tensor(np.ones(3), requires_grad=True)
    opt = getattr(mo, name)([p], lr=0.1, **{k: mg.tensor(v) for k, v in kw.items()})
    tp = torch.ones(3, dtype=torch.float64, requires_grad=True)
    topt = getattr(torch.optim, name)([tp], lr=0.1, **{k: torch.tensor(v) for k, v in kw.items()})
    for _ in range(3):
        p.grad, tp.grad = mg.tensor(g), torch.tensor(g)
        opt.step()
        topt.step()
    np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=TOL, atol=TOL)
