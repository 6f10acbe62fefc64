"""Special-function kernels in NumPy, float64 throughout (the ops of minigrad/ops/special.py wrap them).

Every function takes and returns float64 arrays, elementwise; poles and domain edges follow SciPy and
PyTorch (which share Cephes' conventions). The algorithms are the textbook ones:

- lgamma, erf, erfc: the C library's (math.lgamma / math.erf / math.erfc), vectorised;
- digamma: recurrence up to x >= 10, then the asymptotic series; reflection for x < 0; the Taylor
  series at the positive root near it;
- zeta (Hurwitz) and polygamma: Euler-Maclaurin summation (Cephes' zeta);
- gammainc / gammaincc: the power series for x < a + 1, the continued fraction otherwise;
- erfcx: exp(x^2) erfc(x) below 3, the continued fraction of erfc above;
- erfinv / ndtri: Winitzki's approximation refined by Halley steps on erf or erfc (whichever keeps
  the residual exact);
- i0 / i1 (and their exponentially scaled forms): the power series (all terms positive) for |x| <= 20,
  the asymptotic (Hankel) expansion beyond;
- bessel_j0 / j1 / y0 / y1: Miller's backward recurrence (normalised by J0 + 2 sum J_2k = 1) and the
  Neumann series for Y0 and its derivative for Y1, below 25; the Hankel asymptotic forms beyond.
"""
import math

import numpy as np

_EPS = np.finfo(np.float64).eps
_EULER = 0.57721566490153286061
_SQRT2 = math.sqrt(2.0)
_SQRTPI = math.sqrt(math.pi)
_LN2 = math.log(2.0)
_SQRT1_2 = math.sqrt(0.5)


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _map(fn, x):
    """fn (a float -> float function) elementwise, as a float64 array."""
    x = _f64(x)
    if not x.size:
        return np.empty(x.shape, np.float64)
    return np.frompyfunc(fn, 1, 1)(x).astype(np.float64)


# -- log-gamma, digamma, zeta, polygamma ------------------------------------------------------------
def _lgamma1(v):
    if v != v:
        return v
    if math.isinf(v) or (v <= 0 and v == math.floor(v)):
        return math.inf  # poles (0 and the negative integers) and both infinities, as PyTorch
    return math.lgamma(v)


def lgamma(x):
    """log |Gamma(x)|."""
    return _map(_lgamma1, x)


