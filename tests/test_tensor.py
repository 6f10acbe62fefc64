"""Tensor: construction, dtype inference, fields, conversion, casting, detach/requires_grad_, repr."""
import warnings

import numpy as np
import pytest

import minigrad as mg


@pytest.fixture
def default_float64():
    prev = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    try:
        yield
    finally:
        mg.set_default_dtype(prev)


# -- construction and dtype inference ---------------------------------------------------------------------

@pytest.mark.parametrize("data,dtype", [
    (1.5, mg.float32), ([1.0, 2.0], mg.float32), ([[1.0], [2.0]], mg.float32),
    (3, mg.int64), ([1, 2, 3], mg.int64),
    (True, mg.bool_), ([True, False], mg.bool_),
    ([1, 2.5], mg.float32),
])
def test_tensor_dtype_inference_from_python(data, dtype):
    t = mg.tensor(data)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.data.numpy(), np.asarray(data))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8, np.bool_])
def test_tensor_keeps_numpy_array_dtype(dtype):
    arr = np.arange(4).astype(dtype)
    t = mg.tensor(arr)
    assert t.dtype == np.dtype(dtype)


def test_tensor_from_numpy_float64_stays_float64():
    assert mg.tensor(np.array([1.0, 2.0])).dtype == mg.float64
    assert mg.Tensor(np.array([1.0, 2.0])).dtype == mg.float64


def test_tensor_explicit_dtype():
    assert mg.tensor([1, 2], dtype=mg.float64).dtype == mg.float64
    assert mg.tensor([1.7, 2.2], dtype=mg.int64).tolist() == [1, 2]
    assert mg.tensor(np.array([1.0]), dtype=mg.float32).dtype == mg.float32


def test_mg_tensor_copies_numpy_data():
    arr = np.array([1.0, 2.0])
    t = mg.tensor(arr)
    arr[0] = 100.0
    assert t.data.numpy()[0] == 1.0


def test_tensor_from_tensor():
    a = mg.tensor([1.0, 2.0])
    b = mg.tensor(a)
    assert b.dtype == mg.float32 and b.tolist() == [1.0, 2.0]
    b.data[0] = 5.0
    assert a.data.numpy()[0] == 1.0


def test_tensor_class_constructor_is_a_leaf():
    t = mg.Tensor([1.0, 2.0], requires_grad=True)
    assert t.is_leaf and t.requires_grad and t.grad_fn is None and t.grad is None
    assert t.dtype == mg.float32


def test_set_default_dtype_float64(default_float64):
    assert mg.get_default_dtype() == mg.float64
    assert mg.tensor(1.5).dtype == mg.float64
    assert mg.tensor([1.0, 2.0]).dtype == mg.float64
    assert mg.zeros(2).dtype == mg.float64
    assert mg.rand(2).dtype == mg.float64
    assert mg.tensor([1, 2]).dtype == mg.int64
    assert (mg.tensor([1, 2]) * 0.5).dtype == mg.float64


def test_default_dtype_restored():
    assert mg.get_default_dtype() == mg.float32
    assert mg.tensor(1.0).dtype == mg.float32


def test_set_default_dtype_rejects_int():
    with pytest.raises(TypeError):
        mg.set_default_dtype(mg.int64)
    assert mg.get_default_dtype() == mg.float32


def test_tensor_rejects_non_numeric():
    with pytest.raises(TypeError):
        mg.tensor(["a", "b"])


# -- fields -----------------------------------------------------------------------------------------------

def test_fields_of_leaf_and_non_leaf():
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert isinstance(x.data.numpy(), np.ndarray)
    assert x.shape == (2, 3) and x.ndim == 2 and x.dim() == 2
    assert x.size() == (2, 3) and x.size(0) == 2 and x.size(1) == 3 and x.size(-1) == 3
    assert x.numel() == 6
    assert x.dtype == mg.float32
    assert x.is_leaf and x.grad is None and x.grad_fn is None and x.requires_grad
    y = x * 2
    assert not y.is_leaf and y.requires_grad and y.grad_fn is not None


