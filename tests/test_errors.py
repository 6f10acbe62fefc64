"""Errors as PyTorch gives them: refused where PyTorch refuses, no NumPy errors leaking,
PyTorch's error types, messages that name the op and the user's shapes."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F


def test_where_refuses_a_non_bool_condition():
    x, y = mg.tensor([1.0, 2.0]), mg.tensor([3.0, 4.0])
    for cond in (mg.tensor([1.0, 0.0]), mg.tensor([1, 0])):
        with pytest.raises(RuntimeError, match=r"where: expected condition to be a bool tensor.*" + str(cond.dtype)):
            mg.where(cond, x, y)
    assert mg.where(mg.tensor([True, False]), x, y).tolist() == [1.0, 4.0]
    assert mg.where(x > 1.5, x, y).tolist() == [3.0, 2.0]


@pytest.mark.parametrize("make", [
    lambda d: mg.zeros(2, device=d), lambda d: mg.ones(2, device=d), lambda d: mg.empty(2, device=d),
    lambda d: mg.full((2,), 1.0, device=d), lambda d: mg.tensor([1.0], device=d), lambda d: mg.arange(3, device=d),
    lambda d: mg.linspace(0, 1, 3, device=d), lambda d: mg.eye(2, device=d), lambda d: mg.rand(2, device=d),
    lambda d: mg.randn(2, device=d), lambda d: mg.randint(0, 3, (2,), device=d), lambda d: mg.randperm(3, device=d),
    lambda d: mg.zeros_like(mg.ones(2), device=d), lambda d: mg.ones(2).to(d), lambda d: mg.ones(2).to(d, mg.float64),
    lambda d: mg.ones(2).to(device=d),
], ids=["zeros", "ones", "empty", "full", "tensor", "arange", "linspace", "eye", "rand", "randn", "randint",
        "randperm", "zeros_like", "to", "to_dtype", "to_kw"])
def test_cuda_is_refused_clearly_and_cpu_accepted(make):
    for d in ("cuda", "cuda:0"):
        with pytest.raises(RuntimeError, match=r"minigrad runs on the CPU only.*'cuda"):
            make(d)
    assert isinstance(make("cpu"), mg.Tensor)


def test_tensor_to_still_casts():
    x = mg.ones(2)
    assert x.to(mg.float64).dtype == mg.float64 and x.to("cpu", mg.float64).dtype == mg.float64
    assert x.to(dtype=mg.int64).dtype == mg.int64 and x.to(mg.zeros(1, dtype=mg.float16)).dtype == mg.float16
    assert x.to("cpu") is x


def test_linear_refuses_other_dtypes_as_pytorch():
    lin = nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match=r"linear: mat1 and mat2 must have the same dtype, but got int64 and float32"):
        lin(mg.tensor([[1, 2, 3]]))
    with pytest.raises(RuntimeError, match=r"same dtype, but got float64 and float32.*\(1, 3\).*\(2, 3\)"):
        lin(mg.tensor([[1.0, 2.0, 3.0]], dtype=mg.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(mg.ones(1, 3, dtype=mg.float64), mg.ones(2, 3))
    assert lin(mg.ones(1, 3)).dtype == mg.float32
    assert lin.double()(mg.ones(1, 3, dtype=mg.float64)).dtype == mg.float64


def test_linear_dtype_errors_match_torch():
    torch = pytest.importorskip("torch")
    for dt, tdt in [(mg.int64, torch.int64), (mg.float64, torch.float64)]:
        with pytest.raises(RuntimeError):
            torch.nn.Linear(3, 2)(torch.ones(1, 3, dtype=tdt))
        with pytest.raises(RuntimeError):
            nn.Linear(3, 2)(mg.ones(1, 3, dtype=dt))


def test_cumsum_of_0d():
    x = mg.tensor(5.0)
    assert x.cumsum(0).item() == 5.0 and x.cumsum(-1).item() == 5.0
    for dim in (1, -2):
        with pytest.raises(IndexError, match=f"cumsum: dimension {dim} out of range for a 0-d tensor"):
            x.cumsum(dim)


def test_creation_errors():
    with pytest.raises(RuntimeError, match=r"zeros: .*negative dimension -1: \[-1\]"):
        mg.zeros(-1)
    with pytest.raises(RuntimeError, match=r"ones: .*negative dimension -2: \[3, -2\]"):
        mg.ones(3, -2)
    with pytest.raises(RuntimeError, match=r"full: .*negative dimension"):
        mg.full((2, -3), 1.0)
    with pytest.raises(RuntimeError, match=r"randn: .*negative dimension"):
        mg.randn(-4)
    with pytest.raises(RuntimeError, match=r"arange: step must be nonzero"):
        mg.arange(0, 10, 0)
    with pytest.raises(RuntimeError, match=r"arange: upper bound and lower bound inconsistent with step sign"):
        mg.arange(0, 10, -1)
    with pytest.raises(NotImplementedError, match="linspace: not implemented for dtype bool"):
        mg.linspace(0, 1, 5, dtype=mg.bool)
    with pytest.raises(RuntimeError, match="linspace: number of steps"):
        mg.linspace(0, 1, -1)
    assert mg.arange(5, 5).shape == (0,) and mg.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert mg.zeros(0, 3).shape == (0, 3)


def test_empty_argmax_and_argmin():
    for op in ("argmax", "argmin"):
        with pytest.raises(IndexError, match=rf"{op}\(\): expected a reduction dim.*empty.*\(0,\)"):
            getattr(mg.tensor([]), op)()
        with pytest.raises(IndexError, match=rf"{op}\(\): expected reduction dim 1 to have non-zero size.*\(2, 0\)"):
            getattr(mg.zeros(2, 0), op)(1)
        assert getattr(mg.zeros(0, 3), op)(1).shape == (0,)


def test_cat_of_0d_tensors():
    with pytest.raises(RuntimeError, match=r"cat: zero-dimensional tensor \(at position 0\) cannot be concatenated"):
        mg.cat([mg.tensor(1.0), mg.tensor(2.0)])
    with pytest.raises(RuntimeError, match=r"at position 1"):
        mg.cat([mg.ones(2), mg.tensor(2.0)])


@pytest.mark.parametrize("call", [
    lambda: mg.ones(3, 4) @ mg.ones(5, 2), lambda: mg.mm(mg.ones(3, 4), mg.ones(5, 2)),
    lambda: mg.bmm(mg.ones(2, 3, 4), mg.ones(2, 5, 2)), lambda: mg.dot(mg.ones(3), mg.ones(4)),
    lambda: mg.einsum("ij,jk->ik", mg.ones(3, 4), mg.ones(5, 2)),
    lambda: F.conv2d(mg.ones(1, 3, 5, 5), mg.ones(2, 4, 3, 3)),
    lambda: mg.flip(mg.ones(2, 3), (0, 0)), lambda: mg.ones(2, 3).flip((1, -1)),
    lambda: F.linear(mg.ones(2, 3), mg.ones(4, 5)),
], ids=["matmul", "mm", "bmm", "dot", "einsum", "conv2d", "flip", "flip_neg", "linear"])
def test_shape_errors_are_runtime_errors(call):
    with pytest.raises(RuntimeError) as e:
        call()
    assert not isinstance(e.value, ValueError)


def test_shape_error_types_match_torch():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF
    pairs = [(lambda L, FF: L.ones(3, 4) @ L.ones(5, 2)), (lambda L, FF: L.flip(L.ones(2, 3), (0, 0))),
             (lambda L, FF: L.einsum("ij,jk->ik", L.ones(3, 4), L.ones(5, 2))),
             (lambda L, FF: FF.conv2d(L.ones(1, 3, 5, 5), L.ones(2, 4, 3, 3))),
             (lambda L, FF: FF.pad(L.ones(1, 1, 3, 3), (1, 1), mode="bogus")),
             (lambda L, FF: L.cat([L.tensor(1.0), L.tensor(2.0)])), (lambda L, FF: L.tensor(5.0).cumsum(1)),
             (lambda L, FF: L.tensor([]).argmax()), (lambda L, FF: L.where(L.tensor([1.0]), L.ones(1), L.ones(1))),
             (lambda L, FF: L.zeros(-1)), (lambda L, FF: L.arange(0, 10, 0)),
             (lambda L, FF: L.linspace(0, 1, 3, dtype=L.bool))]
    for f in pairs:
        with pytest.raises(Exception) as ours:
            f(mg, F)
        with pytest.raises(Exception) as theirs:
            f(torch, TF)
        assert isinstance(ours.value, type(theirs.value)), (ours.value, theirs.value)


def test_unknown_pad_mode_is_not_implemented():
    with pytest.raises(NotImplementedError, match=r"pad: unrecognised padding mode 'bogus'"):
        F.pad(mg.ones(1, 1, 3, 3), (1, 1), mode="bogus")


def test_nll_loss_on_1d_input_names_the_users_shapes():
    logp = mg.tensor([-1.0, -2.0, -3.0])
    assert F.nll_loss(logp, mg.tensor(1)).item() == 2.0
    assert F.nll_loss(logp, mg.tensor([1])).item() == 2.0  # a size-1 target, as PyTorch takes it
    with pytest.raises(ValueError, match=r"nll_loss: for a 1-D input \(shape \(3,\)\).*target of shape \(2,\)") as e:
        F.nll_loss(logp, mg.tensor([1, 2]))
    assert "(1, 3)" not in str(e.value)
    with pytest.raises(ValueError, match=r"cross_entropy: for a 1-D input"):
        F.cross_entropy(logp, mg.tensor([[1]]))


@pytest.mark.parametrize("what,call", [
    ("conv2d input smaller than the kernel", lambda: mg.nn.functional.conv2d(mg.ones(1, 1, 2, 2), mg.ones(1, 1, 3, 3))),
    ("avg_pool2d padding too large", lambda: mg.nn.functional.avg_pool2d(mg.ones(1, 1, 4, 4), 2, padding=2)),
    ("max_pool2d padding too large", lambda: mg.nn.functional.max_pool2d(mg.ones(1, 1, 4, 4), 2, padding=2)),
    ("div rounding_mode typo", lambda: mg.div(mg.ones(2), mg.ones(2), rounding_mode="typo")),
    ("integer ** -2", lambda: mg.tensor([2, 3]) ** -2),
])
def test_error_types_are_pytorchs(what, call):
    # issue 33 item 7: each raised ValueError where PyTorch 2.13 raises RuntimeError
    with pytest.raises(RuntimeError):
        call()


def test_integer_tensor_to_negative_integer_tensor_powers_as_pytorch():
    # PyTorch computes these elementwise (1 ** -n = 1, (-1) ** -n = +-1, other bases 0); NumPy raised
    got = mg.tensor([2, 3, 1, -1, -1, 5]) ** mg.tensor([-1, 2, -3, -3, -2, 0])
    assert got.tolist() == [0, 9, 1, -1, 1, 1]  # PyTorch 2.13's result


def test_a_python_int_beyond_an_integer_dtype_wraps_as_pytorch():
    # issue 33 item 5: int32 | 0xFFFFFFFF raised OverflowError; PyTorch computes int32 | -1
    x = mg.tensor([1, 2], dtype=mg.int32)
    assert (x | 0xFFFFFFFF).tolist() == [-1, -1] and (0xFFFFFFFF ^ x).tolist() == [-2, -3]
    assert (x & 0x1FFFFFFFF).tolist() == [1, 2] and (x | 0xFFFFFFFF).dtype == mg.int32


def test_cross_entropy_of_one_sample_with_class_probabilities():
    # issue 33 item 5: a 1-D input with a (C,) float target is one sample's class probabilities
    x = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64, requires_grad=True)
    q = mg.tensor([0.2, 0.3, 0.5], dtype=mg.float64)
    loss = F.cross_entropy(x, q)
    want = -(q.numpy() * (x.detach().numpy() - np.log(np.exp(x.detach().numpy()).sum()))).sum()
    assert loss.shape == () and abs(loss.item() - want) < 1e-12
    loss.backward()
    p = np.exp(x.detach().numpy()) / np.exp(x.detach().numpy()).sum()
    np.testing.assert_allclose(x.grad.numpy(), p - q.numpy(), rtol=1e-12)


# -- bad inputs named at the call: the checks each op makes before NumPy sees the arrays -----------------------
def test_bad_arguments_to_the_newer_apis_raise_at_the_call_naming_the_argument():
    T = lambda v: mg.tensor(v, dtype=mg.float64)  # noqa: E731
    # jvp: primals and tangents are tuples, as torch.func (a bare tensor was wrapped silently)
    with pytest.raises(RuntimeError, match=r"Expected primals to be a tuple.*got Tensor"):
        mg.func.jvp(mg.sin, T(1.0), (T(1.0),))
    with pytest.raises(RuntimeError, match=r"Expected primals to be a tuple.*got list"):
        mg.func.jvp(mg.sin, [T(1.0)], [T(1.0)])
    with pytest.raises(RuntimeError, match=r"Expected tangents to be a tuple.*got Tensor"):
        mg.func.jvp(mg.sin, (T(1.0),), T(1.0))
    assert abs(mg.func.jvp(mg.sin, (T(0.0),), (T(1.0),))[1].item() - 1.0) < 1e-12
    # load_state_dict: a NumPy value is refused as PyTorch refuses it (it was copied in silently)
    m = nn.Linear(2, 2)
    before = m.weight.detach().clone()
    with pytest.raises(RuntimeError, match=r'parameter named "weight", expected minigrad.Tensor.*ndarray.*mg.from_numpy'):
        m.load_state_dict({"weight": np.zeros((2, 2)), "bias": mg.zeros(2)})
    assert mg.equal(m.weight, before)
    # Adam(betas=(0.9,)) was accepted and failed at step(); PyTorch's own IndexError names nothing
    for opt in (mg.optim.Adam, mg.optim.AdamW, mg.optim.Adamax, mg.optim.NAdam, mg.optim.RAdam):
        with pytest.raises(ValueError, match=r"Invalid betas: expected a pair \(beta1, beta2\), got \(0.9,\)"):
            opt(m.parameters(), betas=(0.9,))
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        mg.optim.Adam(m.parameters(), betas=(0.9, 1.0))
    # viz.draw of things that are not tensors: named, not "'int' object is not iterable"
    y = (mg.ones(2, requires_grad=True) * 2).sum()
    for bad, what in [(5, r"got int"), (np.zeros(3), r"got ndarray \(wrap the array: mg.tensor\(a\)\)"),
                      (None, r"got NoneType"), ([], r"got list"), ([y, "a"], r"roots\[1\] must be a Tensor, got str")]:
        with pytest.raises(TypeError, match=r"viz.draw: " + what if "roots" in what else r"viz.draw: roots must be.*" + what):
            mg.viz.draw(bad)
    with pytest.raises(TypeError, match="viz.draw: params must be a dict"):
        mg.viz.draw(y, params=[1, 2])
    assert "digraph" in mg.viz.draw([y]).dot


def test_old_surfaces_no_longer_give_numpys_messages():
    with pytest.raises(RuntimeError, match=r"nn.Linear: trying to create a tensor with negative dimension -1: \[5, -1\]"):
        nn.Linear(-1, 5)
    with pytest.raises(RuntimeError, match=r"nn.Conv2d: .*negative dimension -2"):
        nn.Conv2d(3, -2, 3)
    with pytest.raises(ValueError, match=r"tensor: expected sequence of length 2 at dim 1 \(got 1\)"):
        mg.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match=r"tensor: expected sequence of length 1 at dim 2 \(got 2\)"):
        mg.tensor([[[1], [2]], [[3], [4, 5]]])
    for idx, got in [(1.5, "float"), ((0, 1.5), "float"), ("a", "str")]:
        with pytest.raises(IndexError, match=rf"getitem: only integers, slices .* valid indices \(got {got}; tensor of shape \(3, 3\)"):
            mg.ones(3, 3)[idx]
    assert mg.ones(3, 3)[1, 2].item() == 1.0
