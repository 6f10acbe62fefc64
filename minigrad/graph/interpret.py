"""Run a Graph with NumPy: each equation calls its Function's NumPy forward (the code eager runs
when no graph is recorded), effects write into the bound tensors, in program order."""
import numpy as np

from ..autograd.function import _NoGradCtx, plain_forward
from ..tensor import Tensor
from .ir import HyperRef, Var, hyper_value


class _Ctx(_NoGradCtx):
    """forward's ctx when interpreting: keeps what forward saves and sets (side outputs read it)."""

    _to_save = ()

    def save_for_backward(self, *xs):
        self._to_save = xs


def _value(b, override):
    obj = override.get(b.name, b.obj) if override else b.obj
    if obj is None:
        raise RuntimeError(f"graph.run: state input {b.name!r} ({b.kind}) is not bound; pass "
                           f"state={{{b.name!r}: ...}} (a loaded graph has no live tensors)")
    if b.kind == "generator":
        return obj
    if b.kind == "hyper":
        if isinstance(obj, HyperRef):
            return obj.read(b.name)
        return hyper_value(b.name, float(obj._data if isinstance(obj, Tensor) else obj), None)
    if b.kind == "grad":
        g = obj._grad
        if g is None:
            raise RuntimeError(f"graph.run: {b.name} is None but the graph reads it (was the graph "
                               f"traced with gradients present?)")
        return g._data
    return obj._data if isinstance(obj, Tensor) else np.asarray(obj)


def _resolve(a, env):
    if isinstance(a, Var):
        return env[a.name]
    if type(a) is tuple:
        return tuple(_resolve(x, env) for x in a)
    if type(a) is dict:
        return {k: _resolve(x, env) for k, x in a.items()}  # a fresh dict per run: forward may fill it
    return a


def eval_eqn(e, vals):
    """Run equation e's NumPy forward (the code eager runs with no graph recorded) on its argument
    values: (its outputs as arrays, forward's ctx or None). graph.run and constant folding share it."""
    cls = e.fn
    ctx = None
    if plain_forward(cls, e.side) == "fast":  # the choice eager makes (autograd/function.py)
        out = cls._fast(*vals)
    else:
        ctx = _Ctx()
        ctx.needs_input_grad = e.need if e.need is not None else (False,) * len(vals)
        out = cls.forward(ctx, *vals)
    outs = out if type(out) is tuple else (out,)
    return [o if type(o) is np.ndarray else np.asarray(o) for o in outs], ctx


def run(graph, args, state=None):
    if len(args) != len(graph.invars):
        raise TypeError(f"graph.run: expected {len(graph.invars)} tensor arguments "
                        f"({', '.join(graph.arg_names)}), got {len(args)}")
    env = {}
    protect = getattr(graph, "readonly_inputs", ())
    for v, a, n in zip(graph.invars, args, graph.arg_names):
        arr = a._data if isinstance(a, Tensor) else np.asarray(a)
        if arr.dtype != v.dtype or (arr.shape != v.shape and not _dynamic_ok(graph, v, arr)):
            raise TypeError(f"graph.run: argument {n!r} has shape {tuple(arr.shape)} and dtype {arr.dtype}; "
                            f"the graph was traced with {v.shape} {v.dtype}")
        env[v.name] = readonly(arr) if v.name in protect else arr
    objs = {}
    for v, b in graph.state:
        env[v.name] = _value(b, state)
        objs[b.name] = (state or {}).get(b.name, b.obj)
    for v, arr in graph.consts:
        env[v.name] = arr
    for e in graph.eqns:
        if e.fn is None:
            _effect(e, env, objs)
            continue
        vals = [_resolve(a, env) for a in e.args]
        try:
            outs, ctx = eval_eqn(e, vals)
        except (ValueError, IndexError, TypeError) as err:
            raise type(err)(f"graph.run: {e.prim} (traced at {e.source}): {err}") from None
        for v, o in zip(e.outvars, outs):
            env[v.name] = o
        for path, v in e.side:
            env[v.name] = _side_value(path, vals, ctx)
    res = []
    for v in graph.outvars:
        res.append(Tensor._make(env[v.name]))
    return _unflatten(graph.out_tree, res)


def readonly(arr):
    """A read-only view of arr (a loaded graph's input that no assign writes: no op of the graph
    may write into the caller's tensor)."""
    if not arr.flags.writeable:
        return arr
    arr = arr.view()
    arr.flags.writeable = False
    return arr


def _side_value(path, vals, ctx):
    kind = path[0]
    if kind in ("arg", "attr"):
        val = vals[path[1]] if kind == "arg" else ctx.__dict__[path[1]]
        for k in path[2:]:
            val = val[k]
        return val
    if kind == "saved":
        x = ctx._to_save[path[1]]
        return x._data if isinstance(x, Tensor) else np.asarray(x)
    raise ValueError(f"graph.run: bad side output path {path!r}")


def _dynamic_ok(graph, v, arr):
    dyn = getattr(graph, "dynamic", {}).get(v.name)
    return dyn is not None and arr.ndim == len(v.shape) and all(
        a == b or i in dyn for i, (a, b) in enumerate(zip(arr.shape, v.shape)))


def _effect(e, env, objs):
    if e.prim == "assign":
        target, value = e.args
        arr = env[target.name]
        arr[...] = env[value.name]
        env[e.outvars[0].name] = arr
        obj = objs.get(e.target)
        if isinstance(obj, Tensor):
            obj._bump_version()
        return
    if e.prim == "set_grad":
        p = objs.get(e.target)
        if not isinstance(p, Tensor):
            raise RuntimeError(f"graph.run: set_grad on {e.target!r}, which is not a bound parameter")
        value = e.args[0]
        if value is None:
            p._grad = None
            return
        arr = env[value.name].copy()
        p._grad = Tensor._make(arr)
        env[e.outvars[0].name] = arr
        return
    raise RuntimeError(f"graph.run: unknown effect {e.prim!r}")


def _unflatten(tree, vals):
    kind, body = tree
    if kind == "t":
        return vals[body]
    if kind == "py":
        return body
    if kind == "tuple":
        return tuple(_unflatten(t, vals) for t in body)
    if kind == "list":
        return [_unflatten(t, vals) for t in body]
    if kind == "dict":
        return {k: _unflatten(t, vals) for k, t in body}
    raise ValueError(f"graph.run: bad output tree node {kind!r}")
