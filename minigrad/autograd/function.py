"""Function: an op's forward (NumPy) and backward (Tensor ops), and the graph node it leaves behind.

The instance made for each call is both the op's `ctx` and its node in the backward graph (as in
PyTorch, where `y.grad_fn` is the ctx of the op that made y). Forward receives NumPy arrays: it is
never differentiated. Backward receives and returns Tensors: with create_graph=True it is recorded,
so it can be differentiated again.
"""
import itertools
import re
import weakref

import numpy as np

from .grad_mode import _state, _marking as _user_no_grad
from .graph import _hooks as _saved_hooks, _hooked
from ..kernels import buffers as _buffers

class _Freed:
    """What a node's saved values become once a backward without retain_graph has used them; it
    remembers that backward() call's site in the user's code (for the error a second backward gets)."""
    __slots__ = ("site",)

    def __init__(self, site):
        self.site = site


_FREED = _Freed(None)
_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


class Node:
    """A node of the backward graph. `next_functions` are the edges to the nodes of its inputs."""

    __slots__ = ("__dict__", "__weakref__")
    _edges = ()
    _pre_hooks = None
    _n_out = 1
    _special = False  # True when the engine must take its slow path: hooks, a leaf, several outputs
    _user = False  # True for a Function defined outside minigrad: the engine checks what its backward returns

    def name(self):
        return type(self).__name__ + "Backward0"

    # PyTorch's next_functions has one edge per tensor input of the op (None for one that needs no
    # gradient), none for a Python number, a dim or a shape. The engine's _edges has a slot per
    # argument; a slot that is not a tensor input is _NO_EDGE (a tensor not needing grad is
    # _NO_EDGE_T), and next_functions leaves those out. An op whose PyTorch signature differs names
    # the argument positions that are its tensor inputs (`_torch_edges`: e.g. mul's Python number,
    # which PyTorch wraps as a tensor; conv's bias given as None, still an edge there).
    _torch_edges = None

    @property
    def next_functions(self):
        edges = self._edges
        keep = self._torch_edges
        if keep is None:
            return tuple((e[0], e[1]) for e in edges if e is not _NO_EDGE)
        return tuple((edges[i][0], edges[i][1]) if i < len(edges) else (None, 0) for i in keep)

    def register_prehook(self, output_nr, fn):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        self._special = True
        hooks = self._pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return _RemovableHandle(hooks, fn)

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The node at a leaf that requires grad: adds the arriving gradient into `variable.grad`."""

    _special = True

    def __init__(self, variable):
        # the leaf holds this node (so it is made once per leaf, not once per forward); the node
        # holds the leaf weakly, so there is no cycle: a leaf nobody else references can't be read
        # after backward anyway, and its gradient is then dropped
        self._variable = weakref.ref(variable)
        self._seq = next(_seq)

    @property
    def variable(self):
        return self._variable()

    def name(self):
        return "AccumulateGrad"


class _RemovableHandle:
    def __init__(self, hooks, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self):
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


class _NoGradCtx:
    """The ctx given to forward when no graph is recorded: saving is a no-op."""

    needs_input_grad = ()

    def save_for_backward(self, *xs):
        pass

    def mark_non_differentiable(self, *xs):
        pass


class Function(Node):
    """Base class of every differentiable op, built-in or user-defined.

    Subclasses define two static methods:
      forward(ctx, *args) -> ndarray or tuple of ndarrays   (Tensor args arrive as ndarrays)
      backward(ctx, *grads) -> one Tensor (or None) per forward argument
    and are called with `MyOp.apply(*args)`.

    Example:
        >>> class Cube(mg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         x, = ctx.saved_tensors
        ...         return g * 3 * x ** 2
    """

    # The fields every node has live in slots (cheap to create); anything an op stores on ctx
    # (ctx.shape = ...) goes to the instance __dict__, made only when first used.
    __slots__ = ("needs_input_grad", "_edges", "_seq", "_saved", "_to_save", "_non_diff")
    # set on view ops (reshape, transpose, basic indexing, ...): the output shares the input's memory
    _is_view = False
    # optional: a plain NumPy function of the arrays computing forward's result, used when no graph
    # is recorded (inside backward, under no_grad) to skip the ctx (e.g. _fast = np.multiply)
    _fast = None
    # set when _fast is a NumPy ufunc whose result on float arrays has their dtype (add, exp, ...):
    # a large result then goes into a recycled array (kernels/buffers.py) instead of fresh memory
    _recycle = False

    # -- the op's rules besides forward/backward/jvp (docs/adding-an-op.md) --------------------------
    # batching: how vmap runs the op on batched inputs -- the name of a family rule in
    # func/batching_rules.py ("elementwise", "reduce_axes", "view", ...), a function
    # rule(cls, level, args) -> outputs, or NoRule("why") (vmap loops over the batch, warning once).
    # None (the default, a user's Function): the loop as well. The registry tests fail for a
    # minigrad op that leaves it None.
    batching = None
    # jvp (forward mode): a static method jvp(ctx, *tangents) -> output tangent(s), or NoRule("why")
    # (forward mode then runs the double-VJP identity: exact, one backward more). Not set here: a
    # user's Function without one cannot be used in forward mode (forward_ad._jvp says so).
    # fusion: how the compiler's fusion pass computes the op inside a fused elementwise loop
    # (kernels/fused.py): a Kernel(...) template, "ufunc" (the ufunc family: its NumPy ufunc,
    # np.<name>(...)), or NoRule("why"); None for ops that are not elementwise.
    fusion = None
    # onnx: how mg.onnx.export writes the op -- the name of an ONNX operator applied to all of
    # forward's arguments ("Exp", "Add", "MatMul": a Var by name, a number as a constant of the
    # operands' dtype), a function onnx(e, c) -> output name (a staticmethod: e the traced equation,
    # c the exporter's context, minigrad/onnx/context.py; it raises c.unmapped("why") for the cases
    # it cannot express), or NoRule("why") (export raises NotImplementedError with the reason).
    # None (the default, a user's Function): no mapping. The registry tests fail for a minigrad op
    # that leaves it None.
    onnx = None
    # _complex: whether the op records complex inputs/outputs (its backward follows PyTorch's
    # convention, the gradient being the conjugate Wirtinger derivative: conj where needed).
    # False: recording it with a complex tensor raises, naming the op (never a silently wrong or
    # missing gradient). A user's Function is taken as written for complex, as in PyTorch.
    _complex = False

    # A declared op (`_declared = True`, as the ufunc families and linear): forward is its `_fast`
    # function of the inputs' arrays and backward reads what `_saves` says (one entry per input:
    # NEVER, ALWAYS or IF_OTHER; `_saves_output`: the output too); its forward and its eager path
    # are written from these at class creation (_declare). `_optional`: positions of inputs that may
    # be None (linear's bias); `_scalar_operand`: the second operand may be a Python float (_try).
    _declared = False
    _saves = ()
    _saves_output = False
    _optional = ()
    _scalar_operand = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._user = not cls.__module__.startswith("minigrad.")
        if cls._user and "_complex" not in cls.__dict__:
            cls._complex = True
        if cls._declared and cls._fast is not None:
            cls._spec = cls._save_spec()  # (modes per input, output saved): read by all that follows
            if "forward" not in cls.__dict__:
                cls.forward = classmethod(_named_forward(cls))
            _declare(cls)

    @classmethod
    def _save_spec(cls):
        """(one save mode per input, whether the output is saved) of a declared op."""
        return (tuple(cls._saves), bool(cls._saves_output))

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    # -- ctx API -------------------------------------------------------------------------------
    def save_for_backward(self, *xs):
        self._to_save = xs

    def mark_non_differentiable(self, *xs):
        self._non_diff = xs

    @property
    def saved_tensors(self):
        saved = self._saved
        if type(saved) is _Freed:
            where = ""
            if saved.site is not None:
                from ..debug._sites import fmt
                where = f" The graph was freed by the earlier backward() call at {fmt(saved.site)}."
            raise RuntimeError(f"{self.name()}: " + _FREED_MSG + where)
        if len(saved) == 2:  # the common pair (a binary op's inputs), unrolled: each unchanged or a constant
            (k0, v0, c0, r0), (k1, v1, c1, r1) = saved
            if (k0 == 2 or (k0 == 0 and c0[0] == r0)) and (k1 == 2 or (k1 == 0 and c1[0] == r1)):
                return (v0, v1)
        out = []
        for kind, value, vc, version in saved:
            if kind == 0:  # a Tensor (an input, or one the user passed): check it was not modified
                if vc[0] != version:
                    raise RuntimeError(_modified_msg(self, value, vc[0], version))
                out.append(value)
            elif kind == 1:  # the op's own output: rebuilt on demand so no cycle keeps the graph alive
                arr, nr = value
                if vc[0] != version:
                    raise RuntimeError(_modified_msg(self, arr, vc[0], version))
                t = Tensor._make(arr, True, self, nr)
                t._vc = vc
                fw = self.__dict__.get("_fw_out")
                if fw is not None and nr in fw:  # forward AD: the output's tangent comes back too
                    t._fw = dict(fw[nr])
                out.append(t)
            elif kind == 3:  # went through saved_tensors_hooks: unpack, check, re-attach an own output
                obj, unpack, nr = value
                t = unpack(obj)
                if vc[0] != version:
                    raise RuntimeError(_modified_msg(self, t, vc[0], version))
                if nr is not None:
                    t = Tensor._make(t._data, True, self, nr)
                    t._vc = vc
                out.append(t)
            else:  # anything else (a constant array or a Python value)
                out.append(value)
        return tuple(out)

    # -- apply ----------------------------------------------------------------------------------
    @classmethod
    def apply(cls, *args):
        """Run forward on the arguments' arrays; record a node when grad mode is on and an input needs it.

        The one entry of every op. With a transform level open (levels.py) or an observer registered
        (observers.py) the op goes to `_dispatch`; otherwise straight to `_eager`, after one check.
        `_eager` is the op's eager path: for an op whose forward follows from what it declares (its
        NumPy function `_fast` and what backward reads, `_saves`: the elementwise ufunc families,
        linear) one function written for that op at class creation (_declare; its text is
        `cls._eager_source`); for any other op the ctx protocol (_generic)."""
        if _intercept:
            return _dispatch(cls, args)
        return cls._eager(args)

    @classmethod
    def _eager(cls, args):
        """The op run eagerly: what every level ends in (levels.interpret) when it has done its part."""
        return _generic(cls, args)


# What a BinaryUfunc's backward reads, per input: never, always, or only when the *other* input
# needs a gradient (d(x*y)/dy = x: x is kept only for y's gradient).
NEVER, ALWAYS, IF_OTHER = 0, 1, 2


class NoRule:
    """An op's declaration that it has no rule of a kind, and why: `batching = NoRule("why")` (vmap
    runs the op once per sample and warns once), `onnx = NoRule("why")` (mg.onnx.export raises
    NotImplementedError naming the op, the reason and the user's line)."""
    __slots__ = ("why",)

    def __init__(self, why):
        self.why = why

    def __repr__(self):
        return f"NoRule({self.why!r})"


class Kernel:
    """An elementwise op's loop body for fused kernels (Function.fusion; kernels/fused.py).

    code: a numba expression of the operands {0}, {1}, ..., where D(v) casts v to the result dtype;
    show: how a fused group prints it; cast: per operand, 1 to cast it to the result dtype first
    (default: all); exact: True when the result is NumPy's bit for bit (IEEE arithmetic, sqrt,
    comparisons); False for libm's transcendentals, which may differ in the last ulps and which
    the numba backend leaves out of groups unless asked (compile(..., transcendentals=True))."""
    __slots__ = ("code", "show", "cast", "exact")

    def __init__(self, code, show, cast=None, exact=True):
        self.code, self.show, self.exact = code, show, exact
        self.cast = tuple(cast) if cast is not None else (1,) * (1 + max(
            int(c) for c in re.findall(r"\{(\d+)\}", code)))

    def __repr__(self):
        return f"Kernel({self.code!r}, {self.show!r}, cast={self.cast}, exact={self.exact})"


class BinaryUfunc(Function):
    """An elementwise op of two inputs that is one NumPy ufunc: add, sub, mul, div.

    A subclass declares its ufunc (`_fast`) and what its backward reads (`_saves`, one of NEVER,
    ALWAYS, IF_OTHER for x and for y), and writes backward (and jvp); forward and the eager path
    follow from those two (_declare). These are the ops recorded most often (every `x * 0.5`; every
    product in a backward); their wrappers call `cls._try(a, b)`, the eager path with a Python float
    operand taken as a cached 0-d constant of a's dtype (_scalar).
    """
    _declared = True
    _recycle = True
    _saves = (NEVER, NEVER)
    _scalar_operand = True
    batching = "elementwise"
    fusion = "ufunc"


# What a UnaryUfunc's backward reads: nothing (NEVER), its input, or its output.
INPUT, OUTPUT = 1, 2


class UnaryUfunc(Function):
    """An elementwise op of one input that is one NumPy ufunc: exp, log, tanh, sqrt, neg, ...

    As BinaryUfunc: a subclass declares its ufunc (`_fast`) and what its backward reads (`_saves`:
    NEVER, INPUT or OUTPUT) and writes backward; forward and the eager path follow. Its jvp is its
    backward unless it writes one: the Jacobian of an elementwise function of one input is diagonal,
    so J t is the VJP's formula applied to t."""
    _declared = True
    _recycle = True
    _saves = NEVER
    batching = "elementwise"
    fusion = "ufunc"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "backward" in cls.__dict__ and "jvp" not in cls.__dict__:
            cls.jvp = cls.__dict__["backward"]

    @classmethod
    def _save_spec(cls):
        s = cls._saves
        return ((ALWAYS if s == INPUT else NEVER,), s == OUTPUT)


# -- the eager path of an op, written from its declarations ------------------------------------------
#
# An op whose forward is its NumPy function `_fast` of the inputs' arrays, saving what `_saves` says,
# declares that and no forward (`_declared = True`, or a family base that sets it). At class creation
# _declare writes its eager path as one Python function with the op's function, arity and saves as
# constants: unwrap the inputs, compute, make the Tensor, and when recording the node, its edges and
# the saved values -- the same node, edges and saved values as the ctx protocol (_generic) makes
# through the derived forward, which tests/autograd/test_engine.py checks for every declared op.
# Anything uncommon goes to _generic: an input that is not a Tensor (a Python number, an array),
# or, when recording, a view (whose base may have changed in place) or a complex result.
#
# `_saves`: one entry per input, NEVER, ALWAYS or IF_OTHER (kept only when another input needs a
# gradient: d(x*y)/dy = x); `_saves_output`: the op's output too. ctx.saved_tensors then holds one
# value per input that is not NEVER (None where IF_OTHER did not keep it), then the output.

def _declared_forward(cls, ctx, *arrays):
    """The forward of a declared op (the ctx protocol's view of it: tracing's forward, _generic):
    `_fast` on the arrays (into a recycled buffer when large, `_recycle`), saving what `_saves` says."""
    x = arrays[0]
    if cls._recycle and type(x) is np.ndarray and x.nbytes >= _MIN_BYTES:
        out = cls._fast(*arrays, out=_buffers.result(*arrays) if len(arrays) == 2 else _buffers.like(x))
    else:
        out = cls._fast(*arrays)
    modes, save_out = cls._spec
    if save_out or any(modes):
        need = ctx.needs_input_grad
        keep = []
        for i, m in enumerate(modes):
            if m == ALWAYS:
                keep.append(arrays[i])
            elif m == IF_OTHER:
                keep.append(arrays[i] if any(n for j, n in enumerate(need) if j != i) else None)
        if save_out:
            keep.append(out)
        ctx.save_for_backward(*keep)
    return out


def _named_forward(cls):
    """_declared_forward with the op's input names as its parameters (x / x, y / `_input_names`), so
    a printed graph names an op's static arguments as its forward does (`mul[y=2] a`)."""
    names = getattr(cls, "_input_names", None)
    if names is None:
        names = ("x", "y")[:len(cls._spec[0])]
    args = ", ".join(names)
    ns = {}
    exec(f"def forward(cls, ctx, {args}):\n    return _declared_forward(cls, ctx, {args})\n", globals(), ns)
    return ns["forward"]


def _eager_source(name, n, modes, save_out, recycle, optional, scalar_operand, check=True):
    """The text of a declared op's eager path (see above): `name(a0, ..., a{n-1})`. check: it is
    an entry (the op's wrapper calls it) and so starts with apply's one check; without it, the path
    a level ends in (cls._eager)."""
    a = [f"a{i}" for i in range(n)]
    x = [f"x{i}" for i in range(n)]
    r = [f"r{i}" for i in range(n)]
    args = ", ".join(a)
    tup = f"({args},)"
    L = [f"def {name}({args}):"]
    if scalar_operand:  # a1 a Python float: a cached 0-d constant of a0's dtype; other cases promote
        L += ["    x0 = a0._data",
              "    d = x0.dtype",
              "    if d.kind == 'c':",
              "        return None",
              "    if type(a1) is float:",
              "        if d.kind != 'f':",
              "            return None",
              "        c = _scalars.get((a1, d))",
              "        a1 = c if c is not None else _scalar(a1, d)",
              "        if type(a1) is float:  # 0.0 or nan: not cached (apply: a level may be open)",
              "            return cls.apply(a0, a1)",
              "    elif type(a1) is not Tensor or a1._data.dtype is not d:",
              "        return None"]
    if check:
        L += ["    if _intercept:  # a transform level is open or an observer watches: the full dispatch",
              f"        return _dispatch(cls, {tup})"]
    if not scalar_operand:
        checks = [f"(type({v}) is not Tensor and not isinstance({v}, Tensor))" if i not in optional else
                  f"({v} is not None and type({v}) is not Tensor and not isinstance({v}, Tensor))"
                  for i, v in enumerate(a)]
        L += [f"    if {' or '.join(checks)}:", f"        return _generic(cls, {tup})"]
    for i in range(n):
        if i in optional:
            L += [f"    if a{i} is None:", f"        x{i} = None", f"        r{i} = False", "    else:",
                  f"        x{i} = a{i}._data", f"        r{i} = a{i}.requires_grad"]
        elif i == 0 and scalar_operand:  # (x0 read above)
            L += ["    r0 = a0.requires_grad"]
        else:
            L += [f"    x{i} = a{i}._data", f"    r{i} = a{i}.requires_grad"]
    anyr = " or ".join(r)
    L += [f"    record = ({anyr}) and _state.enabled" if n > 1 else f"    record = r0 and _state.enabled"]
    odd = " or ".join(f"({r[i]} and a{i}._base is not None)" for i in range(n))
    L += [f"    if record and ({odd}):  # a view: _edge re-slices it if its base changed in place",
          f"        return _generic(cls, {tup})"]
    xs = ", ".join(x)
    if recycle:
        buf = "_result(x0, x1)" if n == 2 else "_like(x0)"
        call = f"f({xs}) if x0.nbytes < _MIN_BYTES else f({xs}, out={buf})"
    else:
        call = f"f({xs})"
    L += ["    try:", f"        out = {call}",
          "    except (ValueError, IndexError, TypeError) as e:",
          f"        raise _op_error(cls, ({xs},), e) from None",
          "    if type(out) is not _ndarray:",
          "        out = _asanyarray(out)  # NumPy gives scalars for 0-d results",
          "    t = _new(Tensor)",
          "    t._data = out",
          "    t._output_nr = 0",
          "    t._vc = None",
          "    if not record:",
          "        t.requires_grad = False",
          "        t.grad_fn = None",
          "        if _user_no_grad[0]:  # the doctor's mark: why this result has no graph",
          f"            if {anyr}:",
          f"                _mark_cut(t, {tup})"]
    for i in range(n):
        guard = f"a{i} is not None and " if i in optional else ""
        L += [f"            elif {guard}a{i}._why is not None:", f"                t._why = a{i}._why"]
    L += ["        return t",
          "    kind = out.dtype.kind",
          "    if kind != 'f':",
          "        if kind == 'c':  # complex: the ctx protocol (conj rules, or a clear refusal)",
          f"            return _generic(cls, {tup})",
          "        t.requires_grad = False  # (an integer result is not differentiable)",
          "        t.grad_fn = None",
          "        if _user_no_grad[0]:",
          f"            _mark_cut(t, {tup})",
          "        return t",
          "    ctx = _new(cls)",
          f"    ctx.needs_input_grad = ({', '.join(r)},)"]
    for i in range(n):
        L += [f"    if r{i}:",
              f"        fn = a{i}.grad_fn",
              f"        e{i} = (fn, a{i}._output_nr, x{i}.shape, x{i}.dtype) if fn is not None else "
              f"(_accumulator(a{i}), 0, x{i}.shape, x{i}.dtype)",
              "    else:  # (_no_edge, inline: a constant made of a number, or a tensor input needing no grad)",
              f"        e{i} = _NO_EDGE if {f'a{i} is None or ' if i in optional else ''}a{i}._wrapped_number "
              f"or x{i}.dtype.kind not in 'fc' else _NO_EDGE_T"]
    L += [f"    ctx._edges = ({', '.join(f'e{i}' for i in range(n))},)",
          "    ctx._seq = next(_seq)"]
    slots = []
    for i, m in enumerate(modes):
        if m == NEVER:
            continue
        others = " or ".join(r[j] for j in range(n) if j != i) or "False"
        if m == IF_OTHER:
            L += [f"    if {others}:"]
            ind = "        "
        else:
            ind = "    "
        L += [f"{ind}vc = a{i}._vc", f"{ind}if vc is None:", f"{ind}    vc = a{i}._vc = [0]",
              f"{ind}s{i} = (0, a{i}, vc, vc[0])"]
        if m == IF_OTHER:
            L += ["    else:", f"        s{i} = _SAVED_NONE"]
        slots.append(f"s{i}")
    if save_out:  # the output, kept as its array (see _pack): no cycle output -> node -> output
        L += ["    vc = t._vc = [0]", "    so = (1, (out, 0), vc, 0)"]
        slots.append("so")
    if slots:
        L += [f"    saved = ({', '.join(slots)},)",
              "    ctx._saved = _hooked(ctx, saved) if _saved_hooks.stack else saved"]
    else:
        L += ["    ctx._saved = ()"]
    L += ["    t.requires_grad = True", "    t.grad_fn = ctx", "    return t"]
    return "\n".join(L) + "\n"


def _declare(cls):
    """Write the eager path of declared op cls (see above): cls._call(*inputs), cls._eager(args) and,
    for a BinaryUfunc, cls._try(a, b) (None when the operands need promoting first)."""
    modes, save_out = cls._spec
    n = len(modes)
    common = dict(n=n, modes=modes, save_out=save_out, recycle=cls._recycle,
                  optional=frozenset(cls._optional))
    src = _eager_source("_call", scalar_operand=False, **common)
    if cls._scalar_operand:
        src += "\n\n" + _eager_source("_try", scalar_operand=True, **common)
    src += "\n\n" + _eager_source("_run", scalar_operand=False, check=False, **common)
    cls._eager_source = src
    # compiled as a closure over (cls, f), in this module's globals (_intercept, _state, ... are read live)
    body = "".join("    " + line + "\n" if line else "\n" for line in src.splitlines())
    factory = (f"def _factory(cls, f):\n{body}"
               f"    return _call, {'_try' if cls._scalar_operand else 'None'}, _run\n")
    ns = {}
    # (named inside the package, so the doctor's user_frame and the profiler count it as minigrad's)
    where = f"{__file__[:-3]}<eager path of {cls.__name__}>"
    exec(compile(factory, where, "exec"), globals(), ns)
    call, try_, run = ns["_factory"](cls, cls._fast)
    cls._call = staticmethod(call)
    if try_ is not None:
        cls._try = staticmethod(try_)

    def _eager(c, args):
        return run(*args) if len(args) == n else _generic(c, args)
    cls._eager = classmethod(_eager)


# -- the ctx protocol: every other op's eager path ----------------------------------------------------

def _generic(cls, args):
    """The op run eagerly through the ctx protocol: forward(ctx, *arrays) and, when grad mode is on
    and an input requires grad, a node (_record). Unrecorded, an op with a `_fast` function runs
    just that (_run_plain)."""
    n = len(args)
    if n == 1 and isinstance(args[0], Tensor):  # unrolled for the common one- and two-argument ops
        a = args[0]
        arrays = (a._data,)
        if a.requires_grad and _state.enabled:
            return _record(cls, args, arrays, (_edge(a),), _TRUE1)
    elif n == 2:
        a, b = args
        if isinstance(a, Tensor):
            x, ra = a._data, a.requires_grad
        else:
            x, ra = a, False
        if isinstance(b, Tensor):
            y, rb = b._data, b.requires_grad
        else:
            y, rb = b, False
        if (ra or rb) and _state.enabled:  # edges only when recording (_edge may re-slice a view)
            edges = (_edge(a) if ra else _no_edge(a), _edge(b) if rb else _no_edge(b))
            return _record(cls, args, (x, y), edges, (ra, rb))
        arrays = (x, y)
    elif not _state.enabled:  # no graph: just the arrays
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
    else:  # one pass: the arrays, and the edges of those inputs that need a gradient
        arrays = []
        edges = []
        record = False
        for a in args:
            if isinstance(a, Tensor):
                if a.requires_grad:
                    edges.append(_edge(a))
                    arrays.append(a._data)
                    record = True
                    continue
                arrays.append(a._data)
            else:
                arrays.append(a)
            edges.append(_no_edge(a))
        if record:
            return _record(cls, args, arrays, edges, tuple([e[0] is not None for e in edges]))
    return _run_plain(cls, args, arrays)


def _run_plain(cls, args, arrays):
    """Forward without recording: the `_fast` NumPy function when the op has one, else forward
    with a ctx whose saves are no-ops. (The graph interpreter and codegen make the same choice:
    plain_forward.)"""
    try:
        if cls._fast is not None:
            out = _buffers.ufunc(cls._fast, *arrays) if cls._recycle else cls._fast(*arrays)
        else:
            ctx = _NoGradCtx()
            ctx.needs_input_grad = (False,) * len(arrays)
            out = cls.forward(ctx, *arrays)
    except (ValueError, IndexError, TypeError) as e:
        raise _op_error(cls, arrays, e) from None
    if type(out) is tuple:
        outs = tuple([_plain(o) if type(o) is np.ndarray else _plain(np.asanyarray(o)) for o in out])
        if cls._is_view:
            for o in outs:
                _share_view(o, args[0])
        if _user_no_grad[0]:
            for o in outs:
                _mark_cut(o, args)
        return outs
    t = _plain(out if type(out) is np.ndarray else np.asanyarray(out))
    if cls._is_view:
        _share_view(t, args[0])
    if _user_no_grad[0]:
        _mark_cut(t, args)
    return t


def plain_forward(cls, side=False):
    """How an op computes its outputs from arrays when nothing is recorded: "fast" (its `_fast`
    NumPy function) or "forward" (forward with a ctx). Eager (_run_plain), the graph interpreter
    and codegen all take this one choice; `side`: the equation reads what forward stores on ctx."""
    return "fast" if cls._fast is not None and not side else "forward"


def _record(cls, args, arrays, edges, need):
    """Record: run forward with a ctx that becomes the output's grad_fn, edges to the inputs' nodes."""
    ctx = _new(cls)
    ctx._to_save = ctx._non_diff = None
    ctx._saved = ()
    ctx.needs_input_grad = need
    try:
        if len(arrays) == 2:  # a call without * unpacking is a fast Python-to-Python call
            out = cls.forward(ctx, arrays[0], arrays[1])
        else:
            out = cls.forward(ctx, *arrays)
    except (ValueError, IndexError, TypeError) as e:
        raise _op_error(cls, arrays, e) from None
    if type(out) is not np.ndarray:
        out = _unwrap_outputs(out)
    if not cls._complex:
        _refuse_complex(cls, edges, out)
    ctx._edges = edges
    ctx._seq = next(_seq)
    to_save = ctx._to_save
    if type(out) is not tuple:
        raw = out
        if type(out) is not np.ndarray:
            out = np.asanyarray(out)  # NumPy gives scalars for 0-d results
        if out.dtype.kind in "fc" and (ctx._non_diff is None or not _is_in(out, ctx._non_diff)):
            t = Tensor._make(out, True, ctx, 0)
        else:
            t = _plain(out)
        if cls._is_view:
            _share_view(t, args[0])
        if to_save:
            ctx._to_save = None
            ctx._saved = _pack(to_save, args, arrays, (raw,), (t,))
            if _saved_hooks.stack:
                ctx._saved = _hooked(ctx, ctx._saved)
        return t
    ctx._to_save = None
    non_diff = ctx._non_diff
    raws = out
    outs = tuple(o if type(o) is np.ndarray else np.asanyarray(o) for o in out)
    ctx._n_out = len(outs)
    ctx._special = True
    ctx._out_meta = [(o.shape, o.dtype) for o in outs]
    results = []
    for i, o in enumerate(outs):
        diff = o.dtype.kind in "fc" and (non_diff is None or not _is_in(o, non_diff))
        t = Tensor._make(o, True, ctx, i) if diff else _plain(o)
        if cls._is_view:
            _share_view(t, args[0])
        results.append(t)
    if to_save:
        ctx._saved = _pack(to_save, args, arrays, raws, results)
        if _saved_hooks.stack:
            ctx._saved = _hooked(ctx, ctx._saved)
    return tuple(results)


_scalars = {}


def _scalar(v, dtype):
    """The Python float v as a cached constant 0-d tensor of dtype (read-only, never requires grad).

    NumPy's array-with-0-d-array loop is about twice as fast as its array-with-Python-float path,
    and the same scalars recur op after op (1.0, 0.5, a learning rate). Zeros (0.0 == -0.0 would
    share an entry) and nan (never equal to itself) are passed through uncached. A full cache (1024
    entries: a learning-rate schedule makes a new float every step) starts again empty, so the scalars
    in use now stay fast and a traced graph records them the same way whatever ran before it.
    """
    key = (v, dtype)
    t = _scalars.get(key)
    if t is None:
        if v == 0.0 or v != v:
            return v
        if len(_scalars) >= 1024:
            _scalars.clear()
        arr = np.array(v, dtype=dtype)
        arr.flags.writeable = False
        t = _scalars[key] = Tensor._make(arr)
        t._wrapped_number = True  # a Python number, not a tensor input (next_functions: no edge)
    return t


_MIN_BYTES = _buffers.MIN_BYTES
_result, _like = _buffers.result, _buffers.like  # (names the generated eager paths read)
_ndarray, _asanyarray = np.ndarray, np.asanyarray

_NO_EDGE = (None, 0, None, None)  # an argument that is not a tensor input (a number, a dim, None)
_NO_EDGE_T = tuple([None, 0, None, None])  # a tensor input that needs no gradient (a distinct object)


def _no_edge(a):
    """The edge slot of an argument that needs no gradient: _NO_EDGE_T for a floating tensor the
    caller passed (PyTorch's next_functions shows it as (None, 0)), else _NO_EDGE (a Python number
    or a constant minigrad made of one, an integer or bool tensor such as an index or a mask, None,
    anything else), which next_functions leaves out."""
    if isinstance(a, Tensor) and not a._wrapped_number and getattr(a._data, "dtype", _OBJ).kind in "fc":
        return _NO_EDGE_T
    return _NO_EDGE


_OBJ = np.dtype(object)
_TRUE1 = (True,)
# True while a transform level is open in any thread or an observer is registered (levels.py sets
# it): then every op goes through _dispatch. The one check on the hot path.
_intercept = False
_seq = itertools.count()  # creation order: a node is always created after the nodes of its inputs
_new = object.__new__


def _edge(t):
    """The graph edge to tensor t, an input that requires grad: (the node that made t -- its
    AccumulateGrad when t is a leaf --, t's output index there, t's shape and dtype for sum_to)."""
    if t._base is not None:
        _fresh_view(t)  # a view whose base changed in place since: re-sliced, so a new grad_fn
    fn, d = t.grad_fn, t._data
    if fn is not None:
        return (fn, t._output_nr, d.shape, d.dtype)
    return (_accumulator(t), 0, d.shape, d.dtype)


def _refuse_complex(cls, edges, out):
    """An op not marked complex-capable (`_complex`) recording a complex input or output: raise,
    naming it (its backward has no rule for complex; PyTorch's convention needs conj in places)."""
    outs = out if type(out) is tuple else (out,)
    if (any(e[3] is not None and e[3].kind == "c" for e in edges if e[0] is not None)
            or any(getattr(o, "dtype", _OBJ).kind == "c" for o in outs)):
        raise RuntimeError(f"{_op_name(cls)}: the gradient of this op for complex tensors is not "
                           f"implemented in minigrad (the op is not marked complex-capable); "
                           f"detach() the complex input or compute with real and imaginary parts")


def holomorphic(cls):
    """Mark an elementwise op whose backward is written as g * f'(x) (real calculus) as complex-capable.

    For a holomorphic f, PyTorch's gradient is g * conj(f'(z)) = conj(conj(g) * f'(z)): so the same
    backward, run on conj(g) and conjugated, is right for complex too (and differentiable again);
    for real g it runs unchanged. The forward-mode rule (f'(z) t, no conjugate) is kept as written."""
    back = cls.__dict__["backward"] if "backward" in cls.__dict__ else None
    real_backward = (back.__func__ if isinstance(back, staticmethod) else back) or cls.backward
    if "jvp" not in cls.__dict__ and not isinstance(getattr(cls, "jvp", None), NoRule):
        cls.jvp = staticmethod(real_backward)  # (the UnaryUfunc default: J is diagonal)

    def backward(ctx, g, *rest):
        if not rest:  # one output (every elementwise op): one check on the real path, no generator
            if g is None or g._data.dtype.kind != "c":
                return real_backward(ctx, g)
        elif not any(x is not None and x._data.dtype.kind == "c" for x in (g,) + rest):
            return real_backward(ctx, g, *rest)
        grads = (g,) + rest
        from ..ops.complex import conj_physical
        out = real_backward(ctx, *[None if g is None else conj_physical(g) for g in grads])
        if type(out) is tuple:
            return tuple(None if o is None or not isinstance(o, Tensor) else conj_physical(o) for o in out)
        return conj_physical(out)

    backward.__doc__ = real_backward.__doc__
    cls.backward = staticmethod(backward)
    cls._complex = True
    return cls


def _is_in(x, items):
    return any(x is i for i in items)


def _unrecorded():
    """Whether an op may skip apply and run as plain NumPy now: no graph is recorded (a backward
    without create_graph, an optimizer step, no_grad), mg.graph.trace is not recording and nothing wraps
    apply (forward AD, the profiler, the doctor). The recurrent steps' backward checks it to pick its
    backward op (the NumPy VJP, run through apply) over the Tensor-op backward a second derivative needs."""
    return not _state.enabled and not _intercept


def _spread(grads, need):
    """The gradients a backward op returned (only those in need) as one entry per input, None
    elsewhere: how an op whose backward is itself an op (conv2d's, the norms', the losses') maps
    that op's outputs back onto its own inputs."""
    if len(grads) == len(need):
        return tuple(grads)
    it = iter(grads)
    return tuple([next(it) if n else None for n in need])


def _mark_cut(t, args):
    """Mark an unrecorded result with why it has no graph (the doctor's provenance, named by the
    error of a backward() through it): inside a user's no_grad block (grad_mode: its site) a result
    that would have been recorded; anywhere, a result computed from a tensor cut by .detach()."""
    if not args:  # (_run_plain called with the arrays only: nothing to carry a mark from)
        return
    site = _state.site
    no_grad_site = site is not None and not _state.enabled
    why = None
    for a in args:
        if isinstance(a, Tensor):
            if no_grad_site and a.requires_grad:
                why = ("no_grad", site)
                break
            if why is None:
                why = a._why
    if why is not None:
        t._why = why


def _pack(to_save, args, arrays, outs, results):
    """Turn what forward passed to save_for_backward into (kind, value, version counter, version).

    kind 0: a Tensor (an input, found by its array); 1: the op's own output, kept as its array so
    that no cycle output -> node -> output keeps the graph alive; 2: a constant.
    """
    packed = []
    n = len(arrays)
    a0 = arrays[0] if n else None
    a1 = arrays[1] if n > 1 else None
    for x in to_save:
        if x is None:  # what an op saves in place of a value its backward will not need
            packed.append(_SAVED_NONE)
            continue
        if type(x) is np.ndarray:
            # an input: the Tensor and its version (unrolled for the common one and two inputs)
            i = 0 if x is a0 else (1 if x is a1 else _index(x, arrays, n))
            if i >= 0:
                a = args[i]
                if isinstance(a, Tensor):
                    vc = a._vc
                    if vc is None:
                        vc = a._vc = [0]
                    packed.append((0, a, vc, vc[0]))
                    continue
            packed.append(_pack_other(x, outs, results))
        elif isinstance(x, Tensor):
            d = x._data
            if any(d is o for o in outs):  # an output forward returned as a Tensor: the graph's output
                packed.append(_pack_other(d, outs, results))
                continue
            vc = x._vc
            if vc is None:
                vc = x._vc = [0]
            packed.append((0, x, vc, vc[0]))
        elif isinstance(x, np.generic):
            packed.append(_pack_other(x, outs, results))
        else:  # a Python number or any other constant
            packed.append((2, x, None, 0))
    return packed


def _unwrap_outputs(out):
    """What forward returned, with Tensors as their arrays: a forward written with minigrad ops (as
    PyTorch's custom Functions are) returns Tensors, and an output it also saved is then the
    output (rebuilt graph-connected in backward, so double backward reaches it)."""
    if isinstance(out, Tensor):
        return out._data
    if type(out) is tuple:
        return tuple([o._data if isinstance(o, Tensor) else o for o in out])
    return out


def _index(x, arrays, n):
    """The position of array x among the arguments from the third on (by identity), or -1."""
    for i in range(2, n):
        if arrays[i] is x:
            return i
    return -1


_SAVED_NONE = (2, None, None, 0)


def _pack_other(x, outs, results):
    """A saved array that is not an input: one of the op's outputs (kept as its array), or a constant."""
    for i, o in enumerate(outs):
        if o is x:
            t = results[i]
            vc = t._vc
            if vc is None:
                vc = t._vc = [0]
            # a non-differentiable output is saved as a plain tensor
            return (1, (t._data, i), vc, vc[0]) if t.grad_fn is not None else (0, t, vc, vc[0])
    return (2, Tensor._make(x), None, 0)


def _accumulator(t):
    """The AccumulateGrad node of leaf t, made on first use and kept by t."""
    acc = t._acc
    if acc is None:
        acc = t._acc = AccumulateGrad(t)
    return acc


def _share_view(out, src):
    """A view shares its base's version counter, so in-place writes through either are seen."""
    if isinstance(src, Tensor):
        if src._vc is None:
            src._vc = [0]
        out._vc = src._vc
        out._base = src if src._base is None else src._base
        out._graph_ver = src._vc[0]


def _fresh_view(v):
    """A view whose base was modified in place since v's grad_fn was made: re-slice the base."""
    base = v._base
    if v._vc[0] == v._graph_ver or not base.requires_grad:
        return
    if v._view_idx is None:
        raise RuntimeError(f"a view of shape {v.shape} is used after an in-place operation on its base "
                           f"(shape {base.shape}); its gradient would be stale. Take the view again "
                           f"after the in-place operation.")
    from ..ops.indexing import getitem
    fresh = getitem(base, v._view_idx)
    v.grad_fn, v._output_nr, v.requires_grad = fresh.grad_fn, fresh._output_nr, fresh.requires_grad
    v._graph_ver = v._vc[0]


def _modified_msg(node, x, now, then):
    shape = tuple(x.shape)
    return (f"{node.name()}: one of the variables needed for gradient computation has been modified "
            f"by an inplace operation: a tensor of shape {shape} saved by {node.name()} is at version "
            f"{now}; expected version {then} instead. Hint: avoid the in-place op, or clone() the "
            f"tensor before modifying it.")


def _op_name(cls):
    return getattr(cls, "op_name", None) or cls.__name__.lower()


def _op_error(cls, arrays, e):
    """NumPy's error in an op's forward, naming the op and the shapes, of PyTorch's type (RuntimeError)
    that is also the original type (minigrad/_errors.py)."""
    from .._errors import ShapeError, as_torch
    shapes = [tuple(a.shape) for a in arrays if isinstance(a, np.ndarray)]
    name = _op_name(cls)
    msg = str(e)
    if "broadcast" in msg and len(shapes) >= 2:
        return ShapeError(f"{name}: shapes {' and '.join(map(str, shapes))} cannot be broadcast")
    detail = ", ".join(str(s) for s in shapes)
    return as_torch(type(e))(f"{name}: {msg} (input shapes {detail})")


def _dispatch(cls, args):
    """An op while a level is open or an observer watches: the observers around it, the innermost
    level interpreting it (levels.interpret), eager at the bottom of the stack."""
    if _observers._op:
        return _observers.observed(cls, args, _interpret)
    return _interpret(cls, args)


from ..tensor import Tensor  # noqa: E402  (Tensor imports this module's names lazily)
_plain = Tensor._make  # a plain tensor of an array: no graph (the one Tensor constructor)
from . import observers as _observers  # noqa: E402
from .levels import interpret as _interpret  # noqa: E402
