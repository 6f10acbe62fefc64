"""minigrad.distributed's collectives, launch and failure handling, under `mpirun -n 2`."""
import subprocess
import sys

import numpy as np
import pytest

import minigrad.distributed as dist
from minigrad.distributed.run import LOCAL_ARGS, build_command, main as run_main, mpi_env
from mpi_helpers import REPO, WORKERS, requires_mpi, run_mpi, run_ranks_json

BASE = np.array([1.0, -2.0, 3.0])  # rank r sends BASE * (r + 2)


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    return run_ranks_json(tmp_path_factory.mktemp("coll"), "collectives.py", "coll")


@requires_mpi
def test_group_facts(coll):
    for r, res in enumerate(coll):
        assert (res["rank"], res["world"], res["initialized"], res["backend"]) == (r, 2, True, "mpi")


@requires_mpi
def test_all_reduce_every_op(coll):
    a, b = BASE * 2, BASE * 3
    want = {"SUM": a + b, "PRODUCT": a * b, "MIN": np.minimum(a, b), "MAX": np.maximum(a, b),
            "AVG": (a + b) / 2}
    for res in coll:
        for op, w in want.items():
            np.testing.assert_array_equal(res[f"all_reduce_{op}"], w, err_msg=op)
        assert res["all_reduce_int64_MAX"] == [6, 8]
        np.testing.assert_array_equal(res["all_reduce_transposed"], np.arange(6.0).reshape(2, 3).T * 3)


@requires_mpi
def test_async_work_handle(coll):
    for res in coll:
        assert res["async_is_work"] and res["async_wait"] and res["async_completed"]
        np.testing.assert_array_equal(res["all_reduce_async_float32"], BASE * 5)


@requires_mpi
def test_broadcast_gather_scatter(coll):
    for r, res in enumerate(coll):
        np.testing.assert_array_equal(res["broadcast_from_1"], BASE * 3)
        np.testing.assert_array_equal(res["all_gather"], [BASE * 2, BASE * 3])
        np.testing.assert_array_equal(res["all_gather_into_tensor"], np.concatenate([BASE * 2, BASE * 3]))
        # rank r receives sum over senders s of [10 r + s, 1]
        np.testing.assert_array_equal(res["reduce_scatter"], [20 * r + 1, 2])
        # chunk r of (arange(4) + s), averaged over s in {0, 1}
        np.testing.assert_array_equal(res["reduce_scatter_tensor_AVG"], np.arange(4.0)[2 * r:2 * r + 2] + 0.5)
        np.testing.assert_array_equal(res["scatter"], [r + 1, 2 * (r + 1)])
        assert res["barrier"]
    np.testing.assert_array_equal(coll[0]["gather"], [BASE * 2, BASE * 3])
    assert coll[1]["gather"] is None


@requires_mpi
def test_differentiable_all_reduce(coll):
    # y = sum_r (r + 1) x = 3x on both ranks; total loss sum_r |y|^2, so dx on rank r = 2 * 2y * (r + 1)
    x = np.array([1.0, 2.0])
    for r, res in enumerate(coll):
        np.testing.assert_array_equal(res["diff_all_reduce_value"], 3 * x)
        np.testing.assert_array_equal(res["diff_all_reduce_grad"], 4 * 3 * x * (r + 1))


@requires_mpi
def test_errors_name_the_op(coll):
    e = coll[0]["errors"]
    assert e["bad_op"].startswith("TypeError: all_reduce: op must be a ReduceOp")
    assert "broadcast: src=5" in e["bad_src"]
    assert "all_gather: tensor_list must be a list of world_size=2" in e["bad_list"]
    assert "ReduceOp.AVG needs a floating-point tensor, got int64" in e["avg_int"]
    assert "twice" in e["twice"]
    assert "'nccl' is not supported" in e["backend"]


