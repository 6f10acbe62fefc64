"""mg.func: function transforms with torch.func's names — grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian, functional_call — composable (grad(grad(f)), jacrev(jacrev(f)), hessian(f)).

Every transform takes pytrees (tensors, or tuples/lists/dicts of them, nested) where torch.func
does: argnums select whole pytree arguments, jacrev/jacfwd give the Jacobian with the output's
structure outside and the input's inside, vjp's vjp_fn takes the output's structure and gives the
primals', jvp takes tuples of pytrees.

Each transform runs f once more with its tensor arguments replaced by inputs of its own: a fresh
leaf for a tensor that does not require grad, a fresh alias (an Alias op, so the outer graph stays
connected) for one that does -- a tensor an enclosing transform differentiates through. So a
transform's gradient counts only the paths through its own inputs (no perturbation confusion in
grad(... grad(...)(x) ...)(x)). It differentiates with the reverse-mode engine with
create_graph=True, so the result is itself differentiable and the transforms nest.

What a transform returns stays connected to the graph it depends on from outside the transform (a
closed-over tensor that requires grad, an enclosing transform's input) and is detached otherwise
(torch.func's results of an outermost transform do not require grad): see _Settle.

jvp and jacfwd are forward mode (mg.autograd.forward_ad: dual tensors, one pass of f per tangent);
hessian is forward-over-reverse, jacfwd(jacrev(f)), as torch.func. vmap (func/vmap.py) batches with
per-op rules (func/batching_rules.py); the transforms above run on its physical tensors inside it.
"""
import functools
from collections import OrderedDict

import numpy as np

from ..autograd import function as _function
from ..autograd import forward_ad as _forward_ad
from ..autograd import grad as _autograd_grad
from ..autograd.function import AccumulateGrad
from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor
from . import vmap as _vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call", "vmap",
           "stack_module_state", "make_functional", "make_functional_with_buffers"]


# -- the transform stacks this module reads (one line each to change when they become per-thread) --
def _dual_open():
    """The ids of this thread's open forward-AD levels (the transform stack, autograd/levels.py)."""
    return _forward_ad._open()


def _vmap_open():
    """Whether a vmap is running in this thread (the transform stack, autograd/levels.py)."""
    return bool(_vmap._running())


# -- pytrees -------------------------------------------------------------------------------------
def _tree_flatten(x):
    """(leaves, spec): the leaves of a pytree (tuples, lists, namedtuples and dicts are nodes,
    anything else a leaf) and its structure; specs compare equal when the structures are equal."""
    leaves = []
    return leaves, _flatten_into(x, leaves)


def _flatten_into(x, leaves):
    if isinstance(x, (tuple, list)):
        return (type(x), tuple(_flatten_into(v, leaves) for v in x))
    if isinstance(x, dict):
        keys = tuple(x)
        return (OrderedDict if type(x) is OrderedDict else dict, keys,
                tuple(_flatten_into(x[k], leaves) for k in keys))
    leaves.append(x)
    return None


def _tree_unflatten(spec, leaves):
    return _build(spec, iter(leaves))


def _build(spec, it):
    if spec is None:
        return next(it)
    if spec[0] is dict or spec[0] is OrderedDict:
        return spec[0]((k, _build(s, it)) for k, s in zip(spec[1], spec[2]))
    typ, kids = spec
    vals = [_build(s, it) for s in kids]
    return typ(*vals) if hasattr(typ, "_fields") else typ(vals)


def _spec_str(spec):
    if spec is None:
        return "*"
    if spec[0] is dict or spec[0] is OrderedDict:
        return "{" + ", ".join(f"{k!r}: {_spec_str(s)}" for k, s in zip(spec[1], spec[2])) + "}"
    inner = ", ".join(_spec_str(s) for s in spec[1])
    return f"[{inner}]" if spec[0] is list else f"({inner}{',' if len(spec[1]) == 1 else ''})"


def _leaves_like(spec, tree, what):
    """tree's leaves in the order of `spec` (dicts matched by key); raises when the structures differ."""
    leaves, tspec = _tree_flatten(tree)
    if tspec == spec:
        return leaves
    if _same_structure(spec, tspec):  # the same dicts, keys in another order: follow spec's order
        out = []
        _collect(spec, tree, out)
        return out
    raise RuntimeError(f"Expected pytree structure of {what}: {_spec_str(tspec)} vs {_spec_str(spec)}")


