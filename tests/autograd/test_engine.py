"""The backward engine: worked example, graph structure, backward/grad semantics, memory, depth."""
import gc
import inspect
import sys
import warnings
import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import AccumulateGrad
from helpers import ops_seen


def leaf(data, dtype=np.float64):
    return mg.tensor(np.asarray(data, dtype=dtype), requires_grad=True)


# -- the worked example -------------------------------------------------------------------------------

def test_worked_example_values_and_gradients():
    a = mg.tensor(2.0, requires_grad=True)
    b = mg.tensor(3.0, requires_grad=True)
    c = mg.tensor(4.0, requires_grad=True)
    y = (a + b) * c
    y.backward()
    assert y.item() == 20.0
    assert (a.grad.item(), b.grad.item(), c.grad.item()) == (4.0, 4.0, 5.0)
    assert a.grad.dtype == mg.float32


def test_grad_fn_name_and_next_functions():
    a, b, c = (mg.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    s = a + b
    y = s * c
    assert y.grad_fn.name() == "MulBackward0"
    (n0, i0), (n1, i1) = y.grad_fn.next_functions
    assert n0 is s.grad_fn and n0.name() == "AddBackward0" and i0 == 0
    assert isinstance(n1, AccumulateGrad) and n1.name() == "AccumulateGrad" and i1 == 0
    assert n1.variable is c
    leaves = [n for n, _ in s.grad_fn.next_functions]
    assert all(isinstance(n, AccumulateGrad) for n in leaves)
    assert [n.variable for n in leaves] == [a, b]
    assert a.grad_fn is None and a.is_leaf and not y.is_leaf


def test_next_functions_none_for_input_without_grad():
    a = leaf([1.0, 2.0])
    k = mg.tensor(np.array([3.0, 4.0]))
    y = a * k
    (n0, _), (n1, _) = y.grad_fn.next_functions
    assert isinstance(n0, AccumulateGrad)
    assert n1 is None


def test_same_leaf_shares_accumulate_grad_node():
    a = leaf([1.0])
    y = a * a
    (n0, _), (n1, _) = y.grad_fn.next_functions
    assert n0 is n1


# -- backward() arguments ----------------------------------------------------------------------------

def test_backward_with_gradient_argument():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    y.backward(gradient=mg.tensor(np.array([1.0, 10.0, 100.0])))
    np.testing.assert_allclose(x.grad.data.numpy(), [2.0, 40.0, 600.0])


def test_non_scalar_backward_without_gradient_raises():
    x = leaf([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()


def test_one_element_non_scalar_backward_allowed():
    x = leaf([3.0])
    (x * x).backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [6.0])


def test_backward_gradient_shape_mismatch_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError):
        (x * 2).backward(gradient=mg.tensor(np.ones(3)))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError):
        mg.tensor([1.0]).sum().backward()


def test_second_backward_through_freed_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_allows_second_backward_and_accumulates():
    x = leaf([1.0, 2.0])
    y = (x * x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.data.numpy(), [3.0, 12.0])
    y.backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [6.0, 24.0])


def test_grad_accumulates_across_backward_calls():
    x = leaf([1.0, -2.0])
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [3.0 + 2.0, 3.0 - 4.0])
    x.grad = None
    (x * 5).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [5.0, 5.0])


