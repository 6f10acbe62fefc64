"""The numba kernels of cross_entropy's common case (kernels/loss.py), relu and its gradient
(kernels/elementwise.py) and the SGD step (kernels/optim.py) against the NumPy paths they replace:
relu's gradient and SGD bit for bit, cross_entropy up to its float64 sums."""
import itertools

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.ops import elementwise as elementwise_mod
from minigrad.ops.elementwise import _relu, _threshold_backward
from minigrad.optim import optimizer as optimizer_mod

pytest.importorskip("numba", reason="numba is optional: the kernels exist only with it")


def _with(flag, fn, *args, **kw):
    old = kernels.set_enabled(flag)
    try:
        return fn(*args, **kw)
    finally:
        kernels.set_enabled(old)


# -- cross_entropy -------------------------------------------------------------------------------
def _ce(z, y, **kw):
    zt = mg.tensor(z.copy(), requires_grad=True)
    loss = F.cross_entropy(zt, y, **kw)
    loss.backward(mg.ones_like(loss) if loss.ndim else None)
    return loss.detach().numpy(), zt.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 10), (128, 10), (7, 3), (5, 1)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_kernel_matches_numpy(dtype, shape, reduction):
    rng = np.random.default_rng(sum(shape))
    z = (rng.standard_normal(shape) * 4).astype(dtype)
    y = mg.tensor(rng.integers(0, shape[1], shape[0]))
    got = _with(True, _ce, z, y, reduction=reduction)
    want = _with(False, _ce, z, y, reduction=reduction)
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-15)
    for a, b in zip(got, want):
        assert a.dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, **tol)


def test_cross_entropy_kernel_layouts_targets_and_extremes():
    rng = np.random.default_rng(3)
    z = (rng.standard_normal((9, 12)) * 3).astype(np.float32)[:, ::2]  # strided logits
    for y in (mg.tensor(rng.integers(0, 6, 9)), mg.tensor(rng.integers(0, 6, 9).astype(np.int32))):
        np.testing.assert_allclose(_with(True, _ce, z, y)[1], _with(False, _ce, z, y)[1], rtol=1e-6, atol=1e-7)
    big = np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0]], np.float32)
    yb = mg.tensor([0, 2, 1])
    for a, b in zip(_with(True, _ce, big, yb, reduction="sum"), _with(False, _ce, big, yb, reduction="sum")):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-6)


def test_cross_entropy_kernel_leaves_ignored_and_bad_targets_to_the_general_path():
    rng = np.random.default_rng(4)
    z = rng.standard_normal((6, 4)).astype(np.float32)
    y = mg.tensor([0, -100, 1, 2, 2, 0])
    loss, g = _with(True, _ce, z, y)
    assert (g[1] == 0).all() and (g[0] != 0).any()
    np.testing.assert_allclose(loss, _with(False, _ce, z, y)[0], rtol=1e-6)
    with pytest.raises(IndexError, match="out of bounds"):
        _with(True, _ce, z, mg.tensor([0, 4, 1, 2, 2, 0]))


def test_cross_entropy_kernel_gradients_check():
    rng = np.random.default_rng(5)
    z = mg.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    y = mg.tensor([0, 3, 1, 2, 2])
    assert _with(True, mg.autograd.gradcheck, lambda t: F.cross_entropy(t, y), (z,))
    assert _with(True, mg.autograd.gradgradcheck, lambda t: F.cross_entropy(t, y, reduction="sum"), (z,))


# -- relu and its gradient -----------------------------------------------------------------------
def _arrays(shape, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(shape).astype(dtype)
    y = rng.standard_normal(shape).astype(dtype)
    g.flat[0], g.flat[-1], y.flat[1] = -np.inf, -0.5, 0.0
    if layout == "cm":
        g, y = (a.swapaxes(0, 1).copy().swapaxes(0, 1) for a in (g, y))
    elif layout == "strided":
        g, y = (np.repeat(a, 2, axis=-1)[..., ::2] for a in (g, y))
    return g, y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,layout", [((7,), "c"), ((128, 256), "c"), ((2, 3, 5, 5), "c"),
                                          ((4, 3, 6, 6), "cm"), ((3, 8), "strided"), ((64, 32, 28, 28), "cm")])
