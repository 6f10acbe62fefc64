"""The inter-op schedule (compiler/passes/schedule.py, compiler/_interop.py): independent branches of a
compiled graph found, run at once on the inter-op threads, bit for bit the serial program."""
import threading

import numpy as np
import pytest

import minigrad as mg
from minigrad import _threads
from minigrad.compiler import compile_graph, optimize
from minigrad.compiler import _interop as interop
from minigrad.compiler.passes import schedule as S


def _sched(g, heavy=None, threads=2):
    return S.schedule(g, threads=threads, min_gain=0, heavy=heavy)


def _prims(graph, branch):
    return [graph.eqns[i].prim for i in branch]


@pytest.fixture
def interop_threads(monkeypatch):
    """Set the inter-op threads for one test (set_num_interop_threads may be called once a process)."""
    def set_(n):
        monkeypatch.setattr(_threads, "_interop", n)
        monkeypatch.setattr(_threads, "_threads", 1)   # BLAS on one thread: the groups use n threads
        monkeypatch.setattr(_threads, "_adapted", None)
    return set_


def _mha():
    mg.manual_seed(0)
    mha = mg.nn.MultiheadAttention(32, 4, batch_first=True)
    q, k, v = mg.randn(2, 8, 32), mg.randn(2, 8, 32), mg.randn(2, 8, 32)
    return mha, (q, k, v)


def _bilstm():
    mg.manual_seed(0)
    lstm = mg.nn.LSTM(8, 16, bidirectional=True, batch_first=True)
    return lstm, mg.randn(3, 5, 8)


def test_attention_qkv_projections_are_three_branches():
    mha, args = _mha()
    with mg.no_grad():
        g = optimize(mg.graph.trace(lambda q, k, v: mha(q, k, v)[0], *args))[0]
    s = _sched(g, heavy=1000)
    assert len(s.groups) == 1
    grp = s.groups[0]
    assert len(grp.branches) == 3 and grp.parallel
    for b in grp.branches:   # each projection is one linear, its head
        assert _prims(s.graph, b).count("linear") == 1
    assert [s.graph.eqns[h[0]].prim for h in grp.heads] == ["linear"] * 3
    # the scores join Q and K: after the group
    lo, hi = grp.span
    assert all(e.prim != "matmul" for e in s.graph.eqns[lo:hi + 1])


def test_bidirectional_lstm_directions_are_two_branches_forward_and_backward():
    lstm, x = _bilstm()
    with mg.no_grad():
        g = optimize(mg.graph.trace(lambda x: lstm(x)[0], x))[0]
    s = _sched(g, heavy=1000)
    assert len(s.groups) == 1 and len(s.groups[0].branches) == 2
    for b in s.groups[0].branches:   # input projection, then the recurrence (a scan), in one branch
        p = _prims(s.graph, b)
        assert p.count("linear") == 1 and p.count("scan") == 1 and p.index("linear") < p.index("scan")

    def step(x):
        lstm.zero_grad()
        out, _ = lstm(x)
        loss = (out * out).sum()
        loss.backward()
        return loss
    g = optimize(mg.graph.trace(step, x))[0]
    s = _sched(g, heavy=1000)
    # the forward's directions, then the backward's (each direction's reverse scan and weight grads)
    assert len(s.groups) == 2
    back = s.groups[1]
    assert len(back.branches) == 2
    for b in back.branches:
        p = _prims(s.graph, b)
        assert p.count("scan") == 1 and p.count("set_grad") == 4
    targets = [{s.graph.eqns[i].target for i in b if s.graph.eqns[i].prim == "set_grad"} for b in back.branches]
    assert any(all(t.endswith("_reverse") for t in ts) for ts in targets)
    assert any(not any(t.endswith("_reverse") for t in ts) for ts in targets)


