"""What this process computes with, as ``torch.__config__``: ``mg.__config__.show()`` returns the
report as a string and ``mg.show_config()`` prints it.

The report names minigrad's, Python's and NumPy's versions; numba (the optional ``[jit]`` extra:
the eager kernels and the compiler's fused kernels): installed or not, and on or off; the BLAS
NumPy calls for matmul and convolution: its library, version, CPU kernel and thread count (from
``threadpoolctl`` when installed, else from ``numpy.show_config``, which knows no threads); the
cores this process may run on; and the optional extras that are installed. Nothing here imports
numba or starts a thread pool.

    >>> mg.show_config()                    # doctest: +SKIP
    minigrad 0.1.0 (Python 3.11.7, Linux x86_64)
      numpy 2.4.6
      numba 0.68.1: on (MINIGRAD_NUMBA=0 turns it off)
      BLAS: OpenBLAS 0.3.31 (scipy_openblas), kernel Haswell, 2 threads (pthreads)
      ...
"""
import importlib.metadata
import importlib.util
import os
import platform
import sys
from . import _pool, _threads

__all__ = ["show", "parallel_info", "summary", "info"]

# the optional extras a user may want to know about: (distribution, pyproject extra, what it gives)
_EXTRAS = (("numba", "jit", "eager kernels and the compiler's fused kernels"),
           ("threadpoolctl", "examples", "the BLAS thread count here and mg.set_num_threads"),
           ("tqdm", "examples", "progress bars"), ("matplotlib", "examples", "plots"),
           ("onnx", "onnx", "mg.onnx.export"), ("onnxruntime", "onnx", "running exported models"),
           ("mpi4py", "distributed", "mg.distributed"))


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None if importlib.util.find_spec(dist) is None else "(version unknown)"


def _numba():
    from . import kernels
    version = _version("numba")
    if version is None:
        return {"installed": False, "on": False, "version": None,
                "why": 'not installed: pip install -e ".[jit]" for the kernels'}
    on = bool(kernels._enabled)
    why = ("MINIGRAD_NUMBA=0 or mg.kernels.set_enabled(False) turns it off" if on else
           "by MINIGRAD_NUMBA=0 in the environment or mg.kernels.set_enabled(False)")
    return {"installed": True, "on": on, "version": version, "why": why}


def _blas():
    """BLAS as threadpoolctl sees it (library, version, kernel, threads), else numpy.show_config's."""
    try:
        import threadpoolctl
    except ImportError:
        threadpoolctl = None
    if threadpoolctl is not None:
        for lib in threadpoolctl.threadpool_info():
            if lib.get("user_api") == "blas":
                return {"library": lib.get("internal_api"), "version": lib.get("version"),
                        "name": lib.get("prefix"), "kernel": lib.get("architecture"),
                        "threads": lib.get("num_threads"), "threading": lib.get("threading_layer"),
                        "source": "threadpoolctl"}
    import numpy as np
    try:
        blas = (np.show_config(mode="dicts").get("Build Dependencies") or {}).get("blas") or {}
    except (TypeError, ValueError, AttributeError):  # NumPy < 1.25 has no mode="dicts"
        blas = {}
    kernel = None
    for word in (blas.get("openblas configuration") or "").split():
        if word.isalpha() and word.lower() not in ("openblas", "dynamic_arch", "no_affinity"):
            kernel = word  # OpenBLAS's configuration line names the core it was built for
    return {"library": blas.get("name"), "version": blas.get("version"), "name": blas.get("name"),
            "kernel": kernel, "threads": None, "threading": None, "source": "numpy.show_config"}


def info():
    """The report's facts as a dict: versions, numba, BLAS, cores, extras (for tests and tools)."""
    import numpy as np
    from . import __version__
    from ._dtype import get_default_dtype
    return {"minigrad": __version__, "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}", "numpy": np.__version__,
            "numba": _numba(), "blas": _blas(), "cores": _threads._cores(), "threads": _threads.get_num_threads(),
            "thread_env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                      "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
                           if k in os.environ},
            "default_dtype": str(get_default_dtype()),
            "extras": {dist: _version(dist) for dist, _, _ in _EXTRAS}}