_BERN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _digamma_pos(x):
    """digamma for x > 0 (float64 array): recurrence to x >= 10, then the asymptotic series."""
    acc = np.zeros_like(x)
    x = x.copy()
    small = x < 10
    while small.any():
        acc[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 10
    with np.errstate(over="ignore", under="ignore"):
        z = 1.0 / (x * x)
        s = np.zeros_like(x)
        for k in range(len(_BERN) - 1, -1, -1):
            s = s * z + _BERN[k] / (2 * (k + 1))
        return acc + np.log(x) - 0.5 / x - s * z


_ROOT, _ROOT_VAL = 1.4616321449683622, -9.2412655217294275e-17   # digamma's positive root, psi(_ROOT) in float64
_ROOT_COEF = None  # zeta(n + 1, _ROOT), n = 1..40: the Taylor coefficients of psi at its root (made on first use)


def _digamma_near_root(x):
    """psi(x) for |x - root| < 0.3 by its Taylor series at the root (SciPy's approach): relative
    accuracy where psi(x) is near 0 (recurrence plus asymptotics keep only absolute accuracy there)."""
    global _ROOT_COEF
    if _ROOT_COEF is None:
        _ROOT_COEF = _zeta(np.arange(2.0, 42.0), np.full(40, _ROOT))
    dx = x - _ROOT
    res = np.full(x.shape, _ROOT_VAL)
    coef = np.full(x.shape, -1.0)
    for c in _ROOT_COEF:
        coef = coef * -dx
        res = res + coef * c
    return res


def digamma(x):
    """psi(x) = d/dx log Gamma(x): -inf at 0 (PyTorch's and SciPy's choice), nan at the negative
    integers and -inf, inf at inf."""
    x = _f64(x)
    out = np.full(x.shape, np.nan)
    fin = np.isfinite(x)
    pos = fin & (x > 0)
    out[pos] = _digamma_pos(x[pos])
    near = np.abs(x - _ROOT) < 0.3
    out[near] = _digamma_near_root(x[near])
    neg = fin & (x < 0) & (x != np.floor(x))
    if neg.any():  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x), x reduced exactly to [-1/2, 1/2]
        xn = x[neg]
        r = xn - np.round(xn)
        out[neg] = _digamma_pos(1.0 - xn) - math.pi / np.tan(math.pi * r)
    out[x == 0] = -np.copysign(np.inf, x[x == 0])  # +0 -> -inf, -0 -> inf, as PyTorch
    out[x == np.inf] = np.inf
    return out


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x (Cephes' algorithm and edges: x == 1 -> inf,
    x < 1 -> nan, q a non-positive integer -> inf, q < 0 with x not an integer -> nan)."""
    x, q = np.broadcast_arrays(_f64(x), _f64(q))
    out = np.full(x.shape, np.nan)
    ok = (x > 1) & ~np.isnan(q)
    out[x == 1] = np.inf
    pole = ok & (q <= 0) & (q == np.floor(q))
    out[pole] = np.inf
    ok &= ~pole & ~((q < 0) & (x != np.floor(x)))
    ok &= np.isfinite(q)  # q == inf: nan, as PyTorch
    if ok.any():
        out[ok] = _zeta(x[ok].copy(), q[ok].copy())
    return out


def _zeta_negative_q(x, q):
    """(sum_{k=0}^{m} (q + k)^-x, q + m) for one q < -100 (x an integer), m taking q + m past 9: the
    terms Cephes' loop adds one by one, summed in blocks (pairwise, by NumPy)."""
    m = int(math.ceil(-q)) + 10
    total = 0.0
    for lo in range(0, m + 1, 1 << 20):
        k = np.arange(lo, min(m + 1, lo + (1 << 20)), dtype=np.float64)
        total += float(np.sum(np.power(q + k, -x)))
    return total, q + m


def _zeta(x, q):
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        s = np.power(q, -x)
        a = q.copy()
        for j in np.flatnonzero(q < -100):  # the loop below would take -q steps for all of them
            s[j], a[j] = _zeta_negative_q(x[j], q[j])
        done = np.zeros(x.shape, bool)
        i = 0
        while True:
            act = ~done & ((i < 9) | (a <= 9))
            if not act.any():
                break
            i += 1
            a[act] += 1.0
            b = np.power(a[act], -x[act])
            s[act] += b
            conv = np.abs(b / s[act]) < _EPS
            idx = np.flatnonzero(act)
            done[idx[conv]] = True
        live = ~done
        w = a[live]
        xl = x[live]
        sl = s[live]
        b = np.power(w, -xl)
        sl = sl + b * w / (xl - 1.0) - 0.5 * b
        fac = np.ones_like(w)
        k = 0.0
        stop = np.zeros(w.shape, bool)
        for coef in _ZETA_A:
            fac = fac * (xl + k)
            b = b / w
            t = fac * b / coef
            sl = np.where(stop, sl, sl + t)
            stop |= np.abs(t / sl) < _EPS
            k += 1.0
            fac = fac * (xl + k)
            b = b / w
            k += 1.0
        s[live] = sl
    return s


