"""RMSprop against closed forms (no PyTorch needed)."""
import numpy as np

import minigrad as mg
from minigrad.optim import RMSprop


def _param(x):
    return mg.Tensor(np.array(x, dtype=np.float64), requires_grad=True)


def test_first_step():
    g = np.array([2.0, -0.5])
    p = _param([0.0, 0.0])
    opt = RMSprop([p], lr=0.01, alpha=0.99, eps=1e-8)
    p.grad = mg.Tensor(g)
    opt.step()
    np.testing.assert_allclose(p.data.numpy(), -0.01 * g / (np.sqrt(0.01 * g * g) + 1e-8), rtol=1e-12)
    np.testing.assert_allclose(opt.state[p]["square_avg"].data.numpy(), 0.01 * g * g, rtol=1e-12)
    assert set(opt.state[p]) == {"step", "square_avg"}


def test_centered_with_momentum_two_steps():
    lr, alpha, eps, mom = 0.1, 0.9, 1e-8, 0.5
    p = _param([1.0])
    opt = RMSprop([p], lr=lr, alpha=alpha, eps=eps, momentum=mom, centered=True)
    x, v, a, b = 1.0, 0.0, 0.0, 0.0
    for g in (1.0, -3.0):
        p.grad = mg.Tensor(np.array([g]))
        opt.step()
        v = alpha * v + (1 - alpha) * g * g
        a = alpha * a + (1 - alpha) * g
        b = mom * b + g / (np.sqrt(v - a * a) + eps)
        x = x - lr * b
    np.testing.assert_allclose(p.data.numpy(), [x], rtol=1e-12)
    st = opt.state[p]
    assert set(st) == {"step", "square_avg", "grad_avg", "momentum_buffer"}
    np.testing.assert_allclose(st["grad_avg"].data.numpy(), [a], rtol=1e-12)


def test_weight_decay_and_maximize():
    p = _param([2.0])
    opt = RMSprop([p], lr=0.1, weight_decay=0.5, maximize=True, eps=0.0)
    p.grad = mg.Tensor(np.array([3.0]))
    opt.step()
    g = -3.0 + 0.5 * 2.0
    np.testing.assert_allclose(p.data.numpy(), [2.0 - 0.1 * g / np.sqrt(0.01 * g * g)], rtol=1e-12)


def test_defaults():
    g = RMSprop([_param([0.0])]).param_groups[0]
    assert (g["lr"], g["alpha"], g["eps"], g["weight_decay"], g["momentum"], g["centered"], g["maximize"]) == \
        (1e-2, 0.99, 1e-8, 0, 0, False, False)
