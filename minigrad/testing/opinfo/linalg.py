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
