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


@pytest.mark.parametrize("rows", [None, 3], ids=["vector-sample", "3-rows-per-sample"])
def test_per_sample_gradients_of_linear_with_a_vector_or_several_rows_per_sample(rows):
    """The fused per-sample linear: one row per sample (the outer product), a 1-D sample, N rows."""
    rng = np.random.default_rng(9)
    W, b = mg.tensor(rng.standard_normal((5, 4))), mg.tensor(rng.standard_normal(5))
    shape = (6, 4) if rows is None else (6, rows, 4)
    x = mg.tensor(rng.standard_normal(shape))

    def loss(p, xi):
        return (F.linear(xi, p[0], p[1]).tanh() ** 2).sum()
    got = _vmapped_fn(loss, (W, b), x)
    for i in range(6):
        ps = (W.detach().requires_grad_(True), b.detach().requires_grad_(True))
        loss(ps, x[i]).backward()
        for k in range(2):
            np.testing.assert_allclose(got[k].numpy()[i], ps[k].grad.numpy(), rtol=1e-10, atol=1e-12)


def _vmapped_fn(loss, params, x):
    saved = _vm._fallback
    _vm._fallback = lambda cls, level, args: (_ for _ in ()).throw(AssertionError(f"fallback for {cls.__name__}"))
    try:
        return vmap(grad(loss), in_dims=(None, 0))(params, x)
    finally:
        _vm._fallback = saved


def test_the_fused_per_sample_linear_is_differentiable_twice_and_in_forward_mode():
    from minigrad.autograd import forward_ad as fwAD
    from minigrad.func.batching_rules import PerSampleLinear
    rng = np.random.default_rng(4)
    for n in (1, 3):
        x = mg.tensor(rng.standard_normal((2, n, 4)), requires_grad=True)
        w = mg.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
        b = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
        assert mg.autograd.gradcheck(PerSampleLinear.apply, (x, w, b))
        assert mg.autograd.gradgradcheck(PerSampleLinear.apply, (x, w, b))
        np.testing.assert_allclose(PerSampleLinear.apply(x, w, b).detach().numpy(),
                                   np.matmul(x.detach().numpy(), np.swapaxes(w.detach().numpy(), 1, 2))
                                   + b.detach().numpy()[:, None], rtol=1e-12)
        tans = [rng.standard_normal(a.shape) for a in (x, w, b)]
        res = []
        for rules in (True, False):
            fwAD._use_rules[0] = rules
            try:
                with fwAD.dual_level():
                    duals = [fwAD.make_dual(a.detach(), mg.tensor(t)) for a, t in zip((x, w, b), tans)]
                    res.append(fwAD.unpack_dual(PerSampleLinear.apply(*duals)).tangent.numpy())
            finally:
                fwAD._use_rules[0] = True
        np.testing.assert_allclose(res[0], res[1], rtol=1e-12, atol=1e-12)


def test_per_sample_gradients_under_an_outer_vmap():
    """vmap(vmap(grad)): the fused op meets an outer level and goes through its own batching rule."""
    rng = np.random.default_rng(2)
    W = mg.tensor(rng.standard_normal((3, 4)))
    x = mg.tensor(rng.standard_normal((2, 5, 4)))

    def loss(w, xi):
        return F.linear(xi.unsqueeze(0), w).sin().sum()
    got = vmap(vmap(grad(loss), in_dims=(None, 0)), in_dims=(None, 0))(W, x)
    assert tuple(got.shape) == (2, 5, 3, 4)
    for i in range(2):
        for j in range(5):
            w = W.detach().requires_grad_(True)
            loss(w, x[i, j]).backward()
            np.testing.assert_allclose(got.numpy()[i, j], w.grad.numpy(), rtol=1e-10, atol=1e-12)
