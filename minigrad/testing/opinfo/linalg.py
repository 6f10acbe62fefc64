"""Registry entries of linear algebra: the products (matmul, mm, bmm, dot, outer, einsum, linear), the
linalg family's tensor products and diagonals (ops/linalg.py) and mg.linalg (ops/decomposition.py).

mg.linalg entries are named "linalg.<name>" (torch_op defaults to torch.linalg.<name>). Inputs are
chosen where the op is smooth: well-conditioned matrices, symmetric positive-definite ones for
cholesky/eigh (the op sees the symmetrised input, so finite differences stay within symmetric
matrices).
"""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, case, sample


# -- products: matmul, mm, bmm, dot, outer, einsum, linear ---------------------------------------
_MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (2, 3, 4)),
                  ((2, 4, 3), (3,)), ((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)), ((2, 3), (2, 3, 4)),
                  ((2, 1, 2, 3), (3, 3, 2)), ((1, 2, 3), (2, 1, 3, 2)), ((1, 3), (3, 1)), ((0, 3), (3, 2))]
_EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("ii->i", [(3, 3)]),
           ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("ij->j", [(2, 3)]),
           ("i,i->", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]), ("ij,jk", [(2, 3), (3, 4)]),
           ("ba,ac", [(2, 3), (3, 4)]), ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
           ("bi,bj->bij", [(2, 3), (2, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]), ("iij->ij", [(2, 2, 3)]),
           ("ijk->kj", [(2, 3, 4)]), ("i->", [(4,)]), ("i->i", [(4,)]), ("ij->ij", [(2, 3)]),
           ("ii,i->i", [(3, 3), (3,)]), (" ij , jk -> ik ", [(2, 3), (3, 2)])]


def _matmul_samples(rng):
    return [SampleInput((sample(a, rng), sample(b, rng))) for a, b in _MATMUL_SHAPES]


ops = [
    OpInfo("matmul", lambda x, y: x @ y, np.matmul, _matmul_samples, variant="dunder",
           torch_op=lambda torch, x, y: x @ y, grad_fn=None),  # PyTorch: Mm/Bmm/Dot/Mv/... by shapes
    OpInfo("matmul", mg.matmul, np.matmul, _matmul_samples, grad_fn=None),
    OpInfo("matmul", lambda x, y: x.matmul(y), np.matmul, _matmul_samples, variant="method",
           torch_op=lambda torch, x, y: x.matmul(y), grad_fn=None),
    case("mm", "", [(2, 3), (3, 4)], lambda L, x, y: L.mm(x, y), np.matmul, grad_fn=None),
    case("mm", "method", [(2, 3), (3, 2)], lambda L, x, y: x.mm(y), np.matmul, grad_fn=None),
    case("bmm", "", [(2, 2, 3), (2, 3, 4)], lambda L, x, y: L.bmm(x, y), np.matmul, grad_fn=None),
    case("dot", "", [(4,), (4,)], lambda L, x, y: L.dot(x, y), np.dot, grad_fn=None),
    case("dot", "method", [(3,), (3,)], lambda L, x, y: x.dot(y), np.dot, grad_fn=None),
    case("outer", "", [(3,), (4,)], lambda L, x, y: L.outer(x, y), np.outer, grad_fn=None),
    case("outer", "method", [(2,), (1,)], lambda L, x, y: x.outer(y), np.outer, grad_fn=None),
]
for _eq, _shapes in _EINSUM:
    ops.append(case("einsum", _eq.replace(" ", "_"), list(_shapes),
                           lambda L, *xs, _eq=_eq: L.einsum(_eq, *xs),
                           lambda *xs, _eq=_eq: np.einsum(_eq.replace(" ", ""), *xs), grad_fn=None))
for _xs in [(3,), (4, 3), (2, 4, 3)]:
    for _b in (True, False):
        ops.append(case(
            "linear", f"{_xs}-{'bias' if _b else 'nobias'}".replace(" ", ""), [_xs, (5, 3)] + ([(5,)] if _b else []),
            lambda L, x, w, *b: (mg.ops.linear if L is mg else L.nn.functional.linear)(x, w, *b),
            lambda x, w, *b: x @ w.T + (b[0] if b else 0), grad_fn=None))  # H1: Addmm for the fused 2-D case