def test_schedule_is_a_valid_order_of_the_same_equations():
    lstm, x = _bilstm()
    g = mg.graph.trace(lambda x: lstm(x)[0].sum(), x)
    s = _sched(g, heavy=1000)
    assert sorted(map(id, s.graph.eqns)) == sorted(map(id, g.eqns))
    defined = {v.name for v in g.invars} | {v.name for v, _ in g.state} | {v.name for v, _ in g.consts}
    for e in s.graph.eqns:
        assert all(v.name in defined for v in e.invars)
        defined.update(v.name for v in e.outvars + [t[1] for t in e.side])


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_concurrent_branches_are_bitwise_the_serial_program(threads, interop_threads):
    interop_threads(threads)
    lstm, x = _bilstm()

    def step(x):
        lstm.zero_grad()
        out, _ = lstm(x)
        loss = (out * out).sum()
        loss.backward()
        return loss, out
    g = optimize(mg.graph.trace(step, x))[0]
    serial = compile_graph(g, schedule=False)
    par = compile_graph(g, schedule=_sched(g, heavy=1000))   # run with `threads` (1: in order)
    assert "_par(" in par.code and "_par(" not in serial.code
    l1, o1 = serial(x)
    g1 = [p.grad.numpy().copy() for p in lstm.parameters()]
    for _ in range(2):   # twice: the planned buffers are reused across calls
        l2, o2 = par(x)
        g2 = [p.grad.numpy().copy() for p in lstm.parameters()]
        assert l1.numpy().tobytes() == l2.numpy().tobytes()
        assert o1.numpy().tobytes() == o2.numpy().tobytes()
        assert all(a.tobytes() == b.tobytes() for a, b in zip(g1, g2))


def test_attention_training_step_bitwise_with_parallel_groups(interop_threads):
    interop_threads(2)
    mha, args = _mha()

    def step(q, k, v):
        mha.zero_grad()
        loss = mha(q, k, v)[0].square().sum()
        loss.backward()
        return loss
    g = optimize(mg.graph.trace(step, *args))[0]
    s = _sched(g, heavy=1000)
    assert len(s.parallel) >= 2   # the projections forward, the weight gradients backward
    serial, par = compile_graph(g, schedule=False), compile_graph(g, schedule=s)
    l1 = serial(*args)
    g1 = [p.grad.numpy().copy() for p in mha.parameters()]
    l2 = par(*args)
    g2 = [p.grad.numpy().copy() for p in mha.parameters()]
    assert l1.numpy().tobytes() == l2.numpy().tobytes()
    assert all(a.tobytes() == b.tobytes() for a, b in zip(g1, g2))


def test_an_exception_in_a_branch_reaches_the_caller(interop_threads, monkeypatch):
    interop_threads(2)
    mha, args = _mha()
    with mg.no_grad():
        g = optimize(mg.graph.trace(lambda q, k, v: mha(q, k, v)[0], *args))[0]
    par = compile_graph(g, schedule=_sched(g, heavy=1000))
    lin = next(e.fn for e in g.eqns if e.prim == "linear")
    target = [e for e in g.eqns if e.prim == "linear"][1].args[1].name   # the K projection's weight
    fast = lin._fast
    shapes = []

    def failing(x, w, b=None):
        shapes.append(threading.get_ident())
        if x is args[1]._data or (x.base is not None and x.base is args[1]._data):
            raise ValueError("boom in the K branch")
        return fast(x, w, b)
    monkeypatch.setattr(lin, "_fast", staticmethod(failing))
    with pytest.raises(ValueError, match="boom in the K branch"):
        par(*args)
    assert target and len(shapes) == 3   # every branch ran (to its end) before the caller raised
    monkeypatch.setattr(lin, "_fast", fast)
    par(*args)   # the program still runs afterwards


def test_run_branches_raises_the_first_branchs_error_after_all_finished():
    done = []

    def ok():
        done.append(1)
        return 1

    def bad(msg):
        raise RuntimeError(msg)
    with pytest.raises(RuntimeError, match="first"):
        interop.run_branches([(bad, ("first",)), (ok, ()), (bad, ("second",)), (ok, ())], threads=2)
    assert len(done) == 2
    assert interop.run_branches([(ok, ()), (ok, ())], threads=1) == [1, 1]


def test_branch_threads_carry_the_callers_thread_local_state():
    from minigrad.autograd.grad_mode import _state
    gate = threading.Barrier(2, timeout=10)   # both branches at once: one runs on a worker thread
    seen = {}

    def probe(k):
        gate.wait()
        seen[k] = (threading.get_ident(), mg.is_grad_enabled(), _state.site is not None,
                   len(mg.autograd.graph._hooks.stack))
        return k

    with mg.no_grad(), mg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        assert interop.run_branches([(probe, (0,)), (probe, (1,))], threads=2) == [0, 1]
    assert seen[0][0] != seen[1][0]
    assert all(v[1:] == (False, True, 1) for v in seen.values())
    # the worker's own state is put back: outside no_grad the branches see grad mode on again
    with mg.enable_grad():
        interop.run_branches([(probe, (0,)), (probe, (1,))], threads=2)
    assert all(v[1:] == (True, False, 0) for v in seen.values())
    assert interop.workers() >= 1


