"""Control flow as primitives: mg.cond, mg.while_loop, mg.scan.

The names and signatures users know: ``cond(pred, true_fn, false_fn, operands)`` and
``while_loop(cond_fn, body_fn, carried_inputs)`` as torch.cond / torch.while_loop, and
``scan(f, init, xs, length=None, reverse=False) -> (carry, ys)`` as jax.lax.scan (PyTorch's scan
is still a private higher-order op).

Outside a trace they run eagerly: cond calls the branch the predicate picks, while_loop and scan
loop in Python, so gradients, forward AD and vmap see the ordinary ops the bodies run. Under vmap a
batched predicate makes cond compute both branches and select per sample with mg.where, and
while_loop run until every sample is done with the finished samples' carry frozen (as JAX).

Under mg.graph.trace / mg.jit (with no other transform open) each becomes ONE equation
holding its sub-graphs: every branch or body is traced once by a tracer of its own
(`_BodyTracer`), whose free variables (tensors of the enclosing trace, parameters, closures,
generators) become explicit inputs of the sub-graph and of the equation. The equation's forward
runs the sub-graphs (compiled to Python once, as mg.jit compiles a graph), so graph.run and
compiled code run it like any other primitive, and a 35-step scan is one equation whatever its
length. The equations are differentiable under tracing: cond's VJP is a cond of the branches'
VJPs, scan's VJP a reverse scan that saves the carries and recomputes each step's body; the
traced while_loop is forward-only (as jax.lax.while_loop: a reverse pass through a traced
while_loop is a graph break, so mg.jit runs that function eagerly, with its JitWarning).
mg.onnx.export writes cond as an ONNX If and scan / while_loop as a Loop; graph.save refuses them
(ir.Graph.save: the graph format has no sub-graphs yet).
"""
import threading

import numpy as np

from .autograd import levels as _levels
from .autograd.function import Function, NoRule
from .autograd.grad_mode import _state as _grad_state, enable_grad, no_grad
from .tensor import Tensor

__all__ = ["cond", "while_loop", "scan"]


# -- pytrees of tensors ---------------------------------------------------------------------------
def _flatten(tree, what):
    """(leaves, spec) of a pytree of tensors: tuples, lists, dicts and None around Tensors."""
    leaves = []

    def go(x):
        if isinstance(x, Tensor):
            leaves.append(x)
            return "t"
        if type(x) in (tuple, list):
            return (type(x).__name__, tuple(go(y) for y in x))
        if type(x) is dict:
            return ("dict", tuple(x), tuple(go(x[k]) for k in x))
        if x is None:
            return None
        raise TypeError(f"{what}: expected tensors (in tuples, lists and dicts), got a "
                        f"{type(x).__name__}: {x!r:.60}")
    return leaves, go(tree)


def _unflatten(spec, leaves):
    it = iter(leaves)

    def go(s):
        if s == "t":
            return next(it)
        if s is None:
            return None
        if s[0] == "dict":
            return {k: go(c) for k, c in zip(s[1], s[2])}
        vals = [go(c) for c in s[1]]
        return tuple(vals) if s[0] == "tuple" else vals
    return go(spec)


def _meta(t):
    return tuple(t.shape), np.dtype(t.dtype)


def _fmt(m):
    return f"shape {m[0]} {m[1]}"


def _check_same(fname, what, a_name, a, b_name, b):
    """Raise naming fname when two flattened pytrees ((leaves, spec)) differ in structure, shapes or
    dtypes (torch.cond's check of its branches, jax.lax.scan's of its carry)."""
    (la, sa), (lb, sb) = a, b
    if sa != sb:
        raise TypeError(f"{fname}: {what}: {a_name} and {b_name} must have the same structure; got "
                        f"{_unflatten_repr(sa)} and {_unflatten_repr(sb)}")
    for i, (x, y) in enumerate(zip(la, lb)):
        mx, my = x if type(x) is tuple else _meta(x), y if type(y) is tuple else _meta(y)
        if mx != my:
            raise TypeError(f"{fname}: {what}: {a_name} and {b_name} must have the same shapes and dtypes; "
                            f"leaf {i}: {a_name} has {_fmt(mx)}, {b_name} has {_fmt(my)}")


def _unflatten_repr(spec):
    if spec == "t":
        return "Tensor"
    if spec is None:
        return "None"
    if spec[0] == "dict":
        return "{" + ", ".join(f"{k!r}: {_unflatten_repr(c)}" for k, c in zip(spec[1], spec[2])) + "}"
    inner = ", ".join(_unflatten_repr(c) for c in spec[1])
    return f"({inner}{',' if len(spec[1]) == 1 else ''})" if spec[0] == "tuple" else f"[{inner}]"


def _batched(t):
    from .func.vmap import BatchedTensor
    return isinstance(t, BatchedTensor)


def _tracing_here():
    """Whether a trace (mg.graph.trace, mg.jit) is open and no other transform: control flow is
    then recorded as one equation. With vmap or forward AD open inside or around the trace, the
    eager path runs and the trace records the ops it runs (the loop unrolled): the equations have
    no batching or JVP rule of their own."""
    lv = _levels.current()
    return bool(lv) and all(x.kind == "trace" for x in lv) and not getattr(_local, "eager", 0)


_local = threading.local()


def _breaks():
    return len(_grad_state.tracer.breaks)


def _eagerly(fn, *args, **kwargs):
    """fn run on the eager path inside a trace: a body hit a graph break (mg.jit traces with
    on_break="record", so the function runs on): its sub-graph is not the body, so the loop runs
    in Python and gives the eager values (the trace is broken anyway and mg.jit runs eagerly)."""
    _local.eager = getattr(_local, "eager", 0) + 1
    try:
        return fn(*args, **kwargs)
    finally:
        _local.eager -= 1


def _where(p, a, b):
    from .ops import where
    return where(p, a, b)


def _pred_tensor(fname, p, what="pred"):
    """p as a one-element tensor, checked (a Python bool stays a bool)."""
    if isinstance(p, (bool, np.bool_)):
        return bool(p)
    if not isinstance(p, Tensor):
        raise TypeError(f"{fname}: {what} must be a bool or a one-element tensor, got {type(p).__name__}")
    if p.numel() != 1:
        raise ValueError(f"{fname}: {what} must be a bool or a one-element tensor, got a tensor of shape "
                         f"{tuple(p.shape)}")
    if np.dtype(p.dtype).kind == "c":
        raise TypeError(f"{fname}: {what} must be a bool or a real tensor, got {p.dtype}")
    return p


def _as_mask(p):
    """A batched predicate as a 0-d bool tensor (per sample), for mg.where."""
    p = p.reshape(())
    return p if p.dtype == np.bool_ else p != 0


