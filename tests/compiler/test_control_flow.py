"""mg.cond / mg.while_loop / mg.scan (minigrad/control_flow.py): eager semantics against PyTorch's
higher-order ops (torch.cond / torch.while_loop; their eager implementations are called directly,
torch.cond itself spends seconds starting dynamo) and against jax.lax.scan's semantics written out
by hand; gradients by gradcheck; vmap against a per-sample loop; traced == eager bit for bit, one
equation whatever the length; jitted training steps through a scan; the errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from helpers import nested_control_flow
from minigrad.compiler.jit import JitWarning


def _eq(a, b):
    return np.array_equal(np.asarray(a._data), np.asarray(b._data)) and a.dtype == b.dtype


# -- eager semantics -------------------------------------------------------------------------------
def test_cond_and_while_loop_match_torch():
    torch = pytest.importorskip("torch")
    hop = pytest.importorskip("torch._higher_order_ops.cond")
    wl = pytest.importorskip("torch._higher_order_ops.while_loop")
    x, y = np.array([1.5, -2.0, 0.25], np.float32), np.array([0.5, 3.0, -1.0], np.float32)

    def tf(a, b):
        return a * b + 1.0, (a - b).sum()

    def ff(a, b):
        return a / 2.0, a.sum() * b.sum()
    for pred in (x.sum() > 0, x.sum() < 0, np.float32(0.0), np.float32(2.0)):
        got = mg.cond(mg.tensor(pred), tf, ff, (mg.tensor(x), mg.tensor(y)))
        want = hop.cond_op(torch.tensor(pred), tf, ff, (torch.tensor(x), torch.tensor(y)))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert _eq(mg.cond(False, tf, ff, [mg.tensor(x), mg.tensor(y)])[0], mg.tensor(x) / 2.0)

    def cond_fn(i, v):
        return (i < 5) & (v.sum() < 40)

    def body_fn(i, v):
        return i + 1, v * 2 + 1
    got = mg.while_loop(cond_fn, body_fn, (mg.tensor(0), mg.tensor(x)))
    want = wl.while_loop_op(cond_fn, body_fn, (torch.tensor(0), torch.tensor(x)), ())
    assert type(got) is tuple and len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    # a false predicate at the start: the inputs come back
    i, v = mg.while_loop(lambda i, v: i > 10, body_fn, (mg.tensor(0), mg.tensor(x)))
    assert i.item() == 0 and np.array_equal(v.numpy(), x)


def test_scan_semantics_as_jax():
    xs = mg.tensor([1.0, 2.0, 3.0, 4.0])
    c, ys = mg.scan(lambda c, x: (c + x, c * x), mg.tensor(0.0), xs)
    assert c.item() == 10.0 and ys.tolist() == [0.0, 2.0, 9.0, 24.0]        # y uses the carry before the step
    c, ys = mg.scan(lambda c, x: (c + x, c * x), mg.tensor(0.0), xs, reverse=True)
    assert c.item() == 10.0 and ys.tolist() == [9.0, 14.0, 12.0, 0.0]       # from the end; ys indexed as xs
    # pytrees: a dict carry, a tuple of xs, a tuple of ys; y may be None; xs None with length
    init = {"s": mg.zeros(2), "n": mg.tensor(0)}
    c, (a, b) = mg.scan(lambda c, x: ({"s": c["s"] + x[0] * x[1], "n": c["n"] + 1}, (c["n"], x[1].sum())),
                        init, (mg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), mg.tensor([2.0, 3.0, 4.0])),
                        length=3)
    assert c["s"].tolist() == [31.0, 40.0] and c["n"].item() == 3
    assert a.tolist() == [0, 1, 2] and a.dtype == mg.int64 and b.tolist() == [2.0, 3.0, 4.0]
    c, ys = mg.scan(lambda c, _: (c * 2, None), mg.tensor(1.0), None, length=5)
    assert c.item() == 32.0 and ys is None
    c, ys = mg.scan(lambda c, x: (c + x.sum(), x * 2), mg.tensor(1.0), mg.zeros(0, 3))
    assert c.item() == 1.0 and ys.shape == (0, 3)


def test_gradients_flow_through_eager_control_flow():
    from minigrad.autograd import gradcheck
    rng = np.random.default_rng(0)
    w = mg.tensor(rng.standard_normal((3, 3)) * 0.5, requires_grad=True)
    xs = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    h0 = mg.tensor(rng.standard_normal(3), requires_grad=True)

    def rnn(w, xs, h0):
        c, ys = mg.scan(lambda h, x: ((h @ w + x).tanh(), (h * x).sum()), h0, xs)
        return c, ys
    assert gradcheck(rnn, (w, xs, h0))
    assert gradcheck(lambda w, h: mg.cond(h.sum() > 0, lambda a, b: a @ b, lambda a, b: b.exp(), (h, w)),
                     (w, h0))
    assert gradcheck(lambda h: mg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, (v @ w).sin()),
                                             (mg.tensor(0), h))[1], (h0,))


def test_vmap_matches_a_per_sample_loop():
    rng = np.random.default_rng(1)
    xb = mg.tensor(rng.standard_normal((5, 3)).astype(np.float32))

    def f(x):   # a batched predicate: both branches, selected per sample
        return mg.cond(x.sum() > 0, lambda t: (t * 2, t.sum()), lambda t: (-t, t.prod()), (x,))

    def g(x):   # a batched loop predicate: runs until every sample is done
        return mg.while_loop(lambda i, v: v.abs().sum() < 20, lambda i, v: (i + 1, v * 3), (mg.tensor(0), x))

    def h(x):
        return mg.scan(lambda c, v: (c * v + 1, c.sum()), mg.ones(2), x.reshape(3, 1).expand(3, 2))
    for fn in (f, g, h):
        got = mg.vmap(fn)(xb)
        want = [fn(xb[i]) for i in range(5)]
        gl, _ = mg.control_flow._flatten(got, "t")
        for k, leaf in enumerate(gl):
            for i in range(5):
                assert _eq(leaf[i], mg.control_flow._flatten(want[i], "t")[0][k]), (fn.__name__, k, i)
    # vmap inside a trace: cond becomes a select the graph carries; a batched loop predicate breaks
    tg = mg.graph.trace(mg.vmap(f), xb)
    assert tg.count()["where"] == 2 and "cond" not in tg.count()
    assert all(_eq(a, b) for a, b in zip(tg.run(-xb), mg.vmap(f)(-xb)))
    with pytest.raises(mg.GraphBreak, match="mg.while_loop with a batched predicate under vmap inside a trace"):
        mg.graph.trace(mg.vmap(g), xb)
    # an unbatched predicate inside vmap picks one branch for all
    out = mg.vmap(lambda x: mg.cond(mg.tensor(True), lambda t: t + 1, lambda t: t.sin(), (x,)))(xb)
    assert _eq(out, xb + 1)


# -- traced: one equation, bit for bit -------------------------------------------------------------
def _traced_equals_eager(fn, *args, seed=None):
    if seed is not None:
        mg.manual_seed(seed)
    want, _ = mg.control_flow._flatten(fn(*args), "t")
    for how in ("trace", "run", "jit"):
        if seed is not None:
            mg.manual_seed(seed)
        if how == "trace":
            g = mg.graph.trace(fn, *args)
            res = g.result
        elif how == "run":
            res = g.run(*args)
        else:
            res = mg.jit(fn, fullgraph=True)(*args)
        got, _ = mg.control_flow._flatten(res, "t")
        assert len(got) == len(want) and all(_eq(a, b) for a, b in zip(got, want)), how
    return g


def test_traced_cond_while_scan_equal_eager_bitwise():
    rng = np.random.default_rng(2)
    w = mg.tensor(rng.standard_normal((4, 4)).astype(np.float32))
    x = mg.tensor(rng.standard_normal(4).astype(np.float32))
    g = _traced_equals_eager(lambda x: mg.cond(x.sum() > 0, lambda a: (a @ w).tanh(), lambda a: a * w.sum(), (x,)), x)
    assert g.count()["cond"] == 1 and "true_fn:" in str(g) and "false_fn:" in str(g)
    assert _eq(g.run(-x), ((-x) @ w).tanh()) if x.sum().item() < 0 else _eq(g.run(-x), (-x) * w.sum())
    g = _traced_equals_eager(lambda x: mg.while_loop(lambda i, v: v.abs().sum() < 50, lambda i, v: (i + 1, v @ w + 1),
                                                     (mg.tensor(0), x)), x)
    assert g.count()["while_loop"] == 1
    xs = mg.tensor(rng.standard_normal((6, 4)).astype(np.float32))

    def nested(xs):   # a cond and a scan inside a scan; a tuple carry; a closure over w
        def body(c, x):
            h, n = c
            h = mg.cond(h.sum() > 0, lambda h, x: (h @ w + x).tanh(), lambda h, x: (h - x).sigmoid(), (h, x))
            _, inner = mg.scan(lambda a, b: (a + b, a * b), mg.tensor(0.0), x)
            return (h, n + 1), inner.sum() + h.sum()
        return mg.scan(body, (mg.zeros(4), mg.tensor(0)), xs, reverse=True)
    g = _traced_equals_eager(nested, xs)
    assert g.count()["scan"] == 1 and str(g).count("scan[") == 2 and str(g).count("cond[") == 1


def test_random_draws_inside_a_traced_scan_are_per_step_as_eager():
    def f(xs):
        return mg.scan(lambda c, x: (c + x * mg.rand(3), mg.randn(2)), mg.zeros(3), xs)
    g = _traced_equals_eager(f, mg.ones(5, 3), seed=7)
    assert g.count()["scan"] == 1


def test_graph_size_does_not_depend_on_the_length():
    w = mg.randn(3, 3)

    def rnn(xs):
        return mg.scan(lambda h, x: ((h @ w + x).tanh(),) * 2, mg.zeros(3), xs)[1].sum()
    g3, g35 = mg.graph.trace(rnn, mg.randn(3, 3)), mg.graph.trace(rnn, mg.randn(35, 3))
    assert len(g3) == len(g35) == 2 and str(g35).count("tanh") == 1


def test_jitted_training_step_through_scan_and_cond():
    rng = np.random.default_rng(3)
    w = mg.tensor(rng.standard_normal((3, 3)) * 0.5, requires_grad=True)
    b = mg.tensor(rng.standard_normal(3), requires_grad=True)
    xs = mg.tensor(rng.standard_normal((7, 3)))

    def rnn_step(xs):   # each parameter read once per step: the gradients are eager's bit for bit
        loss = mg.scan(lambda h, x: ((h @ w + x + b).tanh(),) * 2, mg.zeros(3, dtype=mg.float64), xs)[1].pow(2).sum()
        loss.backward()
        return loss.detach()

    def cond_step(xs):  # b read twice in a step: the reverse scan sums its parts in another order
        def body(h, x):
            h = mg.cond(h.sum() > 0, lambda h, x: (h @ w + x).tanh(), lambda h, x: (h * b + x).sigmoid(), (h, x))
            return h, (h * b).sum()
        c, ys = mg.scan(body, mg.zeros(3, dtype=mg.float64) + 0.1, xs)
        loss = c.sum() + ys.sum()
        loss.backward()
        return loss.detach()
    for step, exact in ((rnn_step, True), (cond_step, False)):
        w.grad = b.grad = None
        want = step(xs)
        gw, gb = w.grad.clone(), b.grad.clone()
        jitted = mg.jit(step, fullgraph=True)
        for _ in range(2):
            w.grad = b.grad = None
            assert _eq(jitted(xs), want)
            if exact:
                assert _eq(w.grad, gw) and _eq(b.grad, gb)
            else:
                np.testing.assert_allclose(w.grad.numpy(), gw.numpy(), rtol=1e-14, atol=1e-15)
                np.testing.assert_allclose(b.grad.numpy(), gb.numpy(), rtol=1e-14, atol=1e-15)
        assert jitted.explain(xs).optimized.count()["scan"] == 2   # forward and the reverse scan


def test_traced_gradients_for_inputs_and_under_func_grad():
    rng = np.random.default_rng(5)
    w = mg.tensor(rng.standard_normal((3, 3)) * 0.5)
    xs, h0 = mg.tensor(rng.standard_normal((5, 3))), mg.tensor(rng.standard_normal(3))

    def grads(xs, h0):   # autograd.grad inside the traced function, for xs and the initial carry
        xs, h0 = xs.detach().requires_grad_(), h0.detach().requires_grad_()
        c, ys = mg.scan(lambda h, x: ((h @ w + x).tanh(), (h * x).sum()), h0, xs)
        return mg.autograd.grad(c.sum() + ys.sum(), (xs, h0))
    g = _traced_equals_eager(grads, xs, h0)
    assert g.count()["scan"] == 2
    fg = mg.func.grad(lambda h0: mg.scan(lambda h, x: ((h @ w + x).tanh(), h.sum()), h0, xs)[1].sum())
    g = _traced_equals_eager(fg, h0)
    assert g.count()["scan"] == 3 and not g.result.requires_grad  # create_graph: the carries recomputed differentiably
    # forward AD around a jitted scan: the eager path runs (unrolled in the trace), tangents exact
    f = mg.jit(lambda h0: mg.scan(lambda h, x: ((h @ w + x).tanh(), h.sum()), h0, xs)[1])
    t = mg.tensor(rng.standard_normal(3))
    for got, want in zip(mg.func.jvp(f, (h0,), (t,)), mg.func.jvp(f.fn, (h0,), (t,))):
        assert _eq(got, want)


def test_second_derivative_through_traced_scan_and_cond():
    rng = np.random.default_rng(6)
    w = mg.tensor(rng.standard_normal((3, 3)) * 0.5, requires_grad=True)
    xs = mg.tensor(rng.standard_normal((4, 3)))

    def cell(h, x):
        return mg.cond(x.sum() > 0, lambda h, x: (h @ w + x).tanh(), lambda h, x: (h @ w).sin() * x, (h, x))

    def penalty(xs, loop=False):   # a gradient penalty: the gradient's own gradient
        h, ys = mg.zeros(3, dtype=mg.float64) + 0.1, []
        if loop:
            for i in range(4):
                ys.append(h.sum())
                h = cell(h, xs[i])
            ys = mg.stack(ys)
        else:
            ys = mg.scan(lambda h, x: (cell(h, x), h.sum()), h, xs)[1]
        g, = mg.autograd.grad(ys.pow(2).sum(), w, create_graph=True)
        p = g.pow(2).sum()
        return p.detach(), mg.autograd.grad(p, w)[0]
    want = penalty(xs, loop=True)
    g = mg.graph.trace(penalty, xs)
    assert g.count()["scan"] >= 3
    for got in (g.result, g.run(xs)):
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-13)


def test_traced_while_loop_is_forward_only_and_jit_falls_back():
    w = mg.tensor(1.5, requires_grad=True)

    def f(x):
        _, y = mg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * w), (mg.tensor(0), x))
        y.backward()
        return y.detach()
    x = mg.tensor(2.0)
    want = f(x)
    gw = w.grad.clone()
    with pytest.raises(mg.GraphBreak, match="mg.while_loop: reverse-mode"):
        mg.graph.trace(f, x)
    w.grad = None
    with pytest.warns(JitWarning, match="while_loop: reverse-mode"):
        got = mg.jit(f)(x)
    assert _eq(got, want) and _eq(w.grad, gw)


# -- errors ---------------------------------------------------------------------------------------------
def test_errors_name_the_function():
    x = mg.randn(3)
    with pytest.raises(ValueError, match=r"mg.cond: pred must be a bool or a one-element tensor.*\(3,\)"):
        mg.cond(x, lambda a: a, lambda a: a, (x,))
    with pytest.raises(TypeError, match="mg.cond: operands must be a tuple or list"):
        mg.cond(True, lambda a: a, lambda a: a, x)
    with pytest.raises(TypeError, match="mg.while_loop: carried_inputs must be a tuple"):
        mg.while_loop(lambda a: a.sum() > 0, lambda a: a, x)
    with pytest.raises(TypeError, match=r"mg.while_loop: body_fn must return .*shape \(3,\) float32.*shape \(\) float32"):
        mg.while_loop(lambda a: a.sum() > 0, lambda a: a.sum() * 0 - 1, (x.abs() + 1,))
    with pytest.raises(TypeError, match=r"mg.scan: f must return a carry .*float32.*float64"):
        mg.scan(lambda c, v: (c.double(), v), x, mg.randn(2, 3))
    with pytest.raises(TypeError, match="mg.scan: f must return a pair"):
        mg.scan(lambda c, v: c, x, mg.randn(2, 3))
    with pytest.raises(ValueError, match="mg.scan: xs leaf 1 has leading dimension 4"):
        mg.scan(lambda c, v: (c, v), x, (mg.randn(2), mg.randn(4)))
    with pytest.raises(ValueError, match="mg.scan: pass xs or length"):
        mg.scan(lambda c, v: (c, v), x, None)
    # branches that differ: found where both are traced (under a trace, and under vmap)
    mismatched = (lambda a: a.sum(), lambda a: a)
    with pytest.raises(TypeError, match=r"mg.cond: .*true_fn has shape \(\) float32, false_fn has shape \(3,\)"):
        mg.graph.trace(lambda a: mg.cond(a.sum() > 0, *mismatched, (a,)), x)
    with pytest.raises(TypeError, match=r"mg.cond: .*same structure; got \(Tensor, Tensor\) and Tensor"):
        mg.vmap(lambda a: mg.cond(a.sum() > 0, lambda t: (t, t), lambda t: t, (a,)))(mg.randn(2, 3))


def test_graph_breaks():
    x = mg.randn(3)

    def branchy(a):
        if a.sum() > 0:
            return a
        return -a
    with pytest.raises(mg.GraphBreak, match=r"mg.cond\(pred, true_fn, false_fn, operands\)"):
        mg.graph.trace(branchy, x)
    with pytest.raises(mg.GraphBreak, match="mg.scan: f writes in place"):
        mg.graph.trace(lambda xs: mg.scan(lambda c, v: (c.add_(v), c.sum()), mg.zeros(3), xs), mg.randn(2, 3))
    # a break inside a body under mg.jit: the loop runs in Python (eager values), jit says why
    xs = mg.randn(4, 3)

    def breaks(xs):
        return mg.scan(lambda c, v: (c + v * float(v.sum()), c.sum()), mg.zeros(3), xs)
    with pytest.warns(JitWarning, match=r"float\(\) on a traced tensor"):
        got = mg.jit(breaks)(xs)
    assert all(_eq(a, b) for a, b in zip(got, breaks(xs)))


def test_onnx_export_runs_in_onnxruntime(tmp_path):
    pytest.importorskip("onnx", reason="the onnx extra is not installed")
    ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    rng = np.random.default_rng(4)
    w = mg.tensor(rng.standard_normal((3, 3)).astype(np.float32))

    nested = nested_control_flow(w)   # exports as a Loop (reversed) holding an If and a Loop

    def loop(x):
        return mg.while_loop(lambda i, v: v.abs().sum() < 50, lambda i, v: (i + 1, v * 2 + w[0]), (mg.tensor(0), x))
    for fn, x in ((nested, mg.tensor(rng.standard_normal((6, 3)).astype(np.float32))),
                  (loop, mg.tensor(rng.standard_normal(3).astype(np.float32))), (loop, mg.full((3,), 99.0))):
        path = tmp_path / "cf.onnx"
        mg.onnx.export(fn, (x,), path)
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        got = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})
        for g, want in zip(got, fn(x)):
            np.testing.assert_allclose(g, want.numpy(), rtol=1e-5, atol=1e-6)
    # traced with gradients on, the forward exports (the carries it saves for a reverse go unread);
    # the reverse scan of a gradient does not
    wg = w.detach().requires_grad_()

    def fwd(xs):
        return mg.scan(lambda c, v: (c @ wg + v, c), mg.zeros(3), xs)[0]
    mg.onnx.to_model(mg.graph.trace(fwd, mg.randn(2, 3)))
    with pytest.raises(NotImplementedError, match="'scan'.*the gradient of a scan"):
        mg.onnx.to_model(mg.graph.trace(lambda xs: mg.autograd.grad(fwd(xs).sum(), wg)[0], mg.randn(2, 3)))


def test_gradient_of_a_traced_random_body_is_refused():
    w = mg.ones(3, requires_grad=True)

    def f(xs):
        loss = mg.scan(lambda c, v: (c * w + v * mg.rand(3), c.sum()), mg.zeros(3), xs)[0].sum()
        loss.backward()
        return loss.detach()
    with pytest.raises(NotImplementedError, match="mg.scan: the gradient of a traced .*draws random numbers"):
        mg.graph.trace(f, mg.ones(2, 3))
