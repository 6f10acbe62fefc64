"""mg.func: function transforms with torch.func's names — grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian, functional_call — composable (grad(grad(f)), jacrev(jacrev(f)), hessian(f)).

Each transform runs f once more with its tensor arguments as fresh leaves (or as they are, when
an enclosing transform is already differentiating through them) and differentiates with the
reverse-mode engine with create_graph=True, so the result is itself differentiable and the
transforms nest.

jvp and jacfwd are forward mode (mg.autograd.forward_ad: dual tensors, one pass of f per tangent);
hessian is forward-over-reverse, jacfwd(jacrev(f)), as torch.func. vmap (func/vmap.py) batches with
per-op rules (func/batching_rules.py); the transforms above run on its physical tensors inside it.
"""
import functools

import numpy as np

from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor
from . import vmap as _vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call", "vmap"]


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _leaf(x):
    """x as a tensor the transform can differentiate with respect to."""
    if not isinstance(x, Tensor):
        raise TypeError(f"function transforms: expected Tensor arguments to differentiate, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise RuntimeError(f"function transforms: only floating point tensors can be differentiated (got {x.dtype})")
    if _vmap._levels:        # inside vmap: per-sample leaves on the physical tensors (func/vmap.py)
        return _vmap._leaf(x)
    if x.requires_grad:      # an enclosing transform differentiates through x: keep the connection
        return x
    leaf = x.detach().requires_grad_(True)
    fw = x.__dict__.get("_fw")
    if fw:                   # a dual tensor of an enclosing forward transform keeps its tangent
        leaf._fw = dict(fw)
    return leaf


def _outermost(*args):
    """True when no argument requires grad or carries a tangent: no enclosing transform needs the
    results' graph."""
    return not any(isinstance(a, Tensor) and _connected(a) for a in _flatten(args))


def _connected(a):
    """a requires grad or carries a tangent (inside vmap: its physical tensor does)."""
    while type(a) is _vmap.BatchedTensor:
        a = a._value
    return a.requires_grad or bool(a.__dict__.get("_fw"))


def _flatten(x):
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _flatten(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _flatten(v)
    else:
        yield x


def _finish(result, outermost):
    """Results of an outermost transform are detached (as torch.func returns them)."""
    if not outermost:
        return result
    if isinstance(result, Tensor):
        return result.detach()
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return tuple(_finish(r, True) for r in result)
    if isinstance(result, list):
        return [_finish(r, True) for r in result]
    if isinstance(result, dict):
        return {k: _finish(v, True) for k, v in result.items()}
    return result


def _grad_of(outputs, inputs, grad_outputs=None):
    """Gradients of outputs w.r.t. inputs, differentiable again, zeros where an input is unused."""
    if _vmap._levels:        # inside vmap: one backward of the physical tensors (func/vmap.py)
        return _vmap._grad_of(outputs, inputs, grad_outputs, _autograd_grad)
    gs = _autograd_grad(outputs, inputs, grad_outputs, retain_graph=True, create_graph=True, allow_unused=True)
    return tuple(Tensor._make(np.zeros(x.shape, x.dtype)) if g is None else g for g, x in zip(gs, inputs))


def _tree_leaves(x):
    """(list of tensors, rebuild(list) -> same structure) for a tensor or a dict/list/tuple of them."""
    if isinstance(x, Tensor):
        return [x], lambda v: v[0]
    if isinstance(x, dict):
        keys = list(x)
        parts = [_tree_leaves(x[k]) for k in keys]
        sizes = [len(p[0]) for p in parts]

        def rebuild(v):
            out, i = {}, 0
            for k, (_, rb), n in zip(keys, parts, sizes):
                out[k], i = rb(v[i:i + n]), i + n
            return out
        return [t for p in parts for t in p[0]], rebuild
    if isinstance(x, (list, tuple)):
        parts = [_tree_leaves(e) for e in x]
        sizes = [len(p[0]) for p in parts]

        def rebuild(v):
            out, i = [], 0
            for (_, rb), n in zip(parts, sizes):
                out.append(rb(v[i:i + n]))
                i += n
            return type(x)(out)
        return [t for p in parts for t in p[0]], rebuild
    raise TypeError(f"function transforms: expected Tensor arguments to differentiate (or dicts/lists/tuples "
                    f"of them), got {type(x).__name__}")


def _check_argnums(argnums, n):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"Got argnums={argnums}, but only {n} positional inputs")
    return nums


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of func's scalar output w.r.t. args[argnums], func's output).

    With has_aux=True func returns (output, aux) and the result is (gradient, (output, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        outer = _outermost(args, kwargs)
        args = list(args)
        with enable_grad():
            trees = {}
            for a in nums:
                leaves, rebuild = _tree_leaves(args[a])
                leaves = [_leaf(x) for x in leaves]
                trees[a] = (leaves, rebuild)
                args[a] = rebuild(leaves)
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                                   f"got {type(out).__name__} of shape {getattr(out, 'shape', None)}")
            flat = [x for a in nums for x in trees[a][0]]
            if not out.requires_grad:  # f does not depend on the inputs: the gradient is zero
                gflat = [Tensor._make(np.zeros(x.shape, x.dtype)) for x in flat]
            else:
                gflat = list(_grad_of([out], flat))
            gs, i = [], 0
            for a in nums:
                n = len(trees[a][0])
                gs.append(trees[a][1](gflat[i:i + n]))
                i += n
            gs = tuple(gs)
        g = gs[0] if isinstance(argnums, int) else gs
        return _finish((g, (out, aux)) if has_aux else (g, out), outer)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of func's scalar output w.r.t. its argument(s) argnums, as a function."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn) where vjp_fn(cotangents) gives the cotangents of the primals."""
    with enable_grad():
        xs = tuple(_leaf(p) for p in primals)
        out = func(*xs)
        aux = None
        if has_aux:
            out, aux = out
    outs = _as_tuple(out)

    def vjp_fn(*cotangents):
        cots = cotangents[0] if len(cotangents) == 1 and isinstance(cotangents[0], tuple) else cotangents
        if len(cots) != len(outs):
            raise RuntimeError(f"vjp_fn: expected {len(outs)} cotangents, got {len(cots)}")
        for c, o in zip(cots, outs):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"vjp_fn: cotangent of shape {tuple(c.shape)} for an output of shape "
                                   f"{tuple(o.shape)}")
        pairs = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
        if not pairs:
            return tuple(Tensor._make(np.zeros(x.shape, x.dtype)) for x in xs)
        with enable_grad():
            gs = _grad_of([o for o, _ in pairs], list(xs), [c for _, c in pairs])
        return _finish(gs, outer and _outermost(cots))

    outer = _outermost(primals)
    out = _finish(out, outer)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(func, primals, tangents, has_aux=False):
    """(func(*primals), J·tangents): the Jacobian-vector product by forward mode (one pass of f with
    dual tensors, mg.autograd.forward_ad)."""
    from ..autograd import forward_ad as fwAD
    primals, tangents = _as_tuple(primals), _as_tuple(tangents)
    if len(primals) != len(tangents):
        raise RuntimeError(f"jvp: Expected primals and tangents to have the same length (got {len(primals)} "
                           f"and {len(tangents)})")
    for p, t in zip(primals, tangents):
        if tuple(p.shape) != tuple(t.shape) or p.dtype != t.dtype:
            raise RuntimeError(f"jvp: tangent of shape {tuple(t.shape)} and dtype {t.dtype} for a primal of "
                               f"shape {tuple(p.shape)} and dtype {p.dtype}: they must match")
    if _vmap._levels and _vmap._any_batched(primals, tangents):  # forward mode on the physical tensors
        return _vmap._jvp(jvp, func, primals, tangents, has_aux)
    outer = _outermost(primals, tangents)
    with fwAD.dual_level():
        duals = tuple(fwAD.make_dual(p, t) for p, t in zip(primals, tangents))
        out = func(*duals)
        aux = None
        if has_aux:
            out, aux = out
        outs = _as_tuple(out)
        values, jvs = [], []
        for o in outs:
            value, tangent = fwAD.unpack_dual(o)
            values.append(value)
            jvs.append(Tensor._make(np.zeros(o.shape, o.dtype)) if tangent is None else tangent)
    value = tuple(values) if isinstance(out, tuple) else values[0]
    jv = tuple(jvs) if isinstance(out, tuple) else jvs[0]
    return _finish((value, jv, aux) if has_aux else (value, jv), outer)


