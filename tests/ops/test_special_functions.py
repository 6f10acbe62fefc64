"""mg.special (torch.special) and the top-level special ops: values against SciPy over each function's
domain, edges included (poles, zeros, infinities, nan, the tails); against PyTorch 2.13 at the same
points; PyTorch's missing derivatives raise as PyTorch's do; float32 is float64 rounded.

Gradients, second derivatives, JVPs, vmap and tracing are checked by the registry
(minigrad/testing/opinfo/special.py) through the per-op tests.
"""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.special as special

INF, NAN = math.inf, math.nan
_EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, INF, -INF, NAN, 1e-300, -1e-300, 5e-324, 1e300, -1e300]


def _grid(lo, hi, n=41, extra=()):
    return np.concatenate([np.linspace(lo, hi, n), np.asarray(extra, dtype=np.float64)])


_X = _grid(-30, 30, 121, _EDGES + [-2.5, 3.7, 1.4616321449683622, -7.25, 40.0, 700.0, -700.0, 1e-8, 1e8])
_P = _grid(0, 1, 41, [1e-300, 1e-20, 1e-10, 1 - 1e-10, 1 - 1e-16, 0.5 + 1e-12, -0.1, 1.1, NAN, INF, -INF, -0.0])
_U = _grid(-1, 1, 41, [1e-300, -1e-300, 1e-12, 1 - 1e-12, -1 + 1e-16, 1.5, -1.5, NAN, INF])

# (name, minigrad function, SciPy's name, inputs, rtol, atol): rtol where the function is
# well-conditioned; atol covers the zeros of digamma and the Bessel functions (absolute accuracy)
UNARY = [
    ("lgamma", mg.lgamma, "gammaln", _X, 1e-14, 1e-15),
    ("digamma", mg.digamma, "psi", _X, 1e-14, 1e-15),
    ("erf", special.erf, "erf", _X, 1e-15, 0),
    ("erfc", mg.erfc, "erfc", _grid(-10, 26, 73, _EDGES), 1e-13, 0),
    ("erfcx", special.erfcx, "erfcx", _X, 1e-14, 0),
    ("erfinv", mg.erfinv, "erfinv", _U, 1e-14, 0),
    ("logit", mg.logit, "logit", _P, 1e-14, 1e-15),
    ("expit", special.expit, "expit", _X, 1e-15, 0),
    ("entr", special.entr, "entr", _X, 1e-15, 0),
    ("sinc", special.sinc, "sinc", _grid(-5, 5, 41, [0.0, 1e-9, INF, NAN]), 1e-14, 1e-16),
    ("ndtr", special.ndtr, "ndtr", _X, 1e-13, 0),
    ("ndtri", special.ndtri, "ndtri", _P, 1e-14, 1e-15),
    ("log_ndtr", special.log_ndtr, "log_ndtr", _X, 1e-13, 0),
    ("i0", mg.i0, "i0", _X, 1e-14, 0),
    ("i0e", special.i0e, "i0e", _X, 1e-14, 0),
    ("i1", special.i1, "i1", _X, 1e-14, 0),
    ("i1e", special.i1e, "i1e", _X, 1e-14, 0),
    ("bessel_j0", special.bessel_j0, "j0", _X, 1e-12, 1e-15),
    ("bessel_j1", special.bessel_j1, "j1", _X, 1e-12, 1e-15),
    ("bessel_y0", special.bessel_y0, "y0", _X, 1e-12, 1e-15),
    ("bessel_y1", special.bessel_y1, "y1", _X, 1e-12, 1e-15),
]
# the edges where PyTorch and SciPy part ways: minigrad follows PyTorch (compared below)
_TORCH_NOT_SCIPY = {
    "lgamma": [-INF, 5e-324],      # SciPy: -inf and inf; PyTorch: inf and 744.44 (the C library's value)
    "digamma": [-0.0],             # SciPy: -inf; PyTorch: inf (the sign of the zero)
    "erfc": [],
    "entr": [],
    "bessel_j0": [INF, -INF],      # SciPy: 0; PyTorch: nan
    "bessel_j1": [INF, -INF],
    "bessel_y0": [INF, -INF],
    "bessel_y1": [INF, -INF],
    "i0": [INF, -INF],
    "i1": [INF, -INF],
}