def test_T():
    x = mg.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x.T.data.numpy(), x.data.numpy().T)
    z = mg.tensor(np.arange(24.0).reshape(2, 3, 4))
    assert z.T.shape == (4, 3, 2)


def test_item_and_tolist():
    assert mg.tensor(2.5).item() == 2.5
    assert isinstance(mg.tensor(2.5).item(), float)
    assert isinstance(mg.tensor(3).item(), int)
    assert mg.tensor([[7]]).item() == 7
    with pytest.raises((RuntimeError, ValueError)):
        mg.tensor([1.0, 2.0]).item()
    assert mg.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert mg.tensor(True).tolist() is True


def test_item_of_requires_grad_tensor():
    x = mg.tensor(3.0, requires_grad=True)
    assert x.item() == 3.0
    assert float(x * 2) == 6.0


def test_format_of_zero_dim_tensor():
    # f"{loss:.4f}" on a 0-d tensor formats its value, as in PyTorch (was a TypeError)
    loss = (mg.tensor([1.0, 2.0], requires_grad=True) * 1.5).sum()
    assert f"{loss:.2f}" == "4.50"
    assert f"{mg.tensor(2)}" == "2" and f"{mg.tensor(7):03d}" == "007"
    assert "{}".format(mg.tensor(1.0)) == "1.0"
    assert f"{mg.tensor([1.5])}" == str(mg.tensor([1.5]))  # not 0-d: str() for an empty spec
    with pytest.raises(TypeError):
        f"{mg.tensor([1.5]):.2f}"


def test_eq_with_a_non_number_is_identity_not_an_error():
    # t == None raised TypeError; PyTorch gives False (and != True), as for a str or a list
    t = mg.tensor([1, 2])
    for other in (None, "a", [1, 2], (1, 2), object()):
        assert (t == other) is False and (t != other) is True
    assert (t == 1).tolist() == [True, False] and (t != np.array([1, 3])).tolist() == [False, True]
    assert None not in [t] and mg.tensor(1.0) in [None, 1.0]


def test_is_contiguous_and_stride():
    # were missing (AttributeError); values are PyTorch's for the same views
    x = mg.arange(6.0).reshape(2, 3)
    assert x.is_contiguous() and not x.t().is_contiguous() and not x[:, ::2].is_contiguous()
    assert x.t().contiguous().is_contiguous()
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3) and x[:, ::2].stride() == (3, 2)
    assert x.stride(-1) == 1 and mg.tensor(1.0).stride() == ()
    assert mg.ones(3).expand(2, 3).stride() == (0, 1) and not mg.ones(3).expand(2, 3).is_contiguous()
    with pytest.raises(IndexError):
        x.stride(2)


def test_conjugate_transposes_and_mT_errors():
    # .H / .mH were missing; mT of a 1-D tensor raised IndexError where PyTorch raises RuntimeError
    x = mg.arange(6.0).reshape(2, 3)
    assert x.H.tolist() == x.T.tolist() and mg.ones(4, 2, 3).mH.shape == (4, 3, 2)
    assert mg.tensor(2.0).H.item() == 2.0
    for bad in (lambda: mg.ones(3).mT, lambda: mg.ones(3).mH, lambda: mg.ones(3).H, lambda: mg.ones(2, 2, 2).H):
        with pytest.raises(RuntimeError, match="only supported on matrices"):
            bad()


def test_grad_setter_validates():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    x.grad = mg.tensor([0.5, 0.5])
    assert x.grad.tolist() == [0.5, 0.5]
    with pytest.raises(RuntimeError):
        x.grad = mg.tensor([1.0, 2.0, 3.0])
    x.grad = None
    assert x.grad is None


# -- numpy interop -----------------------------------------------------------------------------------------

def test_numpy_shares_memory():
    t = mg.tensor([1.0, 2.0])
    a = t.numpy()
    assert isinstance(a, np.ndarray)
    a[0] = 9.0
    assert t.data.numpy()[0] == 9.0


