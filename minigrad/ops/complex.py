"""Complex numbers: the parts of a complex tensor and the ops that build one.

PyTorch's autograd convention throughout: for a real loss L of z = x + iy the gradient is
dL/dx + i dL/dy (the conjugate Wirtinger derivative, times 2), so a step against it descends; a real
input's gradient is the real part of that. Forward mode: the tangent of f(z) is
(df/dz) t + (df/dz*) conj(t). Elementwise holomorphic ops (mul, exp, ...) are marked with
`autograd.function.holomorphic`; the ops here are not holomorphic and write both rules.

`conj` returns a new tensor (minigrad has no lazy conjugate bit): `is_conj` tells what PyTorch's
would (True on the result of `conj` of a complex tensor until `resolve_conj`), the values are the
same either way.
"""
import numpy as np

from .. import _dtype
from ..autograd.function import Function, NoRule
from ..tensor import Tensor

__all__ = ["real", "imag", "conj", "conj_physical", "resolve_conj", "is_conj", "angle", "view_as_real",
           "view_as_complex", "polar", "complex", "isreal", "is_complex", "sgn"]
__methods__ = ["conj", "conj_physical", "resolve_conj", "is_conj", "angle", "isreal", "is_complex", "sgn",
               "conj_physical_", "sgn_"]

_NO_ONNX = NoRule("ONNX has no complex tensor type: export the real and imaginary parts as separate tensors")
_NO_FUSION = NoRule("complex values: fused loops compute real results")


def _is_c(t):
    return t.dtype.kind == "c"


def _complex_of(dtype):
    return np.dtype(np.complex128) if dtype == np.float64 else np.dtype(np.complex64)


def _real_of(dtype):
    return np.dtype(np.float64) if dtype == np.complex128 else np.dtype(np.float32)


def _to_complex(t):
    """A real tensor as complex (imaginary part 0), differentiably."""
    from .elementwise import cast
    return t if _is_c(t) else cast(t, _complex_of(t.dtype))


class Real(Function):
    """out = Re z (a view);  dz = g (as complex: the gradient of Re is 1);  jvp: Re t"""
    _complex = True
    _is_view = True
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, z):
        return z.real

    @staticmethod
    def backward(ctx, g):
        return _to_complex(g)

    @staticmethod
    def jvp(ctx, t):
        return real(t)


class Imag(Function):
    """out = Im z (a view);  dz = i g;  jvp: Im t"""
    _complex = True
    _is_view = True
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, z):
        return z.imag

    @staticmethod
    def backward(ctx, g):
        return complex(g * 0.0, g)

    @staticmethod
    def jvp(ctx, t):
        return imag(t)


def real(input):  # noqa: A002
    """The real part of a complex tensor, a view of it (torch.real); a real tensor itself."""
    if not _is_c(input):
        return input
    return Real.apply(input)


def imag(input):  # noqa: A002
    """The imaginary part of a complex tensor, a view of it (torch.imag); a real tensor raises."""
    if not _is_c(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag.apply(input)


class ConjPhysical(Function):
    """out = conj(z);  dz = conj(g);  jvp: conj(t)"""
    _complex = True
    _fast = staticmethod(np.conjugate)
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, z):
        return np.conjugate(z)

    @staticmethod
    def backward(ctx, g):
        return conj_physical(g)

    @staticmethod
    def jvp(ctx, t):
        return conj_physical(t)


class Conj(ConjPhysical):
    """conj(z) as torch.conj (ConjBackward0); the result reports is_conj() until resolve_conj."""


def conj_physical(input):  # noqa: A002
    """The complex conjugate, computed now (torch.conj_physical); a real tensor itself."""
    if not _is_c(input):
        return input
    return ConjPhysical.apply(input)


def conj(input):  # noqa: A002
    """The complex conjugate (torch.conj); a real tensor itself. PyTorch's is a lazy view with the
    conjugate bit set: minigrad computes it, and `is_conj()` answers True as PyTorch's would."""
    if not _is_c(input):
        return input
    out = Conj.apply(input)
    out._conj_bit = True
    return out