def polygamma(n, x):
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1."""
    if n == 0:
        return digamma(x)
    x = _f64(x)
    if n == 1:  # trigamma, as PyTorch's: 0 at inf, the leading terms 1/x + 1/(2x^2) beyond 1e8
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = zeta(2.0, x)
            big = x > 1e8
            out[big] = 1.0 / x[big] + 0.5 / (x[big] * x[big])
        out[x == np.inf] = 0.0
        return out
    sign = -1.0 if n % 2 == 0 else 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        return sign * math.exp(math.lgamma(n + 1.0)) * zeta(float(n + 1), x)


def mvlgamma(x, p):
    """log of the multivariate gamma function of dimension p."""
    x = _f64(x)
    out = np.full(x.shape, p * (p - 1) / 4 * math.log(math.pi))
    for j in range(p):
        out = out + lgamma(x - j / 2)
    return out


# -- incomplete gamma ----------------------------------------------------------------------------------
def _log_ratio_m1(x, a):
    """log(x / a) - (x - a) / a = log1p(t) - t with t = (x - a) / a, accurate for x near a (its series
    below |t| = 0.5) and for x far below a (log(x / a) directly, not log1p of a rounded t)."""
    t = (x - a) / a
    out = np.empty(t.shape)
    small = np.abs(t) < 0.5
    ts = t[small]
    acc = np.zeros_like(ts)
    p = ts * ts
    for k in range(2, 60):
        acc = acc + (p / k if k % 2 == 0 else -p / k)
        p = p * ts
    out[small] = -acc
    out[~small] = np.log(x[~small] / a[~small]) - t[~small]
    return out


_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


def _igam_prefactor(a, x):
    """x^a e^-x / Gamma(a). For a >= 10 through Stirling's series, a (log1p(t) - t) with t = (x - a)/a
    + log(a / 2 pi) / 2 - (the Stirling correction): a log x - x - lgamma(a) computed directly loses
    ~a ulps to cancellation."""
    out = np.empty(a.shape)
    big = a >= 10
    ab, xb = a[big], x[big]
    corr = np.zeros_like(ab)
    z = 1.0 / (ab * ab)
    for c in reversed(_STIRLING):
        corr = corr * z + c
    corr = corr / ab
    out[big] = np.exp(ab * _log_ratio_m1(xb, ab) + 0.5 * np.log(ab / (2 * math.pi)) - corr)
    sm = ~big
    out[sm] = np.exp(a[sm] * np.log(x[sm]) - x[sm] - lgamma(a[sm]))
    return out


def _igam_series(a, x):
    """P(a, x) by the power series (x < a + 1); the loop runs on the points not yet converged."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ax = _igam_prefactor(a, x)
        out = np.ones_like(a)
        idx = np.arange(a.size)
        r, c, ans, xs = a.copy(), np.ones_like(a), np.ones_like(a), x.copy()
        for _ in range(100000):
            if not idx.size:
                break
            r += 1.0
            c *= xs / r
            ans += c
            more = c > _EPS * ans
            out[idx[~more]] = ans[~more]
            idx, r, c, ans, xs = idx[more], r[more], c[more], ans[more], xs[more]
        return out * ax / a


def _igamc_cf(a, x):
    """Q(a, x) by Legendre's continued fraction (Cephes' igamc); the loop runs on the points not yet
    converged."""
    big, biginv = 4.503599627370496e15, 2.22044604925031308085e-16
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ax = _igam_prefactor(a, x)
        y = 1.0 - a
        z = x + y + 1.0
        c = np.zeros_like(a)
        pkm2, qkm2 = np.ones_like(a), x.copy()
        pkm1, qkm1 = x + 1.0, z * x
        ans = pkm1 / qkm1
        out = ans.copy()
        idx = np.arange(a.size)
        for _ in range(100000):
            if not idx.size:
                break
            c = c + 1.0
            y = y + 1.0
            z = z + 2.0
            yc = y * c
            pk = pkm1 * z - pkm2 * yc
            qk = qkm1 * z - qkm2 * yc
            nz = qk != 0
            r = np.where(nz, pk / np.where(nz, qk, 1.0), ans)
            t = np.where(nz, np.abs((ans - r) / np.where(r != 0, r, 1.0)), 1.0)
            ans = r
            pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
            scale = np.abs(pk) > big
            if scale.any():
                f = np.where(scale, biginv, 1.0)
                pkm2, pkm1, qkm2, qkm1 = pkm2 * f, pkm1 * f, qkm2 * f, qkm1 * f
            more = t > _EPS
            out[idx[~more]] = ans[~more]
            if not more.all():
                idx, y, z, c, ans = idx[more], y[more], z[more], c[more], ans[more]
                pkm2, pkm1, qkm2, qkm1 = pkm2[more], pkm1[more], qkm2[more], qkm1[more]
        out[idx] = ans
        return out * ax


