"""mg.linalg: PyTorch's torch.linalg — norms, inverse, determinants, solve and the decompositions,
each differentiable (the Functions live in minigrad/ops/decomposition.py and ops/reduction.py).

    >>> A = mg.tensor([[4.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> mg.linalg.det(A)
    tensor(11., grad_fn=<LinalgDetBackward0>)
"""
import math
from collections import namedtuple

import numpy as np

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


# -- the rest of torch.linalg: lstsq, LU, pinv, matrix_rank, ... (the ops are in ops/matrix_functions.py; the rest composites) --
from .ops import matrix_functions as _mf  # noqa: E402

LstsqResult = namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])
LUResult = namedtuple("lu", ["P", "L", "U"])
LUFactorResult = namedtuple("lu_factor", ["LU", "pivots"])
LUFactorExResult = namedtuple("lu_factor_ex", ["LU", "pivots", "info"])
CholeskyExResult = namedtuple("cholesky_ex", ["L", "info"])
InvExResult = namedtuple("inv_ex", ["inverse", "info"])
SolveExResult = namedtuple("solve_ex", ["result", "info"])

__all__ += ["pinv", "lstsq", "matrix_rank", "matrix_power", "matrix_exp", "lu", "lu_factor", "lu_factor_ex",
            "lu_solve", "solve_triangular", "cholesky_ex", "inv_ex", "solve_ex", "multi_dot",
            "householder_product", "cond", "vander"]


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None):
    """The Moore-Penrose pseudoinverse of each matrix in A: singular values (absolute eigenvalues when
    hermitian) at or below max(atol, rtol * the largest) are dropped; rtol defaults to eps * max(m, n)
    (0 when only atol > 0 is given). rcond is the older name of rtol. Differentiable with PyTorch's
    formula (exact while the rank does not change)."""
    return _mf.pinv(A, atol=atol, rtol=rtol, hermitian=hermitian, rcond=rcond)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B|| (torch.linalg.lstsq): the
    minimum-norm solution (singular values at or below rcond * the largest dropped; rcond defaults to
    eps * max(m, n)). B is (*, m, k) or (*, m). As PyTorch on the CPU (driver 'gelsy' by default):
    residuals (||A X - B||^2 per column) only for m > n, full-rank A and a driver other than 'gelsy';
    rank for every driver but 'gels'; singular_values for 'gelsd' and 'gelss'; the others are empty.
    The gradient is PyTorch's: that of pinv(A) @ B."""
    for name, t in (("A", A), ("B", B)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg.lstsq(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.lstsq: input must have at least 2 dimensions (shape {tuple(A.shape)})")
    if A.dtype.kind != "f":
        raise RuntimeError(f"torch.linalg.lstsq: Expected a floating point tensor as input. Got {A.dtype}")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {A.dtype} and other's dtype {B.dtype}")
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                           f"got {driver!r}")
    m, n = A.shape[-2:]
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2) (A of shape "
                           f"{tuple(A.shape)}, B of shape {tuple(B.shape)})")
    eps_rtol = float(np.finfo(A.dtype).eps) * max(m, n)
    rtol = eps_rtol if rcond is None or rcond < 0 else float(rcond)
    X = _mf.pinv(A, rtol=rtol) @ Bm
    S = svdvals(A.detach()) if min(m, n) else Tensor._make(np.zeros(A.shape[:-2] + (0,), A.dtype))
    if S.shape[-1]:   # in Tensor ops, so vmap batches it
        rank = (S > S.amax(-1, keepdim=True) * rtol).sum(-1)
    else:
        rank = Tensor._make(np.zeros(A.shape[:-2], np.int64))
    empty = Tensor._make(np.zeros((0,), A.dtype))
    residuals = empty
    if m > n and driver != "gelsy" and np.all(rank._data == n):
        residuals = ((A @ X - Bm) ** 2).sum(-2)   # (*, 1) for a vector B, as PyTorch
    return LstsqResult(X.squeeze(-1) if vector else X, residuals,
                       rank if driver != "gels" else Tensor._make(np.zeros((0,), np.int64)),
                       S if driver in ("gelsd", "gelss") else empty)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values (absolute eigenvalues when hermitian) of each matrix in A above
    max(atol, rtol * the largest), int64 (torch.linalg.matrix_rank); rtol defaults to eps * max(m, n)
    (0 when only atol > 0 is given); tol is the older name of atol."""
    if not isinstance(A, Tensor) or A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_rank: The input tensor A must have at least 2 dimensions "
                           f"(got {getattr(A, 'shape', type(A).__name__)})")
    if A.dtype.kind != "f":
        raise RuntimeError(f"linalg.matrix_rank: Expected a floating point tensor as input. Got {A.dtype}")
    if tol is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError("linalg.matrix_rank: give either tol or atol/rtol, not both")
        atol, rtol = tol, 0.0
    atol, rtol = _mf._tolerances(A, atol, rtol, "linalg.matrix_rank")
    A = A.detach()
    if min(A.shape[-2:]) == 0:
        return Tensor._make(np.zeros(A.shape[:-2], np.int64))
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    tol_ = (S.amax(-1, keepdim=True) * rtol).clamp(min=atol)
    return (S > tol_).sum(-1)


def matrix_power(A, n):
    """A to the integer power n (the identity for 0, powers of inv(A) for n < 0), as
    torch.linalg.matrix_power."""
    return _mf.matrix_power(A, n)


def matrix_exp(A):
    """The matrix exponential of each square matrix in A; its gradient is exact (a block-matrix
    exponential), as torch.linalg.matrix_exp."""
    return _mf.matrix_exp(A)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): the LU decomposition with partial pivoting of each matrix in A packed as
    LAPACK's getrf does (L's strict lower triangle and U; pivots 1-based int32); info is the 1-based
    index of the first zero pivot (0: none), raised as an error when check_errors."""
    return LUFactorExResult(*_mf.lu_factor_ex(A, pivot=pivot, check_errors=check_errors))


