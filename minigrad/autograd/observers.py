"""Observers: named hooks that watch ops and a few other events, registered and removed by handle.

The profiler, anomaly mode and the gradient doctor observe; they never change what an op computes
and never replace an attribute of minigrad's classes (Chainer's FunctionHook, PyTorch's
RecordFunction). Each registers what it needs and gets a handle; handles can be removed in any
order, and removing one twice is harmless.

    op observers   an object with `enter(cls, args)` -> token and `exit(cls, args, out, token)`,
                   called around every `Function.apply` (outermost registered first on entry,
                   last on exit). `exit` is called with out=None when the op raised.
    events         `register(event, fn)`: fn(*info) called where minigrad emits `event`:
                     "to_python"  (tensor, method, value)      .item() / .tolist() / float() / int()
                     "tensor"     (tensor, data)               mg.tensor(data) made tensor
                     "detach"     (source, result)             source.detach()
                     "backward"   (tensor, phase)              Tensor.backward, phase "begin"/"end"
                     "accumulate" (leaf, grad)                 a gradient accumulated into leaf.grad
                     "zero_grad"  (owner, params)              Module / Optimizer .zero_grad()
                     "step"       (optimizer, params)          before an optimizer's step()

While nothing is registered, an event site costs one dict lookup and ops pay nothing at all.
"""
from .levels import _lock, _refresh

__all__ = ["register_op_observer", "register", "emit", "Handle"]

_op = ()       # the op observers, in registration order (a tuple, replaced on change)
_events = {}   # event -> tuple of callables (an event with none registered is absent)


class Handle:
    """What registering returns: `remove()` unregisters (idempotent); also a context manager."""

    __slots__ = ("_remove", "_done")

    def __init__(self, remove):
        self._remove, self._done = remove, False

    def remove(self):
        if not self._done:
            self._done = True
            self._remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def register_op_observer(obs):
    """Call obs.enter / obs.exit around every op until the returned handle is removed."""
    global _op
    with _lock:
        _op = _op + (obs,)
        _refresh()

    def remove():
        global _op
        with _lock:
            _op = tuple(o for o in _op if o is not obs)
            _refresh()
    return Handle(remove)


def register(event, fn):
    """Call fn(*info) whenever `event` is emitted, until the returned handle is removed."""
    with _lock:
        _events[event] = _events.get(event, ()) + (fn,)

    def remove():
        with _lock:
            rest = tuple(f for f in _events.get(event, ()) if f is not fn)
            if rest:
                _events[event] = rest
            else:
                _events.pop(event, None)
    return Handle(remove)


def emit(event, *info):
    """Call the callables registered for event (a site checks `event in _events` first)."""
    for fn in _events.get(event, ()):
        fn(*info)


def observed(cls, args, interpret):
    """Run interpret(cls, args) with every op observer around it."""
    obs = _op
    tokens = []
    try:
        for o in obs:
            tokens.append(o.enter(cls, args))
        out = interpret(cls, args)
    except BaseException:
        for o, tok in zip(reversed(obs[:len(tokens)]), reversed(tokens)):
            o.exit(cls, args, None, tok)
        raise
    for o, tok in zip(reversed(obs), reversed(tokens)):
        o.exit(cls, args, out, tok)
    return out
