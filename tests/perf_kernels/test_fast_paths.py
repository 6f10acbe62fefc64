"""Fast paths of hot ops give the general path's numbers, bit for bit."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_common_case_equals_the_general_path(reduction, dtype):
    # class indices, nothing ignored, no weights or smoothing: the fast path. A weight of ones
    # takes the general path through the same arithmetic, so the results must agree exactly.
    # (The NumPy fast path: with numba the common case runs kernels/loss.py, tested against this
    # path in test_small_kernels.py.)
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((37, 11)) * 3).astype(dtype)
    y = mg.tensor(rng.integers(0, 11, 37))
    out = []
    old = kernels.set_enabled(False)
    try:
        for weight in (None, mg.ones(11, dtype=dtype)):
            zt = mg.tensor(z, requires_grad=True)
            loss = F.cross_entropy(zt, y, weight=weight, reduction=reduction)
            g = mg.ones_like(loss) if reduction == "none" else None
            loss.backward(g)
            out.append((loss.detach().numpy(), zt.grad.numpy()))
    finally:
        kernels.set_enabled(old)
    (l0, g0), (l1, g1) = out
    np.testing.assert_array_equal(l0, l1)
    np.testing.assert_array_equal(g0, g1)
    assert l0.dtype == dtype and g0.dtype == dtype


def test_cross_entropy_common_case_second_derivative_and_ignored_targets():
    rng = np.random.default_rng(1)
    z = mg.tensor(rng.standard_normal((6, 4)), requires_grad=True)
    y = mg.tensor([0, 3, 1, 2, 2, 0])
    assert mg.autograd.gradcheck(lambda t: F.cross_entropy(t, y), (z,))
    assert mg.autograd.gradgradcheck(lambda t: F.cross_entropy(t, y), (z,))
    # a target equal to ignore_index takes the general path: the ignored row has no gradient
    yi = mg.tensor([0, -100, 1, 2, 2, 0])
    F.cross_entropy(z, yi).backward()
    assert (z.grad.numpy()[1] == 0).all() and (z.grad.numpy()[0] != 0).any()


@pytest.mark.parametrize("shape,dim,keepdim", [((4,), None, False), ((3, 5), 1, False), ((3, 5), 0, True),
                                               ((2, 3, 4), (0, 2), False), ((), None, False)])
def test_sum_backward_broadcasts_back(shape, dim, keepdim):
    x = mg.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape), requires_grad=True)
    s = x.sum() if dim is None else x.sum(dim, keepdim=keepdim)
    s.backward(mg.ones_like(s) * 2.0)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(shape, 2.0))
    assert mg.autograd.gradgradcheck(lambda t: (t.sum() if dim is None else t.sum(dim, keepdim=keepdim)) ** 2, (x,))


@pytest.mark.parametrize("shapes", [((10, 1), (1, 3136)), ((3, 4, 1), (2, 1, 1, 5)), ((1, 1), (1, 1)),
                                    ((5, 2), (2, 3))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_inner_dimension_one_is_the_outer_product(shapes, dtype):
    # an inner dimension of 1 (a batch-1 weight gradient, an outer product) runs as one broadcast
    # multiply: the same numbers and shape as np.matmul, forward and through linear's backward
    from minigrad.ops.linalg import _addmm_backward, _matmul
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    got = _matmul(a, b)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.matmul(a, b))
    g, x, w = (rng.standard_normal(s).astype(dtype) for s in ((1, 10), (1, 30), (10, 30)))
    dx, dw, db = _addmm_backward(g, x, w, (True, True, True))
    np.testing.assert_array_equal(dw, g.T @ x)
    np.testing.assert_array_equal(db, g.sum(0))
    assert dw.flags.c_contiguous


@pytest.mark.parametrize("cin,batch", [(1, 1), (32, 1), (1, 8), (32, 8)])  # bias in the GEMM or not; L <= or > 4096
def test_conv2d_weight_gradient_is_taken_as_grad_without_a_copy(cin, batch):
    # ConvolutionBackward returns the weight gradient as an array of the weight's shape that owns
    # its memory, so the engine keeps it as w.grad as it is (a reshaped view would be copied)
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((batch, cin, 28, 28)).astype(np.float32))
    conv = mg.nn.Conv2d(cin, 4, 3, padding=1)
    gw, = mg.autograd.grad(conv(x).sum(), [conv.weight])  # the op's own result (backward() may copy it)
    assert gw.numpy().base is None and gw.numpy().flags.c_contiguous
    conv(x).sum().backward()
    g = conv.weight.grad.numpy()
    assert g.shape == (4, cin, 3, 3)
    np.testing.assert_array_equal(g, gw.numpy())
    # the same numbers as the gradient computed from the definition: sum over windows of x
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.stack([xp[:, :, i:i + 28, j:j + 28].sum(axis=(0, 2, 3)) for i in range(3) for j in range(3)], -1)
    np.testing.assert_allclose(g, np.broadcast_to(want.reshape(1, cin, 3, 3), g.shape), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(conv.bias.grad.numpy(), np.full(4, batch * 28 * 28, np.float32))


@pytest.mark.parametrize("B,M,K,N,chunks", [(16, 32, 3136, 16, 2), (3, 16, 12544, 8, 2),
                                            (2, 16, 12544, 16, 4), (2, 7, 20001, 5, 1),
                                            (2, 40, 1000, 30, 1), (2, 64, 3136, 32, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_split_k_sums_the_chunks_to_the_product(B, M, K, N, chunks, dtype, monkeypatch):
    """The Winograd weight gradient's a @ b over chunks of the inner dimension: the product (up to
    the order of the sums), in as many chunks as the size rule gives (7x5 over 20001 and 40x30 over
    1000 are small enough for one call; 64x32's result too big to be worth chunking)."""
    from minigrad.ops import _conv2d as C
    rng = np.random.default_rng(K)
    a = rng.standard_normal((B, M, K)).astype(dtype)
    b = rng.standard_normal((B, N, K)).astype(dtype).transpose(0, 2, 1)  # the transposed V it gets
    calls = []
    real = np.matmul
    monkeypatch.setattr(C.np, "matmul", lambda *args, **kw: calls.append(1) or real(*args, **kw))
    got = C._matmul_split_k(a, b)
    monkeypatch.undo()
    assert len(calls) == chunks and got.shape == (B, M, N) and got.dtype == dtype
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(K))
