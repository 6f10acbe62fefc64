"""Optional numba kernels for eager ops that NumPy cannot do in one pass (2x2 max pooling with its
argmax and its gradient scatter in kernels/pool.py; conv2d's im2col and col2im with the padding
folded in, and the weight gradient of 3x3 convolutions of few channels, in kernels/conv.py; the
Winograd F(2x2, 3x3) tile transforms of 3x3 convolutions in kernels/winograd.py; batch_norm's training forward and input gradient in kernels/norm.py;
cross_entropy's common case in kernels/loss.py; relu's gradient in kernels/elementwise.py; the SGD
step in kernels/optim.py). Large elementwise results and kernel temporaries are recycled by
kernels/buffers.py (pure NumPy, used with or without numba). The compiler's fused elementwise kernels
are in kernels/fused.py (generated per group and cached on disk; a NumPy backend without numba).

numba is an optional extra (``pip install minigrad[jit]``). It is imported lazily, on the first op
that could use a kernel; without it (or with ``MINIGRAD_NUMBA=0`` in the environment, or
``minigrad.kernels.set_enabled(False)``) every op runs its pure-NumPy path, which the kernels are
tested against. Kernels are compiled with ``cache=True``: the first process compiles (about a
second per kernel and signature), later ones load the machine code from ``__pycache__``.

A kernel is only worth having if its inner loop vectorises; two things silently stop that (the
first Adam kernel ran at half NumPy's speed): numba's default ``error_model="python"``, which
checks every float division for zero (kernels that divide use ``error_model="numpy"``: IEEE
results, as NumPy's), and an argument that may alias an array the loop writes (pass a distinct
placeholder for an unused array, not one of the others). A loop that sums (a reduction) vectorises
only when its additions may be reordered: such kernels compile with ``fastmath=SUMS``, which allows
that and fused multiply-adds and nothing else (NaN and inf behave as without it).

Large calls of the norm, elementwise, optim, loss and fused kernels are split over minigrad's own
thread pool (minigrad/_pool.py: ``mg.get_num_threads()`` threads; each module says its thresholds
and what stays bitwise). Such a kernel's loop takes a range (lo, hi) and slices inside the compiled
function: a loop over ``range(lo, hi)`` indexing the whole array does not vectorise (measured: relu
over 2^16 floats, 65 us against 6 us for the sliced loop).
"""
import importlib
import os

__all__ = ["available", "load", "set_enabled"]

SUMS = {"reassoc", "contract"}  # numba fastmath flags for kernels whose float sums must vectorise
# erf's coefficients (Abramowitz & Stegun 7.1.26: p, a1..a5) as PyTorch's float32 CPU kernels use them:
# ops/activation.py's NumPy form of GELU and kernels/elementwise.py's loops read them from here
ERF_AS = (0.3275911, 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)

_enabled = os.environ.get("MINIGRAD_NUMBA", "1") not in ("0", "false", "False", "")
_numba = None  # None: not tried yet; False: not importable; else the module


def available():
    """True when the numba kernels are used: numba imports and they are not switched off."""
    global _numba
    if not _enabled:
        return False
    if _numba is None:
        try:
            import numba
        except ImportError:  # the pure-NumPy paths serve
            numba = False
        _numba = numba
    return _numba is not False


def set_enabled(flag):
    """Use the numba kernels where numba is installed (True, the default) or always the NumPy paths
    (False). Returns the previous setting."""
    global _enabled
    old, _enabled = _enabled, bool(flag)
    return old


_modules = {}  # loaded kernel modules (import_module costs ~1 us a call; ops call load per op)


def load(name):
    """The kernel module minigrad.kernels.<name> ("pool", "conv", "norm", ...), which imports numba: call only
    when available() is True."""
    mod = _modules.get(name)
    if mod is None:
        mod = _modules[name] = importlib.import_module(f"{__name__}.{name}")
    return mod
