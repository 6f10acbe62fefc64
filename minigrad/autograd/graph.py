"""mg.autograd.graph: hooks on the values the graph saves for backward (PyTorch's
torch.autograd.graph.saved_tensors_hooks), on which checkpointing and offloading build.

    def pack(t):                # called when an op saves t for backward
        return t.numpy().copy() # e.g. move it elsewhere (disk, compressed, ...)

    def unpack(obj):            # called when backward needs it again
        return mg.from_numpy(obj)

    with mg.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = model(x).sum()   # every tensor saved in here goes through pack
    loss.backward()             # ... and comes back through unpack
"""
import threading

__all__ = ["saved_tensors_hooks"]


class _HookState(threading.local):
    def __init__(self):
        self.stack = []          # (pack, unpack) pairs; the innermost applies
        self.recomputing = 0     # > 0 while a checkpoint recomputes its forward (no side effects)


_hooks = _HookState()


class saved_tensors_hooks:
    """Inside the block, every tensor an op saves for backward is replaced by pack(tensor), and
    unpack(packed) gives it back when backward needs it. unpack must return a tensor with the same
    values (shape and dtype) as the one packed. Nested blocks: the innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _hooks.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _hooks.stack.pop()
        return False


def _hooked(node, packed):
    """Route the tensors in a node's packed saves through the innermost (pack, unpack) pair."""
    from ..tensor import Tensor
    pack, unpack = _hooks.stack[-1]
    out = []
    for kind, value, vc, version in packed:
        if kind == 0:
            out.append((3, (pack(value), unpack, None), vc, version))
        elif kind == 1:
            arr, nr = value
            t = Tensor._make(arr)
            out.append((3, (pack(t), unpack, nr), vc, version))
        else:
            out.append((kind, value, vc, version))
    return out


def is_recomputing():
    """True while a checkpoint re-runs its forward during backward (state updates are skipped)."""
    return _hooks.recomputing > 0