def test_accumulated_grad_does_not_alias_seed_gradient():
    x = leaf([1.0, 2.0])
    seed = mg.tensor(np.array([1.0, 1.0]))
    (x + 0).backward(seed)
    (x + 0).backward(seed)
    np.testing.assert_allclose(x.grad.data.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(seed.data.numpy(), [1.0, 1.0])


def test_grad_of_tensor_used_twice_is_summed():
    x = leaf(3.0)
    y = x * x + x
    y.backward()
    assert x.grad.item() == pytest.approx(7.0)


def test_diamond_graph():
    x = leaf(2.0)
    a = x * 3
    b = x.exp()
    y = a * b  # 3x e^x -> 3 e^x (1 + x)
    y.backward()
    assert x.grad.item() == pytest.approx(3 * np.exp(2.0) * 3.0)


# -- non-leaf .grad and retain_grad ------------------------------------------------------------------

def test_non_leaf_grad_is_none_and_warns():
    x = leaf([1.0, 2.0])
    h = x * 2
    h.sum().backward()
    with pytest.warns(UserWarning, match="retain_grad"):
        assert h.grad is None


def test_leaf_grad_does_not_warn():
    x = leaf([1.0, 2.0])
    (x * 2).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None


def test_retain_grad_populates_non_leaf_grad_without_warning():
    x = leaf([1.0, 2.0])
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(h.grad.data.numpy(), 2 * h.data.numpy())
    np.testing.assert_allclose(x.grad.data.numpy(), 8 * x.data.numpy())


# -- broadcasting of gradients -------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [((2, 1), (1, 3)), ((4, 2, 3), (3,)), ((5, 1, 4), (1, 1, 4))])
@pytest.mark.parametrize("op", ["add", "mul"])
def test_gradient_sums_back_to_input_shape(sa, sb, op):
    rng = np.random.default_rng(0)
    an, bn = rng.standard_normal(sa), rng.standard_normal(sb)
    a, b = leaf(an), leaf(bn)
    out = a + b if op == "add" else a * b
    assert out.shape == np.broadcast_shapes(sa, sb)
    out.sum().backward()
    assert a.grad.shape == sa and b.grad.shape == sb
    full = np.broadcast_shapes(sa, sb)
    if op == "add":
        ga, gb = np.ones(full), np.ones(full)
    else:
        ga, gb = np.broadcast_to(bn, full), np.broadcast_to(an, full)
    lead_a = tuple(range(len(full) - len(sa)))
    lead_b = tuple(range(len(full) - len(sb)))
    exp_a = ga.sum(lead_a).sum(tuple(i for i, s in enumerate(sa) if s == 1), keepdims=True)
    exp_b = gb.sum(lead_b).sum(tuple(i for i, s in enumerate(sb) if s == 1), keepdims=True)
    np.testing.assert_allclose(a.grad.data.numpy(), exp_a.reshape(sa))
    np.testing.assert_allclose(b.grad.data.numpy(), exp_b.reshape(sb))


@pytest.mark.parametrize("sa,sb", [((2, 1), (1, 3)), ((4, 2, 3), (3,)), ((5, 1, 4), (1, 1, 4))])
def test_broadcast_gradcheck(sa, sb):
    rng = np.random.default_rng(1)
    a, b = leaf(rng.standard_normal(sa)), leaf(rng.standard_normal(sb))
    assert mg.autograd.gradcheck(lambda x, y: (x * y + x).tanh(), (a, b))


def test_gradient_reaches_leaf_with_leaf_dtype():
    x32 = mg.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    w64 = mg.tensor(np.array([3.0, 4.0], dtype=np.float64), requires_grad=True)
    y = (x32.double() * w64).sum()
    y.backward()
    assert x32.grad.dtype == mg.float32 and x32.grad.shape == (2,)
    assert w64.grad.dtype == mg.float64
    np.testing.assert_allclose(x32.grad.data.numpy(), [3.0, 4.0])


def test_float32_leaf_grad_is_float32():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * 2.5).sum().backward()
    assert x.grad.dtype == mg.float32


# -- depth and memory -----------------------------------------------------------------------------------

