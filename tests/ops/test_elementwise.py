"""Elementwise ops: forward vs NumPy, gradcheck/gradgradcheck over shapes and broadcasting pairs,
gradients at kinks and ties as PyTorch gives them, Python scalars, dtype promotion, no-grad ops."""
import math
from functools import partial

import numpy as np
import pytest

import minigrad as mg
from helpers import (BINARY_SHAPES, UNARY_SHAPES, check_op, grads, ids, leaf, nonzero, positive,
                     sample)

# forward vs NumPy, float32, gradcheck/gradgradcheck over shapes and broadcasting pairs for every op:
# tests/ops/test_ops.py, generated from the registry (minigrad/testing/opinfo/elementwise.py)


@pytest.mark.parametrize("shapes", [((2, 3), (2, 1), (1, 3)), ((3,), (), (2, 3))], ids=str)
def test_clamp_tensor_bounds(shapes):
    def lo_sampler(shape, rng):
        return rng.uniform(-1.5, -0.5, size=shape)

    def hi_sampler(shape, rng):
        return rng.uniform(0.5, 1.5, size=shape)

    def x_sampler(shape, rng):  # a mix of below, inside and above, away from both bounds
        return sample(shape, rng, low=-3, high=3, away=(-1.5, -0.5, 0.5, 1.5), margin=0.12) * 1.0

    x = mg.tensor(np.array([-2.0, 0.0, 2.0]), requires_grad=True)
    lo = mg.tensor(np.array([-1.0, -1.0, -1.0]), requires_grad=True)
    hi = mg.tensor(np.array([1.0, 1.0, 1.0]), requires_grad=True)
    x.clamp(lo, hi).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [0, 1, 0])
    np.testing.assert_array_equal(lo.grad.data.numpy(), [1, 0, 0])
    np.testing.assert_array_equal(hi.grad.data.numpy(), [0, 0, 1])
    check_op(lambda x, lo, hi: mg.clamp(x, lo, hi), lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
             *shapes, samplers=[x_sampler, lo_sampler, hi_sampler])


def test_reflected_operators_keep_the_tensor_first():
    # PyTorch: 2 * b.sin() -> MulBackward0 with next_functions ((SinBackward0, 0), (None, 0))
    b = leaf([1.0, 2.0])
    for out, name in [(2 * b.sin(), "MulBackward0"), (2.5 + b.sin(), "AddBackward0"), (2 - b.sin(), "RsubBackward0")]:
        assert out.grad_fn.name() == name
        edges = out.grad_fn.next_functions  # PyTorch: rsub's scalar gets no edge (RsubBackward1), mul/add's a None one
        assert edges[0][0].name() == "SinBackward0" and [e for e, _ in edges[1:]] == ([] if "Rsub" in name else [None])
    out = 2.0 / b.sin()  # PyTorch records reciprocal(b) * 2
    assert out.grad_fn.name() == "MulBackward0" and out.grad_fn.next_functions[0][0].name() == "ReciprocalBackward0"
    np.testing.assert_allclose(out.data.numpy(), 2.0 / np.sin([1.0, 2.0]))


def test_div_rounding_keeps_graph_with_zero_gradient():
    x, y = leaf([7.5, -7.5, 2.0]), leaf([2.0, 2.0, -3.0])
    for mode, ref in [("trunc", np.trunc), ("floor", np.floor)]:
        out = mg.div(x, y, rounding_mode=mode)
        np.testing.assert_array_equal(out.data.numpy(), ref(x.data.numpy() / y.data.numpy()))
        assert out.requires_grad and out.grad_fn is not None
        gx, gy = mg.autograd.grad(out.sum(), [x, y], create_graph=True)
        np.testing.assert_array_equal(gx.data.numpy(), 0.0)
        np.testing.assert_array_equal(gy.data.numpy(), 0.0)
    out = mg.div(mg.tensor([-7, 7]), 2, rounding_mode="trunc")
    assert out.dtype == mg.int64 and out.tolist() == [-3, 3]
    with pytest.raises(RuntimeError, match="rounding_mode"):
        mg.div(x, y, rounding_mode="round")


