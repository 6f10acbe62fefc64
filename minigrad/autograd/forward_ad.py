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
saved outputs a node rebuilds in backward get theirs back. Nothing is paid outside a dual level:
the propagation wraps Function.apply only while a level is open.
"""
from collections import namedtuple

import numpy as np

from . import function as _function
from .grad_mode import enable_grad, _state as _grad_state
from ..tensor import Tensor

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level", "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels = []      # open levels, innermost last
_next = [0]
_orig = [None]    # Function.apply while no level is open


def _tangent(t, level):
    fw = t.__dict__.get("_fw") if isinstance(t, Tensor) else None
    return None if fw is None else fw.get(level)


def _set_tangent(t, level, tangent):
    fw = t.__dict__.get("_fw")
    t._fw = {**(fw or {}), level: tangent}


def enter_dual_level():
    """Open a new dual level (use dual_level() as a context manager instead where you can)."""
    if not _levels:
        _orig[0] = _function.Function.__dict__["apply"]
        _function.Function.apply = _dual_apply(_orig[0])
    level = _next[0]
    _next[0] += 1
    _levels.append(level)
    return level


def exit_dual_level(*, level=None):
    """Close the innermost dual level: tangents at that level are gone (unpack_dual gives None)."""
    if not _levels:
        raise RuntimeError("exit_dual_level: no dual level is open")
    if level is not None and level != _levels[-1]:
        raise RuntimeError(f"exit_dual_level: level {level} is not the innermost open level ({_levels[-1]})")
    _levels.pop()
    if not _levels:
        _function.Function.apply = _orig[0]


class dual_level:
    """Context manager for a forward-AD level; every make_dual/unpack_dual inside uses it."""

    def __enter__(self):
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc):
        exit_dual_level(level=self.level)
        return False


def _current(level):
    if not _levels:
        raise RuntimeError("forward AD: no dual level is open; use `with mg.autograd.forward_ad.dual_level():`")
    if level is None:
        return _levels[-1]
    if level not in _levels:
        raise RuntimeError(f"forward AD: level {level} is not open")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A tensor with tensor's values (and its reverse-mode graph) carrying `tangent` at the level."""
    level = _current(level)
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual: expected Tensors for the primal and the tangent")
    if tensor.dtype.kind != "f":
        raise ValueError(f"make_dual: Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tangent.dtype.kind != "f":
        raise ValueError(f"make_dual: Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"make_dual: Trying to set a forward gradient that has a different size than that of "
                           f"the original Tensor, this is not supported. Tensor is of size {tuple(tensor.shape)} "
                           f"while the given forward gradient is of size {tuple(tangent.shape)}.")
    if tangent.dtype != tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    dual = _alias(tensor)
    fw = tensor.__dict__.get("_fw")
    if fw:  # the tangents the input carries at the other (outer) levels stay on the dual
        dual._fw = fw  # (not shared: _set_tangent makes the dual a dict of its own)
    _set_tangent(dual, level, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor; tangent is None when it has none at the level."""
    if not _levels:
        return UnpackedDualTensor(tensor, None)
    level = _current(level)
    t = _tangent(tensor, level)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    primal = _alias(tensor)
    rest = {lv: tan for lv, tan in tensor.__dict__["_fw"].items() if lv != level}
    if rest:  # the primal keeps its tangents at every other level (nested forward mode)
        primal._fw = rest
    return UnpackedDualTensor(primal, t)


class Alias(_function.Function):
    """out = x (a view: same memory, version counter and reverse-mode graph);  dx = g;  jvp: t"""
    _is_view = True

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
    """A tensor sharing t's values and reverse-mode graph, without t's tangents."""
    orig = _orig[0] or _function.Function.__dict__["apply"]
    return orig.__func__(Alias, t)


# -- propagation ---------------------------------------------------------------------------------
def _dual_apply(orig):
    def apply(cls, *args):
        levels = [lv for lv in _levels if any(_tangent(a, lv) is not None for a in args)]
        if not levels:
            return orig.__func__(cls, *args)
        out = orig.__func__(cls, *args)
        outs = out if type(out) is tuple else (out,)
        if not any(isinstance(o, Tensor) and o.dtype.kind == "f" for o in outs):
            return out  # an index or a mask: nothing to carry a tangent
        ctx = _ctx_of(cls, args, outs, levels)
        for lv in levels:
            tangents = tuple(_tangent(a, lv) if isinstance(a, Tensor) else None for a in args)
            jv = _jvp(cls, ctx, args, tangents, outs, lv)
            jv = jv if type(jv) is tuple else (jv,)
            for i, (o, t) in enumerate(zip(outs, jv)):
                if t is None or not isinstance(o, Tensor) or o.dtype.kind != "f":
                    continue
                if t.dtype != o.dtype:
                    t = t.to(o.dtype)
                if tuple(t.shape) != tuple(o.shape):
                    t = t.expand(*o.shape) if t.ndim <= o.ndim else _sum_to(t, o.shape)
                _set_tangent(o, lv, t)
                node = o.grad_fn
                if node is not None:  # saved outputs rebuilt in backward get their tangent back
                    node.__dict__.setdefault("_fw_out", {}).setdefault(o._output_nr, {})[lv] = t
        return out
    return classmethod(apply)


def _sum_to(t, shape):
    from .engine import sum_to
    return sum_to(t, shape)


def _ctx_of(cls, args, outs, levels):
    """The op's ctx (what its forward saved): the node of a recorded op, or a fresh forward run.

    The node serves only when it saved for every input that carries a tangent: forward saves
    what backward needs for the inputs requiring grad (Mul keeps y only for dx), and a rule
    reads the same values for the inputs with a tangent."""
    node = outs[0].grad_fn if outs and isinstance(outs[0], Tensor) else None
    if node is not None and type(node) is cls and all(
            need or not any(_tangent(a, lv) is not None for lv in levels)
            for a, need in zip(args, node.needs_input_grad)):
        return node
    from .function import _pack, _new
    ctx = _new(cls)
    ctx._to_save = ctx._non_diff = None
    ctx._saved = ()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.dtype.kind == "f" for a in args)
    arrays = tuple(a._data if isinstance(a, Tensor) else a for a in args)
    raw = cls.forward(ctx, *arrays)
    raws = raw if type(raw) is tuple else (raw,)
    if ctx._to_save:
        results = tuple(Tensor._make(np.asarray(r)) for r in raws)
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


def _jvp(cls, ctx, args, tangents, outs, level):
    """The output tangent(s) of one op: its own rule, or the double-VJP identity."""
    # the tangent formulas run on primal values: no propagation at this level inside them
    saved = _levels[:]
    _levels[:] = [lv for lv in _levels if lv < level]
    try:
        rule = cls.__dict__.get("jvp") or next((k.__dict__["jvp"] for k in cls.__mro__[1:]
                                               if "jvp" in k.__dict__ and k is not _function.Function), None)
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
    finally:
        _levels[:] = saved


def _jvp_via_vjp(cls, ctx, args, tangents, outs):
    """J t = d/du <J^T u, t>: differentiate the op's backward (linear in u) with respect to u."""
    from . import grad as autograd_grad
    float_outs = [o for o in outs if isinstance(o, Tensor) and o.dtype.kind == "f"]
    if not float_outs:
        return tuple(None for _ in outs)
    with enable_grad():
        us = [Tensor._make(np.zeros(o.shape, o.dtype)).requires_grad_(True) if isinstance(o, Tensor)
              and o.dtype.kind == "f" else None for o in outs]
        grads_in = [u if u is not None else Tensor._make(np.zeros(o.shape, o.dtype)) for u, o in zip(us, outs)]
        vjps = cls.backward(ctx, *grads_in)
        vjps = vjps if type(vjps) is tuple else (vjps,)
        total = None
        for g, t in zip(vjps, tangents):
            if g is None or t is None:
                continue
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
