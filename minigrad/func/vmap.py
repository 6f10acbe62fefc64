"""mg.func.vmap: vectorizing map with torch.func.vmap's semantics (in_dims, out_dims, nesting,
randomness=, chunk_size), batching for real rather than looping.

A value inside vmap is a BatchedTensor: a *physical* tensor with one extra dimension (the batch
dim `_bdim`) that belongs to one vmap `level`; the function sees its *logical* shape (without that
dim). While a vmap is running, Function.apply is interposed (as forward AD does: the wrapper is
installed when the first level opens and removed when the last closes, so nothing is paid
outside vmap). The interposer sees the op's arguments batched at the innermost level and calls
the op's batching rule (minigrad/func/batching_rules.py), which moves or folds the batch dim and
calls ops on the physical tensors. So the reverse-mode engine records the physical computation
as usual: grad(vmap(f)) needs nothing special. An op without a rule falls back to a Python loop
over the batch, with a one-time performance warning naming it (as functorch does).

Transforms inside vmap (vmap(grad(f)), vmap(jvp(f, ...)), vmap(jacrev(f))) are run on the
physical tensors: grad's inputs become per-sample leaves (an input that is not batched, such as
the parameters in `vmap(grad(loss), in_dims=(None, 0, 0))`, is expanded to one copy per sample),
and since the samples of a batched computation are independent, one backward of the physical
outputs gives every sample's gradient at once. That is how per-sample gradients come out of one
backward pass instead of a loop.

Nested vmap: each vmap is a level; a BatchedTensor's physical tensor may itself be batched at an
outer level. The rules only ever look at the innermost level of their arguments.
"""
import functools
import itertools
import warnings

import numpy as np

from ..autograd import function as _function
from ..autograd import levels as _levels_mod
from ..autograd.grad_mode import _state
from ..tensor import Tensor

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


class _Level(_levels_mod.Level):
    """A running vmap: a level of the transform stack (autograd/levels.py). An op with an argument
    batched at this level runs its batching rule (or the per-sample loop), below this level."""

    kind = "vmap"

    def __init__(self, size, randomness):
        self.size, self.randomness = size, randomness

    def process(self, cls, args):
        me = self.id
        batched = False
        for a in args:
            t = type(a)
            if t is BatchedTensor:
                if a._level == me:
                    batched = True
                    break
            elif (t is _Physical or t is tuple or t is list) and _level_of(a) == me:
                batched = True
                break
        if getattr(cls, "_random", False):
            return _levels_mod.run_below(self, _random_op, self, cls, args, batched)
        if not batched:
            return _levels_mod.below(self, cls, args)
        return _levels_mod.run_at(self, _batch, cls, me, args)


def _batch(cls, level, args):
    """The op on arguments batched at `level`: its batching rule, or the loop over the batch."""
    from .batching_rules import rule_for, Fallback
    rule = rule_for(cls)
    if rule is not None:
        try:
            return rule(cls, level, args)
        except Fallback:
            pass
    return _fallback(cls, level, args)


_by_id = {}       # the running vmaps by level id (ids are unique: a BatchedTensor names its level)
_new = object.__new__


# -- the batched value ---------------------------------------------------------------------------
class _Physical(np.ndarray):
    """The array a wrapper reads through a BatchedTensor's `_data` (e.g. an index tensor turned into
    a NumPy index): it remembers the BatchedTensor, so the interposer can batch the op over it
    (by the fallback loop) instead of silently using the physical layout."""
    _bt = None


def _value_error(what):
    return RuntimeError(f"vmap: It looks like you're calling {what} on a Tensor inside vmap. We don't support "
                        f"vmap over {what} (the value differs per sample); please rewrite it with tensor "
                        f"operations, or move it out of the vmapped function.")


