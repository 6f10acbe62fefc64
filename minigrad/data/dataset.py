"""Datasets, as torch.utils.data: Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset,
random_split.

Fast-batching protocol: a map-style dataset may define ``_batch_arrays()`` returning a tuple of
equal-length NumPy arrays ``(a1, a2, ...)`` such that ``default_collate([ds[i] for i in idx])``
equals ``[Tensor(a1[idx]), Tensor(a2[idx]), ...]`` (or ``None`` when that does not hold, e.g. a
transform is set). ``DataLoader`` with the default collate function then builds each batch by one
fancy-indexing per array instead of per-item Python collation.
"""
import bisect
import math
import warnings

import numpy as np

import minigrad as mg
from ..random import get_rng

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__()``.

    Example:
        >>> class Squares(mg.data.Dataset):
        ...     def __len__(self): return 10
        ...     def __getitem__(self, i): return i, i * i
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream-style dataset: subclasses define ``__iter__()``. DataLoader batches what it yields."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __add__(self, other):
        raise TypeError("IterableDataset does not support concatenation with +")


def _as_array(t):
    return t._data if isinstance(t, mg.Tensor) else np.asarray(t)


class TensorDataset(Dataset):
    """Dataset wrapping tensors: item ``i`` is ``tuple(t[i] for t in tensors)``.

    Args:
        *tensors: tensors (or NumPy arrays) with the same size in the first dimension.

    Example:
        >>> ds = mg.data.TensorDataset(mg.randn(100, 3), mg.arange(100))
        >>> x, y = ds[0]
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: at least one tensor is required")
        sizes = [(t.shape[0] if len(t.shape) else None) for t in tensors]
        if any(s is None for s in sizes) or any(s != sizes[0] for s in sizes):
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise ValueError(f"TensorDataset: size mismatch between tensors: shapes {shapes}; "
                             "all tensors must have the same size in the first dimension")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def arrays(self):
        """The underlying NumPy arrays, one per tensor (shared, not copied)."""
        return tuple(_as_array(t) for t in self.tensors)

    def _batch_arrays(self):
        # a tensor that requires grad must go through mg.stack so the batch stays in the graph
        if any(isinstance(t, mg.Tensor) and t.requires_grad for t in self.tensors):
            return None
        return self.arrays()


class Subset(Dataset):
    """The items of ``dataset`` at ``indices``.

    Args:
        dataset (Dataset): the whole dataset.
        indices (sequence of int): the indices selected.
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The concatenation of several map-style datasets.

    Args:
        datasets (iterable of Dataset): the datasets, in order.
    """

    @staticmethod
    def cumsum(sequence):
        out, s = [], 0
        for e in sequence:
            s += len(e)
            out.append(s)
        return out

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        if idx >= len(self):
            raise IndexError(f"ConcatDataset: index {idx} out of range for length {len(self)}")
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if d == 0 else idx - self.cumulative_sizes[d - 1]
        return self.datasets[d][sample_idx]


def random_split(dataset, lengths, generator=None):
    """Randomly split a dataset into non-overlapping Subsets of the given lengths.

    If ``lengths`` are fractions summing to 1, each split gets ``floor(frac * len(dataset))``
    items and the remainder is handed out one at a time, round-robin from the first split
    (as PyTorch does).

    Args:
        dataset (Dataset): the dataset to split.
        lengths (sequence of int or float): lengths, or fractions summing to 1.
        generator (mg.Generator, optional): source of the random permutation.

    Example:
        >>> train, val = mg.data.random_split(range(10), [0.8, 0.2], generator=mg.Generator().manual_seed(0))
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(n * frac))
        remainder = n - sum(sizes)
        for i in range(remainder):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              "This might result in an empty dataset.", stacklevel=2)
    if any(int(length) != length or length < 0 for length in lengths):
        raise ValueError(f"random_split: lengths must be non-negative integers or fractions "
                         f"summing to 1, got {lengths}")
    lengths = [int(length) for length in lengths]
    if sum(lengths) != n:
        raise ValueError(f"Sum of input lengths ({sum(lengths)}) does not equal the length of "
                         f"the input dataset ({n})!")
    indices = get_rng(generator).permutation(n).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out
