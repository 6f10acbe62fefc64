"""Fusion with reductions (minigrad/compiler/passes/fuse_rows.py): a residual add folded into
layer_norm's forward kernel and into its backward's. Each kind is stated bitwise against the
unfused graph (the fused kernels inline eager's row code; adds are correctly rounded), with numba
and with numba switched off (the fused op then runs the unfused ops' code), on float32 and float64,
odd row lengths (vector tails), and non-contiguous inputs (the fallback path); the GPT block graph
gets one fused equation per pattern."""
import os
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.compiler.codegen import compile_graph
from minigrad.graph import interpret
from minigrad.compiler.passes import fuse_rows as fuse_rows_mod
from minigrad.compiler.passes.fuse_rows import fuse_rows
from minigrad.compiler.pipeline import FUSED, optimize

NUMBA = [True, pytest.param(False, id="no-numba")]


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def _block(dtype, shape, transpose):
    D = shape[-1]
    mg.manual_seed(0)
    w = mg.randn(D, dtype=dtype, requires_grad=True)
    b = mg.randn(D, dtype=dtype, requires_grad=True)

    def f(k):   # a, r bound like parameters (their gradients are set_grad effects)
        at = a.transpose(0, 1) if transpose else a   # a strided input: the kernels' fallback path
        s = at * k + r
        y = F.layer_norm(s, (D,), w, b)
        z = s + y * y               # s read again (the residual stream)
        q = F.layer_norm(z, (D,), w, None)
        (q * z).sum().backward()
        return q, s
    rshape = shape
    ashape = (shape[1], shape[0]) + shape[2:] if transpose else shape
    a = mg.randn(*ashape, dtype=dtype, requires_grad=True)
    r = mg.randn(*rshape, dtype=dtype, requires_grad=True)
    return f, a, r, w, b


@pytest.mark.parametrize("use_numba", NUMBA)
@pytest.mark.parametrize("dtype,shape,transpose", [
    ("float32", (3, 5, 37), False), ("float64", (7, 129), False), ("float32", (4, 6, 33), True)])
def test_add_layer_norm_kinds_bitwise(use_numba, dtype, shape, transpose):
    old = kernels.set_enabled(use_numba)
    try:
        f, a, r, w, b = _block(dtype, shape, transpose)
        k = mg.tensor(1.5, dtype=dtype)
        g = mg.graph.trace(f, k)
        h = fuse_rows(g)
        prims = [e.prim for e in h.eqns]
        assert prims.count("fused_add_layer_norm") == 2, h.pass_details
        assert prims.count("fused_layer_norm_backward_add") >= 1, h.pass_details
        assert "layer_norm" not in prims
        want = [v.numpy() for v in compile_graph(g)(k)]
        grads = {n: t.grad.numpy().copy() for n, t in (("a", a), ("r", r), ("w", w), ("b", b))}
        for t in (a, r, w, b):
            t.grad = None
        got = [v.numpy() for v in compile_graph(h)(k)]
        assert all(_same(x, y) for x, y in zip(got, want))
        for n, t in (("a", a), ("r", r), ("w", w), ("b", b)):
            assert _same(t.grad.numpy(), grads[n]), n
        for t in (a, r, w, b):
            t.grad = None
        run = interpret.run(h, [k])   # the interpreter runs the fused equations too
        assert all(_same(x.numpy(), y) for x, y in zip(run, want))
    finally:
        kernels.set_enabled(old)


@pytest.mark.parametrize("use_numba", NUMBA)
@pytest.mark.parametrize("dtype,shape,transpose", [
    ("float32", (5, 3, 37), False), ("float64", (7, 129), False), ("float32", (40, 1000), False),
    ("float32", (6, 4, 33), True)])
def test_rms_norm_kind_within_bound(use_numba, dtype, shape, transpose):
    old = kernels.set_enabled(use_numba)
    try:
        mg.manual_seed(1)
        D = shape[-1]
        w = mg.randn(D, dtype=dtype, requires_grad=True)

        def f(x):
            x = x.transpose(0, 1) if transpose else x
            y = F.rms_norm(x, (D,), w)
            (y * y).sum().backward()
            return y
        x = mg.randn(*((shape[1], shape[0]) + shape[2:] if transpose else shape), dtype=dtype) * 3.0
        g = mg.graph.trace(f, x)
        assert "fused_rms_norm" not in [e.prim for e in fuse_rows(g).eqns]   # opt-in: not bitwise
        h = fuse_rows(g, reassociate=True)
        assert [e.prim for e in h.eqns].count("fused_rms_norm") == 1, h.pass_details
        assert "mean" not in [e.prim for e in h.eqns]
        want = compile_graph(g)(x).numpy()
        gw = w.grad.numpy().copy()
        w.grad = None
        got = compile_graph(h)(x).numpy()
        eps = np.finfo(dtype).eps
        if use_numba and not transpose:
            assert np.max(np.abs(got - want) / np.abs(want)) <= fuse_rows_mod.RMS_NORM_ULPS * eps
            assert np.max(np.abs(w.grad.numpy() - gw) / np.abs(gw)) <= fuse_rows_mod.RMS_NORM_ULPS * eps
        else:   # the unfused ops' code: the same bits
            assert _same(got, want) and _same(w.grad.numpy(), gw)
    finally:
        kernels.set_enabled(old)


