"""Forward-mode automatic differentiation (PyTorch's torch.autograd.forward_ad): dual tensors carry a
tangent alongside their value, and every op pushes the tangent forward with its JVP.

    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = f(x)
        value, jvp = fwAD.unpack_dual(y)      # f(primal), J_f(primal) @ tangent

An op's JVP is its Function's `jvp(ctx, *tangents)` when the class defines one (written on the
same screen as its VJP; tangents are None for inputs without one, and for static parameters,
which the rule reads from ctx.fw_args: the op's arguments as given). It returns the output
tangent(s), None for an output whose tangent is zero. A built-in op without its own
rule uses the exact identity J t = d/du <J^T u, t>: its (linear in u) backward differentiated
once more with respect to the cotangent u. A user Function without `jvp` cannot be used in
forward mode: the error names it.

Tangents flow through the backward pass too (forward-over-reverse: mg.func.hessian), and the
saved outputs a node rebuilds in backward get theirs back. Each dual level is a level of the
transform stack (levels.py): it nests with the others in any order (jvp of jvp, vmap of jvp, jvp of
grad), and nothing is paid while none is open.
"""
from collections import namedtuple

import threading

import numpy as np

from . import function as _function
from . import levels as _levels_mod
from .grad_mode import enable_grad, _state
from ..tensor import Tensor

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level", "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_by_id = {}  # open dual levels by id (ids are never reused: a closed level's tangents are unreachable)


class DualLevel(_levels_mod.Level):
    """A forward-AD level on the transform stack: an op with an argument carrying a tangent at this
    level runs below it, then its JVP rule pushes the tangent through (the rule's own ops run below
    this level, so outer dual levels differentiate them: jvp of jvp is exact)."""

    kind = "dual"

    def process(self, cls, args):
        lv = self.id
        for a in args:
            if _tangent(a, lv) is not None:
                return _propagate(self, cls, args)
        return _levels_mod.below(self, cls, args)


def _open():
    """The ids of this thread's open dual levels (in the current stack), outermost first."""
    levels = _state.levels
    return [lv.id for lv in levels if lv.kind == "dual"] if levels else levels


def _tangent(t, level):
    fw = t.__dict__.get("_fw") if isinstance(t, Tensor) else None
    return None if fw is None else fw.get(level)


def _set_tangent(t, level, tangent):
    fw = t.__dict__.get("_fw")
    t._fw = {**(fw or {}), level: tangent}


def enter_dual_level():
    """Open a new dual level (use dual_level() as a context manager instead where you can)."""
    level = _levels_mod.push(DualLevel())
    _by_id[level.id] = level
    return level.id


def exit_dual_level(*, level=None):
    """Close the innermost dual level: tangents at that level are gone (unpack_dual gives None)."""
    open_ = _open()
    if level is None:
        if not open_:
            raise RuntimeError("exit_dual_level: no dual level is open")
        level = open_[-1]
    lv = _by_id.get(level)
    if lv is not None and level not in open_ and lv.thread != threading.get_ident():
        raise RuntimeError(f"exit_dual_level: {lv.describe()} was entered in another thread; leave it in the "
                           f"thread that entered it")
    if lv is None:
        raise RuntimeError(f"exit_dual_level: level {level} is not open")
    _levels_mod.pop(lv)  # raises, naming both, when another level was entered after it
    del _by_id[level]


class dual_level:
    """Context manager for a forward-AD level; every make_dual/unpack_dual inside uses it."""

    def __enter__(self):
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc):
        exit_dual_level(level=self.level)
        return False


class _dual_level_under:
    """A dual level opened just below the open level `anchor` (levels.under): jvp inside vmap runs
    forward mode on the physical tensors, below the vmaps that batch them (func/vmap.py _jvp)."""

    def __init__(self, anchor):
        self.scope = _levels_mod.under(DualLevel(), anchor)

    def __enter__(self):
        level = self.scope.__enter__()
        _by_id[level.id] = level
        return level.id

    def __exit__(self, *exc):
        self.scope.__exit__(*exc)
        del _by_id[self.scope.level.id]
        return False


