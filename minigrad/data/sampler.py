"""Samplers, as torch.utils.data: the order in which a DataLoader visits a dataset's indices.

The built-in index samplers also offer ``_index_array()``: the whole epoch's indices as one int64
array (exactly the sequence ``__iter__`` yields), which lets DataLoader batch without a Python loop
over items.
"""
import itertools

import numpy as np

from ..random import Generator, get_rng

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Base class: subclasses define ``__iter__`` (yielding indices) and usually ``__len__``."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


def _epoch_rng(generator):
    # as PyTorch: without a generator, each epoch draws a fresh seed from the default generator,
    # so mg.manual_seed makes shuffling reproducible and successive epochs still differ
    if generator is not None:
        return get_rng(generator)
    seed = int(get_rng(None).integers(0, 2**63 - 1))
    return np.random.default_rng(seed)


class SequentialSampler(Sampler):
    """Yields 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def _index_array(self):
        return np.arange(len(self.data_source), dtype=np.int64)

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Yields the indices in random order (a permutation), or with replacement.

    Args:
        data_source (Sized): the dataset to sample from.
        replacement (bool): draw with replacement. Default: False.
        num_samples (int, optional): how many to draw; default ``len(data_source)``. Without
            replacement, more than ``len(data_source)`` concatenates fresh permutations.
        generator (mg.Generator, optional): source of randomness.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"generator should be a minigrad Generator, got {type(generator).__name__}")
        ns = self.num_samples
        if not isinstance(ns, int) or isinstance(ns, bool) or ns <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={ns}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def _index_array(self):
        n, k = len(self.data_source), self.num_samples
        rng = _epoch_rng(self.generator)
        if self.replacement:
            return rng.integers(0, n, size=k, dtype=np.int64)
        perms = [rng.permutation(n) for _ in range(k // n)]
        if k % n:
            perms.append(rng.permutation(n)[:k % n])
        return np.concatenate(perms).astype(np.int64, copy=False)

    def __iter__(self):
        return iter(self._index_array().tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """Yields the given indices in random order (a fresh permutation each epoch).

    Args:
        indices (sequence of int): the indices to sample from.
        generator (mg.Generator, optional): source of randomness.
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def _index_array(self):
        idx = np.asarray(self.indices, dtype=np.int64).reshape(-1)
        return idx[_epoch_rng(self.generator).permutation(len(idx))]

    def __iter__(self):
        return iter(self._index_array().tolist())

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Yields ``num_samples`` indices drawn with probabilities proportional to ``weights``.

    Args:
        weights (sequence of float): a non-negative weight per index.
        num_samples (int): how many to draw.
        replacement (bool): draw with replacement. Default: True.
        generator (mg.Generator, optional): source of randomness.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(getattr(weights, "_data", weights), dtype=np.float64).reshape(-1)
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be finite, non-negative, with a positive sum")
        if not replacement and num_samples > np.count_nonzero(w):
            raise ValueError("WeightedRandomSampler: num_samples exceeds the number of non-zero weights "
                             "while replacement=False")
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def _index_array(self):
        rng = _epoch_rng(self.generator)
        return rng.choice(len(self.weights), size=self.num_samples, replace=self.replacement,
                          p=self.weights / self.weights.sum()).astype(np.int64)

    def __iter__(self):
        return iter(self._index_array().tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    Args:
        sampler (Sampler or iterable): yields indices.
        batch_size (int): size of each batch.
        drop_last (bool): drop the last batch if it is smaller than ``batch_size``.

    Example:
        >>> list(mg.data.BatchSampler(mg.data.SequentialSampler(range(10)), 3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def _index_batches(self):
        """Index arrays, one per batch, or None when the sampler cannot give its epoch as an array."""
        # exact types only: a subclass may override __iter__, and _index_array must match it
        if type(self) is not BatchSampler or type(self.sampler) not in _ARRAY_SAMPLERS:
            return None
        idx = self.sampler._index_array()
        bs = self.batch_size
        stop = len(idx) - len(idx) % bs if self.drop_last else len(idx)
        return (idx[i:i + bs] for i in range(0, stop, bs))

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*([it] * self.batch_size)):
                yield list(batch)
        else:
            batch = list(itertools.islice(it, self.batch_size))
            while batch:
                yield batch
                batch = list(itertools.islice(it, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


_ARRAY_SAMPLERS = (SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler)