class BatchedTensor(Tensor):
    """A tensor inside vmap: `_value` (physical tensor) with the batch of vmap level `_level` at
    dimension `_bdim`. Shape, ndim, size and numel are logical (per sample); the autograd fields
    are the physical tensor's, so the engine sees the physical graph."""

    # -- physical storage and autograd fields: the physical tensor's ------------------------------
    @property
    def _data(self):
        arr = self._value._data.view(_Physical)
        arr._bt = self
        return arr

    @_data.setter
    def _data(self, value):
        raise RuntimeError("vmap: writing a BatchedTensor's data directly is not supported")

    requires_grad = property(lambda self: self._value.requires_grad,
                             lambda self, v: setattr(self._value, "requires_grad", v))
    grad_fn = property(lambda self: self._value.grad_fn, lambda self, v: setattr(self._value, "grad_fn", v))
    _output_nr = property(lambda self: self._value._output_nr,
                          lambda self, v: setattr(self._value, "_output_nr", v))
    _vc = property(lambda self: self._value._vc, lambda self, v: setattr(self._value, "_vc", v))

    # -- logical metadata ---------------------------------------------------------------------
    @property
    def shape(self):
        s = self._value.shape
        return s[:self._bdim] + s[self._bdim + 1:]

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return self._value.ndim - 1

    def dim(self):
        return self.ndim

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def is_floating_point(self):
        return self.dtype.kind == "f"

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n{self._value!r})"

    # -- autograd: detach / requires_grad_ act on the physical tensor -------------------------
    def detach(self):
        return _wrap(self._value.detach(), self._bdim, self._level)

    def requires_grad_(self, requires_grad=True):
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def data(self):
        return _wrap(self._value.data, self._bdim, self._level)

    def backward(self, *args, **kwargs):
        raise RuntimeError("vmap: backward() on a tensor inside vmap is not supported (as in torch.func); use "
                           "mg.func.grad / mg.func.vjp inside vmap instead")

    # -- values: data-dependent per sample --------------------------------------------------------
    def item(self):
        raise _value_error(".item()")

    def tolist(self):
        raise _value_error(".tolist()")

    def numpy(self):
        raise _value_error(".numpy()")

    def __array__(self, dtype=None, copy=None):
        raise _value_error("np.asarray()")

    def __bool__(self):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow (bool()). We don't support that inside vmap; use mg.where instead.")

    def __float__(self):
        raise _value_error("float()")

    def __int__(self):
        raise _value_error("int()")

    def __index__(self):
        raise _value_error("__index__ (a tensor used as an index or a size)")

    def __reduce__(self):
        raise RuntimeError("vmap: a BatchedTensor cannot be pickled or copied out of vmap")


def _wrap(value, bdim, level):
    t = _new(BatchedTensor)
    t._value, t._bdim, t._level = value, bdim, level
    return t


def _level_of(a):
    """The vmap level of a (a BatchedTensor, or an array read through one), or 0."""
    if type(a) is BatchedTensor:
        return a._level
    if type(a) is _Physical:
        bt = a._bt
        return bt._level if bt is not None else 0
    if type(a) is tuple or type(a) is list:
        return max((_level_of(v) for v in a), default=0)
    return 0


def _size(level):
    lv = _by_id.get(level)
    if lv is not None:
        return lv.size
    raise RuntimeError(f"vmap: level {level} is not running (a BatchedTensor escaped its vmap)")


def _is_batched(a, level):
    return type(a) is BatchedTensor and a._level == level


def _front(a):
    """a's physical tensor with the batch dim first."""
    v, d = a._value, a._bdim
    if d == 0:
        return v
    return v.permute(d, *[i for i in range(v.ndim) if i != d])


def _move(t, src, dst):
    """t with dimension src moved to dst (a permute)."""
    if src == dst:
        return t
    order = [i for i in range(t.ndim) if i != src]
    order.insert(dst, src)
    return t.permute(*order)


def _batched_at(t, level):
    while type(t) is BatchedTensor:
        if t._level == level:
            return True
        t = t._value
    return False


def _lift(x, levels):
    """x as a BatchedTensor at every level in `levels` (ascending): expanded where it is not batched."""
    if not levels:
        return x
    top = levels[-1]
    if type(x) is BatchedTensor and x._level == top:
        return _wrap(_lift(x._value, levels[:-1]), x._bdim, top)
    inner = _lift(x, levels[:-1])
    return _wrap(inner.unsqueeze(0).expand(_size(top), *inner.shape), 0, top)


