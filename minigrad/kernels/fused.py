"""Fused elementwise kernels: one group of elementwise equations computed in one pass over memory
(what the compiler's fusion pass, minigrad/compiler/passes/fuse.py, runs).

A `Group` says what to compute: external inputs, a list of elementwise ops reading inputs, earlier
results or literals, and which results leave the group. `build(group, backend)` returns the callable
a fused equation runs, `kernel(expr, *inputs, out=None)`:

  numba   the group becomes the source of a small module, one loop over the elements (split over
          minigrad's thread pool for large arrays: ranges of elements, or of the first axis when an
          input broadcasts; see POOL_MIN), written once to a cache directory (`$MINIGRAD_CACHE/kernels`,
          default `~/.cache/minigrad/kernels`) under the hash of its source and imported with
          `cache=True`, so a second process finds numba's machine code on disk and does not recompile.
          Arithmetic (+ - * /, neg, abs, sqrt, max/min, relu and its backward, where, casts) is
          correctly rounded IEEE, so a fused group of these is bit for bit the unfused NumPy result,
          and LLVM vectorizes the loop. A transcendental (exp, log, tanh, sin, cos, sigmoid) is libm's:
          it may differ from NumPy's in the last units in the last place (ULPS_PER_TRANSCENDENTAL per
          op on the longest path), and without Intel's SVML it is a scalar call that stops the loop
          from vectorizing (numba's float32 tanh measured ~5x slower than NumPy's here), so the fusion
          pass leaves transcendentals out of numba groups unless asked (`transcendentals=True`).
  numpy   without numba: each op is the NumPy call the unfused graph makes (the same bits), run
          block by block (CHUNK elements) into small buffers kept between calls, so temporaries stay
          in cache and only the inputs and the results that leave the group cross memory.
"""
import hashlib
import importlib.util
import json
import os
import stat
import sys
import tempfile
import threading
import types
import warnings

import numpy as np

# rtol of a fused numba result against the unfused NumPy one: 4 ulp of the dtype per transcendental
# op on the longest path through the group (arithmetic-only groups are bitwise). Tests check it.
ULPS_PER_TRANSCENDENTAL = 4


def kernel_of(cls):
    """The op's loop body (autograd.function.Kernel) from its `fusion` declaration, or None (not
    fusable: not elementwise, or `NoRule(why)`). "ufunc" (the ufunc family's default) is the op's
    NumPy ufunc called on the elements, np.<name>(...), taken as not exact (libm may differ)."""
    from ..autograd.function import Kernel
    k = _kernel_of.get(cls)
    if k is None:
        k = cls.fusion
        if k == "ufunc":
            f = cls._fast
            if isinstance(f, np.ufunc):
                ops = ", ".join(f"{{{i}}}" for i in range(f.nin))
                k = Kernel(f"np.{f.__name__}({ops})", f"{f.__name__}({ops.replace(' ', '')})", exact=False)
            else:
                k = None
        elif type(k) is not Kernel:
            k = None
        _kernel_of[cls] = k or False
    return k or None


_kernel_of = {}  # Function class -> its Kernel, or False

# elements from which a fused kernel's loop is split over minigrad's pool (minigrad/_pool.py), not
# numba's OpenMP layer (a numba `prange` loop, used before the pool: not safe in a forked child nor
# with several calling threads, and measured on the shared 2-core machine at 12-1700 ms for 10^6
# floats where the serial loop took 0.4 ms). The size whose serial time is the pool's WORK_NS, for
# the cheapest group (one arithmetic op, ~0.15 ns per element; a longer group is worth splitting
# sooner, but one threshold keeps it simple). Each element's arithmetic is the same on any thread
# (no reduction): the results are bitwise the serial loop's for any thread count.
POOL_MIN = None   # set on first use from _pool.min_elements (importing _pool here would be a cycle)


