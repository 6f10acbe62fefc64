"""Sequential, ModuleList, ModuleDict: indexing, slicing, mutation, naming, repr."""
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


class Scale(nn.Module):
    """y = x * s, with s a parameter (needs nothing from nn.functional)."""

    def __init__(self, s=2.0):
        super().__init__()
        self.s = nn.Parameter(mg.tensor([float(s)]))

    def forward(self, x):
        return x * self.s

    def extra_repr(self):
        return f"s={self.s.item()}"


# ---------------------------------------------------------------- Sequential
def test_sequential_forward_chains():
    seq = nn.Sequential(Scale(2.0), Scale(3.0))
    np.testing.assert_allclose(seq(mg.tensor([1.0, 2.0])).data.numpy(), [6.0, 12.0])


def test_sequential_names_and_ordereddict_ctor():
    seq = nn.Sequential(Scale(), Scale())
    assert [n for n, _ in seq.named_parameters()] == ["0.s", "1.s"]
    named = nn.Sequential(OrderedDict([("first", Scale()), ("second", Scale())]))
    assert [n for n, _ in named.named_parameters()] == ["first.s", "second.s"]
    assert named.first is named[0]


def test_sequential_indexing_negative_and_errors():
    a, b, c = Scale(1), Scale(2), Scale(3)
    seq = nn.Sequential(a, b, c)
    assert seq[0] is a and seq[-1] is c and seq[-3] is a
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    with pytest.raises(IndexError):
        seq[-4]


def test_sequential_slice_is_sequential_sharing_modules():
    a, b, c = Scale(1), Scale(2), Scale(3)
    seq = nn.Sequential(a, b, c)
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2
    assert sub[0] is b and sub[1] is c
    assert list(sub._modules) == ["1", "2"]  # slicing keeps the original names, as PyTorch
    assert list(seq[::-1]) == [c, b, a]


def test_sequential_len_iter_append_insert_extend_pop():
    a, b, c = Scale(1), Scale(2), Scale(3)
    seq = nn.Sequential(a)
    assert seq.append(b) is seq
    assert len(seq) == 2 and list(seq) == [a, b]
    seq.insert(0, c)
    assert list(seq) == [c, a, b] and list(seq._modules) == ["0", "1", "2"]
    seq.extend([Scale(4)])
    assert len(seq) == 4
    assert seq.pop(0) is c
    assert list(seq._modules) == ["0", "1", "2"] and seq[0] is a


def test_sequential_setitem_delitem_renumbers():
    a, b, c = Scale(1), Scale(2), Scale(3)
    seq = nn.Sequential(a, b, c)
    d = Scale(4)
    seq[-1] = d
    assert seq[2] is d
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and seq[0] is b
    del seq[0:1]
    assert len(seq) == 1 and seq[0] is d


def test_sequential_add():
    s = nn.Sequential(Scale(1)) + nn.Sequential(Scale(2))
    assert len(s) == 2


def test_sequential_repr():
    seq = nn.Sequential(Scale(2), nn.Sequential(Scale(3)))
    assert repr(seq) == ("Sequential(\n"
                         "  (0): Scale(s=2.0)\n"
                         "  (1): Sequential(\n"
                         "    (0): Scale(s=3.0)\n"
                         "  )\n"
                         ")")
    assert repr(nn.Sequential()) == "Sequential()"


def test_sequential_train_eval_reaches_children():
    seq = nn.Sequential(Scale(), nn.Sequential(Scale()))
    seq.eval()
    assert not seq[1][0].training


# ---------------------------------------------------------------- ModuleList
def test_modulelist_registers_and_names():
    ml = nn.ModuleList([Scale(), Scale()])
    holder = nn.Module()
    holder.layers = ml
    assert [n for n, _ in holder.named_parameters()] == ["layers.0.s", "layers.1.s"]


def test_modulelist_indexing_slicing():
    mods = [Scale(i) for i in range(4)]
    ml = nn.ModuleList(mods)
    assert ml[0] is mods[0] and ml[-1] is mods[3]
    sl = ml[1:3]
    assert isinstance(sl, nn.ModuleList) and list(sl) == mods[1:3]
    assert list(sl._modules) == ["0", "1"]  # a fresh list, renumbered
    with pytest.raises(IndexError):
        ml[4]


def test_modulelist_append_extend_insert_index_pop():
    a, b, c, d = (Scale(i) for i in range(4))
    ml = nn.ModuleList()
    assert len(ml) == 0
    ml.append(a).extend([b, c])
    assert list(ml) == [a, b, c]
    ml.insert(1, d)
    assert list(ml) == [a, d, b, c] and list(ml._modules) == ["0", "1", "2", "3"]
    assert ml.index(b) == 2
    with pytest.raises(ValueError):
        ml.index(Scale())
    assert ml.pop(1) is d and list(ml) == [a, b, c]
    ml += [d]
    assert ml[-1] is d and d in ml
    with pytest.raises(TypeError):
        ml.extend(Scale())


def test_modulelist_setitem_delitem():
    a, b, c = (Scale(i) for i in range(3))
    ml = nn.ModuleList([a, b])
    ml[-1] = c
    assert ml[1] is c
    del ml[0]
    assert list(ml) == [c] and list(ml._modules) == ["0"]


def test_modulelist_repr_compresses_repeats():
    ml = nn.ModuleList([Scale(1), Scale(1), Scale(1), Scale(2)])
    assert repr(ml) == ("ModuleList(\n"
                        "  (0-2): 3 x Scale(s=1.0)\n"
                        "  (3): Scale(s=2.0)\n"
                        ")")
    assert repr(nn.ModuleList()) == "ModuleList()"


def test_modulelist_has_no_forward():
    with pytest.raises(NotImplementedError):
        nn.ModuleList([Scale()])(mg.ones(1))


# ---------------------------------------------------------------- ModuleDict
def test_moduledict_basic_operations():
    a, b = Scale(1), Scale(2)
    md = nn.ModuleDict({"a": a, "b": b})
    assert list(md.keys()) == ["a", "b"] and list(md.values()) == [a, b]
    assert md["a"] is a and "b" in md and len(md) == 2
    assert list(md) == ["a", "b"]
    assert [n for n, _ in md.named_parameters()] == ["a.s", "b.s"]
    md["c"] = Scale(3)
    assert list(md.items())[-1][0] == "c"
    assert md.pop("a") is a and "a" not in md
    del md["b"]
    assert list(md) == ["c"]
    md.update([("d", Scale()), ("e", Scale())])
    assert list(md) == ["c", "d", "e"]
    md.clear()
    assert len(md) == 0


def test_moduledict_rejects_non_modules():
    with pytest.raises(TypeError):
        nn.ModuleDict({"x": 3})


def test_containers_state_dict_round_trip():
    a = nn.Sequential(Scale(1), nn.ModuleList([Scale(2)]), nn.ModuleDict({"k": Scale(3)}))
    b = nn.Sequential(Scale(0), nn.ModuleList([Scale(0)]), nn.ModuleDict({"k": Scale(0)}))
    assert list(a.state_dict()) == ["0.s", "1.0.s", "2.k.s"]
    b.load_state_dict(a.state_dict())
    assert b[2]["k"].s.item() == 3.0
