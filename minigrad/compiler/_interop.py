"""Running a compiled program's independent branches at once: the inter-op threads.

A separate pool from the intra-op one (minigrad/_pool.py), as PyTorch keeps its inter-op pool apart
from its intra-op threads: ``mg.get_num_interop_threads() - 1`` persistent daemon workers (the
calling thread runs branches too), made on the first parallel group and kept. While BLAS has
several threads a group uses at most cores // BLAS threads (threads_now): never more GEMM threads
than cores. A _pool.Lazy with _pool.py's worker and job classes, so it has the same properties: many callers at once, a branch may itself
call either pool (the caller then works on its own job), fork drops it (the child makes a new one),
exit stops it.

Each branch runs with the caller's thread-local state: grad mode (and where no_grad was entered),
the transform levels and the trace in progress, the saved-tensor hooks and checkpoint recomputation
depth, and control flow's eager depth; the worker's own are put back afterwards. An exception in a
branch is raised in the caller once every branch has finished (the lowest-numbered branch's when
several raise), so nothing is still writing into the program's buffers when the caller unwinds.
"""
import threading

from .. import _pool
from .. import _threads
from .._threads import get_num_interop_threads
from ..autograd import graph as _agraph
from ..autograd.grad_mode import _state as _grad

__all__ = ["run_branches", "threads_now", "workers"]

_branches = _pool.Lazy()   # the inter-op pool, apart from the kernels' (minigrad/_pool.py)


def _capture():
    from .. import control_flow as _cf
    h = _agraph._hooks
    return (_grad.enabled, _grad.site, _grad.levels, _grad.tracer, list(h.stack), h.recomputing,
            getattr(_cf._local, "eager", 0))


def _install(st):
    from .. import control_flow as _cf
    h = _agraph._hooks
    _grad.enabled, _grad.site, _grad.levels, _grad.tracer, h.stack, h.recomputing, _cf._local.eager = st


def workers():
    """The inter-op pool's live worker threads (for tests)."""
    return _branches.workers()


def threads_now(n=None):
    """The threads a parallel group of n branches runs on now (the caller included): the inter-op
    threads, at most n, and, while BLAS (the intra-op threads) has more than one thread, at most
    the cores // the intra-op threads, so branches' GEMMs never ask for more threads than there are
    cores (measured on the 2-core machine: a bidirectional LSTM step with BLAS on two threads went
    from 348 ms serial to 408 ms with two branches at once; with BLAS on one thread, 40 -> 33 ms)."""
    t = get_num_interop_threads()
    if n is not None:
        t = min(t, n)
    intra = _threads.get_num_threads()
    a = _threads.adapted()
    if a:
        intra = min(intra, a)
    if intra > 1:
        t = min(t, max(1, _threads._cores() // intra))
    return max(1, t)


def run_branches(calls, threads=None):
    """Run each (fn, args) of `calls` once, at once on up to `threads` threads (default
    threads_now(); the caller is one of them); returns [fn(*args)] in order. One thread: in
    order, on the caller."""
    n = len(calls)
    t = threads_now(n) if threads is None else threads
    if t <= 1 or n <= 1:
        return [fn(*a) for fn, a in calls]
    results = [None] * n
    errors = [None] * n
    st = _capture()
    me = threading.get_ident()

    def one(k):
        fn, a = calls[k]
        own = threading.get_ident() != me
        if own:
            prev = _capture()
            _install(st)
        try:
            results[k] = fn(*a)
        except BaseException as e:  # noqa: BLE001 -- raised in the caller below
            errors[k] = e
        finally:
            if own:
                _install(prev)

    p = _branches.get(min(t, n) - 1)
    job = _pool._Job(one, [(k,) for k in range(n)])
    for _ in range(min(t, n) - 1):
        p.jobs.put(job)
    job.work()
    job.finished.wait()
    for e in errors:
        if e is not None:
            raise e
    return results
