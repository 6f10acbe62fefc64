"""Matrix functions and decompositions (the family behind mg.linalg): inv, det, slogdet, solve,
cholesky, qr, eigh, svd. Forward is LAPACK through NumPy; each backward is written in Tensor ops,
so it can be differentiated again, with PyTorch's formulas (torch/csrc/autograd/FunctionsManual.cpp)
and PyTorch's conventions where the derivative is undefined (repeated eigen/singular values give
inf/nan as PyTorch's do; det at a singular matrix uses the cofactor matrix, which is exact).

All ops take batches: the last two dimensions are the matrix.
"""
import numpy as np

from ..autograd.function import Function, NoRule, holomorphic
from ..tensor import Tensor

__all__ = []  # public names live in mg.linalg (and a few torch-level aliases there)


def _square(A, op):
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim >= 2 else '?'} by {A.shape[-1] if A.ndim else '?'} "
                           f"matrices (shape {tuple(A.shape)})")


def _float(A, op):
    if A.dtype.kind != "f":
        raise RuntimeError(f"linalg.{op}: Expected a floating point tensor as input. Got {A.dtype}")


def _lapack(fn, op, *arrays):
    try:
        return fn(*arrays)
    except np.linalg.LinAlgError as e:
        raise RuntimeError(f"linalg.{op}: {e} (input shapes "
                           f"{', '.join(str(a.shape) for a in arrays)})") from None


def _eye_like(A):
    return Tensor._make(np.eye(A.shape[-1], dtype=A.dtype))


def _diag_embed(v):
    """(..., n) -> (..., n, n) with v on the diagonal, in Tensor ops (differentiable)."""
    return v.unsqueeze(-1) * Tensor._make(np.eye(v.shape[-1], dtype=v.dtype))


def _diagonal(X):
    """(..., n, n) -> (..., n), in Tensor ops (differentiable)."""
    return (X * Tensor._make(np.eye(X.shape[-1], dtype=X.dtype))).sum(-1)


# the `onnx` rule of the ops here that have no ONNX mapping
_NO_ONNX = NoRule("matrix decompositions and solvers have no ONNX operator")


class LinalgInvEx(Function):
    """out = A^-1;  dA = -out^T g out^T"""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A):
        out = _lapack(np.linalg.inv, "inv", A)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        inv, = ctx.saved_tensors
        return -(inv.mT @ g @ inv.mT)

    @staticmethod
    def jvp(ctx, t):
        inv, = ctx.saved_tensors  # out' = -out tA out
        return -(inv @ t @ inv)


class LinalgDet(Function):
    """out = det(A);  dA = g * cofactor(A) = g * det(A) A^-T, via the SVD where A is singular"""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A):
        out = np.linalg.det(A)
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, g):
        A, det = ctx.saved_tensors
        g = g.unsqueeze(-1).unsqueeze(-1)
        if np.all(det._data != 0):
            return g * det.unsqueeze(-1).unsqueeze(-1) * inv(A).mT
        # the cofactor matrix from A = U S Vh: det(U) det(Vh) U diag(prod_{j != i} s_j) Vh (exact at rank n-1)
        U, S, Vh = svd(A, full_matrices=False)
        n = S.shape[-1]
        others = Tensor._make(1 - np.eye(n, dtype=A.dtype))            # 0 on the diagonal
        prods = (S.unsqueeze(-2) * others + (1 - others)).prod(-1)     # prod over j != i
        sign = Tensor._make(np.asarray(np.linalg.det(U._data) * np.linalg.det(Vh._data)))  # an array even unbatched
        cof = sign.unsqueeze(-1).unsqueeze(-1) * (U * prods.unsqueeze(-2)) @ Vh
        return g * cof

    @staticmethod
    def jvp(ctx, t):
        # det' = <cofactor(A), tA> (= det tr(A^-1 tA) where A is invertible); the backward at g = 1 is the cofactor
        A, det = ctx.saved_tensors
        cof = LinalgDet.backward(ctx, Tensor._make(np.ones(det.shape, det.dtype)))
        return (cof * t).sum(-1).sum(-1)


