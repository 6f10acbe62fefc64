"""The backward engine: walks the graph in reverse topological order applying each node's VJP.

This is the only place where a gradient is summed back to its input's (pre-broadcast) shape.
"""
import operator
from heapq import heapify, heappop, heappush

import numpy as np

from .function import _Freed, AccumulateGrad, _accumulator
from . import function as _function
from . import observers as _observers
from .grad_mode import _state
from ..debug._sites import user_site


def sum_axes(gshape, shape):
    """The axes to sum an array of gshape over (keeping them) to reach shape, undoing broadcasting:
    the dimensions broadcasting added in front and those it widened from 1."""
    lead = len(gshape) - len(shape)
    if lead < 0 or any(s != 1 and s != gs for s, gs in zip(shape, gshape[lead:])):
        raise RuntimeError(f"gradient of shape {gshape} cannot be summed to the input's shape {shape}")
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1)


def sum_to(g, shape):
    """Sum gradient g (a Tensor) down to `shape`, undoing broadcasting: the engine's one un-broadcast."""
    gshape = g.shape
    if gshape == shape:
        return g
    axes = sum_axes(gshape, shape)
    if axes:
        g = g.sum(axes, keepdim=True)
    return g.reshape(shape) if g.shape != shape else g


def _root_node(t):
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    if t.requires_grad:
        return _accumulator(t), 0
    from ..debug._why import why_no_grad  # the error path only: explain the cause
    raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn. "
                       + why_no_grad(t))


def _topo_order(roots):
    """Nodes reachable from roots, consumers before producers (newest first: see run_backward),
    without recursion: one traversal to find the nodes, then one sort in C."""
    seen = set(roots)
    stack = list(seen)
    while stack:
        for e in stack.pop()._edges:
            nxt = e[0]
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return sorted(seen, key=_by_seq, reverse=True)


