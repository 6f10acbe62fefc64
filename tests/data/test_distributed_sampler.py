"""DistributedSampler: PyTorch's shards, padding, drop_last and epoch seeding (no MPI needed)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.data import DataLoader, DistributedSampler, TensorDataset


def shards(n, replicas, **kw):
    return [list(DistributedSampler(range(n), replicas, r, **kw)) for r in range(replicas)]


@pytest.mark.parametrize("n,replicas", [(10, 3), (12, 4), (5, 2), (2, 4), (7, 1)])
def test_unshuffled_shards_match_pytorchs_rule(n, replicas):
    got = shards(n, replicas, shuffle=False)
    size = -(-n // replicas)
    padded = (list(range(n)) * (size * replicas // n + 1))[:size * replicas]
    assert got == [padded[r::replicas] for r in range(replicas)]
    assert all(len(s) == size for s in got)
    assert sorted(set(sum(got, []))) == list(range(n))  # every index is used


@pytest.mark.parametrize("n,replicas", [(10, 3), (12, 4), (5, 2)])
def test_drop_last_cuts_the_tail(n, replicas):
    got = shards(n, replicas, shuffle=False, drop_last=True)
    size = n // replicas
    assert got == [list(range(size * replicas))[r::replicas] for r in range(replicas)]
    assert len(DistributedSampler(range(n), replicas, 0, drop_last=True)) == size


def test_shuffle_is_the_same_permutation_on_every_rank_and_changes_with_epoch():
    n, R = 23, 3
    parts = shards(n, R, seed=5)
    assert sorted(set(sum(parts, []))) == list(range(n)) and sum(map(len, parts)) == 24
    s = DistributedSampler(range(n), R, 1, seed=5)
    first = list(s)
    assert list(s) == first  # no set_epoch: the same order again (as PyTorch)
    s.set_epoch(1)
    assert list(s) != first
    s.set_epoch(0)
    assert list(s) == first
    assert list(DistributedSampler(range(n), R, 1, seed=6)) != first


def test_arguments_are_checked():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(4), 3, 3)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(range(4))


def test_dataloader_uses_it():
    ds = TensorDataset(mg.arange(10))
    loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 2, 1, shuffle=False))
    assert [b[0].tolist() for b in loader] == [[1, 3], [5, 7], [9]]


def test_matches_torch_when_not_shuffled():
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchDS
    for n, R, dl in ((10, 3, False), (10, 3, True), (3, 4, False), (17, 4, True)):
        for r in range(R):
            want = list(TorchDS(range(n), R, r, shuffle=False, drop_last=dl))
            assert list(DistributedSampler(range(n), R, r, shuffle=False, drop_last=dl)) == want
            assert len(DistributedSampler(range(n), R, r, drop_last=dl)) == len(TorchDS(range(n), R, r, drop_last=dl))
    del torch
