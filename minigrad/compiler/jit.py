"""mg.jit / mg.compile: trace on the first call, optimise, compile, and cache behind guards.
mg.jit.trace(func, example_inputs) is torch.jit.trace's spelling: the same, traced now on the
example inputs, with fullgraph=True.

A call computes a guard key: the shape, dtype and requires_grad of each Tensor argument, the value
of each Python scalar argument (static: baked into the program), the grad mode, and the state of
the modules and optimizers the function reaches (mg.graph.trace.roots_of): each module's `training`
flag, the identity of its parameters and buffers and whether their `.grad` is None, and which
optimizer state exists. A key seen before runs its compiled program; a new one traces again.
Values that change every step are not in the key: they are inputs of the program (state bindings)
— parameters, gradients, optimizer state and Adam's step count (tensors read at each run), the
learning rate a scheduler sets and the other hyper-parameters ("hyper" inputs, which raise
GuardFailure when a branch the step took on them no longer holds: then the call traces again), and
the random generator (Dropout draws from it at each run, as eager does).

Computing that key walks every module and optimizer (45-100 us per call for a two-layer MLP step
with Adam). So each cached program also gets a specialised guard (guards.py): straight-line code
comparing with the objects and values seen when its key was last computed; a call first asks the
last program's guard (measured 11 us against 88 us for the key in one run on this loaded machine),
and only when it says no computes the key.

Dynamic batch dimension: a traced program has its shapes baked into static parameters (reshape
targets, the expand of a mean's backward, the size a mean divides by), so one trace cannot serve
another batch size. A dimension marked dynamic (`dynamic=` or `mg.jit.mark_dynamic(x, 0)`)
therefore still gets one exact program per size (the last partial batch of an epoch traces once,
and is cached), but those traces do not count as retraces: only keys that differ in something
else count towards the repeated-tracing warning (mg.debug.warn_retrace, after 8).

Compiled against eager: the first six runs of each program are timed, two of them running the
function eagerly instead of the program (never both, so an optimizer step in it steps once per
call); explain prints the best of each and flags a program more than 10 % slower than eager (a
JitWarning too under mg.debug.watch()). After those runs a call tests one attribute more.

Graph breaks: mg.jit traces with on_break="record", so the call that hits a break has run to its
end eagerly (its results are real); that key then always runs eagerly, with one warning naming the
user's line. `fullgraph=True` raises GraphBreak at the line instead.
"""
import functools
import threading
import time
import types
import warnings
import weakref
from collections import OrderedDict
from contextlib import nullcontext

import numpy as np

from ..autograd import function as _function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..graph.ir import Graph, GuardFailure
from ..kernels import select as _select
from ..graph.trace import GraphBreak, _arg_names_of, roots_of, trace
from ..tensor import Tensor
from .codegen import compile_graph
from .pipeline import DEFAULT, format_reports, optimize, stats
from . import guards as _guards
from .pystate import analyse, value_sig

__all__ = ["jit", "compile", "JitFunction", "CompiledModule", "Explanation", "mark_dynamic",
           "explain", "JitWarning"]

RETRACE_LIMIT = 8        # retraces of one function before the repeated-tracing warning
CACHE_SIZE_LIMIT = 64    # compiled programs kept per function (least recently used dropped)


class JitWarning(UserWarning):
    """mg.jit runs a call eagerly (a graph break, or a result that needs an autograd graph)."""


