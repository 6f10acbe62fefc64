"""Elementwise rules NumPy makes slowly (numba; imported only by minigrad.kernels): relu's forward
(NumPy's float ``maximum`` runs at a quarter of a copy's speed on the hosts measured: 0.63 ms
against this loop's 0.16 ms for 1.6 M float32) and relu's gradient g * (y > 0) without the boolean
mask array."""
import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _threshold_backward(g, y, zero, out, lo, hi):
    """out = g * (y > 0) for C-contiguous arrays of one shape and dtype, over the elements lo .. hi -
    1 in memory order; zero is 0 in that dtype, so that a masked element is g * 0 (-0.0 for a
    negative g, nan for an infinite one), as NumPy's product with the mask."""
    n = out.size
    if g.size != n or y.size != n:
        raise ValueError("threshold_backward kernel: the arrays differ in size")
    gf = g.reshape(n)[lo:hi]
    yf = y.reshape(n)[lo:hi]
    of = out.reshape(n)[lo:hi]
    for i in range(of.size):
        of[i] = gf[i] if yf[i] > 0 else gf[i] * zero


@numba.njit(cache=True, nogil=True)
def _relu(x, out, lo, hi):
    """out = max(x, 0) over 1-D arrays (elements lo .. hi - 1), as NumPy's maximum(x, 0): nan stays
    nan, -0.0 gives 0.0."""
    zero = x.dtype.type(0)
    x = x[lo:hi]
    out = out[lo:hi]
    for i in range(x.size):
        v = x[i]
        out[i] = zero if v <= zero else v


@numba.njit(cache=True, nogil=True)
def _erf(x, out, lo, hi):
    """out = erf(x) over 1-D float64 arrays (lo .. hi - 1): the C library's erf, which math.erf
    calls too (NumPy has no erf: np.frompyfunc(math.erf) was a Python call per element, ~100x
    slower)."""
    x = x[lo:hi]
    out = out[lo:hi]
    for i in range(x.size):
        out[i] = math.erf(x[i])


@numba.njit(cache=True, nogil=True)
def _gelu(x, out, lo, hi):
    """out = x * 0.5 * (1 + erf(x * sqrt(1/2))) over 1-D float arrays, operation by operation as
    nn.functional's composite in x's dtype (erf in double, rounded to x's dtype, as mg.erf): the same
    bits as the composite, in one pass."""
    t = x.dtype.type
    c, half, one = t(0.7071067811865476), t(0.5), t(1.0)
    x = x[lo:hi]
    out = out[lo:hi]
    for i in range(x.size):
        v = x[i]
        out[i] = math.erf(np.float64(v * c))   # erf in double, stored: rounded to x's dtype
        out[i] = (v * half) * (one + out[i])


@numba.njit(cache=True, nogil=True)
def _gelu_backward(g, x, E, out, lo, hi):
    """out = g * (cdf + x * pdf), cdf = 0.5 * (1 + erf(x / sqrt 2)), pdf = E / sqrt(2 pi) with
    E = exp(-x^2 / 2) computed in double by NumPy (as ops/activation.py's NumPy path: NumPy's exp is
    chosen per CPU, AVX-512 or the C library's, and rounds ties unlike math.exp on some), in x's
    dtype (erf in double, rounded)."""
    t = x.dtype.type
    c, half, one, k = t(0.7071067811865476), t(0.5), t(1.0), t(0.3989422804014327)
    g, x, E, out = g[lo:hi], x[lo:hi], E[lo:hi], out[lo:hi]
    for i in range(x.size):
        v = x[i]
        out[i] = math.erf(np.float64(v * c))   # erf in double, stored: rounded to x's dtype
        cdf = half * (one + out[i])
        out[i] = E[i]                          # exp in double, stored: rounded to x's dtype
        out[i] = g[i] * (cdf + v * (out[i] * k))


