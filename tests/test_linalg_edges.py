"""mg.linalg's solvers and factorizations against PyTorch at their edges: lstsq's drivers and output shapes,
matrix_rank's tolerances and hermitian form, pinv's cutoffs, LU's pivots and shapes (and its
gradient for wide and tall matrices), lu_solve/solve_triangular's left/adjoint/upper/unitriangular
forms, the *_ex forms' info, matrix_power/matrix_exp, the torch-level aliases, and bad inputs named
by the op. (Forward, gradients, JVP, vmap and tracing of each: the registry entries in
minigrad/testing/opinfo/linalg.py.)"""
import numpy as np
import pytest

import minigrad as mg


def _same(ours, theirs, rtol=1e-7, atol=1e-10):
    assert tuple(ours.shape) == tuple(theirs.shape), (tuple(ours.shape), tuple(theirs.shape))
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


def _pair(torch, a, grad=False):
    return mg.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 3), (3, 1)), ((2, 4, 2), (2, 4, 3)), ((4, 2), (4,))])
def test_lstsq_outputs_per_driver_as_torch(driver, shapes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    (A, tA), (B, tB) = _pair(torch, rng.standard_normal(shapes[0])), _pair(torch, rng.standard_normal(shapes[1]))
    ours, ref = mg.linalg.lstsq(A, B, driver=driver), torch.linalg.lstsq(tA, tB, driver=driver)
    for o, r in zip(ours, ref):
        _same(o, r)


def test_lstsq_rank_deficient_and_its_gradient_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 3))
    (A, tA), (B, tB) = _pair(torch, a, True), _pair(torch, rng.standard_normal((5, 2)), True)
    ours, ref = mg.linalg.lstsq(A, B, driver="gelsd"), torch.linalg.lstsq(tA, tB, driver="gelsd")
    for o, r in zip(ours, ref):
        _same(o, r, atol=1e-9)
    ours.solution.sum().backward()
    ref.solution.sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), atol=1e-9)
    np.testing.assert_allclose(B.grad.numpy(), tB.grad.numpy(), atol=1e-9)


def test_lstsq_bad_inputs_name_the_op():
    with pytest.raises(RuntimeError, match="lstsq: parameter `driver` should be one of"):
        mg.linalg.lstsq(mg.ones(3, 2), mg.ones(3, 1), driver="foo")
    with pytest.raises(RuntimeError, match="lstsq: Expected input and other to have the same dtype"):
        mg.linalg.lstsq(mg.ones(3, 2), mg.ones(3, 1, dtype=mg.float64))
    with pytest.raises(RuntimeError, match="lstsq: input.size\\(-2\\) should match"):
        mg.linalg.lstsq(mg.ones(3, 2), mg.ones(4, 1))


@pytest.mark.parametrize("kw", [{}, {"atol": 0.5}, {"rtol": 0.3}, {"atol": 0.1, "rtol": 0.5}, {"hermitian": True},
                                {"hermitian": True, "atol": 2.0}])
def test_matrix_rank_and_pinv_tolerances_as_torch(kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 4))
    a = x @ np.swapaxes(x, -1, -2) - 2.0 * np.eye(4)   # symmetric, eigenvalues of both signs
    A, tA = _pair(torch, a)
    rank = mg.linalg.matrix_rank(A, **kw)
    assert rank.dtype == mg.int64
    _same(rank, torch.linalg.matrix_rank(tA, **kw))
    _same(mg.linalg.pinv(A, **kw), torch.linalg.pinv(tA, **kw), atol=1e-9)
    _same(mg.linalg.matrix_rank(A[0], 1.5), torch.linalg.matrix_rank(tA[0], 1.5))   # the older tol
    _same(mg.pinverse(A, 0.3), torch.pinverse(tA, 0.3), atol=1e-9)


def test_pinv_gradient_of_a_rank_deficient_matrix_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 3))
    (A, tA), w = _pair(torch, a, True), rng.standard_normal((3, 4))
    (mg.linalg.pinv(A) * mg.tensor(w)).sum().backward()
    (torch.linalg.pinv(tA) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), atol=1e-9)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (2, 3, 5), (0, 3)])
