"""Parity with PyTorch (optional): forward values and gradients of a broad sample of ops in float64,
including the kinks and ties where the two must agree by convention. Skips when torch is absent."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minigrad as mg  # noqa: E402

R = np.random.default_rng(0)


def rnd(*shape):
    return R.uniform(-2, 2, size=shape)


def pos(*shape):
    return R.uniform(0.3, 2, size=shape)


# name: (fn(L, *tensors) with L the library module (mg or torch), list of input arrays)
CASES = {
    # elementwise
    "add_bcast": (lambda L, x, y: x + y, [rnd(2, 1), rnd(1, 3)]),
    "sub_scalar_left": (lambda L, x: 2.5 - x, [rnd(2, 3)]),
    "mul_bcast": (lambda L, x, y: x * y, [rnd(4, 2, 3), rnd(3)]),
    "div_bcast": (lambda L, x, y: x / y, [rnd(5, 1, 4), pos(1, 1, 4)]),
    "rdiv": (lambda L, x: 3.0 / x, [pos(3)]),
    "pow_tensor": (lambda L, x, y: x ** y, [pos(2, 3), rnd(3)]),
    "pow_zero_base": (lambda L, x, y: x ** y, [np.array([0.0, 0.0, 0.0, 2.0]), np.array([0.0, 1.0, 2.0, 3.0])]),
    "rpow": (lambda L, x: 2.0 ** x, [rnd(3)]),
    "pow_scalar_at_zero": (lambda L, x: x ** 2 + x ** 3, [np.array([0.0, 1.0, -1.5])]),
    "exp_log": (lambda L, x: L.log(L.exp(x) + 1.0), [rnd(2, 3)]),
    "log1p_expm1": (lambda L, x: L.log1p(x.abs()) + L.expm1(x), [rnd(2, 3)]),
    "sqrt_rsqrt": (lambda L, x: L.sqrt(x) + L.rsqrt(x) + x.reciprocal(), [pos(2, 3)]),
    "trig": (lambda L, x: L.sin(x) * L.cos(x) + L.tan(x * 0.5), [rnd(2, 3)]),
    "tanh_sigmoid": (lambda L, x: L.tanh(x) + L.sigmoid(x), [rnd(2, 3)]),
    "sigmoid_saturated": (lambda L, x: L.sigmoid(x), [np.array([-800.0, -30.0, 0.0, 30.0, 800.0])]),
    "erf": (lambda L, x: L.erf(x), [rnd(2, 3)]),
    "relu_at_zero": (lambda L, x: L.relu(x), [np.array([-1.0, 0.0, 2.0])]),
    "abs_at_zero": (lambda L, x: L.abs(x), [np.array([-1.0, 0.0, 2.0])]),
    "sign_floor_ceil_round": (lambda L, x: L.sign(x) + L.floor(x) + L.ceil(x) + L.round(x),
                              [np.array([-1.3, 0.0, 0.4, 2.6])]),
    "clamp_at_bounds": (lambda L, x: L.clamp(x, -1.0, 1.0), [np.array([-2.0, -1.0, 0.0, 1.0, 2.0])]),
    "clamp_min_at_bound": (lambda L, x: x.clamp(min=0.0), [np.array([-1.0, 0.0, 1.0])]),
    "clamp_tensor_bounds": (lambda L, x, lo, hi: L.clamp(x, lo, hi),
                            [np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), np.full(5, -1.0), np.full(5, 1.0)]),
    "maximum_ties": (lambda L, x, y: L.maximum(x, y), [np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0])]),
    "minimum_ties_bcast": (lambda L, x, y: L.minimum(x, y), [np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([1.0])]),
    "where": (lambda L, x, y: L.where(x > 0, x, y), [rnd(2, 3), rnd(3)]),
    # reductions
    "sum_dims": (lambda L, x: x.sum((0, 2)) + x.sum(-1, keepdim=True).sum(), [rnd(2, 3, 4)]),
    "mean_dims": (lambda L, x: x.mean(1, keepdim=True) * x.mean(), [rnd(2, 3)]),
    "var_unbiased": (lambda L, x: x.var(1) + x.var(0, unbiased=False).sum(), [rnd(3, 4)]),
    "var_correction": (lambda L, x: L.var(x, 1, correction=2), [rnd(3, 4)]),
    "std": (lambda L, x: x.std(0) + x.std(), [rnd(3, 4)]),
    "std_constant": (lambda L, x: x.std(), [np.array([2.0, 2.0, 2.0])]),
    "prod_zeros": (lambda L, x: x.prod(1), [np.array([[1.0, 0.0, 3.0], [2.0, 3.0, 4.0], [0.0, 0.0, 1.0]])]),
    "prod_all": (lambda L, x: x.prod(), [rnd(2, 3)]),
    "max_ties": (lambda L, x: x.max(), [np.array([[1.0, 3.0], [3.0, 3.0]])]),
    "min_ties": (lambda L, x: x.min(), [np.array([0.0, 5.0, 0.0])]),
    "amax_ties_dim": (lambda L, x: L.amax(x, 1), [np.array([[2.0, 2.0, 1.0], [0.0, 1.0, 1.0]])]),
    "amin_dims": (lambda L, x: L.amin(x, (0, 1)), [rnd(2, 3, 2)]),
    "max_dim_values": (lambda L, x: x.max(1).values, [rnd(3, 4)]),
    "max_dim_keepdim": (lambda L, x: x.max(0, keepdim=True)[0], [rnd(3, 4)]),
    "min_dim_values": (lambda L, x: x.min(-1).values, [rnd(3, 4)]),
    "logsumexp": (lambda L, x: L.logsumexp(x, 1), [rnd(3, 4)]),
    "logsumexp_huge": (lambda L, x: L.logsumexp(x, 1), [np.array([[1e4, 0.0, -1e4], [1e4, 1e4, 1e4]])]),
    "norm_fro": (lambda L, x: x.norm(), [rnd(2, 3)]),
    "norm_dim": (lambda L, x: x.norm(dim=1), [np.array([[0.0, 0.0], [3.0, 4.0]])]),
    "norm_zero": (lambda L, x: x.norm(), [np.zeros(3)]),
    "norm_p1_zero": (lambda L, x: x.norm(1), [np.array([0.0, 1.0, -2.0])]),
    "norm_p3_zero": (lambda L, x: x.norm(3), [np.array([0.0, 1.0, -2.0])]),
    "norm_p_half": (lambda L, x: x.norm(0.5, dim=1), [np.array([[0.0, 1.0], [0.0, 0.0]])]),
    "norm_inf_ties": (lambda L, x: x.norm(float("inf")), [np.array([1.0, -1.0, 0.5])]),
    "cumsum": (lambda L, x: x.cumsum(1) + L.cumsum(x, 0), [rnd(2, 3)]),
    "softmax": (lambda L, x: L.softmax(x, 1), [rnd(3, 4)]),
    "log_softmax": (lambda L, x: L.log_softmax(x, 0), [rnd(3, 4)]),
    "softmax_huge": (lambda L, x: L.softmax(x, -1) + L.log_softmax(x, -1),
                     [np.array([[1e4, 0.0, -1e4], [1e4, 1e4, 1e4 - 1.0]])]),
    # shape
    "reshape_view": (lambda L, x: x.reshape(3, -1).view(-1), [rnd(2, 3)]),
    "flatten_unflatten": (lambda L, x: x.flatten(1).unflatten(1, (2, 6)), [rnd(2, 3, 4)]),
    "squeeze_unsqueeze": (lambda L, x: x.squeeze(1).unsqueeze(0).unsqueeze(-1), [rnd(2, 1, 3)]),
    "transpose_permute_T": (lambda L, x: x.transpose(0, 2).permute(1, 0, 2).T, [rnd(2, 3, 4)]),
    "expand_repeat": (lambda L, x: x.expand(2, 3, 4) * x.repeat(2, 1, 4), [rnd(3, 1)]),
    "expand_as_broadcast_to": (lambda L, x, y: x.expand_as(y) * y + L.broadcast_to(x, (2, 3, 1)).sum(), [rnd(3, 1), rnd(2, 3, 1)]),
    "flip_narrow": (lambda L, x: x.flip(1).narrow(0, 1, 2), [rnd(3, 4)]),
    "cat_stack": (lambda L, x, y: L.cat([x, y], 1) * L.stack([x, x], 2).sum(2).sum(), [rnd(2, 3), rnd(2, 2)]),
    "split_chunk_unbind": (lambda L, x: x.split([1, 3], 1)[1] * x.chunk(2, 0)[0].sum()
                           + x.unbind(1)[2].unsqueeze(1), [rnd(2, 4)]),
    "split_size": (lambda L, x: L.cat([p * (i + 1.0) for i, p in enumerate(x.split(2, 0))]), [rnd(5, 2)]),
    "tril_triu": (lambda L, x: x.tril(-1) + x.triu(1) * 2.0, [rnd(3, 4)]),
    # indexing
    "getitem_basic": (lambda L, x: x[1:, ::2][..., None] * x[0, -1], [rnd(3, 5)]),
    "getitem_repeated": (lambda L, x: x[[0, 0, 2, 0]], [rnd(3, 2)]),
    "getitem_tensor_idx": (lambda L, x: x[:, L.tensor([3, 1, 3])], [rnd(2, 4)]),
    "getitem_two_arrays": (lambda L, x: x[[0, 1, 0], [2, 2, 2]], [rnd(2, 3)]),
    "getitem_mask": (lambda L, x: x[x > 0] * 2.0, [rnd(3, 4)]),
    "gather": (lambda L, x: x.gather(1, L.tensor([[0, 0, 2], [1, 2, 1]])), [rnd(2, 3)]),
    "scatter_add": (lambda L, x, s: x.scatter_add(0, L.tensor([[1, 1, 0], [1, 0, 1]]), s), [rnd(2, 3), rnd(2, 3)]),
    "index_select": (lambda L, x: x.index_select(0, L.tensor([2, 2, 0])), [rnd(3, 2)]),
    "masked_fill": (lambda L, x: x.masked_fill(x < 0, 0.5), [rnd(3, 4)]),
    "take_along_dim": (lambda L, x: L.take_along_dim(x, L.tensor([[0, 2], [1, 1]]), 1), [rnd(2, 3)]),
    "take_along_dim_flat": (lambda L, x: L.take_along_dim(x, L.tensor([5, 0, 5])), [rnd(2, 3)]),
    # linalg
    "matmul_2d": (lambda L, x, y: x @ y, [rnd(2, 3), rnd(3, 4)]),
    "matmul_vec_batched": (lambda L, x, y: L.matmul(x, y), [rnd(3), rnd(2, 3, 4)]),
    "matmul_batched_vec": (lambda L, x, y: x @ y, [rnd(2, 4, 3), rnd(3)]),
    "matmul_broadcast_batch": (lambda L, x, y: x @ y, [rnd(2, 1, 2, 3), rnd(3, 3, 2)]),
    "matmul_dot": (lambda L, x, y: x @ y, [rnd(3), rnd(3)]),
    "mm_bmm": (lambda L, x, y, z: L.mm(x, y).sum() * L.bmm(z, z.transpose(1, 2)), [rnd(2, 3), rnd(3, 2), rnd(2, 2, 3)]),
    "dot_outer": (lambda L, x, y: L.dot(x, y) * L.outer(x, y), [rnd(3), rnd(3)]),
    "einsum_diag": (lambda L, x: L.einsum("ii->i", x), [rnd(3, 3)]),
    "einsum_sum": (lambda L, x: L.einsum("ij->", x), [rnd(2, 3)]),
    "einsum_bmm": (lambda L, x, y: L.einsum("bij,bjk->bik", x, y), [rnd(2, 2, 3), rnd(2, 3, 4)]),
    "einsum_implicit": (lambda L, x, y: L.einsum("ij,jk", x, y), [rnd(2, 3), rnd(3, 4)]),
    "einsum_trace_outer": (lambda L, x, y: L.einsum("ii,j->j", x, y), [rnd(3, 3), rnd(2)]),
}


def _run(L, fn, arrays, grad_out_seed=1):
    if L is torch:
        xs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    else:
        xs = [mg.tensor(a, dtype=mg.float64, requires_grad=True) for a in arrays]
    out = fn(L, *xs)
    g = np.random.default_rng(grad_out_seed).standard_normal(tuple(out.shape))
    gt = torch.tensor(g) if L is torch else mg.tensor(g, dtype=mg.float64)
    out.backward(gt)
    value = out.detach().numpy()
    return value, [None if x.grad is None else x.grad.detach().numpy() for x in xs]


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_backward_match_torch(name):
    fn, arrays = CASES[name]
    v_mg, g_mg = _run(mg, fn, arrays)
    v_t, g_t = _run(torch, fn, arrays)
    assert v_mg.shape == v_t.shape
    np.testing.assert_allclose(v_mg, v_t, rtol=1e-10, atol=1e-12)
    for i, (a, b) in enumerate(zip(g_mg, g_t)):
        assert (a is None) == (b is None), f"input {i}: gradient presence differs"
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=f"gradient of input {i}")


def test_max_dim_returns_same_indices_as_torch_on_ties():
    a = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0], [5.0, 5.0, 5.0]])
    for op in ("max", "min"):
        r_mg = getattr(mg.tensor(a), op)(1)
        r_t = getattr(torch.tensor(a), op)(1)
        np.testing.assert_array_equal(r_mg.indices.numpy(), r_t.indices.numpy())
        np.testing.assert_array_equal(r_mg.values.numpy(), r_t.values.numpy())
    _, g_mg = _run(mg, lambda L, x: x.max(1).values, [a])
    _, g_t = _run(torch, lambda L, x: x.max(1).values, [a])
    np.testing.assert_array_equal(g_mg[0], g_t[0])


def test_setitem_matches_torch():
    def fn(L, x, v):
        y = x * 1.0
        y[1, ::2] = v
        y[y < -1.0] = 0.0
        return y * y

    arrays = [rnd(3, 4), rnd(2)]
    v_mg, g_mg = _run(mg, fn, arrays)
    v_t, g_t = _run(torch, fn, arrays)
    np.testing.assert_allclose(v_mg, v_t)
    for a, b in zip(g_mg, g_t):
        np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("make", [
    lambda L: L.ones(3, dtype=L.float32) * 2.5,
    lambda L: L.ones(3, dtype=L.float32) + L.ones(3, dtype=L.float64),
    lambda L: L.ones(3, dtype=L.float32) * L.tensor(2.0, dtype=L.float64),
    lambda L: L.tensor([1, 2]) * 3,
    lambda L: L.tensor([1, 2]) / L.tensor([2, 2]),
    lambda L: L.tensor([1, 2]) + L.ones(2),
    lambda L: L.tensor([1, 2]) < 2,
    lambda L: L.ones(2) // 2,
    lambda L: L.tensor([True, False]).sum(),
    lambda L: L.tensor([1, 2], dtype=L.int32).sum(),
    lambda L: L.cat([L.ones(2), L.ones(2, dtype=L.float64)]),
], ids=["f32*float", "f32+f64", "f32*0d_f64", "i64*int", "i64/i64", "i64+f32", "cmp", "floordiv",
        "bool_sum", "int32_sum", "cat"])
def test_dtype_promotion_matches_torch(make):
    out_mg, out_t = make(mg), make(torch)
    assert str(out_mg.dtype) == str(out_t.dtype).replace("torch.", "")
    np.testing.assert_array_equal(np.asarray(out_mg.data.numpy()), out_t.numpy())


def test_int_times_float_promotion_matches_torch():
    out_mg = mg.tensor([1, 2]) * 2.5
    out_t = torch.tensor([1, 2]) * 2.5
    assert str(out_mg.dtype) == str(out_t.dtype).replace("torch.", "")
