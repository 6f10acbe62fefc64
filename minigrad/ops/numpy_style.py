"""NumPy-style functions PyTorch has at its top level: atleast_1d/2d/3d, deg2rad/rad2deg,
diff, gradient, tile, inner, fmax/fmin, flipud/fliplr, rot90, ravel and nan_to_num.

Each is a composite of differentiable ops (reshape, repeat, flip, transpose, narrow, cat, where,
tensordot, arithmetic) chosen so that its gradient is PyTorch's exactly: the rules (VJP, JVP, vmap,
tracing, fusion, ONNX) are those of the ops it is made of, and the registry entries in
minigrad/testing/opinfo/shape.py and elementwise.py check them.
"""
import math

import numpy as np

from ..tensor import Tensor
from .elementwise import where, isnan, isinf, logical_xor
from .linalg import tensordot
from .shape import _dim, cat, flip, narrow, repeat, reshape, transpose, _at_least

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "deg2rad", "rad2deg", "diff", "gradient", "tile", "inner",
           "fmax", "fmin", "flipud", "fliplr", "rot90", "ravel", "nan_to_num"]
__methods__ = ["deg2rad", "rad2deg", "diff", "tile", "inner", "fmax", "fmin", "flipud", "fliplr", "rot90", "ravel",
               "nan_to_num", "deg2rad_", "rad2deg_", "nan_to_num_"]


def _tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


