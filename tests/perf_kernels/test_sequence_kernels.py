"""The fast paths of issue 36 against their plain paths, to the bit: GELU's one-loop forward and
backward (numba) against nn.functional's composite and the NumPy path, and the one-op attention
against the composite it replaced."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.ops.activation import _gelu_grad_np, _gelu_np


def _plain(fn, *args):
    old = kernels.set_enabled(False)
    try:
        return fn(*args)
    finally:
        kernels.set_enabled(old)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_loops_give_the_numpy_paths_bits(dtype):
    """float64: the composite's bits (erf from the C library); float32: erf as PyTorch's CPU kernel
    (Abramowitz-Stegun 7.1.26), the loop and the NumPy form bit for bit, within 5e-7 of the exact
    GELU (PyTorch's float32 gelu: 3.7e-7 on these samples)."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(20_000) * 3).astype(dtype)
    x[:4] = [0.0, -0.0, 9.0, -9.0]
    g = rng.standard_normal(x.size).astype(dtype)
    assert np.array_equal(_gelu_np(x), _plain(_gelu_np, x))
    assert np.array_equal(_gelu_grad_np(g, x), _plain(_gelu_grad_np, g, x))
    xt = mg.tensor(x)
    composite = (xt * 0.5 * (1.0 + mg.erf(xt * 0.7071067811865476))).numpy()
    if dtype == np.float64:
        assert np.array_equal(_gelu_np(x), composite)
    else:
        exact = mg.tensor(x.astype(np.float64))
        exact = (exact * 0.5 * (1.0 + mg.erf(exact * 0.7071067811865476))).numpy()
        assert np.abs(_gelu_np(x) - exact).max() <= 5e-7


def test_gelu_op_gradients_match_the_composites():
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal((8, 16)), requires_grad=True)
    y = F.gelu(x)
    assert type(y.grad_fn).__name__ == "Gelu"
    (gx,) = mg.autograd.grad(y.sum(), x, create_graph=True)
    xc = x.detach().requires_grad_()
    yc = xc * 0.5 * (1.0 + mg.erf(xc * 0.7071067811865476))
    (gc,) = mg.autograd.grad(yc.sum(), xc, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), gc.detach().numpy(), rtol=1e-14, atol=1e-15)
    (hx,) = mg.autograd.grad(gx.sum(), x)
    (hc,) = mg.autograd.grad(gc.sum(), xc)
    np.testing.assert_allclose(hx.numpy(), hc.numpy(), rtol=1e-12, atol=1e-14)


def _composite_sdpa(q, k, v, mask=None, causal=False):
    s = (q @ k.mT) * (1.0 / np.sqrt(q.shape[-1]))
    if causal:
        s = s.masked_fill(mg.tensor(~np.tri(s.shape[-2], s.shape[-1], dtype=bool)), float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == mg.bool_ else s + mask
    dead = (s == float("-inf")).all(-1, keepdim=True)
    return s.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0) @ v


@pytest.mark.parametrize("case", ["plain", "causal", "bool_dead_row", "float"])
def test_attention_op_is_the_composites_bits(case):
    rng = np.random.default_rng(2)
    q, k, v = (mg.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((2, 3, 6, 4), (2, 3, 6, 4), (2, 3, 6, 5)))
    mask = None
    if case == "bool_dead_row":
        m = rng.random((6, 6)) > 0.4
        m[2] = False
        mask = mg.tensor(m)
    elif case == "float":
        mask = mg.tensor(rng.standard_normal((6, 6)).astype(np.float32))
    causal = case == "causal"
    got = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    want = _composite_sdpa(q, k, v, mask, causal)
    assert type(got.grad_fn).__name__ == "ScaledDotProductAttention" or got.grad_fn is None
    assert np.array_equal(got.numpy(), want.numpy())


def _ulps(a, b):
    return (np.abs(a - b) / np.spacing(np.maximum(np.abs(b), 1).astype(b.dtype))).max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_row_kernel_against_the_numpy_path(dtype):
    """The row kernel (statistics in float64) against the NumPy path: out and dx within 16 ulp
    (measured: 8 and 4), the weight and bias gradients (sums over 2,112 rows; the kernel sums in
    float64, NumPy pairwise in the dtype) within 1e-5 (float32) / 1e-12 (float64) relative."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((64, 33, 128)) * 2 + 1).astype(dtype)
    w, b = rng.standard_normal(128).astype(dtype), rng.standard_normal(128).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)

    def run():
        X, W, B = (mg.tensor(a, requires_grad=True) for a in (x, w, b))
        out = F.layer_norm(X, (128,), W, B)
        out.backward(mg.tensor(g))
        return out.detach().numpy(), X.grad.numpy(), W.grad.numpy(), B.grad.numpy()
    fast, plain = run(), _plain(run)
    assert _ulps(fast[0], plain[0]) <= 16 and _ulps(fast[1], plain[1]) <= 16
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for a, p in zip(fast[2:], plain[2:]):
        assert np.abs(a - p).max() <= rtol * np.abs(p).max()
