"""batch_norm's training forward and its input gradient in few passes (numba; imported only by
minigrad.kernels).

The NumPy path (ops/normalization.py) makes about eight passes over the activations each way (a
mean, a centred copy, its square and mean, the scaling, the affine map; in backward two means of
products and four updates). Here, per channel, the forward reads x twice for the statistics
(mean, then the centred sum of squares: the same two-pass formula, accumulated in float64) and
once more to write out; the backward reads g and x once for the two means and once to write dx,
recomputing xhat = (x - mean) * rstd as it goes (the forward keeps no xhat: one write pass and an
activation-sized array fewer per layer, as PyTorch's saved mean and invstd; the fast-math flags let
the products regroup, so dx may differ from a stored xhat's by an ulp). Arrays come as C-contiguous 3-d views, (N, C, L) for C-contiguous inputs or (C, N, L)
(cf=True) for conv2d's channel-major outputs, so every inner loop runs over contiguous memory
(numba vectorises those; the sums may be reassociated, in float64).
"""
import numba
import numpy as np

from . import SUMS


@numba.njit(cache=True, nogil=True, inline="always")
def _row(a, cf, c, n):
    return a[c, n] if cf else a[n, c]


@numba.njit(cache=True, nogil=True, inline="always")
def _same3(a, b):
    return a.shape[0] == b.shape[0] and a.shape[1] == b.shape[1] and a.shape[2] == b.shape[2]


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _forward(x, cf, w, b, eps, out, mean, var, rstd, c0, c1):
    """x, out: (N, C, L), or (C, N, L) when cf; w, b, mean, var, rstd: (C,) in x's dtype. Biased
    variance, as batch_norm. Channels c0 .. c1 - 1 (each channel's work is its own)."""
    C = x.shape[0] if cf else x.shape[1]
    N = x.shape[1] if cf else x.shape[0]
    L = x.shape[2]
    M = N * L
    if not (_same3(out, x) and w.size == C and b.size == C and mean.size == C and var.size == C
            and rstd.size == C):
        raise ValueError("batch_norm kernel: array shapes do not fit the input")
    for c in range(c0, c1):
        s = 0.0
        for n in range(N):
            xr = _row(x, cf, c, n)
            for i in range(L):
                s += xr[i]
        m = s / M
        v = 0.0
        for n in range(N):
            xr = _row(x, cf, c, n)
            for i in range(L):
                d = xr[i] - m
                v += d * d
        vr = v / M
        r = 1.0 / np.sqrt(vr + eps)
        mean[c] = m
        var[c] = vr
        rstd[c] = r
        mf = mean[c]  # in x's dtype, as the NumPy path's arithmetic
        rf = rstd[c]
        wc = w[c]
        bc = b[c]
        for n in range(N):
            xr = _row(x, cf, c, n)
            orow = _row(out, cf, c, n)
            for i in range(L):
                orow[i] = (xr[i] - mf) * rf * wc + bc


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _backward_dx(g, x, cf, w, mean, rstd, dx, sums, c0, c1):
    """dx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)), means per channel, xhat = (x - mean) *
    rstd; g, x, dx in forward's layout, w, mean and rstd (C,) (mean and rstd in x's dtype, as
    forward made them); sums (2, C) float64 gets the per-channel sums of g and of g * xhat (the
    bias and weight gradients) the means are made of. Channels c0 .. c1 - 1."""
    C = g.shape[0] if cf else g.shape[1]
    N = g.shape[1] if cf else g.shape[0]
    L = g.shape[2]
    M = N * L
    if not (_same3(x, g) and _same3(dx, g) and w.size == C and mean.size == C and rstd.size == C
            and sums.shape[0] == 2 and sums.shape[1] == C):
        raise ValueError("batch_norm backward kernel: array shapes do not fit the gradient")
    st = np.empty(2, dx.dtype)  # the two means in dx's dtype, as the NumPy path's arithmetic
    for c in range(c0, c1):
        wc = w[c]
        mc = mean[c]
        r = rstd[c]
        s1 = 0.0
        s2 = 0.0
        for n in range(N):
            gr = _row(g, cf, c, n)
            xr = _row(x, cf, c, n)
            for i in range(L):
                s1 += gr[i]
                s2 += gr[i] * ((xr[i] - mc) * r)
        sums[0, c] = s1
        sums[1, c] = s2
        st[0] = s1 * wc / M
        st[1] = s2 * wc / M
        m1 = st[0]
        m2 = st[1]
        for n in range(N):
            gr = _row(g, cf, c, n)
            xr = _row(x, cf, c, n)
            dr = _row(dx, cf, c, n)
            for i in range(L):
                dr[i] = (gr[i] * wc - m1 - (xr[i] - mc) * r * m2) * r


