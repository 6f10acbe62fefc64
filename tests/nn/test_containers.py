"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict: indexing, slicing, mutation, naming, repr."""
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


# ---------------------------------------------------------------- ParameterList / ParameterDict
# (missing before: nn.ParameterList was an AttributeError; reprs and orders below are PyTorch 2.13's)
def test_parameter_list_registers_wraps_and_indexes():
    pl = nn.ParameterList([nn.Parameter(mg.zeros(2, 3)), mg.ones(2)])
    pl.append(nn.Parameter(mg.zeros(1))).extend([mg.zeros(4)])
    assert len(pl) == 4 and [n for n, _ in pl.named_parameters()] == ["0", "1", "2", "3"]
    assert type(pl[1]) is nn.Parameter and pl[1].requires_grad  # a plain tensor is wrapped
    assert [tuple(p.shape) for p in pl] == [(2, 3), (2,), (1,), (4,)] and tuple(pl[-1].shape) == (4,)
    assert isinstance(pl[1:3], nn.ParameterList) and len(pl[1:3]) == 2 and pl[1:3][0] is pl[1]
    pl[0] = mg.zeros(5)
    assert type(pl[0]) is nn.Parameter and tuple(pl[0].shape) == (5,)
    pl.append("note")  # not a tensor: kept, not a parameter
    assert repr(pl) == ("ParameterList(\n"
                        "    (0): Parameter containing: [minigrad.float32 of size 5]\n"
                        "    (1): Parameter containing: [minigrad.float32 of size 2]\n"
                        "    (2): Parameter containing: [minigrad.float32 of size 1]\n"
                        "    (3): Parameter containing: [minigrad.float32 of size 4]\n"
                        "    (4): Object of type: str\n)")
    assert len(list(pl.parameters())) == 4
    with pytest.raises(IndexError):
        pl[7]
    with pytest.raises(RuntimeError, match="should not be called"):
        pl(1)


def test_parameter_list_in_a_module_trains_and_loads():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([nn.Parameter(mg.ones(2)) for _ in range(2)])

        def forward(self, x):
            return sum(x * w for w in self.ws)

    m = M()
    m(mg.ones(2)).sum().backward()
    assert [n for n, _ in m.named_parameters()] == ["ws.0", "ws.1"] and list(m.state_dict()) == ["ws.0", "ws.1"]
    assert all(p.grad.tolist() == [1.0, 1.0] for p in m.parameters())
    m2 = M()
    assert repr(m2.load_state_dict(m.state_dict())) == "<All keys matched successfully>"
    assert m2.double().ws[0].dtype == mg.float64


def test_parameter_dict_mapping_api():
    d = nn.ParameterDict({"b": nn.Parameter(mg.zeros(2)), "a": mg.ones(3)})
    assert list(d.keys()) == ["a", "b"]  # a plain dict is sorted, as PyTorch
    assert type(d["a"]) is nn.Parameter and "a" in d and len(d) == 2
    d.update([("c", nn.Parameter(mg.zeros(1)))])
    d["d"] = mg.zeros(2, 2)
    assert list(d) == ["a", "b", "c", "d"] and [n for n, _ in d.named_parameters()] == ["a", "b", "c", "d"]
    assert repr(d) == ("ParameterDict(\n"
                       "    (a): Parameter containing: [minigrad.FloatTensor of size 3]\n"
                       "    (b): Parameter containing: [minigrad.FloatTensor of size 2]\n"
                       "    (c): Parameter containing: [minigrad.FloatTensor of size 1]\n"
                       "    (d): Parameter containing: [minigrad.FloatTensor of size 2x2]\n)")
    assert tuple(d.pop("b").shape) == (2,) and list(d) == ["a", "c", "d"]
    assert d.popitem()[0] == "d" and list(d) == ["a", "c"]
    assert d.get("zz", 5) == 5 and tuple(d.setdefault("e", mg.zeros(1)).shape) == (1,)
    assert list(d.copy()) == ["a", "c", "e"] and d.copy()["a"] is d["a"]
    assert list(d | nn.ParameterDict({"z": mg.zeros(1)})) == ["a", "c", "e", "z"]
    assert list(reversed(d)) == ["e", "c", "a"]
    del d["a"]
    assert list(d.state_dict()) == ["c", "e"]
    d.clear()
    assert len(d) == 0 and list(nn.ParameterDict(OrderedDict(z=mg.zeros(1), a=mg.zeros(1)))) == ["z", "a"]
    with pytest.raises(TypeError):
        d[1]
    with pytest.raises(ValueError):
        d.update([("a",)])
