"""The transform stack: forward AD, vmap, mg.func.grad and tracing as levels, per thread.

Every transform that changes what an op *means* is a level (JAX's trace stack, functorch's levels):

    dual   forward AD (mg.autograd.forward_ad.dual_level, mg.func.jvp / jacfwd): adds the JVP
    vmap   mg.func.vmap: applies the op's batching rule to the batched arguments
    trace  mg.graph.trace and mg.jit: records the op as an equation

Reverse mode needs no level: the tape records every op anyway, and mg.func.grad / vjp / jacrev
give each call inputs of its own (fresh leaves, or aliases of tensors an enclosing transform
differentiates), so nested gradients count only their own paths (func/__init__.py, _Settle).

A thread's levels form a stack (`_state.levels`, outermost first). An op call with levels open goes
to the innermost one (`Function.apply` -> `dispatch` -> `levels[-1].process(cls, args)`); a level
interprets it and hands what it needs computed to the levels below it (`below`), with the stack cut
there while that runs: so a JVP rule's own ops are differentiated by the outer dual levels, a
batching rule's by the outer vmaps, and any order of nesting composes (jvp of jvp, grad of jvp,
vmap of grad of jvp, trace of vmap ...). A level that does not recognise any argument as its own
(no tangent at that dual level, no tensor batched at that vmap) passes the op straight down.

Levels nest strictly: leaving one that is not the innermost raises, naming both. The stack is
per thread (a trace in one thread does not touch eager code in another). While no level is open
in any thread and no observer is registered (observers.py), `Function.apply` takes its fast path
after one check of `function._intercept`.
"""
import itertools
import threading

from .grad_mode import _state

__all__ = ["Level", "push", "pop", "below", "current", "of_kind"]

_ids = itertools.count(1)
_lock = threading.Lock()
_open = [0]  # levels open in all threads together (the fast path is on while 0 and no observer)


class Level:
    """One transform level. Subclasses set `kind` and override `process(cls, args)`."""

    kind = "level"
    passes = False  # True for a level that interprets no op (dispatch skips it without a call)

    def process(self, cls, args):
        return below(self, cls, args)

    def describe(self):
        return f"{self.kind} level {self.id}"

    def __repr__(self):
        return f"<{self.describe()}>"


def _set(levels):
    """Make `levels` this thread's stack, and keep the innermost tracer handy (_state.tracer)."""
    _state.levels = levels
    tracer = None
    for lv in reversed(levels):
        if lv.kind == "trace":
            tracer = lv.tracer
            break
    _state.tracer = tracer


def push(level):
    """Open `level` as the innermost of this thread; returns it (with its id set)."""
    _set(_state.levels + (_opened(level),))
    return level


def pop(level):
    """Close `level`, which must be this thread's innermost open level."""
    levels = _state.levels
    if not levels or levels[-1] is not level:
        if level.thread != threading.get_ident():
            raise RuntimeError(f"{level.describe()} was entered in another thread; leave it in the thread "
                               f"that entered it")
        if any(lv is level for lv in levels):
            inner = levels[-1]
            raise RuntimeError(f"cannot leave the {level.describe()} while the {inner.describe()}, entered "
                               f"after it, is still open: transforms nest strictly; leave the "
                               f"{inner.describe()} first")
        raise RuntimeError(f"cannot leave the {level.describe()}: it is not open (already left?)")
    _set(levels[:-1])
    _closed()


def _opened(level):
    """Give a level being opened its id and thread, and count it (the fast path goes off)."""
    level.id = next(_ids)
    level.thread = threading.get_ident()
    with _lock:
        _open[0] += 1
        _refresh()
    return level


def _closed():
    with _lock:
        _open[0] -= 1
        _refresh()


def _refresh():
    """Called with _lock held (by levels and observers alike)."""
    from . import function, observers
    function._intercept = bool(_open[0] or observers._op)


def below(level, cls, args):
    """Run the op with this thread's stack cut below `level` (the level's own work is done)."""
    return run_below(level, interpret, cls, args)


def run_below(level, fn, *args, **kwargs):
    """fn(*args, **kwargs) with this thread's stack cut below `level` (e.g. a JVP rule's own ops)."""
    levels = _state.levels
    i = len(levels) - 1
    while i >= 0 and levels[i] is not level:
        i -= 1
    if i < 0:
        return fn(*args, **kwargs)
    _set(levels[:i])
    try:
        return fn(*args, **kwargs)
    finally:
        _set(levels)


def run_at(level, fn, *args, **kwargs):
    """fn(*args, **kwargs) with this thread's stack cut above `level` (kept): a batching rule, whose
    logical ops on the level's own batched tensors are batched again while its ops on the physical
    tensors pass through the level (nothing of theirs is batched there) to the levels below."""
    levels = _state.levels
    i = len(levels) - 1
    while i >= 0 and levels[i] is not level:
        i -= 1
    if i < 0 or i == len(levels) - 1:
        return fn(*args, **kwargs)
    _set(levels[:i + 1])
    try:
        return fn(*args, **kwargs)
    finally:
        _set(levels)


def run_without(level, fn, *args, **kwargs):
    """fn(*args, **kwargs) with `level` alone taken out of this thread's stack (vmap's per-sample
    backward of a graph recorded outside it)."""
    levels = _state.levels
    _set(tuple(lv for lv in levels if lv is not level))
    try:
        return fn(*args, **kwargs)
    finally:
        _set(levels)


def interpret(cls, args):
    """The op as the current stack means it: the innermost level that interprets ops, else eager."""
    levels = _state.levels
    i = len(levels)
    while i:
        lv = levels[i - 1]
        if not lv.passes:
            return lv.process(cls, args)
        i -= 1
    return cls._eager(args)


def current():
    """This thread's open levels, outermost first (a tuple)."""
    return _state.levels


def of_kind(kind):
    """This thread's open levels of one kind, outermost first."""
    return [lv for lv in _state.levels if lv.kind == kind]


class under:
    """`with under(level, anchor):` open `level` just below the open level `anchor` for the block.

    For a transform that must see what the levels above it make of an op: jvp inside vmap runs
    forward mode on the physical (batched) tensors, so its dual level sits below the vmaps whose
    batch it carries, and a grad inside it differentiates the physical graph with the tangents on.
    Strict as push/pop: on exit every level opened inside the block must be closed."""

    __slots__ = ("level", "anchor", "_before", "_inside")

    def __init__(self, level, anchor):
        self.level, self.anchor = level, anchor

    def __enter__(self):
        levels = _state.levels
        i = next((k for k, lv in enumerate(levels) if lv is self.anchor), None)
        if i is None:
            raise RuntimeError(f"cannot open the {self.level.kind} level below the {self.anchor.describe()}: "
                               f"it is not open in this thread")
        level = _opened(self.level)
        self._before = levels
        self._inside = levels[:i] + (level,) + levels[i:]
        _set(self._inside)
        return level

    def __exit__(self, *exc):
        levels = _state.levels
        if levels != self._inside:
            inner = next((lv for lv in levels if all(lv is not x for x in self._inside)), levels[-1] if levels
                         else None)
            what = inner.describe() if inner is not None else "a level"
            raise RuntimeError(f"cannot leave the {self.level.describe()} while the {what}, entered after it, "
                               f"is still open: transforms nest strictly; leave the {what} first")
        _set(self._before)
        _closed()
        return False


class scope:
    """`with scope(level):` push on entry, pop on exit (strictly nested)."""

    __slots__ = ("level",)

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        return push(self.level)

    def __exit__(self, *exc):
        pop(self.level)
        return False