def _operands(fname, operands, what="operands"):
    if isinstance(operands, Tensor) or type(operands) not in (tuple, list):
        raise TypeError(f"{fname}: {what} must be a tuple or list of tensors, got {type(operands).__name__}")
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fname}: {what}[{i}] must be a Tensor, got {type(t).__name__}")
    return tuple(operands)


# -- cond ---------------------------------------------------------------------------------------------
def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if `pred` else ``false_fn(*operands)``, as torch.cond / jax.lax.cond.

    Args:
        pred: a bool, or a one-element tensor (bool or numeric: non-zero is true).
        true_fn, false_fn: functions of the operands returning tensors (a tensor, or tuples,
            lists and dicts of them); both must return the same structure, shapes and dtypes
            (checked where both are traced: under mg.graph.trace / mg.jit, and under vmap).
        operands: a tuple or list of tensors passed to the branch.

    Eagerly only the chosen branch runs, and gradients flow through it. Under vmap with a batched
    `pred` both branches run and each sample's result is selected with mg.where (as JAX). Traced
    (mg.graph.trace, mg.jit) it is one `cond` equation holding both branches as sub-graphs, so
    the graph no longer breaks on the branch.

    Example:
        >>> x = mg.tensor([1.0, -2.0])
        >>> mg.cond(x.sum() > 0, lambda t: t * 2, lambda t: -t, (x,))
        tensor([-1.,  2.])
    """
    fname = "mg.cond"
    ops = _operands(fname, operands)
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(f"{fname}: true_fn and false_fn must be callable")
    p = _pred_tensor(fname, pred)
    if isinstance(p, bool):
        return (true_fn if p else false_fn)(*ops)
    if _tracing_here():
        return _traced_cond(p, true_fn, false_fn, ops)
    if _batched(p):
        a = _flatten(true_fn(*ops), f"{fname}: true_fn's result")
        b = _flatten(false_fn(*ops), f"{fname}: false_fn's result")
        _check_same(fname, "the branches' results", "true_fn", a, "false_fn", b)
        m = _as_mask(p)
        return _unflatten(a[1], [_where(m, x, y) for x, y in zip(a[0], b[0])])
    return (true_fn if bool(p) else false_fn)(*ops)


# -- while_loop ---------------------------------------------------------------------------------------
def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)``; return the final carried
    values (a tuple), as torch.while_loop / jax.lax.while_loop.

    Args:
        cond_fn: a function of the carried values returning a bool or a one-element tensor.
        body_fn: a function of the carried values returning new values of the same structure,
            shapes and dtypes (a tuple; a single tensor when one value is carried).
        carried_inputs: a tuple or list of tensors (or pytrees of tensors).

    Eagerly it loops in Python (differentiable through the ops it runs). Under vmap with a batched
    predicate it runs until every sample is done, the finished samples' values frozen with
    mg.where (as JAX). Traced it is one `while_loop` equation holding both functions as
    sub-graphs; that equation is forward-only: a backward through it is a graph break (mg.jit
    then runs the function eagerly), as jax.lax.while_loop has no reverse mode.

    Example:
        >>> i, x = mg.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
        ...                      (mg.tensor(0), mg.tensor(1.0)))
        >>> i, x
        (tensor(3), tensor(8.))
    """
    fname = "mg.while_loop"
    if type(carried_inputs) not in (tuple, list):
        raise TypeError(f"{fname}: carried_inputs must be a tuple or list, got {type(carried_inputs).__name__}")
    if not callable(cond_fn) or not callable(body_fn):
        raise TypeError(f"{fname}: cond_fn and body_fn must be callable")
    carried = tuple(carried_inputs)
    flat = _flatten(carried, f"{fname}: carried_inputs")
    if not flat[0]:
        raise ValueError(f"{fname}: carried_inputs holds no tensor")
    if _tracing_here():
        return _traced_while(cond_fn, body_fn, carried, flat)
    c = carried
    while True:
        p = _pred_tensor(fname, cond_fn(*c), "cond_fn's result")
        if not isinstance(p, bool) and _batched(p):
            return _batched_while(cond_fn, body_fn, c, p, flat)
        if not (p if isinstance(p, bool) else bool(p)):
            return c
        c = _body_step(fname, body_fn, c, flat)


def _body_step(fname, body_fn, c, flat):
    new = body_fn(*c)
    if isinstance(new, Tensor) and len(c) == 1:
        new = (new,)
    if type(new) is list:
        new = tuple(new)
    nf = _flatten(new, f"{fname}: body_fn's result")
    _check_same(fname, "body_fn must return the carried values unchanged in structure, shapes and dtypes",
                "carried_inputs", flat, "body_fn's result", nf)
    return new


def _batched_while(cond_fn, body_fn, c, p, flat):
    """While any sample's predicate holds: step every sample, keep the finished ones' values."""
    fname = "mg.while_loop"
    tr = _grad_state.tracer
    if tr is not None:  # vmap inside a trace: the batch's data decides how many steps run
        tr.graph_break(f"{fname} with a batched predicate under vmap inside a trace, at {_user_frame()}: "
                       f"the number of steps depends on the data (the traced while_loop equation is made "
                       f"only where no transform but tracing is open)")
    while np.asarray(p._data).view(np.ndarray).any():
        new = _body_step(fname, body_fn, c, flat)
        m = _as_mask(p)
        nl, ol = _flatten(new, fname)[0], _flatten(c, fname)[0]
        c = _unflatten(flat[1], [_where(m, a, b) for a, b in zip(nl, ol)])
        p = _pred_tensor(fname, cond_fn(*c), "cond_fn's result")
        if isinstance(p, bool):
            p = Tensor._make(np.array(p))
    return c


