"""mg.fft: discrete Fourier transforms as torch.fft, differentiable (VJP and JVP), on NumPy's pocketfft.

Every transform is one of three ops on already-sized inputs (the ``n``/``s`` trimming and zero
padding are slicing and concatenation, differentiable by themselves):

- ``FftC2C`` complex to complex (fft, ifft, fft2, fftn, ...);
- ``FftR2C`` real to the one-sided half spectrum (rfft, rfftn, ihfft);
- ``FftC2R`` one-sided half spectrum to real (irfft, irfftn, hfft).

Their gradients follow PyTorch's convention for complex numbers (the gradient is the conjugate
Wirtinger derivative) and PyTorch's formulas: the adjoint of a transform with normalization
``norm`` is the opposite transform with the dual normalization ("backward" <-> "forward", "ortho"
stays); the gradient of R2C zero-pads the half spectrum, transforms back and keeps the real part;
the gradient of C2R is the R2C of the gradient with the bins that stand for two (all but the first
and, for an even length, the last) doubled. All three are linear, so the JVP is the op on the tangent.

``norm``: ``"backward"`` (the default: no scaling forward, 1/n on the inverse), ``"ortho"``
(1/sqrt(n) both ways), ``"forward"`` (1/n forward, none on the inverse).
"""
import numpy as np

from . import _dtype
from .autograd.function import Function, NoRule
from .tensor import Tensor

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_NO_ONNX = NoRule("ONNX has no complex tensor type (its DFT operator works on real pairs): not exported")
_BATCH = "reduce_axes"  # (x, dims, ...): vmap shifts the dims past the batch dim, as for a reduction


def _complex_of(dtype):
    return np.dtype(np.complex128) if dtype in (np.float64, np.complex128) else np.dtype(np.complex64)


def _real_of(dtype):
    return np.dtype(np.float64) if dtype in (np.float64, np.complex128) else np.dtype(np.float32)


class FftC2C(Function):
    """out = the DFT (forward) or inverse DFT over dims, scaled by norm;
    dx = the opposite transform of g with the dual norm (F^H g);  jvp: the op on t"""
    _complex = True
    batching = _BATCH
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x, dims, norm, forward):
        ctx.dims, ctx.norm, ctx.fwd = dims, norm, forward
        f = np.fft.fftn if forward else np.fft.ifftn
        return np.asarray(f(x, axes=dims, norm=norm), dtype=x.dtype)

    @staticmethod
    def backward(ctx, g):
        return FftC2C.apply(g, ctx.dims, _DUAL[ctx.norm], not ctx.fwd), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return FftC2C.apply(t, ctx.dims, ctx.norm, ctx.fwd)


class FftR2C(Function):
    """out = the one-sided DFT of a real x over dims (the last halved to n // 2 + 1), scaled by norm;
    dx = Re(F^H g zero-padded back to n);  jvp: the op on t"""
    _complex = True
    batching = _BATCH
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x, dims, norm):
        ctx.dims, ctx.norm, ctx.n = dims, norm, x.shape[dims[-1]]
        return np.asarray(np.fft.rfftn(x, axes=dims, norm=norm), dtype=_complex_of(x.dtype))

    @staticmethod
    def backward(ctx, g):
        from .ops.complex import real
        full = _resize(g, ctx.dims[-1], ctx.n)  # the bins the one-sided output dropped: zero
        return real(FftC2C.apply(full, ctx.dims, _DUAL[ctx.norm], False)), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return FftR2C.apply(t, ctx.dims, ctx.norm)


class FftC2R(Function):
    """out = the real inverse of a one-sided spectrum over dims (the last to length n), scaled by norm;
    dx = R2C of g with the dual norm, the bins standing for two (not the first, nor n/2 when n is
    even) doubled, as PyTorch's fft_c2r_backward;  jvp: the op on t"""
    _complex = True
    batching = _BATCH
    onnx = _NO_ONNX

    @staticmethod
    def forward(ctx, x, dims, norm, n):
        ctx.dims, ctx.norm, ctx.n = dims, norm, n
        s = [x.shape[d] for d in dims[:-1]] + [n]
        return np.asarray(np.fft.irfftn(x, s=s, axes=dims, norm=norm), dtype=_real_of(x.dtype))

    @staticmethod
    def backward(ctx, g):
        dims = ctx.dims
        gi = FftR2C.apply(g, dims, _DUAL[ctx.norm])
        m = gi.shape[dims[-1]]
        double = ctx.n - m  # the bins 1 .. n - m each stand for two bins of the full spectrum
        if double > 0:
            w = np.ones(m, dtype=_real_of(g.dtype))
            w[1:1 + double] = 2.0
            shape = [1] * gi.ndim
            shape[dims[-1]] = m
            gi = gi * Tensor._make(w.reshape(shape))
        return gi, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return FftC2R.apply(t, ctx.dims, ctx.norm, ctx.n)