def _same_structure(a, b):
    if a is None or b is None:
        return a is None and b is None
    if (a[0] in (dict, OrderedDict)) != (b[0] in (dict, OrderedDict)):
        return False
    if a[0] in (dict, OrderedDict):
        if set(a[1]) != set(b[1]):
            return False
        kb = dict(zip(b[1], b[2]))
        return all(_same_structure(s, kb[k]) for k, s in zip(a[1], a[2]))
    return a[0] is b[0] and len(a[1]) == len(b[1]) and all(_same_structure(x, y) for x, y in zip(a[1], b[1]))


def _collect(spec, tree, out):
    if spec is None:
        out.append(tree)
    elif spec[0] in (dict, OrderedDict):
        for k, s in zip(spec[1], spec[2]):
            _collect(s, tree[k], out)
    else:
        for s, v in zip(spec[1], tree):
            _collect(s, v, out)


# -- a transform's inputs and results -------------------------------------------------------------
def _begin():
    """(start, own): the creation number before which every graph node is outside this transform,
    and the list that collects the transform's own fresh leaves."""
    return next(_function._seq), []


def _input(x, own):
    """x as a tensor this transform differentiates with respect to, and only through its own path:
    a fresh leaf (added to own) when x does not require grad, else a fresh alias of x, connected to
    the graph x is in (an enclosing transform differentiating through x sees through it)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"function transforms: expected Tensor arguments to differentiate (or dicts/lists/tuples "
                        f"of them), got {type(x).__name__}")
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"function transforms: only floating point or complex tensors can be differentiated "
                           f"(got {x.dtype})")
    if _vmap_open():          # inside vmap: per-sample inputs on the physical tensors (func/vmap.py)
        return _vmap._leaf(x, own)
    fw = x.__dict__.get("_fw")
    if x.requires_grad:
        a = _forward_ad.Alias.apply(x)
    else:
        a = x.detach().requires_grad_(True)
        own.append(a)
    if fw:                    # a dual tensor of an enclosing forward transform keeps its tangents
        a._fw = {**fw, **(a.__dict__.get("_fw") or {})}
    return a


def _inputs(args, nums, own):
    """args with the pytrees at argnums replaced by this transform's inputs; (args, the inputs
    flat, a function rebuilding a flat list -- one per input -- as the tuple of argnums' pytrees)."""
    args = list(args)
    flat, specs = [], []
    for a in nums:
        leaves, spec = _tree_flatten(args[a])
        leaves = [_input(x, own) for x in leaves]
        args[a] = _tree_unflatten(spec, leaves)
        flat.extend(leaves)
        specs.append((spec, len(leaves)))

    def rebuild(values):
        out, i = [], 0
        for spec, n in specs:
            out.append(_tree_unflatten(spec, values[i:i + n]))
            i += n
        return tuple(out)
    return args, flat, rebuild


class _Settle:
    """Detaches a transform's results from the graph it made, unless they depend on a graph from
    outside it.

    A result stays connected when its graph reaches a node from outside the transform: a node
    made before the transform started (nodes are numbered in creation order), or the
    AccumulateGrad of a leaf that is not one of the transform's own fresh leaves (a closed-over
    tensor, an enclosing transform's input). The walk is iterative and stops at the first such
    node; nodes a finished walk found no way out from are remembered for the next result.
    A detached result keeps its tangents at the forward-AD levels still open (settled the same
    way): an enclosing jvp/jacfwd reads them."""

    def __init__(self, start, own):
        self.start = start
        self.own = {id(t) for t in own}
        self.keep_alive = own  # (the own leaves stay alive, so their ids are not reused meanwhile)
        self.clean = set()
        self.open = set(_dual_open())

    def __call__(self, result):
        leaves, spec = _tree_flatten(result)
        if not any(isinstance(t, Tensor) for t in leaves):
            return result
        return _tree_unflatten(spec, [self.settle(t) if isinstance(t, Tensor) else t for t in leaves])

    def settle(self, t):
        if t.requires_grad and self.reaches_outside(t):
            return t
        return self.cut(t)

    def cut(self, t):
        if type(t) is _vmap.BatchedTensor:
            d = _vmap._wrap(self.cut(t._value), t._bdim, t._level)
        else:
            d = t.detach()
        fw = t.__dict__.get("_fw")
        if fw:
            keep = {lv: self.settle(v) for lv, v in fw.items() if lv in self.open}
            if keep:
                d._fw = keep
        return d

    def reaches_outside(self, t):
        fn = t.grad_fn
        if fn is None:         # a leaf requiring grad: outside unless it is one of ours
            return id(_vmap._peel(t)[0]) not in self.own
        clean, start, own = self.clean, self.start, self.own
        if fn in clean:
            return False
        seen = {fn}
        stack = [fn]
        while stack:
            node = stack.pop()
            if type(node) is AccumulateGrad:
                var = node._variable()
                if var is None or id(var) not in own:
                    return True
                continue
            if node._seq < start:
                return True
            for e in node._edges:
                nxt = e[0]
                if nxt is not None and nxt not in seen and nxt not in clean:
                    seen.add(nxt)
                    stack.append(nxt)
        clean |= seen
        return False