def test_atan2_values_gradient_and_origin():
    y, x = leaf([1.0, 0.0, -1.0, 0.0]), leaf([1.0, -1.0, 0.0, 0.0])
    out = mg.atan2(y, x)
    np.testing.assert_allclose(out.data.numpy(), np.arctan2(y.data.numpy(), x.data.numpy()))
    out.sum().backward()
    np.testing.assert_allclose(y.grad.data.numpy(), [0.5, -1.0, 0.0, 0.0])  # x / (x^2 + y^2); 0 at (0, 0)
    np.testing.assert_allclose(x.grad.data.numpy(), [-0.5, 0.0, 1.0, 0.0])  # -y / (x^2 + y^2)
    assert mg.arctan2 is mg.atan2 and y.atan2(x).shape == (4,)
    assert mg.atan2(mg.tensor([1]), mg.tensor([1])).dtype == mg.float32


def test_where_scalar_promotes_like_a_binary_op():
    # a Python scalar branch used to be cast to the tensor's dtype: where(c, int64, 0.5) gave int64 0
    c = mg.tensor([True, False])
    out = mg.where(c, mg.tensor([1, 2]), 0.5)
    assert out.dtype == mg.float32 and out.tolist() == [1.0, 0.5]
    assert mg.where(c, 1, 0.5).dtype == mg.float32
    assert mg.where(c, 1, 0).dtype == mg.int64
    assert mg.where(c, 1.0, 0.0).dtype == mg.float32
    assert mg.where(c, mg.tensor([1, 2], dtype=mg.int32), 5).dtype == mg.int32
    assert mg.where(c, mg.tensor([1, 2], dtype=mg.float64), 0).dtype == mg.float64
    assert mg.where(c, mg.tensor([1.0, 2.0]), mg.tensor([3.0, 4.0], dtype=mg.float64)).dtype == mg.float64
    # where(cond) alone is nonzero(cond, as_tuple=True)
    idx = mg.where(mg.tensor([[0, 1], [1, 1]]) > 0)
    assert isinstance(idx, tuple) and [i.tolist() for i in idx] == [[0, 1, 1], [1, 0, 1]]


def test_where_scalar_branches():
    x = leaf([1.0, -2.0, 3.0])
    out = mg.where(x > 0, x, 0.0)
    np.testing.assert_array_equal(out.data.numpy(), [1.0, 0.0, 3.0])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [1.0, 0.0, 1.0])
    out = mg.where(x > 0, 5.0, x)
    assert out.dtype == mg.float64
    np.testing.assert_array_equal(out.data.numpy(), [5.0, -2.0, 5.0])
    # a non-bool condition is refused, as in PyTorch 2 (it was treated as bool before issue 7)
    with pytest.raises(RuntimeError, match="where: expected condition to be a bool tensor"):
        mg.where(mg.tensor([1, 0, 2]), x, -x)
    np.testing.assert_array_equal(mg.where(mg.tensor([1, 0, 2]) != 0, x, -x).data.numpy(), [1.0, 2.0, 3.0])


