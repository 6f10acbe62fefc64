"""no_grad / enable_grad / set_grad_enabled / inference_mode: thread-local, usable as context managers and decorators."""
import functools
import threading


class _GradState(threading.local):
    enabled = True
    site = None  # where the user's innermost no_grad was entered (the gradient doctor's provenance)
    levels = ()  # the transform stack of this thread, outermost first (autograd/levels.py)
    tracer = None  # the innermost trace level's recorder in `levels` (graph/trace.py), or None


_state = _GradState()


def is_grad_enabled():
    return _state.enabled


class _GradModeBase:
    def __new__(cls, *args):
        # bare decorator use (@mg.no_grad without parentheses), as PyTorch >= 2.1 allows
        if cls is not set_grad_enabled and len(args) == 1 and callable(args[0]):
            return cls()(args[0])
        return super().__new__(cls)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)
        return wrapper

    def __enter__(self):
        self._prev = _state.enabled
        _state.enabled = self._mode
        if not self._mode:
            _enter_no_grad(self)

    def __exit__(self, *exc):
        _state.enabled = self._prev
        if not self._mode:
            _exit_no_grad(self)
        return False


# -- provenance for the gradient doctor ------------------------------------------------------------
# A no_grad entered from user code (not minigrad's own, e.g. an optimizer step) records its site,
# and while such a block is open the ops' unrecorded paths mark the results that would have been
# recorded (function._mark_cut), so that a later backward() on them can say where the graph was
# cut. _marking[0] counts the open user blocks of all threads, plus one for good once a user's
# no_grad block or .detach() has cut a tensor that requires grad (results computed from a marked
# tensor carry the mark on, so the error names the block or the .detach()). Ops check it, and pay nothing more (no wrapper, no
# slower path) while it is zero: in a process that never cuts the graph.
_marking = [0]
_kept = [False]  # whether that one is added (the first cut of the process did)


def _keep_marking():
    if not _kept[0]:
        _kept[0] = True
        _marking[0] += 1


def _enter_no_grad(ctx):
    import sys
    from ..debug._sites import _is_internal
    ctx._site_prev = _state.site
    f = sys._getframe(2)  # the `with` statement (or this module's decorator wrapper)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    if f is None or _is_internal(f.f_code.co_filename):  # minigrad's own no_grad (an optimizer step)
        ctx._marks = False
        return
    ctx._marks = True
    _state.site = (f.f_code, f.f_lineno)
    _marking[0] += 1
    _keep_marking()  # results marked in the block carry the mark on after it (the loss of its output)


def _exit_no_grad(ctx):
    _state.site = getattr(ctx, "_site_prev", None)
    if getattr(ctx, "_marks", False):
        _marking[0] -= 1


class no_grad(_GradModeBase):
    """Disable graph recording inside the block (or the decorated function)."""
    _args = ()
    _mode = False


class enable_grad(_GradModeBase):
    """Enable graph recording inside the block, even within no_grad."""
    _args = ()
    _mode = True


class inference_mode(_GradModeBase):
    """As PyTorch's inference_mode for ported code: no_grad inside the block (or the decorated
    function); ``inference_mode(False)`` changes nothing. (PyTorch's extra speed and its refusal
    of inference tensors in later autograd have no counterpart here.)"""

    def __init__(self, mode=True):
        self._on = bool(mode)
        self._args = (mode,)
        self._mode = False

    def __enter__(self):
        if self._on:
            super().__enter__()

    def __exit__(self, *exc):
        if self._on:
            return super().__exit__(*exc)
        return False


class set_grad_enabled(_GradModeBase):
    """Set recording on or off; takes effect at once (as a function) or for a block."""

    def __init__(self, mode):
        self._mode = bool(mode)
        self._args = (mode,)
        self._prev = _state.enabled
        _state.enabled = self._mode

    def __call__(self, fn):
        _state.enabled = self._prev  # used as a decorator: don't leave the mode switched
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False