def cache_dir():
    """Where generated kernel modules (and numba's cache next to them) live."""
    root = os.environ.get("MINIGRAD_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "minigrad")
    return os.path.join(root, "kernels")


def numba_or_none():
    """The numba module, or None when it is not installed (the NumPy backend then runs)."""
    try:
        import numba
    except ImportError:
        return None
    return numba


class Group:
    """What a fused equation computes.

    inputs:  [(shape, dtype)] of the external inputs, in argument order
    ops:     [(Function class, [operand]), out dtype)]; an operand is ("in", k), ("t", j) (the result
             of op j) or ("lit", python scalar)
    outs:    indices of the ops whose results leave the group, in output order
    shape:   the shape of every op's result
    """

    def __init__(self, inputs, ops, outs, shape):
        self.inputs, self.ops, self.outs, self.shape = inputs, ops, outs, tuple(shape)

    def expr(self, names, results=None):
        """A readable form: `d=a*b; e=exp(d)` (names: the inputs'; results: the ops' result names)."""
        results = results or [f"t{j}" for j in range(len(self.ops))]
        parts = []
        for j, (cls, operands, _) in enumerate(self.ops):
            txt = [names[k] if kind == "in" else results[k] if kind == "t" else repr(k)
                   for kind, k in operands]
            parts.append(f"{results[j]}=" + kernel_of(cls).show.format(*txt))
        return "; ".join(parts)

    def transcendental_depth(self):
        depth = []
        for cls, operands, _ in self.ops:
            d = max([depth[k] for kind, k in operands if kind == "t"], default=0)
            depth.append(d + (not kernel_of(cls).exact))
        return max([depth[j] for j in self.outs], default=0)


# the dtypes a generated kernel may name (np.<name>): nothing else reaches its source
KERNEL_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                           "float16", "float32", "float64", "complex64", "complex128"})


def _literal(v):
    """A literal operand as source text: only a Python or NumPy number (its repr) can be one."""
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"fused kernels: a literal operand must be a number, got {type(v).__name__}")
    v = int(v) if isinstance(v, (int, np.integer)) else float(v)
    if isinstance(v, float) and v != v:
        return "np.nan"
    if isinstance(v, float) and abs(v) == float("inf"):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def _dtype_ctor(dt):
    name = np.dtype(dt).name
    if name not in KERNEL_DTYPES:
        raise TypeError(f"fused kernels: dtype {name!r:.40} cannot be in a generated kernel "
                        f"(one of {', '.join(sorted(KERNEL_DTYPES))})")
    return "np." + name


def numba_source(group):
    """The Python source of the numba module for a group (its hash names the cached file)."""
    n = int(np.prod(group.shape, dtype=np.int64))
    flat = all(int(np.prod(s, dtype=np.int64)) == 1 or tuple(s) == group.shape for s, _ in group.inputs)
    nd = max(len(group.shape), 1)
    idx = "i" if flat else ", ".join(f"i{d}" for d in range(nd))
    ins = [f"a{k}" for k in range(len(group.inputs))]
    outs = [f"o{m}" for m in range(len(group.outs))]
    lines = ["# generated by minigrad.kernels.fused: one fused elementwise group", "import numpy as np",
             "import numba", "",
             "@numba.njit(cache=True, fastmath=False, error_model='numpy', nogil=True)",
             f"def kernel({', '.join(ins + outs)}):"]
    body, loads = [], []
    for k, (s, _) in enumerate(group.inputs):
        if int(np.prod(s, dtype=np.int64)) == 1 and flat:
            lines.append(f"    s{k} = a{k}[0]")
    loop = "range"
    ind = "    "
    if flat:
        lines.append(f"    for i in {loop}(o0.shape[0]):")
        ind += "    "
    else:
        for d in range(nd):
            lines.append(f"{ind}for i{d} in {loop if d == 0 else 'range'}(o0.shape[{d}]):")
            ind += "    "
    for k, (s, _) in enumerate(group.inputs):
        if flat and int(np.prod(s, dtype=np.int64)) == 1:
            loads.append(f"{ind}x{k} = s{k}")
        else:
            loads.append(f"{ind}x{k} = a{k}[{idx}]")
    for j, (cls, operands, dt) in enumerate(group.ops):
        k = kernel_of(cls)
        tmpl, cast = k.code, k.cast
        D = _dtype_ctor(dt)
        ops = []
        for (kind, k), c in zip(operands, cast):
            ref = f"x{k}" if kind == "in" else f"t{k}" if kind == "t" else _literal(k)
            ops.append(f"{D}({ref})" if c else ref)
        body.append(f"{ind}t{j} = {D}(" + tmpl.replace("D(", D + "(").format(*ops) + ")")
    for m, j in enumerate(group.outs):
        body.append(f"{ind}o{m}[{idx}] = t{j}")
    lines += loads + body
    return "\n".join(lines) + "\n", flat