def lu_factor(A, *, pivot=True):
    """(LU, pivots) as lu_factor_ex, raising when a pivot is zero (torch.linalg.lu_factor)."""
    return LUFactorResult(*_mf.lu_factor(A, pivot=pivot))


def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U: P a permutation, L unit lower-triangular (m x k), U upper (k x n),
    k = min(m, n) (torch.linalg.lu); differentiable with PyTorch's formula."""
    return LUResult(*_mf.linalg_lu(A, pivot=pivot))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (X A = B when left=False; A^T in place of A when adjoint) from A's lu_factor
    (torch.linalg.lu_solve)."""
    return _mf.linalg_lu_solve(LU, pivots, B, left=left, adjoint=adjoint)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (X A = B when left=False) reading only A's upper (or lower) triangle, its
    diagonal taken as ones when unitriangular (torch.linalg.solve_triangular); B is (*, n, k)."""
    return _mf.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def _info_square(A, op):
    """LAPACK getrf's info of each square matrix: the first zero pivot (1-based), 0 when none (through
    the LU op, so vmap batches it)."""
    from .ops.decomposition import _square as _sq, _float as _fl
    _sq(A, op)
    _fl(A, op)
    return _mf.LinalgLuFactorEx.apply(A.detach())[2]


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): cholesky without raising (torch.linalg.cholesky_ex): info is 0, or the order of the
    first leading minor that is not positive-definite, for each matrix (an error when check_errors).
    L of a matrix that fails is LAPACK's partial result, as PyTorch's (no gradient flows through it)."""
    from .ops.decomposition import _square as _sq, _float as _fl
    _sq(A, "cholesky_ex")
    _fl(A, "cholesky_ex")
    partial, info = _mf.CholeskyPartial.apply(A.detach())
    failed = info._data != 0
    if check_errors and failed.any():
        raise RuntimeError(f"linalg.cholesky_ex: The factorization could not be completed because the input is "
                           f"not positive-definite (the leading minor of order {int(info._data[failed].flat[0])} is "
                           f"not positive-definite).")
    if not failed.any():
        return CholeskyExResult(cholesky(A, upper=upper), info)
    ok = (info == 0).unsqueeze(-1).unsqueeze(-1)
    safe = where(ok, A, Tensor._make(np.eye(A.shape[-1], dtype=A.dtype)))
    return CholeskyExResult(where(ok, cholesky(safe, upper=upper), partial.mT if upper else partial), info)


def inv_ex(A, *, check_errors=False):
    """(inverse, info): inv without raising (torch.linalg.inv_ex): info is 0, or the 1-based index of
    the first zero pivot of A's LU, per matrix (an error when check_errors); the inverse of a
    singular matrix is not meaningful (inf/nan)."""
    info = _info_square(A, "inv_ex")
    if check_errors and np.any(info._data):
        raise RuntimeError(f"linalg.inv_ex: The diagonal element {int(info._data[info._data != 0].flat[0])} is "
                           f"zero, the inversion could not be completed because the input matrix is singular.")
    if not np.any(info._data):
        return InvExResult(inv(A), info)
    return InvExResult(_singular_solve(A, None), info)


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info): solve without raising (torch.linalg.solve_ex); info as inv_ex's."""
    info = _info_square(A, "solve_ex")
    if check_errors and np.any(info._data):
        raise RuntimeError(f"linalg.solve_ex: The solver failed because the input matrix is singular "
                           f"(U[{int(info._data[info._data != 0].flat[0])}] is zero).")
    if not np.any(info._data):
        return SolveExResult(solve(A, B, left=left), info)
    return SolveExResult(_singular_solve(A, B, left), info)