def test_explain_shows_the_schedule_and_why_not(monkeypatch, interop_threads):
    monkeypatch.delenv("MINIGRAD_INTEROP_MIN_GAIN", raising=False)
    mha, args = _mha()
    monkeypatch.setattr(S, "HEAVY", 1000)
    with mg.no_grad():
        interop_threads(1)
        text = str(mg.jit.explain(lambda q, k, v: mha(q, k, v)[0], *args))
        assert "schedule: 1 group(s) of independent branches, 0 run in parallel" in text
        assert "serial - inter-op threads = 1" in text
        assert text.count("    branch ") == 3 and "(linear -> " in text
        interop_threads(2)
        monkeypatch.setattr(S, "MIN_GAIN", 1e12)
        text = str(mg.jit.explain(lambda q, k, v: mha(q, k, v)[0], *args))
        assert "serial - below the threshold" in text
        monkeypatch.setattr(S, "MIN_GAIN", 0)
        f = mg.jit(lambda q, k, v: mha(q, k, v)[0])
        ex = f.explain(*args)
        assert "group 0 (equations" in str(ex) and "PARALLEL - saves up to" in str(ex)
        assert "at run time on min(inter-op threads, branches, cores" in str(ex)
        assert "_par(" in ex.code
        ref = mha(*args)[0]
        assert f(*args).numpy().tobytes() == ref.numpy().tobytes()


def test_threads_now_never_oversubscribes_the_cores_with_blas(monkeypatch, interop_threads):
    interop_threads(4)
    assert interop.threads_now(3) == 3 and interop.threads_now() == 4   # BLAS on one thread
    monkeypatch.setattr(_threads, "_threads", 2)
    monkeypatch.setattr(_threads, "_cores", lambda: 2)
    assert interop.threads_now(3) == 1                                  # 2 BLAS threads fill 2 cores
    monkeypatch.setattr(_threads, "_cores", lambda: 8)
    assert interop.threads_now(3) == 3 and interop.threads_now() == 4


def test_by_default_nothing_runs_in_parallel(monkeypatch):
    monkeypatch.delenv("MINIGRAD_INTEROP_MIN_GAIN", raising=False)
    monkeypatch.setattr(_threads, "_interop", None)
    assert S.threshold() == float("inf")
    monkeypatch.setattr(_threads, "_interop", 2)   # the user asked for inter-op threads
    assert S.threshold() == S.MIN_GAIN_SET
    monkeypatch.setenv("MINIGRAD_INTEROP_MIN_GAIN", "123")
    assert S.threshold() == 123.0


def _two_chains():
    x, y = mg.randn(64, 64), mg.randn(64, 64)

    def f(x, y):
        a = ((x * 2.0 + 1.0) * 3.0).exp()
        b = ((y * 2.0 + 1.0) * 3.0).exp()
        return (a * b).sum()
    return mg.graph.trace(f, x, y), (x, y)


def test_memory_plan_never_shares_an_arena_across_concurrent_branches():
    g, args = _two_chains()
    s = _sched(g, heavy=1)
    assert s.parallel and len(s.parallel[0].branches) == 2
    c = compile_graph(g, schedule=s)
    plan = c.plan
    grp = s.parallel[0]
    arenas = []
    for b in grp.branches:
        names = {v.name for i in b for v in s.graph.eqns[i].outvars}
        arenas.append({plan.slot_of[n] for n in names if n in plan.slot_of})
    assert arenas[0] and arenas[1] and not arenas[0] & arenas[1]
    # nor with values live before the group: each arena used in the group is used by one value there
    used = [plan.slot_of[v.name] for b in grp.branches for i in b for v in s.graph.eqns[i].outvars
            if v.name in plan.slot_of]
    assert len(used) == len(set(used))
    # the serial plan of the same graph does reuse arenas within a chain (so the test can fail)
    serial = compile_graph(g, schedule=False).plan
    assert len(serial.arenas) < len(used)
    assert c(*args).numpy().tobytes() == g.run(*args).numpy().tobytes()