def _igam_edges(a, x, lower):
    """(out, todo): the edge values (nan, 0, 1) filled in, and the mask of points left to compute."""
    a, x = np.broadcast_arrays(_f64(a), _f64(x))
    out = np.full(a.shape, np.nan)
    bad = np.isnan(a) | np.isnan(x) | (a < 0) | (x < 0)
    lo, hi = (0.0, 1.0) if lower else (1.0, 0.0)
    # a == 0: the distribution is a point mass at 0 (SciPy and PyTorch); x == 0 with a > 0; x == inf
    out[~bad & (a == 0) & (x > 0)] = hi
    out[~bad & (x == 0) & (a > 0)] = lo
    out[~bad & (x == np.inf) & (a < np.inf)] = hi
    out[~bad & (a == np.inf) & (x < np.inf)] = lo
    todo = ~bad & (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    return a, x, out, todo


_LGAM1P = None  # (-1)^k zeta(k) / k, k = 2..61: lgamma(1 + a) = -euler a + sum c_k a^k (made on first use)


def _lgam1p(a):
    """lgamma(1 + a), accurate for small a (1 + a rounds away a's low digits)."""
    global _LGAM1P
    out = lgamma(1.0 + a)
    small = np.abs(a) < 0.5
    if small.any():
        if _LGAM1P is None:
            k = np.arange(2.0, 62.0)
            _LGAM1P = np.where(k % 2 == 0, 1.0, -1.0) * _zeta(k, np.ones_like(k)) / k
        t = a[small]
        acc = np.zeros_like(t)
        for c in _LGAM1P[::-1]:
            acc = (acc + c) * t
        out[small] = (acc - _EULER) * t
    return out


def _igamc_series(a, x):
    """Q(a, x) for x <= 1.1 with a small (Cephes' igamc_series): 1 - x^a / Gamma(a + 1) by expm1, less
    x^a / Gamma(a) sum_n (-x)^n / (n! (a + n)); no cancellation from 1 - P."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        fac, acc = np.ones_like(a), np.zeros_like(a)
        for n in range(1, 200):
            fac = fac * -x / n
            term = fac / (a + n)
            acc = acc + term
            if np.all(np.abs(term) <= _EPS * np.abs(acc)):
                break
        logx = np.log(x)
        return -np.expm1(a * logx - _lgam1p(a)) - np.exp(a * logx - lgamma(a)) * acc


def _gammaincc(a, x):
    """Q(a, x) for finite a, x > 0, by the method that keeps its digits there (Cephes' igamc's choice)."""
    out = np.empty(a.shape)
    big_x = x > 1.1
    cf = big_x & (x >= a)
    lo = big_x & (x < a)
    small_x = ~big_x
    with np.errstate(divide="ignore"):
        few = np.where(x <= 0.5, -0.4 / np.log(x) < a, x * 1.1 < a)
    lo |= small_x & few
    sr = small_x & ~few
    out[cf] = _igamc_cf(a[cf], x[cf])
    out[lo] = 1.0 - _igam_series(a[lo], x[lo])
    out[sr] = _igamc_series(a[sr], x[sr])
    return out


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x, out, todo = _igam_edges(a, x, True)
    upper = todo & (x > 1) & (x > a)
    ser = todo & ~upper
    out[ser] = _igam_series(a[ser], x[ser])
    out[upper] = 1.0 - _gammaincc(a[upper], x[upper])
    return out


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x, out, todo = _igam_edges(a, x, False)
    out[todo] = _gammaincc(a[todo], x[todo])
    return out


# -- error functions -----------------------------------------------------------------------------------
def erf(x):
    return _map(math.erf, x)


def erfc(x):
    return _map(lambda v: v if v != v else math.erfc(v), x)


def _erfc_cf(x):
    """exp(x^2) erfc(x) for x >= 3 by the continued fraction 1/sqrt(pi) / (x + (1/2)/(x + 1/(x + ...))),
    evaluated from the back (60 terms give float64 accuracy from 3 on)."""
    t = np.zeros_like(x)
    for k in range(60, 0, -1):
        t = (k / 2.0) / (x + t)
    return 1.0 / (_SQRTPI * (x + t))


def erfcx(x):
    """exp(x^2) erfc(x), without overflow for large x."""
    x = _f64(x)
    out = np.empty(x.shape)
    small = ~(x >= 3)  # nan takes this side: exp(nan) erfc(nan) is nan
    with np.errstate(over="ignore", invalid="ignore"):
        xs = x[small]
        out[small] = np.exp(xs * xs) * erfc(xs)
    big = ~small
    xb = x[big]
    with np.errstate(over="ignore"):
        out[big] = np.where(xb > 1e8, 1.0 / (_SQRTPI * xb), _erfc_cf(np.minimum(xb, 1e8)))
    return out


def _winitzki(q):
    """A rough erfcinv(q) for q in (0, 1] (relative error ~2e-3), from log(q (2 - q)) = log(1 - y^2)."""
    a = 0.147
    with np.errstate(divide="ignore"):
        lg = np.log(q * (2.0 - q))
    b = 2.0 / (math.pi * a) + lg / 2.0
    return np.sqrt(np.maximum(np.sqrt(b * b - lg / a) - b, 0.0))


def _erfcinv_le1(q):
    """erfcinv(q) for q in (0, 1]: erfinv(1 - q) (exact) from 1/2 on, Halley steps on erfc(z) - q
    (an exact residual in the tail) below."""
    out = np.empty(q.shape)
    mid = q >= 0.5
    out[mid] = _erfinv_small(1.0 - q[mid])
    out[~mid] = _erfcinv_tail(q[~mid])
    return out


def _erfcinv_tail(q):
    z = _winitzki(q)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        for _ in range(4):
            f = erfc(z) - q
            d = -2.0 / _SQRTPI * np.exp(-z * z)
            u = f / d
            z = z - u / (1.0 + z * u)
    return z


def _erfinv_small(y):
    """erfinv(y) for |y| <= 0.5: Halley steps on erf(z) - y."""
    z = np.sign(y) * _winitzki(1.0 - np.abs(y))
    for _ in range(4):
        f = erf(z) - y
        d = 2.0 / _SQRTPI * np.exp(-z * z)
        u = f / d
        z = z - u / (1.0 + z * u)
    return z


def erfinv(y):
    """The inverse of erf on (-1, 1): +-inf at +-1, nan outside."""
    y = _f64(y)
    out = np.full(y.shape, np.nan)
    small = np.abs(y) <= 0.5
    out[small] = _erfinv_small(y[small])
    big = (np.abs(y) > 0.5) & (np.abs(y) < 1)
    yb = y[big]
    out[big] = np.sign(yb) * _erfcinv_le1(1.0 - np.abs(yb))
    out[y == 1] = np.inf
    out[y == -1] = -np.inf
    return out


def ndtr(x):
    """The standard normal CDF."""
    x = _f64(x)
    return 0.5 * erfc(-x * _SQRT1_2)


def ndtri(p):
    """The standard normal quantile: -inf at 0, inf at 1, nan outside [0, 1]."""
    p = _f64(p)
    out = np.full(p.shape, np.nan)
    lo = (p > 0) & (p <= 0.5)
    out[lo] = -_SQRT2 * _erfcinv_le1(2.0 * p[lo])
    hi = (p > 0.5) & (p < 1)
    out[hi] = _SQRT2 * _erfcinv_le1(2.0 * (1.0 - p[hi]))
    out[p == 0] = -np.inf
    out[p == 1] = np.inf
    return out


def log_ndtr(x):
    """log of the standard normal CDF, accurate in both tails."""
    x = _f64(x)
    out = np.empty(x.shape)
    neg = x < -1
    xn = x[neg]
    with np.errstate(over="ignore", divide="ignore"):
        out[neg] = np.log(erfcx(-xn * _SQRT1_2) / 2.0) - xn * xn / 2.0
    rest = ~neg
    out[rest] = np.log1p(-0.5 * erfc(x[rest] * _SQRT1_2))
    return out


# -- modified Bessel functions of the first kind -------------------------------------------------------
def _bessel_i_scaled(x, nu):
    """exp(-|x|) I_nu(|x|) for nu in (0, 1)."""
    ax = np.abs(_f64(x))
    out = np.empty(ax.shape)
    small = ax <= 20
    xs = ax[small]
    z = xs * xs / 4.0
    term = np.ones_like(xs) if nu == 0 else xs / 2.0
    s = term.copy()
    for k in range(1, 70):
        term = term * z / (k * (k + nu))
        s = s + term
    out[small] = s * np.exp(-xs)
    big = ~small
    xb = ax[big]
    mu = 4.0 * nu * nu
    with np.errstate(over="ignore", invalid="ignore"):
        term = np.ones_like(xb)
        s = term.copy()
        for k in range(1, 40):
            term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * xb)
            s = s + term
        out[big] = s / np.sqrt(2 * math.pi * xb)
    out[ax == np.inf] = 0.0
    out[np.isnan(ax)] = np.nan
    return out


def i0e(x):
    return _bessel_i_scaled(x, 0)


def _half_up(x):
    """I1(x) for |x| < 1e-300: x/2 rounded as the exact value (x/2 + x^3/16, a hair above x/2) rounds,
    where x/2 is a tie between two subnormals (x = 5e-324 gives 5e-324, as SciPy and PyTorch)."""
    half = x * 0.5
    return np.where(np.abs(half) * 2 < np.abs(x), np.nextafter(half, np.copysign(np.inf, x)), half)


def i1e(x):
    x = _f64(x)
    out = np.sign(x) * _bessel_i_scaled(x, 1)
    tiny = np.abs(x) < 1e-300
    out[tiny] = _half_up(x[tiny])
    return out


def i0(x):
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        out = _bessel_i_scaled(x, 0) * np.exp(np.abs(x))
    out[np.abs(x) == np.inf] = np.nan  # as PyTorch and SciPy (Cephes' Chebyshev form gives nan there)
    return out


def i1(x):
    x = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        out = i1e(x) * np.exp(np.abs(x))
    out[np.abs(x) == np.inf] = np.nan  # as PyTorch and SciPy
    tiny = np.abs(x) < 1e-300
    out[tiny] = _half_up(x[tiny])
    return out


# -- Bessel functions of the first and second kind, orders 0 and 1 -------------------------------------
def _miller(x):
    """(J0, J1, sum (-1)^k J_2k / k, sum (-1)^k (J_2k-1 - J_2k+1) / k) for 0 < x <= 25 by Miller's
    backward recurrence, normalised by J0 + 2 sum J_2k = 1; the sums gather as the recurrence runs
    (J_m enters the second with the weight c_m below), so memory stays a few arrays."""
    n_top = 2 * (int(float(x.max()) if x.size else 0.0) + 30) // 2 + 20

    def sgn(k):
        return -1.0 if k % 2 else 1.0

    def c_odd(m):  # the weight of J_m (m odd) in sum (-1)^k (J_2k-1 - J_2k+1) / k
        k_up, k_down = (m + 1) // 2, (m - 1) // 2
        return sgn(k_up) / k_up - (sgn(k_down) / k_down if k_down >= 1 else 0.0)

    jp1 = np.zeros_like(x)
    j = np.full(x.shape, 1e-300)  # J_{n_top}, up to scale
    norm, s0, s1 = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    j1 = None
    for n in range(n_top, 0, -1):
        jp1, j = j, 2.0 * n / x * j - jp1  # j is now J_{n-1}
        m = n - 1
        if m > 0 and m % 2 == 0:
            norm = norm + 2.0 * j
            s0 = s0 + sgn(m // 2) * j / (m // 2)
        elif m % 2 == 1:
            s1 = s1 + c_odd(m) * j
        if m == 1:
            j1 = j
        big = np.abs(j) > 1e250
        if big.any():
            f = np.where(big, 1e-250, 1.0)
            j, jp1, norm, s0, s1 = j * f, jp1 * f, norm * f, s0 * f, s1 * f
            if j1 is not None:
                j1 = j1 * f
    norm = norm + j
    return j / norm, j1 / norm, s0 / norm, s1 / norm


def _hankel(x, nu):
    """(P, Q) of the Hankel asymptotic expansion for order nu, x >= 25."""
    mu = 4.0 * nu * nu
    p = np.ones_like(x)
    q = np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if k % 4 == 1:
            q = q + term
        elif k % 4 == 2:
            p = p - term
        elif k % 4 == 3:
            q = q - term
        else:
            p = p + term
    return p, q


def _series(x, nu, kind):
    """J_nu or Y_nu for 0 < x < 2 by the power series (A&S 9.1.10 and 9.1.11)."""
    z = -x * x / 4.0
    term = np.ones_like(x)
    s_j = term.copy()
    s_h = np.zeros_like(x)  # sum of the digamma-weighted terms
    h = 0.0   # H_k
    for k in range(1, 30):
        term = term * z / (k * (k + nu))
        h_next = h + 1.0 / k
        s_j = s_j + term
        # Y0: sum H_k (-z)^k/(k!)^2 ;  Y1: sum (psi(k+1) + psi(k+2)) (-z)^k / (k!(k+1)!)
        s_h = s_h + term * (h_next if nu == 0 else (2 * h_next + 1.0 / (k + 1)))
        h = h_next
    if nu == 0:
        j = s_j
        if kind == "j":
            return j
        return 2 / math.pi * ((np.log(x) - _LN2 + _EULER) * j - s_h)
    j = x / 2 * s_j
    if kind == "j":
        return j
    s_h = s_h + (1.0 - 2 * _EULER)  # the k = 0 term: psi(1) + psi(2) = 1 - 2 gamma
    s_h = s_h - 2 * _EULER * (s_j - 1.0)
    with np.errstate(over="ignore", divide="ignore"):
        return 2 / math.pi * (np.log(x) - _LN2) * j - 2 / (math.pi * x) - x / (2 * math.pi) * s_h


def _bessel_jy(x, nu, kind):
    x = _f64(x)
    out = np.full(x.shape, np.nan)
    ax = np.abs(x) if kind == "j" else x
    tiny = (ax > 0) & (ax < 2)
    if tiny.any():
        out[tiny] = _series(ax[tiny], nu, kind)
    small = (ax >= 2) & (ax < 25)
    if small.any():
        xs = ax[small]
        j0, j1, s0, s1 = _miller(xs)
        if kind == "j":
            out[small] = j0 if nu == 0 else j1
        elif nu == 0:
            out[small] = 2 / math.pi * (np.log(xs / 2) + _EULER) * j0 - 4 / math.pi * s0
        else:
            out[small] = (2 / math.pi * (np.log(xs / 2) + _EULER) * j1 - 2 / (math.pi * xs) * j0
                          + 2 / math.pi * s1)
    big = (ax >= 25) & np.isfinite(ax)
    if big.any():
        xb = ax[big]
        p, q = _hankel(xb, nu)
        chi = xb - (nu / 2 + 0.25) * math.pi
        amp = np.sqrt(2 / (math.pi * xb))
        out[big] = amp * ((p * np.cos(chi) - q * np.sin(chi)) if kind == "j" else (p * np.sin(chi) + q * np.cos(chi)))
    if kind == "j":  # (+-inf: nan, as PyTorch)
        out[x == 0] = 1.0 if nu == 0 else 0.0
        if nu == 1:
            out = np.where(np.signbit(x), -out, out)
    else:
        out[x == 0] = -np.inf
    return out


def bessel_j0(x):
    return _bessel_jy(x, 0, "j")


def bessel_j1(x):
    return _bessel_jy(x, 1, "j")


def bessel_y0(x):
    return _bessel_jy(x, 0, "y")


def bessel_y1(x):
    return _bessel_jy(x, 1, "y")
