"""Learning-rate schedulers against their closed forms (no PyTorch needed)."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import SGD, Adam
from minigrad.optim.lr_scheduler import (
    ChainedScheduler, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, ExponentialLR,
    LambdaLR, LinearLR, LRScheduler, MultiplicativeLR, MultiStepLR, OneCycleLR, PolynomialLR,
    ReduceLROnPlateau, SequentialLR, StepLR,
)


def _opt(lr=0.1, cls=SGD, groups=1, **kw):
    ps = [mg.Tensor(np.zeros(2), requires_grad=True) for _ in range(groups)]
    return cls([{"params": [p], "lr": lr * (i + 1)} for i, p in enumerate(ps)], lr=lr, **kw)


def _run(sched, n):
    """lrs of group 0: the value at construction, then after each of n steps."""
    out = [sched.get_last_lr()[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scheduler.step() without optimizer.step() warns once
        for _ in range(n):
            sched.step()
            out.append(sched.get_last_lr()[0])
    return out


def test_construction_sets_initial_lr_and_base_lrs():
    opt = _opt(0.1, groups=2)
    sched = StepLR(opt, step_size=3)
    assert sched.base_lrs == [0.1, 0.2]
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.2]
    assert sched.last_epoch == 0 and sched.get_last_lr() == [0.1, 0.2]


def test_step_lr():
    lrs = _run(StepLR(_opt(1.0), step_size=3, gamma=0.5), 10)
    np.testing.assert_allclose(lrs, [0.5 ** (e // 3) for e in range(11)], rtol=1e-15)


def test_multi_step_lr_with_repeated_milestone():
    lrs = _run(MultiStepLR(_opt(1.0), milestones=[2, 5, 5], gamma=0.1), 7)
    np.testing.assert_allclose(lrs, [1, 1, 0.1, 0.1, 0.1, 1e-3, 1e-3, 1e-3], rtol=1e-12)


def test_exponential_lr():
    lrs = _run(ExponentialLR(_opt(2.0), gamma=0.9), 20)
    np.testing.assert_allclose(lrs, [2.0 * 0.9**e for e in range(21)], rtol=1e-13)


def test_cosine_annealing_lr_matches_the_closed_form_over_periods():
    base, eta_min, T = 0.5, 0.01, 7
    lrs = _run(CosineAnnealingLR(_opt(base), T_max=T, eta_min=eta_min), 40)
    expected = [eta_min + (base - eta_min) * (1 + math.cos(math.pi * e / T)) / 2 for e in range(41)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-10, atol=1e-12)
    assert abs(lrs[T] - eta_min) < 1e-12 and abs(lrs[2 * T] - base) < 1e-12


def test_lambda_lr_per_group():
    opt = _opt(1.0, groups=2)
    sched = LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.5**e])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(4):
            sched.step()
    assert sched.get_last_lr() == [1.0 / 5, 2.0 * 0.5**4]
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        LambdaLR(_opt(1.0, groups=2), [lambda e: 1.0])


def test_linear_lr():
    lrs = _run(LinearLR(_opt(1.0), start_factor=0.25, end_factor=1.0, total_iters=4), 8)
    np.testing.assert_allclose(lrs, [0.25, 0.4375, 0.625, 0.8125, 1.0, 1.0, 1.0, 1.0, 1.0], rtol=1e-12)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        LinearLR(_opt(), start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        LinearLR(_opt(), end_factor=1.5)


def test_one_cycle_cos_endpoints_and_momentum():
    opt = _opt(0.1, momentum=0.9)
    sched = OneCycleLR(opt, max_lr=1.0, total_steps=100, pct_start=0.3, div_factor=25.0, final_div_factor=1e4)
    lrs, moms = [sched.get_last_lr()[0]], [opt.param_groups[0]["momentum"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(99):
            sched.step()
            lrs.append(sched.get_last_lr()[0])
            moms.append(opt.param_groups[0]["momentum"])
    assert lrs[0] == pytest.approx(1.0 / 25) and moms[0] == pytest.approx(0.95)
    peak = int(0.3 * 100) - 1
    assert lrs[peak] == pytest.approx(1.0) and max(lrs) == lrs[peak] and moms[peak] == pytest.approx(0.85)
    assert lrs[-1] == pytest.approx(1.0 / 25 / 1e4) and moms[-1] == pytest.approx(0.95)
    # cosine annealing on the way up: halfway between start and peak in pct is the mean lr
    mid = peak / 2
    pct = mid / peak
    assert OneCycleLR._annealing_cos(0.04, 1.0, pct) == pytest.approx(0.52)
    with pytest.raises(ValueError, match="Tried to step 101 times"):
        sched.step()
        sched.step()


def test_one_cycle_linear_three_phase_with_adam_betas():
    opt = _opt(0.1, cls=Adam, betas=(0.9, 0.99))
    sched = OneCycleLR(opt, max_lr=0.5, total_steps=20, pct_start=0.25, anneal_strategy="linear",
                       three_phase=True)
    lrs, b1 = [sched.get_last_lr()[0]], [opt.param_groups[0]["betas"][0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(19):
            sched.step()
            lrs.append(sched.get_last_lr()[0])
            b1.append(opt.param_groups[0]["betas"][0])
    # phases end at steps 4 (peak), 8 (back at initial), 19 (min)
    assert lrs[4] == pytest.approx(0.5) and lrs[8] == pytest.approx(0.02) and lrs[19] == pytest.approx(0.02 / 1e4)
    np.testing.assert_allclose(np.diff(lrs[:5]), (0.5 - 0.02) / 4)
    assert b1[4] == pytest.approx(0.85) and b1[8] == pytest.approx(0.95) and b1[19] == pytest.approx(0.95)
    assert opt.param_groups[0]["betas"][1] == 0.99


def test_one_cycle_errors():
    with pytest.raises(ValueError, match="total_steps OR"):
        OneCycleLR(_opt(), max_lr=1.0)
    with pytest.raises(ValueError, match="pct_start"):
        OneCycleLR(_opt(), max_lr=1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy"):
        OneCycleLR(_opt(), max_lr=1.0, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        OneCycleLR(_opt(groups=2), max_lr=[1.0], total_steps=10)
    opt = _opt()
    opt.defaults.pop("momentum")
    with pytest.raises(ValueError, match="momentum or beta1"):
        OneCycleLR(opt, max_lr=1.0, total_steps=10)
    sched = OneCycleLR(_opt(), max_lr=1.0, epochs=2, steps_per_epoch=5, cycle_momentum=False)
    assert sched.total_steps == 10


def test_reduce_on_plateau_patience_cooldown_and_min_lr():
    opt = _opt(1.0)
    sched = ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=0.2)
    metrics = [10, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]
    lrs = []
    for m in metrics:
        sched.step(m)
        lrs.append(opt.param_groups[0]["lr"])
    # improvements at epochs 1, 2; bad epochs 3, 4, 5 -> reduce at 5th value (index 4);
    # cooldown 1 eats index 5; then 3 more bad (6, 7, 8) -> reduce at index 8; then floor at 0.2
    assert lrs == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25]
    for _ in range(10):
        sched.step(9)
    assert opt.param_groups[0]["lr"] == 0.2 and sched.get_last_lr() == [0.2]


def test_reduce_on_plateau_modes_and_thresholds():
    opt = _opt(1.0)
    sched = ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, threshold=0.1, threshold_mode="abs")
    sched.step(1.0)   # best = 1.0
    sched.step(1.05)  # not better by 0.1 absolute -> bad epoch > patience 0 -> reduce
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    sched.step(1.2)   # better
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    opt = _opt(1.0)
    sched = ReduceLROnPlateau(opt, mode="min", patience=0, threshold=0.5)  # rel: needs a < best * 0.5
    sched.step(10.0)
    sched.step(6.0)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    sched.step(mg.tensor(2.0))  # a 0-d tensor works too
    assert sched.best == 2.0
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        ReduceLROnPlateau(_opt(), factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown"):
        ReduceLROnPlateau(_opt(), mode="avg")
    with pytest.raises(ValueError, match="threshold mode x is unknown"):
        ReduceLROnPlateau(_opt(), threshold_mode="x")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        ReduceLROnPlateau(_opt(groups=2), min_lr=[0.1])


def test_reduce_on_plateau_skips_tiny_reductions():
    opt = _opt(1e-9)
    sched = ReduceLROnPlateau(opt, patience=0, eps=1e-8)
    sched.step(1.0)
    sched.step(2.0)
    assert opt.param_groups[0]["lr"] == 1e-9


def test_scheduler_state_dict_round_trip():
    opt = _opt(1.0)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    _run(sched, 3)
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3 and sd["base_lrs"] == [1.0]
    opt2 = _opt(1.0)
    sched2 = StepLR(opt2, step_size=10, gamma=0.9)
    sched2.load_state_dict(sd)
    assert sched2.step_size == 2 and sched2.last_epoch == 3
    opt2.param_groups[0]["lr"] = sched.get_last_lr()[0]
    a, b = _run(sched, 5), _run(sched2, 5)
    assert a == b


def test_lambda_state_dict_skips_plain_functions_but_keeps_callable_objects():
    class Warmup:
        def __init__(self, n):
            self.n = n

        def __call__(self, e):
            return min(1.0, (e + 1) / self.n)

    opt = _opt(1.0, groups=2)
    sched = LambdaLR(opt, [lambda e: 1.0, Warmup(4)])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [None, {"n": 4}]
    w = Warmup(100)
    sched2 = LambdaLR(_opt(1.0, groups=2), [lambda e: 1.0, w])
    sched2.load_state_dict(sd)
    assert w.n == 4 and "lr_lambdas" in sd


def test_resume_with_last_epoch_needs_initial_lr():
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(_opt(), step_size=2, last_epoch=3)
    opt = _opt(1.0)
    StepLR(opt, step_size=2)
    sched = StepLR(opt, step_size=2, gamma=0.5, last_epoch=3)
    assert sched.last_epoch == 4 and sched.base_lrs == [1.0]


def test_not_an_optimizer():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        StepLR(object(), step_size=2)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ReduceLROnPlateau(object())


def test_warns_when_scheduler_steps_before_optimizer():
    opt = _opt(1.0)
    sched = StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    opt = _opt(1.0)
    sched = ExponentialLR(opt, gamma=0.5)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()
    assert opt.param_groups[0]["lr"] == 0.5


def test_optimizer_step_still_works_after_wrapping():
    p = mg.Tensor(np.array([1.0]), requires_grad=True)
    opt = SGD([p], lr=0.5)
    ExponentialLR(opt, gamma=0.5)
    StepLR(opt, step_size=1)  # a second scheduler does not wrap twice
    p.grad = mg.Tensor(np.array([1.0]))
    assert opt.step() is None
    np.testing.assert_array_equal(p.data.numpy(), [0.5])
    assert opt.step(lambda: 3.0) == 3.0


def test_closed_form_with_epoch_argument():
    opt = _opt(1.0)
    sched = StepLR(opt, step_size=3, gamma=0.5)
    opt.step()
    with pytest.warns(UserWarning, match="deprecated"):
        sched.step(7)
    assert sched.get_last_lr() == [0.25]


def test_base_class_get_lr_is_abstract():
    with pytest.raises(NotImplementedError):
        LRScheduler(_opt())


def test_get_lr_outside_step_warns():
    sched = StepLR(_opt(), step_size=2)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


# the schedulers added after PyTorch's list was checked (they were missing: AttributeError); the
# expected sequences are PyTorch 2.13's, written out
def test_multiplicative_constant_polynomial_lr():
    np.testing.assert_allclose(_run(MultiplicativeLR(_opt(0.1), lambda e: 0.9), 4),
                               [0.1, 0.09, 0.081, 0.0729, 0.06561], rtol=1e-12)
    np.testing.assert_allclose(_run(ConstantLR(_opt(0.1), factor=0.5, total_iters=4), 6),
                               [0.05, 0.05, 0.05, 0.05, 0.1, 0.1, 0.1], rtol=1e-12)
    np.testing.assert_allclose(_run(PolynomialLR(_opt(0.1), total_iters=10, power=2.0), 12),
                               [0.1, 0.081, 0.064, 0.049, 0.036, 0.025, 0.016, 0.009, 0.004, 0.001, 0.0, 0.0, 0.0],
                               rtol=1e-9, atol=1e-15)
    with pytest.raises(ValueError):
        ConstantLR(_opt(), factor=1.5)
    with pytest.raises(TypeError):
        MultiplicativeLR(_opt(), 0.9)


def test_cosine_annealing_warm_restarts_with_t_mult():
    lrs = _run(CosineAnnealingWarmRestarts(_opt(0.1), T_0=3, T_mult=2, eta_min=0.001), 10)
    np.testing.assert_allclose(lrs, [0.1, 0.07525, 0.02575, 0.1, 0.093368257, 0.07525, 0.0505, 0.02575,
                                     0.007631743, 0.1, 0.098313328], rtol=0, atol=1e-9)
    sched = CosineAnnealingWarmRestarts(_opt(0.1), T_0=2, T_mult=2)
    sched.step(2.5)  # a fractional epoch: 0.5 into the second period (T_i = 4)
    assert (sched.T_i, sched.T_cur, sched.last_epoch) == (4, 0.5, 2)
    with pytest.raises(ValueError):
        CosineAnnealingWarmRestarts(_opt(), T_0=0)


def test_cyclic_lr_modes_and_momentum():
    np.testing.assert_allclose(_run(CyclicLR(_opt(0.1, momentum=0.9), 0.01, 0.1, step_size_up=3, step_size_down=2,
                                             mode="triangular2"), 10),
                               [0.01, 0.04, 0.07, 0.1, 0.055, 0.01, 0.025, 0.04, 0.055, 0.0325, 0.01], rtol=1e-9)
    opt = _opt(0.1, cls=Adam)
    sched = CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.95)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(4):
            sched.step()
            seen.append((sched.get_last_lr()[0], opt.param_groups[0]["betas"][0]))
    np.testing.assert_allclose(seen, [(0.0385, 0.868333333), (0.06415, 0.839833333),
                                      (0.08716375, 0.8142625), (0.058870375, 0.845699583)], rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="momentum"):
        CyclicLR(mg.optim.Adagrad([mg.Tensor(np.zeros(1), requires_grad=True)], lr=0.1), 0.01, 0.1)


def test_sequential_lr_and_chained_scheduler():
    opt = _opt(0.1)
    seq = SequentialLR(opt, [LinearLR(opt, 0.1, total_iters=5), ExponentialLR(opt, 0.9)], milestones=[5])
    np.testing.assert_allclose(_run(seq, 8), [0.01, 0.028, 0.046, 0.064, 0.082, 0.1, 0.09, 0.081, 0.0729],
                               rtol=1e-9)
    opt = _opt(0.1)
    chain = ChainedScheduler([ConstantLR(opt, 0.1, total_iters=2), ExponentialLR(opt, 0.9)])
    np.testing.assert_allclose(_run(chain, 4), [0.01, 0.009, 0.081, 0.0729, 0.06561], rtol=1e-9)
    with pytest.raises(ValueError, match="one more"):
        SequentialLR(opt, [StepLR(opt, 2)], milestones=[3])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        ChainedScheduler([StepLR(opt, 2), ReduceLROnPlateau(opt)])