def test_numpy_raises_when_requires_grad():
    x = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        (x * 2).numpy()
    np.testing.assert_array_equal(x.detach().numpy(), [1.0])


def test_np_asarray_works():
    t = mg.tensor([[1.0, 2.0]])
    a = np.asarray(t)
    assert a.shape == (1, 2) and a.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [[1.0, 2.0]])
    assert np.asarray(mg.tensor([1.0], requires_grad=True)).tolist() == [1.0]
    assert np.array(t).tolist() == [[1.0, 2.0]]


def test_len_and_iter():
    t = mg.tensor([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, mg.Tensor) for r in rows)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError):
        len(mg.tensor(1.0))
    with pytest.raises(TypeError):
        iter(mg.tensor(1.0))


def test_iter_is_differentiable():
    x = mg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    total = sum(v * (i + 1) for i, v in enumerate(x))
    total.backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [1.0, 2.0, 3.0])


def test_bool_of_single_element_and_ambiguous():
    assert bool(mg.tensor([1.0]))
    assert not bool(mg.tensor(0))
    with pytest.raises(RuntimeError):
        bool(mg.tensor([1.0, 2.0]))


# -- repr ---------------------------------------------------------------------------------------------------

def test_repr_plain_and_requires_grad():
    r = repr(mg.tensor([1.0, 2.0]))
    assert r.startswith("tensor(") and "1." in r and "2." in r
    assert "requires_grad=True" in repr(mg.tensor([1.0], requires_grad=True))
    assert "requires_grad" not in r and "grad_fn" not in r


def test_repr_grad_fn():
    a = mg.tensor(2.0, requires_grad=True)
    r = repr(a * a)
    assert "tensor(" in r and "grad_fn=<MulBackward0>" in r
    assert "4." in r


def test_repr_non_default_dtype_and_large():
    assert "float64" in repr(mg.tensor(np.array([1.0])))
    assert "int32" in repr(mg.tensor(np.array([1], dtype=np.int32)))
    assert "dtype" not in repr(mg.tensor([1, 2]))
    big = repr(mg.zeros(10000))
    assert "..." in big and len(big) < 1000
    assert repr(mg.zeros(0))


# -- casting -----------------------------------------------------------------------------------------------------

def test_casting_methods():
    t = mg.tensor([1.7, -2.2, 0.0])
    assert t.float().dtype == mg.float32
    assert t.double().dtype == mg.float64
    assert t.long().dtype == mg.int64 and t.long().tolist() == [1, -2, 0]
    assert t.int().dtype == mg.int32
    assert t.bool().dtype == mg.bool_ and t.bool().tolist() == [True, True, False]
    assert t.to(mg.float64).dtype == mg.float64
    assert t.to(mg.int64).tolist() == [1, -2, 0]
    assert t.type_as(mg.tensor([1])).dtype == mg.int64
    assert t.type_as(mg.tensor(np.array([1.0]))).dtype == mg.float64


def test_to_same_dtype_and_device():
    t = mg.tensor([1.0])
    assert t.to(mg.float32).tolist() == [1.0]
    assert t.to("cpu").dtype == mg.float32


def test_cast_is_differentiable():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.requires_grad and y.grad_fn is not None
    (y * y).sum().backward()
    assert x.grad.dtype == mg.float32
    np.testing.assert_allclose(x.grad.data.numpy(), [2.0, 4.0])


def test_cast_to_int_is_not_differentiable():
    x = mg.tensor([1.5, 2.5], requires_grad=True)
    y = x.long()
    assert not y.requires_grad


# -- requires_grad_, detach, detach_ ------------------------------------------------------------------------------

def test_requires_grad_():
    t = mg.tensor([1.0, 2.0])
    assert not t.requires_grad
    out = t.requires_grad_()
    assert out is t and t.requires_grad
    t.requires_grad_(False)
    assert not t.requires_grad


