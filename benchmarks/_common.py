"""Shared benchmark helpers: best-of-N timing, thread counts, optional PyTorch, ratio lines."""
import ctypes
import glob
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def numpy_threads():
    """(thread count NumPy's BLAS uses, how it was found)."""
    libdir = Path(np.__file__).parent.parent / "numpy.libs"
    for lib in glob.glob(str(libdir / "*openblas*")):
        try:
            so = ctypes.CDLL(lib)
        except OSError:
            continue
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                     "openblas_get_num_threads"):
            fn = getattr(so, name, None)
            if fn is not None:
                return int(fn()), f"OpenBLAS {name}()"
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var):
            return int(os.environ[var]), f"${var}"
    return os.cpu_count() or 1, "os.cpu_count() (assumed)"


def import_torch(threads):
    """PyTorch set to ``threads`` intra-op threads, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


def best_of(fn, repeats, warmup=3):
    """Best wall time of ``repeats`` calls of ``fn`` (after ``warmup`` calls), in seconds."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def best_of_interleaved(fns, repeats, rounds=5, warmup=3):
    """{name: best time} for a dict of callables, timed in ``rounds`` alternating rounds of
    ``repeats // rounds`` calls each, so that a burst of load from elsewhere on the machine hits
    all of them rather than one."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    best = dict.fromkeys(fns, float("inf"))
    per_round = max(1, repeats // rounds)
    for _ in range(rounds):
        for name, fn in fns.items():
            best[name] = min(best[name], best_of(fn, per_round, warmup=0))
    return best


def header(title, repeats):
    n, how = numpy_threads()
    print(title)
    print(f"numpy {np.__version__}: {n} BLAS thread(s) [{how}]; best of {repeats} runs, "
          f"time.perf_counter")
    return n


def torch_line(torch, threads):
    if torch is None:
        print("pytorch: not installed (skipped)")
    else:
        print(f"pytorch {torch.__version__}: torch.set_num_threads({threads}) "
              f"(= numpy's), get_num_threads() = {torch.get_num_threads()}")


def row(name, seconds, unit="ms", scale=1e3):
    print(f"  {name:<28s} {seconds * scale:9.3f} {unit}")


def ratio(a_name, a, b_name, b, target=None):
    t = f" (target <= {target})" if target is not None else ""
    print(f"{a_name} / {b_name} = {a / b:.3f}{t}")


def check_then_time(cands, args, repeats, check_steps, reference, unit="ms/step"):
    """cands: name -> make(*args) returning (step, weights). First every candidate runs check_steps
    steps from the same start and must end at the reference's weights (within 1e-4); then all are
    timed interleaved (fresh instances) and printed. Returns name -> seconds per step."""
    ends = {}
    for name, make in cands.items():
        step, weights = make(*args)
        for _ in range(check_steps):
            step()
        ends[name] = weights()
    for name, w in ends.items():
        err = max(float(np.abs(a - b).max()) for a, b in zip(w, ends[reference]))
        assert err < 1e-4, f"{name} disagrees with {reference} after {check_steps} steps (max |diff| {err:.2e})"
    times = best_of_interleaved({name: make(*args)[0] for name, make in cands.items()}, repeats)
    for name, t in times.items():
        row(name, t, unit)
    return times


def sgd_step(model, opt, loss_fn, x, y):
    """One training step closure (zero_grad, loss, backward, step) for a minigrad or PyTorch model:
    both frameworks spell it the same way, so one closure serves both."""
    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step