def test_generator_draws_and_in_place_writes_keep_their_order():
    x = mg.randn(64, 64)
    buf = mg.zeros(64, 64)

    def f(x):
        a = mg.nn.functional.dropout(x, 0.5, training=True)
        b = mg.nn.functional.dropout(x * 2.0, 0.5, training=True)
        return a, b
    g = mg.graph.trace(f, x)
    preds = S._deps(g.eqns)
    draws = [i for i, e in enumerate(g.eqns) if any(v.shape is None for v in e.invars)]
    assert len(draws) == 2 and (preds[draws[1]] >> draws[0]) & 1   # one generator: ordered

    def h(x):
        a = x * 2.0
        buf.copy_(x)
        return a + buf
    g = mg.graph.trace(h, x)
    preds = S._deps(g.eqns)
    k = next(i for i, e in enumerate(g.eqns) if e.prim == "assign")
    assert preds[k] == (1 << k) - 1     # after everything before it
    assert all((preds[j] >> k) & 1 for j in range(k + 1, len(g.eqns)))


def test_an_optimizer_step_writing_in_place_is_a_barrier():
    w = mg.randn(32, 32, requires_grad=True)
    opt = mg.optim.Adam([w], lr=0.1)

    def step(x):
        opt.zero_grad()
        (x @ w).square().sum().backward()
        metric = (w * 2.0).sum()   # reads w, no path to the step: must still run before it
        opt.step()
        return metric
    x = mg.randn(8, 32)
    step(x)   # the optimizer state exists: the traced step is the fused one
    g = mg.graph.trace(step, x)
    k = next(i for i, e in enumerate(g.eqns) if e.prim == "adam_step")
    preds = S._deps(g.eqns)
    assert preds[k] == (1 << k) - 1
    s = _sched(g, heavy=1)
    order = [id(e) for e in s.graph.eqns]
    mul = next(e for e in g.eqns if e.prim == "mul" and any(v.name == w_name(g) for v in e.invars))
    assert order.index(id(mul)) < order.index(id(g.eqns[k]))


def w_name(g):
    return next(v.name for v, b in g.state if b.kind == "tensor" and b.obj is not None and b.obj.shape == (32, 32))


def test_cost_estimates():
    mha, args = _mha()
    with mg.no_grad():
        g = mg.graph.trace(lambda q, k, v: mha(q, k, v)[0], *args)
    lin = next(e for e in g.eqns if e.prim == "linear")
    assert S.cost(lin) == 2 * 16 * 32 * 32           # 2 M N K: (2*8, 32) @ (32, 32)
    assert S.cost(next(e for e in g.eqns if e.prim == "reshape")) == 1
    lstm, x = _bilstm()
    with mg.no_grad():
        g = mg.graph.trace(lambda x: lstm(x)[0], x)
    scan = next(e for e in g.eqns if e.prim == "scan")
    assert S.cost(scan) >= 5 * 2 * 3 * 16 * 64       # 5 steps of a (3, 16) @ (16, 64) GEMM at least


def test_jitted_training_step_with_parallel_groups_is_bitwise_eager(monkeypatch, interop_threads):
    import copy
    monkeypatch.delenv("MINIGRAD_INTEROP_MIN_GAIN", raising=False)
    interop_threads(2)
    monkeypatch.setattr(S, "HEAVY", 1000)
    monkeypatch.setattr(S, "MIN_GAIN", 0)
    lstm, x = _bilstm()
    twin = copy.deepcopy(lstm)

    def make(m):
        opt = mg.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        def step(x):
            opt.zero_grad()
            out, _ = m(x)
            loss = (out * out).mean()
            loss.backward()
            opt.step()
            return loss
        return step
    f, eager = mg.jit(make(lstm)), make(twin)
    for _ in range(3):
        a, b = f(x), eager(x)
        assert a.detach().numpy().tobytes() == b.detach().numpy().tobytes()
    assert "_par(" in f.code
    assert all(p.detach().numpy().tobytes() == q.detach().numpy().tobytes()
               for p, q in zip(lstm.parameters(), twin.parameters()))
