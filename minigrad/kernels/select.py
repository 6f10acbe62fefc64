"""Kernel selection: which of an op's implementations runs, per shape (``mg.backends.cpu.benchmark``).

Some ops have several implementations of the same result: conv2d as Winograd F(2x2, 3x3) or as
im2col + GEMM, its input gradient as col2im or as the stride-1 flat-grid adds, its weight gradient
as the direct 3x3 pass or as a GEMM, the Winograd weight gradient's products as one GEMM or as
a sum over chunks. Each op has a fixed rule (thresholds measured on one machine, in ops/_conv2d.py)
that picks one. With ``mg.backends.cpu.benchmark = True`` (off by default, as PyTorch's
``torch.backends.cudnn.benchmark``) the op instead times every candidate valid for its arguments
once per key (the op, its shapes, dtypes, strides and geometry), runs the fastest, and remembers the
choice in memory and on disk, in ``choices.json`` beside the compiled kernels
(`minigrad.kernels.fused.kernel_dir`: ``~/.cache/minigrad/kernels`` or ``$MINIGRAD_CACHE/kernels``,
a folder created 0700 and refused when another user could write it). A key found there is not timed
again: with the cache present, the choice is deterministic.

The file is JSON, written atomically (minigrad/_atomic.py) and read strictly: the format tag and
version, the machine fingerprint (NumPy version, numba present, CPU count: another machine's choices
are dropped silently), and every entry (a canonical key of a known op, a value that names one of
that op's candidates) are checked; a file that is not such JSON, or an entry that is not valid, is
ignored with a `CacheWarning` and the file rewritten without it. Reading never executes anything,
and a cached name only ever picks among the candidates valid for the call at hand (a name that is
not one of them is re-timed). Every candidate computes the op's result within its stated tolerance
(tests/compiler/test_kernel_selection.py checks them against each other).
"""
import json
import os
import stat
import threading
import time
import warnings
from contextlib import contextmanager

import numpy as np

# op -> its candidates' names (what a cache entry may name)
OPS = {
    "conv2d": ("winograd", "im2col"),
    "conv2d_input_grad": ("col2im", "flat"),
    "conv2d_weight_grad": ("direct", "gemm"),
    "matmul_split_k": ("chunks", "one"),
    "max_pool2d_2x2": ("numba", "numpy"),
}
FORMAT = "minigrad-kernel-choices"
VERSION = 1
FILE_NAME = "choices.json"
_MAX_BYTES = 1 << 20  # a larger file is not a choices file of ours
_MAX_KEY = 400
_REPEATS = 2  # timed runs per candidate (after one untimed run that compiles and warms it)

_lock = threading.Lock()
_memory = {}  # key -> choice (from the disk file and from timing)
_made = {}  # key -> (choice, how) for the keys this process selected: how is "timed" or "cache"
_state = {"loaded": None}  # the file path the memory was loaded from
_forced = {}  # op -> candidate name pinned by force() (tests compare the candidates this way)


def _benchmark():
    from ..device import backends
    return bool(backends.cpu.benchmark)


def _fingerprint():
    from . import available
    return {"numpy": np.__version__, "numba": bool(available()), "cpus": os.cpu_count() or 0}


def cache_file():
    """The path of the kernel-choice cache file (``choices.json`` in the kernel cache folder)."""
    from .fused import kernel_dir
    return os.path.join(kernel_dir(), FILE_NAME)


def make_key(op, parts):
    """The canonical key string of op with parts (ints, strings, bools and lists of them)."""
    return json.dumps([op] + list(parts), separators=(",", ":"))


def _valid_part(p, depth=0):
    if isinstance(p, bool) or isinstance(p, str) and len(p) <= 32:
        return True
    if isinstance(p, int):
        return -(1 << 62) < p < (1 << 62)
    if isinstance(p, list) and depth == 0:
        return all(_valid_part(q, 1) for q in p)
    return False


def _valid_entry(k, v):
    if not isinstance(k, str) or len(k) > _MAX_KEY or not isinstance(v, str):
        return False
    try:
        parsed = json.loads(k)
    except ValueError:
        return False
    if not isinstance(parsed, list) or not parsed or parsed[0] not in OPS:
        return False
    if not all(_valid_part(p) for p in parsed[1:]) or make_key(parsed[0], parsed[1:]) != k:
        return False
    return v in OPS[parsed[0]]


def _warn(msg):
    from .fused import CacheWarning
    warnings.warn(f"kernel choices: {msg}", CacheWarning, stacklevel=4)


