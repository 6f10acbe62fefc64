"""Hand tests of the elementwise math (trunc/frac, exp2/log2/log10, inverse and hyperbolic trig, hypot,
copysign, isclose), the scans and the scatter/index ops beside their registry entries
(minigrad/testing/opinfo/): dtype rules and errors the generated tests do not cover."""
import numpy as np
import pytest

import minigrad as mg


@pytest.mark.parametrize("name", ["exp2", "log2", "log10", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                                  "atanh"])
def test_integer_input_gives_default_float(name):
    with np.errstate(all="ignore"):  # log2(0), atanh(1): -inf, inf
        out = getattr(mg, name)(mg.tensor([0, 1]))
        ref = getattr(np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
                           "atanh": "arctanh"}.get(name, name))(np.array([0.0, 1.0]))
    assert out.dtype == mg.float32  # as PyTorch: integers promote to the default dtype
    np.testing.assert_allclose(out.numpy(), ref.astype(np.float32), rtol=1e-6)


def test_trunc_of_integers_is_identity_and_copysign_of_integers_is_float():
    x = mg.tensor([3, -2])
    assert mg.trunc(x).tolist() == [3, -2] and mg.trunc(x).dtype == mg.int64
    assert mg.copysign(x, mg.tensor([-1, 1])).tolist() == [-3.0, 2.0]
    assert mg.copysign(x, mg.tensor([-1, 1])).dtype == mg.float32


def test_copysign_gradient_is_zero_where_input_is_zero():
    x = mg.tensor([0.0, 2.0, -3.0], requires_grad=True)
    mg.copysign(x, mg.tensor([-1.0, -1.0, 1.0])).sum().backward()
    assert x.grad.tolist() == [0.0, -1.0, -1.0]


def test_hypot_refuses_integers_and_isclose_mixed_dtypes():
    with pytest.raises(RuntimeError, match="hypot"):
        mg.hypot(mg.tensor([3, 4]), mg.tensor([4, 3]))
    with pytest.raises(RuntimeError, match="isclose.*float32.*float64"):
        mg.isclose(mg.tensor([1.0], dtype=mg.float32), mg.tensor([1.0], dtype=mg.float64))


def test_isclose_is_not_differentiable():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    out = x.isclose(x + 1e-9)
    assert out.tolist() == [True, True] and not out.requires_grad and out.dtype == mg.bool


def test_inplace_forms_bump_the_version_and_keep_the_graph():
    x = mg.tensor([0.25, -0.5], requires_grad=True)
    y = x * 1.0
    v = y._version
    y.atan_()
    assert y._version == v + 1 and y.grad_fn.name() == "AtanBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 + np.array([0.25, -0.5]) ** 2))


def test_cummax_of_empty_and_scans_reject_bad_dims():
    v, i = mg.cummax(mg.zeros(0, 2), 1)
    assert v.shape == (0, 2) and i.dtype == mg.int64
    with pytest.raises(IndexError, match="cumprod"):
        mg.cumprod(mg.ones(2, 3), 2)
    with pytest.raises(RuntimeError, match="logcumsumexp"):
        mg.logcumsumexp(mg.tensor([1, 2]), 0)


def test_scatter_index_errors_name_the_op():
    x = mg.zeros(3, 4)
    with pytest.raises(RuntimeError, match="scatter_reduce.*reduce"):
        mg.scatter_reduce(x, 0, mg.tensor([[0]]), mg.ones(1, 1), "max")
    with pytest.raises(RuntimeError, match=r"index_add.*\(2, 4\)"):
        x.index_add(0, mg.tensor([0, 1]), mg.ones(2, 3))
    with pytest.raises(IndexError, match="index_fill.*out of range"):
        x.index_fill(1, mg.tensor([4]), 1.0)
    with pytest.raises(RuntimeError, match="masked_select.*Bool"):
        x.masked_select(mg.tensor([1, 0, 1, 0]))


def test_scatter_value_with_a_repeated_index_writes_the_value_once():
    """Every write of scatter(..., value) is the same number, so PyTorch's result is the value wherever
    an index points, repeated or not; the old sum of the writes gave 2 * 2.5 = 5.0 at a repeated
    index. The input's gradient is 0 at the written positions."""
    x = mg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    out = x.scatter(1, mg.tensor([[0, 1], [3, 3], [2, 0]]), 2.5)
    np.testing.assert_array_equal(out.detach().numpy(), [[2.5, 2.5, 2, 3], [4, 5, 6, 2.5], [2.5, 9, 2.5, 11]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0, 1, 1], [1, 1, 1, 0], [0, 1, 0, 1]])
    out = mg.tensor([[1, 2], [3, 4]]).scatter(0, mg.tensor([[1, 1], [1, 1]]), 7)
    assert out.tolist() == [[1, 2], [7, 7]] and out.dtype == mg.int64


def test_scatter_reduce_prod_gradient_at_a_zero_is_not_silently_wrong():
    x = mg.tensor([[1.0, 2.0]], requires_grad=True)
    out = mg.scatter_reduce(x, 0, mg.tensor([[0, 0]]), mg.tensor([[0.0, 3.0]]), "prod")
    with pytest.raises(NotImplementedError, match="prod"):
        out.sum().backward()


def test_nonzero_is_not_differentiable_and_as_tuple_indexes():
    x = mg.tensor([[0.0, 1.5], [2.0, 0.0]], requires_grad=True)
    nz = x.nonzero()
    assert nz.tolist() == [[0, 1], [1, 0]] and not nz.requires_grad
    rows, cols = mg.nonzero(x, as_tuple=True)
    assert x[rows, cols].tolist() == [1.5, 2.0]
