"""The thread policy "pool" (design C of issue 38; minigrad/_threads.py, _pool.matmul): BLAS on one
thread and the GEMMs split in blocks fixed by the problem's size over minigrad's pool. Results
bitwise equal for 1, 2 and 4 threads (a GEMM, an MLP step, a CNN step through Winograd and im2col);
a stack split over its batch bitwise the unsplit GEMM, a 2-D split within the dot-product bound of
it; set_num_threads sets BLAS to one thread and the pool to n; 8 caller threads at once; a fork after
parallel GEMMs. The block size is lowered in most tests so that small shapes split (fast tests)."""
import multiprocessing
import os

import numpy as np
import pytest

import minigrad as mg
from helpers import at_once, needs_numba
from minigrad import _pool, _threads, kernels



@pytest.fixture
def pool_policy(monkeypatch):
    """Policy "pool" for the test; the threads, the policy and BLAS's threads restored after."""
    tp = pytest.importorskip("threadpoolctl", reason="threadpoolctl (the examples extra) is not installed")
    saved = (_threads._threads, _threads._policy)
    before = [lib["num_threads"] for lib in tp.threadpool_info() if lib["user_api"] == "blas"]
    _threads._policy = "pool"
    yield tp
    _threads._threads, _threads._policy = saved
    if before:
        tp.threadpool_limits(limits=before[0], user_api="blas")


@pytest.fixture
def splits(monkeypatch):
    """Records the chunk count of every _pool.run call."""
    seen = []
    run = _pool.run
    monkeypatch.setattr(_pool, "run", lambda fn, n: (seen.append(n), run(fn, n)))
    return seen


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def _blas(tp):
    return [lib["num_threads"] for lib in tp.threadpool_info() if lib["user_api"] == "blas"]


def test_set_num_threads_under_pool_sets_blas_to_one_and_the_pool_to_n(pool_policy):
    tp = pool_policy
    if not _blas(tp):
        pytest.skip("threadpoolctl sees no BLAS in this process")
    mg.set_num_threads(3)
    assert set(_blas(tp)) == {1} and _pool.threads() == 3 and mg.get_num_threads() == 3
    a = np.ones((256, 256), np.float32)
    _pool.matmul(a, a)                # 16.8M multiply-adds: split, so the pool starts its workers
    assert _pool.workers() == 2
    _threads._set_policy("blas")      # back to design A: BLAS gets the threads at once
    assert set(_blas(tp)) == {3}
    _threads._set_policy("pool")
    assert set(_blas(tp)) == {1}
    with pytest.raises(ValueError, match="thread policy 'omp' is not one of blas, pool"):
        _threads._set_policy("omp")


def test_no_split_unless_policy_pool_and_threads_chosen(pool_policy, splits):
    a = np.ones((256, 256), np.float32)
    _threads._threads = None          # policy pool, threads not chosen: BLAS as it is, no split
    _pool.matmul(a, a)
    _threads._policy, _threads._threads = "blas", 2
    _pool.matmul(a, a)
    assert splits == []
    _threads._policy = "pool"
    _pool.matmul(a, a)
    assert splits == [4]              # 16.8M / 4M: four blocks of 64 rows
    _pool.matmul(a[:100], a)          # 6.6M < two blocks: one call
    assert splits == [4]


def test_blocks_are_fixed_by_size():
    assert _pool._blocks(256, 16 << 20, 16) == (64, 4)
    assert _pool._blocks(1000, 1 << 30, 16) == (128, 8)   # at most 8 blocks, 16-row aligned, tail 104
    assert _pool._blocks(20, 1 << 30, 16) == (20, 1)      # fewer than two aligned blocks: whole
    assert _pool._blocks(7, 1 << 30, 1) == (2, 4)         # a batch of 7: 4 blocks (power of two)


