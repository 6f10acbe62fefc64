import collections

import numpy as np
import pytest

import minigrad as mg
from minigrad.data import (BatchSampler, DataLoader, Dataset, IterableDataset, SequentialSampler,
                           Subset, TensorDataset, default_collate, default_convert)


def _ds(n=10):
    x = mg.tensor(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
    y = mg.tensor(np.arange(n, dtype=np.int64))
    return TensorDataset(x, y)


def _slow(batch):  # the per-item path: any collate_fn that is not default_collate itself
    return default_collate(batch)


# ---- default_collate

def test_collate_tensors_and_numbers():
    out = default_collate([(mg.zeros(2), 1, 0.5, True), (mg.ones(2), 2, 1.5, False)])
    assert isinstance(out, list) and len(out) == 4
    assert out[0].shape == (2, 2) and out[0].dtype == mg.float32
    np.testing.assert_array_equal(out[0].data.numpy(), [[0, 0], [1, 1]])
    assert out[1].dtype == mg.int64 and out[1].tolist() == [1, 2]
    assert out[2].dtype == mg.float64 and out[2].tolist() == [0.5, 1.5]  # as torch: Python floats -> float64
    assert out[3].dtype == mg.bool_ and out[3].tolist() == [True, False]


def test_collate_numpy_arrays_and_scalars_keep_dtype():
    out = default_collate([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)])
    assert isinstance(out, mg.Tensor) and out.dtype == mg.int32 and out.tolist() == [[1, 2], [3, 4]]
    out = default_collate([np.float32(1.5), np.float32(2.5)])
    assert out.dtype == mg.float32 and out.shape == (2,)
    with pytest.raises(TypeError):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([mg.zeros(2), mg.zeros(3)])


def test_collate_dicts_strings_lists_namedtuples():
    out = default_collate([{"x": mg.zeros(3), "name": "a", "k": 1}, {"x": mg.ones(3), "name": "b", "k": 2}])
    assert set(out) == {"x", "name", "k"}
    assert out["x"].shape == (2, 3) and out["name"] == ["a", "b"] and out["k"].tolist() == [1, 2]
    od = default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert isinstance(od, collections.OrderedDict)
    nested = default_collate([[1, (2.0, "s")], [3, (4.0, "t")]])
    assert nested[0].tolist() == [1, 3] and nested[1][0].tolist() == [2.0, 4.0] and nested[1][1] == ["s", "t"]
    P = collections.namedtuple("P", "a b")
    p = default_collate([P(1, 2.0), P(3, 4.0)])
    assert isinstance(p, P) and p.a.tolist() == [1, 3]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="found"):
        default_collate([object(), object()])


def test_collate_keeps_graph_for_tensors_requiring_grad():
    a = mg.ones(2, requires_grad=True)
    out = default_collate([a, a * 2])
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_allclose(a.grad.data.numpy(), [3, 3])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": 1, "c": "s"})
    assert isinstance(out["a"], mg.Tensor) and out["b"] == 1 and out["c"] == "s"


# ---- DataLoader basics