def test_lu_pivots_shapes_and_gradients_as_torch(shape):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(4).standard_normal(shape)
    (A, tA) = _pair(torch, a, True)
    ours, ref = mg.linalg.lu(A), torch.linalg.lu(tA)
    for o, r in zip(ours, ref):
        _same(o, r, atol=1e-12)
    f, tf = mg.linalg.lu_factor_ex(A.detach()), torch.linalg.lu_factor_ex(tA.detach())
    for o, r in zip(f, tf):
        _same(o, r, atol=1e-12)
    if 0 in shape:
        return
    w1, w2 = np.random.default_rng(5).standard_normal(tuple(ref.L.shape)), np.random.default_rng(6).standard_normal(
        tuple(ref.U.shape))
    ((ours.L * mg.tensor(w1)).sum() + (ours.U * mg.tensor(w2)).sum()).backward()
    ((ref.L * torch.tensor(w1)).sum() + (ref.U * torch.tensor(w2)).sum()).backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_lu_of_singular_matrices_info_and_errors_as_torch():
    torch = pytest.importorskip("torch")
    for a in ([[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]):
        A, tA = _pair(torch, np.array(a))
        for o, r in zip(mg.linalg.lu_factor_ex(A), torch.linalg.lu_factor_ex(tA)):
            _same(o, r)
    with pytest.raises(RuntimeError, match="lu_factor: U\\[2,2\\] is zero"):
        mg.linalg.lu_factor(mg.tensor([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        mg.linalg.lu(mg.eye(2), pivot=False)
    LU, piv, info = mg.lu(mg.tensor([[1.0, 2.0], [2.0, 4.0]]), get_infos=True)
    assert info.item() == 2


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_forms_as_torch(left, adjoint):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3, 3))
    b = rng.standard_normal((2, 3, 2) if left else (2, 2, 3))
    A, tA = _pair(torch, a)
    (B, tB) = _pair(torch, b, True)
    LU, piv = mg.linalg.lu_factor(A)
    tLU, tpiv = torch.linalg.lu_factor(tA)
    X, tX = mg.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint), \
        torch.linalg.lu_solve(tLU, tpiv, tB, left=left, adjoint=adjoint)
    _same(X, tX, atol=1e-10)
    X.sum().backward()
    tX.sum().backward()
    np.testing.assert_allclose(B.grad.numpy(), tB.grad.numpy(), atol=1e-10)
    _same(mg.lu_solve(B.detach(), LU, piv) if left else X, torch.lu_solve(tB.detach(), tLU, tpiv) if left else tX,
          atol=1e-10)


@pytest.mark.parametrize("upper, left, unit", [(True, True, False), (False, True, True), (True, False, True),
                                               (False, False, False)])
def test_solve_triangular_reads_one_triangle_as_torch(upper, left, unit):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2) if left else (2, 3))
    (A, tA), (B, tB) = _pair(torch, a, True), _pair(torch, b, True)
    X = mg.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)
    tX = torch.linalg.solve_triangular(tA, tB, upper=upper, left=left, unitriangular=unit)
    _same(X, tX, atol=1e-12)
    X.sum().backward()
    tX.sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), atol=1e-12)   # zero off the triangle read
    np.testing.assert_allclose(B.grad.numpy(), tB.grad.numpy(), atol=1e-12)
    s, ts = mg.triangular_solve(B.detach() if left else B.detach().mT, A.detach(), upper, True, unit), \
        torch.triangular_solve(tB.detach() if left else tB.detach().mT, tA.detach(), upper, True, unit)
    _same(s.solution, ts.solution, atol=1e-12)
    _same(s.cloned_coefficient, ts.cloned_coefficient)
    with pytest.raises(RuntimeError, match="solve_triangular: The input tensor B must have at least 2 dimensions"):
        mg.linalg.solve_triangular(A, mg.ones(3, dtype=mg.float64), upper=upper)


def test_ex_forms_info_as_torch():
    torch = pytest.importorskip("torch")
    sing = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]]])
    A, tA = _pair(torch, sing)
    ours, ref = mg.linalg.inv_ex(A), torch.linalg.inv_ex(tA)
    _same(ours.info, ref.info)
    _same(ours.inverse, ref.inverse)   # inf/nan for the singular one, as LAPACK's triangular solves give
    b = np.array([[1.0, 1.0], [1.0, 2.0]])
    ours, ref = mg.linalg.solve_ex(A, mg.tensor(b)), torch.linalg.solve_ex(tA, torch.tensor(b))
    _same(ours.info, ref.info)
    _same(ours.result, ref.result)
    not_pd = np.array([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]])
    (C, tC) = _pair(torch, not_pd)
    for upper in (False, True):
        ours, ref = mg.linalg.cholesky_ex(C, upper=upper), torch.linalg.cholesky_ex(tC, upper=upper)
        _same(ours.info, ref.info)
        _same(ours.L, ref.L)
    for a in ([[4.0, 2, 1, 0], [2, 1, 3, 1], [1, 3, 5, 2], [0, 1, 2, 7]], [[4.0, 2, 1], [2, 5, 3], [1, 3, -5]],
              [[-1.0, 2, 1], [2, 5, 3], [1, 3, 5]]):   # LAPACK's partial result where it stops
        for o, r in zip(mg.linalg.cholesky_ex(mg.tensor(a, dtype=mg.float64)),
                        torch.linalg.cholesky_ex(torch.tensor(a, dtype=torch.float64))):
            _same(o, r)
    with pytest.raises(RuntimeError, match="linalg.cholesky_ex: .*not positive-definite"):
        mg.linalg.cholesky_ex(C, check_errors=True)
    with pytest.raises(RuntimeError, match="linalg.inv_ex: .*singular"):
        mg.linalg.inv_ex(A, check_errors=True)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 7])