def _cases(rng):
    f32, f64 = np.float32, np.float64
    r = lambda *s, dt=f32: rng.standard_normal(s).astype(dt)  # noqa: E731
    return {
        "rows": (r(203, 64), r(64, 48)),                         # M >= N: row blocks, a tail
        "columns": (r(40, 64), r(64, 333)),                      # M < N: column blocks (strided out)
        "transposed operands": (r(64, 150).T, r(80, 64).T),      # F-ordered views, as g^T @ x
        "float64": (r(150, 70, dt=f64), r(70, 60, dt=f64)),
        "batched": (r(6, 3, 40, 32), r(6, 3, 32, 24)),           # attention's stacks
        "batched, broadcast": (r(5, 40, 32), r(32, 50)),         # a 2-D right operand for every matrix
        "batched, size-1 axis": (r(1, 40, 32), r(7, 32, 20)),
        "batched, leading 1": (r(1, 6, 40, 32), r(1, 6, 32, 24)),   # attention at batch 1
    }


def test_split_gemm_is_bitwise_the_same_for_1_2_4_threads(pool_policy, splits, monkeypatch):
    monkeypatch.setattr(_pool, "GEMM_BLOCK", 1 << 12)
    cases = _cases(np.random.default_rng(0))
    got = {}
    for n in (1, 2, 4):
        mg.set_num_threads(n)
        for name, (a, b) in cases.items():
            got.setdefault(name, []).append(_bits(_pool.matmul(a, b)))
    for name, (one, two, four) in got.items():
        assert one == two == four, f"{name}: the bits depend on the thread count"
    assert len(splits) == 3 * len(cases) and min(splits) >= 2   # every case was split


def test_split_gemm_against_one_unsplit_gemm(pool_policy, monkeypatch):
    """A stack split over its batch: bitwise one unsplit one-thread GEMM (NumPy multiplies a stack one
    matrix at a time). A 2-D split: OpenBLAS may pick another kernel for a block than for the whole, so
    within the bound of two orders of the same K products: |d| <= 2 K u (|a| @ |b|)."""
    monkeypatch.setattr(_pool, "GEMM_BLOCK", 1 << 12)
    mg.set_num_threads(2)             # BLAS on one thread under policy pool
    for name, (a, b) in _cases(np.random.default_rng(1)).items():
        got, want = _pool.matmul(a, b), np.matmul(a, b)
        assert got.shape == want.shape and got.dtype == want.dtype
        if "batched" in name:
            assert _bits(got) == _bits(want), name
        else:
            K, u = a.shape[-1], np.finfo(a.dtype).eps / 2
            bound = 2 * K * u * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
            assert (np.abs(got.astype(np.float64) - want) <= bound).all(), name


def test_split_gemm_keeps_numpys_results_and_errors_elsewhere(pool_policy, monkeypatch):
    monkeypatch.setattr(_pool, "GEMM_BLOCK", 1 << 8)
    mg.set_num_threads(2)
    a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32) / 100
    v = np.ones(32, np.float32)
    np.testing.assert_array_equal(_pool.matmul(a, v), a @ v)                           # vector: NumPy's
    np.testing.assert_array_equal(_pool.matmul(a, a.T.astype(np.float64)), a @ a.T.astype(np.float64))
    out = np.empty((64, 64), np.float32)
    assert _pool.matmul(a, a.T, out=out) is out and _bits(out) == _bits(_pool.matmul(a, a.T))
    with pytest.raises(ValueError):
        _pool.matmul(a, a)                                                            # 32 != 64


def _mlp_step(seed=0):
    import minigrad.nn as nn
    import minigrad.nn.functional as F
    mg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(96, 80), nn.ReLU(), nn.Linear(80, 10))
    opt = mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.standard_normal((64, 96)).astype(np.float32))
    y = mg.tensor(rng.integers(0, 10, 64))
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return [_bits(loss.detach().numpy())] + [_bits(p.detach().numpy()) for p in model.parameters()]


def test_mlp_training_steps_are_bitwise_the_same_for_1_2_4_threads(pool_policy, splits, monkeypatch):
    monkeypatch.setattr(_pool, "GEMM_BLOCK", 1 << 12)
    got = []
    for n in (1, 2, 4):
        mg.set_num_threads(n)
        got.append(_mlp_step())
    assert got[0] == got[1] == got[2]
    assert len(splits) >= 3 * 2 * 4   # per step: x @ W1^T, g @ W2, g^T @ h, g^T @ x at least


