"""no_grad / enable_grad / set_grad_enabled: context managers, decorators, nesting, thread-locality."""
import threading

import numpy as np
import pytest

import minigrad as mg


@pytest.fixture
def x():
    return mg.tensor(np.array([1.0, 2.0]), requires_grad=True)


def test_default_enabled():
    assert mg.is_grad_enabled() is True
    assert mg.autograd.is_grad_enabled() is True


def test_no_grad_context(x):
    with mg.no_grad():
        assert not mg.is_grad_enabled()
        y = x * 2
    assert mg.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    assert (x * 2).requires_grad


def test_no_grad_restores_on_exception(x):
    with pytest.raises(ValueError):
        with mg.no_grad():
            raise ValueError
    assert mg.is_grad_enabled()


def test_enable_grad_inside_no_grad(x):
    with mg.no_grad():
        with mg.enable_grad():
            assert mg.is_grad_enabled()
            y = x * 2
        assert not mg.is_grad_enabled()
        z = x * 2
    assert y.requires_grad and y.grad_fn is not None
    assert not z.requires_grad


def test_nested_no_grad(x):
    with mg.no_grad():
        with mg.no_grad():
            assert not mg.is_grad_enabled()
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()


def test_no_grad_decorator(x):
    @mg.no_grad()
    def f(t):
        assert not mg.is_grad_enabled()
        return t * 2

    assert f.__name__ == "f"
    assert not f(x).requires_grad
    assert mg.is_grad_enabled()
    assert not f(x).requires_grad  # reusable


def test_enable_grad_decorator(x):
    @mg.enable_grad()
    def f(t):
        return t * 2

    with mg.no_grad():
        y = f(x)
        assert not mg.is_grad_enabled()
    assert y.requires_grad


def test_set_grad_enabled_context(x):
    with mg.set_grad_enabled(False):
        assert not mg.is_grad_enabled()
        y = x * 2
        with mg.set_grad_enabled(True):
            assert mg.is_grad_enabled()
            z = x * 2
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()
    assert not y.requires_grad and z.requires_grad


def test_set_grad_enabled_as_function():
    try:
        mg.set_grad_enabled(False)
        assert not mg.is_grad_enabled()
        mg.set_grad_enabled(True)
        assert mg.is_grad_enabled()
    finally:
        mg.set_grad_enabled(True)


def test_set_grad_enabled_decorator(x):
    @mg.set_grad_enabled(False)
    def f(t):
        assert not mg.is_grad_enabled()
        return t * 2

    assert mg.is_grad_enabled()  # decorating does not switch the mode
    assert not f(x).requires_grad
    assert mg.is_grad_enabled()


def test_no_grad_is_thread_local(x):
    results = {}
    inside = threading.Event()
    done = threading.Event()

    def worker():
        inside.wait(5)
        results["enabled"] = mg.is_grad_enabled()
        results["requires_grad"] = (x * 2).requires_grad
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    with mg.no_grad():
        inside.set()
        done.wait(5)
        assert not mg.is_grad_enabled()
    t.join(5)
    assert results == {"enabled": True, "requires_grad": True}


def test_no_grad_in_thread_does_not_leak(x):
    seen = {}
    entered = threading.Event()
    release = threading.Event()

    def worker():
        with mg.no_grad():
            entered.set()
            release.wait(5)
            seen["thread"] = mg.is_grad_enabled()

    t = threading.Thread(target=worker)
    t.start()
    entered.wait(5)
    try:
        assert mg.is_grad_enabled()
        assert (x * 2).requires_grad
    finally:
        release.set()
        t.join(5)
    assert seen["thread"] is False


def test_backward_inside_no_grad_still_computes_grad(x):
    y = (x * x).sum()
    with mg.no_grad():
        y.backward()
    np.testing.assert_allclose(x.grad.data.numpy(), [2.0, 4.0])


def test_inplace_update_of_parameter_under_no_grad(x):
    (x * x).sum().backward()
    with mg.no_grad():
        x -= 0.5 * x.grad
    assert x.is_leaf and x.requires_grad
    np.testing.assert_allclose(x.data.numpy(), [0.0, 0.0])


def test_bare_decorator(x):
    @mg.no_grad
    def f(t):
        return t * 2

    assert not f(x).requires_grad


def test_inference_mode(x):
    # mg.inference_mode was missing (AttributeError in ported evaluation code); here it is no_grad
    with mg.inference_mode():
        assert not mg.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert mg.is_grad_enabled()
    with mg.inference_mode(False):
        assert mg.is_grad_enabled() and (x * 2).requires_grad

    @mg.inference_mode()
    def f(t):
        return (t * 2).requires_grad

    @mg.inference_mode
    def g(t):
        return (t * 2).requires_grad

    assert f(x) is False and g(x) is False and mg.is_grad_enabled()
