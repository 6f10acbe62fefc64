"""Memory planning: which intermediate arrays live in buffers reused across equations and calls.

Only equations that compute with a NumPy ufunc (their Function's `_fast`) or a fused kernel can write
into a given buffer (`np.add(a, b, out=buf)`: the same loop, bit for bit); their results are the
candidates. Any other equation's results are assumed to be views of its inputs (conservative:
reshape and transpose are), so a buffer stays busy until the last read of anything that may alias
it. A buffer never backs a graph output (the caller keeps it); `set_grad` and `assign` copy their
values out, so values they read may live in buffers. A fresh result whose only and last reader is
a `set_grad` is instead donated: the gradient takes that array without a copy (it is in no buffer
and nothing reads it afterwards); so is any other op's result read only by a `set_grad` when, at
run time, it is no view (`owned`: an array an op returns and owns is fresh).

The pool is a list of byte arenas: a value takes the smallest free arena at least its size (or the
largest free one, grown), whatever its shape and dtype, and reads it through a view made once. The
arenas persist across calls, so a compiled step allocates nothing for the planned values; with the
generated code dropping every other value after its last read (codegen.py), the peak is the pool
plus the unplanned values alive at once.
"""
import numpy as np

from ..graph.ir import Var


def _nbytes(v):
    return int(np.prod(v.shape, dtype=np.int64)) * np.dtype(v.dtype).itemsize


def plannable(e):
    """Whether eqn e can write its single result into a preallocated buffer."""
    if e.effect or e.fn is None or e.side or len(e.outvars) != 1 or e.outvars[0].shape is None:
        return False
    if getattr(e.fn, "_writes_out", False):  # a fused kernel: kernel(*ins, out=buf)
        return True
    if not isinstance(e.fn._fast, np.ufunc) or e.fn._fast.nout != 1:
        return False
    return all(isinstance(a, Var) or type(a) in (int, float, bool) for a in e.args)


class MemoryPlan:
    """slot_of: var name -> (arena index); arenas: [bytes]; the figures before -> after.

    peak_held: what graph.run (and code that keeps every value to the end) holds at its peak: every
    intermediate; peak_live: each intermediate in fresh memory from its definition to its last read
    (eager's pattern; writing in place can go below it); peak_after: the planned code's peak, the
    whole pool plus the unplanned values alive at once. allocs/bytes: fresh intermediate arrays (and
    bytes) per call, before -> after."""

    def __init__(self, slot_of, arenas, peak_held, peak_live, peak_after, allocs_before, allocs_after,
                 bytes_before, bytes_after, donated=frozenset(), owned=frozenset()):
        self.slot_of, self.arenas, self.donated, self.owned = slot_of, arenas, donated, owned
        self.peak_held, self.peak_live, self.peak_after = peak_held, peak_live, peak_after
        self.allocs_before, self.allocs_after = allocs_before, allocs_after
        self.bytes_before, self.bytes_after = bytes_before, bytes_after

    @property
    def pool_bytes(self):
        return sum(self.arenas)

    @property
    def peak_before(self):
        return self.peak_held

    def __repr__(self):
        return (f"MemoryPlan({len(self.slot_of)} values in {len(self.arenas)} arenas of {self.pool_bytes:,} "
                f"bytes; fresh arrays per call {self.allocs_before} -> {self.allocs_after}, fresh bytes per "
                f"call {self.bytes_before:,} -> {self.bytes_after:,}; peak intermediate bytes "
                f"{self.peak_held:,} -> {self.peak_after:,} (fresh arrays freed at last read: {self.peak_live:,}))")


def last_reads(graph):
    """var name -> index of the last equation reading it (outputs: len(eqns))."""
    last = {}
    for i, e in enumerate(graph.eqns):
        for v in e.invars:
            last[v.name] = i
    for v in graph.outvars:
        if isinstance(v, Var):
            last[v.name] = len(graph.eqns)
    return last


