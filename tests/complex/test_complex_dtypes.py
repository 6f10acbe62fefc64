"""Complex dtypes as PyTorch's: inference, promotion (combine_categories), printing, the parts,
conversions, and ONNX refusing complex clearly."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _name(dt):
    return str(dt).replace("torch.", "")


def test_dtypes_and_aliases():
    assert mg.complex64 == np.complex64 and mg.complex128 == np.complex128
    assert mg.cfloat is mg.complex64 and mg.cdouble is mg.complex128


@pytest.mark.parametrize("data", [[1 + 2j], [1.5, 2j], 2 + 3j, [[1j, 2], [3, 4.5 - 1j]]])
def test_tensor_infers_the_default_complex_dtype(data):
    assert mg.tensor(data).dtype.name == _name(torch.tensor(data).dtype)
    np.testing.assert_array_equal(mg.tensor(data).numpy(), torch.tensor(data).numpy())
    mg.set_default_dtype(mg.float64)
    try:
        assert mg.tensor(data).dtype == mg.complex128  # complex128 when the default float is float64
    finally:
        mg.set_default_dtype(mg.float32)


# (shape or scalar, dtype name): a dimensioned tensor, a 0-d tensor, or a Python scalar
_OPERANDS = [((2,), "float32"), ((2,), "float64"), ((2,), "complex64"), ((2,), "complex128"), ((2,), "int64"),
             ((), "float64"), ((), "complex128"), ((), "complex64"), ((), "float32"), ((), "int64"),
             2.5, 1j, 3, True]


def _make(lib, spec):
    if not isinstance(spec, tuple):
        return spec
    shape, dt = spec
    return lib.ones(shape, dtype=getattr(lib, dt))


@pytest.mark.parametrize("a", _OPERANDS[:10], ids=str)
def test_promotion_matches_torch(a):
    for b in _OPERANDS:
        want = _name((_make(torch, a) * _make(torch, b)).dtype)
        got = (_make(mg, a) * _make(mg, b)).dtype.name
        assert got == want, f"{a} * {b}: {got}, torch {want}"
        got = (_make(mg, b) + _make(mg, a)).dtype.name
        assert got == _name((_make(torch, b) + _make(torch, a)).dtype), f"{b} + {a}"


@pytest.mark.parametrize("values", [
    [1 + 2j], [1.5 + 2j, 3 - 1j, -0.0 - 0j], [[1e-5 + 1j, 100 + 3j], [2, -4j]], [1e10 + 1j, 1j],
    [complex("nan"), complex(float("inf"), -1)], 2 + 3j, [0j, 0j]])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_printing_matches_torch(values, dtype):
    m, t = mg.tensor(values, dtype=getattr(mg, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))
    assert repr(m) == repr(t).replace("torch.", "minigrad.")


def test_printing_long_and_with_grad():
    v = (np.arange(30) * (0.5 + 1.25j)).tolist()
    assert repr(mg.tensor(v)) == repr(torch.tensor(v)).replace("torch.", "minigrad.")
    z, zt = mg.tensor([1 + 1j], requires_grad=True), torch.tensor([1 + 1j], requires_grad=True)
    assert repr(z) == repr(zt)
    assert repr(z * 2) == repr(zt * 2)
    assert repr(mg.zeros(0, dtype=mg.complex64)) == repr(torch.zeros(0, dtype=torch.complex64)).replace("torch.", "minigrad.")


def test_parts_views_and_conversions():
    z = mg.tensor([1 + 2j, 3 - 4j], dtype=mg.complex128)
    np.testing.assert_array_equal(z.real.numpy(), [1, 3])
    np.testing.assert_array_equal(z.imag.numpy(), [2, -4])
    z.real.numpy()[0] = 7  # the parts are views, as PyTorch's
    assert z[0].item() == 7 + 2j
    x = mg.tensor([1.0, 2.0])
    assert x.real is x and mg.conj(x) is x and mg.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag
    assert complex(mg.tensor(1 + 2j)) == 1 + 2j and mg.tensor([1 + 2j]).tolist() == [1 + 2j]
    assert mg.is_complex(z) and z.is_complex() and not mg.is_complex(x) and not z.is_floating_point()
    np.testing.assert_array_equal(mg.isreal(mg.tensor([1 + 0j, 1j])).numpy(), [True, False])
    assert mg.isreal(x).numpy().all()
    c = z.conj()
    assert c.is_conj() and not z.is_conj() and not c.resolve_conj().is_conj()
    np.testing.assert_array_equal(c.resolve_conj().numpy(), np.conj(z.numpy()))
    assert not mg.conj_physical(z).is_conj()
    np.testing.assert_array_equal(z.to(mg.complex64).numpy(), z.numpy().astype(np.complex64))
    assert x.to(mg.complex64).dtype == mg.complex64


def test_view_as_real_and_complex_shapes_and_errors():
    z = mg.tensor([[1 + 2j, 3j]])
    r = mg.view_as_real(z)
    assert r.shape == (1, 2, 2) and r.dtype == mg.float32
    assert mg.view_as_real(mg.tensor(1 + 2j)).shape == (2,)
    np.testing.assert_array_equal(mg.view_as_complex(r).numpy(), z.numpy())
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        mg.view_as_real(mg.ones(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        mg.view_as_complex(mg.ones(3))
    with pytest.raises(RuntimeError, match="complex\\(\\): expected both inputs"):
        mg.complex(mg.ones(2), mg.ones(2, dtype=mg.float64))
    with pytest.raises(RuntimeError, match="polar\\(\\)"):
        mg.polar(mg.ones(2), mg.ones(2, dtype=mg.float64))


def test_mH_and_H_conjugate():
    a = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]])
    np.testing.assert_array_equal(mg.tensor(a).mH.numpy(), torch.tensor(a).mH.resolve_conj().numpy())
    np.testing.assert_array_equal(mg.tensor(a).H.numpy(), torch.tensor(a).H.resolve_conj().numpy())


def test_onnx_export_refuses_complex_naming_the_op():
    with pytest.raises(NotImplementedError, match="'fftr2c'.*no ONNX mapping.*complex"):
        mg.onnx.export(lambda x: mg.fft.rfft(x).abs(), (mg.randn(8),), "unused.onnx")
    with pytest.raises(NotImplementedError, match="'mul'.*complex"):
        mg.onnx.export(lambda x: (x * mg.tensor([1j, 2])).abs(), (mg.randn(2),), "unused.onnx")
    with pytest.raises(NotImplementedError, match="input 0 is complex64"):
        mg.onnx.export(lambda z: z + 1, (mg.tensor([1 + 2j]),), "unused.onnx")


def test_complex_randn_and_constructors():
    z = mg.randn(4000, dtype=mg.complex64)
    assert z.dtype == mg.complex64 and z.shape == (4000,)
    assert abs(z.real.var().item() - 0.5) < 0.06 and abs(z.imag.var().item() - 0.5) < 0.06  # as PyTorch: 1/2 each
    assert mg.randn_like(mg.zeros(2, dtype=mg.complex128)).dtype == mg.complex128
    assert repr(mg.full((2,), 1 + 1j)) == repr(torch.full((2,), 1 + 1j))
    assert repr(mg.arange(3) * 1j) == repr(torch.arange(3) * 1j)