def test_deep_chain_no_recursion_error():
    x = mg.tensor([0.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    # iterative, not recursive: backward of a 100,000-deep chain runs within 300 frames of here
    # (was a timed assertion, which failed on a loaded machine without saying anything about depth)
    depth = len(inspect.stack(0))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 300)
    try:
        y.sum().backward()
    finally:
        sys.setrecursionlimit(limit)
    assert y.item() == 100_000.0
    assert x.grad.item() == 1.0


def _build(x):
    h1 = x.exp()
    h2 = h1.tanh()
    h3 = (h2 * x).sigmoid()
    y = (h3 * h1).sum()
    return h1, h2, h3, y


@pytest.mark.parametrize("do_backward", [True, False])
def test_no_reference_cycles_keep_graph_alive(do_backward):
    x = leaf([0.1, -0.2, 0.3])
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        h1, h2, h3, y = _build(x)
        refs = [weakref.ref(h1), weakref.ref(h2), weakref.ref(h3), weakref.ref(y.grad_fn),
                weakref.ref(h2.grad_fn), weakref.ref(h3.grad_fn)]
        if do_backward:
            y.backward()
        del h1, h2, h3, y
        alive = [r() is not None for r in refs]
        assert not any(alive), alive
    finally:
        if was_enabled:
            gc.enable()
    if do_backward:
        assert x.grad is not None


def test_grad_fn_of_output_dies_with_output_gc_disabled():
    x = leaf([1.0, 2.0])
    gc.disable()
    try:
        y = x.exp()
        r = weakref.ref(y.grad_fn)
        del y
        assert r() is None
    finally:
        gc.enable()


def test_saved_tensors_freed_after_backward():
    x = leaf([0.5, 1.5])
    h = x * 2.0
    arr = h.data.numpy()
    ref = weakref.ref(arr)
    y = (h.exp() * h).sum()  # MulBackward saves h (and exp's output)
    del arr
    gc.disable()
    try:
        hr = weakref.ref(h)
        del h
        assert hr() is not None  # still saved by the graph
        y.backward()
        assert hr() is None and ref() is None
    finally:
        gc.enable()


def test_saved_tensors_kept_with_retain_graph():
    x = leaf([0.5, 1.5])
    h = x * 2.0
    y = (h.exp() * h).sum()
    gc.disable()
    try:
        hr = weakref.ref(h)
        del h
        y.backward(retain_graph=True)
        assert hr() is not None
        g1 = x.grad.data.numpy().copy()
        y.backward()
        np.testing.assert_allclose(x.grad.data.numpy(), 2 * g1)
        assert hr() is None
    finally:
        gc.enable()


def test_leaf_does_not_keep_graph_alive():
    x = leaf([1.0])
    gc.disable()
    try:
        y = x.sin() * 2
        r = weakref.ref(y.grad_fn)
        y.backward()
        del y
        assert r() is None
        assert x.grad is not None
    finally:
        gc.enable()


# -- mg.autograd.grad ----------------------------------------------------------------------------------

def test_autograd_grad_returns_tuple_and_leaves_grad_untouched():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (x * w).sum()
    gx, gw = mg.autograd.grad(y, [x, w])
    np.testing.assert_allclose(gx.data.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gw.data.numpy(), [1.0, 2.0])
    assert x.grad is None and w.grad is None
    assert not gx.requires_grad


def test_autograd_grad_does_not_touch_existing_grad():
    x = leaf([1.0, 2.0])
    (x * 2).sum().backward()
    before = x.grad.data.numpy().copy()
    (g,) = mg.autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(g.data.numpy(), [2.0, 4.0])
    np.testing.assert_allclose(x.grad.data.numpy(), before)


def test_autograd_grad_single_input_tensor():
    x = leaf(3.0)
    out = mg.autograd.grad(x * x, x)
    assert isinstance(out, tuple) and len(out) == 1
    assert out[0].item() == pytest.approx(6.0)


def test_autograd_grad_with_grad_outputs():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    (g,) = mg.autograd.grad(y, x, grad_outputs=mg.tensor(np.array([1.0, 0.5, 0.0])))
    np.testing.assert_allclose(g.data.numpy(), [2.0, 2.0, 0.0])


def test_autograd_grad_multiple_outputs_summed():
    x = leaf([1.0, 2.0])
    y1, y2 = (x * 2).sum(), (x * x).sum()
    (g,) = mg.autograd.grad([y1, y2], [x])
    np.testing.assert_allclose(g.data.numpy(), [4.0, 6.0])


def test_autograd_grad_non_scalar_without_grad_outputs_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        mg.autograd.grad(x * 2, x)


def test_autograd_grad_frees_graph_unless_retained():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    mg.autograd.grad(y, x, retain_graph=True)
    (g,) = mg.autograd.grad(y, x)
    np.testing.assert_allclose(g.data.numpy(), np.exp(x.data.numpy()) * (1 + x.data.numpy()))
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        mg.autograd.grad(y, x)


def test_autograd_grad_allow_unused():
    x, z = leaf([1.0]), leaf([2.0])
    y = (x * 3).sum()
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        mg.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = mg.autograd.grad(y, [x, z], allow_unused=True)
    np.testing.assert_allclose(gx.data.numpy(), [3.0])
    assert gz is None


def test_autograd_grad_input_not_requiring_grad_raises():
    x = leaf([1.0])
    c = mg.tensor(np.array([2.0]))
    with pytest.raises(RuntimeError):
        mg.autograd.grad((x * c).sum(), [c])


def test_autograd_grad_wrt_non_leaf():
    x = leaf([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    (gh,) = mg.autograd.grad(y, h)
    np.testing.assert_allclose(gh.data.numpy(), 2 * h.data.numpy())


# -- higher order ----------------------------------------------------------------------------------------

def test_create_graph_gradient_is_differentiable():
    x = leaf([2.0])
    (g,) = mg.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(g.data.numpy(), [12.0])
    (gg,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.data.numpy(), [12.0])


def test_backward_create_graph_then_backward_on_grad():
    x = leaf([1.5])
    y = (x ** 3).sum()
    y.backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [6 * 1.5])


def _f_and_hessian(xn):
    # f(x) = sum(x**3) / 3 + x0 * x1 * x2 + sum(sin(x));  H = diag(2x - sin x) + offdiag(x_k)
    x0, x1, x2 = xn
    H = np.diag(2 * xn - np.sin(xn))
    H[0, 1] = H[1, 0] = x2
    H[0, 2] = H[2, 0] = x1
    H[1, 2] = H[2, 1] = x0
    return H


def _f(x):
    return (x ** 3).sum() / 3 + x[0] * x[1] * x[2] + x.sin().sum()


def test_hessian_vector_product_matches_analytic():
    xn = np.array([0.5, -1.2, 2.0])
    vn = np.array([1.0, 0.3, -0.7])
    x = leaf(xn)
    (g,) = mg.autograd.grad(_f(x), x, create_graph=True)
    (hv,) = mg.autograd.grad((g * mg.tensor(vn)).sum(), x)
    np.testing.assert_allclose(hv.data.numpy(), _f_and_hessian(xn) @ vn, rtol=1e-10)


def test_full_hessian_rows():
    xn = np.array([0.1, 0.7, -0.4])
    x = leaf(xn)
    (g,) = mg.autograd.grad(_f(x), x, create_graph=True)
    rows = [mg.autograd.grad(g[i], x, retain_graph=True)[0].data.numpy() for i in range(3)]
    np.testing.assert_allclose(np.stack(rows), _f_and_hessian(xn), rtol=1e-10)


def test_hvp_through_matmul_and_tanh():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 3))
    xn, vn = rng.standard_normal(3), rng.standard_normal(3)
    x = leaf(xn)
    # f = sum(tanh(A x));  H = A^T diag(-2 t (1 - t^2)) A with t = tanh(A x)
    f = (mg.tensor(A) @ x).tanh().sum()
    (g,) = mg.autograd.grad(f, x, create_graph=True)
    (hv,) = mg.autograd.grad(g, x, grad_outputs=mg.tensor(vn))
    t = np.tanh(A @ xn)
    H = A.T @ np.diag(-2 * t * (1 - t ** 2)) @ A
    np.testing.assert_allclose(hv.data.numpy(), H @ vn, rtol=1e-10)