def mark_dynamic(x, dims):
    """Mark dimension(s) `dims` of tensor `x` as dynamic for mg.jit: a call whose arguments differ
    from an earlier one only in marked dimensions gets its own exact program (traced once, cached)
    without counting as a retrace. Returns x.

    Example:
        >>> step = mg.jit(train_step)
        >>> x = mg.jit.mark_dynamic(x, 0)   # the last batch of an epoch may be smaller
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"mg.jit.mark_dynamic: expected a Tensor, got {type(x).__name__}")
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    for d in dims:
        if not -x.ndim <= d < max(x.ndim, 1):
            raise IndexError(f"mg.jit.mark_dynamic: dim {d} out of range for a tensor of shape {tuple(x.shape)}")
    x._jit_dynamic = frozenset(getattr(x, "_jit_dynamic", frozenset()) | {d % x.ndim for d in dims})
    return x


# -- guard keys ------------------------------------------------------------------------------------

def _static_sig(a):
    """The guard of a non-Tensor argument (its value is baked into the program)."""
    if a is None or type(a) in (bool, int, str):
        return (type(a).__name__, a)
    if type(a) is float:
        return ("float", a.hex() if a == a else "nan")  # -0.0 and 0.0 are different programs
    if isinstance(a, Tensor):
        # a tensor inside a container is read as state bound to this very tensor
        return ("tensor", id(a), a._data.shape, a._data.dtype, a.requires_grad)
    if type(a) in (tuple, list):
        return (type(a).__name__,) + tuple(_static_sig(x) for x in a)
    if type(a) is dict:
        return ("dict",) + tuple((k, _static_sig(v)) for k, v in a.items())
    if isinstance(a, np.ndarray):
        return ("ndarray", a.shape, a.dtype.str, a.tobytes())
    if isinstance(a, np.generic):
        return ("npscalar", a.dtype.str, a.tobytes())
    return ("object", id(a))


def _tensor_sig(t, dyn):
    a = t._data
    shape, dt = a.shape, a.dtype
    if not dyn:
        sig = ("T", shape, dt, t.requires_grad)
        return sig, sig
    erased = tuple(None if i in dyn else s for i, s in enumerate(shape))
    return ("T", shape, dt, t.requires_grad), ("T", erased, dt, t.requires_grad)


_SCALARS = (int, float, bool, str)


def _state_sig(roots):
    """Module training flags, parameter/buffer identities, grad None-ness, optimizer state layout."""
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer
    sig, seen, groups = [], set(), []
    add = sig.append
    for _, obj in roots:
        if isinstance(obj, Tensor):  # a tensor in a closure or a global: a state input bound to it
            add((id(obj), obj._data.shape, obj._data.dtype.char, obj.requires_grad, obj._grad is None))
        elif isinstance(obj, Module):
            stack = [obj]
            while stack:  # the module tree, read from the dicts directly (this runs at every call)
                m = stack.pop()
                if m is None or id(m) in seen:
                    continue
                seen.add(id(m))
                d = m.__dict__
                add(d["training"])
                for k, v in d.items():  # Python options baked into the trace (Dropout's p, eps, ...)
                    if type(v) in _SCALARS:
                        add((k, v))
                for p in d["_parameters"].values():
                    if p is not None:
                        a = p._data
                        add((id(p), a.shape, a.dtype.char, p._grad is None, p.requires_grad))
                for b in d["_buffers"].values():
                    if b is not None:
                        add((id(b), b._data.shape, b._data.dtype.char))
                stack.extend(d["_modules"].values())
        elif isinstance(obj, Optimizer) and id(obj) not in seen:
            seen.add(id(obj))
            sig.append(("opt", id(obj)))
            for group in obj.param_groups:
                groups.append(group)
                for p in group["params"]:
                    st = obj.state.get(p)
                    sig.append((id(p), p._grad is None, None if not st else tuple(
                        (k, id(v) if isinstance(v, Tensor) else type(v).__name__) for k, v in st.items())))
    return tuple(sig), groups


class _Entry:
    """One compiled program (or an eager fallback) for one guard key."""

    __slots__ = ("graph", "optimized", "reports", "compiled", "eager", "reason", "guards",
                 "trace_seconds", "compile_seconds", "fast", "builds", "timing", "timed")

    def __init__(self, graph):
        self.graph, self.optimized, self.reports, self.compiled = graph, None, [], None
        self.eager, self.reason, self.guards = False, None, []
        self.fast = None  # the specialised guard (guards.py), built when the key is next looked up
        self.builds = 0
        self.trace_seconds, self.compile_seconds = getattr(graph, "trace_seconds", 0.0), 0.0
        self.timing = None  # _Timing while the first runs of the program are timed, then None
        self.timed = None   # the same _Timing, kept for explain

    def guards_hold(self):
        for group, k, v in self.guards:
            now = group.get(k, _MISSING)
            if now is not v and (type(v) not in _PLAIN or type(now) is not type(v) or now != v):
                return False
        return True


# The first runs of a compiled program, one letter each: "c" runs the program, "e" runs the function
# eagerly instead (never both: a call's side effects, an optimizer step, happen once). Each is timed;
# the best of each kind are the figures explain shows. After the last one a run costs one attribute
# test (entry.timing is None).
_TIMING_RUNS = "ccecec"
SLOWER_BY = 0.10  # explain (and mg.debug.watch(), with a JitWarning) flags a program this much slower


class _Timing:
    __slots__ = ("runs", "compiled", "eager", "eager_reason")

    def __init__(self, eager_reason):
        self.runs, self.compiled, self.eager, self.eager_reason = 0, [], [], eager_reason

    @property
    def done(self):
        return self.runs >= len(_TIMING_RUNS)

    def figures(self):
        """(compiled s/call or None, eager s/call or None): the best of each kind so far."""
        return (min(self.compiled) if self.compiled else None, min(self.eager) if self.eager else None)


def _detached(out):
    """The eager result of a timed run as the compiled program gives it: tensors without a graph."""
    if isinstance(out, Tensor):
        return out.detach() if out.requires_grad else out
    if type(out) in (tuple, list):
        return type(out)(_detached(o) for o in out)
    if type(out) is dict:
        return {k: _detached(o) for k, o in out.items()}
    return out


_MISSING = object()
_RETRACE = object()  # JitFunction._run: the program's branch guard failed, trace again
_PLAIN = (int, float, bool, str, tuple, type(None))


def _result_tensors(out, acc):
    if isinstance(out, Tensor):
        acc.append(out)
    elif isinstance(out, (tuple, list)):
        for o in out:
            _result_tensors(o, acc)
    elif isinstance(out, dict):
        for o in out.values():
            _result_tensors(o, acc)
    return acc


def _fn_name(fn):
    return getattr(fn, "__qualname__", None) or type(fn).__name__


_LIVE = weakref.WeakSet()  # every JitFunction alive, for reset()


def reset():
    """Drop every compiled program of every mg.jit function (torch.compiler.reset / torch._dynamo.reset):
    the next call of each traces again. The trace and retrace counts start over too."""
    for jf in list(_LIVE):
        jf._cache.clear()
        jf._erased_seen.clear()
        jf._history.clear()
        jf.traces = jf.retraces = 0
        jf._warned_retrace = False


class JitFunction:
    """A function compiled by mg.jit: call it like the function. Attributes: `fn`, `cache_info()`,
    `traces` (how many times it traced), `code` (the generated source of the last program run),
    `explain(*args)`."""

    def __init__(self, fn, *, passes=None, fullgraph=False, dynamic=None, freeze=False):
        if not callable(fn):
            raise TypeError(f"mg.jit: expected a function or module, got {type(fn).__name__}")
        if isinstance(fn, JitFunction):
            fn = fn.fn
        self.fn, self.passes, self.fullgraph, self.freeze = fn, passes, fullgraph, freeze
        self.dynamic = dynamic
        if dynamic is not None and not isinstance(dynamic, (bool, int, dict)):
            raise TypeError(f"mg.jit: dynamic must be None, a bool, a dim (int) or a dict "
                            f"{{argument name or index: dim or dims}}, got {type(dynamic).__name__}")
        self._cache = OrderedDict()
        self._lock = threading.Lock()  # held only to read and update the cache, never while a program runs
        self._py = None  # what the function's code reads from / writes to outside Python state (pystate.py)
        _LIVE.add(self)
        self._erased_seen = set()
        self._history = []       # (per-argument signatures, rest of the key) of each counted trace
        self.traces = 0
        self.retraces = 0        # traces that counted towards the repeated-tracing warning
        self._warned_retrace = False
        self._warned = set()     # eager-fallback messages already given
        self._last = None        # the entry of the last call
        self._arg_names = {}
        if not hasattr(fn, "forward"):  # a function: its name and docstring (a module keeps its own)
            functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj, objtype=None):  # @mg.jit on a method: bound to the instance
        return self if obj is None else types.MethodType(self, obj)

    # -- keys --------------------------------------------------------------------------------------
    def _dims(self, i, name, t):
        d = getattr(t, "_jit_dynamic", frozenset())
        spec = self.dynamic
        if spec is True:
            return frozenset(range(t.ndim))
        if type(spec) is int:
            return d | {spec % t.ndim} if t.ndim else d
        if type(spec) is dict:
            dims = spec.get(name, spec.get(i))
            if dims is not None:
                dims = (dims,) if isinstance(dims, int) else dims
                d = d | {x % t.ndim for x in dims} if t.ndim else d
        return d

    def _names(self, n):
        names = self._arg_names.get(n)
        if names is None:
            names = self._arg_names[n] = _arg_names_of(self.fn, n)
        return names

    def _key(self, args, kwargs):
        names = self._names(len(args))
        sigs, erased = [], []
        items = list(zip(range(len(args)), names, args)) + [(k, k, v) for k, v in kwargs.items()]
        for i, name, a in items:
            if isinstance(a, Tensor):
                s, e = _tensor_sig(a, self._dims(i, name, a))
            else:
                s = e = _static_sig(a)
            sigs.append((name, s))
            erased.append((name, e))
        # what fn reaches without receiving it (closures, globals, self), plus modules and
        # optimizers passed as arguments (tensor arguments are guarded above, by shape)
        roots = roots_of(self.fn, (), []) + [(n, a) for n, a in zip(names, args) if not isinstance(a, Tensor)] + \
            [(k, v) for k, v in kwargs.items() if not isinstance(v, Tensor)]
        state, groups = _state_sig(roots)
        py = self._py
        if py is None:
            py = self._py = analyse(self.fn)
        rest = (is_grad_enabled(), state, py.values())
        return (tuple(sigs), rest), (tuple(erased), rest), groups

    # -- calling -----------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _function._state.tracer is not None:  # inside an outer mg.graph.trace / mg.jit: record the ops inline
            return self.fn(*args, **kwargs)
        if self.freeze and getattr(self.fn, "training", False):
            raise RuntimeError(f"mg.compile(freeze=True): {_fn_name(self.fn)} is in training mode; a frozen "
                               f"program is for inference (parameters as constants): call .eval() first")
        last = self._last
        if last is not None and last.fast is not None and last.fast(args, kwargs):
            # the last program's specialised guard (guards.py): the key would be the same
            out = self._run(last, args, kwargs)
            if out is not _RETRACE:
                return out
        key, erased, groups = self._key(args, kwargs)
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None:
                self._cache.move_to_end(key)
        if entry is not None:
            self._last = entry
            if entry.builds < 8 and (entry.fast is None or not entry.fast(args, kwargs)):
                entry.builds += 1  # (the guard is stricter than the key: build anew, a few times at most)
                entry.fast = _guards.build(self.fn, args, kwargs, self._py, value_sig)
            out = self._run(entry, args, kwargs)
            if out is not _RETRACE:
                return out
        return self._trace(key, erased, groups, args, kwargs)

    def _run(self, entry, args, kwargs):
        """The entry's result for this call: the function run eagerly, or its compiled program;
        _RETRACE where a hyper-parameter the step branched on changed (the caller traces again)."""
        if entry.eager:
            return self.fn(*args, **kwargs)
        if entry.guards_hold():
            tensors = [a for a in args if isinstance(a, Tensor)] + \
                [a for a in kwargs.values() if isinstance(a, Tensor)]
            t = entry.timing
            if t is not None:
                return self._timed(entry, t, tensors, args, kwargs)
            try:
                with no_grad() if self.freeze else nullcontext():
                    return entry.compiled(*tensors)
            except GuardFailure:
                pass
        return _RETRACE

    def _timed(self, entry, t, tensors, args, kwargs):
        """One of the first runs of a program (_TIMING_RUNS, counted by t): the program or, instead
        of it, the function eagerly, timed. Eager runs in place of the program, so nothing runs twice."""
        i = t.runs
        t.runs = i + 1   # (two threads may both be here: the one past the last run only runs the program)
        eager = i < len(_TIMING_RUNS) and _TIMING_RUNS[i] == "e" and t.eager_reason is None
        if eager:  # the branch guards the program checks as it runs (a hyper-parameter now zero, ...)
            try:
                for _, b in entry.graph.state:
                    if b.kind == "hyper":
                        b.obj.read(b.name)
            except GuardFailure:
                return _RETRACE
        t0 = time.perf_counter()
        if eager:
            out = _detached(self.fn(*args, **kwargs))
        else:
            try:
                with no_grad() if self.freeze else nullcontext():
                    out = entry.compiled(*tensors)
            except GuardFailure:
                return _RETRACE
        (t.eager if eager else t.compiled).append(time.perf_counter() - t0)
        if t.done:
            entry.timing = None  # later runs: no timing
            self._maybe_warn_slow(t)
        return out

    def _maybe_warn_slow(self, t):
        c, e = t.figures()
        if c is None or e is None or c <= e * (1 + SLOWER_BY):
            return
        from ..debug import is_watching
        if is_watching():
            self._warn(f"mg.jit({_fn_name(self.fn)}): {_timing_line(c, e)}", None)

    def _trace(self, key, erased, groups, args, kwargs):
        writes = self._py.writes
        if writes:  # a compiled program would run the write once, not at every call: run eagerly
            what, site = writes[0]
            msg = (f"mg.jit({_fn_name(self.fn)}): the function {what}; a compiled program would do that "
                   f"once, at the trace, and not at each call, so it runs eagerly. Move the write out of the "
                   f"function (return the value instead)")
            if self.fullgraph:
                raise GraphBreak(f"{msg} ({site})")
            self._warn(msg + ".", site)
            entry = _Entry(Graph([], [], [], [], [], None))
            entry.eager, entry.reason = True, "writes Python state"
            with self._lock:
                self._cache[key] = entry
            self._last = entry
            return self.fn(*args, **kwargs)
        self.traces += 1
        # a new key counts, unless it differs from a traced one only in dynamic dims; so does a
        # key traced again (a guard of its program failed: an optimizer option, a branch taken)
        counted = self.traces > 1 and (erased not in self._erased_seen or key in self._cache)
        self._erased_seen.add(erased)
        self._history.append(key)
        consts = ()
        if self.freeze:
            consts = list(self.fn.parameters()) + [b for b in self.fn.buffers() if b is not None]
        with no_grad() if self.freeze else nullcontext():
            g = trace(self.fn, *args, constants=consts, on_break="raise" if self.fullgraph else "record",
                      **kwargs)
        if self.freeze:  # the values now, not the live arrays: folding and later runs agree
            g.consts = [(v, a.copy()) for v, a in g.consts]
        entry = _Entry(g)
        self._decide(entry, g, groups)
        with self._lock:
            self._cache[key] = entry
            self._cache.move_to_end(key)
            while len(self._cache) > CACHE_SIZE_LIMIT:
                self._cache.popitem(last=False)
        self._last = entry
        if counted:
            self.retraces += 1
            if self.retraces >= RETRACE_LIMIT and not self._warned_retrace:
                self._warned_retrace = True
                from ..debug import warn_retrace
                from ..debug._sites import user_site
                warn_retrace(_fn_name(self.fn), self.traces, self._changing(), site=user_site())
        return g.result

    def _decide(self, entry, g, groups):
        """Compile the traced graph, or mark the key eager (graph break, autograd-needing result)."""
        name = _fn_name(self.fn)
        if g.breaks:
            entry.eager, entry.reason = True, "graph break"
            for msg, site in zip(g.breaks, g.break_sites):
                self._warn(f"mg.jit({name}): graph break: {msg} This call signature runs eagerly.", site)
            return
        state_names = {b.name for _, b in g.state}
        foreign = [e.target for e in g.eqns if e.prim == "set_grad" and e.target not in state_names]
        if foreign:
            entry.eager, entry.reason = True, "grad of an argument"
            self._warn(f"mg.jit({name}): the function sets .grad of its tensor argument(s) {foreign}, which "
                       f"the compiled program cannot bind; this call signature runs eagerly. Read the "
                       f"gradient with mg.autograd.grad and return it instead.", None)
            return
        ran_backward = any(e.prim == "set_grad" for e in g.eqns) or any(b.kind == "grad" for _, b in g.state)
        if not ran_backward and any(t.requires_grad for t in _result_tensors(g.result, [])):
            entry.eager, entry.reason = True, "result requires grad"
            self._warn(f"mg.jit({name}): its result requires grad, and a compiled program carries no "
                       f"autograd graph; this call signature runs eagerly. Call it under mg.no_grad() "
                       f"for inference, or call backward() inside the function.", None)
            return
        t0 = time.perf_counter()
        entry.optimized, entry.reports = optimize(g, self.passes)
        entry.compiled = compile_graph(entry.optimized)
        entry.compile_seconds = time.perf_counter() - t0
        entry.timing = entry.timed = _Timing(
            "a frozen program reads the parameters as they were when compiled, eager reads them as they "
            "are now" if self.freeze else None)
        hyper = {(id(b.obj.group), b.obj.key) for _, b in g.state if b.kind == "hyper"}
        entry.guards = [(grp, k, v) for grp in groups for k, v in grp.items()
                        if k != "params" and (id(grp), k) not in hyper]  # options baked into the step

    def _warn(self, message, site):
        if message in self._warned:
            return
        self._warned.add(message)
        if site and site != "<unknown>" and ":" in site:
            path, _, line = site.rpartition(":")
            warnings.warn_explicit(message, JitWarning, path, int(line) if line.isdigit() else 0)
        else:
            warnings.warn(message, JitWarning, stacklevel=4)

    def _changing(self):
        """Which argument keeps changing across the traced keys, and how to fix it."""
        per_arg = {}
        rests = []
        for sigs, rest in self._history:
            for name, s in sigs:
                vals = per_arg.setdefault(name, [])
                if s not in vals:
                    vals.append(s)
            if rest not in rests:
                rests.append(rest)
        name, vals = max(per_arg.items(), key=lambda kv: len(kv[1]), default=(None, []))
        if len(vals) <= 1:
            if len({r[2] for r in rests}) > 1:
                return ("not an argument: a Python value the function reads from a global or closure variable "
                        "keeps changing (each value is baked into its trace); pass it as a tensor argument "
                        "so it becomes an input of one program")
            if len({r[0] for r in rests}) > 1:
                return "not an argument: the grad mode (mg.no_grad / enable_grad around the call) keeps changing"
            return ("not an argument: the state of the modules or optimizers it uses keeps changing "
                    "(train()/eval() flips, module options such as Dropout's p, optimizer options or a "
                    "hyper-parameter switching between zero and non-zero, new parameter or optimizer-state "
                    "tensors, .grad set to None or not)")
        shown = ", ".join(_describe(v) for v in vals[:4]) + (", ..." if len(vals) > 4 else "")
        if all(v[0] == "T" for v in vals):
            shapes = [v[1] for v in vals]
            if len({len(s) for s in shapes}) == 1 and len(set(shapes)) > 1:
                dims = [i for i in range(len(shapes[0])) if len({s[i] for s in shapes}) > 1]
                d = dims[0]
                return (f"argument {name!r}: its shape keeps changing ({shown}; dim {d} varies). If only a "
                        f"last partial batch differs, mark it dynamic: mg.jit(fn, dynamic={{{name!r}: {d}}}) "
                        f"or mg.jit.mark_dynamic({name}, {d}); otherwise pad it to a few fixed sizes")
            return f"argument {name!r}: its shape, dtype or requires_grad keeps changing ({shown})"
        return (f"argument {name!r}: a Python value baked into each trace keeps changing ({shown}); pass it "
                f"as a tensor (mg.tensor(...)) so it becomes an input of one program")

    # -- inspecting --------------------------------------------------------------------------------
    @property
    def code(self):
        """The generated source of the program the last call ran (None if it ran eagerly)."""
        e = self._last
        return None if e is None or e.compiled is None else e.compiled.code

    def cache_info(self):
        """{'traces', 'retraces', 'entries', 'eager_entries'}."""
        return {"traces": self.traces, "retraces": self.retraces, "entries": len(self._cache),
                "eager_entries": sum(e.eager for e in self._cache.values())}

    def explain(self, *args, file=None, **kwargs):
        """Return an Explanation of the program for these arguments: the graph before and after
        each pass with op counts and intermediate bytes, the pass table, fused groups, the memory
        plan and any graph breaks with their lines. Its repr is the report, so a prompt shows it
        once; ``print(...)`` it in a script, or pass ``file`` (e.g. ``sys.stdout``) to have it
        printed there too (as torch._dynamo.explain, nothing is printed by default).
        Traces (running the function once) if no program is cached for these arguments yet."""
        key, _, _ = self._key(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            self(*args, **kwargs)
            entry = self._cache.get(key) or self._last
        ex = Explanation(self, entry)
        if file is not None:
            print(ex, file=file)
        return ex


class CompiledModule(JitFunction):
    """mg.compile(module): calls run the compiled forward; other attributes are the module's."""

    def __getattr__(self, name):
        if name == "fn":
            raise AttributeError(name)
        return getattr(self.fn, name)

    def __repr__(self):
        return f"CompiledModule({self.fn!r})"


