"""mg.fft against torch.fft: values and gradients for every transform, every norm, odd and even
sizes, trimmed and zero-padded n/s; round trips; gradcheck/gradgradcheck; forward mode (checked
against the reverse mode by the transpose identity); the frequency helpers and the errors."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)
NORMS = (None, "backward", "ortho", "forward")


def _c(shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _np(t):
    t = t.detach()
    return t.numpy() if isinstance(t, mg.Tensor) else t.resolve_conj().numpy()


def _check(name, x, **kw):
    """mg.fft.<name>(x, **kw) == torch.fft.<name>: dtype, shape, values; and the gradient of a real
    loss sum(Re(conj(w) y)) with respect to x."""
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ym, yt = getattr(mg.fft, name)(xm, **kw), getattr(torch.fft, name)(xt, **kw)
    assert ym.dtype.name == str(yt.dtype).replace("torch.", ""), (name, kw)
    assert tuple(ym.shape) == tuple(yt.shape), (name, kw)
    np.testing.assert_allclose(_np(ym), _np(yt), rtol=1e-10, atol=1e-10, err_msg=f"{name} {kw}")
    w = _c(tuple(ym.shape))
    if ym.is_complex():
        lm, lt = (ym * mg.tensor(w).conj()).real.sum(), (yt * torch.tensor(w).conj()).real.sum()
    else:
        lm, lt = (ym * mg.tensor(w.real)).sum(), (yt * torch.tensor(w.real)).sum()
    lm.backward()
    lt.backward()
    assert xm.grad.dtype == xm.dtype
    np.testing.assert_allclose(_np(xm.grad), _np(xt.grad), rtol=1e-10, atol=1e-10, err_msg=f"grad {name} {kw}")


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("length", [5, 6])
def test_1d_transforms_match_torch(name, length):
    real_in = name in ("rfft", "ihfft")
    x = RNG.standard_normal((3, length)) if real_in else _c((3, length))
    for norm in NORMS:
        for n in (None, length - 2, length + 3):
            _check(name, x, n=n, norm=norm)
        _check(name, np.ascontiguousarray(x.T), dim=0, norm=norm)
    if name in ("fft", "ifft"):  # a real input is taken as complex
        _check(name, RNG.standard_normal((2, length)), norm="ortho")


@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn", "irfft2", "irfftn"])
def test_nd_transforms_match_torch(name):
    real_in = name.startswith("rfft")
    x = RNG.standard_normal((2, 5, 6)) if real_in else _c((2, 5, 6))
    two = name.endswith("2")
    cases = [{}, {"s": (4, 7)}, {"s": (3, -1) if not name.startswith("irfft") else (3, 7), "dim": (0, 2)},
             {"dim": (2, 1)}]
    if not two:
        cases.append({"s": (3, 4, 5)})
    for norm in NORMS:
        for kw in cases:
            _check(name, x, norm=norm, **kw)


@pytest.mark.parametrize("n", [7, 8])
def test_round_trips(n):
    x = RNG.standard_normal((2, n))
    z = _c((2, n))
    X, Z = mg.tensor(x), mg.tensor(z)
    for norm in NORMS:
        np.testing.assert_allclose(mg.fft.ifft(mg.fft.fft(Z, norm=norm), norm=norm).numpy(), z, atol=1e-12)
        np.testing.assert_allclose(mg.fft.irfft(mg.fft.rfft(X, norm=norm), n=n, norm=norm).numpy(), x, atol=1e-12)
        np.testing.assert_allclose(mg.fft.hfft(mg.fft.ihfft(X, norm=norm), n=n, norm=norm).numpy(), x, atol=1e-12)
        np.testing.assert_allclose(mg.fft.ifftn(mg.fft.fftn(Z, norm=norm), norm=norm).numpy(), z, atol=1e-12)
        np.testing.assert_allclose(mg.fft.irfft2(mg.fft.rfft2(X, norm=norm), s=(2, n), norm=norm).numpy(), x,
                                   atol=1e-12)
    # Parseval with "ortho": the transform is unitary
    np.testing.assert_allclose((mg.fft.fft(Z, norm="ortho").abs() ** 2).sum().item(), (np.abs(z) ** 2).sum())


def test_gradcheck_and_gradgradcheck():
    x = mg.tensor(RNG.standard_normal((2, 5)), requires_grad=True)
    z = mg.tensor(_c((2, 4)), requires_grad=True)
    for f, a in [(lambda x: mg.fft.rfft(x, n=6, norm="ortho"), x), (lambda z: mg.fft.irfft(z, n=7), z),
                 (lambda z: mg.fft.irfft(z), z), (lambda z: mg.fft.hfft(z, norm="forward"), z),
                 (lambda x: mg.fft.ihfft(x), x), (lambda z: mg.fft.fft2(z * z, s=(3, 3)), z),
                 (lambda z: mg.fft.ifft(z, n=3, dim=0), z)]:
        assert mg.autograd.gradcheck(f, (a,))
        assert mg.autograd.gradgradcheck(f, (a,))


def _re_inner(a, b):
    return float(np.real(np.vdot(np.asarray(a), np.asarray(b))))


@pytest.mark.parametrize("name,kw,real_in", [
    ("fft", {"norm": "ortho"}, False), ("ifft", {"n": 7}, False), ("rfft", {"n": 6}, True),
    ("irfft", {"n": 7, "norm": "forward"}, False), ("irfft", {}, False), ("hfft", {"n": 9}, False),
    ("ihfft", {}, True), ("rfftn", {}, True), ("irfft2", {}, False)])
def test_jvp_is_the_transpose_of_the_vjp(name, kw, real_in):
    """<u, J t> = <J^T u, t> (real inner products of the parts), and J t against central differences."""
    shape = (2, 5)
    x = RNG.standard_normal(shape) if real_in else _c(shape)
    t = RNG.standard_normal(shape) if real_in else _c(shape)
    f = getattr(mg.fft, name)
    y, jt = mg.func.jvp(lambda a: f(a, **kw), (mg.tensor(x),), (mg.tensor(t),))
    u = _c(tuple(y.shape)) if y.is_complex() else RNG.standard_normal(tuple(y.shape))
    _, vjp = mg.func.vjp(lambda a: f(a, **kw), mg.tensor(x))
    jtu, = vjp(mg.tensor(u))
    assert abs(_re_inner(u, jt.numpy()) - _re_inner(jtu.numpy(), t)) < 1e-9
    eps = 1e-6
    fd = (f(mg.tensor(x + eps * t), **kw).numpy() - f(mg.tensor(x - eps * t), **kw).numpy()) / (2 * eps)
    np.testing.assert_allclose(jt.numpy(), fd, atol=1e-7)


def test_float32_gives_complex64_and_grads_keep_dtypes():
    x = mg.randn(8, requires_grad=True)
    X = mg.fft.rfft(x)
    assert X.dtype == mg.complex64 and mg.fft.fft(x).dtype == mg.complex64
    assert mg.fft.irfft(X).dtype == mg.float32 and mg.fft.fft(mg.tensor([1, 2, 3])).dtype == mg.complex64
    mg.fft.irfft(X * X).sum().backward()
    assert x.grad.dtype == mg.float32
    assert X.grad_fn.name() == "FftR2CBackward0" and mg.fft.irfft(X).grad_fn.name() == "FftC2RBackward0"
    assert mg.fft.fft(X).grad_fn.name() == "FftC2CBackward0"


@pytest.mark.parametrize("n", [5, 6])
def test_frequencies_and_shifts_match_torch(n):
    for d in (1.0, 0.25):
        np.testing.assert_allclose(mg.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        np.testing.assert_allclose(mg.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    assert mg.fft.fftfreq(n).dtype == mg.float32 and mg.fft.fftfreq(n, dtype=mg.float64).dtype == mg.float64
    x = np.arange(3.0 * n).reshape(3, n)
    for dim in (None, 1, (0, 1), -1):
        np.testing.assert_array_equal(mg.fft.fftshift(mg.tensor(x), dim=dim).numpy(),
                                      torch.fft.fftshift(torch.tensor(x), dim=dim).numpy())
        np.testing.assert_array_equal(mg.fft.ifftshift(mg.tensor(x), dim=dim).numpy(),
                                      torch.fft.ifftshift(torch.tensor(x), dim=dim).numpy())
    z = mg.tensor(_c(n), requires_grad=True)  # shifting is differentiable (a roll)
    mg.fft.fftshift(z).real.sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), np.ones(n))


def test_errors_as_pytorch():
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        mg.fft.fft(mg.randn(4), norm="unitary")
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor"):
        mg.fft.rfft(mg.tensor([1 + 1j]))
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        mg.fft.fft(mg.randn(4), n=0)
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        mg.fft.irfft(mg.tensor([1 + 0j]))
    with pytest.raises(IndexError, match="Dimension out of range"):
        mg.fft.fft(mg.randn(4), dim=2)
    with pytest.raises(RuntimeError, match="same length"):
        mg.fft.fftn(mg.randn(4, 4), s=(2,), dim=(0, 1))


def test_vmap_batches_the_transforms_without_a_loop():
    x = mg.tensor(RNG.standard_normal((4, 3, 6)))
    fs = [lambda a: mg.fft.rfft(a), lambda a: mg.fft.fft2(a, norm="ortho"), lambda a: mg.fft.fftn(a, s=(2, 5)),
          lambda a: mg.fft.irfftn(mg.fft.rfft2(a), s=(3, 6)), lambda a: mg.fft.hfft(mg.fft.ihfft(a, dim=0), dim=0),
          lambda a: mg.view_as_real(mg.fft.rfft(a))]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a per-sample loop fallback warns: these have batching rules
        for f in fs:
            for d in (0, 2):
                got = mg.vmap(f, in_dims=d)(x)
                want = mg.stack([f(x[i] if d == 0 else x[:, :, i]) for i in range(x.shape[d])])
                np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)
    g = mg.vmap(mg.func.grad(lambda a: mg.fft.rfft(a).abs().sum()))(x)
    want = mg.stack([mg.func.grad(lambda a: mg.fft.rfft(a).abs().sum())(x[i]) for i in range(4)])
    np.testing.assert_allclose(g.numpy(), want.numpy(), atol=1e-12)
