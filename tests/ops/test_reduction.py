"""Reductions: dim int/tuple/None/negative and keepdim, forward vs NumPy, gradcheck/gradgradcheck,
ties, zeros and stability at the edges PyTorch defines."""
from functools import partial

import numpy as np
import pytest

import minigrad as mg
from helpers import check_op, grads, ids, leaf, nonzero, sample

# forward vs NumPy, gradcheck/gradgradcheck of sum/mean/prod/amax/amin/logsumexp/norm/var/std over dims and keepdim: tests/ops/test_ops.py, from the registry
# (minigrad/testing/opinfo/reduction.py)


from minigrad.testing.opinfo import REDUCTION_DIMS as DIMS  # noqa: E402

DIM_IDS = [f"{s}-dim{d}".replace(" ", "") for s, d in DIMS]


@pytest.mark.parametrize("shape,dim", [d for d in DIMS if isinstance(d[1], int)],
                         ids=[i for i, d in zip(DIM_IDS, DIMS) if isinstance(d[1], int)])
@pytest.mark.parametrize("keepdim", [False, True], ids=["", "keepdim"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim_returns_values_indices(op, shape, dim, keepdim):
    npval, nparg = (np.max, np.argmax) if op == "max" else (np.min, np.argmin)

    def fn(x):
        r = getattr(x, op)(dim, keepdim=keepdim)
        return r.values

    out = check_op(fn, lambda x: npval(x, axis=dim, keepdims=keepdim), shape)
    x = leaf(sample(shape, np.random.default_rng(3)))
    r = getattr(mg, op)(x, dim=dim, keepdim=keepdim)
    assert type(r).__name__ in ("values_indices", "max", "min", "return_types") or hasattr(r, "_fields")
    assert r._fields == ("values", "indices")
    values, indices = r
    assert values is r.values and indices is r.indices and r[0] is values
    assert indices.dtype == mg.int64 and not indices.requires_grad
    np.testing.assert_array_equal(indices.data.numpy(), nparg(x.data.numpy(), axis=dim, keepdims=keepdim))
    assert values.shape == indices.shape == out.shape


def test_max_dim_gradient_goes_to_returned_index():
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    v, i = x.max(dim=1)
    np.testing.assert_array_equal(v.data.numpy(), [3.0, 2.0])
    v.sum().backward()
    expected = np.zeros((2, 3))
    expected[np.arange(2), i.data.numpy()] = 1.0
    np.testing.assert_array_equal(x.grad.data.numpy(), expected)
    np.testing.assert_array_equal(i.data.numpy(), [1, 0])  # first occurrence, as PyTorch on CPU


def test_min_dim_gradient_goes_to_returned_index():
    x = leaf([[1.0, 0.0, 0.0, 5.0]])
    v, i = x.min(-1, keepdim=True)
    assert v.shape == (1, 1) and i.shape == (1, 1)
    v.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[0.0, 1.0, 0.0, 0.0]])


@pytest.mark.parametrize("fn", [lambda x: x.max(), lambda x: mg.amax(x), lambda x: x.amax(dim=(0, 1))],
                         ids=["max", "amax", "amax_tuple"])
def test_max_amax_ties_share_evenly(fn):
    x = leaf([[1.0, 3.0], [3.0, 3.0]])
    out = fn(x)
    assert out.shape == () and out.item() == 3.0
    out.backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [[0.0, 1 / 3], [1 / 3, 1 / 3]])


def test_min_amin_ties_share_evenly():
    x = leaf([0.0, 5.0, 0.0])
    x.min().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [0.5, 0.0, 0.5])
    x.grad = None
    x.amin(0, keepdim=True).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [0.5, 0.0, 0.5])


def test_amax_ties_per_row():
    x = leaf([[2.0, 2.0, 1.0], [0.0, 1.0, 1.0]])
    (x.amax(1) * mg.tensor([1.0, 10.0], dtype=mg.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[0.5, 0.5, 0.0], [0.0, 5.0, 5.0]])