def _describe(sig):
    if sig[0] == "T":
        return f"{sig[1]} {sig[2]}" + (" requires_grad" if sig[3] else "")
    if sig[0] == "float":
        return repr(float.fromhex(sig[1])) if sig[1] != "nan" else "nan"
    if len(sig) == 2 and sig[0] in ("int", "bool", "str", "NoneType"):
        return repr(sig[1])
    return repr(sig)


class Explanation:
    """What mg.jit made of a function for one set of arguments (print it). Attributes: `graph` (as
    traced), `optimized`, `steps` ([(pass name, report, graph after)]), `breaks` ([(message,
    'file:line')]), `code`, `plan`, `kernel_choices` ([(key, choice, how)]: the kernels chosen
    for its ops with mg.backends.cpu.benchmark on, minigrad/kernels/select.py), `schedule` (the
    inter-op schedule: groups of independent branches, which run at once and why or why not;
    compiler/passes/schedule.py), `compiled_per_call`
    and `eager_per_call` (seconds, the best of the first runs of the program: a few of them run the
    function eagerly instead, timed; None until measured) and `timing` (the line saying which is faster,
    flagging a program more than 10 % slower than eager)."""

    def __init__(self, jitted, entry):
        self.name = _fn_name(jitted.fn)
        self.graph = entry.graph
        self.breaks = list(zip(getattr(entry.graph, "breaks", []), getattr(entry.graph, "break_sites", [])))
        self.eager, self.reason = entry.eager, entry.reason
        self.trace_seconds, self.compile_seconds = entry.trace_seconds, entry.compile_seconds
        self.steps = []
        self.optimized = entry.optimized
        self.code = entry.compiled.code if entry.compiled is not None else None
        self.plan = entry.compiled.plan if entry.compiled is not None else None
        self.schedule = getattr(entry.compiled, "schedule", None)
        g = entry.graph
        for name in list(DEFAULT if jitted.passes is None else jitted.passes):
            g, (rep,) = optimize(g, [name])
            self.steps.append((name, rep, g))
        self.kernel_choices = _select.graph_choices(g.eqns)
        t = entry.timed
        self.compiled_per_call, self.eager_per_call = t.figures() if t is not None else (None, None)
        self.timing = _timing_report(t)

    def table(self):
        """The pass table: equations and intermediate bytes before -> after each pass."""
        return format_reports([r for _, r, _ in self.steps])

    def __str__(self):
        s0 = stats(self.graph)
        out = [f"mg.jit.explain({self.name}): traced in {self.trace_seconds * 1e3:.1f} ms"
               + (f", optimised and compiled in {self.compile_seconds * 1e3:.1f} ms" if self.code else "")]
        if self.breaks:
            out.append(f"graph breaks ({len(self.breaks)}): this call signature runs eagerly")
            for msg, site in self.breaks:
                out.append(f"  {site}: {msg}")
        else:
            out.append("graph breaks: none")
        if self.eager and self.reason != "graph break":
            out.append(f"runs eagerly: {self.reason}")
        if self.timing:
            out.append(self.timing)
        out.append(f"\n== as traced: {_summary(s0)}")
        out.append(str(self.graph))
        for name, rep, g in self.steps:
            head = f"\n== after {name}: {_summary(rep.after)}"
            if rep.details:
                head += f"  ({rep.details})"
            out.append(head)
            out.append(str(g) if rep.changed else "(unchanged)")
        out.append("\n== passes")
        out.append(self.table())
        final = self.steps[-1][2] if self.steps else self.graph
        fused = [e for e in final.eqns if "fuse" in e.prim]
        out.append(f"fused groups: {len(fused)}")
        for e in fused:
            out.append(f"  {e!r}")
        if self.plan is not None:
            out.append(f"memory plan: {self.plan!r}")
        if self.schedule is not None:
            out.extend(self.schedule.describe())
        bench = "on" if _select._benchmark() else "off"
        out.append(f"kernel choices: {len(self.kernel_choices)}" if self.kernel_choices else
                   f"kernel choices: none timed or cached (fixed rules; mg.backends.cpu.benchmark {bench})")
        for key, choice, how in self.kernel_choices:
            out.append(f"  {key}: {choice} ({how})")
        return "\n".join(out)

    __repr__ = __str__


