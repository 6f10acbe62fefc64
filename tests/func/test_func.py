"""mg.func transforms and mg.autograd.functional: against analytic derivatives, finite differences
and (where installed) torch.func / torch.autograd.functional; composition; functional_call."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import func as MF
from minigrad.autograd import functional as AF

nn = mg.nn


def t(a):
    return mg.tensor(np.array(a, dtype=np.float64))


def fd_jacobian(f, x, eps=1e-6):
    """Central differences of f (array -> array) at x."""
    x = np.array(x, dtype=np.float64)
    y0 = np.asarray(f(x))
    J = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        J[(Ellipsis,) + idx] = (np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps)
    return J


# a function per op family (elementwise, reduction, shape, indexing, matmul, nn)
rng = np.random.default_rng(0)
W = rng.standard_normal((3, 4))
FAMILIES = {
    "elementwise": lambda x: (x.sin() * x.exp() + x.tanh() / (1 + x * x)),
    "reduction": lambda x: mg.stack([x.sum(), (x * x).mean(), x.logsumexp(0), x.norm()]),
    "shape": lambda x: x.reshape(2, 2).t().flip(0).reshape(-1) * mg.tensor([1.0, 2.0, 3.0, 4.0], dtype=mg.float64),
    "indexing": lambda x: x[mg.tensor([3, 0, 0])] * x[1:3].sum(),
    "matmul": lambda x: mg.tensor(W) @ x.tanh(),
    "softmax": lambda x: x.softmax(0) * 3,
    "nn": lambda x: nn.functional.gelu(x) + nn.functional.softplus(x * 2),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_jacrev_and_jacfwd_agree_with_each_other_and_finite_differences(family):
    f = FAMILIES[family]
    x0 = rng.standard_normal(4)
    Jr = MF.jacrev(f)(t(x0)).numpy()
    Jf = MF.jacfwd(f)(t(x0)).numpy()
    Jfd = fd_jacobian(lambda a: f(t(a)).numpy(), x0)
    np.testing.assert_allclose(Jr, Jf, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Jr, Jfd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_jvp_transpose_identity_and_finite_differences(family):
    f = FAMILIES[family]
    x0, v = rng.standard_normal(4), rng.standard_normal(4)
    out, jv = MF.jvp(f, (t(x0),), (t(v),))
    u = rng.standard_normal(out.shape)
    _, vjp_fn = MF.vjp(f, t(x0))
    (jtu,) = vjp_fn(t(u))
    assert abs(np.sum(u * jv.numpy()) - np.sum(jtu.numpy() * v)) < 1e-10
    eps = 1e-6
    fd = (f(t(x0 + eps * v)).numpy() - f(t(x0 - eps * v)).numpy()) / (2 * eps)
    np.testing.assert_allclose(jv.numpy(), fd, rtol=1e-6, atol=1e-7)


def test_hessian_of_a_function_of_100_variables_matches_the_analytic_one():
    n = 100
    A = rng.standard_normal((n, n))
    x0 = rng.standard_normal(n)

    def f(x):
        return (x ** 4).sum() / 4 + 0.5 * (x @ (mg.tensor(A) @ x)) + (x[:-1] * x[1:]).sin().sum()

    H = MF.hessian(f)(t(x0)).numpy()
    expected = np.diag(3 * x0 ** 2) + 0.5 * (A + A.T)
    p = x0[:-1] * x0[1:]
    s, c = np.sin(p), np.cos(p)
    # d2/dxi2 of sin(xi xi+1) = -sin * xi+1^2 ; mixed = cos - sin * xi xi+1
    expected[np.arange(n - 1), np.arange(n - 1)] += -s * x0[1:] ** 2
    expected[np.arange(1, n), np.arange(1, n)] += -s * x0[:-1] ** 2
    off = c - s * p
    expected[np.arange(n - 1), np.arange(1, n)] += off
    expected[np.arange(1, n), np.arange(n - 1)] += off
    np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(AF.hessian(f, t(x0)).numpy(), expected, rtol=1e-10, atol=1e-10)


def test_composition_grad_grad_and_jacfwd_jacrev():
    f = lambda x: (x ** 3).sin()  # noqa: E731
    x0 = 0.7
    g2 = MF.grad(MF.grad(f))(t(x0)).item()
    # d/dx (3x^2 cos x^3) = 6x cos x^3 - 9x^4 sin x^3
    assert abs(g2 - (6 * x0 * np.cos(x0 ** 3) - 9 * x0 ** 4 * np.sin(x0 ** 3))) < 1e-12
    g3 = MF.grad(MF.grad(MF.grad(lambda x: x ** 4)))(t(2.0)).item()
    assert abs(g3 - 48.0) < 1e-12
    h = lambda x: (x[0] ** 2) * x[1] + x[1].exp()  # noqa: E731
    H1 = MF.jacfwd(MF.jacrev(h))(t([1.0, 2.0])).numpy()
    H2 = MF.jacrev(MF.jacrev(h))(t([1.0, 2.0])).numpy()
    np.testing.assert_allclose(H1, [[4.0, 2.0], [2.0, np.exp(2.0)]], rtol=1e-12)
    np.testing.assert_allclose(H2, H1, rtol=1e-12)


def test_grad_argnums_has_aux_and_value():
    f = lambda x, y: ((x * y).sum(), x.shape)  # noqa: E731
    (gx, gy), aux = MF.grad(f, argnums=(0, 1), has_aux=True)(t([1.0, 2.0]), t([3.0, 4.0]))
    np.testing.assert_array_equal(gx.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(gy.numpy(), [1.0, 2.0])
    assert aux == (2,)
    g, v = MF.grad_and_value(lambda x: (x * x).sum())(t([3.0]))
    assert g.item() == 6.0 and v.item() == 9.0 and not g.requires_grad
    with pytest.raises(RuntimeError, match="scalar"):
        MF.grad(lambda x: x * 2)(t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="argnums"):
        MF.grad(lambda x: x.sum(), argnums=2)(t([1.0]))
    with pytest.raises(RuntimeError, match="same length"):
        MF.jvp(lambda x: x, (t([1.0]),), ())


def test_functional_call_swaps_parameters_and_restores_the_module():
    mg.manual_seed(0)
    model = nn.Linear(3, 2)
    w0 = model.weight.detach().numpy().copy()
    params = {"weight": t(np.ones((2, 3))), "bias": t(np.zeros(2))}
    x = t([[1.0, 2.0, 3.0]])
    out = MF.functional_call(model, params, (x,))
    np.testing.assert_array_equal(out.numpy(), [[6.0, 6.0]])
    np.testing.assert_array_equal(model.weight.detach().numpy(), w0)
    # per-parameter gradients through functional_call
    g = MF.grad(lambda p: MF.functional_call(model, p, (x,)).sum())(params)
    np.testing.assert_array_equal(g["weight"].numpy(), np.tile([1.0, 2.0, 3.0], (2, 1)))
    np.testing.assert_array_equal(g["bias"].numpy(), [1.0, 1.0])


def test_autograd_functional_api():
    f = lambda a, b: (a * b.exp()).sum()  # noqa: E731
    a, b = t([1.0, 2.0]), t([0.5, -1.0])
    out, (va, vb) = AF.vjp(f, (a, b))
    np.testing.assert_allclose(va.numpy(), np.exp([0.5, -1.0]))
    np.testing.assert_allclose(vb.numpy(), [1.0, 2.0] * np.exp([0.5, -1.0]))
    assert not va.requires_grad
    _, jv = AF.jvp(lambda x: x ** 2, t([1.0, 3.0]), t([1.0, 1.0]))
    np.testing.assert_allclose(jv.numpy(), [2.0, 6.0])
    J = AF.jacobian(lambda x: x ** 2, t([1.0, 3.0]))
    np.testing.assert_allclose(J.numpy(), np.diag([2.0, 6.0]))
    _, hv = AF.hvp(lambda x: (x ** 3).sum(), t([1.0, 2.0]), t([1.0, 1.0]))
    np.testing.assert_allclose(hv.numpy(), [6.0, 12.0])
    _, vh = AF.vhp(lambda x: (x ** 3).sum(), t([1.0, 2.0]), t([1.0, 0.0]))
    np.testing.assert_allclose(vh.numpy(), [6.0, 0.0])
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.vjp(lambda x, y: x.sum(), (t([1.0]), t([2.0])), strict=True)
    Hc = AF.hessian(lambda x: (x ** 3).sum(), t([1.0]), create_graph=True)
    assert Hc.requires_grad


def test_torch_func_parity():
    torch = pytest.importorskip("torch")
    f_mg = FAMILIES["elementwise"]
    x0 = rng.standard_normal(4)
    tf = lambda x: x.sin() * x.exp() + x.tanh() / (1 + x * x)  # noqa: E731
    np.testing.assert_allclose(MF.jacrev(f_mg)(t(x0)).numpy(), torch.func.jacrev(tf)(torch.tensor(x0)).numpy(),
                               rtol=1e-12)
    g = lambda x: (x.sin() * x).sum()  # noqa: E731
    np.testing.assert_allclose(MF.hessian(g)(t(x0)).numpy(), torch.func.hessian(g)(torch.tensor(x0)).numpy(),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(AF.hessian(g, t(x0)).numpy(),
                               torch.autograd.functional.hessian(g, torch.tensor(x0)).numpy(), rtol=1e-12, atol=1e-14)