def _same(got, want, rtol, atol, what):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    nan_differs = np.flatnonzero(np.isnan(got) != np.isnan(want))
    assert not nan_differs.size, f"{what}: nan at {nan_differs}"
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf]), f"{what}: infinities differ"
    np.testing.assert_allclose(got[~inf], want[~inf], rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("name, fn, sp_name, x, rtol, atol", UNARY, ids=[u[0] for u in UNARY])
def test_unary_against_scipy(name, fn, sp_name, x, rtol, atol):
    sp = pytest.importorskip("scipy.special")
    x = x[~np.isin(x, _TORCH_NOT_SCIPY.get(name, [])) | np.isnan(x)]
    if name == "digamma":
        x = x[~((x == 0) & np.signbit(x))]
    with np.errstate(all="ignore"):
        want = getattr(sp, sp_name)(x)
    _same(fn(mg.tensor(x, dtype=mg.float64)).numpy(), want, rtol, atol, name)


@pytest.mark.parametrize("name, fn, sp_name, x, rtol, atol", UNARY, ids=[u[0] for u in UNARY])
def test_unary_against_torch(name, fn, sp_name, x, rtol, atol):
    torch = pytest.importorskip("torch")
    tfn = getattr(torch.special, name, None) or getattr(torch, name)
    want = tfn(torch.tensor(x, dtype=torch.float64)).numpy()
    # PyTorch's own float64 kernels are less accurate than SciPy's in places: its Bessel J/Y are off
    # by up to ~4e-7 absolute (J for x in (-8.5, -5), Y for x in (3.5, 8); minigrad agrees with
    # SciPy to 1e-15 there, test_unary_against_scipy); elsewhere 1e-8 relative. The edges (nan, inf
    # and their signs) are compared exactly.
    atol = 1e-6 if name.startswith("bessel") else 1e-12
    _same(fn(mg.tensor(x, dtype=mg.float64)).numpy(), want, 1e-8, atol, name)


def test_polygamma_and_multigammaln():
    sp = pytest.importorskip("scipy.special")
    x = _grid(-8.5, 30, 78, [0.1, 1e-5, -0.5, -2.25, 100.0, 1e5, 1e10, -150.75, -1e4 + 0.25])
    for n in range(5):
        _same(mg.polygamma(n, mg.tensor(x, dtype=mg.float64)).numpy(), sp.polygamma(n, x), 1e-13, 1e-15,
              f"polygamma({n})")
    with np.errstate(all="ignore"):
        poles = mg.polygamma(1, mg.tensor([0.0, -1.0, -3.0], dtype=mg.float64)).numpy()
    assert np.all(poles == INF)
    x = np.array([2.1, 2.5, 3.7, 10.0, 100.0])
    for p in (1, 2, 3, 5):
        _same(special.multigammaln(mg.tensor(x, dtype=mg.float64), p).numpy(),
              [sp.multigammaln(v, p) for v in x], 1e-14, 1e-15, f"multigammaln(p={p})")


def test_polygamma_against_torch():
    torch = pytest.importorskip("torch")
    # (PyTorch's trigamma at the negative integers is finite, ~1e32, from the reflection's sin(pi x)
    # rounding: minigrad gives inf there, as SciPy; the pole at 0 is inf in all three)
    x = _grid(-8.6, 30, 78, [0.0, 1e5, INF, NAN])
    for n in range(4):
        want = torch.polygamma(n, torch.tensor(x, dtype=torch.float64)).numpy()
        # rtol 1e-8: PyTorch's trigamma is a short asymptotic series, off by up to ~1e-9
        _same(mg.polygamma(n, mg.tensor(x, dtype=mg.float64)).numpy(), want, 1e-8, 1e-12, f"polygamma({n})")


# edges, then points of each method: the series, the continued fraction, and (small a, x <= 1.1) the
# series of Q itself where 1 - P would cancel
_A = np.array([0.0, 0.0, 1.0, INF, INF, 1.0, -1.0, 2.0, NAN, 0.5, 0.5, 3.0, 10.0, 10.0, 50.0, 100.0, 1e-3, 7.5,
               1e-4, 0.01, 0.1, 0.3, 2e-3])
_AX = np.array([0.0, 1.0, 0.0, 1.0, INF, INF, 1.0, -1.0, 1.0, 1e-3, 20.0, 3.0, 9.0, 30.0, 45.0, 130.0, 1e-3, 0.1,
                1e-5, 0.5, 1.05, 0.8, 1.1])


def test_incomplete_gamma():
    sp = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(0)
    a = np.concatenate([_A, rng.uniform(0, 20, 200)])
    x = np.concatenate([_AX, rng.uniform(0, 40, 200)])
    ta, tx = mg.tensor(a, dtype=mg.float64), mg.tensor(x, dtype=mg.float64)
    _same(special.gammainc(ta, tx).numpy(), sp.gammainc(a, x), 1e-13, 1e-300, "gammainc")
    _same(special.gammaincc(ta, tx).numpy(), sp.gammaincc(a, x), 1e-13, 1e-300, "gammaincc")
    torch = pytest.importorskip("torch")
    ra, rx = torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)
    # (PyTorch's series lose ~1e-9 for a ~ 50: minigrad agrees with SciPy to 1e-13 above)
    _same(mg.igamma(ta, tx).numpy(), torch.igamma(ra, rx).numpy(), 1e-8, 1e-300, "igamma")
    _same(mg.igammac(ta, tx).numpy(), torch.igammac(ra, rx).numpy(), 1e-8, 1e-300, "igammac")