def test_max_of_two_tensors():
    x, y = leaf([1.0, 5.0]), leaf([2.0, 2.0])
    np.testing.assert_array_equal(mg.max(x, y).data.numpy(), [2.0, 5.0])
    np.testing.assert_array_equal(mg.min(x, y).data.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False)])
def test_argmax_argmin(op, dim, keepdim):
    x = mg.tensor(sample((3, 4), np.random.default_rng(0)))
    out = getattr(x, op)(dim, keepdim=keepdim) if dim is not None else getattr(mg, op)(x)
    ref = getattr(np, op)(x.data.numpy(), axis=dim, keepdims=keepdim) if dim is not None else getattr(np, op)(x.data.numpy())
    assert out.dtype == mg.int64 and not out.requires_grad
    np.testing.assert_array_equal(out.data.numpy(), ref)
    assert out.shape == np.shape(ref)


def test_argmax_flat_index_and_ties_first():
    x = mg.tensor([[1.0, 7.0], [7.0, 0.0]])
    assert mg.argmax(x).item() == 1
    np.testing.assert_array_equal(x.argmax(0).data.numpy(), [1, 0])


# -- var / std: unbiased and correction ------------------------------------------------------------
@pytest.mark.parametrize("kwargs,ddof", [({}, 1), ({"unbiased": True}, 1), ({"unbiased": False}, 0),
                                          ({"correction": 0}, 0), ({"correction": 1}, 1),
                                          ({"correction": 2}, 2)], ids=str)
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_correction(op, kwargs, ddof):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 5))
    x = leaf(a)
    out = getattr(x, op)(1, **kwargs)
    np.testing.assert_allclose(out.data.numpy(), getattr(np, op)(a, axis=1, ddof=ddof))
    out_all = getattr(mg, op)(x, **kwargs)
    np.testing.assert_allclose(out_all.data.numpy(), getattr(np, op)(a, ddof=ddof))
    assert out_all.shape == ()
    check_op(lambda t: getattr(t, op)(1, **kwargs), lambda t: getattr(np, op)(t, axis=1, ddof=ddof), (3, 5))


def test_var_dim_positional_then_unbiased_positional():
    a = np.arange(6.0).reshape(2, 3)
    x = mg.tensor(a)
    np.testing.assert_allclose(x.var(0, False).data.numpy(), np.var(a, 0))
    np.testing.assert_allclose(x.var(0, True, True).data.numpy(), np.var(a, 0, ddof=1, keepdims=True))


# -- prod with zeros -------------------------------------------------------------------------------
@pytest.mark.parametrize("values,expected", [
    ([2.0, 3.0, 4.0], [12.0, 8.0, 6.0]),
    ([2.0, 0.0, 4.0], [0.0, 8.0, 0.0]),
    ([0.0, 0.0, 4.0], [0.0, 0.0, 0.0]),
])
def test_prod_grad_with_zeros_exact(values, expected):
    out, (g,) = grads(lambda x: x.prod(), values)
    assert out.item() == np.prod(values)
    np.testing.assert_array_equal(g, expected)


def test_prod_grad_with_zeros_along_dim():
    a = np.array([[1.0, 0.0, 3.0], [2.0, 3.0, 4.0]])
    _, (g,) = grads(lambda x: x.prod(1), a)
    np.testing.assert_array_equal(g, [[0.0, 3.0, 0.0], [12.0, 8.0, 6.0]])
    x = leaf(a)
    assert mg.autograd.gradcheck(lambda t: t.prod(0), (x,))


def test_sum_mean_dtypes():
    assert mg.tensor([True, True, False]).sum().dtype == mg.int64
    assert mg.tensor([True, True, False]).sum().item() == 2
    assert mg.tensor([1, 2], dtype=mg.int32).sum().dtype == mg.int64
    assert mg.ones(3).sum().dtype == mg.float32
    assert mg.tensor([1, 2]).sum(dtype=mg.float64).dtype == mg.float64
    with pytest.raises(RuntimeError, match="mean"):
        mg.tensor([1, 2]).mean()


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "logsumexp", "norm", "prod", "cumsum"])
def test_dim_out_of_range_raises(op):
    x = mg.ones(2, 3)
    with pytest.raises(IndexError):
        if op == "norm":
            x.norm(dim=2)
        else:
            getattr(x, op)(2)