# -- atleast_1d/2d/3d -----------------------------------------------------------------------------
def _atleast(n, name, tensors):
    def one(t):
        t = _tensor(t, name)
        if t.ndim >= n:
            return t
        return t.reshape(1) if n == 1 else _at_least(t, n)
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return one(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return tuple(one(t) for t in tensors)


def atleast_1d(*tensors):
    """Each tensor with at least one dim (a 0-d tensor becomes shape (1,)); one tensor in gives one
    tensor out, several (or a list) give a tuple (torch.atleast_1d)."""
    return _atleast(1, "atleast_1d", tensors)


def atleast_2d(*tensors):
    """Each tensor with at least two dims: () -> (1, 1), (k,) -> (1, k) (torch.atleast_2d)."""
    return _atleast(2, "atleast_2d", tensors)


def atleast_3d(*tensors):
    """Each tensor with at least three dims: () -> (1, 1, 1), (k,) -> (1, k, 1), (a, b) -> (a, b, 1)
    (torch.atleast_3d)."""
    return _atleast(3, "atleast_3d", tensors)


# -- deg2rad / rad2deg ----------------------------------------------------------------------------
def _angle(input, factor, name):  # noqa: A002
    x = _tensor(input, name)
    if x.dtype.kind == "c":
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    return x * factor  # an integer or bool tensor times a float: the default float dtype


def deg2rad(input):  # noqa: A002
    """input * pi / 180 (torch.deg2rad); integer and bool inputs give the default float dtype."""
    return _angle(input, math.pi / 180.0, "deg2rad")


def rad2deg(input):  # noqa: A002
    """input * 180 / pi (torch.rad2deg); integer and bool inputs give the default float dtype."""
    return _angle(input, 180.0 / math.pi, "rad2deg")


# -- diff, gradient -------------------------------------------------------------------------------
def diff(input, n=1, dim=-1, prepend=None, append=None):  # noqa: A002
    """The n-th forward difference along dim, out[i] = x[i + 1] - x[i] applied n times, after
    concatenating prepend and append along dim (torch.diff); bool tensors give x[i + 1] != x[i]."""
    x = _tensor(input, "diff")
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if not isinstance(n, int) or n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _dim(dim, x.ndim, "diff")
    parts = []
    for p in (prepend, append):
        if p is not None:
            p = _tensor(p, "diff")
            if p.ndim != x.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        parts.append(p)
    if parts[0] is not None or parts[1] is not None:
        x = cat([t for t in (parts[0], x, parts[1]) if t is not None], d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi, lo = narrow(x, d, 1, m - 1), narrow(x, d, 0, m - 1)
        x = logical_xor(hi, lo) if x.dtype == np.bool_ else hi - lo
    return x


def _slice(x, d, start, stop=None):
    """x[start:stop] along dim d (Python slice semantics, negative ends allowed)."""
    idx = range(x.shape[d])[slice(start, stop)]
    return narrow(x, d, idx.start if len(idx) else 0, len(idx))


def _gradient_dim(f, d, h, edge_order):
    """One dim of torch.gradient: h a Python number (uniform spacing) or a 1-D Tensor of coordinates."""
    if isinstance(h, Tensor):
        dx = diff(h)
        shape = [1] * f.ndim
        shape[d] = -1
        dx1, dx2 = _slice(dx, 0, 0, -1), _slice(dx, 0, 1)
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        center = a * _slice(f, d, 0, -2) + b * _slice(f, d, 1, -1) + c * _slice(f, d, 2)
        d0, d1, dl, dl2 = dx[0], dx[1] if dx.shape[0] > 1 else None, dx[-1], dx[-2] if dx.shape[0] > 1 else None
        if edge_order == 1:
            first = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / d0
            last = (_slice(f, d, -1) - _slice(f, d, -2, -1)) / dl
        else:
            a = -(2.0 * d0 + d1) / (d0 * (d0 + d1))
            b = (d0 + d1) / (d0 * d1)
            c = (-d0) / (d1 * (d0 + d1))
            first = a * _slice(f, d, 0, 1) + b * _slice(f, d, 1, 2) + c * _slice(f, d, 2, 3)
            a = dl / (dl2 * (dl + dl2))
            b = -(dl + dl2) / (dl * dl2)
            c = (2 * dl + dl2) / (dl * (dl + dl2))
            last = a * _slice(f, d, -3, -2) + b * _slice(f, d, -2, -1) + c * _slice(f, d, -1)
    else:
        center = (_slice(f, d, 2) - _slice(f, d, 0, -2)) / h / 2
        if edge_order == 1:
            first = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / h
            last = (_slice(f, d, -1) - _slice(f, d, -2, -1)) / h
        else:
            first = (_slice(f, d, 0, 1) * -1.5 + _slice(f, d, 1, 2) * 2 - _slice(f, d, 2, 3) * 0.5) / h
            last = (_slice(f, d, -3, -2) * 0.5 + _slice(f, d, -2, -1) * -2 + _slice(f, d, -1) * 1.5) / h
    return cat([first, center, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):  # noqa: A002
    """The derivative estimate of input along each dim in dim (all when None) by second-order
    central differences inside and first- or second-order (edge_order) one-sided differences at
    the ends, as torch.gradient; returns a tuple with one tensor per dim.

    spacing: a number (the same step for every dim), a list of numbers (one step per dim), or a
    list of 1-D tensors (the coordinates of the samples along each dim)."""
    f = _tensor(input, "gradient")
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    if f.ndim == 0:
        raise RuntimeError("torch.gradient expected the input to have at least one dimension (got a 0-d tensor)")
    if dim is None:
        dims = list(range(f.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_dim(d, f.ndim, "gradient") for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"torch.gradient: dim {dims} appears multiple times in the list of dims")
    if isinstance(spacing, (int, float)) and not isinstance(spacing, bool):
        steps = [spacing] * len(dims)
    elif isinstance(spacing, Tensor) and spacing.ndim == 0:
        steps = [spacing.item()] * len(dims)
    else:
        steps = list(spacing)
        if len(steps) != len(dims) and dim is None:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {f.ndim}', since dim argument was not given, but got a list "
                               f"of length {len(steps)}")
        if len(steps) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(steps)} and a dim argument of length {len(dims)}.")
    for d, h in zip(dims, steps):
        if f.shape[d] < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1 "
                               f"(dim {d} of shape {tuple(f.shape)} has size {f.shape[d]}, edge_order={edge_order})")
        if isinstance(h, Tensor):
            if h.ndim != 1 or h.shape[0] != f.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and 1-D with the "
                                   f"size of its dim: got coordinates of shape {tuple(h.shape)} for dim {d} of size "
                                   f"{f.shape[d]}")
    if f.dtype.kind in "biu":
        f = f * 1.0  # integers give the default float dtype
    return tuple(_gradient_dim(f, d, h.item() if isinstance(h, Tensor) and h.ndim == 0 else h, edge_order)
                 for d, h in zip(dims, steps))


# -- tile, inner ----------------------------------------------------------------------------------
def tile(input, dims, *more):  # noqa: A002
    """input repeated dims[i] times along each dim; a shorter dims is padded with 1s in front and a
    shorter input with size-1 dims in front (torch.tile: repeat after that padding). The method
    takes the sizes as arguments too: x.tile(2, 3)."""
    x = _tensor(input, "tile")
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if more:
        dims = dims + tuple(more)
    if any(int(r) < 0 for r in dims):
        raise RuntimeError(f"tile: Trying to create tensor with negative dimension: dims {dims}")
    if len(dims) < x.ndim:
        dims = (1,) * (x.ndim - len(dims)) + dims
    return repeat(x, dims)