def test_batches_shapes_dtypes_len():
    dl = DataLoader(_ds(10), batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 == len(batches)
    assert [tuple(b[0].shape) for b in batches] == [(4, 3), (4, 3), (2, 3)]
    x, y = batches[0]
    assert x.dtype == mg.float32 and y.dtype == mg.int64
    np.testing.assert_array_equal(y.data.numpy(), [0, 1, 2, 3])


def test_drop_last():
    dl = DataLoader(_ds(10), batch_size=4, drop_last=True)
    assert len(dl) == 2 and [b[1].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_batch_size_one_default():
    dl = DataLoader(_ds(3))
    assert len(dl) == 3 and [tuple(b[0].shape) for b in dl] == [(1, 3)] * 3


def test_batch_size_none_disables_batching():
    dl = DataLoader(_ds(3), batch_size=None)
    items = list(dl)
    assert len(dl) == 3 and items[0][0].shape == (3,)


def test_shuffle_reproducible_with_generator_and_epochs_differ():
    def order(dl):
        return np.concatenate([y.data.numpy() for _, y in dl]).tolist()
    dl1 = DataLoader(_ds(50), batch_size=8, shuffle=True, generator=mg.Generator().manual_seed(0))
    dl2 = DataLoader(_ds(50), batch_size=8, shuffle=True, generator=mg.Generator().manual_seed(0))
    e1, e2 = order(dl1), order(dl1)
    assert sorted(e1) == list(range(50)) and e1 != list(range(50))
    assert e1 != e2
    assert order(dl2) == e1 and order(dl2) == e2


def test_shuffle_follows_manual_seed_without_generator():
    mg.manual_seed(123)
    a = [y.tolist() for _, y in DataLoader(_ds(20), batch_size=5, shuffle=True)]
    mg.manual_seed(123)
    b = [y.tolist() for _, y in DataLoader(_ds(20), batch_size=5, shuffle=True)]
    assert a == b


@pytest.mark.parametrize("kwargs, match", [
    (dict(sampler=SequentialSampler(range(4)), shuffle=True), "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0, 1]], batch_size=2), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0, 1]], shuffle=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0, 1]], drop_last=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0, 1]], sampler=[0]), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "mutually exclusive with drop_last"),
    (dict(num_workers=-1), "num_workers"),
])
def test_mutually_exclusive_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(_ds(4), **kwargs)


def test_custom_sampler_and_batch_sampler():
    dl = DataLoader(_ds(6), batch_size=2, sampler=[5, 4, 3, 2, 1, 0])
    assert [y.tolist() for _, y in dl] == [[5, 4], [3, 2], [1, 0]]
    dl = DataLoader(_ds(6), batch_sampler=[[0, 5], [2], [1, 3, 4]])
    assert len(dl) == 3 and [y.tolist() for _, y in dl] == [[0, 5], [2], [1, 3, 4]]
    bs = BatchSampler(SequentialSampler(range(6)), 4, drop_last=True)
    assert [y.tolist() for _, y in DataLoader(_ds(6), batch_sampler=bs)] == [[0, 1, 2, 3]]


def test_custom_collate_fn_and_generic_dataset():
    class Words(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"id": i, "word": "w%d" % i, "vec": np.full(2, i, dtype=np.float32)}

    batches = list(DataLoader(Words(), batch_size=2))
    assert batches[0]["id"].tolist() == [0, 1] and batches[2]["word"] == ["w4"]
    assert batches[1]["vec"].shape == (2, 2) and batches[1]["vec"].dtype == mg.float32
    dl = DataLoader(Words(), batch_size=3, collate_fn=lambda b: [d["id"] for d in b])
    assert list(dl) == [[0, 1, 2], [3, 4]]


def test_iterable_dataset():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    dl = DataLoader(Stream(), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]] and len(dl) == 3
    dl = DataLoader(Stream(), batch_size=3, drop_last=True)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5]] and len(dl) == 2
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Stream(), shuffle=True)
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Stream(), sampler=[0])


# ---- the fast path

def _assert_same_batches(a, b):
    a, b = list(a), list(b)
    assert len(a) == len(b)
    for ba, bb in zip(a, b):
        assert isinstance(ba, list) and len(ba) == len(bb)
        for ta, tb in zip(ba, bb):
            assert ta.dtype == tb.dtype and ta.shape == tb.shape
            np.testing.assert_array_equal(ta.data.numpy(), tb.data.numpy())


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=4, drop_last=True),
                                    dict(batch_size=5, shuffle=True)])
def test_fast_path_matches_per_item_path(kwargs):
    def make(collate):
        g = mg.Generator().manual_seed(9) if kwargs.get("shuffle") else None
        return DataLoader(_ds(17), collate_fn=collate, generator=g, **kwargs)
    _assert_same_batches(make(None), make(_slow))


