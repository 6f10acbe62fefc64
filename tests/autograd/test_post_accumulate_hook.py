"""Tensor.register_post_accumulate_grad_hook and the engine's queue_callback (what DDP builds on)."""
import pytest

import minigrad as mg
from minigrad.autograd.engine import queue_callback


def test_post_accumulate_hook_sees_the_accumulated_grad():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (w * w).sum().backward()
    (w * 3).sum().backward()   # accumulates: the hook sees the running total
    assert seen == [[2.0, 4.0], [5.0, 7.0]]
    handle.remove()
    (w * 3).sum().backward()
    assert len(seen) == 2


def test_post_accumulate_hook_runs_after_the_tensor_hook_and_may_edit_grad():
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    w.register_hook(lambda g: g * 10)

    def halve(t):
        t.grad.mul_(0.5)
    w.register_post_accumulate_grad_hook(halve)
    w.sum().backward()
    assert w.grad.tolist() == [5.0, 5.0]


def test_post_accumulate_hook_not_run_by_autograd_grad_and_not_on_non_leaves():
    w = mg.tensor([1.0], requires_grad=True)
    calls = []
    w.register_post_accumulate_grad_hook(calls.append)
    mg.autograd.grad((w * 2).sum(), [w])
    assert calls == []
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(calls.append)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        mg.tensor([1.0]).register_post_accumulate_grad_hook(calls.append)


def test_queue_callback_runs_once_at_the_end_of_backward():
    a = mg.tensor(1.0, requires_grad=True)
    b = mg.tensor(2.0, requires_grad=True)
    order, queued = [], []

    def end():
        order.append(("end", a.grad.item(), b.grad.item()))
        queued.clear()

    def hook(t):
        order.append(("acc", t.item()))
        if not queued:  # the first leaf: the other's gradient is not there yet; at the end it is
            queued.append(True)
            queue_callback(end)
    a.register_post_accumulate_grad_hook(hook)
    b.register_post_accumulate_grad_hook(hook)
    (a * b).backward()
    assert order[-1] == ("end", 2.0, 1.0) and len(order) == 3
    (a * b).backward()
    assert order[-1] == ("end", 4.0, 2.0) and len(order) == 6  # queued again: runs again


def test_queue_callback_outside_backward_is_an_error():
    with pytest.raises(RuntimeError, match="no backward pass is running"):
        queue_callback(lambda: None)
