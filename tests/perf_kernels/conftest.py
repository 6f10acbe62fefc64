"""Fixtures shared by the kernel tests."""
import pytest

from minigrad import _threads


@pytest.fixture
def threads_restored():
    """The thread count and BLAS's threads as before the test (which may call mg.set_num_threads)."""
    saved = _threads._threads
    tp = pytest.importorskip("threadpoolctl", reason="threadpoolctl (the examples extra) is not installed")
    before = [lib["num_threads"] for lib in tp.threadpool_info() if lib["user_api"] == "blas"]
    yield
    _threads._threads = saved
    if before:
        tp.threadpool_limits(limits=before[0], user_api="blas")
