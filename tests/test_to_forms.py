"""Tensor.to and Module.to take every form PyTorch's do (issue 32 item 1: `model.to(mg.device("cpu"))`
raised), checked against torch as the oracle: which calls succeed, the dtype they give, whether
the result is the same object, and which calls raise (and with what error type)."""
import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

# each form is written once, for a namespace `t` (minigrad or torch) and a tensor `x` of it
FORMS = {
    "device_obj": lambda t, x: ((t.device("cpu"),), {}),
    "device_str": lambda t, x: (("cpu",), {}),
    "device_indexed": lambda t, x: (("cpu:0",), {}),
    "dtype": lambda t, x: ((t.float64,), {}),
    "same_dtype": lambda t, x: ((t.float32,), {}),
    "python_type": lambda t, x: ((float,), {}),
    "tensor": lambda t, x: ((t.ones(1, dtype=t.float64),), {}),
    "tensor_same": lambda t, x: ((t.ones(1),), {}),
    "device_dtype": lambda t, x: ((t.device("cpu"), t.float64), {}),
    "str_dtype": lambda t, x: (("cpu", t.float64), {}),
    "kw_device": lambda t, x: ((), {"device": t.device("cpu")}),
    "kw_dtype": lambda t, x: ((), {"dtype": t.float64}),
    "kw_both": lambda t, x: ((), {"device": "cpu", "dtype": t.float64}),
    "device_kw_dtype": lambda t, x: (("cpu",), {"dtype": t.float64}),
    "none": lambda t, x: ((None,), {}),
    "nothing": lambda t, x: ((), {}),
    "dtype_non_blocking": lambda t, x: ((t.float64,), {"non_blocking": True}),
    "dtype_non_blocking_pos": lambda t, x: ((t.float64, True), {}),
    "device_dtype_non_blocking_pos": lambda t, x: (("cpu", t.float64, True), {}),
    "tensor_non_blocking": lambda t, x: ((t.ones(1, dtype=t.float64), True), {}),
    "copy": lambda t, x: ((t.float32,), {"copy": True}),
    "copy_pos": lambda t, x: ((t.float32, False, True), {}),
    "device_copy": lambda t, x: (("cpu",), {"copy": True}),
    "tensor_copy": lambda t, x: ((t.ones(1),), {"copy": True}),
    "copy_false": lambda t, x: ((t.float64,), {"copy": False}),
    "memory_format": lambda t, x: ((), {"memory_format": t.preserve_format}),
    "dtype_memory_format": lambda t, x: ((t.float64,), {"memory_format": t.contiguous_format}),
    "all_keywords": lambda t, x: ((), {"device": "cpu", "dtype": t.float64, "non_blocking": False,
                                       "copy": False, "memory_format": t.preserve_format}),
    "int_dtype": lambda t, x: ((t.int64,), {}),
    # refused: a second dtype, a device after a dtype, a dtype and device twice, unknown keywords,
    # a tensor with a dtype keyword, a non-bool flag, a non-memory_format memory_format, CUDA
    "dtype_dtype": lambda t, x: ((t.float32, t.float64), {}),
    "dtype_device": lambda t, x: ((t.float64, "cpu"), {}),
    "dtype_kw_device": lambda t, x: ((t.float64,), {"device": "cpu"}),
    "device_twice": lambda t, x: (("cpu",), {"device": "cpu"}),
    "tensor_kw_dtype": lambda t, x: ((t.ones(1),), {"dtype": t.float64}),
    "unknown_kw": lambda t, x: ((t.float64,), {"foo": 1}),
    "non_blocking_int": lambda t, x: ((t.float64,), {"non_blocking": 1}),
    "memory_format_int": lambda t, x: ((), {"memory_format": 3}),
    "too_many": lambda t, x: ((t.float64, False, False, False), {}),
    "cuda": lambda t, x: (("cuda",), {}),
}

torch = None


def _outcome(call):
    try:
        r = call()
    except Exception as e:  # noqa: BLE001  (the error's type is what is compared)
        # torch without CUDA raises AssertionError/RuntimeError for 'cuda'; minigrad a RuntimeError
        return ("raises", RuntimeError if isinstance(e, AssertionError) else type(e))
    return r