def _ms(seconds):
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} us"


def _timing_line(c, e):
    """compiled c against eager e seconds per call, as explain says it."""
    head = f"per call: compiled {_ms(c)} vs eager {_ms(e)}"
    if c > e * (1 + SLOWER_BY):
        if c - e < 1e-3:
            why = ("its fixed cost per call (guards, reading state, running the program) outweighs what it "
                   "saves at this size; consider compiling a larger piece (a whole training step rather than a "
                   "layer), a larger batch, or calling the function without mg.jit")
        else:
            why = ("its ops cost more than eager's (e.g. a backward the trace records op by op where eager runs "
                   "one NumPy kernel); the graph below shows them; consider calling the function without mg.jit")
        return (f"{head} (best of {_TIMING_RUNS.count('c')} and {_TIMING_RUNS.count('e')} runs): compiled is "
                f"SLOWER by {(c / e - 1) * 100:.0f} % - {why}")
    if c < e:
        return f"{head}: compiled is {e / c:.2f}x faster"
    return f"{head}: compiled is about as fast as eager (within {SLOWER_BY * 100:.0f} %)"


def _timing_report(t):
    """explain's line on the program's speed against eager (None when it runs eagerly)."""
    if t is None:
        return None
    c, e = t.figures()
    if not t.done:
        return (f"per call: not measured yet (the first {len(_TIMING_RUNS)} runs of a program are timed, "
                f"some eagerly instead; {t.runs} so far)")
    if e is None:
        return f"per call: compiled {_ms(c)}; eager time not measured because {t.eager_reason}"
    return _timing_line(c, e)


