"""Adam against closed forms (no PyTorch needed)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import Adam


def _param(x):
    return mg.Tensor(np.array(x, dtype=np.float64), requires_grad=True)


def test_first_step_is_lr_times_sign_of_the_gradient():
    g = np.array([3.0, -0.5, 1e-3, -200.0])
    p = _param(np.zeros(4))
    opt = Adam([p], lr=0.01, eps=1e-12)
    p.grad = mg.Tensor(g)
    opt.step()
    # bias-corrected m = g, v = g^2, so the step is lr * g / (|g| + eps)
    np.testing.assert_allclose(p.data.numpy(), -0.01 * np.sign(g), rtol=1e-8)


def test_two_steps_by_formula():
    g1, g2 = np.array([1.0, -2.0]), np.array([0.5, 4.0])
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    p = _param([1.0, 1.0])
    opt = Adam([p], lr=lr, betas=(b1, b2), eps=eps)
    x = np.array([1.0, 1.0])
    m = v = np.zeros(2)
    for t, g in enumerate([g1, g2], start=1):
        p.grad = mg.Tensor(g)
        opt.step()
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x = x - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    np.testing.assert_allclose(p.data.numpy(), x, rtol=1e-12)
    st = opt.state[p]
    np.testing.assert_allclose(st["exp_avg"].data.numpy(), m, rtol=1e-12)
    np.testing.assert_allclose(st["exp_avg_sq"].data.numpy(), v, rtol=1e-12)
    assert float(st["step"].item()) == 2.0
    assert "max_exp_avg_sq" not in st


def test_amsgrad_uses_the_running_max():
    p = _param([0.0])
    opt = Adam([p], lr=0.1, betas=(0.0, 0.5), amsgrad=True, eps=0.0)
    p.grad = mg.Tensor(np.array([2.0]))
    opt.step()  # v = 2, vmax = 2
    p.grad = mg.Tensor(np.array([0.0]))
    opt.step()  # v = 1, vmax stays 2; m = 0 so no move
    np.testing.assert_allclose(opt.state[p]["max_exp_avg_sq"].data.numpy(), [2.0])
    np.testing.assert_allclose(opt.state[p]["exp_avg_sq"].data.numpy(), [1.0])
    p.grad = mg.Tensor(np.array([1.0]))
    before = p.data.numpy().copy()
    opt.step()  # m = 1, v = 1, vmax = 2, t = 3
    expected = before - 0.1 * 1.0 / (np.sqrt(2.0) / np.sqrt(1 - 0.5**3))
    np.testing.assert_allclose(p.data.numpy(), expected, rtol=1e-12)


def test_l2_weight_decay_enters_the_moments():
    p = _param([2.0])
    opt = Adam([p], lr=0.1, weight_decay=0.5)
    p.grad = mg.Tensor(np.array([0.0]))
    opt.step()
    np.testing.assert_allclose(opt.state[p]["exp_avg"].data.numpy(), [0.1 * 0.5 * 2.0], rtol=1e-12)
    np.testing.assert_allclose(p.data.numpy(), [2.0 - 0.1], rtol=1e-7)  # first step ~ lr * sign


def test_maximize():
    p = _param([0.0, 0.0])
    opt = Adam([p], lr=0.01, maximize=True)
    p.grad = mg.Tensor(np.array([1.0, -1.0]))
    opt.step()
    np.testing.assert_allclose(p.data.numpy(), [0.01, -0.01], rtol=1e-6)


def test_betas_above_one_half_use_the_other_lerp_branch():
    # 1 - beta1 >= 0.5 takes PyTorch's `end - (end - x) * (1 - w)` form; the result is the same average
    p = _param([0.0])
    opt = Adam([p], lr=0.1, betas=(0.2, 0.3))
    for g in (1.0, 3.0):
        p.grad = mg.Tensor(np.array([g]))
        opt.step()
    np.testing.assert_allclose(opt.state[p]["exp_avg"].data.numpy(), [0.2 * 0.8 + 0.8 * 3.0], rtol=1e-14)


def test_defaults():
    g = Adam([_param([0.0])]).param_groups[0]
    assert (g["lr"], g["betas"], g["eps"], g["weight_decay"], g["amsgrad"], g["maximize"]) == \
        (1e-3, (0.9, 0.999), 1e-8, 0, False, False)
    assert g["decoupled_weight_decay"] is False


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_converges_on_a_quadratic(dtype):
    target = np.array([1.0, -2.0, 3.0], dtype=dtype)
    p = mg.Tensor(np.zeros(3, dtype=dtype), requires_grad=True)
    opt = Adam([p], lr=0.1)
    for _ in range(300):
        p.grad = mg.Tensor(2 * (p.data.numpy() - target))
        opt.step()
    np.testing.assert_allclose(p.data.numpy(), target, atol=1e-2)
    assert p.data.numpy().dtype == dtype