def _reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _read(path):
    """(entries, rewrite): the valid entries of the file at path, and whether it must be rewritten."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {}, False
    except OSError as e:
        _warn(f"{path} cannot be read ({e.strerror}); ignored")
        return {}, True
    if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()) \
            or st.st_mode & 0o022 or st.st_size > _MAX_BYTES:
        _warn(f"{path} is not a private regular file of this user under {_MAX_BYTES} bytes; ignored and rewritten")
        return {}, True
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(_MAX_BYTES + 1).decode("utf-8"), parse_constant=_reject_constant)
    except (OSError, ValueError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        _warn(f"{path} is not valid JSON ({type(e).__name__}); ignored and rewritten")
        return {}, True
    if (not isinstance(data, dict) or set(data) != {"format", "version", "machine", "choices"}
            or data["format"] != FORMAT or data["version"] != VERSION or not isinstance(data["choices"], dict)):
        _warn(f"{path} is not a kernel-choice file of version {VERSION}; ignored and rewritten")
        return {}, True
    if data["machine"] != _fingerprint():
        return {}, True  # another machine's (or NumPy's, or numba's) choices: start afresh
    good = {k: v for k, v in data["choices"].items() if _valid_entry(k, v)}
    bad = len(data["choices"]) - len(good)
    if bad:
        _warn(f"{path}: {bad} invalid entr{'y' if bad == 1 else 'ies'} ignored; the file is rewritten without "
              f"{'it' if bad == 1 else 'them'}")
    return good, bool(bad)


def _write(path):
    from .._atomic import atomic_write
    doc = {"format": FORMAT, "version": VERSION, "machine": _fingerprint(), "choices": dict(sorted(_memory.items()))}
    try:
        with atomic_write(path) as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), 0o600)
            f.write(json.dumps(doc, indent=1).encode("utf-8"))
    except OSError as e:
        _warn(f"{path} could not be written ({e.strerror}); the choices stay in memory")


def _load():
    """Read the disk file once per path (a changed MINIGRAD_CACHE reads the new one)."""
    path = cache_file()
    if _state["loaded"] == path:
        return path
    entries, rewrite = _read(path)
    _memory.clear()
    _memory.update(entries)
    _state["loaded"] = path
    if rewrite:
        _write(path)
    return path


def _time(fn):
    fn()  # compiles / warms (a numba kernel's first call, a workspace's first allocation)
    best = float("inf")
    for _ in range(_REPEATS):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def choose(op, parts, candidates, default):
    """The name of the candidate to run for op with key parts.

    candidates: {name: zero-argument callable} of the implementations valid for these arguments
    (each computes the op's result; the results of timing runs are dropped); default: the fixed
    rule's choice. Benchmark off, or one candidate: default (no key, no timing). Benchmark on: the
    cached choice if it names a candidate, else each candidate timed once and the fastest cached."""
    pinned = _forced.get(op)
    if pinned is not None and pinned in candidates:
        return pinned
    if len(candidates) < 2 or not _benchmark():
        return default
    key = make_key(op, parts)
    with _lock:
        path = _load()
        cached = _memory.get(key)
    if cached in candidates:
        _made[key] = (cached, "cache")
        return cached
    if cached is not None:
        _warn(f"cached choice {cached!r} for {key} is not a candidate here; timed again")
    times = {name: _time(fn) for name, fn in candidates.items()}
    best = min(times, key=times.get)
    with _lock:
        _memory[key] = best
        _made[key] = (best, "timed")
        _write(path)
    return best


def cached(op, parts, default, valid):
    """The choice already made for this key if it is one of valid, else default: for a backward that
    follows its forward's choice (it cannot time the forward's candidates)."""
    pinned = _forced.get(op)
    if pinned is not None and pinned in valid:
        return pinned
    if not _benchmark():
        return default
    with _lock:
        _load()
        c = _memory.get(make_key(op, parts))
    return c if c in valid else default


def active():
    """True when choices may differ from the fixed rules: benchmark on, or a candidate forced."""
    return bool(_forced) or _benchmark()


@contextmanager
def force(op, name):
    """Within the block, op runs candidate name wherever it is valid (no timing, nothing cached):
    how the tests run each candidate to compare them."""
    if name not in OPS.get(op, ()):
        raise ValueError(f"kernel selection: {op!r} has no candidate {name!r} (candidates: {OPS.get(op)})")
    old = _forced.get(op)
    _forced[op] = name
    try:
        yield
    finally:
        if old is None:
            _forced.pop(op, None)
        else:
            _forced[op] = old


def choices():
    """{key: (choice, how)} of the kernel choices this process made with benchmark on: how is
    "timed" (measured here) or "cache" (read from the cache file). A key is JSON: [op, shapes...]."""
    return dict(_made)


def lookup(op, parts):
    """(choice, how) made for op with key parts in this process, or None."""
    return _made.get(make_key(op, parts))


def graph_choices(eqns):
    """[(key, choice, how)] of the choices this process made for the equations of a graph (the
    ones whose Function class has ``_kernel_keys``): what `mg.jit.explain` lists."""
    out = {}
    for e in eqns:
        keys = getattr(e.fn, "_kernel_keys", None)
        if keys is None:
            continue
        try:
            keys = keys(e.args)
        except (TypeError, ValueError, AttributeError, IndexError):  # an argument the rule cannot read
            continue
        for op, parts in keys:
            k = make_key(op, parts)
            if k in _made:
                out[k] = _made[k]
    return [(k, c, how) for k, (c, how) in out.items()]


def clear(disk=False):
    """Forget the choices in memory (the file is read again on the next choice); disk=True removes
    the cache file too."""
    with _lock:
        _memory.clear()
        _made.clear()
        _state["loaded"] = None
        if disk:
            try:
                os.unlink(cache_file())
            except FileNotFoundError:
                pass
