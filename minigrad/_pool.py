"""minigrad's own thread pool for its kernels.

Why its own: numba's OpenMP threading layer aborts in a forked child that runs parallel code (a
DataLoader worker) and its workqueue layer is not safe with several calling threads. This pool is a
few persistent Python threads; a kernel is split into chunks, each chunk a call of a numba function
compiled with ``nogil=True`` (numba releases the GIL for the whole call), so chunks on different
threads truly run at once. Python holds the GIL only to hand out a range of chunks (a few microseconds).

* Size: ``mg.get_num_threads()`` threads in all, the calling thread included (so ``n - 1``
  workers), fewer while the adaptation to a busy machine (``_threads.adapted()``) lowers BLAS's
  threads. Read at every parallel call: ``mg.set_num_threads`` takes effect at the next one.
* Chunks are fixed by the problem's size, never by the thread count (``chunks``): a chunk reduces
  only its own rows, and where a kernel reduces across rows (layer_norm's weight and bias gradients)
  it keeps one partial per chunk and adds the partials in chunk order. So results are bitwise the
  same for any number of threads; see each kernel module for what (if anything) changed against the
  serial kernel below the size threshold.
* The calling thread works on its own job too, and every caller's job is separate: many threads may
  call at once (each finishes its own job even when every worker is busy with another's), and a
  chunk may itself call the pool (no deadlock: the inner caller does the work).
* Chunks carry no minigrad state (grad mode, transform levels, hooks): they are plain array
  arithmetic, so nothing thread-local needs to follow them.
* Fork: the child drops the parent's pool (its threads do not exist there; its locks may be held)
  and makes a new one on its first parallel call (``os.register_at_fork``).
* Exit: the workers are daemon threads, told to stop and joined (briefly) at interpreter exit.
* Default: serial. The pool splits kernels only once the user chose the threads (mg.set_num_threads
  or $MINIGRAD_NUM_THREADS): on the 2-core development machine every measured step was slower with
  the pool on by default (see threads()). Threads change nothing in a result, only the time.

BLAS and this pool. OpenBLAS's workers spin for a while after each multi-threaded GEMM; a pool thread
started then competes with them for the cores (measured for the issue: GEMM chunks on two Python
threads 0.50 -> 0.85 ms right after a two-thread BLAS call). Two designs were compared: (A) BLAS's
threads and the pool both at mg.get_num_threads(); (B) the pool only where BLAS is idle. In a training
step GEMMs come every few milliseconds and OpenBLAS's workers spin for up to ~0.1 s after each, so
(B) amounts to "the pool never splits while BLAS has several threads", i.e. no parallel kernels in
the default setting. Measured here (shared 2-core machine at load ~7, so a free core was rare: read
these as loaded-machine figures), layer_norm forward (2048 x 512 floats) right after a (256, 512) @
(512, 256) GEMM, best of 30: BLAS 2 threads: pool 1 366 us, pool 2 481 us; BLAS 1 thread: pool 1
406 us, pool 2 441 us; with a delay of 2-200 ms after the GEMM the four settings were within the
noise of each other (415-611 us). So the spinning BLAS worker did cost a second pool thread ~10-25%
here, but on this loaded machine two threads did not win in any setting either. Chosen: (A), the
simplest, once the user sets the threads (by default the pool stays off: on the quiet machine too,
with BLAS on both cores, every measured step was slower with it, see threads()); the adaptation to a
busy machine (_threads.adapt) lowers BLAS's and the pool's threads together, mg.set_num_threads(1)
makes every kernel serial, and $MINIGRAD_POOL_WORK_NS=inf keeps the pool off even then (kernels
serial, BLAS untouched).

(C) BLAS single-threaded and the pool splitting the GEMMs too is the thread policy "pool"
($MINIGRAD_THREAD_POLICY=pool, minigrad/_threads.py): then ``matmul`` below cuts every GEMM of the
ops (linear forward and backward, matmul, attention's products, conv2d's im2col and Winograd GEMMs)
from 8M multiply-adds into blocks fixed by its size, each a one-thread BLAS call on a pool thread,
so nothing spins against the pool. Selectable so that (A), (C) and serial can be measured against
each other on a quiet machine (benchmarks/_harness.py --variant); (A) stays the default until then.
Loaded-machine figures so far (below, at GEMM_BLOCK; 7 GEMM shapes of 4-270M multiply-adds, best
of 40): a block split costs 5-15% on one thread; two pool threads ran 0.75-1.8x as fast as one BLAS
thread, OpenBLAS's own two threads 1.4-2x (it packs a shared operand once for all its threads).
"""
import atexit
import itertools
import math
import os
import queue
import threading

