"""compile_graph(graph): the graph as straight-line Python source of NumPy calls, exec'd once.

Each equation becomes one line: a planned ufunc writes into its buffer (`v_e = U3(v_a, v_b,
out=_B[0])`, memory.py), any other op calls its Function's NumPy forward exactly as graph.run does
(`F4._fast(...)` or `F4.forward(ctx, ...)`), and effects write into the bound tensors in program
order; after its last read a value is dropped (`del v_e`), so memory is freed as early as eager
frees it. `compiled.code` is the source that runs; the line comment is where the user's code made
it. The results are bit for bit graph.run's (the same NumPy calls on the same values).
"""
import keyword

import numpy as np

from ..autograd.function import plain_forward
from ..kernels import buffers as _buffers
from ..graph import interpret as _interp
from ..graph.ir import Var
from ..tensor import Tensor
from .memory import last_reads, plan_memory


def _ident(name):
    """name as a Python identifier in generated source: only a plain ASCII identifier passes, so no
    text of a graph (a loaded file's variable names included) can become code."""
    if type(name) is not str or not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name) \
            or len(name) > 200:
        raise ValueError(f"codegen: {name!r:.80} is not a plain identifier; it cannot be a variable of "
                         f"generated code")
    return name


def _v(var):
    return _vname(var.name)


def _vname(name):
    if type(name) is not str:
        raise ValueError(f"codegen: a variable name must be a str, got {type(name).__name__}")
    return _ident("v_" + name)


def _comment(text):
    """text for a line comment: ASCII, escapes for every control or non-ASCII character (a newline
    in an op name or a source location cannot end the comment), at most 200 characters."""
    return str(text)[:200].encode("unicode_escape").decode("ascii")


def _arr(o):
    return o if type(o) is np.ndarray else np.asarray(o)


def _one(o):
    """The single result of a forward that may return it alone or in a 1-tuple (as graph.run reads it)."""
    if type(o) is tuple:
        o = o[0]
    return o if type(o) is np.ndarray else np.asarray(o)


def _do_assign(arr, value, objs, name):
    arr[...] = value
    obj = objs.get(name)
    if isinstance(obj, Tensor):
        obj._bump_version()
    return arr


def _do_set_grad(value, objs, name, copy=True):
    p = objs.get(name)
    if not isinstance(p, Tensor):
        raise RuntimeError(f"compiled graph: set_grad on {name!r}, which is not a bound parameter")
    if value is None:
        p._grad = None
        return None
    arr = value.copy() if copy else value  # not copied: a fresh array nothing else reads (memory.py)
    p._grad = Tensor._make(arr)
    return arr


class _Gen:
    def __init__(self):
        self.glb = {"np": np, "_arr": _arr, "_one": _one, "_assign": _do_assign, "_set_grad": _do_set_grad,
                    "_Ctx": _interp._Ctx, "_side": _interp._side_value}
        self.n = 0

    def const(self, value, prefix="S"):
        name = f"{prefix}{self.n}"
        self.n += 1
        self.glb[name] = value
        return name

    def expr(self, a):
        if isinstance(a, Var):
            return _v(a)
        if type(a) is tuple and any(isinstance(x, (Var, tuple, dict)) for x in a):
            return "(" + "".join(self.expr(x) + ", " for x in a) + ")"
        if type(a) is dict:  # a fresh dict per run: forward may fill it (side outputs)
            return "{" + ", ".join(f"{self.expr_key(k)}: {self.expr(x)}" for k, x in a.items()) + "}"
        if a is None or type(a) in (bool, int, str) or (type(a) is float and a == a and abs(a) != float("inf")):
            return repr(a)
        return self.const(a)

    def expr_key(self, k):  # a str's or int's repr is a literal whatever it holds; others are constants
        return repr(k) if type(k) in (str, int) else self.const(k)