def _expand_to(x, level):
    """x batched at `level` (bdim 0), expanded from one copy where it is not batched there."""
    if _is_batched(x, level):
        return _front(x)
    return x.unsqueeze(0).expand(_size(level), *x.shape)


def _peel(t):
    """(plain physical tensor, [(level, bdim), ...] innermost level first)."""
    layers = []
    while type(t) is BatchedTensor:
        layers.append((t._level, t._bdim))
        t = t._value
    return t, layers


def _rebuild(base, layers):
    for level, bdim in reversed(layers):
        base = _wrap(base, bdim, level)
    return base


def _canonical(x, levels):
    """The plain tensor of shape (B_1, ..., B_k, *logical) for levels (ascending) 1..k."""
    if not levels:
        return x
    top = levels[-1]
    if type(x) is BatchedTensor and x._level == top:
        v = _front(x)
    else:
        v = x.unsqueeze(0).expand(_size(top), *x.shape)
    return _canonical(v, levels[:-1])


def _from_canonical(p, levels):
    for level in levels:
        p = _wrap(p, 0, level)
    return p


def _running():
    """This thread's running vmaps (in the current, possibly cut, stack), outermost first."""
    levels = _state.levels
    return [lv for lv in levels if lv.kind == "vmap"] if levels else levels


def _enter(size, randomness):
    lv = _levels_mod.push(_Level(size, randomness))
    _by_id[lv.id] = lv
    return lv.id


def _exit(level):
    _levels_mod.pop(_by_id[level])  # raises, naming both, when a level entered inside is still open
    del _by_id[level]


# -- fallback: a loop over the batch -----------------------------------------------------------------
_warned = set()


def _op_name(cls):
    return _function._op_name(cls)


def _warn_fallback(name):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                      f"{name}. vmap falls back to a Python loop over the batch for it (an op declares its rule "
                      f"in its `batching` attribute: docs/adding-an-op.md).", UserWarning, stacklevel=4)


def _select(a, level, i):
    """Sample i at `level` of an argument (tensors, arrays read through one, tuples/lists of them)."""
    t = type(a)
    if t is BatchedTensor:
        if a._level != level:
            return a
        v = a._value
        return v[(slice(None),) * a._bdim + (i,)]
    if t is _Physical:
        bt = a._bt
        if bt is None or bt._level != level:
            return a.view(np.ndarray) if bt is None else a
        return _select(bt, level, i)._data
    if t is tuple or t is list:
        return t(_select(v, level, i) for v in a)
    return a


def _fallback(cls, level, args):
    _warn_fallback(_op_name(cls))
    size = _size(level)
    if size == 0:
        raise RuntimeError(f"vmap: {_op_name(cls)} has no batching rule and the batch is empty: its output shape "
                           f"cannot be found by the fallback loop")
    from ..ops.shape import stack
    outs = [cls.apply(*[_select(a, level, i) for a in args]) for i in range(size)]
    first = outs[0]
    if type(first) is tuple:
        return tuple(_stack_outputs([o[k] for o in outs], level, cls) for k in range(len(first)))
    return _stack_outputs(outs, level, cls)


def _stack_outputs(outs, level, cls):
    from ..ops.shape import stack
    if not isinstance(outs[0], Tensor):
        return outs[0]
    shapes = {tuple(o.shape) for o in outs}
    if len(shapes) > 1:
        raise RuntimeError(f"vmap: {_op_name(cls)} gives outputs of different shapes for different samples "
                           f"({sorted(shapes)}); vmap needs one shape per output")
    return _wrap(stack(outs, 0), 0, level)


def _physical_as(res, x):
    """res (x's logical shape) laid out as x's physical tensor at x's level: its batch dim at x's."""
    level = x._level
    if _is_batched(res, level):
        v = _move(res._value, res._bdim, x._bdim)
    else:
        v = _move(res.unsqueeze(0).expand(_size(level), *res.shape), 0, x._bdim)
    return v