def resolve_conj(input):  # noqa: A002
    """The tensor with its conjugate bit resolved (torch.resolve_conj): equal values, is_conj() False."""
    if not getattr(input, "_conj_bit", False):
        return input
    from .shape import clone
    return clone(input)


def is_conj(input):  # noqa: A002
    """Whether PyTorch's tensor would carry the lazy conjugate bit (the result of conj of a complex tensor)."""
    return bool(getattr(input, "_conj_bit", False))


def sgn(input):  # noqa: A002
    """z / |z| (0 at 0) for complex, sign(x) for real (torch.sgn)."""
    from .elementwise import sign, where
    if not _is_c(input):
        return sign(input)
    from .elementwise import abs as _abs
    r = _abs(input)
    zero = r == 0
    return where(zero, 0.0, input / _to_complex(where(zero, 1.0, r)))


class Angle(Function):
    """out = arg z (atan2(Im z, Re z); 0 or pi for real x);
    dz = g * i z / |z|^2 (0 at 0; 0 for a real input);  jvp: Im(conj(z) t) / |z|^2"""
    _complex = True
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        out = np.angle(z)
        if z.dtype.kind == "f":
            out = np.where(np.isnan(z), z, out).astype(z.dtype)  # nan stays nan, as PyTorch
        return out

    @staticmethod
    def backward(ctx, g):
        z, = ctx.saved_tensors
        if not _is_c(z):
            return g * 0.0
        return _to_complex(g * _inv_abs2(z)) * complex(-imag(z), real(z))

    @staticmethod
    def jvp(ctx, t):
        z, = ctx.saved_tensors
        if not _is_c(z):
            return t * 0.0
        return imag(conj_physical(z) * t) * _inv_abs2(z)


def _inv_abs2(z):
    """1 / |z|^2 as a real tensor, 0 where z == 0 (the gradients of angle there, as PyTorch's)."""
    from .elementwise import where
    r2 = real(z) * real(z) + imag(z) * imag(z)
    zero = r2 == 0
    return where(zero, 0.0, 1.0 / where(zero, 1.0, r2))


def angle(input):  # noqa: A002
    """The argument of each element in radians (torch.angle): atan2(imag, real); 0 or pi for reals."""
    if input.dtype.kind in "biu":
        from .elementwise import cast
        input = cast(input, _dtype.get_default_dtype())
    return Angle.apply(input)


def _batch_first(cls, level, args):
    """vmap rule of an op of one tensor that changes only its trailing dims (view_as_real/complex):
    the op on the physical tensor with the batch dim first."""
    from ..func.batching_rules import Fallback, _out
    from ..func.vmap import _front, _is_batched
    x, = args
    if not _is_batched(x, level):
        raise Fallback
    return _out(cls.apply(_front(x)), level)


class ViewAsReal(Function):
    """out[..., 0] = Re z, out[..., 1] = Im z (float (..., 2), a view);  dz = g[..., 0] + i g[..., 1]"""
    _complex = True
    _is_view = True
    batching = staticmethod(_batch_first)
    fusion = None
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, z):
        return z[..., None].view(_real_of(z.dtype))  # a view: z's strides, the parts last

    @staticmethod
    def backward(ctx, g):
        return view_as_complex(g)

    @staticmethod
    def jvp(ctx, t):
        return view_as_real(t)


class ViewAsComplex(Function):
    """out = x[..., 0] + i x[..., 1] (x float (..., 2), a view);  dx = view_as_real(g)"""
    _complex = True
    _is_view = True
    batching = staticmethod(_batch_first)
    fusion = None
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x):
        if x.strides[-1] != x.itemsize:  # the parts must be adjacent (PyTorch raises; minigrad copies)
            x = np.ascontiguousarray(x)
        return x.view(_complex_of(x.dtype))[..., 0]  # a view of x

    @staticmethod
    def backward(ctx, g):
        return view_as_real(g)

    @staticmethod
    def jvp(ctx, t):
        return view_as_complex(t)


