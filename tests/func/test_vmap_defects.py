"""Regression tests for vmap defects: embedding with a batched index or table gave an extra dim,
vmap(grad(loss)) through nll_loss / cross_entropy raised in the batching rule, gather with a batched
index raised (its checks saw the physical batch dim), 1-d @ 1-d gave (B, 1), in-place ops on batched
tensors raised. Each against a per-sample loop (float64, 1e-12) and torch.func.vmap where installed."""
import importlib

import numpy as np
import pytest

import minigrad as mg
from minigrad.func import grad, vmap

F = mg.nn.functional
RNG = np.random.default_rng(0)


def _loop(f, args, in_dims):
    B = next(a.shape[d] for a, d in zip(args, in_dims) if d is not None)
    outs = [f(*[a if d is None else mg.tensor(np.take(a.numpy(), i, axis=d)) for a, d in zip(args, in_dims)])
            for i in range(B)]
    return np.stack([o.numpy() for o in outs])


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("in_dims", [(0, 0), (0, None), (None, 0), (1, 2)], ids=str)
def test_embedding_batched_index_and_or_table(in_dims):
    idx = mg.tensor(RNG.integers(0, 3, (2, 2)))
    w = mg.tensor(RNG.standard_normal((2, 3, 2)))
    if in_dims == (1, 2):  # the batch dims not in front
        idx, w = idx.T.contiguous(), mg.tensor(np.moveaxis(w.numpy(), 0, 2).copy())
        in_dims = (1, 2)
    args = (idx if in_dims[0] is not None else idx[0], w if in_dims[1] is not None else w[0])
    got = vmap(F.embedding, in_dims=in_dims)(*args)
    want = _loop(F.embedding, args, in_dims)
    assert got.shape == want.shape == (2, 2, 2)
    np.testing.assert_array_equal(got.numpy(), want)
    torch = pytest.importorskip("torch")
    t = torch.func.vmap(torch.nn.functional.embedding, in_dims=in_dims)(
        *[torch.tensor(a.numpy()) for a in args])
    np.testing.assert_array_equal(got.numpy(), t.numpy())