def test_gradient_penalty():
    # loss = ||d/dx sum(w * x**2)||^2 = sum((2 w x)^2);  d loss / d w = 8 w x^2
    xn, wn = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -1.0])
    x, w = leaf(xn), leaf(wn)
    out = (w * x * x).sum()
    (gx,) = mg.autograd.grad(out, x, create_graph=True)
    penalty = (gx * gx).sum()
    penalty.backward()
    np.testing.assert_allclose(w.grad.data.numpy(), 8 * wn * xn ** 2)
    np.testing.assert_allclose(x.grad.data.numpy(), 8 * wn ** 2 * xn)


def test_gradient_penalty_through_norm():
    rng = np.random.default_rng(2)
    x = leaf(rng.standard_normal((4, 3)))
    W = leaf(rng.standard_normal((3, 2)))
    out = (x @ W).tanh().sum()
    (gx,) = mg.autograd.grad(out, x, create_graph=True)
    loss = ((gx.norm(dim=1) - 1) ** 2).mean()
    loss.backward()
    assert W.grad is not None and W.grad.shape == (3, 2)

    # finite-difference check of d loss / d W
    Wn = W.data.numpy().copy()

    def loss_np(Wm):
        t = np.tanh(x.data.numpy() @ Wm)
        g = (1 - t ** 2) @ Wm.T
        return ((np.linalg.norm(g, axis=1) - 1) ** 2).mean()
    num = np.zeros_like(Wn)
    for idx in np.ndindex(*Wn.shape):
        e = np.zeros_like(Wn)
        e[idx] = 1e-6
        num[idx] = (loss_np(Wn + e) - loss_np(Wn - e)) / 2e-6
    np.testing.assert_allclose(W.grad.data.numpy(), num, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("shape", [(), (1,), (2, 2)])
def test_third_derivative_x4_and_sin(shape):
    xn = np.full(shape, 1.3)
    x = leaf(xn)
    y = (x ** 4 + x.sin()).sum()
    (d1,) = mg.autograd.grad(y, x, create_graph=True)
    (d2,) = mg.autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = mg.autograd.grad(d2.sum(), x)
    np.testing.assert_allclose(d1.data.numpy(), 4 * xn ** 3 + np.cos(xn))
    np.testing.assert_allclose(d2.data.numpy(), 12 * xn ** 2 - np.sin(xn))
    np.testing.assert_allclose(d3.data.numpy(), 24 * xn - np.cos(xn))


@pytest.mark.parametrize("shape", [(), (1,)])
def test_second_derivative_of_op_saving_output(shape):
    # d2/dx2 [exp(x) * x] = exp(x) (x + 2); exp saves its output
    xn = np.full(shape, 0.5)
    x = leaf(xn)
    (g,) = mg.autograd.grad((x.exp() * x).sum(), x, create_graph=True)
    (gg,) = mg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.data.numpy(), np.exp(xn) * (xn + 2))


# -- hooks --------------------------------------------------------------------------------------------------

def test_register_hook_on_leaf_sees_gradient():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.data.numpy().copy()))
    (x * 3).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], [3.0, 3.0])
    np.testing.assert_allclose(x.grad.data.numpy(), [3.0, 3.0])


def test_leaf_hook_can_replace_gradient():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [30.0, 30.0])


def test_non_leaf_hook_replaces_gradient_flowing_upstream():
    x = leaf([1.0, 2.0])
    h = x * 2
    seen = []

    def hook(g):
        seen.append(g.data.numpy().copy())
        return g * 0.5
    h.register_hook(hook)
    (h * h).sum().backward()
    np.testing.assert_allclose(seen[0], 2 * h.data.numpy())
    np.testing.assert_allclose(x.grad.data.numpy(), 0.5 * 2 * h.data.numpy() * 2)