def plan_memory(graph, spans=None):
    """The MemoryPlan of a graph: which values live in which arena of the pool, and the figures.

    spans: {equation index: (first, last)} for the equations of groups whose branches run at once
    (passes/schedule.py: Schedule.spans()). A value defined or read in such a group is taken as
    live over the whole group (from its first equation to its last), and no value of the group
    writes in place over another: so two branches running at once never share an arena (nor does a
    branch reuse one within itself: simple, at some cost in memory for parallel groups only)."""
    eqns = graph.eqns
    outputs = {v.name for v in graph.outvars if isinstance(v, Var)}
    roots, cands, defined_at, fresh = {}, [], {}, []
    last = raw_last = last_reads(graph)
    spans = spans or {}
    if spans:
        last = {k: spans[t][1] if t in spans else t for k, t in last.items()}
    for i, e in enumerate(eqns):
        if e.prim == "set_grad":
            continue
        if e.prim == "assign":
            roots[e.outvars[0].name] = roots.get(e.args[0].name, frozenset())
            continue
        if plannable(e):
            v = e.outvars[0]
            roots[v.name] = frozenset([v.name])
            cands.append(v)
            defined_at[v.name] = i
            continue
        if hasattr(e.fn, "group"):  # a fused kernel with several results: each a fresh array
            for v in e.outvars:
                roots[v.name] = frozenset([v.name])
                fresh.append(v)
            continue
        r = frozenset().union(*(roots.get(v.name, frozenset()) for v in e.invars)) if e.invars else frozenset()
        for v in e.outvars + [s[1] for s in e.side]:
            roots[v.name] = r
    escaped = set()
    for name in outputs:
        escaped |= roots.get(name, frozenset())
    # a candidate is busy until the last read of anything that may alias it
    end, end_raw = {}, {}   # (end_raw: in program order, whatever runs at once)
    for name, rs in roots.items():
        t = t_raw = raw_last.get(name, defined_at.get(name, -1))
        if t in spans:   # in a parallel group: busy over the whole group
            t = spans[t][1]
        for c in rs:
            end[c] = max(end.get(c, -1), t)
            end_raw[c] = max(end_raw.get(c, -1), t_raw)
    # donated to a gradient: read once, by a set_grad, and by nothing (not even a view) afterwards
    readers = {}
    for i, e in enumerate(eqns):
        for v in e.invars:
            readers.setdefault(v.name, []).append(i)
    donated = frozenset(v.name for v in cands + fresh if v.name not in escaped and len(readers.get(v.name, ())) == 1
                        and eqns[readers[v.name][0]].prim == "set_grad" and end_raw.get(v.name) == readers[v.name][0])
    # the result of any other op read only by a set_grad: donated too when, at run time, it owns its
    # memory (not a view: an op's results are the caller's, never its input arrays themselves, so
    # an array that is no view is fresh and in no buffer; a view is copied as before)
    owned = frozenset(v.name for i, e in enumerate(eqns) if not e.effect and e.fn is not None
                      and not plannable(e) and not hasattr(e.fn, "group") for v in e.outvars
                      if v.name not in outputs and len(readers.get(v.name, ())) == 1
                      and eqns[readers[v.name][0]].prim == "set_grad")
    planned = [v for v in cands if v.name not in escaped and v.name not in donated]
    by_def = {defined_at[v.name]: v for v in planned}
    free, arenas, slot_of, busy = [], [], {}, []  # busy: (end, arena index)
    for i in range(len(eqns)):
        still = []
        for t, b in busy:
            if t < i:
                free.append(b)
            else:
                still.append((t, b))
        busy = still
        v = by_def.get(i)
        if v is None:
            continue
        n = _nbytes(v)
        e = eqns[i]
        # in place: an elementwise op may write over an input of its own shape that dies here
        donor = None
        if i in spans:
            pass   # a parallel group: never in place (the input may be read by another branch right now)
        elif getattr(e.fn, "_fast", None) is not None and isinstance(e.fn._fast, np.ufunc) or \
                getattr(e.fn, "_elementwise", False):
            for a in e.args:
                if (isinstance(a, Var) and a.name in slot_of and end.get(a.name) == i
                        and a.shape == v.shape and np.dtype(a.dtype) == np.dtype(v.dtype)):
                    donor = next((k for k, (t, b) in enumerate(busy) if b == slot_of[a.name]), None)
                    if donor is not None:
                        break
        if donor is not None:
            b = busy.pop(donor)[1]
            slot_of[v.name] = b
            busy.append((max(end.get(v.name, i), i), b))
            continue
        fits = [b for b in free if arenas[b] >= n]
        if fits:
            b = min(fits, key=lambda b: arenas[b])
        elif free:
            b = max(free, key=lambda b: arenas[b])
            arenas[b] = n  # grown: sizes are only decided here, allocation comes after planning
        else:
            b = len(arenas)
            arenas.append(n)
        if b in free:
            free.remove(b)
        slot_of[v.name] = b
        busy.append((max(end.get(v.name, i), i), b))
    # the figures: each intermediate (not an effect, not an output) from its definition to its last read
    inter = []
    for i, e in enumerate(eqns):
        if e.effect:
            continue
        for v in e.outvars + [s[1] for s in e.side]:
            if v.shape is not None and v.name not in outputs:
                inter.append((i, max(last.get(v.name, i), i), _nbytes(v), v.name in slot_of))
    peak_live, peak_unplanned = _peak(inter, len(eqns), False), _peak(inter, len(eqns), True)
    held = sum(n for _, _, n, _ in inter)
    return MemoryPlan(slot_of, arenas, held, peak_live, peak_unplanned + sum(arenas), len(inter),
                      len(inter) - len(slot_of), held, sum(n for _, _, n, p in inter if not p), donated, owned)


def _peak(inter, n, unplanned_only):
    delta = [0] * (n + 2)
    for s, t, nb, planned in inter:
        if unplanned_only and planned:
            continue
        delta[s] += nb
        delta[t + 1] -= nb
    cur = peak = 0
    for d in delta:
        cur += d
        peak = max(peak, cur)
    return peak
