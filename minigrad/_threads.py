"""How many threads minigrad computes with: ``mg.set_num_threads`` / ``mg.get_num_threads`` and the
inter-op pair, with PyTorch's names and meaning.

The intra-op threads are the BLAS library's (NumPy's OpenBLAS or MKL: matmul, conv's GEMMs) and
minigrad's own pool's (minigrad/_pool.py: its numba kernels split over that many threads, the
caller included, above a size threshold, once the count was chosen with set_num_threads or
$MINIGRAD_NUM_THREADS; by default the kernels are serial, measured faster on 2 cores): one number
for both. BLAS is set through
threadpoolctl (the ``examples`` and ``all`` extras install it); without it ``set_num_threads``
records the number, warns once that BLAS is unchanged and says how to set it instead.

Importing minigrad changes nothing by itself: ``$MINIGRAD_NUM_THREADS`` set at import is applied as
``set_num_threads`` would (``$OMP_NUM_THREADS`` / ``$OPENBLAS_NUM_THREADS`` are read by BLAS itself
when it loads). Lower the count on a machine that other jobs keep busy: OpenBLAS's idle workers spin
for a core another process holds (three epochs of the MNIST MLP example on a busy 2-core machine:
15-26 s with the default threads, 1.8-2.1 s with one, as measured on this 2-core machine).

Under contention minigrad uses fewer threads by itself: at most every half second,
at an optimizer step, it reads how many threads of *other* processes are runnable (Linux:
/proc/loadavg's running count minus this process's running threads) and, while fewer cores are free
than BLAS has threads, lowers BLAS's threads to the free cores (at least one), raising them back when
the cores free up (the median of the last five readings decides, so one reading does not flip it).
It never acts after set_num_threads or with $MINIGRAD_NUM_THREADS (your number wins), nor without
threadpoolctl, nor under mg.use_deterministic_algorithms(True) (a GEMM's bits can depend on its
thread count: (64, 784) @ (784, 256) differs between one and two OpenBLAS threads);
$MINIGRAD_ADAPTIVE_THREADS=0 turns it off (the test suite does, so bitwise comparisons within a
test do not depend on the machine's load). show_config says what it chose.

Thread policy: who splits the work (``$MINIGRAD_THREAD_POLICY``, read at import; ``_set_policy``
sets it in a running process, for tests and benchmarks). Either way it matters only once the threads
were chosen (set_num_threads or $MINIGRAD_NUM_THREADS); by default nothing changes.

* ``blas`` (the default, design A of issue 38): BLAS runs its GEMMs on n threads of its own and the
  pool splits minigrad's kernels over n threads.
* ``pool`` (design C): BLAS is limited to one thread (threadpoolctl) and minigrad's pool splits the
  GEMMs itself (``_pool.matmul``: row, column or batch blocks, each a one-thread BLAS call into a
  slice of the result, blocks fixed by the problem's size) as well as its kernels, so no BLAS worker
  spins against a pool thread. The blocks are the same for any thread count, so the results are
  bitwise the same for 1, 2 or 4 threads; a split 2-D GEMM may differ from the unsplit one in the
  last bits (OpenBLAS picks kernels by size; see _pool.matmul).

Inter-op threads run independent branches of a compiled graph at once (compiler/passes/schedule.py
finds them, compiler/_interop.py runs them on a pool of its own): only once
``set_num_interop_threads(n > 1)`` was called, and only for a group whose branches save enough work
(measured on 2 cores: it pays with BLAS on one thread, never with BLAS on both); ``mg.jit.explain``
shows the schedule. Set it once, before anything else, as PyTorch requires.
"""
import os
import sys
import time
import warnings
from collections import deque

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads"]

_threads = None        # set by set_num_threads (or $MINIGRAD_NUM_THREADS at import); None: the default
_interop = None        # set once by set_num_interop_threads
_warned = False
_PERIOD_S = 0.5        # how often an optimizer step may look at the machine's load
_next_look = 0.0
_others = deque(maxlen=5)   # the last readings of other processes' runnable threads
_adapted = None        # the BLAS thread count the adaptation set, or None (untouched)
POLICIES = ("blas", "pool")


def _env_policy():
    v = os.environ.get("MINIGRAD_THREAD_POLICY", "").strip().lower() or "blas"
    if v not in POLICIES:
        raise ValueError(f"minigrad: $MINIGRAD_THREAD_POLICY={v!r} is not one of {', '.join(POLICIES)}")
    return v


_policy = _env_policy()   # "blas" (BLAS threads its GEMMs) or "pool" (one-thread BLAS, the pool splits GEMMs)


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _env_threads(name):
    v = os.environ.get(name, "").strip()
    if not v:
        return None
    try:
        n = int(v.split(",")[0])   # OMP_NUM_THREADS may list nested levels: the first is ours
    except ValueError:
        raise ValueError(f"minigrad: ${name}={v!r} is not a positive integer") from None
    if n < 1:
        raise ValueError(f"minigrad: ${name}={v!r} is not a positive integer")
    return n


def _check(fn, n):
    if isinstance(n, bool) or not hasattr(n, "__index__"):  # an int or NumPy integer, not a bool
        raise RuntimeError(f"{fn} expects an int, but got {type(n).__name__}")
    n = n.__index__()
    if n < 1:
        raise RuntimeError(f"{fn} expects a positive integer, got {n}")
    return n


def get_num_threads():
    """The number of threads used for intra-op parallelism (BLAS and numba), as
    ``torch.get_num_threads``: the value last given to [`set_num_threads`][minigrad.set_num_threads],
    else ``$MINIGRAD_NUM_THREADS`` or ``$OMP_NUM_THREADS``, else the cores available to this process."""
    if _threads is not None:
        return _threads
    return _env_threads("OMP_NUM_THREADS") or _cores()