def test_hook_returning_none_keeps_gradient():
    x = leaf([1.0])
    h = x * 4
    h.register_hook(lambda g: None)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [4.0])


def test_hook_handle_remove():
    x = leaf([1.0])
    handle = x.register_hook(lambda g: g * 100)
    h2 = (x * 1.0)
    handle2 = h2.register_hook(lambda g: g * 7)
    handle.remove()
    handle2.remove()
    h2.sum().backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [1.0])


def test_hooks_compose_in_registration_order():
    x = leaf([1.0])
    order = []
    x.register_hook(lambda g: (order.append("a"), g + 1)[1])
    x.register_hook(lambda g: (order.append("b"), g * 2)[1])
    (x * 3).sum().backward()
    assert order == ["a", "b"]
    np.testing.assert_allclose(x.grad.data.numpy(), [8.0])


def test_non_leaf_hook_called_once_with_summed_gradient():
    x = leaf([1.0])
    h = x * 2
    calls = []
    h.register_hook(lambda g: calls.append(g.item()))
    (h * 3 + h * 4).sum().backward()
    assert calls == [7.0]


def test_register_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError):
        mg.tensor([1.0]).register_hook(lambda g: g)


def test_hook_in_autograd_grad():
    x = leaf([2.0])
    h = x * 3
    h.register_hook(lambda g: g * 2)
    (gx,) = mg.autograd.grad((h * h).sum(), x)
    np.testing.assert_allclose(gx.data.numpy(), [2 * 2 * 6.0 * 3])


def test_leaf_hook_applies_in_autograd_grad():
    x = leaf(1.0)
    x.register_hook(lambda g: g * 10)
    (g,) = mg.autograd.grad(x * 3, x)
    assert g.item() == pytest.approx(30.0)


def test_backward_inputs_restricts_accumulation():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[x])
    np.testing.assert_allclose(x.grad.data.numpy(), [3.0, 4.0])
    assert w.grad is None


def test_autograd_backward_function():
    x = leaf([1.0, 2.0])
    mg.autograd.backward([(x * 2).sum(), (x * x).sum()])
    np.testing.assert_allclose(x.grad.data.numpy(), [4.0, 6.0])
    x.grad = None
    mg.autograd.backward(x * 2, mg.tensor(np.array([1.0, 3.0])))
    np.testing.assert_allclose(x.grad.data.numpy(), [2.0, 6.0])


def test_backward_create_graph_twice_accumulates_graph():
    x = leaf(2.0)
    y = x * x * x
    y.backward(create_graph=True)
    assert x.grad.requires_grad
    np.testing.assert_allclose(x.grad.data.numpy(), 12.0)
    (gg,) = mg.autograd.grad(x.grad, x)
    assert gg.item() == pytest.approx(12.0)


def _g_split(x):
    a, b = x.split(1, 0)
    return a, b, (a.exp() * b.tanh()).sum()


def _g_max(x):
    v = x.max(1)
    return v.values, (v.values.sigmoid() * 2).sum()


def _g_retain_grad(x):
    h = x.exp()
    h.retain_grad()
    return h, (h * h).sum()


def _g_hook(x):
    h = x.tanh()
    h.register_hook(lambda g: g * 2)
    return h, h.sum()


def _g_inplace(x):
    h = x * 1.0
    h.mul_(2)
    h[0] = x[1].exp()
    return h, h.sigmoid().sum()


def _g_create_graph(x):
    h = x.exp()
    (g,) = mg.autograd.grad(h.sum(), x, create_graph=True)
    return h, g, (g * g).sum()


@pytest.mark.parametrize("build", [_g_split, _g_max, _g_retain_grad, _g_hook, _g_inplace, _g_create_graph])
@pytest.mark.parametrize("do_backward", [True, False])
def test_no_cycles_multi_output_views_hooks_inplace(build, do_backward):
    x = leaf([[0.1, 0.2], [0.3, 0.4]])
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        outs = build(x)
        y = outs[-1]
        refs = [weakref.ref(o) for o in outs] + [weakref.ref(y.grad_fn)]
        if do_backward:
            y.backward()
        del outs, y
        assert [r() is not None for r in refs] == [False] * len(refs)
    finally:
        if was_enabled:
            gc.enable()


def test_leaf_keeps_one_accumulate_grad_node_without_a_cycle():
    import gc
    import weakref
    w = mg.randn(3, requires_grad=True)
    first = (w * 2).grad_fn.next_functions[0][0]
    second = (w * 3).grad_fn.next_functions[0][0]
    assert first is second and first.variable is w  # one node per leaf, reused across graphs
    gc.disable()
    try:
        leaf = mg.randn(3, requires_grad=True)
        (leaf * 2).sum().backward()
        ref = weakref.ref(leaf)
        del leaf
        assert ref() is None  # leaf -> node -> leaf would have kept it alive with gc off
    finally:
        gc.enable()


