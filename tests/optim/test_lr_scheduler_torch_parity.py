"""Learning-rate schedulers against PyTorch's over 100 steps (skipped when torch is not installed)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minigrad as mg  # noqa: E402
import minigrad.optim as mo  # noqa: E402
from minigrad.optim import lr_scheduler as ms  # noqa: E402

ts = torch.optim.lr_scheduler
STEPS = 100

CASES = [
    ("StepLR", dict(step_size=7, gamma=0.5)),
    ("StepLR", dict(step_size=1, gamma=0.97)),
    ("MultiStepLR", dict(milestones=[10, 30, 30, 75], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.95)),
    ("CosineAnnealingLR", dict(T_max=100)),
    ("CosineAnnealingLR", dict(T_max=13, eta_min=1e-3)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (1.0 + 0.1 * e))),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.5, total_iters=40)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=STEPS + 1)),
    ("OneCycleLR", dict(max_lr=[0.4, 0.8], total_steps=STEPS + 1, pct_start=0.4, anneal_strategy="linear")),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=STEPS + 1, three_phase=True, div_factor=10.0,
                        final_div_factor=100.0, base_momentum=0.8, max_momentum=0.9)),
    ("OneCycleLR", dict(max_lr=0.5, epochs=5, steps_per_epoch=21, cycle_momentum=False)),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.97 if e % 2 else 0.99)),
    ("ConstantLR", dict(factor=0.5, total_iters=8)),
    ("PolynomialLR", dict(total_iters=60, power=2.0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=7)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=1e-3)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=6)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=5, step_size_down=3, mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range", gamma=0.97,
                      base_momentum=0.7, max_momentum=0.95)),
]


def _ids(case):
    return case[0] + "-" + ",".join(f"{k}={v}" for k, v in case[1].items() if k != "lr_lambda")


def _pair(opt_name, lr=0.1, **okw):
    tps = [torch.zeros(2, requires_grad=True) for _ in range(2)]
    mps = [mg.Tensor(np.zeros(2), requires_grad=True) for _ in range(2)]
    topt = getattr(torch.optim, opt_name)([{"params": tps[:1]}, {"params": tps[1:], "lr": lr * 3}], lr=lr, **okw)
    mopt = getattr(mo, opt_name)([{"params": mps[:1]}, {"params": mps[1:], "lr": lr * 3}], lr=lr, **okw)
    return topt, mopt


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_lr_sequence_matches_torch(case, opt_name):
    name, kw = case
    okw = {"momentum": 0.9} if opt_name == "SGD" else {}
    topt, mopt = _pair(opt_name, **okw)
    tsch, msch = getattr(ts, name)(topt, **kw), getattr(ms, name)(mopt, **kw)
    worst = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(STEPS):
            topt.step()
            mopt.step()
            tsch.step()
            msch.step()
            tl, ml = tsch.get_last_lr(), msch.get_last_lr()
            worst = max(worst, max(abs(a - b) for a, b in zip(tl, ml)))
            assert _momenta(topt) == pytest.approx(_momenta(mopt), abs=1e-15, rel=1e-15)
    assert worst <= 1e-15, f"{name}: max lr difference {worst:.3e}"
    assert [g["lr"] for g in topt.param_groups] == [g["lr"] for g in mopt.param_groups]
    assert tsch.last_epoch == msch.last_epoch


def test_reduce_on_plateau_matches_torch():
    rng = np.random.default_rng(0)
    metrics = np.concatenate([np.linspace(5, 1, 20), 1 + 0.01 * rng.standard_normal(80)])
    for kw in [dict(), dict(mode="min", factor=0.5, patience=3, cooldown=2, min_lr=[1e-3, 2e-3]),
               dict(mode="max", factor=0.3, patience=1, threshold=0.01, threshold_mode="abs"),
               dict(mode="min", factor=0.7, patience=0, threshold=1e-3, threshold_mode="rel", eps=1e-4)]:
        topt, mopt = _pair("SGD")
        tsch, msch = ts.ReduceLROnPlateau(topt, **kw), ms.ReduceLROnPlateau(mopt, **kw)
        for m in metrics:
            tsch.step(float(m))
            msch.step(float(m))
            assert tsch.get_last_lr() == msch.get_last_lr(), kw
            assert (tsch.num_bad_epochs, tsch.cooldown_counter, tsch.best) == \
                   (msch.num_bad_epochs, msch.cooldown_counter, msch.best)


def test_chained_cosine_after_manual_lr_change_matches_torch():
    # the recursive form keeps following a manually changed lr, as PyTorch's does
    topt, mopt = _pair("SGD")
    tsch, msch = ts.CosineAnnealingLR(topt, T_max=20), ms.CosineAnnealingLR(mopt, T_max=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in range(60):
            if t == 15:
                for g in topt.param_groups + mopt.param_groups:
                    g["lr"] *= 0.5
            tsch.step()
            msch.step()
            assert tsch.get_last_lr() == pytest.approx(msch.get_last_lr(), rel=1e-14, abs=1e-17)


def test_scheduler_state_dict_keys_match_torch():
    topt, mopt = _pair("SGD", momentum=0.9)
    tsd = ts.StepLR(topt, step_size=3).state_dict()
    msd = ms.StepLR(mopt, step_size=3).state_dict()
    assert {"step_size", "gamma", "base_lrs", "last_epoch", "_step_count", "_last_lr"} <= set(msd)
    for k in ("step_size", "gamma", "base_lrs", "last_epoch", "_step_count", "_last_lr"):
        assert tsd[k] == msd[k], k


def _compose(S, opt):
    return [S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.1, total_iters=5),
                                 S.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2),
                                 S.StepLR(opt, step_size=7, gamma=0.5)], milestones=[5, 40]),
            S.ChainedScheduler([S.ConstantLR(opt, factor=0.2, total_iters=6), S.ExponentialLR(opt, gamma=0.97)])]


@pytest.mark.parametrize("which", [0, 1], ids=["SequentialLR", "ChainedScheduler"])
def test_composite_schedulers_match_torch(which):
    topt, mopt = _pair("SGD", momentum=0.9)
    tsch, msch = _compose(ts, topt)[which], _compose(ms, mopt)[which]
    assert tsch.get_last_lr() == pytest.approx(msch.get_last_lr(), rel=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(STEPS):
            topt.step()
            mopt.step()
            tsch.step()
            msch.step()
            assert tsch.get_last_lr() == pytest.approx(msch.get_last_lr(), rel=1e-14, abs=1e-17), i
            if i == 30:  # a mid-schedule round trip of the nested states (making the fresh
                # schedulers steps the optimizer's lrs, so its state goes back too, as in PyTorch)
                sched_sd, opt_sd = msch.state_dict(), mopt.state_dict()
                fresh = _compose(ms, mopt)[which]
                mopt.load_state_dict(opt_sd)
                fresh.load_state_dict(sched_sd)
                msch = fresh
    assert [g["lr"] for g in topt.param_groups] == pytest.approx([g["lr"] for g in mopt.param_groups], rel=1e-14)
