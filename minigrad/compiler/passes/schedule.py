"""Inter-op scheduling: which independent branches of a graph run at once on the inter-op threads.

A *group* is a set of equations split into branches with no path between any two of them (through
data, or through the ordering edges below), each branch large: the Q, K and V projections of
attention, the two directions of a bidirectional RNN (each a linear and a scan), gradients of
independent weights. The program runs everything before the group, then the branches (at once on
the inter-op threads when the group is parallel, else one after the other), then the rest: the
same equations, each branch's in their traced order, so every value is bit for bit the serial
program's.

How a group is found (`find_groups`): the *heavy* equations (estimated cost at least HEAVY, see
`cost`) in program order; each starts an antichain (each later heavy equation independent of all
taken joins it), and the antichain whose members could save the most (their total cost minus the
largest) is the group's members. With members h_1 .. h_k,
every equation x is classified by A(x), the members it is an ancestor of (or is), and D(x), the
members it descends from (or is): D(x) = {i} puts x in branch i (downstream of h_i alone, e.g.
the scan after an RNN direction's input projection); A(x) = {i} with D(x) empty puts it in
branch i too (upstream of h_i alone), unless a downstream equation of another branch reads it, or
it is an ancestor of shared work; everything upstream of the branches otherwise runs before the
group, everything else (joins: D(x) has two members or more) after it. The parts before and after
are searched again for groups (recursively, so backward's independent weight gradients are found
after the forward's).

Ordering edges besides data: an `assign` (an in-place write), the op that computed an assign's value
when it reads the assign's target (it may have written it in place already: an optimizer's fused
`adam_step`/`sgd_step` does) and a user's own Function (not one of minigrad's ops: it may read or
write what the graph cannot see) are barriers (nothing moves across them); `set_grad`s of one target keep their order; equations drawing from one random
generator keep their order (the draws must be the traced ones).

Whether a group runs in parallel (`Group.parallel`, `Group.reason`): only when the inter-op
threads (mg.get_num_interop_threads()) are more than one, and the work the parallel run can save,
the group's total cost minus its largest branch's, is at least threshold() (by default never; from
MIN_GAIN_SET once mg.set_num_interop_threads was called; measured, see docs/compiler.md).
"""
import math
import os

from ...graph.ir import Var
from ._util import copy_graph

__all__ = ["cost", "find_groups", "schedule", "threshold", "Schedule", "Group", "MIN_GAIN", "HEAVY"]

# An equation is a candidate branch head from this estimated cost (FLOPs for matmul, conv and the
# recurrent steps, elements read and written for the rest): a (128, 128) @ (128, 32) GEMM, an
# elementwise op on 350,000 floats.
HEAVY = 1 << 20
# A group runs its branches at once when it can save at least this much work (total minus the
# largest branch, in the units of `cost`) and the inter-op threads are more than one. By default
# (mg.set_num_interop_threads never called) that is never: on the 2-core development machine, with
# BLAS on both cores (its default), concurrent branches did not win at any measured size. Once the
# user sets the inter-op threads above one, groups that can save MIN_GAIN_SET run at once: measured
# with BLAS on one thread (mg.set_num_threads(1)), loaded machine, a bidirectional LSTM training
# step (batch 32, 30 steps, 128 hidden; groups of 2.5e8 and 5.2e8) went from 42 to 27 ms, while
# groups of 1e7-2e7 (batch 8, 64 hidden) lost (4.5 -> 7.0 ms) and attention's projections
# (1.3e8) about tied (docs/compiler.md). $MINIGRAD_INTEROP_MIN_GAIN (a number, or "inf")
# overrides both.
MIN_GAIN_SET = 2e8
MIN_GAIN = None   # None: the rule above; a number: that threshold whatever the setting


def threshold():
    """The threshold in force now: $MINIGRAD_INTEROP_MIN_GAIN, else MIN_GAIN, else MIN_GAIN_SET once
    mg.set_num_interop_threads was called, else inf (never in parallel)."""
    env = os.environ.get("MINIGRAD_INTEROP_MIN_GAIN", "").strip()
    if env:
        try:
            return float(env)
        except ValueError:
            raise ValueError(f"minigrad: $MINIGRAD_INTEROP_MIN_GAIN={env!r} is not a number") from None
    if MIN_GAIN is not None:
        return float(MIN_GAIN)
    from ... import _threads
    return MIN_GAIN_SET if _threads._interop is not None else float("inf")


