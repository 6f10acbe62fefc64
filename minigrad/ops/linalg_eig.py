"""linalg.eig and linalg.eigvals: the eigen-decomposition of a general square matrix, complex-valued
(as torch.linalg.eig, even for real input), with PyTorch's backward and JVP
(torch/csrc/autograd/FunctionsManual.cpp, linalg_eig_backward / linalg_eig_jvp).

The eigenvectors are normalised to norm 1 (LAPACK's geev, as PyTorch); their phase is arbitrary, so
only a loss that does not depend on it has a well-defined gradient (PyTorch's note). Repeated
eigenvalues make the gradient inf/nan, as PyTorch's.
"""
import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor


def _complex_of(dtype):
    return np.dtype(np.complex128) if dtype in (np.float64, np.complex128) else np.dtype(np.complex64)


class LinalgEig(Function):
    """(L, V) = eig(A), V's columns unit eigenvectors;
    dA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re(V^H gV))) / conj(E)) V^H,  E_ij = L_j - L_i
    (off the diagonal), the real part for a real A"""
    _complex = True
    batching = NoRule("an eigen-decomposition per matrix: vmap loops")
    onnx = NoRule("eigen-decompositions have no ONNX operator (and ONNX has no complex tensors)")

    @staticmethod
    def forward(ctx, A):
        dt = _complex_of(A.dtype)
        try:
            L, V = np.linalg.eig(A)
        except np.linalg.LinAlgError as e:
            raise RuntimeError(f"linalg.eig: {e} (input shape {A.shape})") from None
        L = np.ascontiguousarray(L, dtype=dt)
        # eigenvectors in columns, each matrix column-major (LAPACK's layout, as PyTorch's)
        V = np.swapaxes(np.ascontiguousarray(np.swapaxes(V, -1, -2), dtype=dt), -1, -2)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        from .complex import conj_physical, real, _to_complex
        L, V = ctx.saved_tensors
        n = L.shape[-1]
        eye = Tensor._make(np.eye(n, dtype=L.dtype))
        Vh = conj_physical(V.mT)
        VhgV = Vh @ gV
        d = _to_complex(real((VhgV * eye).sum(-1)))  # Re(diag(V^H gV))
        ret = VhgV - Vh @ (V * d.unsqueeze(-2))
        Lc = conj_physical(L)
        Econj = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye  # (1 on the diagonal: replaced by gL below)
        ret = ret / Econj * (1.0 - eye) + gL.unsqueeze(-1) * eye
        from .decomposition import LinalgSolveEx
        return LinalgSolveEx.apply(Vh, ret @ Vh, False)

    @staticmethod
    def jvp(ctx, tA):
        from .complex import conj_physical, real, _to_complex
        from .decomposition import LinalgSolveEx
        L, V = ctx.saved_tensors
        n = L.shape[-1]
        eye = Tensor._make(np.eye(n, dtype=L.dtype))
        dP = LinalgSolveEx.apply(V, _to_complex(tA) @ V, False)  # V^-1 dA V
        dL = (dP * eye).sum(-1)
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
        dX = dP / E * (1.0 - eye)
        Vh = conj_physical(V.mT)
        d = _to_complex(real(((Vh @ (V @ dX)) * eye).sum(-1)))  # Re(diag(V^H dV)) with dV = V dX
        dV = V @ (dX - d.unsqueeze(-1) * eye)
        return dL, dV


def eig(A):
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.eig: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim >= 2 else '?'} by {A.shape[-1] if A.ndim else '?'} "
                           f"matrices (shape {tuple(A.shape)})")
    if A.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.eig: Expected a floating point or complex tensor as input. Got {A.dtype}")
    return LinalgEig.apply(A)