def test_matrix_power_every_n_as_torch(n):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(9).standard_normal((2, 3, 3)) + 2 * np.eye(3)
    (A, tA) = _pair(torch, a, True)
    out, ref = mg.linalg.matrix_power(A, n), torch.linalg.matrix_power(tA, n)
    _same(out, ref, rtol=1e-10)
    assert out.requires_grad
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), rtol=1e-9, atol=1e-12)
    _same(A.detach().matrix_power(n), tA.detach().matrix_power(n), rtol=1e-10)


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_matrix_exp_values_and_gradient_as_torch(scale):
    torch = pytest.importorskip("torch")
    a = scale * np.random.default_rng(10).standard_normal((2, 3, 3))
    (A, tA) = _pair(torch, a, True)
    out, ref = mg.linalg.matrix_exp(A), torch.linalg.matrix_exp(tA)
    _same(out, ref, rtol=1e-11, atol=1e-15)
    w = np.random.default_rng(11).standard_normal(a.shape)
    (out * mg.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), tA.grad.numpy(), rtol=1e-9)
    _same(mg.matrix_exp(mg.zeros(2, 2)), torch.matrix_exp(torch.zeros(2, 2)))


def test_multi_dot_householder_cond_vander_edges_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    xs = [rng.standard_normal(s) for s in [(4,), (4, 10), (10, 2), (2,)]]
    _same(mg.linalg.multi_dot([mg.tensor(x) for x in xs]), torch.linalg.multi_dot([torch.tensor(x) for x in xs]))
    with pytest.raises(RuntimeError, match="multi_dot\\(\\): expected at least 2 tensors"):
        mg.linalg.multi_dot([mg.ones(2, 2)])
    with pytest.raises(RuntimeError, match="multi_dot\\(\\): tensor 1 must be 2D"):
        mg.linalg.multi_dot([mg.ones(2, 2), mg.ones(2), mg.ones(2, 2)])
    A, tA = _pair(torch, rng.standard_normal((4, 3)))
    tau, ttau = _pair(torch, rng.standard_normal(0))
    _same(mg.linalg.householder_product(A, tau), torch.linalg.householder_product(tA, ttau))
    q, tq = _pair(torch, rng.standard_normal((3, 3)))
    for p in (None, 2, -2, "fro", "nuc", 1, -1, float("inf"), float("-inf")):
        _same(mg.linalg.cond(q, p), torch.linalg.cond(tq, p), rtol=1e-10)
    x, tx = _pair(torch, np.array([2.0, -1.0, 0.5]))
    for N in (None, 2, 5):
        _same(mg.linalg.vander(x, N=N), torch.linalg.vander(tx, N=N))
    with pytest.raises(RuntimeError, match="linalg.vander: N must be greater than 1"):
        mg.linalg.vander(x, N=1)
    for N in (4, 1, 0):
        _same(mg.vander(x, N), torch.vander(tx, N))
    _same(mg.vander(mg.tensor([1, 2, 3])), torch.vander(torch.tensor([1, 2, 3])))
    _same(mg.linalg.vander(mg.tensor([1, 2, 3])), torch.linalg.vander(torch.tensor([1, 2, 3])))


@pytest.mark.parametrize("name, call", [
    ("lu", lambda: mg.lu(mg.eye(2))), ("chain_matmul", lambda: mg.chain_matmul(mg.eye(2), mg.eye(2))),
    ("triangular_solve", lambda: mg.triangular_solve(mg.ones(2, 1), mg.eye(2))),
    ("lu_solve", lambda: mg.lu_solve(mg.ones(2, 1), *mg.linalg.lu_factor(mg.eye(2))))])
def test_pytorchs_older_spellings_warn_once_naming_the_new_one(name, call, monkeypatch):
    from minigrad.ops import matrix_functions
    monkeypatch.setattr(matrix_functions, "_WARNED", set())
    with pytest.warns(UserWarning, match=f"mg.{name} is deprecated"):
        call()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call()  # once per process, as PyTorch's TORCH_WARN_ONCE


def test_ex_forms_info_and_lstsq_rank_under_vmap_match_the_loop():
    sing = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]], 2 * np.eye(2)])
    not_pd = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]], 2 * np.eye(2)])
    b = mg.ones(2, 1, dtype=mg.float64)
    for f, x in [(lambda A: mg.linalg.inv_ex(A).info, sing), (lambda A: mg.linalg.inv_ex(A).inverse, sing),
                 (lambda A: mg.linalg.solve_ex(A, b).result, sing), (lambda A: mg.linalg.cholesky_ex(A).L, not_pd),
                 (lambda A: mg.linalg.cholesky_ex(A).info, not_pd), (lambda A: mg.linalg.lstsq(A, b).rank, sing)]:
        X = mg.tensor(x)
        loop = np.stack([f(X[i]).numpy() for i in range(3)])
        np.testing.assert_array_equal(mg.func.vmap(f)(X).numpy(), loop)
