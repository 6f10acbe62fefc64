"""mg.onnx.export: a model in eval mode (or a function) -> an ONNX file, through the traced graph.

Only this package imports `onnx` (the optional extra: pip install "minigrad[onnx]"). The model is
traced with mg.graph.trace; each equation maps to ONNX nodes by the rule its op class declares
(`Function.onnx`: an ONNX operator's name, a function onnx(e, c) writing nodes through the context
in context.py, or NoRule("why")), the graph's state inputs (parameters, buffers) become
initializers. `mapped()` lists the primitives that map; an equation whose op has no mapping raises
NotImplementedError naming it, the reason and the user's line.

Notes on the mapping: minigrad's IR does not tell flatten/squeeze/unsqueeze/view apart (they are
one `reshape` primitive with the target shape), so all become ONNX Reshape; reductions take their
axes as an input from opset 18 on (an attribute before); a dynamic batch axis (`dynamic_axes` with
axis 0 on the first input) turns a reshape's leading batch size into -1.
"""
import warnings

import numpy as np

from .._atomic import atomic_write
from ..autograd.function import Function, NoRule
from ..graph.ir import Var
from .context import Ctx, Unmapped
from .._optional import require

__all__ = ["export", "to_model", "mapped", "OPSET", "Ctx", "Unmapped", "NoRule", "ExportWarning"]

OPSET = 18


class ExportWarning(UserWarning):
    """The exported model may not be faithful for every input its dynamic axes allow: the traced
    program changed with the size of a dynamic axis (a Python branch on a tensor's shape, or a
    constant sized by it); the message names the axis, the sizes tried and the line."""


def _onnx():
    onnx = require("onnx", feature="mg.onnx.export")
    from onnx import helper
    return onnx, helper


def _assign(e, c):
    """The in-place write effect (no op class: mg.trace records the op, then `assign`): ONNX tensors
    are values, so the write becomes the new value's name, for an intermediate nobody viewed."""
    target, value = e.args
    if target.name in c.views or not c.is_intermediate(target):
        raise c.unmapped("an in-place write into an input, a parameter or a tensor with views (ONNX "
                         "tensors are values, not memory)")
    return c.add("Identity", [value.name], c.out(e))


def _op_classes():
    seen, todo = [], [Function]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return [c for c in seen if c.__module__.startswith("minigrad.")]


def _maps(rule):
    return rule is not None and type(rule) is not NoRule


def mapped():
    """The IR primitive names mg.onnx.export maps to ONNX (sorted): those of the minigrad op classes
    that declare an `onnx` rule, and the in-place write `assign`."""
    from ..autograd.function import _op_name
    return sorted({_op_name(c) for c in _op_classes() if _maps(c.onnx)} | {"assign"})


def _unmapped_error(e, why=None):
    detail = f" ({why})" if why else ""
    err = NotImplementedError(
        f"mg.onnx.export: the op {e.prim!r} has no ONNX mapping{detail}; called at {e.source}. "
        f"Mapped ops: {', '.join(mapped())}")
    err.op, err.reason = e.fn, why  # the op class (None: an effect) and the declared reason
    return err


_COMPLEX_WHY = "ONNX has no complex tensor type: compute with the real and imaginary parts instead"


def _refuse_complex(g):
    """ONNX has no complex tensor type (its operators would read complex64 as something else):
    a graph with a complex input, output or intermediate is refused, naming the first op that
    makes or reads one (with its own declared reason when it has no mapping anyway)."""
    for i, v in enumerate(g.invars):
        if np.dtype(v.dtype).kind == "c":
            err = NotImplementedError(f"mg.onnx.export: input {i} is {v.dtype}; ONNX has no complex "
                                      f"tensors: pass the real and imaginary parts (mg.view_as_real) instead")
            err.op, err.reason = None, _COMPLEX_WHY
            raise err
    for e in g.eqns:
        if any(np.dtype(v.dtype).kind == "c" for v in list(e.outvars) + [a for a in e.args if isinstance(a, Var)]):
            rule = getattr(e.fn, "onnx", None)
            raise _unmapped_error(e, rule.why if type(rule) is NoRule else _COMPLEX_WHY)


