"""mg.set_num_threads / get_num_threads and the inter-op pair (issue 38 item 1): PyTorch's names,
errors and meaning; BLAS's threads follow (threadpoolctl); importing minigrad leaves them alone
unless $MINIGRAD_NUM_THREADS is set."""
import subprocess
import sys

import pytest

import minigrad as mg
from minigrad import _threads


@pytest.fixture
def restore():
    saved = (_threads._threads, _threads._interop, _threads._warned)
    tp = pytest.importorskip("threadpoolctl", reason="threadpoolctl (the examples extra) is not installed")
    before = [lib["num_threads"] for lib in tp.threadpool_info() if lib["user_api"] == "blas"]
    yield tp
    _threads._threads, _threads._interop, _threads._warned = saved
    if before:
        tp.threadpool_limits(limits=before[0], user_api="blas")


def _blas_threads(tp):
    return [lib["num_threads"] for lib in tp.threadpool_info() if lib["user_api"] == "blas"]


def test_set_num_threads_sets_blas_and_reads_back(restore):
    mg.set_num_threads(1)
    assert mg.get_num_threads() == 1 and _blas_threads(restore) == [1] * len(_blas_threads(restore))
    mg.set_num_threads(3)   # more than the cores: allowed, as in PyTorch
    assert mg.get_num_threads() == 3 and set(_blas_threads(restore)) == {3}
    assert "threads: 3" in mg.__config__.show() and "mg.get_num_threads() : 3" in mg.__config__.parallel_info()


@pytest.mark.parametrize("bad, msg", [(0, "expects a positive integer"), (-2, "expects a positive integer"),
                                      (2.5, "expects an int, but got float"), ("2", "expects an int, but got str")])
def test_bad_counts_raise_as_pytorch(restore, bad, msg):
    with pytest.raises(RuntimeError, match=f"set_num_threads {msg}"):
        mg.set_num_threads(bad)
    with pytest.raises(RuntimeError, match=f"set_num_interop_threads {msg}"):
        mg.set_num_interop_threads(bad)


def test_interop_threads_are_set_once(restore):
    _threads._interop = None
    mg.set_num_interop_threads(2)
    assert mg.get_num_interop_threads() == 2
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        mg.set_num_interop_threads(2)


def test_without_threadpoolctl_the_count_is_kept_and_one_warning_says_how(restore, monkeypatch):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)   # import threadpoolctl -> ImportError
    _threads._warned = False
    with pytest.warns(RuntimeWarning, match="BLAS library's threads are unchanged.*OPENBLAS_NUM_THREADS=1"):
        mg.set_num_threads(1)
    assert mg.get_num_threads() == 1
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mg.set_num_threads(2)   # warned once per process


def test_import_leaves_blas_alone_and_the_variable_sets_it():
    pytest.importorskip("threadpoolctl", reason="threadpoolctl (the examples extra) is not installed")
    code = ("import json, threadpoolctl as t, numpy\n"
            "b = [l['num_threads'] for l in t.threadpool_info() if l['user_api'] == 'blas']\n"
            "import minigrad as mg\n"
            "a = [l['num_threads'] for l in t.threadpool_info() if l['user_api'] == 'blas']\n"
            "print(json.dumps([b, a, mg.get_num_threads()]))")
    import json
    import os
    env = {k: v for k, v in os.environ.items() if k not in ("MINIGRAD_NUM_THREADS", "OMP_NUM_THREADS")}
    run = lambda: json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,  # noqa: E731
                                            text=True, check=True).stdout)
    before, after, _ = run()
    assert after == before                      # importing minigrad changes no thread count
    env["MINIGRAD_NUM_THREADS"] = "1"
    before, after, n = run()
    assert set(after) == {1} and n == 1
    env["MINIGRAD_NUM_THREADS"] = "zero"
    bad = subprocess.run([sys.executable, "-c", "import minigrad"], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "$MINIGRAD_NUM_THREADS='zero' is not a positive integer" in bad.stderr


def test_busy_machine_lowers_blas_threads_and_a_quiet_one_restores_them(restore, monkeypatch):
    """Issue 38 item 4: at an optimizer step, at most every half second, the median of the last five
    readings of other processes' runnable threads decides how many cores are free."""
    monkeypatch.setenv("MINIGRAD_ADAPTIVE_THREADS", "1")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(_threads, "_cores", lambda: 4)
    monkeypatch.setattr(_threads, "_threads", None)
    monkeypatch.setattr(_threads, "_adapted", None)
    monkeypatch.setattr(_threads, "_others", __import__("collections").deque(maxlen=5))
    restore.threadpool_limits(limits=4, user_api="blas")
    readings = iter([3, 3, 3, 0, 0, 0, 0])
    monkeypatch.setattr(_threads, "_runnable_others", lambda: next(readings))
    opt = mg.optim.SGD([mg.zeros(2, requires_grad=True)], lr=0.1)
    seen = []
    for _ in range(7):
        _threads._next_look = 0.0          # as if half a second had passed
        opt.step()
        seen.append((_threads.adapted(), _blas_threads(restore)[0]))
    assert seen == [(1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (None, 4), (None, 4)]  # the median turns at the 3rd quiet reading
    assert "1 for now" not in mg.__config__.show()
    opt.step()                              # within the half second: not looked at again
    mg.set_num_threads(2)                   # the user's number wins from now on
    _threads._next_look = 0.0
    monkeypatch.setattr(_threads, "_runnable_others", lambda: 3)
    opt.step()
    assert _threads.adapted() is None and set(_blas_threads(restore)) == {2}


def test_adaptation_stays_off_when_asked(restore, monkeypatch):
    monkeypatch.setattr(_threads, "_threads", None)
    monkeypatch.setattr(_threads, "_runnable_others", lambda: pytest.fail("looked at the load"))
    _threads._next_look = 0.0
    _threads.adapt()                        # the suite's default: MINIGRAD_ADAPTIVE_THREADS=0
    monkeypatch.setenv("MINIGRAD_ADAPTIVE_THREADS", "1")
    mg.use_deterministic_algorithms(True)
    try:
        _threads._next_look = 0.0
        _threads.adapt()
    finally:
        mg.use_deterministic_algorithms(False)
    assert _threads._runnable_others  # (the reading itself works on Linux)