_loaded = {}


class CacheWarning(UserWarning):
    """The on-disk kernel cache was not used as found: a folder owned by another user, writable by
    others or not a folder, or a cached file that differs from what minigrad generates or recorded
    (edited, corrupt, empty, numba's files replaced). Nothing found there is imported: the kernel is
    written and compiled again (in a private folder when the cache folder itself is refused)."""


def _dir_problem(d):
    """Why folder d must not hold kernels (None: it is fine), creating it 0700 when missing. A
    symbolic link, another user's folder or one writable by group or others is refused: whoever
    can write there could make this process import their code."""
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.lstat(d)
    except OSError as e:
        return f"cannot be created or read ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder (a symbolic link or a file)"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    if not os.access(d, os.W_OK | os.X_OK):
        return "is not writable"
    return None


_private = []  # a folder made for this process when no shared one may be used


def kernel_dir():
    """The folder this process writes its kernels to: cache_dir(), else (refused: see
    `CacheWarning`) `minigrad-kernels-<uid>` in the temporary folder, else a new private folder."""
    if _private:
        return _private[0]
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    why = []
    for d in (cache_dir(), os.path.join(tempfile.gettempdir(), f"minigrad-kernels-{uid}")):
        problem = _dir_problem(d)
        if problem is None:
            return d
        why.append(f"{d} {problem}")
    _private.append(tempfile.mkdtemp(prefix="minigrad-kernels-"))
    warnings.warn(f"fused kernels: not using the kernel cache ({'; '.join(why)}); kernels of this "
                  f"process are compiled into {_private[0]}", CacheWarning, stacklevel=3)
    return _private[0]


def _sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def _write(path, data):
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _numba_files(fn, stem):
    """(folder, names) of numba's cache files for the kernel of module file stem (its index and
    machine code), wherever numba keeps them (beside the module, or under NUMBA_CACHE_DIR)."""
    try:
        folder = fn._cache._cache_path
    except AttributeError:
        return None, []
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith(stem + ".")
                       and n.endswith((".nbi", ".nbc")))
    except OSError:
        names = []
    return folder, names


def _check_numba_cache(fn, stem, manifest_path):
    """Remove numba's cache files for this kernel unless each is recorded, with its SHA-256, in the
    kernel's manifest (numba unpickles its index: a planted one would run code)."""
    folder, names = _numba_files(fn, stem)
    if not names:
        return
    problem = _dir_problem(folder)
    try:
        with open(manifest_path, "rb") as f:
            recorded = json.loads(f.read(1 << 20).decode("utf-8")).get("numba", {})
    except (OSError, ValueError, AttributeError):
        recorded = {}
    bad = [n for n in names if problem or recorded.get(n) != _sha(os.path.join(folder, n))]
    if bad:
        warnings.warn(f"fused kernels: numba's cached {', '.join(bad)} in {folder} "
                      f"{problem or 'do not match the SHA-256 recorded when they were written'}; "
                      f"removed, the kernel is compiled again", CacheWarning, stacklevel=4)
        for n in names:
            try:
                os.unlink(os.path.join(folder, n))
            except OSError:
                pass


def _record_numba_cache(fn, stem, manifest_path):
    """Record the SHA-256 of numba's cache files for this kernel (after it compiled or loaded)."""
    folder, names = _numba_files(fn, stem)
    rec = {"numba": {n: _sha(os.path.join(folder, n)) for n in names}}
    try:
        _write(manifest_path, json.dumps(rec).encode())
    except OSError:
        pass


