"""Elementwise backward rules that NumPy makes in two passes (numba; imported only by
minigrad.kernels): relu's gradient g * (y > 0) without the boolean mask array."""
import numba


@numba.njit(cache=True, nogil=True)
def threshold_backward(g, y, zero, out):
    """out = g * (y > 0) for C-contiguous arrays of one shape and dtype; zero is 0 in that dtype,
    so that a masked element is g * 0 (-0.0 for a negative g, nan for an infinite one), as NumPy's
    product with the mask."""
    n = out.size
    gf = g.reshape(n)
    yf = y.reshape(n)
    of = out.reshape(n)
    for i in range(n):
        of[i] = gf[i] if yf[i] > 0 else gf[i] * zero
