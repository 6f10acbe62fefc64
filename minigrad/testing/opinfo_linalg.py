"""Registry entries for the sorting/selection family (ops/sorting.py), the linalg family's tensor
products and diagonals (ops/linalg.py) and mg.linalg (ops/decomposition.py): `linalg_op_db`,
appended to `op_db`. Same OpInfo/SampleInput as minigrad/testing/opinfo.py.

mg.linalg entries are named "linalg.<name>" (torch_op defaults to torch.linalg.<name>). Inputs are
chosen where the op is smooth: distinct values for sorting (no ties), well-conditioned matrices,
symmetric positive-definite ones for cholesky/eigh (the op sees the symmetrised input, so finite
differences stay within symmetric matrices).
"""
import numpy as np

import minigrad as mg

from .opinfo import OpInfo, SampleInput, distinct, sample


def _distinct_samples(shapes=((3,), (2, 3), (3, 4))):
    def gen(rng):
        return [SampleInput((distinct(s, rng),)) for s in shapes]
    return gen


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


def _values(name, mg_fn, np_fn, torch_fn, grad_fn, samples=None, **kw):
    """An op returning (values, indices): the entry checks values (indices are checked in tests/ops/test_sorting.py)."""
    return OpInfo(name, lambda x: mg_fn(x)[0], lambda x: np_fn(x), samples or _distinct_samples(),
                  torch_op=lambda torch, x: torch_fn(torch, x)[0], grad_fn=grad_fn, **kw)


sorting_ops = [
    _values("sort", lambda x: mg.sort(x), lambda x: np.sort(x, -1), lambda t, x: t.sort(x), "Sort"),
    _values("sort", lambda x: mg.sort(x, 0, descending=True), lambda x: -np.sort(-x, 0),
            lambda t, x: t.sort(x, 0, descending=True), "Sort", variant="descending"),
    OpInfo("argsort", lambda x: mg.argsort(x), lambda x: np.argsort(x, -1, kind="stable"),
           _distinct_samples(), supports_grad=False, grad_fn=None),
    OpInfo("msort", mg.msort, lambda x: np.sort(x, 0), _distinct_samples(), grad_fn="Sort",
           torch_op=lambda torch, x: torch.sort(x, 0)[0]),
    _values("topk", lambda x: mg.topk(x, 2), lambda x: -np.sort(-x, -1)[..., :2], lambda t, x: t.topk(x, 2), "Topk",
            samples=_distinct_samples(((3,), (2, 3), (3, 4)))),
    _values("kthvalue", lambda x: mg.kthvalue(x, 2), lambda x: np.sort(x, -1)[..., 1], lambda t, x: t.kthvalue(x, 2),
            "Kthvalue"),
    OpInfo("median", mg.median, lambda x: np.sort(x.reshape(-1))[(x.size - 1) // 2], _distinct_samples(),
           grad_fn="Median"),
    _values("median", lambda x: mg.median(x, -1), lambda x: np.sort(x, -1)[..., (x.shape[-1] - 1) // 2],
            lambda t, x: t.median(x, -1), "Median", variant="dim"),
    OpInfo("nanmedian", mg.nanmedian, lambda x: np.sort(x.reshape(-1))[(x.size - 1) // 2], _distinct_samples(),
           grad_fn="Nanmedian"),
    _values("mode", lambda x: mg.mode(x), lambda x: np.sort(x, -1)[..., 0], lambda t, x: t.mode(x), "Mode"),
    OpInfo("unique", mg.unique, np.unique, _distinct_samples(), supports_grad=False, grad_fn=None),
]

linalg_family_ops = [
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

linalg_ops = [
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

linalg_op_db = sorting_ops + linalg_family_ops + linalg_ops