# -- public ops whose wrapper reads its tensors' values: a loop at the wrapper ----------------------------
def batched_by_loop(fn):
    """Decorator for a public op whose Python wrapper reads an argument's values or checks its shape
    before Function.apply (index checks and index arithmetic in NumPy: gather with a batched index,
    scatter, index_select, ...): inside vmap, with a batched argument, the wrapper would see the
    physical (batch-including) array. With a batched argument it runs once per sample of the innermost
    level instead (the loop fallback, with its one-time performance warning), the results stacked.
    Outside vmap it costs one list test."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _state.levels and _running():
            level = max(_level_of(a) for a in itertools.chain(args, kwargs.values()))
            if level:   # each sample through the wrapper again: it may be batched at an outer level
                return _loop_call(wrapper, name, level, args, kwargs)
        return fn(*args, **kwargs)
    return wrapper


_DYNAMIC = "has a data-dependent output shape (it may differ per sample)"


def not_batchable(what, why=_DYNAMIC):
    """Decorator for a public op vmap cannot batch: one whose output shape depends on the values
    (nonzero, masked_select) or that returns a Python value (equal, allclose). Inside vmap with a
    batched argument it raises (as torch.func.vmap does) instead of answering for the physical array."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _state.levels and _running():
                raise_if_batched(what, *args, *kwargs.values(), why=why)
            return fn(*args, **kwargs)
        return wrapper
    return deco


def raise_if_batched(what, *values, why=_DYNAMIC):
    if _state.levels and _running() and max((_level_of(v) for v in values), default=0):
        raise RuntimeError(f"vmap: {what} {why}, which vmap cannot batch; call it outside vmap")


def _loop_call(fn, name, level, args, kwargs):
    _warn_fallback(name)
    size = _size(level)
    if size == 0:
        raise RuntimeError(f"vmap: {name} has no batching rule and the batch is empty: its output shape "
                           f"cannot be found by the fallback loop")
    outs = [fn(*[_select(a, level, i) for a in args], **{k: _select(v, level, i) for k, v in kwargs.items()})
            for i in range(size)]
    first = outs[0]
    if isinstance(first, tuple):
        parts = [_stack_outputs([o[k] for o in outs], level, fn) for k in range(len(first))]
        return type(first)(*parts) if hasattr(first, "_fields") else type(first)(parts)
    return _stack_outputs(outs, level, fn)


# -- randomness ------------------------------------------------------------------------------------------
def _random_op(vlevel, cls, args, batched):
    """A random op at a vmap level (run below it): 'error' raises, 'same' draws once for the level's
    samples, 'different' draws one per sample (a loop over the batch when an argument is batched)."""
    if vlevel.randomness == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation "
                           "out of vmap")
    if batched:
        return _fallback(cls, vlevel.id, args)
    if vlevel.randomness == "same":
        return cls.apply(*args)
    if args and isinstance(args[0], tuple):  # (shape, ...) (a tuple or mg.Size): one draw per sample
        out = cls.apply((vlevel.size,) + tuple(args[0]), *args[1:])
        return _wrap(out, 0, vlevel.id)
    raise RuntimeError(f"vmap: randomness='different' is not supported for {_op_name(cls)}")


# -- transforms inside vmap (called from mg.func) -----------------------------------------------------------
def _active():
    return [lv.id for lv in _running()]


def _any_batched(*trees):
    return any(type(t) is BatchedTensor for t in _flatten(trees))


def _flatten(x):
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _flatten(v)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _flatten(v)
    else:
        yield x


def _leaf(x, own=None):
    """A transform's input inside vmap, batched at every running level: a per-sample fresh leaf
    (appended to `own`), or, when the physical tensor requires grad (an enclosing transform
    differentiates through x, or x is closed over), a fresh alias of it: the graph stays connected
    and the transform's gradient counts only the paths through its own input."""
    base, layers = _peel(_lift(x, _active()))
    fw = base.__dict__.get("_fw")
    if base.requires_grad:
        from ..autograd.forward_ad import Alias
        base = Alias.apply(base)
    else:
        base = base.detach().requires_grad_(True)
        if own is not None:
            own.append(base)
    if fw:
        base._fw = {**fw, **(base.__dict__.get("_fw") or {})}
    return _rebuild(base, layers)


