"""dtypes: minigrad uses NumPy's dtype objects directly (mg.float32 is np.dtype('float32'))."""
import builtins

import numpy as np

float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
cfloat, cdouble = complex64, complex128  # (PyTorch aliases)
half, float, double = float16, float32, float64  # noqa: A001  (PyTorch aliases)
short, int, long = int16, int32, int64  # noqa: A001

_default_float = [float32]


def get_default_dtype():
    """The dtype given to tensors made from Python floats (float32 unless changed)."""
    return _default_float[0]


def set_default_dtype(dtype):
    """Set the default floating dtype (float32 or float64), as torch.set_default_dtype."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: only floating dtypes are supported, got {dtype}")
    _default_float[0] = dtype


def is_floating(dtype):
    return dtype.kind == "f"


def _default_complex():
    """PyTorch's default complex dtype: complex128 when the default float is float64, else complex64."""
    return complex128 if _default_float[0] == float64 else complex64


def _to_complex(dtype):
    """The complex dtype whose parts are `dtype` (float64 -> complex128, other floats -> complex64)."""
    return complex128 if dtype == float64 else complex64


def _category(dtype):
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}.get(dtype.kind, 4)


def result_type(x, y):
    """PyTorch's promotion for two operands: each is an ndarray (a tensor's data) or a Python scalar.

    A higher category (bool < int < float < complex) wins; within a category, dimensioned tensors
    win over 0-d tensors and Python scalars (so float32 * 2.5 stays float32, int64 * 2.5 gives the
    default float). A complex operand of lower rank than a floating one keeps the floating one's
    precision (float64 [2] * 1j is complex128, float32 [2] * complex128 0-d is complex64), as
    PyTorch's combine_categories.
    """
    dx, dy = _dtype_of(x), _dtype_of(y)
    if dx == dy:
        return dx
    cx, cy = _category(dx), _category(dy)
    if cx != cy:
        hi, hi_op, lo, lo_op = (dx, x, dy, y) if cx > cy else (dy, y, dx, x)
        if _category(hi) == 3 and _category(lo) == 2:
            wh, wl = _weight(hi_op), _weight(lo_op)
            if wl > wh:
                return _to_complex(lo)
            if wl == wh:
                return np.promote_types(hi, lo)  # float64 with complex64: complex128
        # a Python float promoting an integer tensor gives the default float dtype; a 0-d tensor
        # keeps its own (int64 [1] + tensor(1.5, dtype=float64) is float64 in PyTorch)
        if not isinstance(hi_op, np.ndarray):
            return get_default_dtype() if _category(hi) == 2 else hi
        return hi
    wx, wy = _weight(x), _weight(y)
    if wx != wy:
        return dx if wx > wy else dy
    return np.promote_types(dx, dy)


def _ndim(v):
    return v.ndim if isinstance(v, np.ndarray) else 0


def _weight(v):
    # dimensioned tensor > 0-d tensor > Python scalar
    if isinstance(v, np.ndarray):
        return 2 if v.ndim else 1
    return 0


def _dtype_of(v):
    if isinstance(v, np.ndarray):
        return v.dtype
    if isinstance(v, (builtins.bool, np.bool_)):
        return bool_
    if isinstance(v, (builtins.int, np.integer)):
        return int64
    if isinstance(v, (builtins.float, np.floating)):
        return get_default_dtype()
    if isinstance(v, (builtins.complex, np.complexfloating)):
        return _default_complex()
    raise TypeError(f"unsupported operand type {type(v).__name__}")
