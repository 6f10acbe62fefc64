"""An optimizer's update (optim/_elementwise.py's `Update`: SGD's `sgd_update`, Adam's `adam_update`)
compiled by numba: one pass over each parameter (imported only by minigrad.kernels).

The loop is generated around the update function's own source: the module is that text, with the
primitives (sqrt, maximum, where, detached) bound to scalar ones, and a `kernel` looping over a
range of elements that calls it (inlined) and stores its results. It is written to the kernel cache
under the hash of that text and compiled with cache=True (kernels/fused.py's loader), so an edit of
the update function compiles it again (numba's own cache would not see an edit of a function called
from another file). Every element goes through the same float operations in the same order as the
NumPy program, in the parameter's dtype (the scalars arrive in it), without fused multiply-adds:
bit for bit the same. A flag is a run-time argument (one kernel per update and dtype). An optional
array that is absent (Adam's vmax without amsgrad, SGD's buffer without momentum) is not read: the
loop for its flag off passes the parameter's element in its place and drops its result.

Large parameters are split over minigrad's thread pool (minigrad/_pool.py): elementwise, so bitwise
the serial loop's for any thread count, from the size whose serial time is _pool.WORK_NS.
"""
import inspect
import textwrap

import numpy as np

from .. import _pool
from .fused import _load_numba_kernel, _record_numba_cache

_PRELUDE = '''import numba
import numpy as np

_jit = numba.njit(nogil=True, error_model="numpy", inline="always")


@_jit
def sqrt(x):
    return np.sqrt(x)


@_jit
def maximum(a, b):
    return a if (a >= b or a != a) else b  # np.maximum: nan from either side


@_jit
def where(c, a, b):
    return a if c else b


@_jit
def detached(x):
    return x


@_jit
'''

# serial ns per float32 element, measured (2^18 elements, best of 40, loaded shared 2-core machine)
_NS = {"sgd_update": 0.11, "adam_update": 0.44}


def source(upd):
    """The module numba compiles for Update upd: the prelude, upd's function, and `kernel`."""
    fn = textwrap.dedent(inspect.getsource(upd.fn))
    arrays, flags, scalars = upd.arrays, upd.flags, upd.scalars
    first = arrays[0]
    opt = {upd.arrays[i]: upd.flags[f] for i, f in upd.optional.items()}
    sizes = " or ".join(f"({opt[a]} and {a}.size != n)" if a in opt else f"{a}.size != n" for a in arrays[1:])
    lines = ["", "", '@numba.njit(cache=True, nogil=True, error_model="numpy")',
             f"def kernel({', '.join(arrays + flags + scalars)}, lo, hi):",
             f"    n = {first}.size"]
    if sizes:
        lines += [f"    if {sizes}:", f'        raise ValueError("{upd.name} kernel: the arrays differ in size")']
    lines += [f"    {a} = {a}.reshape(n)[lo:hi]" for a in arrays if a not in opt]

    def loops(todo, have, indent):
        if todo:
            a = todo[0]
            out = [f"{indent}if {opt[a]}:", f"{indent}    {a} = {a}.reshape(n)[lo:hi]"]
            out += loops(todo[1:], have | {a}, indent + "    ")
            return out + [f"{indent}else:"] + loops(todo[1:], have, indent + "    ")
        ins = [f"{a}[i]" if (a not in opt or a in have) else f"{first}[i]" for a in arrays]
        outs = [f"r{j}" for j in range(len(upd.writes))]
        # the results stored with the parameter's last (the order the hand-written loop had: measured
        # ~5 % faster for Adam than storing the parameter first)
        stores = [f"{indent}    {w}[i] = r{j}" for j, w in enumerate(upd.writes) if (w not in opt or w in have)]
        return [f"{indent}for i in range(hi - lo):",
                f"{indent}    {', '.join(outs)}{',' if len(outs) == 1 else ''} = "
                f"{upd.fn.__name__}({', '.join(ins + list(flags) + list(scalars))})"] + stores[1:] + stores[:1]
    lines += loops(list(opt), frozenset(), "    ")
    return _PRELUDE + fn + "\n".join(lines) + "\n"


_UNUSED = {}


def _unused(dtype):
    """A one-element array of dtype for an absent optional array (not one of the arrays the loop
    writes: passing p there would defeat the vectoriser's aliasing check)."""
    a = _UNUSED.get(dtype)
    if a is None:
        a = _UNUSED[dtype] = np.zeros(1, dtype)
    return a


def threshold(upd):
    """The size from which upd's loop is split over the pool."""
    return _pool.min_elements(_NS.get(upd.name, 0.44))


class Kernel:
    """Update upd's compiled loop: kernel(arrays, flags, scalars) updates one parameter's C-contiguous
    arrays in place (an absent optional array: unused(dtype) in its place), the flags bools, the
    scalars in the arrays' dtype; over the pool when large."""

    def __init__(self, upd):
        self.fn, self.stem, self.manifest = _load_numba_kernel(source(upd))
        self.min = threshold(upd)
        self.recorded = 0  # signatures whose cache files are recorded in the manifest
        self.unused = _unused  # dtype -> the placeholder of an absent array

    def __call__(self, arrays, flags, scalars):
        fn = self.fn
        n = arrays[0].size
        if n < self.min:
            fn(*arrays, *flags, *scalars, 0, n)
        else:
            _pool.run_rows(lambda lo, hi: fn(*arrays, *flags, *scalars, lo, hi), n)
        if len(fn.overloads) != self.recorded:  # compiled (or loaded) a new signature
            self.recorded = len(fn.overloads)
            _record_numba_cache(fn, self.stem, self.manifest)


def run(upd, arrays, flags, scalars):
    """Update upd of one parameter's C-contiguous arrays (None: an absent optional one) in place."""
    k = upd.kernel
    if k is None:
        k = upd.kernel = Kernel(upd)
    k(arrays if all(a is not None for a in arrays) else
      [_unused(arrays[0].dtype) if a is None else a for a in arrays], flags, scalars)
