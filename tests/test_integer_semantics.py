"""Integer semantics: bitwise &, |, ^, ~, <<, >> (and bitwise_*), integer div, integer
linspace, integer max-pooling with padding, and PyTorch's layout for ints mixed with array indices."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import Function

A = [5, -3, 0, 12, -128, 127]
B = [6, 6, -1, 10, 1, -1]


def test_bitwise_operators_on_integers_keep_the_integer_dtype():
    a, b = mg.tensor(A, dtype=mg.int32), mg.tensor(B, dtype=mg.int32)
    for out, want in [(a & b, np.bitwise_and(A, B)), (a | b, np.bitwise_or(A, B)), (a ^ b, np.bitwise_xor(A, B)),
                      (~a, np.invert(A)), (a & 6, np.bitwise_and(A, 6)), (6 | a, np.bitwise_or(6, A)),
                      (3 ^ a, np.bitwise_xor(3, A)), (6 & a, np.bitwise_and(6, A))]:
        assert out.dtype == mg.int32
        np.testing.assert_array_equal(out.numpy(), want)
    assert (~mg.tensor([5])).tolist() == [-6]
    assert (mg.tensor([1, 2], dtype=mg.int16) ^ mg.tensor([1], dtype=mg.int32)).dtype == mg.int32


def test_bitwise_operators_on_bool_stay_logical():
    p, q = mg.tensor([True, True, False]), mg.tensor([True, False, False])
    assert (p & q).tolist() == [True, False, False] and (p | q).tolist() == [True, True, False]
    assert (p ^ q).tolist() == [False, True, False] and (~p).tolist() == [False, False, True]
    assert (p & q).dtype == mg.bool and (True ^ p).tolist() == [False, False, True]
    assert (p | 1).dtype == mg.int64  # bool with an int: an integer result, as PyTorch


def test_shifts():
    a = mg.tensor([5, -3, 1], dtype=mg.int32)
    assert (a << 2).tolist() == [20, -12, 4] and (a << 2).dtype == mg.int32
    assert (a >> 1).tolist() == [2, -2, 0] and (2 << a).tolist() == [64, 0, 4]  # 2 << -3: 0
    assert (mg.tensor([1, 2], dtype=mg.uint8) << 9).tolist() == [0, 0]  # count >= bit width: 0
    assert (mg.tensor([-8, 8]) >> mg.tensor([64, 63])).tolist() == [-1, 0]  # sign fill
    assert (mg.tensor([-8, 8]) >> -1).tolist() == [-1, 0] and (mg.tensor([1]) << -1).tolist() == [0]
    assert (mg.tensor([True]) << 1).tolist() == [2]


def test_bitwise_functions_and_methods():
    a, b = mg.tensor(A), mg.tensor(B)
    pairs = [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)]
    for name, ref in pairs:
        np.testing.assert_array_equal(getattr(mg, name)(a, b).numpy(), ref(A, B))
        np.testing.assert_array_equal(getattr(a, name)(b).numpy(), ref(A, B))
    np.testing.assert_array_equal(mg.bitwise_not(a).numpy(), np.invert(A))
    np.testing.assert_array_equal(a.bitwise_not().numpy(), np.invert(A))
    s = mg.tensor([0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(mg.bitwise_left_shift(a, s).numpy(), np.left_shift(A, [0, 1, 2, 3, 4, 5]))
    np.testing.assert_array_equal(a.bitwise_right_shift(s).numpy(), np.right_shift(A, [0, 1, 2, 3, 4, 5]))


def test_bitwise_ops_go_through_function_apply(monkeypatch):
    seen = []
    orig = Function.__dict__["apply"].__func__

    def spy(cls, *args):
        seen.append(cls.__name__)
        return orig(cls, *args)
    monkeypatch.setattr(Function, "apply", classmethod(spy))
    a = mg.tensor(A)
    a & 1, 1 | a, a ^ a, ~a, a << 1, 1 >> a  # noqa: B018
    assert seen == ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "BitwiseLeftShift", "BitwiseRightShift"]


def test_bitwise_refuses_floats_as_pytorch():
    x = mg.tensor([1.0, 2.0])
    with pytest.raises(NotImplementedError, match=r"bitwise_and: not implemented for float32"):
        x & x
    with pytest.raises(NotImplementedError, match="bitwise_left_shift"):
        mg.tensor([1]) << 1.5
    with pytest.raises(NotImplementedError, match="bitwise_left_shift"):
        mg.tensor([True]) << mg.tensor([True])
    with pytest.raises(TypeError, match="bitwise_not"):
        ~x


def test_bitwise_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for dt in ("int8", "int16", "int32", "int64", "uint8"):
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, 50, endpoint=True).astype(dt)
        b = rng.integers(info.min, info.max, 50, endpoint=True).astype(dt)
        s = rng.integers(-3, info.bits + 3, 50).astype(dt) if info.min < 0 else rng.integers(0, info.bits + 3, 50).astype(dt)
        ta, tb, ts = torch.tensor(a), torch.tensor(b), torch.tensor(s)
        ma, mb, ms = mg.tensor(a), mg.tensor(b), mg.tensor(s)
        for ours, theirs in [(ma & mb, ta & tb), (ma | mb, ta | tb), (ma ^ mb, ta ^ tb), (~ma, ~ta),
                             (ma << ms, ta << ts), (ma >> ms, ta >> ts), (5 | ma, 5 | ta), (3 << ms, 3 << ts),
                             (ma >> 2, ta >> 2), (ma & 7, ta & 7)]:
            assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), dt
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=dt)


def test_integer_div_with_rounding_stays_integer():
    a, b = mg.tensor([7, -7, 9]), mg.tensor([2, 2, -4])
    t = mg.div(a, b, rounding_mode="trunc")
    f = mg.div(a, b, rounding_mode="floor")
    assert t.dtype == mg.int64 and t.tolist() == [3, -3, -2]
    assert f.dtype == mg.int64 and f.tolist() == [3, -4, -3]
    assert mg.div(mg.tensor([7], dtype=mg.int32), 2, rounding_mode="trunc").dtype == mg.int32
    assert mg.div(a, b).dtype == mg.float32  # true division still gives floats


def test_integer_linspace_truncates_toward_zero():
    assert mg.linspace(-5, 5, 7, dtype=mg.int32).tolist() == [-5, -3, -1, 0, 1, 3, 5]
    assert mg.linspace(-5, 5, 7, dtype=mg.int32).dtype == mg.int32
    assert mg.linspace(-7.5, 3.2, 9, dtype=mg.int16).tolist() == [-7, -5, -4, -3, -2, 0, 0, 1, 3]
    assert mg.linspace(0, 10, 4, dtype=mg.int64).tolist() == [0, 3, 6, 10]


def test_integer_linspace_matches_torch():
    torch = pytest.importorskip("torch")
    for start, end, steps in [(-5, 5, 7), (-7.5, 3.2, 9), (0, 10, 4), (1e9, -1e9, 6), (0.1, 0.9, 9), (3, 7, 1),
                              (100, -37, 11), (-2.5, 2.5, 3)]:
        for mdt, tdt in [(mg.int64, torch.int64), (mg.int32, torch.int32), (mg.int16, torch.int16)]:
            if abs(start) > 3e4 and mdt == mg.int16:
                continue
            assert mg.linspace(start, end, steps, dtype=mdt).tolist() == \
                torch.linspace(start, end, steps, dtype=tdt).tolist(), (start, end, steps, mdt)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
def test_max_pool2d_on_integers_with_padding(dtype):
    x = np.arange(32).reshape(1, 2, 4, 4)
    x = (x if dtype == "uint8" else -x).astype(dtype)  # negative values: padding must not win
    out = F.max_pool2d(mg.tensor(x), 3, stride=2, padding=1)
    assert out.dtype == np.dtype(dtype)
    want = np.array([[x[0, c, max(0, 2 * i - 1):2 * i + 2, max(0, 2 * j - 1):2 * j + 2].max() for j in range(2)]
                     for c in range(2) for i in range(2)]).reshape(1, 2, 2, 2)
    np.testing.assert_array_equal(out.numpy(), want)


X = np.arange(2 * 3 * 12 * 5 * 4, dtype=np.float64).reshape(2, 3, 12, 5, 4)
IDX = np.array([[0, 2], [4, 1]])
ROWS = np.array([[0, 1], [1, 1]])
MASK = np.array([True, False, True])
INDEXINGS = {
    "issue": lambda t, i, r, m: t[1, :, 3:11:2, i, 0:2],
    "int_before_array": lambda t, i, r, m: t[1, r],
    "int_between": lambda t, i, r, m: t[r, 1, :, i],
    "array_int": lambda t, i, r, m: t[:, r, 2],
    "slice_int_array": lambda t, i, r, m: t[:, 1, :, i],
    "ellipsis": lambda t, i, r, m: t[..., i, 1],
    "none": lambda t, i, r, m: t[None, 1, :, i],
    "mask": lambda t, i, r, m: t[1, m, :, 1],
    "mixed": lambda t, i, r, m: t[0, r, 1:3, i, None, -1],
    "ints_then_array": lambda t, i, r, m: t[1, 2, 3, i],
}


def test_mixed_indexing_follows_pytorch_layout():
    x = mg.tensor(X, requires_grad=True)
    y = x[1, :, 3:11:2, mg.tensor(IDX), 0:2]
    assert y.shape == (3, 4, 2, 2, 2)  # NumPy: (2, 2, 3, 4, 2)
    np.testing.assert_array_equal(y.detach().numpy(), X[1][:, 3:11:2, IDX, 0:2])
    y.sum().backward()
    g = np.zeros_like(X)
    np.add.at(g, (1, slice(None), slice(3, 11, 2), IDX, slice(0, 2)), 1.0)
    np.testing.assert_array_equal(x.grad.numpy(), g)


@pytest.mark.parametrize("name", sorted(INDEXINGS))
def test_mixed_indexing_matches_torch(name):
    torch = pytest.importorskip("torch")
    f = INDEXINGS[name]
    xm = mg.tensor(X, requires_grad=True)
    xt = torch.tensor(X, requires_grad=True)
    a = f(xm, mg.tensor(IDX), mg.tensor(ROWS), mg.tensor(MASK))
    b = f(xt, torch.tensor(IDX), torch.tensor(ROWS), torch.tensor(MASK))
    assert a.shape == tuple(b.shape)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    w = np.random.default_rng(0).standard_normal(a.shape)
    (a * mg.tensor(w)).sum().backward()
    (b * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(xm.grad.numpy(), xt.grad.numpy())


def test_index_errors_name_the_op_once():
    x = mg.zeros(2, 3, 12, 5, 4)
    for index in [5, (slice(None), mg.tensor(IDX), 2), (0,) * 6, mg.tensor([0, 7])]:
        with pytest.raises(IndexError) as e:
            x[index]
        msg = str(e.value)
        assert msg.startswith("getitem: ") and msg.count("getitem") == 1 and "basicgetitem" not in msg
        assert "(2, 3, 12, 5, 4)" in msg  # the user's shape, not an intermediate one


def test_float_valued_unary_ops_of_integers_give_the_default_float_dtype():
    """exp, log, sqrt, sin, tanh, sigmoid, erf, ... of an integer or bool tensor: PyTorch's default
    float dtype (float32). NumPy's promotion gave float64 (float16 for bool), and sigmoid kept int64,
    truncating every value: sigmoid(tensor([1, 2])) was [0, 0]."""
    names = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf"]
    for dtype in (mg.int64, mg.int32, mg.uint8, mg.bool):
        x = mg.tensor([1, 2, 0]).to(dtype)
        for name in names:
            with np.errstate(divide="ignore"):  # log(0), rsqrt(0)
                out = getattr(mg, name)(x)
            assert out.dtype == mg.float32, (name, dtype)
    np.testing.assert_allclose(mg.tensor([1, 2]).sigmoid().numpy(), [0.7310586, 0.8807971], rtol=1e-6)
    np.testing.assert_allclose(F.sigmoid(mg.tensor([0, 3])).numpy(), [0.5, 0.95257413], rtol=1e-6)


def test_float_valued_unary_ops_keep_a_complex_input_complex():
    """The integer-to-float cast of exp, sqrt, sin, ... leaves complex tensors alone (casting them
    dropped the imaginary part: exp(1+2j) gave 2.718)."""
    z = np.array([1 + 2j, -0.5 + 0.25j])
    for name in ["exp", "log", "sqrt", "sin", "cos", "tanh", "reciprocal"]:
        out = getattr(mg, name)(mg.tensor(z))
        assert out.dtype == np.complex128, name
        np.testing.assert_allclose(out.numpy(), getattr(np, name)(z), rtol=1e-12)


def test_clamp_of_integers_with_float_bounds_is_float_as_pytorch():
    """PyTorch's result type of clamp(int tensor, float bound) is float: [1.0, 1.5], where the bounds
    used to be cast to the integer dtype ([1, 1]); integer bounds keep the integer dtype."""
    x = mg.tensor([1, 2, 0])
    out = x.clamp(0.5, 1.5)
    assert out.dtype == mg.float32 and out.tolist() == [1.0, 1.5, 0.5]
    assert mg.clamp(x, max=1.5).tolist() == [1.0, 1.5, 0.0] and mg.clamp(x, max=1.5).dtype == mg.float32
    out = x.clamp(mg.tensor([0.5, 2.5, -1.0], dtype=mg.float64))
    assert out.dtype == mg.float64 and out.tolist() == [1.0, 2.5, 0.0]
    assert x.clamp(0, 1).dtype == mg.int64 and x.clamp(0, 1).tolist() == [1, 1, 0]