def view_as_real(input):  # noqa: A002
    """A complex tensor's values as a real tensor with a trailing dimension of size 2 (real, imag),
    a view of it, as torch.view_as_real."""
    if not _is_c(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


def view_as_complex(input):  # noqa: A002
    """A float32/float64 tensor of shape (..., 2) read as complex, a view of it (torch.view_as_complex;
    where the two parts are not adjacent in memory PyTorch raises and minigrad copies)."""
    if input.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor "
                           f"of scalar type: {input.dtype}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError(f"Tensor must have a last dimension of size 2 (got shape {tuple(input.shape)})")
    return ViewAsComplex.apply(input)


class Complex(Function):
    """out = re + i im;  dre = Re g,  dim = Im g;  jvp: t_re + i t_im"""
    _complex = True
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, re, im):
        out = _empty_complex(re, im)
        out.real, out.imag = re, im
        return out

    @staticmethod
    def backward(ctx, g):
        nr, ni = ctx.needs_input_grad
        return (real(g) if nr else None), (imag(g) if ni else None)

    @staticmethod
    def jvp(ctx, tr, ti):
        re, im = ctx.fw_args
        if tr is None:
            tr = real(ti) * 0.0
        if ti is None:
            ti = tr * 0.0
        return complex(tr, ti)


def complex(real, imag):  # noqa: A001
    """real + i imag (torch.complex): both float32 or both float64, broadcast; complex64/complex128."""
    if not isinstance(real, Tensor) or not isinstance(imag, Tensor):
        raise TypeError("complex(): expected both real and imag to be Tensors")
    if real.dtype != imag.dtype or real.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"complex(): expected both inputs to be Half, Float or Double tensors of the same "
                           f"dtype, but got real {real.dtype} and imag {imag.dtype}")
    return Complex.apply(real, imag)


def _empty_complex(a, b):
    """An empty complex array of a and b's broadcast shape in the layout an elementwise op of them
    gets (NumPy's, as PyTorch's: a transposed input gives a transposed result)."""
    return np.empty_like(np.add(a, b), dtype=_complex_of(np.result_type(a, b)))


class Polar(Function):
    """out = abs * (cos(angle) + i sin(angle));
    dabs = Re(g conj(e^{i angle})),  dangle = Im(g conj(out));  jvp: e^{i angle} t_abs + i out t_angle"""
    _complex = True
    batching = "elementwise"
    fusion = _NO_FUSION
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, r, theta):
        ctx.save_for_backward(r, theta)
        out = _empty_complex(r, theta)
        out.real, out.imag = r * np.cos(theta), r * np.sin(theta)
        return out

    @staticmethod
    def backward(ctx, g):
        r, theta = ctx.saved_tensors
        nr, nt = ctx.needs_input_grad
        from .elementwise import cos, sin
        c, s = cos(theta), sin(theta)
        gr, gi = real(g), imag(g)
        dr = gr * c + gi * s if nr else None
        dt = (gi * c - gr * s) * r if nt else None
        return dr, dt

    @staticmethod
    def jvp(ctx, tr, tt):
        r, theta = ctx.saved_tensors
        from .elementwise import cos, sin
        c, s = cos(theta), sin(theta)
        re = im = None
        if tr is not None:
            re, im = tr * c, tr * s
        if tt is not None:
            a, b = -r * s * tt, r * c * tt
            re, im = (a, b) if re is None else (re + a, im + b)
        return complex(re, im)


def polar(abs, angle):  # noqa: A002
    """abs * (cos(angle) + i sin(angle)) (torch.polar): both float32 or both float64."""
    if abs.dtype != angle.dtype or abs.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"polar(): expected both inputs to be Float or Double tensors of the same dtype, "
                           f"but got abs {abs.dtype} and angle {angle.dtype}")
    return Polar.apply(abs, angle)


def isreal(input):  # noqa: A002
    """Elementwise: the imaginary part is 0 (every element of a real tensor), as torch.isreal."""
    from .elementwise import eq
    if not _is_c(input):
        return Tensor._make(np.ones(input.shape, dtype=bool))
    return eq(imag(input).detach(), 0)


def is_complex(input):  # noqa: A002
    """Whether the tensor's dtype is complex64 or complex128 (torch.is_complex)."""
    return input.dtype.kind == "c"


def _inplace(op, name):
    from .elementwise import _inplace_of
    return _inplace_of(op, name)


conj_physical_ = _inplace(conj_physical, "conj_physical_")
sgn_ = _inplace(sgn, "sgn_")