_by_seq = operator.attrgetter("_seq")


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None, accumulate=True):
    """Backpropagate from `tensors` with seed gradients `grad_tensors`.

    accumulate=True (Tensor.backward): gradients land in the .grad of leaves (only those in
    `inputs`, if given). accumulate=False (autograd.grad): nothing is accumulated; the total
    gradient reaching each of `inputs` is returned.
    """

    roots = []
    buf = {}
    owned = set()   # keys of buf whose gradient array the engine allocated itself (see _plus)
    handed = set()  # ids of arrays a .grad already holds: a second holder must copy
    for t, g in zip(tensors, grad_tensors):
        node, nr = _root_node(t)
        roots.append(node)
        if g is None:
            d = t._data
            if d.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if d.dtype.kind == "c":  # PyTorch's convention: the loss is real (take .real, .abs(), ...)
                raise RuntimeError("grad can be implicitly created only for real scalar outputs")
            g = Tensor._make(np.ones(d.shape, dtype=d.dtype) if d.ndim else np.array(1, dtype=d.dtype))
            if _function._state.tracer is not None:  # mg.graph.trace: the implicit seed is a constant
                _function._state.tracer.declare_const(g)
        else:
            if not isinstance(g, Tensor):
                g = Tensor._make(np.asarray(g, dtype=t.dtype))
            if g.shape != t.shape:
                raise RuntimeError(f"backward: mismatch in shape: gradient has shape {g.shape} "
                                   f"but the output has shape {t.shape}")
            if not create_graph:
                g = g.detach()
            handed.add(id(g._data))
        _add_to(buf, node, nr, g, owned, create_graph)

    capture = None
    if inputs is not None:
        capture = {}
        for i, t in enumerate(inputs):
            if not t.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            key = (t.grad_fn, t._output_nr) if t.grad_fn is not None else (_accumulator(t), 0)
            capture.setdefault(key, []).append(i)
    # The ready queue: the nodes a gradient has reached, newest first. Every node is created after
    # the nodes of its inputs, so its creation number orders the graph: when a node comes off the
    # heap, every node that feeds it a gradient has run. A node no gradient reaches never enters.
    # A node reached while the heap is empty is the only one ready (nothing queued can still feed
    # it): it runs next without entering the heap (`ready`), which is every node of a chain of ops.
    heap = [(-n._seq, n) for n in buf]
    heapify(heap)
    needed = None
    if capture is not None:  # autograd.grad(inputs=...): only the nodes that lead to an input run
        needed = set(_prune(_topo_order(roots), {node for node, _ in capture}))
    results = [None] * len(inputs) if inputs is not None else None

    # what the used nodes' saved values become: it names this call's line for a second backward
    freed = None if retain_graph else _Freed(user_site())
    prev = _state.enabled
    _state.enabled = create_graph
    _callbacks.append([])
    pop = buf.pop
    get = buf.get
    capturing = capture is not None
    leaves = []
    # (mg.graph.trace records each accumulation where it happens: a traced step keeps PyTorch's order)
    defer = not capturing and _function._state.tracer is None
    ready = None
    node = None
    try:
        while True:
            if ready is not None:  # the one node reached while nothing else was ready: next, by itself
                node = ready
                ready = None
            elif heap:
                node = heappop(heap)[1]
            else:
                break
            g = pop(node)
            if node._special or capturing:  # hooks, leaves, several outputs, autograd.grad captures
                if capturing and node not in needed:
                    continue
                if type(node) is AccumulateGrad and not capturing and node._pre_hooks is None:
                    var = node._variable()  # the leaf (held weakly)
                    if var is None:  # the leaf is gone: nobody can read its gradient
                        continue
                    if not var._hooks:  # the common leaf: straight into .grad
                        if accumulate:
                            _accumulate(var, g, create_graph, handed)
                        continue
                grads = _prepare(node, g, capture, results, accumulate, create_graph, handed)
                if grads is None:
                    continue
                out = node.backward(node, *grads)
            else:
                out = node.backward(node, g)
            if type(out) is not tuple:
                out = (out,)
            if node._user:  # a Function defined outside minigrad: check what its backward returned
                out = _user_grads(node, out)
            for (nxt, nr, shape, dtype), gi in zip(node._edges, out):
                if nxt is None or gi is None:
                    continue
                d = gi._data
                if d.shape != shape or d.dtype is not dtype:
                    gi = _conform(node, gi, shape, dtype)
                if nxt._n_out == 1:
                    old = get(nxt)
                    if old is None:
                        buf[nxt] = gi
                        if (type(nxt) is AccumulateGrad and defer and nxt._pre_hooks is None
                                and (var := nxt._variable()) is not None and not var._hooks
                                and not var._post_acc_hooks):
                            leaves.append(nxt)  # a leaf without hooks: accumulated at the end
                        elif ready is None and not heap:
                            ready = nxt  # (a chain of ops: no queue to keep)
                        else:
                            if ready is not None:
                                heappush(heap, (-ready._seq, ready))
                                ready = None
                            heappush(heap, (-nxt._seq, nxt))
                    else:
                        buf[nxt] = _plus(old, gi, nxt, owned, create_graph)
                else:
                    if nxt not in buf:
                        if ready is not None:
                            heappush(heap, (-ready._seq, ready))
                            ready = None
                        heappush(heap, (-nxt._seq, nxt))
                    _add_to(buf, nxt, nr, gi, owned, create_graph)
            if not retain_graph:
                node._saved = freed
        # The leaves without hooks, last: nothing runs after them, so when they run does not change
        # a result, and they skip the ready queue. (A leaf with hooks runs in its turn, its hooks too.)
        for node in leaves:
            var = node._variable()
            if var is not None and accumulate:
                _accumulate(var, pop(node), create_graph, handed)
        node = None
        queued = _callbacks[-1]
        for cb in queued:  # a callback may queue more: the loop sees them
            cb()
    except Exception as e:
        if node is not None:
            e.add_note(f"(raised while computing the backward of {node.name()})")
        raise
    finally:
        _callbacks.pop()
        _state.enabled = prev
    return results


def _user_grads(node, out):
    """What the backward of a user's Function returned, checked: one gradient per forward input
    (None for an input without one), arrays and numbers wrapped as Tensors. (minigrad's own ops
    return Tensors, one per input: their tests check it, and the engine takes them as they are.)"""
    n = len(node._edges)
    if len(out) != n:
        raise RuntimeError(f"{node.name()}: backward returned {len(out)} gradients, expected {n} "
                           f"(one per forward input)")
    return tuple(g if g is None or isinstance(g, Tensor) else Tensor._make(np.asarray(g)) for g in out)


def _conform(node, g, shape, dtype):
    """Gradient g of an input of `shape` and `dtype`: summed over the dimensions broadcasting added
    or widened, and cast (a gradient has its input's dtype)."""
    if g.shape != shape:
        try:
            g = sum_to(g, shape)
        except RuntimeError as e:
            raise RuntimeError(f"{node.name()}: {e}") from None
    if g.dtype != dtype:
        if g.dtype.kind == "c" and dtype.kind != "c":
            from ..ops.complex import real  # a real input's gradient is the real part (PyTorch's convention)
            g = real(g)
            if g.dtype == dtype:
                return g
        g = g.to(dtype)
    return g


_callbacks = []  # one list per running backward (a hook may start a nested one)


