"""The rest of torch.linalg that scripts reach for: pinv, matrix_exp and the LU family are
ops here (one Function each with PyTorch's backward and JVP); lstsq, matrix_rank, matrix_power,
solve_triangular, the *_ex forms, multi_dot, householder_product, cond and vander are composites of
differentiable ops in minigrad/linalg.py. This family also exports the torch-level names PyTorch
has for them: pinverse, matrix_power, matrix_exp, lu, lu_solve, lu_unpack, triangular_solve, vander.

All ops take batches: the last two dimensions are the matrix.
"""
import math
import warnings
from collections import namedtuple

import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from .decomposition import _NO_ONNX, _float, _square, inv, solve

__all__ = ["pinverse", "matrix_power", "matrix_exp", "lu", "lu_solve", "lu_unpack", "triangular_solve", "vander",
           "chain_matmul"]
__methods__ = ["pinverse", "matrix_power", "matrix_exp", "lu", "lu_solve", "triangular_solve"]

LUUnpackResult = namedtuple("lu_unpack", ["P", "L", "U"])
TriangularSolveResult = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


_WARNED = set()


def _deprecated(name, msg):
    """PyTorch's warning for its older linalg spellings, once per process (TORCH_WARN_ONCE)."""
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(msg, UserWarning, stacklevel=3)


def _matrix(A, op):
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions (shape {tuple(A.shape)})")


# -- pinv ------------------------------------------------------------------------------------------
def _pinv_np(A, atol, rtol, hermitian):
    m, n = A.shape[-2:]
    if A.size == 0:
        return np.zeros(A.shape[:-2] + (n, m), A.dtype)
    if hermitian:
        w, V = np.linalg.eigh(A)
        s, U, Vh = np.abs(w), V, np.swapaxes(V, -1, -2) * np.sign(w)[..., :, None]
    else:
        U, s, Vh = np.linalg.svd(A, full_matrices=False)
    tol = np.maximum(atol, rtol * s.max(-1, keepdims=True))
    with np.errstate(divide="ignore"):
        sinv = np.where(s > tol, 1.0 / np.where(s > tol, s, 1), 0).astype(A.dtype)
    return (np.swapaxes(Vh, -1, -2) * sinv[..., None, :]) @ np.swapaxes(U, -1, -2)


class LinalgPinv(Function):
    """out = A^+ (the singular values above max(atol, rtol * s_max) inverted);  PyTorch's pinv_backward:
    for m <= n, K = g^T A^+:  dA = -(A^+ K)^T + K A^+^T - A A^+ K A^+^T + A^+^T A^+ (g^T - K A)"""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        out = _pinv_np(A, atol, rtol, hermitian)
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, g):
        A, P = ctx.saved_tensors
        m, n = A.shape[-2:]
        Ph, gh = P.mT, g.mT
        if m <= n:
            K = gh @ P
            KPh = K @ Ph
            gA = -(P @ K).mT + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
        else:
            K = P @ gh
            PhK = Ph @ K
            gA = -(K @ P).mT + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A
        return gA, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        A, P = ctx.saved_tensors  # PyTorch's pinv_jvp
        m, n = A.shape[-2:]
        th, Ph = t.mT, P.mT
        if m <= n:
            K = Ph @ th
            return P @ (K - K.mT - K @ (A @ P)) + (th - P @ (A @ th)) @ (Ph @ P)
        K = P @ t
        Kh = K.mT
        return (Kh - K - (P @ A) @ Kh) @ P + (P @ Ph) @ (th - (th @ A) @ P)


def _tolerances(A, atol, rtol, op):
    def num(v, name):
        if v is None:
            return None
        if isinstance(v, Tensor):
            if v.numel() != 1:
                raise NotImplementedError(f"{op}: a tensor {name} with more than one element is not supported; "
                                          f"pass a number")
            return float(v.item())
        return float(v)
    atol, rtol = num(atol, "atol"), num(rtol, "rtol")
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else float(np.finfo(A.dtype).eps) * max(A.shape[-2:])
    return 0.0 if atol is None else atol, rtol


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None):
    _matrix(A, "linalg.pinv")
    _float(A, "pinv")
    if rcond is not None:  # the older keyword (torch.pinverse's rcond): a relative tolerance
        rtol = rcond
    atol, rtol = _tolerances(A, atol, rtol, "linalg.pinv")
    return LinalgPinv.apply(A, atol, rtol, bool(hermitian))


