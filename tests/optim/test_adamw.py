"""AdamW: decoupled weight decay (no PyTorch needed)."""
import numpy as np

import minigrad as mg
from minigrad.optim import Adam, AdamW


def _param(x):
    return mg.Tensor(np.array(x, dtype=np.float64), requires_grad=True)


def test_decay_shrinks_the_weights_directly():
    p = _param([2.0, -4.0])
    opt = AdamW([p], lr=0.1, weight_decay=0.5)
    p.grad = mg.Tensor(np.zeros(2))
    opt.step()
    # zero gradient: the moments stay 0, so only p *= 1 - lr * wd happens
    np.testing.assert_array_equal(p.data.numpy(), np.array([2.0, -4.0]) * (1 - 0.1 * 0.5))
    np.testing.assert_array_equal(opt.state[p]["exp_avg"].data.numpy(), [0.0, 0.0])


def test_equals_adam_after_the_decay():
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal(5), rng.standard_normal(5)
    a, b = _param(x), _param(x * (1 - 0.01 * 0.2))
    AdamW_opt, adam_opt = AdamW([a], lr=0.01, weight_decay=0.2), Adam([b], lr=0.01)
    a.grad, b.grad = mg.Tensor(g), mg.Tensor(g)
    AdamW_opt.step()
    adam_opt.step()
    np.testing.assert_array_equal(a.data.numpy(), b.data.numpy())


def test_defaults_and_flag():
    opt = AdamW([_param([0.0])])
    g = opt.param_groups[0]
    assert g["weight_decay"] == 1e-2 and g["lr"] == 1e-3 and g["decoupled_weight_decay"] is True
    assert isinstance(opt, Adam)
    sd = opt.state_dict()
    sd["param_groups"][0]["decoupled_weight_decay"] = False
    opt.load_state_dict(sd)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True  # AdamW always decouples
