"""DataLoader and default_collate, as torch.utils.data.

Loading always happens in the calling process (``num_workers`` is accepted for compatibility and
ignored: NumPy-backed batching is memory-bound, and the array fast path below makes an epoch of
MNIST cost milliseconds).

Fast path: when the dataset (or a ``Subset`` chain over it) implements the ``_batch_arrays()``
protocol (see ``minigrad.data.dataset``), the collate function is the default one, and the batch
sampler is the built-in one, each batch is made by fancy-indexing the whole-split arrays once
per array. It yields exactly what the per-item path would, in the same order.
"""
import collections.abc
import itertools

import numpy as np

import minigrad as mg
from .dataset import IterableDataset, Subset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _tensor(arr):
    return mg.from_numpy(np.ascontiguousarray(arr))


def _check_np_dtype(arr):
    if arr.dtype.kind in "OSUV" or arr.dtype.hasobject:
        raise TypeError(_ERR.format(f"numpy array of dtype {arr.dtype}"))


def default_collate(batch):
    """Merge a list of samples into a batch, as torch.utils.data.default_collate.

    - Tensors and numpy arrays are stacked along a new first dimension (dtype kept).
    - Python ints -> int64 tensor, floats -> float64 tensor, bools -> bool tensor;
      numpy scalars -> a tensor of their dtype.
    - strings and bytes are left as a list.
    - dicts are collated per key; namedtuples per field; tuples and lists per position,
      returned as a list (as PyTorch does).

    Example:
        >>> default_collate([(mg.zeros(2), 1), (mg.ones(2), 0)])
        [Tensor of shape (2, 2), Tensor([1, 0])]
    """
    elem = batch[0]
    if isinstance(elem, mg.Tensor):
        shapes = {tuple(t.shape) for t in batch}
        if len(shapes) > 1:
            raise RuntimeError(f"default_collate: stack expects each tensor to be equal size, "
                               f"but got shapes {sorted(shapes)}")
        if any(t.requires_grad for t in batch):
            return mg.stack(list(batch), 0)
        return mg.from_numpy(np.stack([t._data for t in batch]))
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        arrs = [np.asarray(b) for b in batch]
        _check_np_dtype(arrs[0])
        if len({a.shape for a in arrs}) > 1:
            raise RuntimeError(f"default_collate: stack expects each array to be equal size, "
                               f"but got shapes {sorted({a.shape for a in arrs})}")
        return mg.from_numpy(np.stack(arrs))
    if isinstance(elem, bool):
        return mg.from_numpy(np.array(batch, dtype=np.bool_))
    if isinstance(elem, int):
        return mg.from_numpy(np.array(batch, dtype=np.int64))
    if isinstance(elem, float):
        return mg.from_numpy(np.array(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return batch if isinstance(batch, list) else list(batch)
    if isinstance(elem, collections.abc.Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        return [default_collate(s) for s in zip(*batch)]
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """Turn numpy arrays (also inside dicts/lists/tuples) into tensors; leave everything else.

    The collate function used when automatic batching is off (``batch_size=None``).
    """
    if isinstance(data, np.ndarray) or (isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_))):
        arr = np.asarray(data)
        if arr.dtype.kind in "OSUV":
            return data
        return mg.from_numpy(arr)
    if isinstance(data, collections.abc.Mapping):
        out = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(out)
        except TypeError:
            return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


def _defining_class(cls, name):
    for k in cls.__mro__:
        if name in k.__dict__:
            return k
    return None


def _array_source(ds):
    """(arrays, index_map or None) for fast batching of ``ds``, or None if it does not apply."""
    if type(ds) is Subset:
        inner = _array_source(ds.dataset)
        if inner is None:
            return None
        arrays, imap = inner
        sub = np.asarray(ds.indices, dtype=np.int64).reshape(-1)
        return arrays, (sub if imap is None else imap[sub])
    owner = _defining_class(type(ds), "_batch_arrays")
    if owner is None:
        return None
    # a subclass that overrides __getitem__ below the protocol's owner changes the items: no fast path
    for name in ("__getitem__", "__getitems__"):
        if getattr(type(ds), name, None) is not getattr(owner, name, None):
            return None
    arrays = ds._batch_arrays()
    if arrays is None:
        return None
    return tuple(np.asarray(a) for a in arrays), None


class DataLoader:
    """Iterate over a dataset in batches, as torch.utils.data.DataLoader.

    Args:
        dataset (Dataset): map-style (``__getitem__``/``__len__``) or IterableDataset.
        batch_size (int or None): samples per batch; None disables automatic batching. Default: 1.
        shuffle (bool): reshuffle every epoch (a RandomSampler over the dataset). Default: False.
        sampler (Sampler or iterable): index order; mutually exclusive with ``shuffle``.
        batch_sampler (Sampler or iterable): yields lists of indices; mutually exclusive with
            ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers (int): accepted for compatibility; loading is always in-process.
        collate_fn (callable): merges a list of samples into a batch. Default: ``default_collate``.
        drop_last (bool): drop the last incomplete batch. Default: False.
        generator (mg.Generator): randomness for shuffling; the same seed gives the same order,
            and successive epochs differ.

    Example:
        >>> ds = mg.data.TensorDataset(mg.randn(100, 3), mg.arange(100))
        >>> for x, y in mg.data.DataLoader(ds, batch_size=32, shuffle=True):
        ...     pass
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        # in_order (PyTorch 2.6+): batches always come in order here, loading in this process
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            if sampler is not None and shuffle:
                raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

    def __iter__(self):
        if self._iterable:
            return self._iter_iterable()
        if self.batch_sampler is None:
            return (self.collate_fn(self.dataset[i]) for i in self.sampler)
        if self.collate_fn is default_collate:
            src = _array_source(self.dataset)
            if src is not None:
                return self._iter_arrays(*src)
        return self._iter_items()

    def _fetch(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(indices)
        return [self.dataset[i] for i in indices]

    def _iter_items(self):
        for indices in self.batch_sampler:
            yield self.collate_fn(self._fetch(indices))

    def _iter_arrays(self, arrays, imap):
        batches = self.batch_sampler._index_batches() if isinstance(self.batch_sampler, BatchSampler) else None
        if batches is None:
            batches = (np.asarray(b, dtype=np.int64) for b in self.batch_sampler)
        for idx in batches:
            if imap is not None:
                idx = imap[idx]
            yield [mg.from_numpy(a[idx]) for a in arrays]

    def _iter_iterable(self):
        it = iter(self.dataset)
        if self.batch_size is None:
            for item in it:
                yield self.collate_fn(item)
            return
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)