def test_incomplete_gamma_large_shape_against_mpmath():
    # the prefactor x^a e^-x / Gamma(a) through Stirling's series: no cancellation for large a
    mp = pytest.importorskip("mpmath")
    a = np.array([50.0, 750.0, 4646.314182059424, 8246.244203197173, 900978.1828373367])
    x = np.array([45.0, 757.0, 2741.74544601004, 11630.485912058188, 895730.5809854193])
    p = special.gammainc(mg.tensor(a, dtype=mg.float64), mg.tensor(x, dtype=mg.float64)).numpy()
    q = special.gammaincc(mg.tensor(a, dtype=mg.float64), mg.tensor(x, dtype=mg.float64)).numpy()
    with mp.workdps(30):
        for i in range(len(a)):
            wp = mp.gammainc(mp.mpf(a[i]), 0, mp.mpf(x[i]), regularized=True)
            wq = mp.gammainc(mp.mpf(a[i]), mp.mpf(x[i]), mp.inf, regularized=True)
            assert abs(p[i] - wp) <= 5e-13 * wp and abs(q[i] - wq) <= 5e-13 * wq, (a[i], x[i], p[i], q[i])


def test_zeta():
    sp = pytest.importorskip("scipy.special")
    x = np.array([1.0, 0.5, 2.0, 2.0, 3.0, 2.0, INF, 60.0, 2.0, 1.5, 4.0, 2.0, 3.0, 1.0 + 1e-10, 30.0])
    q = np.array([1.0, 1.0, 0.0, -1.0, -2.5, -2.5, 1.0, 0.5, -INF, 1e-3, 1e3, 1e10, 7.25, 1.0, 2.0])
    got = special.zeta(mg.tensor(x, dtype=mg.float64), mg.tensor(q, dtype=mg.float64)).numpy()
    _same(got, sp.zeta(x, q), 1e-14, 0, "zeta")
    torch = pytest.importorskip("torch")
    x2, q2 = np.append(x, 2.0), np.append(q, INF)   # zeta(x, inf): PyTorch nan (SciPy 0), minigrad as PyTorch
    want = torch.special.zeta(torch.tensor(x2, dtype=torch.float64), torch.tensor(q2, dtype=torch.float64)).numpy()
    _same(special.zeta(mg.tensor(x2, dtype=mg.float64), mg.tensor(q2, dtype=mg.float64)).numpy(), want, 1e-12, 0,
          "zeta vs torch")


def test_xlog1py():
    sp = pytest.importorskip("scipy.special")
    x = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 3.0, NAN, 0.0, 2.0])
    y = np.array([-1.0, NAN, 2.0, -1.0, 1e-20, -0.5, 1.0, -2.0, INF])
    got = special.xlog1py(mg.tensor(x, dtype=mg.float64), mg.tensor(y, dtype=mg.float64)).numpy()
    with np.errstate(all="ignore"):
        _same(got, sp.xlog1py(x, y), 1e-15, 0, "xlog1py")


# -- derivatives PyTorch does not have ------------------------------------------------------------------
@pytest.mark.parametrize("fn, msg", [(special.gammainc, "igamma: input"), (special.gammaincc, "igammac: input"),
                                     (special.zeta, "zeta")])
def test_missing_derivatives_raise_as_pytorch(fn, msg):
    a = mg.tensor([2.5, 3.0], dtype=mg.float64, requires_grad=True)
    x = mg.tensor([0.5, 1.5], dtype=mg.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match=f"the derivative for '{msg}' is not implemented"):
        fn(a, x).sum().backward()
    # the second argument's derivative is there
    g, = mg.autograd.grad(fn(a.detach(), x).sum(), [x])
    assert np.all(np.isfinite(g.numpy()))


def test_incomplete_gamma_and_zeta_gradients_match_torch():
    torch = pytest.importorskip("torch")
    a, x = np.array([0.5, 2.0, 3.7]), np.array([0.3, 2.5, 9.0])
    for name in ("gammainc", "gammaincc", "zeta"):
        av = a + (1.5 if name == "zeta" else 0.0)
        tx = mg.tensor(x, dtype=mg.float64, requires_grad=True)
        g, = mg.autograd.grad(getattr(special, name)(mg.tensor(av, dtype=mg.float64), tx).sum(), [tx])
        rx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        want, = torch.autograd.grad(getattr(torch.special, name)(torch.tensor(av, dtype=torch.float64), rx).sum(),
                                    [rx])
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-12, err_msg=name)


