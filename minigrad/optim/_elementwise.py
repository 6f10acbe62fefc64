"""An optimizer's update, written once as a function of one element, and the three ways it runs.

SGD and Adam/AdamW write their per-element update ONCE, as a plain Python function of the elements
of their arrays, of flags (Python bools) and of scalars (already in the element's dtype), returning
the new values of the arrays it writes (optim/sgd.py's `sgd_update`, optim/adam.py's `adam_update`).
It may use only + - * / and unary -, the primitives below (sqrt, maximum, where, detached), and `if`
or conditional expressions on its flags: no constants, no other names (checked), so every backend
reads the same operations in the same order. `Update` derives the three executions from it:

  numba   kernels/optim.py compiles the function's own source (its text, with these primitives
          bound to scalar ones) into a loop over a range of elements, split over minigrad's thread
          pool for large parameters: one pass over memory.
  NumPy   the function is traced once per combination of flags (Sym values record each operation,
          the branch a flag did not take is never recorded) into a straight-line program whose
          values are given buffers: a state array in place once its old value is dead, else rows of
          the optimizer's scratch, so a step makes no parameter-sized temporary. Each operation is
          its ufunc with out= (the path without numba, and for strided arrays).
  Tensor  the same program run with minigrad's ops, in place on the state tensors where the NumPy
          program writes in place (the per-tensor path: forward AD through a step, 0-d tensor
          hyper-parameters under mg.graph.trace, complex or 0-d parameters).

Bit for bit: the three make the same IEEE operations on the same operands in the same order (the
optimizer's scalar function computes the scalars in float64, then each backend rounds them to the
element's dtype once). A multiplication or division by a scalar that is exactly the float 1 is
skipped by NumPy and Tensor (x * 1 is x) and done by numba: the same numbers.
"""
from __future__ import annotations

import numpy as np

from .. import kernels, ops
from ..kernels import buffers as _buffers

__all__ = ["Update", "sqrt", "maximum", "where", "detached"]

PRIMITIVES = frozenset({"sqrt", "maximum", "where", "detached"})


# ---- the primitives, as the math calls them (the tracer's; numba binds its own in kernels/optim.py) ----

def sqrt(x):
    """The square root of an element."""
    return x.t.op("sqrt", x)


def maximum(a, b):
    """The larger of two elements, NaN from either side (np.maximum)."""
    return a.t.op("maximum", a, b)


def where(c, a, b):
    """a where flag c holds, else b; c a flag known only when the step runs (a 0-d tensor under
    mg.graph.trace). With a bool flag only the branch taken is recorded."""
    if type(c) is bool:
        return a if c else b
    return a.t.op("where", c, a, b)


def detached(x):
    """A new value equal to x (the Tensor path: x.detach().clone(), as PyTorch makes SGD's first
    momentum buffer)."""
    return x.t.op("detach", x)


class Sym:
    """A value of a traced update: an element (an array's, or a result), a scalar or a flag."""

    __slots__ = ("t", "i")

    def __init__(self, t, i):
        self.t, self.i = t, i

    def __add__(self, o): return self.t.op("add", self, o)
    def __radd__(self, o): return self.t.op("add", o, self)
    def __sub__(self, o): return self.t.op("subtract", self, o)
    def __rsub__(self, o): return self.t.op("subtract", o, self)
    def __mul__(self, o): return self.t.op("multiply", self, o)
    def __rmul__(self, o): return self.t.op("multiply", o, self)
    def __truediv__(self, o): return self.t.op("divide", self, o)
    def __rtruediv__(self, o): return self.t.op("divide", o, self)
    def __neg__(self): return self.t.op("negative", self)

    def __bool__(self):
        raise TypeError(f"{self.t.name}: a branch on a flag known only at run time; use where(flag, a, b)")


