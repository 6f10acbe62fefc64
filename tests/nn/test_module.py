"""Module machinery: registration, naming, traversal, modes, state_dict, dtype casts, repr."""
import copy
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


class Affine(nn.Module):
    """y = x * w + b with hand-made parameters and a buffer (needs nothing from nn.functional)."""

    def __init__(self, n=3):
        super().__init__()
        self.w = nn.Parameter(mg.ones(n))
        self.b = nn.Parameter(mg.zeros(n))
        self.register_buffer("count", mg.tensor(0))
        self.register_buffer("scratch", mg.zeros(n), persistent=False)

    def forward(self, x):
        return x * self.w + self.b


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = Affine(3)
        self.layer2 = Affine(3)
        self.head = nn.Parameter(mg.ones(3))

    def forward(self, x):
        return self.layer2(self.layer1(x)) * self.head


# ---------------------------------------------------------------- Parameter
def test_parameter_is_leaf_tensor_requiring_grad():
    p = nn.Parameter(mg.zeros(2, 3))
    assert isinstance(p, mg.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.shape == (2, 3)
    assert not nn.Parameter(mg.zeros(2), requires_grad=False).requires_grad


def test_parameter_shares_memory_with_source():
    t = mg.zeros(3)
    p = nn.Parameter(t)
    t.data[0] = 5.0
    assert p.data.numpy()[0] == 5.0
    arr = np.arange(3.0)
    assert nn.Parameter(arr).dtype == np.float64  # numpy keeps its dtype
    assert nn.Parameter([1.0, 2.0]).dtype == mg.float32  # Python floats give the default dtype


def test_parameter_from_non_leaf_is_leaf():
    x = mg.ones(2, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None
    np.testing.assert_allclose(p.data.numpy(), [2.0, 2.0])


def test_parameter_default_and_repr():
    assert nn.Parameter().numel() == 0
    r = repr(nn.Parameter(mg.tensor([1.0, 2.0])))
    assert r.startswith("Parameter containing:\ntensor(")
    assert "requires_grad=True" in r


def test_parameter_gradient_accumulates():
    p = nn.Parameter(mg.tensor([1.0, 2.0]))
    (p * p).sum().backward()
    np.testing.assert_allclose(p.grad.data.numpy(), [2.0, 4.0])


# ---------------------------------------------------------------- registration and naming
def test_named_parameters_nested_order():
    names = [n for n, _ in Net().named_parameters()]
    assert names == ["head", "layer1.w", "layer1.b", "layer2.w", "layer2.b"]


def test_named_parameters_prefix_and_no_recurse():
    net = Net()
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["head"]
    assert [n for n, _ in net.named_parameters(prefix="model")][0] == "model.head"
    assert len(list(net.parameters())) == 5


def test_named_buffers_includes_non_persistent():
    names = [n for n, _ in Net().named_buffers()]
    assert names == ["layer1.count", "layer1.scratch", "layer2.count", "layer2.scratch"]


def test_shared_parameters_deduplicated():
    net = Net()
    net.layer2.w = net.layer1.w
    params = list(net.parameters())
    assert len(params) == 4
    assert len({id(p) for p in params}) == 4
    assert [n for n, _ in net.named_parameters()] == ["head", "layer1.w", "layer1.b", "layer2.b"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 5
    # the state dict keeps both names, as PyTorch
    assert "layer2.w" in net.state_dict()


def test_shared_module_listed_once():
    shared = Affine()
    outer = nn.Module()
    outer.a = shared
    outer.b = shared
    assert [n for n, _ in outer.named_modules()] == ["", "a"]
    assert len(list(outer.children())) == 1
    assert len(list(outer.parameters())) == 2


def test_setattr_registers_and_getattr_reads():
    m = nn.Module()
    p = nn.Parameter(mg.ones(1))
    m.p = p
    assert m._parameters["p"] is p and m.p is p
    assert "p" not in m.__dict__
    m.child = Affine()
    assert "child" in m._modules
    m.plain = 3
    assert m.plain == 3 and "plain" not in m._parameters
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        m.missing


def test_reassigning_parameter_slot_requires_parameter_or_none():
    m = Affine()
    with pytest.raises(TypeError, match="cannot assign"):
        m.w = mg.ones(3)
    m.w = None
    assert m.w is None
    assert [n for n, _ in m.named_parameters()] == ["b"]


def test_assigning_tensor_to_buffer_slot_updates_buffer():
    m = Affine()
    new = mg.tensor(7)
    m.count = new
    assert m._buffers["count"] is new
    with pytest.raises(TypeError):
        m.count = 3


def test_register_before_init_raises():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mg.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Bad()


def test_register_parameter_and_add_module_validation():
    m = nn.Module()
    m.register_parameter("bias", None)
    assert m.bias is None and list(m.parameters()) == []
    with pytest.raises(TypeError):
        m.register_parameter("x", mg.ones(2))
    with pytest.raises(KeyError, match='"."'):
        m.register_parameter("a.b", nn.Parameter(mg.ones(1)))
    with pytest.raises(TypeError):
        m.add_module("c", "not a module")
    m.add_module("c", Affine())
    assert isinstance(m.c, Affine)
    m.x = 1
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("x", mg.ones(1))


def test_delattr_and_dir():
    m = Affine()
    assert {"w", "b", "count", "forward"} <= set(dir(m))
    del m.w
    assert "w" not in m._parameters
    del m.count
    assert "count" not in m._buffers
    with pytest.raises(AttributeError):
        m.w


def test_children_modules_named_modules():
    net = Net()
    assert [n for n, _ in net.named_children()] == ["layer1", "layer2"]
    assert [n for n, _ in net.named_modules()] == ["", "layer1", "layer2"]
    assert list(net.modules())[0] is net


def test_get_submodule_parameter_buffer():
    outer = nn.Module()
    outer.net = Net()
    assert outer.get_submodule("net.layer1") is outer.net.layer1
    assert outer.get_submodule("") is outer
    assert outer.get_parameter("net.layer2.w") is outer.net.layer2.w
    assert outer.get_buffer("net.layer1.count") is outer.net.layer1.count
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        outer.get_submodule("net.nope")


def test_set_submodule():
    # was missing (AttributeError); PyTorch's replace-or-add, strict and error rules
    outer = nn.Module()
    outer.net = Net()
    new = Affine()
    outer.set_submodule("net.layer1", new)
    assert outer.net.layer1 is new and outer.get_submodule("net.layer1") is new
    outer.set_submodule("net.extra", Affine())  # not strict: added
    assert [n for n, _ in outer.net.named_children()] == ["layer1", "layer2", "extra"]
    with pytest.raises(AttributeError, match="has no attribute `other`"):
        outer.set_submodule("net.other", Affine(), strict=True)
    with pytest.raises(AttributeError, match="is not an nn.Module"):
        outer.set_submodule("net.layer1.w", Affine())
    with pytest.raises(ValueError):
        outer.set_submodule("", Affine())
    with pytest.raises(ValueError):
        outer.set_submodule("net.layer1", 3)


def test_apply_visits_children_first():
    net = Net()
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Affine", "Affine", "Net"]


# ---------------------------------------------------------------- call and hooks
def test_call_runs_forward():
    m = Affine()
    out = m(mg.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(out.data.numpy(), [1.0, 2.0, 3.0])


def test_forward_not_implemented():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_forward_hooks_and_removal():
    m = Affine()
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    out = m(mg.ones(3))
    np.testing.assert_allclose(out.data.numpy(), [3.0, 3.0, 3.0])
    assert calls == [(3,)]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(m(mg.ones(3)).data.numpy(), [1.0, 1.0, 1.0])


def test_forward_hooks_with_kwargs_prepend_always_call():
    # PyTorch's keyword-only hook options; they used to be a TypeError
    m = nn.Identity()
    log = []

    def pre(mod, args, kwargs):
        log.append(("pre", len(args), sorted(kwargs)))
        return (), {"input": kwargs["input"] * 2}

    m.register_forward_pre_hook(pre, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("post", sorted(kwargs))) or out + 1,
                            with_kwargs=True)
    h = m.register_forward_hook(lambda mod, args, out: log.append("first"), prepend=True)
    np.testing.assert_allclose(m(input=mg.ones(2)).numpy(), [3.0, 3.0])
    assert log == [("pre", 0, ["input"]), "first", ("post", ["input"])]
    h.remove()
    assert not m._forward_hooks_with_kwargs.keys() - m._forward_hooks.keys()

    bad = nn.Identity()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    with pytest.raises(RuntimeError, match="new_kwargs"):
        bad(mg.ones(1))

    class Raises(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    r = Raises()
    seen = []
    r.register_forward_hook(lambda mod, args, out: seen.append("plain"))
    r.register_forward_hook(lambda mod, args, out: seen.append(("always", out)), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        r(mg.ones(1))
    assert seen == [("always", None)]


# ---------------------------------------------------------------- train / eval / grads
def test_train_eval_propagate():
    net = Net()
    assert net.training and net.layer1.training
    assert net.eval() is net
    assert not net.training and not net.layer1.training and not net.layer2.training
    net.train()
    assert all(m.training for m in net.modules())
    net.train(False)
    assert not any(m.training for m in net.modules())
    with pytest.raises(ValueError, match="boolean"):
        net.train("yes")


def test_zero_grad_set_to_none_and_zeros():
    net = Net()
    net(mg.ones(3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    grad_obj = net.head.grad
    net.zero_grad(set_to_none=False)
    assert net.head.grad is grad_obj  # zeroed in place
    assert all(np.all(p.grad.data.numpy() == 0) for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_requires_grad_freezes():
    net = Net()
    net.layer1.requires_grad_(False)
    assert not net.layer1.w.requires_grad and net.layer2.w.requires_grad
    net(mg.ones(3)).sum().backward()
    assert net.layer1.w.grad is None and net.layer2.w.grad is not None


# ---------------------------------------------------------------- dtype conversion
def test_to_double_keeps_parameter_identity_and_casts_float_buffers_only():
    net = Net()
    w = net.layer1.w
    assert net.to(mg.float64) is net
    assert net.layer1.w is w and isinstance(w, nn.Parameter)
    assert w.dtype == mg.float64 and w.requires_grad
    assert net.layer1.scratch.dtype == mg.float64
    assert net.layer1.count.dtype == mg.int64  # integer buffers untouched
    out = net(mg.ones(3, dtype=mg.float64))
    assert out.dtype == mg.float64
    net.float()
    assert w.dtype == mg.float32
    net.double()
    assert w.dtype == mg.float64


def test_to_accepts_cpu_device_and_rejects_others():
    net = Net()
    assert net.to("cpu") is net and net.cpu() is net
    assert net.to("cpu", mg.float64).head.dtype == mg.float64
    assert net.to(mg.zeros(1, dtype=mg.float32)).head.dtype == mg.float32
    with pytest.raises(RuntimeError, match="CPU"):
        net.to("cuda")
    with pytest.raises(TypeError, match="floating point"):
        net.to(mg.int64)


def test_to_casts_existing_grads():
    net = Affine()
    net(mg.ones(3)).sum().backward()
    net.double()
    assert net.w.grad.dtype == mg.float64


# ---------------------------------------------------------------- state dict
def test_state_dict_keys_order_and_persistence():
    sd = Net().state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["head", "layer1.w", "layer1.b", "layer1.count", "layer2.w", "layer2.b",
                        "layer2.count"]


def test_state_dict_values_detached_and_share_memory():
    net = Net()
    sd = net.state_dict()
    v = sd["layer1.w"]
    assert not isinstance(v, nn.Parameter) and not v.requires_grad
    with mg.no_grad():
        net.layer1.w.fill_(4.0)
    assert np.all(v.data.numpy() == 4.0)
    assert net.state_dict(keep_vars=True)["layer1.w"] is net.layer1.w


def test_state_dict_round_trip():
    a, b = Net(), Net()
    with mg.no_grad():
        for i, p in enumerate(a.parameters()):
            p.copy_(mg.full(p.shape, float(i + 1)))
        a.layer1.count.fill_(5)
    w_before = b.layer1.w
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert b.layer1.w is w_before  # copied in place
    for (na, pa), (nb, pb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert na == nb
        np.testing.assert_array_equal(pa.data.numpy(), pb.data.numpy())
    # the copy is a copy: changing a afterwards leaves b alone
    with mg.no_grad():
        a.head.fill_(-1.0)
    assert np.all(b.head.data.numpy() == 1.0)


def test_load_state_dict_casts_dtype_and_refuses_numpy_arrays_as_pytorch():
    net = Affine()
    with pytest.raises(RuntimeError, match=r'"w", expected minigrad.Tensor'):
        net.load_state_dict({"w": np.full(3, 2.0), "b": mg.zeros(3), "count": mg.tensor(3)})
    net.load_state_dict({"w": mg.tensor(np.full(3, 2.0)), "b": mg.zeros(3), "count": mg.tensor(3)})
    assert net.w.dtype == mg.float32
    np.testing.assert_allclose(net.w.data.numpy(), 2.0)
    assert net.count.item() == 3


def test_load_state_dict_strict_errors_list_missing_and_unexpected():
    net = Net()
    sd = net.state_dict()
    del sd["layer1.b"]
    sd["layer3.weight"] = mg.ones(1)
    sd["extra"] = mg.ones(1)
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(sd)
    msg = str(e.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "layer1.b".' in msg
    assert 'Unexpected key(s) in state_dict: "layer3.weight", "extra".' in msg


def test_load_state_dict_size_mismatch_message():
    class M(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.fc = nn.Module()
            self.fc.weight = nn.Parameter(mg.zeros(n, 4))

    with pytest.raises(RuntimeError) as e:
        M(4).load_state_dict(M(3).state_dict())
    assert ("size mismatch for fc.weight: copying a param with shape (3, 4) from checkpoint, "
            "the shape in current model is (4, 4).") in str(e.value)
    # size mismatches are errors even when strict=False
    with pytest.raises(RuntimeError, match="size mismatch"):
        M(4).load_state_dict(M(3).state_dict(), strict=False)


def test_load_state_dict_non_strict_returns_named_tuple():
    net = Net()
    sd = net.state_dict()
    sd.pop("head")
    sd["bogus"] = mg.ones(1)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["head"]
    assert result.unexpected_keys == ["bogus"]
    missing, unexpected = result
    assert missing == ["head"]


def test_load_state_dict_does_not_record_graph():
    net = Affine()
    net.load_state_dict({"w": mg.ones(3, requires_grad=True) * 3, "b": mg.zeros(3), "count": mg.tensor(0)})
    assert net.w.is_leaf and net.w.grad_fn is None
    np.testing.assert_allclose(net.w.data.numpy(), 3.0)


def test_load_state_dict_assign_takes_checkpoint_tensors():
    net = Affine()
    new_w = mg.tensor([5.0, 6.0, 7.0], dtype=mg.float64)
    net.load_state_dict({"w": new_w, "b": mg.zeros(3), "count": mg.tensor(2)}, assign=True)
    assert isinstance(net.w, nn.Parameter) and net.w.requires_grad
    assert net.w.dtype == mg.float64  # the checkpoint's dtype, not copied into the old float32 storage
    new_w.data[0] = -1.0
    assert net.w.data.numpy()[0] == -1.0  # shares memory with the checkpoint tensor
    assert net.count.item() == 2 and [n for n, _ in net.named_parameters()] == ["w", "b"]


def test_load_state_dict_rejects_non_mapping():
    with pytest.raises(TypeError, match="dict-like"):
        Net().load_state_dict([1, 2])


# ---------------------------------------------------------------- repr and copy
def test_repr_tree_nested_with_extra_repr():
    class Leaf(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k

        def extra_repr(self):
            return f"k={self.k}"

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Leaf(1)
            self.inner = nn.Module()
            self.inner.b = Leaf(2)

    assert repr(Leaf(3)) == "Leaf(k=3)"
    assert repr(nn.Module()) == "Module()"
    assert repr(Block()) == ("Block(\n"
                             "  (a): Leaf(k=1)\n"
                             "  (inner): Module(\n"
                             "    (b): Leaf(k=2)\n"
                             "  )\n"
                             ")")


def test_repr_multiline_extra_repr_with_children():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = Affine()

        def extra_repr(self):
            return "x=1\ny=2"

    assert repr(M()) == "M(\n  x=1\n  y=2\n  (c): Affine()\n)"


def test_deepcopy_gives_independent_module():
    net = Net()
    clone = copy.deepcopy(net)
    assert clone.layer1.w is not net.layer1.w
    assert isinstance(clone.layer1.w, nn.Parameter)
    with mg.no_grad():
        clone.layer1.w.fill_(9.0)
    assert np.all(net.layer1.w.data.numpy() == 1.0)
    assert [n for n, _ in clone.named_parameters()] == [n for n, _ in net.named_parameters()]
