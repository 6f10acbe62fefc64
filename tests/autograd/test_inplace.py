"""In-place ops: version counter, saved-tensor checks, leaf rules, gradients through in-place writes."""
import numpy as np
import pytest

import minigrad as mg


def leaf(data):
    return mg.tensor(np.asarray(data, dtype=np.float64), requires_grad=True)


def plain(data):
    return mg.tensor(np.asarray(data, dtype=np.float64))


INPLACE = {
    "add_": lambda t: t.add_(2.0),
    "sub_": lambda t: t.sub_(plain([1.0, 1.0, 1.0])),
    "mul_": lambda t: t.mul_(3.0),
    "div_": lambda t: t.div_(2.0),
    "pow_": lambda t: t.pow_(2),
    "clamp_": lambda t: t.clamp_(min=0.0, max=1.5),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(7.0),
    "copy_": lambda t: t.copy_(plain([9.0, 8.0, 7.0])),
    "masked_fill_": lambda t: t.masked_fill_(mg.tensor(np.array([True, False, True])), -1.0),
    "iadd": lambda t: t.__iadd__(1.0),
    "isub": lambda t: t.__isub__(1.0),
    "imul": lambda t: t.__imul__(2.0),
    "itruediv": lambda t: t.__itruediv__(4.0),
    "setitem": lambda t: t.__setitem__(0, 5.0),
    "setitem_slice": lambda t: t.__setitem__(slice(1, None), plain([1.0, 2.0])),
}

EXPECTED = {
    "add_": [3.0, 4.0, 5.0], "sub_": [0.0, 1.0, 2.0], "mul_": [3.0, 6.0, 9.0], "div_": [0.5, 1.0, 1.5],
    "pow_": [1.0, 4.0, 9.0], "clamp_": [1.0, 1.5, 1.5], "zero_": [0.0, 0.0, 0.0], "fill_": [7.0, 7.0, 7.0],
    "copy_": [9.0, 8.0, 7.0], "masked_fill_": [-1.0, 2.0, -1.0], "iadd": [2.0, 3.0, 4.0],
    "isub": [0.0, 1.0, 2.0], "imul": [2.0, 4.0, 6.0], "itruediv": [0.25, 0.5, 0.75],
    "setitem": [5.0, 2.0, 3.0], "setitem_slice": [1.0, 1.0, 2.0],
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_bumps_version_and_writes_memory(name):
    t = plain([1.0, 2.0, 3.0])
    arr = t.data.numpy()
    v0 = t._version
    out = INPLACE[name](t)
    if name not in ("setitem", "setitem_slice"):
        assert out is t
    assert t._version > v0
    assert t.data.numpy() is arr or np.shares_memory(t.data.numpy(), arr)
    np.testing.assert_allclose(t.data.numpy(), EXPECTED[name])
    np.testing.assert_allclose(arr, EXPECTED[name])


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_on_non_leaf_gradient_matches_out_of_place(name):
    # same op applied to a non-leaf h = x * 1.5: the gradient to x must match an out-of-place version
    xn = np.array([0.4, 1.2, 2.0])
    x = leaf(xn)
    h = x * 1.5
    INPLACE[name](h)
    (h * plain([1.0, 2.0, 3.0])).sum().backward()
    g_inplace = x.grad.data.numpy().copy()

    x2 = leaf(xn)
    ref = plain(xn * 1.5).clone()
    eps = 1e-6
    num = np.zeros(3)
    for k in range(3):
        vals = []
        for s in (eps, -eps):
            p = xn.copy()
            p[k] += s
            t = plain(p * 1.5)
            INPLACE[name](t)
            vals.append((t.data.numpy() * [1.0, 2.0, 3.0]).sum())
        num[k] = (vals[0] - vals[1]) / (2 * eps)
    del x2, ref
    np.testing.assert_allclose(g_inplace, num, rtol=1e-5, atol=1e-6)


def test_views_share_version_counter():
    y = plain([1.0, 2.0, 3.0])
    v = y[1:]
    v0 = y._version
    v.mul_(2)
    assert y._version == v._version > v0
    np.testing.assert_allclose(y.data.numpy(), [1.0, 4.0, 6.0])


# -- saved tensors modified in place -----------------------------------------------------------------------

def test_modifying_saved_input_raises_naming_op():
    a = leaf([1.0, 2.0])
    b = a * 1.0
    c = a * b  # MulBackward0 saves b
    b.add_(1.0)
    with pytest.raises(RuntimeError, match="MulBackward0") as info:
        c.sum().backward()
    assert "inplace" in str(info.value) or "in-place" in str(info.value)


def test_modifying_saved_output_raises_naming_op():
    x = leaf([0.1, 0.2])
    y = x.exp()  # ExpBackward0 saves its output
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="ExpBackward0"):
        y.sum().backward()


