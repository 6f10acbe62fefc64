"""mg.graph.trace: run a function once, eagerly, recording every Function.apply into a Graph.

Recording happens at one point, the hook at the top of Function.apply (plus the two places that
write into existing tensors: in-place ops and gradient accumulation). Tensors are told apart by
where they come from:
  - a traced op's output: a Var of the program;
  - a tensor that existed before tracing began (a parameter, a buffer, a gradient, optimizer
    state, a tensor in a closure or a global): a named state input, read at each run;
  - a tensor created during tracing by other means (zeros, the seed gradient, a cached scalar):
    a constant.
Turning a traced tensor into a Python value (item, float, bool, tolist, numpy, iteration) raises
GraphBreak naming the user's file:line, since the rest of the program would depend on data the
graph does not carry.
"""
import functools
import gc
import itertools
import os
import sys
import threading
import time
import types
import weakref

import numpy as np

from ..autograd import function as _function
from ..autograd import levels as _levels
from ..tensor import Tensor
from .ir import Eqn, Graph, HyperRef, StateBinding, Var

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GraphBreak(RuntimeError):
    """A traced value was turned into a Python value: the graph cannot carry the rest."""


def user_frame():
    """'file:line' of the innermost frame outside minigrad (the user's own call)."""
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PKG + os.sep):
        f = f.f_back
    if f is None:
        return "<unknown>"
    return f"{f.f_code.co_filename}:{f.f_lineno}"


def _name_gen():
    i = 0
    while True:
        s, n = "", i
        while True:
            s = chr(97 + n % 26) + s
            n = n // 26 - 1
            if n < 0:
                break
        i += 1
        yield s


def _drop(table, key, _ref):
    table.pop(key, None)


class TraceLevel(_levels.Level):
    """mg.graph.trace's level on the transform stack: every op below the traced function's call is
    recorded by its Tracer as an equation, then run by the levels below (so a trace of a vmap or of a
    jvp records the ops those transforms produce)."""

    kind = "trace"

    def __init__(self, tracer):
        self.tracer = tracer

    def process(self, cls, args):
        return self.tracer.apply(cls, args)