def test_gammainc_derivative_at_zero_with_a_one():
    # d/dx P(1, x) = exp(-x): 1 at x = 0 (x^(a-1) is 1 there, not 0 * log 0)
    x = mg.tensor([0.0], dtype=mg.float64, requires_grad=True)
    special.gammainc(mg.tensor([1.0], dtype=mg.float64), x).sum().backward()
    assert x.grad.tolist() == [1.0]


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"])
def test_bessel_functions_have_no_grad_fn(name):
    x = mg.tensor([0.5, 2.0], requires_grad=True)
    y = getattr(special, name)(x)
    assert not y.requires_grad and y.grad_fn is None
    torch = pytest.importorskip("torch")
    assert getattr(torch.special, name)(torch.tensor([0.5, 2.0], requires_grad=True)).grad_fn is None


def test_bad_arguments():
    x = mg.tensor([0.5, 1.0])
    with pytest.raises(RuntimeError, match="does not support negative n"):
        mg.polygamma(-1, x)
    with pytest.raises(TypeError, match="'n' must be int"):
        mg.polygamma(1.5, x)
    with pytest.raises(RuntimeError, match=r"greater than \(p-1\)/2"):
        mg.mvlgamma(x, 3)
    with pytest.raises(TypeError, match="must be Tensor"):
        special.erfcx(0.5)
    with pytest.raises(TypeError, match="must be Tensor"):
        special.gammainc(1.0, 2.0)


# -- dtypes, aliases, methods ----------------------------------------------------------------------------
_UNARY_FNS = [mg.lgamma, mg.digamma, mg.erfc, mg.erfinv, mg.logit, mg.i0, special.erfcx, special.ndtri,
              special.log_ndtr, special.entr, special.i0e, special.i1, special.i1e, special.bessel_j0,
              special.bessel_y1]


@pytest.mark.parametrize("fn", _UNARY_FNS, ids=lambda f: f.__name__)
def test_float32_is_float64_rounded(fn):
    x = np.array([0.1, 0.3, 0.7, 0.9, 1.7], dtype=np.float32)
    got = fn(mg.tensor(x))
    assert got.dtype == mg.float32
    want = fn(mg.tensor(x.astype(np.float64))).numpy().astype(np.float32)
    np.testing.assert_array_equal(got.numpy(), want)


def test_integers_give_the_default_float_dtype():
    assert mg.lgamma(mg.tensor([1, 2, 3])).dtype == mg.float32
    assert special.gammainc(mg.tensor([1, 2]), mg.tensor([1, 2])).dtype == mg.float32
    assert mg.lgamma(mg.tensor([1, 2, 3])).tolist() == [0.0, 0.0, pytest.approx(math.log(2))]


def test_aliases_are_the_same_functions():
    assert special.gammaln is mg.lgamma and special.psi is mg.digamma and special.digamma is mg.digamma
    assert special.multigammaln is mg.mvlgamma and special.polygamma is mg.polygamma
    assert special.gammainc is mg.igamma and special.gammaincc is mg.igammac
    assert special.expit is mg.sigmoid and special.erf is mg.erf and special.xlogy is mg.xlogy
    assert special.sinc is mg.sinc and special.round is mg.round and special.logsumexp is mg.logsumexp
    assert special.softmax is mg.softmax and special.log_softmax is mg.log_softmax
    assert mg.special is special


def test_names_are_torch_specials():
    torch = pytest.importorskip("torch")
    for name in special.__all__:
        assert hasattr(torch.special, name), name
    for name in ("lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac", "erfc", "erfinv", "logit", "i0"):
        assert hasattr(torch, name) and hasattr(mg, name), name
        assert hasattr(mg.Tensor, name) and hasattr(mg.Tensor, name + "_"), name


def test_methods_and_inplace_forms():
    x = np.array([0.2, 0.45, 0.8])
    for name, args in [("lgamma", ()), ("digamma", ()), ("erfc", ()), ("erfinv", ()), ("logit", (0.25,)),
                       ("i0", ()), ("polygamma", (2,)), ("mvlgamma", (1,))]:
        want = getattr(mg.tensor(x), name)(*args).numpy()
        fn = getattr(mg, name)
        ref = (fn(args[0], mg.tensor(x)) if name == "polygamma" else fn(mg.tensor(x), *args)).numpy()
        np.testing.assert_array_equal(want, ref, err_msg=name)
        t = mg.tensor(x)
        assert getattr(t, name + "_")(*args) is t
        np.testing.assert_array_equal(t.numpy(), ref, err_msg=name + "_")
    a, b = mg.tensor([1.5, 2.0]), mg.tensor([0.5, 3.0])
    assert a.igamma(b).tolist() == mg.igamma(a, b).tolist()
    assert a.clone().igammac_(b).tolist() == mg.igammac(a, b).tolist()
