"""The opt-in gradient doctor: `mg.debug.watch()` records provenance while it is on, warns about
the common gradient mistakes once per site, and `mg.debug.explain(loss, model)` diagnoses every
parameter whose gradient is missing (None) or exactly zero.

Nothing here runs when the doctor is off: while a watch is open it registers observers
(autograd/observers.py) of every op, the Tensor conversions (.item(), float(), ...), tensor
creation, detach, backward, gradient accumulation and the optimizer/module gradient calls, and
removes them after. It replaces nothing of minigrad's.

The twelve mistakes and where each is caught (see docs/debugging.md):
  1 detach()          cut event, explain(): "path cut by detach() at file:line"
  2 no_grad           cut event, explain(): "path cut by no_grad entered at file:line"
  3 in-place          the version-counter error (always on)
  4 .grad of non-leaf the warning on reading it (always on)
  5 zero_grad         warning at optimizer.step(): gradients from 2+ backward passes
  6 backward twice    the freed-graph error names the first backward's line (always on)
  7 graph kept alive  warning when a tensor from before the last backward() joins a new graph
  8 retracing         warn_retrace(), called by mg.jit after repeated retraces
  9 .item() too early warning when a Python number from a tensor that requires grad makes a tensor
 10 broadcasting      warning for a user-level binary op where both operands grow
 11 non-differentiable cut event for an op whose result does not require grad
 12 zero vs missing   explain() tells "reached but zero" from "not reached"
"""
import os
import warnings
import weakref

import numpy as np

from ..autograd import engine as _engine
from ..autograd import function as _function
from ..autograd import observers as _observers
from ..autograd.grad_mode import _state as _grad_state
from ..tensor import Tensor
from ._sites import _PKG, _is_internal, fmt, user_site
import sys


class GradientMistakeWarning(UserWarning):
    """A likely gradient mistake, found by mg.debug.watch()."""


# -- what a watch records -------------------------------------------------------------------------
class _Watch:
    def __init__(self, allow_accumulation=False):
        self.allow_accumulation = allow_accumulation
        self.consumers = {}       # id(leaf) -> [(op name, site)] (first few ops that read the leaf)
        self.cuts = []            # (kind, site, op name, leaf ids) where a path from leaves was cut
        self.relus = []           # (site, fraction of inputs <= 0) for ReLU calls
        self.zero_inputs = {}     # id(leaf) -> (op name, site) where the leaf met an all-zero input
        self.accum = {}           # id(leaf) -> backward passes accumulated into .grad since zero_grad
        self.py_values = {}       # id(python number) -> (site, method, value)
        self.warned = set()       # (mistake, site) already warned about
        self.backwards = 0
        self.last_backward_seq = -1
        self.warnings = []        # (mistake number, message) for tests and reports

    def warn(self, number, site, message):
        key = (number, site)
        if key in self.warned:
            return
        self.warned.add(key)
        self.warnings.append((number, message))
        warnings.warn_explicit(message, GradientMistakeWarning,
                               site[0].co_filename if site else "<unknown>", site[1] if site else 0)


_watches = []      # the open watches (innermost last)
_handles = []      # the observer handles registered while any watch is open
_last = [None]     # the most recent watch, read by explain()


def _current():
    return _watches[-1] if _watches else None


# -- leaves reachable from a tensor ---------------------------------------------------------------
def _leaf_ids(tensors):
    """ids of the leaves requiring grad that the graphs of `tensors` reach."""
    out, seen, stack = set(), set(), []
    for t in tensors:
        if not isinstance(t, Tensor) or not t.requires_grad:
            continue
        if t.grad_fn is None:
            out.add(id(t))
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is _function.AccumulateGrad:
            v = node.variable
            if v is not None:
                out.add(id(v))
            continue
        for e in getattr(node, "_edges", ()):
            if e[0] is not None:
                stack.append(e[0])
    return out


_DISPATCH = {_PKG + "autograd" + os.sep + n for n in ("function.py", "observers.py", "levels.py")}
_GENERATED = _PKG + "autograd" + os.sep + "function<eager path of "  # the ops' generated eager paths