# -- sizes, dims and dtypes as PyTorch -----------------------------------------------------------------
def _norm(norm, op):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"{op}: Invalid normalization mode: {norm!r} (expected 'backward', 'ortho' or 'forward')")
    return norm


def _check(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")


def _as_complex(x):
    """x as a complex tensor (real -> complex of its precision; integers -> the default complex)."""
    from .ops.elementwise import cast
    if x.dtype.kind == "c":
        return x
    if x.dtype.kind != "f":
        x = cast(x, _dtype.get_default_dtype())
    return cast(x, _complex_of(x.dtype))


def _as_real(x, op):
    from .ops.elementwise import cast
    if x.dtype.kind == "c":
        raise RuntimeError(f"{op} expects a real input tensor, but got {x.dtype}")
    if x.dtype.kind != "f":
        x = cast(x, _dtype.get_default_dtype())
    return x


def _resize(x, dim, n):
    """x trimmed or zero-padded to length n along dim (differentiable: a slice, or a cat with zeros)."""
    size = x.shape[dim]
    if n == size:
        return x
    if n < size:
        idx = [slice(None)] * x.ndim
        idx[dim] = slice(0, n)
        return x[tuple(idx)]
    from .ops.shape import cat
    shape = list(x.shape)
    shape[dim] = n - size
    return cat([x, Tensor._make(np.zeros(shape, dtype=x.dtype))], dim)


def _wrap(d, ndim, op):
    if not -ndim <= d < ndim:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {d})")
    return d % ndim


def _dims_sizes(x, s, dim, op, n_default=None):
    """(dims, sizes) as torch.fft's n-d transforms read s and dim: both None -> every dim (or the last
    n_default); s alone -> the last len(s) dims; -1 in s -> that dim's size."""
    nd = x.ndim
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap(d, nd, op) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{op}: dims must be unique, got {tuple(dim)}")
        if s is not None and len(s) != len(dims):
            raise RuntimeError(f"{op}: When given, dim and shape arguments must have the same length "
                               f"(got s {tuple(s)} and dim {tuple(dims)})")
    elif s is not None:
        if len(s) > nd:
            raise RuntimeError(f"{op}: Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
        dims = list(range(nd - len(s), nd))
    else:
        dims = list(range(nd)) if n_default is None else [_wrap(d, nd, op) for d in range(-n_default, 0)]
    if s is None:
        sizes = [x.shape[d] for d in dims]
    else:
        sizes = [x.shape[d] if int(v) == -1 else int(v) for d, v in zip(dims, s)]
    for v in sizes:
        if v < 1:
            raise RuntimeError(f"{op}: Invalid number of data points ({v}) specified")
    return tuple(dims), sizes


def _fftn(x, s, dim, norm, forward, op, n_default=None):
    _check(x, op)
    norm = _norm(norm, op)
    x = _as_complex(x)
    dims, sizes = _dims_sizes(x, s, dim, op, n_default)
    for d, v in zip(dims, sizes):
        x = _resize(x, d, v)
    if not dims:
        return x
    return FftC2C.apply(x, dims, norm, forward)


def _rfftn(x, s, dim, norm, op, n_default=None):
    _check(x, op)
    norm = _norm(norm, op)
    x = _as_real(x, op)
    dims, sizes = _dims_sizes(x, s, dim, op, n_default)
    for d, v in zip(dims, sizes):
        x = _resize(x, d, v)
    return FftR2C.apply(x, dims, norm)


def _irfftn(x, s, dim, norm, op, n_default=None):
    _check(x, op)
    norm = _norm(norm, op)
    x = _as_complex(x)
    dims, sizes = _dims_sizes(x, s, dim, op, n_default)
    last = sizes[-1] if s is not None and int(s[-1]) != -1 else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"{op}: Invalid number of data points ({last}) specified")
    sizes[-1] = last // 2 + 1
    for d, v in zip(dims, sizes):
        x = _resize(x, d, v)
    return FftC2R.apply(x, dims, norm, last)


def _one(n, dim):
    return (None if n is None else (n,)), dim


