"""The memory plan: intermediate values reuse a pool of buffers (across equations and calls), never
one a later read still needs; the compiled code frees every other value after its last read; the
peak intermediate bytes of the MLP and CNN training steps go down, and planned values cost no
allocation per call."""
import tracemalloc

import numpy as np
import pytest

import minigrad as mg
from minigrad.compiler.codegen import compile_graph
from minigrad.compiler.memory import plan_memory
from minigrad.compiler.pipeline import optimize

from _steps import lenet, make, mnist_mlp, same_bits

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _chain(a):
    return (((a * 2.0 + 1.0).exp() - a) * a).tanh() + 3.0


def test_a_chain_reuses_one_or_two_buffers():
    g = mg.graph.trace(_chain, mg.randn(1000))
    plan = plan_memory(g)
    planned = len(plan.slot_of)
    assert planned == 6  # every ufunc result but the output (which the caller keeps)
    assert len(plan.arenas) <= 2 and plan.pool_bytes <= 2 * 4000
    assert plan.peak_after < plan.peak_held == 6 * 4000
    assert plan.allocs_before == 6 and plan.allocs_after == 0 and plan.bytes_after == 0


def _peak_bytes_of_call(fn, *args):
    fn(*args)  # warm: the pool exists already, caches are filled
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, out


def test_planned_values_allocate_nothing_per_call():
    n = 250_000
    x = mg.randn(n)
    g = mg.graph.trace(_chain, x)
    planned, out1 = _peak_bytes_of_call(compile_graph(g, plan=True), x)
    unplanned, out2 = _peak_bytes_of_call(compile_graph(g, plan=False), x)
    interp, out3 = _peak_bytes_of_call(g, x)
    assert same_bits(out1.numpy(), out2.numpy()) and same_bits(out1.numpy(), out3.numpy())
    # planned: only the output (4n bytes) is new memory; unplanned, the ufunc steps take eager's
    # recycled arrays (kernels/buffers.py), so after the first call nothing is fresh either; the NumPy
    # interpreter holds all 7 values
    assert planned < 1.25 * 4 * n and unplanned < 1.25 * 4 * n
    assert interp >= 6 * 4 * n


def test_a_buffer_is_not_reused_while_a_view_of_it_is_read():
    def f(a):
        b = a * 2.0               # planned
        v = b.reshape(10, 10)     # a view of b's buffer
        c = (a + 1.0).exp()       # would take b's buffer if b were dead after the reshape
        d = c * 3.0
        return v.sum(0) + d.reshape(10, 10).sum(1)
    x = mg.randn(100)
    g = mg.graph.trace(f, x)
    plan = plan_memory(g)
    slots = {e.outvars[0].name: plan.slot_of.get(e.outvars[0].name) for e in g.eqns}
    b, c = g.eqns[0].outvars[0].name, g.eqns[3].outvars[0].name
    assert slots[b] is not None and slots[b] != slots[c]
    c1 = compile_graph(g)
    for _ in range(3):
        x = mg.randn(100)
        assert same_bits(c1(x).numpy(), f(x).numpy())


def test_an_output_never_lives_in_the_pool():
    def f(a):
        b = a * 2.0
        return b.reshape(2, 5), (b + 1.0)   # b escapes through a view
    g = mg.graph.trace(f, mg.randn(10))
    plan = plan_memory(g)
    assert not plan.slot_of
    c = compile_graph(g)
    r1 = c(mg.ones(10))
    c(mg.zeros(10))
    assert np.array_equal(r1[0].numpy(), np.full((2, 5), 2.0))


@pytest.mark.parametrize("name,build,batch", [("mlp", mnist_mlp, 128), ("cnn", lenet, 64)])
def test_training_step_peak_intermediate_bytes_go_down(name, build, batch, capsys):
    # RMSprop: traced tensor by tensor, its temporaries are what the plan reuses (SGD's step is one fused
    # op writing the parameters in place, with no temporaries left to plan)
    m, opt, step, x, y = make(build, lambda p: mg.optim.RMSprop(p, lr=0.01), batch=batch)
    g, _ = optimize(mg.graph.trace(step, x, y))
    plan = plan_memory(g)
    with capsys.disabled():
        print(f"\n{name} training step: {plan!r}")
    assert plan.peak_after < plan.peak_held
    assert plan.allocs_after < plan.allocs_before and plan.bytes_after < plan.bytes_before
    assert plan.pool_bytes < plan.bytes_before - plan.bytes_after  # reuse: the pool is smaller than what it holds
    # measured, not only computed: the compiled step's peak is below the interpreter's
    c = compile_graph(g)
    compiled, _ = _peak_bytes_of_call(c, x, y)
    interp, _ = _peak_bytes_of_call(g, x, y)
    with capsys.disabled():
        print(f"{name}: measured peak bytes during a call: graph.run {interp:,}, compiled {compiled:,}")
    assert compiled < interp


def test_a_fresh_gradient_is_handed_over_without_a_copy_and_never_reused():
    x = mg.randn(1000, requires_grad=True)

    def step():
        x.grad = None
        (x * x * 0.5 + x).sum().backward()   # dx: a fresh array read only by set_grad
        return x.grad * 1.0
    g = mg.graph.trace(step)
    plan = plan_memory(g)
    c = compile_graph(g)
    assert len(plan.donated) == 1 and "copy=False" in c.code
    c()
    first = x.grad
    kept = first.numpy().copy()
    with mg.no_grad():
        x.add_(1.0)
    c()
    assert x.grad is not first and same_bits(first.numpy(), kept)  # the old gradient is untouched
    compiled = x.grad
    step()                                                          # eager, for the reference
    assert same_bits(compiled.numpy(), x.grad.numpy())


def test_a_fused_kernels_results_are_donated_to_gradients_too():
    from minigrad.compiler.passes.fuse import fuse_elementwise
    x, y = mg.randn(5000, requires_grad=True), mg.randn(5000, requires_grad=True)

    def step():
        x.grad = None
        y.grad = None
        ((x * y + 1.0) * x - y).relu().sum().backward()
        return x.grad * 1.0
    g = mg.graph.trace(step)
    h = fuse_elementwise(g, backend="numpy", min_size=1)
    fused = [e for e in h.eqns if e.prim == "fused"]
    assert any(len(e.outvars) > 1 for e in fused)
    c = compile_graph(h)
    assert c.code.count("copy=False") == 2
    c()
    gx, gy = x.grad.numpy().copy(), y.grad.numpy().copy()
    step()
    assert same_bits(gx, x.grad.numpy()) and same_bits(gy, y.grad.numpy())