# -- scan ---------------------------------------------------------------------------------------------
def scan(f, init, xs=None, length=None, reverse=False):
    """Loop ``carry, y = f(carry, x)`` over the leading dimension of `xs`, as jax.lax.scan.

    Args:
        f: ``f(carry, x) -> (carry, y)``; the carry keeps its structure, shapes and dtypes.
        init: the initial carry (a tensor or a pytree of tensors: tuples, lists, dicts).
        xs: tensors (or a pytree) sliced along dim 0, one slice per step; None for no input
            (then `length` is required).
        length: the number of steps (checked against xs' leading dimension when both are given).
        reverse: run from the last slice to the first (ys are still indexed as xs).

    Returns:
        ``(carry, ys)``: the final carry and the per-step ``y`` stacked along a new dim 0.

    Eagerly it loops in Python (differentiable through the ops it runs; vmappable). Traced
    (mg.graph.trace, mg.jit) it is ONE `scan` equation holding the body as a sub-graph, whatever
    the length; its gradient is a reverse scan (the carries are saved, each step's body is
    recomputed).

    Example:
        >>> total, partial = mg.scan(lambda c, x: (c + x, c + x), mg.tensor(0.0), mg.tensor([1.0, 2.0, 3.0]))
        >>> total, partial
        (tensor(6.), tensor([1., 3., 6.]))
    """
    fname = "mg.scan"
    if not callable(f):
        raise TypeError(f"{fname}: f must be callable")
    cflat = _flatten(init, f"{fname}: init")
    xl, xspec = _flatten(xs, f"{fname}: xs")
    n = length
    for i, x in enumerate(xl):
        if x.ndim == 0:
            raise ValueError(f"{fname}: xs leaf {i} is 0-d; every leaf of xs is sliced along dim 0")
        if n is None:
            n = x.shape[0]
        elif x.shape[0] != n:
            what = f"length={length}" if length is not None else f"leaf 0's {xl[0].shape[0]}"
            raise ValueError(f"{fname}: xs leaf {i} has leading dimension {x.shape[0]}, but {what}: "
                             f"every leaf of xs must have the scan's length along dim 0")
    if n is None:
        raise ValueError(f"{fname}: pass xs or length (the number of steps)")
    n = int(n)
    if n < 0:
        raise ValueError(f"{fname}: length must be >= 0, got {n}")
    if _tracing_here() and (cflat[0] or xl):
        return _traced_scan(f, cflat, xl, xspec, n, bool(reverse))
    carry, ys, yspec = init, [], None
    for i in (reversed(range(n)) if reverse else range(n)):
        x = _unflatten(xspec, [t[i] for t in xl])
        carry, y, yspec = _scan_step(f, carry, x, cflat, yspec)
        ys.append(y)
    if n == 0:  # the ys' shapes: one step of f on zeros, its results left unused
        with no_grad():
            from .creation import zeros
            x = _unflatten(xspec, [zeros(t.shape[1:], dtype=t.dtype) for t in xl])
            _, y, yspec = _scan_step(f, init, x, cflat, None)
        from .creation import empty
        return carry, _unflatten(yspec, [empty((0,) + tuple(t.shape), dtype=t.dtype) for t in y])
    if reverse:
        ys.reverse()
    from .ops import stack
    return carry, _unflatten(yspec, [stack([y[k] for y in ys]) for k in range(len(ys[0]))])


def _scan_step(f, carry, x, cflat, yspec):
    fname = "mg.scan"
    out = f(carry, x)
    if type(out) not in (tuple, list) or len(out) != 2:
        raise TypeError(f"{fname}: f must return a pair (carry, y), got {type(out).__name__}")
    carry, y = out
    _check_same(fname, "f must return a carry of the same structure, shapes and dtypes as init",
                "init", cflat, "f's carry", _flatten(carry, f"{fname}: f's carry"))
    yl, ys = _flatten(y, f"{fname}: f's y")
    if yspec is not None and ys != yspec:
        raise TypeError(f"{fname}: f returned y of structure {_unflatten_repr(ys)} after "
                        f"{_unflatten_repr(yspec)}: every step must return the same structure")
    return carry, yl, ys


# == tracing: one equation holding sub-graphs =========================================================
def _body_tracer_cls():
    from .graph.trace import Tracer

    class _BodyTracer(Tracer):
        """Records a branch or body into a sub-graph while the enclosing trace goes on: what it
        reads from outside (the enclosing trace's values, its state inputs, generators) becomes a
        free variable: an input of the sub-graph, and of the equation holding it."""

        def __init__(self, parent, what):
            super().__init__(parent.names, parent.param_of_grad, ())
            self.parent, self.what = parent, what
            self.newname = parent.newname
            self.level = parent.level
            self.record_breaks = parent.record_breaks
            self.breaks, self.break_sites = parent.breaks, parent.break_sites
            self.free = []       # [(outer object: Tensor or Generator, outer Var, inner Var)]
            self.free_of = {}    # outer var name -> inner Var
            self.rng = {}        # id(generator) -> (generator, state before the body drew from it)
            self.residuals = None  # [(eqn, ctx path, Var)] when tracing a scan body for its VJP
            self.inputs = set()    # the names of the body's placeholders' vars

        def graph_break(self, message):
            self.parent.graph_break(message)

        def existed(self, t):
            return self.parent.existed(t)

        @property
        def pre(self):
            return self.parent.pre

        @property
        def pre_arrays(self):
            return self.parent.pre_arrays

        def check_not_derived(self, arr):
            self.parent.check_not_derived(arr)
            super().check_not_derived(arr)

        def _free(self, outer, obj):
            v = self.free_of.get(outer.name)
            if v is None:
                v = self.free_of[outer.name] = self.new_var(outer.shape, outer.dtype)
                self.free.append((obj, outer, v))
            return v

        def var_of(self, t):
            v = self.lookup(t)
            if v is not None:
                return v
            if id(t) in self.declared_consts or t._wrapped_number:
                return self.const(t)
            p = self.parent
            outer = p.lookup(t)
            if outer is None and (p.existed(t) or id(t._data) in p.pre_arrays):
                outer = p.var_of(t)
            if outer is None or any(cv is outer for cv, _ in p.consts):
                return super().var_of(t)  # made inside the body by other means (or a constant): baked
            # the equation's input: t itself when it is the enclosing trace's tensor, else (t shares
            # its memory: a detach() made in the body) a plain tensor of that value, so the equation
            # does not depend on a leaf made inside the body
            obj = t if p.tmap.get(id(t)) is outer else Tensor._make(t._data)
            v = self._free(outer, obj)
            self.bind(t, v)
            return v

        def generator_var(self, g):
            from .random import default_generator
            g = g or default_generator
            return self._free(self.parent.generator_var(g), g)

        def hyper_input(self, group, key, index, value):
            return self.parent.hyper_input(group, key, index, value)

        def apply(self, cls, args):
            if getattr(cls, "_random", False):  # the body's draws are replayed by the equation: undo them
                from .random import default_generator
                g = args[cls._generator_arg] or default_generator
                self.rng.setdefault(id(g), (g, g.get_state()))
            out = super().apply(cls, args)
            if self.residuals is not None and (cls.__module__ or "").startswith("minigrad."):  # (a user's
                # Function keeps what its backward reads its own way: recomputed in the reverse)
                outs = out if type(out) is tuple else (out,)
                ctx = next((o.grad_fn for o in outs if isinstance(o, Tensor) and isinstance(o.grad_fn, cls)), None)
                if ctx is not None:
                    for path, arr in _ctx_arrays(ctx):
                        v = self.amap.get(id(arr))
                        if v is not None and v.name not in self.inputs and not any(
                                f.name == v.name for f in self.free_of.values()):  # (an input: the replay has it)
                            self.residuals.append((self.eqns[-1], path, v))
            return out

        def assign(self, x, res, name):
            self.graph_break(f"{self.what} writes in place ({name}) into a tensor of shape {tuple(x.shape)} "
                             f"at {_user_frame()}: a traced control-flow body must be functional (return "
                             f"new values instead of writing into tensors)")
            self.expect_bump = x

        def accumulate(self, var, g, create_graph):
            self.graph_break(f"{self.what} accumulates a gradient into .grad at {_user_frame()}: not "
                             f"supported inside a traced control-flow body; use mg.autograd.grad")
            var._grad = g if var._grad is None else var._grad + g

    return _BodyTracer