def _current(level):
    open_ = _open()
    if not open_:
        raise RuntimeError("forward AD: no dual level is open; use `with mg.autograd.forward_ad.dual_level():`")
    if level is None:
        return open_[-1]
    if level not in open_:
        raise RuntimeError(f"forward AD: level {level} is not open")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A tensor with tensor's values (and its reverse-mode graph) carrying `tangent` at the level."""
    level = _current(level)
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual: expected Tensors for the primal and the tangent")
    if tensor.dtype.kind not in "fc":
        raise ValueError(f"make_dual: Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tangent.dtype.kind not in "fc":
        raise ValueError(f"make_dual: Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"make_dual: Trying to set a forward gradient that has a different size than that of "
                           f"the original Tensor, this is not supported. Tensor is of size {tuple(tensor.shape)} "
                           f"while the given forward gradient is of size {tuple(tangent.shape)}.")
    if tangent.dtype != tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    dual = _alias(tensor)  # keeps the tangents tensor carries at the other (outer) levels
    _set_tangent(dual, level, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor; tangent is None when it has none at the level."""
    if not _open():
        return UnpackedDualTensor(tensor, None)
    level = _current(level)
    t = _tangent(tensor, level)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    primal = _alias(tensor)  # the tangents at the other (outer) levels stay: they belong to the value
    fw = primal.__dict__.get("_fw")
    if fw is not None:
        rest = {k: v for k, v in fw.items() if k != level}
        if rest:
            primal._fw = rest
        else:
            del primal._fw
    return UnpackedDualTensor(primal, t)


class Alias(_function.Function):
    """out = x (a view: same memory, version counter and reverse-mode graph);  dx = g;  jvp: t"""
    _is_view = True
    batching = "elementwise"
    fusion = _function.NoRule("a view: nothing to compute")
    onnx = "Identity"

    @staticmethod
    def forward(ctx, x):
        return x.view()

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, t):
        return t


def _alias(t):
    """A tensor sharing t's values and reverse-mode graph (and its tangents: Alias's jvp is the
    identity at every level; make_dual then sets or unpack_dual drops the one of its level)."""
    return Alias.apply(t)


# -- propagation ---------------------------------------------------------------------------------
def _propagate(level, cls, args):
    """The op at a dual level one of whose arguments carries a tangent there: the primal below the
    level, then the output tangents by the op's JVP rule, computed below the level too."""
    lv = level.id
    out = _levels_mod.below(level, cls, args)
    outs = out if type(out) is tuple else (out,)
    if not any(isinstance(o, Tensor) and o.dtype.kind in "fc" for o in outs):
        return out  # an index or a mask: nothing to carry a tangent
    tangents = tuple(_tangent(a, lv) if isinstance(a, Tensor) else None for a in args)
    jv = _levels_mod.run_below(level, _jvp_of, cls, args, tangents, outs, lv)
    jv = jv if type(jv) is tuple else (jv,)
    for o, t in zip(outs, jv):
        if t is None or not isinstance(o, Tensor) or o.dtype.kind not in "fc":
            continue
        if t.dtype != o.dtype:
            if t.dtype.kind == "c" and o.dtype.kind != "c":
                from ..ops.complex import real  # a real output's tangent is real
                t = real(t)
            t = t.to(o.dtype)
        if tuple(t.shape) != tuple(o.shape):
            t = t.expand(*o.shape) if t.ndim <= o.ndim else _sum_to(t, o.shape)
        _set_tangent(o, lv, t)
        node = o.grad_fn
        if node is not None:  # saved outputs rebuilt in backward get their tangent back
            node.__dict__.setdefault("_fw_out", {}).setdefault(o._output_nr, {})[lv] = t
    return out


def _jvp_of(cls, args, tangents, outs, lv):
    ctx = _ctx_of(cls, args, outs, lv)
    return _jvp(cls, ctx, args, tangents, outs)


def _sum_to(t, shape):
    from .engine import sum_to
    return sum_to(t, shape)


def _ctx_of(cls, args, outs, level):
    """The op's ctx (what its forward saved): the node of a recorded op, or a fresh forward run.

    The node serves only when it saved for every input that carries a tangent: forward saves
    what backward needs for the inputs requiring grad (Mul keeps y only for dx), and a rule
    reads the same values for the inputs with a tangent."""
    node = outs[0].grad_fn if outs and isinstance(outs[0], Tensor) else None
    if node is not None and type(node) is cls and all(
            need or _tangent(a, level) is None
            for a, need in zip(args, node.needs_input_grad)):
        return node
    from .function import _pack, _new
    ctx = _new(cls)
    ctx._to_save = ctx._non_diff = None
    ctx._saved = ()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.dtype.kind in "fc" for a in args)
    arrays = tuple(a._data if isinstance(a, Tensor) else a for a in args)
    raw = cls.forward(ctx, *arrays)
    raws = raw if type(raw) is tuple else (raw,)
    if ctx._to_save:  # a saved output is the op's output itself: it carries the outer levels' tangents
        results = tuple(o if isinstance(o, Tensor) and tuple(o.shape) == np.shape(r) else Tensor._make(np.asarray(r))
                        for r, o in zip(raws, tuple(outs) + (None,) * (len(raws) - len(outs))))
        ctx._saved = _pack(ctx._to_save, args, arrays, raws, results)
    ctx._to_save = None
    ctx._edges = [(None, 0, None, None)] * len(args)
    ctx._seq = -1
    return ctx


