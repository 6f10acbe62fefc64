"""The per-call fast paths of the ops a Transformer and its generation loop call per token (split,
reshape, transpose, cat, basic getitem, SDPA without a mask, layer_norm, topk, masked_fill) give what
their general paths give, bit for bit, and the same errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops.sorting import _argsort, _topk_order


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_split_recorded_is_one_node_with_the_pieces_gradients():
    a = _rand(2, 3, 12)
    x = mg.tensor(a, requires_grad=True)
    q, k, v = x.split(4, dim=2)
    assert q.grad_fn is k.grad_fn is v.grad_fn  # one node: its backward is one concatenation
    (q * 2.0 + k * 3.0 + v * v).sum().backward()
    ref = mg.tensor(a, requires_grad=True)      # the pieces as narrow's slices, one node each
    (ref.narrow(2, 0, 4) * 2.0 + ref.narrow(2, 4, 4) * 3.0 + ref.narrow(2, 8, 4) ** 2).sum().backward()
    assert np.array_equal(x.grad.numpy(), ref.grad.numpy())
    # only one piece used: the others send zeros
    x.grad = None
    x.split([5, 7], dim=-1)[1].sum().backward()
    assert np.array_equal(x.grad.numpy(), np.concatenate([np.zeros((2, 3, 5)), np.ones((2, 3, 7))], -1))


def test_split_pieces_are_views_written_through():
    with mg.no_grad():
        x = mg.zeros(2, 6)
        a, b = x.split(3, dim=1)
        b.add_(1.0)
        assert x.numpy().tolist() == [[0, 0, 0, 1, 1, 1]] * 2
    # recorded: an in-place op on a piece of a non-leaf writes through it, and the gradient follows
    w = mg.tensor(_rand(2, 6), requires_grad=True)
    y = w * 1.0
    a, b = y.split(3, dim=1)
    b.mul_(2.0)
    assert np.array_equal(y.detach().numpy()[:, 3:], w.detach().numpy()[:, 3:] * 2)
    y.sum().backward()
    assert w.grad.numpy().tolist() == [[1, 1, 1, 2, 2, 2]] * 2


def test_reshape_and_transpose_fast_paths_keep_their_errors():
    x = mg.tensor(_rand(2, 3, 4))
    assert x.reshape(4, 6).shape == (4, 6) and x.reshape(4, -1).shape == (4, 6) and x.view((24,)).shape == (24,)
    assert np.shares_memory(x.view(2, 12).numpy(), x.numpy())
    with pytest.raises(RuntimeError, match="invalid for input of size 24"):
        x.reshape(5, 5)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.reshape(-1, -1)
    assert np.array_equal(x.transpose(-1, 0).numpy(), np.swapaxes(x.numpy(), -1, 0))
    with pytest.raises(IndexError, match="out of range"):
        x.transpose(1, 3)


def test_cat_fast_path_matches_the_general_path():
    a, b = mg.tensor(_rand(1, 4, 5, 8)), mg.tensor(_rand(1, 4, 1, 8, seed=1))
    out = mg.cat([a, b], dim=-2)
    assert np.array_equal(out.numpy(), np.concatenate([a.numpy(), b.numpy()], 2)) and out.is_contiguous()
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 2"):
        mg.cat([a, mg.tensor(_rand(1, 3, 1, 8))], dim=2)
    with pytest.raises(IndexError, match="out of range"):
        mg.cat([a, b], dim=4)
    # other dtypes promote (the general path), the legacy empty 1-D tensor is skipped
    assert mg.cat([mg.ones(2, dtype=mg.int64), mg.ones(1)]).dtype == mg.float32
    assert mg.cat([mg.ones(2, 3), mg.zeros(0)], 0).shape == (2, 3)


def test_basic_getitem_fast_classification():
    x = mg.tensor(_rand(2, 5, 7))
    for index in [(slice(None), -1, slice(None)), (0,), 1, (Ellipsis, 3), (None, slice(1, 4)), slice(0, 1)]:
        out = x[index]
        assert np.array_equal(out.numpy(), x.numpy()[index]), index
        assert np.shares_memory(out.numpy(), x.numpy())
    assert x[1, 2, 3].shape == () and float(x[1, 2, 3]) == float(x.numpy()[1, 2, 3])
    with pytest.raises(IndexError):
        x[:, 9]
    assert np.array_equal(x[:, [-1]].numpy(), x.numpy()[:, [-1]])  # advanced: the general path


def test_sdpa_without_a_mask_is_the_masked_path_bit_for_bit():
    q, k, v = (mg.tensor(_rand(1, 4, s, 8, seed=i)) for i, s in enumerate((1, 9, 9)))
    keep = mg.ones(1, 9, dtype=mg.bool_)
    for causal in (False, True):
        fast = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        slow = F.scaled_dot_product_attention(q, k, v, attn_mask=None if causal else keep, is_causal=causal,
                                              enable_gqa=True)
        assert np.array_equal(fast.numpy(), slow.numpy())
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(q, k.double(), v)
    with pytest.raises(RuntimeError, match="same sequence length"):
        F.scaled_dot_product_attention(q, k, v[:, :, :4])


def test_layer_norm_fast_axes_match_the_general_checks():
    x = mg.tensor(_rand(2, 3, 8))
    w, b = mg.tensor(_rand(8, seed=1)), mg.tensor(_rand(8, seed=2))
    fast = F.layer_norm(x, (8,), w, b)
    assert np.array_equal(fast.numpy(), F.layer_norm(x, [8], w, b).numpy())  # a list: _trailing_axes
    assert np.array_equal(F.layer_norm(x, (3, 8)).numpy(), F.layer_norm(x, [3, 8]).numpy())
    with pytest.raises(ValueError, match="weight of shape"):
        F.layer_norm(x, (8,), mg.ones(4))
    with pytest.raises(ValueError, match="does not end with"):
        F.layer_norm(x, (4,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_topk_order_is_the_stable_sort_prefix(dtype):
    a = np.random.default_rng(0).integers(0, 4, (3, 9)).astype(dtype)  # ties everywhere
    if dtype == np.float64:
        a[1, 2] = np.nan
    for axis in (0, 1):
        for k in range(a.shape[axis] + 1):
            for largest in (True, False):
                ref = np.take(_argsort(a, axis, largest), np.arange(k), axis=axis)
                got = _topk_order(a, k, axis, largest)
                assert got.dtype == ref.dtype and np.array_equal(got, ref) and got.flags.c_contiguous


def test_topk_and_masked_fill_values():
    x = mg.tensor(_rand(2, 84))
    v, i = mg.topk(x, 10)
    assert np.array_equal(v.numpy(), np.take_along_axis(x.numpy(), i.numpy(), 1))
    assert np.array_equal(v.numpy(), -np.sort(-x.numpy(), 1)[:, :10])
    out = x.masked_fill(x < v[:, [-1]], float("-inf"))
    assert np.array_equal(np.isfinite(out.numpy()).sum(1), [10, 10])
    with pytest.raises(Exception, match="cannot be broadcast"):
        x.masked_fill(mg.ones(3, 84, dtype=mg.bool_), 0.0)
