"""Activations with a fused rule (the others are compositions in nn.functional): leaky_relu, gelu."""
import numpy as np

from .. import _pool, kernels as _kernels
from ..autograd.function import Function, NoRule
from ..tensor import Tensor

__all__ = []  # Function classes only: their public wrappers are nn.functional's


class LeakyRelu(Function):
    """out = x if x > 0 else slope * x;  dx = g * (1 if x > 0 else slope)"""
    batching = "elementwise"
    fusion = NoRule("its slope is a static argument, which a fused loop body has no place for yet")

    op_name = "leaky_relu"

    @staticmethod
    def forward(ctx, x, slope):
        pos = x > 0
        if ctx.needs_input_grad:
            # the derivative is piecewise constant, so the backward g * d is exact to any order
            ctx.d = np.where(pos, np.asarray(1, x.dtype), np.asarray(slope, x.dtype))
        return np.where(pos, x, x * np.asarray(slope, x.dtype))

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.d), None

    @staticmethod
    def jvp(ctx, t, _slope):
        return t * Tensor._make(ctx.d)

    @staticmethod
    def onnx(e, c):
        return c.add("LeakyRelu", [c.x(e)], c.out(e), alpha=float(e.args[1]))


_SQRT1_2 = 0.7071067811865476      # 1 / sqrt(2)
_INV_SQRT_2PI = 0.3989422804014327  # 1 / sqrt(2 pi)


def _flat(a):
    return np.ascontiguousarray(a).reshape(-1)


# float32's erf as PyTorch's CPU kernels compute it (Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7):
# one exponential exp(-x^2 / 2) (NumPy's vectorised exp) serves erf and, in backward, the density
_AS = _kernels.ERF_AS


def _exp_half_sq(x):
    """exp(-(x / sqrt 2)^2) in x's dtype (float32)."""
    z = x * np.float32(_SQRT1_2)
    np.multiply(z, z, out=z)
    np.negative(z, out=z)
    return np.exp(z, out=z)


# -- the pool (minigrad/_pool.py): GELU over chunks of elements ----------------------------------------
# Large GELUs with the threads chosen run chunk by chunk on the pool, each chunk its exponential
# (the serial code's NumPy ufuncs on the chunk) and then the numba loop (or the NumPy operations) on
# the same chunk, while it is in cache. Every operation is elementwise, so the results are bitwise
# the serial ones for any thread count (tests/perf_kernels/test_pool_seq.py). From _GELU_MIN
# elements: the float32 forward, exponential and loop, cost ~1.0 ns per element serially, the
# backward ~1.2 (2^21 elements, best of 20, loaded shared 2-core machine); the lower one for both.
_GELU_MIN = _pool.min_elements(1.0)
_GELU_BLOCK = 4 * _pool.GRAIN


def _pooled(*arrays):
    """Whether a GELU of these same-shaped arrays runs on the pool (large, C-contiguous, the threads
    chosen); checked size first so the default (serial) path pays one comparison."""
    return (arrays[0].size >= _GELU_MIN and _pool.threads() > 1
            and all(a.flags.c_contiguous and a.shape == arrays[0].shape for a in arrays))


def _exp_half_sq_into(x, out):
    """_exp_half_sq(x) written to out (the same operations)."""
    np.multiply(x, np.float32(_SQRT1_2), out=out)
    np.multiply(out, out, out=out)
    np.negative(out, out=out)
    return np.exp(out, out=out)