# erf for float32 as PyTorch's CPU kernels compute it (ATen's Vectorized<float>::erf): Abramowitz &
# Stegun 7.1.26 (kernels.ERF_AS), |error| <= 1.5e-7, with exp(-z^2) from NumPy's vectorised exp (E)
from . import ERF_AS as _AS  # noqa: E402


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _erf_as(z, E):
    """erf(z) for a float32 z by _AS, E = exp(-z^2); the operations of ops/activation.py's NumPy
    form, one by one (no contraction): the same bits."""
    one = np.float32(1.0)
    t = one / (np.float32(_AS[0]) * abs(z) + one)
    e = one - (((((np.float32(_AS[5]) * t + np.float32(_AS[4])) * t + np.float32(_AS[3])) * t + np.float32(_AS[2]))
                * t + np.float32(_AS[1])) * t) * E
    return e if z >= 0 else -e


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _gelu_f32(x, E, out, lo, hi):
    """out = x * 0.5 * (1 + erf(x / sqrt 2)) for float32, erf by _erf_as with E = exp(-x^2 / 2)."""
    c, half, one = np.float32(0.7071067811865476), np.float32(0.5), np.float32(1.0)
    x, E, out = x[lo:hi], E[lo:hi], out[lo:hi]
    for i in range(x.size):
        v = x[i]
        out[i] = (v * half) * (one + _erf_as(v * c, E[i]))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _gelu_backward_f32(g, x, E, out, lo, hi):
    """out = g * (cdf + x * pdf) for float32: cdf = 0.5 (1 + erf(x / sqrt 2)) by _erf_as and
    pdf = E / sqrt(2 pi), E = exp(-x^2 / 2) (the one exponential serves both)."""
    c, half, one, k = np.float32(0.7071067811865476), np.float32(0.5), np.float32(1.0), np.float32(0.3989422804014327)
    g, x, E, out = g[lo:hi], x[lo:hi], E[lo:hi], out[lo:hi]
    for i in range(x.size):
        v = x[i]
        out[i] = g[i] * (half * (one + _erf_as(v * c, E[i])) + v * (E[i] * k))


# -- the pool (minigrad/_pool.py): the entry points ops call -------------------------------------------
# Elementwise: each element's arithmetic is the same whichever thread computes it (no fast-math, no
# reduction), so the results are bitwise the serial loop's for any thread count. A loop runs on the
# pool from the size whose serial time is _pool.WORK_NS (serial ns per element measured, see
# _pool.py).

from .. import _pool  # noqa: E402

# serial ns per element, measured (2^18 elements, best of 40, loaded shared 2-core machine)
_RELU_MIN = _pool.min_elements(0.09)     # relu float32: 0.09 ns
_THRESHOLD_MIN = _pool.min_elements(0.14)   # threshold_backward float32: 0.14 ns
_ERF_MIN = _pool.min_elements(11.0)     # libm's erf in double: 11 ns (GELU's float64 forms alike)
_GELU_F32_MIN = _pool.min_elements(0.38)   # gelu_f32 0.33 ns, gelu_backward_f32 0.38 ns


def _elementwise(kernel, n, least, *args):
    if n < least:
        return kernel(*args, 0, n)
    _pool.run_rows(lambda lo, hi: kernel(*args, lo, hi), n)


def threshold_backward(g, y, zero, out):
    """out = g * (y > 0) (see _threshold_backward), over the pool when large."""
    _elementwise(_threshold_backward, out.size, _THRESHOLD_MIN, g, y, zero, out)


def relu(x, out):
    """out = max(x, 0) over 1-D arrays (see _relu), over the pool when large."""
    if out.size != x.size:
        raise ValueError(f"relu kernel: out has {out.size} elements, x {x.size}")
    _elementwise(_relu, x.size, _RELU_MIN, x, out)


def erf(x, out):
    """out = erf(x) over 1-D float64 arrays (see _erf), over the pool when large."""
    if out.size != x.size:
        raise ValueError(f"erf kernel: out has {out.size} elements, x {x.size}")
    _elementwise(_erf, x.size, _ERF_MIN, x, out)


def gelu(x, out):
    """GELU by libm's erf (see _gelu), over the pool when large."""
    if out.size != x.size:
        raise ValueError(f"gelu kernel: out has {out.size} elements, x {x.size}")
    _elementwise(_gelu, x.size, _ERF_MIN, x, out)


def gelu_backward(g, x, E, out):
    """GELU's gradient by libm's erf (see _gelu_backward), over the pool when large."""
    if not (g.size == x.size == E.size == out.size):
        raise ValueError("gelu_backward kernel: the arrays differ in size")
    _elementwise(_gelu_backward, x.size, _ERF_MIN, g, x, E, out)


def gelu_f32(x, E, out):
    """float32 GELU (see _gelu_f32), over the pool when large."""
    if not (x.size == E.size == out.size):
        raise ValueError("gelu_f32 kernel: the arrays differ in size")
    _elementwise(_gelu_f32, x.size, _GELU_F32_MIN, x, E, out)


def gelu_backward_f32(g, x, E, out):
    """float32 GELU's gradient (see _gelu_backward_f32), over the pool when large."""
    if not (g.size == x.size == E.size == out.size):
        raise ValueError("gelu_backward_f32 kernel: the arrays differ in size")
    _elementwise(_gelu_backward_f32, x.size, _GELU_F32_MIN, g, x, E, out)
