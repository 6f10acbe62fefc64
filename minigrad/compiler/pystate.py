"""What a jitted function reads from, and writes to, Python state outside itself.

A trace bakes every Python value the function reads into the program: `x * K` with a global
`K = 2.0` records the constant 2.0. Rebinding `K` (or changing `cfg["k"]`, or an attribute of a
config object) must not leave the compiled program silently stale, and a function that writes
Python state (`calls.append(...)`, `global n; n += 1`, `print(...)`) must not run that write once in
N calls. So, as Dynamo does, mg.jit

- guards on the values the function's code reads from its globals and closure cells -- and from
  the globals and cells of the plain Python functions it reaches through them (helpers in the user's
  own modules, never minigrad's or the standard library's): a changed value is a new guard key, which
  traces again; and
- scans the same code for writes to state outside the function; a function that has one runs
  eagerly (one warning at the user's line; `fullgraph=True` raises GraphBreak there).

Both read the bytecode once per function (`analyse`) and are bounded to that code: nothing else in
the interpreter is watched. Tensors, modules and optimizers are not guarded here: they are the
program's inputs and state (jit.py's `_state_sig`).
"""
import dis
import os
import sysconfig
import types

import numpy as np

from ..tensor import Tensor

__all__ = ["analyse", "value_sig"]

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LIBS = tuple({os.path.abspath(p) + os.sep for p in (sysconfig.get_paths()["stdlib"],
                                                      sysconfig.get_paths()["purelib"],
                                                      sysconfig.get_paths()["platlib"])})
_MAX_FUNCTIONS = 64       # functions scanned per jitted function
_MAX_ITEMS = 64           # entries of a container (or attributes of an object) guarded by value
_MAX_ARRAY_BYTES = 4096   # a NumPy array read by the function is guarded by its bytes up to this size

# methods that change the object they are called on
MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
                      "setdefault", "add", "discard", "sort", "reverse", "write", "writelines",
                      "put", "put_nowait", "__setitem__", "__delitem__", "__setattr__", "__iadd__"})


class Analysis:
    """reads: (namespace dict or cell, name) pairs, read at every call for the guard key;
    writes: (what, 'file:line') of each write to outside state found in the code."""

    __slots__ = ("reads", "writes")

    def __init__(self):
        self.reads, self.writes = [], []

    def values(self):
        """The guard of the reads' current values (part of the jit key)."""
        out = []
        for where, name in self.reads:
            if type(where) is dict:
                v = where.get(name, _UNBOUND)
            else:
                try:
                    v = where.cell_contents
                except ValueError:
                    v = _UNBOUND
            out.append(value_sig(v))
        return tuple(out)


_UNBOUND = object()


def _user_code(code):
    f = os.path.abspath(code.co_filename)
    return not f.startswith(_PKG) and not f.startswith(_LIBS) and not code.co_filename.startswith("<frozen")


def _unwrap(fn):
    from ..nn.modules.module import Module
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if isinstance(fn, Module):
        fn = getattr(type(fn), "forward", None)
    return fn if isinstance(fn, types.FunctionType) else None


def analyse(fn):
    """The Analysis of fn (a function, bound method or Module) and the user functions it reaches."""
    res = Analysis()
    seen_fn, seen_read = set(), set()
    todo = [_unwrap(fn)]
    while todo and len(seen_fn) < _MAX_FUNCTIONS:
        f = todo.pop()
        if f is None or id(f) in seen_fn or not _user_code(f.__code__):
            continue
        seen_fn.add(id(f))
        cells = dict(zip(f.__code__.co_freevars, f.__closure__ or ()))
        for code in _codes(f.__code__):
            for kind, name, site in _scan(code, res):
                if kind == "global":
                    g = f.__globals__
                    if name not in g:  # a builtin (or not defined yet): nothing the user can rebind here
                        if name == "print":
                            res.writes.append(("calls print()", site))
                        continue
                    where, value = g, g[name]
                else:
                    cell = cells.get(name) if code is f.__code__ else None
                    if cell is None:
                        continue
                    try:
                        where, value = cell, cell.cell_contents
                    except ValueError:
                        continue
                key = (id(where), name)
                if key not in seen_read:
                    seen_read.add(key)
                    res.reads.append((where, name))
                if isinstance(value, types.FunctionType):
                    todo.append(value)
                elif isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType):
                    todo.append(value.__func__)
    return res