class LinalgSlogdet(Function):
    """(sign, logabsdet) = slogdet(A);  dA = g_logabsdet * A^-T  (sign is not differentiable)"""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A):
        sign, logabs = np.linalg.slogdet(A)
        ctx.save_for_backward(A)
        ctx.mark_non_differentiable(sign)
        return sign, logabs

    @staticmethod
    def backward(ctx, g_sign, g_logabs):
        A, = ctx.saved_tensors
        return g_logabs.unsqueeze(-1).unsqueeze(-1) * inv(A).mT

    @staticmethod
    def jvp(ctx, t):
        A, = ctx.saved_tensors  # logabsdet' = tr(A^-1 tA); the sign is piecewise constant
        return None, (inv(A).mT * t).sum(-1).sum(-1)


class LinalgSolveEx(Function):
    """X = A^-1 B;  dB = A^-T g,  dA = -dB X^T   (B a vector when its ndim is A's minus one)"""
    batching = "solve"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A, B, vector):
        X = _lapack(np.linalg.solve, "solve", A, B[..., None] if vector else B)
        X = X[..., 0] if vector else X
        ctx.vector = vector
        ctx.save_for_backward(A, X)
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        gB = solve(A.mT, g)
        if ctx.vector:
            gA = -(gB.unsqueeze(-1) @ X.unsqueeze(-2))
        else:
            gA = -(gB @ X.mT)
        return gA, gB, None

    @staticmethod
    def jvp(ctx, tA, tB, _vector):
        # X' = A^-1 (tB - tA X)
        A, X = ctx.saved_tensors
        rhs = None if tA is None else -((tA @ X.unsqueeze(-1)).squeeze(-1) if ctx.vector else tA @ X)
        if tB is not None:
            rhs = tB if rhs is None else rhs + tB
        return solve(A, rhs)


class LinalgCholeskyEx(Function):
    """L = cholesky(A) (lower);  dA = sym(L^-T Phi(L^T g) L^-1), Phi = lower triangle, diagonal halved"""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A, upper):
        L = _lapack(np.linalg.cholesky, "cholesky", A)
        ctx.upper = upper
        if upper:
            L = np.swapaxes(L, -1, -2).copy()
        ctx.save_for_backward(L)
        return L

    @staticmethod
    def backward(ctx, g):
        L, = ctx.saved_tensors
        if ctx.upper:
            L, g = L.mT, g.mT
        P = (L.mT @ g).tril()
        P = 0.5 * (P + P.tril(-1).mT)                 # = 0.5 (P + P^T - diag P): symmetric
        Linv = inv(L)
        return Linv.mT @ P @ Linv, None

    @staticmethod
    def jvp(ctx, t, _upper):
        # L' = L Phi(L^-1 sym(tA) L^-T), Phi = lower triangle with the diagonal halved; tA symmetrised, as
        # the backward's gradient is (the forward reads one triangle of a symmetric A)
        L, = ctx.saved_tensors
        if ctx.upper:
            L = L.mT
        Linv = inv(L)
        X = Linv @ (0.5 * (t + t.mT)) @ Linv.mT
        dL = L @ (X.tril(-1) + 0.5 * _diag_embed(_diagonal(X)))
        return dL.mT if ctx.upper else dL


def _copyltu(M):
    """Lower triangle of M copied onto the upper: tril(M) + tril(M, -1)^T."""
    return M.tril() + M.tril(-1).mT


