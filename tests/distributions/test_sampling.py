"""Samples against the distribution they come from, under the fixed seed of tests/conftest.py: sample
means and variances within 5 standard errors, a Kolmogorov-Smirnov distance under its 1% critical value
(1.63 / sqrt(n)) for the continuous families, frequencies within 5 standard errors for the discrete
ones; and mg.manual_seed makes draws reproducible."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.distributions as D

from .cases import make

N = 20000
KS_CRIT = 1.63 / np.sqrt(N)

# the families whose mean and variance are finite for the case's parameters
MOMENTS = ["Normal", "Uniform", "Laplace", "Exponential", "Gamma", "Chi2", "Beta", "Dirichlet", "LogNormal",
           "Gumbel", "Bernoulli", "Binomial", "Poisson", "OneHotCategorical", "MultivariateNormal",
           "LowRankMultivariateNormal", "StudentT2", "HalfNormal", "Weibull", "Geometric", "Pareto2"]


@pytest.mark.parametrize("name", MOMENTS)
def test_sample_mean_and_variance(name):
    d = make(D, name)
    x = d.sample((N,)).numpy()
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    finite = np.isfinite(var)
    se_mean = np.sqrt(var / N)
    assert np.all(np.abs(x.mean(0) - mean)[finite] < 5 * se_mean[finite]), (x.mean(0), mean)
    # the sample variance's standard error, from the sample's fourth central moment
    c = x - x.mean(0)
    se_var = np.sqrt(np.maximum((c ** 4).mean(0) - c.var(0) ** 2, 0) / N)
    ok = finite & np.isfinite(se_var)
    if name == "StudentT2":        # df 1.5: infinite variance; df 2.5: finite, but no fourth moment
        ok[:] = False
        assert np.isinf(var[0])
    assert np.all(np.abs(c.var(0) - var)[ok] < 5 * se_var[ok] + 1e-12), (c.var(0), var)


@pytest.mark.parametrize("name", ["MultivariateNormal", "LowRankMultivariateNormal"])
def test_sample_covariance(name):
    d = make(D, name)
    x = d.sample((N,)).numpy()
    S = d.covariance_matrix.detach().numpy()
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S ** 2) / N)
    assert np.all(np.abs(np.cov(x.T) - S) < 5 * se)


def _ks(sorted_x, cdf):
    n = len(sorted_x)
    return max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Laplace", "Cauchy", "Exponential", "LogNormal", "Gumbel",
                                  "HalfNormal", "HalfCauchy", "Weibull", "Pareto"])
def test_kolmogorov_smirnov_with_own_cdf(name):
    d = make(D, name)
    x = np.sort(d.sample((N,)).numpy(), axis=0)
    F = d.cdf(mg.tensor(x)).numpy()
    for j in range(x.shape[1]):
        assert _ks(x[:, j], F[:, j]) < KS_CRIT


@pytest.mark.parametrize("name", ["Gamma", "Chi2", "Beta", "StudentT"])
def test_kolmogorov_smirnov_with_scipy_cdf(name):
    stats = pytest.importorskip("scipy.stats")
    d = make(D, name)
    x = np.sort(d.sample((N,)).numpy(), axis=0)
    p = {k: v.detach().numpy() for k, v in vars(d).items() if hasattr(v, "detach")}
    for j in range(x.shape[1]):
        if name == "Gamma" or name == "Chi2":
            F = stats.gamma.cdf(x[:, j], d.concentration.numpy()[j], scale=1 / d.rate.numpy()[j])
        elif name == "Beta":
            F = stats.beta.cdf(x[:, j], d.concentration1.numpy()[j], d.concentration0.numpy()[j])
        else:
            F = stats.t.cdf(x[:, j], p["df"][j], loc=p["loc"][j], scale=p["scale"][j])
        assert _ks(x[:, j], F) < KS_CRIT


@pytest.mark.parametrize("name", ["Bernoulli", "Binomial", "Poisson", "Categorical", "Geometric"])
def test_discrete_frequencies(name):
    d = make(D, name)
    x = d.sample((N,))
    support = np.arange(12) if name in ("Poisson", "Geometric") else d.enumerate_support().numpy()[:, 0]
    for k in support:
        pmf = d.log_prob(mg.tensor(np.full(tuple(d.batch_shape), k, dtype=x.numpy().dtype))).exp().numpy()
        freq = (x.numpy() == k).mean(0)
        assert np.all(np.abs(freq - pmf) <= 5 * np.sqrt(pmf * (1 - pmf) / N) + 1e-12), (k, freq, pmf)


def test_relaxed_samples_approach_the_discrete_ones_at_low_temperature():
    probs = mg.tensor([0.2, 0.3, 0.5], dtype=mg.float64)
    x = D.RelaxedOneHotCategorical(mg.tensor(0.05, dtype=mg.float64), probs=probs).sample((N,)).numpy()
    freq = np.eye(3)[x.argmax(-1)].mean(0)     # the argmax of a Gumbel-softmax draw is Categorical(probs)
    p = probs.numpy()
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / N))
    b = D.RelaxedBernoulli(mg.tensor(0.05, dtype=mg.float64), probs=mg.tensor(0.3, dtype=mg.float64)).sample((N,))
    assert abs((b.numpy() > 0.5).mean() - 0.3) < 5 * np.sqrt(0.21 / N)


def test_manual_seed_reproduces_draws():
    for name in ("Normal", "Gamma", "Categorical", "Dirichlet", "Poisson", "MultivariateNormal"):
        d = make(D, name)
        mg.manual_seed(123)
        a = d.sample((3,)).numpy()
        mg.manual_seed(123)
        b = d.sample((3,)).numpy()
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, d.sample((3,)).numpy())


def test_compiled_sampling_draws_afresh_and_as_eager():
    """The draws are random ops: mg.jit replays them from the generator at each call (not a constant
    baked in at trace time), and under the same seed gives eager's numbers."""
    def f(p, a):
        return (D.Bernoulli(p, validate_args=False).sample((4,)) + D.Gamma(a, 1.0, validate_args=False).rsample((4,))
                + D.Poisson(a, validate_args=False).sample((4,)) + D.Laplace(a, a, validate_args=False).rsample((4,))
                + D.Dirichlet(a, validate_args=False).rsample((4,)))
    g = mg.jit(f)
    p, a = mg.tensor([0.3, 0.6]), mg.tensor([2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no graph break: the whole sampler is traced
        first = g(p, a).numpy()
    assert not np.array_equal(first, g(p, a).numpy())
    mg.manual_seed(5)
    eager = f(p, a).numpy()
    mg.manual_seed(5)
    np.testing.assert_allclose(g(p, a).numpy(), eager, rtol=1e-6)