def test_threshold_backward_kernel_bit_for_bit(dtype, shape, layout):
    g, y = _arrays(shape, dtype, layout, seed=len(shape))
    with np.errstate(invalid="ignore"):  # inf * 0 where the mask is off (strided: NumPy both times)
        want = _with(False, _threshold_backward, g, y)
        got = _with(True, _threshold_backward, g, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # nan where g is inf and masked, as NumPy
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0 where g < 0 is masked
    if layout == "cm":
        assert got.transpose(1, 0, 2, 3).flags.c_contiguous  # the layout conv2d's consumers expect


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,layout", [((7,), "c"), ((128, 256), "c"), ((4, 3, 6, 6), "cm"),
                                          ((64, 32, 28, 28), "cm"), ((64, 130), "strided")])
def test_relu_kernel_bit_for_bit(monkeypatch, dtype, shape, layout):
    """relu's forward through the kernel equals np.maximum(x, 0): nan stays nan, -0.0 and -inf give
    0.0, the layout is kept; a strided input takes NumPy's path."""
    monkeypatch.setattr(elementwise_mod, "_RELU_KERNEL_MIN", 1)
    x, _ = _arrays(shape, dtype, layout, seed=3)
    x.flat[:4] = [np.nan, -0.0, np.inf, -np.inf]
    calls = []
    real = kernels.load("elementwise").relu
    monkeypatch.setattr(kernels.load("elementwise"), "relu", lambda a, o: calls.append(1) or real(a, o))
    want = np.maximum(x, 0)
    for out in (None, np.empty_like(x)):
        got = _with(True, _relu, x, out)
        assert got.dtype == want.dtype and got.shape == want.shape and got.strides == np.empty_like(x).strides
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        assert out is None or got is out
    assert len(calls) == (0 if layout == "strided" else 2)
    np.testing.assert_array_equal(_with(False, _relu, x), want)  # without numba: NumPy's path


def test_relu_kernel_serves_the_op_for_large_inputs():
    x = np.random.default_rng(8).standard_normal((64, 128)).astype(np.float32)
    xt = mg.tensor(x, requires_grad=True)
    assert x.size >= elementwise_mod._RELU_KERNEL_MIN
    y = _with(True, mg.relu, xt)
    np.testing.assert_array_equal(y.detach().numpy(), np.maximum(x, 0))
    y.sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), (x > 0).astype(np.float32))


def test_relu_gradient_through_the_kernel():
    x = mg.tensor(np.random.default_rng(6).standard_normal((4, 5)), requires_grad=True)
    assert _with(True, mg.autograd.gradcheck, mg.relu, (x,))
    assert _with(True, mg.autograd.gradgradcheck, mg.relu, (x,))


# -- the SGD step --------------------------------------------------------------------------------
def _sgd_run(use_kernels, foreach, dtype, params_kw, transposed=False):
    old_fe = optimizer_mod._FOREACH
    optimizer_mod._FOREACH = foreach
    old = kernels.set_enabled(use_kernels)
    try:
        rng = np.random.default_rng(0)
        shapes = [(3, 4), (5,), (2, 3, 4)]
        ps = []
        for s in shapes:
            a = rng.standard_normal(s).astype(dtype)
            ps.append(mg.nn.Parameter(mg.tensor(a.T.copy().T if transposed and a.ndim == 2 else a)))
        if transposed:
            ps[0] = mg.nn.Parameter(mg.tensor(np.asfortranarray(ps[0].detach().numpy())))
        opt = mg.optim.SGD(ps, lr=0.1, **params_kw)
        for _ in range(3):
            for p in ps:
                p.grad = mg.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype))
            opt.step()
        return [p.detach().numpy().copy() for p in ps]
    finally:
        kernels.set_enabled(old)
        optimizer_mod._FOREACH = old_fe