def _rule(e):
    """The equation's lowering, or the NotImplementedError to raise."""
    if e.prim == "set_grad" or (e.effect and e.prim != "assign"):
        return _unmapped_error(e, "a gradient write: export an inference graph (model.eval(), no backward)")
    if e.fn is None:
        return _assign
    rule = e.fn.onnx
    if type(rule) is NoRule:
        return _unmapped_error(e, rule.why)
    if rule is None:
        return _unmapped_error(e)
    if type(rule) is str:
        return lambda e, c: c.apply(rule, e)
    return rule


def to_model(g, input_names=None, output_names=None, dynamic_axes=None, opset_version=OPSET):
    """A traced Graph (an inference program) -> an onnx.ModelProto, checked with onnx.checker."""
    _refuse_complex(g)
    rules = [_rule(e) for e in g.eqns]
    for r in rules:  # an op without a mapping is named first, whether or not onnx is installed
        if isinstance(r, Exception):
            raise r
    onnx, helper = _onnx()
    from onnx import numpy_helper
    newest = onnx.defs.onnx_opset_version()
    if type(opset_version) is not int or not 17 <= opset_version <= newest:
        raise ValueError(f"mg.onnx.export: opset_version must be an int from 17 to {newest} (the newest "
                         f"this onnx {onnx.__version__} knows), got {opset_version!r}")
    if not g.outvars:
        raise ValueError("mg.onnx.export: the function returns no tensor (None or only Python values); an "
                         "ONNX model needs at least one output")
    input_names, output_names, dynamic_axes = _names(g, input_names, output_names, dynamic_axes)
    batch = g.invars[0].shape[0] if g.invars and g.invars[0].shape else None
    dynamic_batch = bool(input_names) and 0 in dynamic_axes.get(input_names[0], {})
    views = {e.args[0].name for e in g.eqns
             if e.fn is not None and getattr(e.fn, "_is_view", False) and e.args and isinstance(e.args[0], Var)}
    produced = set()
    ctx = Ctx(helper, opset_version, batch, dynamic_batch, views, produced)
    for e, rule in zip(g.eqns, rules):
        try:
            rule(e, ctx)
        except Unmapped as why:
            raise _unmapped_error(e, str(why)) from None
        produced.update(v.name for v in e.outvars)
    for v, b in g.state:
        if b.kind != "tensor":
            raise NotImplementedError(f"mg.onnx.export: the graph reads {b.name!r} ({b.kind}); only "
                                      f"parameters and buffers can become ONNX initializers")
        ctx.inits.append(numpy_helper.from_array(np.asarray(b.obj._data), v.name))
    for v, a in g.consts:
        ctx.inits.append(numpy_helper.from_array(np.asarray(a), v.name))
    # names: inputs and outputs get the user's names, every other traced var "v.<name>" (a traced
    # name such as "x" may be a user's input name); a program output that is an input, a constant or
    # an earlier output gets its own Identity node
    nodes, seen = ctx.nodes, set()
    rename = {v.name: nm for v, nm in zip(g.invars, input_names)}
    identities = []
    for v, nm in zip(g.outvars, output_names):
        if v.name in produced and v.name not in seen and v.name not in rename:
            rename[v.name] = nm
        else:
            identities.append((v.name, nm))
        seen.add(v.name)

    def final(n):
        return rename.get(n) or (n if n.startswith("t.") else "v." + n)
    for node in nodes:
        node.input[:] = [final(i) for i in node.input]
        node.output[:] = [final(o) for o in node.output]
    for init in ctx.inits:
        init.name = final(init.name)
    nodes += [helper.make_node("Identity", [final(n)], [nm]) for n, nm in identities]

    def vinfo(v, nm):
        shape = [dynamic_axes.get(nm, {}).get(i, s) for i, s in enumerate(v.shape)]
        return helper.make_tensor_value_info(nm, Ctx.tp(v.dtype), shape)
    graph = helper.make_graph(nodes, "minigrad", [vinfo(v, nm) for v, nm in zip(g.invars, input_names)],
                              [vinfo(v, nm) for v, nm in zip(g.outvars, output_names)], ctx.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset_version)],
                              producer_name="minigrad")
    model.ir_version = min(model.ir_version, 8)
    onnx.checker.check_model(model)
    return model


