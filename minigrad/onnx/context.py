"""The context `c` an op's ONNX lowering writes into: `onnx(e, c) -> output name` on the op class.

A lowering reads its equation `e` (e.args: forward's arguments, each a Var or a static value;
e.outvars: the results) and appends ONNX nodes through `c`: names of operands and results
(`c.x(e)`, `c.out(e)`, `c.operand(a, dtype)`), constants (`c.const`, `c.ints`, `c.scalar`), nodes
(`c.add`) and the shared shapes of a lowering (`c.reshape`, `c.reduce`). A case it cannot express
raises `c.unmapped("why")`; the exporter turns that into NotImplementedError naming the op, the
reason and the user's line. Nothing here imports `onnx` until a node or constant is made (op
modules never import this package: they only receive `c`).
"""
import numpy as np

from ..graph.ir import Var

INT64_MIN = -(2 ** 63)


class Unmapped(Exception):
    """Raised (via c.unmapped) by a lowering that cannot express this equation's parameters."""


class Ctx:
    """What a lowering uses: names of vars, constants, temporaries, and the node list."""

    INT64_MIN = INT64_MIN

    def __init__(self, helper, opset, batch, dynamic_batch, views, produced):
        self.helper, self.opset, self.batch, self.dynamic_batch = helper, opset, batch, dynamic_batch
        self.views = views  # names of vars that some view op read (an in-place write into them is refused)
        self.produced = produced  # names of the vars earlier equations wrote
        self.inits, self.nodes, self.k = [], [], 0

    # -- names ---------------------------------------------------------------------------------------
    def tmp(self):
        """A fresh name for an intermediate ONNX value."""
        self.k += 1
        return f"t.{self.k}"  # never a traced var's name (those become "v.<name>") nor a user's

    @staticmethod
    def x(e):
        """The name of the equation's first argument (a Var)."""
        return e.args[0].name

    @staticmethod
    def out(e, i=0):
        """The name of the equation's result i."""
        return e.outvars[i].name

    @staticmethod
    def dt(e, i=None):
        """The dtype of the equation's first Var argument (or argument i), for scalar operands."""
        if i is not None and isinstance(e.args[i], Var):
            return e.args[i].dtype
        for a in e.args:
            if isinstance(a, Var):
                return a.dtype
        return e.outvars[0].dtype

    @staticmethod
    def is_var(a):
        """Whether an argument is a traced tensor (a Var) rather than a static value."""
        return isinstance(a, Var)

    def is_intermediate(self, v):
        """Whether ``v`` is written by an earlier equation (not a graph input or state)."""
        return v.name in self.produced

    @staticmethod
    def unmapped(why):
        """The exception a lowering raises for a case it cannot express: `raise c.unmapped("why")`."""
        return Unmapped(why)

    # -- constants -----------------------------------------------------------------------------------
    @staticmethod
    def tp(dtype):
        """The ONNX tensor type of a NumPy dtype (for Cast's `to`)."""
        from onnx import helper
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def const(self, arr):
        """Add ``arr`` as an initializer; returns its name."""
        from onnx import numpy_helper
        name = self.tmp()
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def ints(self, xs):
        """Add an int64 1-D initializer holding ``xs``; returns its name."""
        return self.const(np.asarray(list(xs), dtype=np.int64))

    def scalar(self, v, dtype):
        """Add a 0-d initializer ``v`` of ``dtype``; returns its name."""
        return self.const(np.asarray(v, dtype=dtype))

    def operand(self, a, dtype):
        """A Var's name, or a static Python/NumPy value as a constant of `dtype`."""
        if isinstance(a, Var):
            return a.name
        if a is None:
            raise Unmapped("an optional operand is absent")
        return self.const(np.asarray(a, dtype=dtype))

    def operands(self, e, n=None, dtype=None):
        """The names of the equation's first n arguments (all: None), numbers as constants of
        `dtype` (default: the dtype of its first Var)."""
        dtype = self.dt(e) if dtype is None else dtype
        return [self.operand(a, dtype) for a in (e.args if n is None else e.args[:n])]

    # -- nodes ---------------------------------------------------------------------------------------
    def add(self, op, ins, outs=None, **attrs):
        """Append a node; returns its output name (a new temporary unless `outs` is given)."""
        outs = [self.tmp()] if outs is None else ([outs] if isinstance(outs, str) else list(outs))
        self.nodes.append(self.helper.make_node(op, list(ins), outs, **attrs))
        return outs[0]

    def apply(self, op, e, **attrs):
        """A string rule (`onnx = "Exp"`): the operator `op` on all the equation's operands."""
        return self.add(op, self.operands(e), self.out(e), **attrs)

    def result(self, e, name, i=0):
        """Write a computed name to the equation's result i (an Identity node)."""
        return self.add("Identity", [name], self.out(e, i))

    def reshape(self, x, shape, out=None, copy_zeros=False):
        """Reshape to a static shape; allowzero=1 so a 0 in it means an empty axis, not "copy" (unless
        copy_zeros: then a 0 copies that axis' run-time size, for a dynamic batch)."""
        shape = [int(s) for s in shape]
        zeros = {"allowzero": 1} if 0 in shape and not copy_zeros else {}
        return self.add("Reshape", [x, self.ints(shape)], out, **zeros)

    def reduce(self, op, x, axes, keepdim, out, rank):
        """ReduceX over `axes` (None: all), axes as an input from opset 18 (ReduceSum: 13)."""
        if axes is not None:
            axes = [int(a) for a in (axes if isinstance(axes, (tuple, list)) else (axes,))]
            if not axes:  # reducing over no axes: NumPy's axis=() leaves x as it is (|x| for L2)
                return self.add("Abs" if op == "ReduceL2" else "Identity", [x], out)
        if rank == 0:  # a 0-d input: reduce it as a 1-element vector (onnxruntime skips rank 0)
            x, axes, keepdim = self.reshape(x, [1]), [0], False
        if axes is None:
            return self.add(op, [x], out, keepdims=int(bool(keepdim)))
        if op == "ReduceSum" or self.opset >= 18:
            return self.add(op, [x, self.ints(axes)], out, keepdims=int(bool(keepdim)))
        return self.add(op, [x], out, axes=axes, keepdims=int(bool(keepdim)))

    def on_axis(self, op, e):
        """Softmax/LogSoftmax/CumSum along e.args[1]; a 0-d input is treated as a 1-element vector."""
        x, dim = e.args[0], e.args[1]
        name, zero_d = x.name, not x.shape
        if zero_d:
            name, dim = self.reshape(name, [1]), 0
        if op == "CumSum":
            res = self.add(op, [name, self.const(np.asarray(int(dim), np.int64))])
        else:
            res = self.add(op, [name], axis=int(dim))
        if zero_d:
            res = self.reshape(res, [])
        return self.result(e, res)