class Tracer:
    def __init__(self, names, param_of_grad, constants):
        self.names = names                  # id(tensor) -> a readable name (modules, closures, ...)
        self.param_of_grad = param_of_grad  # id(grad tensor) -> parameter
        self.declared_consts = {id(t) for t in constants}
        self.tmap = {}     # id(tensor) -> Var   (the tensor's current value)
        self.amap = {}     # id(ndarray) -> Var  (rewrapped arrays: detach(), .data, Tensor._make)
        self.keep = []     # objects whose id is a key above and that stay alive while tracing
        self._refs = []    # weak references that drop a dead tensor's or array's key (see _watch)
        self.eqns, self.invars, self.state, self.consts = [], [], [], []
        self.state_of = {}  # binding key -> Var
        self.newname = _name_gen()
        self.expect_bump = None
        self.grad_belief = {}  # id(param) -> (param, the grad tensor the graph last set)
        self._pre = None        # id -> every tensor alive when the trace began (see _Before)
        self._pre_arrays = None  # id(array) -> such a tensor holding it
        self._before = None
        self.const_tensor = {}  # const var name -> the tensor it was made from
        self.record_breaks = False  # trace(on_break="record"): graph_break notes instead of raising
        self.breaks = []
        self.break_sites = []  # the user's 'file:line' of each break
        self.hyper_tensors = {}  # ("hyper", id(group), key, index) -> the 0-d tensor the step uses
        self.hyper_nonzero = {}  # id(that tensor) -> whether it was non-zero (the step branches on it)

    def graph_break(self, message):
        """Raise GraphBreak, or (on_break="record", as mg.jit traces) note it and let the function
        run on eagerly: the values are real, only the graph is no longer the whole program."""
        if not self.record_breaks:
            raise GraphBreak(message)
        self.breaks.append(message)
        self.break_sites.append(user_frame())

    # -- what existed before the trace -----------------------------------------------------------
    def existed(self, t):
        """Whether tensor t was alive when the trace began (reading such a tensor makes it a state
        input; one made during the trace outside an op is a constant)."""
        if self._pre is None and self._before is not None and self._before.queries < _YOUNG_QUERIES:
            return self._before.existed(t)
        return id(t) in self.pre

    @property
    def pre(self):
        if self._pre is None:
            self._scan()
        return self._pre

    @property
    def pre_arrays(self):
        if self._pre_arrays is None:
            self._scan()
        return self._pre_arrays

    def _scan(self):
        before = self._before
        self._pre = before.scan() if before is not None else {id(o): o for o in _live_tensors()}
        self._pre_arrays = {}
        for o in self._pre.values():
            self._pre_arrays.setdefault(id(o._data), o)

    # -- vars -----------------------------------------------------------------------------------
    def new_var(self, arr_or_shape, dtype=None):
        if isinstance(arr_or_shape, np.ndarray):
            return Var(next(self.newname), arr_or_shape.shape, arr_or_shape.dtype)
        return Var(next(self.newname), arr_or_shape, dtype)

    def bind(self, t, v):
        self.tmap[id(t)] = v
        self.amap[id(t._data)] = v
        self._watch(t, self.tmap)
        self._watch(t._data, self.amap)

    def _watch(self, obj, table):
        """Drop obj's key from `table` when obj dies, so that a new object given its id is not taken
        for it. (Keeping every traced value alive instead held all of a step's intermediates at once:
        a GPT training step's trace peaked at ~470 MB more than its eager run, and paid for it in page
        faults.) CPython runs the callback as obj is freed, before its id can be reused."""
        try:
            self._refs.append(weakref.ref(obj, functools.partial(_drop, table, id(obj))))
        except TypeError:  # (not weakly referenceable: kept alive, as before)
            self.keep.append(obj)

    def lookup(self, t):
        v = self.tmap.get(id(t))
        if v is None:
            v = self.amap.get(id(t._data))
        return v

    def var_of(self, t):
        v = self.lookup(t)
        if v is not None:
            return v
        arr = t._data
        if id(t) in self.declared_consts or t._wrapped_number:  # (a Python number made a tensor)
            return self.const(t)
        self.check_not_derived(arr)
        if not arr.flags.writeable:
            return self.const(t)
        pre = t if self.existed(t) else self.pre_arrays.get(id(arr))
        if pre is not None:
            p = self.param_of_grad.get(id(pre))
            if p is not None and p._grad is pre:
                name = self.names.get(id(p), f"p{len(self.state)}") + ".grad"
                v = self.state_input(("grad", id(p)), name, "grad", p, arr)
                self.grad_belief.setdefault(id(p), (p, pre))
            else:
                name = self.names.get(id(pre), f"t{len(self.state)}")
                v = self.state_input(("tensor", id(pre)), name, "tensor", pre, arr)
            self.bind(t, v)
            return v
        return self.const(t)

    def declare_const(self, t):
        """t, made during the trace by the library (the engine's implicit gradient seed), is a
        constant of the graph: no need to ask whether a tensor from before holds its array."""
        self.declared_consts.add(id(t))
        self.keep.append(t)

    def check_not_derived(self, arr):
        """An unknown array that is a NumPy view of a traced value (np.broadcast_to, slicing ._data)
        would be baked in with this run's data: refuse instead of silently freezing it."""
        b = arr.base
        while isinstance(b, np.ndarray):
            if id(b) in self.amap or id(b) in self.pre_arrays:
                self.graph_break(f"an array of shape {arr.shape} made with NumPy from a traced value "
                                 f"(outside Function.apply), at {user_frame()}: the graph cannot say "
                                 f"how it was computed. Compute it with minigrad ops.")
            b = b.base

    def const(self, t):
        v = self.new_var(t._data)
        self.consts.append((v, t._data))
        self.const_tensor[v.name] = t
        self.bind(t, v)
        return v

    def state_input(self, key, name, kind, obj, arr):
        v = self.state_of.get(key)
        if v is None:
            v = Var(next(self.newname), arr.shape, arr.dtype) if arr is not None else Var(next(self.newname), None, None)
            self.state.append((v, StateBinding(name, kind, obj)))
            self.state_of[key] = v
            self.keep.append(obj)
        return v

    def hyper_input(self, group, key, index, value):
        """An optimizer hyper-parameter (group[key], or group[key][index]) as a named input read at
        each run, so a scheduler changing the learning rate does not change the program. Returns the
        0-d float64 tensor the step computes with (the same one each time it is asked for)."""
        k = ("hyper", id(group), key, index)
        t = self.hyper_tensors.get(k)
        if t is None:
            name = self.names.get(id(group), "optimizer.param_groups[?]") + f".{key}"
            if index is not None:
                name += f"[{index}]"
            arr = np.array(value, dtype=np.float64)
            v = self.state_input(k, name, "hyper", HyperRef(group, key, index, value != 0), arr)
            t = self.hyper_tensors[k] = Tensor._make(arr)
            self.hyper_nonzero[id(t)] = value != 0
            self.bind(t, v)
        return t

    def generator_var(self, g):
        from ..random import default_generator
        g = g or default_generator
        name = "rng" if g is default_generator else self.names.get(id(g), f"rng{len(self.state)}")
        return self.state_input(("generator", id(g)), name, "generator", g, None)

    def static(self, a):
        """A static argument: an array that is a traced value (an unwrapped index) becomes its Var."""
        if isinstance(a, np.ndarray):
            v = self.amap.get(id(a))
            if v is not None:
                return v
            t = self.pre_arrays.get(id(a))
            if t is not None:
                return self.var_of(t)
            self.check_not_derived(a)
            if a.size > 1 and a.flags.writeable:
                return self.const(Tensor._make(a))
            return a
        if isinstance(a, Tensor):
            return self.var_of(a)
        if type(a) is tuple:
            return tuple(self.static(x) for x in a)
        if type(a).__name__ == "Generator" and type(a).__module__.startswith("minigrad"):
            return self.generator_var(a)
        return a

    # -- the hooks ------------------------------------------------------------------------------
    def apply(self, cls, args):
        # a dict argument is either configuration or a sink forward fills (batch norm's statistics):
        # the graph keeps a copy as it was before the call, and what forward adds are side outputs
        before = {i: dict(a) for i, a in enumerate(args) if type(a) is dict}
        out = _levels.below(self.level, cls, args)  # the op itself, run by the levels below
        spec = [self.var_of(a) if isinstance(a, Tensor) else self.static(a) for a in args]
        if getattr(cls, "_random", False):  # draws from a generator: make it an input
            i = cls._generator_arg
            spec[i] = self.generator_var(args[i])
        outs = out if type(out) is tuple else (out,)
        outvars = []
        for o in outs:
            v = self.new_var(o._data)
            self.bind(o, v)
            outvars.append(v)
        side = []
        for i, old in before.items():
            spec[i] = {k: self.static(v) for k, v in old.items()}
            for k, arr in args[i].items():
                if isinstance(arr, np.ndarray) and old.get(k) is not arr:
                    side.append((("arg", i, k), self.side_var(arr)))
        # what forward left on its ctx for backward (arrays in attributes, saved intermediates)
        # is computed from traced values: side outputs, so the backward equations read them as vars
        need = None
        ctx = next((o.grad_fn for o in outs if isinstance(o.grad_fn, cls)), None)
        if ctx is not None:
            need = tuple(ctx.needs_input_grad)
            for name, val in getattr(ctx, "__dict__", {}).items():
                self.scan_side(val, ("attr", name), side)
            saved = ctx._saved
            if isinstance(saved, (list, tuple)):
                for j, (kind, value, _, _) in enumerate(saved):
                    if kind == 2 and isinstance(value, Tensor) and self.lookup(value) is None:
                        v = self.side_var(value._data)
                        self.bind(value, v)
                        side.append((("saved", j), v))
        eqn = Eqn(_function._op_name(cls), cls, spec, outvars, side, source=user_frame())
        eqn.need = need
        self.eqns.append(eqn)
        return out

    def scan_side(self, val, path, side, depth=0):
        """Arrays forward left on ctx (in attributes, dicts, tuples) that no var holds yet."""
        if isinstance(val, np.ndarray):
            if id(val) not in self.amap and val.dtype != object:
                side.append((path, self.side_var(val)))
        elif depth < 3 and type(val) is dict:
            for k, x in val.items():
                self.scan_side(x, path + (k,), side, depth + 1)
        elif depth < 3 and type(val) in (tuple, list):
            for i, x in enumerate(val):
                self.scan_side(x, path + (i,), side, depth + 1)

    def side_var(self, arr):
        v = self.new_var(arr)
        self.amap[id(arr)] = v
        self._watch(arr, self.amap)
        return v

    def inplace(self, x, name, compute):
        """Wrap an in-place op's compute so the write is recorded as an `assign` effect."""
        def traced(alias):
            if alias is not x:  # the op's snapshot of x (a copy: its backward may read it after the write)
                from ..ops.shape import Clone
                v = self.var_of(x)
                snap = Var(next(self.newname), v.shape, v.dtype)
                # an explicit copy: `assign` overwrites v's memory, so v itself would read the new value
                self.eqns.append(Eqn(_function._op_name(Clone), Clone, [v], [snap], source=user_frame()))
                self.bind(alias, snap)
            res = compute(alias)
            self.assign(x, res, name)
            return res
        return traced

    def assign(self, x, res, name):
        target = self.var_of(x)
        value = self.var_of(res)
        out = Var(next(self.newname), x.shape, x.dtype)
        self.eqns.append(Eqn("assign", None, [target, value], [out], effect=True, source=user_frame(),
                             target=self._target_name(target, x)))
        self.bind(x, out)
        self.expect_bump = x

    def _target_name(self, v, t=None):
        for sv, b in self.state:
            if sv is v or (t is not None and (b.obj is t or (b.kind == "grad" and b.obj._grad is t))):
                return b.name
        return v.name

    def accumulate(self, var, g, create_graph):
        """engine._accumulate under tracing: var.grad = g (first) or var.grad += g, as effects."""
        pv = self.var_of(var)
        old = var._grad
        if old is not None and not (create_graph or old.requires_grad):
            res = old + g  # what `old._data += g._data` computes, recorded by the apply hook
            self.assign(old, res, "grad accumulation")
            old._data[...] = res._data
            old._bump_version()
            return
        if old is not None:  # create_graph: a new grad tensor, recorded
            new = old + g
        else:
            new = g if create_graph else Tensor._make(g._data.copy())
        gv = self.var_of(g) if new is g or old is None else self.var_of(new)
        out = Var(next(self.newname), new.shape, new.dtype)
        self.eqns.append(Eqn("set_grad", None, [gv], [out], effect=True, source=user_frame(),
                             target=self._param_name(var, pv)))
        var._grad = new
        self.bind(new, out)
        self.grad_belief[id(var)] = (var, new)

    def _param_name(self, p, pv):
        return self._target_name(pv)

    def bumped(self, t):
        """Tensor._bump_version under tracing: a write that no op recorded is a graph break."""
        if self.expect_bump is t:
            self.expect_bump = None
            return
        if self.lookup(t) is None and not self.existed(t):
            return  # a tensor the graph never saw (made and written inside a NumPy routine)
        self.graph_break(f"a write into the memory of a tensor of shape {tuple(t.shape)} bypassed "
                         f"minigrad's ops (NumPy on ._data, e.g. an optimizer updating parameters "
                         f"in NumPy), at {user_frame()}; the graph cannot record it. Write through "
                         f"in-place Tensor ops (p.sub_(...), under no_grad) instead.")

    def convert(self, t, what):
        """A conversion to a Python/NumPy value: a break unless t is a constant of the graph."""
        v = self.lookup(t)
        if v is None:
            if not self.existed(t) and id(t._data) not in self.pre_arrays:
                return
        elif any(cv is v for cv, _ in self.consts):
            return
        self.graph_break(f"{what} on a traced tensor of shape {tuple(t.shape)} at {user_frame()}: it "
                         f"turns a value of the graph into a Python value, so the code after it "
                         f"depends on data the graph does not carry (graph break). Keep the value "
                         f"as a Tensor (use mg.where instead of `if`, or mg.cond(pred, true_fn, false_fn, "
                         f"operands) for a branch that runs different code; return the tensor instead of "
                         f".item()), or run this part eagerly.")