@requires_mpi
def test_destroy_and_reinit(coll):
    for res in coll:
        assert res["after_destroy"] is False
        assert "has not been initialized" in res["get_rank_after_destroy"]
        np.testing.assert_array_equal(res["reinit_all_reduce"], BASE * 5)


@requires_mpi
def test_exception_on_one_rank_aborts_the_job_with_its_traceback():
    proc = run_mpi("failures.py", "exception")
    assert proc.returncode != 0
    assert "[rank 1] uncaught exception; aborting the MPI job (MPI_Abort)" in proc.stderr
    assert "[rank 1] Traceback (most recent call last):" in proc.stderr
    assert "[rank 1] ValueError: boom from rank 1" in proc.stderr
    assert "finished normally" not in proc.stdout  # rank 0, waiting in its barrier, was killed


@requires_mpi
def test_collective_timeout_names_op_sequence_and_rank():
    proc = run_mpi("failures.py", "timeout", 1.5)
    assert proc.returncode != 0
    assert ("DistTimeoutError: minigrad.distributed: all_reduce (collective #2 of this process group) "
            "timed out after 1.5 s on rank 0 of 2") in proc.stderr
    assert "finished normally" not in proc.stdout  # the sleeping rank 1 was taken down by the abort


@requires_mpi
@pytest.mark.parametrize("mode", ["exit", "skip"])
def test_a_rank_that_leaves_ends_the_job_at_once_naming_it_and_where(mode):
    """Issue 31 item 10: rank 1 leaves (sys.exit(3), or its script ends having skipped a barrier)
    while rank 0 waits in collective #2; with the default 30-minute timeout the job hung. Now rank 0
    reads rank 1's leave notice and fails within seconds naming rank 1, its count and its line."""
    import time
    t0 = time.monotonic()
    proc = run_mpi("failures.py", mode, timeout=60)
    took = time.monotonic() - t0
    assert proc.returncode != 0
    assert ("DistPeerError: minigrad.distributed: barrier (collective #2 of this process group) cannot "
            "complete on rank 0 of 2: rank 1 left the job after joining 1 collective(s)") in proc.stderr
    where = "sys.exit(3) at " + str(WORKERS / "failures.py") + ":" if mode == "exit" else "its script ended"
    assert where in proc.stderr
    assert "rank 0 finished normally" not in proc.stdout
    assert took < 30, took  # seconds, not the 1,800 s timeout


@requires_mpi
def test_mismatched_shapes_are_named_with_their_ranks_before_mpi_runs_them():
    """Issue 31 item 9: DDP over models that differ between ranks corrupted the heap (SIGABRT, no
    rank named); all_reduce of 4 vs 3 elements gave rank 0 wrong values before MPI_ERR_TRUNCATE. DDP
    checks always; collectives in DETAIL debug mode."""
    proc = run_mpi("failures.py", "ddp")
    assert proc.returncode != 0
    assert ("DistMismatchError: minigrad.distributed: DistributedDataParallel (the model on each rank): the "
            "ranks differ: parameter '1.weight': (2, 4) float32 on rank 0; parameter '1.weight': (5, 4) "
            "float32 on rank 1") in proc.stderr
    import os
    os.environ["MINIGRAD_DISTRIBUTED_DEBUG"] = "DETAIL"
    try:
        proc = run_mpi("failures.py", "mismatch")
    finally:
        del os.environ["MINIGRAD_DISTRIBUTED_DEBUG"]
    assert proc.returncode != 0
    assert ("the ranks differ: all_reduce((4,) float32, op=SUM) on rank 0; "
            "all_reduce((3,) float32, op=SUM) on rank 1") in proc.stderr
    assert "finished normally" not in proc.stdout


@requires_mpi
def test_single_process_without_mpirun_is_a_group_of_one():
    code = ("import minigrad as mg, minigrad.distributed as d; d.init_process_group('mpi');"
            "t = mg.ones(2); d.all_reduce(t); print(d.get_rank(), d.get_world_size(), t.tolist())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=mpi_env(), cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "0 1 [1.0, 1.0]"


def test_not_initialized_errors():
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="get_world_size: Default process group has not been initialized"):
        dist.get_world_size()
    with pytest.raises(RuntimeError, match="all_reduce: Default process group"):
        dist.all_reduce(None)
    with pytest.raises(ValueError, match="backend 'gloo' is not supported"):
        dist.init_process_group("gloo")