def queue_callback(callback):
    """Run callback() once the running backward has walked the whole graph, before it returns.

    As PyTorch's ``Variable._execution_engine.queue_callback``: for hooks (e.g. DDP's gradient
    hooks) that start work during backward and must finish it before backward() returns. Only
    valid while a backward is running (from a hook); callbacks run in the order queued, with the
    backward's grad mode, and are dropped if the backward raises.
    """
    if not _callbacks:
        raise RuntimeError("queue_callback: no backward pass is running (call it from a hook)")
    _callbacks[-1].append(callback)


def _prepare(node, g, capture, results, accumulate, create_graph, handed):
    """The uncommon cases: run hooks, capture grads for autograd.grad, accumulate at leaves,
    fill missing outputs of multi-output nodes. Returns the grads to pass to backward, or None."""
    n_out = node._n_out
    grads = [g] if n_out == 1 else g
    if node._pre_hooks:
        for nr, hooks in node._pre_hooks.items():
            for hook in list(hooks):
                if grads[nr] is not None:
                    new = hook(grads[nr])
                    if new is not None:
                        grads[nr] = new
    if type(node) is AccumulateGrad:
        var = node.variable
        gv = grads[0]
        if var is None:  # the leaf is gone: nobody can read its gradient
            return None
        if var._hooks:  # a leaf's own hooks run first, so autograd.grad sees their result too
            for hook in list(var._hooks):
                new = hook(gv)
                if new is not None:
                    gv = new
        if capture is not None:
            for i in capture.get((node, 0), ()):
                results[i] = gv
        if accumulate and (capture is None or (node, 0) in capture):
            _accumulate(var, gv, create_graph, handed)
        return None
    if capture is not None:
        for nr in range(n_out):
            for i in capture.get((node, nr), ()):
                results[i] = grads[nr]
    if n_out > 1:
        for i, gi in enumerate(grads):
            if gi is None:
                shape, dtype = node._out_meta[i]
                grads[i] = Tensor._make(np.zeros(shape, dtype))
    return grads


def _add_to(buf, node, nr, g, owned, create_graph):
    if node._n_out == 1:
        old = buf.get(node)
        buf[node] = g if old is None else _plus(old, g, node, owned, create_graph)
    else:
        slots = buf.get(node)
        if slots is None:
            slots = buf[node] = [None] * node._n_out
        slots[nr] = g if slots[nr] is None else _plus(slots[nr], g, (node, nr), owned, create_graph)


def _plus(old, g, key, owned, create_graph):
    """The gradient buffered at `key` plus one more contribution `g`.

    Without create_graph the sum is plain arithmetic: the first sum goes into a fresh array the
    engine owns (the buffered gradient may be shared: add's backward hands the same tensor to both
    inputs), and every later contribution is added into that array in place -- a node used n
    times costs n in-place adds, not n new Tensors. With create_graph, or while mg.graph.trace
    records, it is an add op (so the graph or the trace has it).
    """
    if create_graph or _function._intercept and (_function._state.tracer is not None or _forward_ad._open()):
        # (with a level open: the trace records the add; forward AD adds the tangents too)
        return old + g
    a = old._data
    if key in owned:
        np.add(a, g._data, out=a)
        return old
    owned.add(key)
    return Tensor._make(np.add(a, g._data, out=np.empty(a.shape, a.dtype)))


def _accumulate(var, g, create_graph, handed):
    """var.grad += g. The first gradient is taken without a copy when nothing else holds its array."""
    if _function._state.tracer is not None:  # mg.graph.trace records the write as an effect (graph/trace.py)
        return _function._state.tracer.accumulate(var, g, create_graph)
    if "accumulate" in _observers._events:
        _observers.emit("accumulate", var, g)
    old = var._grad
    if old is None:
        arr = g._data
        if create_graph:
            var._grad = g
        else:
            # a view (a broadcast one is read-only) may share memory; so may an array already held
            if arr.base is not None or id(arr) in handed:
                arr = arr.copy()
            handed.add(id(arr))
            var._grad = Tensor._make(arr)
    elif create_graph or old.requires_grad:
        var._grad = old + g
    else:
        old._data += g._data
        old._bump_version()
    if var._post_acc_hooks:  # Tensor.register_post_accumulate_grad_hook: after .grad is final
        for hook in list(var._post_acc_hooks):
            hook(var)


def _prune(order, targets):
    """Keep only nodes from which some target node can be reached (order: consumers first)."""
    needed = set()
    for node in reversed(order):
        if node in targets or any(e[0] in needed for e in node._edges if e[0] is not None):
            needed.add(node)
    return [n for n in order if n in needed]


from ..tensor import Tensor  # noqa: E402  (tensor.py imports the autograd package first)
from . import forward_ad as _forward_ad  # noqa: E402