def _op_frame():
    """The frame that called the op's apply (an op wrapper, a Tensor method, or user code): the
    first frame outside the dispatch (autograd/function.py, observers.py, levels.py) and the doctor."""
    f = sys._getframe(2)
    while f is not None and (f.f_code.co_filename in _DISPATCH or f.f_code.co_filename == __file__
                             or f.f_code.co_filename.startswith(_GENERATED)):
        f = f.f_back
    return f


def _direct_user_call():
    """True when the op was called by user code through Tensor methods/op wrappers only (not from
    inside nn, functional, optim, ...): the user wrote this binary op."""
    f = _op_frame()
    ops_dir = _PKG + "ops"
    while f is not None and _is_internal(f.f_code.co_filename):
        fn = f.f_code.co_filename
        if not (fn.startswith(ops_dir) or fn == _PKG + "tensor.py" or fn.endswith("doctor.py")):
            return False
        f = f.f_back
    return f is not None


# -- the wrappers ---------------------------------------------------------------------------------
class _OpWatch:
    """The op observer (autograd/observers.py) while a watch is open."""

    def enter(self, cls, args):
        return None

    def exit(self, cls, args, out, token):
        if out is not None:
            _watch_op(cls, args, out)


def _watch_op(cls, args, out):
    w = _current()
    if w is None or _engine._callbacks:  # not watching, or an op run by the engine inside backward
        return out
    site = user_site(1)
    outs = out if type(out) is tuple else (out,)
    ins = [a for a in args if isinstance(a, Tensor)]
    req = [a for a in ins if a.requires_grad]
    name = getattr(cls, "op_name", None) or _snake(cls.__name__)
    for a in req:
        if a.grad_fn is None:
            lst = w.consumers.setdefault(id(a), [])
            lst.append((name, site))
            del lst[:-4]  # the latest few ops that read the leaf
            data = [b for b in ins if not (b.requires_grad and b.grad_fn is None)]
            if data and all(b._data.size and not np.any(b._data) for b in data):
                w.zero_inputs[id(a)] = (name, site)
            else:
                w.zero_inputs.pop(id(a), None)
        elif a.grad_fn._seq < w.last_backward_seq and not _is_internal_call():
            w.warn(7, site, f"mistake 7 (graph kept alive across iterations): at {fmt(site)} a tensor "
                   f"computed before the last backward() ({a.grad_fn.name()}) joins a new graph, so "
                   f"every step's graph stays in memory (e.g. `total_loss += loss`). Accumulate "
                   f"`loss.item()` or `loss.detach()` instead.")
    # provenance: where a path from the leaves stops
    why = None
    if req and not _grad_state.enabled and _grad_state.site is not None:
        why = ("no_grad", _grad_state.site)
    elif req and _grad_state.enabled and not any(getattr(t, "requires_grad", False) for t in outs):
        why = ("nondiff", site, name)
    elif not req:
        for a in ins:
            if getattr(a, "_why", None) is not None:
                why = a._why
                break
    if why is not None:
        for t in outs:
            if isinstance(t, Tensor):
                t._why = why
        if req:
            w.cuts.append((why[0], why[1], name, _leaf_ids(req)))
    if "relu" in cls.__name__.lower() and "backward" not in cls.__name__.lower() and ins:
        x = ins[0]._data
        if x.size:
            w.relus.append((site, float(np.mean(x <= 0))))
    # an elementwise op of two tensors (its batching family says so): add, mul, eq, xlogy, ...
    if cls.batching == "elementwise" and len(ins) == 2 and _direct_user_call():
        a, b = ins
        if a.ndim and b.ndim and a.shape != b.shape:
            n = out.numel() if isinstance(out, Tensor) else 0
            if n > a.numel() and n > b.numel():
                w.warn(10, site, f"mistake 10 (silent broadcasting): {name} at {fmt(site)} "
                       f"broadcasts {tuple(a.shape)} with {tuple(b.shape)} into {tuple(out.shape)}: both "
                       f"operands grew. If you meant elementwise, make the shapes equal (e.g. "
                       f"`.squeeze(-1)` or `.reshape({tuple(a.shape)})`).")
    return out


def _snake(name):
    """'MaxPool2d' -> 'max_pool2d': an op's name as users call it (when the class sets no op_name)."""
    return "".join("_" + c.lower() if c.isupper() and i and not name[i - 1].isupper() else c.lower()
                   for i, c in enumerate(name))