# -- finding names for the state a function reads ---------------------------------------------------

def roots_of(fn, args, arg_names):
    """(prefix, object) for what fn can reach without receiving it: fn itself when a module, the
    bound self, closure cells, the globals its code names; and its arguments. mg.jit reads the same
    roots for its guards (modules' training flags, optimizer state)."""
    from ..nn.modules.module import Module
    roots = []
    if isinstance(fn, Module):
        roots.append(("", fn))
    f = fn
    if isinstance(f, types.MethodType):
        roots.append(("" if isinstance(f.__self__, Module) else "self.", f.__self__))
        f = f.__func__
    code = getattr(f, "__code__", None)
    if code is not None:
        for n, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                roots.append((n + ".", cell.cell_contents))
            except ValueError:
                pass
        g = getattr(f, "__globals__", {})
        for n in code.co_names:
            if n in g:
                roots.append((n + ".", g[n]))
    for n, a in zip(arg_names, args):
        roots.append((n + ".", a))
    return roots


def _collect_names(fn, args, arg_names):
    """id(tensor) -> name, for modules, optimizers and tensors reachable from fn's closure,
    globals, bound self and arguments; plus id(grad) -> parameter."""
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer
    names, params = {}, []
    roots = roots_of(fn, args, arg_names)
    modules_first = sorted(roots, key=lambda r: not isinstance(r[1], Module))
    for prefix, obj in modules_first:
        if isinstance(obj, Module):
            for n, p in obj.named_parameters():
                names.setdefault(id(p), prefix + n)
                params.append(p)
            for n, b in obj.named_buffers():
                if b is not None:
                    names.setdefault(id(b), prefix + n)
        elif isinstance(obj, Tensor):
            names.setdefault(id(obj), prefix[:-1])
            if obj.requires_grad and obj.grad_fn is None:
                params.append(obj)
        elif isinstance(obj, Optimizer):
            for gi, group in enumerate(obj.param_groups):
                names.setdefault(id(group), f"{prefix}param_groups[{gi}]")
                for pi, p in enumerate(group["params"]):
                    pname = names.setdefault(id(p), f"{prefix}param_groups[{gi}][{pi}]")
                    params.append(p)
                    for k, v in obj.state.get(p, {}).items():
                        if isinstance(v, Tensor):
                            names.setdefault(id(v), f"{prefix}state[{pname}].{k}")
        elif type(obj).__name__ == "Generator" and type(obj).__module__.startswith("minigrad"):
            names.setdefault(id(obj), prefix[:-1])
    param_of_grad = {id(p._grad): p for p in params if p._grad is not None}
    return names, param_of_grad


