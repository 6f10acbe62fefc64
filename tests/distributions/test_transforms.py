"""Transforms against PyTorch's: forward, inverse, log |det J|, shapes, caching, composition; and
TransformedDistribution built from them."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.distributions as D
from minigrad.distributions import constraints, transforms as MT

torch = pytest.importorskip("torch")
TT = torch.distributions.transforms

X = np.array([[0.3, -1.2, 0.5], [1.0, 2.0, -0.1]])


def _pair(name, *args, **kw):
    conv = [a if isinstance(a, (int, float)) else np.asarray(a) for a in args]
    return (getattr(MT, name)(*[mg.tensor(a) if isinstance(a, np.ndarray) else a for a in conv], **kw),
            getattr(TT, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in conv], **kw))


CASES = [("ExpTransform", (), X), ("SigmoidTransform", (), X), ("TanhTransform", (), X),
         ("SoftplusTransform", (), X), ("StickBreakingTransform", (), X), ("AbsTransform", (), X),
         ("AffineTransform", (1.5, -2.0), X), ("AffineTransform", ([0.5, 1.0, -1.0], [2.0, -1.0, 0.5]), X),
         ("PowerTransform", (2.5,), np.abs(X)), ("PowerTransform", ([0.5, 2.0, 3.0],), np.abs(X)),
         ("SoftmaxTransform", (), X)]


@pytest.mark.parametrize("name, args, x", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_transform_matches_torch(name, args, x):
    m, t = _pair(name, *args)
    ym, yt = m(mg.tensor(x)), t(torch.tensor(x))
    np.testing.assert_allclose(ym.numpy(), yt.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m.inv(ym).numpy(), t.inv(yt).numpy(), rtol=1e-10, atol=1e-12)
    if name not in ("AbsTransform", "SoftmaxTransform"):
        np.testing.assert_allclose(m.inv(ym).numpy(), x, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(m.log_abs_det_jacobian(mg.tensor(x), ym).numpy(),
                                   t.log_abs_det_jacobian(torch.tensor(x), yt).numpy(), rtol=1e-10, atol=1e-12)
    assert m.bijective == t.bijective
    assert m.domain.event_dim == t.domain.event_dim and m.codomain.event_dim == t.codomain.event_dim
    assert tuple(m.forward_shape((2, 3))) == tuple(t.forward_shape(torch.Size((2, 3))))
    assert tuple(m.inverse_shape((2, 3))) == tuple(t.inverse_shape(torch.Size((2, 3))))
    assert bool(np.all(m.codomain.check(ym).numpy())) if name != "AbsTransform" else True


def test_log_abs_det_jacobian_is_the_jacobian():
    """For the univariate transforms, log |dy/dx| from the gradient of y."""
    for t in (MT.ExpTransform(), MT.SigmoidTransform(), MT.TanhTransform(), MT.SoftplusTransform(),
              MT.AffineTransform(0.5, -3.0), MT.PowerTransform(mg.tensor(1.7, dtype=mg.float64))):
        x = mg.tensor([0.2, 1.3, 0.7], dtype=mg.float64, requires_grad=True)
        y = t(x)
        g, = mg.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(np.log(np.abs(g.numpy())), t.log_abs_det_jacobian(x, y).detach().numpy(),
                                   rtol=1e-10)


def test_compose_inverse_cache_and_reshape():
    c = MT.ComposeTransform([MT.AffineTransform(1.0, 2.0), MT.ExpTransform()])
    tc = TT.ComposeTransform([TT.AffineTransform(1.0, 2.0), TT.ExpTransform()])
    x = mg.tensor(X)
    np.testing.assert_allclose(c(x).numpy(), tc(torch.tensor(X)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(c.log_abs_det_jacobian(x, c(x)).numpy(),
                               tc.log_abs_det_jacobian(torch.tensor(X), tc(torch.tensor(X))).numpy(), rtol=1e-12)
    np.testing.assert_allclose(c.inv(c(x)).numpy(), X, rtol=1e-12)
    assert c.inv.inv is c and c.sign == 1 and MT.AffineTransform(0.0, -2.0).sign == -1
    cached = MT.ExpTransform(cache_size=1)
    y = cached(x)
    assert cached.inv(y) is x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        MT.ExpTransform(cache_size=2)
    r = MT.ReshapeTransform((6,), (2, 3))
    assert tuple(r(mg.zeros(4, 6)).shape) == (4, 2, 3) and tuple(r.inv(mg.zeros(4, 2, 3)).shape) == (4, 6)
    it = MT.IndependentTransform(MT.ExpTransform(), 1)
    assert tuple(it.log_abs_det_jacobian(x, it(x)).shape) == (2,)
    assert MT.identity_transform(x) is x
    lc = MT.LowerCholeskyTransform()
    m = mg.tensor([[0.5, 3.0], [-1.0, 0.2]], dtype=mg.float64)
    assert bool(constraints.lower_cholesky.check(lc(m)).item())
    np.testing.assert_allclose(lc.inv(lc(m)).numpy(), np.tril(m.numpy()), rtol=1e-12)


def test_transformed_distribution_matches_torch():
    base_m, base_t = D.Normal(mg.tensor([0.2, -0.3], dtype=mg.float64), mg.tensor([1.0, 0.5], dtype=mg.float64)), \
        torch.distributions.Normal(torch.tensor([0.2, -0.3], dtype=torch.float64),
                                   torch.tensor([1.0, 0.5], dtype=torch.float64))
    m = D.TransformedDistribution(base_m, [MT.AffineTransform(1.0, -2.0), MT.SigmoidTransform()])
    t = torch.distributions.TransformedDistribution(base_t, [TT.AffineTransform(1.0, -2.0), TT.SigmoidTransform()])
    v = np.array([[0.3, 0.9], [0.01, 0.5]])
    np.testing.assert_allclose(m.log_prob(mg.tensor(v)).numpy(), t.log_prob(torch.tensor(v)).numpy(), rtol=1e-10)
    np.testing.assert_allclose(m.cdf(mg.tensor(v)).numpy(), t.cdf(torch.tensor(v)).numpy(), rtol=1e-10)
    q = np.array([0.2, 0.7])
    np.testing.assert_allclose(m.icdf(mg.tensor(q)).numpy(), t.icdf(torch.tensor(q)).numpy(), rtol=1e-9)
    assert m.has_rsample and repr(m.support) == repr(t.support)
    # a vector transform on a batch of scalars: the base becomes Independent, event shape (3,)
    sb = D.TransformedDistribution(D.Normal(mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)),
                                   MT.StickBreakingTransform())
    tb = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)),
        TT.StickBreakingTransform())
    assert tuple(sb.event_shape) == tuple(tb.event_shape) == (4,)
    s = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(sb.log_prob(mg.tensor(s)).item(), tb.log_prob(torch.tensor(s)).item(), rtol=1e-10)
    assert tuple(sb.rsample((5,)).shape) == (5, 4)
