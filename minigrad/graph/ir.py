"""The graph IR: a typed, first-order SSA program, printed like a jaxpr.

A Graph has
  invars   the function's tensor arguments, in order (graph(*args) binds them)
  state    named inputs read at each run: module parameters and buffers, gradients, optimizer state,
           tensors from closures or globals, random generators. Each has a binding saying where its
           value lives (a tensor object, a parameter's .grad, a Generator); a loaded graph gets them
           by name (graph.run(*args, state={...}))
  consts   tensors created inside the function (zeros, the seed gradient 1.0, cached scalars): baked
  eqns     one per Function.apply (primitive = the op's one name, the Function class, static
           parameters, input vars, output vars with shape and dtype, the user's source line) and
           one per effect: `assign` (an in-place write into a tensor), `set_grad` (a leaf's .grad
           replaced or cleared), in program order
  outvars  what the function returned (with `out_tree` saying how to rebuild it)

An effect eqn writes a named input and produces a new var for the written value, so later reads
depend on the write through the data (the control dependency made explicit); passes must keep
every eqn whose `effect` is True.
"""
import inspect

import numpy as np

_DT = {"float32": "f32", "float64": "f64", "float16": "f16", "int64": "i64", "int32": "i32",
       "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "bool", "complex64": "c64",
       "complex128": "c128"}
_EFFECTS = ("assign", "set_grad")


def dtype_str(dt):
    return _DT.get(str(np.dtype(dt)), str(np.dtype(dt)))


class Var:
    """A value of the program: a name, a shape and a dtype (a generator var has shape None)."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape) if shape is not None else None, dtype

    @property
    def type_str(self):
        """The type as printed in a graph, e.g. ``f32[3,4]`` (``rng`` for a generator state)."""
        if self.shape is None:
            return "rng"
        return f"{dtype_str(self.dtype)}[{','.join(str(s) for s in self.shape)}]"

    def __repr__(self):
        return f"{self.name}:{self.type_str}"


class Eqn:
    """One equation of a graph: ``outvars = prim[params](invars)``.

    fn: the Function class (None for the effects `assign` / `set_grad`); args: forward's arguments
    in order, each a Var (a tensor) or a static Python value; side: forward's side outputs (arrays a
    forward leaves in a dict argument, e.g. batch norm's batch statistics) as (arg index, key, Var).
    """

    __slots__ = ("prim", "fn", "args", "outvars", "side", "effect", "source", "target", "need")

    def __init__(self, prim, fn, args, outvars, side=(), effect=False, source=None, target=None):
        self.prim, self.fn, self.args, self.outvars = prim, fn, list(args), list(outvars)
        self.side, self.effect, self.source, self.target = list(side), effect, source, target
        self.need = None  # forward's ctx.needs_input_grad when traced with a graph recorded

    @property
    def invars(self):
        """The Vars this equation reads: its tensor arguments, including those nested in lists and
        tuples."""
        return [a for a in self.args if isinstance(a, Var)] + _nested_vars(self.args)

    @property
    def params(self):
        """The static parameters by forward's argument names (Tensor arguments left out)."""
        names = _arg_names(self.fn, len(self.args))
        return {n: a for n, a in zip(names, self.args) if not isinstance(a, Var) and not _has_var(a)}

    def __repr__(self):
        outs = " ".join(repr(v) for v in self.outvars + [s[1] for s in self.side])
        params = self.params
        if self.target is not None:
            params = {"target": self.target, **params}
        ps = ""
        if params:
            ps = "[" + " ".join(f"{k}={_short(v)}" for k, v in params.items()) + "]"
        ins = " ".join(a.name for a in self.invars)
        return f"{outs} = {self.prim}{ps} {ins}".rstrip()


def _nested_vars(args):
    out = []
    for a in args:
        items = a.values() if type(a) is dict else a if isinstance(a, (tuple, list)) else ()
        for b in items:
            if isinstance(b, Var):
                out.append(b)
            elif isinstance(b, (tuple, list, dict)):
                out.extend(_nested_vars([b]))
    return out


def _has_var(a):
    return isinstance(a, (tuple, list, dict)) and bool(_nested_vars([a]))


_names_cache = {}


def _arg_names(fn, n):
    key = (fn, n)
    names = _names_cache.get(key)
    if names is None:
        names = [f"arg{i}" for i in range(n)]
        if fn is not None:
            try:
                ps = list(inspect.signature(fn.forward).parameters.values())[1:]
                for i, p in enumerate(ps[:n]):
                    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                        names[i] = p.name
            except (TypeError, ValueError):
                pass
        else:
            names = ["target", "value"][:n] + names[2:]
        _names_cache[key] = names
    return names


