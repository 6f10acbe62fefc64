"""minigrad's own thread pool (minigrad/_pool.py, issue 38 item 2): sized by mg.set_num_threads,
results bitwise equal for 1, 2 and 4 threads on every kernel split over it (shapes above the
kernels' thresholds, rows not a multiple of the chunk), many caller threads at once, a fork after
parallel work, no thread leak, a prompt exit."""
import multiprocessing
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import minigrad as mg
from helpers import at_once, needs_numba
from minigrad import _pool, _threads, kernels





def _settle(timeout=5.0):
    """threading.active_count() once the workers told to stop have exited (they do so asynchronously)."""
    end = time.monotonic() + timeout
    p = _pool._kernels.pool
    while p is not None and time.monotonic() < end:
        p.reap()
        if len(p.threads) == p.size:
            break
        time.sleep(0.005)
    return threading.active_count()


def test_set_num_threads_sizes_the_pool(threads_restored):
    seen = []
    for n in (3, 1, 2):
        mg.set_num_threads(n)
        _pool.run(lambda c0, c1: None, 8)
        seen.append(_pool.workers())
    assert seen == [2, 0, 1]   # the caller is the n-th thread


def test_the_pool_splits_only_once_the_threads_are_chosen(threads_restored):
    # by default the kernels are serial (BLAS alone on the cores: faster on the 2-core machine the
    # figures came from, see _pool.threads); mg.set_num_threads(n) asks for parallel kernels
    _threads._threads = None
    calls = []
    _pool.run(lambda c0, c1: calls.append((c0, c1)), 4)
    assert calls == [(0, 4)]     # serially, on the caller
    mg.set_num_threads(2)
    calls.clear()
    _pool.run(lambda c0, c1: calls.append((c0, c1)), 4)
    assert sorted(calls) == [(0, 2), (2, 4)]


def test_chunks_are_fixed_by_size_and_ranges_cover_every_chunk_once():
    assert _pool.chunks(10, 1, grain=4) == [(0, 4), (4, 8), (8, 10)]
    assert _pool.chunks(7, 3000, grain=4096) == [(0, 2), (2, 4), (4, 6), (6, 7)]
    for n, t in ((1, 4), (5, 2), (7, 3), (8, 4)):
        ranges = _pool.split(n, t)
        assert len(ranges) == min(n, t) and [c for a, b in ranges for c in range(a, b)] == list(range(n))


def test_errors_reach_the_caller_and_the_pool_goes_on(threads_restored):
    mg.set_num_threads(2)

    def fn(c0, c1):
        if c0 > 0:
            raise ZeroDivisionError("chunk")
    with pytest.raises(ZeroDivisionError, match="chunk"):
        _pool.run(fn, 4)
    done = []
    _pool.run(lambda c0, c1: done.extend(range(c0, c1)), 4)
    assert sorted(done) == [0, 1, 2, 3]


def test_a_chunk_may_call_the_pool(threads_restored):
    mg.set_num_threads(2)
    out = []
    _pool.run(lambda c0, c1: _pool.run(lambda a, b: out.extend(range(10 * c0 + a, 10 * c0 + b)), 3), 2)
    assert sorted(out) == [0, 1, 2, 10, 11, 12]


# -- every parallel kernel, above its threshold, with 1, 2 and 4 threads ----------------------------

def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).tobytes() if a.dtype.kind == "f" else a.tobytes()


