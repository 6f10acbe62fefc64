"""Custom ops through mg.autograd.Function: ctx API, multiple outputs, non-tensor args, gradcheck."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function, gradcheck, gradgradcheck


def leaf(data):
    return mg.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


class Exp(Function):
    """out = exp(x);  dx = g * out"""

    @staticmethod
    def forward(ctx, x):
        out = np.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        out, = ctx.saved_tensors
        return g * out


class MulAdd(Function):
    """out = x * y + scale * x;  dx = g * (y + scale), dy = g * x (scale: a Python float)"""

    @staticmethod
    def forward(ctx, x, y, scale):
        ctx.save_for_backward(x, y)
        ctx.scale = scale
        return x * y + scale * x

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        gx = g * (y + ctx.scale) if ctx.needs_input_grad[0] else None
        gy = g * x if ctx.needs_input_grad[1] else None
        return gx, gy, None


class SinCos(Function):
    """(s, c) = (sin x, cos x);  dx = gs * c - gc * s"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x), np.cos(x)

    @staticmethod
    def backward(ctx, gs, gc):
        x, = ctx.saved_tensors
        return gs * x.cos() - gc * x.sin()


class SortWithIndex(Function):
    """(values, indices) = sort(x);  dx = scatter of g back through indices; indices non-differentiable"""

    @staticmethod
    def forward(ctx, x):
        idx = np.argsort(x, kind="stable")
        vals = x[idx]
        ctx.idx = idx
        ctx.mark_non_differentiable(idx)
        return vals, idx

    @staticmethod
    def backward(ctx, g, g_idx):
        inv = np.argsort(ctx.idx)
        return g[mg.tensor(inv)]


class ScaledSum(Function):
    """out = sum(x) * k (k: a Python int; a first-order-only backward written in NumPy)"""

    @staticmethod
    def forward(ctx, x, k):
        ctx.shape = x.shape
        ctx.k = k
        return np.asarray(x.sum() * k)

    @staticmethod
    def backward(ctx, g):
        return mg.Tensor(np.full(ctx.shape, g.data.numpy() * ctx.k)), None


def test_custom_exp_forward_backward():
    x = leaf([0.0, 1.0, -1.0])
    y = Exp.apply(x)
    assert isinstance(y, mg.Tensor) and y.requires_grad
    assert y.grad_fn.name() == "ExpBackward0"
    np.testing.assert_allclose(y.data.numpy(), np.exp(x.data.numpy()))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), np.exp(x.data.numpy()))


def test_custom_exp_gradcheck_and_gradgradcheck():
    x = leaf([0.3, -0.7, 1.1])
    assert gradcheck(Exp.apply, (x,))
    assert gradgradcheck(Exp.apply, (x,))


@pytest.mark.parametrize("shape", [(), (1,)])
def test_saved_output_is_tensor(shape):
    x = leaf(np.full(shape, 0.5))
    y = Exp.apply(x)
    out, = y.grad_fn.saved_tensors
    assert isinstance(out, mg.Tensor)


def test_saved_tensors_are_tensors():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            seen["type"] = type(x)
            return g * 2

    x = leaf([1.0])
    Probe.apply(x).sum().backward()
    assert seen["type"] is mg.Tensor


def test_needs_input_grad_and_non_tensor_args():
    seen = []

    class Probe(MulAdd):
        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return MulAdd.backward(ctx, g)

    x, y = leaf([1.0, 2.0]), mg.tensor(np.array([3.0, 4.0]))
    out = Probe.apply(x, y, 0.5)
    np.testing.assert_allclose(out.data.numpy(), [3.5, 9.0])
    out.sum().backward()
    assert seen == [(True, False, False)]
    np.testing.assert_allclose(x.grad.data.numpy(), [3.5, 4.5])
    assert y.grad is None


def test_muladd_gradcheck_with_python_scalar():
    rng = np.random.default_rng(0)
    x, y = leaf(rng.standard_normal((2, 3))), leaf(rng.standard_normal((2, 3)))
    assert gradcheck(lambda a, b: MulAdd.apply(a, b, 1.5), (x, y))
    assert gradgradcheck(lambda a, b: MulAdd.apply(a, b, 1.5), (x, y))


