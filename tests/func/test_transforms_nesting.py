"""mg.func transforms as torch.func has them: pytrees in every transform (argnums, Jacobians with the
output's structure outside and the input's inside, vjp_fn and jvp on pytrees), results connected to
the outer graph they depend on (closed-over tensors) and detached otherwise, and no perturbation
confusion when transforms nest. Against hand-derived values (float64), and against torch.func
where torch is installed."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import func as MF

rng = np.random.default_rng(7)


def t(a, requires_grad=False):
    return mg.tensor(np.array(a, dtype=np.float64), requires_grad=requires_grad)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a.numpy() if isinstance(a, mg.Tensor) else a),
                               np.asarray(b), rtol=1e-12, atol=1e-12)


def same_tree(mine, ref, conv=lambda v: v):
    """mine and ref have the same structure (types, keys) and leaves equal to rounding."""
    if isinstance(ref, dict):
        assert isinstance(mine, dict) and list(mine) == list(ref), (type(mine), ref.keys())
        for k in ref:
            same_tree(mine[k], ref[k], conv)
    elif isinstance(ref, (tuple, list)):
        assert type(mine) is type(ref) and len(mine) == len(ref), (type(mine), type(ref))
        for m, r in zip(mine, ref):
            same_tree(m, r, conv)
    else:
        assert isinstance(mine, mg.Tensor), type(mine)
        r = conv(ref)
        assert tuple(mine.shape) == tuple(r.shape)
        np.testing.assert_allclose(mine.numpy(), r, rtol=1e-12, atol=1e-13)


def tnp(x):
    return x.detach().numpy()


# -- a function of pytrees, with its Jacobians derived by hand ------------------------------------------
U, V, Z = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(2)


def f_tree(p, z):
    """{'a': u * sum(z), 'b': (v**2, z * sum(u))}"""
    return {"a": p["u"] * z.sum(), "b": (p["v"] ** 2, z * p["u"].sum())}


def hand_jacobians():
    """J[out][argnum][leaf] for f_tree at (U, V), Z."""
    return {
        "a": ({"u": Z.sum() * np.eye(3), "v": np.zeros((3, 2))}, np.outer(U, np.ones(2))),
        "b": (({"u": np.zeros((2, 3)), "v": np.diag(2 * V)}, np.zeros((2, 2))),
              ({"u": np.outer(Z, np.ones(3)), "v": np.zeros((2, 2))}, U.sum() * np.eye(2))),
    }


def params():
    return {"u": t(U), "v": t(V)}


@pytest.mark.parametrize("jac", [MF.jacrev, MF.jacfwd])
def test_jacobian_of_pytrees_has_output_structure_outside_and_input_structure_inside(jac):
    hand = hand_jacobians()
    J = jac(f_tree, argnums=(0, 1))(params(), t(Z))
    same_tree(J, hand, np.asarray)
    J0 = jac(f_tree)(params(), t(Z))  # an int argnums: the input's structure itself, not a 1-tuple
    same_tree(J0, {"a": hand["a"][0], "b": (hand["b"][0][0], hand["b"][1][0])}, np.asarray)
    J1 = jac(f_tree, argnums=1)(params(), t(Z))
    same_tree(J1, {"a": hand["a"][1], "b": (hand["b"][0][1], hand["b"][1][1])}, np.asarray)


def test_hessian_of_a_pytree_is_nested_by_input_structure_twice():
    # s(p) = sum(u^2) * sum(v): d2s/du2 = 2 sum(v) I, d2s/dudv = 2u 1^T, d2s/dv2 = 0
    H = MF.hessian(lambda p: (p["u"] ** 2).sum() * p["v"].sum())(params())
    same_tree(H, {"u": {"u": 2 * V.sum() * np.eye(3), "v": np.outer(2 * U, np.ones(2))},
                  "v": {"u": np.outer(np.ones(2), 2 * U), "v": np.zeros((2, 2))}}, np.asarray)


def test_vjp_takes_and_returns_pytrees():
    out, vjp_fn = MF.vjp(f_tree, params(), t(Z))
    same_tree(out, {"a": U * Z.sum(), "b": (V ** 2, Z * U.sum())}, np.asarray)
    ca, cb0, cb1 = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(2)
    got = vjp_fn({"a": t(ca), "b": (t(cb0), t(cb1))})
    hand = ({"u": ca * Z.sum() + cb1 @ Z, "v": 2 * V * cb0}, np.full(2, ca @ U) + cb1 * U.sum())
    same_tree(got, hand, np.asarray)
    # the dict's keys in another order are the same structure
    same_tree(vjp_fn({"b": (t(cb0), t(cb1)), "a": t(ca)}), hand, np.asarray)
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        vjp_fn({"a": t(ca), "b": [t(cb0), t(cb1)]})  # a list where the output has a tuple
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        vjp_fn(t(ca))


def test_jvp_takes_tuples_of_pytrees():
    tu, tv, tz = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(2)
    out, jv = MF.jvp(f_tree, (params(), t(Z)), ({"u": t(tu), "v": t(tv)}, t(tz)))
    same_tree(out, {"a": U * Z.sum(), "b": (V ** 2, Z * U.sum())}, np.asarray)
    same_tree(jv, {"a": tu * Z.sum() + U * tz.sum(), "b": (2 * V * tv, tz * U.sum() + Z * tu.sum())}, np.asarray)
    with pytest.raises(RuntimeError, match="pytree structure of primals"):
        MF.jvp(f_tree, (params(), t(Z)), ({"u": t(tu)}, t(tz)))


# -- closures: results stay connected to the outer graph they depend on ----------------------------------
def test_grad_of_a_closure_stays_connected_to_the_closed_over_tensor():
    x = t(1.5, requires_grad=True)
    g = MF.grad(lambda y: x * y)(t(2.0))   # g = x
    assert g.requires_grad
    (dx,) = mg.autograd.grad(x * g, x)      # d(x^2)/dx = 2x
    close(dx, 3.0)


def test_closure_at_every_nesting_level():
    # g2 = d2/dy2 (x y^3) = 6 x y, through two grads; d g2/dx = 6 y
    x, y0 = t(0.7, requires_grad=True), 1.3
    g2 = MF.grad(MF.grad(lambda y: x * y ** 3))(t(y0))
    close(g2.detach(), 6 * 0.7 * y0)
    (dx,) = mg.autograd.grad(g2, x)
    close(dx, 6 * y0)
    # a tensor closed over by the inner transform only: d/dy (w * y^2) = 2 w y, then d/dy again = 2 w
    w = t(-0.4, requires_grad=True)
    h = MF.grad(lambda y: MF.grad(lambda z: w * z ** 2)(y))(t(y0))
    close(h.detach(), 2 * -0.4)
    (dw,) = mg.autograd.grad(h, w)
    close(dw, 2.0)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd", "hessian", "vjp", "jvp"])
def test_every_transform_keeps_a_closure_connected(name):
    # f(y) = x * y^2 (x closed over, y = (1.1, -0.3)): J = 2 x diag(y), H of sum = 2 x I
    x = t(0.9, requires_grad=True)
    y = t([1.1, -0.3])
    f = lambda v: x * v ** 2          # noqa: E731
    if name == "jacrev":
        r, d = MF.jacrev(f)(y), 2 * np.diag([1.1, -0.3])
    elif name == "jacfwd":
        r, d = MF.jacfwd(f)(y), 2 * np.diag([1.1, -0.3])
    elif name == "hessian":
        r, d = MF.hessian(lambda v: f(v).sum())(y), 2 * np.eye(2)
    elif name == "vjp":
        _, fn = MF.vjp(f, y)
        (r,), d = fn(t([1.0, 1.0])), 2 * np.array([1.1, -0.3])
    else:
        _, r = MF.jvp(f, (y,), (t([1.0, 1.0]),))
        d = 2 * np.array([1.1, -0.3])
    assert r.requires_grad
    close(r.detach(), 0.9 * d)
    (dx,) = mg.autograd.grad(r.sum(), x)
    close(dx, d.sum())


@pytest.mark.parametrize("name", ["grad", "jacrev", "jacfwd", "hessian", "vjp", "jvp"])
def test_outermost_results_without_outer_dependence_are_detached(name):
    y = t([0.5, 2.0])
    f = lambda v: (v.sin() * v).sum()  # noqa: E731
    if name == "grad":
        rs = [MF.grad(f)(y)]
    elif name == "jacrev":
        rs = [MF.jacrev(lambda v: v.sin() * v)(y)]
    elif name == "jacfwd":
        rs = [MF.jacfwd(lambda v: v.sin() * v)(y)]
    elif name == "hessian":
        rs = [MF.hessian(f)(y)]
    elif name == "vjp":
        out, fn = MF.vjp(f, y)
        rs = [out, *fn(t(1.0))]
    else:
        rs = list(MF.jvp(f, (y,), (t([1.0, 1.0]),)))
    for r in rs:
        assert not r.requires_grad and r.grad_fn is None


def test_an_argument_requiring_grad_keeps_the_result_connected():
    x = t(0.8, requires_grad=True)
    g = MF.grad(lambda y: y ** 3)(x)        # 3 x^2, a function of x
    close(g.detach(), 3 * 0.64)
    (dx,) = mg.autograd.grad(g, x)
    close(dx, 6 * 0.8)


def test_grad_inside_vmap_keeps_a_closure_connected_and_detaches_otherwise():
    # per sample d/dy (x y^2) = 2 x y; the sum's derivative w.r.t. x: 2 sum(y)
    x, ys = t(1.5, requires_grad=True), rng.standard_normal(3)
    g = MF.vmap(MF.grad(lambda y: x * y ** 2))(t(ys))
    close(g.detach(), 3.0 * ys)
    (dx,) = mg.autograd.grad(g.sum(), x)
    close(dx, 2 * ys.sum())
    assert not MF.vmap(MF.grad(lambda y: y ** 2))(t(ys)).requires_grad

# -- perturbation confusion ---------------------------------------------------------------------------
def test_grad_of_grad_has_no_perturbation_confusion():
    # d/dx (x * d/dy (x + y)) at y = x is d/dx (x * 1) = 1 (2 would count the outer x's path as y's)
    close(MF.grad(lambda x: x * MF.grad(lambda y: x + y)(x))(t(2.0)), 1.0)
    # the same with the inner input a pytree and an extra use of x: d/dx (x * d/dy (x y)) = d/dx x^2 = 2x
    close(MF.grad(lambda x: x * MF.grad(lambda p: x * p["y"])({"y": x})["y"])(t(1.7)), 3.4)


def test_jvp_over_grad_and_grad_over_jvp_have_no_perturbation_confusion():
    one = t(1.0)
    _, d = MF.jvp(lambda x: x * MF.grad(lambda y: x + y)(x), (t(2.0),), (one,))
    close(d, 1.0)
    close(MF.grad(lambda x: x * MF.jvp(lambda y: x + y, (x,), (one,))[1])(t(2.0)), 1.0)
    # d/dx (x * d/dy (x * y)) at y = x: 2x
    _, d = MF.jvp(lambda x: x * MF.grad(lambda y: x * y)(x), (t(1.25),), (one,))
    close(d, 2.5)
    close(MF.grad(lambda x: x * MF.jvp(lambda y: x * y, (x,), (one,))[1])(t(1.25)), 2.5)


def test_vjp_and_jacrev_inside_grad_have_no_perturbation_confusion():
    # d/dx (x * J_y(x * y)) at y = x = d/dx x^2 = 2x
    close(MF.grad(lambda x: x * MF.jacrev(lambda y: x * y)(x))(t(0.6)), 1.2)
    close(MF.grad(lambda x: x * MF.vjp(lambda y: x * y, x)[1](t(1.0))[0])(t(0.6)), 1.2)


def test_grad_of_grad_inside_vmap_has_no_perturbation_confusion():
    xs = rng.standard_normal(4)
    r = MF.vmap(MF.grad(lambda x: x * MF.grad(lambda y: x * y)(x)))(t(xs))
    close(r, 2 * xs)


def test_jvp_over_grad_keeps_the_tangent_through_a_detached_result():
    # jvp(grad f) = H v for f = sum(y^3): 6 y * v
    y0, v = rng.standard_normal(3), rng.standard_normal(3)
    g, hv = MF.jvp(MF.grad(lambda y: (y ** 3).sum()), (t(y0),), (t(v),))
    close(g, 3 * y0 ** 2)
    close(hv, 6 * y0 * v)


# -- against torch.func ---------------------------------------------------------------------------------
def _torch():
    return pytest.importorskip("torch")


def test_pytree_transforms_match_torch_func():
    torch = _torch()
    tf = torch.func

    def tparams():
        return {"u": torch.tensor(U), "v": torch.tensor(V)}
    for mine, theirs in [(MF.jacrev, tf.jacrev), (MF.jacfwd, tf.jacfwd)]:
        for argnums in (0, 1, (0, 1), (1, 0)):
            same_tree(mine(f_tree, argnums=argnums)(params(), t(Z)),
                      theirs(f_tree, argnums=argnums)(tparams(), torch.tensor(Z)), tnp)
    s = lambda p: (p["u"] ** 2).sum() * p["v"].sin().sum()  # noqa: E731
    same_tree(MF.hessian(s)(params()), tf.hessian(s)(tparams()), tnp)
    same_tree(MF.grad(s)(params()), tf.grad(s)(tparams()), tnp)
    ca, cb0, cb1 = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(2)
    out, fn = MF.vjp(f_tree, params(), t(Z))
    tout, tfn = tf.vjp(f_tree, tparams(), torch.tensor(Z))
    same_tree(out, tout, tnp)
    same_tree(fn({"a": t(ca), "b": (t(cb0), t(cb1))}),
              tfn({"a": torch.tensor(ca), "b": (torch.tensor(cb0), torch.tensor(cb1))}), tnp)
    tu, tv, tz = rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(2)
    same_tree(MF.jvp(f_tree, (params(), t(Z)), ({"u": t(tu), "v": t(tv)}, t(tz))),
              tf.jvp(f_tree, (tparams(), torch.tensor(Z)),
                     ({"u": torch.tensor(tu), "v": torch.tensor(tv)}, torch.tensor(tz))), tnp)


def test_neural_tangent_kernel_pattern_matches_torch_func():
    torch = _torch()
    net = mg.nn.Sequential(mg.nn.Linear(3, 5), mg.nn.Tanh(), mg.nn.Linear(5, 2)).to(mg.float64)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    ps = {k: v.detach() for k, v in net.named_parameters()}
    tps = {k: torch.tensor(v.numpy()) for k, v in ps.items()}
    x1, x2 = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))

    def fnet_single(p, x):
        return MF.functional_call(net, p, (x.unsqueeze(0),)).squeeze(0)

    def tfnet_single(p, x):
        return torch.func.functional_call(tnet, p, (x.unsqueeze(0),)).squeeze(0)

    jac1 = MF.vmap(MF.jacrev(fnet_single), (None, 0))(ps, t(x1))
    tjac1 = torch.func.vmap(torch.func.jacrev(tfnet_single), (None, 0))(tps, torch.tensor(x1))
    same_tree(jac1, tjac1, tnp)
    assert all(not j.requires_grad for j in jac1.values())
    jac2 = MF.vmap(MF.jacrev(fnet_single), (None, 0))(ps, t(x2))
    # the empirical NTK of the tutorial: sum over parameters of J1 J2^T
    ntk = sum(np.einsum("Naf,Mbf->NMab", jac1[k].numpy().reshape(4, 2, -1), jac2[k].numpy().reshape(3, 2, -1))
              for k in ps)
    tjac2 = torch.func.vmap(torch.func.jacrev(tfnet_single), (None, 0))(tps, torch.tensor(x2))
    tntk = sum(torch.einsum("Naf,Mbf->NMab", tjac1[k].flatten(2), tjac2[k].flatten(2)) for k in tps)
    np.testing.assert_allclose(ntk, tntk.numpy(), rtol=1e-12, atol=1e-13)


def test_closures_and_perturbation_confusion_match_torch_func():
    torch = _torch()
    tf = torch.func
    for lib, F, mk in [(mg, MF, lambda v, rg=False: t(v, rg)),
                       (torch, tf, lambda v, rg=False: torch.tensor(v, dtype=torch.float64, requires_grad=rg))]:
        x = mk(1.5, True)
        g = F.grad(lambda y: x * y)(mk(2.0))
        (dx,) = lib.autograd.grad(x * g, x)
        w = mk(0.3, True)
        h = F.grad(lambda y: F.grad(lambda z: w * z ** 3)(y))(mk(1.2))   # 6 w y
        (dw,) = lib.autograd.grad(h, w)
        pc = F.grad(lambda a: a * F.grad(lambda b: a * b + b.sin())(a))(mk(0.9))
        outer = F.grad(lambda y: (y.sin() * y).sum())(mk([0.2, 0.4]))
        res = [float(dx), float(dw), float(h.detach()), float(pc), bool(outer.requires_grad)]
        if lib is mg:
            mine = res
    np.testing.assert_allclose(mine[:4], res[:4], rtol=1e-12)
    assert mine[4] == res[4]
