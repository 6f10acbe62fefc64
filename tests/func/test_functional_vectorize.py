"""mg.autograd.functional.jacobian / hessian with vectorize=True (PyTorch's argument): the rows
(reverse mode) or columns (strategy="forward-mode") in one pass under mg.func.vmap, equal to the
row-by-row results, to analytic derivatives and to PyTorch; no loop fallback on the way; PyTorch's
errors for the unsupported combinations. And vmap(jvp(grad(f))), which forward-mode hessian runs."""
import importlib

import numpy as np
import pytest

import minigrad as mg
from minigrad import func as MF
from minigrad.autograd import functional as AF

_vm = importlib.import_module("minigrad.func.vmap")  # the module (mg.func.vmap is the function)

rng = np.random.default_rng(3)
X0, Y0 = rng.standard_normal(4), rng.standard_normal((2, 3))


def t(a):
    return mg.tensor(np.array(a, dtype=np.float64))


def f2(x, y):  # two inputs, two outputs, one output independent of x
    return (x[:3] * y).tanh().sum(0) * x[1:].exp(), (y * y).sum()


def h2(x, y):  # scalar, mixing both inputs
    return (x[:3] * y).tanh().sum() * x.exp().sum() + (y ** 3).sum()


@pytest.fixture
def no_fallback(monkeypatch):
    """vectorize must batch: the per-sample loop (op fallback or per-sample backward) fails the test."""
    def fail(*args):
        raise AssertionError("vmap fell back to a per-sample loop")
    monkeypatch.setattr(_vm, "_fallback", lambda cls, level, args: fail())
    monkeypatch.setattr(_vm, "_grad_loop", lambda *args: fail())


def _close(a, b, tol=1e-12):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for p, q in zip(a, b):
            _close(p, q, tol)
        return
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_vectorized_jacobian_equals_row_by_row(strategy, no_fallback):
    J = AF.jacobian(f2, (t(X0), t(Y0)), vectorize=True, strategy=strategy)
    ref = AF.jacobian(f2, (t(X0), t(Y0)))
    _close(J, ref)
    assert J[1][0].shape == (4,) and float(np.abs(J[1][0].numpy()).max()) == 0.0  # independent: zeros
    assert not J[0][0].requires_grad
    # single input, single output: bare tensors, as PyTorch
    J1 = AF.jacobian(lambda x: x.sin() * x.sum(), t(X0), vectorize=True, strategy=strategy)
    c = np.cos(X0) * X0.sum()
    np.testing.assert_allclose(J1.numpy(), np.diag(c) + np.sin(X0)[:, None], rtol=1e-12)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_vectorized_hessian_equals_row_by_row_and_analytic(strategy, no_fallback):
    H = AF.hessian(h2, (t(X0), t(Y0)), vectorize=True, outer_jacobian_strategy=strategy)
    _close(H, AF.hessian(h2, (t(X0), t(Y0))), 1e-10)
    H1 = AF.hessian(lambda x: (x ** 3).sum() + x.prod(), t(X0), vectorize=True, outer_jacobian_strategy=strategy)
    p = X0.prod()
    analytic = p / np.outer(X0, X0) * (1 - np.eye(4)) + np.diag(6 * X0)
    np.testing.assert_allclose(H1.numpy(), analytic, rtol=1e-10, atol=1e-12)


def test_vectorized_jacobian_with_create_graph_is_differentiable(no_fallback):
    x = t(X0).requires_grad_(True)
    J = AF.jacobian(lambda v: v.sin() * v.sum(), x, create_graph=True, vectorize=True)
    assert J.requires_grad
    g, = mg.autograd.grad(J.sum(), [x])
    x2 = t(X0).requires_grad_(True)
    g_ref, = mg.autograd.grad(AF.jacobian(lambda v: v.sin() * v.sum(), x2, create_graph=True).sum(), [x2])
    np.testing.assert_allclose(g.numpy(), g_ref.numpy(), rtol=1e-12)
    H = AF.hessian(lambda v: (v ** 3).sum(), x, create_graph=True, vectorize=True)
    assert H.requires_grad


def test_vectorized_jacobian_matches_torch():
    torch = pytest.importorskip("torch", reason="PyTorch parity")
    tx, ty = torch.tensor(X0), torch.tensor(Y0)
    for strategy in ("reverse-mode", "forward-mode"):
        J = AF.jacobian(f2, (t(X0), t(Y0)), vectorize=True, strategy=strategy)
        Jt = torch.autograd.functional.jacobian(f2, (tx, ty), vectorize=True, strategy=strategy)
        for a, b in zip(J, Jt):
            for c, d in zip(a, b):
                np.testing.assert_allclose(c.numpy(), d.detach().numpy(), rtol=1e-12, atol=1e-14)
        H = AF.hessian(h2, (t(X0), t(Y0)), vectorize=True, outer_jacobian_strategy=strategy)
        Ht = torch.autograd.functional.hessian(h2, (tx, ty), vectorize=True, outer_jacobian_strategy=strategy)
        for a, b in zip(H, Ht):
            for c, d in zip(a, b):
                np.testing.assert_allclose(c.numpy(), d.detach().numpy(), rtol=1e-12, atol=1e-13)


def test_unsupported_combinations_raise_as_pytorch():
    x = t(X0)
    with pytest.raises(RuntimeError, match="strict=True.*vectorized=True"):
        AF.jacobian(lambda v: v * 2, x, strict=True, vectorize=True)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(lambda v: v * 2, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="create_graph=True.*forward-mode"):
        AF.jacobian(lambda v: v * 2, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(RuntimeError, match="strict=True.*forward-mode"):
        AF.jacobian(lambda v: v * 2, x, strategy="forward-mode", vectorize=True, strict=True)
    with pytest.raises(RuntimeError, match="single Tensor with a single element"):
        AF.hessian(lambda v: v * 2, x, vectorize=True)


def test_vmap_of_jvp_of_grad_equals_a_loop(no_fallback):
    """Forward-over-reverse under vmap: the tangents survive grad inside vmap (they were detached)."""
    g = MF.grad(h2, argnums=(0, 1))
    x, y = t(X0), t(Y0)
    T0 = t(rng.standard_normal((5, 4)))
    T1 = t(rng.standard_normal((5, 2, 3)))
    got = MF.vmap(lambda a, b: MF.jvp(g, (x, y), (a, b))[1])(T0, T1)
    for i in range(5):
        want = MF.jvp(g, (x, y), (T0[i], T1[i]))[1]
        for k in range(2):
            np.testing.assert_allclose(got[k].numpy()[i], want[k].numpy(), rtol=1e-12, atol=1e-14)
    assert np.abs(got[0].numpy()).max() > 0