def generate(graph, plan=None, groups=()):
    """(source, globals, views) of the function `compiled(_in, _st, _objs, _B)` computing the graph;
    views: [(arena index, shape, dtype)], what _B[j] is (a view of an arena of the memory plan).

    groups: the parallel groups of a schedule (passes/schedule.py; the graph is the schedule's, each
    group's branches contiguous): each branch becomes a function `_br<g>_<k>(_B, _objs, inputs...)`
    returning the values read after it, and the program runs a group's branches with
    `_par(((_br<g>_0, (args...)), ...))` (compiler/_interop.py: at once on the inter-op threads)."""
    gen = _Gen()
    lines = ["def compiled(_in, _st, _objs, _B):"]
    for i, v in enumerate(graph.invars):
        lines.append(f"    {_v(v)} = _in[{i}]")
    for i, (v, b) in enumerate(graph.state):
        lines.append(f"    {_v(v)} = _st[{i}]  # {_comment(b.name)} ({_comment(b.kind)})")
    for v, a in graph.consts:
        lines.append(f"    {_v(v)} = {gen.const(a, 'K')}")
    slot_of = plan.slot_of if plan is not None else {}
    views, view_of = [], {}
    last = last_reads(graph)
    outputs = {v.name for v in graph.outvars if isinstance(v, Var)}
    dying = {}  # eqn index -> names to drop after it (so memory is freed as eager frees it)
    for i, e in enumerate(graph.eqns):
        for v in e.outvars + [s[1] for s in e.side]:
            if v.name not in outputs:
                dying.setdefault(last.get(v.name, i), []).append(v.name)
    branch_of, starts = {}, {}
    for gi, g in enumerate(groups):
        starts[g.span[0]] = gi
        for k, b in enumerate(g.branches):
            for i in b:
                branch_of[i] = (gi, k)
    funcs = []
    eqns = graph.eqns
    i = 0
    while i < len(eqns):
        gi = starts.get(i)
        if gi is None:
            _one_eqn(gen, eqns[i], slot_of, views, view_of, plan, lines)
            drop = sorted(set(dying.get(i, ())))
            if drop:
                lines.append("    del " + ", ".join(_vname(n) for n in drop))
            i += 1
            continue
        g = groups[gi]
        lo, hi = g.span
        calls, unpack, after = [], [], set()
        for k, b in enumerate(g.branches):
            local = set()
            for j in b:
                local.update(v.name for v in eqns[j].outvars + [s[1] for s in eqns[j].side])
            ins = sorted({v.name for j in b for v in eqns[j].invars if v.name not in local})
            exports = sorted(n for n in local if n in outputs or last.get(n, -1) > hi)
            name = f"_br{gi}_{k}"
            body = [f"def {name}(_B, _objs" + "".join(", " + _vname(n) for n in ins) + "):"]
            for j in b:
                _one_eqn(gen, eqns[j], slot_of, views, view_of, plan, body)
                drop = sorted(n for n in set(dying.get(j, ())) if n in local and n not in exports)
                if drop:
                    body.append("    del " + ", ".join(_vname(n) for n in drop))
            body.append("    return (" + "".join(_vname(n) + ", " for n in exports) + ")")
            funcs.append("\n".join(body))
            calls.append(f"({name}, (" + "".join(_vname(n) + ", " for n in ins) + "))")
            if exports:
                unpack.append(f"    {', '.join(_vname(n) for n in exports)}, = _r[{k}]")
            after.update(n for n in ins if lo <= last.get(n, -1) <= hi and n not in outputs)
        lines.append(f"    _r = _par(({', '.join(calls)},), _B, _objs)  # group {gi}: {len(calls)} branches at once")
        lines.extend(unpack)
        lines.append("    del _r" + "".join(", " + _vname(n) for n in sorted(after)))
        i = hi + 1
    consts = {v.name for v, _ in graph.consts}
    rets = [f"{_v(v)}.copy()" if v.name in consts else _v(v) for v in graph.outvars]
    lines.append("    return [" + ", ".join(rets) + "]")  # a constant output is copied: callers own outputs
    if groups:
        from ._interop import run_branches

        def _par(calls, _B, _objs):
            return run_branches([(f, (_B, _objs) + a) for f, a in calls])
        gen.glb["_par"] = _par
    src = "\n".join(lines) + "\n"
    if funcs:   # after the program (read from the module's globals when it runs)
        src = src + "\n\n" + "\n\n\n".join(funcs) + "\n"
    return src, gen.glb, views