@pytest.mark.parametrize("data", [[1, 2], [True, False]])
def test_requires_grad_on_non_float_raises(data):
    with pytest.raises(RuntimeError, match="floating point"):
        mg.tensor(data).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        mg.tensor(data, requires_grad=True)


def test_requires_grad_false_on_non_leaf_raises():
    x = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        (x * 2).requires_grad_(False)


def test_detach_shares_data_and_cuts_graph():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert np.shares_memory(d.data.numpy(), y.data.numpy())
    z = d * x
    z.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [2.0, 4.0])  # no gradient through d


def test_detach_shares_version_counter():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    d = y.detach()
    d.zero_()
    assert y._version == d._version > 0
    with pytest.raises(RuntimeError, match="ExpBackward0"):
        y.sum().backward()


def test_detach_():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    out = y.detach_()
    assert out is y
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    np.testing.assert_allclose(y.data.numpy(), [2.0, 4.0])


def test_clone_is_differentiable_copy():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert not np.shares_memory(c.data.numpy(), x.data.numpy()) and c.grad_fn is not None
    (c * 3).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [3.0, 3.0])


def test_retain_grad_on_leaf_is_noop():
    x = mg.tensor([1.0], requires_grad=True)
    x.retain_grad()
    (x * 2).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(x.grad.data.numpy(), [2.0])


# -- arithmetic basics with scalars on either side ----------------------------------------------------------------

def test_scalar_on_either_side():
    t = mg.tensor([1.0, 2.0])
    assert (2 - t).tolist() == [1.0, 0.0]
    assert (2 / t).tolist() == [2.0, 1.0]
    assert (t ** 2).tolist() == [1.0, 4.0]
    assert (2 ** t).tolist() == [2.0, 4.0]
    assert (np.float64(2.0) * t).dtype == mg.float32


def test_ndarray_on_left_defers_to_tensor():
    t = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    out = np.array([3.0, 4.0]) * t
    assert isinstance(out, mg.Tensor) and out.requires_grad


def test_misc_construction_details():
    assert mg.tensor([]).dtype == mg.float32 and mg.tensor([]).shape == (0,)
    assert mg.tensor(np.float32(1.5)).dtype == mg.float32
    assert mg.tensor(np.array(1.5)).dtype == mg.float64
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    c = mg.tensor(x)  # a copy, cut from the graph
    assert not c.requires_grad and not np.shares_memory(c.data.numpy(), x.data.numpy())
    with pytest.raises(RuntimeError, match="floating point"):
        mg.zeros(2, dtype=mg.int64, requires_grad=True)


def test_to_accepts_dtype_keyword_and_tensor():
    t = mg.tensor([1.0, 2.0])
    assert t.to(dtype=mg.float64).dtype == mg.float64
    assert t.to(mg.tensor([1])).dtype == mg.int64


def test_pickle_and_deepcopy_after_backward():
    import copy
    import pickle
    t = mg.ones(2, requires_grad=True)
    (t * 2).sum().backward()  # leaves a weak reference to the AccumulateGrad node on t
    for u in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert u.requires_grad and u.is_leaf
        np.testing.assert_array_equal(u.data.numpy(), t.data.numpy())
        np.testing.assert_array_equal(u.grad.data.numpy(), [2.0, 2.0])
    lin = mg.nn.Linear(2, 3)
    lin2 = pickle.loads(pickle.dumps(lin))
    assert isinstance(lin2.weight, mg.nn.Parameter)
    np.testing.assert_array_equal(lin2.weight.data.numpy(), lin.weight.data.numpy())
    with pytest.raises(RuntimeError, match="non-leaf"):
        pickle.dumps(t * 2)