# -- layer_norm: statistics per row of a C-contiguous (N, D) view (D = the normalized dims) ----------

@numba.njit(cache=True, nogil=True, fastmath=SUMS, inline="always")
def _ln_row(xr, w, b, eps, orow, mean, rstd, n):
    """One row of layer_norm: statistics into mean[n], rstd[n], the normalised row into orow (inlined
    into every row kernel, so each computes the same bits)."""
    D = xr.shape[0]
    s = 0.0
    for i in range(D):
        s += xr[i]
    m = s / D
    v = 0.0
    for i in range(D):
        d = xr[i] - m
        v += d * d
    mean[n] = m
    rstd[n] = 1.0 / np.sqrt(v / D + eps)
    mf = mean[n]
    rf = rstd[n]
    for i in range(D):
        orow[i] = (xr[i] - mf) * rf * w[i] + b[i]


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _rows_forward(x, w, b, eps, out, mean, rstd):
    """out = (x - mean) * rstd * w + b per row of x (N, D); w, b (D,); mean, rstd (N,) in x's dtype.
    Two-pass statistics accumulated in float64 (the biased variance), as forward above."""
    N, D = x.shape
    if not (out.shape[0] == N and out.shape[1] == D and w.size == D and b.size == D and mean.size == N
            and rstd.size == N):
        raise ValueError("layer_norm kernel: array shapes do not fit the input")
    for n in range(N):
        _ln_row(x[n], w, b, eps, out[n], mean, rstd, n)


@numba.njit(cache=True, nogil=True)
def _add_row(dst, a, b):
    """dst = a + b, correctly rounded (no fast-math flags: never contracted into a multiply-add)."""
    for i in range(dst.shape[0]):
        dst[i] = a[i] + b[i]


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _rows_add_forward(a, r, w, b, eps, s, out, mean, rstd):
    """The residual add and the layer_norm after it, row by row: s = a + r (written: the residual
    stream reads it again), out = layer_norm(s) by the same row code as rows_forward (the same bits
    as the add then rows_forward), while the row of s is still in cache."""
    N, D = a.shape
    if not (r.shape[0] == N and r.shape[1] == D and s.shape[0] == N and s.shape[1] == D and out.shape[0] == N
            and out.shape[1] == D and w.size == D and b.size == D and mean.size == N and rstd.size == N):
        raise ValueError("add + layer_norm kernel: array shapes do not fit the input")
    for n in range(N):
        _add_row(s[n], a[n], r[n])
        _ln_row(s[n], w, b, eps, out[n], mean, rstd, n)


