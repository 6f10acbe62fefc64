"""Adagrad against closed forms (no PyTorch needed)."""
import numpy as np

import minigrad as mg
from minigrad.optim import Adagrad


def _param(x):
    return mg.Tensor(np.array(x, dtype=np.float64), requires_grad=True)


def test_state_is_made_at_construction():
    p = _param([1.0, 2.0])
    opt = Adagrad([p], initial_accumulator_value=0.25)
    st = opt.state[p]
    np.testing.assert_array_equal(st["sum"].data.numpy(), [0.25, 0.25])
    assert float(st["step"].item()) == 0.0
    assert list(opt.state_dict()["state"]) == [0]


def test_three_steps_with_lr_decay():
    lr, decay, eps, init = 0.5, 0.1, 1e-10, 0.1
    p = _param([1.0])
    opt = Adagrad([p], lr=lr, lr_decay=decay, initial_accumulator_value=init, eps=eps)
    x, s = 1.0, init
    for t, g in enumerate((1.0, -2.0, 0.5), start=1):
        p.grad = mg.Tensor(np.array([g]))
        opt.step()
        clr = lr / (1 + (t - 1) * decay)
        s += g * g
        x -= clr * g / (np.sqrt(s) + eps)
    np.testing.assert_allclose(p.data.numpy(), [x], rtol=1e-12)
    np.testing.assert_allclose(opt.state[p]["sum"].data.numpy(), [s], rtol=1e-12)


def test_weight_decay_and_maximize():
    p = _param([2.0])
    opt = Adagrad([p], lr=0.1, weight_decay=0.5, maximize=True, eps=0.0)
    p.grad = mg.Tensor(np.array([3.0]))
    opt.step()
    g = -3.0 + 0.5 * 2.0
    np.testing.assert_allclose(p.data.numpy(), [2.0 - 0.1 * g / abs(g)], rtol=1e-12)


def test_param_group_added_later_gets_state():
    a, b = _param([1.0]), _param([1.0])
    opt = Adagrad([a], lr=0.1)
    opt.add_param_group({"params": [b], "initial_accumulator_value": 1.0})
    b.grad = mg.Tensor(np.array([1.0]))
    opt.step()
    np.testing.assert_allclose(b.data.numpy(), [1.0 - 0.1 / (np.sqrt(2.0) + 1e-10)], rtol=1e-14)


def test_defaults():
    g = Adagrad([_param([0.0])]).param_groups[0]
    assert (g["lr"], g["lr_decay"], g["weight_decay"], g["initial_accumulator_value"], g["eps"], g["maximize"]) == \
        (1e-2, 0, 0, 0, 1e-10, False)