def _short(v):
    if isinstance(v, np.ndarray):
        return f"array{dtype_str(v.dtype)}{list(v.shape)}" if v.size > 6 else np.array2string(v, separator=",")
    if isinstance(v, np.dtype):
        return dtype_str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_short(x)}" for k, x in v.items()) + "}"
    if isinstance(v, Var):
        return v.name
    if isinstance(v, tuple):
        return "(" + ",".join(_short(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, slice):
        return ":".join("" if x is None else str(x) for x in (v.start, v.stop, v.step)).rstrip(":") or ":"
    if v is Ellipsis:
        return "..."
    if type(v).__name__ == "Generator":
        return "rng"
    return repr(v)


class Graph:
    """A traced program: run it with `graph(*args)`, print it, save it (`graph.save(path)`)."""

    def __init__(self, invars, state, consts, eqns, outvars, out_tree, arg_names=None):
        self.invars = list(invars)      # positional tensor arguments
        self.state = list(state)        # (Var, StateBinding)
        self.consts = list(consts)      # (Var, ndarray)
        self.eqns = list(eqns)
        self.outvars = list(outvars)    # Vars (or Python constants in out_tree)
        self.out_tree = out_tree
        self.arg_names = list(arg_names or [v.name for v in self.invars])

    # -- views of the program ------------------------------------------------------------------
    @property
    def effects(self):
        """The equations with an effect (``assign``, ``set_grad``): writes into inputs or state, or
        gradients set."""
        return [e for e in self.eqns if e.effect]

    def count(self):
        """Equations by primitive name (a Counter)."""
        from collections import Counter
        return Counter(e.prim for e in self.eqns)

    def __len__(self):
        return len(self.eqns)

    def __str__(self):
        consts = " ".join(repr(v) for v, _ in self.consts)
        state = " ".join(repr(v) for v, _ in self.state)
        ins = " ".join(repr(v) for v in self.invars)
        head = "{ lambda " + (consts + " " if consts else "") + "; " + ins
        if state:
            head += " ; " + state
        lines = [head.rstrip() + ". let"]
        for e in self.eqns:
            lines.append("    " + repr(e))
        outs = ", ".join(v.name if isinstance(v, Var) else repr(v) for v in self.outvars)
        lines.append(f"  in ({outs}{',' if len(self.outvars) == 1 else ''}) }}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"<minigrad Graph: {len(self.invars)} inputs, {len(self.state)} state inputs, "
                f"{len(self.consts)} constants, {len(self.eqns)} equations ({len(self.effects)} effects)>")

    def state_names(self):
        """The names of the graph's state inputs (parameters and buffers), in order."""
        return [b.name for _, b in self.state]

    # -- running and saving --------------------------------------------------------------------
    def run(self, *args, state=None):
        """Interpret the program with NumPy; `state` (name -> Tensor/Generator) overrides bindings."""
        from .interpret import run
        return run(self, args, state)

    __call__ = run

    def save(self, path):
        """Write the graph to ``path`` (see [`load_graph()`][minigrad.load_graph]), without the model's
        Python code. Control flow (mg.cond / while_loop / scan) is saved with its sub-graphs."""
        from .serialize import save_graph
        save_graph(self, path)


class StateBinding:
    """Where a named input's value lives at run time.

    kind "tensor": `obj` is the Tensor (its current value is read); "grad": `obj` is the parameter
    whose current `.grad` is read; "generator": `obj` is the mg.Generator drawn from; "hyper": `obj`
    is a HyperRef, an optimizer hyper-parameter read from its param group as a 0-d float64 array.
    `obj` is None in a loaded graph until bound by name.
    """

    __slots__ = ("name", "kind", "obj")

    def __init__(self, name, kind, obj=None):
        self.name, self.kind, self.obj = name, kind, obj

    def __repr__(self):
        return f"StateBinding({self.name!r}, {self.kind!r})"


class GuardFailure(RuntimeError):
    """A value the traced program branched on has changed (e.g. weight_decay was 0 when traced and is
    not now): the program no longer says what the function does. Trace again (mg.jit does)."""


class HyperRef:
    """Where an optimizer hyper-parameter lives: `group[key]` (or `group[key][index]`, e.g. Adam's
    betas). The traced step branched on whether it is zero (`nonzero`), so a run checks that too."""

    __slots__ = ("group", "key", "index", "nonzero")

    def __init__(self, group, key, index, nonzero):
        self.group, self.key, self.index, self.nonzero = group, key, index, nonzero

    def read(self, name):
        v = self.group[self.key] if self.index is None else self.group[self.key][self.index]
        return hyper_value(name, float(v), self.nonzero)


def hyper_value(name, v, nonzero):
    """v as the 0-d float64 array a hyper-parameter input holds, after checking the traced branch."""
    if nonzero is not None and (v != 0) != nonzero:
        raise GuardFailure(f"graph.run: hyper-parameter {name} is {v} but was "
                           f"{'non-zero' if nonzero else '0'} when traced, and the step branches on "
                           f"it; trace again")
    return np.array(v, dtype=np.float64)