def _gelu_f32_pooled(x, g=None):
    """float32 GELU (g None) or its gradient g * GELU'(x) over chunks on the pool (see above)."""
    f = np.float32
    xf = x.reshape(-1)
    gf = None if g is None else g.reshape(-1)
    out = np.empty(x.shape, x.dtype)
    of = out.reshape(-1)
    E = np.empty_like(xf)
    k = _kernels.load("elementwise") if x.size >= 64 and _kernels.available() else None

    def fn(lo, hi):
        xb = xf[lo:hi]
        e = _exp_half_sq_into(xb, E[lo:hi])
        if k is not None:
            if gf is None:
                k._gelu_f32(xf, E, of, lo, hi)
            else:
                k._gelu_backward_f32(gf, xf, E, of, lo, hi)
        elif gf is None:
            of[lo:hi] = (xb * f(0.5)) * (f(1.0) + _erf_as(xb, e))
        else:
            of[lo:hi] = gf[lo:hi] * (f(0.5) * (f(1.0) + _erf_as(xb, e)) + xb * (e * f(_INV_SQRT_2PI)))
    _pool.run_rows(lambda lo, hi: [fn(b, min(hi, b + _GELU_BLOCK)) for b in range(lo, hi, _GELU_BLOCK)], xf.size)
    return out


def _gelu_f64_grad_pooled(g, x):
    """GELU's gradient for float64 with numba over chunks on the pool: each chunk's double exponential
    as the serial code's, then the numba loop on the chunk."""
    t = x.dtype.type
    xf, gf = x.reshape(-1), g.reshape(-1)
    out = np.empty(x.shape, x.dtype)
    of = out.reshape(-1)
    E = np.empty(xf.shape, np.float64)
    k = _kernels.load("elementwise")

    def fn(lo, hi):
        xb = xf[lo:hi]
        np.exp((t(-0.5) * xb * xb).astype(np.float64), out=E[lo:hi])
        k._gelu_backward(gf, xf, E, of, lo, hi)
    _pool.run_rows(lambda lo, hi: [fn(b, min(hi, b + _GELU_BLOCK)) for b in range(lo, hi, _GELU_BLOCK)], xf.size)
    return out


def _erf_as(x, E):
    """erf(x / sqrt 2) for float32 by _AS, operation by operation as kernels/elementwise.py's loops."""
    f = np.float32
    z = x * f(_SQRT1_2)
    t = f(1.0) / (f(_AS[0]) * np.abs(z) + f(1.0))
    r = f(_AS[5]) * t + f(_AS[4])
    for a in (_AS[3], _AS[2], _AS[1]):
        r = r * t + f(a)
    e = f(1.0) - (r * t) * E
    return np.where(z >= 0, e, -e)


def _gelu_np(x):
    """x * 0.5 * (1 + erf(x / sqrt 2)). float32: erf as PyTorch's CPU kernel (see _AS), one numba
    loop or the same operations in NumPy (the same bits); other dtypes: the C library's erf in double
    (mg.erf), operation by operation as the composite (numba: one loop, the same bits)."""
    f = np.float32
    if x.dtype == np.float32:
        if _pooled(x):
            return _gelu_f32_pooled(x)
        E = _exp_half_sq(x)
        if x.size >= 64 and _kernels.available():
            out = np.empty(x.shape, x.dtype)
            _kernels.load("elementwise").gelu_f32(_flat(x), _flat(E), out.reshape(-1))
            return out
        return (x * f(0.5)) * (f(1.0) + _erf_as(x, E))
    if x.size >= 64 and _kernels.available():
        out = np.empty(x.shape, x.dtype)
        _kernels.load("elementwise").gelu(_flat(x), out.reshape(-1))
        return out
    from .elementwise import _erf_np
    t = x.dtype.type
    return (x * t(0.5)) * (t(1.0) + _erf_np(x * t(_SQRT1_2)))


