"""Activation checkpointing (PyTorch's torch.utils.checkpoint, non-reentrant form): trade compute
for memory by not keeping the activations inside a segment; backward recomputes them.

How: the segment's forward runs normally (so its graph is built), but every tensor its ops save
for backward goes through a saved-tensor hook that keeps only a placeholder. The first time
backward asks for one, the segment's forward is run again (with the random state of the first
run restored, so Dropout draws the same mask) under a hook that collects the recomputed saved
tensors in the same order; backward then continues through the original graph with them. The
recomputed values come from the same NumPy calls on the same inputs, so gradients equal the
un-checkpointed run bit for bit.

Unlike PyTorch (whose BatchNorm updates its running statistics again during the recomputation, a
known open issue), the recomputation here makes no state updates: running statistics move once.

    y = checkpoint(block, x, use_reentrant=False)
    y = checkpoint_sequential(model, segments=4, input=x)
"""
import warnings

from .. import random as _random
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import _hooks, saved_tensors_hooks
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Frame:
    """The state of one checkpointed call: its inputs, random state and (after recomputation) the
    recomputed saved tensors, in save order."""

    def __init__(self, fn, args, kwargs, rng_state):
        self.fn, self.args, self.kwargs, self.rng_state = fn, args, kwargs, rng_state
        self.count = 0          # placeholders handed out in the first forward
        self.recomputed = None  # the saved tensors of the recomputation

    def pack(self, t):
        i = self.count
        self.count += 1
        return i

    def unpack(self, i):
        if self.recomputed is None:
            self._recompute()
        if i >= len(self.recomputed):
            raise RuntimeError("checkpoint: the recomputed forward saved fewer tensors than the original "
                               f"({len(self.recomputed)} < {self.count}); the checkpointed function must "
                               "run the same ops each time (no data-dependent control flow on its inputs' "
                               "values, no state changes between the two runs)")
        return self.recomputed[i]

    def _recompute(self):
        saved = []
        gen = _random.default_generator
        now = gen.get_state() if self.rng_state is not None else None
        if self.rng_state is not None:
            gen.set_state(self.rng_state)
        args = tuple(_detached(a) for a in self.args)
        _hooks.recomputing += 1
        try:
            with enable_grad(), saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
                self.fn(*args, **self.kwargs)
        finally:
            _hooks.recomputing -= 1
            if now is not None:
                gen.set_state(now)
        self.recomputed = saved
        self.args = None  # the inputs are no longer needed


def _detached(a):
    if isinstance(a, Tensor):
        d = a.detach()
        if a.requires_grad:
            d.requires_grad_(True)
        return d
    return a


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), without keeping the activations inside it: they are recomputed
    when backward needs them. Gradients equal the plain call's (bit for bit)."""
    if use_reentrant is None:
        warnings.warn("checkpoint: please pass use_reentrant=False explicitly (minigrad implements the "
                      "non-reentrant form, PyTorch's recommended one)", UserWarning, stacklevel=2)
    elif use_reentrant:
        raise NotImplementedError("checkpoint: only use_reentrant=False is implemented (PyTorch's "
                                  "recommended form)")
    state = _random.default_generator.get_state() if preserve_rng_state else None
    frame = _Frame(function, args, kwargs, state)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """Run a Sequential (or list of modules/functions) in `segments` chunks, checkpointing each chunk
    but the last (as PyTorch: its activations are needed at once by backward)."""
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    n = len(functions)
    if not 1 <= segments <= max(n, 1):
        raise ValueError(f"checkpoint_sequential: segments must be in [1, {n}], got {segments}")
    size = n // segments

    def run(lo, hi):
        def seg(x):
            for f in functions[lo:hi + 1]:
                x = f(x)
            return x
        return seg

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant if use_reentrant is not None
                           else False, **kwargs)
    return run(end + 1, n - 1)(input)