def _is_internal_call():
    f = _op_frame()
    f = f.f_back if f is not None else None  # the caller of the op's wrapper
    return f is not None and _is_internal(f.f_code.co_filename) and "/ops/" not in f.f_code.co_filename \
        and not f.f_code.co_filename.endswith("tensor.py")


def _to_python(t, method, value):
    w = _current()
    if w is not None and t.requires_grad:
        site = user_site(1)
        vals = value if isinstance(value, list) else [value]
        for v in _flat(vals):
            w.py_values[id(v)] = (site, method, v)
        # keep the values alive so their ids stay theirs while the watch is open
        w.__dict__.setdefault("_keep", []).append(value)


def _flat(vals):
    for v in vals:
        if isinstance(v, list):
            yield from _flat(v)
        else:
            yield v


def _creating(t, data):
    w = _current()
    if w is not None and w.py_values:
        vals = data if isinstance(data, (list, tuple)) else [data]
        for v in _flat(list(vals)):
            hit = w.py_values.get(id(v))
            if hit is not None and hit[2] is v:
                site = user_site(1)
                src_site, method = hit[0], hit[1]
                t._why = ("python", src_site, method)
                w.warn(9, site, f"mistake 9 (graph broken through a Python number): the tensor made at "
                       f"{fmt(site)} holds a value taken by .{method}() at {fmt(src_site)} from a "
                       f"tensor that requires grad; no gradient flows through it. Keep the tensor "
                       f"(no .{method}()) where the gradient must flow.")
                break


def _detaching(src, t):
    w = _current()
    if w is not None and src.requires_grad:
        site = user_site(1)
        t._why = ("detach", site)
        w.cuts.append(("detach", site, "detach", _leaf_ids([src])))


def _backward(t, phase):
    w = _current()
    if w is None:
        return
    if phase == "end":
        w.backwards += 1
        w.last_backward_seq = next(_function._seq)
        return
    site = user_site(1)
    if t.grad_fn is not None and w.last_backward_seq >= 0:
        old = [n for n in _nodes(t.grad_fn) if n._seq < w.last_backward_seq]
        if old:
            w.warn(7, site, f"mistake 7 (graph kept alive across iterations): the tensor "
                   f"backpropagated at {fmt(site)} still holds {len(old)} node(s) of a graph built "
                   f"before the previous backward() (oldest: {old[-1].name()}). Detach what you "
                   f"carry from one step to the next (`.detach()`, `.item()`).")


def _nodes(root):
    seen, stack, out = set(), [root], []
    while stack:
        n = stack.pop()
        if id(n) in seen or type(n) is _function.AccumulateGrad:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(e[0] for e in getattr(n, "_edges", ()) if e[0] is not None)
    return sorted(out, key=lambda n: n._seq, reverse=True)


def _accumulating(var, g):
    w = _current()
    if w is not None:
        first = var._grad is None
        w.accum[id(var)] = 1 if first else w.accum.get(id(var), 0) + 1


def _zeroing(owner, params):
    w = _current()
    if w is not None:
        for p in params:
            w.accum.pop(id(p), None)


def _stepping(opt, params):
    w = _current()
    if w is not None and not w.allow_accumulation:
        many = [(w.accum[id(p)]) for p in params if w.accum.get(id(p), 0) >= 2]
        if many:
            site = user_site(1)
            w.warn(5, site, f"mistake 5 (gradients not cleared): optimizer.step() at {fmt(site)} uses the "
                   f"gradients of {len(many)} parameter(s) summed over {max(many)} backward passes since "
                   f"the last zero_grad(). Call optimizer.zero_grad() every step, or, if you accumulate "
                   f"on purpose, say so with mg.debug.watch(allow_accumulation=True).")


def _params_of(obj):
    groups = getattr(obj, "param_groups", None)
    if groups is not None:
        return [p for g in groups for p in g["params"]]
    return list(obj.parameters())


# -- switching it on and off ----------------------------------------------------------------------
def _install():
    """Register the doctor's observers (autograd/observers.py); nothing of minigrad is replaced."""
    _handles.append(_observers.register_op_observer(_OpWatch()))
    for event, fn in (("to_python", _to_python), ("tensor", _creating), ("detach", _detaching),
                      ("backward", _backward), ("accumulate", _accumulating), ("zero_grad", _zeroing),
                      ("step", _stepping)):
        _handles.append(_observers.register(event, fn))