def test_reduction_over_zero_d_dims():
    x = leaf(2.0)
    for d in (0, -1, None):
        out = x.sum(d) if d is not None else x.sum()
        assert out.shape == () and out.item() == 2.0
    assert x.sum(0, keepdim=True).shape == ()


def test_amax_empty_raises():
    with pytest.raises(RuntimeError, match="numel"):
        mg.zeros(0).amax()


# -- norm at zero ----------------------------------------------------------------------------------
@pytest.mark.parametrize("p", ["fro", 2, 1], ids=str)
def test_norm_grad_zero_at_zero_not_nan(p):
    _, (g,) = grads(lambda x: x.norm(p), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    # only the all-zero row has a zero norm
    _, (g,) = grads(lambda x: x.norm(p, dim=1), [[0.0, 0.0], [3.0, 4.0]])
    assert np.isfinite(g).all()
    np.testing.assert_array_equal(g[0], [0.0, 0.0])
    if p != 1:
        np.testing.assert_allclose(g[1], [0.6, 0.8])


@pytest.mark.parametrize("p", [3, 1.5, 0.5, float("inf"), float("-inf")], ids=str)
def test_general_p_norm_grad_zero_at_zero(p):
    # PyTorch: 0 where the norm is 0, and 0 at zero elements for p < 1 (not nan/inf)
    _, (g,) = grads(lambda x: x.norm(p), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    _, (g,) = grads(lambda x: x.norm(p), [0.0, 1.0, -2.0])
    assert np.isfinite(g).all() and g[0] == 0.0


@pytest.mark.parametrize("p,expected", [(3, [0.0, 0.23112042, -0.92448169]), (0.5, [0.0, 2.41421356, -1.70710678]),
                                        (1.5, [0.0, 0.63923401, -0.90401340])], ids=str)
def test_p_norm_grad_values_match_pytorch(p, expected):
    _, (g,) = grads(lambda x: x.norm(p), [0.0, 1.0, -2.0])
    np.testing.assert_allclose(g, expected, rtol=1e-6)


def test_norm_inf_ties_share():
    _, (g,) = grads(lambda x: x.norm(float("inf")), [1.0, -1.0, 0.5])
    np.testing.assert_array_equal(g, [0.5, -0.5, 0.0])


@pytest.mark.parametrize("kwargs", [{}, {"unbiased": False}], ids=str)
def test_std_of_constant_has_zero_grad_not_nan(kwargs):
    # PyTorch's std backward masks result == 0 to 0
    _, (g,) = grads(lambda x: x.std(**kwargs), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])
    _, (g,) = grads(lambda x: x.std(dim=1, **kwargs), [[1.0, 1.0], [1.0, 3.0]])
    assert np.isfinite(g).all()
    np.testing.assert_array_equal(g[0], [0.0, 0.0])


def test_norm_second_order_nonzero():
    x = leaf(nonzero((2, 3), np.random.default_rng(2)))
    assert mg.autograd.gradgradcheck(lambda t: t.norm(), (x,))
    assert mg.autograd.gradgradcheck(lambda t: t.norm(dim=1, keepdim=True), (x,))


def test_norm_p0_counts_nonzeros():
    x = mg.tensor([0.0, 2.0, -3.0, 0.0])
    assert x.norm(0).item() == 2.0


def test_norm_p0_is_differentiable_with_a_zero_gradient_as_pytorch():
    """PyTorch's 0-norm has a grad_fn and a zero gradient; ours had none, so backward through
    norm(x, 0), vector_norm(x, 0) or pairwise_distance(p=0) raised (no tensor requires grad)."""
    x = mg.tensor([[0.0, 1.0, -2.0], [0.0, 0.0, np.inf]], requires_grad=True)
    for fn in (lambda t: t.norm(0, 1), lambda t: mg.linalg.vector_norm(t, 0),
               lambda t: mg.nn.functional.pairwise_distance(t, 2 * t, p=0)):
        out = fn(x)
        assert out.requires_grad and out.dtype == mg.float32
        out.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 3)))
        x.grad = None
    np.testing.assert_array_equal(x.norm(0, 1).detach().numpy(), [2.0, 1.0])