def test_rms_norm_without_weight_and_first_product_kept():
    D = 24
    x = mg.randn(3, D)
    h = fuse_rows(mg.graph.trace(lambda x: F.rms_norm(x, (D,)), x), reassociate=True)
    assert [e.prim for e in h.eqns] == ["fused_rms_norm"]
    from minigrad.compiler.passes.fuse import fuse_elementwise
    assert "1 rms_norm" in fuse_elementwise(mg.graph.trace(lambda x: F.rms_norm(x, (D,)), x),
                                            reassociate=True).pass_details
    assert np.allclose(compile_graph(h)(x).numpy(), F.rms_norm(x, (D,)).numpy(), rtol=1e-6, atol=0)

    def g(x):   # x * x read elsewhere: it would have to be written, so no fusion
        b = x * x
        return x * (b.mean(-1, keepdim=True) + 1e-6).rsqrt(), b
    h = fuse_rows(mg.graph.trace(g, x), reassociate=True)
    assert "fused_rms_norm" not in [e.prim for e in h.eqns]


def test_backward_add_with_dx_only_then_elementwise_pass():
    D = 40
    x = mg.randn(8, D)
    r = mg.randn(8, D, requires_grad=True)

    def f(k):   # no weight: layer_norm_backward makes dx only (a one-output fused equation)
        s = r * k + x
        q = F.layer_norm(s, (D,))
        (q * s).sum().backward()
        return q
    k = mg.tensor(0.5)
    g = mg.graph.trace(f, k)
    from minigrad.compiler.passes.fuse import fuse_elementwise
    h = fuse_elementwise(g, min_size=1)
    assert "fused_layer_norm_backward_add" in [e.prim for e in h.eqns], h.pass_details
    want = compile_graph(g)(k).numpy()
    gr = r.grad.numpy().copy()
    r.grad = None
    assert _same(compile_graph(h)(k).numpy(), want) and _same(r.grad.numpy(), gr)


def test_no_fusion_across_effects_or_other_readers():
    D = 16
    w = mg.randn(D, requires_grad=True)

    def f(a, r):
        s = a + r
        return F.layer_norm(s, (D,), w), s * 2.0
    a, r = mg.randn(4, D), mg.randn(4, D)
    h = fuse_rows(mg.graph.trace(f, a, r))
    assert [e.prim for e in h.eqns].count("fused_add_layer_norm") == 1   # s read elsewhere: still output

    def g(a, r):   # an add of a broadcast operand is not the residual pattern
        return F.layer_norm(a + r[0], (D,), w)
    h = fuse_rows(mg.graph.trace(g, a, r))
    assert "fused_add_layer_norm" not in [e.prim for e in h.eqns]


def test_gpt_block_graph_counts():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    try:
        from gpt_model import GPT
    finally:
        sys.path.pop(0)
    mg.manual_seed(0)
    model = GPT(17, context=8, n_layer=2, n_head=2, d_model=16)
    x, y = mg.randint(0, 17, (2, 8)), mg.randint(0, 17, (2, 8))

    def step(x, y):
        for p in model.parameters():
            p.grad = None
        _, loss = model(x, y)
        loss.backward()
        return loss
    g = mg.graph.trace(step, x, y)
    h, reports = optimize(g, FUSED)
    prims = [e.prim for e in h.eqns]
    # 5 layer_norms: 4 read a same-shape residual add (the first reads the embeddings' broadcast sum);
    # 5 backwards: 4 feed the residual gradient's add
    assert prims.count("fused_add_layer_norm") == 4
    assert prims.count("fused_layer_norm_backward_add") == 4
    assert "4 add_layer_norm, 4 layer_norm_backward_add" in reports[-1].details
    want = step(x, y).detach().numpy()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    got = compile_graph(h)(x, y)
    assert _same(got[0].numpy() if isinstance(got, list) else got.numpy(), want)
    assert all(_same(p.grad.numpy(), q) for p, q in zip(model.parameters(), grads))