def inner(input, other):  # noqa: A002
    """Sum of products over the last dims of input and other, out shape input.shape[:-1] +
    other.shape[:-1]; a 0-d operand multiplies (torch.inner)."""
    a, b = _tensor(input, "inner"), _tensor(other, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(a.shape)} and {list(b.shape)}")
    return tensordot(a, b, ([-1], [-1]))


# -- fmax / fmin ----------------------------------------------------------------------------------
def _fminmax(input, other, name, take_input):  # noqa: A002
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    x = input if isinstance(input, Tensor) else Tensor(input)
    y = other if isinstance(other, Tensor) else Tensor(other)
    if x.dtype.kind == "c" or y.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    keep = take_input(x, y)
    if y.dtype.kind == "f":
        keep = keep | isnan(y)
    return where(keep, x, y)


def fmax(input, other):  # noqa: A002
    """The elementwise maximum where a NaN loses to a number (NaN only where both are NaN), as
    torch.fmax; the gradient goes to input where input >= other or other is NaN, else to other."""
    return _fminmax(input, other, "fmax", lambda x, y: x >= y)


def fmin(input, other):  # noqa: A002
    """The elementwise minimum where a NaN loses to a number (torch.fmin); the gradient goes to
    input where input <= other or other is NaN, else to other."""
    return _fminmax(input, other, "fmin", lambda x, y: x <= y)


# -- flips, rotations, ravel ----------------------------------------------------------------------
def flipud(input):  # noqa: A002
    """input reversed along dim 0 (torch.flipud); needs at least one dim."""
    x = _tensor(input, "flipud")
    if x.ndim < 1:
        raise RuntimeError("flipud: Input must be >= 1-d.")
    return flip(x, (0,))


def fliplr(input):  # noqa: A002
    """input reversed along dim 1 (torch.fliplr); needs at least two dims."""
    x = _tensor(input, "fliplr")
    if x.ndim < 2:
        raise RuntimeError("fliplr: Input must be >= 2-d.")
    return flip(x, (1,))


def rot90(input, k=1, dims=(0, 1)):  # noqa: A002
    """input rotated by 90 degrees k times in the plane dims, from dims[0] towards dims[1]
    (torch.rot90; negative k rotates the other way): a flip and a transpose."""
    x = _tensor(input, "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    n = x.ndim
    if n < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _dim(dims[0], n, "rot90"), _dim(dims[1], n, "rot90")  # IndexError first, as PyTorch
    if d0 == d1:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and "
                           f"dim1 = {dims[1]}")
    k = k % 4
    # PyTorch flips then transposes; transposing first and flipping the same values (dim d0 for
    # k = 1, d1 for k = 3) gives the same result as one C-order copy (contiguous for any layout in)
    if k == 1:
        return flip(transpose(x, d0, d1), (d0,))
    if k == 2:
        return flip(x, (d0, d1))
    if k == 3:
        return flip(transpose(x, d0, d1), (d1,))
    return x.clone()


def ravel(input):  # noqa: A002
    """input flattened to 1-D (a view when it is contiguous, else a copy), as torch.ravel."""
    return reshape(_tensor(input, "ravel"), (-1,))


# -- nan_to_num -----------------------------------------------------------------------------------
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):  # noqa: A002
    """input with NaN replaced by nan, +inf by posinf and -inf by neginf (defaults: the largest and
    the lowest finite value of input's dtype), as torch.nan_to_num; integer and bool tensors come
    back unchanged (a copy). The gradient is 1 where input is finite and 0 elsewhere."""
    x = _tensor(input, "nan_to_num")
    if x.dtype.kind in "biu":
        return x.clone()
    if x.dtype.kind == "c":
        raise RuntimeError("nan_to_num is not implemented for complex tensors here")
    info = np.finfo(x.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    inf = isinf(x)
    out = where(isnan(x), nan, x)
    out = where(inf & (x > 0), posinf, out)
    return where(inf & (x < 0), neginf, out)


# -- the in-place Tensor methods PyTorch has for these: x.deg2rad_(), x.rad2deg_(), x.nan_to_num_() ---
def _inplace_of(op, name):
    def op_(input, *args, **kwargs):  # noqa: A002
        from .inplace import inplace
        return inplace(input, lambda a, *r: op(a, *r, **kwargs), *args, name=name)
    op_.__name__ = op_.__qualname__ = name
    op_.__doc__ = f"In-place {op.__name__}: writes {op.__name__}(self, ...) into self (Tensor.{name})."
    return op_


deg2rad_ = _inplace_of(deg2rad, "deg2rad_")
rad2deg_ = _inplace_of(rad2deg, "rad2deg_")
nan_to_num_ = _inplace_of(nan_to_num, "nan_to_num_")
