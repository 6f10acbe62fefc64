"""Parity with torch.autograd on first- and second-order results (skipped when torch is absent)."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def both(arr):
    return (mg.tensor(arr.copy(), requires_grad=True),
            torch.tensor(arr.copy(), dtype=torch.float64, requires_grad=True))


FUNCS = {
    "poly_sin": (lambda x, lib: (x ** 3).sum() / 3 + (x[0] * x[1] * x[2]) + x.sin().sum()),
    "tanh_exp": (lambda x, lib: (x.tanh() * x.exp()).sum()),
    "sigmoid_log": (lambda x, lib: (x.sigmoid() * (x * x + 1).log()).sum()),
    "softmax_ce": (lambda x, lib: -(x - x.logsumexp(0)).sum()
                   if lib is mg else -(x - torch.logsumexp(x, 0)).sum()),
    "norm": (lambda x, lib: x.norm() * x.sum()),
}


@pytest.mark.parametrize("name", list(FUNCS))
def test_hvp_matches_torch(name):
    f = FUNCS[name]
    rng = np.random.default_rng(0)
    xn, vn = rng.standard_normal(3), rng.standard_normal(3)
    xm, xt = both(xn)

    (gm,) = mg.autograd.grad(f(xm, mg), xm, create_graph=True)
    (hvm,) = mg.autograd.grad(gm, xm, grad_outputs=mg.tensor(vn))

    (gt,) = torch.autograd.grad(f(xt, torch), xt, create_graph=True)
    (hvt,) = torch.autograd.grad(gt, xt, grad_outputs=torch.tensor(vn))

    np.testing.assert_allclose(gm.data.numpy(), gt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hvm.data.numpy(), hvt.numpy(), rtol=1e-10, atol=1e-12)


def test_gradient_penalty_matches_torch():
    rng = np.random.default_rng(1)
    xn, wn = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    res = {}
    for lib in (mg, torch):
        if lib is mg:
            x, W = mg.tensor(xn, requires_grad=True), mg.tensor(wn, requires_grad=True)
            grad = mg.autograd.grad
        else:
            x = torch.tensor(xn, requires_grad=True)
            W = torch.tensor(wn, requires_grad=True)
            grad = torch.autograd.grad
        out = (x @ W).tanh().sum()
        (gx,) = grad(out, x, create_graph=True)
        loss = ((gx * gx).sum(1).sqrt() - 1).pow(2).mean()
        loss.backward()
        res[lib.__name__] = (loss.item(), np.asarray(W.grad.detach() if lib is torch else W.grad.data.numpy()))
    assert res["minigrad"][0] == pytest.approx(res["torch"][0], rel=1e-12)
    np.testing.assert_allclose(res["minigrad"][1], res["torch"][1], rtol=1e-10)


def test_third_derivative_matches_torch():
    xn = np.array([0.7, -1.1])
    xm, xt = both(xn)
    outs = []
    for x, grad in ((xm, mg.autograd.grad), (xt, torch.autograd.grad)):
        y = (x ** 4 * x.sin()).sum()
        (d1,) = grad(y, x, create_graph=True)
        (d2,) = grad(d1.sum(), x, create_graph=True)
        (d3,) = grad(d2.sum(), x)
        outs.append(np.asarray(d3.detach().numpy() if grad is torch.autograd.grad else d3.data.numpy()))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10)


def test_inplace_non_leaf_grad_matches_torch():
    xn = np.array([0.5, 1.5, -2.0])
    grads = []
    for lib in (mg, torch):
        x = mg.tensor(xn, requires_grad=True) if lib is mg else torch.tensor(xn, requires_grad=True)
        y = x * 2
        y.mul_(x)
        y[1:] *= 3
        y.add_(1.0)
        (y * y).sum().backward()
        grads.append(np.asarray(x.grad.data.numpy() if lib is mg else x.grad.numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