def _one_eqn(gen, e, slot_of, views, view_of, plan, lines):
    where = f"  # {_comment(e.prim)}" + (f"  {_comment(e.source)}" if e.source else "")
    if e.effect:
        if e.prim == "assign":
            t, val = e.args
            lines.append(f"    {_v(e.outvars[0])} = _assign({_v(t)}, {_v(val)}, _objs, {gen.expr_key(e.target)})"
                         f"{where}")
        elif e.prim == "set_grad":
            val = e.args[0]
            lhs = f"{_v(e.outvars[0])} = " if e.outvars else ""
            arg = "None" if val is None else _v(val)
            own = ", copy=False" if val is not None and plan is not None and val.name in plan.donated else ""
            if val is not None and plan is not None and val.name in getattr(plan, "owned", ()):
                own = f", copy={_v(val)}.base is not None"  # a fresh array is donated, a view copied
            lines.append(f"    {lhs}_set_grad({arg}, _objs, {gen.expr_key(e.target)}{own}){where}")
        else:
            raise NotImplementedError(f"codegen: unknown effect {e.prim!r}")
    else:
        _eqn_lines(gen, e, where, slot_of, views, view_of, lines)


def _eqn_lines(gen, e, where, slot_of, views, view_of, lines):
    args = ", ".join(gen.expr(a) for a in e.args)
    outs = e.outvars
    if outs and outs[0].name in slot_of:
        v = outs[0]
        view_of[v.name] = j = len(views)
        views.append((slot_of[v.name], v.shape, np.dtype(v.dtype)))
        u = gen.const(e.fn._fast, "U")
        lines.append(f"    {_v(v)} = {u}({args}, out=_B[{j}]){where}")
        return
    f = gen.const(e.fn, "F")
    if plain_forward(e.fn, e.side) == "fast":  # the choice eager makes (autograd/function.py)
        if getattr(e.fn, "_recycle", False) and 1 <= len(e.args) <= 2:  # a large result recycled, as eager
            call = f"{gen.const(_buffers.ufunc, 'R')}({f}._fast, {args})"
        else:
            call = f"{f}._fast({args})"
        ctx = False
    else:
        ctx = True
        need = e.need if e.need is not None else (False,) * len(e.args)
        lines.append(f"    _c = _Ctx(); _c.needs_input_grad = {tuple(bool(n) for n in need)!r}")
        if e.side:
            lines.append(f"    _v = [{args}]")
            call = f"{f}.forward(_c, *_v)"
        else:
            call = f"{f}.forward(_c, {args})" if args else f"{f}.forward(_c)"
    if len(outs) == 1:
        lines.append(f"    {_v(outs[0])} = _one({call}){where}")
    else:
        lines.append(f"    _o = {call}{where}")
        for j, v in enumerate(outs):
            lines.append(f"    {_v(v)} = _arr(_o[{j}])")
        lines.append("    del _o")
    for path, v in e.side:
        lines.append(f"    {_v(v)} = _side({gen.const(path, 'P')}, _v, _c)")
    if ctx:
        lines.append("    del _c" + (", _v" if e.side else ""))