import numpy as np

from . import _threads

__all__ = ["run", "run_rows", "split_rows", "chunks", "per_chunk", "split", "min_elements", "threads", "workers", "matmul"]

# A kernel runs on the pool from the size whose serial time is WORK_NS (min_elements): below it on
# the caller alone. Handing one range to a second thread and waiting for it cost about 10 us
# (measured: a 2-chunk job of no work, 9.7 us against 0.4 us for the call alone, loaded shared
# 2-core machine), so from ~50 us of work two threads can win by more than the overhead.
WORK_NS = float(os.environ.get("MINIGRAD_POOL_WORK_NS", 50_000))
# elements per chunk: a chunk is at least this many elements (whole rows), fixed by the problem size
GRAIN = 1 << 15


def threads():
    """The threads a parallel kernel uses now (the caller included): mg.get_num_threads() once the
    user chose the threads (mg.set_num_threads or $MINIGRAD_NUM_THREADS), or the fewer the adaptation
    to a busy machine chose; by default 1 (the kernels serial, BLAS alone on the cores).

    Why off by default: on the 2-core development machine, quiet, with BLAS on both cores, the pool
    made every measured step slower (2026-12-06, own processes, alternating rounds, pool on vs off:
    char-GPT train step 365 vs 326 ms, CNN 8/16 b64 5.93 vs 5.44 ms, 32/64 b64 21.6 vs 21.2 ms;
    benchmarks/results/2026-12-06-late): OpenBLAS's workers still spin on the cores when a kernel
    splits. A user who sets the threads asks for parallel kernels and gets them."""
    from . import _threads
    if _threads._threads is None:
        return 1
    n = _threads.get_num_threads()
    a = _threads.adapted()
    return min(n, a) if a else n


def min_elements(ns_per_element):
    """The size threshold of a kernel costing `ns_per_element` (serial, measured): the elements
    that take WORK_NS on one thread."""
    return max(GRAIN, int(min(WORK_NS / ns_per_element, 1 << 62)))   # WORK_NS = inf: never


