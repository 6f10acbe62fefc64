"""kl_divergence for every registered pair against PyTorch's, and register_kl's dispatch."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.distributions as D
from minigrad.distributions import kl as mkl

from .cases import make

torch = pytest.importorskip("torch")
T = torch.distributions

# one or two instances per family (by case name in cases.py), so that finite and infinite KLs both occur
FAMILY_CASES = {
    "Normal": ["Normal"], "Uniform": ["Uniform"], "Laplace": ["Laplace"], "Cauchy": ["Cauchy"],
    "Exponential": ["Exponential"], "Gamma": ["Gamma", "Chi2"], "Beta": ["Beta"], "Dirichlet": ["Dirichlet"],
    "Gumbel": ["Gumbel"], "Bernoulli": ["Bernoulli", "BernoulliLogits"], "Binomial": ["Binomial"],
    "Poisson": ["Poisson"], "Categorical": ["Categorical", "CategoricalLogits"],
    "OneHotCategorical": ["OneHotCategorical"], "MultivariateNormal": ["MultivariateNormal", "MultivariateNormalTril"],
    "LowRankMultivariateNormal": ["LowRankMultivariateNormal"], "TransformedDistribution": ["LogNormal"],
    "HalfNormal": ["HalfNormal"], "Geometric": ["Geometric", "GeometricLogits"], "Pareto": ["Pareto", "Pareto2"],
}
PAIRS = sorted((p.__name__, q.__name__) for p, q in mkl._KL_REGISTRY)
PAIRS_BY_CASES = [pair for pair in PAIRS if "Independent" not in pair]   # (Independent, Independent): below


def test_every_pair_has_cases():
    assert set(n for pair in PAIRS for n in pair) - {"Independent"} <= set(FAMILY_CASES)
    # PyTorch's pairs, but for ContinuousBernoulli (not in minigrad) and the generic ExponentialFamily
    # one (Bregman divergences of the log-normalizer: minigrad has no ExponentialFamily base)
    theirs = sorted((p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY
                    if "ContinuousBernoulli" not in (p.__name__, q.__name__) and p.__name__ != "ExponentialFamily")
    assert PAIRS == theirs


@pytest.mark.parametrize("pair", PAIRS_BY_CASES, ids="-".join)
def test_kl_matches_torch(pair):
    checked = 0
    for cp in FAMILY_CASES[pair[0]]:
        for cq in FAMILY_CASES[pair[1]]:
            mp, mq, tp, tq = make(D, cp), make(D, cq), make(T, cp), make(T, cq)
            if pair == ("Binomial", "Binomial"):
                mq, tq = D.Binomial(mg.tensor([5.0, 4.0], dtype=mg.float64), mq.probs.flip(0)), \
                    T.Binomial(torch.tensor([5.0, 4.0], dtype=torch.float64), tq.probs.flip(0))
            try:
                expected = T.kl_divergence(tp, tq)
            except (NotImplementedError, RuntimeError, ValueError) as e:
                with pytest.raises(type(e) if not isinstance(e, RuntimeError) else Exception):
                    D.kl_divergence(mp, mq)
                continue
            got = D.kl_divergence(mp, mq)
            np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), rtol=1e-9, atol=1e-12)
            checked += 1
    assert checked


def test_kl_independent_and_self():
    p = D.Independent(D.Normal(mg.tensor([0.1, 0.2], dtype=mg.float64), mg.tensor([1.0, 2.0], dtype=mg.float64)), 1)
    q = D.Independent(D.Normal(mg.tensor([0.0, 0.0], dtype=mg.float64), mg.tensor([1.5, 1.0], dtype=mg.float64)), 1)
    f64 = torch.float64
    tp = T.Independent(T.Normal(torch.tensor([0.1, 0.2], dtype=f64), torch.tensor([1.0, 2.0], dtype=f64)), 1)
    tq = T.Independent(T.Normal(torch.tensor([0.0, 0.0], dtype=f64), torch.tensor([1.5, 1.0], dtype=f64)), 1)
    np.testing.assert_allclose(D.kl_divergence(p, q).item(), T.kl_divergence(tp, tq).item(), rtol=1e-12)
    assert abs(D.kl_divergence(p, p).item()) < 1e-12


def test_kl_gradient_matches_torch():
    loc = mg.tensor([0.3, -0.5], dtype=mg.float64, requires_grad=True)
    scale = mg.tensor([0.7, 1.4], dtype=mg.float64, requires_grad=True)
    D.kl_divergence(D.Normal(loc, scale), D.Normal(0.0, 1.0)).sum().backward()
    tl = torch.tensor([0.3, -0.5], dtype=torch.float64, requires_grad=True)
    ts = torch.tensor([0.7, 1.4], dtype=torch.float64, requires_grad=True)
    T.kl_divergence(T.Normal(tl, ts), T.Normal(0.0, 1.0)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), tl.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(scale.grad.numpy(), ts.grad.numpy(), rtol=1e-12)
    a = mg.tensor([0.7, 3.0], dtype=mg.float64, requires_grad=True)
    ta = torch.tensor([0.7, 3.0], dtype=torch.float64, requires_grad=True)
    D.kl_divergence(D.Gamma(a, a), D.Gamma(mg.tensor(2.0, dtype=mg.float64), 1.0)).sum().backward()
    T.kl_divergence(T.Gamma(ta, ta), T.Gamma(torch.tensor(2.0, dtype=torch.float64), 1.0)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-8)


def test_register_kl_dispatch():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)
    assert D.kl_divergence(p, q).item() == pytest.approx(0.5)     # the (Normal, Normal) rule
    try:
        @D.register_kl(MyNormal, D.Normal)
        def _mine(p, q):
            return mg.tensor(42.0)
        assert D.kl_divergence(p, q).item() == 42.0                  # the more specific pair wins
        assert D.kl_divergence(q, p).item() == pytest.approx(0.5)
    finally:
        del mkl._KL_REGISTRY[MyNormal, D.Normal]
        mkl._KL_MEMOIZE.clear()
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Poisson"):
        D.kl_divergence(D.Poisson(1.0), D.Normal(0.0, 1.0))
    with pytest.raises(TypeError, match="Distribution subclass"):
        D.register_kl(int, D.Normal)