def _finish(result, start, own):
    """result settled (see _Settle): connected where it depends on a graph from outside the
    transform that began at `start` with fresh leaves `own`, detached elsewhere."""
    return _Settle(start, own)(result)


def _zeros_like(x):
    return Tensor._make(np.zeros(x.shape, x.dtype))


def _grad_of(outputs, inputs, grad_outputs=None):
    """Gradients of outputs w.r.t. inputs, differentiable again, zeros where an input is unused."""
    if _vmap_open():         # inside vmap: one backward of the physical tensors (func/vmap.py)
        return _vmap._grad_of(outputs, inputs, grad_outputs, _autograd_grad)
    gs = _autograd_grad(outputs, inputs, grad_outputs, retain_graph=True, create_graph=True, allow_unused=True)
    return tuple(_zeros_like(x) if g is None else g for g, x in zip(gs, inputs))


def _check_argnums(argnums, n):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int) or not -n <= a < n:
            raise RuntimeError(f"Got argnums={argnums}, but only {n} positional inputs")
    return nums


def _tensor_leaves(tree, what):
    leaves, spec = _tree_flatten(tree)
    for v in leaves:
        if not isinstance(v, Tensor):
            raise RuntimeError(f"{what}: expected a Tensor or a pytree (tuple/list/dict) of Tensors, got an element "
                               f"of type {type(v).__name__}")
    return leaves, spec