# ops that return a view of their input (no work in proportion to its size): cost 1
_VIEWS = frozenset(("reshape", "view", "permute", "transpose", "expand", "getitem", "squeeze", "unsqueeze",
                    "t", "narrow", "flatten", "unflatten", "movedim", "select", "slice", "split", "chunk",
                    "unbind", "diagonal", "detach", "alias", "as_strided", "expand_as", "view_as"))
_GEMM = ("linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "dot", "einsum", "tensordot")


def _size(v):
    if v.shape is None:
        return 0
    return math.prod(v.shape)


def _var_args(e):
    return [a for a in e.args if isinstance(a, Var)]


def cost(e):
    """The estimated work of equation e: FLOPs (2 M N K) for GEMM-like ops and convolutions (twice
    for their backward), the body's cost times the length for a scan, the recurrent steps' GEMMs;
    else the elements it reads and writes (elementwise, reductions, copies); 1 for an op that
    returns a view (reshape, permute, getitem, expand, ...)."""
    prim = e.prim
    if prim in _VIEWS:
        return 1
    if e.effect or e.fn is None:
        return sum(_size(v) for v in e.invars)
    outs = e.outvars
    vs = _var_args(e)
    if prim == "scan":
        spec = e.args[0]
        body = getattr(getattr(spec, "body", None), "graph", None)
        per = sum(cost(b) for b in body.eqns) if body is not None else 0
        return int(getattr(spec, "length", 1)) * per
    if prim in ("cond", "while_loop"):
        spec = e.args[0]
        subs = [b.graph for b in spec.__dict__.values() if hasattr(b, "graph") and hasattr(b.graph, "eqns")]
        return max([sum(cost(x) for x in g.eqns) for g in subs] or [0])
    base = prim[:-len("_backward")] if prim.endswith("_backward") else prim
    mult = 2 if prim.endswith("_backward") else 1
    if base in _GEMM and len(vs) >= 2 and vs[0].shape:
        if base == "linear":   # linear(x, w, b); linear_backward(g, x, w, ...): dx and dw, two GEMMs
            x, w = (vs[1], vs[2]) if prim.endswith("_backward") and len(vs) >= 3 else (vs[0], vs[1])
            k = w.shape[-1] if w.shape else 1
            rows = _size(x) // max(1, x.shape[-1]) if x.shape else 1
            n = w.shape[0] if len(w.shape) == 2 else 1
            return 2 * rows * n * k * mult
        k = vs[0].shape[-1]
        return 2 * sum(_size(v) for v in outs) * k * mult
    if base in ("convolution", "conv_transpose") and len(vs) >= 2:
        w = vs[1] if not prim.endswith("_backward") else max(vs[1:], key=_size, default=vs[0])
        per = math.prod(w.shape[1:]) if w.shape and len(w.shape) > 1 else 1
        big = max(_size(v) for v in outs + vs) if outs else 0
        return 2 * big * per * mult
    if base in ("lstm_step", "gru_step", "rnn_step") and len(vs) >= 2:
        # the recurrent GEMM h @ W_hh^T: the largest 2-d weight against the batch of hidden states
        w = max((v for v in vs if v.shape and len(v.shape) == 2), key=_size, default=None)
        h = outs[0] if outs else None
        if w is not None and h is not None and h.shape:
            rows = _size(h) // max(1, h.shape[-1])
            return 2 * rows * _size(w) * mult + sum(_size(v) for v in outs + vs)
    if base == "scaled_dot_product_attention" and len(vs) >= 3 and vs[0].shape:
        q, k = vs[0], vs[1]
        return 4 * _size(q) * (k.shape[-2] if len(k.shape) >= 2 else 1) * mult
    return sum(_size(v) for v in outs) + sum(_size(v) for v in vs)


class Group:
    """One set of independent branches: `branches` (lists of equation indices of the scheduled
    graph, each in program order), `costs` (their estimated costs), `parallel` (whether they run at
    once) and `reason` (why, or why not)."""

    __slots__ = ("branches", "costs", "parallel", "reason", "heads")

    def __init__(self, branches, costs, heads):
        self.branches, self.costs, self.heads = branches, costs, heads
        self.parallel, self.reason = False, ""

    @property
    def gain(self):
        """The work a parallel run can save: the total cost minus the largest branch's."""
        return sum(self.costs) - max(self.costs)

    @property
    def span(self):
        """(first, last) equation index of the group in the scheduled graph."""
        return self.branches[0][0], self.branches[-1][-1]

    def __repr__(self):
        return (f"Group({len(self.branches)} branches, costs {self.costs}, "
                f"{'parallel' if self.parallel else 'serial'}: {self.reason})")


class Schedule:
    """The schedule of a graph: `graph` (the same equations, each group's branches made contiguous,
    branch after branch), `groups` ([Group], by position), `threads` (the inter-op threads when it
    was made) and `min_gain`."""

    def __init__(self, graph, groups, threads, min_gain):
        self.graph, self.groups, self.threads, self.min_gain = graph, groups, threads, min_gain

    @property
    def parallel(self):
        """The groups that run their branches at once."""
        return [g for g in self.groups if g.parallel]

    def spans(self):
        """{equation index: (group first, group last)} for every equation of a parallel group (the
        memory planner treats a value as live over its whole group: branches never share a buffer)."""
        out = {}
        for g in self.parallel:
            lo, hi = g.span
            for b in g.branches:
                for i in b:
                    out[i] = (lo, hi)
        return out

    def describe(self):
        """The lines explain shows: each group, its branches (head equations and costs), and whether it
        runs in parallel and why (or why not)."""
        if not self.groups:
            return ["schedule: serial (no independent branches of at least "
                    f"{HEAVY:,} estimated work each were found)"]
        n = len(self.parallel)
        gain = "inf" if self.min_gain == float("inf") else f"{self.min_gain:,.0f}"
        lines = [f"schedule: {len(self.groups)} group(s) of independent branches, {n} run in parallel "
                 f"(inter-op threads {self.threads}, minimum gain {gain})"]
        if n:
            from .._interop import threads_now
            lines.append(f"  at run time on min(inter-op threads, branches, cores // intra-op threads while "
                         f"BLAS has several) threads: {threads_now()} now")
        eqns = self.graph.eqns
        for k, g in enumerate(self.groups):
            lo, hi = g.span
            lines.append(f"  group {k} (equations {lo}-{hi}): {'PARALLEL' if g.parallel else 'serial'} - {g.reason}")
            for j, (b, c) in enumerate(zip(g.branches, g.costs)):
                heads = ", ".join(f"{eqns[i].prim} -> {eqns[i].outvars[0].name}" if eqns[i].outvars
                                  else eqns[i].prim for i in g.heads[j])
                lines.append(f"    branch {j}: {len(b)} equations, cost {c:,} ({heads})")
        return lines


def _deps(eqns):
    """preds[i]: bitset of the equations i reads from directly (data, and the ordering edges)."""
    defined = {}
    writes = set()   # equations that write into an input in place: the value an assign stores, made
    for i, e in enumerate(eqns):  # by an op reading the assign's target (an optimizer's fused step)
        for v in e.outvars + [s[1] for s in e.side]:
            defined[v.name] = i
        if e.prim == "assign":
            t, val = e.args
            d = defined.get(val.name)
            if d is not None and any(v.name == t.name for v in eqns[d].invars):
                writes.add(d)
    defined = {}
    preds = [0] * len(eqns)
    last_target, last_rng = {}, {}
    barrier = None
    for i, e in enumerate(eqns):
        p = 0
        for v in e.invars:
            d = defined.get(v.name)
            if d is not None:
                p |= 1 << d
            if v.shape is None:  # a generator: its draws keep their order
                r = last_rng.get(v.name)
                if r is not None:
                    p |= 1 << r
                last_rng[v.name] = i
        user = e.fn is not None and not (getattr(e.fn, "__module__", "") or "").startswith("minigrad.")
        if e.prim == "assign" or user or i in writes:
            p |= (1 << i) - 1   # a barrier: after everything before
            barrier = i
        elif barrier is not None:
            p |= 1 << barrier
        if e.prim == "set_grad":
            t = last_target.get(e.target)
            if t is not None:
                p |= 1 << t
            last_target[e.target] = i
        preds[i] = p
        for v in e.outvars + [s[1] for s in e.side]:
            defined[v.name] = i
    return preds


def _ancestors(preds):
    anc = [0] * len(preds)
    for i, p in enumerate(preds):
        a = p
        q = p
        while q:   # the latest predecessor first: its ancestors need no visit of their own
            j = q.bit_length() - 1
            a |= anc[j]
            q &= ~(anc[j] | (1 << j))
        anc[i] = a
    return anc


def _bits(x):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def find_groups(graph, heavy=None):
    """The graph's groups of independent branches: (order, groups, costs) where order is the new
    equation order (indices into graph.eqns: each group's branches contiguous, branch after branch)
    and groups is [(branches, heads)], each branch a list of positions in `order` and heads the
    positions of the heavy equations that started it. `heavy`: the cost from which an equation can
    head a branch (default HEAVY)."""
    heavy = HEAVY if heavy is None else heavy
    eqns = graph.eqns
    costs = [cost(e) for e in eqns]
    preds = _deps(eqns)
    anc = _ancestors(preds)
    items = []   # ("eq", index) or ("group", [[index]], [head index])

    def search(nodes, depth):
        if depth > 64 or len(nodes) < 2:
            items.extend(("eq", x) for x in nodes)
            return
        heavies = [i for i in nodes if costs[i] >= heavy]
        members, best = [], 0
        for a, h in enumerate(heavies[:256]):   # each start's antichain; the one saving the most wins
            ms = [h]
            for h2 in heavies[a + 1:]:
                if all(not (anc[h2] >> m) & 1 for m in ms):
                    ms.append(h2)
            gain = sum(costs[m] for m in ms) - max(costs[m] for m in ms)
            if len(ms) > 1 and gain > best:
                members, best = ms, gain
        if len(members) < 2:
            items.extend(("eq", x) for x in nodes)
            return
        mask = 0
        for x in nodes:
            mask |= 1 << x
        branch, down = {}, set()
        for x in nodes:
            D = [j for j, m in enumerate(members) if m == x or (anc[x] >> m) & 1]
            if len(D) == 1:
                branch[x] = D[0]
                down.add(x)
            elif not D:
                A = [j for j, m in enumerate(members) if (anc[m] >> x) & 1]
                if len(A) == 1:
                    branch[x] = A[0]
        while True:
            changed = False
            # an upstream equation of branch i read by branch j's downstream: it runs before the group
            for x in down:
                i = branch[x]
                for p in _bits(preds[x] & mask):
                    if branch.get(p, i) != i:
                        del branch[p]
                        changed = True
            # so does any upstream equation that an equation running before the group needs
            bmask = 0
            for x in branch:
                bmask |= 1 << x
            before = 0
            for x in branch:
                before |= anc[x]
            before &= mask & ~bmask
            need = 0
            for y in _bits(before):
                need |= anc[y]
            for z in _bits(need & bmask):
                del branch[z]
                changed = True
            if not changed:
                break
        parts = [[x for x in nodes if branch.get(x) == j] for j in range(len(members))]
        keep = [j for j, b in enumerate(parts) if b]
        if len(keep) < 2:
            items.extend(("eq", x) for x in nodes)
            return
        pre = [x for x in nodes if (before >> x) & 1]
        post = [x for x in nodes if x not in branch and not (before >> x) & 1]
        search(pre, depth + 1)
        items.append(("group", [parts[j] for j in keep], [[members[j]] for j in keep]))
        search(post, depth + 1)

    search(list(range(len(eqns))), 0)
    order, groups = [], []
    for kind, *rest in items:
        if kind == "eq":
            order.append(rest[0])
            continue
        parts, heads = rest
        pos, branches = {}, []
        for b in parts:
            branches.append(list(range(len(order), len(order) + len(b))))
            for x in b:
                pos[x] = len(order)
                order.append(x)
        groups.append((branches, [[pos[h] for h in hs] for hs in heads]))
    return order, groups, costs


def schedule(graph, threads=None, min_gain=None, heavy=None):
    """The Schedule of a graph: its groups of independent branches (find_groups), each marked
    parallel when `threads` (default mg.get_num_interop_threads()) is above one and the group's
    gain (total cost minus the largest branch's) is at least `min_gain` (default: threshold())."""
    from ..._threads import get_num_interop_threads
    threads = get_num_interop_threads() if threads is None else threads
    min_gain = threshold() if min_gain is None else min_gain
    order, found, costs = find_groups(graph, heavy)
    g2 = copy_graph(graph, eqns=[graph.eqns[i] for i in order]) if order != list(range(len(order))) else graph
    groups = []
    for branches, heads in found:
        g = Group(branches, [sum(costs[order[i]] for i in b) for b in branches], heads)
        if threads <= 1:
            g.reason = "inter-op threads = 1 (mg.set_num_interop_threads)"
        elif g.gain < min_gain:
            g.reason = (f"below the threshold: it could save {g.gain:,} of work, the minimum is "
                        + ("inf (the default until mg.set_num_interop_threads is called: measured not to "
                           "pay on a 2-core machine with BLAS on both cores)" if min_gain == float("inf")
                           else f"{min_gain:,.0f}"))
        else:
            g.parallel = True
            g.reason = f"saves up to {g.gain:,} of work on {min(threads, len(branches))} threads"
        groups.append(g)
    return Schedule(g2, groups, threads, min_gain)