def _uninstall():
    while _handles:
        _handles.pop().remove()


def enable(allow_accumulation=False):
    """Turn the doctor on globally (until disable()); returns the watch recording."""
    w = _Watch(allow_accumulation)
    if not _watches:
        _install()
    _watches.append(w)
    _last[0] = w
    return w


def disable():
    """Turn the innermost enable()/watch() off."""
    if _watches:
        _watches.pop()
        if not _watches:
            _uninstall()


def is_watching():
    """Whether the gradient doctor is on (inside ``watch()``, or after ``enable()``)."""
    return bool(_watches)


class watch:
    """`with mg.debug.watch():` — record provenance and warn about gradient mistakes in the block.

    allow_accumulation=True: gradient accumulation over several backward passes is intended.
    The recording (warnings, cut events) stays readable as `.record` after the block.
    """

    def __init__(self, allow_accumulation=False):
        self.allow_accumulation = allow_accumulation
        self.record = None

    def __enter__(self):
        self.record = enable(self.allow_accumulation)
        return self

    def __exit__(self, *exc):
        disable()
        return False

    @property
    def warnings(self):
        """The warnings this ``watch()`` block recorded (empty when it recorded none)."""
        return list(self.record.warnings) if self.record else []


def warn_retrace(fn_name, count, changing, site=None):
    """Mistake 8, called by mg.jit when `fn_name` has been retraced `count` times."""
    w = _current()
    message = (f"mistake 8 (repeated tracing): {fn_name} was traced {count} times; the argument that "
               f"keeps changing is {changing}. Pass changing Python values as tensors, mark the batch "
               f"dimension dynamic, or pad the last batch.")
    if w is not None:
        w.warn(8, site, message)
    elif site is not None:  # (code, line) of the user's call
        warnings.warn_explicit(message, GradientMistakeWarning, site[0].co_filename, site[1])
    else:
        warnings.warn(message, GradientMistakeWarning, stacklevel=3)


# -- explain ---------------------------------------------------------------------------------------
class Finding:
    """The diagnosis of one parameter: status 'missing' (grad is None), 'zero' (exactly zero),
    'stale' (a .grad left by an earlier backward that this loss does not reach) or 'ok'."""

    def __init__(self, name, status, cause, site=None, mistake=None):
        self.name, self.status, self.cause, self.site, self.mistake = name, status, cause, site, mistake

    def __repr__(self):
        return f"Finding({self.name!r}, {self.status!r}, mistake={self.mistake})"

    def line(self):
        """This finding as one line: ``name: STATUS - cause`` (e.g. ``fc.bias: NO GRADIENT (None) - ...``)."""
        head = {"missing": "NO GRADIENT (None)", "zero": "ZERO GRADIENT", "ok": "ok",
                "stale": "STALE GRADIENT (from an earlier backward)"}[self.status]
        return f"{self.name}: {head} - {self.cause}"


class Report:
    """explain()'s result: `findings` (one per parameter), printable."""

    def __init__(self, findings):
        self.findings = findings

    @property
    def problems(self):
        """The findings whose status is not 'ok' (a gradient that is None or exactly zero)."""
        return [f for f in self.findings if f.status != "ok"]

    def __getitem__(self, name):
        for f in self.findings:
            if f.name == name:
                return f
        raise KeyError(name)

    def __str__(self):
        bad = self.problems
        if not bad:
            return f"gradient doctor: all {len(self.findings)} parameters have a nonzero gradient"
        lines = [f"gradient doctor: {len(bad)} of {len(self.findings)} parameters have no useful gradient"]
        lines += ["  " + f.line() for f in bad]
        if any(f.status == "zero" for f in bad) and any(f.status == "missing" for f in bad):
            lines.append("  (zero != missing: a zero gradient was computed and is 0; a missing one was never "
                         "computed because no path from the loss reaches the parameter)")
        return "\n".join(lines)

    __repr__ = __str__