# -- the transforms -------------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of func's scalar output w.r.t. args[argnums], func's output).

    args[argnums] may be pytrees (dicts/lists/tuples of tensors): the gradient has their structure.
    With has_aux=True func returns (output, aux) and the result is (gradient, (output, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        start, own = _begin()
        with enable_grad():
            args, flat, rebuild = _inputs(args, nums, own)
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
            if not out.requires_grad:  # f does not depend on the inputs: the gradient is zero
                gflat = [_zeros_like(x) for x in flat]
            else:
                gflat = list(_grad_of([out], flat))
            gs = rebuild(gflat)
        g = gs[0] if isinstance(argnums, int) else gs
        return _finish((g, (out, aux)) if has_aux else (g, out), start, own)
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
    """(func(*primals), vjp_fn) where vjp_fn(cotangents) gives the cotangents of the primals.

    primals may be pytrees; vjp_fn takes cotangents with the structure of func's output and
    returns a tuple with one pytree per primal."""
    start, own = _begin()
    with enable_grad():
        xs, flat, rebuild = _inputs(primals, range(len(primals)), own)
        out = func(*xs)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            out, aux = out
    outs, out_spec = _tensor_leaves(out, "vjp(f, *primals)")

    def vjp_fn(*cotangents):
        cots = cotangents[0] if len(cotangents) == 1 else tuple(cotangents)
        if len(cotangents) == 1 and out_spec is not None and out_spec[0] is tuple and \
                not _same_structure(out_spec, _tree_flatten(cots)[1]):
            cots = tuple(cotangents)  # (c,) for an output (o,) given unpacked
        cots = _leaves_like(out_spec, cots, "cotangents to be the same as pytree structure of outputs to the "
                                            "function")
        for c, o in zip(cots, outs):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"vjp_fn: expected Tensor cotangents, got {type(c).__name__}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"vjp_fn: cotangent of shape {tuple(c.shape)} for an output of shape "
                                   f"{tuple(o.shape)}")
        pairs = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
        if not pairs:
            return _finish(rebuild([_zeros_like(x) for x in flat]), start, own)
        with enable_grad():
            gs = _grad_of([o for o, _ in pairs], flat, [c for _, c in pairs])
        return _finish(rebuild(list(gs)), start, own)

    out = _finish(out, start, own)
    if has_aux:
        return out, vjp_fn, _finish(aux, start, own)
    return out, vjp_fn


def jvp(func, primals, tangents, has_aux=False):
    """(func(*primals), J·tangents): the Jacobian-vector product by forward mode (one pass of f with
    dual tensors, mg.autograd.forward_ad). primals and tangents are tuples of pytrees of the same
    structure; the results have the structure of func's output."""
    if not isinstance(primals, tuple):  # as torch.func: a bare tensor (or a list) is refused, not wrapped
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be "
                           f"valid to call f(*primals) (got {type(primals).__name__})")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple of the same structure "
                           f"as primals (got {type(tangents).__name__})")
    if len(primals) != len(tangents):
        raise RuntimeError(f"jvp: Expected primals and tangents to have the same length (got {len(primals)} "
                           f"and {len(tangents)})")
    ps, spec = _tensor_leaves(primals, "jvp(f, primals, tangents)")
    ts = _leaves_like(spec, tangents, "tangents to be the same as pytree structure of primals")
    for p, t in zip(ps, ts):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"jvp: expected Tensor tangents, got {type(t).__name__}")
        if tuple(p.shape) != tuple(t.shape) or p.dtype != t.dtype:
            raise RuntimeError(f"jvp: tangent of shape {tuple(t.shape)} and dtype {t.dtype} for a primal of "
                               f"shape {tuple(p.shape)} and dtype {p.dtype}: they must match")
    for p in ps:
        if p.dtype.kind not in "fc":
            raise RuntimeError(f"jvp: only floating point or complex primals can carry a tangent (got {p.dtype})")
    out_spec = [None]

    def flat_func(*leaves):  # func on the flat primals, returning its output's leaves as a tuple
        out = func(*_tree_unflatten(spec, leaves))
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("jvp(f, primals, tangents): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            out, aux = out
        leaves, out_spec[0] = _tensor_leaves(out, "jvp(f, primals, tangents)")
        return (tuple(leaves), aux) if has_aux else tuple(leaves)

    if _vmap_open() and _vmap._any_batched(ps, ts):  # forward mode on the physical tensors
        res = _vmap._jvp(_jvp_flat, flat_func, tuple(ps), tuple(ts), has_aux)
    else:
        res = _jvp_flat(flat_func, tuple(ps), tuple(ts), has_aux)
    value = _tree_unflatten(out_spec[0], res[0])
    jv = _tree_unflatten(out_spec[0], res[1])
    return (value, jv, res[2]) if has_aux else (value, jv)


def _jvp_flat(func, primals, tangents, has_aux=False, under=None):
    """jvp of a function of tensors returning a tuple of tensors (vmap's _jvp calls it back with the
    physical tensors, its dual level opened `under` the outermost vmap batching them)."""
    start, own = _begin()
    with (_forward_ad.dual_level() if under is None else _forward_ad._dual_level_under(under)) as lv:
        duals = tuple(_forward_ad.make_dual(p, t, level=lv) for p, t in zip(primals, tangents))
        out = func(*duals)
        aux = None
        if has_aux:
            out, aux = out
        values, jvs = [], []
        for o in out:
            value, tangent = _forward_ad.unpack_dual(o, level=lv)
            values.append(value)
            jvs.append(_zeros_like(o) if tangent is None else tangent)
    res = (tuple(values), tuple(jvs))
    return _finish(res + (aux,) if has_aux else res, start, own)


def _argnum_inputs(args, nums, what):
    """([the tensors of args[a]'s pytree, for a in nums], [args[a]'s spec, for a in nums]), checked to
    be floating point tensors."""
    leaves, specs = [], []
    for a in nums:
        ls, spec = _tensor_leaves(args[a], what)
        for x in ls:
            if x.dtype.kind != "f":
                raise RuntimeError(f"{what}: only floating point tensors can be differentiated (got {x.dtype})")
        leaves.append(ls)
        specs.append(spec)
    return leaves, specs


def _jacobian_tree(out_spec, blocks, in_specs, int_argnums):
    """blocks[k][j]: the Jacobian of output leaf k w.r.t. input leaf j (over all argnums) -> the
    output's structure outside, the input's inside."""
    def inner(row):
        parts, i = [], 0
        for spec, n in in_specs:
            parts.append(_tree_unflatten(spec, row[i:i + n]))
            i += n
        return parts[0] if int_argnums else tuple(parts)
    return _tree_unflatten(out_spec, [inner(row) for row in blocks])


def jacrev(func, argnums=0, has_aux=False):
    """The Jacobian of func w.r.t. args[argnums] by reverse mode: one VJP per output element.

    args[argnums] and func's output may be pytrees: the result has the output's structure outside
    and the input's inside (as torch.func.jacrev), each block of shape out.shape + in.shape."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        leaves, specs = _argnum_inputs(args, nums, "jacrev")
        in_specs = [(s, len(ls)) for s, ls in zip(specs, leaves)]
        start, own = _begin()
        from ..ops.shape import stack
        with enable_grad():
            args, xs, _ = _inputs(args, nums, own)
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("jacrev(f, ...)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                out, aux = out
            outs, out_spec = _tensor_leaves(out, "jacrev(f, ...)(*args)")
            blocks = []
            for o in outs:
                rows = [[] for _ in xs]
                flat = o.reshape(-1)
                for i in range(flat.numel()):
                    if flat.requires_grad:
                        gs = _grad_of([flat[i]], xs)
                    else:
                        gs = [_zeros_like(x) for x in xs]
                    for r, g in zip(rows, gs):
                        r.append(g.reshape(-1))
                blocks.append([(stack(r) if r else Tensor._make(np.zeros((0, x.numel()), x.dtype)))
                               .reshape(*(tuple(o.shape) + tuple(x.shape))) for r, x in zip(rows, xs)])
        J = _jacobian_tree(out_spec, blocks, in_specs, isinstance(argnums, int))
        return _finish((J, aux) if has_aux else J, start, own)
    return wrapper


def jacfwd(func, argnums=0, has_aux=False):
    """The Jacobian of func w.r.t. args[argnums] from one JVP per input basis vector (pytrees as
    jacrev)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        leaves, specs = _argnum_inputs(args, nums, "jacfwd")
        start, own = _begin()
        from ..ops.shape import stack
        xs = [x for ls in leaves for x in ls]
        cols = None          # cols[k][j]: the columns of output leaf k for input leaf j
        out = aux = None
        j = 0
        for na, a in enumerate(nums):
            for idx, x in enumerate(leaves[na]):
                def f(xa, na=na, a=a, idx=idx):
                    call = list(args)
                    ls = list(leaves[na])
                    ls[idx] = xa
                    call[a] = _tree_unflatten(specs[na], ls)
                    return func(*call, **kwargs)
                for e in range(x.numel()):
                    basis = np.zeros(x.numel(), x.dtype)
                    basis[e] = 1
                    res = jvp(f, (x,), (Tensor._make(basis.reshape(x.shape)),), has_aux=has_aux)
                    out, col = res[0], res[1]
                    if has_aux:
                        aux = res[2]
                    col_leaves, _ = _tree_flatten(col)
                    if cols is None:
                        cols = [[[] for _ in xs] for _ in col_leaves]
                    for k, c in enumerate(col_leaves):
                        cols[k][j].append(c.reshape(-1))
                j += 1
        if out is None:      # no input element: f runs once for the output's shapes
            out = func(*args, **kwargs)
            if has_aux:
                out, aux = out
        outs, out_spec = _tensor_leaves(out, "jacfwd(f, ...)(*args)")
        if cols is None:
            cols = [[[] for _ in xs] for _ in outs]
        blocks = [[(stack(cols[k][jj], -1) if cols[k][jj] else Tensor._make(np.zeros((o.numel(), 0), x.dtype)))
                   .reshape(*(tuple(o.shape) + tuple(x.shape))) for jj, x in enumerate(xs)]
                  for k, o in enumerate(outs)]
        J = _jacobian_tree(out_spec, blocks, [(s, len(ls)) for s, ls in zip(specs, leaves)], isinstance(argnums, int))
        return _finish((J, aux) if has_aux else J, start, own)
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


def stack_module_state(models):
    """(params, buffers): each parameter and buffer of `models` (modules of one class, all in train or
    all in eval mode) stacked along a new leading dimension, by name, as torch.func.stack_module_state.

    The stacked parameters are new leaves that require grad (when the models' do); the buffers do
    not. With a stateless copy of one model (``copy.deepcopy(models[0]).to('meta')``),
    ``vmap(lambda p, b, x: functional_call(base, (p, b), (x,)))(params, buffers, xs)`` runs every
    model at once (PyTorch's model-ensembling pattern).

    Example:
        >>> models = [nn.Linear(3, 2) for _ in range(4)]
        >>> params, buffers = mg.func.stack_module_state(models)
        >>> params["weight"].shape
        (4, 2, 3)
    """
    from ..ops.shape import stack
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(items, name, leaf):
        shapes = {tuple(t.shape) for t in items}
        if len(shapes) > 1:
            raise RuntimeError(f"stack_module_state: '{name}' has different shapes across the models: "
                               f"{sorted(shapes)}")
        grads = {bool(t.requires_grad) for t in items}
        if leaf and len(grads) > 1:
            raise RuntimeError(f"stack_module_state: Expected {name} from each model to have the same "
                               f"requires_grad")
        out = stack([t.detach() for t in items])
        return out.requires_grad_() if leaf and grads == {True} else out

    names = [n for n, _ in models[0].named_parameters()]
    params = {n: stacked([dict(m.named_parameters())[n] for m in models], n, True) for n in names}
    bnames = [n for n, _ in models[0].named_buffers()]
    buffers = {n: stacked([dict(m.named_buffers())[n] for m in models], n, False) for n in bnames}
    return params, buffers


class FunctionalModuleWithBuffers:
    """What make_functional_with_buffers returns: ``fmodel(params, buffers, *args, **kwargs)`` runs
    the module with the given tensors in place of its parameters and buffers (in named order)."""

    def __init__(self, stateless_model, param_names, buffer_names):
        self.stateless_model = stateless_model
        self.param_names, self.buffer_names = tuple(param_names), tuple(buffer_names)

    def __call__(self, params, buffers, *args, **kwargs):
        if len(params) != len(self.param_names) or len(buffers) != len(self.buffer_names):
            raise ValueError(f"{type(self).__name__}: expected {len(self.param_names)} parameters and "
                             f"{len(self.buffer_names)} buffers, got {len(params)} and {len(buffers)}")
        state = dict(zip(self.param_names, params)) | dict(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, state, args, kwargs)

    def __repr__(self):
        inner = "\n".join("  " + line for line in f"(stateless_model): {self.stateless_model!r}".splitlines())
        return f"{type(self).__name__}(\n{inner}\n)"


class FunctionalModule(FunctionalModuleWithBuffers):
    """What make_functional returns: ``fmodel(params, *args, **kwargs)`` (the module's buffers are
    its own)."""

    def __call__(self, params, *args, **kwargs):
        if len(params) != len(self.param_names):
            raise ValueError(f"FunctionalModule: expected {len(self.param_names)} parameters, got {len(params)}")
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)), args, kwargs)