def test_backward_into_a_leaf_nobody_holds():
    loss = (mg.randn(3, requires_grad=True) + 1.0).sum()  # Add saves nothing: the leaf dies here
    loss.backward()  # its gradient has nowhere to go and is dropped, without an error


# -- the ready queue: nodes run newest first, only those a gradient reaches ------------------------

def test_node_runs_after_every_consumer_created_later():
    # a feeds b (made later) and c: a's node must wait for both gradients, whatever the edge order
    x = leaf([1.0, 2.0])
    a = x * 2.0
    b = a * 3.0
    c = (a + b) + a * b
    c.sum().backward()
    # c = a + 3a + 3a^2, a = 2x: dc/dx = 2 * (4 + 6a)
    np.testing.assert_allclose(x.grad.numpy(), 2 * (4 + 6 * (2 * np.array([1.0, 2.0]))))


def test_autograd_grad_runs_no_node_outside_the_inputs_paths():
    ran = []

    class Loud(mg.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            return z * 1.0

        @staticmethod
        def backward(ctx, g):
            ran.append("Loud")
            return g

    x, z = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (x * x).sum() + Loud.apply(z).sum()
    (gx,) = mg.autograd.grad(y, [x])
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])
    assert ran == []  # z's branch does not lead to x: never run
    y2 = (x * x).sum() + Loud.apply(z).sum()
    y2.backward()
    assert ran == ["Loud"]


def test_node_no_gradient_reaches_is_not_run():
    ran = []

    class Two(mg.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            return z * 2.0, z * 3.0

        @staticmethod
        def backward(ctx, g1, g2):
            ran.append((g1 is None, g2 is None))
            return g1 * 2.0 + g2 * 3.0

    z = leaf([1.0])
    p, q = Two.apply(z)
    unused = p * 5.0  # never part of the loss
    q.sum().backward()
    assert ran == [(False, False)]  # the missing output's gradient is filled with zeros
    np.testing.assert_allclose(z.grad.numpy(), [3.0])
    del unused


# -- declared ops: the eager path written from their declarations records what the ctx protocol does ---

def _declared_ops():
    import minigrad.ops  # noqa: F401  (every op class defined)
    from minigrad.autograd.function import Function
    out, todo = [], list(Function.__subclasses__())
    while todo:
        c = todo.pop()
        todo.extend(c.__subclasses__())
        if c.__dict__.get("_eager_source") is not None:
            out.append(c)
    return sorted(out, key=lambda c: c.__name__)


def test_declared_ops_are_the_ufunc_families_and_linear():
    names = {c.__name__ for c in _declared_ops()}
    assert {"Add", "Sub", "Mul", "Div", "Exp", "Log", "Tanh", "Sqrt", "Neg", "Addmm"} <= names


def _declared_inputs(cls, need, rng):
    n = len(cls._spec[0])
    if cls.__name__ == "Addmm":
        shapes = [(3, 4), (2, 4), (2,)]
    else:
        shapes = [(3,)] * n
    return [mg.tensor(rng.random(s) * 0.8 + 0.1, requires_grad=r) if r is not None else None
            for s, r in zip(shapes, need)]


@pytest.mark.parametrize("cls", _declared_ops(), ids=lambda c: c.__name__)
def test_declared_eager_path_records_what_the_ctx_protocol_records(cls):
    # the one-call path generated from `_fast`/`_saves` (cls._call) and the ctx protocol running the
    # derived forward (function._generic) must make the same output, node, edges and saved values,
    # for every combination of inputs needing a gradient
    from itertools import product
    from minigrad.autograd import function as F
    n = len(cls._spec[0])
    choices = [(True, False, None) if i in cls._optional else (True, False) for i in range(n)]
    rng = np.random.default_rng(0)
    for need in product(*choices):
        if not any(need):
            continue
        args = _declared_inputs(cls, need, rng)
        fast = cls._call(*args)
        slow = F._generic(cls, tuple(args))
        np.testing.assert_array_equal(fast.detach().numpy(), slow.detach().numpy())
        nf, ns = fast.grad_fn, slow.grad_fn
        assert type(nf) is cls and type(ns) is cls and nf.needs_input_grad == ns.needs_input_grad
        assert [tuple(e) for e in nf._edges] == [tuple(e) for e in ns._edges]
        assert len(nf._saved) == len(ns._saved)
        for sf, ss in zip(nf._saved, ns._saved):
            assert sf[0] == ss[0] and sf[3] == ss[3]
            if sf[0] == 1:      # the own output, as its array
                assert sf[1][0] is fast._data and ss[1][0] is slow._data
            else:               # an input (the same Tensor and version counter), or None
                assert sf[1] is ss[1] and sf[2] is ss[2]
        leaves = [t for t in args if t is not None and t.requires_grad]
        for u, v in zip(mg.autograd.grad(fast.sum(), leaves), mg.autograd.grad(slow.sum(), leaves)):
            np.testing.assert_array_equal(u.numpy(), v.numpy())


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_binary_scalar_operand_is_the_cached_constant(op):
    from minigrad.autograd import function as F
    from minigrad.ops import elementwise as E
    cls = getattr(E, op)
    a = mg.tensor(np.random.default_rng(0).random(3) + 0.5, requires_grad=True)
    fast = cls._try(a, 1.75)
    slow = F._generic(cls, (a, F._scalar(1.75, a.dtype)))
    np.testing.assert_array_equal(fast.detach().numpy(), slow.detach().numpy())
    assert fast.grad_fn._edges[1] is slow.grad_fn._edges[1] is F._NO_EDGE  # a number: no edge
    (gf,), (gs,) = mg.autograd.grad(fast.sum(), [a]), mg.autograd.grad(slow.sum(), [a])
    np.testing.assert_array_equal(gf.numpy(), gs.numpy())


def test_binary_fast_path_declines_what_it_does_not_handle():
    from minigrad.ops import elementwise as E
    f32 = mg.ones(2, dtype=mg.float32, requires_grad=True)
    f64 = mg.ones(2, dtype=mg.float64)
    assert E.Mul._try(f32, f64) is None             # dtypes differ: promotion is the caller's
    assert E.Mul._try(mg.ones(2, dtype=mg.int64), 2.5) is None  # int * float promotes
    assert E.Mul._try(f32, 2) is None                # a Python int: the caller's rules
    # and the public ops still give PyTorch's dtypes for those
    assert (f32 * f64).dtype == mg.float64 and (mg.ones(2, dtype=mg.int64) * 2.5).dtype == mg.float32
    assert (mg.ones(2, dtype=mg.int64) / mg.ones(2, dtype=mg.int64)).dtype == mg.float32


def test_declared_eager_path_is_readable():
    # a learner can read an op's eager path: the generated text, with the op's saves spelled out
    from minigrad.ops.elementwise import Exp, Mul
    assert "def _call(a0, a1):" in Mul._eager_source and "_SAVED_NONE" in Mul._eager_source
    assert "so = (1, (out, 0), vc, 0)" in Exp._eager_source  # exp's backward reads its output


def test_binary_fast_path_on_a_view_and_uncached_scalars():
    x = leaf([1.0, 2.0, 3.0])
    v = x[1:]
    y = v * 2.0 + v * 0.0 + v * float("nan") * 0.0  # a view; 0.0 and nan are not cached constants
    assert np.isnan(y.detach().numpy()).all()
    (v * 2.0 + v * 0.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 2.0, 2.0])