def _cnn_step(seed=0):
    import minigrad.nn as nn
    import minigrad.nn.functional as F
    mg.manual_seed(seed)
    # a 3x3 stride-1 conv of 8 channels on 8x8 (Winograd), a 5x5 stride-2 conv (im2col + GEMM)
    conv1 = nn.Conv2d(3, 8, 5, stride=2, padding=2)
    conv2 = nn.Conv2d(8, 16, 3, padding=1)
    head = nn.Linear(16 * 8 * 8, 10)
    params = list(conv1.parameters()) + list(conv2.parameters()) + list(head.parameters())
    opt = mg.optim.SGD(params, lr=0.05)
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.standard_normal((8, 3, 16, 16)).astype(np.float32))
    y = mg.tensor(rng.integers(0, 10, 8))
    for _ in range(2):
        opt.zero_grad()
        h = F.relu(conv2(F.relu(conv1(x))))
        loss = F.cross_entropy(head(h.reshape(8, -1)), y)
        loss.backward()
        opt.step()
    return [_bits(loss.detach().numpy())] + [_bits(p.detach().numpy()) for p in params]


@needs_numba
def test_cnn_training_steps_through_winograd_and_im2col_are_bitwise_the_same(pool_policy, splits, monkeypatch):
    from minigrad.ops import _conv2d as C
    monkeypatch.setattr(_pool, "GEMM_BLOCK", 1 << 10)
    wino, gemm = [], []
    real_w, real_g = C._wino_forward, C._gemm_forward
    monkeypatch.setattr(C, "_wino_forward", lambda *a: wino.append(1) or real_w(*a))
    monkeypatch.setattr(C, "_gemm_forward", lambda *a: gemm.append(1) or real_g(*a))
    got = []
    for n in (1, 2, 4):
        mg.set_num_threads(n)
        got.append(_cnn_step())
    assert got[0] == got[1] == got[2]
    assert wino and gemm and splits   # both conv paths ran, and GEMMs were split


def test_eight_caller_threads_split_gemms_at_once(pool_policy, monkeypatch):
    monkeypatch.setattr(_pool, "GEMM_BLOCK", 1 << 12)
    mg.set_num_threads(2)
    rng = np.random.default_rng(3)
    pairs = [(rng.standard_normal((96, 64)).astype(np.float32), rng.standard_normal((64, 80)).astype(np.float32))
             for _ in range(8)]
    want = [_bits(_pool.matmul(a, b)) for a, b in pairs]

    def caller(i):
        for _ in range(20):
            assert _bits(_pool.matmul(*pairs[i])) == want[i]
    at_once(caller)


def _child_gemm(q, want):
    try:
        _pool.GEMM_BLOCK = 1 << 12     # (the fork copies the parent's module state, not the test's patch)
        a = np.arange(96 * 64, dtype=np.float32).reshape(96, 64) % 13
        b = np.arange(64 * 80, dtype=np.float32).reshape(64, 80) % 7
        q.put((_bits(_pool.matmul(a, b)) == want, _pool.workers()))
    except BaseException as e:  # noqa: BLE001
        q.put(repr(e))


@pytest.mark.skipif(not hasattr(os, "fork") or "fork" not in multiprocessing.get_all_start_methods(),
                    reason="no fork on this platform")
def test_fork_after_parallel_gemms(pool_policy, monkeypatch):
    monkeypatch.setattr(_pool, "GEMM_BLOCK", 1 << 12)
    mg.set_num_threads(2)
    a = np.arange(96 * 64, dtype=np.float32).reshape(96, 64) % 13
    b = np.arange(64 * 80, dtype=np.float32).reshape(64, 80) % 7
    want = _bits(_pool.matmul(a, b))   # the parent's pool is running
    assert _pool.workers() == 1
    ctx = multiprocessing.get_context("fork")
    q = ctx.SimpleQueue()
    p = ctx.Process(target=_child_gemm, args=(q, want))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert q.get() == (True, 1)        # the child made its own pool of one worker