def _flatten(out, tracer, outvars):
    if isinstance(out, Tensor):
        outvars.append(tracer.var_of(out))
        return ("t", len(outvars) - 1)
    if isinstance(out, (tuple, list)):
        return ("tuple" if isinstance(out, tuple) else "list", [_flatten(o, tracer, outvars) for o in out])
    if isinstance(out, dict):
        return ("dict", [(k, _flatten(v, tracer, outvars)) for k, v in out.items()])
    if out is None or isinstance(out, (bool, int, float, str)):
        return ("py", out)
    raise TypeError(f"mg.graph.trace: the function returned a {type(out).__name__}; return Tensors, "
                    f"tuples, lists, dicts, numbers or None")


def _tensor_types():
    """Tensor and its subclasses, as a set of types."""
    out, todo = set(), [Tensor]
    while todo:
        t = todo.pop()
        if t not in out:
            out.add(t)
            todo.extend(t.__subclasses__())
    return out


_YOUNG_QUERIES = 4  # "did t exist before?" answered from the young objects this many times, then one full list


class _Before:
    """Which tensors existed when a trace began, without listing every object in the process up
    front (gc.get_objects() over a large process cost 0.1-0.3 s per trace, most of a small trace's
    time). At the start every object the collector tracks is frozen (gc.freeze: moved to the
    permanent generation, which gc.get_objects() does not list), so the objects listed while tracing
    are exactly those made since: a tensor among them is new, any other existed before. A trace
    that asks more than a few times, or needs the tensor that owns a NumPy array, lists everything
    once (unfreezing first) as before. stop() unfreezes.

    The freeze is process-wide, so traces in several threads take turns for it (_FREEZE): a second
    thread's trace listing objects while the first one's are frozen saw none of them (parameters
    taken for new tensors, their gradients for foreign ones), and the first one's stop() unfroze the
    second's. Only traces wait: compiled programs and eager code in other threads run on."""

    def __init__(self):
        self.frozen, self.queries, self.young = True, 0, set()

    @classmethod
    def start(cls):
        _FREEZE.acquire()
        if gc.get_freeze_count():  # someone else's frozen objects: leave gc.freeze alone
            _FREEZE.release()
            return None
        gc.freeze()
        return cls()

    def _young(self):
        self.young |= {id(o) for o in _live_tensors()}  # (while frozen: only the objects made since)
        return self.young

    def existed(self, t):
        self.queries += 1
        return id(t) not in self.young and id(t) not in self._young()

    def scan(self):
        """{id: tensor} of the tensors alive at the start (and still alive)."""
        young = self._young() if self.frozen else self.young
        self.stop()
        return {id(o): o for o in _live_tensors() if id(o) not in young}

    def stop(self):
        if self.frozen:
            self.frozen = False
            gc.unfreeze()
            _FREEZE.release()