def per_chunk(row_size, grain=None):
    """Rows per chunk: whole rows, at least `grain` (default GRAIN) elements (fixed by the problem's
    size alone)."""
    return max(1, -(-(grain or GRAIN) // max(1, row_size)))


def chunks(rows, row_size, grain=None):
    """[(lo, hi)] splitting `rows` rows of `row_size` elements into chunks of per_chunk rows (the
    last takes the tail)."""
    per = per_chunk(row_size, grain)
    return [(lo, min(rows, lo + per)) for lo in range(0, rows, per)]


def run_rows(fn, rows, row_size=1, grain=None):
    """fn(lo, hi) over row ranges [lo, hi) covering 0 .. rows - 1 once, on the pool: each range a
    run of whole chunks (chunks' boundaries), one range per thread. For kernels whose rows do not
    interact: the result is the same however the rows are grouped."""
    per = per_chunk(row_size, grain)
    n = -(-rows // per)
    if n <= 1:
        fn(0, rows)
        return
    run(lambda c0, c1: fn(c0 * per, min(rows, c1 * per)), n)


def split_rows(fn, rows, size, least):
    """fn(lo, hi) over `rows` rows that hold `size` elements in all: on the pool (run_rows) from
    `least` elements once the threads are chosen, else fn(0, rows) on the caller (the kernels that
    split by channels: im2col/col2im, the Winograd transforms)."""
    if size < least or threads() <= 1:
        fn(0, rows)
    else:
        run_rows(fn, rows, max(1, size // max(1, rows)))


class _Job:
    __slots__ = ("fn", "pieces", "next", "done", "lock", "finished", "error")

    def __init__(self, fn, pieces):
        self.fn, self.pieces = fn, pieces
        self.next = itertools.count()   # next() is atomic under the GIL
        self.done = 0
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.error = None

    def work(self):
        """Take ranges until none is left; returns how many this thread ran."""
        fn, pieces = self.fn, self.pieces
        n = len(pieces)
        ran = 0
        while True:
            i = next(self.next)
            if i >= n:
                return ran
            ran += 1
            try:
                fn(*pieces[i])
            except BaseException as e:  # noqa: BLE001 -- handed to the caller, which raises it
                if self.error is None:
                    self.error = e
            with self.lock:
                self.done += 1
                last = self.done == n
            if last:
                self.finished.set()


_STOP = object()


class _Pool:
    def __init__(self):
        self.jobs = queue.SimpleQueue()
        self.threads = []
        self.lock = threading.Lock()
        self.size = 0        # the workers wanted
        self._stopping = 0   # stop messages sent and not yet taken

    def _loop(self):
        get = self.jobs.get
        while True:
            job = get()
            if job is _STOP:
                return
            job.work()

    def resize(self, nworkers):
        with self.lock:
            live = len(self.threads) - self._stopping
            while live < nworkers:
                t = threading.Thread(target=self._loop, name=f"minigrad-pool-{len(self.threads)}", daemon=True)
                t.start()
                self.threads.append(t)
                live += 1
            extra = live - nworkers
            for _ in range(extra):       # the first workers to take a stop exit
                self.jobs.put(_STOP)
            self._stopping += extra
            self.size = nworkers

    def reap(self):
        """Forget workers that have stopped (after a shrink)."""
        with self.lock:
            alive = [t for t in self.threads if t.is_alive()]
            self._stopping -= len(self.threads) - len(alive)
            self.threads = alive

    def shutdown(self, timeout=1.0):
        with self.lock:
            ts = list(self.threads)
            for _ in ts:
                self.jobs.put(_STOP)
        for t in ts:
            t.join(timeout)


class Lazy:
    """A pool made on its first use and resized to the workers asked for, dropped in a forked child
    (its threads do not exist there, its locks may be held) and shut down at exit. minigrad has two:
    this module's, for the kernels, and compiler/_interop.py's, for a compiled graph's branches (kept
    apart, as PyTorch keeps its intra- and inter-op pools)."""

    def __init__(self):
        self.pool = None
        self.lock = threading.Lock()
        _lazies.append(self)

    def get(self, nworkers):
        p = self.pool
        if p is None:
            with self.lock:
                if self.pool is None:
                    self.pool = _Pool()
                p = self.pool
        if p.size != nworkers:
            if p._stopping:
                p.reap()
            p.resize(nworkers)
        return p

    def workers(self):
        """The pool's live worker threads now (the callers not counted)."""
        p = self.pool
        if p is None:
            return 0
        p.reap()
        return len(p.threads) - p._stopping


_lazies = []
_kernels = Lazy()


def workers():
    """The kernels' pool's live worker threads now (the callers not counted): for tests and show_config."""
    return _kernels.workers()


def split(n, t):
    """n chunks as t (or fewer) contiguous ranges [(c0, c1)] of nearly equal length."""
    t = max(1, min(n, t))
    q, r = divmod(n, t)
    out, c = [], 0
    for k in range(t):
        d = q + (k < r)
        out.append((c, c + d))
        c += d
    return out


def run(fn, n):
    """Run chunks 0 .. n-1 as fn(c0, c1) calls over contiguous ranges of them, one range per thread
    (the calling one included), each chunk in exactly one call; returns when all are done, raising
    the first exception a call raised. One thread (or one chunk): fn(0, n) on the caller. A range
    not yet taken by a worker when the caller is done with its own is done by the caller (a worker
    slow to start, on a busy machine, costs nothing)."""
    t = threads() if n > 1 else 1
    if t <= 1:
        p = _kernels.pool
        if p is not None and p.size and threads() == 1:
            p.resize(0)   # mg.set_num_threads(1): the workers stop
        fn(0, n)
        return
    p = _kernels.get(t - 1)
    job = _Job(fn, split(n, t))
    for _ in range(len(job.pieces) - 1):
        p.jobs.put(job)
    job.work()
    job.finished.wait()
    if job.error is not None:
        raise job.error


def _after_fork_in_child():
    for z in _lazies:
        z.pool = None                 # the parent's threads are gone here, its locks maybe held
        z.lock = threading.Lock()


def _at_exit():
    for z in _lazies:
        if z.pool is not None:
            z.pool.shutdown()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_at_exit)


# -- GEMMs split on the pool (thread policy "pool", design C: BLAS on one thread) --------------------
#
# A GEMM of at least GEMM_MIN multiply-adds is cut into blocks, each one np.matmul (one-thread BLAS;
# NumPy releases the GIL around it) writing its slice of a preallocated result, so the pool's Python
# threads run the blocks at once. The blocks depend on the shapes alone (GEMM_BLOCK multiply-adds
# each at least, a power of two of them, at most GEMM_MAX_BLOCKS; 2-D blocks a multiple of
# GEMM_ALIGN rows or columns): the bits are the same for any thread count, the calling thread doing
# every block when it is alone.
#
# Bits against one unsplit one-thread GEMM: a stack (batched matmul) is split over its batch, and
# NumPy computes a stack one matrix at a time anyway, so each matrix is the same call: bitwise the
# same. A 2-D GEMM is split over the rows (M >= N) or the columns of its result; OpenBLAS chooses its
# kernel by size (SkylakeX: a separate small-matrix kernel under a size limit, other edge kernels),
# so a block may sum a dot product in another order than the whole does: measured (OpenBLAS 0.3.31,
# SkylakeX) bitwise equal for most shapes and blocks of 64 rows, a few ulp apart for others. Both
# are correctly rounded sums of the same K products in some order, so elementwise
# |split - whole| <= 2 K u (|a| @ |b|) (u: the unit roundoff, the textbook bound on a length-K dot
# product), tested in tests/perf_kernels/test_pool_gemm.py.
#
# Sizes (loaded shared 2-core machine, best of 40, float32, one process alternating; read as
# loaded-machine figures): blocks of 1M multiply-adds cost 10-35% over one unsplit one-thread GEMM
# on one thread ((128, 784) @ (784, 256): 600-675 us against 500-510 us; every row block repacks the
# whole right operand), blocks of 4M 5-15% (553 us); on two threads (128, 784) @ (784, 256) took
# 383-592 us, (1024, 512) @ (512, 512) 3000 us against 5150-5580 us on one BLAS thread and 2600-2750
# us on two (OpenBLAS packs a shared operand once for its threads; each block here packs its own).
# So a block is at least GEMM_BLOCK = 4M multiply-adds ($MINIGRAD_POOL_GEMM_BLOCK; inf: never
# split), a GEMM is split from two blocks (8M: (128, 784) @ (784, 256) is 25.7M, 4 blocks), at most
# GEMM_MAX_BLOCKS = 8 blocks (balanced on 2, 4 and 8 threads, power-of-two counts).
GEMM_BLOCK = float(os.environ.get("MINIGRAD_POOL_GEMM_BLOCK", 1 << 22))
GEMM_MAX_BLOCKS = 8
GEMM_ALIGN = 16


def _blocks(length, macs, align):
    """(per, n): `length` cut into n blocks of `per` (the last takes the tail), fixed by the size."""
    n = int(min(GEMM_MAX_BLOCKS, macs / GEMM_BLOCK, length // align))
    if n < 2:
        return length, 1
    n = 1 << (n.bit_length() - 1)
    per = -(-length // n)
    per = -(-per // align) * align
    return per, -(-length // per)


def matmul(a, b, out=None):
    """np.matmul(a, b[, out]); under the thread policy "pool" (with the threads chosen) a large one
    is split in blocks over the pool (see above). The GEMM call sites of minigrad's ops use this."""
    if _threads._policy != "pool" or _threads._threads is None:
        return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)
    return _split_matmul(a, b, out)


def _whole(a, b, out):
    return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)


def _split_matmul(a, b, out):
    if (not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.ndim < 2 or b.ndim < 2
            or a.dtype != b.dtype or a.dtype.kind not in "fc" or a.shape[-1] != b.shape[-2]):
        return _whole(a, b, out)   # vectors, mixed dtypes, bad shapes: NumPy's own rules and errors
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return _whole(a, b, out)
    macs = math.prod(batch) * M * N * K
    if macs < 2 * GEMM_BLOCK:
        return _whole(a, b, out)
    shape = batch + (M, N)
    if out is None:
        out = np.empty(shape, a.dtype)
    elif (out.shape != shape or out.dtype != a.dtype or np.may_share_memory(out, a)
          or np.may_share_memory(out, b)):
        return _whole(a, b, out)
    if batch:
        B = batch[0]
        if B < 2:   # a leading axis of one (attention at batch 1): split the stack below it
            _split_matmul(a[0] if a.ndim == out.ndim else a, b[0] if b.ndim == out.ndim else b, out[0])
            return out
        per, n = _blocks(B, macs, 1)
        sa = a.ndim == out.ndim and a.shape[0] == B   # else broadcast: the whole operand for every block
        sb = b.ndim == out.ndim and b.shape[0] == B

        def fn(c0, c1):
            for c in range(c0, c1):
                i0, i1 = c * per, min(B, (c + 1) * per)
                np.matmul(a[i0:i1] if sa else a, b[i0:i1] if sb else b, out=out[i0:i1])
    elif M >= N:
        per, n = _blocks(M, macs, GEMM_ALIGN)

        def fn(c0, c1):
            for c in range(c0, c1):
                i0, i1 = c * per, min(M, (c + 1) * per)
                np.matmul(a[i0:i1], b, out=out[i0:i1])
    else:
        per, n = _blocks(N, macs, GEMM_ALIGN)

        def fn(c0, c1):
            for c in range(c0, c1):
                j0, j1 = c * per, min(N, (c + 1) * per)
                np.matmul(a, b[:, j0:j1], out=out[:, j0:j1])
    if n < 2:
        return _whole(a, b, out)
    run(fn, n)
    return out
