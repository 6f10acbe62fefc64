"""Forward-mode AD (mg.autograd.forward_ad): PyTorch's dual-tensor API, tangents through in-place
ops, views and backward, and custom Functions' jvp. Every registry op's JVP against central finite
differences and the transpose identity <u, J v> == <J^T u, v>, on every sample: test_jvp_rules.py;
nested levels (forward-over-forward and the rest): test_nested_forward_mode.py."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import forward_ad as fwAD


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
