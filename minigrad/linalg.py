"""mg.linalg: PyTorch's torch.linalg — norms, inverse, determinants, solve and the decompositions,
each differentiable (the Functions live in minigrad/ops/decomposition.py and ops/reduction.py).

    >>> A = mg.tensor([[4.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> mg.linalg.det(A)
    tensor(11., grad_fn=<LinalgDetBackward0>)
"""
import math
from collections import namedtuple

from .ops import decomposition as _d
from .ops.reduction import norm as _pnorm, amax as _amax, amin as _amin
from .tensor import Tensor

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "det", "slogdet", "solve", "cholesky", "qr",
           "eigh", "eigvalsh", "svd", "svdvals", "eig", "eigvals"]

SlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])
QRResult = namedtuple("qr", ["Q", "R"])
EighResult = namedtuple("eigh", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("eig", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("svd", ["U", "S", "Vh"])


def _dims(dim, ndim):
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(d % ndim if ndim else d for d in dims)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """sum(|x|^ord)^(1/ord) over dim (all elements when None); ord in {inf, -inf, 0, any float}."""
    if not isinstance(x, Tensor) or x.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point tensor as input. Got "
                           f"{getattr(x, 'dtype', type(x).__name__)}")
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got '{ord}'")
    return _pnorm(x, 2 if ord == 2 else ord, _dims(dim, x.ndim), keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002
    """'fro', 'nuc', inf, -inf, 1, -1, 2, -2 norms of the matrices in the two dims `dim`."""
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions "
                           f"(shape {tuple(A.shape)})")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = _dims(dim, A.ndim)
    if ord == "fro":
        return _pnorm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        # singular values of the matrices moved to the last two dims
        perm = [i for i in range(A.ndim) if i not in (d0, d1)] + [d0, d1]
        S = svdvals(A.permute(*perm))
        out = S.sum(-1) if ord == "nuc" else (S.amax(-1) if ord == 2 else S.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                out = out.unsqueeze(d)
        return out
    if ord in (1, -1, math.inf, -math.inf):
        # 1: max column sum (sum over rows d0, extremum over d1); inf: max row sum
        sum_dim, ext_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(sum_dim, keepdim=True)
        out = _amax(sums, ext_dim, True) if ord > 0 else _amin(sums, ext_dim, True)
        return out if keepdim else out.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """A vector norm when dim is an int (or A is 1-D), a matrix norm when dim is a pair (or A is 2-D)."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                       f"Got {A.ndim}D.")


def inv(A):
    """The inverse of each square matrix in A (RuntimeError when one is singular)."""
    return _d.inv(A)


def det(A):
    """The determinant of each square matrix in A; its gradient is exact at singular matrices."""
    return _d.det(A)


def slogdet(A):
    """(sign, log|det|) of each square matrix in A; the gradient flows through logabsdet."""
    return SlogdetResult(*_d.slogdet(A))


def solve(A, B, *, left=True):
    """X with A X = B (left=True) or X A = B; B may be a vector (A's ndim minus one)."""
    return _d.solve(A, B, left=left)


def cholesky(A, *, upper=False):
    """L lower-triangular with A = L L^T (or U = L^T when upper=True); A symmetric positive-definite."""
    return _d.cholesky(A, upper=upper)


def qr(A, mode="reduced"):
    """(Q, R) with A = Q R; mode 'reduced', 'complete' or 'r' (Q empty), as torch.linalg.qr."""
    return QRResult(*_d.qr(A, mode))


def eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors as columns) of symmetric A, reading its UPLO triangle."""
    return EighResult(*_d.eigh(A, UPLO))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues of symmetric A, ascending (differentiable, through eigh)."""
    return _d.eigh(A, UPLO)[0]


def eig(A):
    """(eigenvalues, eigenvectors as unit columns) of a general square A, complex even for a real A
    (torch.linalg.eig); differentiable as PyTorch's, for losses that do not depend on the
    eigenvectors' arbitrary phase."""
    from .ops.linalg_eig import eig as _eig
    return EigResult(*_eig(A))


def eigvals(A):
    """The eigenvalues of a general square A, complex (torch.linalg.eigvals); differentiable."""
    from .ops.linalg_eig import eig as _eig
    return _eig(A)[0]


def svd(A, full_matrices=True):
    """(U, S, Vh) with A = U diag(S) Vh; differentiate through it with full_matrices=False."""
    return SVDResult(*_d.svd(A, full_matrices))


def svdvals(A):
    """The singular values of A, descending (differentiable)."""
    return _d.svd(A, False)[1]


def cross(input, other, *, dim=-1):  # noqa: A002
    """The cross product along dim (default the last, unlike torch.cross)."""
    from .ops.linalg import cross as _cross
    return _cross(input, other, dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of the matrices in the last two dims (a view), as torch.linalg.diagonal."""
    from .ops.linalg import diagonal as _diagonal
    return _diagonal(A, offset, dim1, dim2)


def matmul(input, other):  # noqa: A002
    """Alias of mg.matmul."""
    from .ops.linalg import matmul as _matmul
    return _matmul(input, other)


def vecdot(x, y, *, dim=-1):
    """The dot product of x and y along dim (with broadcasting); x is conjugated, as torch.linalg.vecdot."""
    from .ops.complex import conj
    return (conj(x) * y).sum(dim)


__all__ += ["cross", "diagonal", "matmul", "vecdot"]
