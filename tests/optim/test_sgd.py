"""SGD against trajectories worked out by hand (no PyTorch needed)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import SGD


def _quadratic_run(steps, a=2.0, p0=1.0, **kw):
    """Minimize f(p) = a/2 p^2 (grad a*p) and return the trajectory of p."""
    p = mg.Tensor(np.array([p0]), requires_grad=True)
    opt = SGD([p], **kw)
    out = []
    for _ in range(steps):
        p.grad = mg.Tensor(a * p.data.numpy())
        opt.step()
        out.append(p.data.numpy()[0])
    return out, opt, p


def test_plain_sgd():
    traj, _, _ = _quadratic_run(3, lr=0.1)
    # p <- p - 0.1 * 2p = 0.8 p
    np.testing.assert_allclose(traj, [0.8, 0.64, 0.512], rtol=1e-15)


def test_momentum_three_steps_by_hand():
    traj, opt, p = _quadratic_run(3, lr=0.1, momentum=0.9)
    # step 1: g=2, b=2, p=1-0.2=0.8
    # step 2: g=1.6, b=0.9*2+1.6=3.4, p=0.8-0.34=0.46
    # step 3: g=0.92, b=0.9*3.4+0.92=3.98, p=0.46-0.398=0.062
    np.testing.assert_allclose(traj, [0.8, 0.46, 0.062], rtol=1e-12)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].data.numpy(), [3.98], rtol=1e-12)


def test_dampening_is_not_applied_on_the_first_step():
    traj, opt, p = _quadratic_run(2, lr=0.1, momentum=0.9, dampening=0.5)
    # step 1: b=g=2 (undamped), p=0.8; step 2: g=1.6, b=1.8+0.5*1.6=2.6, p=0.8-0.26=0.54
    np.testing.assert_allclose(traj, [0.8, 0.54], rtol=1e-12)


def test_nesterov_by_hand():
    traj, _, _ = _quadratic_run(2, lr=0.1, momentum=0.9, nesterov=True)
    # step 1: g=2, b=2, g'=2+1.8=3.8, p=1-0.38=0.62
    # step 2: g=1.24, b=1.8+1.24=3.04, g'=1.24+2.736=3.976, p=0.62-0.3976=0.2224
    np.testing.assert_allclose(traj, [0.62, 0.2224], rtol=1e-12)


def test_weight_decay_adds_to_the_gradient():
    traj, _, _ = _quadratic_run(1, a=0.0, lr=0.1, weight_decay=0.5)
    np.testing.assert_allclose(traj, [1.0 - 0.1 * 0.5], rtol=1e-15)


def test_maximize_ascends():
    traj, _, _ = _quadratic_run(2, lr=0.1, maximize=True)
    np.testing.assert_allclose(traj, [1.2, 1.44], rtol=1e-15)


def test_maximize_with_momentum_and_weight_decay():
    # g = -grad + wd * p  (weight decay is added after negation, as in PyTorch)
    traj, _, _ = _quadratic_run(1, lr=0.1, momentum=0.9, weight_decay=0.5, maximize=True)
    np.testing.assert_allclose(traj, [1.0 - 0.1 * (-2.0 + 0.5)], rtol=1e-15)


def test_no_state_without_momentum():
    _, opt, p = _quadratic_run(2, lr=0.1)
    assert len(opt.state) == 0 or opt.state[p] == {}


def test_defaults_match_pytorch():
    opt = SGD([mg.Tensor(np.zeros(1), requires_grad=True)])
    g = opt.param_groups[0]
    assert (g["lr"], g["momentum"], g["dampening"], g["weight_decay"], g["nesterov"], g["maximize"]) == \
        (1e-3, 0, 0, 0, False, False)


def test_momentum_switched_on_later():
    p = mg.Tensor(np.array([1.0]), requires_grad=True)
    opt = SGD([p], lr=0.1)
    p.grad = mg.Tensor(np.array([1.0]))
    opt.step()
    opt.param_groups[0]["momentum"] = 0.5  # e.g. OneCycleLR does this
    opt.step()
    opt.step()
    # step 2: b=1, p=0.9-0.1=0.8; step 3: b=0.5+1=1.5, p=0.8-0.15=0.65
    np.testing.assert_allclose(p.data.numpy(), [0.65], rtol=1e-12)


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4)])
def test_shapes(shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    g = rng.standard_normal(shape)
    p = mg.Tensor(x.copy(), requires_grad=True)
    p.grad = mg.Tensor(g)
    SGD([p], lr=0.3, momentum=0.9).step()
    np.testing.assert_allclose(p.data.numpy(), x - 0.3 * g, rtol=1e-15)
    assert p.shape == shape