class LinalgQr(Function):
    """(Q, R) = qr(A) ('reduced'/'complete' with m >= n, or 'r');  for m >= n:
    M = R gR^T - gQ^T Q,  dA = (gQ + Q copyltu(M)) R^-T   (the standard formula, as JAX/PyTorch)."""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A, mode):
        Q, R = _lapack(lambda a: np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced"), "qr", A)
        ctx.mode = mode
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "r":
            raise RuntimeError("linalg.qr: The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                               "differentiate through linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("linalg.qr: The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if m >= n:
            M = R @ gR.mT - gQ.mT @ Q
            return (gQ + Q @ _copyltu(M)) @ inv(R).mT, None
        # m < n: A = [X | Y] with X square, X = Q R_x, R_y = Q^T Y; Y's gradient reaches Q through R_y
        Rx, Ry = R[..., :, :m], R[..., :, m:]
        gRx, gRy = gR[..., :, :m], gR[..., :, m:]
        gQ = gQ + Q @ Ry @ gRy.mT                       # Y gRy^T, with Y = Q R_y
        M = Rx @ gRx.mT - gQ.mT @ Q
        gX = (gQ + Q @ _copyltu(M)) @ inv(Rx).mT
        return _cat_last(gX, Q @ gRy), None

    @staticmethod
    def jvp(ctx, t, _mode):
        # m >= n: with C = Q^T tA R^-1 (Q^T Q' skew, R' R^-1 upper):  R' R^-1 = triu(C + C^T), diagonal
        # halved;  Q' = tA R^-1 - Q R' R^-1.  m < n: A = [X | Y], X = Q R_x as above, R_y = Q^T Y
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "r" or (ctx.mode == "complete" and m > n):
            raise RuntimeError(f"linalg.qr: forward-mode derivative not defined for mode={ctx.mode!r} with "
                               f"{m} x {n} matrices (use mode='reduced'), as for the backward")

        def square(tX, Rx):
            dX = tX @ inv(Rx)
            C = Q.mT @ dX
            S = (C + C.mT).triu()
            dRRinv = S - 0.5 * _diag_embed(_diagonal(S))
            return dX - Q @ dRRinv, dRRinv @ Rx
        if m >= n:
            return square(t, R)
        Rx, Ry = R[..., :, :m], R[..., :, m:]
        dQ, dRx = square(t[..., :, :m], Rx)
        dRy = dQ.mT @ (Q @ Ry) + Q.mT @ t[..., :, m:]
        return dQ, _cat_last(dRx, dRy)


def _cat_last(a, b):
    from .shape import cat
    return cat([a, b], -1)


class LinalgEigh(Function):
    """(L, V) = eigh(A) (A symmetric, lower triangle read);  with E_ij = L_j - L_i:
    dA = V (diag(gL) + skew(V^T gV)/2 / E) V^T   (inf/nan at repeated eigenvalues, as PyTorch)"""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A, uplo):
        L, V = _lapack(lambda a: np.linalg.eigh(a, UPLO=uplo), "eigh", A)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        VhgV = V.mT @ gV
        VhgV = 0.5 * (VhgV - VhgV.mT)
        eye = _eye_like(V)
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = VhgV / (E + eye) * (1 - eye) + _diag_embed(gL)
        return V @ inner @ V.mT, None

    @staticmethod
    def jvp(ctx, t, _uplo):
        # with P = V^T sym(tA) V and E_ij = L_j - L_i:  L' = diag(P),  V' = V (P / E off the diagonal)
        # (tA symmetrised, as the backward's gradient is; inf/nan at repeated eigenvalues, as PyTorch)
        L, V = ctx.saved_tensors
        P = V.mT @ (0.5 * (t + t.mT)) @ V
        eye = _eye_like(V)
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _diagonal(P), V @ (P / (E + eye) * (1 - eye))


class LinalgSvd(Function):
    """(U, S, Vh) = svd(A, full_matrices=False);  PyTorch's svd_backward with E_ij = S_j^2 - S_i^2:
    inner = (skew(U^T gU) S_j + S_i skew(Vh gVh^T)) / E + diag(gS), plus the projections for m != n."""
    batching = "leading_batch"
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
        ctx.full = full_matrices
        ctx.save_for_backward(U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        if ctx.full and m != n and (np.any(gU._data) or np.any(gVh._data)):
            raise RuntimeError("linalg.svd: The derivative of linalg.svd is not defined when "
                               "full_matrices=True and the singular vectors are used. Use "
                               "full_matrices=False.")
        if ctx.full:
            U, gU = U[..., :, :k], gU[..., :, :k]
            Vh, gVh = Vh[..., :k, :], gVh[..., :k, :]
        V, gV = Vh.mT, gVh.mT
        skew = lambda X: X - X.mT  # noqa: E731
        UhgU = skew(U.mT @ gU)
        VhgV = skew(Vh @ gV)
        S2 = S * S
        eye = Tensor._make(np.eye(k, dtype=S.dtype))
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E * (1 - eye) + _diag_embed(gS)
        if m > k:
            gUSinv = gU / S.unsqueeze(-2)
            gA = U @ inner + gUSinv - U @ (U.mT @ gUSinv)
            gA = gA @ Vh
        elif n > k:
            SinvgVh = gVh / S.unsqueeze(-1)
            gA = inner @ Vh + SinvgVh - (SinvgVh @ V) @ Vh
            gA = U @ gA
        else:
            gA = U @ inner @ Vh
        return gA, None

    @staticmethod
    def jvp(ctx, t, _full):
        # PyTorch's linalg_svd_jvp: P = U^T tA V, S' = diag(P), D = P off the diagonal, E_ij = S_j^2 - S_i^2:
        # U' = U (D S + S D^T) / E, V' = V (S D + D^T S) / E, plus (I - U U^T) tA V S^-1 for m > k
        # (resp. (I - V V^T) tA^T U S^-1 for n > k)
        U, S, Vh = ctx.saved_tensors
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        if ctx.full and m != n:
            raise RuntimeError("linalg.svd: the forward-mode derivative of linalg.svd is not defined when "
                               "full_matrices=True and A is not square; use full_matrices=False")
        V = Vh.mT
        P = U.mT @ t @ V
        dS = _diagonal(P)
        eye = Tensor._make(np.eye(k, dtype=S.dtype))
        D = P * (1 - eye)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
        Sr, Sc = S.unsqueeze(-2), S.unsqueeze(-1)          # S_j along rows, S_i along columns
        with np.errstate(divide="ignore", invalid="ignore"):
            dU = U @ ((D * Sr + Sc * D.mT) / E)
            dV = V @ ((Sc * D + D.mT * Sr) / E)
            if m > k:
                tVSinv = t @ (V / Sr)
                dU = dU + tVSinv - U @ (U.mT @ tVSinv)
            elif n > k:
                tUSinv = t.mT @ (U / Sr)
                dV = dV + tUSinv - V @ (V.mT @ tUSinv)
        return dU, dS, dV.mT


# -- wrappers (the public forms are in minigrad/linalg.py) -----------------------------------------
def inv(A):
    _square(A, "inv")
    _float(A, "inv")
    return LinalgInvEx.apply(A)


def det(A):
    _square(A, "det")
    _float(A, "det")
    return LinalgDet.apply(A)


def slogdet(A):
    _square(A, "slogdet")
    _float(A, "slogdet")
    return LinalgSlogdet.apply(A)


def solve(A, B, *, left=True):
    _square(A, "solve")
    if A.dtype.kind != "c":  # (complex A and B: solve records them, see the end of this file)
        _float(A, "solve")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    n = A.shape[-1]
    if (B.shape[-1] if vector else B.shape[-2]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({tuple(A.shape[-2:])} and {tuple(B.shape[-1:] if vector else B.shape[-2:])})")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {A.dtype} and B of type {B.dtype} instead")
    return LinalgSolveEx.apply(A, B, vector)


def cholesky(A, *, upper=False):
    _square(A, "cholesky")
    _float(A, "cholesky")
    return LinalgCholeskyEx.apply(A, bool(upper))


def qr(A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"linalg.qr: qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.qr: The input tensor A must have at least 2 dimensions (shape {tuple(A.shape)})")
    _float(A, "qr")
    Q, R = LinalgQr.apply(A, mode)
    if mode == "r":
        return Tensor._make(np.zeros((0,), A.dtype)), R
    return Q, R


def eigh(A, UPLO="L"):
    _square(A, "eigh")
    _float(A, "eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return LinalgEigh.apply(A, UPLO)


def svd(A, full_matrices=True):
    if A.ndim < 2:
        raise RuntimeError(f"linalg.svd: The input tensor A must have at least 2 dimensions (shape {tuple(A.shape)})")
    _float(A, "svd")
    return LinalgSvd.apply(A, bool(full_matrices))


# -- complex tensors (ops/complex.py) ------------------------------------------------------------------
# solve is holomorphic in A and B: its backward (A^-T g, -gB X^T), run on conj(g) and conjugated, is
# PyTorch's A^-H g and -gB X^H (linalg.eig's backward solves with V^H through it)
holomorphic(LinalgSolveEx)
