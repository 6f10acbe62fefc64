"""mg.onnx.export: a model in eval mode (or a function) -> an ONNX file, through the traced graph.

Only this package imports `onnx` (the optional extra: pip install "minigrad[onnx]"). The model is
traced with mg.trace; each equation maps to ONNX nodes by its primitive name (the table below), the
graph's state inputs (parameters, buffers) become initializers.
"""
import numpy as np

from .._atomic import atomic_write
from ..graph.ir import Var

OPSET = 17


def _onnx():
    try:
        import onnx
        from onnx import helper
    except ImportError:
        raise ImportError("mg.onnx.export needs the onnx package: pip install 'minigrad[onnx]' "
                          "(onnx, onnxruntime)") from None
    return onnx, helper


def _unary(op):
    return lambda e, n, ctx: [ctx.node(op, [n(e.args[0])], e)]


def _binary(op):
    return lambda e, n, ctx: [ctx.node(op, [n(e.args[0]), ctx.operand(e.args[1], e)], e)]


def _linear(e, n, ctx):
    x, w, b = e.args[:3]
    if len(x.shape) == 2:
        ins = [n(x), n(w)] + ([n(b)] if isinstance(b, Var) else [])
        return [ctx.node("Gemm", ins, e, transB=1)]
    wt = ctx.tmp()
    mm = ctx.tmp() if isinstance(b, Var) else None
    nodes = [ctx.raw("Transpose", [n(w)], [wt], perm=[1, 0]),
             ctx.raw("MatMul", [n(x), wt], [mm] if mm else [n(e.outvars[0])])]
    if mm:
        nodes.append(ctx.raw("Add", [mm, n(b)], [n(e.outvars[0])]))
    return nodes


def _reshape(e, n, ctx):
    shape = list(e.outvars[0].shape)
    if ctx.dynamic_batch and shape and shape[0] == ctx.batch:
        shape[0] = -1
    return [ctx.node("Reshape", [n(e.args[0]), ctx.const(np.array(shape, np.int64))], e)]


def _softmax(op):
    def f(e, n, ctx):
        dim = e.params.get("dim", e.args[1] if len(e.args) > 1 else -1)
        return [ctx.node(op, [n(e.args[0])], e, axis=int(dim))]
    return f


TABLE = {
    "add": _binary("Add"), "sub": _binary("Sub"), "mul": _binary("Mul"), "div": _binary("Div"),
    "matmul": _binary("MatMul"), "maximum": _binary("Max"), "minimum": _binary("Min"),
    "neg": _unary("Neg"), "exp": _unary("Exp"), "log": _unary("Log"), "sqrt": _unary("Sqrt"),
    "abs": _unary("Abs"), "tanh": _unary("Tanh"), "sigmoid": _unary("Sigmoid"), "relu": _unary("Relu"),
    "sin": _unary("Sin"), "cos": _unary("Cos"), "reciprocal": _unary("Reciprocal"),
    "floor": _unary("Floor"), "ceil": _unary("Ceil"), "sign": _unary("Sign"), "erf": _unary("Erf"),
    "linear": _linear, "reshape": _reshape,
    "softmax": _softmax("Softmax"), "log_softmax": _softmax("LogSoftmax"), "logsoftmax": _softmax("LogSoftmax"),
    "permute": lambda e, n, ctx: [ctx.node("Transpose", [n(e.args[0])], e, perm=[int(d) for d in e.args[1]])],
}


class _Ctx:
    def __init__(self, helper, batch, dynamic_batch):
        self.helper, self.batch, self.dynamic_batch = helper, batch, dynamic_batch
        self.inits, self.k = [], 0

    def tmp(self):
        self.k += 1
        return f"_t{self.k}"

    def const(self, arr):
        from onnx import numpy_helper
        name = self.tmp()
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def operand(self, a, e):
        if isinstance(a, Var):
            return a.name
        dt = e.outvars[0].dtype
        return self.const(np.asarray(a, dtype=dt))

    def raw(self, op, ins, outs, **attrs):
        return self.helper.make_node(op, ins, outs, **attrs)

    def node(self, op, ins, e, **attrs):
        return self.helper.make_node(op, ins, [v.name for v in e.outvars], **attrs)


def export(model_or_fn, example_args, path, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=OPSET):
    """Export a model (put in eval mode) or function to an ONNX file at `path`, written atomically.

    Args:
        model_or_fn: an nn.Module (exported in eval mode) or a function of tensors.
        example_args: a Tensor or a tuple of Tensors to trace with.
        path: the .onnx file to write.
        input_names / output_names: names of the graph's inputs / outputs (default input_0, ...).
        dynamic_axes: {name: {axis: "label"}} axes left symbolic (e.g. {"input": {0: "batch"}}).

    Raises:
        NotImplementedError: an op without an ONNX mapping (the message names it and your line).
    """
    onnx, helper = _onnx()
    from onnx import TensorProto, numpy_helper
    from ..graph.trace import trace
    from ..nn.modules.module import Module
    from ..tensor import Tensor
    if isinstance(example_args, Tensor):
        example_args = (example_args,)
    was = None
    if isinstance(model_or_fn, Module):
        was = model_or_fn.training
        model_or_fn.eval()
    try:
        from ..autograd.grad_mode import no_grad
        with no_grad():
            g = trace(model_or_fn, *example_args)
    finally:
        if was:
            model_or_fn.train(was)
    input_names = list(input_names or [f"input_{i}" for i in range(len(g.invars))])
    output_names = list(output_names or [f"output_{i}" for i in range(len(g.outvars))])
    dynamic_axes = dynamic_axes or {}
    batch = g.invars[0].shape[0] if g.invars and g.invars[0].shape else None
    ctx = _Ctx(helper, batch, any(0 in ax for ax in dynamic_axes.values()))
    rename = {v.name: nm for v, nm in zip(g.invars, input_names)}
    rename.update({v.name: nm for v, nm in zip(g.outvars, output_names)})
    nodes = []
    for e in g.eqns:
        f = TABLE.get(e.prim)
        if f is None or e.effect:
            raise NotImplementedError(f"mg.onnx.export: the op {e.prim!r} has no ONNX mapping (called at "
                                      f"{e.source}); supported: {', '.join(sorted(TABLE))}")
        nodes += f(e, lambda v: v.name, ctx)
    for v, b in g.state:
        ctx.inits.append(numpy_helper.from_array(np.asarray(b.obj._data), v.name))
    for v, a in g.consts:
        ctx.inits.append(numpy_helper.from_array(np.asarray(a), v.name))
    for node in nodes:
        node.input[:] = [rename.get(i, i) for i in node.input]
        node.output[:] = [rename.get(o, o) for o in node.output]

    def vinfo(v, nm):
        shape = [dynamic_axes.get(nm, {}).get(i, s) for i, s in enumerate(v.shape)]
        return helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(np.dtype(v.dtype)), shape)
    graph = helper.make_graph(nodes, "minigrad", [vinfo(v, nm) for v, nm in zip(g.invars, input_names)],
                              [vinfo(v, nm) for v, nm in zip(g.outvars, output_names)], ctx.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset_version)],
                              producer_name="minigrad")
    model.ir_version = min(model.ir_version, 8)
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    with atomic_write(path) as out:
        out.write(data)
    del TensorProto
    return path