def _summary(st):
    top = ", ".join(f"{p} {n}" for p, n in st["by_prim"].most_common(8))
    return f"{st['eqns']} equations, {st['bytes']:,} intermediate bytes; {top}"


def jit(fn=None, *, passes=None, fullgraph=False, dynamic=None):
    """Compile a function on its first call: trace it (mg.graph.trace), optimise the graph, generate
    NumPy code, and cache the program behind guards; later calls with the same guard key run it.

    Args:
        fn: the function (or module). Also usable as a decorator: `@mg.jit` or `@mg.jit(...)`.
        passes: pass names for mg.compiler.optimize (None: its default pipeline; [] none).
        fullgraph: raise GraphBreak where tracing hits a graph break, instead of running that
            call signature eagerly with a warning.
        dynamic: dimensions that may change without counting as a retrace (each size still gets
            its own exact program, traced once): an int (that dim of every tensor argument), a dict
            {argument name or index: dim or dims}, True (every dim), or None (only dims marked
            with mg.jit.mark_dynamic).

    The guard key: tensor arguments' shapes, dtypes and requires_grad; Python scalar arguments'
    values; the grad mode; the modules' training flags, their parameter/buffer identities and
    whether grads are None; which optimizer state exists; optimizer options that are not inputs.
    Learning rates, other hyper-parameters, optimizer state values and the random generator are
    inputs read at each run, so a scheduler does not cause retracing.

    Example:
        >>> @mg.jit
        ... def f(x):
        ...     return (x * 2).exp().sum()
        >>> f(mg.ones(3))
        tensor(22.1672)
    """
    if fn is None:
        return lambda f: JitFunction(f, passes=passes, fullgraph=fullgraph, dynamic=dynamic)
    if isinstance(fn, Graph):
        return _compile_traced(fn, passes)
    return JitFunction(fn, passes=passes, fullgraph=fullgraph, dynamic=dynamic)