class CompiledGraph:
    """A graph compiled to Python: call it like graph.run; `.code` is the source that runs,
    `.plan` the memory plan (None with plan=False), `.schedule` the inter-op schedule (which groups
    of independent branches run at once; passes/schedule.py). The planned buffers belong to this object and
    each call takes a set for its run: calls from several threads at once (or a reentrant one) each
    get their own set (a second set is allocated the first time two calls overlap, then kept)."""

    def __init__(self, graph, plan=True, schedule=True):
        self._schedule, self._unscheduled = None, None
        groups = ()
        if schedule is True:
            from .passes import schedule as _s
            from .._threads import get_num_interop_threads
            threads, gain = get_num_interop_threads(), _s.threshold()
            if threads <= 1 or gain == float("inf"):
                schedule = None              # nothing could run at once: found only if asked (explain)
                self._unscheduled = (graph, threads, gain)
            else:
                schedule = _s.schedule(graph)
        if schedule:
            self._schedule = schedule
            groups = schedule.parallel
            if groups:      # the same equations, each parallel group's branches contiguous
                graph = schedule.graph
        self.graph = graph
        spans = schedule.spans() if groups else None
        self.plan = plan_memory(graph, spans) if plan else None
        self.code, glb, views = generate(graph, self.plan, groups)
        exec(compile(self.code, f"<minigrad compiled graph {id(self):x}>", "exec"), glb)  # noqa: S102
        self._fn = glb["compiled"]
        self._views = views
        self._free = [self._buffers()]   # buffer sets not in use (list.pop/append: atomic under the GIL)

    @property
    def schedule(self):
        """The inter-op schedule (passes/schedule.py): the groups of independent branches, which run
        at once and why or why not; None when compiled with schedule=False."""
        if self._schedule is None and self._unscheduled is not None:
            from .passes.schedule import schedule as _schedule
            graph, threads, gain = self._unscheduled   # as when compiled: none of its groups is parallel
            self._schedule = _schedule(graph, threads, gain)
            self._unscheduled = None
        return self._schedule

    def _buffers(self):
        arenas = [np.empty(n, np.uint8) for n in self.plan.arenas] if self.plan else []
        return [arenas[b][:_size(s, d)].view(d).reshape(s) for b, s, d in self._views]

    def __call__(self, *args, state=None):
        """Run the compiled program on the graph's inputs (tensors or arrays of the traced shapes and
        dtypes); ``state={name: value}`` binds state inputs (parameters, buffers) to other values, as a
        loaded graph, which has no live tensors, needs. Returns what the traced function returned."""
        g = self.graph
        if len(args) != len(g.invars):
            raise TypeError(f"compiled graph: expected {len(g.invars)} tensor arguments "
                            f"({', '.join(g.arg_names)}), got {len(args)}")
        ins = []
        protect = getattr(g, "readonly_inputs", ())
        for v, a, n in zip(g.invars, args, g.arg_names):
            arr = a._data if isinstance(a, Tensor) else np.asarray(a)
            if arr.dtype != v.dtype or arr.shape != v.shape:
                raise TypeError(f"compiled graph: argument {n!r} has shape {tuple(arr.shape)} and dtype "
                                f"{arr.dtype}; it was compiled for {v.shape} {v.dtype}")
            ins.append(_interp.readonly(arr) if v.name in protect else arr)
        st = [_interp._value(b, state) for _, b in g.state]
        objs = {b.name: (state or {}).get(b.name, b.obj) for _, b in g.state}
        try:
            bufs = self._free.pop()
        except IndexError:           # another call (thread) holds the set: this one gets its own
            bufs = self._buffers()
        try:
            outs = self._fn(ins, st, objs, bufs)
        finally:
            self._free.append(bufs)
        return _interp._unflatten(g.out_tree, [Tensor._make(o) for o in outs])

    run = __call__

    def __repr__(self):
        return f"<minigrad CompiledGraph: {len(self.graph.eqns)} equations; {self.plan!r}>"


def _size(shape, dtype):
    return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize


def compile_graph(graph, plan=True, schedule=True):
    """Compile a Graph (optimized or not) to a CompiledGraph; plan=False skips buffer reuse.
    schedule: True finds the graph's independent branches (passes/schedule.py) and runs those worth
    it at once on the inter-op threads; a Schedule uses that one; False or None runs every equation
    in order (`.schedule` is then None)."""
    return CompiledGraph(graph, plan=plan, schedule=schedule)
