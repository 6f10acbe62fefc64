"""A design experiment for issue 13 (per-op dispatch <= 0.5x PyTorch), not part of minigrad.

The recorded path of minigrad's `y * c` makes nine Python calls (mul -> _common_binary -> _apply2 ->
_edge -> _apply_recorded -> Mul.forward -> save_for_backward -> _ufunc -> _pack) and its backward
six. This file flattens that path into three calls forward and four backward while keeping the
bookkeeping minigrad pays for: a version counter checked when a saved tensor is used, graph edges
carrying shape and dtype (for the engine's sum_to), a topological walk in creation order, the
grad-mode and tracer checks, and the cached 0-d constants of Python floats. It times the chain of
benchmarks/bench_overhead.py's tiny config (y = y * 1.0001 + 0.001, 100 times, then backward).

Measured on 2026-12-03 (2-core EPYC VM): 3.56 us/op, where minigrad ran the same chain at 6.34 us/op
in the same minute and PyTorch runs it at ~9.0-9.4: about 0.39x PyTorch. So the per-op target is
reachable in pure Python, but only by recording elementwise ops inline rather than through
Function.forward(ctx, *arrays). That is a change to the op layer's protocol (see the issue 13
closing notes).

    python benchmarks/experiments/flat_recorded_path.py
"""
import time, numpy as np, itertools, operator
_seq = itertools.count()
class State: enabled = True
_state = State()
_tracer = None
_new = object.__new__
class T:
    __slots__ = ("_data", "requires_grad", "grad_fn", "_output_nr", "_vc", "_base", "_grad", "_acc", "__weakref__")
class Node:
    __slots__ = ("_edges", "_seq", "_saved", "needs_input_grad")
    _special = False
class Acc(Node):
    __slots__ = ("var",)
    _special = True
class MulC(Node):   # x * constant
    __slots__ = ()
    def backward(self, g):
        (k, v, vc, ver), (k2, c, vc2, ver2) = self._saved
        if vc is not None and vc[0] != ver: raise RuntimeError
        return (mul(g, c), None)
class AddC(Node):
    __slots__ = ()
    def backward(self, g):
        return (g, None)
_NO = (None, 0, None, None)
def _edge(t):
    fn = t.grad_fn
    d = t._data
    if fn is None:
        fn = t._acc
        if fn is None:
            fn = t._acc = _new(Acc); fn.var = t; fn._edges = (); fn._seq = next(_seq)
    return (fn, t._output_nr, d.shape, d.dtype)
def _plain(arr):
    t = _new(T); t._data = arr; t.requires_grad = False; t.grad_fn = None; t._output_nr = 0; t._vc = None; t._base = None
    return t
_consts = {}
def binop(cls, f, a, b):
    if _tracer is not None: raise NotImplementedError
    if type(b) is float:
        c = _consts.get((b, a._data.dtype))
        if c is None:
            arr = np.array(b, a._data.dtype); c = _consts[(b, a._data.dtype)] = _plain(arr)
        b = c
    x, y = a._data, b._data
    if a.requires_grad and _state.enabled:
        if a._base is not None: pass
        ctx = _new(cls)
        ctx.needs_input_grad = (True, False)
        out = f(x, y)
        ctx._edges = (_edge(a), _NO)
        ctx._seq = next(_seq)
        vc = b._vc
        if vc is None: vc = b._vc = [0]
        ctx._saved = ((2, None, None, 0), (0, b, vc, vc[0]))
        t = _new(T); t._data = out; t.requires_grad = True; t.grad_fn = ctx; t._output_nr = 0; t._vc = None; t._base = None
        return t
    return _plain(f(x, y))
def mul(a, b): return binop(MulC, np.multiply, a, b)
def add(a, b): return binop(AddC, np.add, a, b)
T.__mul__ = mul; T.__add__ = add
_by_seq = operator.attrgetter("_seq")
def backward(root):
    g0 = _plain(np.ones(root._data.shape, root._data.dtype))
    seen = {root.grad_fn}; stack = [root.grad_fn]
    while stack:
        for e in stack.pop()._edges:
            n = e[0]
            if n is not None and n not in seen: seen.add(n); stack.append(n)
    order = sorted(seen, key=_by_seq, reverse=True)
    buf = {root.grad_fn: g0}
    prev = _state.enabled; _state.enabled = False
    try:
        for node in order:
            g = buf.pop(node, None)
            if g is None: continue
            if node._special:
                v = node.var
                v._grad = g if v._grad is None else _plain(v._grad._data + g._data)
                continue
            out = node.backward(g)
            for (nxt, nr, shape, dtype), gi in zip(node._edges, out):
                if nxt is None or gi is None: continue
                d = gi._data
                if d.shape != shape: raise NotImplementedError
                if d.dtype is not dtype and d.dtype != dtype: raise NotImplementedError
                old = buf.get(nxt)
                buf[nxt] = gi if old is None else _plain(old._data + d)
            node._saved = None
    finally:
        _state.enabled = prev
x = _plain(np.ones(4, np.float32)); x.requires_grad = True; x._acc = None; x._grad = None
def step():
    y = x
    for _ in range(100):
        y = y * 1.0001 + 0.001
    x._grad = None
    backward(y)   # (minigrad sums first; here the chain's end is 4 elements: seeded with ones)
for _ in range(100): step()
ts = []
for _ in range(3000):
    t0 = time.perf_counter(); step(); ts.append(time.perf_counter() - t0)
ts.sort(); print(f"prototype: {ts[1500]/200*1e6:.2f} us/op")