# -- gradients at kinks and ties: the values PyTorch gives ----------------------------------------
def test_relu_grad_at_zero_is_zero():
    _, (g,) = grads(mg.relu, [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


def test_abs_grad_at_zero_is_zero():
    _, (g,) = grads(mg.abs, [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(g, [-1.0, 0.0, 1.0])


def test_sign_grad_is_zero():
    _, (g,) = grads(mg.sign, [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])


@pytest.mark.parametrize("fn", [mg.floor, mg.ceil, mg.round], ids=["floor", "ceil", "round"])
def test_step_functions_grad_zero(fn):
    out, (g,) = grads(fn, [-1.5, 0.5, 1.0, 2.7])
    np.testing.assert_array_equal(g, 0.0)


def test_round_half_to_even():
    np.testing.assert_array_equal(mg.round(mg.tensor([0.5, 1.5, 2.5, -0.5])).data.numpy(), [0.0, 2.0, 2.0, -0.0])


def test_clamp_grad_at_bounds_is_one():
    # PyTorch passes the gradient where min <= x <= max, bounds included
    _, (g,) = grads(lambda x: x.clamp(0.0, 1.0), [-0.5, 0.0, 0.5, 1.0, 1.5])
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0, 1.0, 0.0])
    _, (g,) = grads(lambda x: x.clamp(min=0.0), [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(g, [0.0, 1.0, 1.0])
    _, (g,) = grads(lambda x: x.clamp(max=0.0), [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(g, [1.0, 1.0, 0.0])


def test_clamp_tensor_bounds_crossed_give_the_gradient_to_max():
    """Where min > max the result is max whatever x: PyTorch gives max the gradient and min none
    (min used to take it where x < min); where min == max and x < min neither takes it. Values are
    PyTorch 2.13's, the JVP (forward mode) agrees with the VJP."""
    x = mg.tensor([0.5, -1.0, -1.0, 3.0, 0.25, -2.0], requires_grad=True)
    lo = mg.tensor([0.0, 0.0, 0.5, 1.0, 0.0, 1.0], requires_grad=True)
    hi = mg.tensor([-0.5, 0.0, 0.5, 0.5, 1.0, -1.0], requires_grad=True)
    out = mg.clamp(x, lo, hi)
    np.testing.assert_array_equal(out.detach().numpy(), [-0.5, 0.0, 0.5, 0.5, 0.25, -1.0])
    out.backward(mg.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0, 0, 5, 0])
    np.testing.assert_array_equal(lo.grad.numpy(), [0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(hi.grad.numpy(), [1, 0, 0, 4, 0, 6])
    import minigrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        d = mg.clamp(x.detach(), fwAD.make_dual(lo.detach(), mg.ones(6)), fwAD.make_dual(hi.detach(), 2 * mg.ones(6)))
        np.testing.assert_array_equal(fwAD.unpack_dual(d).tangent.numpy(), [2, 0, 0, 2, 0, 2])


def test_div_gradient_of_the_divisor_at_tiny_and_huge_divisors_as_pytorch():
    """dy = -g * (x / y) / y, PyTorch's order: the old -g * x / (y * y) underflowed y * y to 0 for
    |y| < 1e-154 (nan for x = 0, inf for x = 1e-200 / 1e-200) and overflowed it for |y| > 1e154
    (0 for 1e300 / 1e300). Values are PyTorch 2.13's."""
    x = mg.tensor([0.0, -0.5, 1e-200, 1.0, 1e300, 3.0], dtype=mg.float64)
    y = mg.tensor([1e-300, 1e-300, 1e-200, 1e200, 1e300, -2.0], dtype=mg.float64, requires_grad=True)
    (x / y).backward(mg.ones(6, dtype=mg.float64))
    np.testing.assert_array_equal(y.grad.numpy(), [-0.0, np.inf, -1e200, -0.0, -1e-300, -0.75])
    assert np.signbit(y.grad.numpy()[0])


def test_clamp_needs_a_bound():
    with pytest.raises(RuntimeError, match="min"):
        mg.clamp(mg.ones(2))


@pytest.mark.parametrize("fn", [mg.maximum, mg.minimum], ids=["maximum", "minimum"])
def test_maximum_minimum_ties_split_half(fn):
    x, y = [1.0, 2.0, 3.0], [1.0, 0.0, 5.0]
    _, (gx, gy) = grads(fn, x, y)
    if fn is mg.maximum:
        np.testing.assert_array_equal(gx, [0.5, 1.0, 0.0])
        np.testing.assert_array_equal(gy, [0.5, 0.0, 1.0])
    else:
        np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0])
        np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0])


def test_maximum_tie_under_broadcast_sums_halves():
    x = mg.tensor(np.array([1.0, 1.0, 2.0]), requires_grad=True)
    y = mg.tensor(np.array(1.0), requires_grad=True)
    mg.maximum(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [0.5, 0.5, 1.0])
    assert y.grad.shape == () and y.grad.item() == 1.0


def test_pow_tensor_exponent_finite_at_zero_base():
    # PyTorch: d(x**y)/dy is 0 where x == 0 and y >= 0; d/dx of 0**0 is 0
    x = leaf([0.0, 0.0, 0.0, 2.0])
    y = leaf([0.0, 1.0, 2.0, 3.0])
    out = x ** y
    np.testing.assert_array_equal(out.data.numpy(), [1.0, 0.0, 0.0, 8.0])
    out.sum().backward()
    assert np.isfinite(x.grad.data.numpy()).all() and np.isfinite(y.grad.data.numpy()).all()
    np.testing.assert_allclose(x.grad.data.numpy(), [0.0, 1.0, 0.0, 12.0])
    np.testing.assert_allclose(y.grad.data.numpy(), [0.0, 0.0, 0.0, 8.0 * math.log(2.0)])


def test_pow_scalar_exponent_zero_base():
    _, (g,) = grads(lambda x: x ** 2, [0.0, 3.0])
    np.testing.assert_array_equal(g, [0.0, 6.0])
    _, (g,) = grads(lambda x: x ** 0, [0.0, 3.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])


def test_rpow_scalar_base():
    _, (g,) = grads(lambda y: 2.0 ** y, [0.0, 1.0, -1.0])
    np.testing.assert_allclose(g, np.log(2.0) * 2.0 ** np.array([0.0, 1.0, -1.0]))
    # scalar base 0 with a non-negative exponent: gradient 0, not nan (as PyTorch)
    _, (g,) = grads(lambda y: 0.0 ** y, [1.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0])


def test_sqrt_grad_at_zero_is_inf():
    with np.errstate(divide="ignore"):
        _, (g,) = grads(mg.sqrt, [0.0, 4.0])
    assert g[0] == np.inf and g[1] == 0.25


def test_sigmoid_tanh_saturate_without_nan():
    x = leaf([-1000.0, 0.0, 1000.0])
    s = mg.sigmoid(x)
    np.testing.assert_array_equal(s.data.numpy(), [0.0, 0.5, 1.0])
    s.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [0.0, 0.25, 0.0])
    x32 = mg.tensor([-100.0, 100.0], requires_grad=True)
    t = mg.tanh(x32)
    t.sum().backward()
    assert np.isfinite(x32.grad.data.numpy()).all() and t.dtype == mg.float32


# -- Python scalars on either side -----------------------------------------------------------------
SCALAR_CASES = {
    "x+s": (lambda x: x + 2.5, lambda x: x + 2.5, 1.0),
    "s+x": (lambda x: 2.5 + x, lambda x: 2.5 + x, 1.0),
    "x-s": (lambda x: x - 2.5, lambda x: x - 2.5, 1.0),
    "s-x": (lambda x: 2.5 - x, lambda x: 2.5 - x, -1.0),
    "x*s": (lambda x: x * 2.5, lambda x: x * 2.5, 2.5),
    "s*x": (lambda x: 2.5 * x, lambda x: 2.5 * x, 2.5),
    "x/s": (lambda x: x / 2.0, lambda x: x / 2.0, 0.5),
    "s/x": (lambda x: 2.0 / x, lambda x: 2.0 / x, None),
    "x+int": (lambda x: x + 2, lambda x: x + 2, 1.0),
    "int*x": (lambda x: 3 * x, lambda x: 3 * x, 3.0),
    "int-x": (lambda x: 3 - x, lambda x: 3 - x, -1.0),
    "np_scalar*x": (lambda x: np.float64(2.0) * x, lambda x: 2.0 * x, 2.0),
}


@pytest.mark.parametrize("name", sorted(SCALAR_CASES))
def test_python_scalar_operands(name):
    fn, ref, slope = SCALAR_CASES[name]
    out = check_op(fn, ref, (2, 3), samplers=nonzero)
    assert isinstance(out, mg.Tensor)
    for dt in (mg.float32, mg.float64):
        x = mg.tensor([1.0, 2.0], dtype=dt, requires_grad=True)
        y = fn(x)
        assert isinstance(y, mg.Tensor) and y.dtype == dt, (name, y.dtype)
        y.sum().backward()
        assert x.grad.dtype == dt
        if slope is not None:
            np.testing.assert_allclose(x.grad.data.numpy(), slope)


# -- dtype promotion (PyTorch's rules) -------------------------------------------------------------
def test_float32_times_python_float_stays_float32():
    assert (mg.ones(3) * 2.5).dtype == mg.float32
    assert (2.5 * mg.ones(3)).dtype == mg.float32
    assert (mg.ones(3) + 1).dtype == mg.float32


def test_int64_times_python_float_gives_float32():
    out = mg.tensor([1, 2]) * 2.5
    assert out.dtype == mg.float32
    np.testing.assert_array_equal(out.data.numpy(), [2.5, 5.0])
    assert (2.5 + mg.tensor([1, 2])).dtype == mg.float32


def test_int_tensor_with_python_int_stays_int64():
    out = mg.tensor([1, 2]) * 3
    assert out.dtype == mg.int64
    np.testing.assert_array_equal(out.data.numpy(), [3, 6])


def test_int_true_division_gives_float32():
    out = mg.tensor([1, 2]) / mg.tensor([2, 4])
    assert out.dtype == mg.float32
    np.testing.assert_array_equal(out.data.numpy(), [0.5, 0.5])
    assert (mg.tensor([3]) / 2).dtype == mg.float32


def test_float32_plus_float64_gives_float64():
    a = mg.ones(3, dtype=mg.float32, requires_grad=True)
    b = mg.ones(3, dtype=mg.float64, requires_grad=True)
    out = a + b
    assert out.dtype == mg.float64
    out.sum().backward()
    assert a.grad.dtype == mg.float32 and b.grad.dtype == mg.float64


def test_int_plus_float_tensor_gives_float():
    assert (mg.tensor([1, 2]) + mg.ones(2)).dtype == mg.float32
    assert (mg.tensor([1, 2]) + mg.ones(2, dtype=mg.float64)).dtype == mg.float64


def test_dimensioned_tensor_wins_over_0d_tensor_of_same_kind():
    # PyTorch: a 0-d float64 tensor does not promote a dimensioned float32 tensor
    assert (mg.ones(3) * mg.tensor(2.0, dtype=mg.float64)).dtype == mg.float32


def test_bool_tensor_arithmetic():
    out = mg.tensor([True, False]) + 1
    assert out.dtype == mg.int64
    np.testing.assert_array_equal(out.data.numpy(), [2, 1])


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_give_bool(op):
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = mg.tensor([[2.0], [1.0]])
    npop = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}[op]
    for out, ref in [(getattr(x, op)(y), npop(x.data.numpy(), y.data.numpy())), (getattr(mg, op)(x, 2.0), npop(x.data.numpy(), 2.0)),
                     (getattr(x, op)(2), npop(x.data.numpy(), 2))]:
        assert out.dtype == mg.bool
        assert not out.requires_grad and out.grad_fn is None
        np.testing.assert_array_equal(out.data.numpy(), ref)


def test_comparison_operators():
    x = mg.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal((x > 2).data.numpy(), [False, False, True])
    np.testing.assert_array_equal((x <= 2).data.numpy(), [True, True, False])
    np.testing.assert_array_equal((x == 2).data.numpy(), [False, True, False])
    np.testing.assert_array_equal((x != 2).data.numpy(), [True, False, True])
    np.testing.assert_array_equal((2 < x).data.numpy(), [False, False, True])
    assert (x == 2).dtype == mg.bool


def test_logical_ops():
    a, b = mg.tensor([True, True, False]), mg.tensor([True, False, False])
    np.testing.assert_array_equal((a & b).data.numpy(), [True, False, False])
    np.testing.assert_array_equal((a | b).data.numpy(), [True, True, False])
    np.testing.assert_array_equal((a ^ b).data.numpy(), [False, True, False])
    np.testing.assert_array_equal((~a).data.numpy(), [False, False, True])
    np.testing.assert_array_equal(mg.logical_not(b).data.numpy(), [False, True, True])
    for out in (a & b, a | b, a ^ b, ~a, mg.logical_and(a, b), mg.logical_or(a, b)):
        assert out.dtype == mg.bool


def test_isnan_isinf_isfinite_any_all():
    x = mg.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    np.testing.assert_array_equal(mg.isnan(x).data.numpy(), [False, True, False, False])
    np.testing.assert_array_equal(x.isinf().data.numpy(), [False, False, True, True])
    np.testing.assert_array_equal(x.isfinite().data.numpy(), [True, False, False, False])
    assert mg.isnan(x).dtype == mg.bool
    assert x.isnan().any().item() is True and x.isnan().all().item() is False
    m = mg.tensor([[True, False], [True, True]])
    np.testing.assert_array_equal(m.all(dim=1).data.numpy(), [False, True])
    np.testing.assert_array_equal(m.any(dim=0).data.numpy(), [True, True])
    np.testing.assert_array_equal(mg.all(m, dim=0, keepdim=True).data.numpy(), [[True, False]])
    assert mg.any(m).dtype == mg.bool


# -- // and % : forward as PyTorch (floor semantics); // has no gradient, % has PyTorch's ----------
@pytest.mark.parametrize("op,npop", [("floordiv", np.floor_divide), ("mod", np.remainder)])
def test_floordiv_mod_forward_and_gradient(op, npop):
    x = mg.tensor([-7.0, -3.5, 2.0, 7.5], requires_grad=True)
    y = mg.tensor([2.0, 2.0, -3.0, 2.0], requires_grad=True)
    out = x // y if op == "floordiv" else x % y
    np.testing.assert_array_equal(out.data.numpy(), npop(x.data.numpy(), y.data.numpy()))
    if op == "floordiv":
        assert not out.requires_grad and out.grad_fn is None
    else:  # issue 33: d/dx = 1, d/dy = -floor(x / y); (x*x + x % .3)' at .7 is 2.4, as PyTorch
        out.sum().backward()
        assert x.grad.tolist() == [1.0] * 4 and y.grad.tolist() == [4.0, 2.0, 1.0, -3.0]
        x7 = mg.tensor(0.7, dtype=mg.float64, requires_grad=True)
        (x7 * x7 + x7 % 0.3).backward()
        assert abs(x7.grad.item() - 2.4) < 1e-12
    out_s = x // 2 if op == "floordiv" else x % 2
    np.testing.assert_array_equal(out_s.data.numpy(), npop(x.data.numpy(), 2))
    assert out_s.dtype == mg.float32
    out_r = 7 // y if op == "floordiv" else 7 % y
    np.testing.assert_array_equal(out_r.data.numpy(), npop(7, y.data.numpy()))


def test_int_floordiv_mod():
    x = mg.tensor([-7, 7, 5])
    np.testing.assert_array_equal((x // 2).data.numpy(), [-4, 3, 2])
    np.testing.assert_array_equal((x % 3).data.numpy(), [2, 1, 2])
    assert (x // 2).dtype == mg.int64 and (x % 3).dtype == mg.int64
    np.testing.assert_array_equal(mg.div(x, 2, rounding_mode="floor").data.numpy(), [-4, 3, 2])
    np.testing.assert_array_equal(mg.div(mg.tensor([-7.0, 7.0]), 2, rounding_mode="trunc").data.numpy(), [-3.0, 3.0])


# -- errors ----------------------------------------------------------------------------------------
def test_add_broadcast_error_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4, 3\) cannot be broadcast"):
        mg.ones(2, 3) + mg.ones(4, 3)
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4, 3\) cannot be broadcast"):
        mg.ones(2, 3, requires_grad=True) + mg.ones(4, 3)


@pytest.mark.parametrize("op,name", [(lambda a, b: a * b, "mul"), (lambda a, b: a - b, "sub"),
                                     (lambda a, b: a / b, "div"), (mg.maximum, "maximum"),
                                     (lambda a, b: a // b, "floor_divide"), (lambda a, b: a < b, "lt")])
def test_broadcast_errors_name_the_op(op, name):
    with pytest.raises(ValueError, match=rf"{name}: shapes \(2, 3\) and \(4, 3\) cannot be broadcast"):
        op(mg.ones(2, 3), mg.ones(4, 3))


def test_erf_forward_values():
    x = mg.tensor([-1.0, 0.0, 0.5, 2.0], dtype=mg.float64)
    np.testing.assert_allclose(mg.erf(x).data.numpy(), [math.erf(v) for v in (-1.0, 0.0, 0.5, 2.0)])


def test_reciprocal_of_int_gives_float():
    out = mg.reciprocal(mg.tensor([1, 2, 4]))
    assert out.dtype == mg.float32
    np.testing.assert_array_equal(out.data.numpy(), [1.0, 0.5, 0.25])


# -- Python-float operands are cached as constant 0-d tensors (a speed path): semantics unchanged --
def test_python_float_operands_keep_sign_nan_and_dtype():
    x = mg.tensor([1.0, -2.0])
    assert np.signbit((x * -0.0).data.numpy()).tolist() == [True, False]
    assert np.isnan((x + float("nan")).data.numpy()).all()
    assert (x * 2.5).dtype == mg.float32
    assert (mg.tensor([1.0], dtype=mg.float64) * 0.1).data.numpy()[0] == 0.1  # not rounded through float32


def test_cached_scalar_is_never_modified_or_differentiated():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        y = x * 3.0
        y.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [6.0, 6.0])
    z = mg.ones(2) * 3.0
    z.add_(1.0)  # in place on the result, not on the cached 3.0
    np.testing.assert_array_equal((mg.ones(2) * 3.0).data.numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(z.data.numpy(), [4.0, 4.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_kernel_is_math_erf_bit_for_bit(dtype):
    """erf's numba loop (large arrays) gives math.erf's values, signed zeros, infinities and nan."""
    pytest.importorskip("numba", reason="the erf kernel needs numba; without it math.erf runs per element")
    from minigrad import kernels
    from minigrad.ops.elementwise import _erf_np
    x = (np.random.default_rng(0).standard_normal(5000) * 4).astype(dtype)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).tiny]
    old = kernels.set_enabled(True)
    try:
        got = _erf_np(x.reshape(50, 100)).reshape(-1)
    finally:
        kernels.set_enabled(old)
    want = np.array([math.erf(float(v)) for v in x]).astype(dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