# -- the transforms ------------------------------------------------------------------------------------
def fft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The 1-D discrete Fourier transform along ``dim`` (torch.fft.fft): ``n`` trims or zero-pads the
    input first; a real input is taken as complex. Differentiable.

    Example:
        >>> mg.fft.fft(mg.tensor([1.0, 0.0, 0.0, 0.0]))
        tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _fftn(input, *_one(n, dim), norm, True, "fft")


def ifft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The 1-D inverse discrete Fourier transform along ``dim`` (torch.fft.ifft)."""
    return _fftn(input, *_one(n, dim), norm, False, "ifft")


def rfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The one-sided 1-D DFT of a real input (torch.fft.rfft): the n // 2 + 1 non-negative frequencies."""
    return _rfftn(input, *_one(n, dim), norm, "rfft")


def irfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The real inverse of a one-sided spectrum (torch.fft.irfft): output length ``n``, by default
    2 * (m - 1) for m input frequencies. The imaginary parts of the zero (and, for even n, the
    Nyquist) frequency are ignored, as PyTorch."""
    return _irfftn(input, *_one(n, dim), norm, "irfft")


def hfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The DFT of a Hermitian-symmetric signal given by its one-sided half (torch.fft.hfft): a real
    output of length ``n`` (default 2 * (m - 1)); irfft of the conjugate with the swapped norm."""
    from .ops.complex import conj_physical
    _check(input, "hfft")
    return _irfftn(conj_physical(_as_complex(input)), *_one(n, dim), _DUAL[_norm(norm, "hfft")], "hfft")


def ihfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The inverse of hfft (torch.fft.ihfft): the one-sided half of the inverse DFT of a real input."""
    from .ops.complex import conj_physical
    _check(input, "ihfft")
    return conj_physical(_rfftn(input, *_one(n, dim), _DUAL[_norm(norm, "ihfft")], "ihfft"))


def fft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """The 2-D DFT over ``dim`` (torch.fft.fft2); ``s`` sizes each transformed dim."""
    return _fftn(input, s, dim, norm, True, "fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """The 2-D inverse DFT over ``dim`` (torch.fft.ifft2)."""
    return _fftn(input, s, dim, norm, False, "ifft2")


def rfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """The 2-D DFT of a real input, one-sided in the last of ``dim`` (torch.fft.rfft2)."""
    return _rfftn(input, s, dim, norm, "rfft2")


def irfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """The real inverse of rfft2 (torch.fft.irfft2); the last dim's length is s[-1] or 2 * (m - 1)."""
    return _irfftn(input, s, dim, norm, "irfft2")


def fftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The N-d DFT (torch.fft.fftn): over ``dim``, the last len(s) dims, or every dim."""
    return _fftn(input, s, dim, norm, True, "fftn")


def ifftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The N-d inverse DFT (torch.fft.ifftn)."""
    return _fftn(input, s, dim, norm, False, "ifftn")


def rfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The N-d DFT of a real input, one-sided in the last transformed dim (torch.fft.rfftn)."""
    return _rfftn(input, s, dim, norm, "rfftn")


def irfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The real inverse of rfftn (torch.fft.irfftn)."""
    return _irfftn(input, s, dim, norm, "irfftn")


# -- frequencies and shifts ------------------------------------------------------------------------------
def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point DFT with spacing d (torch.fft.fftfreq):
    [0, 1, ..., n//2 - 1 (or (n-1)//2), -n//2, ..., -1] / (d n), in the default float dtype.

    Example:
        >>> mg.fft.fftfreq(4)
        tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    return _freqs(np.fft.fftfreq(n, d), dtype, device, requires_grad, "fftfreq")


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of rfft's output (torch.fft.rfftfreq): [0, ..., n//2] / (d n)."""
    return _freqs(np.fft.rfftfreq(n, d), dtype, device, requires_grad, "rfftfreq")


def _freqs(values, dtype, device, requires_grad, op):
    from .device import check_device
    check_device(device, f"fft.{op}")
    dt = np.dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    return Tensor(values.astype(dt), requires_grad=requires_grad)


def fftshift(input, dim=None):  # noqa: A002
    """The zero frequency moved to the centre along ``dim`` (all dims by default), torch.fft.fftshift."""
    dims = list(range(input.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    from .ops.shape import roll
    return roll(input, [input.shape[d] // 2 for d in dims], dims) if dims else input


def ifftshift(input, dim=None):  # noqa: A002
    """The inverse of fftshift (torch.fft.ifftshift): they differ for odd lengths."""
    dims = list(range(input.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    from .ops.shape import roll
    return roll(input, [-(input.shape[d] // 2) for d in dims], dims) if dims else input
