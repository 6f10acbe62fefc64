"""DistributedSampler: each rank's share of a dataset, as torch.utils.data.distributed.DistributedSampler."""
import math

import numpy as np

from . import sampler as _sampler
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Yields the indices of rank ``rank``'s shard of ``dataset``, a different one on each rank.

    With PyTorch's semantics (so a PyTorch script's data order carries over): the epoch's index
    list is a permutation seeded with ``seed + epoch`` (the same on every rank; call
    [`set_epoch()`][minigrad.data.DistributedSampler.set_epoch] at the start of each epoch, or every epoch
    repeats the first one's order), or ``0..n-1`` without shuffling. Unless ``drop_last``, it is padded by
    repeating its first indices up to a multiple of ``num_replicas``; with ``drop_last`` its tail is cut
    instead. Rank r takes every ``num_replicas``-th index starting at r, so all ranks get ``num_samples``
    indices and the shards are disjoint (up to the padding).

    Args:
        dataset (Sized): the dataset to split.
        num_replicas (int, optional): the number of ranks; default the world size of the process group.
        rank (int, optional): this rank; default [`minigrad.distributed.get_rank()`][minigrad.distributed.get_rank].
        shuffle (bool): shuffle the indices each epoch. Default: ``True``.
        seed (int): the shuffling seed, the same on every rank. Default: 0.
        drop_last (bool): drop the tail instead of padding. Default: ``False``.

    Example:
        >>> sampler = DistributedSampler(train_set)
        >>> loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        >>> for epoch in range(epochs):
        ...     sampler.set_epoch(epoch)
        ...     for x, y in loader: ...
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            from .. import distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: pass num_replicas and rank, or call "
                                   "minigrad.distributed.init_process_group first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(f"DistributedSampler: num_replicas should be a positive integer, got {num_replicas!r}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _index_array(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = np.random.default_rng(self.seed + self.epoch).permutation(n).astype(np.int64)
        else:
            indices = np.arange(n, dtype=np.int64)
        if not self.drop_last:
            pad = self.total_size - n
            if pad > 0:
                indices = np.concatenate([indices, np.resize(indices, pad)])  # repeats from the start
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        return indices[self.rank:self.total_size:self.num_replicas]

    def __iter__(self):
        return iter(self._index_array().tolist())

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch: with shuffle, the permutation is seeded with seed + epoch on every rank."""
        self.epoch = epoch


# DataLoader batches whole index arrays for the samplers it knows; this one gives its epoch so too
_sampler._ARRAY_SAMPLERS = _sampler._ARRAY_SAMPLERS + (DistributedSampler,)