@needs_numba
def test_conv_kernels_split_by_channels_are_bitwise_the_serial_pass(pool_policy, splits):
    """Winograd's four transforms, im2col and col2im, above their thresholds, for 1, 2 and 4 threads:
    the bits of one serial pass over every channel (each channel's arithmetic is its own)."""
    W, Cv = kernels.load("winograd"), kernels.load("conv")
    rng = np.random.default_rng(5)
    N, C, H = 4, 19, 20                               # 19 channels: ranges of uneven length
    TH = TW = H // 2
    P = N * TH * TW
    x = rng.standard_normal((N, C, H, H)).astype(np.float32)
    V0 = rng.standard_normal((16, C, P)).astype(np.float32)
    cols0 = rng.standard_normal((C * 25, N * H * H)).astype(np.float32)
    b = rng.standard_normal(C).astype(np.float32)
    assert V0.size >= max(W._INPUTS_MIN, W._OUTPUTS_MIN, W._OUTPUTS_ADJ_MIN, W._INPUTS_ADJ_MIN)
    assert cols0.size >= max(Cv._IM2COL_MIN, Cv._COL2IM_MIN)

    def passes(serial):
        V, out, dM, dx = np.empty_like(V0), np.empty((C, N, H, H), np.float32), np.empty_like(V0), \
            np.empty((C, N, H, H), np.float32)
        db, cols, dx2 = np.empty(C), np.empty_like(cols0), np.empty((C, N, H, H), np.float32)
        if serial:
            W._inputs(x, False, V, 1, 1, TH, TW, 0, C)
            W._outputs(V0, out, b, True, 0, C)
            W._outputs_adjoint(x, False, dM, db, 0, C)
            W._inputs_adjoint(V0, dx, 1, 1, TH, TW, 0, C)
            Cv._im2col(x, False, cols, 5, 5, 1, 1, 1, 1, 2, 2, H, H, 0, C)
            Cv._col2im(cols0, dx2, 5, 5, 1, 1, 1, 1, 2, 2, H, H, 0, C)
        else:
            W.inputs(x, False, V, 1, 1, TH, TW)
            W.outputs(V0, out, b, True)
            W.outputs_adjoint(x, False, dM, db)
            W.inputs_adjoint(V0, dx, 1, 1, TH, TW)
            Cv.im2col(x, False, cols, 5, 5, 1, 1, 1, 1, 2, 2, H, H)
            Cv.col2im(cols0, dx2, 5, 5, 1, 1, 1, 1, 2, 2, H, H)
        return [_bits(a) for a in (V, out, dM, db, dx, cols, dx2)]
    want = passes(True)
    for n in (1, 2, 4):
        mg.set_num_threads(n)
        assert passes(False) == want, f"{n} threads"
    assert len(splits) == 2 * 6 and min(splits) >= 2   # with 2 and 4 threads, every pass split


def test_the_policy_variable_at_import(monkeypatch):
    """$MINIGRAD_THREAD_POLICY=pool alone leaves BLAS as it is (importing changes nothing); with
    $MINIGRAD_NUM_THREADS BLAS is set to one thread at import; show_config says the policy."""
    pytest.importorskip("threadpoolctl", reason="threadpoolctl (the examples extra) is not installed")
    import json
    import subprocess
    import sys
    code = ("import json, threadpoolctl as t, numpy\n"
            "blas = lambda: [l['num_threads'] for l in t.threadpool_info() if l['user_api'] == 'blas']\n"
            "b = blas()\n"
            "import minigrad as mg\n"
            "a = blas()\n"
            "mg.set_num_threads(2)\n"
            "print(json.dumps([b, a, blas(), 'thread policy pool' in mg.__config__.show()]))")
    env = {k: v for k, v in os.environ.items() if k not in ("MINIGRAD_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(MINIGRAD_THREAD_POLICY="pool", PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(mg.__file__))] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    before, after, later, shown = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                                            text=True, check=True).stdout)
    assert after == before and set(later) <= {1} and shown
    monkeypatch.setenv("MINIGRAD_THREAD_POLICY", "pool")
    assert _threads._env_policy() == "pool"
    monkeypatch.setenv("MINIGRAD_THREAD_POLICY", "numba")
    with pytest.raises(ValueError, match="MINIGRAD_THREAD_POLICY='numba' is not one of blas, pool"):
        _threads._env_policy()
