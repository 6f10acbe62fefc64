"""The sequence kernels split over minigrad's pool (issue 38 item 2): attention's scores, softmax and
backward's dz pass (ops/attention.py), GELU's exponential (ops/activation.py) and the 2x2 max
pooling (ops/_pool2d.py, kernels/pool.py) give bitwise the serial results with 1, 2 and 4 threads
(shapes above each kernel's threshold, rows not a multiple of the chunk, causal blocks cutting a
(L, S) plane)."""
import numpy as np
import pytest

import minigrad as mg
from helpers import kernels_enabled
import minigrad.nn.functional as F
from minigrad import _pool, _threads, kernels
from minigrad.ops import attention as A





def _each_threads(fn):
    """fn() serially (the threads not chosen: the pool off), then with 1, 2 and 4 threads."""
    _threads._threads = None
    out = [fn()]
    for n in (1, 2, 4):
        mg.set_num_threads(n)
        out.append(fn())
    return out


def _same(results):
    ref = results[0]
    for r in results[1:]:
        assert len(r) == len(ref)
        for a, b in zip(ref, r):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))   # bitwise (signs of zeros, nan)


def _sdpa_case(dtype, causal, mask_kind, seed=0):
    rng = np.random.default_rng(seed)
    B, H, L, S, D = 2, 3, 130, 100, 8          # 78000 scores: 780 rows, chunks of 328 cut the planes
    assert B * H * L * S >= A._ROWS_MIN and (B * H * L) % _pool.per_chunk(S) != 0
    q = rng.standard_normal((B, H, L, D)).astype(dtype)
    k = rng.standard_normal((B, H, S, D)).astype(dtype)
    v = rng.standard_normal((B, H, S, D)).astype(dtype)
    g = rng.standard_normal((B, H, L, D)).astype(dtype)
    mask = None
    if mask_kind == "bool":
        mask = rng.random((B, 1, L, S)) > 0.3
        mask[0, 0, 5] = False                   # a query with every key masked: zero weights
    elif mask_kind == "float":
        mask = rng.standard_normal((L, S)).astype(dtype)

    def run():
        t = [mg.tensor(a, requires_grad=True) for a in (q, k, v)]
        m = None if mask is None else mg.tensor(mask, requires_grad=mask.dtype != np.bool_)
        y = F.scaled_dot_product_attention(*t, attn_mask=m, is_causal=causal)
        y.backward(mg.tensor(g))
        grads = [a.grad.numpy() for a in t] + ([m.grad.numpy()] if m is not None and m.requires_grad else [])
        return [y.detach().numpy()] + grads
    return run


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("causal,mask_kind", [(True, None), (False, "bool"), (False, "float"), (False, None)])
def test_attention_rows_bitwise_for_any_threads(threads_restored, dtype, causal, mask_kind):
    _same(_each_threads(_sdpa_case(dtype, causal, mask_kind)))


def test_attention_rows_run_on_the_pool(threads_restored, monkeypatch):
    # the split path is taken with two threads (a spy on run_rows), not with the pool off
    calls = _spy_run_rows(monkeypatch)
    run = _sdpa_case(np.float32, True, None)
    _threads._threads = None
    run()
    assert calls == []
    mg.set_num_threads(2)
    run()
    assert calls == [2 * 3 * 130, 2 * 3 * 130]   # forward's scores + softmax pass, backward's dz pass


@pytest.mark.parametrize("use_kernels", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_chunks_bitwise_for_any_threads(threads_restored, monkeypatch, dtype, use_kernels):
    from minigrad.ops import activation as act
    rng = np.random.default_rng(1)
    n = act._GELU_MIN + 12345                 # a tail after the last whole chunk
    x = (rng.standard_normal(n) * 3).astype(dtype).reshape(-1, 5)[:, :5]   # (n / 5, 5)
    x.reshape(-1)[:4] = [0.0, -0.0, np.inf, -np.inf]
    g = rng.standard_normal(x.shape).astype(dtype)

    def run():
        t = mg.tensor(x, requires_grad=True)
        y = F.gelu(t)
        y.backward(mg.tensor(g))
        return [y.detach().numpy(), t.grad.numpy()]
    with kernels_enabled(use_kernels):
        with np.errstate(invalid="ignore"):   # inf * 0 in the gradient at +-inf: nan, as the serial code
            _same(_each_threads(run))
            calls = _spy_run_rows(monkeypatch)
            run()
    # forward and backward on the pool: the float32 forms here, float64's gradient with numba here and
    # its forward by the gelu kernel's own split (kernels/elementwise.py); without numba float64's
    # libm erf stays serial
    assert len(calls) == (2 if dtype == np.float32 or use_kernels else 0)


def _spy_run_rows(monkeypatch):
    calls = []
    real = _pool.run_rows
    monkeypatch.setattr(_pool, "run_rows", lambda fn, rows, *a, **k: (calls.append(rows), real(fn, rows, *a, **k))[1])
    return calls


@pytest.mark.parametrize("use_kernels", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_2x2_rows_bitwise_for_any_threads(threads_restored, monkeypatch, dtype, use_kernels):
    from minigrad.ops import _pool2d
    rng = np.random.default_rng(2)
    shape = (3, 5, 132, 124)                  # 990 window rows of 62: chunks of 133 rows and a tail
    x = rng.integers(-3, 4, shape).astype(dtype)   # many ties: the first maximum wins
    x[0, 0, 0, 1] = np.nan
    x[2, 4, 100, 7] = np.nan
    g = rng.standard_normal((3, 5, 66, 62)).astype(dtype)

    def run():
        t = mg.tensor(x, requires_grad=True)
        y = F.max_pool2d(t, 2)
        y.backward(mg.tensor(g))
        return [y.detach().numpy(), t.grad.numpy()]
    with kernels_enabled(use_kernels):
        least = kernels.load("pool").POOL_MIN if use_kernels else _pool2d.POOL_MIN
        assert np.prod(shape) >= least and 990 % _pool.per_chunk(4 * 62) != 0
        _same(_each_threads(run))
        calls = _spy_run_rows(monkeypatch)
        run()
    assert calls == [990, 990]   # forward and backward on the pool