def _names(g, input_names, output_names, dynamic_axes):
    """The graph's input and output names (given, or input_0, ...) and its dynamic axes checked and
    in the {name: {axis: label}} form."""
    input_names = list(input_names or [f"input_{i}" for i in range(len(g.invars))])
    output_names = list(output_names or [f"output_{i}" for i in range(len(g.outvars))])
    if len(input_names) != len(g.invars) or len(output_names) != len(g.outvars):
        raise ValueError(f"mg.onnx.export: {len(g.invars)} inputs and {len(g.outvars)} outputs, but "
                         f"{len(input_names)} input_names and {len(output_names)} output_names")
    dynamic_axes = _dynamic_axes(dynamic_axes, dict(zip(input_names, g.invars)),
                                 dict(zip(output_names, g.outvars)))
    return input_names, output_names, dynamic_axes


def _dynamic_axes(dynamic_axes, ins, outs):
    """{name: {axis: label}} from PyTorch's forms ({name: {axis: label}} or {name: [axes]}, labels
    then "<name>_dynamic_axes_<k>"), checked: every name an input or output, every axis an int in
    range (PyTorch raises for both; they were ignored)."""
    if dynamic_axes is None:
        return {}
    if not isinstance(dynamic_axes, dict):
        raise TypeError(f"mg.onnx.export: dynamic_axes must be a dict {{name: {{axis: label}}}} or {{name: [axes]}}, "
                        f"got {type(dynamic_axes).__name__}")
    out = {}
    for name, axes in dynamic_axes.items():
        v = ins.get(name, outs.get(name))
        if v is None:
            raise ValueError(f"mg.onnx.export: dynamic_axes names {name!r}, which is not an input or output "
                             f"(inputs {list(ins)}, outputs {list(outs)})")
        if isinstance(axes, (list, tuple)):
            axes = {a: f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(axes)}
        if not isinstance(axes, dict):
            raise TypeError(f"mg.onnx.export: dynamic_axes[{name!r}] must be a dict {{axis: label}} or a list of "
                            f"axes, got {type(axes).__name__}")
        for a, label in axes.items():
            if type(a) is not int or not 0 <= a < len(v.shape):
                raise ValueError(f"mg.onnx.export: dynamic_axes[{name!r}] has axis {a!r}, out of range for its "
                                 f"shape {tuple(v.shape)}")
            if not isinstance(label, str):
                raise TypeError(f"mg.onnx.export: dynamic_axes[{name!r}][{a}] must be a str label, got {label!r}")
        out[name] = dict(axes)
    return out


def _signature(g):
    """(prim, args) per equation and the constants, to compare two traces of one program."""
    return [(e.prim, e.args) for e in g.eqns], [a for _, a in g.consts]


def _same(a, b, s, p):
    """a (traced at size s) and b (at size p) agree: equal, or an int scaled with the size (a batch,
    B*T), structures alike, arrays of one shape and the same values."""
    if isinstance(a, Var) or isinstance(b, Var):
        return isinstance(a, Var) and isinstance(b, Var)
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return a == b
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return a == b or a * p == b * s
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y, s, p) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], s, p) for k in a)
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 -- incomparable objects: not known to agree
        return False


def _check_dynamic(trace_with, args, g, dynamic_axes, input_names):
    """Trace again with each dynamic input label's size changed (to 1 and to size + 1) and warn
    (ExportWarning) where the program differs: ONNX runs the one traced program at every size."""
    from ..tensor import Tensor
    slots = [k for k, a in enumerate(args) if isinstance(a, Tensor)]  # the graph's inputs, in order
    labels = {}
    for k, name in zip(slots, input_names):
        for axis, label in dynamic_axes.get(name, {}).items():
            labels.setdefault(label, []).append((k, axis))
    names = dict(zip(slots, input_names))
    ref = _signature(g)
    for label, where in labels.items():
        s = args[where[0][0]].shape[where[0][1]]
        if any(args[k].shape[a] != s for k, a in where) or s == 0:
            continue
        for p in sorted({1, s + 1} - {s}):
            probe = list(args)
            for k, a in where:
                probe[k] = Tensor(np.take(args[k]._data, np.arange(p) % s, axis=a))
            try:
                other = _signature(trace_with(probe))
            except Exception as err:  # noqa: BLE001 -- reported in the warning
                warnings.warn(f"mg.onnx.export: dynamic axis {label!r} ({names[where[0][0]]!r} axis "
                              f"{where[0][1]}): the function fails at size {p} ({type(err).__name__}: {err}); "
                              f"the exported model was traced at size {s} only", ExportWarning, stacklevel=3)
                break
            site = _first_difference(ref, other, g, s, p)
            if site is not None:
                warnings.warn(f"mg.onnx.export: dynamic axis {label!r} ({names[where[0][0]]!r} axis "
                              f"{where[0][1]}): the traced program at size {p} differs from the one at size {s}, "
                              f"{site}: a Python branch on a shape, or a constant sized by it. The exported model "
                              f"runs size {s}'s program at every size, so its results can be wrong for others; "
                              f"make the branch a tensor op (mg.where) or export without this dynamic axis",
                              ExportWarning, stacklevel=3)
                break


