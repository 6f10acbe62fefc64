"""Checkpointing and saved-tensor hooks: gradients equal the plain run bit for bit (Dropout inside:
the random state is restored; BatchNorm inside: running statistics move once), activations
inside a checkpoint are not kept, and saved_tensors_hooks follows PyTorch's contract."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.graph import saved_tensors_hooks
from minigrad.utils.checkpoint import checkpoint, checkpoint_sequential

nn = mg.nn


def mlp():
    return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 8),
                         nn.Tanh(), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 2))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Dropout(0.2), nn.Flatten(), nn.Linear(3 * 4 * 4, 4))


def run(make, x_shape, how, steps=2):
    mg.manual_seed(0)
    model = make()
    opt = mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    mg.manual_seed(1)
    for _ in range(steps):
        x = mg.randn(*x_shape, requires_grad=True)
        opt.zero_grad()
        out = how(model, x)
        (out * out).sum().backward()
        opt.step()
    bufs = [b.detach().numpy().copy() for b in model.buffers()]
    return [p.detach().numpy().copy() for p in model.parameters()] + bufs + [x.grad.numpy().copy()]


HOW = {
    "sequential_2": lambda m, x: checkpoint_sequential(m, 2, x, use_reentrant=False),
    "sequential_3": lambda m, x: checkpoint_sequential(m, 3, x, use_reentrant=False),
    "one_block": lambda m, x: m[-1](checkpoint(lambda h: m[:-1](h), x, use_reentrant=False)),
}


@pytest.mark.parametrize("make,shape", [(mlp, (5, 6)), (cnn, (2, 1, 8, 8))], ids=["mlp", "cnn"])
@pytest.mark.parametrize("how", list(HOW))
def test_bitwise_equal_to_the_plain_run_with_dropout_and_batchnorm(make, shape, how):
    plain = run(make, shape, lambda m, x: m(x))
    ck = run(make, shape, HOW[how])
    assert len(plain) == len(ck)
    for a, b in zip(plain, ck):
        np.testing.assert_array_equal(a, b)  # parameters, running stats + num_batches_tracked, input grad


def test_batchnorm_running_stats_move_once():
    mg.manual_seed(0)
    bn = nn.BatchNorm1d(3)
    x = mg.randn(4, 3, requires_grad=True)
    checkpoint(bn, x, use_reentrant=False).sum().backward()
    assert int(bn.num_batches_tracked.item()) == 1
    mg.manual_seed(0)
    bn2 = nn.BatchNorm1d(3)
    bn2(mg.randn(4, 3))
    np.testing.assert_array_equal(bn.running_mean.numpy(), bn2.running_mean.numpy())


def test_activations_inside_are_not_kept():
    kept = []
    x = mg.randn(16, 32, requires_grad=True)
    w = [mg.randn(32, 32, requires_grad=True) for _ in range(4)]

    def block(h):
        for wi in w:
            h = (h @ wi).tanh()
        return h

    with saved_tensors_hooks(lambda t: kept.append(t._data.nbytes) or t, lambda t: t):
        plain = block(x).sum()
    plain_bytes = sum(kept)
    kept.clear()
    with saved_tensors_hooks(lambda t: kept.append(t._data.nbytes) or t, lambda t: t):
        ck = checkpoint(block, x, use_reentrant=False).sum()
    assert plain_bytes > 0 and sum(kept) == 0  # the checkpoint's own hook replaced every save
    ck.backward()
    g1 = x.grad.numpy().copy()
    x.grad = None
    block(x).sum().backward()
    np.testing.assert_array_equal(g1, x.grad.numpy())


def test_saved_tensors_hooks_contract():
    calls = {"pack": 0, "unpack": 0}

    def pack(t):
        calls["pack"] += 1
        return ("stored", t.detach().numpy().copy())

    def unpack(obj):
        calls["unpack"] += 1
        assert obj[0] == "stored"
        return mg.from_numpy(obj[1])

    x = mg.tensor([0.5, 1.5], requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = (x.exp() * x).sum()     # exp saves its output, mul saves both inputs
    assert calls["pack"] == 3 and calls["unpack"] == 0
    y.backward()
    assert calls["unpack"] == 3
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.5]) * (1 + np.array([0.5, 1.5])))
    # modified in place after saving: still an error
    a = mg.tensor([1.0, 2.0], requires_grad=True) * 1.0
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        b = a * a
    a.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_checkpoint_arguments():
    x = mg.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant=False"):
        checkpoint(lambda t: t * 2, x)
    with pytest.raises(NotImplementedError, match="use_reentrant=False"):
        checkpoint(lambda t: t * 2, x, use_reentrant=True)
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential(nn.Sequential(nn.Linear(3, 3)), 2, mg.randn(1, 3))
    # keyword arguments and non-tensor arguments pass through
    out = checkpoint(lambda t, k, scale=1.0: (t * k * scale).sum(), x, 3, scale=2.0, use_reentrant=False)
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 6.0))
