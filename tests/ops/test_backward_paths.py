"""Ops whose backward has a NumPy path (no graph recorded) and a Tensor-op path (create_graph):
both must give the same gradients, and the Tensor path must differentiate again."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck
from minigrad.ops import linalg


def _grads(fn, inputs, create_graph):
    out = fn(*inputs)
    g = mg.tensor(np.random.default_rng(1).standard_normal(out.shape))
    return mg.autograd.grad(out, inputs, g, create_graph=create_graph)


def _t(rng, *shape):
    return mg.tensor(rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("xshape", [(5, 3), (2, 4, 3), (3,)])
def test_linear_numpy_and_tensor_backward_agree(xshape):
    rng = np.random.default_rng(0)
    x, w, b = _t(rng, *xshape), _t(rng, 4, 3), _t(rng, 4)
    fast = _grads(linalg.linear, (x, w, b), create_graph=False)
    slow = _grads(linalg.linear, (x, w, b), create_graph=True)
    assert slow[0].requires_grad and slow[1].requires_grad  # recorded: they depend on w and x
    for f, s in zip(fast, slow):
        assert not f.requires_grad
        np.testing.assert_allclose(f.data.numpy(), s.data.numpy(), rtol=1e-12)
    assert gradcheck(linalg.linear, (x, w, b))
    assert gradgradcheck(linalg.linear, (x, w, b))


def test_linear_backward_only_needed_grads():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((5, 3)))  # no grad: dx is not computed
    w, b = _t(rng, 4, 3), _t(rng, 4)
    linalg.linear(x, w, b).sum().backward()
    np.testing.assert_allclose(w.grad.data.numpy(), np.ones((5, 4)).T @ x.data.numpy())
    np.testing.assert_allclose(b.grad.data.numpy(), np.full(4, 5.0))


def test_relu_numpy_and_tensor_backward_agree():
    x = mg.tensor([[-1.0, 0.0, 2.0], [3.0, -0.5, 0.25]], dtype=mg.float64, requires_grad=True)
    (fast,) = _grads(mg.relu, (x,), create_graph=False)
    (slow,) = _grads(mg.relu, (x,), create_graph=True)
    np.testing.assert_array_equal(fast.data.numpy(), slow.data.numpy())
    assert fast.data.numpy()[0, 1] == 0.0  # gradient 0 at x == 0, as PyTorch
    assert gradgradcheck(mg.relu, (mg.tensor([[-1.0, 2.0], [3.0, -0.5]], dtype=mg.float64, requires_grad=True),))
