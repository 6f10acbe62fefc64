"""LBFGS: closure-based steps, against PyTorch's iterates (float64) and on its own."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import LBFGS

TOL = 1e-10


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((8, 5))
    b = rng.standard_normal(8)
    return A, b, [rng.standard_normal((5,)), rng.standard_normal(())]


def _loss(lib, w, c, A, b):
    # a least-squares fit plus a quartic term: not quadratic, so the line search has work to do
    r = lib.matmul(A, w) + c - b
    return (r * r).sum() + 0.1 * (w * w * w * w).sum() + 0.05 * (c * c * c * c)


def _run_minigrad(kw, steps, A, b, x0, opt=None, params=None):
    params = params or [mg.Tensor(x.copy(), requires_grad=True) for x in x0]
    opt = opt or LBFGS(params, **kw)
    At, bt = mg.Tensor(A), mg.Tensor(b)
    traj = []

    def closure():
        opt.zero_grad()
        loss = _loss(mg, *params, At, bt)
        loss.backward()
        return loss
    for _ in range(steps):
        opt.step(closure)
        traj.append(np.concatenate([p.data.numpy().reshape(-1) for p in params]))
    return traj, opt, params


CASES = [
    dict(),
    dict(lr=0.5, max_iter=5),
    dict(history_size=3, max_iter=7),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", history_size=2, max_iter=6),
    dict(line_search_fn="strong_wolfe", lr=0.3, max_iter=10, max_eval=12, tolerance_change=1e-12),
    dict(lr=0.05, max_iter=30, tolerance_grad=1e-3),
]


@pytest.mark.parametrize("kw", CASES, ids=str)
def test_iterates_match_torch_float64(kw):
    torch = pytest.importorskip("torch")
    A, b, x0 = _problem()
    tp = [torch.tensor(x.copy(), requires_grad=True) for x in x0]
    topt = torch.optim.LBFGS(tp, **kw)
    At, bt = torch.tensor(A), torch.tensor(b)

    def closure():
        topt.zero_grad()
        loss = _loss(torch, *tp, At, bt)
        loss.backward()
        return loss
    traj, opt, params = _run_minigrad(kw, 4, A, b, x0)
    worst = 0.0
    for mine in traj:
        topt.step(closure)
        theirs = np.concatenate([p.detach().numpy().reshape(-1) for p in tp])
        worst = max(worst, float(np.max(np.abs(mine - theirs))))
    assert worst < TOL, f"LBFGS {kw}: max |torch - minigrad| = {worst:.3e}"
    ts, ms = topt.state[tp[0]], opt.state[params[0]]
    assert ts["func_evals"] == ms["func_evals"] and ts["n_iter"] == ms["n_iter"]
    assert len(ts["old_dirs"]) == len(ms["old_dirs"])


@pytest.mark.parametrize("kw", [dict(), dict(line_search_fn="strong_wolfe", history_size=3)], ids=str)
def test_converges_to_the_minimum(kw):
    A, b, x0 = _problem(1)
    traj, opt, params = _run_minigrad(dict(kw, max_iter=50, tolerance_change=1e-15), 3, A, b, x0)
    loss = _loss(mg, *params, mg.Tensor(A), mg.Tensor(b))
    loss.backward()
    assert max(float(p.grad.abs().max().item()) for p in params) < 1e-5


@pytest.mark.parametrize("kw", [dict(history_size=3, max_iter=4),
                                dict(line_search_fn="strong_wolfe", history_size=2, max_iter=3)], ids=str)
def test_resume_from_state_dict_gives_the_identical_iterates(kw):
    A, b, x0 = _problem(2)
    ref, *_ = _run_minigrad(kw, 6, A, b, x0)
    _, opt, params = _run_minigrad(kw, 3, A, b, x0)
    sd = opt.state_dict()
    resumed = [mg.Tensor(p.data.numpy().copy(), requires_grad=True) for p in params]
    opt2 = LBFGS(resumed, lr=123.0)  # hyper-parameters come from the state dict
    opt2.load_state_dict(sd)
    rest, *_ = _run_minigrad(kw, 3, A, b, x0, opt=opt2, params=resumed)
    for a, c in zip(ref[3:], rest):
        assert np.array_equal(a, c)


def test_step_needs_a_closure_and_one_group():
    p = mg.Tensor(np.zeros(2), requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        LBFGS([{"params": [p]}, {"params": [mg.Tensor(np.zeros(1), requires_grad=True)]}])
    with pytest.raises(ValueError, match="line_search_fn"):
        LBFGS([p], line_search_fn="armijo")
    with pytest.raises(TypeError):
        LBFGS([p]).step()


def test_stops_at_once_when_the_gradient_is_zero():
    p = mg.Tensor(np.zeros(3), requires_grad=True)
    opt = LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    opt.step(closure)
    assert len(calls) == 1 and opt.state[p]["n_iter"] == 0
