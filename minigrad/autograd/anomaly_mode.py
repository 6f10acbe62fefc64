"""Anomaly mode (PyTorch's torch.autograd.detect_anomaly / set_detect_anomaly).

While it is on, every op records where in the user's code it was called. In backward:
- an error raised inside a node's backward carries the traceback of the forward call that made
  the node (as an exception note, and a warning as PyTorch prints);
- a NaN (or inf) in a gradient a node returns raises at once, naming the node and its output, with
  the forward op's traceback: "Function 'DivBackward0' returned nan values in its 0th output."

Nothing is paid while it is off: the recording is an op observer (observers.py), registered only
while the mode is on.

    with mg.autograd.detect_anomaly():
        loss = model(x).sum()
        loss.backward()
"""
import functools
import warnings

import numpy as np

from . import observers as _observers
from ..debug._sites import user_stack

_state = {"depth": 0, "check_nan": True}


def is_anomaly_enabled():
    return _state["depth"] > 0


def is_anomaly_check_nan_enabled():
    return is_anomaly_enabled() and _state["check_nan"]


def _checked_backward(node, real):
    def backward(ctx, *grads):
        try:
            out = real(ctx, *grads)
        except Exception as e:
            _report(node, e)
            raise
        if _state["check_nan"] and _state["depth"]:
            outs = out if type(out) is tuple else (out,)
            for i, g in enumerate(outs):
                d = getattr(g, "_data", None)
                if d is not None and d.dtype.kind == "f" and d.size and not np.isfinite(d).all():
                    what = "nan" if np.isnan(d).any() else "inf"
                    err = RuntimeError(f"Function '{node.name()}' returned {what} values in its {i}th output.")
                    _report(node, err)
                    raise err
        return out
    return backward


def _report(node, err):
    stack = node.__dict__.get("_anomaly_stack")
    if not stack or getattr(err, "_anomaly_noted", False):
        return
    text = (f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
            + "".join(stack).rstrip())
    err.add_note(text)
    err._anomaly_noted = True
    warnings.warn(text, RuntimeWarning, stacklevel=3)


class _Recorder:
    """The op observer (observers.py) while the mode is on: each node recorded gets the user's stack
    of its forward call, and its backward is checked (an attribute of that node alone)."""

    def enter(self, cls, args):
        return None

    def exit(self, cls, args, out, token):
        if out is None or not _state["depth"]:
            return
        outs = out if type(out) is tuple else (out,)
        stack = None
        for t in outs:
            node = getattr(t, "grad_fn", None)
            if node is not None and "_anomaly_stack" not in node.__dict__:
                if stack is None:
                    stack = user_stack()
                node._anomaly_stack = stack
                node.backward = _checked_backward(node, type(node).backward)


def _enable(check_nan):
    if _state["depth"] == 0:
        _state["handle"] = _observers.register_op_observer(_Recorder())
    _state["depth"] += 1
    prev = _state["check_nan"]
    _state["check_nan"] = check_nan
    return prev


def _disable(prev_check_nan):
    _state["depth"] -= 1
    _state["check_nan"] = prev_check_nan
    if _state["depth"] == 0:
        _state.pop("handle").remove()


class detect_anomaly:
    """Context manager / decorator turning anomaly detection on for its block (check_nan: raise on
    a NaN/inf gradient)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and "
                      "should only be enabled for debugging.", UserWarning, stacklevel=2)
        self._prev = _enable(self.check_nan)
        return self

    def __exit__(self, *exc):
        _disable(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once when called, or for a `with` block."""

    def __init__(self, mode, check_nan=True):
        self._was = is_anomaly_enabled()
        self._prev_nan = _state["check_nan"]
        if mode and not self._was:
            _enable(check_nan)
        elif not mode and self._was:
            while _state["depth"]:
                _disable(self._prev_nan)
        _state["check_nan"] = check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        now = is_anomaly_enabled()
        if self._was and not now:
            _enable(self._prev_nan)
        elif not self._was and now:
            while _state["depth"]:
                _disable(self._prev_nan)
        _state["check_nan"] = self._prev_nan
        return False