def _compile_traced(graph, passes):
    """A Graph already traced (mg.graph.trace, mg.load_graph) compiles as it is: re-tracing its interpreter
    would record the NumPy forwards it calls as constants (random draws baked in)."""
    return compile_graph(optimize(graph, passes)[0])


def explain(fn, *args, file=None, **kwargs):
    """mg.jit.explain(fn, *args): what mg.jit makes of fn for these arguments, as an Explanation
    whose repr is the report (shown once at a prompt; ``print`` it in a script, or pass
    ``file=sys.stdout``). Runs fn once to trace it; see JitFunction.explain."""
    j = fn if isinstance(fn, JitFunction) else JitFunction(fn)
    return j.explain(*args, file=file, **kwargs)


def jit_trace(func, example_inputs=None, *, example_kwarg_inputs=None, passes=None):
    """mg.jit.trace(func, example_inputs): torch.jit.trace's spelling of mg.jit. Runs func once now
    on the example inputs, tracing it (mg.graph.trace), and returns it compiled: the JitFunction
    (for an nn.Module, the CompiledModule) whose program for those inputs' shapes is ready, traced
    with fullgraph=True.

    Args:
        func: a function or nn.Module.
        example_inputs: a Tensor, or a tuple of the positional arguments (as torch.jit.trace).
        example_kwarg_inputs: a dict of keyword arguments (as torch.jit.trace).
        passes: as mg.jit.

    Unlike torch.jit.trace, the result does not replay the traced path for every input: a call
    whose tensors differ in shape, dtype or requires_grad traces again (mg.jit's guards), and a
    data-dependent Python branch (`if x.sum() > 0`) raises GraphBreak at trace time instead of a
    TracerWarning and a program that silently keeps the branch taken. func runs once here (an
    optimizer step in it steps), as torch.jit.trace runs it.

    Example:
        >>> f = mg.jit.trace(lambda x: (x * 2).exp().sum(), mg.ones(3))
        >>> f(mg.ones(3))
        tensor(22.1672)
    """
    from ..nn.modules.module import Module
    if isinstance(example_inputs, Tensor):
        args = (example_inputs,)
    elif isinstance(example_inputs, tuple):
        args = example_inputs
    elif example_inputs is None:
        args = ()
    else:
        raise TypeError(f"mg.jit.trace: example_inputs must be a Tensor or a tuple of arguments, "
                        f"got {type(example_inputs).__name__}")
    if example_kwarg_inputs is not None and not isinstance(example_kwarg_inputs, dict):
        raise TypeError(f"mg.jit.trace: example_kwarg_inputs must be a dict, "
                        f"got {type(example_kwarg_inputs).__name__}")
    if example_inputs is None and example_kwarg_inputs is None:
        raise TypeError("mg.jit.trace: give example_inputs (a Tensor or a tuple) or example_kwarg_inputs")
    cls = CompiledModule if isinstance(func, Module) else JitFunction
    compiled = cls(func, passes=passes, fullgraph=True)
    compiled(*args, **(example_kwarg_inputs or {}))
    return compiled