def test_embedding_per_sample_table_gradients():
    idx = mg.tensor(RNG.integers(0, 4, (3, 5)))
    w = mg.tensor(RNG.standard_normal((4, 2)))
    g = vmap(grad(lambda ww, ii: (F.embedding(ii, ww) ** 2).sum()), in_dims=(None, 0))(w, idx)
    want = []
    for i in range(3):
        ww = mg.tensor(w.numpy(), requires_grad=True)
        (F.embedding(idx[i], ww) ** 2).sum().backward()
        want.append(ww.grad.numpy())
    np.testing.assert_allclose(g.numpy(), np.stack(want), rtol=1e-12, atol=0)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_per_sample_grads_of_a_classifier(loss):
    """PyTorch's per-sample-grads tutorial: vmap(grad(compute_loss), in_dims=(None, 0, 0))."""
    W = mg.tensor(RNG.standard_normal((4, 3)))
    b = mg.tensor(RNG.standard_normal(3))
    x = mg.tensor(RNG.standard_normal((6, 4)))
    y = mg.tensor(RNG.integers(0, 3, 6))

    def compute_loss(params, xi, ti):
        z = xi.unsqueeze(0) @ params[0] + params[1]
        z = z.log_softmax(-1) if loss == "nll_loss" else z
        return getattr(F, loss)(z, ti.unsqueeze(0))
    gW, gb = vmap(grad(compute_loss), in_dims=(None, 0, 0))((W, b), x, y)
    for i in range(6):
        p = (mg.tensor(W.numpy(), requires_grad=True), mg.tensor(b.numpy(), requires_grad=True))
        compute_loss(p, x[i], y[i]).backward()
        np.testing.assert_allclose(gW[i].numpy(), p[0].grad.numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(gb[i].numpy(), p[1].grad.numpy(), rtol=1e-12, atol=1e-15)
    torch = pytest.importorskip("torch")
    tf = getattr(torch.nn.functional, loss)

    def tloss(params, xi, ti):
        z = xi.unsqueeze(0) @ params[0] + params[1]
        return tf(z.log_softmax(-1) if loss == "nll_loss" else z, ti.unsqueeze(0))
    tW, tb = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))(
        (torch.tensor(W.numpy()), torch.tensor(b.numpy())), torch.tensor(x.numpy()), torch.tensor(y.numpy()))
    np.testing.assert_allclose(gW.numpy(), tW.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(gb.numpy(), tb.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("in_dims", [(0, 0), (None, 0), (0, None), (2, 1)], ids=str)
def test_gather_with_a_batched_index(in_dims):
    x = mg.tensor(RNG.standard_normal((3, 2, 4)))
    idx = mg.tensor(RNG.integers(0, 4, (3, 2, 5)))
    if in_dims == (2, 1):
        x, idx = mg.tensor(np.moveaxis(x.numpy(), 0, 2).copy()), mg.tensor(np.moveaxis(idx.numpy(), 0, 1).copy())
    args = (x if in_dims[0] is not None else x[0], idx if in_dims[1] is not None else idx[0])

    def f(a, i):
        return a.gather(1, i)
    got = vmap(f, in_dims=in_dims)(*args)
    want = _loop(f, args, in_dims)
    assert got.shape == want.shape == (3, 2, 5)
    np.testing.assert_array_equal(got.numpy(), want)
    gx = vmap(grad(lambda a, i: (f(a, i) ** 2).sum()), in_dims=in_dims)(*args)
    assert gx.shape == (3, 2, 4)


def test_vector_dot_vector_under_vmap():
    x, y = mg.tensor(RNG.standard_normal((5, 3))), mg.tensor(RNG.standard_normal((5, 3)))
    got = vmap(mg.matmul)(x, y)
    assert got.shape == (5,)
    np.testing.assert_allclose(got.numpy(), np.einsum("bi,bi->b", x.numpy(), y.numpy()), rtol=1e-12)


def test_inplace_ops_on_batched_and_unbatched_tensors():
    x = mg.tensor(RNG.standard_normal((4, 3)))
    y = mg.tensor(RNG.standard_normal((4, 3)))
    got = vmap(lambda a, b: a.clone().add_(b).mul_(2.0))(x, y)
    np.testing.assert_array_equal(got.numpy(), (x.numpy() + y.numpy()) * 2.0)
    got = vmap(lambda a: a.clone().sqrt_(), in_dims=1)(mg.tensor(np.abs(x.numpy())))
    np.testing.assert_array_equal(got.numpy(), np.sqrt(np.abs(x.numpy())).T)
    z = mg.zeros(3, dtype=mg.float64)
    with pytest.raises(RuntimeError, match="vmap: add_"):
        vmap(lambda b: z.add_(b))(y)
    assert (z.numpy() == 0).all()


# -- the N-d convolution/pooling/resizing family batches by its rules, not the per-sample loop ----------
_ND_CASES = {
    "conv1d": (lambda x, w: mg.nn.functional.conv1d(x, w, padding=1), [(3, 2, 3, 9), (4, 3, 3)], (0, None)),
    "conv1d_per_sample_weights": (lambda x, w: mg.nn.functional.conv1d(x, w, padding=1),
                                  [(3, 2, 3, 9), (3, 4, 3, 3)], (0, 0)),
    "conv3d": (lambda x, w: mg.nn.functional.conv3d(x, w), [(3, 2, 2, 5, 5, 5), (4, 2, 3, 3, 3)], (0, None)),
    "conv_transpose2d": (lambda x, w: mg.nn.functional.conv_transpose2d(x, w, stride=2),
                         [(3, 2, 3, 4, 4), (3, 2, 3, 3)], (0, None)),
    "max_pool1d": (lambda x: mg.nn.functional.max_pool1d(x, 2), [(3, 2, 3, 8)], (0,)),
    "avg_pool3d": (lambda x: mg.nn.functional.avg_pool3d(x, 2), [(3, 2, 3, 4, 4, 4)], (0,)),
    "adaptive_max_pool2d": (lambda x: mg.nn.functional.adaptive_max_pool2d(x, 3), [(3, 2, 3, 7, 7)], (0,)),
    "interpolate_bilinear": (lambda x: mg.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
                             [(3, 2, 3, 4, 4)], (0,)),
}


@pytest.mark.parametrize("name", sorted(_ND_CASES))
def test_nd_conv_pool_resize_batch_by_rule(name, monkeypatch):
    f, shapes, dims = _ND_CASES[name]
    mg.manual_seed(0)
    xs = [mg.randn(*s, dtype=mg.float64) for s in shapes]

    def no_loop(cls, level, args):
        raise AssertionError(f"{cls.__name__} went through the per-sample loop")
    monkeypatch.setattr(importlib.import_module("minigrad.func.vmap"), "_fallback", no_loop)
    got = vmap(f, in_dims=dims)(*xs).numpy()
    want = np.stack([f(*[x[i] if d == 0 else x for x, d in zip(xs, dims)]).numpy() for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