@pytest.mark.parametrize("op", ["tanh", "sigmoid"])
def test_modifying_saved_output_of_tanh_sigmoid_raises(op):
    x = leaf([0.1, 0.2])
    y = getattr(x, op)()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=op.capitalize() + "Backward0"):
        y.sum().backward()


def test_modifying_plain_tensor_saved_by_op_raises():
    x = leaf([1.0, 2.0])
    w = plain([3.0, 4.0])
    y = x * w
    w.zero_()
    with pytest.raises(RuntimeError, match="MulBackward0"):
        y.sum().backward()


def test_modifying_through_view_of_saved_tensor_raises():
    x = leaf([1.0, 2.0, 3.0])
    h = x * 1.0
    y = (h * h).sum()
    h[0:1].mul_(2.0)
    with pytest.raises(RuntimeError, match="MulBackward0"):
        y.backward()


def test_modifying_unsaved_tensor_is_fine():
    # AddBackward0 needs neither operand, so modifying h after z = h + 1 is allowed (as PyTorch)
    x = leaf([1.0, 2.0])
    h = x * 2.0
    z = h + 1.0
    h.mul_(10.0)
    (z.sum() + h.sum()).backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [2.0 + 20.0, 2.0 + 20.0])


def test_clone_before_modifying_avoids_error():
    x = leaf([0.1, 0.2])
    y = x.exp()
    y2 = y.clone()
    y2.mul_(2.0)
    (y2.sum() + y.sum()).backward()
    np.testing.assert_allclose(x.grad.data.numpy(), 3 * np.exp(x.data.numpy()))


# -- leaves ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_on_leaf_requiring_grad_raises(name):
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="leaf"):
        INPLACE[name](x)
    np.testing.assert_allclose(x.data.numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_on_leaf_works_under_no_grad(name):
    x = leaf([1.0, 2.0, 3.0])
    with mg.no_grad():
        INPLACE[name](x)
    np.testing.assert_allclose(x.data.numpy(), EXPECTED[name])
    assert x.is_leaf and x.requires_grad and x.grad_fn is None


def test_sgd_style_update_under_no_grad_then_backward_again():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    with mg.no_grad():
        x.sub_(0.1 * x.grad)
    x.grad = None
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), 2 * np.array([0.8, 1.6]))


# -- gradients through in-place writes -----------------------------------------------------------------------------

def test_inplace_non_leaf_grad_chain():
    x = leaf([1.0, 2.0, 3.0])
    h = x * 2.0
    h.mul_(x)      # h = 2 x^2
    h.add_(x)      # h = 2 x^2 + x
    h.pow_(2)      # h = (2 x^2 + x)^2
    h.sum().backward()
    xn = x.data.numpy()
    np.testing.assert_allclose(x.grad.data.numpy(), 2 * (2 * xn ** 2 + xn) * (4 * xn + 1))
    assert h.grad_fn is not None and h.grad_fn.name() == "PowBackward0"


def test_inplace_with_tensor_argument_requiring_grad():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 5.0])
    h = x * 1.0
    h.mul_(w)
    h.sub_(w)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [3.0, 5.0])
    np.testing.assert_allclose(w.grad.data.numpy(), [0.0, 1.0])


def test_inplace_on_plain_tensor_with_grad_argument_joins_graph():
    w = leaf([2.0, 3.0])
    t = plain([1.0, 1.0])
    t.mul_(w)
    assert t.requires_grad and t.grad_fn is not None
    t.sum().backward()
    np.testing.assert_allclose(w.grad.data.numpy(), [1.0, 1.0])


def test_setitem_gradient_flows_to_value_not_overwritten():
    x = leaf([1.0, 2.0, 3.0])
    v = leaf(10.0)
    y = x * 2.0
    y[0] = v
    (y * plain([5.0, 6.0, 7.0])).sum().backward()
    np.testing.assert_allclose(y.data.numpy(), [10.0, 4.0, 6.0])
    np.testing.assert_allclose(x.grad.data.numpy(), [0.0, 12.0, 14.0])
    assert v.grad.item() == pytest.approx(5.0)


