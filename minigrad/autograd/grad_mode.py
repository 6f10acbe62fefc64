"""no_grad / enable_grad / set_grad_enabled: thread-local, usable as context managers and decorators."""
import functools
import threading


class _GradState(threading.local):
    enabled = True


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

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False


class no_grad(_GradModeBase):
    """Disable graph recording inside the block (or the decorated function)."""
    _args = ()
    _mode = False


class enable_grad(_GradModeBase):
    """Enable graph recording inside the block, even within no_grad."""
    _args = ()
    _mode = True


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