@numba.njit(cache=True, nogil=True, fastmath=SUMS, inline="always")
def _ln_row_backward(gr, xr, w, mf, r, dr, dw, db):
    """One row of layer_norm's backward: dx into dr, dw and db accumulated (inlined into every row
    kernel, so each computes the same bits)."""
    D = xr.shape[0]
    s1 = 0.0
    s2 = 0.0
    for i in range(D):
        xh = (xr[i] - mf) * r
        gw = gr[i] * w[i]
        s1 += gw
        s2 += gw * xh
        dw[i] += gr[i] * xh
        db[i] += gr[i]
    a = dr.dtype.type(s1 / D)
    c = dr.dtype.type(s2 / D)
    for i in range(D):
        xh = (xr[i] - mf) * r
        dr[i] = r * (gr[i] * w[i] - a - xh * c)


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _rows_backward(g, x, w, mean, rstd, dx, dw, db):
    """dx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)) per row, xhat = (x - mean) * rstd;
    dw += sum over rows of g * xhat, db += sum of g (float64 (D,) accumulators)."""
    N, D = x.shape
    if not (g.shape[0] == N and g.shape[1] == D and dx.shape[0] == N and dx.shape[1] == D and w.size == D
            and mean.size == N and rstd.size == N and dw.size == D and db.size == D):
        raise ValueError("layer_norm backward kernel: array shapes do not fit the input")
    for n in range(N):
        _ln_row_backward(g[n], x[n], w, mean[n], rstd[n], dx[n], dw, db)


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _rows_backward_add(g, x, w, mean, rstd, res, dx, dw, db, tmp):
    """rows_backward with the residual gradient added: dx = res + (layer_norm's dx), the row of
    layer_norm's dx made in tmp (D,) by the same row code as rows_backward and added by a correctly
    rounded add (the same bits as rows_backward then the add), never written to memory whole."""
    N, D = x.shape
    if not (g.shape[0] == N and g.shape[1] == D and dx.shape[0] == N and dx.shape[1] == D and w.size == D
            and res.shape[0] == N and res.shape[1] == D and tmp.size == D
            and mean.size == N and rstd.size == N and dw.size == D and db.size == D):
        raise ValueError("layer_norm backward + add kernel: array shapes do not fit the input")
    for n in range(N):
        _ln_row_backward(g[n], x[n], w, mean[n], rstd[n], tmp, dw, db)
        _add_row(dx[n], res[n], tmp)


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _rows_backward_parts(g, x, w, mean, rstd, dx, dwp, dbp, per, c0, c1):
    """rows_backward over chunks c0 .. c1 - 1 of `per` rows each, chunk c adding its rows' dw and db
    into dwp[c] and dbp[c] (float64 (chunks, D), zeroed): the partials are summed in chunk order by
    _add_parts, so the result does not depend on which thread ran which chunk."""
    N, D = x.shape
    if not (g.shape[0] == N and g.shape[1] == D and dx.shape[0] == N and dx.shape[1] == D and w.size == D
            and mean.size == N and rstd.size == N and dwp.shape[1] == D and dbp.shape[1] == D
            and dwp.shape[0] * per >= N and dbp.shape[0] == dwp.shape[0]):
        raise ValueError("layer_norm backward kernel: array shapes do not fit the input")
    for c in range(c0, c1):
        for n in range(c * per, min(N, (c + 1) * per)):
            _ln_row_backward(g[n], x[n], w, mean[n], rstd[n], dx[n], dwp[c], dbp[c])


@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _rows_backward_add_parts(g, x, w, mean, rstd, res, dx, dwp, dbp, per, c0, c1):
    """rows_backward_add over chunks c0 .. c1 - 1, dw and db into per-chunk partials as
    _rows_backward_parts (its own row scratch)."""
    N, D = x.shape
    if not (g.shape[0] == N and g.shape[1] == D and dx.shape[0] == N and dx.shape[1] == D and w.size == D
            and res.shape[0] == N and res.shape[1] == D and mean.size == N and rstd.size == N
            and dwp.shape[1] == D and dbp.shape[1] == D and dwp.shape[0] * per >= N
            and dbp.shape[0] == dwp.shape[0]):
        raise ValueError("layer_norm backward + add kernel: array shapes do not fit the input")
    tmp = np.empty(D, dx.dtype)
    for c in range(c0, c1):
        for n in range(c * per, min(N, (c + 1) * per)):
            _ln_row_backward(g[n], x[n], w, mean[n], rstd[n], tmp, dwp[c], dbp[c])
            _add_row(dx[n], res[n], tmp)


