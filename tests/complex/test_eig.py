"""linalg.eig / eigvals: complex results, PyTorch's backward (for losses blind to the eigenvectors'
phase) and JVP, against PyTorch 2.13; complex solve (which eig's backward uses)."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)


def _np(t):
    return t.detach().numpy() if isinstance(t, mg.Tensor) else t.detach().resolve_conj().numpy()


@pytest.mark.parametrize("kind", ["real", "complex", "batched"])
def test_eig_values_gradients_and_jvp_match_torch(kind):
    shape = (2, 3, 3) if kind == "batched" else (4, 4)
    A = RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if kind == "complex" else 0)
    Am, At = mg.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    (Lm, Vm), (Lt, Vt) = mg.linalg.eig(Am), torch.linalg.eig(At)
    assert Lm.dtype == mg.complex128 and Vm.dtype == mg.complex128
    np.testing.assert_allclose(_np(Lm), _np(Lt), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(Vm), _np(Vt), rtol=1e-10, atol=1e-12)
    c = RNG.standard_normal(Lm.shape) + 1j * RNG.standard_normal(Lm.shape)
    W = RNG.standard_normal(Vm.shape)
    (Lm * mg.tensor(c)).real.sum().add((Vm.abs() ** 2 * mg.tensor(W)).sum()).backward()
    ((Lt * torch.tensor(c)).real.sum() + (Vt.abs() ** 2 * torch.tensor(W)).sum()).backward()
    assert Am.grad.dtype == Am.dtype
    np.testing.assert_allclose(_np(Am.grad), _np(At.grad), rtol=1e-8, atol=1e-10)
    T = RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if kind == "complex" else 0)
    _, (tL, tV) = mg.func.jvp(lambda a: tuple(mg.linalg.eig(a)), (mg.tensor(A),), (mg.tensor(T),))
    _, (sL, sV) = torch.func.jvp(lambda a: tuple(torch.linalg.eig(a)), (torch.tensor(A),), (torch.tensor(T),))
    np.testing.assert_allclose(_np(tL), _np(sL), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(_np(tV), _np(sV), rtol=1e-8, atol=1e-10)


def test_eigvals_gradcheck_and_named_result():
    A = mg.tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    assert mg.autograd.gradcheck(mg.linalg.eigvals, (A,))
    assert mg.autograd.gradgradcheck(mg.linalg.eigvals, (A,))
    assert mg.autograd.gradcheck(lambda a: mg.linalg.eig(a).eigenvectors.abs(), (A,))
    r = mg.linalg.eig(mg.tensor([[2.0, 0.0], [0.0, 3.0]]))
    assert r.eigenvalues.dtype == mg.complex64 and r.eigenvalues.tolist() == [2 + 0j, 3 + 0j]


def test_eig_errors():
    with pytest.raises(RuntimeError, match="square matrices"):
        mg.linalg.eig(mg.ones(2, 3))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        mg.linalg.eig(mg.ones(2, 2, dtype=mg.int64))


def test_complex_solve_matches_torch():
    A = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    B = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))
    Am, Bm = mg.tensor(A, requires_grad=True), mg.tensor(B, requires_grad=True)
    At, Bt = torch.tensor(A, requires_grad=True), torch.tensor(B, requires_grad=True)
    Xm, Xt = mg.linalg.solve(Am, Bm), torch.linalg.solve(At, Bt)
    np.testing.assert_allclose(_np(Xm), _np(Xt), rtol=1e-10)
    Xm.abs().sum().backward()
    Xt.abs().sum().backward()
    np.testing.assert_allclose(_np(Am.grad), _np(At.grad), rtol=1e-9)
    np.testing.assert_allclose(_np(Bm.grad), _np(Bt.grad), rtol=1e-9)