def test_launcher_builds_an_mpirun_command(capsys):
    cmd = build_command(4, "train.py", ["--epochs", "2"], mpirun="/x/mpirun", python="py")
    assert cmd == ["/x/mpirun", "-n", "4", *LOCAL_ARGS, "py", "train.py", "--epochs", "2"]
    cmd = build_command(8, "train.py", mpirun="mpirun", hostfile="hosts", mpi_args=["-x", "PATH"], python="py")
    assert cmd == ["mpirun", "-n", "8", "--hostfile", "hosts", "-x", "PATH", "py", "train.py"]  # no loopback-only
    env = mpi_env({})
    import os
    if os.geteuid() == 0:
        assert env["OMPI_ALLOW_RUN_AS_ROOT"] == env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"


@requires_mpi
def test_launcher_dry_run_and_run(capsys, tmp_path):
    assert run_main(["-n", "3", "--dry-run", "script.py", "--lr", "1"]) == 0
    line = capsys.readouterr().out.strip()
    assert " -n 3 --oversubscribe " in line and line.endswith("script.py --lr 1")
    script = tmp_path / "hello.py"
    script.write_text("import minigrad.distributed as d; d.init_process_group();"
                      "print('hello', d.get_rank(), d.get_world_size(), flush=True)")
    proc = subprocess.run([sys.executable, "-m", "minigrad.distributed.run", "-n", "2", str(script)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split("\n")[:2]) == ["hello 0 2", "hello 1 2"]


class _FakeRequest:
    """An MPI request that completes on its n-th Test() (or never, n=None)."""

    def __init__(self, n):
        self.n, self.tests = n, 0

    def Test(self):
        self.tests += 1
        return self.n is not None and self.tests >= self.n


class _FakeGroup:
    rank, size = 1, 2


def test_poll_spins_without_napping_while_a_collective_progresses(monkeypatch):
    """Open MPI advances a non-blocking collective only inside MPI calls (each Test): napping
    between Tests would stretch the transfer itself. Within the spin window no sleep happens."""
    from minigrad.distributed import distributed_c10d as c10d
    naps = []
    monkeypatch.setattr(c10d.time, "sleep", naps.append)
    clock = iter(np.arange(0.0, 1.0, 1e-6))  # each monotonic() call: 1 us later (no real timing)
    monkeypatch.setattr(c10d.time, "monotonic", lambda: float(next(clock)))
    req = _FakeRequest(5000)  # 5 ms of polling: a 0.8 MB all-reduce needs hundreds of Tests
    c10d._poll(_FakeGroup(), req, "all_reduce", 7, timeout=60)
    assert req.tests == 5000 and naps == []


def test_poll_backs_off_after_the_spin_window_and_times_out(monkeypatch):
    from minigrad.distributed import distributed_c10d as c10d
    monkeypatch.setattr(c10d, "_SPIN_S", 0.0)
    naps = []
    monkeypatch.setattr(c10d.time, "sleep", naps.append)  # no real sleeping: the test stays fast
    clock = iter(np.arange(0.0, 1e6, 0.25))  # each monotonic() call: 0.25 s later
    monkeypatch.setattr(c10d.time, "monotonic", lambda: float(next(clock)))
    with pytest.raises(dist.DistTimeoutError, match=r"all_reduce \(collective #7.*rank 1 of 2"):
        c10d._poll(_FakeGroup(), _FakeRequest(None), "all_reduce", 7, timeout=5)
    assert naps[0] == c10d._NAP_MIN_S and max(naps) == c10d._NAP_MAX_S
    assert naps == sorted(naps)  # doubling up to the cap
