"""Top-level dtype information and tensor predicates with PyTorch's names: finfo, iinfo,
promote_types, result_type, can_cast, is_tensor, is_floating_point, numel."""
import numpy as np

from . import _dtype


def finfo(type=None):  # noqa: A002  (PyTorch's argument name)
    """Machine limits of a floating dtype (default: the default dtype): ``eps``, ``max``, ``min``,
    ``tiny``, ``bits``, ``resolution``, as torch.finfo (NumPy's finfo, whose values are the same)."""
    dt = _dtype.get_default_dtype() if type is None else np.dtype(type)
    if dt.kind != "f":
        raise TypeError(f"finfo: expected a floating dtype, got {dt}")
    return np.finfo(dt)


def iinfo(type):  # noqa: A002
    """Machine limits of an integer dtype (``min``, ``max``, ``bits``), as torch.iinfo."""
    dt = np.dtype(type)
    if dt.kind not in "iu":
        raise TypeError(f"iinfo: expected an integer dtype, got {dt}")
    return np.iinfo(dt)


def promote_types(type1, type2):
    """The dtype two tensors of these dtypes promote to, by PyTorch's rules (int32 and float32 give
    float32, where NumPy's promote_types gives float64)."""
    return _dtype.result_type(np.empty((1,), np.dtype(type1)), np.empty((1,), np.dtype(type2)))


def result_type(tensor, other):
    """The dtype of a binary op on ``tensor`` and ``other`` (a tensor or a Python number), as
    torch.result_type."""
    def raw(v):
        data = getattr(v, "_data", v)
        return data.item() if isinstance(data, np.generic) else data
    return _dtype.result_type(raw(tensor), raw(other))


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` in an op writing into ``to``
    (no float to integer, no non-bool to bool), as torch.can_cast."""
    return bool(np.can_cast(np.dtype(from_), np.dtype(to), "same_kind"))


def is_tensor(obj):
    """Whether ``obj`` is a minigrad Tensor, as torch.is_tensor."""
    from .tensor import Tensor
    return isinstance(obj, Tensor)


def is_floating_point(input):  # noqa: A002
    """Whether ``input``'s dtype is a floating one, as torch.is_floating_point."""
    return input.is_floating_point()


def numel(input):  # noqa: A002
    """The number of elements of ``input``, as torch.numel."""
    return input.numel()