def test_fast_path_skips_per_item_getitem(monkeypatch):
    calls = []
    orig = TensorDataset.__getitem__
    monkeypatch.setattr(TensorDataset, "__getitem__", lambda self, i: calls.append(i) or orig(self, i))
    batches = list(DataLoader(_ds(10), batch_size=4, shuffle=True))
    assert calls == [] and len(batches) == 3
    list(DataLoader(_ds(10), batch_size=4, collate_fn=_slow))
    assert len(calls) == 10


def test_fast_path_through_subsets():
    ds = _ds(20)
    sub = Subset(Subset(ds, list(range(19, -1, -1))), [0, 2, 4, 6, 8])
    fast = list(DataLoader(sub, batch_size=2))
    assert [y.tolist() for _, y in fast] == [[19, 17], [15, 13], [11]]
    _assert_same_batches(DataLoader(sub, batch_size=2), DataLoader(sub, batch_size=2, collate_fn=_slow))


def test_subclass_overriding_getitem_uses_its_items():
    class Doubled(TensorDataset):
        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return x * 2, y

    ds = Doubled(mg.tensor(np.ones((4, 2), dtype=np.float32)), mg.tensor(np.arange(4)))
    x, _ = next(iter(DataLoader(ds, batch_size=4)))
    np.testing.assert_array_equal(x.data.numpy(), np.full((4, 2), 2.0))


def test_dataset_requiring_grad_keeps_graph():
    w = mg.ones(4, 2, requires_grad=True)
    x, = next(iter(DataLoader(TensorDataset(w), batch_size=4)))
    assert x.requires_grad
    x.sum().backward()
    np.testing.assert_array_equal(w.grad.data.numpy(), np.ones((4, 2)))


def test_fast_batches_are_copies():
    ds = _ds(4)
    x, _ = next(iter(DataLoader(ds, batch_size=4)))
    x.data[...] = -1
    assert ds.tensors[0].data.numpy().min() >= 0


def test_collate_and_len_parity_with_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as tcollate
    samples = [({"a": 1, "b": 2.5, "c": True}, np.ones(2, dtype=np.float32), "s"),
               ({"a": 3, "b": 3.5, "c": False}, np.zeros(2, dtype=np.float32), "t")]
    ours, theirs = default_collate(samples), tcollate(samples)
    assert type(ours) is type(theirs) is list
    for k in "abc":
        assert str(ours[0][k].dtype) == str(theirs[0][k].dtype).replace("torch.", "")
        assert ours[0][k].tolist() == theirs[0][k].tolist()
    np.testing.assert_array_equal(ours[1].data.numpy(), theirs[1].numpy())
    assert ours[2] == list(theirs[2]) == ["s", "t"]
    for n, bs, dl in [(10, 3, False), (10, 3, True), (9, 3, True), (1, 4, False), (1, 4, True)]:
        t = torch.utils.data.DataLoader(range(n), batch_size=bs, drop_last=dl)
        assert len(DataLoader(range(n), batch_size=bs, drop_last=dl)) == len(t)


def test_utils_data_is_mg_data():
    # a script ports by renaming torch to mg: torch.utils.data's imports must resolve, to the same
    # objects (mg.utils.data was an AttributeError and `from minigrad.utils.data import ...` failed)
    import minigrad.utils.data.datasets
    from minigrad.utils.data import DataLoader
    from minigrad.utils.data.dataloader import default_collate
    assert mg.utils.data is mg.data and DataLoader is mg.data.DataLoader
    assert default_collate is mg.data.default_collate
    assert minigrad.utils.data.datasets.MNIST is mg.data.datasets.MNIST


def test_accepts_pytorch_loader_options():
    # in_order= (PyTorch 2.6+) was a TypeError; like the other multi-process options it changes nothing
    ds = mg.data.TensorDataset(mg.arange(5))
    dl = mg.data.DataLoader(ds, batch_size=2, num_workers=2, pin_memory=True, persistent_workers=True,
                            prefetch_factor=2, in_order=False)
    assert [b[0].tolist() for b in dl] == [[0, 1], [2, 3], [4]]
