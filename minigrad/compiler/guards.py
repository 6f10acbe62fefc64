"""The fast guard of a cached program: one generated function per cache entry that says, in a few
microseconds, whether a call would compute that entry's guard key again.

mg.jit's guard key (jit.py's `_key`) is computed generically at every call: the arguments' shapes
and dtypes, a walk over every module tree and optimizer the function reaches (training flags, Python
options, parameter identities and gradients' None-ness, optimizer state layout), the Python values
its code reads (pystate.py) and the grad mode. For a two-layer MLP step with Adam that cost 45-100 us
per call. This module specialises the same checks to the objects of one entry, as Dynamo's guards
are: straight-line code, comparing with the values seen when the entry was last looked up, so

    guard(args, kwargs) is True  =>  _key(args, kwargs) equals that entry's key

(the guard may be stricter -- a rebound global bound to an equal object, a replaced optimizer
group -- and then the call takes the generic path, which finds the same entry and builds a new
guard, at most a few times per entry). Module attributes are not re-read one by one: every Module.__setattr__ / __delattr__ /
register_* bumps a counter (nn/modules/module.py `_EPOCH`), and the guard checks the counter; the
parameter, buffer and child dicts are checked by identity (they can be written directly).

No text from the program or the user's code enters the generated source: every value it compares
with, every name it looks up, is an element of the constant list K.
"""
import types

from ..autograd.grad_mode import _state as _grad_state
from ..tensor import Tensor

__all__ = ["build"]

