"""gradcheck / gradgradcheck: pass on correct ops, fail loudly (or return False) on wrong ones."""
import re

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def leaf(data):
    return mg.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


class WrongSquare(Function):
    """out = x**2 with a deliberately wrong backward: dx = g * 3x (should be 2x)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x


class OffByOneElement(Function):
    """out = 2 * x, with the gradient of element 2 (only) wrong by +5"""

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        bump = np.zeros(g.shape)
        bump.reshape(-1)[2] = 5.0
        return g * 2 + mg.tensor(bump)


class NumpySquare(Function):
    """out = x**2;  dx = 2 g x, computed in NumPy: right to first order, not differentiable again"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return mg.Tensor(2 * g.data.numpy() * x.data.numpy())


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_gradcheck_passes_on_builtin_composition(shape):
    rng = np.random.default_rng(0)
    x = leaf(rng.standard_normal(shape))
    assert gradcheck(lambda t: (t.tanh() * t.exp()).sigmoid(), (x,))


def test_gradcheck_accepts_single_tensor_and_tuple_outputs():
    x = leaf([0.1, 0.2])
    assert gradcheck(lambda t: t.sin(), x)
    assert gradcheck(lambda t: (t.sin(), t.cos() * 2), (x,))


def test_gradcheck_only_checks_inputs_requiring_grad():
    x = leaf([0.5, 1.5])
    c = mg.tensor(np.array([2.0, 3.0]))
    assert gradcheck(lambda a, b: a * b, (x, c))


def test_gradcheck_restores_inputs():
    x = leaf([0.5, 1.5, -2.0])
    before = x.data.numpy().copy()
    gradcheck(lambda t: t * t, (x,))
    np.testing.assert_array_equal(x.data.numpy(), before)
    assert x.grad is None


def test_gradcheck_fails_on_wrong_backward():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSquare.apply, (x,))
    msg = str(info.value)
    assert "input 0" in msg
    assert "numerical" in msg and "analytical" in msg
    # worst element: index 2 (|3x - 2x| largest at x = 3): numerical 6, analytical 9
    assert "(2,)" in msg
    assert re.search(r"numerical 6(\.0*)?\b", msg) and re.search(r"analytical 9(\.0*)?\b", msg)


def test_gradcheck_error_is_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)


def test_gradcheck_names_the_wrong_input_and_element():
    a = leaf([1.0, 2.0])
    b = leaf(np.arange(6.0).reshape(2, 3))
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda p, q: p.sum() + OffByOneElement.apply(q), (a, b))
    msg = str(info.value)
    assert "input 1" in msg
    assert "(0, 2)" in msg  # flat element 2 of a (2, 3) input
    # the bump lands on d out[k] / d q[0, 2] for every k; the first such is out[0, 0]: 0 vs 5
    assert "numerical 0" in msg and "analytical 5" in msg


def test_gradcheck_raise_exception_false_returns_false():
    x = leaf([1.0, 2.0, 3.0])
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False
    assert gradcheck(lambda t: t * t, (x,), raise_exception=False) is True


def test_gradcheck_tolerances():
    x = leaf([1.0])
    # 3x vs 2x at x = 1: difference 1
    assert gradcheck(WrongSquare.apply, (x,), atol=1.5, raise_exception=False)
    assert not gradcheck(WrongSquare.apply, (x,), atol=0.5, rtol=0.0, raise_exception=False)


def test_gradcheck_requires_an_input_with_grad():
    with pytest.raises(ValueError):
        gradcheck(lambda t: t * 2, (mg.tensor(np.array([1.0])),))


def test_gradcheck_warns_on_float32():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="float64"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2, raise_exception=False)


@pytest.mark.parametrize("fn", [
    lambda x, w: (x @ w).tanh(),
    lambda x, w: (x @ w).exp().sum(1),
    lambda x, w: (x.tanh() @ w.exp()).tanh() * x.sum(),
])
def test_gradgradcheck_passes_on_tanh_exp_matmul(fn):
    rng = np.random.default_rng(3)
    x = leaf(rng.standard_normal((2, 3)) * 0.5)
    w = leaf(rng.standard_normal((3, 4)) * 0.5)
    assert gradcheck(fn, (x, w))
    assert gradgradcheck(fn, (x, w))


def test_gradgradcheck_fails_on_first_order_only_backward():
    x = leaf([0.5, -1.0, 2.0])
    assert gradcheck(NumpySquare.apply, (x,))  # right to first order
    with pytest.raises(GradcheckError):
        gradgradcheck(NumpySquare.apply, (x,))
    assert gradgradcheck(NumpySquare.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_with_given_grad_outputs():
    x = leaf([0.3, 0.4])
    go = leaf([1.0, -2.0])
    assert gradgradcheck(lambda t: t.sin() * t, (x,), grad_outputs=(go,))
