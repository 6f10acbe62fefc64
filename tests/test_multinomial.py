"""mg.multinomial / Tensor.multinomial: the distributions (chi-square tests with fixed seeds), sampling
without replacement (distinct draws, the order's distribution), generators, errors as PyTorch's.

Every statistic below is computed from a fixed seed, so each test is deterministic; the bounds are the
chi-square quantiles at p = 0.001 for the degrees of freedom named (a correct sampler passes a fresh
seed 999 times in 1000; a wrong one, e.g. one ignoring a weight, gives statistics in the thousands)."""
import numpy as np
import pytest

import minigrad as mg

# chi-square 0.999 quantiles by degrees of freedom
CHI2_999 = {3: 16.27, 4: 18.47, 11: 31.26}


def _chi2(counts, expected):
    counts, expected = np.asarray(counts, float), np.asarray(expected, float)
    keep = expected > 0
    assert not counts[~keep].any(), "a category of probability 0 was drawn"
    return float(((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum())


def test_with_replacement_1d_follows_the_weights():
    w = np.array([1.0, 0.0, 2.0, 3.0, 4.0])          # unnormalised; category 1 never drawn
    g = mg.Generator().manual_seed(0)
    n = 20000
    s = mg.multinomial(mg.tensor(w), n, replacement=True, generator=g)
    assert s.shape == (n,) and s.dtype == mg.int64
    counts = np.bincount(s.numpy(), minlength=5)
    assert _chi2(counts, n * w / w.sum()) < CHI2_999[3]


def test_with_replacement_2d_each_row_its_own_distribution():
    w = np.array([[0.5, 0.5, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4], [0.0, 0.0, 0.0, 7.0]], dtype=np.float32)
    g = mg.Generator().manual_seed(1)
    n = 12000
    s = mg.tensor(w).multinomial(n, replacement=True, generator=g).numpy()
    assert s.shape == (3, n)
    for r, dof in ((0, 1), (1, 3)):
        counts = np.bincount(s[r], minlength=4)
        bound = {1: 10.83, 3: CHI2_999[3]}[dof]
        assert _chi2(counts, n * w[r] / w[r].sum()) < bound
    assert (s[2] == 3).all()


def test_without_replacement_draws_are_distinct_and_ordered_as_sequential_draws():
    # the first draw follows p; the ordered pair (i, j) has probability p_i p_j / (1 - p_i)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    n = 6000
    g = mg.Generator().manual_seed(2)
    s = mg.multinomial(mg.tensor(np.tile(p * 3.0, (n, 1))), 2, generator=g).numpy()
    assert s.shape == (n, 2)
    assert (s[:, 0] != s[:, 1]).all()
    pairs = np.zeros((4, 4))
    np.add.at(pairs, (s[:, 0], s[:, 1]), 1)
    want = p[:, None] * p[None, :] / (1 - p[:, None])
    np.fill_diagonal(want, 0.0)
    assert abs(want.sum() - 1) < 1e-12
    assert _chi2(pairs.ravel(), n * want.ravel()) < CHI2_999[11]      # 12 ordered pairs: 11 dof


def test_without_replacement_all_categories_is_a_permutation_and_zero_weights_come_last():
    g = mg.Generator().manual_seed(3)
    s = mg.multinomial(mg.tensor([[0.0, 5.0, 0.0, 1.0, 2.0, 0.0]] * 50), 6, generator=g).numpy()
    for row in s:
        assert sorted(row) == list(range(6))
        assert set(row[:3]) == {1, 3, 4}
        assert list(row[3:]) == [0, 2, 5]       # PyTorch: the zero-weight categories in index order
    assert mg.multinomial(mg.tensor([1.0, 0.0, 0.0]), 3).tolist() == [0, 1, 2]


def test_generators_reproduce_and_the_default_generator_is_used():
    p = mg.tensor([[1.0, 2.0, 3.0, 4.0]] * 4)
    a = mg.multinomial(p, 3, generator=mg.Generator().manual_seed(7)).numpy()
    b = mg.multinomial(p, 3, generator=mg.Generator().manual_seed(7)).numpy()
    np.testing.assert_array_equal(a, b)
    g = mg.Generator().manual_seed(7)
    first, second = mg.multinomial(p, 3, True, generator=g).numpy(), mg.multinomial(p, 3, True, generator=g).numpy()
    assert not np.array_equal(first, second)   # the generator advances
    mg.manual_seed(11)
    c = p.multinomial(3, True).numpy()
    mg.manual_seed(11)
    np.testing.assert_array_equal(c, mg.multinomial(p, 3, True).numpy())


def test_out_and_no_gradient():
    o = mg.zeros(4, dtype=mg.int64)
    r = mg.multinomial(mg.tensor([1.0, 1.0, 1.0, 1.0]), 4, out=o)
    assert r is o and sorted(o.tolist()) == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="Long tensor out"):
        mg.multinomial(mg.ones(3), 2, out=mg.zeros(2))
    x = mg.ones(3, requires_grad=True)
    assert not mg.multinomial(x, 2).requires_grad


def test_vmap_randomness():
    from minigrad.func import vmap
    p = mg.ones(3, 5)
    f = lambda r: mg.multinomial(r, 5)  # noqa: E731
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(f)(p)
    with pytest.warns(UserWarning, match="performance drop"):
        out = vmap(f, randomness="different")(p).numpy()   # a batched input: one draw per sample
    assert out.shape == (3, 5) and all(sorted(r) == list(range(5)) for r in out)


_BAD = [  # (call, message): each a RuntimeError, as PyTorch's
    (lambda: mg.multinomial(mg.tensor([1.0, -1.0, 0.0]), 1), "element < 0"),
    (lambda: mg.multinomial(mg.tensor([1.0, float("inf")]), 1), "inf"),
    (lambda: mg.multinomial(mg.tensor([1.0, float("nan")]), 1), "nan"),
    (lambda: mg.multinomial(mg.tensor([[0.0, 0.0], [1.0, 1.0]]), 1), "sum of probabilities <= 0"),
    (lambda: mg.multinomial(mg.tensor([1.0, 2.0]), 3), "without replacement"),
    (lambda: mg.multinomial(mg.tensor([1.0, 2.0]), 0), "n_sample <= 0"),
    (lambda: mg.multinomial(mg.tensor([1, 2]), 1), "floating-point"),
    (lambda: mg.multinomial(mg.tensor(1.0), 1), "1 or 2 dim"),
    (lambda: mg.multinomial(mg.ones(2, 2, 2), 1), "1 or 2 dim"),
]


@pytest.mark.parametrize("k", range(len(_BAD)))
def test_errors_as_pytorch(k):
    fn, msg = _BAD[k]
    with pytest.raises(RuntimeError, match=msg.replace("(", r"\(")):
        fn()


def test_errors_match_torchs():
    torch = pytest.importorskip("torch")
    for p, n, msg in [([1.0, -1.0, 0.0], 1, "element < 0"), ([[0.0, 0.0], [1.0, 1.0]], 1, "sum of probabilities"),
                      ([1.0, 2.0], 3, "without replacement"), ([1.0, 2.0], 0, "n_sample <= 0")]:
        with pytest.raises(RuntimeError, match=msg):
            torch.multinomial(torch.tensor(p), n)
        with pytest.raises(RuntimeError, match=msg):
            mg.multinomial(mg.tensor(p), n)
