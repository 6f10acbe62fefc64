"""PyTorch's legacy typed constructors (mg.FloatTensor, mg.LongTensor, ...), which tutorials still use:
`mg.FloatTensor(2, 3)` makes a (2, 3) float32 tensor, `mg.LongTensor([1, 2])` one from data, and
`isinstance(x, mg.FloatTensor)` asks for the dtype, as in PyTorch. New code uses mg.tensor / mg.empty."""
import numpy as np

from . import _dtype
from .tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
           "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


class _LegacyType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args, device=None):
        from .creation import tensor
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(cls.dtype)
        if args and all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return Tensor._make(np.zeros(tuple(int(a) for a in args), dtype=cls.dtype))  # (PyTorch: uninitialised)
        if not args:
            return Tensor._make(np.zeros((0,), dtype=cls.dtype))
        if len(args) == 1:
            return tensor(args[0], dtype=cls.dtype)
        raise TypeError(f"{cls.__name__}(): expected sizes (ints), data (a list or array) or a tensor, got {args!r}")


def _legacy(name, dt, doc):
    return _LegacyType(name, (), {"dtype": dt, "__doc__": doc, "__module__": "minigrad"})


FloatTensor = _legacy("FloatTensor", _dtype.float32, "float32 tensors: FloatTensor(2, 3) or FloatTensor(data).")
DoubleTensor = _legacy("DoubleTensor", _dtype.float64, "float64 tensors: DoubleTensor(2, 3) or DoubleTensor(data).")
HalfTensor = _legacy("HalfTensor", _dtype.float16, "float16 tensors: HalfTensor(2, 3) or HalfTensor(data).")
LongTensor = _legacy("LongTensor", _dtype.int64, "int64 tensors: LongTensor(2, 3) or LongTensor(data).")
IntTensor = _legacy("IntTensor", _dtype.int32, "int32 tensors: IntTensor(2, 3) or IntTensor(data).")
ShortTensor = _legacy("ShortTensor", _dtype.int16, "int16 tensors: ShortTensor(2, 3) or ShortTensor(data).")
CharTensor = _legacy("CharTensor", _dtype.int8, "int8 tensors: CharTensor(2, 3) or CharTensor(data).")
ByteTensor = _legacy("ByteTensor", _dtype.uint8, "uint8 tensors: ByteTensor(2, 3) or ByteTensor(data).")
BoolTensor = _legacy("BoolTensor", _dtype.bool_, "bool tensors: BoolTensor(2, 3) or BoolTensor(data).")
