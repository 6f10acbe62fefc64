import numpy as np
import pytest

import minigrad as mg
from minigrad.data import (BatchSampler, RandomSampler, SequentialSampler, SubsetRandomSampler,
                           WeightedRandomSampler)


def test_sequential_sampler():
    s = SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5


def test_random_sampler_is_a_permutation_and_reproducible():
    s = RandomSampler(range(50), generator=mg.Generator().manual_seed(0))
    e1, e2 = list(s), list(s)
    assert sorted(e1) == list(range(50)) and sorted(e2) == list(range(50))
    assert e1 != e2  # successive epochs differ
    t = RandomSampler(range(50), generator=mg.Generator().manual_seed(0))
    assert list(t) == e1 and list(t) == e2  # same seed, same sequence of epochs
    assert all(isinstance(i, int) for i in e1)


def test_random_sampler_default_generator_follows_manual_seed():
    mg.manual_seed(7)
    a = list(RandomSampler(range(30)))
    mg.manual_seed(7)
    b = list(RandomSampler(range(30)))
    assert a == b


def test_random_sampler_replacement_and_num_samples():
    s = RandomSampler(range(5), replacement=True, num_samples=200, generator=mg.Generator().manual_seed(0))
    out = list(s)
    assert len(out) == 200 == len(s)
    assert set(out) <= set(range(5)) and len(set(out)) == 5  # repeats occur
    s = RandomSampler(range(4), num_samples=10, generator=mg.Generator().manual_seed(0))
    out = list(s)
    assert len(out) == 10 and sorted(out[:4]) == [0, 1, 2, 3] and sorted(out[4:8]) == [0, 1, 2, 3]


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler([])


def test_subset_random_sampler():
    idx = [3, 9, 4, 20]
    s = SubsetRandomSampler(idx, generator=mg.Generator().manual_seed(0))
    out = list(s)
    assert sorted(out) == sorted(idx) and len(s) == 4


def test_weighted_random_sampler():
    s = WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], num_samples=500, generator=mg.Generator().manual_seed(0))
    out = np.array(list(s))
    assert set(out.tolist()) == {1, 2}
    assert 0.65 < (out == 2).mean() < 0.85
    with pytest.raises(ValueError):
        WeightedRandomSampler([-1.0, 1.0], 3)
    with pytest.raises(ValueError):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)


@pytest.mark.parametrize("drop_last, expected", [
    (False, [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]),
    (True, [[0, 1, 2], [3, 4, 5], [6, 7, 8]]),
])
def test_batch_sampler(drop_last, expected):
    b = BatchSampler(SequentialSampler(range(10)), 3, drop_last)
    assert list(b) == expected and len(b) == len(expected)
    assert [a.tolist() for a in b._index_batches()] == expected


def test_batch_sampler_over_plain_iterable_and_errors():
    assert list(BatchSampler([5, 6, 7], 2, False)) == [[5, 6], [7]]
    assert BatchSampler([5, 6, 7], 2, False)._index_batches() is None
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="batch_size"):
            BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last"):
        BatchSampler(range(3), 2, 1)


def test_index_batches_match_iteration_for_random_sampler():
    s1 = RandomSampler(range(23), generator=mg.Generator().manual_seed(5))
    s2 = RandomSampler(range(23), generator=mg.Generator().manual_seed(5))
    via_iter = list(BatchSampler(s1, 4, False))
    via_arrays = [a.tolist() for a in BatchSampler(s2, 4, False)._index_batches()]
    assert via_iter == via_arrays
