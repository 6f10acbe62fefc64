"""The transform stack and the observers (autograd/levels.py, autograd/observers.py).

Every pair of the seven things that change or watch an op call -- anomaly mode, the profiler, the
gradient doctor, a user's no_grad (observers and grad mode), forward AD, vmap and tracing (levels)
-- entered in either order and left nested or crossed: a level left while a level entered after it
is open raises an error naming both; anything else may be left in any order. Inside, each does its
job (tangents carried, ops profiled, a NaN in backward caught); afterwards nothing is left behind and
the fast path is back. Levels and grad mode are per thread."""
import importlib
import itertools
import threading
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import forward_ad as fwAD
from minigrad.autograd import function as _function
from minigrad.autograd import grad_mode as _grad_mode
from minigrad.autograd import levels as _levels
from minigrad.autograd import observers as _observers

_vm = importlib.import_module("minigrad.func.vmap")  # the modules (mg.func.vmap, mg.graph.trace: the functions)
_trace_mod = importlib.import_module("minigrad.graph.trace")


# -- the seven, each as enter() / exit() ------------------------------------------------------------------
class Ctx:
    """A context manager entered and left by hand (so that exits can cross)."""
    is_level = False

    def __init__(self, make):
        self.make = make

    def enter(self):
        self.cm = self.make()
        self.cm.__enter__()

    def exit(self):
        self.cm.__exit__(None, None, None)


class Vmap:
    is_level = True

    def enter(self):
        self.id = _vm._enter(2, "error")

    def exit(self):
        _vm._exit(self.id)


class Trace:
    is_level = True

    def enter(self):
        tr = _trace_mod.Tracer({}, {}, ())
        tr._pre, tr._pre_arrays = {}, {}  # nothing is "from before"
        self.level = tr.level = _levels.push(_trace_mod.TraceLevel(tr))

    def exit(self):
        _levels.pop(self.level)


class Dual(Ctx):
    is_level = True

    def __init__(self):
        super().__init__(fwAD.dual_level)


def _anomaly():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mg.autograd.detect_anomaly()


KINDS = {
    "anomaly": lambda: Ctx(_anomaly),
    "profiler": lambda: Ctx(mg.profiler.profile),
    "doctor": lambda: Ctx(mg.debug.watch),
    "no_grad": lambda: Ctx(mg.no_grad),
    "dual": Dual,
    "vmap": Vmap,
    "trace": Trace,
}


def _nan_in_backward_caught():
    x = mg.tensor([0.0, 1.0], dtype=mg.float64, requires_grad=True)
    with mg.enable_grad():
        y = (x.sqrt() * 0.0).sum()  # d/dx sqrt at 0 is inf; inf * 0 = NaN in SqrtBackward's result
    try:
        y.backward()
    except RuntimeError as e:
        return "nan" in str(e).lower()
    return False


def _clean():
    assert _levels.current() == ()
    assert _function._state.tracer is None
    assert _observers._op == () and not _observers._events
    assert _function._intercept is False
    assert _levels._open[0] == 0
    assert not fwAD._by_id and not _vm._by_id
    assert mg.is_grad_enabled() and not mg.autograd.is_anomaly_enabled()
    assert _grad_mode._state.site is None


def _check_inside(names):
    """What each of the open ones must be doing."""
    if "dual" in names and "trace" not in names:
        p = mg.tensor([0.3, 0.5], dtype=mg.float64)
        d = fwAD.make_dual(p, mg.ones(2, dtype=mg.float64))
        t = fwAD.unpack_dual(d.sin()).tangent
        np.testing.assert_allclose(t.numpy(), np.cos([0.3, 0.5]), rtol=1e-15)
    if "anomaly" in names and "trace" not in names:
        assert _nan_in_backward_caught()
    if "no_grad" in names and "trace" not in names:
        x = mg.tensor([1.0], requires_grad=True)
        assert (x * 2).grad_fn is None


PAIRS = [(a, b, crossed) for a, b in itertools.permutations(KINDS, 2) for crossed in (False, True)]


@pytest.mark.parametrize("a,b,crossed", PAIRS, ids=[f"{a}-{b}-{'crossed' if c else 'nested'}" for a, b, c in PAIRS])
def test_every_pair_entered_and_left_in_every_order(a, b, crossed):
    _clean()
    A, B = KINDS[a](), KINDS[b]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        A.enter()
        B.enter()
        try:
            _check_inside({a, b})
            if a == "profiler" or b == "profiler":
                mg.tensor([1.0]) * 2
        finally:
            if not crossed:
                B.exit()
                A.exit()
            elif A.is_level and B.is_level:
                with pytest.raises(RuntimeError, match=r"cannot leave the .* while the .*, entered after it, is "
                                                       r"still open"):
                    A.exit()
                B.exit()  # the stack is intact: leaving in order works
                A.exit()
            else:
                A.exit()
                B.exit()
    if "profiler" in (a, b):
        prof = (A if a == "profiler" else B).cm
        assert any(ev.name == "mul" for ev in prof.events)
    _clean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mg.autograd.detect_anomaly():
            assert _nan_in_backward_caught()
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    assert (x * 2).grad_fn is not None
    _clean()


def test_a_level_left_twice_or_from_another_thread_raises():
    lv = fwAD.enter_dual_level()
    errors = []

    def other():
        try:
            fwAD.exit_dual_level(level=lv)
        except RuntimeError as e:
            errors.append(str(e))
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert errors and "entered in another thread" in errors[0]
    fwAD.exit_dual_level(level=lv)
    with pytest.raises(RuntimeError):
        fwAD.exit_dual_level(level=lv)
    _clean()


# -- per thread ------------------------------------------------------------------------------------------
def test_a_trace_dual_level_and_no_grad_in_one_thread_leave_another_eager():
    inside, done = threading.Event(), threading.Event()
    result = {}

    def worker():
        def fn(a):
            with fwAD.dual_level(), mg.no_grad():
                inside.set()
                assert done.wait(10)
            return a * 2
        try:
            result["graph"] = mg.graph.trace(fn, mg.ones(2))
        except BaseException as e:  # surfaced by the main thread
            result["error"] = e
            inside.set()
    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(10)
    try:
        # this thread, while the other is tracing under a dual level and no_grad: plain eager autograd
        assert _levels.current() == () and _function._state.tracer is None and mg.is_grad_enabled()
        x = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
        y = (x * 3).sin()
        assert y.grad_fn is not None and "_fw" not in y.__dict__
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 3 * np.cos([3.0, 6.0]))
        with fwAD.dual_level():  # and its own levels work beside the other thread's
            d = fwAD.make_dual(x.detach(), mg.ones(2, dtype=mg.float64))
            np.testing.assert_allclose(fwAD.unpack_dual(d * d).tangent.numpy(), [2.0, 4.0])
    finally:
        done.set()
        t.join()
    assert "error" not in result, result.get("error")
    g = result["graph"]
    assert [e.prim for e in g.eqns] == ["mul"]  # only the traced function's op, none of this thread's
    _clean()