def _singular_solve(A, B, left=True):
    """inv(A) (B None) or solve(A, B) through A's LU when some matrix is singular: inf/nan there, as
    LAPACK's triangular solves give (no error); substitutions in Tensor ops, so vmap batches them."""
    LU, piv, _ = _mf.lu_factor_ex(A)
    if B is None:
        B = Tensor._make(np.eye(A.shape[-1], dtype=A.dtype)).expand(*A.shape)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1 if left else -2) if vector else B
    with np.errstate(divide="ignore", invalid="ignore"):
        P, L, U = _mf.lu_unpack(LU, piv)
        if left:
            X = _substitute(U, _substitute(L, P.mT @ Bm, lower=True, unit=True), lower=False, unit=False)
        else:  # X A = B: A^T X^T = B^T, A^T = U^T L^T P^T
            Y = _substitute(U.mT, Bm.mT, lower=True, unit=False)
            X = (P @ _substitute(L.mT, Y, lower=False, unit=True)).mT
    return X.squeeze(-1 if left else -2) if vector else X


def _substitute(T, B, lower, unit):
    """T^-1 B by forward (lower) or back substitution, row by row in Tensor ops: no error at a zero
    pivot (inf/nan, as LAPACK's trsm)."""
    from .ops.shape import cat
    n = T.shape[-1]
    rows = [None] * n
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        r = B[..., i:i + 1, :]
        lo, hi = (0, i) if lower else (i + 1, n)
        if hi > lo:
            r = r - T[..., i:i + 1, lo:hi] @ cat(rows[lo:hi], -2)
        rows[i] = r if unit else r / T[..., i:i + 1, i:i + 1]
    return cat(rows, -2)


def multi_dot(tensors):
    """The product of the matrices in tensors, multiplied in the cheapest order (torch.linalg.multi_dot);
    the first may be 1-D (a row vector) and the last 1-D (a column vector), those dims dropped after."""
    from .ops.linalg import matmul as _mm
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        want = (1, 2) if i in (0, len(ts) - 1) else (2,)
        if t.ndim not in want:
            raise RuntimeError(f"multi_dot(): tensor {i} must be {' or '.join(f'{w}D' for w in want)} but got "
                               f"{t.ndim}D")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i in range(len(ts) - 1):
        if ts[i].shape[-1] != ts[i + 1].shape[-2]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(ts[i].shape)} and "
                               f"{tuple(ts[i + 1].shape)} cannot be multiplied")
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    n = len(ts)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        return ts[i] if i == j else _mm(chain(i, split[i][j]), chain(split[i][j] + 1, j))
    out = chain(0, n - 1)
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


def householder_product(A, tau):
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, v_i column i of A below the
    diagonal with a 1 on it (torch.linalg.householder_product, LAPACK's orgqr): A (*, m, n), tau (*, k),
    k <= n <= m."""
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.householder_product: input must have at least 2 dimensions "
                           f"(shape {tuple(A.shape)})")
    m, n = A.shape[-2:]
    if n > m:
        raise RuntimeError(f"torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1] (got {m} x {n})")
    if tau.ndim != A.ndim - 1 or tau.shape[-1] > n:
        raise RuntimeError(f"torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1], and tau must have one dim less than input (A {tuple(A.shape)}, "
                           f"tau {tuple(tau.shape)})")
    if A.dtype != tau.dtype:
        raise RuntimeError(f"torch.linalg.householder_product: tau dtype {tau.dtype} does not match input dtype "
                           f"{A.dtype}")
    eye = Tensor._make(np.eye(m, dtype=A.dtype))
    V = A.tril(-1) + Tensor._make(np.eye(m, n, dtype=A.dtype))   # the reflectors' vectors as columns
    Q = None
    for i in range(tau.shape[-1]):
        v = V[..., :, i:i + 1]
        H = eye - tau[..., i:i + 1].unsqueeze(-1) * (v @ v.mH)  # (v v^H: complex too)
        Q = H if Q is None else Q @ H
    if Q is None:
        return Tensor._make(np.broadcast_to(np.eye(m, n, dtype=A.dtype), A.shape).copy()) + A * 0
    return Q[..., :, :n]


def cond(A, p=None):
    """The condition number of each matrix in A in the norm p: s_max / s_min for None, 2 (s_min / s_max
    for -2), else matrix_norm(A, p) * matrix_norm(inv(A), p) (torch.linalg.cond)."""
    if not isinstance(A, Tensor) or A.ndim < 2:
        raise RuntimeError(f"linalg.cond: The input tensor A must have at least 2 dimensions "
                           f"(got {getattr(A, 'shape', type(A).__name__)})")
    if p in (None, 2, -2):
        S = svdvals(A)
        return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    if p not in ("fro", "nuc", 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def vander(x, *, N=None):
    """(*, n) -> (*, n, N) with the powers x^0, ..., x^(N-1) of each element (torch.linalg.vander)."""
    return _mf.linalg_vander(x, N=N)


from .ops.elementwise import where  # noqa: E402
