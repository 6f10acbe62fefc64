"""Registry entries of the special functions (ops/special.py, minigrad.special): the gamma family,
error functions, logit, the modified Bessel functions, the normal distribution's functions, zeta,
xlog1py, and the Bessel functions J/Y (not differentiable, as PyTorch). xlogy and sinc are in
elementwise.py.

The NumPy reference of each is SciPy's function when SciPy is installed (the test oracle; minigrad
never imports it), and none otherwise: the values are then checked against PyTorch alone.
tests/ops/test_special_functions.py checks the edges (poles, infinities, tails) against both.
"""
import importlib.util
from functools import partial

import numpy as np

import minigrad as mg

from .core import Const, OpInfo, SampleInput, _inplace_form, binary_samples, nonzero, positive, sample, \
    unary_samples

try:  # (found without importing it: minigrad never imports SciPy)
    _HAVE_SCIPY = importlib.util.find_spec("scipy") is not None
except (ImportError, ValueError):
    _HAVE_SCIPY = False


def _sp(name, *static, first=False):
    """SciPy's scipy.special.<name> as a reference (static arguments after the arrays, or before
    them with first=True), in the input's dtype; None without SciPy."""
    if not _HAVE_SCIPY:
        return None

    def ref(*arrays):
        import scipy.special
        fn = getattr(scipy.special, name)
        with np.errstate(all="ignore"):
            out = fn(*static, *arrays) if first else fn(*arrays, *static)
        return np.asarray(out).astype(np.result_type(*arrays))
    return ref


def _un(name, ref, sampler=sample, *, kinks=(), op=None, **kw):
    return OpInfo(name, op or _resolve(name), ref, unary_samples(sampler, kinks), **kw)


def _resolve(name):
    mod = mg
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


_PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 1), (1, 3)), ((4, 2, 3), (3,))]


def _const_first(sa, sx, kinks=(), shapes=_PAIRS):
    """Samples of an op whose first argument has no derivative (igamma's a, zeta's x): a Const."""
    def gen(rng):
        out = [SampleInput((Const(sa(a, rng)), sx(b, rng))) for a, b in shapes]
        out += [SampleInput((Const(np.asarray(a, dtype=np.float64)), np.asarray(x, dtype=np.float64)),
                            name=f"kink{i}", kink=True) for i, (a, x) in enumerate(kinks)]
        return out
    return gen


# PyTorch's trigamma (polygamma(1, x)) is a short asymptotic series, off by up to ~1e-9 relative; minigrad's
# agrees with SciPy to ~1e-15 (tests/ops/test_special_functions.py compares it with PyTorch at 1e-8)
_TRIGAMMA = {"torch": "PyTorch's trigamma is accurate to ~1e-9 only, beyond test_matches_torch's 1e-10; compared "
                      "with PyTorch at rtol 1e-8 and SciPy at 1e-14 in tests/ops/test_special_functions.py"}
_GAMMA_X = partial(sample, low=-2.7, high=4.0, away=(-3, -2, -1, 0), margin=0.2)
_UNIT = partial(sample, low=-0.85, high=0.85)
_PROB = partial(sample, low=0.05, high=0.95)

ops = [
    _un("lgamma", _sp("gammaln"), _GAMMA_X, aliases=("special.gammaln",)),
    _un("digamma", _sp("psi"), _GAMMA_X, aliases=("special.digamma", "special.psi")),
    _un("erfc", _sp("erfc"), partial(sample, low=-3.0, high=3.0), aliases=("special.erfc",)),
    _un("erfinv", _sp("erfinv"), _UNIT, aliases=("special.erfinv",)),
    _un("logit", _sp("logit"), _PROB, aliases=("special.logit",)),
    OpInfo("logit", lambda x: mg.logit(x, 0.25), (lambda x: _sp("logit")(np.clip(x, 0.25, 0.75))) if _HAVE_SCIPY
           else None, unary_samples(partial(sample, low=0.02, high=0.98, away=(0.25, 0.75), margin=0.05),
                                    kinks=([0.1, 0.25, 0.5, 0.75, 0.9],)),
           variant="eps", torch_op=lambda torch, x: torch.logit(x, 0.25)),
    _un("i0", _sp("i0"), partial(sample, low=-4.0, high=4.0), aliases=("special.i0",)),
    _un("special.erfcx", _sp("erfcx"), partial(sample, low=-2.0, high=6.0), grad_fn="SpecialErfcx"),
    _un("special.ndtr", _sp("ndtr"), partial(sample, low=-5.0, high=3.0), grad_fn=None),
    _un("special.ndtri", _sp("ndtri"), _PROB, grad_fn="SpecialNdtri"),
    _un("special.log_ndtr", _sp("log_ndtr"), partial(sample, low=-6.0, high=4.0), grad_fn="SpecialLogNdtr"),
    _un("special.entr", _sp("entr"), positive, grad_fn="SpecialEntr"),
    _un("special.i0e", _sp("i0e"), partial(nonzero, high=4.0), kinks=([0.0, 1.0, -2.0],), grad_fn="SpecialI0E"),
    _un("special.i1", _sp("i1"), partial(sample, low=-4.0, high=4.0), kinks=([0.0, 1.0],), grad_fn="SpecialI1"),
    _un("special.i1e", _sp("i1e"), partial(nonzero, high=4.0), kinks=([0.0, 1.0, -2.0],), grad_fn="SpecialI1E"),
]