def test_custom_function_broadcast_grad_summed_by_engine():
    x, y = leaf(np.ones((2, 1))), leaf(np.arange(3.0))
    out = MulAdd.apply(x, y, 2.0)
    assert out.shape == (2, 3)
    out.sum().backward()
    assert x.grad.shape == (2, 1) and y.grad.shape == (3,)
    np.testing.assert_allclose(x.grad.data.numpy(), [[3.0 + 6.0], [3.0 + 6.0]])
    np.testing.assert_allclose(y.grad.data.numpy(), [2.0, 2.0, 2.0])


def test_multiple_outputs():
    x = leaf([0.2, 1.0])
    s, c = SinCos.apply(x)
    assert s.grad_fn is c.grad_fn
    np.testing.assert_allclose(s.data.numpy(), np.sin(x.data.numpy()))
    (s * 2 + c * 3).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), 2 * np.cos(x.data.numpy()) - 3 * np.sin(x.data.numpy()))


def test_multiple_outputs_only_one_used():
    x = leaf([0.2, 1.0])
    s, _ = SinCos.apply(x)
    s.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), np.cos(x.data.numpy()))


def test_multiple_outputs_gradcheck():
    x = leaf([0.2, -1.3, 0.7])
    assert gradcheck(SinCos.apply, (x,))
    assert gradgradcheck(SinCos.apply, (x,))


def test_mark_non_differentiable():
    x = leaf([3.0, 1.0, 2.0])
    vals, idx = SortWithIndex.apply(x)
    assert vals.requires_grad
    assert not idx.requires_grad and idx.grad_fn is None
    np.testing.assert_array_equal(idx.data.numpy(), [1, 2, 0])
    (vals * mg.tensor(np.array([1.0, 10.0, 100.0]))).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [100.0, 1.0, 10.0])


def test_mark_non_differentiable_float_output():
    class WithMask(Function):
        @staticmethod
        def forward(ctx, x):
            mask = (x > 0).astype(x.dtype)
            ctx.mark_non_differentiable(mask)
            ctx.save_for_backward(mask)
            return x * mask, mask

        @staticmethod
        def backward(ctx, g, gm):
            mask, = ctx.saved_tensors
            return g * mask

    x = leaf([-1.0, 2.0])
    y, m = WithMask.apply(x)
    assert y.requires_grad and not m.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [0.0, 1.0])


def test_sort_gradcheck():
    x = leaf([0.3, -1.0, 2.0, 0.9])
    assert gradcheck(lambda t: SortWithIndex.apply(t)[0], (x,))


def test_first_order_numpy_backward_gradcheck():
    x = leaf(np.arange(6.0).reshape(2, 3))
    out = ScaledSum.apply(x, 3)
    assert out.item() == 45.0
    out.backward()
    np.testing.assert_allclose(x.grad.data.numpy(), np.full((2, 3), 3.0))
    assert gradcheck(lambda t: ScaledSum.apply(t, 3), (x,))


def test_apply_without_grad_returns_plain_tensor():
    x = mg.tensor(np.array([1.0, 2.0]))
    y = Exp.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    with mg.no_grad():
        z = Exp.apply(leaf([1.0]))
    assert z.grad_fn is None


def test_ctx_attributes_available_under_no_grad():
    class UsesNeeds(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.flag = bool(ctx.needs_input_grad[0])
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with mg.no_grad():
        y = UsesNeeds.apply(leaf([1.0]))
    np.testing.assert_allclose(y.data.numpy(), [2.0])


def test_backward_returning_wrong_count_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match=r"Bad.*backward returned 1 gradients, expected 2"):
        Bad.apply(leaf([1.0]), leaf([2.0])).sum().backward()


def test_engine_checks_the_backward_of_user_functions_only():
    # a Function defined outside minigrad has its backward's result checked (count, arrays wrapped);
    # minigrad's own ops are trusted (every op's gradient tests cover what they return)
    from minigrad.ops.elementwise import Mul
    from minigrad.ops.linalg import Addmm
    assert Exp._user and ScaledSum._user
    assert not Mul._user and not Addmm._user


def test_saved_tensors_after_free_raise():
    x = leaf([1.0])
    y = Exp.apply(x)
    node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        node.saved_tensors


@pytest.mark.parametrize("shape", [(), (1,)])
def test_custom_function_higher_order(shape):
    x = leaf(np.full(shape, 0.5))
    y = Exp.apply(Exp.apply(x))  # exp(exp(x))
    (g,) = mg.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = mg.autograd.grad(g.sum(), x)
    e = np.exp(0.5)
    assert g.item() == pytest.approx(np.exp(e) * e)
    assert gg.item() == pytest.approx(np.exp(e) * e * (e + 1))
