"""Forward-mode AD (mg.autograd.forward_ad): PyTorch's dual-tensor API and, for every op in the
registry, its JVP against central finite differences and the transpose identity
<u, J v> == <J^T u, v> with the existing VJP (float64, random u and v, broadcasting samples)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import forward_ad as fwAD
from minigrad.testing import op_db
from minigrad.testing.opinfo import make_args, rebuild


def t(a):
    return mg.tensor(np.array(a, dtype=np.float64))


def test_dual_api_semantics():
    x, v = t([1.0, 2.0]), t([0.5, -1.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        p, tan = fwAD.unpack_dual(d * 3)
        np.testing.assert_array_equal(p.numpy(), [3.0, 6.0])
        np.testing.assert_array_equal(tan.numpy(), [1.5, -3.0])
        assert fwAD.unpack_dual(x).tangent is None          # the primal itself carries nothing
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, t([1.0]))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(mg.tensor([1, 2]), t([1.0, 1.0]))
    assert fwAD.unpack_dual(d).tangent is None              # the level is closed
    with pytest.raises(RuntimeError, match="no dual level"):
        fwAD.make_dual(x, v)


def test_tangents_flow_through_in_place_ops_views_and_backward():
    x, v = t([1.0, 2.0, 3.0]), t([1.0, 1.0, 1.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        y = d * 2
        y.add_(d)                                           # in place: tangent 2v + v
        np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), [3.0, 3.0, 3.0])
        z = y[1:] * y[1:]                                   # a view
        np.testing.assert_array_equal(fwAD.unpack_dual(z).tangent.numpy(), [2 * 6 * 3, 2 * 9 * 3])
    # forward-over-reverse: the tangent of a gradient is a Hessian-vector product
    w = t([0.5, 1.5])
    with fwAD.dual_level():
        dw = fwAD.make_dual(w, t([1.0, 0.0]))
        leaf = dw.detach().requires_grad_(True)
        leaf._fw = dict(dw._fw)
        (g,) = mg.autograd.grad((leaf ** 3).sum(), leaf, create_graph=True)
        np.testing.assert_allclose(fwAD.unpack_dual(g).tangent.detach().numpy(), [6 * 0.5, 0.0])


def test_custom_function_needs_a_jvp_and_can_define_one():
    class NoJvp(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class WithJvp(NoJvp):
        @staticmethod
        def jvp(ctx, tx):
            return tx * 2

    with fwAD.dual_level():
        d = fwAD.make_dual(t([1.0]), t([1.0]))
        with pytest.raises(RuntimeError, match="custom Function NoJvp does not define jvp"):
            NoJvp.apply(d)
        assert fwAD.unpack_dual(WithJvp.apply(d)).tangent.item() == 2.0


def _cases():
    out = []
    for info in op_db:
        if not info.supports_grad or info.kind != "op":
            continue
        for i, s in enumerate(info.samples()):
            if s.kink:
                continue
            out.append(pytest.param(info, i, id=f"{info.full_name}-{s.name}-{i}"))
    return out


def _float_out(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, mg.Tensor) and o.dtype.kind == "f"]


@pytest.mark.parametrize("info,i", _cases())
def test_jvp_matches_finite_differences_and_the_vjp(info, i):
    s = info.samples()[i]
    args, kwargs, leaves = make_args(s, lambda a, rg: mg.tensor(np.array(a)), True)
    floats = [j for j, a in enumerate(s.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not floats:
        pytest.skip("no float input")
    build = rebuild(s, leaves, lambda a: mg.tensor(np.array(a)))
    xs = [mg.tensor(np.array(s.args[j])) for j in floats]
    rng = np.random.default_rng(7)
    vs = [rng.standard_normal(x.shape) for x in xs]

    def f(*ys):
        return info.op(*build(*ys), **kwargs)

    base = _float_out(f(*xs))
    if not base or any(o.numel() == 0 for o in base) or all(x.numel() == 0 for x in xs):
        pytest.skip("no non-empty float output")
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, mg.tensor(v)) for x, v in zip(xs, vs)]
        outs = _float_out(f(*duals))
        jvps = [fwAD.unpack_dual(o).tangent for o in outs]
    jvps = [np.zeros(o.shape) if j is None else j.numpy() for o, j in zip(outs, jvps)]
    eps = 1e-6
    plus = _float_out(f(*[mg.tensor(x.numpy() + eps * v) for x, v in zip(xs, vs)]))
    minus = _float_out(f(*[mg.tensor(x.numpy() - eps * v) for x, v in zip(xs, vs)]))
    fd_ok = "gradcheck" not in info.skips  # the registry's reason finite differences do not apply
    for j, p, m in zip(jvps, plus, minus):
        if not fd_ok or p.dtype != mg.float64:  # a float32 round trip cannot resolve a 1e-6 step
            continue
        np.testing.assert_allclose(j, (p.numpy() - m.numpy()) / (2 * eps), rtol=1e-4, atol=1e-6,
                                   err_msg=f"{info}: JVP vs central differences")
    # <u, J v> == <J^T u, v>
    ls = [mg.tensor(x.numpy(), requires_grad=True) for x in xs]
    routs = _float_out(f(*ls))
    us = [rng.standard_normal(o.shape) for o in routs]
    diff = [(o, u) for o, u in zip(routs, us) if o.requires_grad]
    if not diff:
        return
    if "padding_idx" in info.full_name:  # PyTorch's backward drops the padding row, its JVP does not
        return
    gs = mg.autograd.grad([o for o, _ in diff], ls, [mg.tensor(u) for _, u in diff], allow_unused=True)
    lhs = sum(np.sum(u * j) for (o, u), j in zip(diff, [jv for o, jv in zip(routs, jvps) if o.requires_grad]))
    rhs = sum(0.0 if g is None else np.sum(g.numpy() * v) for g, v in zip(gs, vs))
    # exact to float64 rounding, except through the cast's float32 round trip (u and v are each
    # rounded to float32 on one side of the identity: float32's epsilon times the terms' size)
    tol = 1e-8 if fd_ok else 4 * float(np.finfo(np.float32).eps) * sum(np.abs(u).sum() for _, u in diff) * max(
        np.abs(v).max() for v in vs)
    assert abs(lhs - rhs) <= tol * max(1.0, abs(lhs)), f"{info}: <u, Jv> = {lhs} but <J^T u, v> = {rhs}"