def _codes(code):
    """code and the code objects nested in it (lambdas, comprehensions, inner functions)."""
    stack = [code]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def _scan(code, res):
    """Yield ('global' | 'cell', name, site) for each outside read; record outside writes in res."""
    ins = list(dis.get_instructions(code))
    free = set(code.co_freevars)
    line = code.co_firstlineno

    def site():
        return f"{code.co_filename}:{line}"

    def outside(j):  # instruction j loads a global or a closure cell (state outside the function)
        if j < 0:
            return None
        a = ins[j]
        if a.opname == "LOAD_GLOBAL" or (a.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF") and a.argval in free):
            return a.argval
        return None

    for i, a in enumerate(ins):
        if a.starts_line is not None:
            line = a.starts_line
        op, name = a.opname, a.argval
        if op == "LOAD_GLOBAL":
            yield "global", name, site()
        elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF") and name in free:
            yield "cell", name, site()
        elif op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            res.writes.append((f"assigns the global {name!r}", site()))
        elif op in ("STORE_DEREF", "DELETE_DEREF") and name in free:
            res.writes.append((f"assigns the enclosing function's variable {name!r} (nonlocal)", site()))
        elif op in ("LOAD_METHOD", "LOAD_ATTR") and name in MUTATORS:
            base = outside(i - 1)
            if base is not None:
                res.writes.append((f"calls {base}.{name}(), changing {base!r} outside the function", site()))
        elif op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            base = outside(i - 2) or outside(i - 1)
            if base is not None:
                res.writes.append((f"writes an item of {base!r}, outside the function", site()))
        elif op in ("STORE_ATTR", "DELETE_ATTR"):
            base = outside(i - 1)
            if base is not None:
                res.writes.append((f"sets {base}.{name}, outside the function", site()))


def value_sig(v, depth=0):
    """A cheap, comparable guard of a Python value a trace may have baked in."""
    t = type(v)
    if v is None or t in (bool, int, str, bytes, complex):
        return v if t is not int else ("int", v)
    if t is float:
        return ("float", v.hex() if v == v else "nan")  # -0.0 and 0.0 are different programs
    if isinstance(v, (Tensor, types.ModuleType, type)):
        return ("id", id(v))
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer
    if isinstance(v, (Module, Optimizer, types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
        return ("id", id(v))  # modules and optimizers: jit's state guard; functions: by identity
    if isinstance(v, np.ndarray):
        if v.nbytes <= _MAX_ARRAY_BYTES:
            return ("ndarray", v.shape, v.dtype.str, v.tobytes())
        return ("ndarray", id(v), v.shape, v.dtype.str)
    if isinstance(v, np.generic):
        return ("npscalar", v.dtype.str, v.tobytes())
    if depth >= 2:
        return ("id", id(v))
    if t in (tuple, list, set, frozenset):
        if len(v) > _MAX_ITEMS:
            return ("id", id(v), len(v))
        items = sorted(v, key=repr) if t in (set, frozenset) else v
        return (t.__name__, id(v)) + tuple(value_sig(x, depth + 1) for x in items)
    if t is dict:
        if len(v) > _MAX_ITEMS:
            return ("id", id(v), len(v))
        return ("dict", id(v)) + tuple((k, value_sig(x, depth + 1)) for k, x in v.items())
    d = getattr(v, "__dict__", None)
    if type(d) is dict and len(d) <= _MAX_ITEMS:  # a config object: its attributes
        return ("obj", id(v)) + tuple((k, value_sig(x, depth + 1)) for k, x in d.items())
    return ("id", id(v))

