"""The engine's gradient buffers: contributions to a node used many times are summed into an
array the engine owns, in place -- never into a gradient some other node also received."""
import numpy as np
import pytest

import minigrad as mg


def test_leaf_used_many_times_gets_the_sum():
    x = mg.tensor(np.arange(5, dtype=np.float32), requires_grad=True)
    s = x * 1.0
    for _ in range(1000):
        s = s + x
    (s * mg.tensor(np.arange(1, 6, dtype=np.float32))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 1001 * np.arange(1, 6, dtype=np.float32))


def test_shared_gradient_is_not_written_into():
    # add's backward hands the same gradient tensor to both operands: summing into it in place
    # would corrupt the other branch. a gets g from y = a + b and again from z = y + a.
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([3.0, 4.0], requires_grad=True)
    y = a + b
    z = y + a + a
    (z * mg.tensor([1.0, 10.0])).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 30.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 10.0])


def test_interior_node_fan_out():
    x = mg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = x.exp()                         # interior node used by three consumers, one of them twice
    out = (h * 2.0 + h.sin() + h * h).sum()
    out.backward()
    e = np.exp(np.array([0.5, -1.0, 2.0], np.float32))
    np.testing.assert_allclose(x.grad.numpy(), (2.0 + np.cos(e) + 2 * e) * e, rtol=1e-5)


def test_seed_gradient_is_not_written_into():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    seed = mg.tensor([1.0, 1.0])
    mg.autograd.backward([y, y], [seed, seed])
    np.testing.assert_array_equal(seed.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_accumulation_keeps_dtype_and_zero_dim():
    x = mg.tensor(1.5, dtype=mg.float64, requires_grad=True)
    s = x * 1.0
    for _ in range(3):
        s = s + x
    s.backward()
    assert x.grad.dtype == mg.float64 and x.grad.shape == ()
    assert x.grad.item() == 4.0


def test_broadcast_contributions_sum():
    x = mg.tensor([[1.0], [2.0]], requires_grad=True)      # (2, 1) broadcast against (2, 3)
    w = mg.ones(2, 3)                                     # each term gives 3 per row
    (x * w + x * w + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[9.0], [9.0]])


class _TwoOut(mg.autograd.Function):
    """(2x, 3x): a node with two outputs, for the multi-output buffer path."""

    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 2 + gb * 3


def test_multi_output_node_fan_out():
    x = mg.tensor([1.0, -2.0], requires_grad=True)
    a, b = _TwoOut.apply(x)
    (a + a + a * b + b).sum().backward()
    xv = np.array([1.0, -2.0], np.float32)
    # d/dx of 2*2x + 6x^2 + 3x = 4 + 12x + 3
    np.testing.assert_allclose(x.grad.numpy(), 7 + 12 * xv)


def test_create_graph_fan_out_is_differentiable():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    s = y + y + y                          # y used three times: d/dx = 6x, d2/dx2 = 6
    (g,) = mg.autograd.grad(s.sum(), x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(g.detach().numpy(), [6.0, 12.0])
    (g2,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), [6.0, 6.0])


def test_matches_torch_on_fan_out():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for this parity check")
    v = np.linspace(-1, 1, 6, dtype=np.float32)
    xm = mg.tensor(v, requires_grad=True)
    xt = torch.tensor(v, requires_grad=True)
    for x in (xm, xt):
        h = x.tanh()
        acc = h
        for i in range(50):
            acc = acc + h * float(i) + x
        (acc * acc).sum().backward()
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-5)
