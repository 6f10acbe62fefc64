"""The Gamma family and its relatives: Gamma, Chi2, Beta, Dirichlet.

Their rsample is implicitly reparameterised: a Gamma(alpha, 1) draw x is differentiated through
dx/dalpha = -(dF/dalpha) / (dF/dx) (F the Gamma cdf), computed as PyTorch's _standard_gamma_grad;
a Dirichlet (and Beta) draw through the same identity on its Beta marginals, as PyTorch's
_dirichlet_grad.
"""
from numbers import Number

import numpy as np

from .._size import Size
from ..tensor import Tensor
from . import constraints
from ._special import digamma, dirichlet_reparam, draw, gammainc, lgamma, standard_gamma_reparam
from .continuous import _batch, _expand, _mg
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Gamma", "Chi2", "Beta", "Dirichlet"]


def _standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape, differentiable in alpha (implicit reparameterisation)."""
    return standard_gamma_reparam(alpha, draw("gamma", alpha.shape, alpha.dtype, alpha))


class Gamma(Distribution):
    """The Gamma distribution with shape ``concentration`` and ``rate`` (mean concentration/rate), as
    torch.distributions.Gamma.

    Example:
        >>> mg.manual_seed(0)
        >>> a = mg.tensor([2.0], requires_grad=True)
        >>> mg.distributions.Gamma(a, mg.tensor([1.0])).rsample().sum().backward()
        >>> a.grad.shape
        minigrad.Size([1])
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch(concentration, rate) or self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand(self, Gamma, ("concentration", "rate"), batch_shape, _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # as PyTorch's value.detach().clamp_(min=tiny): the value is clamped, its gradient is not
        tiny = float(np.finfo(value.dtype).tiny)
        return value + (value.clamp(min=tiny) - value).detach()

    def log_prob(self, value):
        value = value if isinstance(value, Tensor) else Tensor(np.asarray(value, self.rate.dtype))
        if self._validate_args:
            self._validate_sample(value)
        return (_mg().xlogy(self.concentration, self.rate) + _mg().xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: Gamma(df / 2, 1/2), as
    torch.distributions.Chi2."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if isinstance(df, Number):
            df = Tensor(np.asarray(df, dtype=_mg().get_default_dtype()))
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        """The degrees of freedom (2 * concentration)."""
        return self.concentration * 2


class Dirichlet(Distribution):
    """The Dirichlet distribution over the simplex with parameter ``concentration`` (last dimension:
    the categories), as torch.distributions.Dirichlet."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        c = self.concentration.expand(shape)
        return dirichlet_reparam(c, draw("dirichlet", shape, c.dtype, c))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return _mg().xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        concm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concm1 / concm1.sum(-1, keepdim=True)
        c = self.concentration.detach().numpy()
        mask = (c < 1).all(-1)
        if mask.any():
            onehot = np.eye(c.shape[-1], dtype=c.dtype)[c.argmax(-1)]
            mode = _mg().where(Tensor(mask[..., None]), Tensor(onehot), mode)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)


class Beta(Distribution):
    """The Beta distribution on [0, 1] with ``concentration1`` (alpha) and ``concentration0`` (beta),
    as torch.distributions.Beta (a two-category Dirichlet)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            c = Tensor(np.asarray([concentration1, concentration0], dtype=_mg().get_default_dtype()))
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            c = _mg().stack([c1, c0], -1)
        self._dirichlet = Dirichlet(c, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = _mg().stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        """alpha, the first concentration."""
        c = self._dirichlet.concentration[..., 0]
        return c

    @property
    def concentration0(self):
        """beta, the second concentration."""
        return self._dirichlet.concentration[..., 1]