def test_a_full_scalar_cache_starts_again_instead_of_leaving_new_scalars_uncached():
    # a learning-rate schedule makes a new float each step: after 1024 of them every new scalar went
    # uncached for good (slower, and a trace recorded `mul[y=2.0]` instead of a constant, so the same
    # function traced differently depending on what ran before it)
    from minigrad.autograd import function as F
    x = mg.ones(3)
    for i in range(1100):
        x * (1.0 + i * 1e-6)
    assert 0 < len(F._scalars) <= 1024
    w = mg.randn(4, 3)
    g = mg.graph.trace(lambda a: a @ (w * 2.0).t(), mg.randn(2, 3), constants=[w])
    assert "mul[" not in str(g) and "c:f32[]" in str(g)


def test_binary_fast_path_checks_saved_versions():
    x = leaf([1.0, 2.0])
    w = mg.tensor([3.0, 4.0])
    y = x * w
    w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_binary_fast_path_broadcast_error_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"mul: shapes \(2,\) and \(3,\) cannot be broadcast"):
        mg.ones(2, requires_grad=True) * mg.ones(3)
    with pytest.raises(ValueError, match=r"add: shapes \(2,\) and \(3,\) cannot be broadcast"):
        mg.ones(2) + mg.ones(3)


# -- the declared ops' eager paths: versions, views, complex, observers, errors -----------------------