def test_setitem_slice_and_mask():
    x = leaf(np.arange(6.0).reshape(2, 3))
    v = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    y[1] = v * 2
    y[y > 4] = 0.0
    (y * y).sum().backward()
    # y[0] = x[0] (values 0, 1, 2 not > 4); y[1] = 2v = 2, 4, 6 -> 6 zeroed
    np.testing.assert_allclose(y.data.numpy(), [[0.0, 1.0, 2.0], [2.0, 4.0, 0.0]])
    np.testing.assert_allclose(x.grad.data.numpy(), [[0.0, 2.0, 4.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(v.grad.data.numpy(), [8.0, 16.0, 0.0])


def test_setitem_on_plain_tensor_with_grad_value():
    buf = mg.zeros(3, dtype=mg.float64)
    v = leaf([4.0, 5.0])
    buf[1:] = v
    assert buf.requires_grad
    (buf * plain([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(v.grad.data.numpy(), [2.0, 3.0])


def test_inplace_through_basic_slice_view_of_non_leaf():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    v = y[1:]
    v.mul_(2)
    np.testing.assert_allclose(y.data.numpy(), [1.0, 4.0, 6.0])
    np.testing.assert_allclose(v.data.numpy(), [4.0, 6.0])
    (y * plain([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [1.0, 20.0, 200.0])


def test_inplace_through_view_then_use_view():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 1.0
    v = y[::2]
    v.add_(x[1::2])  # y = [x0 + x1, x1, x2 + x3, x3]
    (v * plain([1.0, 10.0])).sum().backward()
    np.testing.assert_allclose(v.data.numpy(), [3.0, 7.0])
    np.testing.assert_allclose(x.grad.data.numpy(), [1.0, 1.0, 10.0, 10.0])


def test_inplace_on_view_of_leaf_raises():
    x = leaf([1.0, 2.0, 3.0])
    v = x[1:]
    with pytest.raises(RuntimeError):
        v.mul_(2)


def test_inplace_dtype_and_shape_errors():
    t = mg.tensor([1, 2, 3])
    with pytest.raises(RuntimeError):
        t.add_(0.5)  # float result can't be written into int64
    f = plain([1.0, 2.0])
    with pytest.raises(RuntimeError):
        f.add_(plain([[1.0, 2.0], [3.0, 4.0]]))  # broadcast to a bigger shape


def test_setitem_augmented_assignment_slice_on_non_leaf():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    y[1:] *= 2
    y.sum().backward()
    np.testing.assert_allclose(y.data.numpy(), [1.0, 4.0, 6.0])
    np.testing.assert_allclose(x.grad.data.numpy(), [1.0, 2.0, 2.0])


def test_integer_index_is_a_view():
    t = plain([1.0, 2.0, 3.0])
    v = t[0]
    v.add_(10.0)
    np.testing.assert_allclose(t.data.numpy(), [11.0, 2.0, 3.0])


def test_setitem_augmented_assignment_on_non_leaf():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    y[1:] *= 2
    y[0] += x[1]
    y.sum().backward()
    np.testing.assert_allclose(y.data.numpy(), [3.0, 4.0, 6.0])
    np.testing.assert_allclose(x.grad.data.numpy(), [1.0, 3.0, 2.0])


def test_view_inplace_with_tensor_requiring_grad():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    v = y[1:]
    v.mul_(x[1:])
    (y * plain([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [1.0, 40.0, 600.0])


def test_backward_from_modified_view():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    v = y[1:]
    v.mul_(2)
    v.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [0.0, 2.0, 2.0])


def test_view_sees_later_inplace_on_base():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    v = y[1:]
    y.mul_(2)
    np.testing.assert_allclose(v.data.numpy(), [4.0, 6.0])
    v.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [0.0, 2.0, 2.0])


def test_retain_grad_follows_inplace():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    y.retain_grad()
    y.mul_(2)
    y.sum().backward()
    np.testing.assert_allclose(y.grad.data.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(x.grad.data.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("make_view", [lambda y: y.T, lambda y: y.reshape(4), lambda y: y[1:][1:]])
def test_inplace_on_other_views_is_correct_or_refused(make_view):
    # either the right gradient or a clear RuntimeError: never a silently wrong gradient
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * 1.0
    v = make_view(y)
    try:
        v.mul_(2.0)
    except RuntimeError as e:
        assert "view" in str(e)
        return
    expected = np.where(np.isclose(y.data.numpy(), 2 * x.data.numpy()), 2.0, 1.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), expected)


@pytest.mark.parametrize("modify", [
    lambda x: x.add_(1.0), lambda x: x.__setitem__(0, 5.0), lambda x: x.copy_(plain([9.0, 9.0])),
    lambda x: x.fill_(3.0),
])
def test_leaf_modified_under_no_grad_after_use_raises(modify):
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    with mg.no_grad():
        modify(x)
    with pytest.raises(RuntimeError, match="MulBackward0"):
        y.backward()


def test_view_used_by_a_no_grad_op_after_inplace_on_base_keeps_its_graph():
    # a stale view is re-sliced only when an op records it: a no-grad op (here two-argument, the
    # path add/mul/sub take) must leave its grad_fn as it is, so a later recorded use still sees
    # the in-place write
    x = mg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    base = x * 1.0
    v = base[:2]
    base.mul_(2.0)
    with mg.no_grad():
        _ = v * v
        _ = v + 1.0
    assert v.requires_grad and v.grad_fn is not None
    (v * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0, 0.0, 0.0])