def _gelu_grad_np(g, x):
    """g * (cdf + x * pdf) in x's dtype. float32: erf as in _gelu_np and pdf from the same exponential;
    other dtypes: erf and exp in double rounded to x's dtype, the exponential from NumPy for both
    paths (NumPy's exp and math.exp differ in rare ties, by CPU), so numba (one loop) and NumPy give
    the same bits on every machine."""
    if g.shape != x.shape:   # (vmap over one of them)
        g, x = np.broadcast_arrays(g, x)
    f = np.float32
    if x.dtype == np.float32 and g.dtype == x.dtype:
        if _pooled(x, g):
            return _gelu_f32_pooled(x, g)
        E = _exp_half_sq(x)
        if x.size >= 64 and _kernels.available():
            out = np.empty(x.shape, x.dtype)
            _kernels.load("elementwise").gelu_backward_f32(_flat(g), _flat(x), _flat(E), out.reshape(-1))
            return out
        return g * (f(0.5) * (f(1.0) + _erf_as(x, E)) + x * (E * f(_INV_SQRT_2PI)))
    t = x.dtype.type
    if x.dtype == np.float64 and g.dtype == x.dtype and _kernels.available() and _pooled(x, g):
        return _gelu_f64_grad_pooled(g, x)
    E = np.exp((t(-0.5) * x * x).astype(np.float64))   # in double; one exp for both paths (the same bits)
    if x.size >= 64 and _kernels.available() and g.dtype == x.dtype:
        out = np.empty(x.shape, x.dtype)
        _kernels.load("elementwise").gelu_backward(_flat(g), _flat(x), _flat(E), out.reshape(-1))
        return out
    from .elementwise import _erf_np
    cdf = t(0.5) * (t(1.0) + _erf_np(x * t(_SQRT1_2)))
    pdf = E.astype(x.dtype) * t(_INV_SQRT_2PI)
    return g * (cdf + x * pdf)


class Gelu(Function):
    """out = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2));  dx = g * (Phi(x) + x * phi(x)),
    phi(x) = exp(-x^2 / 2) / sqrt(2 pi)

    One node instead of the composite's five (and one saved array, x, instead of four): GELU runs on
    the widest activations of a Transformer (4 d_model per token)."""
    batching = "elementwise"
    fusion = NoRule("not written as a fused loop body yet (erf through the C library)")
    op_name = "gelu"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _gelu_np(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return GeluBackward.apply(g, x)   # an op, so a traced backward has the same bits

    @staticmethod
    def jvp(ctx, t):
        return t * _gelu_derivative(ctx.saved_tensors[0])

    @staticmethod
    def onnx(e, c):
        # x * 0.5 * (1 + Erf(x * sqrt(1/2)))  (opset 20's Gelu is not in every runtime)
        dt = c.dt(e)
        x = c.x(e)
        erf = c.add("Erf", [c.add("Mul", [x, c.scalar(_SQRT1_2, dt)])])
        return c.add("Mul", [c.add("Mul", [x, c.scalar(0.5, dt)]), c.add("Add", [c.scalar(1.0, dt), erf])], c.out(e))


class GeluBackward(Function):
    """out = g * d(x), d = Phi + x phi (Gelu's VJP as an op);  dg = gg * d(x),
    dx = gg * g * d'(x), d' = phi * (2 - x^2)"""
    batching = "elementwise"
    fusion = NoRule("a backward op")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")
    op_name = "gelu_backward"

    @staticmethod
    def forward(ctx, g, x):
        ctx.save_for_backward(g, x)
        return _gelu_grad_np(g, x)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        ng, nx = ctx.needs_input_grad
        return (gg * _gelu_derivative(x) if ng else None, gg * g * _gelu_second(x) if nx else None)

    @staticmethod
    def jvp(ctx, tg, tx):
        g, x = ctx.saved_tensors
        a = None if tg is None else tg * _gelu_derivative(x)
        b = None if tx is None else tx * g * _gelu_second(x)
        return b if a is None else (a if b is None else a + b)


def _gelu_second(x):
    """d/dx (Phi + x phi) = phi * (2 - x^2), in Tensor ops."""
    from .elementwise import exp
    return exp(-0.5 * x * x) * _INV_SQRT_2PI * (2.0 - x * x)


def _gelu_derivative(x):
    """Phi(x) + x phi(x) in Tensor ops (differentiable again: double backward, forward over reverse)."""
    from .elementwise import erf, exp
    return 0.5 * (1.0 + erf(x * _SQRT1_2)) + x * exp(-0.5 * x * x) * _INV_SQRT_2PI