def _cases(rng):
    """name -> (call writing its outputs, [output arrays]) with fresh outputs per call."""
    N, E, O, L = (kernels.load(m) for m in ("norm", "elementwise", "optim", "loss"))
    f32 = np.float32
    D = 257                                    # rows not a multiple of the chunk's rows (128 per chunk)
    R = N._ROWS_BWD_MIN // D + 301
    x = rng.standard_normal((R, D)).astype(f32)
    g = rng.standard_normal((R, D)).astype(f32)
    res = rng.standard_normal((R, D)).astype(f32)
    w = rng.standard_normal(D).astype(f32)
    b = rng.standard_normal(D).astype(f32)
    mu = np.empty(R, f32)
    rs = np.empty(R, f32)
    N.rows_forward(x, w, b, 1e-5, np.empty_like(x), mu, rs)
    C = 37                                     # batch_norm: channels split, a tail of channels
    xb = rng.standard_normal((N._BN_MIN // (C * 50) + 3, C, 50)).astype(f32)
    gb = rng.standard_normal(xb.shape).astype(f32)
    wc = rng.standard_normal(C).astype(f32)
    bc = rng.standard_normal(C).astype(f32)
    n = E._RELU_MIN + 12345                   # elementwise: a tail after the last whole chunk
    v = rng.standard_normal(n).astype(f32)
    v[::97] = 0.0
    v[5] = np.nan
    gv = rng.standard_normal(n).astype(f32)
    Ev = np.exp(np.float32(-0.5) * v * v)
    ne = E._ERF_MIN + 777
    v64 = rng.standard_normal(ne)
    from minigrad.optim.adam import ADAM
    from minigrad.optim.sgd import SGD_UPDATE
    pa = rng.standard_normal(O.threshold(SGD_UPDATE) + 999).astype(f32)
    ga = rng.standard_normal(pa.size).astype(f32)
    Rl, Cl = L._BWD_MIN // 100 + 7, 100
    z = rng.standard_normal((Rl, Cl)).astype(f32)
    t = rng.integers(0, Cl, Rl)
    cases = {}

    def case(name, make):
        cases[name] = make

    def bn_fwd():
        out, m, va, r = np.empty_like(xb), np.empty(C, f32), np.empty(C, f32), np.empty(C, f32)
        N.forward(xb, False, wc, bc, 1e-5, out, m, va, r)
        return [out, m, va, r]

    def bn_bwd():
        m, r = np.empty(C, f32), np.empty(C, f32)
        N.forward(xb, False, wc, bc, 1e-5, np.empty_like(xb), m, np.empty(C, f32), r)
        dx, sums = np.empty_like(xb), np.empty((2, C))
        N.backward_dx(gb, xb, False, wc, m, r, dx, sums)
        return [dx, sums]

    def ln_fwd():
        out, m, r = np.empty_like(x), np.empty(R, f32), np.empty(R, f32)
        N.rows_forward(x, w, b, 1e-5, out, m, r)
        return [out, m, r]

    def ln_add_fwd():
        s, out, m, r = np.empty_like(x), np.empty_like(x), np.empty(R, f32), np.empty(R, f32)
        N.rows_add_forward(x, res, w, b, 1e-5, s, out, m, r)
        return [s, out, m, r]

    def ln_bwd():
        dx, dw, db = np.empty_like(x), np.zeros(D), np.zeros(D)
        N.rows_backward(g, x, w, mu, rs, dx, dw, db)
        return [dx, dw, db]

    def ln_bwd_add():
        dx, dw, db = np.empty_like(x), np.zeros(D), np.zeros(D)
        N.rows_backward_add(g, x, w, mu, rs, res, dx, dw, db, np.empty(D, f32))
        return [dx, dw, db]

    def rms():
        m, e, r, y, out = np.empty(R, f32), np.empty(R, f32), np.empty(R, f32), np.empty_like(x), np.empty_like(x)
        N.rms_rows_forward(x, w, f32(1e-6), m, e, r, y, out, True, True)
        return [m, e, r, y, out]

    def elementwise(kernel, *ins, size=None, dtype=f32):
        def run():
            out = np.empty(size or ins[0].size, dtype)
            kernel(*ins, out)
            return [out]
        return run

    def sgd():
        p, buf = pa.copy(), np.empty_like(pa)
        # flags (maximize, l2, momentum, first, nesterov); scalars (-lr, wd, momentum, 1 - dampening)
        O.run(SGD_UPDATE, [p, ga, buf], (False, True, True, True, True), [f32(-0.1), f32(0.01), f32(0.9), f32(1)])
        O.run(SGD_UPDATE, [p, ga, buf], (True, True, True, False, False), [f32(-0.1), f32(0.01), f32(0.9), f32(0.5)])
        return [p, buf]

    def adam():
        p, m, v_, vmax = pa.copy(), np.zeros_like(pa), np.zeros_like(pa), np.zeros_like(pa)
        for _ in range(2):
            # flags (maximize, l2, decoupled, amsgrad, small_w); scalars (wd, w, w1, b2, c2, bc2, eps, nss)
            O.run(ADAM, [p, ga, m, v_, vmax], (False, True, False, True, True),
                  [f32(0.01), f32(0.1), f32(0.9), f32(0.999), f32(0.001), f32(0.5), f32(1e-8), f32(-0.01)])
        return [p, m, v_, vmax]

    def ce():
        p, rows = np.empty_like(z), np.empty(Rl, f32)
        assert L.forward(z, t, -100, p, rows)
        dz = np.empty_like(z)
        L.backward(p, t, f32(0.25), dz)
        return [p, rows, dz]

    case("batch_norm forward", bn_fwd)
    case("batch_norm backward", bn_bwd)
    case("layer_norm forward", ln_fwd)
    case("add + layer_norm forward", ln_add_fwd)
    case("layer_norm backward", ln_bwd)
    case("layer_norm backward + add", ln_bwd_add)
    case("rms_norm forward", rms)
    case("relu", elementwise(E.relu, v))
    case("threshold_backward", elementwise(E.threshold_backward, gv, v, f32(0)))
    case("erf", elementwise(E.erf, v64, dtype=np.float64))
    case("gelu float64", elementwise(E.gelu, v64, dtype=np.float64))
    case("gelu_backward float64", elementwise(E.gelu_backward, v64, v64, np.exp(-0.5 * v64 * v64), dtype=np.float64))
    case("gelu_f32", elementwise(E.gelu_f32, v, Ev))
    case("gelu_backward_f32", elementwise(E.gelu_backward_f32, gv, v, Ev))
    case("sgd", sgd)
    case("adam", adam)
    case("cross_entropy", ce)
    return cases


@needs_numba
def test_every_parallel_kernel_gives_the_same_bits_for_1_2_and_4_threads(threads_restored, monkeypatch):
    cases = _cases(np.random.default_rng(0))
    split = []
    run = _pool.run
    monkeypatch.setattr(_pool, "run", lambda fn, n: (split.append(n), run(fn, n)))
    results = {}
    for n in (1, 2, 4):
        mg.set_num_threads(n)
        for name, make in cases.items():
            results.setdefault(name, []).append([_bits(a) for a in make()])
    for name, (one, two, four) in results.items():
        assert one == two == four, f"{name}: the bits depend on the thread count"
    assert min(split) >= 2   # every call went through the pool in several chunks


@needs_numba
def test_the_split_kernels_match_the_serial_kernels(threads_restored):
    """Rows are independent: the same bits as one serial call of the kernel; only layer_norm's dw and
    db, summed per chunk from its threshold, may differ, within float64 rounding."""
    N, E = kernels.load("norm"), kernels.load("elementwise")
    mg.set_num_threads(2)
    rng = np.random.default_rng(1)
    D = 300
    R = N._ROWS_BWD_MIN // D + 77
    x, g = rng.standard_normal((R, D)).astype(np.float32), rng.standard_normal((R, D)).astype(np.float32)
    w, b = rng.standard_normal(D).astype(np.float32), rng.standard_normal(D).astype(np.float32)
    out, m, r = np.empty_like(x), np.empty(R, np.float32), np.empty(R, np.float32)
    N.rows_forward(x, w, b, 1e-5, out, m, r)
    out1, m1, r1 = np.empty_like(x), np.empty(R, np.float32), np.empty(R, np.float32)
    N._rows_forward(x, w, b, 1e-5, out1, m1, r1)
    assert _bits(out) == _bits(out1) and _bits(m) == _bits(m1) and _bits(r) == _bits(r1)
    dx, dw, db = np.empty_like(x), np.zeros(D), np.zeros(D)
    N.rows_backward(g, x, w, m, r, dx, dw, db)
    dx1, dw1, db1 = np.empty_like(x), np.zeros(D), np.zeros(D)
    N._rows_backward(g, x, w, m, r, dx1, dw1, db1)
    np.testing.assert_array_equal(dx, dx1)
    np.testing.assert_allclose(dw, dw1, rtol=1e-12, atol=1e-12 * np.abs(g * x).sum(0).max())
    np.testing.assert_allclose(db, db1, rtol=1e-12, atol=1e-12 * np.abs(g).sum(0).max())
    # after the cast the op makes, float32: at most one ulp apart
    for a, a1 in ((dw, dw1), (db, db1)):
        ulps = np.abs(a.astype(np.float32).view(np.int32).astype(np.int64) - a1.astype(np.float32).view(np.int32))
        assert ulps.max() <= 1
    v = rng.standard_normal(E._RELU_MIN + 5).astype(np.float32)
    o, o1 = np.empty_like(v), np.empty_like(v)
    E.relu(v, o)
    E._relu(v, o1, 0, v.size)
    assert _bits(o) == _bits(o1)


@needs_numba
def test_fused_kernel_split_over_the_pool_is_bitwise_the_serial_one(threads_restored, monkeypatch):
    from minigrad.kernels import fused
    from minigrad.ops.elementwise import Add, Mul, Relu
    n = fused._pool_min() + 1001
    group = fused.Group([((n,), np.float32), ((n,), np.float32), ((1,), np.float32)],
                        [(Mul, [("in", 0), ("in", 1)], np.float32), (Add, [("t", 0), ("in", 2)], np.float32),
                         (Relu, [("t", 1)], np.float32)], [1, 2], (n,))
    k = fused.build(group, [(), (), ()], backend="numba")
    rng = np.random.default_rng(2)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in (n, n, 1))
    split = []
    run = _pool.run
    monkeypatch.setattr(_pool, "run", lambda fn, m: (split.append(m), run(fn, m)))
    got = []
    for t in (1, 2, 4):
        mg.set_num_threads(t)
        got.append([_bits(o) for o in k("", a, b, c)])
    assert got[0] == got[1] == got[2] and split
    s = a * b
    np.testing.assert_array_equal(k("", a, b, c)[0], s + c)
    assert "prange" not in k.source and "parallel=" not in k.source   # never numba's OpenMP layer
    # a broadcast input: the group runs over its first axis, split in ranges of rows
    rows = fused._pool_min() // 400 + 3
    bgroup = fused.Group([((rows, 400), np.float32), ((400,), np.float32)],
                         [(Mul, [("in", 0), ("in", 1)], np.float32)], [0], (rows, 400))
    kb = fused.build(bgroup, [()], backend="numba")
    assert not kb.flat
    m, v = rng.standard_normal((rows, 400)).astype(np.float32), rng.standard_normal(400).astype(np.float32)
    outs = []
    for t in (1, 2, 4):
        mg.set_num_threads(t)
        outs.append(_bits(kb("", m, v)))
    assert outs[0] == outs[1] == outs[2] == _bits(m * v)


@needs_numba
def test_eight_caller_threads_at_once(threads_restored):
    N = kernels.load("norm")
    mg.set_num_threads(2)
    rng = np.random.default_rng(3)
    D = 256
    R = N._ROWS_MIN // D + 5
    xs = [rng.standard_normal((R, D)).astype(np.float32) for _ in range(8)]
    w, b = np.ones(D, np.float32), np.zeros(D, np.float32)

    def ln(x):
        out, m, r = np.empty_like(x), np.empty(R, np.float32), np.empty(R, np.float32)
        N.rows_forward(x, w, b, 1e-5, out, m, r)
        return out
    want = [ln(x) for x in xs]

    def caller(i):
        for _ in range(10):
            assert np.array_equal(ln(xs[i]), want[i])
    at_once(caller)


def test_no_thread_leak_after_many_calls_and_thread_changes(threads_restored):
    mg.set_num_threads(2)
    _pool.run(lambda a, b: None, 2)
    base = _settle()
    for i in range(1000):
        _pool.run(lambda a, b: None, 3)
    assert _settle() == base
    for n in (4, 1, 3, 2):   # growing and shrinking: stopped workers exit
        mg.set_num_threads(n)
        _pool.run(lambda a, b: None, 5)
    assert _settle() == base and _pool.workers() == 1


def _child_runs_parallel_kernel(q):
    try:
        N = kernels.load("norm")
        D = 256
        R = N._ROWS_MIN // D + 5
        x = np.arange(R * D, dtype=np.float32).reshape(R, D) % 7
        out, m, r = np.empty_like(x), np.empty(R, np.float32), np.empty(R, np.float32)
        N.rows_forward(x, np.ones(D, np.float32), np.zeros(D, np.float32), 1e-5, out, m, r)
        out1, m1, r1 = np.empty_like(x), np.empty(R, np.float32), np.empty(R, np.float32)
        N._rows_forward(x, np.ones(D, np.float32), np.zeros(D, np.float32), 1e-5, out1, m1, r1)
        q.put((bool(np.array_equal(out, out1)), _pool.workers()))
    except BaseException as e:  # noqa: BLE001
        q.put(repr(e))


@needs_numba
@pytest.mark.skipif(not hasattr(os, "fork") or "fork" not in multiprocessing.get_all_start_methods(),
                    reason="no fork on this platform")
def test_fork_after_parallel_work(threads_restored):
    mg.set_num_threads(2)
    q0 = multiprocessing.get_context("fork").SimpleQueue()
    _child_runs_parallel_kernel(q0)   # the parent's pool is running
    assert q0.get() == (True, 1)
    ctx = multiprocessing.get_context("fork")
    q = ctx.SimpleQueue()
    p = ctx.Process(target=_child_runs_parallel_kernel, args=(q,))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert q.get() == (True, 1)   # the child made its own pool of one worker


def test_a_process_using_the_pool_exits_promptly():
    code = ("import time, minigrad as mg\n"
            "from minigrad import _pool\n"
            "mg.set_num_threads(3)\n"
            "done = []\n"
            "_pool.run(lambda c0, c1: done.extend(range(c0, c1)), 6)\n"
            "assert _pool.workers() == 2 and sorted(done) == list(range(6))\n"
            "print(time.monotonic(), flush=True)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(mg.__file__))]
                                                     + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    end = time.monotonic()
    assert p.returncode == 0, p.stderr
    assert end - float(p.stdout.split()[-1]) < 15.0   # from the last line to the process gone (a hang: 120 s)


@needs_numba
def test_ops_and_an_adam_step_give_the_same_bits_for_1_and_2_threads(threads_restored, monkeypatch):
    """Through the ops that call the split kernels (layer_norm, batch_norm, gelu, relu,
    cross_entropy and Adam), forward and backward, above every threshold involved."""
    import minigrad.nn.functional as F
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((300, 512)).astype(np.float32)
    w0 = rng.standard_normal(512).astype(np.float32)
    im0 = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    z0 = rng.standard_normal((4200, 100)).astype(np.float32)
    t0 = rng.integers(0, 100, 4200)
    r0 = rng.standard_normal(600_000).astype(np.float32)
    split = []
    run = _pool.run
    monkeypatch.setattr(_pool, "run", lambda fn, n: (split.append(n), run(fn, n)))
    got = []
    for n in (1, 2):
        mg.set_num_threads(n)
        x, w = mg.tensor(x0, requires_grad=True), mg.tensor(w0, requires_grad=True)
        im, z, r = (mg.tensor(a, requires_grad=True) for a in (im0, z0, r0))
        loss = (F.gelu(F.layer_norm(x, (512,), w)).sum() + F.batch_norm(im, None, None, training=True).square().sum()
                + F.cross_entropy(z, mg.tensor(t0)) + F.relu(r).sum())
        loss.backward()
        opt = mg.optim.Adam([w, x], lr=1e-3)
        opt.step()
        got.append([_bits(a.detach().numpy()) for a in (loss, x.grad, w.grad, im.grad, z.grad, r.grad, x, w)])
    assert got[0] == got[1]
    assert len(split) >= 2 * 10   # per pass: ln fwd/bwd, bn fwd/bwd, gelu fwd/bwd, ce fwd/bwd, relu fwd/bwd, adam