def _load_numba_kernel(src):
    """The `kernel` function of the generated module src: written to the kernel folder (once, under
    the hash of its source) for numba's on-disk cache, and executed from src itself, never from the
    file or a bytecode cache. A file found there that is not src (edited, corrupt, empty) is
    replaced, and numba's files for it are used only if they match the SHA-256 recorded beside it."""
    key = hashlib.sha256(src.encode()).hexdigest()[:32]
    entry = _loaded.get(key)
    if entry is not None:
        return entry
    d = kernel_dir()
    stem = f"k_{key}"
    path = os.path.join(d, stem + ".py")
    manifest = os.path.join(d, stem + ".json")
    data = src.encode()
    try:
        with open(path, "rb") as f:
            found = f.read(len(data) + 1)
    except FileNotFoundError:
        found = None
    except OSError:
        found = b""
    try:
        if found != data:  # written once: numba's cache is keyed on the file's time stamp
            if found is not None:
                warnings.warn(f"fused kernels: the cached kernel {path} is not the source minigrad "
                              f"generates for it (edited, corrupt or empty); written again",
                              CacheWarning, stacklevel=3)
                try:
                    os.unlink(manifest)
                except OSError:
                    pass
            _write(path, data)
    except OSError as e:
        raise OSError(f"fused kernels: cannot write a kernel module to {d} ({e.strerror}); set "
                      f"MINIGRAD_CACHE to a writable folder") from None
    name = f"minigrad_kernel_{key}"
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod
    exec(compile(src, path, "exec"), mod.__dict__)  # noqa: S102 - src is generated here, not read
    fn = mod.kernel
    _check_numba_cache(fn, stem, manifest)
    entry = _loaded[key] = (fn, stem, manifest)
    return entry


class NumbaKernel:
    """kernel(expr, *inputs, out=None) running a group's generated numba loop."""

    backend = "numba"

    def __init__(self, group):
        self.group = group
        self.source, self.flat = numba_source(group)
        self.fn, self._stem, self._manifest = _load_numba_kernel(self.source)
        self._recorded = 0  # signatures whose cache files are recorded in the manifest
        self.out_specs = [(group.shape, np.dtype(group.ops[j][2])) for j in group.outs]

    def __call__(self, expr, *ins, out=None):
        g = self.group
        outs = [out if (m == 0 and out is not None) else np.empty(s, d) for m, (s, d) in enumerate(self.out_specs)]
        if self.flat:
            args = [a.reshape(-1) if a.shape == g.shape else a.reshape(1) for a in ins]
            os_ = [o.reshape(-1) for o in outs]
            full = [a.shape[0] == os_[0].shape[0] for a in args]   # else one element, read whole
        else:
            args = [np.broadcast_to(a, g.shape) for a in ins]
            os_ = [o.reshape(1) if o.ndim == 0 else o for o in outs]
            full = [True] * len(args)
        n = os_[0].shape[0]
        if os_[0].size < _pool_min() or n < 2:
            self.fn(*args, *os_)
        else:   # ranges of the first axis (of all elements when flat) over minigrad's pool
            fn = self.fn
            row = os_[0].size // n
            _pool().run_rows(lambda lo, hi: fn(*[a[lo:hi] if f else a for a, f in zip(args, full)],
                                              *[o[lo:hi] for o in os_]), n, row)
        if len(self.fn.signatures) != self._recorded:  # compiled (or loaded) a new signature
            self._recorded = len(self.fn.signatures)
            _record_numba_cache(self.fn, self._stem, self._manifest)
        return outs[0] if len(outs) == 1 else tuple(outs)


def _pool():
    from .. import _pool as p
    return p


def _pool_min():
    global POOL_MIN
    if POOL_MIN is None:
        POOL_MIN = _pool().min_elements(0.15)
    return POOL_MIN


CHUNK = 1 << 14  # elements per block of the NumPy backend: the block's temporaries stay in cache