@numba.njit(cache=True, nogil=True)
def _add_parts(dst, parts):
    """dst += parts[0] + parts[1] + ... in that order (no fast-math: the order is kept)."""
    if dst.ndim != 1 or parts.ndim != 2 or parts.shape[1] != dst.shape[0]:
        raise ValueError("layer_norm backward kernel: the weight/bias gradient does not fit the partial sums")
    for c in range(parts.shape[0]):
        p = parts[c]
        for i in range(dst.shape[0]):
            dst[i] += p[i]


# -- rms_norm: the composite x * rsqrt(mean(x * x) + eps) [* w] per row of a C-contiguous (N, D) view --

@numba.njit(cache=True, nogil=True, fastmath=SUMS)
def _rms_rows_forward(x, w, eps, m, e, r, y, out, write_y, write_out):
    """Per row of x (N, D): m = mean(x * x) (the squares rounded to x's dtype, summed in float64), e =
    m + eps, r = 1 / sqrt(e) (m, e, r (N,) in x's dtype: the same arithmetic as the unfused ops given
    m), y = x * r and out = y * w (w (D,); written when write_y / write_out). Only m may differ from
    the unfused ops' (NumPy's pairwise float32 mean against this float64 sum)."""
    N, D = x.shape
    if not (w.size == D and m.size == N and e.size == N and r.size == N
            and (not write_y or (y.shape[0] == N and y.shape[1] == D))
            and (not write_out or (out.shape[0] == N and out.shape[1] == D))):
        raise ValueError("rms_norm kernel: array shapes do not fit the input")
    one = r.dtype.type(1.0)
    for n in range(N):
        xr = x[n]
        s = 0.0
        for i in range(D):
            p = xr[i] * xr[i]
            s += p
        m[n] = s / D
        e[n] = m[n] + eps
        r[n] = one / np.sqrt(e[n])
        rf = r[n]
        if write_y:
            yr = y[n]
            for i in range(D):
                yr[i] = xr[i] * rf
        if write_out:
            orow = out[n]
            for i in range(D):
                orow[i] = (xr[i] * rf) * w[i]


# -- the pool (minigrad/_pool.py): the entry points ops call -------------------------------------------
# Each splits its rows (channels for batch_norm) over the pool from the size whose serial time is
# _pool.WORK_NS; serial costs per element measured on the development machine (see _pool.py).
# Rows and channels are independent, so every result is bitwise the serial kernel's for any thread
# count, except layer_norm's dw and db (rows_backward, rows_backward_add): from _ROWS_BWD_MIN
# elements they are summed per chunk of rows (fixed by the size) and the chunks' float64 partials
# added in chunk order -- the same bits for any thread count, and within float64 rounding of the
# serial kernel's one running sum (after the cast to float32 at most 1 ulp apart, for sums that do
# not cancel).

from .. import _pool  # noqa: E402

# serial ns per float32 element, measured (2^18 elements, best of 40, loaded shared 2-core machine)
_BN_MIN = _pool.min_elements(0.62)        # batch_norm forward (N, 16, 64): 0.62 ns
_BN_BWD_MIN = _pool.min_elements(0.5)     # batch_norm backward: two passes to forward's three
_ROWS_MIN = _pool.min_elements(0.35)      # layer_norm forward (512, D = 512): 0.35 ns; rms_norm's alike
_ROWS_BWD_MIN = _pool.min_elements(0.47)  # layer_norm backward: 0.47 ns


def _channels(x, cf):
    return (x.shape[0], x.shape[1] * x.shape[2]) if cf else (x.shape[1], x.shape[0] * x.shape[2])


def forward(x, cf, w, b, eps, out, mean, var, rstd):
    """batch_norm's training forward (see _forward), channels split over the pool when large."""
    C, M = _channels(x, cf)
    if x.size < _BN_MIN:
        return _forward(x, cf, w, b, eps, out, mean, var, rstd, 0, C)
    _pool.run_rows(lambda lo, hi: _forward(x, cf, w, b, eps, out, mean, var, rstd, lo, hi), C, M)