# polygamma(n, x) for n = 0..3 (n is static); mvlgamma(x, p) for p = 1, 3
ops += [
    OpInfo("polygamma", partial(lambda n, x: mg.polygamma(n, x), n), _sp("polygamma", n, first=True),
           unary_samples(_GAMMA_X), variant=f"n{n}", torch_op=partial(lambda n, torch, x: torch.polygamma(n, x), n),
           aliases=("special.polygamma",) if n == 1 else (), skips=_TRIGAMMA if n == 1 else None)
    for n in range(4)
] + [
    OpInfo("polygamma", lambda x: x.polygamma(2), _sp("polygamma", 2, first=True), unary_samples(_GAMMA_X),
           variant="method", torch_op=lambda torch, x: x.polygamma(2)),
    OpInfo("mvlgamma", lambda x: mg.mvlgamma(x, 1), _sp("multigammaln", 1), unary_samples(positive),
           variant="p1", torch_op=lambda torch, x: torch.mvlgamma(x, 1)),
    OpInfo("mvlgamma", lambda x: mg.mvlgamma(x, 3), _sp("multigammaln", 3),
           unary_samples(partial(positive, low=1.2, high=4.0)), variant="p3",
           torch_op=lambda torch, x: torch.mvlgamma(x, 3), aliases=("special.multigammaln",)),
]

# the incomplete gamma functions and zeta: differentiable in the second argument only, as PyTorch
_A = partial(positive, low=0.5, high=4.0)
_X = partial(positive, low=0.2, high=6.0)
ops += [
    OpInfo("igamma", mg.igamma, _sp("gammainc"), _const_first(_A, _X), aliases=("special.gammainc",)),
    OpInfo("igammac", mg.igammac, _sp("gammaincc"), _const_first(_A, _X), aliases=("special.gammaincc",)),
    OpInfo("special.zeta", mg.special.zeta, _sp("zeta"), _const_first(partial(positive, low=1.5, high=5.0),
                                                                       partial(positive, low=0.3, high=4.0)),
           grad_fn="SpecialZeta"),
    OpInfo("special.xlog1py", mg.special.xlog1py, _sp("xlog1py"),
           binary_samples(sample, partial(positive, low=-0.6, high=2.0),
                          kinks=(([0.0, 0.0, 1.5], [-2.0, 1.0, 0.5]),)), grad_fn="SpecialXlog1Py"),
]

# the Bessel functions J and Y: no derivative in PyTorch (the output has no grad_fn)
ops += [
    _un(f"special.bessel_{k}", _sp(k), sample if k[0] == "j" else positive, supports_grad=False, grad_fn=None)
    for k in ("j0", "j1", "y0", "y1")
]

# in-place Tensor methods (the rest share _inplace_of's path with these)
ops += [
    OpInfo("lgamma", _inplace_form("lgamma_"), _sp("gammaln"), unary_samples(_GAMMA_X, empty=False),
           variant="inplace", torch_op=lambda torch, x: x.clone().lgamma_(), aliases=("lgamma_",), grad_fn=None),
    OpInfo("polygamma", lambda x: x.clone().polygamma_(1), _sp("polygamma", 1, first=True),
           unary_samples(_GAMMA_X, empty=False), variant="inplace",
           torch_op=lambda torch, x: x.clone().polygamma_(1), aliases=("polygamma_",), grad_fn=None,
           skips=_TRIGAMMA),
] + [
    OpInfo(n, _inplace_form(n + "_"), _sp(ref), unary_samples(smp, empty=False), variant="inplace",
           torch_op=partial(lambda m, torch, x: getattr(x.clone(), m)(), n + "_"), aliases=(n + "_",), grad_fn=None)
    for n, ref, smp in (("digamma", "psi", _GAMMA_X), ("erfc", "erfc", sample), ("erfinv", "erfinv", _UNIT),
                        ("logit", "logit", _PROB), ("i0", "i0", sample))
] + [
    OpInfo("mvlgamma", lambda x: x.clone().mvlgamma_(2), _sp("multigammaln", 2),
           unary_samples(partial(positive, low=0.8, high=3.0), empty=False), variant="inplace",
           torch_op=lambda torch, x: x.clone().mvlgamma_(2), aliases=("mvlgamma_",), grad_fn=None),
    # x.igamma_(other) is igamma(x, other): x is the argument without a derivative, so a constant here
    OpInfo("igamma", lambda a, x: a.clone().igamma_(x), _sp("gammainc"), _const_first(_A, _X, shapes=_PAIRS[:3]),
           variant="inplace", torch_op=lambda torch, a, x: a.clone().igamma_(x), aliases=("igamma_",), grad_fn=None),
    OpInfo("igammac", lambda a, x: a.clone().igammac_(x), _sp("gammaincc"), _const_first(_A, _X, shapes=_PAIRS[:3]),
           variant="inplace", torch_op=lambda torch, a, x: a.clone().igammac_(x), aliases=("igammac_",),
           grad_fn=None),
]

# names of minigrad.special that are the same function as an op registered elsewhere: the entry of
# that op covers them (tests/ops/test_special_functions.py checks they are the same object)
ALIASES = {"special.erf": "erf", "special.expit": "sigmoid", "special.exp2": "exp2",
           "special.expm1": "expm1", "special.log1p": "log1p", "special.logsumexp": "logsumexp",
           "special.softmax": "softmax", "special.log_softmax": "log_softmax", "special.round": "round",
           "special.sinc": "sinc", "special.xlogy": "xlogy"}