def _user_frame():
    from .graph.trace import user_frame
    return user_frame()


def _ctx_arrays(ctx):
    """[(path, array)]: the arrays an op's forward left on its ctx for backward (public attributes,
    in tuples, lists and dicts), in a fixed order: what a traced scan saves per step (residuals) so
    its reverse body reads them instead of recomputing them."""
    found = []

    def go(val, path, depth):
        if isinstance(val, np.ndarray):
            if val.dtype != object:
                found.append((path, val))
        elif depth < 3 and type(val) in (tuple, list):
            for i, x in enumerate(val):
                go(x, path + (i,), depth + 1)
        elif depth < 3 and type(val) is dict:
            for k, x in val.items():
                go(x, path + (k,), depth + 1)
    for name, val in list(getattr(ctx, "__dict__", {}).items()):
        if not name.startswith("_"):
            go(val, ("attr", name), 0)
    return found


def _set_ctx_path(ctx, path, arr):
    """Put arr at path (from _ctx_arrays) on ctx; False when ctx holds no array like it there."""
    name, rest = path[1], path[2:]

    def put(val, rest):
        if not rest:
            ok = isinstance(val, np.ndarray) and val.shape == arr.shape and val.dtype == arr.dtype
            return (arr if ok else val), ok
        k = rest[0]
        if type(val) in (tuple, list) and type(k) is int and k < len(val):
            new, ok = put(val[k], rest[1:])
            items = list(val)
            items[k] = new
            return (tuple(items) if type(val) is tuple else items), ok
        if type(val) is dict and k in val:
            new, ok = put(val[k], rest[1:])
            return {**val, k: new}, ok
        return val, False
    if name not in getattr(ctx, "__dict__", {}):
        return False
    new, ok = put(ctx.__dict__[name], rest)
    if ok:
        setattr(ctx, name, new)
    return ok


_BT = []


def _trace_body(what, fn, leaves, post, residuals=None):
    """Trace fn on placeholders like `leaves` into a sub-graph. post(out) -> (flat outputs,
    spec, ...) checks and flattens fn's result. Returns (graph, free [(obj, outer Var, inner
    Var)], post's result) -- and residuals after them when `residuals` is given (a bool).

    residuals=True (a scan body whose gradient may be taken): traced with gradients on (a placeholder
    requires grad where its leaf does), so each op's forward leaves what its backward reads on its
    ctx; those arrays become extra outputs of the sub-graph, after fn's, and the returned
    residuals lists them: [(eqn, ctx path)] (see Scan)."""
    from .graph.ir import Graph
    if not _BT:
        _BT.append(_body_tracer_cls())
    parent = _grad_state.tracer
    sub = _BT[0](parent, what)
    if residuals:
        sub.residuals = []
    ph, invars = [], []
    sub.inputs = set()
    for t in leaves:
        if isinstance(t, tuple):  # (shape, dtype): a slice of no data (a 0-length scan)
            p = Tensor._make(np.zeros(t[0], t[1]))
        else:
            p = Tensor._make(np.array(t._data, copy=True))
            if residuals and t.requires_grad and _is_float(p):
                p.requires_grad_()
        v = sub.new_var(p._data)
        sub.bind(p, v)
        ph.append(p)
        invars.append(v)
        sub.inputs.add(v.name)
    lv = parent.level
    lv.tracer = _grad_state.tracer = sub
    try:
        with (enable_grad() if residuals else no_grad()):
            res = post(fn(ph))
            outvars = [sub.var_of(t) for t in res[0]]
    finally:
        lv.tracer = _grad_state.tracer = parent
        for g, state in sub.rng.values():
            g.set_state(state)
    saved = []
    if residuals:
        saved = [(j, path) for j, path, _ in sub.residuals]
        outvars = outvars + [v for _, _, v in sub.residuals]
    g = Graph(invars + [v for _, _, v in sub.free], [], sub.consts, sub.eqns, outvars,
              ("tuple", [("t", i) for i in range(len(outvars))]))
    return (g, sub.free, res) if residuals is None else (g, sub.free, res, saved)


def _flat_checked(fname, what):
    def post(out):
        leaves, spec = _flatten(out, f"{fname}: {what}")
        return leaves, spec
    return post


def _without_dead(graph):
    """graph without the equations nobody reads: a reverse scan body's replayed forward ops whose
    results (and saved activations) the residuals of the forward scan replace. As the compiler's
    dce pass, effects, random draws, dict sinks and users' Functions stay; an op's side outputs
    (what it left for its backward) count as results, read or not."""
    from .compiler.passes._util import copy_graph, has_generator
    live = {v.name for v in graph.outvars if hasattr(v, "name")}
    kept = []
    for e in reversed(graph.eqns):
        fixed = (e.effect or e.fn is None or has_generator(e) or any(type(a) is dict for a in e.args)
                 or any(p[0] == "arg" for p, _ in e.side)
                 or not (getattr(e.fn, "__module__", "") or "").startswith("minigrad."))
        if fixed or any(v.name in live for v in list(e.outvars) + [v for _, v in e.side]):
            kept.append(e)
            live.update(v.name for v in e.invars)
    if len(kept) == len(graph.eqns):
        return graph
    kept.reverse()
    return copy_graph(graph, eqns=kept, consts=[(v, a) for v, a in graph.consts if v.name in live])


class _Body:
    """A sub-graph and how to run it on arrays (compiled to Python once, as mg.jit compiles)."""

    def __init__(self, graph):
        self.graph = _without_dead(graph)
        self._fn = None
        self.consts = tuple(a for _, a in graph.consts)  # a result sharing them is copied (see _own)

    def __call__(self, vals):
        if self._fn is None:
            from .compiler.codegen import generate
            src, glb, _ = generate(self.graph, None)
            exec(compile(src, f"<minigrad control-flow body {id(self):x}>", "exec"), glb)  # noqa: S102
            self._fn = glb["compiled"]
        return self._fn(vals, [], {}, [])

    def text(self, indent):
        return ("\n" + str(self.graph)).replace("\n", "\n" + " " * indent)


def _union_free(*frees):
    """The free variables of several sub-graphs, each once: (objects, [indices per sub-graph])."""
    objs, pos, idx = [], {}, []
    for free in frees:
        ix = []
        for obj, outer, _ in free:
            if outer.name not in pos:
                pos[outer.name] = len(objs)
                objs.append(obj)
            ix.append(pos[outer.name])
        idx.append(ix)
    return objs, idx