def pinverse(input, rcond=1e-15):  # noqa: A002
    """The pseudoinverse of each matrix in input, singular values below rcond * the largest dropped
    (torch.pinverse; torch.linalg.pinv with rtol=rcond)."""
    return pinv(input, rtol=rcond)


# -- matrix_exp ------------------------------------------------------------------------------------
_PADE = {3: [120, 60, 12, 1], 5: [30240, 15120, 3360, 420, 30, 1],
         7: [17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1],
         9: [17643225600, 8821612800, 2075673600, 302702400, 30270240, 2162160, 110880, 3960, 90, 1],
         13: [64764752532480000, 32382376266240000, 7771770303897600, 1187353796428800, 129060195264000,
              10559470521600, 670442572800, 33522128640, 1323241920, 40840800, 960960, 16380, 182, 1]}
_THETA = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1, 9: 2.097847961257068,
          13: 5.371920351148152}


def _expm_one(A):
    """exp(A) of one float64 matrix: Higham's scaling and squaring with a Pade approximant (2005)."""
    n = A.shape[0]
    eye = np.eye(n)
    norm = np.abs(A).sum(0).max() if n else 0.0
    for m in (3, 5, 7, 9):
        if norm <= _THETA[m]:
            b, s = _PADE[m], 0
            break
    else:
        m, b = 13, _PADE[13]
        s = max(0, int(math.ceil(math.log2(norm / _THETA[13])))) if norm > 0 else 0
    X = A / 2.0 ** s
    X2 = X @ X
    if m == 13:
        X4 = X2 @ X2
        X6 = X4 @ X2
        U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
        V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    else:
        powers = [eye, X2]
        for _ in range(2, m // 2 + 1):
            powers.append(powers[-1] @ X2)
        U = X @ sum(b[2 * j + 1] * powers[j] for j in range(m // 2 + 1))
        V = sum(b[2 * j] * powers[j] for j in range(m // 2 + 1))
    R = np.linalg.solve(V - U, V + U)
    for _ in range(s):
        R = R @ R
    return R


def _expm_np(A):
    flat = A.reshape((-1,) + A.shape[-2:]).astype(np.float64)
    out = np.empty_like(flat)
    for i in range(flat.shape[0]):
        out[i] = _expm_one(flat[i])
    return np.ascontiguousarray(out.reshape(A.shape), dtype=A.dtype)


def _block_exp(A, E):
    """The top-right block of exp([[A, E], [0, A]]): the derivative of exp at A in the direction E."""
    from .shape import cat
    n = A.shape[-1]
    top = cat([A, E], -1)
    bottom = cat([A * 0, A], -1)
    return LinalgMatrixExp.apply(cat([top, bottom], -2))[..., :n, n:]


class LinalgMatrixExp(Function):
    """out = exp(A) (scaling and squaring with Pade approximants);  dA = the top-right block of
    exp([[A^T, g], [0, A^T]]) (the exact Frechet derivative's adjoint, as PyTorch's
    backward_analytic_function_of_a_matrix)"""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return _expm_np(A)

    @staticmethod
    def backward(ctx, g):
        A, = ctx.saved_tensors
        return _block_exp(A.mT, g)

    @staticmethod
    def jvp(ctx, t):
        A, = ctx.saved_tensors
        return _block_exp(A, t)


def matrix_exp(A):
    """The matrix exponential of each square matrix in A (torch.linalg.matrix_exp)."""
    _matrix(A, "linalg.matrix_exp")
    _square(A, "matrix_exp")
    _float(A, "matrix_exp")
    return LinalgMatrixExp.apply(A)


def matrix_power(A, n):
    """A multiplied by itself n times (torch.linalg.matrix_power): the identity for n = 0 and powers
    of inv(A) for n < 0; by repeated squaring, as PyTorch."""
    _matrix(A, "linalg.matrix_power")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices (shape {tuple(A.shape)})")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    n = int(n)
    if n == 0:  # the identity, with the graph kept (PyTorch's result requires grad too: a zero gradient)
        from .elementwise import where
        eye = Tensor._make(np.eye(A.shape[-1], dtype=A.dtype))
        return where(Tensor._make(np.zeros((), bool)), A, eye).contiguous()
    if n < 0:
        _float(A, "matrix_power")
        A, n = inv(A), -n
    if n == 1:
        return A.clone()
    # as PyTorch's linalg_matrix_power: z = A^(2^k) squares, result the product of those in n's bits
    z = result = None
    while n > 0:
        z = A if z is None else z @ z
        if n & 1:
            result = z if result is None else result @ z
        n >>= 1
    return result


# -- LU --------------------------------------------------------------------------------------------
def _lu_np(A):
    """Partial-pivoting LU of each matrix (LAPACK getrf's algorithm): (LU packed, pivots 1-based
    int32, info int32: the first zero pivot, 1-based, 0 when none)."""
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    LU = np.array(A, dtype=A.dtype).reshape((int(np.prod(batch, dtype=np.int64)), m, n))
    B = LU.shape[0]
    rows = np.arange(B)
    piv = np.zeros((B, k), np.int32)
    info = np.zeros(B, np.int32)
    for j in range(k):
        p = j + np.argmax(np.abs(LU[:, j:, j]), axis=-1) if m > j else np.full(B, j)
        piv[:, j] = p + 1
        tmp = LU[rows, j].copy()
        LU[rows, j] = LU[rows, p]
        LU[rows, p] = tmp
        pivot = LU[:, j, j]
        zero = pivot == 0
        info = np.where(zero & (info == 0), j + 1, info).astype(np.int32)
        LU[:, j + 1:, j] /= np.where(zero, 1, pivot)[:, None]
        LU[:, j + 1:, j + 1:] -= LU[:, j + 1:, j:j + 1] * LU[:, j:j + 1, j + 1:]
    return LU.reshape(A.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _perm_np(piv, m):
    """The permutation matrix P (A = P L U) from LAPACK's pivots, batched."""
    batch = piv.shape[:-1]
    flat = piv.reshape((int(np.prod(batch, dtype=np.int64)), piv.shape[-1])) - 1
    perm = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for i in range(flat.shape[1]):
        a, b = perm[rows, i].copy(), perm[rows, flat[:, i]].copy()
        perm[rows, i], perm[rows, flat[:, i]] = b, a
    P = np.zeros((flat.shape[0], m, m))
    P[rows[:, None], perm, np.arange(m)[None, :]] = 1  # P^T A = A[perm]: P[perm[i], i] = 1
    return P.reshape(batch + (m, m))


class LuPivotsToPermutation(Function):
    """P (*, m, m) with A = P L U from LAPACK's 1-based pivots (*, k) (lu_unpack's P); not differentiable"""
    batching = "leading_batch"
    jvp = NoRule("an integer input and a constant permutation: no tangent")
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, piv, m, dtype):
        out = _perm_np(piv, m).astype(dtype)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("lu_unpack: the permutation is not differentiable")


def _unpack(LU, k):
    """(L unit lower m x k, U upper k x n) from the packed LU, in Tensor ops (differentiable)."""
    m, n = LU.shape[-2:]
    L = LU[..., :, :k].tril(-1) + Tensor._make(np.eye(m, k, dtype=LU.dtype))
    U = LU[..., :k, :].triu()
    return L, U


def _tri_solve(A, B, upper, left=True, unit=False):
    """A^-1 B (or B A^-1) with A triangular, in Tensor ops (the triangle of A that is read only)."""
    T = A.triu() if upper else A.tril()
    if unit:
        T = (A.triu(1) if upper else A.tril(-1)) + Tensor._make(np.eye(A.shape[-1], dtype=A.dtype))
    return solve(T, B, left=left)


def _lu_square_grad(L, U, gL, gU):
    """P^T dA of A = P L U (square): L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T."""
    R = (L.mT @ gL).tril(-1) + (gU @ U.mT).triu()
    R = _tri_solve(L.mT, R, upper=True, unit=True)
    return _tri_solve(U.mT, R, upper=False, left=False)


def _lu_square_tangent(L, U, tB):
    """(dL, dU) of B = L U (square) in the direction tB: X = L^-1 tB U^-1, dL = L tril(X, -1), dU = triu(X) U."""
    X = _tri_solve(L, tB, upper=False, unit=True)
    X = _tri_solve(U, X, upper=True, left=False)
    return L @ X.tril(-1), X.triu() @ U


class LinalgLuFactorEx(Function):
    """(LU, pivots, info) = getrf(A) (partial pivoting; A = P L U);  with gL = tril(gLU, -1), gU = triu(gLU):
    square: dA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T; a wide or tall A carries the extra block of
    U or L through the square formula (PyTorch's linalg_lu_backward)"""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A):
        LU, piv, info = _lu_np(A)
        P = _perm_np(piv, A.shape[-2]).astype(A.dtype)
        ctx.save_for_backward(LU)
        ctx.P = P
        ctx.mark_non_differentiable(piv, info)
        return LU, piv, info

    @staticmethod
    def backward(ctx, gLU, _gpiv, _ginfo):
        LU, = ctx.saved_tensors
        P = Tensor._make(ctx.P)
        m, n = LU.shape[-2:]
        k = min(m, n)
        L, U = _unpack(LU, k)
        gL, gU = gLU[..., :, :k].tril(-1), gLU[..., :k, :].triu()
        if m == n:
            gB = _lu_square_grad(L, U, gL, gU)
        elif m < n:
            from .shape import cat
            U1, U2, gU1, gU2 = U[..., :, :k], U[..., :, k:], gU[..., :, :k], gU[..., :, k:]
            gB2 = _tri_solve(L.mT, gU2, upper=True, unit=True)
            gB = cat([_lu_square_grad(L, U1, gL - gB2 @ U2.mT, gU1), gB2], -1)
        else:
            from .shape import cat
            L1, L2, gL1, gL2 = L[..., :k, :], L[..., k:, :], gL[..., :k, :], gL[..., k:, :]
            gB2 = _tri_solve(U.mT, gL2, upper=False, left=False)
            gB = cat([_lu_square_grad(L1, U, gL1, gU - L2.mT @ gB2), gB2], -2)
        return P @ gB

    @staticmethod
    def jvp(ctx, t):
        LU, = ctx.saved_tensors
        P = Tensor._make(ctx.P)
        m, n = LU.shape[-2:]
        k = min(m, n)
        L, U = _unpack(LU, k)
        tB = P.mT @ t
        from .shape import cat
        if m == n:
            dL, dU = _lu_square_tangent(L, U, tB)
        elif m < n:
            U2 = U[..., :, k:]
            dL, dU1 = _lu_square_tangent(L, U[..., :, :k], tB[..., :, :k])
            dU2 = _tri_solve(L, tB[..., :, k:] - dL @ U2, upper=False, unit=True)
            dU = cat([dU1, dU2], -1)
        else:
            L2 = L[..., k:, :]
            dL1, dU = _lu_square_tangent(L[..., :k, :], U, tB[..., :k, :])
            dL2 = _tri_solve(U, tB[..., k:, :] - L2 @ dU, upper=True, left=False)
            dL = cat([dL1, dL2], -2)
        dLU = dL.tril(-1)
        dLU = (dLU if dLU.shape == LU.shape else _pad_to(dLU, LU.shape)) + \
              (dU if dU.shape == LU.shape else _pad_to(dU.triu(), LU.shape))
        return dLU, None, None


def _pad_to(X, shape):
    """X (m x k or k x n) zero-padded on the right/bottom to the packed LU's shape."""
    from .shape import cat
    m, n = shape[-2:]
    if X.shape[-1] < n:
        X = cat([X, X.new_zeros(*X.shape[:-1], n - X.shape[-1])], -1)
    if X.shape[-2] < m:
        X = cat([X, X.new_zeros(*X.shape[:-2], m - X.shape[-2], X.shape[-1])], -2)
    return X


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    _matrix(A, "linalg.lu_factor_ex")
    _float(A, "lu_factor_ex")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = LinalgLuFactorEx.apply(A)
    if check_errors and np.any(info._data):
        i = int(info._data.reshape(-1)[np.flatnonzero(info._data.reshape(-1))[0]])
        raise RuntimeError(f"linalg.lu_factor_ex: The factorization could not be completed because the input is "
                           f"not full rank: U[{i},{i}] is zero (1-based)")
    return LU, piv, info


def lu_factor(A, *, pivot=True):
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    if np.any(info._data):
        i = int(info._data.reshape(-1)[np.flatnonzero(info._data.reshape(-1))[0]])
        raise RuntimeError(f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it on lu_solve would result in "
                           f"a division by zero. If you still want to perform the factorization, consider calling "
                           f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return LU, piv


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) with A = P L U from lu_factor's packed LU and pivots (torch.lu_unpack); L and U are
    empty when unpack_data is False, P when unpack_pivots is False."""
    _matrix(LU_data, "lu_unpack")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    piv = LU_pivots if isinstance(LU_pivots, Tensor) else Tensor(np.asarray(LU_pivots))
    if tuple(piv.shape[-1:]) != (k,) or piv.dtype.kind not in "iu":
        raise RuntimeError(f"lu_unpack: LU_pivots must be an integer tensor of shape (*, {k}) for LU_data of shape "
                           f"{tuple(LU_data.shape)}, got {piv.dtype} of shape {tuple(piv.shape)}")
    empty = Tensor._make(np.zeros((0,), LU_data.dtype))
    L, U = _unpack(LU_data, k) if unpack_data else (empty, empty)
    P = LuPivotsToPermutation.apply(piv, m, LU_data.dtype) if unpack_pivots else empty
    return LUUnpackResult(P, L, U)


def linalg_lu(A, *, pivot=True):
    LU, piv, _ = lu_factor_ex(A, pivot=pivot)
    return lu_unpack(LU, piv)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    _matrix(LU, "linalg.lu_solve")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"linalg.lu_solve: A must be batches of square matrices, but they are {LU.shape[-2]} by "
                           f"{LU.shape[-1]} matrices")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({tuple(LU.shape[-2:])} and {tuple(B.shape[-2:])})")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return linalg_lu_solve(LU, pivots, B.mT, left=True, adjoint=not adjoint).mT.contiguous()
    P, L, U = lu_unpack(LU, pivots)
    if adjoint:  # A^T X = B with A^T = U^T L^T P^T:  X = P L^-T U^-T B
        Y = _tri_solve(U.mT, B, upper=False)
        return P @ _tri_solve(L.mT, Y, upper=True, unit=True)
    Y = _tri_solve(L, P.mT @ B, upper=False, unit=True)
    return _tri_solve(U, Y, upper=True)


def lu(A, pivot=True, get_infos=False):  # noqa: A002
    """(A_LU, pivots) or (A_LU, pivots, infos): torch.lu, the older form of torch.linalg.lu_factor_ex
    (no error for a singular matrix)."""
    _deprecated("lu", "mg.lu is deprecated in favor of mg.linalg.lu_factor / mg.linalg.lu_factor_ex (as in "
                      "PyTorch): LU, pivots = mg.linalg.lu_factor(A) (or LU, pivots, info = "
                      "mg.linalg.lu_factor_ex(A) for get_infos=True)")
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_solve(b, LU_data, LU_pivots):
    """x with A x = b from A's lu_factor (torch.lu_solve, the older argument order of
    torch.linalg.lu_solve(LU, pivots, B))."""
    _deprecated("lu_solve", "mg.lu_solve is deprecated in favor of mg.linalg.lu_solve (as in PyTorch), whose "
                            "arguments come in another order: X = mg.lu_solve(B, LU, pivots) should be replaced "
                            "with X = mg.linalg.lu_solve(LU, pivots, B)")
    return linalg_lu_solve(LU_data, LU_pivots, b)


def _partial_cholesky(M):
    """LAPACK potf2's (lower) result on one matrix: (L, info). It stops at the first column j whose
    pivot M[j, j] - |L[j, :j]|^2 is not positive, leaving that value on the diagonal and M's lower
    triangle in the columns after it (what PyTorch returns for a matrix that is not positive-definite)."""
    L = np.tril(M).astype(M.dtype)
    n = M.shape[-1]
    for j in range(n):
        d = M[j, j] - L[j, :j] @ L[j, :j]
        if not d > 0:
            L[j, j] = d
            return L, j + 1
        L[j, j] = np.sqrt(d)
        L[j + 1:, j] = (M[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return L, 0


class CholeskyPartial(Function):
    """(L, info) of cholesky_ex: LAPACK potf2's factor, partial where a matrix is not positive-definite,
    and the order of its first failing leading minor (0: none); not differentiable (cholesky_ex takes
    its gradient from linalg.cholesky where the factorisation succeeds)"""
    batching = "leading_batch"
    jvp = NoRule("not differentiable: cholesky_ex differentiates through linalg.cholesky")
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A):
        flat = A.reshape((int(np.prod(A.shape[:-2], dtype=np.int64)),) + A.shape[-2:])
        L = np.zeros_like(flat)
        info = np.zeros(flat.shape[0], np.int32)
        for i, M in enumerate(flat):
            L[i], info[i] = _partial_cholesky(M)
        L, info = L.reshape(A.shape), info.reshape(A.shape[:-2])
        ctx.mark_non_differentiable(L, info)
        return L, info

    @staticmethod
    def backward(ctx, gL, ginfo):
        raise RuntimeError("linalg.cholesky_ex: the partial factor is not differentiable")


# -- triangular solves -----------------------------------------------------------------------------
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    _matrix(A, "linalg.solve_triangular")
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    _square(A, "solve_triangular")
    _float(A, "solve_triangular")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({tuple(A.shape[-2:])} and {tuple(B.shape[-2:])})")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype} and B of type {B.dtype} instead")
    return _tri_solve(A, B, upper=bool(upper), left=left, unit=bool(unitriangular))


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):  # noqa: A002
    """(solution, cloned_coefficient) of A X = b (A^T X = b when transpose) with A triangular: the
    older torch.triangular_solve (argument order b, A; use mg.linalg.solve_triangular)."""
    _deprecated("triangular_solve", "mg.triangular_solve is deprecated in favor of mg.linalg.solve_triangular (as "
                                    "in PyTorch), whose arguments come in another order: X = mg.triangular_solve(B, "
                                    "A).solution should be replaced with X = mg.linalg.solve_triangular(A, B, "
                                    "upper=True)")
    _matrix(A, "triangular_solve")
    if not isinstance(b, Tensor) or b.ndim < 2:
        raise RuntimeError("triangular_solve: The input tensor b must have at least 2 dimensions.")
    M = A.mT if transpose else A
    X = solve_triangular(M, b, upper=bool(upper) != bool(transpose), unitriangular=unitriangular)
    return TriangularSolveResult(X, A.clone())


# -- vander ----------------------------------------------------------------------------------------
def _powers(x, N):
    """(*, n) -> (*, n, N): x^0 ... x^(N-1) by a cumulative product, as PyTorch (exact gradients at 0)."""
    from .scan import cumprod
    from .shape import cat
    if x.dtype.kind == "b":
        x = x.long()
    ones = (x * 0 + 1).unsqueeze(-1)
    if N == 1:
        return ones
    rest = x.unsqueeze(-1).expand(*x.shape, N - 1)
    return cumprod(cat([ones, rest], -1), -1)


def linalg_vander(x, *, N=None):
    """(*, n) -> (*, n, N): the powers x^0, x^1, ..., x^(N-1) of each element (torch.linalg.vander;
    N defaults to n, and must be at least 2)."""
    if not isinstance(x, Tensor) or x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    N = x.shape[-1] if N is None else int(N)
    if N <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1 (got N={N}).")
    return _powers(x, N)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D tensor x: columns x^(N-1), ..., x^0 (x^0 first when
    increasing), as torch.vander."""
    if not isinstance(x, Tensor) or x.ndim != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor (got {getattr(x, 'ndim', type(x).__name__)}"
                           f" dims)")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("vander: N must be non-negative.")
    if N == 0:
        return Tensor._make(np.zeros((x.shape[0], 0), np.float64 if x.dtype.kind == "f" else np.int64)).to(
            x.dtype if x.dtype.kind != "b" else np.int64)
    V = _powers(x, N)
    return V if increasing else V.flip(-1)


def chain_matmul(*matrices):
    """The product of two or more 2-D tensors in the cheapest order; one is returned as is (the older
    torch.chain_matmul; mg.linalg.multi_dot takes a list and 1-D ends too)."""
    _deprecated("chain_matmul", "mg.chain_matmul is deprecated (as in PyTorch): use mg.linalg.multi_dot, which "
                                "accepts a list of two or more tensors rather than multiple arguments")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more tensors but got none")
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor) or m.ndim != 2:
            raise RuntimeError(f"chain_matmul(): Tensor {i} must be 2D, got "
                               f"{getattr(m, 'ndim', type(m).__name__)}D")
    if len(matrices) == 1:
        return matrices[0]
    from ..linalg import multi_dot
    return multi_dot(list(matrices))