# -- softmax, log_softmax, logsumexp -----------------------------------------------------------------
def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


SOFTMAX_CASES = [((3,), 0), ((3,), -1), ((2, 3), 1), ((2, 3), 0), ((2, 3, 4), -2), ((2, 3, 4), 2)]


@pytest.mark.parametrize("shape,dim", SOFTMAX_CASES, ids=ids(SOFTMAX_CASES))
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "F.softmax", "F.log_softmax"])
def test_softmax_family(op, shape, dim):
    if op.startswith("F."):
        import minigrad.nn.functional as F
        f = getattr(F, op[2:])
    else:
        f = getattr(mg, op)
    ref = (lambda x: _softmax(x, dim)) if op.endswith("softmax") and "log" not in op else \
        (lambda x: np.log(_softmax(x, dim)))
    check_op(lambda x: f(x, dim=dim), ref, shape, samplers=partial(sample, low=-3, high=3))
    x = leaf(sample(shape, np.random.default_rng(1)))
    np.testing.assert_allclose(getattr(x, op.replace("F.", ""))(dim).data.numpy(), ref(x.data.numpy()))


def test_softmax_rows_sum_to_one():
    x = mg.randn(4, 5)
    np.testing.assert_allclose(mg.softmax(x, 1).sum(1).data.numpy(), 1.0, rtol=1e-6)


@pytest.mark.parametrize("dtype", [mg.float32, mg.float64], ids=str)
def test_softmax_log_softmax_stable_for_huge_logits(dtype):
    logits = [[1e4, 0.0, -1e4], [1e4, 1e4, 1e4 - 1.0]]
    x = mg.tensor(logits, dtype=dtype, requires_grad=True)
    s = mg.softmax(x, dim=1)
    ls = mg.log_softmax(x, dim=1)
    lse = mg.logsumexp(x, dim=1)
    for t in (s, ls, lse):
        assert np.isfinite(t.data.numpy()).all() and t.dtype == dtype
    np.testing.assert_allclose(s.data.numpy()[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(ls.data.numpy()[0], [0.0, -1e4, -2e4], rtol=1e-6)
    np.testing.assert_allclose(lse.data.numpy(), [1e4, 1e4 + np.log(2 + np.exp(-1.0))], rtol=1e-6)
    w = mg.tensor(np.arange(6.0).reshape(2, 3), dtype=dtype)
    ((s * w).sum() + (ls * w).sum() + lse.sum()).backward()
    assert np.isfinite(x.grad.data.numpy()).all()


def test_logsumexp_neg_inf_row():
    x = mg.tensor([[-float("inf"), -float("inf")], [0.0, 0.0]])
    np.testing.assert_allclose(mg.logsumexp(x, 1).data.numpy(), [-np.inf, np.log(2.0)])


def test_softmax_needs_dim():
    with pytest.raises(TypeError):
        mg.softmax(mg.ones(3), None)


# -- cumsum ----------------------------------------------------------------------------------------
CUMSUM_CASES = [((3,), 0), ((3,), -1), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), -2)]


@pytest.mark.parametrize("shape,dim", CUMSUM_CASES, ids=ids(CUMSUM_CASES))
def test_cumsum(shape, dim):
    check_op(lambda x: x.cumsum(dim), lambda x: np.cumsum(x, axis=dim), shape)
    check_op(lambda x: mg.cumsum(x, dim=dim), lambda x: np.cumsum(x, axis=dim), shape)


def test_cumsum_zero_d():
    x = leaf(3.0)
    out = x.cumsum(0)
    assert out.shape == () and out.item() == 3.0
    out.backward()
    assert x.grad.item() == 1.0