def backward_dx(g, x, cf, w, mean, rstd, dx, sums):
    """batch_norm's input gradient (see _backward_dx), channels split over the pool when large."""
    C, M = _channels(g, cf)
    if g.size < _BN_BWD_MIN:
        return _backward_dx(g, x, cf, w, mean, rstd, dx, sums, 0, C)
    _pool.run_rows(lambda lo, hi: _backward_dx(g, x, cf, w, mean, rstd, dx, sums, lo, hi), C, M)


def rows_forward(x, w, b, eps, out, mean, rstd):
    """layer_norm's forward by rows (see _rows_forward), rows split over the pool when large."""
    if x.size < _ROWS_MIN or x.ndim != 2 or out.shape[:1] != x.shape[:1]:
        return _rows_forward(x, w, b, eps, out, mean, rstd)
    _pool.run_rows(lambda lo, hi: _rows_forward(x[lo:hi], w, b, eps, out[lo:hi], mean[lo:hi], rstd[lo:hi]),
                   x.shape[0], x.shape[1])


def rows_add_forward(a, r, w, b, eps, s, out, mean, rstd):
    """The residual add and layer_norm (see _rows_add_forward), rows split over the pool when large."""
    if (a.size < _ROWS_MIN or a.ndim != 2 or r.shape != a.shape or s.shape != a.shape
            or out.shape != a.shape):
        return _rows_add_forward(a, r, w, b, eps, s, out, mean, rstd)
    _pool.run_rows(lambda lo, hi: _rows_add_forward(a[lo:hi], r[lo:hi], w, b, eps, s[lo:hi], out[lo:hi],
                                                    mean[lo:hi], rstd[lo:hi]), a.shape[0], a.shape[1])


def rms_rows_forward(x, w, eps, m, e, r, y, out, write_y, write_out):
    """rms_norm by rows (see _rms_rows_forward), rows split over the pool when large."""
    if (x.size < _ROWS_MIN or x.ndim != 2 or (write_y and y.shape != x.shape)
            or (write_out and out.shape != x.shape)):
        return _rms_rows_forward(x, w, eps, m, e, r, y, out, write_y, write_out)
    _pool.run_rows(lambda lo, hi: _rms_rows_forward(x[lo:hi], w, eps, m[lo:hi], e[lo:hi], r[lo:hi],
                                                    y[lo:hi] if write_y else y, out[lo:hi] if write_out else out,
                                                    write_y, write_out), x.shape[0], x.shape[1])


def _parts(N, D):
    per = _pool.per_chunk(D)
    n = -(-N // per)
    return per, n, np.zeros((n, D)), np.zeros((n, D))


def rows_backward(g, x, w, mean, rstd, dx, dw, db):
    """layer_norm's backward by rows (see _rows_backward); from _ROWS_BWD_MIN elements per chunk of
    rows with dw, db summed per chunk (module comment above), the chunks over the pool."""
    if x.size < _ROWS_BWD_MIN or x.ndim != 2:
        return _rows_backward(g, x, w, mean, rstd, dx, dw, db)
    N, D = x.shape
    per, n, dwp, dbp = _parts(N, D)
    _pool.run(lambda c0, c1: _rows_backward_parts(g, x, w, mean, rstd, dx, dwp, dbp, per, c0, c1), n)
    _add_parts(dw, dwp)
    _add_parts(db, dbp)


def rows_backward_add(g, x, w, mean, rstd, res, dx, dw, db, tmp):
    """rows_backward with the residual gradient added (see _rows_backward_add); from _ROWS_BWD_MIN
    elements by chunks as rows_backward."""
    if x.size < _ROWS_BWD_MIN or x.ndim != 2:
        return _rows_backward_add(g, x, w, mean, rstd, res, dx, dw, db, tmp)
    N, D = x.shape
    per, n, dwp, dbp = _parts(N, D)
    _pool.run(lambda c0, c1: _rows_backward_add_parts(g, x, w, mean, rstd, res, dx, dwp, dbp, per, c0, c1), n)
    _add_parts(dw, dwp)
    _add_parts(db, dbp)