def _grad_of(outputs, inputs, grad_outputs, autograd_grad):
    """Gradients of outputs w.r.t. inputs inside vmap, computed on the physical tensors."""
    outputs = list(outputs)
    inputs = list(inputs)
    cots = list(grad_outputs) if grad_outputs is not None else [None] * len(outputs)
    levels = _active()
    for lv in reversed(levels):
        if any(not _batched_at(x, lv) for x in inputs) and \
                any(_batched_at(t, lv) for t in outputs + cots if t is not None):
            return _grad_loop(lv, outputs, inputs, cots, autograd_grad, levels)
    need = [lv for lv in levels if any(_batched_at(t, lv) for t in outputs + cots if t is not None)]
    pouts, pcots = [], []
    for o, c in zip(outputs, cots):
        if c is None:
            c = Tensor._make(np.ones(o.shape, o.dtype))
        pouts.append(_canonical(o, need))
        pcots.append(_canonical(c, need))
    peeled = [_peel(x) for x in inputs]
    gs = autograd_grad(pouts, [b for b, _ in peeled], pcots, retain_graph=True, create_graph=True,
                       allow_unused=True)
    return tuple(Tensor._make(np.zeros(x.shape, x.dtype)) if g is None else _rebuild(g, layers)
                 for g, x, (_, layers) in zip(gs, inputs, peeled))


def _grad_loop(lv, outputs, inputs, cots, autograd_grad, levels):
    """A backward whose graph is not batched at level lv (e.g. vmap over vjp_fn of a graph recorded
    outside the vmap): one backward per sample of lv."""
    if lv != levels[-1]:
        raise NotImplementedError("vmap: differentiating a graph recorded outside an outer vmap level "
                                  "from inside a nested vmap is not supported")
    _warn_fallback("autograd.grad of a graph recorded outside vmap")
    from ..ops.shape import stack
    per = []
    for i in range(_size(lv)):
        o_i = [_select(o, lv, i) for o in outputs]
        c_i = [None if c is None else _select(c, lv, i) for c in cots]
        gs = _grad_of_below(lv, o_i, inputs, c_i, autograd_grad)
        per.append([_select(g, lv, i) for g in gs])
    return tuple(_wrap(stack([p[k] for p in per], 0), 0, lv) for k in range(len(inputs)))


def _grad_of_below(lv, outputs, inputs, cots, autograd_grad):
    """_grad_of with level lv taken as not running (its sample already selected)."""
    return _levels_mod.run_without(_by_id[lv], _grad_of_rest, outputs, inputs, cots, autograd_grad)


def _grad_of_rest(outputs, inputs, cots, autograd_grad):
    if _running() and (_any_batched(outputs, inputs, cots)):
        return _grad_of(outputs, inputs, cots, autograd_grad)
    outs = [o for o in outputs]
    cs = [Tensor._make(np.ones(o.shape, o.dtype)) if c is None else c for o, c in zip(outs, cots)]
    base = [_peel(x)[0] for x in inputs]
    gs = autograd_grad(outs, base, cs, retain_graph=True, create_graph=True, allow_unused=True)
    return tuple(Tensor._make(np.zeros(b.shape, b.dtype)) if g is None else g for g, b in zip(gs, base))


def _rewrap_like(g, x):
    _, layers = _peel(x)
    return _rebuild(g, layers)