def _jacobian_shapes(out, x):
    return tuple(out.shape) + tuple(x.shape)


def jacrev(func, argnums=0, has_aux=False):
    """The Jacobian of func w.r.t. args[argnums] by reverse mode: one VJP per output element."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        outer = _outermost(args, kwargs)
        args = list(args)
        with enable_grad():
            for a in nums:
                args[a] = _leaf(args[a])
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                out, aux = out
            xs = [args[a] for a in nums]
            jacs = []
            for x in xs:
                rows = []
                flat = out.reshape(-1)
                for i in range(flat.numel()):
                    if flat.requires_grad:
                        rows.append(_grad_of([flat[i]], [x])[0].reshape(-1))
                    else:
                        rows.append(Tensor._make(np.zeros(x.numel(), x.dtype)))
                from ..ops.shape import stack
                J = stack(rows) if rows else Tensor._make(np.zeros((0, x.numel()), x.dtype))
                jacs.append(J.reshape(*_jacobian_shapes(out, x)))
        J = jacs[0] if isinstance(argnums, int) else tuple(jacs)
        return _finish((J, aux) if has_aux else J, outer)
    return wrapper


def jacfwd(func, argnums=0, has_aux=False):
    """The Jacobian of func w.r.t. args[argnums] from one JVP per input basis vector."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        outer = _outermost(args, kwargs)
        jacs = []
        aux = None
        from ..ops.shape import stack
        for a in nums:
            x = args[a]
            cols = []
            out = None
            for j in range(x.numel()):
                e = np.zeros(x.numel(), x.dtype)
                e[j] = 1
                e = Tensor._make(e.reshape(x.shape))

                def f(xa, a=a):
                    call = list(args)
                    call[a] = xa
                    return func(*call, **kwargs)
                res = jvp(f, (x,), (e,), has_aux=has_aux)
                out, col = res[0], res[1]
                if has_aux:
                    aux = res[2]
                cols.append(col.reshape(-1))
            if out is None:
                out = func(*args, **kwargs)
                if has_aux:
                    out, aux = out
            J = stack(cols, -1) if cols else Tensor._make(np.zeros((out.numel(), 0), x.dtype))
            jacs.append(J.reshape(*_jacobian_shapes(out, x)))
        J = jacs[0] if isinstance(argnums, int) else tuple(jacs)
        return _finish((J, aux) if has_aux else J, outer)
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar func: jacfwd(jacrev(func)) (forward-over-reverse, as torch.func)."""
    return jacfwd(jacrev(func, argnums), argnums)


def functional_call(module, parameter_and_buffer_dicts, args=(), kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the given tensors (by
    name, as in state_dict); the module is left as it was afterwards."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (list, tuple)):
        merged = {}
        for d in dicts:
            dup = set(merged) & set(d)
            if dup:
                raise ValueError(f"functional_call: {sorted(dup)} appeared in multiple dictionaries")
            merged.update(d)
        dicts = merged
    args = args if isinstance(args, tuple) else (args,)
    known = dict(module.named_parameters()) | dict(module.named_buffers())
    if strict:
        missing, unexpected = set(known) - set(dicts), set(dicts) - set(known)
        if missing or unexpected:
            raise RuntimeError(f"functional_call: missing keys {sorted(missing)}, unexpected keys {sorted(unexpected)}")
    saved = []
    try:
        for name, value in dicts.items():
            if name not in known:
                raise RuntimeError(f"functional_call: no parameter or buffer named '{name}' in {type(module).__name__}")
            owner, attr = _owner(module, name)
            saved.append((owner, attr, owner.__dict__.get("_parameters", {}).get(attr, None),
                          owner.__dict__.get("_buffers", {}).get(attr, None)))
            _set(owner, attr, value)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, attr, p, b in reversed(saved):
            if p is not None:
                owner._parameters[attr] = p
            if b is not None:
                owner._buffers[attr] = b


def _owner(module, name):
    *path, attr = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, attr


def _set(owner, attr, value):
    if attr in owner._parameters:
        owner._parameters[attr] = value
    elif attr in owner._buffers:
        owner._buffers[attr] = value


vmap = _vmap.vmap