def test_data_is_an_untracked_tensor_sharing_memory():
    # PyTorch's escape hatch: .data is a Tensor, no grad, same memory, its own version counter
    w = mg.tensor([3.0, 4.0], requires_grad=True)
    d = w.data
    assert isinstance(d, mg.Tensor) and not d.requires_grad and d.grad_fn is None
    assert float(d.norm()) == 5.0
    y = (w * w).sum()
    w.data.mul_(2.0)          # untracked: backward uses the new values without complaint, as PyTorch
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [12.0, 16.0])
    w.data.copy_(mg.tensor([1.0, 1.0]))
    np.testing.assert_array_equal(w.detach().numpy(), [1.0, 1.0])
    w.data = mg.tensor([7.0, 8.0])
    np.testing.assert_array_equal(w.detach().numpy(), [7.0, 8.0])
    with pytest.raises(TypeError, match="data: expected a Tensor"):
        w.data = np.zeros(2)


def test_backend_switches_are_accepted():
    # training-script boilerplate that raised AttributeError: the switches are plain, inert attributes
    prev = mg.backends.cudnn.benchmark
    try:
        mg.backends.cudnn.benchmark = True
        mg.backends.cudnn.deterministic = True
        assert mg.backends.cudnn.benchmark and not mg.backends.cudnn.is_available()
    finally:
        mg.backends.cudnn.benchmark, mg.backends.cudnn.deterministic = prev, False
    assert not mg.backends.mps.is_available() and not mg.backends.cuda.matmul.allow_tf32
    assert not mg.are_deterministic_algorithms_enabled()
    mg.use_deterministic_algorithms(True)
    assert mg.are_deterministic_algorithms_enabled()
    mg.use_deterministic_algorithms(False)


def test_device_api_is_cpu_only():
    x = mg.ones(2)
    assert x.device == mg.device("cpu") and x.device == "cpu" and str(x.device) == "cpu"
    assert repr(mg.device("cpu")) == "device(type='cpu')" and repr(mg.device("cuda", 1)) == "device(type='cuda', index=1)"
    assert mg.device("cuda:0") == mg.device("cuda", 0)
    assert not mg.cuda.is_available() and mg.cuda.device_count() == 0
    assert not mg.accelerator.is_available() and mg.accelerator.current_accelerator() is None
    mg.set_default_device("cpu")
    assert mg.get_default_device() == "cpu"
    with pytest.raises(RuntimeError, match="CPU only"):
        mg.set_default_device("cuda")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        mg.device("gpu")
    dev = mg.device("cuda" if mg.cuda.is_available() else "cpu")
    assert x.to(dev) is x


def test_cpu_only_boilerplate_imports_and_answers_honestly():
    # issue 33: lines real scripts carry over from CUDA-era tutorials must run, inert
    import minigrad.backends.cudnn as cudnn  # the module path, not only the attribute
    cudnn.benchmark = True
    assert cudnn.is_available() is False and mg.xpu.is_available() is False and mg.xpu.device_count() == 0
    x = mg.ones(2)
    assert x.is_cpu and not (x.is_cuda or x.is_xpu or x.is_mps or x.is_meta)
    f = mg.jit(lambda t: t * 2)
    f(x)
    assert f.traces == 1
    mg._dynamo.reset()          # torch._dynamo.reset(): every compiled program dropped ...
    assert f.traces == 0 and f.cache_info()["entries"] == 0
    assert f(x).tolist() == [2.0, 2.0] and f.traces == 1  # ... and traced again on the next call
    mg.compiler.reset()
    assert f.traces == 0


def test_legacy_typed_constructors_as_pytorch():
    # issue 33: tutorials still write torch.LongTensor(...) / torch.FloatTensor(2, 3)
    assert mg.LongTensor([1, 2]).dtype == mg.int64 and mg.LongTensor([1, 2]).tolist() == [1, 2]
    assert mg.FloatTensor(2, 3).shape == (2, 3) and mg.FloatTensor(2, 3).dtype == mg.float32
    assert mg.FloatTensor([2, 3]).tolist() == [2.0, 3.0]  # a list is data, never sizes
    assert mg.DoubleTensor(mg.ones(2)).dtype == mg.float64 and mg.BoolTensor([True]).dtype == mg.bool
    assert isinstance(mg.ones(2), mg.FloatTensor) and not isinstance(mg.ones(2), mg.LongTensor)
    assert mg.ByteTensor().shape == (0,)
