"""Probability distributions, as torch.distributions: sampling (``sample``, reparameterised
``rsample``), densities (``log_prob``, ``cdf``, ``icdf``), moments, ``entropy`` and
[`kl_divergence`][minigrad.distributions.kl_divergence], built on minigrad's Tensor ops so that
gradients flow to the parameters.

Randomness comes from minigrad's generator (``mg.manual_seed`` makes draws reproducible). Argument
validation is on by default (``validate_args``): a bad parameter or an out-of-support value raises
ValueError naming the parameter and the distribution.

Example:
    >>> D = mg.distributions
    >>> mg.manual_seed(0)
    >>> q = D.Normal(mg.zeros(3, requires_grad=True), mg.ones(3))
    >>> z = q.rsample()                  # differentiable in loc and scale
    >>> D.kl_divergence(q, D.Normal(0.0, 1.0)).sum().item()
    0.0
"""
from . import constraints, transforms
from .constraints import Constraint
from .continuous import Cauchy, Exponential, Laplace, Normal, StudentT, Uniform
from .discrete import Bernoulli, Binomial, Categorical, OneHotCategorical, Poisson
from .distribution import Distribution
from .extra import Geometric, HalfCauchy, HalfNormal, Pareto, Weibull
from .gamma import Beta, Chi2, Dirichlet, Gamma
from .kl import kl_divergence, register_kl
from .mixture import MixtureSameFamily
from .multivariate import LowRankMultivariateNormal, MultivariateNormal
from .transformed import (ExpRelaxedCategorical, Gumbel, Independent, LogitRelaxedBernoulli, LogNormal,
                          RelaxedBernoulli, RelaxedOneHotCategorical, TransformedDistribution)
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, CumulativeDistributionTransform,
                         ExpTransform, IndependentTransform, LowerCholeskyTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform, SoftplusTransform,
                         StickBreakingTransform, TanhTransform, Transform, identity_transform)

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
    "ExpRelaxedCategorical", "Exponential", "Gamma", "Gumbel", "Independent", "Laplace", "LogNormal",
    "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily", "MultivariateNormal",
    "Normal", "OneHotCategorical", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
    "TransformedDistribution", "Uniform", "kl_divergence", "register_kl", "constraints", "transforms",
    "Constraint", "Geometric", "HalfCauchy", "HalfNormal", "Pareto", "Weibull",
    "AbsTransform", "AffineTransform", "ComposeTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PowerTransform", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
]
