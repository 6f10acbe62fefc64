"""Bitwise ops on integer and bool tensors: &, |, ^, ~, <<, >> and the bitwise_* functions (PyTorch's).

On integers they are bitwise and keep the (promoted) integer dtype; on bool, &, |, ^ and ~ are
logical and give bool. Floats are refused as PyTorch refuses them. None is differentiable (their
outputs are integers or bools, which never require grad); they go through Function.apply like
every op.
"""
import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from .elementwise import _promote

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
           "bitwise_right_shift"]


class _Bitwise(Function):
    """Base of the bitwise ops: integer/bool outputs, so no backward is ever asked for."""
    batching = "elementwise"
    jvp = NoRule("integer or bool outputs: no tangent")
    fusion = NoRule("integer and bool results: fused groups compute float results")

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"{ctx.name()}: this op is not differentiable")


def _bitwise_onnx(op, bool_op):
    """BitwiseAnd/Or/Xor (opset 18) on the output's integer dtype; And/Or/Xor on bools."""
    def onnx(e, c):
        out = e.outvars[0].dtype
        if c.dt(e) == np.bool_:
            return c.add(bool_op, c.operands(e, 2), c.out(e))
        if c.opset < 18:
            raise c.unmapped(f"{op} needs opset 18")
        names = [n if not c.is_var(v) or v.dtype == out else c.add("Cast", [n], to=c.tp(out))
                 for n, v in zip(c.operands(e, 2, out), e.args[:2])]
        return c.add(op, names, c.out(e))
    return staticmethod(onnx)


class BitwiseAnd(_Bitwise):
    """out = x & y  (bitwise on integers, logical on bool);  not differentiable"""
    onnx = _bitwise_onnx("BitwiseAnd", "And")
    op_name = "bitwise_and"

    @staticmethod
    def forward(ctx, x, y):
        return np.bitwise_and(x, y)


class BitwiseOr(_Bitwise):
    """out = x | y  (bitwise on integers, logical on bool);  not differentiable"""
    onnx = _bitwise_onnx("BitwiseOr", "Or")
    op_name = "bitwise_or"

    @staticmethod
    def forward(ctx, x, y):
        return np.bitwise_or(x, y)


class BitwiseXor(_Bitwise):
    """out = x ^ y  (bitwise on integers, logical on bool);  not differentiable"""
    onnx = _bitwise_onnx("BitwiseXor", "Xor")
    op_name = "bitwise_xor"

    @staticmethod
    def forward(ctx, x, y):
        return np.bitwise_xor(x, y)


class BitwiseNot(_Bitwise):
    """out = ~x  (bitwise on integers, logical on bool);  not differentiable"""
    op_name = "bitwise_not"

    @staticmethod
    def forward(ctx, x):
        return np.invert(x)

    @staticmethod
    def onnx(e, c):
        return c.add("Not" if c.dt(e) == np.bool_ else "BitwiseNot", [c.x(e)], c.out(e))


def _shift_counts(x, y):
    """(result dtype, bit width, counts with the out-of-range ones set to 0, mask of those)."""
    dt = np.result_type(x, y)
    ya = np.asarray(y)
    bad = (ya < 0) | (ya >= dt.itemsize * 8)
    return dt, np.where(bad, 0, ya).astype(dt), bad


class BitwiseLeftShift(_Bitwise):
    """out = x << y, 0 where y < 0 or y >= the bit width (PyTorch's; C leaves those undefined)"""
    onnx = NoRule("ONNX BitShift takes unsigned integers only; minigrad's shifts are on signed ones")
    op_name = "bitwise_left_shift"

    @staticmethod
    def forward(ctx, x, y):
        dt, counts, bad = _shift_counts(x, y)
        return np.where(bad, 0, np.left_shift(np.asarray(x, dtype=dt), counts)).astype(dt, copy=False)


class BitwiseRightShift(_Bitwise):
    """out = x >> y (arithmetic), the sign (0 or -1) where y < 0 or y >= the bit width, as PyTorch"""
    onnx = NoRule("ONNX BitShift takes unsigned integers only; minigrad's shifts are on signed ones")
    op_name = "bitwise_right_shift"

    @staticmethod
    def forward(ctx, x, y):
        dt, counts, bad = _shift_counts(x, y)
        xa = np.asarray(x, dtype=dt)
        out = np.right_shift(xa, counts)
        return np.where(bad, np.where(xa < 0, -1, 0), out).astype(dt, copy=False)


def _dtype_of(v):
    return v._data.dtype if isinstance(v, Tensor) else np.asarray(v).dtype


def _operands(op, x, y, bool_ok=True):
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = Tensor(x)
    x, y = _promote(x, y)
    dt = _dtype_of(x if isinstance(x, Tensor) else y)
    if isinstance(x, Tensor) and isinstance(y, Tensor):  # int tensor << float tensor: refused, as PyTorch
        dt = np.result_type(x._data.dtype, y._data.dtype)
    if dt.kind not in ("iu" + ("b" if bool_ok else "")):
        raise NotImplementedError(f"{op}: not implemented for {dt} tensors (integer"
                                  f"{' or bool' if bool_ok else ''} only)")
    if dt.kind in "iu":  # a Python int beyond the dtype wraps (two's complement), as PyTorch's
        from .elementwise import _wrap_number
        x, y = (_wrap_number(v, dt) if isinstance(v, int) and not isinstance(v, bool) else v for v in (x, y))
    return x, y


def bitwise_and(input, other):
    """out = input & other: bitwise AND of integer tensors, logical AND of bool tensors."""
    return BitwiseAnd.apply(*_operands("bitwise_and", input, other))


def bitwise_or(input, other):
    """out = input | other: bitwise OR of integer tensors, logical OR of bool tensors."""
    return BitwiseOr.apply(*_operands("bitwise_or", input, other))


def bitwise_xor(input, other):
    """out = input ^ other: bitwise XOR of integer tensors, logical XOR of bool tensors."""
    return BitwiseXor.apply(*_operands("bitwise_xor", input, other))


def bitwise_not(input):
    """out = ~input: bitwise NOT of an integer tensor, logical NOT of a bool tensor."""
    if input.dtype.kind not in "iub":
        raise TypeError(f"bitwise_not: ~ is only implemented on integer and bool tensors, not {input.dtype}")
    return BitwiseNot.apply(input)


def bitwise_left_shift(input, other):
    """out = input << other for integer tensors (0 for counts < 0 or >= the bit width)."""
    return BitwiseLeftShift.apply(*_operands("bitwise_left_shift", input, other, bool_ok=False))


def bitwise_right_shift(input, other):
    """out = input >> other for integer tensors (arithmetic: the sign bit fills)."""
    return BitwiseRightShift.apply(*_operands("bitwise_right_shift", input, other, bool_ok=False))
