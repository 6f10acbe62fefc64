"""Sorting and selection ops against NumPy and PyTorch (values, indices, tie and NaN conventions),
gradcheck/gradgradcheck of the value outputs, and their errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck


def leaf(a):
    return mg.tensor(np.array(a, dtype=np.float64), requires_grad=True)


def distinct(shape, seed=0):
    """Values with no ties (finite differences never swap two of them)."""
    r = np.random.default_rng(seed)
    return r.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64) * 0.37 + r.uniform(0, 0.01)


GRAD_CASES = [
    ("sort", lambda x: mg.sort(x, 1).values),
    ("sort_desc_dim0", lambda x: mg.sort(x, 0, descending=True).values),
    ("topk", lambda x: mg.topk(x, 2, dim=1).values),
    ("topk_smallest", lambda x: mg.topk(x, 2, dim=0, largest=False).values),
    ("kthvalue", lambda x: mg.kthvalue(x, 2, 1).values),
    ("kthvalue_keepdim", lambda x: mg.kthvalue(x, 1, 0, keepdim=True).values),
    ("median_dim", lambda x: mg.median(x, 1).values),
    ("median_all", lambda x: mg.median(x)),
    ("nanmedian_dim", lambda x: mg.nanmedian(x, 0).values),
    ("msort", mg.msort),
    ("tensor_method_sort", lambda x: x.sort(dim=-1)[0] * 2),
]


@pytest.mark.parametrize("name,f", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck_value_outputs(name, f):
    x = leaf(distinct((3, 4)))
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_mode_gradient_goes_to_the_chosen_index():
    x = leaf([[1.0, 2.0, 2.0, 3.0], [5.0, 5.0, 4.0, 4.0]])
    v, i = mg.mode(x, 1)
    v.sum().backward()
    expected = np.zeros((2, 4))
    expected[np.arange(2), i.numpy()] = 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_median_all_shares_gradient_among_ties_as_pytorch():
    x = leaf([3.0, 1.0, 2.0, 2.0, 5.0])
    mg.median(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0.5, 0.5, 0])


def test_indices_are_int64_and_not_differentiable():
    v, i = mg.sort(leaf([3.0, 1.0, 2.0]))
    assert i.dtype == np.int64 and not i.requires_grad and v.requires_grad
    assert v.grad_fn.name() == "SortBackward0"


def test_unique():
    x = mg.tensor([3, 1, 2, 3, 1, 1])
    np.testing.assert_array_equal(mg.unique(x).numpy(), [1, 2, 3])
    u, inv, c = mg.unique(x, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(u.numpy()[inv.numpy()], x.numpy())
    np.testing.assert_array_equal(c.numpy(), [3, 1, 2])
    m = mg.tensor([[1, 2], [1, 2], [0, 5]])
    np.testing.assert_array_equal(mg.unique(m, dim=0).numpy(), [[0, 5], [1, 2]])


def test_errors():
    with pytest.raises(RuntimeError, match="topk: selected index k out of range"):
        mg.topk(mg.ones(3), 4)
    with pytest.raises(RuntimeError, match="kthvalue"):
        mg.kthvalue(mg.ones(3), 0)
    with pytest.raises(IndexError, match="sort: Dimension out of range"):
        mg.sort(mg.ones(3), 1)
    with pytest.raises(RuntimeError, match="median.. input tensor cannot be empty"):
        mg.median(mg.ones(0))


# -- PyTorch parity: values, indices (ties, NaN, stable order) and gradients --------------------
def _inputs():
    r = np.random.default_rng(5)
    ties = r.integers(0, 3, (4, 6)).astype(np.float64)
    nans = r.standard_normal((3, 5))
    nans[0, 2] = nans[2, 0] = nans[2, 4] = np.nan
    return {"ties": ties, "nans": nans, "plain": distinct((4, 5), 3), "zero_d": np.array(2.5)}


PARITY = [
    ("sort_stable", lambda m, x: m.sort(x, dim=-1, stable=True), "ties"),
    ("sort_stable_desc", lambda m, x: m.sort(x, dim=0, descending=True, stable=True), "ties"),
    ("sort_nan", lambda m, x: m.sort(x, dim=1), "nans"),
    ("sort_nan_desc", lambda m, x: m.sort(x, dim=1, descending=True), "nans"),
    ("argsort_desc", lambda m, x: (m.argsort(x, dim=1, descending=True, stable=True),), "ties"),
    ("topk", lambda m, x: m.topk(x, 3, dim=1), "plain"),
    ("topk_small", lambda m, x: m.topk(x, 2, dim=0, largest=False), "plain"),
    ("kthvalue", lambda m, x: m.kthvalue(x, 3, 1), "plain"),
    ("median_dim_even", lambda m, x: m.median(x, 1), "plain"),
    ("median_dim_odd", lambda m, x: m.median(x, 0), "plain"),
    ("median_all", lambda m, x: (m.median(x),), "plain"),
    ("median_nan", lambda m, x: (m.median(x, 1)[0],), "nans"),
    ("median_all_nan", lambda m, x: (m.median(x),), "nans"),
    ("nanmedian_dim", lambda m, x: m.nanmedian(x, 1), "nans"),
    ("nanmedian_all", lambda m, x: (m.nanmedian(x),), "nans"),
    ("mode", lambda m, x: m.mode(x, 1), "ties"),
    ("mode_keepdim", lambda m, x: m.mode(x, 0, keepdim=True), "ties"),
    ("sort_0d", lambda m, x: m.sort(x), "zero_d"),
    ("msort", lambda m, x: (m.msort(x),), "ties"),
]


@pytest.mark.parametrize("name,f,key", PARITY, ids=[c[0] for c in PARITY])
def test_torch_parity(name, f, key):
    torch = pytest.importorskip("torch")
    a = _inputs()[key]
    ours = f(mg, mg.tensor(a))
    theirs = f(torch, torch.tensor(a))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.numpy(), t.numpy())
        assert str(o.dtype) == str(t.dtype).replace("torch.", "")


@pytest.mark.parametrize("name,f,key", [c for c in PARITY if c[2] in ("plain", "ties")],
                         ids=[c[0] for c in PARITY if c[2] in ("plain", "ties")])
def test_torch_gradient_parity(name, f, key):
    torch = pytest.importorskip("torch")
    a = _inputs()[key]
    w = np.random.default_rng(9).standard_normal(64)
    x, tx = leaf(a), torch.tensor(a, requires_grad=True)
    out, tout = f(mg, x)[0], f(torch, tx)[0]
    if out.dtype.kind != "f":
        return
    (out * mg.tensor(w[:out.numel()].reshape(out.shape))).sum().backward()
    (tout * torch.tensor(w[:tout.numel()].reshape(tout.shape))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