jit_trace.__name__ = jit_trace.__qualname__ = "trace"
jit.explain = explain
jit.mark_dynamic = mark_dynamic
jit.trace = jit_trace  # mg.jit is a decorator function, so torch.jit's namespace names are its attributes


def compile(model_or_fn, *, freeze=False, passes=None, fullgraph=False, dynamic=None):  # noqa: A001
    """Compile a module (or function) with mg.jit.

    Args:
        model_or_fn: an nn.Module (calls run its compiled forward; other attributes are the
            module's) or a function.
        freeze: modules only, for inference in eval() mode: parameters and buffers become constants
            (their values now), so constant folding can fold them; calls run without autograd.
            Change the parameters afterwards and compile again.
        passes, fullgraph, dynamic: as mg.jit.

    Example:
        >>> model = mg.nn.Linear(4, 2).eval()
        >>> fast = mg.compile(model, freeze=True)
        >>> fast(mg.ones(3, 4)).shape
        (3, 2)
    """
    from ..nn.modules.module import Module
    if isinstance(model_or_fn, Graph) and not freeze:
        return _compile_traced(model_or_fn, passes)
    if isinstance(model_or_fn, Module):
        return CompiledModule(model_or_fn, passes=passes, fullgraph=fullgraph, dynamic=dynamic, freeze=freeze)
    if freeze:
        raise TypeError(f"mg.compile(freeze=True) takes an nn.Module (its parameters become constants), "
                        f"got {type(model_or_fn).__name__}")
    return JitFunction(model_or_fn, passes=passes, fullgraph=fullgraph, dynamic=dynamic)