def _dtype_name(d):
    return str(d).replace("torch.", "")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_tensor_to_matches_torch(form):
    torch = pytest.importorskip("torch")
    xt, xm = torch.ones(2, 3), mg.ones(2, 3)
    rt = _outcome(lambda: xt.to(*FORMS[form](torch, xt)[0], **FORMS[form](torch, xt)[1]))
    rm = _outcome(lambda: xm.to(*FORMS[form](mg, xm)[0], **FORMS[form](mg, xm)[1]))
    if isinstance(rt, tuple):
        assert rm == rt, f"{form}: torch {rt}, minigrad {rm}"
        return
    assert not isinstance(rm, tuple), f"{form}: torch succeeds, minigrad raises {rm[1].__name__}"
    assert _dtype_name(rm.dtype) == _dtype_name(rt.dtype), form
    if form != "device_indexed":  # torch copies for 'cpu:0' (index 0 differs from none); minigrad need not
        assert (rm is xm) == (rt is xt), f"{form}: same object in torch: {rt is xt}"
    assert rm.tolist() == rt.tolist()


@pytest.mark.parametrize("form", sorted(FORMS))
def test_module_to_matches_torch(form):
    torch = pytest.importorskip("torch")
    mt, mm = torch.nn.Linear(2, 2), nn.Linear(2, 2)
    rt = _outcome(lambda: mt.to(*FORMS[form](torch, None)[0], **FORMS[form](torch, None)[1]))
    rm = _outcome(lambda: mm.to(*FORMS[form](mg, None)[0], **FORMS[form](mg, None)[1]))
    if isinstance(rt, tuple):
        assert rm == rt, f"{form}: torch {rt}, minigrad {rm}"
        return
    assert rm is mm, f"{form}: Module.to returns the module itself"
    assert _dtype_name(mm.weight.dtype) == _dtype_name(mt.weight.dtype), form


def test_model_to_device_object_as_a_ported_script_writes_it():
    # the first lines of most scripts: device = torch.device(...); model.to(device); x.to(device)
    device = mg.device("cuda" if mg.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(3, 2)).to(device)
    w = model[0].weight
    assert model.to(device, mg.float64) is model and model[0].weight is w and w.dtype == mg.float64
    x = mg.ones(1, 3).to(device, non_blocking=True)
    assert model(x.to(w)).dtype == mg.float64
    assert model.to(mg.device("cpu", 0)) is model
    with pytest.raises(RuntimeError, match="CPU only.*'cuda:1'"):
        model.to(mg.device("cuda", 1))
    with pytest.raises(RuntimeError, match="does not accept copy"):
        model.to(mg.float64, copy=True)
    with pytest.raises(TypeError, match="floating point"):
        model.to(mg.ones(1, dtype=mg.int64))


def test_tensor_to_copy_is_a_differentiable_copy():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = a.to("cpu", copy=True)
    assert b is not a and b.grad_fn is not None
    b._data[0] = 7.0  # its own memory
    assert a.tolist() == [1.0, 2.0]
    (b * b).sum().backward()
    assert a.grad.tolist() == [14.0, 4.0]


def test_tensor_to_memory_format():
    x = mg.ones(3, 2).T
    # like PyTorch, no copy when nothing else changes; a copy honours contiguous_format
    assert x.to(memory_format=mg.contiguous_format) is x
    assert not x.to(mg.float64).is_contiguous()  # preserve_format keeps the layout
    assert x.to(mg.float64, memory_format=mg.contiguous_format).is_contiguous()
    assert x.to(copy=True, memory_format=mg.contiguous_format).is_contiguous()
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        x.to(memory_format=mg.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d format"):
        mg.ones(1, 1, 1, 1).to(memory_format=mg.channels_last_3d)
    y = mg.ones(1, 2, 3, 3)
    assert np.array_equal(y.to(mg.float64, memory_format=mg.channels_last).numpy(), np.ones((1, 2, 3, 3)))
    assert nn.Conv2d(2, 2, 1).to(memory_format=mg.channels_last).weight.dtype == mg.float32


def test_memory_formats_are_singletons():
    assert pickle.loads(pickle.dumps(mg.channels_last)) is mg.channels_last
    assert repr(mg.contiguous_format) == "minigrad.contiguous_format"
    assert isinstance(mg.preserve_format, mg.memory_format)


def test_packed_sequence_to_takes_the_same_forms():
    from minigrad.nn.utils.rnn import pack_padded_sequence
    p = pack_padded_sequence(mg.ones(3, 2, 1), [3, 2])
    assert p.to(mg.device("cpu")) is p
    assert p.to("cpu", mg.float64).data.dtype == mg.float64
    assert p.to(device="cpu", dtype=mg.float64).batch_sizes.tolist() == [2, 2, 1]
