import numpy as np
import pytest

import minigrad as mg
from minigrad.data import ConcatDataset, Dataset, Subset, TensorDataset, random_split


def test_tensor_dataset_items_and_len():
    x = mg.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    y = mg.tensor(np.array([0, 1, 0, 1]))
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    xi, yi = ds[2]
    np.testing.assert_array_equal(xi.data.numpy(), [6, 7, 8])
    assert yi.item() == 0
    assert ds.tensors[0] is x


def test_tensor_dataset_size_mismatch():
    with pytest.raises(ValueError, match=r"size mismatch.*\(4, 3\).*\(5,\)"):
        TensorDataset(mg.zeros(4, 3), mg.zeros(5))
    with pytest.raises(ValueError):
        TensorDataset()


def test_tensor_dataset_accepts_numpy_arrays():
    ds = TensorDataset(np.arange(6).reshape(3, 2), np.array([1, 2, 3]))
    x, y = ds[1]
    np.testing.assert_array_equal(x, [2, 3])
    assert y == 2


def test_subset():
    ds = TensorDataset(mg.tensor(np.arange(10)))
    sub = Subset(ds, [7, 2, 5])
    assert len(sub) == 3
    assert [sub[i][0].item() for i in range(3)] == [7, 2, 5]
    assert [it[0].item() for it in sub.__getitems__([2, 0])] == [5, 7]


class _Range(Dataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __len__(self):
        return self.hi - self.lo

    def __getitem__(self, i):
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.lo + i


def test_concat_dataset():
    cat = ConcatDataset([_Range(0, 3), _Range(10, 12), _Range(20, 24)])
    assert len(cat) == 9
    assert [cat[i] for i in range(9)] == [0, 1, 2, 10, 11, 20, 21, 22, 23]
    assert cat[-1] == 23 and cat[-9] == 0
    assert cat.cumulative_sizes == [3, 5, 9]
    with pytest.raises(IndexError):
        cat[9]
    with pytest.raises(ValueError):
        cat[-10]
    plus = _Range(0, 2) + _Range(5, 6)
    assert isinstance(plus, ConcatDataset) and [plus[i] for i in range(3)] == [0, 1, 5]
    with pytest.raises(ValueError):
        ConcatDataset([])


def test_random_split_lengths_partition():
    parts = random_split(range(10), [3, 7], generator=mg.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    items = sorted(parts[0][i] for i in range(3)) + sorted(parts[1][i] for i in range(7))
    assert sorted(items) == list(range(10))


@pytest.mark.parametrize("n, fracs, expected", [
    (10, [0.3, 0.3, 0.4], [3, 3, 4]),
    (7, [1 / 3, 1 / 3, 1 / 3], [3, 2, 2]),
    (11, [0.5, 0.5], [6, 5]),
    (6, [0.25, 0.25, 0.5], [2, 1, 3]),
])
def test_random_split_fractions_remainder_round_robin(n, fracs, expected):
    parts = random_split(range(n), fracs, generator=mg.Generator().manual_seed(1))
    assert [len(p) for p in parts] == expected


@pytest.mark.filterwarnings("ignore:Length of split")
def test_random_split_fraction_lengths_match_torch():
    torch = pytest.importorskip("torch")
    for n, fracs in [(10, [0.3, 0.3, 0.4]), (7, [1 / 3] * 3), (101, [0.8, 0.1, 0.1]), (3, [0.25] * 4)]:
        ours = [len(p) for p in random_split(range(n), fracs)]
        theirs = [len(p) for p in torch.utils.data.random_split(range(n), fracs)]
        assert ours == theirs


def test_random_split_reproducible_and_errors():
    a = random_split(range(20), [10, 10], generator=mg.Generator().manual_seed(3))
    b = random_split(range(20), [10, 10], generator=mg.Generator().manual_seed(3))
    c = random_split(range(20), [10, 10], generator=mg.Generator().manual_seed(4))
    assert a[0].indices == b[0].indices
    assert a[0].indices != c[0].indices
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="between 0 and 1"):
        random_split(range(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [1.0, 0.0])