_FREEZE = threading.RLock()  # re-entrant: a trace inside a trace (same thread) lists everything instead


def _live_tensors():
    """Every Tensor alive now. The filter runs in C (map/compress over the gc's list): a Python loop
    over gc.get_objects() cost 0.1-1 s per trace in a process holding a few hundred thousand objects.
    type(), not isinstance: isinstance reads o.__class__, which some objects
    (torch.distributed.reduce_op) warn on.

    Other threads wait while the list exists: gc.get_objects() also lists a tuple that another
    thread is still filling (tuple(generator) switched out mid-way), and the extra reference makes
    that thread's tuple resize fail with "SystemError: bad argument to internal function" (CPython
    3.11). A long switch interval, after one sleep(0) that hands over any switch already asked for,
    keeps the list and its filter (C calls, no Python code) in one turn of the GIL."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e3)
    try:
        time.sleep(0)
        objs = gc.get_objects()
        found = list(itertools.compress(objs, map(_tensor_types().__contains__, map(type, objs))))
        del objs
    finally:
        sys.setswitchinterval(old)
    return found


def trace(fn, *example_args, constants=(), on_break="raise", **kwargs):
    """Run fn(*example_args, **kwargs) once, eagerly, and return the program it ran as a Graph.

    Args:
        fn: a function or module. Its Tensor arguments become the graph's inputs; every tensor it
            reads without receiving it (parameters, buffers, gradients, optimizer state, closures,
            globals) becomes a named state input read at each run.
        example_args: the arguments to trace with (non-Tensor arguments are baked in).
        constants: tensors to bake in as constants instead of reading them at each run.
        on_break: "raise" (GraphBreak at the first break) or "record": the function runs on to the
            end eagerly and the breaks are listed in `graph.breaks` (the graph is then not the
            whole program; mg.jit runs such a function eagerly).
        kwargs: keyword arguments for fn (baked in when not Tensors).

    Raises:
        GraphBreak: the function turned a traced tensor into a Python value.

    Example:
        >>> g = mg.graph.trace(lambda a, b, c: (a + b) * c, mg.tensor(2.), mg.tensor(3.), mg.tensor(4.))
        >>> print(g)
        { lambda ; a:f32[] b:f32[] c:f32[]. let
            d:f32[] = add a b
            e:f32[] = mul d c
          in (e,) }
    """
    if _function._state.tracer is not None:
        raise RuntimeError("mg.graph.trace: already tracing (nested mg.graph.trace calls are not supported)")
    t0 = time.perf_counter()
    arg_names = _arg_names_of(fn, len(example_args))
    names, param_of_grad = _collect_names(fn, example_args, arg_names)
    tr = Tracer(names, param_of_grad, constants)
    if on_break not in ("raise", "record"):
        raise ValueError(f"mg.graph.trace: on_break must be 'raise' or 'record', got {on_break!r}")
    tr.record_breaks = on_break == "record"
    # every tensor alive now is "from before": reading one makes it a state input
    invars = []
    for n, a in zip(arg_names, example_args):
        if isinstance(a, Tensor):
            v = Var(next(tr.newname), a.shape, a.dtype)
            tr.bind(a, v)
            invars.append(v)
    for k, a in kwargs.items():
        if isinstance(a, Tensor):
            v = Var(next(tr.newname), a.shape, a.dtype)
            tr.bind(a, v)
            invars.append(v)
            arg_names.append(k)
    beliefs = {}
    for pid, p in param_of_grad.items():
        beliefs[id(p)] = (p, p._grad)
    tr.grad_belief = beliefs
    tr._before = _Before.start()
    if tr._before is None:  # the process froze objects itself (gc.freeze): list them all now
        tr._scan()
    tr.level = _levels.push(TraceLevel(tr))
    try:
        out = fn(*example_args, **kwargs)
    finally:
        _levels.pop(tr.level)
        if tr._before is not None:
            tr._before.stop()
        tr._pre, tr._pre_arrays, tr._before = {}, {}, None  # (after the run, as before: nothing is 'from before')
    # a grad set to None by zero_grad after the graph last wrote it: clear it in the graph too
    for pid, (p, belief) in list(tr.grad_belief.items()):
        if belief is not None and p._grad is None:
            pv = tr.var_of(p) if tr.lookup(p) else None
            name = tr._target_name(pv) if pv is not None else tr.names.get(id(p), "p")
            if pv is None:
                pv = tr.state_input(("tensor", id(p)), name, "tensor", p, p._data)
            tr.eqns.append(Eqn("set_grad", None, [None], [], effect=True, source=None,
                               target=tr._target_name(pv)))
    outvars = []
    tree = _flatten(out, tr, outvars)
    _promote_written_consts(tr, fn, example_args, arg_names)
    named_args = [n for n, a in zip(arg_names, example_args) if isinstance(a, Tensor)] + \
        [k for k, a in kwargs.items() if isinstance(a, Tensor)]
    g = Graph(invars, tr.state, tr.consts, tr.eqns, outvars, tree, named_args)
    g.result = out
    g.breaks = tr.breaks
    g.break_sites = tr.break_sites
    g.trace_seconds = time.perf_counter() - t0
    return g


def _promote_written_consts(tr, fn, args, arg_names):
    """A tensor made during tracing and then written in place (optimizer state created on the first
    step) is state, not a constant: it becomes a named input bound to that tensor."""
    written = {e.args[0].name for e in tr.eqns if e.prim == "assign"}
    promote = [(v, a) for v, a in tr.consts if v.name in written]
    if not promote:
        return
    names, _ = _collect_names(fn, args, arg_names)  # names for the state made during the run
    tr.consts = [(v, a) for v, a in tr.consts if v.name not in written]
    for v, _ in promote:
        t = tr.const_tensor[v.name]
        name = names.get(id(t), f"t{len(tr.state)}")
        tr.state.append((v, StateBinding(name, "tensor", t)))
    for e in tr.eqns:
        if e.prim == "assign" and e.args[0].name in {v.name for v, _ in promote}:
            e.target = tr._target_name(e.args[0])


def _arg_names_of(fn, n):
    import inspect
    try:
        target = fn.forward if hasattr(fn, "forward") and not isinstance(fn, types.FunctionType) else fn
        ps = [p for p in inspect.signature(target).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        ps = []
    names = []
    for i in range(n):
        if i < len(ps) and ps[i].kind != ps[i].VAR_POSITIONAL:
            names.append(ps[i].name)
        else:
            names.append(f"arg{i}")
    return names

