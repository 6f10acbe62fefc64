"""mg.linalg: forward against NumPy, gradcheck/gradgradcheck, PyTorch parity of values and gradients
(torch where installed), PyTorch's conventions at degenerate inputs and its errors."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import linalg as LA
from minigrad.autograd import gradcheck, gradgradcheck


def rng():
    return np.random.default_rng(0)


def t(a, rg=True):
    return mg.tensor(np.array(a, dtype=np.float64), requires_grad=rg)


def spd(n, batch=(), seed=0):
    r = np.random.default_rng(seed)
    X = r.standard_normal(batch + (n, n))
    return X @ np.swapaxes(X, -1, -2) + n * np.eye(n)


def well_conditioned(shape, seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal(shape) + 3 * np.eye(shape[-1]) if shape[-1] == shape[-2] else r.standard_normal(shape)


def sym(f):
    """f applied to the symmetrised input, so gradcheck perturbs within symmetric matrices."""
    return lambda A: f(0.5 * (A + A.mT))


# (name, function of the input tensor returning a tensor, input array, twice differentiable)
CASES = [
    ("inv", LA.inv, well_conditioned((3, 3)), True),
    ("inv_batch", LA.inv, well_conditioned((2, 3, 3), 1), True),
    ("det", LA.det, well_conditioned((3, 3)), True),
    ("det_batch", LA.det, well_conditioned((2, 3, 3), 2), True),
    ("slogdet", lambda A: LA.slogdet(A).logabsdet, well_conditioned((3, 3), 3), True),
    ("solve_matrix", lambda A: LA.solve(A, mg.tensor(np.arange(6.0).reshape(3, 2))), well_conditioned((3, 3), 4), True),
    ("cholesky", sym(LA.cholesky), spd(3), True),
    ("cholesky_upper", sym(lambda A: LA.cholesky(A, upper=True)), spd(3, seed=1), True),
    ("cholesky_batch", sym(LA.cholesky), spd(3, (2,), seed=2), True),
    ("qr_tall_Q", lambda A: LA.qr(A).Q, well_conditioned((4, 3), 5), True),
    ("qr_tall_R", lambda A: LA.qr(A).R, well_conditioned((4, 3), 6), True),
    ("qr_square", lambda A: LA.qr(A).Q * 2 + LA.qr(A).R, well_conditioned((3, 3), 7), True),
    ("qr_wide", lambda A: LA.qr(A).Q.sum() + (LA.qr(A).R ** 2).sum(), well_conditioned((2, 4), 8), True),
    ("eigh_values", sym(lambda A: LA.eigh(A).eigenvalues), spd(3, seed=3), True),
    # eigenvectors are defined up to sign: a sign-invariant function of them
    ("eigh_vectors", sym(lambda A: LA.eigh(A).eigenvectors ** 2), spd(3, seed=4), True),
    ("eigvalsh", sym(LA.eigvalsh), spd(4, seed=5), True),
    ("svdvals", LA.svdvals, well_conditioned((4, 3), 9), True),
    ("svdvals_wide", LA.svdvals, well_conditioned((2, 4), 10), True),
    ("svd_tall_uv", lambda A: (lambda r: (r.U * r.U).sum(-1).sum() + (r.U @ r.Vh).sum())(LA.svd(A, full_matrices=False)),
     well_conditioned((4, 3), 11), True),
    ("svd_wide_uv", lambda A: (lambda r: (r.U @ r.Vh).sum() + r.S.sum())(LA.svd(A, full_matrices=False)),
     well_conditioned((3, 5), 12), True),
    ("matrix_norm_fro", LA.matrix_norm, well_conditioned((3, 4), 13), True),
    ("matrix_norm_nuc", lambda A: LA.matrix_norm(A, "nuc"), well_conditioned((3, 4), 14), True),
    ("matrix_norm_2", lambda A: LA.matrix_norm(A, 2), well_conditioned((3, 4), 15), True),
    ("matrix_norm_1", lambda A: LA.matrix_norm(A, 1), well_conditioned((3, 4), 16), True),
    ("matrix_norm_inf", lambda A: LA.matrix_norm(A, math.inf), well_conditioned((3, 4), 17), True),
    ("vector_norm_3", lambda A: LA.vector_norm(A, 3, dim=1), well_conditioned((3, 4), 18), True),
    ("norm_default", LA.norm, well_conditioned((3, 4), 19), True),
]


@pytest.mark.parametrize("name,fn,a,twice", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, fn, a, twice):
    x = t(a)
    assert gradcheck(fn, (x,))
    if twice:
        assert gradgradcheck(fn, (x,))


def test_solve_gradients_in_both_arguments_and_vector_rhs():
    A = t(well_conditioned((3, 3), 20))
    B = t(np.random.default_rng(1).standard_normal((3, 2)))
    b = t(np.random.default_rng(2).standard_normal(3))
    assert gradcheck(LA.solve, (A, B))
    assert gradcheck(LA.solve, (A, b))
    assert gradgradcheck(LA.solve, (A, b))
    assert gradcheck(lambda A, B: LA.solve(A, B, left=False), (A, t(np.ones((2, 3)))))


def test_forward_matches_numpy():
    A = well_conditioned((2, 3, 3), 21)
    np.testing.assert_allclose(LA.inv(t(A, False)).numpy(), np.linalg.inv(A))
    np.testing.assert_allclose(LA.det(t(A, False)).numpy(), np.linalg.det(A))
    s, l = LA.slogdet(t(A, False))
    np.testing.assert_allclose(s.numpy(), np.linalg.slogdet(A)[0])
    np.testing.assert_allclose(l.numpy(), np.linalg.slogdet(A)[1])
    S = spd(3)
    np.testing.assert_allclose(LA.cholesky(t(S, False)).numpy(), np.linalg.cholesky(S))
    np.testing.assert_allclose(LA.cholesky(t(S, False), upper=True).numpy(), np.linalg.cholesky(S).T)
    np.testing.assert_allclose(LA.eigvalsh(t(S, False)).numpy(), np.linalg.eigvalsh(S))
    np.testing.assert_allclose(LA.svdvals(t(A, False)).numpy(), np.linalg.svd(A, compute_uv=False))
    Q, R = LA.qr(t(A[0], False))
    np.testing.assert_allclose((Q @ R).numpy(), A[0], atol=1e-12)
    np.testing.assert_allclose(LA.matrix_norm(t(A, False), "nuc").numpy(), np.linalg.norm(A, "nuc", axis=(-2, -1)))
    np.testing.assert_allclose(LA.norm(t(A[0], False), 1).numpy(), np.linalg.norm(A[0], 1))
    np.testing.assert_allclose(LA.norm(t(A[0], False), -math.inf).numpy(), np.linalg.norm(A[0], -np.inf))
    np.testing.assert_allclose(LA.vector_norm(t(A, False), 0).numpy(), np.count_nonzero(A))


def test_det_gradient_at_singular_matrix_is_the_cofactor_matrix():
    # rank 2 of 3: det = 0 but the gradient (the cofactor matrix) is not zero
    A = t([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    LA.det(A).backward()
    a = A.detach().numpy()
    cof = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j)
                     for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(A.grad.numpy(), cof, atol=1e-12)


def test_errors_name_the_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"linalg.inv: .*square"):
        LA.inv(mg.zeros(2, 3))
    with pytest.raises(RuntimeError, match=r"linalg.inv: .*[Ss]ingular"):
        LA.inv(mg.zeros(2, 2))
    with pytest.raises(RuntimeError, match="linalg.cholesky"):
        LA.cholesky(mg.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(RuntimeError, match="floating point"):
        LA.det(mg.ones(2, 2, dtype=mg.int64))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        LA.solve(mg.eye(3), mg.ones(2))
    with pytest.raises(RuntimeError, match="unrecognized mode"):
        LA.qr(mg.eye(2), mode="full")
    with pytest.raises(RuntimeError, match="mode='r'"):
        LA.qr(t(np.eye(2) * 2), mode="r").R.sum().backward()


# -- PyTorch parity: values and gradients of the same scalar function ---------------------------
torch_cases = [
    ("inv", lambda m, A: m.linalg.inv(A), well_conditioned((3, 3), 30)),
    ("det", lambda m, A: m.linalg.det(A), well_conditioned((2, 3, 3), 31)),
    ("slogdet", lambda m, A: m.linalg.slogdet(A)[1], well_conditioned((3, 3), 32)),
    ("cholesky", lambda m, A: m.linalg.cholesky(A @ A.mT + 3 * m.eye(3, dtype=A.dtype)), well_conditioned((3, 3), 33)),
    ("qr", lambda m, A: m.linalg.qr(A)[0] * 2 + m.linalg.qr(A)[1][:1].sum(), well_conditioned((4, 3), 34)),
    ("qr_wide", lambda m, A: m.linalg.qr(A)[0].sum() + m.linalg.qr(A)[1].sum(), well_conditioned((2, 3), 35)),
    ("eigh", lambda m, A: (lambda r: r[0].sum() + (r[1] ** 2 * m.arange(3.0, dtype=A.dtype)).sum())(
        m.linalg.eigh(A @ A.mT + m.eye(3, dtype=A.dtype))), well_conditioned((3, 3), 36)),
    ("svd", lambda m, A: (lambda r: (r[0] @ r[2]).sum() + r[1].sum())(m.linalg.svd(A, full_matrices=False)),
     well_conditioned((4, 3), 37)),
    ("svd_wide", lambda m, A: (lambda r: (r[0] @ r[2]).sum() + (r[1] ** 2).sum())(m.linalg.svd(A, full_matrices=False)),
     well_conditioned((3, 4), 38)),
    ("nuc", lambda m, A: m.linalg.matrix_norm(A, "nuc"), well_conditioned((3, 4), 39)),
    ("norm2", lambda m, A: m.linalg.matrix_norm(A, 2), well_conditioned((3, 4), 40)),
    ("norm_inf", lambda m, A: m.linalg.matrix_norm(A, float("inf")), well_conditioned((3, 4), 41)),
    ("vector_norm", lambda m, A: m.linalg.vector_norm(A, 3.5, dim=(0,)), well_conditioned((3, 4), 42)),
    ("solve", lambda m, A: m.linalg.solve(A, A[:, :1] * 2 + 1), well_conditioned((3, 3), 43)),
]


@pytest.mark.parametrize("name,f,a", torch_cases, ids=[c[0] for c in torch_cases])
def test_torch_parity(name, f, a):
    torch = pytest.importorskip("torch")
    x = t(a)
    out = f(mg, x)
    out.sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    tout = f(torch, tx)
    tout.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_grad_fn_names_match_pytorch():
    torch = pytest.importorskip("torch")
    A = well_conditioned((3, 3), 50)
    for f in (lambda m, X: m.linalg.inv(X), lambda m, X: m.linalg.det(X), lambda m, X: m.linalg.slogdet(X)[1],
              lambda m, X: m.linalg.eigh(X)[0], lambda m, X: m.linalg.svd(X)[1], lambda m, X: m.linalg.qr(X)[1],
              lambda m, X: m.linalg.solve(X, X), lambda m, X: m.linalg.cholesky(X @ X.mT)):
        ours = f(mg, t(A)).grad_fn.name()
        theirs = f(torch, torch.tensor(A, requires_grad=True)).grad_fn.name()
        assert ours == theirs
