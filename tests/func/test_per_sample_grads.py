"""Per-sample gradients: vmap(grad(loss), in_dims=(None, 0, 0)) equals a Python loop of per-sample
backward passes that collects each sample's gradients (float64, 1e-10), through batching rules
only (no loop fallback on this path), for the small 16-32-1 MLP and the MNIST MLP 784-128-10."""
import importlib

import numpy as np
import pytest

import minigrad as mg
from minigrad.func import functional_call, grad, vmap

_vm = importlib.import_module("minigrad.func.vmap")  # the module (mg.func.vmap is the function)

nn = mg.nn
F = nn.functional


def _mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1]).to(mg.float64)


def _problem(sizes, n, classify, seed=0):
    mg.manual_seed(seed)
    model = _mlp(sizes)
    params = {k: v.detach() for k, v in model.named_parameters()}
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.standard_normal((n, sizes[0])))
    y = mg.tensor(rng.integers(0, sizes[-1], n)) if classify else mg.tensor(rng.standard_normal((n, sizes[-1])))

    def loss(p, xb, yb):
        out = functional_call(model, p, (xb,))
        return F.cross_entropy(out, yb) if classify else F.mse_loss(out, yb)
    return model, params, x, y, loss


def _loop(params, x, y, loss):
    """The reference: one backward per sample, each sample's gradients collected."""
    per = {k: [] for k in params}
    for i in range(x.shape[0]):
        leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
        loss(leaves, x[i:i + 1], y[i:i + 1]).backward()
        for k, v in leaves.items():
            per[k].append(v.grad.numpy().copy())
    return {k: np.stack(v) for k, v in per.items()}


def _vmapped(params, x, y, loss):
    def one(p, xi, yi):
        return loss(p, xi.unsqueeze(0), yi.unsqueeze(0))
    # on this path every op must have a batching rule: the loop fallback is made to fail (its
    # warning is given once per op and process, so it cannot be relied on here)
    def no_fallback(cls, level, args):
        raise AssertionError(f"vmap fell back to the per-sample loop for {cls.__name__}")

    def no_grad_loop(*args):
        raise AssertionError("vmap ran one backward per sample")
    saved = _vm._fallback, _vm._grad_loop
    _vm._fallback, _vm._grad_loop = no_fallback, no_grad_loop
    try:
        return vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)
    finally:
        _vm._fallback, _vm._grad_loop = saved


@pytest.mark.parametrize("sizes,n,classify", [((16, 32, 1), 40, False), ((784, 128, 10), 12, True)],
                         ids=["mlp-16-32-1-mse", "mnist-784-128-10-ce"])
def test_vmap_grad_equals_a_loop_of_per_sample_backwards(sizes, n, classify):
    model, params, x, y, loss = _problem(sizes, n, classify)
    got = _vmapped(params, x, y, loss)
    want = _loop(params, x, y, loss)
    assert set(got) == set(want) == {k for k, _ in model.named_parameters()}
    for k in want:
        g = got[k]
        assert tuple(g.shape) == (n,) + tuple(params[k].shape), k
        assert g.dtype == mg.float64 and not g.requires_grad
        np.testing.assert_allclose(g.numpy(), want[k], rtol=1e-10, atol=1e-10, err_msg=k)
    # the samples really differ (a broadcast of one gradient would pass a loose comparison)
    assert np.abs(got["0.weight"].numpy()[0] - got["0.weight"].numpy()[1]).max() > 1e-6


def test_per_sample_gradients_average_to_the_batch_gradient():
    """mean over samples of the per-sample gradients of a mean loss == the batch's gradient."""
    model, params, x, y, loss = _problem((16, 32, 1), 25, False, seed=3)
    got = _vmapped(params, x, y, loss)
    leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    loss(leaves, x, y).backward()
    for k, v in leaves.items():
        np.testing.assert_allclose(got[k].numpy().mean(0), v.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=k)


def test_per_sample_gradients_of_plain_functions_with_a_tuple_of_parameters():
    """The torch.func tutorial's form: parameters as a tuple, the model as a function."""
    rng = np.random.default_rng(5)
    W1, b1 = mg.tensor(rng.standard_normal((32, 16))), mg.tensor(rng.standard_normal(32))
    W2, b2 = mg.tensor(rng.standard_normal((1, 32))), mg.tensor(rng.standard_normal(1))
    x, y = mg.tensor(rng.standard_normal((20, 16))), mg.tensor(rng.standard_normal((20, 1)))

    def loss(p, xb, yb):
        w1, c1, w2, c2 = p
        h = (xb @ w1.T + c1).tanh()
        return ((h @ w2.T + c2 - yb) ** 2).sum()

    got = vmap(grad(loss), in_dims=(None, 0, 0))((W1, b1, W2, b2), x, y)
    for j, p in enumerate((W1, b1, W2, b2)):
        for i in range(20):
            ps = tuple(q.detach().requires_grad_(True) for q in (W1, b1, W2, b2))
            loss(ps, x[i], y[i]).backward()
            np.testing.assert_allclose(got[j].numpy()[i], ps[j].grad.numpy(), rtol=1e-10, atol=1e-10)
