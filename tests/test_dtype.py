"""dtypes: NumPy dtype objects, default dtype, PyTorch type promotion."""
import numpy as np
import pytest

import minigrad as mg


def test_dtypes_are_numpy_dtypes():
    assert mg.float32 == np.dtype("float32")
    assert mg.float64 == np.dtype("float64")
    assert mg.int64 == np.dtype("int64")
    assert mg.int32 == np.dtype("int32")
    assert mg.uint8 == np.dtype("uint8")
    assert mg.bool_ == np.dtype("bool")
    assert mg.bool == np.dtype("bool")


def test_get_set_default_dtype():
    prev = mg.get_default_dtype()
    assert prev == mg.float32
    try:
        mg.set_default_dtype(mg.float64)
        assert mg.get_default_dtype() == mg.float64
        assert mg.tensor([0.5]).dtype == mg.float64
        assert mg.arange(0.0, 1.0, 0.5).dtype == mg.float64
    finally:
        mg.set_default_dtype(prev)
    assert mg.tensor([0.5]).dtype == mg.float32


@pytest.mark.parametrize("a,b,expected", [
    (np.array([1, 2]), 2.5, mg.float32),                        # int tensor * Python float -> default
    (np.array([1.0], dtype=np.float32), 2.5, mg.float32),       # float32 * Python float stays float32
    (np.array([1.0], dtype=np.float32), 2, mg.float32),
    (np.array([1], dtype=np.int32), 2, mg.int32),               # Python int does not widen
    (np.array([True]), 1, mg.int64),
    (np.array([True]), 1.5, mg.float32),
    (np.array([1.0], dtype=np.float32), np.array([1.0]), mg.float64),
    (np.array([1], dtype=np.int32), np.array([1], dtype=np.int64), mg.int64),
    (np.array([1], dtype=np.int64), np.array([1.0], dtype=np.float32), mg.float32),
    (np.array([1.0], dtype=np.float32), np.array(1.0), mg.float32),  # 0-d float64 doesn't widen
    # a 0-d tensor of a higher category gives its own dtype, not the default (a Python float does)
    (np.array([1], dtype=np.int64), np.array(1.0), mg.float64),
    (np.array([1], dtype=np.int64), np.array(1.0, dtype=np.float16), mg.float16),
    (np.array([True]), np.array(2, dtype=np.int32), mg.int32),
    (np.array([1], dtype=np.int8), np.array(3), mg.int8),            # same category: dimensioned wins
])
def test_binary_promotion(a, b, expected):
    ta = mg.tensor(a)
    tb = mg.tensor(b) if isinstance(b, np.ndarray) else b
    assert (ta * tb).dtype == expected
    assert (tb * ta).dtype == expected


def test_int_division_gives_float():
    assert (mg.tensor([1, 2]) / 2).dtype == mg.float32
    assert (mg.tensor([1, 2]) / mg.tensor([2, 4])).dtype == mg.float32
    np.testing.assert_allclose((mg.tensor([1, 2]) / 2).data.numpy(), [0.5, 1.0])


def test_comparison_gives_bool():
    assert (mg.tensor([1.0, 2.0]) > 1.5).dtype == mg.bool_
    assert (mg.tensor([1, 2]) == mg.tensor([1, 3])).tolist() == [True, False]


def test_promotion_under_default_float64():
    prev = mg.get_default_dtype()
    try:
        mg.set_default_dtype(mg.float64)
        assert (mg.tensor([1, 2]) * 0.5).dtype == mg.float64
        assert (mg.tensor(np.array([1.0], dtype=np.float32)) * 0.5).dtype == mg.float32
    finally:
        mg.set_default_dtype(prev)


def test_gradient_dtype_follows_leaf_under_promotion():
    x = mg.tensor([1.0, 2.0], requires_grad=True)  # float32
    w = mg.tensor(np.array([0.5, 0.25]), requires_grad=True)  # float64
    y = (x * w).sum()
    assert y.dtype == mg.float64
    y.backward()
    assert x.grad.dtype == mg.float32 and w.grad.dtype == mg.float64
    np.testing.assert_allclose(x.grad.data.numpy(), [0.5, 0.25])


def test_top_level_dtype_info_and_predicates():
    # these were missing (AttributeError); values are PyTorch's
    assert float(mg.finfo(mg.float32).eps) == 1.1920928955078125e-07
    assert float(mg.finfo(mg.float16).max) == 65504.0 and mg.finfo().bits == 32
    assert mg.iinfo(mg.int64).max == 9223372036854775807 and mg.iinfo(mg.uint8).min == 0
    with pytest.raises(TypeError):
        mg.finfo(mg.int32)
    assert mg.promote_types(mg.int32, mg.float32) == mg.float32  # NumPy would say float64
    assert mg.promote_types(mg.uint8, mg.int8) == mg.int16
    assert mg.promote_types(mg.bool_, mg.int32) == mg.int32
    assert mg.result_type(mg.tensor([1]), 2.5) == mg.float32
    assert mg.result_type(mg.tensor([1], dtype=mg.int32), 2) == mg.int32
    assert mg.result_type(mg.tensor([1]), mg.tensor(1.0, dtype=mg.float64)) == mg.float64
    assert not mg.can_cast(mg.float32, mg.int32) and mg.can_cast(mg.int64, mg.float16)
    assert not mg.can_cast(mg.int32, mg.bool_) and mg.can_cast(mg.float64, mg.float32)
    assert mg.is_tensor(mg.ones(1)) and mg.is_tensor(mg.nn.Parameter(mg.ones(1))) and not mg.is_tensor([1])
    assert mg.is_floating_point(mg.ones(1)) and not mg.is_floating_point(mg.tensor([1]))
    assert mg.numel(mg.ones(2, 3)) == 6