def _make_functional(model, disable_autograd_tracking, name, with_buffers):
    import copy
    import warnings
    from ..nn import Module
    warnings.warn(f"We've integrated functorch into PyTorch. As the final step of the integration, "
                  f"`functorch.{name}` is deprecated as of PyTorch 2.0 and will be deleted in a future version of "
                  f"PyTorch >= 2.3. Please use `torch.func.functional_call` instead; see the PyTorch 2.0 release "
                  f"notes and/or the `torch.func` migration guide for more details "
                  f"https://pytorch.org/docs/main/func.migrating.html", FutureWarning, stacklevel=3)
    if not isinstance(model, Module):
        raise TypeError(f"{name}: expected an nn.Module, got {type(model).__name__}")
    if not with_buffers and any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    base = copy.deepcopy(model)
    pn, params = zip(*base.named_parameters()) if any(True for _ in base.parameters()) else ((), ())
    bn, buffers = zip(*base.named_buffers()) if with_buffers and any(True for _ in base.buffers()) else ((), ())
    # the caller's tensors are copies (the model is left alone), as functorch's
    params = tuple(p.detach() if disable_autograd_tracking else p for p in params)
    base_meta = copy.deepcopy(base).to("meta")
    cls = FunctionalModuleWithBuffers if with_buffers else FunctionalModule
    fmodel = cls(base_meta, pn, bn)
    return (fmodel, params, tuple(buffers)) if with_buffers else (fmodel, params)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """(fmodel, params, buffers): functorch's make_functional_with_buffers (deprecated in PyTorch in
    favour of functional_call, and warns as PyTorch's). params and buffers are copies of the model's
    (tuples, in named order); ``fmodel(params, buffers, *args)`` runs a stateless (meta) copy of the
    model with them, so ``vmap(fmodel)`` over stacked params ensembles models.

    Args:
        model (nn.Module): the module.
        disable_autograd_tracking (bool): give the params detached (no grad). Default: False.
    """
    return _make_functional(model, disable_autograd_tracking, "make_functional_with_buffers", True)


def make_functional(model, disable_autograd_tracking=False):
    """(fmodel, params): functorch's make_functional, for a model without buffers (deprecated in
    PyTorch, and warns as PyTorch's); ``fmodel(params, *args)``. See make_functional_with_buffers."""
    return _make_functional(model, disable_autograd_tracking, "make_functional", False)


vmap = _vmap.vmap
