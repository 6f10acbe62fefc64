"""Linear algebra: matmul (1-D, 2-D, batched broadcasting), mm, bmm, dot, outer, einsum; errors."""
import numpy as np
import pytest

import minigrad as mg
from helpers import check_op, leaf, sample

# forward vs NumPy, gradcheck/gradgradcheck of matmul over 1-D/2-D/batched broadcasting shapes, dot, outer, einsum and linear: tests/ops/test_ops.py, from the registry
# (minigrad/testing/opinfo/linalg.py)


def test_ndarray_on_the_left_defers_to_tensor():
    a = np.arange(6.0).reshape(2, 3)
    y = leaf(np.ones((3, 2)))
    out = a @ y
    assert isinstance(out, mg.Tensor) and out.requires_grad
    np.testing.assert_array_equal(out.data.numpy(), a @ np.ones((3, 2)))
    out.sum().backward()
    np.testing.assert_array_equal(y.grad.data.numpy(), a.sum(0)[:, None].repeat(2, 1))


def test_matmul_values():
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = mg.tensor([[5.0], [6.0]], requires_grad=True)
    out = x @ y
    np.testing.assert_array_equal(out.data.numpy(), [[17.0], [39.0]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[5.0, 6.0], [5.0, 6.0]])
    np.testing.assert_array_equal(y.grad.data.numpy(), [[4.0], [6.0]])


def test_matmul_dtype_promotion():
    assert (mg.ones(2, 3) @ mg.ones(3, dtype=mg.float64)).dtype == mg.float64
    assert (mg.ones(2, 3) @ mg.ones(3)).dtype == mg.float32


def test_matmul_inner_dimension_error_message():
    # RuntimeError, as PyTorch (was ValueError before issue 7)
    with pytest.raises(RuntimeError, match=r"matmul: \(3, 4\) @ \(5, 2\): inner dimensions 4 and 5 differ"):
        mg.ones(3, 4) @ mg.ones(5, 2)
    with pytest.raises(RuntimeError, match=r"matmul: \(3, 4\) @ \(5, 2\): inner dimensions 4 and 5 differ"):
        mg.matmul(mg.ones(3, 4, requires_grad=True), mg.ones(5, 2))
    with pytest.raises(RuntimeError, match=r"matmul: \(3,\) @ \(4,\): inner dimensions 3 and 4 differ"):
        mg.ones(3) @ mg.ones(4)


def test_matmul_batch_and_0d_errors():
    with pytest.raises(RuntimeError, match=r"matmul.*\(2, 3, 4\).*\(5, 4, 2\).*broadcast"):
        mg.ones(2, 3, 4) @ mg.ones(5, 4, 2)
    with pytest.raises(RuntimeError, match="matmul"):
        mg.ones(()) @ mg.ones(3)


def test_mm_bmm():
    check_op(mg.mm, np.matmul, (2, 3), (3, 4))
    check_op(lambda x, y: x.mm(y), np.matmul, (3, 3), (3, 1), gradgrad=False)
    check_op(mg.bmm, np.matmul, (2, 2, 3), (2, 3, 4))
    check_op(lambda x, y: x.bmm(y), np.matmul, (3, 1, 2), (3, 2, 2), gradgrad=False)


@pytest.mark.parametrize("fn,a,b,match", [
    (mg.mm, (3,), (3, 2), "mm"),
    (mg.mm, (2, 3), (4, 2), r"mm: \(2, 3\) @ \(4, 2\): inner dimensions 3 and 4 differ"),
    (mg.bmm, (2, 3), (3, 2), "bmm"),
    (mg.bmm, (2, 2, 3), (3, 3, 2), "bmm"),
    (mg.bmm, (2, 2, 3), (2, 4, 2), "bmm"),
    (mg.dot, (2, 3), (3,), "dot"),
    (mg.dot, (3,), (4,), "dot"),
    (mg.outer, (2, 3), (3,), "outer"),
], ids=["mm_1d", "mm_inner", "bmm_2d", "bmm_batch", "bmm_inner", "dot_2d", "dot_len", "outer_2d"])
def test_linalg_shape_errors(fn, a, b, match):
    with pytest.raises((RuntimeError, ValueError), match=match):
        fn(mg.ones(*a), mg.ones(*b))


def test_einsum_list_operands_and_values():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    d = mg.einsum("ii->i", [x])
    np.testing.assert_array_equal(d.data.numpy(), [1.0, 4.0])
    (d * mg.tensor([1.0, 10.0], dtype=mg.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[1.0, 0.0], [0.0, 10.0]])
    x.grad = None
    mg.einsum("ij->", x).backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), np.ones((2, 2)))


def test_einsum_trace():
    x = leaf(sample((3, 3), np.random.default_rng(0)))
    tr = mg.einsum("ii", x)
    assert tr.shape == ()
    np.testing.assert_allclose(tr.item(), np.trace(x.data.numpy()))
    tr.backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), np.eye(3))


def test_einsum_promotes_dtypes():
    assert mg.einsum("i,i->", mg.ones(3), mg.ones(3, dtype=mg.float64)).dtype == mg.float64


@pytest.mark.parametrize("eq,shapes,match", [
    ("ij,jk->ik", [(2, 3), (4, 2)], "letter"),
    ("ij->i", [(2, 3, 4)], "subscript"),
    ("ij,jk->ik", [(2, 3)], "operands"),
], ids=["size_mismatch", "ndim", "count"])
def test_einsum_errors(eq, shapes, match):
    with pytest.raises(RuntimeError, match=match):  # as PyTorch (ValueError before issue 7)
        mg.einsum(eq, *[mg.ones(*s) for s in shapes])


# -- the fused linear op (x @ w.T + b, one node) -------------------------------------------------
@pytest.mark.parametrize("xshape", [(3,), (4, 3), (2, 4, 3)], ids=["1d", "2d", "batched"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_linear(xshape, bias):
    shapes = [xshape, (5, 3)] + ([(5,)] if bias else [])
    check_op(lambda x, w, *b: mg.ops.linear(x, w, *b),
             lambda x, w, *b: x @ w.T + (b[0] if b else 0), *shapes, gradgrad=True)


def test_linear_weight_grad_is_contiguous_and_owned():
    # float64, so the float64 reference holds to 1e-12: in float32 a column of x that nearly cancels
    # (sum -0.018 of terms ~1) is off by float32 rounding relative to its small sum (seen: 1.2e-5)
    x = mg.randn(8, 3, dtype=mg.float64)
    lin = mg.nn.Linear(3, 4, dtype=mg.float64)
    lin(x).sum().backward()
    assert lin.weight.grad.data.numpy().flags.c_contiguous and lin.weight.grad.data.numpy().base is None
    np.testing.assert_allclose(lin.weight.grad.data.numpy(), np.ones((8, 4)).T @ x.data.numpy(), rtol=1e-12)
    np.testing.assert_allclose(lin.bias.grad.data.numpy(), np.full(4, 8.0))


def test_linear_shape_error_names_the_op():
    with pytest.raises(RuntimeError, match=r"linear: input of shape \(2, 3\)"):  # as PyTorch (issue 7)
        mg.ops.linear(mg.ones(2, 3), mg.ones(4, 5))
