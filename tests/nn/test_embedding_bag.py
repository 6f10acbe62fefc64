"""F.embedding_bag and nn.EmbeddingBag: PyTorch's semantics (modes, 2-D input, offsets, include_last_offset,
per_sample_weights, padding_idx, empty bags, errors), values and gradients against PyTorch in float64.

The registry entries (minigrad/testing/opinfo/sparse.py) run gradcheck, gradgradcheck, the JVP, vmap,
tracing and mg.jit on the op; this file covers the module, the errors and what the registry cannot
(scale_grad_by_freq, max_norm, random bags against PyTorch)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F


def _bags_np(idx, w, offsets, mode, psw=None, padding_idx=None, last=False):
    """The bags one at a time (ends at offsets[-1] with include_last_offset)."""
    off = list(offsets)
    ends = off[1:] if last else off[1:] + [len(idx)]
    out = np.zeros((len(ends), w.shape[1]))
    for b, (s, e) in enumerate(zip(off, ends)):
        keep = [n for n in range(s, e) if idx[n] != padding_idx]
        if keep:
            rows = w[[idx[n] for n in keep]] * (1.0 if psw is None else np.asarray(psw)[keep][:, None])
            out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_values_with_empty_bags_and_padding(mode):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 4))
    idx, off = [1, 2, 5, 5, 3, 0, 2, 5], [0, 2, 2, 5, 8]      # bags: [1 2], [], [5 5 3], [0 2 5], []
    out = F.embedding_bag(mg.tensor(idx), mg.tensor(w), mg.tensor(off), mode=mode, padding_idx=5)
    assert out.shape == (5, 4) and out.dtype == mg.float64
    np.testing.assert_allclose(out.numpy(), _bags_np(idx, w, off, mode, padding_idx=5), rtol=1e-14, atol=1e-15)
    assert not out.numpy()[[1, 4]].any()      # empty bags are zeros


def test_a_bag_of_padding_only_is_zero_in_every_mode():
    w = mg.tensor(np.arange(10.0).reshape(5, 2) - 20)           # negative rows: a max over nothing is not -inf
    for mode in ("sum", "mean", "max"):
        out = F.embedding_bag(mg.tensor([[4, 4], [1, 2]]), w, mode=mode, padding_idx=4)
        assert out.numpy()[0].tolist() == [0.0, 0.0]


def _torch():
    return pytest.importorskip("torch")


def _torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


_CASES = [  # (input, offsets, kwargs)
    ([[1, 0, 3], [4, 4, 2]], None, dict(mode="mean")),
    ([[1, 0, 3], [4, 4, 2]], None, dict(mode="max", padding_idx=-1)),
    ([1, 2, 4, 4, 3, 0, 2], [0, 2, 2, 5], dict(mode="sum")),
    ([1, 2, 4, 4, 3, 0, 2], [0, 2, 2, 5], dict(mode="mean", padding_idx=4)),
    ([1, 2, 4, 4, 3, 0, 2], [0, 2, 2, 5], dict(mode="max")),
    ([1, 2, 4, 4, 3, 0, 2], [0, 3, 3, 7], dict(mode="sum", include_last_offset=True)),
    ([1, 2, 4, 4, 3, 0, 2], [0, 3, 3, 7], dict(mode="mean", include_last_offset=True)),
]


def test_no_bags_and_no_indices():
    # (PyTorch 2.x's CPU kernel crashes on these two; the shapes are its documented ones)
    w = mg.randn(5, 3, requires_grad=True)
    out = F.embedding_bag(mg.tensor([1, 2, 4]), w, mg.tensor([], dtype=mg.int64), mode="sum")
    assert out.shape == (0, 3)
    out = F.embedding_bag(mg.tensor([], dtype=mg.int64), w, mg.tensor([0, 0]), mode="max")
    assert out.shape == (2, 3) and not out.detach().numpy().any()
    out.sum().backward()
    assert w.grad.shape == (5, 3) and not w.grad.numpy().any()


@pytest.mark.parametrize("inp,off,kw", _CASES)
def test_values_and_gradients_match_torch(inp, off, kw):
    t = _torch()
    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 3))
    a = mg.tensor(w, requires_grad=True)
    b = t.tensor(w, requires_grad=True)
    mo = F.embedding_bag(mg.tensor(inp, dtype=mg.int64), a,
                         None if off is None else mg.tensor(off, dtype=mg.int64), **kw)
    to = t.nn.functional.embedding_bag(t.tensor(inp, dtype=t.long), b,
                                       None if off is None else t.tensor(off, dtype=t.long), **kw)
    np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), rtol=1e-14, atol=1e-15)
    g = rng.standard_normal(tuple(to.shape))
    mo.backward(mg.tensor(g))
    to.backward(t.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-14, atol=1e-15)
    assert mo.grad_fn.name() == type(to.grad_fn).__name__ == "EmbeddingBagBackward0"


@pytest.mark.parametrize("shape_2d", [False, True])
def test_per_sample_weights_gradients_match_torch(shape_2d):
    t = _torch()
    rng = np.random.default_rng(2)
    w, p = rng.standard_normal((6, 3)), rng.standard_normal(8)
    idx, off = [1, 2, 5, 5, 3, 0, 2, 5], [0, 2, 2, 5]
    kw = dict(mode="sum", padding_idx=5)
    if shape_2d:
        idx, off, p = np.reshape(idx, (2, 4)), None, p.reshape(2, 4)
    a, pa = mg.tensor(w, requires_grad=True), mg.tensor(p, requires_grad=True)
    b, pb = t.tensor(w, requires_grad=True), t.tensor(p, requires_grad=True)
    mo = F.embedding_bag(mg.tensor(idx), a, None if off is None else mg.tensor(off), per_sample_weights=pa, **kw)
    to = t.nn.functional.embedding_bag(t.tensor(idx), b, None if off is None else t.tensor(off),
                                       per_sample_weights=pb, **kw)
    np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), rtol=1e-14, atol=1e-15)
    (mo * mo).sum().backward()
    (to * to).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(pa.grad.numpy(), pb.grad.numpy(), rtol=1e-13, atol=1e-14)
    assert pa.grad.shape == pa.shape


def test_random_bags_match_torch():
    t = _torch()
    rng = np.random.default_rng(3)
    V, D, N = 50, 7, 300
    w = rng.standard_normal((V, D)).astype(np.float32)
    idx = rng.integers(0, V, N)
    off = np.concatenate([[0], np.sort(rng.integers(0, N, 39))])
    for mode in ("sum", "mean", "max"):
        a, b = mg.tensor(w, requires_grad=True), t.tensor(w, requires_grad=True)
        mo = F.embedding_bag(mg.tensor(idx), a, mg.tensor(off), mode=mode, padding_idx=3)
        to = t.nn.functional.embedding_bag(t.tensor(idx), b, t.tensor(off), mode=mode, padding_idx=3)
        assert mo.dtype == mg.float32
        # float32: sums of up to N rows in another order; bound 1e-5 relative to the values' size
        np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-5)
        g = rng.standard_normal((40, D)).astype(np.float32)
        mo.backward(mg.tensor(g))
        to.backward(t.tensor(g))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_scale_grad_by_freq_divides_each_rows_gradient_by_its_count():
    # the documented semantics, as torch.nn.functional.embedding's (PyTorch's CPU embedding_bag gives other
    # numbers when an index repeats in several bags, e.g. 1/6 for row 3 here): row 2 occurs twice, row 4 twice
    w = mg.tensor(np.ones((5, 3)), requires_grad=True)
    idx, off = mg.tensor([1, 2, 4, 4, 3, 0, 2]), mg.tensor([0, 2, 2, 5])
    F.embedding_bag(idx, w, off, mode="mean", scale_grad_by_freq=True).sum().backward()
    # unscaled: row 1: 1/2, row 2: 1/2 + 1/2, row 4: 2/3, row 3: 1/3, row 0: 1/2; divided by counts 1, 2, 2, 1, 1
    np.testing.assert_allclose(w.grad.numpy()[:, 0], [0.5, 0.5, 0.5, 1 / 3, 1 / 3], rtol=1e-15)
    w.grad = None
    F.embedding_bag(idx, w, off, mode="sum", scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy()[:, 0], [1, 1, 1, 1, 1], rtol=1e-15)
    t = _torch_or_none()
    if t is not None:   # the same as torch's embedding + per-bag means
        tw = t.ones(5, 3, dtype=t.float64, requires_grad=True)
        e = t.nn.functional.embedding(t.tensor([1, 2, 4, 4, 3, 0, 2]), tw, scale_grad_by_freq=True)
        t.stack([e[0:2].mean(0), e[2:5].mean(0), e[5:].mean(0)]).sum().backward()
        np.testing.assert_allclose(tw.grad.numpy()[:, 0], [0.5, 0.5, 0.5, 1 / 3, 1 / 3], rtol=1e-15)


def test_max_norm_renormalises_the_rows_looked_up():
    w = mg.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    out = F.embedding_bag(mg.tensor([[0, 1]]), w, max_norm=1.0, mode="sum")
    np.testing.assert_allclose(w.numpy()[0], [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(w.numpy()[2], [6.0, 8.0])          # not looked up: unchanged
    np.testing.assert_allclose(out.numpy(), [[0.9, 1.2]], rtol=1e-6)


def test_errors_as_pytorch():
    w = mg.randn(5, 2)
    i1, i2 = mg.tensor([1, 2, 3]), mg.tensor([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(i2, w, mg.tensor([0, 1]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(i1, w)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor"):
        F.embedding_bag(i1, w, mg.tensor([[0]]))
    with pytest.raises(ValueError, match="input has to be 1D or 2D"):
        F.embedding_bag(mg.tensor([[[1]]]), w)
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor"):
        F.embedding_bag(i2, mg.randn(5))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(i2, w, mode="min")
    with pytest.raises(ValueError, match="max mode does not support scaling"):
        F.embedding_bag(i2, w, mode="max", scale_grad_by_freq=True)
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(i2, w, per_sample_weights=mg.ones(2, 2))
    with pytest.raises(ValueError, match="same shape as the input"):
        F.embedding_bag(i2, w, mode="sum", per_sample_weights=mg.ones(4))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(i1, w, mg.tensor([1]))
    with pytest.raises(RuntimeError, match="can not be greater than input's length 3"):
        F.embedding_bag(i1, w, mg.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="non-decreasing"):
        F.embedding_bag(i1, w, mg.tensor([0, 2, 1]))
    with pytest.raises(RuntimeError, match="found idx to be 7"):
        F.embedding_bag(mg.tensor([1, 7]), w, mg.tensor([0]))
    with pytest.raises(RuntimeError, match="padding_idx must be within"):
        F.embedding_bag(i2, w, padding_idx=5)
    with pytest.raises(RuntimeError, match="integer dtype"):
        F.embedding_bag(mg.tensor([1.0]), w, mg.tensor([0]))
    with pytest.raises(RuntimeError, match="per_sample_weights to have weight's dtype"):
        F.embedding_bag(i2, w, mode="sum", per_sample_weights=mg.ones(2, 2, dtype=mg.float64))


def test_module_matches_torch_and_from_pretrained():
    t = _torch()
    mg.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, mode="max", padding_idx=-2, include_last_offset=True)
    assert bag.padding_idx == 8 and bag.weight.shape == (10, 3) and bag.weight.requires_grad
    assert not bag.weight.detach().numpy()[8].any()
    assert repr(bag) == repr(t.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-2)) \
        == "EmbeddingBag(10, 3, mode='max', padding_idx=8)"
    assert repr(nn.EmbeddingBag(4, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)) == \
        repr(t.nn.EmbeddingBag(4, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True))
    tb = t.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-2, include_last_offset=True)
    with t.no_grad():
        tb.weight.copy_(t.tensor(bag.weight.detach().numpy()))
    idx, off = [1, 8, 9, 2, 2, 8, 0], [0, 3, 3, 7]
    np.testing.assert_allclose(bag(mg.tensor(idx), mg.tensor(off)).detach().numpy(),
                               tb(t.tensor(idx), t.tensor(off)).detach().numpy(), rtol=1e-6)
    s = nn.EmbeddingBag(10, 3, mode="sum")
    p = mg.rand(2, 4)
    i2 = mg.tensor(np.reshape(idx + [3], (2, 4)))
    np.testing.assert_allclose(s(i2, per_sample_weights=p).detach().numpy(),
                               F.embedding_bag(i2, s.weight, mode="sum", per_sample_weights=p).detach().numpy())
    emb = mg.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
    pre = nn.EmbeddingBag.from_pretrained(emb)
    assert not pre.weight.requires_grad and pre.mode == "mean"
    np.testing.assert_allclose(pre(mg.tensor([[1, 0]])).detach().numpy(), [[2.5, 3.7, 4.65]], rtol=1e-6)
    assert nn.EmbeddingBag.from_pretrained(emb, freeze=False, mode="sum").weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.EmbeddingBag.from_pretrained(mg.ones(3))
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(3, 2, padding_idx=3)
    with pytest.raises(AssertionError, match="Shape of weight"):
        nn.EmbeddingBag(3, 2, _weight=mg.ones(2, 2))