class _Trace:
    """The operations of one call of an update function on Sym values. nodes[i] = (op, args, kind):
    kind "e" an element, "s" a scalar, "f" a flag; a leaf's op is "array", "scalar" or "flag", its args
    its position (and, for a scalar, whether it is exactly 1)."""

    def __init__(self, name):
        self.name, self.nodes = name, []

    def leaf(self, op, k, kind, one=False):
        self.nodes.append((op, (k, one), kind))
        return Sym(self, len(self.nodes) - 1)

    def op(self, name, *args):
        for a in args:
            if not isinstance(a, Sym) or a.t is not self:
                raise TypeError(f"{self.name}: {name} of {a!r}: an update computes with its arguments only "
                                f"(a constant must be a scalar argument, in the element's dtype)")
        kinds = [self.nodes[a.i][2] for a in args]
        if name == "where":
            if kinds[0] != "f":
                raise TypeError(f"{self.name}: where's condition must be a flag")
            kinds = kinds[1:]
        if "f" in kinds or "e" not in kinds:
            raise TypeError(f"{self.name}: {name} of {kinds}: an operation needs an element, and flags only "
                            f"choose (scalars are combined by the optimizer's scalar function, in float64)")
        one = [self.nodes[a.i][0] == "scalar" and self.nodes[a.i][1][1] for a in args]
        if name == "multiply" and (one[0] or one[1]):
            return args[1] if one[0] else args[0]   # x * 1 is x
        if name == "divide" and one[1]:
            return args[0]
        self.nodes.append((name, tuple(a.i for a in args), "e"))
        return Sym(self, len(self.nodes) - 1)


_NUMPY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide,
          "negative": np.negative, "sqrt": np.sqrt, "maximum": np.maximum, "detach": np.positive,
          "copy": np.positive}
_INPLACE = {"add": "add_", "subtract": "sub_", "multiply": "mul_", "divide": "div_", "negative": "neg_",
            "sqrt": "sqrt_"}
_LEAVES = ("array", "scalar", "flag")


class _Program:
    """An update traced for one combination of flags (and of scalars that are exactly 1), its values
    given buffers (an array's memory, or a scratch row). steps: (op, operand values, value, buffer),
    then a "copy" into each array whose new value is not already there; code: the same for NumPy,
    (ufunc, operand registers, result register), the registers being the arrays, the scalars, then
    the scratch rows (None when a flag is known only at run time: the Tensor path's); rows: how
    many; leaves: value -> ("array" | "scalar" | "flag", position); news: {array: its new value}."""

    __slots__ = ("steps", "code", "rows", "leaves", "news")

    def __init__(self, upd, flags, ones, present):
        t = _Trace(upd.name)
        na, ns = len(upd.arrays), len(upd.scalars)
        args = [t.leaf("array", i, "e") for i in range(na)]
        args += [f if type(f) is bool else t.leaf("flag", j, "f") for j, f in enumerate(flags)]
        args += [t.leaf("scalar", j, "s", one) for j, one in enumerate(ones)]
        res = upd.fn(*args)
        outs = [r.i for r in (res if isinstance(res, tuple) else (res,))]
        if len(outs) != len(upd.writes):
            raise TypeError(f"{upd.name}: returns {len(outs)} values for the {len(upd.writes)} arrays it writes")
        nodes = t.nodes
        self.leaves = {i: (n[0], n[1][0]) for i, n in enumerate(nodes) if n[0] in _LEAVES}
        live = set(outs)  # what the results need: the side a flag did not choose is dropped
        for i in range(len(nodes) - 1, -1, -1):
            if i in live and i not in self.leaves:
                live.update(nodes[i][1])
        instrs = [i for i in range(len(nodes)) if i in live and i not in self.leaves]
        last = {}  # value -> the last step reading it (a result: never dead)
        for k, i in enumerate(instrs):
            for a in nodes[i][1]:
                last[a] = k
        for o in outs:
            last[o] = len(instrs)
        self.news = news = {upd.arrays.index(w): o for w, o in zip(upd.writes, outs)}
        made_at = {i: k for k, i in enumerate(instrs)}
        holder = {("home", i): i for i in range(na) if present[i]}  # buffer -> the value in it
        buf_of = {i: ("home", i) for i in range(na) if present[i]}
        rows = 0

        def free(b, k):
            return b not in holder or last.get(holder[b], -1) <= k

        def lends(h, k, v):  # written array h's memory may hold temporary v: v is dead when h's new value is made
            new = news.get(h)
            return present[h] and new in made_at and made_at[new] > k and last[v] <= made_at[new]

        steps = []
        for k, i in enumerate(instrs):
            op, a, _ = nodes[i]
            b = next((("home", h) for h, o in news.items() if o == i and present[h] and free(("home", h), k)), None)
            if b is None:   # a temporary: a dying operand's buffer, a free row, a free array's, a new row
                cands = [buf_of[x] for x in a if x in buf_of and last[x] == k
                         and (buf_of[x][0] == "row" or lends(buf_of[x][1], k, i))]
                cands += [("row", r) for r in range(rows) if free(("row", r), k)]
                cands += [("home", h) for h in news if free(("home", h), k) and lends(h, k, i)]
                b = cands[0] if cands else ("row", rows)
                rows = max(rows, b[1] + 1) if b[0] == "row" else rows
            holder[b] = i
            buf_of[i] = b
            steps.append((op, a, i, b))
        copies = [("copy", (o,), o, ("home", h)) for h, o in news.items()
                  if present[h] and buf_of.get(o) != ("home", h)]
        if len({buf_of.get(c[2]) for c in copies} & {c[3] for c in copies}):
            raise RuntimeError(f"{upd.name}: its results cannot be written back without a conflict")

        def reg(v, b=None):
            b = b or buf_of.get(v)
            if v in self.leaves and (b is None or self.leaves[v][0] == "scalar"):
                return self.leaves[v][1] + (na if self.leaves[v][0] == "scalar" else 0)
            return b[1] if b[0] == "home" else na + ns + b[1]

        self.steps, self.rows = steps + copies, rows
        self.code = None if any(s[0] == "where" for s in steps) else \
            [(_NUMPY[op], tuple(reg(x) for x in a), reg(v, b)) for op, a, v, b in self.steps]