def _own(outs, ins):
    """forward's results, copied where they share memory with its inputs (a body returning an input
    as it is): callers and the compiler's buffer reuse own what an op returns."""
    arrs = [a for a in ins if isinstance(a, np.ndarray)]
    res = []
    for o in outs:
        o = o if type(o) is np.ndarray else np.asarray(o)
        if any(np.may_share_memory(o, a) for a in arrs):
            o = o.copy()
        res.append(o)
    return res


def _result(outs):
    return outs[0] if len(outs) == 1 else tuple(outs)


def _apply(cls, spec, args):
    out = cls.apply(spec, *args)
    return [out] if isinstance(out, Tensor) else list(out)


def _zeros_like(t):
    from .creation import zeros
    return zeros(tuple(t.shape), dtype=t.dtype)


def _is_float(t):
    return isinstance(t, Tensor) and np.dtype(t.dtype).kind == "f"


def _replay(graph, ins, fname, saved=()):
    """The sub-graph's equations applied to Tensors (Function.apply each): recorded by autograd,
    so a VJP can differentiate one step of a body. saved: [(eqn index, ctx path, array)]: the
    arrays the forward scan saved for that equation's backward (the same values: same op, same
    inputs), put on its ctx, so the backward reads them and not this replay's (under a trace the
    replayed forward is then dead code when nothing else reads its results)."""
    put = {}
    for j, path, arr in saved:
        put.setdefault(j, []).append((path, arr))
    env = {v.name: t for v, t in zip(graph.invars, ins)}
    for v, arr in graph.consts:
        env[v.name] = Tensor._make(arr)

    def res(a):
        if hasattr(a, "name") and hasattr(a, "shape") and not isinstance(a, (np.ndarray, Tensor)):
            return env[a.name]
        if type(a) is tuple:
            return tuple(res(x) for x in a)
        if type(a) is list:
            return [res(x) for x in a]
        return a
    for j, e in enumerate(graph.eqns):
        if e.fn is None or any(p[0] == "arg" for p, _ in e.side) or any(type(a) is dict for a in e.args):
            raise NotImplementedError(f"{fname}: the gradient of a traced body holding {e.prim} (traced at "
                                      f"{e.source}) is not supported")
        if getattr(e.fn, "_random", False):
            raise NotImplementedError(f"{fname}: the gradient of a traced body that draws random numbers "
                                      f"({e.prim}, traced at {e.source}) is not supported: the recomputed "
                                      f"step would draw again")
        out = e.fn.apply(*[res(a) for a in e.args])
        outs = out if type(out) is tuple else (out,)
        if j in put:
            ctx = next((o.grad_fn for o in outs if isinstance(o, Tensor) and isinstance(o.grad_fn, e.fn)), None)
            if ctx is not None:
                for path, arr in put[j]:
                    _set_ctx_path(ctx, path, arr)
        for v, o in zip(e.outvars, outs):
            env[v.name] = o
    return [env.get(v.name) for v in graph.outvars]  # (None: a residual the replay keeps on a ctx)


def _step_vjp(fname, graph, ins, cts, saved=()):
    """Gradients of the body's outputs (cotangents cts) with respect to its inputs `ins`, one
    step recomputed (saved: [(eqn index, ctx path, array)], residuals put on the replayed ops'
    ctx, see _replay): a list with a tensor per input (zeros where no gradient flows; None for a
    non-float input)."""
    higher = _grad_state.enabled  # a backward with create_graph: the step's VJP is recorded too
    with enable_grad():
        leaves = [t.detach().requires_grad_() if _is_float(t) else t for t in ins]
        outs = _replay(graph, leaves, fname, saved)
        pairs = [(o, c) for o, c in zip(outs, cts) if _is_float(o) and o.requires_grad and c is not None]
        wrt = [t for t in leaves if _is_float(t)]
        from .autograd import grad
        gs = list(grad([o for o, _ in pairs], wrt, grad_outputs=[c for _, c in pairs], allow_unused=True,
                       create_graph=higher)) if pairs and wrt else [None] * len(wrt)
    it = iter(gs)
    res = []
    for t in leaves:
        if _is_float(t):
            g = next(it)
            res.append(_zeros_like(t) if g is None else g)
        else:
            res.append(None)
    return res