def _jvp(jvp, func, primals, tangents, has_aux):
    """jvp inside vmap: forward mode on the physical tensors (batch dims first, one per level).

    `jvp(f, primals, tangents, has_aux, under)` opens its dual level below the outermost vmap
    batching the primals or tangents: the ops the batching rules run on the physical tensors carry
    the tangents, and a grad inside (which differentiates the physical graph, _grad_of) sees them,
    so vmap(jvp(grad(f))) is exact."""
    levels = _active()
    need = [lv for lv in levels if any(_batched_at(t, lv) for t in tuple(primals) + tuple(tangents))]
    P = tuple(_canonical(p, need) for p in primals)
    T = tuple(_canonical(t, need) for t in tangents)
    single = [False]

    def f_phys(*ps):
        out = func(*[_from_canonical(p, need) for p in ps])
        aux = None
        if has_aux:
            out, aux = out
        single[0] = not isinstance(out, tuple)
        outs = tuple(_canonical(o, need) for o in (out if isinstance(out, tuple) else (out,)))
        res = outs[0] if single[0] else outs
        return (res, aux) if has_aux else res
    res = jvp(f_phys, P, T, has_aux, _by_id[need[0]])
    back = (lambda v: _from_canonical(v, need)) if single[0] else \
        (lambda v: tuple(_from_canonical(x, need) for x in v))
    out = (back(res[0]), back(res[1]))
    return out + (res[2],) if has_aux else out


# -- vmap itself -----------------------------------------------------------------------------------
def _tree_flatten(x):
    """(leaves, rebuild) over tuples (namedtuples included, as torch's pytrees: sort, max(dim=)),
    lists and dicts (other values are leaves)."""
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        leaves, rb = _tree_flatten(tuple(x))
        return leaves, lambda vals: type(x)(*rb(vals))
    if isinstance(x, (tuple, list)):
        parts = [_tree_flatten(v) for v in x]
        sizes = [len(p[0]) for p in parts]

        def rebuild(vals):
            out, i = [], 0
            for (_, rb), n in zip(parts, sizes):
                out.append(rb(vals[i:i + n]))
                i += n
            return type(x)(out)
        return [v for p in parts for v in p[0]], rebuild
    if isinstance(x, dict):
        keys = list(x)
        parts = [_tree_flatten(x[k]) for k in keys]
        sizes = [len(p[0]) for p in parts]

        def rebuild(vals):
            out, i = {}, 0
            for k, (_, rb), n in zip(keys, parts, sizes):
                out[k] = rb(vals[i:i + n])
                i += n
            return out
        return [v for p in parts for v in p[0]], rebuild
    return [x], lambda vals: vals[0]