_MISSING = object()
_IDENTITY = (type(None), types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:
        return _MISSING


class _Writer:
    def __init__(self):
        self.lines, self.K = ["def guard(args, kwargs):"], []

    def k(self, obj):
        self.K.append(obj)
        return f"K[{len(self.K) - 1}]"

    def fail_if(self, cond):
        self.lines.append(f"    if {cond}: return False")

    def let(self, name, expr):
        self.lines.append(f"    {name} = {expr}")


def _tensor_checks(w, ref, t, grad=True):
    """t's shape, dtype, requires_grad and (grad) whether its .grad is None, as the key reads them."""
    a = t._data
    w.let("a", f"{ref}._data")
    w.fail_if(f"a.shape != {w.k(a.shape)} or a.dtype.char != {w.k(a.dtype.char)}")
    w.fail_if(f"{ref}.requires_grad != {w.k(t.requires_grad)}")
    if grad:
        w.fail_if(f"({ref}._grad is None) != {w.k(t._grad is None)}")


def _module_checks(w, m, seen):
    from ..nn.modules.module import Module
    stack = [m]
    while stack:
        m = stack.pop()
        if m is None or id(m) in seen:
            continue
        seen.add(id(m))
        d = m.__dict__
        ref = w.k(m)
        w.let("d", f"{ref}.__dict__")
        for kind in ("_parameters", "_buffers", "_modules"):
            items = d[kind]
            w.let("v", f"d[{w.k(kind)}]")
            w.fail_if(f"len(v) != {len(items)}")
            for name, obj in items.items():
                w.fail_if(f"v.get({w.k(name)}, M) is not {w.k(obj)}")
        for p in d["_parameters"].values():
            if p is not None:
                _tensor_checks(w, w.k(p), p)
        for b in d["_buffers"].values():
            if b is not None:
                _tensor_checks(w, w.k(b), b, grad=False)
        stack.extend(x for x in d["_modules"].values() if isinstance(x, Module) or x is None)


def _optimizer_checks(w, opt):
    w.let("pg", f"{w.k(opt)}.param_groups")
    w.fail_if(f"len(pg) != {len(opt.param_groups)}")
    w.let("st", f"{w.k(opt)}.state")
    for i, group in enumerate(opt.param_groups):
        w.let("g", f"pg[{i}]")
        w.fail_if(f"g is not {w.k(group)}")
        w.let("ps", "g['params']")
        w.fail_if(f"len(ps) != {len(group['params'])}")
        for j, p in enumerate(group["params"]):
            ref = w.k(p)
            w.fail_if(f"ps[{j}] is not {ref} or ({ref}._grad is None) != {w.k(p._grad is None)}")
            s = opt.state.get(p)
            if not s:
                w.fail_if(f"st.get({ref})")
                continue
            w.let("s", f"st.get({ref})")
            w.fail_if(f"s is None or len(s) != {len(s)}")
            for key, v in s.items():
                if isinstance(v, Tensor):
                    w.fail_if(f"s.get({w.k(key)}, M) is not {w.k(v)}")
                else:
                    w.fail_if(f"type(s.get({w.k(key)}, M)) is not {w.k(type(v))}")


def build(fn, args, kwargs, py, value_sig):
    """The guard function of the state now (args, kwargs, the objects fn reaches, py's reads, the grad
    mode): it returns True only where jit's `_key` would equal the key computed now."""
    from ..nn.modules.module import Module, _EPOCH
    from ..optim.optimizer import Optimizer
    from .jit import _static_sig
    STATEFUL = (Tensor, Module, Optimizer)
    w = _Writer()
    w.fail_if(f"E[0] != {w.k(_EPOCH[0])} or GS.enabled != {w.k(_grad_state.enabled)}")
    w.fail_if(f"len(args) != {len(args)}")
    w.fail_if(f"kwargs.keys() != {w.k(set(kwargs))}" if kwargs else "kwargs")
    roots = []
    for i, a in list(enumerate(args)) + [(n, v) for n, v in kwargs.items()]:
        src = f"args[{i}]" if type(i) is int else f"kwargs[{w.k(i)}]"
        if isinstance(a, Tensor):
            w.let("t", src)
            w.fail_if("not isinstance(t, T)")
            _tensor_checks(w, "t", a, grad=False)
        else:
            w.fail_if(f"SS({src}) != {w.k(_static_sig(a))}")
            roots.append(a)
    # what fn reaches without receiving it (trace.roots_of): the same objects, or the generic path
    f = fn
    if isinstance(fn, Module):
        roots.append(fn)
    if isinstance(f, types.MethodType):
        roots.append(f.__self__)
        f = f.__func__
    code = getattr(f, "__code__", None)
    if code is not None:
        # a root matters to the key only as a tensor, module or optimizer: the same one, or still none
        for cell in f.__closure__ or ():
            v = _cell(cell)
            if isinstance(v, STATEFUL):
                w.fail_if(f"CELL({w.k(cell)}) is not {w.k(v)}")
                roots.append(v)
            else:
                w.fail_if(f"isinstance(CELL({w.k(cell)}), S)")
        g = getattr(f, "__globals__", {})
        w.let("G", w.k(g))
        for n in code.co_names:
            v = g.get(n, _MISSING)
            if isinstance(v, STATEFUL):
                w.fail_if(f"G.get({w.k(n)}, M) is not {w.k(v)}")
                roots.append(v)
            else:
                w.fail_if(f"isinstance(G.get({w.k(n)}, M), S)")
    seen = set()
    for obj in roots:
        if isinstance(obj, Tensor):
            _tensor_checks(w, w.k(obj), obj)
        elif isinstance(obj, Module):
            _module_checks(w, obj, seen)
        elif isinstance(obj, Optimizer) and id(obj) not in seen:
            seen.add(id(obj))
            _optimizer_checks(w, obj)
    for where, name in py.reads:  # the Python values the code reads (pystate.py), by value
        v = where.get(name, _MISSING) if type(where) is dict else _cell(where)
        got = f"{w.k(where)}.get({w.k(name)}, M)" if type(where) is dict else f"CELL({w.k(where)})"
        if type(v) in _IDENTITY or isinstance(v, STATEFUL) or v is _MISSING:
            w.fail_if(f"{got} is not {w.k(v)}")
        else:
            w.fail_if(f"VS({got}) != {w.k(value_sig(v))}")
    w.lines.append("    return True")
    glb = {"K": w.K, "M": _MISSING, "E": _EPOCH, "GS": _grad_state, "T": Tensor, "S": STATEFUL, "SS": _static_sig,
           "CELL": _cell, "VS": value_sig}
    exec(compile("\n".join(w.lines), "<minigrad jit guard>", "exec"), glb)  # noqa: S102 -- names from K only
    return glb["guard"]