# -- tensor products and diagonals (ops/linalg.py), mg.linalg (ops/decomposition.py) -------------
def _fixed(*shape_lists, sampler=sample):
    """Samples with one array per shape in each list."""
    def gen(rng):
        return [SampleInput(tuple(sampler(s, rng) for s in shapes)) for shapes in shape_lists]
    return gen


def _wc(shape, rng):
    """A well-conditioned matrix (or batch of them)."""
    a = rng.standard_normal(shape)
    return a + 3 * np.eye(shape[-1]) if shape[-1] == shape[-2] else a


def _spd(shape, rng):
    x = rng.standard_normal(shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def _matrices(*shapes, maker=_wc):
    def gen(rng):
        return [SampleInput((maker(s, rng),)) for s in shapes]
    return gen


def _sym(f):
    return lambda A: f(0.5 * (A + A.mT))


def _sym_np(f):
    return lambda A: f(0.5 * (A + np.swapaxes(A, -1, -2)))


def _sym_torch(f):
    return lambda torch, A: f(torch, 0.5 * (A + A.mT))


ops += [
    OpInfo("diagonal", mg.diagonal, np.diagonal, _fixed([(3, 4)], [(4, 3)], [(2, 3, 3)]), grad_fn="Diagonal"),
    OpInfo("diagonal", lambda x: mg.diagonal(x, 1, -1, 0), lambda x: np.diagonal(x, 1, -1, 0),
           _fixed([(3, 4)], [(2, 3, 3)]), variant="offset", torch_op=lambda torch, x: torch.diagonal(x, 1, -1, 0),
           grad_fn="Diagonal"),
    OpInfo("diag_embed", mg.diag_embed, lambda x: x[..., None] * np.eye(x.shape[-1]), _fixed([(3,)], [(2, 3)]),
           grad_fn="DiagEmbed"),
    OpInfo("diag", mg.diag, lambda x: np.diag(x), _fixed([(3,)], [(3, 4)]), grad_fn=None),
    OpInfo("trace", mg.trace, np.trace, _fixed([(3, 3)], [(2, 4)]), grad_fn=None),
    OpInfo("tensordot", mg.tensordot, lambda a, b: np.tensordot(a, b, 2),
           _fixed([(2, 3, 4), (3, 4, 2)], [(3, 4), (3, 4)]), grad_fn=None),
    OpInfo("kron", mg.kron, np.kron, _fixed([(2, 3), (3, 2)], [(2,), (3,)], [(2, 2), (2,)]), grad_fn=None),
    OpInfo("cross", lambda a, b: mg.cross(a, b, dim=-1), lambda a, b: np.cross(a, b),
           _fixed([(3,), (3,)], [(2, 3), (2, 3)], [(4, 3), (1, 3)]), grad_fn=None,
           torch_op=lambda torch, a, b: torch.cross(a, b, dim=-1)),
    OpInfo("cdist", mg.cdist,
           lambda a, b: np.sqrt(((a[..., :, None, :] - b[..., None, :, :]) ** 2).sum(-1)),
           _fixed([(4, 3), (5, 3)], [(2, 3, 2), (2, 4, 2)]), grad_fn=None,
           skips={"torch_double_backward": "PyTorch's cdist is once differentiable (no derivative for "
                  "_cdist_backward); ours is twice, checked by gradgradcheck"}),
]

ops += [
    OpInfo("linalg.inv", mg.linalg.inv, np.linalg.inv, _matrices((3, 3), (2, 3, 3)), grad_fn="LinalgInvEx"),
    OpInfo("linalg.det", mg.linalg.det, np.linalg.det, _matrices((3, 3), (2, 2, 2)), grad_fn="LinalgDet"),
    OpInfo("linalg.slogdet", lambda A: mg.linalg.slogdet(A).logabsdet, lambda A: np.linalg.slogdet(A)[1],
           _matrices((3, 3)), torch_op=lambda torch, A: torch.linalg.slogdet(A)[1], grad_fn="LinalgSlogdet"),
    OpInfo("linalg.solve", mg.linalg.solve, np.linalg.solve,
           lambda rng: [SampleInput((_wc((3, 3), rng), rng.standard_normal((3, 2))))], grad_fn="LinalgSolveEx"),
    OpInfo("linalg.cholesky", _sym(mg.linalg.cholesky), _sym_np(np.linalg.cholesky), _matrices((3, 3), (2, 3, 3), maker=_spd),
           torch_op=_sym_torch(lambda torch, A: torch.linalg.cholesky(A)), grad_fn=None),
    OpInfo("linalg.qr", lambda A: mg.linalg.qr(A).R, lambda A: np.linalg.qr(A)[1], _matrices((4, 3), (3, 3)),
           torch_op=lambda torch, A: torch.linalg.qr(A)[1], grad_fn="LinalgQr"),
    OpInfo("linalg.eigh", _sym(lambda A: mg.linalg.eigh(A).eigenvalues), _sym_np(lambda A: np.linalg.eigh(A)[0]),
           _matrices((3, 3), maker=_spd), torch_op=_sym_torch(lambda torch, A: torch.linalg.eigh(A)[0]), grad_fn=None),
    OpInfo("linalg.eigvalsh", _sym(mg.linalg.eigvalsh), _sym_np(np.linalg.eigvalsh), _matrices((3, 3), maker=_spd),
           torch_op=_sym_torch(lambda torch, A: torch.linalg.eigvalsh(A)), grad_fn=None),
    OpInfo("linalg.svd", lambda A: mg.linalg.svd(A, full_matrices=False).S, lambda A: np.linalg.svd(A)[1],
           _matrices((4, 3), (2, 3)), torch_op=lambda torch, A: torch.linalg.svd(A, full_matrices=False)[1],
           grad_fn="LinalgSvd"),
    OpInfo("linalg.svdvals", mg.linalg.svdvals, lambda A: np.linalg.svd(A, compute_uv=False), _matrices((4, 3)),
           grad_fn="LinalgSvd"),
    OpInfo("linalg.vector_norm", mg.linalg.vector_norm, lambda x: np.sqrt((x * x).sum()),
           _fixed([(3,)], [(2, 3)], sampler=lambda s, rng: sample(s, rng, away=(0,))), grad_fn=None),
    OpInfo("linalg.matrix_norm", mg.linalg.matrix_norm, lambda A: np.linalg.norm(A, "fro", axis=(-2, -1)),
           _matrices((3, 4)), grad_fn=None),
    OpInfo("linalg.norm", mg.linalg.norm, lambda A: np.linalg.norm(A), _matrices((3, 4)), grad_fn=None),
    OpInfo("linalg.cross", mg.linalg.cross, lambda a, b: np.cross(a, b), _fixed([(2, 3), (2, 3)]), grad_fn=None),
    OpInfo("linalg.diagonal", mg.linalg.diagonal, lambda A: np.diagonal(A, 0, -2, -1), _matrices((2, 3, 3)),
           grad_fn="Diagonal"),
    OpInfo("linalg.matmul", mg.linalg.matmul, np.matmul, _fixed([(2, 3), (3, 4)]), grad_fn=None),
    OpInfo("linalg.vecdot", mg.linalg.vecdot, lambda a, b: (a * b).sum(-1), _fixed([(2, 3), (2, 3)]), grad_fn=None),
]


# -- the rest of torch.linalg (ops/matrix_functions.py, minigrad/linalg.py) ----------------
def _parts(L, parts):
    """Several outputs as one (each weighted differently) so every one is checked."""
    return L.cat([p.reshape(-1) * (i + 1.0) for i, p in enumerate(parts)])


def _lu_inputs(shape, rng):
    """(LU, pivots) of a well-conditioned matrix: lu_solve's inputs."""
    from minigrad.ops.matrix_functions import _lu_np
    LU, piv, _ = _lu_np(rng.standard_normal(shape) + 3 * np.eye(shape[-1]))
    return LU, piv


def _lu_solve_samples(rng):
    out = []
    for a, b in (((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1))):
        LU, piv = _lu_inputs(a, rng)
        out.append(SampleInput((LU, piv, rng.standard_normal(b))))
    return out


def _plain(shape, rng):
    return rng.standard_normal(shape)


def _rank_deficient(shape, rng):
    a = rng.standard_normal(shape[:-1] + (2,))
    return a @ rng.standard_normal(shape[:-2] + (2, shape[-1]))


def _np_lu_solve(LU, piv, B, adjoint=False):
    from minigrad.ops.matrix_functions import _perm_np
    n = LU.shape[-1]
    L, U = np.tril(LU, -1) + np.eye(n), np.triu(LU)
    A = _perm_np(piv, n) @ L @ U
    return np.linalg.solve(np.swapaxes(A, -1, -2) if adjoint else A, B)


def _np_tri(A, upper, unit):
    if unit:
        return (np.triu(A, 1) if upper else np.tril(A, -1)) + np.eye(A.shape[-1])
    return np.triu(A) if upper else np.tril(A)


def _fixed_wc(*shape_lists):
    """Samples whose first array is a well-conditioned matrix, the others standard normal."""
    def gen(rng):
        return [SampleInput((_wc(shapes[0], rng),) + tuple(rng.standard_normal(s) for s in shapes[1:]))
                for shapes in shape_lists]
    return gen


def _householder_np(A, tau):
    m, n = A.shape
    V = np.tril(A, -1) + np.eye(m, n)
    Q = np.eye(m)
    for i in range(tau.shape[-1]):
        v = V[:, i:i + 1]
        Q = Q @ (np.eye(m) - tau[i] * v @ v.T)
    return Q[:, :n]


def _expm_ref(A):
    # reference: the eigendecomposition (the samples are diagonalisable with distinct eigenvalues)
    w, V = np.linalg.eig(A)
    return np.real((V * np.exp(w)[..., None, :]) @ np.linalg.inv(V))


ops += [
    OpInfo("linalg.pinv", mg.linalg.pinv, np.linalg.pinv, _matrices((4, 3), (3, 4), (2, 3, 3), maker=_plain),
           grad_fn="LinalgPinv"),
    OpInfo("linalg.pinv", _sym(lambda A: mg.linalg.pinv(A, hermitian=True)),
           _sym_np(lambda A: np.linalg.pinv(A, hermitian=True)), _matrices((3, 3), maker=_plain), variant="hermitian",
           torch_op=_sym_torch(lambda torch, A: torch.linalg.pinv(A, hermitian=True)), grad_fn="LinalgPinv"),
    OpInfo("pinverse", mg.pinverse, np.linalg.pinv, _matrices((3, 2), maker=_plain), grad_fn="LinalgPinv"),
    OpInfo("pinverse", lambda A: A.pinverse(), np.linalg.pinv, _matrices((2, 3), maker=_plain), variant="method",
           torch_op=lambda torch, A: A.pinverse(), grad_fn="LinalgPinv"),
    OpInfo("linalg.lstsq", lambda A, B: mg.linalg.lstsq(A, B).solution,
           lambda A, B: np.linalg.lstsq(A, B, rcond=None)[0], _fixed([(4, 3), (4, 2)], [(3, 3), (3, 1)]),
           torch_op=lambda torch, A, B: torch.linalg.lstsq(A, B).solution, grad_fn=None),
    OpInfo("linalg.lstsq", lambda A, B: mg.linalg.lstsq(A, B).solution,
           lambda A, B: np.linalg.pinv(A) @ B, _fixed([(2, 4, 3), (2, 4, 2)], [(2, 3), (2, 1)]), variant="batch_wide",
           torch_op=lambda torch, A, B: torch.linalg.lstsq(A, B).solution, grad_fn=None),
    OpInfo("linalg.lstsq", lambda A, b: mg.linalg.lstsq(A, b).solution,
           lambda A, b: np.linalg.lstsq(A, b, rcond=None)[0], _fixed([(4, 2), (4,)]), variant="vector",
           torch_op=lambda torch, A, b: torch.linalg.lstsq(A, b).solution, grad_fn=None),
    OpInfo("linalg.lstsq", lambda A, B: _parts(mg, mg.linalg.lstsq(A, B, driver="gelsd")[:2]),
           lambda A, B: np.concatenate([np.linalg.lstsq(A, B, rcond=None)[0].reshape(-1),
                                        2.0 * np.linalg.lstsq(A, B, rcond=None)[1]]),
           _fixed([(5, 3), (5, 2)]), variant="gelsd_residuals",
           torch_op=lambda torch, A, B: _parts(torch, torch.linalg.lstsq(A, B, driver="gelsd")[:2]), grad_fn=None),
    OpInfo("linalg.matrix_rank", mg.linalg.matrix_rank, np.linalg.matrix_rank,
           _matrices((3, 3), (4, 3), (2, 3, 4), maker=_rank_deficient), supports_grad=False, grad_fn=None),
    OpInfo("linalg.matrix_rank", lambda A: mg.linalg.matrix_rank(A, atol=1.0, rtol=0.1),
           lambda A: (np.linalg.svd(A, compute_uv=False)
                      > max(1.0, 0.1 * np.linalg.svd(A, compute_uv=False).max())).sum(-1),
           _matrices((4, 4), maker=_plain), variant="atol_rtol", supports_grad=False, grad_fn=None,
           torch_op=lambda torch, A: torch.linalg.matrix_rank(A, atol=1.0, rtol=0.1)),
    OpInfo("linalg.matrix_power", lambda A: mg.linalg.matrix_power(A, 3), lambda A: np.linalg.matrix_power(A, 3),
           _matrices((3, 3), (2, 2, 2), maker=_plain), torch_op=lambda torch, A: torch.linalg.matrix_power(A, 3),
           grad_fn=None),
    OpInfo("linalg.matrix_power", lambda A: mg.linalg.matrix_power(A, -2), lambda A: np.linalg.matrix_power(A, -2),
           _matrices((3, 3)), variant="negative", torch_op=lambda torch, A: torch.linalg.matrix_power(A, -2),
           grad_fn=None),
    OpInfo("linalg.matrix_power", lambda A: mg.linalg.matrix_power(A, 0), lambda A: np.linalg.matrix_power(A, 0),
           _matrices((2, 3, 3)), variant="zero", torch_op=lambda torch, A: torch.linalg.matrix_power(A, 0),
           grad_fn=None),
    OpInfo("matrix_power", lambda A: mg.matrix_power(A, 5), lambda A: np.linalg.matrix_power(A, 5),
           _matrices((2, 2), maker=_plain), torch_op=lambda torch, A: torch.matrix_power(A, 5), grad_fn=None),
    OpInfo("linalg.matrix_exp", mg.linalg.matrix_exp, _expm_ref, _matrices((3, 3), (2, 2, 2), maker=_plain),
           grad_fn="LinalgMatrixExp", fwd_rtol=1e-10),
    OpInfo("linalg.matrix_exp", lambda A: mg.linalg.matrix_exp(4.0 * A), lambda A: _expm_ref(4.0 * A),
           _matrices((3, 3), maker=_plain), variant="scaled",
           torch_op=lambda torch, A: torch.linalg.matrix_exp(4.0 * A),
           grad_fn="LinalgMatrixExp", fwd_rtol=1e-10),
    OpInfo("matrix_exp", mg.matrix_exp, _expm_ref, _matrices((2, 2), maker=_plain), grad_fn="LinalgMatrixExp",
           fwd_rtol=1e-10),
]

ops += [
    OpInfo("linalg.lu_factor", lambda A: mg.linalg.lu_factor(A).LU, None,
           _matrices((3, 3), (2, 4), (4, 2), (2, 3, 3), maker=_plain),
           torch_op=lambda torch, A: torch.linalg.lu_factor(A).LU, grad_fn="LinalgLuFactorEx"),
    OpInfo("linalg.lu_factor_ex", lambda A: mg.linalg.lu_factor_ex(A).LU, None, _matrices((3, 4), maker=_plain),
           torch_op=lambda torch, A: torch.linalg.lu_factor_ex(A).LU, grad_fn="LinalgLuFactorEx"),
    OpInfo("linalg.lu", lambda A: _parts(mg, mg.linalg.lu(A)), None,
           _matrices((3, 3), (2, 4), (4, 2), (2, 3, 3), maker=_plain),
           torch_op=lambda torch, A: _parts(torch, torch.linalg.lu(A)), grad_fn=None),
    OpInfo("lu", lambda A: mg.lu(A)[0], None, _matrices((3, 3), maker=_plain),
           torch_op=lambda torch, A: torch.lu(A)[0], grad_fn=None),
    OpInfo("lu_unpack", lambda LU, piv: _parts(mg, mg.lu_unpack(LU, piv)), None,
           lambda rng: [SampleInput(_lu_inputs((3, 3), rng))],
           torch_op=lambda torch, LU, piv: _parts(torch, torch.lu_unpack(LU, piv)), grad_fn=None),
    OpInfo("linalg.lu_solve", mg.linalg.lu_solve, _np_lu_solve, _lu_solve_samples, grad_fn=None),
    OpInfo("linalg.lu_solve", lambda LU, piv, B: mg.linalg.lu_solve(LU, piv, B, adjoint=True),
           lambda LU, piv, B: _np_lu_solve(LU, piv, B, adjoint=True), _lu_solve_samples, variant="adjoint",
           torch_op=lambda torch, LU, piv, B: torch.linalg.lu_solve(LU, piv, B, adjoint=True), grad_fn=None),
    OpInfo("linalg.lu_solve", lambda LU, piv, B: mg.linalg.lu_solve(LU, piv, B.mT, left=False),
           lambda LU, piv, B: np.swapaxes(np.linalg.solve(np.swapaxes(_perm_np_A(LU, piv), -1, -2), B), -1, -2),
           _lu_solve_samples, variant="right",
           torch_op=lambda torch, LU, piv, B: torch.linalg.lu_solve(LU, piv, B.mT, left=False), grad_fn=None),
    OpInfo("lu_solve", lambda LU, piv, B: mg.lu_solve(B, LU, piv), _np_lu_solve, _lu_solve_samples,
           torch_op=lambda torch, LU, piv, B: torch.lu_solve(B, LU, piv), grad_fn=None),
]


def _perm_np_A(LU, piv):
    from minigrad.ops.matrix_functions import _perm_np
    n = LU.shape[-1]
    return _perm_np(piv, n) @ (np.tril(LU, -1) + np.eye(n)) @ np.triu(LU)


_TRI = [(True, True, False), (False, True, False), (True, False, False), (False, False, True), (True, True, True)]
for _up, _left, _unit in _TRI:
    ops.append(OpInfo(
        "linalg.solve_triangular",
        lambda A, B, _up=_up, _left=_left, _unit=_unit: mg.linalg.solve_triangular(
            A, B if _left else B.mT, upper=_up, left=_left, unitriangular=_unit),
        lambda A, B, _up=_up, _left=_left, _unit=_unit: (
            np.linalg.solve(_np_tri(A, _up, _unit), B) if _left
            else np.linalg.solve(np.swapaxes(_np_tri(A, _up, _unit), -1, -2), B).swapaxes(-1, -2)),
        _fixed_wc([(3, 3), (3, 2)], [(2, 3, 3), (2, 3, 1)]),
        variant=f"{'upper' if _up else 'lower'}{'' if _left else '_right'}{'_unit' if _unit else ''}",
        torch_op=lambda torch, A, B, _up=_up, _left=_left, _unit=_unit: torch.linalg.solve_triangular(
            A, B if _left else B.mT, upper=_up, left=_left, unitriangular=_unit), grad_fn=None))

ops += [
    OpInfo("triangular_solve", lambda B, A: mg.triangular_solve(B, A)[0],
           lambda B, A: np.linalg.solve(np.triu(A), B), lambda rng: [SampleInput((rng.standard_normal((3, 2)),
                                                                                  _wc((3, 3), rng)))],
           torch_op=lambda torch, B, A: torch.triangular_solve(B, A)[0], grad_fn=None),
    OpInfo("triangular_solve", lambda B, A: mg.triangular_solve(B, A, upper=False, transpose=True,
                                                                unitriangular=True).solution,
           lambda B, A: np.linalg.solve(np.swapaxes(np.tril(A, -1) + np.eye(3), -1, -2), B),
           lambda rng: [SampleInput((rng.standard_normal((2, 3, 2)), _wc((2, 3, 3), rng)))], variant="lower_t_unit",
           torch_op=lambda torch, B, A: torch.triangular_solve(B, A, upper=False, transpose=True,
                                                               unitriangular=True).solution, grad_fn=None),
    OpInfo("linalg.cholesky_ex", _sym(lambda A: mg.linalg.cholesky_ex(A).L), _sym_np(np.linalg.cholesky),
           _matrices((3, 3), (2, 3, 3), maker=_spd),
           torch_op=_sym_torch(lambda torch, A: torch.linalg.cholesky_ex(A).L),
           grad_fn=None),
    OpInfo("linalg.inv_ex", lambda A: mg.linalg.inv_ex(A).inverse, np.linalg.inv, _matrices((3, 3), (2, 2, 2)),
           torch_op=lambda torch, A: torch.linalg.inv_ex(A).inverse, grad_fn="LinalgInvEx"),
    OpInfo("linalg.solve_ex", lambda A, B: mg.linalg.solve_ex(A, B).result, np.linalg.solve,
           _fixed_wc([(3, 3), (3, 2)], [(2, 2, 2), (2, 2, 1)]),
           torch_op=lambda torch, A, B: torch.linalg.solve_ex(A, B).result, grad_fn="LinalgSolveEx"),
    OpInfo("linalg.multi_dot", mg.linalg.multi_dot, lambda xs: np.linalg.multi_dot(xs),
           lambda rng: [SampleInput(([rng.standard_normal(s) for s in shapes],))
                        for shapes in ([(2, 3), (3, 4), (4, 2)], [(3,), (3, 4), (4, 2), (2,)], [(3,), (3,)],
                                       [(5, 2), (2, 5), (5, 3), (3, 1)])], grad_fn=None),
    OpInfo("linalg.householder_product", mg.linalg.householder_product, _householder_np,
           _fixed([(4, 3), (2,)], [(3, 3), (3,)]), grad_fn=None),
    OpInfo("linalg.householder_product", mg.linalg.householder_product,
           lambda A, tau: np.stack([_householder_np(a, t) for a, t in zip(A, tau)]),
           _fixed([(2, 3, 2), (2, 2)]), variant="batch", grad_fn=None),
    OpInfo("linalg.cond", mg.linalg.cond, np.linalg.cond, _matrices((3, 3), (2, 4, 3), maker=_plain), grad_fn=None),
]
for _p in ("fro", "nuc", 1, -1, float("inf"), -2):
    ops.append(OpInfo("linalg.cond", lambda A, _p=_p: mg.linalg.cond(A, _p), lambda A, _p=_p: np.linalg.cond(A, _p),
                      _matrices((3, 3)), variant=f"p{_p}", grad_fn=None,
                      # PyTorch 2.13's own cond has no backward for these p (it modifies inv(A) in place):
                      # compared with its definition in PyTorch's ops instead
                      torch_op=lambda torch, A, _p=_p: (torch.linalg.cond(A, _p) if _p == -2 else
                                                        torch.linalg.matrix_norm(A, _p)
                                                        * torch.linalg.matrix_norm(torch.linalg.inv(A), _p))))
ops += [
    OpInfo("linalg.vander", mg.linalg.vander, lambda x: np.vander(x, increasing=True), _fixed([(3,)]), grad_fn=None),
    OpInfo("linalg.vander", lambda x: mg.linalg.vander(x, N=4),
           lambda x: np.stack([np.vander(r, 4, increasing=True) for r in x]), _fixed([(2, 3)]), variant="N",
           torch_op=lambda torch, x: torch.linalg.vander(x, N=4), grad_fn=None),
    OpInfo("linalg.vander", lambda x: mg.linalg.vander(x, N=3), lambda x: np.vander(x, 3, increasing=True),
           lambda rng: [SampleInput((np.array([0.0, 1.5, -0.5]),))], variant="zero",
           torch_op=lambda torch, x: torch.linalg.vander(x, N=3), grad_fn=None),
    # PyTorch 2.13's torch.vander has no backward for N > 2 (an in-place cumprod): compared with
    # torch.linalg.vander's values and gradients instead (the same matrix, columns reversed)
    OpInfo("vander", mg.vander, np.vander, _fixed([(3,)]), grad_fn=None,
           torch_op=lambda torch, x: torch.linalg.vander(x).flip(-1)),
    OpInfo("vander", lambda x: mg.vander(x, 2, True), lambda x: np.vander(x, 2, True), _fixed([(4,)]),
           variant="increasing", torch_op=lambda torch, x: torch.linalg.vander(x, N=2), grad_fn=None),
    OpInfo("chain_matmul", lambda a, b, c: mg.chain_matmul(a, b, c), lambda a, b, c: a @ b @ c,
           _fixed([(2, 5), (5, 1), (1, 3)]), torch_op=lambda torch, a, b, c: torch.chain_matmul(a, b, c), grad_fn=None),
]