def _first_difference(ref, other, g, s, p):
    (eq_a, consts_a), (eq_b, consts_b) = ref, other
    for k, ((prim_a, args_a), (prim_b, args_b)) in enumerate(zip(eq_a, eq_b)):
        if prim_a != prim_b or not _same(args_a, args_b, s, p):
            what = f"{prim_a} with other parameters" if prim_a == prim_b else f"{prim_a} there, {prim_b} at size {p}"
            return f"at {g.eqns[k].source} ({what})"
    if len(eq_a) != len(eq_b):
        k = min(len(eq_a), len(eq_b))
        return f"after {g.eqns[k - 1].source if k else 'the start'} ({len(eq_a)} vs {len(eq_b)} operations)"
    if len(consts_a) != len(consts_b):
        return f"in its constants ({len(consts_a)} vs {len(consts_b)})"
    for (v, _), a, b in zip(g.consts, consts_a, consts_b):
        if not _same(a, b, s, p):
            user = next((e for e in g.eqns if any(x is v for x in e.invars)), None)
            where = f" read at {user.source} ({user.prim})" if user is not None else ""
            return f"in a constant{where}: other values, or a shape made from a shape (mg.ones(x.shape[0]))"
    return None


def export(model_or_fn, example_args, path, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=OPSET):
    """Export a model (put in eval mode) or function to an ONNX file at `path`, written atomically.

    Args:
        model_or_fn: an nn.Module (exported in eval mode, then put back in its mode) or a function
            of tensors.
        example_args: a Tensor or a tuple of Tensors to trace with.
        path: the .onnx file to write (nothing is written when export fails).
        input_names / output_names: names of the graph's inputs / outputs (default input_0, ...).
        dynamic_axes: {name: {axis: "label"}} axes left symbolic (e.g. {"input": {0: "batch"}}).
        opset_version: the ONNX opset, 17 or newer (default 18: reductions take axes as inputs).

    Returns:
        path.

    Raises:
        NotImplementedError: an op without an ONNX mapping (the message names it and your line).

    Example:
        >>> m = mg.nn.Sequential(mg.nn.Linear(4, 2), mg.nn.ReLU())
        >>> mg.onnx.export(m, mg.randn(1, 4), "m.onnx", input_names=["x"], output_names=["y"],
        ...                dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    """
    from ..autograd.grad_mode import no_grad
    from ..graph.trace import trace
    from ..nn.modules.module import Module
    from ..tensor import Tensor
    if isinstance(example_args, Tensor):
        example_args = (example_args,)
    if not isinstance(example_args, tuple):
        raise TypeError(f"mg.onnx.export: example_args must be a Tensor or a tuple of Tensors, got "
                        f"{type(example_args).__name__}")
    for k, a in enumerate(example_args):
        if isinstance(a, np.ndarray) or (isinstance(a, (list, tuple)) and a and not any(isinstance(x, Tensor) for x in a)
                                         and all(isinstance(x, (int, float)) for x in a)):
            raise TypeError(f"mg.onnx.export: example_args[{k}] is a {type(a).__name__}, which would be baked into "
                            f"the model as a constant (it would have no input for it); pass mg.tensor(...) so it "
                            f"becomes an input")
    was = None
    if isinstance(model_or_fn, Module):
        was = model_or_fn.training
        model_or_fn.eval()

    def trace_with(args):
        with no_grad():
            return trace(model_or_fn, *args)
    try:
        g = trace_with(example_args)
        model = to_model(g, input_names, output_names, dynamic_axes, opset_version)
        names, _, axes = _names(g, input_names, output_names, dynamic_axes)  # (checked by to_model)
        if any(axes.get(n) for n in names):  # dynamic input axes: does the program change with them?
            _check_dynamic(trace_with, example_args, g, axes, names)
    finally:
        if was:
            model_or_fn.train(was)
    data = model.SerializeToString()
    with atomic_write(path) as out:
        out.write(data)
    return path
