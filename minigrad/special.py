"""mg.special: PyTorch's torch.special — the gamma family, error functions, Bessel functions, the
normal distribution's functions, zeta, and the aliases torch.special gives for functions that minigrad
(as torch) also has at the top level.

Each is an op of minigrad/ops/special.py (or an existing op: erf, sigmoid, xlogy, sinc, softmax,
...), computed in float64 and rounded to the input's float dtype, with PyTorch's derivatives: none for
gammainc's/gammaincc's first argument and zeta's first argument (backward raises PyTorch's
NotImplementedError), and no grad_fn for the Bessel functions J/Y.

    >>> x = mg.tensor([0.5, 2.0], requires_grad=True)
    >>> mg.special.gammaln(x)
    tensor([0.5724, 0.0000], grad_fn=<LgammaBackward0>)
"""
from .ops.elementwise import erf, exp2, expm1, log1p, round, sigmoid as expit  # noqa: A004
from .ops.reduction import log_softmax, logsumexp, softmax
from .ops.special import (bessel_j0, bessel_j1, bessel_y0, bessel_y1, digamma, entr, erfc, erfcx, erfinv,
                          i0, i0e, i1, i1e, igamma as gammainc, igammac as gammaincc, lgamma as gammaln, log_ndtr,
                          logit, mvlgamma as multigammaln, ndtr, ndtri, polygamma, sinc, xlog1py, xlogy, zeta)

psi = digamma

__all__ = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv",
           "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p",
           "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "psi",
           "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta"]
