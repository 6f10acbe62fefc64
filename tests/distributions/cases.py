"""The distributions the tests build, each once in minigrad and once in PyTorch from the same float64
parameters: {name: (class name, parameters, values inside the support)}."""
import numpy as np

import minigrad as mg

_COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])
_W = np.array([[0.5, 0.1], [0.2, -0.3], [1.0, 0.0]])
_LOC3 = np.array([0.1, -0.2, 0.3])
_V3 = np.array([[0.5, 0.1, -1.0], [1.0, 2.0, 3.0]])

# batch shape (2,) where the family allows, values of shape (3, 2) or (2,) to check broadcasting
CASES = {
    "Normal": ("Normal", dict(loc=[0.5, -1.0], scale=[1.5, 0.3]), [[0.3, 1.7], [-2.0, 0.0], [5.0, -1.1]]),
    "Uniform": ("Uniform", dict(low=[-1.0, 0.5], high=[2.0, 0.7]), [[0.3, 0.55], [-0.9, 0.69]]),
    "Laplace": ("Laplace", dict(loc=[0.5, -1.0], scale=[1.5, 0.3]), [[0.3, 1.7], [-2.0, 0.0]]),
    "Cauchy": ("Cauchy", dict(loc=[0.5, -1.0], scale=[1.5, 0.3]), [[0.3, 1.7], [-2.0, 0.0]]),
    "Exponential": ("Exponential", dict(rate=[0.5, 3.0]), [[0.3, 1.7], [0.0, 4.0]]),
    "StudentT": ("StudentT", dict(df=[0.8, 5.0], loc=[0.5, -1.0], scale=[1.5, 0.3]), [[0.3, 1.7], [-2.0, 0.0]]),
    "StudentT2": ("StudentT", dict(df=[1.5, 2.5]), [[0.3, 1.7]]),
    "Gamma": ("Gamma", dict(concentration=[0.7, 4.0], rate=[2.0, 0.5]), [[0.3, 1.7], [2.0, 9.0]]),
    "Chi2": ("Chi2", dict(df=[1.5, 6.0]), [[0.3, 1.7], [2.0, 9.0]]),
    "Beta": ("Beta", dict(concentration1=[0.7, 4.0], concentration0=[2.0, 1.5]), [[0.3, 0.7], [0.01, 0.99]]),
    "Dirichlet": ("Dirichlet", dict(concentration=[[0.7, 2.0, 3.0], [1.5, 1.5, 0.5]]),
                  [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]),
    "LogNormal": ("LogNormal", dict(loc=[0.5, -1.0], scale=[1.5, 0.3]), [[0.3, 1.7], [2.0, 0.1]]),
    "Gumbel": ("Gumbel", dict(loc=[0.5, -1.0], scale=[1.5, 0.3]), [[0.3, 1.7], [-2.0, 0.0]]),
    "HalfNormal": ("HalfNormal", dict(scale=[1.5, 0.3]), [[0.3, 1.7], [0.0, 0.1]]),
    "HalfCauchy": ("HalfCauchy", dict(scale=[1.5, 0.3]), [[0.3, 1.7], [0.0, 0.1]]),
    "Pareto": ("Pareto", dict(scale=[0.5, 1.0], alpha=[2.5, 0.8]), [[0.6, 1.7], [3.0, 1.0]]),
    "Pareto2": ("Pareto", dict(scale=[0.2, 0.3], alpha=[3.5, 1.5]), [[0.6, 1.7]]),
    "Weibull": ("Weibull", dict(scale=[1.5, 0.3], concentration=[0.7, 3.0]), [[0.3, 1.7], [2.0, 0.1]]),
    "Geometric": ("Geometric", dict(probs=[0.2, 0.7]), [[0.0, 3.0], [5.0, 1.0]]),
    "GeometricLogits": ("Geometric", dict(logits=[-1.2, 0.4]), [[2.0, 0.0]]),
    "Bernoulli": ("Bernoulli", dict(probs=[0.2, 0.7]), [[0.0, 1.0], [1.0, 1.0]]),
    "BernoulliLogits": ("Bernoulli", dict(logits=[-1.2, 0.4]), [[0.0, 1.0]]),
    "Binomial": ("Binomial", dict(total_count=[5.0, 5.0], probs=[0.2, 0.7]), [[0.0, 3.0], [5.0, 2.0]]),
    "BinomialLogits": ("Binomial", dict(total_count=[4.0, 4.0], logits=[-1.2, 0.4]), [[1.0, 4.0]]),
    "Poisson": ("Poisson", dict(rate=[0.5, 4.0]), [[0.0, 3.0], [2.0, 7.0]]),
    "Categorical": ("Categorical", dict(probs=[[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]), [[2, 0], [1, 1]]),
    "CategoricalLogits": ("Categorical", dict(logits=[[0.2, -1.3, 0.5], [0.1, 0.6, 3.0]]), [[2, 0]]),
    "OneHotCategorical": ("OneHotCategorical", dict(probs=[[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]),
                          [[[0, 0, 1], [1, 0, 0]], [[0, 1, 0], [0, 1, 0]]]),
    "MultivariateNormal": ("MultivariateNormal", dict(loc=_LOC3, covariance_matrix=_COV), _V3),
    "MultivariateNormalTril": ("MultivariateNormal", dict(loc=_LOC3, scale_tril=np.linalg.cholesky(_COV)), _V3),
    "MultivariateNormalPrec": ("MultivariateNormal", dict(loc=_LOC3, precision_matrix=_COV), _V3),
    "LowRankMultivariateNormal": ("LowRankMultivariateNormal",
                                  dict(loc=_LOC3, cov_factor=_W, cov_diag=[0.5, 1.0, 2.0]), _V3),
    "RelaxedBernoulli": ("RelaxedBernoulli", dict(temperature=0.5, probs=[0.3, 0.8]), [[0.2, 0.9]]),
    "RelaxedOneHotCategorical": ("RelaxedOneHotCategorical", dict(temperature=0.7, probs=[0.3, 0.2, 0.5]),
                                 [[0.1, 0.3, 0.6], [0.5, 0.25, 0.25]]),
}


def make(lib, name):
    """Build case ``name`` in ``lib`` (minigrad.distributions or torch.distributions)."""
    cls, params, _ = CASES[name]
    return getattr(lib, cls)(**{k: _tensor(lib, v) for k, v in params.items()})


def values(lib, name):
    return _tensor(lib, CASES[name][2], integer=CASES[name][0] == "Categorical")


def _tensor(lib, v, integer=False):
    a = np.asarray(v, dtype=np.int64 if integer else np.float64)
    if lib.__name__.startswith("torch"):
        import torch
        return torch.tensor(a)
    return mg.tensor(a)
