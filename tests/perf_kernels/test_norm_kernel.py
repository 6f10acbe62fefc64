"""batch_norm's numba kernels (minigrad/kernels/norm.py) against the NumPy path: the same values
up to the order of the sums, in both layouts the kernels take, and the NumPy path elsewhere."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels

pytest.importorskip("numba", reason="numba is optional: the kernels exist only with it")


@pytest.fixture
def kernels_on():
    old = kernels.set_enabled(True)
    yield
    kernels.set_enabled(old)


def _input(shape, dtype, layout, seed=0):
    x = (np.random.default_rng(seed).standard_normal(shape) * 3 + 1).astype(dtype)
    if layout == "cm":  # channel-major, as conv2d's output
        x = x.swapaxes(0, 1).copy().swapaxes(0, 1)
    elif layout == "strided":
        x = np.repeat(x, 2, axis=-1)[..., ::2]
    return x


def _run(xv, affine, use_kernels, backward_kernels=None):
    """batch_norm's results and gradients with numba on or off (for the backward: backward_kernels,
    when it is given)."""
    old = kernels.set_enabled(use_kernels)
    try:
        C = xv.shape[1]
        x = mg.from_numpy(xv.copy() if xv.flags.c_contiguous else xv).requires_grad_()
        w = mg.tensor(np.linspace(0.5, 1.5, C).astype(xv.dtype), requires_grad=True) if affine else None
        b = mg.tensor(np.linspace(-1, 1, C).astype(xv.dtype), requires_grad=True) if affine else None
        rm, rv = mg.zeros(C, dtype=xv.dtype), mg.ones(C, dtype=xv.dtype)
        out = F.batch_norm(x, rm, rv, w, b, training=True)
        g = np.cos(np.arange(out.numel())).reshape(out.shape).astype(xv.dtype)
        if backward_kernels is not None:
            kernels.set_enabled(backward_kernels)
        out.backward(mg.tensor(g))
        got = [out.detach().numpy(), x.grad.numpy(), rm.numpy(), rv.numpy()]
        if affine:
            got += [w.grad.numpy(), b.grad.numpy()]
        return got
    finally:
        kernels.set_enabled(old)


@pytest.mark.parametrize("layout", ["c", "cm"])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape", [(8, 5, 6, 7), (4, 3, 10), (16, 6), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("affine", [True, False])
def test_kernels_equal_the_numpy_path(layout, dtype, tol, shape, affine):
    xv = _input(shape, dtype, layout)
    fast, ref = _run(xv, affine, True), _run(xv, affine, False)
    for a, b in zip(fast, ref):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert fast[0].strides == ref[0].strides  # the output keeps the input's layout


def test_the_kernels_run_and_other_layouts_take_the_numpy_path(kernels_on, monkeypatch):
    from minigrad.ops import normalization as N
    calls = []
    real = kernels.load

    def spy(name):
        calls.append(name)
        return real(name)
    monkeypatch.setattr(kernels, "load", spy)
    for layout in ("c", "cm"):
        _run(_input((4, 3, 5, 5), np.float32, layout), True, True)
    assert calls.count("norm") == 4  # forward and dx for each layout
    calls.clear()
    xs = _input((4, 3, 5, 5), np.float32, "strided")
    assert N._kernel_layout(xs, (0, 2, 3)) is None
    np.testing.assert_allclose(_run(xs, True, True)[1], _run(np.ascontiguousarray(xs), True, False)[1],
                               rtol=1e-5, atol=1e-6)
    assert calls == []  # the NumPy path both ways: the dx kernel reads x, which no kernel layout fits
    assert N._kernel_layout(np.ones((4, 3, 5), np.float32), (2,)) is None  # layer_norm's axes


@pytest.mark.parametrize("layout", ["c", "cm"])
def test_gradcheck_and_second_derivatives_through_the_kernels(kernels_on, layout):
    x = mg.from_numpy(_input((3, 2, 2, 3), np.float64, "c")).requires_grad_()
    w = mg.tensor([0.7, 1.3], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([0.1, -0.2], dtype=mg.float64, requires_grad=True)

    def f(x, w, b):
        if layout == "cm":  # the same values, laid out channel-major (gradcheck takes contiguous inputs)
            x = x.transpose(0, 1).contiguous().transpose(0, 1)
        return F.batch_norm(x, None, None, w, b, training=True)
    assert mg.autograd.gradcheck(f, (x, w, b))
    assert mg.autograd.gradgradcheck(f, (x, w, b))


def test_matches_pytorch_on_a_conv_output(kernels_on):
    torch = pytest.importorskip("torch")
    xv = _input((8, 4, 9, 9), np.float32, "cm", seed=3)
    out_mg = _run(xv, True, True)
    x = torch.tensor(np.ascontiguousarray(xv), requires_grad=True)
    bn = torch.nn.BatchNorm2d(4)
    with torch.no_grad():
        bn.weight.copy_(torch.linspace(0.5, 1.5, 4))
        bn.bias.copy_(torch.linspace(-1, 1, 4))
    out = bn(x)
    g = np.cos(np.arange(out.numel())).reshape(out.shape).astype(np.float32)
    out.backward(torch.tensor(g))
    np.testing.assert_allclose(out_mg[0], out.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out_mg[1], x.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out_mg[2], bn.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_mg[3], bn.running_var.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_mg[4], bn.weight.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out_mg[5], bn.bias.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_the_kernel_forward_keeps_no_normalised_copy(kernels_on):
    """The kernel forward saves x (as every path does) and per-channel statistics, not xhat: the
    backward recomputes xhat from them as it reads x (PyTorch's saved mean and invstd)."""
    x = mg.from_numpy(_input((4, 3, 5, 5), np.float32, "cm")).requires_grad_()
    node = F.batch_norm(x, None, None, training=True).grad_fn
    assert node.xhat is None
    assert node.mean.shape == node.rstd.shape == (1, 3, 1, 1)
    old = kernels.set_enabled(False)
    try:  # the NumPy forward makes xhat anyway and hands it on
        assert F.batch_norm(x, None, None, training=True).grad_fn.xhat.shape == (4, 3, 5, 5)
    finally:
        kernels.set_enabled(old)


@pytest.mark.parametrize("layout", ["c", "cm"])
@pytest.mark.parametrize("forward_kernels", [True, False])
def test_forward_and_backward_on_different_paths(layout, forward_kernels):
    """numba switched on or off between the forward and the backward: the backward takes either
    path from what the forward saved (statistics only, or xhat too) and gives the same gradients."""
    xv = _input((6, 4, 5, 3), np.float32, layout, seed=2)
    got, ref = _run(xv, True, forward_kernels, not forward_kernels), _run(xv, True, False)
    for i in (1, 4, 5):  # dx, dw, db
        np.testing.assert_allclose(got[i], ref[i], rtol=2e-5, atol=2e-5)
