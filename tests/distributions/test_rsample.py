"""Reparameterised samples: gradients of rsample against central differences taken on the same base
noise (the generator reseeded before each draw), and the implicit (Gamma-family) gradients against
PyTorch's _standard_gamma_grad and, in expectation, against the derivative of the mean."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.distributions as D

from .cases import CASES


def _params(name):
    cls, params, _ = CASES[name]
    return cls, {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Laplace", "Cauchy", "Exponential", "LogNormal", "Gumbel",
                                  "HalfNormal", "HalfCauchy", "Weibull", "Pareto", "MultivariateNormalTril", "LowRankMultivariateNormal", "RelaxedBernoulli",
                                  "RelaxedOneHotCategorical"])
def test_rsample_gradient_matches_differences_on_the_same_noise(name):
    cls, params = _params(name)
    rng = np.random.default_rng(0)
    w = None

    def f(p, grad=False):
        nonlocal w
        mg.manual_seed(7)
        tensors = {k: mg.tensor(v, requires_grad=grad and k not in ("temperature",)) for k, v in p.items()}
        x = getattr(D, cls)(**tensors, validate_args=False).rsample((3,))
        if w is None:
            w = mg.tensor(rng.standard_normal(tuple(x.shape)))
        return (x * w).sum(), tensors

    out, tensors = f(params, grad=True)
    out.backward()
    h = 1e-6
    for k, v in params.items():
        if k == "temperature" or (name.startswith("MultivariateNormal") and k == "scale_tril"):
            continue
        num = np.zeros_like(v)
        for i in np.ndindex(v.shape):
            vp, vm = v.copy(), v.copy()
            vp[i] += h
            vm[i] -= h
            num[i] = (f({**params, k: vp})[0].item() - f({**params, k: vm})[0].item()) / (2 * h)
        if name == "RelaxedOneHotCategorical" and k == "probs":
            # probs are normalised: only the gradient's component within the simplex's tangent space counts
            num, got = num - num.mean(), tensors[k].grad.numpy() - tensors[k].grad.numpy().mean()
        else:
            got = tensors[k].grad.numpy()
        np.testing.assert_allclose(got, num, rtol=1e-5, atol=1e-7, err_msg=f"{name}.{k}")


def test_mvn_scale_tril_gradient():
    L = np.linalg.cholesky(np.array([[2.0, 0.3], [0.3, 1.0]]))
    loc = mg.tensor([0.1, 0.2], dtype=mg.float64, requires_grad=True)
    Lt = mg.tensor(L, requires_grad=True)
    mg.manual_seed(3)
    x = D.MultivariateNormal(loc, scale_tril=Lt).rsample((5,))
    mg.manual_seed(3)
    eps = mg.randn(5, 2, dtype=mg.float64).numpy()
    np.testing.assert_allclose(x.detach().numpy(), np.array([0.1, 0.2]) + eps @ L.T, rtol=1e-12)
    x.sum().backward()
    # as PyTorch: the gradient of the whole matrix used (its upper part too), d x_i / d L_ij = eps_j
    np.testing.assert_allclose(Lt.grad.numpy(), np.ones((2, 1)) * eps.sum(0)[None, :], rtol=1e-12)
    np.testing.assert_allclose(loc.grad.numpy(), [5.0, 5.0])


def test_standard_gamma_grad_matches_torch():
    torch = pytest.importorskip("torch")
    from minigrad.distributions._special import standard_gamma_grad_np
    # every branch: x < 0.8 (series), alpha > 8 near and far from the mode (saddle point), the rational fit
    alpha = np.array([0.3, 0.3, 1.5, 1.5, 2.5, 10.0, 10.0, 10.0, 20.0, 50.0, 0.05, 3.0])
    x = np.array([0.01, 0.5, 0.2, 3.0, 7.0, 10.2, 4.0, 17.0, 19.0, 70.0, 1e-5, 0.9])
    got = standard_gamma_grad_np(alpha, x)
    expected = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_gamma_rsample_gradient_is_the_implicit_one():
    from minigrad.distributions._special import standard_gamma_grad_np
    a = mg.tensor([0.5, 2.0, 12.0], dtype=mg.float64, requires_grad=True)
    r = mg.tensor([2.0, 1.0, 0.5], dtype=mg.float64, requires_grad=True)
    x = D.Gamma(a, r).rsample((4,))
    x.sum().backward()
    z = x.detach().numpy() * r.detach().numpy()        # the standard Gamma draws
    np.testing.assert_allclose(a.grad.numpy(), (standard_gamma_grad_np(a.detach().numpy(), z) / r.detach().numpy())
                               .sum(0), rtol=1e-10)
    np.testing.assert_allclose(r.grad.numpy(), (-z / r.detach().numpy() ** 2).sum(0), rtol=1e-10)


N = 20000


@pytest.mark.parametrize("family", ["Gamma", "Chi2", "Beta", "Dirichlet", "StudentT"])
def test_implicit_gradients_are_unbiased(family):
    """The mean of the per-sample derivatives d x / d parameter is d E[x] / d parameter, within 5
    standard errors (the parameters are a batch of N copies, so one backward gives every sample's)."""
    def batch(v):
        return mg.tensor(np.tile(np.asarray(v, dtype=np.float64), (N, 1)), requires_grad=True)

    if family in ("Gamma", "Chi2"):
        c = np.array([0.6, 3.0])
        p = batch(c)
        d, dmean = (D.Gamma(p, 2.0), np.full(2, 0.5)) if family == "Gamma" else (D.Chi2(p), np.ones(2))
    elif family == "Beta":
        c, b = np.array([0.6, 3.0]), np.array([1.5, 2.0])
        p = batch(c)
        d, dmean = D.Beta(p, mg.tensor(b)), b / (c + b) ** 2
    elif family == "Dirichlet":
        c = np.array([0.6, 3.0, 1.0])
        p = batch(c)
        d, dmean = D.Dirichlet(p), (c.sum() - c) / c.sum() ** 2   # d E[x_i] / d c_i
    else:       # StudentT: E[x] = loc, whatever df: the df-gradient (through the Chi2 draw) averages to 0
        c = np.array([4.0, 9.0])
        p = batch(c)
        d, dmean = D.StudentT(p, mg.tensor([1.0, -2.0], dtype=mg.float64)), np.zeros(2)
    x = d.rsample()
    per_sample = np.empty((N, len(c)))
    for i in range(len(c)):
        g, = mg.autograd.grad(x[..., i].sum(), p, retain_graph=True)
        per_sample[:, i] = g.numpy()[:, i]
    se = per_sample.std(0) / np.sqrt(N)
    np.testing.assert_array_less(np.abs(per_sample.mean(0) - dmean), 5 * se)


def test_dirichlet_grad_matches_torch():
    torch = pytest.importorskip("torch")
    from minigrad.distributions._special import dirichlet_grad_np
    # every branch: x near 0, x near 1, alpha and beta > 6 (near and far from the mean), the rational fit
    x = np.array([0.01, 0.2, 0.97, 0.999, 0.45, 0.3, 0.6, 0.35, 0.5])
    alpha = np.array([0.5, 1.0, 3.0, 0.7, 9.0, 9.0, 2.0, 1.5, 4.0])
    total = np.array([2.0, 3.0, 3.5, 1.2, 20.0, 20.0, 5.0, 4.0, 8.0])
    expected = torch._dirichlet_grad(torch.tensor(x), torch.tensor(alpha), torch.tensor(total)).numpy()
    np.testing.assert_allclose(dirichlet_grad_np(x, alpha, total), expected, rtol=1e-12)


@pytest.mark.parametrize("family", ["Dirichlet", "Beta"])
def test_dirichlet_and_beta_rsample_gradients_match_torch_on_the_same_draws(family):
    """PyTorch's _Dirichlet backward applied to minigrad's draws gives minigrad's gradient."""
    torch = pytest.importorskip("torch")
    c = np.array([[0.3, 2.0, 7.5], [8.0, 9.0, 0.5]]) if family == "Dirichlet" else np.array([[0.4, 3.0], [7.0, 9.0]])
    p = mg.tensor(c, requires_grad=True)
    x = D.Dirichlet(p).rsample((20,)) if family == "Dirichlet" else D.Beta(p[:, 0], p[:, 1]).rsample((20,))
    w = np.random.default_rng(0).standard_normal(tuple(x.shape))
    (x * mg.tensor(w)).sum().backward()
    xs = x.detach().numpy()
    if family == "Beta":                          # the Beta draw is the first coordinate of a Dirichlet's
        xs = np.stack([xs, 1 - xs], -1)
        w = np.stack([w, np.zeros_like(w)], -1)
    tc = torch.tensor(c).expand(20, *c.shape)
    tx, tw = torch.tensor(xs), torch.tensor(w)
    g = torch._dirichlet_grad(tx, tc, tc.sum(-1, True).expand_as(tc))
    expected = (g * (tw - (tx * tw).sum(-1, True))).sum(0).numpy()
    np.testing.assert_allclose(p.grad.numpy(), expected, rtol=1e-9, atol=1e-12)
