"""Registry entries of the bitwise ops (ops/bitwise.py): integer dtype kept, logical on bool."""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, samples


def _bitwise_samples(rng):
    a = np.array([5, -3, 0, 12, -128, 127])
    return [SampleInput((a, np.array([6, 6, -1, 10, 1, -1]))),
            SampleInput((rng.integers(-50, 50, (2, 1)), rng.integers(-50, 50, (1, 3))), name="broadcast"),
            SampleInput((a.astype(np.int32), 6), name="int_scalar"),
            SampleInput((6, a.astype(np.int16)), name="rscalar"),
            SampleInput((a.astype(np.int16), a.astype(np.int32)), name="promote"),
            SampleInput((np.array([200, 7], dtype=np.uint8), np.array([15, 255], dtype=np.uint8)), name="uint8"),
            SampleInput((np.array([True, True, False]), np.array([True, False, False])), name="bool")]


def _shift_samples(rng):
    a = np.array([5, -3, 0, 12, -128, 127])
    return [SampleInput((a, np.array([0, 1, 2, 3, 4, 62]))),
            SampleInput((a.astype(np.int32), 3), name="int_scalar"),
            SampleInput((3, np.array([0, 1, 7], dtype=np.int8)), name="rscalar"),
            SampleInput((np.array([200, 7], dtype=np.uint8), np.array([1, 5], dtype=np.uint8)), name="uint8")]


_BITWISE = [("bitwise_and", np.bitwise_and, lambda x, y: x & y), ("bitwise_or", np.bitwise_or, lambda x, y: x | y),
            ("bitwise_xor", np.bitwise_xor, lambda x, y: x ^ y)]
_SHIFTS = [("bitwise_left_shift", np.left_shift, lambda x, y: x << y),
           ("bitwise_right_shift", np.right_shift, lambda x, y: x >> y)]
ops = [
    OpInfo(n, getattr(mg, n), f, smp, supports_grad=False, dtypes=("int64",))
    for (n, f, _), smp in [(b, _bitwise_samples) for b in _BITWISE] + [(b, _shift_samples) for b in _SHIFTS]] + [
    OpInfo(n, dunder, f, smp, variant="operator", supports_grad=False, dtypes=("int64",),
           torch_op=lambda torch, x, y, _d=dunder: _d(x, y))  # & | ^ << >> and their reflected forms
    for (n, f, dunder), smp in [(b, _bitwise_samples) for b in _BITWISE] + [(b, _shift_samples) for b in _SHIFTS]] + [
    OpInfo("bitwise_not", mg.bitwise_not, np.invert, samples(
        SampleInput((np.array([5, -3, 0, 127]),)), SampleInput((np.array([0, 200], dtype=np.uint8),), name="uint8"),
        SampleInput((np.array([True, False]),), name="bool")), supports_grad=False, dtypes=("int64",)),
    OpInfo("bitwise_not", lambda x: ~x, np.invert, samples(
        SampleInput((np.array([5, -3, 0, 127], dtype=np.int32),)), SampleInput((np.array([True, False]),), name="bool")),
        variant="invert", supports_grad=False, torch_op=lambda torch, x: ~x, dtypes=("int64",)),
]