_SGD_OPTIONS = [dict(momentum=m, dampening=d, weight_decay=wd, nesterov=n, maximize=mx)
                for m, d, wd, n, mx in itertools.product((0.0, 0.9), (0.0, 0.25), (0.0, 0.01), (False, True),
                                                          (False, True))
                if not (n and (m == 0 or d != 0))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", _SGD_OPTIONS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_sgd_kernel_bit_for_bit(dtype, kw):
    got = _sgd_run(True, True, dtype, kw)
    for other in (_sgd_run(False, True, dtype, kw), _sgd_run(False, False, dtype, kw)):
        for a, b in zip(got, other):
            np.testing.assert_array_equal(a, b)


def test_sgd_kernel_falls_back_for_a_non_contiguous_parameter():
    kw = dict(momentum=0.9)
    got = _sgd_run(True, True, np.float32, kw, transposed=True)
    for a, b in zip(got, _sgd_run(False, False, np.float32, kw, transposed=True)):
        np.testing.assert_array_equal(a, b)


# -- the Adam / AdamW step -----------------------------------------------------------------------
def _adam_run(use_kernels, foreach, cls, dtype, kw):
    old_fe = optimizer_mod._FOREACH
    optimizer_mod._FOREACH = foreach
    old = kernels.set_enabled(use_kernels)
    try:
        rng = np.random.default_rng(1)
        ps = [mg.nn.Parameter(mg.tensor(rng.standard_normal(s).astype(dtype))) for s in [(3, 4), (5,), (2, 3, 4)]]
        opt = cls(ps, lr=0.1, **kw)
        for _ in range(4):
            for p in ps:
                p.grad = mg.tensor(rng.standard_normal(tuple(p.shape)).astype(dtype))
            opt.step()
        return [p.detach().numpy().copy() for p in ps] + [
            opt.state[p][k].numpy().copy() for p in ps for k in ("exp_avg", "exp_avg_sq")]
    finally:
        kernels.set_enabled(old)
        optimizer_mod._FOREACH = old_fe


_ADAM_OPTIONS = [dict(weight_decay=wd, amsgrad=a, maximize=mx, betas=(b1, 0.999))
                 for wd, a, mx, b1 in itertools.product((0.0, 0.01, 1.0), (False, True), (False, True), (0.9, 0.3))]


@pytest.mark.parametrize("cls", [mg.optim.Adam, mg.optim.AdamW], ids=lambda c: c.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", _ADAM_OPTIONS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_adam_kernel_bit_for_bit(cls, dtype, kw):
    got = _adam_run(True, True, cls, dtype, kw)
    for other in (_adam_run(False, True, cls, dtype, kw), _adam_run(False, False, cls, dtype, kw)):
        for a, b in zip(got, other):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("target, ok", [([0, 3, 9, 1], True), ([0, 10, 1], False), ([2, -1], False),
                                        ([-100, 2], False), ([], True)])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_class_range_kernel_matches_numpy(target, ok, dtype):
    from minigrad.nn.functional import _check_class_range
    if dtype is np.uint8 and min(target, default=0) < 0:
        pytest.skip("a negative index has no uint8 form")
    t = np.array(target, dtype=dtype)

    def check(ignore_index):
        try:
            _check_class_range(t, 10, ignore_index, "cross_entropy")
            return None
        except IndexError as e:
            return str(e)
    for ii in (-100, 10):  # an ignored value passes either way; any other value outside [0, 10) is named
        assert _with(True, check, ii) == _with(False, check, ii)
    assert (_with(True, check, -100) is None) == (ok or target == [-100, 2])