class NumpyKernel:
    """kernel(expr, *inputs, out=None) making the unfused NumPy calls (the same bits) block by
    block: each op runs on CHUNK elements at a time into a small buffer kept between calls, so the
    temporaries stay in cache and only inputs and results cross memory; results leaving the group
    go into `out` or fresh arrays. A group with broadcast inputs (not the group's shape, not one
    element) runs on whole arrays."""

    backend = "numpy"

    def __init__(self, group, statics):
        self.group, self.statics = group, statics
        self.flat = all(int(np.prod(s, dtype=np.int64)) == 1 or tuple(s) == group.shape for s, _ in group.inputs)
        self.scratch = {}
        self.out_specs = [(group.shape, np.dtype(group.ops[j][2])) for j in group.outs]

    def _op(self, j, args, out):
        from ..graph.interpret import _Ctx
        cls = self.group.ops[j][0]
        f, extra = cls._fast, self.statics[j]
        if isinstance(f, np.ufunc) and not extra:
            return f(*args, out=out) if out is not None else f(*args)
        if f is not None:
            r = f(*args, *extra)
        else:
            ctx = _Ctx()
            ctx.needs_input_grad = (False,) * (len(args) + len(extra))
            r = cls.forward(ctx, *args, *extra)
        r = r if type(r) is np.ndarray else np.asarray(r)
        if out is not None:
            out[...] = r
            return out
        return r

    def __call__(self, expr, *ins, out=None):
        g = self.group
        outs = [out if (m == 0 and out is not None) else np.empty(s, d) for m, (s, d) in enumerate(self.out_specs)]
        slot = {j: m for m, j in enumerate(g.outs)}
        if not self.flat:
            vals = []
            for j, (cls, operands, dt) in enumerate(g.ops):
                args = [ins[k] if kind == "in" else vals[k] if kind == "t" else k for kind, k in operands]
                vals.append(self._op(j, args, outs[slot[j]] if j in slot else None))
            return outs[0] if len(outs) == 1 else tuple(outs)
        n = int(np.prod(g.shape, dtype=np.int64))
        flat_in = [a.reshape(-1) if a.shape == g.shape else a.reshape(()) for a in ins]
        full = [a.ndim == 1 for a in flat_in]
        flat_out = [o.reshape(-1) for o in outs]
        for lo in range(0, n, CHUNK):
            hi = min(n, lo + CHUNK)
            vals = []
            for j, (cls, operands, dt) in enumerate(g.ops):
                args = [(flat_in[k][lo:hi] if full[k] else flat_in[k]) if kind == "in" else
                        vals[k] if kind == "t" else k for kind, k in operands]
                if j in slot:
                    buf = flat_out[slot[j]][lo:hi]
                else:
                    buf = self.scratch.get(j)
                    if buf is None:
                        buf = self.scratch[j] = np.empty(min(n, CHUNK), dt)
                    buf = buf[:hi - lo]
                vals.append(self._op(j, args, buf))
        return outs[0] if len(outs) == 1 else tuple(outs)


def numba_installed():
    """Whether numba can be imported, without importing it (0.3-1.5 s; only a kernel needs it)."""
    if "numba" in sys.modules:
        return sys.modules["numba"] is not None
    return importlib.util.find_spec("numba") is not None


def resolve_backend(backend=None):
    """"numba" or "numpy": None picks numba when it is installed."""
    if backend is None:
        return "numba" if numba_installed() else "numpy"
    if backend not in ("numba", "numpy"):
        raise ValueError(f"fused kernels: unknown backend {backend!r} (numba or numpy)")
    return backend


def build(group, statics, backend=None):
    """The kernel for a group: backend "numba", "numpy" or None (numba when installed).
    statics: per op, the static arguments after its operands (a cast's dtype)."""
    backend = resolve_backend(backend)
    if backend == "numba":
        if numba_or_none() is None:
            raise ImportError("fused kernels: backend='numba' needs numba (pip install 'minigrad[jit]'); "
                              "without it the NumPy backend runs the fused groups")
        return NumbaKernel(group)
    return NumpyKernel(group, [tuple(s) for s in statics])