class _Spec:
    """The static parameter of a control-flow equation: its sub-graphs and how its inputs and
    outputs are laid out. Printed nested in the graph."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        head = " ".join(f"{k}={v}" for k, v in self.__dict__.items() if k in self._show)
        subs = "".join(f"\n        {name}:{body.text(10)}" for name, body in self._bodies())
        return "{" + head + subs + "\n      }"

    def _bodies(self):
        return [(k, v) for k, v in self.__dict__.items() if isinstance(v, _Body)]


class _ControlFlow(Function):
    """The family of the control-flow equations (not an op itself)."""
    batching = NoRule("control flow runs eagerly under vmap (cond selects with where; the loops run "
                      "their bodies vmapped): this equation is recorded only when no transform but "
                      "tracing is open")
    jvp = NoRule("control flow runs eagerly under forward AD (the bodies' own ops carry the tangents): "
                 "this equation is recorded only when no transform but tracing is open")


class Cond(_ControlFlow):
    """cond[branches](pred, *operands, *free): the branch pred picks, run on its inputs."""
    op_name = "cond"

    @staticmethod
    def forward(ctx, branches, pred, *vals):
        s = branches
        ops, free = vals[:s.n_ops], vals[s.n_ops:]
        take = bool(np.asarray(pred).reshape(()))
        body, idx = (s.true_fn, s.true_idx) if take else (s.false_fn, s.false_idx)
        outs = body(list(ops) + [free[i] for i in idx])
        ctx.save_for_backward(pred, *vals)
        ctx.spec = s
        return _result(_own(outs, vals + s.true_fn.consts + s.false_fn.consts))

    @staticmethod
    def backward(ctx, *cts):
        s = ctx.spec
        pred, *vals = ctx.saved_tensors
        cts = [c if c is not None else Tensor._make(np.zeros(m[0], m[1]))
               for c, m in zip(cts, s.out_meta)]
        n = len(vals)
        need = [_is_float(v) for v in vals]

        def branch(body, idx):
            def vjp(*a):
                ins, cs = a[:n], a[n:]
                sub_ins = list(ins[:s.n_ops]) + [ins[s.n_ops + i] for i in idx]
                gs = _step_vjp("mg.cond", body.graph, sub_ins, cs)
                full = [_zeros_like(v) if need[k] else None for k, v in enumerate(ins)]
                for k, g in enumerate(gs[:s.n_ops]):
                    if g is not None:
                        full[k] = g
                for k, g in zip(idx, gs[s.n_ops:]):
                    if g is not None:
                        full[s.n_ops + k] = g
                return tuple(g for g in full if g is not None)
            return vjp
        args = tuple(v for v in vals if isinstance(v, Tensor)) if all(
            isinstance(v, Tensor) for v in vals) else None
        if args is None:
            raise NotImplementedError("mg.cond: the gradient of a traced cond whose branches draw random "
                                      "numbers is not supported")
        gs = cond(pred, branch(s.true_fn, s.true_idx), branch(s.false_fn, s.false_idx), args + tuple(cts))
        gs = [gs] if isinstance(gs, Tensor) else list(gs)
        it = iter(gs)
        return (None, None) + tuple(next(it) if need[k] else None for k in range(n))


class Scan(_ControlFlow):
    """scan[body](*init, *xs, *free): body run over the leading dim of xs, ys stacked."""
    op_name = "scan"

    @staticmethod
    def forward(ctx, body, *vals):
        s = body
        nc, nx = s.n_carry, s.n_xs
        c, xs, free = list(vals[:nc]), vals[nc:nc + nx], list(vals[nc + nx:])
        ny = len(s.y_meta)
        ys = [np.empty((s.length,) + m[0], m[1]) for m in s.y_meta]
        save = any(ctx.needs_input_grad)
        carries = [np.empty((s.length,) + np.shape(a), np.asarray(a).dtype) for a in c] if save else None
        res = [np.empty((s.length,) + m[0], m[1]) for m in s.res_meta] if save else ()
        for i in (reversed(range(s.length)) if s.reverse else range(s.length)):
            if save:
                for k, a in enumerate(c):
                    carries[k][i] = a
            outs = s.body(c + [x[i] for x in xs] + free)
            c = outs[:nc]
            for k in range(ny):
                ys[k][i] = outs[nc + k]
            for k, r in enumerate(res):
                r[i] = outs[nc + ny + k]
        if save:
            ctx.carries = carries
            ctx.residuals = res  # what the body's ops saved for backward, per step (see _trace_body)
            ctx.save_for_backward(*vals)
            ctx.spec = s
        return _result(_own(c, vals + s.body.consts) + ys)

    @staticmethod
    def backward(ctx, *cts):
        s = ctx.spec
        vals = ctx.saved_tensors
        nc, nx = s.n_carry, s.n_xs
        init, xs, free = vals[:nc], vals[nc:nc + nx], vals[nc + nx:]
        if not all(isinstance(v, Tensor) for v in free):
            raise NotImplementedError("mg.scan: the gradient of a traced scan whose body draws random "
                                      "numbers is not supported")
        if _grad_state.enabled:  # create_graph: the carries as a differentiable function of the
            # inputs (a forward scan recomputing them), so a second derivative sees how they depend on them
            def again(c, x):
                return _replay(s.body.graph, list(c) + list(x) + list(free), "mg.scan")[:nc], list(c)
            carries = scan(again, list(init), list(xs), length=s.length, reverse=s.reverse)[1]
        else:
            carries = [Tensor._make(a) for a in ctx.carries]
        metas = [_meta(t) for t in init] + [((s.length,) + m[0], m[1]) for m in s.y_meta]
        cts = [c if c is not None else Tensor._make(np.zeros(m[0], m[1])) for c, m in zip(cts, metas)]
        ct_c, ct_y = cts[:nc], cts[nc:]
        fneed = [_is_float(f) for f in free]
        ffree = [f for f in free if _is_float(f)]
        # cotangents of non-float outputs are not used (zeros): pass only the float ones as xs
        yf = [k for k, m in enumerate(s.y_meta) if np.dtype(m[1]).kind == "f"]
        xf = [k for k, x in enumerate(xs) if _is_float(x)]

        # the residuals the forward saved, read by the step's backward instead of recomputing them
        # (not with create_graph: the Tensor-op backward recomputes what it differentiates again)
        res = [] if _grad_state.enabled else [Tensor._make(a) for a in getattr(ctx, "residuals", ())]

        # the free values: with create_graph they ride in the carry unchanged, so the reverse scan is
        # differentiable with respect to them; else read from the closure (traced: inputs of the
        # reverse scan), so the reverse scan does not return a copy of each (its final carry)
        ride = bool(_grad_state.enabled)

        def vjp(carry, x):
            cc, cf, fr = carry if ride else carry + (free,)
            c_t, x_t, cy, r_t = x
            cts_step = list(cc) + [None] * (len(s.y_meta) + len(r_t))
            for k, c in zip(yf, cy):
                cts_step[nc + k] = c
            saved = [(j, path, r._data) for (j, path), r in zip(s.res, r_t)]
            gs = _step_vjp("mg.scan", s.body.graph, list(c_t) + list(x_t) + list(fr), cts_step, saved)
            gc = [g if g is not None else cc[k] for k, g in enumerate(gs[:nc])]
            gx = [gs[nc + k] for k in xf]
            gf = [g for g, need in zip(gs[nc + nx:], fneed) if need]
            return (gc, [a + g for a, g in zip(cf, gf)]) + ((fr,) if ride else ()), gx
        init_ct = (ct_c, [_zeros_like(f) for f in ffree]) + ((list(free),) if ride else ())
        out, g_xs = scan(vjp, init_ct, (carries, list(xs), [ct_y[k] for k in yf], res),
                         length=s.length, reverse=not s.reverse)
        g_init, g_free = out[0], out[1]
        grads = [g if _is_float(t) else None for g, t in zip(g_init, init)]
        gx = [None] * nx
        for k, g in zip(xf, g_xs):
            gx[k] = g
        it = iter(g_free)
        gf = [next(it) if need else None for need in fneed]
        return (None,) + tuple(grads) + tuple(gx) + tuple(gf)


class WhileLoop(_ControlFlow):
    """while_loop[body](*carried, *free): body while cond; forward-only under tracing."""
    op_name = "while_loop"

    @staticmethod
    def forward(ctx, body, *vals):
        s = body
        n = s.n_carry
        c, free = list(vals[:n]), list(vals[n:])
        cf = [free[i] for i in s.cond_idx]
        bf = [free[i] for i in s.body_idx]
        while bool(np.asarray(s.cond_fn(c + cf)[0]).reshape(())):
            c = s.body_fn(c + bf)
        ctx.save_for_backward(*vals)
        ctx.spec = s
        return _result(_own(c, vals + s.body_fn.consts))

    @staticmethod
    def backward(ctx, *cts):
        tr = _grad_state.tracer
        msg = ("mg.while_loop: reverse-mode differentiation through a traced while_loop is not supported "
               "(as jax.lax.while_loop: its number of steps depends on the data); the function runs "
               "eagerly instead. For a traced gradient, use mg.scan with a fixed length (freezing "
               "finished steps with mg.where)")
        if tr is not None:
            tr.graph_break(msg)
        s = ctx.spec
        vals = ctx.saved_tensors
        n = s.n_carry
        if _grad_state.enabled:
            raise NotImplementedError("mg.while_loop: a second derivative (create_graph=True) through a "
                                      "traced while_loop is not supported")
        with enable_grad():
            leaves = [t.detach().requires_grad_() if _is_float(t) else t for t in vals]
            c, fr = leaves[:n], leaves[n:]
            cf = [fr[i] for i in s.cond_idx]
            bf = [fr[i] for i in s.body_idx]
            while bool(np.asarray(_replay(s.cond_fn.graph, c + cf, "mg.while_loop")[0]._data).reshape(())):
                c = _replay(s.body_fn.graph, c + bf, "mg.while_loop")
            pairs = [(o, g) for o, g in zip(c, cts) if g is not None and _is_float(o) and o.requires_grad]
            wrt = [t for t in leaves if _is_float(t)]
            from .autograd import grad
            gs = list(grad([o for o, _ in pairs], wrt, grad_outputs=[g for _, g in pairs], allow_unused=True)) \
                if pairs else [None] * len(wrt)
        it = iter(gs)
        return (None,) + tuple(next(it) if _is_float(t) else None for t in vals)


# -- the traced entry points ---------------------------------------------------------------------------
def _traced_cond(p, true_fn, false_fn, ops):
    fname = "mg.cond"
    nb = _breaks()
    gt, ft, (lt, st) = _trace_body(f"{fname}: true_fn", lambda ph: true_fn(*ph), ops,
                                   _flat_checked(fname, "true_fn's result"))
    gf, ff, (lf, sf) = _trace_body(f"{fname}: false_fn", lambda ph: false_fn(*ph), ops,
                                   _flat_checked(fname, "false_fn's result"))
    if _breaks() > nb:
        return _eagerly(cond, p, true_fn, false_fn, ops)
    _check_same(fname, "the branches' results", "true_fn", (lt, st), "false_fn", (lf, sf))
    if not lt:
        return _unflatten(st, [])
    objs, (it, if_) = _union_free(ft, ff)
    spec = _Spec(_prim="cond", _show=(), n_ops=len(ops), true_fn=_Body(gt), false_fn=_Body(gf),
                 true_idx=it, false_idx=if_, out_meta=[_meta(t) for t in lt])
    return _unflatten(st, _apply(Cond, spec, (p,) + tuple(ops) + tuple(objs)))


def _traced_scan(f, cflat, xl, xspec, n, reverse):
    fname = "mg.scan"
    nb = _breaks()
    nc = len(cflat[0])
    first = n - 1 if reverse else 0
    slices = [Tensor._make(x._data[first]) if n else (tuple(x.shape[1:]), np.dtype(x.dtype)) for x in xl]

    def call(ph):
        return f(_unflatten(cflat[1], ph[:nc]), _unflatten(xspec, ph[nc:]))

    def post(out):
        if type(out) not in (tuple, list) or len(out) != 2:
            raise TypeError(f"{fname}: f must return a pair (carry, y), got {type(out).__name__}")
        cf = _flatten(out[0], f"{fname}: f's carry")
        _check_same(fname, "f must return a carry of the same structure, shapes and dtypes as init",
                    "init", cflat, "f's carry", cf)
        yl, ys = _flatten(out[1], f"{fname}: f's y")
        return cf[0] + yl, ys, [_meta(t) for t in yl]
    # with gradients on, the body is traced with them too: what each op's backward reads is saved
    # per step (residuals), so the reverse scan does not recompute the step's forward
    g, free, (_, yspec, ymeta), res = _trace_body(f"{fname}: f", call, list(cflat[0]) + slices, post,
                                                  residuals=bool(_grad_state.enabled))
    if _breaks() > nb:
        return _eagerly(scan, f, _unflatten(cflat[1], cflat[0]), _unflatten(xspec, xl), n, reverse)
    nr = len(res)
    rmeta = [(tuple(v.shape), np.dtype(v.dtype)) for v in g.outvars[len(g.outvars) - nr:]] if nr else []
    body = _Body(g)
    at = {id(e): j for j, e in enumerate(body.graph.eqns)}
    spec = _Spec(_prim="scan", _show=("length", "reverse"), length=n, reverse=reverse, n_carry=nc,
                 n_xs=len(xl), y_meta=ymeta, body=body, res=[(at[id(e)], path) for e, path in res],
                 res_meta=rmeta)
    outs = _apply(Scan, spec, tuple(cflat[0]) + tuple(xl) + tuple(o for o, _, _ in free))
    return _unflatten(cflat[1], outs[:nc]), _unflatten(yspec, outs[nc:])


def _traced_while(cond_fn, body_fn, carried, flat):
    fname = "mg.while_loop"
    nb = _breaks()
    leaves, spec = flat

    def post_cond(out):
        p = _pred_tensor(fname, out, "cond_fn's result")
        if isinstance(p, bool):
            p = Tensor._make(np.array(p))
        return [p], None

    def post_body(out):
        if isinstance(out, Tensor) and len(carried) == 1:
            out = (out,)
        if type(out) is list:
            out = tuple(out)
        nf = _flatten(out, f"{fname}: body_fn's result")
        _check_same(fname, "body_fn must return the carried values unchanged in structure, shapes and dtypes",
                    "carried_inputs", flat, "body_fn's result", nf)
        return nf[0], nf[1]
    gc, fc, _ = _trace_body(f"{fname}: cond_fn", lambda ph: cond_fn(*_unflatten(spec, ph)), leaves, post_cond)
    gb, fb, _ = _trace_body(f"{fname}: body_fn", lambda ph: body_fn(*_unflatten(spec, ph)), leaves, post_body)
    if _breaks() > nb:
        return _eagerly(while_loop, cond_fn, body_fn, carried)
    objs, (ic, ib) = _union_free(fc, fb)
    s = _Spec(_prim="while_loop", _show=(), n_carry=len(leaves), cond_fn=_Body(gc), body_fn=_Body(gb),
              cond_idx=ic, body_idx=ib)
    return _unflatten(spec, _apply(WhileLoop, s, tuple(leaves) + tuple(objs)))


# -- ONNX export: If / Loop -----------------------------------------------------------------------------
def _onnx_outer(c, a):
    """An outer value as a name a sub-graph can read: an Identity into a temporary ("t.k"
    names survive the exporter's renaming of the enclosing graph's vars)."""
    from .graph.ir import Var
    if not isinstance(a, Var) or a.shape is None:
        raise c.unmapped("a control-flow body that reads a random generator")
    return c.add("Identity", [a.name])


def _onnx_lower_into(sub, graph, bound):
    """Append graph's equations to ctx `sub`, its inputs bound to the ONNX names `bound`; returns
    the names of its outputs (before renaming)."""
    from .onnx import Unmapped, _rule
    for v, name in zip(graph.invars, bound):
        sub.add("Identity", [name], v.name)
    for v, arr in graph.consts:
        from onnx import numpy_helper
        sub.inits.append(numpy_helper.from_array(np.asarray(arr), v.name))
    for e in graph.eqns:
        rule = _rule(e)
        if isinstance(rule, Exception):
            raise Unmapped(f"inside the body: {rule}")
        rule(e, sub)
        sub.produced.update(v.name for v in e.outvars)
    return [v.name for v in graph.outvars]


def _onnx_graph(c, name, build, inputs, outputs):
    """A sub-graph (GraphProto) for an If branch or a Loop body: build(sub) appends its nodes and
    returns the names of its outputs; inputs: [(name, dtype, shape)] (formal inputs, temporaries);
    outputs: [(dtype, shape)]. Inner names get an "s." prefix (as the exporter prefixes "v.")."""
    from .onnx.context import Ctx
    sub = Ctx(c.helper, c.opset, c.batch, False, set(), set())
    sub.k = c.k
    outs = build(sub)
    res = [sub.add("Identity", [o]) for o in outs]  # outputs of their own (one may be an input)
    c.k = sub.k

    def final(n):
        return n if not n or n.startswith("t.") else "s." + n
    for node in sub.nodes:
        node.input[:] = [final(i) for i in node.input]
        node.output[:] = [final(o) for o in node.output]
    for init in sub.inits:
        init.name = final(init.name)
    h = c.helper
    return h.make_graph(sub.nodes, name, [h.make_tensor_value_info(n, Ctx.tp(d), s) for n, d, s in inputs],
                        [h.make_tensor_value_info(r, Ctx.tp(d), s) for r, (d, s) in zip(res, outputs)],
                        sub.inits)


def _onnx_meta(vs):
    return [(v.dtype, list(v.shape)) for v in vs]


def _onnx_bool(c, name, var):
    if np.dtype(var.dtype) != np.bool_:
        name = c.add("Cast", [name], to=c.tp(np.bool_))
    return c.reshape(name, []) if var.shape != () else name


def _cond_onnx(e, c):
    s, pred, rest = e.args[0], e.args[1], e.args[2:]
    if e.side:
        raise c.unmapped("a cond traced with gradients (export an inference graph)")
    outer = [_onnx_outer(c, a) for a in rest]
    outs = _onnx_meta(e.outvars)

    def branch(body, idx, name):
        bound = outer[:s.n_ops] + [outer[s.n_ops + i] for i in idx]
        return _onnx_graph(c, name, lambda sub: _onnx_lower_into(sub, body.graph, bound), [], outs)
    then = branch(s.true_fn, s.true_idx, "then")
    other = branch(s.false_fn, s.false_idx, "else")
    return c.add("If", [_onnx_bool(c, pred.name, pred)], [v.name for v in e.outvars],
                 then_branch=then, else_branch=other)


def _scan_onnx(e, c):
    s, rest = e.args[0], e.args[1:]
    # traced with gradients, a scan saves its carries and residuals for its reverse (side outputs):
    # the forward exports (nothing reads them); the reverse scan reading them does not
    from .graph.ir import Var
    saved = c.__dict__.setdefault("scan_saved", set())
    if any(isinstance(a, Var) and a.name in saved for a in rest):
        raise c.unmapped("the gradient of a scan (export an inference graph)")
    saved.update(v.name for _, v in e.side)
    if s.length == 0:
        raise c.unmapped("a scan of length 0")
    nc, nx = s.n_carry, s.n_xs
    xs = [_onnx_outer(c, a) for a in rest[nc:nc + nx]]
    free = [_onnx_outer(c, a) for a in rest[nc + nx:]]
    carry = rest[:nc]
    it, cond_in = c.tmp(), c.tmp()
    formal = [c.tmp() for _ in carry]

    def build(sub):
        i = it if not s.reverse else sub.add("Sub", [sub.const(np.asarray(s.length - 1, np.int64)), it])
        sl = [sub.add("Gather", [x, i], axis=0) for x in xs]
        outs = _onnx_lower_into(sub, s.body.graph, formal + sl + free)[:nc + len(s.y_meta)]  # (no residuals)
        return [sub.add("Identity", [cond_in])] + outs
    body = _onnx_graph(c, "scan_body", build,
                       [(it, np.int64, []), (cond_in, np.bool_, [])] + [(f, v.dtype, list(v.shape))
                                                                        for f, v in zip(formal, carry)],
                       [(np.bool_, [])] + _onnx_meta(e.outvars[:nc]) + [(d, sh) for d, sh in
                                                                          ((m[1], list(m[0])) for m in s.y_meta)])
    ys = [v.name if not s.reverse else c.tmp() for v in e.outvars[nc:]]
    c.add("Loop", [c.const(np.asarray(s.length, np.int64)), c.const(np.asarray(True))] + [_onnx_outer(c, a) for a in carry],
          [v.name for v in e.outvars[:nc]] + ys, body=body)
    for y, v in zip(ys, e.outvars[nc:]):
        if s.reverse:  # Loop stacks in iteration order: flip back to xs' order
            c.add("Slice", [y, c.ints([-1]), c.ints([c.INT64_MIN]), c.ints([0]), c.ints([-1])], v.name)
    return e.outvars[0].name


def _while_onnx(e, c):
    s, rest = e.args[0], e.args[1:]
    n = s.n_carry
    carry, free = rest[:n], [_onnx_outer(c, a) for a in rest[n:]]
    it, cond_in = c.tmp(), c.tmp()
    formal = [c.tmp() for _ in carry]
    meta = _onnx_meta(e.outvars)

    def build(sub):  # p = cond(carried); carried = p ? body(carried) : carried; go on while p
        p = _onnx_lower_into(sub, s.cond_fn.graph, formal + [free[i] for i in s.cond_idx])[0]
        pb = _onnx_bool(sub, p, s.cond_fn.graph.outvars[0])
        inner = [sub.add("Identity", [f]) for f in formal]
        step = _onnx_graph(sub, "while_body", lambda b: _onnx_lower_into(
            b, s.body_fn.graph, inner + [free[i] for i in s.body_idx]), [], meta)
        keep = _onnx_graph(sub, "while_done", lambda b: inner, [], meta)
        new = [sub.tmp() for _ in carry]
        sub.add("If", [pb], new, then_branch=step, else_branch=keep)
        return [pb] + new
    body = _onnx_graph(c, "while_loop_body", build,
                       [(it, np.int64, []), (cond_in, np.bool_, [])] + [(f, v.dtype, list(v.shape))
                                                                        for f, v in zip(formal, carry)],
                       [(np.bool_, [])] + meta)
    # (no trip count: an optional input left empty; the exporter renames every name, so a bound no
    # loop reaches stands in for it)
    c.add("Loop", [c.const(np.asarray(np.iinfo(np.int64).max, np.int64)), c.const(np.asarray(True))] + [_onnx_outer(c, a) for a in carry],
          [v.name for v in e.outvars], body=body)
    return e.outvars[0].name


Cond.onnx = staticmethod(_cond_onnx)
Scan.onnx = staticmethod(_scan_onnx)
WhileLoop.onnx = staticmethod(_while_onnx)