def _named(model_or_params):
    if hasattr(model_or_params, "named_parameters"):
        return list(model_or_params.named_parameters())
    if isinstance(model_or_params, dict):
        return list(model_or_params.items())
    if isinstance(model_or_params, Tensor):
        return [("param", model_or_params)]
    return [(f"param{i}", p) for i, p in enumerate(model_or_params)]


_CUT_TEXT = {"detach": (1, "not reached: the path was cut by .detach() at {site}"),
             "no_grad": (2, "not reached: the path was cut by no_grad entered at {site}"),
             "python": (9, "not reached: the path went through a Python number (.{op}() at {site})"),
             "nondiff": (11, "not reached: the path went through {op} at {site}, which is not differentiable")}


def explain(loss, model_or_params):
    """After loss.backward(): one Finding per parameter, saying why a gradient is None or zero.

    The causes come from what mg.debug.watch() recorded during the forward; without a watch the
    report still separates missing from zero gradients and says to run under a watch for the cause.
    A parameter whose ``.grad`` this loss cannot have written (its graph does not reach it: the
    gradient was left by an earlier backward with no zero_grad since) is reported 'stale', with why
    this loss does not reach it, rather than 'ok'.
    """
    w = _last[0]
    findings = []
    reached = _leaf_ids(loss if isinstance(loss, (list, tuple)) else [loss])  # the .grads this loss writes
    for name, p in _named(model_or_params):
        g = p._grad
        if g is not None and id(p) not in reached and p.requires_grad:
            # a .grad this loss cannot have written: left by an earlier backward (no zero_grad since)
            why = _why_missing(w, name, p, loss)
            findings.append(Finding(
                name, "stale", f"its .grad ({'nonzero' if np.any(g._data) else 'zero'}) was left by an earlier "
                f"backward(): this loss does not reach it ({why.cause}); call optimizer.zero_grad() (or "
                f"set .grad = None) before each backward", why.site, why.mistake))
            continue
        if g is not None and np.any(g._data):
            many = w.accum.get(id(p), 0) if w is not None else 0
            findings.append(Finding(name, "ok", "nonzero gradient" + (
                f" (summed over {many} backward passes since the last zero_grad())" if many >= 2 else "")))
            continue
        if g is None:
            findings.append(_why_missing(w, name, p, loss))
        else:
            findings.append(_why_zero(w, name, p))
    return Report(findings)


def _why_missing(w, name, p, loss):
    if not p.requires_grad:
        return Finding(name, "missing", "it does not require grad (requires_grad=False)", mistake=1)
    if w is None:
        return Finding(name, "missing", "not reached from the loss (run the forward under "
                       "mg.debug.watch() to see where the path was cut)", mistake=12)
    for kind, site, op, leaves in w.cuts:
        if id(p) in leaves and kind in _CUT_TEXT:
            number, text = _CUT_TEXT[kind]
            why = getattr(loss, "_why", None)
            return Finding(name, "missing", text.format(site=fmt(site), op=op), fmt(site), number)
    if id(p) not in w.consumers:
        return Finding(name, "missing", "never used in the forward pass (no op read it while watching)")
    op, site = w.consumers[id(p)][-1]
    return Finding(name, "missing", f"used by {op} at {fmt(site)}, but that result does not lead to this loss")


def _why_zero(w, name, p):
    tail = " (reached but zero: a gradient was computed and is exactly 0 - not the same as missing)"
    if w is not None:
        if id(p) in w.zero_inputs:
            op, site = w.zero_inputs[id(p)]
            return Finding(name, "zero", f"the inputs to {op} at {fmt(site)} that multiply it were all zero" + tail,
                           fmt(site), 12)
        dead = [(site, frac) for site, frac in w.relus if frac >= 1.0]
        if dead:
            site = dead[-1][0]
            return Finding(name, "zero", f"ReLU at {fmt(site)} had no positive input in this batch: 100% of "
                           f"units dead, so nothing flows back through it" + tail, fmt(site), 12)
        if id(p) in w.consumers:
            op, site = w.consumers[id(p)][-1]
            return Finding(name, "zero", f"every contribution through {op} at {fmt(site)} is zero "
                           f"(e.g. multiplied by zero, or a step/rounding op whose derivative is 0)" + tail,
                           fmt(site), 12)
    return Finding(name, "zero", "exactly zero" + tail, mistake=12)