def set_num_threads(n):
    """Set the number of threads used for intra-op parallelism, as ``torch.set_num_threads``: the
    BLAS library's threads (through threadpoolctl) and minigrad's own pool's (its kernels -- norms,
    GELU, attention's softmax, pooling, Winograd, the optimizer updates -- split over ``n`` threads
    above a size threshold, bitwise the same results). Takes effect at once and for the rest of the
    process (or the next call). Under the thread policy "pool" ($MINIGRAD_THREAD_POLICY=pool, see
    minigrad/_threads.py) BLAS is set to one thread instead and minigrad's pool splits the GEMMs over
    the ``n`` threads too: measured on 2 cores it is faster for large GEMMs (a Transformer step
    0.82-0.92x, a 32/64-channel CNN 0.87x the default policy's time) and slower for small ones (a
    784-256-128-10 MLP 1.3x).

    Args:
        n (int): a positive number of threads.

    Raises:
        RuntimeError: ``n`` is not a positive int (PyTorch's error type).

    Example:
        >>> mg.set_num_threads(1)   # a busy machine: one BLAS thread, no spinning workers
        >>> mg.get_num_threads()
        1
    """
    global _threads
    n = _check("set_num_threads", n)
    _threads = n
    _apply(n)


def _set_policy(policy):
    """Set the thread policy ("blas" or "pool") in a running process; once the threads were chosen,
    BLAS's threads follow at once (1 under "pool", the chosen count under "blas")."""
    global _policy
    if policy not in POLICIES:
        raise ValueError(f"minigrad: thread policy {policy!r} is not one of {', '.join(POLICIES)}")
    _policy = policy
    if _threads is not None:
        _apply(_threads)


def _apply(n):
    global _warned
    blas_n = 1 if _policy == "pool" else n   # design C: BLAS on one thread, the pool splits the GEMMs
    try:
        import threadpoolctl
    except ImportError:
        threadpoolctl = None
    if threadpoolctl is not None:
        threadpoolctl.threadpool_limits(limits=blas_n, user_api="blas")   # persists: not used as a context
    elif not _warned:
        _warned = True
        warnings.warn(f"mg.set_num_threads({n}): the BLAS library's threads are unchanged because threadpoolctl "
                      f"is not installed (pip install threadpoolctl, or minigrad's 'examples' extra); set "
                      f"OPENBLAS_NUM_THREADS={blas_n} (or OMP_NUM_THREADS) before starting Python instead",
                      RuntimeWarning, stacklevel=3)
    numba = sys.modules.get("numba")   # only when already loaded: never import it for this
    if numba is not None:
        try:
            numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        except Exception:  # noqa: BLE001 -- numba's layer not started, or refusing: BLAS is what counts
            pass


def get_num_interop_threads():
    """The number of threads for inter-op parallelism, as ``torch.get_num_interop_threads``: the
    value given to [`set_num_interop_threads`][minigrad.set_num_interop_threads], else the cores
    available. Compiled graphs use it for their independent branches once it was set (see
    [`set_num_interop_threads`][minigrad.set_num_interop_threads])."""
    return _interop if _interop is not None else _cores()


def set_num_interop_threads(n):
    """Set the number of inter-op threads, as ``torch.set_num_interop_threads``: once, before any
    other call (a second call raises RuntimeError, as PyTorch's). With n > 1 a compiled graph
    (mg.jit) runs its independent branches at once on up to n threads where that saves enough work
    (a bidirectional RNN's two directions, attention's three projections); ``mg.jit.explain`` shows
    the schedule and why a group stays serial. Until it is called, compiled graphs run in order.

    Args:
        n (int): a positive number of threads.
    """
    global _interop
    n = _check("set_num_interop_threads", n)
    if _interop is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop = n


def _at_import():
    """$MINIGRAD_NUM_THREADS, when set, is applied at import as set_num_threads would."""
    global _threads
    n = _env_threads("MINIGRAD_NUM_THREADS")
    if n is not None:
        _threads = n
        _apply(n)


def _runnable_others():
    """Threads of other processes that are runnable now (Linux), or None where unknown: the
    system's running count (/proc/loadavg, the reader included) minus this process's running
    threads (its BLAS workers spinning count as running)."""
    try:
        with open("/proc/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
        mine = 0
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue   # the thread ended meanwhile
            mine += stat[stat.rindex(")") + 2] == "R"
        return max(0, running - max(mine, 1))
    except (OSError, ValueError, IndexError):
        return None


def adapt():
    """Called at each optimizer step: cheap unless half a second has passed since the last look
    (one clock read). See the module's docstring for the rule."""
    global _next_look, _adapted
    now = time.monotonic()
    if now < _next_look:
        return
    _next_look = now + _PERIOD_S
    if _threads is not None or os.environ.get("MINIGRAD_ADAPTIVE_THREADS", "1") == "0":
        return
    from .device import are_deterministic_algorithms_enabled
    if are_deterministic_algorithms_enabled():  # a GEMM's bits can depend on its thread count
        return
    others = _runnable_others()
    if others is None:
        return
    _others.append(others)
    busy = sorted(_others)[len(_others) // 2]
    base = get_num_threads()
    want = max(1, min(base, _cores() - busy))
    current = base if _adapted is None else _adapted
    if want == current:
        return
    try:
        import threadpoolctl
    except ImportError:
        return
    threadpoolctl.threadpool_limits(limits=want, user_api="blas")
    _adapted = None if want == base else want


def adapted():
    """The BLAS thread count the adaptation chose while the machine is busy, or None."""
    return _adapted