def _blas_text(b):
    if b["library"] is None:
        return "BLAS: unknown (NumPy does not say; pip install threadpoolctl)"
    name = f" ({b['name']})" if b["name"] and b["name"] != b["library"] else ""
    text = f"BLAS: {b['library']} {b['version'] or ''}".rstrip() + name
    if b["kernel"]:
        text += f", kernel {b['kernel']}"
    if b["threads"] is not None:
        text += f", {b['threads']} threads" + (f" ({b['threading']})" if b["threading"] else "")
    else:
        text += ", threads unknown (pip install threadpoolctl to see them)"
    return text


def show():
    """The report, as a multi-line string (``torch.__config__.show()``'s counterpart)."""
    i = info()
    n = i["numba"]
    numba = (f"numba {n['version']}: {'on' if n['on'] else 'installed, off'} ({n['why']})" if n["installed"]
             else f"numba: {n['why']}")
    lines = [f"minigrad {i['minigrad']} (Python {i['python']}, {i['platform']})",
             f"  numpy {i['numpy']}",
             f"  {numba}",
             f"  {_blas_text(i['blas'])}",
             f"  threads: {i['threads']} (mg.set_num_threads: BLAS's, and minigrad's kernel pool's, which splits "
             f"large kernels once the count is set; {_pool.workers()} pool worker(s) started beside the caller)"
             + (f"; {_threads.adapted()} for now: other processes hold the other cores" if _threads.adapted() else "")
             + ("; thread policy pool ($MINIGRAD_THREAD_POLICY): BLAS on one thread, the pool splits the GEMMs"
                if _threads._policy == "pool" else ""),
             f"  CPU: {i['cores']} cores available to this process"
             + "".join(f", {k}={v}" for k, v in i["thread_env"].items()),
             f"  default dtype: {i['default_dtype']}"]
    have = [f"{d} {v}" for d, v in i["extras"].items() if v is not None]
    missing = [f'{d} ({why}: ".[{extra}]")' for d, extra, why in _EXTRAS if i["extras"][d] is None]
    lines.append("  optional packages: " + (", ".join(have) if have else "none"))
    if missing:
        lines.append("  not installed (pip install -e \".[extra]\"): " + ", ".join(missing))
    return "\n".join(lines)


def parallel_info():
    """The threads part of the report (``torch.__config__.parallel_info()``'s counterpart)."""
    i = info()
    return "\n".join([f"CPU: {i['cores']} cores available to this process", _blas_text(i["blas"]),
                      f"mg.get_num_threads() : {i['threads']}",
                      f"mg.get_num_interop_threads() : {_threads.get_num_interop_threads()}"]
                     + [f"{k}={v}" for k, v in i["thread_env"].items()])


def summary():
    """The report in one line, as the examples print it at start."""
    i = info()
    n, b = i["numba"], i["blas"]
    numba = f"numba {n['version']} {'on' if n['on'] else 'off'}" if n["installed"] else "numba not installed"
    blas = f"BLAS {b['library'] or 'unknown'}"
    if b["kernel"]:
        blas += f" {b['kernel']}"
    if b["threads"] is not None:
        blas += f" {b['threads']} threads"
    return f"minigrad {i['minigrad']}, numpy {i['numpy']}, {numba}, {blas}, {i['cores']} cores"


def show_config():
    """Print what this process computes with: versions (minigrad, Python, NumPy), numba installed and
    on/off, the BLAS library, version, kernel and threads, the cores available and the optional
    extras (``torch.__config__.show()``'s counterpart; the string itself is ``mg.__config__.show()``).

    Returns None, so the report is printed once at an interactive prompt (as ``numpy.show_config()``).
    """
    print(show())