class Update:
    """An optimizer's per-element update fn and its executions. arrays: fn's first parameters, the
    arrays whose elements it takes (a None one is absent); flags: the next, bools; the rest are its
    scalars. writes: the arrays its results are, in order. optional: {array: flag} for an array
    present only when the flag holds (made by the step when absent: SGD's first momentum buffer)."""

    def __init__(self, fn, arrays, flags, writes, optional=None):
        code = fn.__code__
        names = code.co_varnames[:code.co_argcount]
        self.fn, self.name = fn, fn.__name__
        self.arrays, self.flags, self.writes = tuple(arrays), tuple(flags), tuple(writes)
        if names[:len(arrays) + len(flags)] != self.arrays + self.flags or not set(writes) <= set(arrays):
            raise TypeError(f"{self.name}: its parameters {names} are not the arrays {arrays}, then the flags {flags}")
        self.scalars = names[len(arrays) + len(flags):]
        extra = set(code.co_names) - PRIMITIVES
        if extra or code.co_freevars or fn.__defaults__:
            raise TypeError(f"{self.name}: an update may use only its arguments and {sorted(PRIMITIVES)} "
                            f"(uses {sorted(extra | set(code.co_freevars))})")
        self.optional = {self.arrays.index(a): self.flags.index(f) for a, f in (optional or {}).items()}
        self._optional = tuple(self.optional.items())
        self._programs = {}
        self._last = (None, None, None)  # arrays_step's last (flags, scalars, program): a group's parameters share them
        self.kernel = None  # numba's (kernels/optim.py), made on first use

    def cast(self, scalars, dtype):
        """The scalars in dtype (each rounded once), as the NumPy and numba paths compute with them."""
        dt = dtype.type
        return [dt(s) for s in scalars]

    def program(self, flags, scalars, present):
        """The traced program for these flags (a non-bool one: known at run time), these scalars
        (which are exactly the float 1) and these arrays present."""
        key = (tuple(f if type(f) is bool else None for f in flags),
               tuple(type(s) is float and s == 1 for s in scalars), present)
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = _Program(self, key[0], key[1], present)
        return prog

    def arrays_step(self, arrays, flags, scalars, cast, scratch=None):
        """One parameter's update on NumPy float arrays (a list, None for an absent one), in place;
        flags bools, scalars Python floats and cast the same in the arrays' dtype. numba's loop when
        available and every array is C-contiguous, else the program with ufuncs (scratch: the
        optimizer's dict of scratch rows, or None for recycled temporaries). An optional array whose
        flag holds and that is None is made here (put in the list); for numba's loop an absent one is
        replaced in the list by a placeholder, which the loop does not read."""
        p = arrays[0]
        for i, f in self._optional:
            if arrays[i] is None and flags[f]:
                arrays[i] = np.empty_like(p)
        if kernels.available():
            for a in arrays:
                if a is not None and not a.flags.c_contiguous:
                    break
            else:
                k = self.kernel
                if k is None:
                    k = self.kernel = kernels.load("optim").Kernel(self)
                for i, f in self._optional:  # absent: the loop reads another array in its place
                    if arrays[i] is None:
                        arrays[i] = k.unused(p.dtype)
                k(arrays, flags, cast)
                return
        last_flags, last_scalars, prog = self._last
        if flags is not last_flags or scalars is not last_scalars:  # (held here: not an id reused)
            present = [True] * len(arrays)
            for i, f in self._optional:
                present[i] = flags[f]   # made above when the flag holds
            prog = self.program(flags, scalars, tuple(present))
            self._last = (flags, scalars, prog)
        regs = arrays + list(cast)
        if prog.rows:
            if scratch is not None:
                rows = scratch.get(p.dtype)
                if rows is None or rows.shape[0] < prog.rows or rows.shape[1] < p.size:
                    rows = _scratch_rows(scratch, p.dtype, prog.rows, p.size)
                regs += [rows[r, :p.size].reshape(p.shape) for r in range(prog.rows)]
            else:  # a traced step's: recycled temporaries (kernels/buffers.py)
                regs += [_buffers.empty(p.shape, p.dtype) for _ in range(prog.rows)]
        for uf, a, o in prog.code:
            if len(a) == 2:
                uf(regs[a[0]], regs[a[1]], out=regs[o])
            else:
                uf(regs[a[0]], out=regs[o])

    def tensors_step(self, tensors, flags, scalars):
        """One parameter's update with minigrad's ops on its tensors (a list, None for an absent
        one): in place where the program writes an array in place, else computed and copied in.
        flags bools, or 0-d bool tensors (where's); scalars Python floats or 0-d tensors (cast to
        the dtype of the tensor they meet). A written array that is None gets a new tensor (put in
        the list)."""
        from .optimizer import _like
        prog = self.program(flags, scalars, tuple(t is not None for t in tensors))
        vals, scalar = {}, set()
        for v, (kind, k) in prog.leaves.items():
            vals[v] = tensors[k] if kind == "array" else flags[k] if kind == "flag" else scalars[k]
            if kind == "scalar":
                scalar.add(v)
        content = {("home", i): i_v for i_v, (kind, i) in prog.leaves.items() if kind == "array"}
        for op, a, v, b in prog.steps:
            if op == "copy":
                continue
            xs = [vals[x] for x in a]
            if scalar.intersection(a):
                ref = next(x for x, i in zip(xs, a) if i not in scalar and prog.leaves.get(i, ("",))[0] != "flag")
                xs = [_like(x, ref) if i in scalar else x for x, i in zip(xs, a)]
            home = tensors[b[1]] if b[0] == "home" else None
            if home is not None and content.get(b) == a[0] and (op in _INPLACE or op == "maximum"):
                if op == "maximum":   # (PyTorch's differentiable form: out= is not, under forward AD)
                    home.copy_(ops.maximum(home, xs[1]))
                else:
                    getattr(home, _INPLACE[op])(*xs[1:])
                vals[v], content[b] = home, v
            else:
                vals[v] = _TENSOR_OPS[op](*xs)
        for h, o in prog.news.items():
            if tensors[h] is not None:
                if content[("home", h)] != o:
                    tensors[h].copy_(vals[o])
            elif o not in prog.leaves:  # made by this step
                tensors[h] = vals[o]


_TENSOR_OPS = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
               "divide": lambda a, b: a / b, "negative": lambda a: -a, "sqrt": lambda a: a.sqrt(),
               "maximum": ops.maximum, "where": ops.where, "detach": lambda a: a.detach().clone()}


def _scratch_rows(store, dtype, k, size):
    """k rows of at least size elements of dtype, kept in the optimizer's store and reused every step."""
    buf = store.get(dtype)
    if buf is None or buf.shape[0] < k or buf.shape[1] < size:
        old = (0, 0) if buf is None else buf.shape
        buf = store[dtype] = np.empty((max(k, old[0]), max(size, old[1])), dtype)
    return buf