def _broadcast_dims(dims, tree, what):
    """One dim per leaf of tree: an int/None applies to the whole subtree; a tuple/list/dict must
    match the structure (PyTorch's in_dims / out_dims rule)."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_tree_flatten(tree)[0])
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(dims) != len(tree):
            raise ValueError(f"vmap: {what} is not compatible with the structure of the inputs: {what} has "
                             f"{len(dims)} entries but there are {len(tree)} (got {what}={dims})")
        return [d for sub_d, sub_t in zip(dims, tree) for d in _broadcast_dims(sub_d, sub_t, what)]
    if isinstance(dims, dict) and isinstance(tree, dict):
        if set(dims) != set(tree):
            raise ValueError(f"vmap: {what} keys {sorted(dims)} do not match {sorted(tree)}")
        return [d for k in tree for d in _broadcast_dims(dims[k], tree[k], what)]
    raise ValueError(f"vmap: {what}={dims!r} is not compatible with the structure of the inputs "
                     f"({type(tree).__name__}); expected an int, None, or a matching tuple/list/dict")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func vectorized over a batch dimension of its inputs (torch.func.vmap).

    Args:
        func: a function of tensors (or tuples/lists/dicts of them) returning tensors.
        in_dims: the batch dim of each input: an int (all inputs), None (not batched), or a
            tuple/list/dict matching the arguments' structure (entries may themselves be nested).
        out_dims: where the batch dim goes in each output (int, None, or matching structure).
        randomness: "error" (a random op inside raises), "different" (each sample draws its
            own), or "same" (one draw shared by the batch).
        chunk_size: run the batch in chunks of this many samples (None: all at once).

    Example:
        >>> x = mg.randn(5, 3)
        >>> mg.func.vmap(lambda r: (r * r).sum())(x).shape
        (5,)
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"vmap: Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness!r}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if not callable(func):
        raise RuntimeError(f"vmap: Expected func to be callable, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if isinstance(in_dims, (tuple, list)) and len(in_dims) != len(args):
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has {len(in_dims)} entries but inputs has "
                             f"{len(args)} positional arguments")
        leaves, rebuild = _tree_flatten(args)
        dims = _broadcast_dims(in_dims if isinstance(in_dims, (tuple, list)) else in_dims, args, "in_dims")
        size = None
        norm = []
        for x, d in zip(leaves, dims):
            if d is None:
                norm.append(None)
                continue
            if not isinstance(d, int):
                raise ValueError(f"vmap: in_dims entries must be int or None, got {d!r}")
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                                 f"input is of type {type(x).__name__}. We cannot vmap over non-Tensor arguments, "
                                 f"please use None as the respective in_dim")
            if not -max(x.ndim, 1) <= d < max(x.ndim, 1) or x.ndim == 0:
                raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                                 f"that input is a Tensor of dimensionality {x.ndim} so expected in_dim to satisfy "
                                 f"-{x.ndim} <= in_dim < {x.ndim}.")
            d %= x.ndim
            if size is None:
                size = x.shape[d]
            elif x.shape[d] != size:
                raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                                 f"sizes {size} and {x.shape[d]} for the mapped dimension (in_dims={in_dims})")
            norm.append(d)
        if size is None:
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): At least one of the inputs must be "
                             f"batched (an in_dim that is not None for a Tensor input)")
        if chunk_size is None or chunk_size >= size:
            return _run(func, leaves, norm, rebuild, size, out_dims, randomness, kwargs)
        from ..ops.shape import cat
        parts = []
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            chunk = [x if d is None else x.narrow(d, start, n) for x, d in zip(leaves, norm)]
            parts.append(_run(func, chunk, norm, rebuild, n, out_dims, randomness, kwargs))
        flat0, rebuild_out = _tree_flatten(parts[0])
        odims = _broadcast_dims(out_dims, parts[0], "out_dims")
        flats = [_tree_flatten(p)[0] for p in parts]
        joined = []
        for k, od in enumerate(odims):
            if od is None:
                joined.append(flats[0][k])
            else:
                x = flats[0][k]
                joined.append(cat([f[k] for f in flats], od % (x.ndim)))
        return rebuild_out(joined)
    return wrapped


def _run(func, leaves, dims, rebuild, size, out_dims, randomness, kwargs):
    level = _enter(size, randomness)
    try:
        args = rebuild([x if d is None else _wrap(x, d, level) for x, d in zip(leaves, dims)])
        out = func(*args, **kwargs)
        flat, rebuild_out = _tree_flatten(out)
        odims = _broadcast_dims(out_dims, out, "out_dims")
        res = []
        for x, od in zip(flat, odims):
            res.append(_unwrap_output(x, od, level, size, out_dims))
        return rebuild_out(res)
    finally:
        _exit(level)


def _unwrap_output(x, od, level, size, out_dims):
    if not isinstance(x, Tensor):
        if od is None:
            return x
        raise ValueError(f"vmap: `func` must only return Tensors (or tuples/lists/dicts of them), got type "
                         f"{type(x).__name__} for an output with out_dim={od}; use out_dims=None for it")
    if od is None:
        if _is_batched(x, level):
            raise ValueError(f"vmap: Can not return a BatchedTensor when out_dim is None (out_dims={out_dims}): "
                             f"the output varies over the batch")
        return x
    n = x.ndim + 1
    if not -n <= od < n:
        raise ValueError(f"vmap: out_dim={od} is out of range for an output of {x.ndim} dims per sample "
                         f"(expected -{n} <= out_dim < {n})")
    od %= n
    if _is_batched(x, level):
        return _move(x._value, x._bdim, od)
    # not batched: every sample gives the same value (expanded, as torch.func)
    return _move(x.unsqueeze(0).expand(size, *x.shape), 0, od)