# For the tests and benchmarks that compare the explicit rules with the identity (the rules' oracle):
# _use_rules[0] = False sends every built-in op through _jvp_via_vjp; a list in _dispatch_log
# collects (Function class, has its own rule) for each JVP computed.
_use_rules = [True]
_dispatch_log = None


def _jvp(cls, ctx, args, tangents, outs):
    """The output tangent(s) of one op: its own rule, or the double-VJP identity (run below the
    op's dual level: _propagate)."""
    rule = cls.__dict__.get("jvp") or next((k.__dict__["jvp"] for k in cls.__mro__[1:]
                                           if "jvp" in k.__dict__ and k is not _function.Function), None)
    if type(rule) is _function.NoRule:  # the op declares it has none: the identity below
        rule = None
    if _dispatch_log is not None:
        _dispatch_log.append((cls, rule is not None))
    if rule is not None and (_use_rules[0] or cls is Alias or not cls.__module__.startswith("minigrad.")):
        # the op's arguments as given (its static parameters: shapes, axes) are ctx.fw_args
        # while the rule runs; not kept after, so the node holds nothing more
        prev = ctx.__dict__.get("fw_args")
        ctx.fw_args = args
        try:
            return rule.__get__(None, cls)(ctx, *tangents)
        finally:
            ctx.fw_args = prev
    if not cls.__module__.startswith("minigrad."):
        raise RuntimeError(f"forward AD: the custom Function {cls.__name__} does not define jvp(ctx, *tangents); "
                           f"add one to use it in forward mode (mg.func.jvp, jacfwd, hessian)")
    return _jvp_via_vjp(cls, ctx, args, tangents, outs)


def _jvp_via_vjp(cls, ctx, args, tangents, outs):
    """J t = d/du <J^T u, t>: differentiate the op's backward (linear in u) with respect to u.

    Complex numbers as pairs of reals: the backward is the real transpose of J (PyTorch's
    convention), <a, b> = Re(sum(conj(a) b)), and the gradient with respect to a complex u is
    d/dRe u + i d/dIm u, so the identity holds as written."""
    from . import grad as autograd_grad
    float_outs = [o for o in outs if isinstance(o, Tensor) and o.dtype.kind in "fc"]
    if not float_outs:
        return tuple(None for _ in outs)
    with enable_grad():
        us = [Tensor._make(np.zeros(o.shape, o.dtype)).requires_grad_(True) if isinstance(o, Tensor)
              and o.dtype.kind in "fc" else None for o in outs]
        grads_in = [u if u is not None else Tensor._make(np.zeros(o.shape, o.dtype)) for u, o in zip(us, outs)]
        vjps = cls.backward(ctx, *grads_in)
        vjps = vjps if type(vjps) is tuple else (vjps,)
        total = None
        for g, t in zip(vjps, tangents):
            if g is None or t is None:
                continue
            if g.dtype.kind == "c" or t.dtype.kind == "c":  # Re <g, t>
                from ..ops.complex import conj_physical, real
                term = real(conj_physical(g) * t).sum()
            else:
                term = (g * t).sum()
            total = term if total is None else total + term
        live = [u for u in us if u is not None]
        if total is None or not total.requires_grad:
            return tuple(None if u is None else Tensor._make(np.zeros(u.shape, u.dtype)) for u in us)
        need_graph = any(isinstance(t, Tensor) and t.requires_grad for t in tangents) or \
            any(isinstance(a, Tensor) and a.requires_grad for a in args)
        res = autograd_grad(total, live, retain_graph=need_graph, create_graph=need_graph, allow_unused=True)
    it = iter(res)
    out = []
    for u in us:
        if u is None:
            out.append(None)
        else:
            r = next(it)
            out.append(Tensor._make(np.zeros(u.shape, u.dtype)) if r is None else r)
    return tuple(out)