def test_unary_fast_path_saved_output_checks_its_version():
    x = leaf([0.5, 1.0])
    y = x.exp()
    y.mul_(2.0)  # exp's backward reads its output: modified in place
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_unary_fast_path_no_grad_view_and_complex():
    x = leaf([0.25, 1.0, 4.0])
    with mg.no_grad():
        r = x.sqrt()
    assert r.grad_fn is None and not r.requires_grad
    np.testing.assert_allclose(r.numpy(), [0.5, 1.0, 2.0])
    v = x[1:]
    v.sqrt().sum().backward()  # a view input
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.25])
    z = mg.tensor(np.array([1 + 1j]), requires_grad=True)
    ez = mg.exp(z)  # complex: through apply, recorded with PyTorch's convention (tests/complex)
    assert ez.grad_fn.name() == "ExpBackward0"
    ez.real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), np.conj(np.exp([1 + 1j])))
    s = mg.tensor(2.0, requires_grad=True)
    e = s.exp()  # 0-d: NumPy returns a scalar, kept as a 0-d array
    assert e.shape == () and isinstance(e._data, np.ndarray)
    e.backward()
    np.testing.assert_allclose(s.grad.item(), np.exp(2.0))


@pytest.mark.parametrize("expr", [lambda t: t * 0.0, lambda t: t + float("nan"), lambda t: t * 2.0,
                                  lambda t: t - t, lambda t: t.exp(), lambda t: -t,
                                  lambda t: mg.nn.functional.linear(t, t.reshape(1, 2))])
def test_fast_paths_reach_the_op_observers(expr):
    # the profiler, anomaly mode and the doctor observe ops (autograd/observers.py): every op, the
    # uncached constants (0.0, nan) and the one-call fast paths included, must reach them
    with ops_seen() as seen:
        expr(leaf([1.0, 2.0]))
    assert seen, "the op bypassed the op observers"
    seen.clear()
    expr(leaf([1.0, 2.0]))
    assert not seen, "the observer was still called after its handle was removed"


def test_linear_fast_path_no_grad_view_version_and_errors():
    w = leaf(np.ones((2, 3)))
    x = leaf(np.arange(12.0).reshape(4, 3))
    with mg.no_grad():
        y = mg.nn.functional.linear(x, w)
    assert y.grad_fn is None and not y.requires_grad
    mg.nn.functional.linear(x[1:], w).sum().backward()  # a view input goes through apply
    np.testing.assert_allclose(x.grad.numpy(), [[0.0] * 3] + [[2.0] * 3] * 3)
    z = mg.nn.functional.linear(x, w)
    with mg.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    with pytest.raises(RuntimeError, match=r"linear: input of shape \(4, 2\) and weight of shape \(2, 3\)"):
        mg.nn.functional.linear(leaf(np.ones((4, 2))), w)


# -- a backward without create_graph computes its ops straight from the arrays (_unrecorded) ------------

def _mlp_grads(create_graph, seed=3):
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    w1 = mg.tensor(rng.standard_normal((6, 4)).astype(np.float32), requires_grad=True)
    b1 = mg.tensor(rng.standard_normal(6).astype(np.float32), requires_grad=True)
    w2 = mg.tensor(rng.standard_normal((3, 6)).astype(np.float32), requires_grad=True)
    y = mg.tensor(rng.integers(0, 3, 5))
    F = mg.nn.functional
    loss = F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2), y)
    return mg.autograd.grad(loss, [w1, b1, w2], create_graph=create_graph)


def test_unrecorded_backward_equals_the_recorded_one():
    plain = _mlp_grads(False)
    graph = _mlp_grads(True)  # the same ops through apply, recorded
    assert all(g.grad_fn is None for g in plain) and all(g.grad_fn is not None for g in graph)
    for u, v in zip(plain, graph):
        np.testing.assert_array_equal(u.numpy(), v.detach().numpy())


def test_backward_ops_reach_the_op_observers():
    # the profiler observes every op (autograd/observers.py), those a backward runs too
    with ops_seen() as seen:
        _mlp_grads(False)
    assert {"AddmmBackward", "ThresholdBackward", "CrossEntropyLossBackward"} <= {c.__name__ for c in seen}


# -- a chain runs without the heap (engine `ready`), which must never run a node too early -----------

def _tagged(order):
    class Tag(mg.autograd.Function):
        @staticmethod
        def forward(ctx, z, name):
            ctx.name = name
            return z * 1.0

        @staticmethod
        def backward(ctx, g):
            order.append(ctx.name)
            return g, None
    return Tag


class _Split(mg.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        return z * 1.0, z * 2.0

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 + g2 * 2.0


def test_ready_node_runs_newest_first_and_once():
    order = []
    Tag = _tagged(order)
    x = leaf([1.0, 2.0])
    a = Tag.apply(x, "a")
    b = Tag.apply(a, "b")           # a chain a <- b ...
    c = Tag.apply(b, "c")
    d = Tag.apply(a * 2.0, "d")     # ... and a second consumer of a, made after b and c
    p, q = _Split.apply(c)          # a two-output node reached along with others
    e = Tag.apply(p + q, "e")
    (e + d).sum().backward()
    assert order == ["e", "d", "c", "b", "a"]  # newest first; a after both of its consumers
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])  # 3 through c (p + 2q), 2 through d
