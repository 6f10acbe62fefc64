"""mg.onnx.export: a model in eval mode (or a function) -> an ONNX file, through the traced graph.

Only this package imports `onnx` (the optional extra: pip install "minigrad[onnx]"). The model is
traced with mg.graph.trace; each equation maps to ONNX nodes by its primitive name (`TABLE` below: one
small function per primitive, composites where ONNX has no single operator), the graph's state
inputs (parameters, buffers) become initializers. `mapped()` lists the primitives that map; an
equation whose primitive has no mapping raises NotImplementedError naming it and the user's line.

Notes on the mapping: minigrad's IR does not tell flatten/squeeze/unsqueeze/view apart (they are
one `reshape` primitive with the target shape), so all become ONNX Reshape; reductions take their
axes as an input from opset 18 on (an attribute before); a dynamic batch axis (`dynamic_axes` with
axis 0 on the first input) turns a reshape's leading batch size into -1.
"""
import math

import numpy as np

from .._atomic import atomic_write
from ..graph.ir import Var

OPSET = 18
_INT64_MIN = -(2 ** 63)


def _onnx():
    try:
        import onnx
        from onnx import helper
    except ImportError:
        raise ImportError("mg.onnx.export needs the onnx package: pip install 'minigrad[onnx]' "
                          "(onnx, onnxruntime)") from None
    return onnx, helper


class _Unmapped(Exception):
    """Raised by a mapping that cannot express this equation's parameters (the reason is the text)."""


# -- the mapping context ------------------------------------------------------------------------------
class _Ctx:
    """What a mapping function uses: names of vars, constants, temporaries, and the node list."""

    def __init__(self, helper, opset, batch, dynamic_batch, views):
        self.helper, self.opset, self.batch, self.dynamic_batch = helper, opset, batch, dynamic_batch
        self.views = views  # names of vars that some view op read (an in-place write into them is refused)
        self.inits, self.nodes, self.k = [], [], 0

    def tmp(self):
        self.k += 1
        return f"t.{self.k}"  # never a traced var's name (those become "v.<name>") nor a user's

    def const(self, arr):
        from onnx import numpy_helper
        name = self.tmp()
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def ints(self, xs):
        return self.const(np.asarray(list(xs), dtype=np.int64))

    def operand(self, a, dtype):
        """A Var's name, or a static Python/NumPy value as a constant of `dtype`."""
        if isinstance(a, Var):
            return a.name
        if a is None:
            raise _Unmapped("an optional operand is absent")
        return self.const(np.asarray(a, dtype=dtype))

    def reshape(self, x, shape, out=None, copy_zeros=False):
        """Reshape to a static shape; allowzero=1 so a 0 in it means an empty axis, not "copy" (unless
        copy_zeros: then a 0 copies that axis' run-time size, for a dynamic batch)."""
        shape = [int(s) for s in shape]
        zeros = {"allowzero": 1} if 0 in shape and not copy_zeros else {}
        return self.add("Reshape", [x, self.ints(shape)], out, **zeros)

    def add(self, op, ins, outs=None, **attrs):
        """Append a node; returns its output name (a new temporary unless `outs` is given)."""
        outs = [self.tmp()] if outs is None else ([outs] if isinstance(outs, str) else list(outs))
        self.nodes.append(self.helper.make_node(op, list(ins), outs, **attrs))
        return outs[0]

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


def _dt(e, i=None):
    """The dtype of the equation's first Var argument (or argument i), for scalar operands."""
    if i is not None and isinstance(e.args[i], Var):
        return e.args[i].dtype
    for a in e.args:
        if isinstance(a, Var):
            return a.dtype
    return e.outvars[0].dtype


def _out(e, i=0):
    return e.outvars[i].name


def _x(e):
    return e.args[0].name


# -- elementwise --------------------------------------------------------------------------------------
def _unary(op, **attrs):
    return lambda e, c: c.add(op, [_x(e)], _out(e), **attrs)


def _binary(op, bool_in=False):
    def f(e, c):
        dt = _dt(e)
        a, b = (c.operand(v, dt) for v in e.args[:2])
        if bool_in and dt != np.bool_:
            a, b = (c.add("Cast", [v], to=_tp(np.bool_)) for v in (a, b))
        return c.add(op, [a, b], _out(e))
    return f


def _bitwise(op, bool_op):
    def f(e, c):
        if _dt(e) == np.bool_:
            return _binary(bool_op)(e, c)
        if c.opset < 18:
            raise _Unmapped(f"{op} needs opset 18")
        out = e.outvars[0].dtype
        a, b = (c.operand(v, out) for v in e.args[:2])
        a, b = (n if not isinstance(v, Var) or v.dtype == out else c.add("Cast", [n], to=_tp(out))
                for n, v in zip((a, b), e.args[:2]))
        return c.add(op, [a, b], _out(e))
    return f


def _bitwise_not(e, c):
    if e.args[0].dtype == np.bool_:
        return c.add("Not", [_x(e)], _out(e))
    return c.add("BitwiseNot", [_x(e)], _out(e))


def _tp(dtype):
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _scalar(c, v, dtype):
    return c.const(np.asarray(v, dtype=dtype))


def _composite(build):
    """A mapping written as a formula of ONNX nodes: build(c, x, dtype, e) returns the result name."""
    def f(e, c):
        res = build(c, _x(e), e.args[0].dtype, e)
        return c.add("Identity", [res], _out(e))
    return f


def _trunc(c, x, dt, e=None):
    neg = c.add("Less", [x, _scalar(c, 0, dt)])
    return c.add("Where", [neg, c.add("Ceil", [x]), c.add("Floor", [x])])


def _round(e, c):
    d = e.args[1] if len(e.args) > 1 else 0
    if not d:
        return c.add("Round", [_x(e)], _out(e))
    s = _scalar(c, 10.0 ** d, e.args[0].dtype)
    return c.add("Div", [c.add("Round", [c.add("Mul", [_x(e), s])]), s], _out(e))


def _ne(e, c):
    dt = _dt(e)
    return c.add("Not", [c.add("Equal", [c.operand(v, dt) for v in e.args[:2]])], _out(e))


def _isfinite(e, c):
    bad = c.add("Or", [c.add("IsNaN", [_x(e)]), c.add("IsInf", [_x(e)])])
    return c.add("Not", [bad], _out(e))


def _clamp(e, c):
    x, lo, hi = e.args[:3]
    dt = x.dtype
    res = x.name
    if lo is not None:
        res = c.add("Max", [res, c.operand(lo, dt)])
    if hi is not None:
        res = c.add("Min", [res, c.operand(hi, dt)])
    return c.add("Identity", [res], _out(e))


def _where(e, c):
    cond, x, y = e.args[:3]
    dt = e.outvars[0].dtype
    return c.add("Where", [c.operand(cond, np.bool_), c.operand(x, dt), c.operand(y, dt)], _out(e))


def _binary_formula(build):
    def f(e, c):
        dt = _dt(e)
        a, b = (c.operand(v, dt) for v in e.args[:2])
        return c.add("Identity", [build(c, a, b, dt)], _out(e))
    return f


def _logaddexp(base):
    ln_b = math.log(base)

    def build(c, a, b, dt):
        m = c.add("Max", [a, b])
        d = c.add("Abs", [c.add("Sub", [a, b])])
        d = c.add("Where", [c.add("Equal", [a, b]), _scalar(c, 0, dt), d])  # inf, inf: no inf - inf
        t = c.add("Exp", [c.add("Mul", [c.add("Neg", [d]), _scalar(c, ln_b, dt)])])  # base ** -d
        lg = c.add("Log", [c.add("Add", [t, _scalar(c, 1, dt)])])
        return c.add("Add", [m, c.add("Div", [lg, _scalar(c, ln_b, dt)])])
    return _binary_formula(build)


def _remainder(c, a, b, dt):
    if np.dtype(dt).kind in "iu":
        return c.add("Mod", [a, b])  # integer Mod takes the divisor's sign, as Python's %
    q = c.add("Floor", [c.add("Div", [a, b])])
    return c.add("Sub", [a, c.add("Mul", [q, b])])


def _floor_divide(c, a, b, dt):
    if np.dtype(dt).kind in "iu":
        raise _Unmapped("integer floor division (ONNX Div truncates)")
    return c.add("Floor", [c.add("Div", [a, b])])


def _hypot(c, a, b, dt):
    return c.add("Sqrt", [c.add("Add", [c.add("Mul", [a, a]), c.add("Mul", [b, b])])])


def _addc(op):
    def f(e, c):
        x, t1, t2, value, out = e.args[:5]
        if out is not None:
            raise _Unmapped("the out= form")
        dt = x.dtype
        prod = c.add(op, [c.operand(t1, dt), c.operand(t2, dt)])
        return c.add("Add", [x.name, c.add("Mul", [prod, _scalar(c, value, dt)])], _out(e))
    return f


def _lerp(e, c):
    x, end, w, out = e.args[:4]
    if out is not None:
        raise _Unmapped("the out= form")
    dt = x.dtype
    end = c.operand(end, dt)
    diff = c.add("Sub", [end, x.name])
    w = c.operand(w, dt)
    near_x = c.add("Add", [x.name, c.add("Mul", [w, diff])])  # PyTorch's two forms, per element
    near_end = c.add("Sub", [end, c.add("Mul", [diff, c.add("Sub", [_scalar(c, 1, dt), w])])])
    small = c.add("Less", [c.add("Abs", [w]), _scalar(c, 0.5, dt)])
    return c.add("Where", [small, near_x, near_end], _out(e))


def _atan2(c, y, x, dt):
    zero = _scalar(c, 0, dt)
    pi, half = _scalar(c, math.pi, dt), _scalar(c, math.pi / 2, dt)
    yneg = c.add("Less", [c.add("Reciprocal", [y]), zero])
    xneg = c.add("Less", [c.add("Reciprocal", [x]), zero])
    x_zero = c.add("Equal", [x, zero])
    safe_x = c.add("Where", [x_zero, _scalar(c, 1, dt), x])
    q = c.add("Atan", [c.add("Div", [y, safe_x])])
    turn = c.add("Where", [yneg, c.add("Neg", [pi]), pi])  # x < 0: the half turn toward y's side
    off_axis = c.add("Where", [xneg, c.add("Add", [q, turn]), q])
    on_axis = c.add("Where", [c.add("Equal", [y, zero]), c.add("Where", [xneg, turn, y]),
                              c.add("Where", [yneg, c.add("Neg", [half]), half])])
    return c.add("Where", [x_zero, on_axis, off_axis])


def _copysign(c, x, y, dt):
    zero = _scalar(c, 0, dt)
    mag = c.add("Abs", [x])
    return c.add("Where", [c.add("Less", [c.add("Reciprocal", [y]), zero]), c.add("Neg", [mag]), mag])


def _isclose(e, c):
    x, y, rtol, atol, equal_nan = e.args[:5]
    dt = _dt(e)
    a, b = c.operand(x, dt), c.operand(y, dt)
    if np.dtype(dt).kind != "f":  # integers compare as float64, as NumPy's isclose
        dt = np.dtype(np.float64)
        a, b = (c.add("Cast", [v], to=_tp(dt)) for v in (a, b))
    finite = c.add("Not", [c.add("Or", [c.add("IsInf", [a]), c.add("IsInf", [b])])])
    tol = c.add("Add", [_scalar(c, atol, dt), c.add("Mul", [_scalar(c, rtol, dt), c.add("Abs", [b])])])
    near = c.add("And", [finite, c.add("LessOrEqual", [c.add("Abs", [c.add("Sub", [a, b])]), tol])])
    res = c.add("Or", [c.add("Equal", [a, b]), near])
    if equal_nan:
        res = c.add("Or", [res, c.add("And", [c.add("IsNaN", [a]), c.add("IsNaN", [b])])])
    return c.add("Identity", [res], _out(e))


def _cast(e, c):
    return c.add("Cast", [_x(e)], _out(e), to=_tp(e.args[1]))


def _logsigmoid(e, c):  # log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), overflow-free
    dt = e.args[0].dtype
    x = _x(e)
    t = c.add("Log", [c.add("Add", [c.add("Exp", [c.add("Neg", [c.add("Abs", [x])])]), _scalar(c, 1, dt)])])
    return c.add("Sub", [c.add("Min", [x, _scalar(c, 0, dt)]), t], _out(e))


def _assign(e, c):
    target, value = e.args
    if target.name in c.views or not c.is_intermediate(target):
        raise _Unmapped("an in-place write into an input, a parameter or a tensor with views (ONNX "
                        "tensors are values, not memory)")
    return c.add("Identity", [value.name], _out(e))


# -- reductions ---------------------------------------------------------------------------------------
def _reduction(op):
    return lambda e, c: c.reduce(op, _x(e), e.args[1], e.args[2], _out(e), len(e.args[0].shape))


def _argreduce(op):
    def f(e, c):
        x, dim, keepdim = e.args[:3]
        if dim is None:
            flat = c.reshape(x.name, [-1])
            res = c.add(op, [flat], axis=0, keepdims=0)
            if keepdim:
                return c.reshape(res, [1] * len(x.shape), _out(e))
            return c.add("Identity", [res], _out(e))
        if not x.shape:  # 0-d: the index is 0
            return c.add("Identity", [c.const(np.zeros((), np.int64))], _out(e))
        return c.add(op, [x.name], _out(e), axis=int(dim), keepdims=int(bool(keepdim)))
    return f


def _allany(op):
    def f(e, c):
        x, axes, keepdim = e.args[:3]
        b = x.name if x.dtype == np.bool_ else c.add("Cast", [x.name], to=_tp(np.bool_))
        i = c.add("Cast", [b], to=_tp(np.int64))
        r = c.reduce(op, i, axes, keepdim, None, len(x.shape))
        if op == "ReduceSum":  # any: a count of true values > 0 (0 over an empty input)
            return c.add("Greater", [r, c.const(np.zeros((), np.int64))], _out(e))
        return c.add("Cast", [r], _out(e), to=_tp(np.bool_))
    return f


def _normp(e, c):
    x, axes, keepdim, p = e.args[:4]
    dt = x.dtype
    powed = c.add("Pow", [c.add("Abs", [x.name]), _scalar(c, p, dt)])
    s = c.reduce("ReduceSum", powed, axes, keepdim, None, len(x.shape))
    return c.add("Pow", [s, _scalar(c, 1.0 / p, dt)], _out(e))


def _on_axis(op):
    """Softmax/LogSoftmax/CumSum along dim; a 0-d input is treated as a 1-element vector."""
    def f(e, c):
        x, dim = e.args[0], e.args[1]
        name, zero_d = x.name, not x.shape
        if zero_d:
            name, dim = c.reshape(name, [1]), 0
        if op == "CumSum":
            res = c.add(op, [name, c.const(np.asarray(int(dim), np.int64))])
        else:
            res = c.add(op, [name], axis=int(dim))
        if zero_d:
            res = c.reshape(res, [])
        return c.add("Identity", [res], _out(e))
    return f


# -- shapes -------------------------------------------------------------------------------------------
def _reshape(e, c):
    shape = list(e.outvars[0].shape)
    if c.dynamic_batch and shape and shape[0] == c.batch and e.args[0].shape[:1] == (c.batch,):
        shape[0] = -1
    return c.reshape(_x(e), shape, _out(e))


def _permute(e, c):
    return c.add("Transpose", [_x(e)], _out(e), perm=[int(d) % max(1, len(e.args[0].shape)) for d in e.args[1]])


def _expand(e, c):
    # a target size equal to the input's is written as 1: Expand broadcasts both ways, so the result
    # is the same, and an axis left dynamic (the batch) keeps whatever size it has at run time
    out, inp = list(e.outvars[0].shape), e.args[0].shape
    k = len(out) - len(inp)
    shape = [1 if i >= k and inp[i - k] == n else n for i, n in enumerate(out)]
    return c.add("Expand", [_x(e), c.ints(shape)], _out(e))


def _cat(e, c):
    dim, xs = e.args[0], e.args[1:]
    return c.add("Concat", [x.name for x in xs], _out(e), axis=int(dim))


def _stack(e, c):
    dim, xs = int(e.args[0]), e.args[1:]
    if dim < 0:
        dim += len(e.outvars[0].shape)
    ax = c.ints([dim])
    return c.add("Concat", [c.add("Unsqueeze", [x.name, ax]) for x in xs], _out(e), axis=dim)


def _flip(e, c):
    dims = [int(d) for d in e.args[1]]
    n = len(dims)
    return c.add("Slice", [_x(e), c.ints([-1] * n), c.ints([_INT64_MIN] * n), c.ints(dims), c.ints([-1] * n)],
                 _out(e))


def _repeat(e, c):
    x, reps = e.args[0], [int(r) for r in e.args[1]]
    name = x.name
    extra = len(reps) - len(x.shape)
    if extra > 0:
        name = c.reshape(name, [1] * extra + list(x.shape))
    return c.add("Tile", [name, c.ints(reps)], _out(e))


def _trilu(upper):
    def f(e, c):
        k = int(e.args[1]) if len(e.args) > 1 else 0
        return c.add("Trilu", [_x(e), c.const(np.asarray(k, np.int64))], _out(e), upper=upper)
    return f


def _getitem(e, c):
    """Basic indexing (ints, slices, None, Ellipsis): one Slice, then a Reshape to the result's shape;
    a single integer-array index (or a traced index tensor) on one axis: Gather."""
    x, index = e.args[0], e.args[1]
    items = list(index) if type(index) is tuple else [index]
    shape = x.shape
    arrays = [i for i, it in enumerate(items) if isinstance(it, (Var, np.ndarray))]
    if arrays:
        if len(arrays) != 1 or any(it is None or it is Ellipsis or isinstance(it, (int, np.integer))
                                   for it in items):
            raise _Unmapped("advanced indexing beyond one integer index array")
        k = arrays[0]
        idx = items[k]
        if isinstance(idx, Var) and idx.dtype.kind not in "iu" or \
                isinstance(idx, np.ndarray) and idx.dtype.kind not in "iu":
            raise _Unmapped("boolean mask indexing (data-dependent shape)")
        if any(not (isinstance(it, slice) and it == slice(None)) for it in items[:k] + items[k + 1:]):
            raise _Unmapped("an index array mixed with slices other than ':'")
        ind = idx.name if isinstance(idx, Var) else c.const(idx.astype(np.int64))
        if isinstance(idx, Var) and idx.dtype != np.int64:
            ind = c.add("Cast", [ind], to=_tp(np.int64))
        return c.add("Gather", [x.name, ind], _out(e), axis=k)
    if any(it is Ellipsis for it in items):
        i = items.index(Ellipsis)
        fill = len(shape) - sum(1 for it in items if it is not None and it is not Ellipsis)
        items = items[:i] + [slice(None)] * fill + items[i + 1:]
    items += [slice(None)] * (len(shape) - sum(1 for it in items if it is not None))
    starts, ends, axes, steps = [], [], [], []
    d = 0
    for it in items:
        if it is None:
            continue
        n = shape[d]
        if isinstance(it, slice):
            if it != slice(None):
                s0, s1, st = it.indices(n)
                if st < 0 and s1 < 0:
                    s1 = _INT64_MIN
                starts.append(s0), ends.append(s1), axes.append(d), steps.append(st)
        else:
            i = int(it) % n if n else int(it)
            starts.append(i), ends.append(i + 1), axes.append(d), steps.append(1)
        d += 1
    name = x.name
    if axes:
        name = c.add("Slice", [name, c.ints(starts), c.ints(ends), c.ints(axes), c.ints(steps)])
    shape = list(e.outvars[0].shape)
    if c.dynamic_batch and shape and 0 not in axes and items[0] == slice(None) and 0 not in shape:
        shape[0] = 0  # axis 0 untouched (the batch): Reshape's 0 copies its run-time size
        return c.reshape(name, shape, _out(e), copy_zeros=True)
    return c.reshape(name, shape, _out(e))


def _pad(e, c):
    x, widths, value = e.args[:3]
    widths = [tuple(int(v) for v in w) for w in widths]
    pads = [w[0] for w in widths] + [w[1] for w in widths]
    return c.add("Pad", [_x(e), c.ints(pads), _scalar(c, value, x.dtype)], _out(e), mode="constant")


def _gather(e, c):
    x, dim, index = e.args[:3]
    return c.add("GatherElements", [x.name, c.operand(index, np.int64)], _out(e), axis=int(dim))


def _einsum(e, c):
    eq, xs = e.args[0], e.args[1:]
    if not isinstance(eq, str):
        raise _Unmapped("the sublist form")
    return c.add("Einsum", [x.name for x in xs], _out(e), equation=eq.replace(" ", ""))


# -- matmul and nn ------------------------------------------------------------------------------------
def _linear(e, c):
    x, w, b = e.args[:3]
    if len(x.shape) == 2:
        ins = [x.name, w.name] + ([b.name] if isinstance(b, Var) else [])
        return c.add("Gemm", ins, _out(e), transB=1)
    wt = c.add("Transpose", [w.name], perm=[1, 0])
    if isinstance(b, Var):
        return c.add("Add", [c.add("MatMul", [x.name, wt]), b.name], _out(e))
    return c.add("MatMul", [x.name, wt], _out(e))


def _conv(e, c):
    x, w, b, geo, groups = e.args[:5]
    ins = [x.name, w.name] + ([b.name] if isinstance(b, Var) else [])
    return c.add("Conv", ins, _out(e), kernel_shape=[geo.kh, geo.kw], strides=[geo.sh, geo.sw],
                 dilations=[geo.dh, geo.dw], pads=[geo.pt, geo.pl, geo.pb, geo.pr], group=int(groups))


def _max_pool(e, c):
    geo = e.args[1]
    # geo's bottom/right padding already covers ceil_mode's extra window (pooling.py), so the
    # explicit pads with ceil_mode=0 give the same windows; padding counts as -inf, as PyTorch
    return c.add("MaxPool", [_x(e)], _out(e), kernel_shape=[geo.kh, geo.kw], strides=[geo.sh, geo.sw],
                 dilations=[geo.dh, geo.dw], pads=[geo.pt, geo.pl, geo.pb, geo.pr])


def _avg_pool(e, c):
    x, geo, div = e.args[:3]
    dt = x.dtype
    name = x.name
    if geo.pt or geo.pb or geo.pl or geo.pr:  # zero padding, then whole windows; the divisor is minigrad's
        name = c.add("Pad", [name, c.ints([0, 0, geo.pt, geo.pl, 0, 0, geo.pb, geo.pr]), _scalar(c, 0, dt)],
                     mode="constant")
    mean = c.add("AveragePool", [name], kernel_shape=[geo.kh, geo.kw], strides=[geo.sh, geo.sw])
    total = c.add("Mul", [mean, _scalar(c, geo.kh * geo.kw, dt)])
    return c.add("Div", [total, c.operand(div, dt)], _out(e))


def _nd_pads(geo):
    return [lo for lo, _ in geo.pads] + [hi for _, hi in geo.pads]


def _conv_nd(e, c):
    x, w, b, geo, groups = e.args[:5]
    ins = [x.name, w.name] + ([b.name] if isinstance(b, Var) else [])
    return c.add("Conv", ins, _out(e), kernel_shape=list(geo.kernel), strides=list(geo.stride),
                 dilations=list(geo.dilation), pads=_nd_pads(geo), group=int(groups))


def _conv_transpose_nd(e, c):
    # geo is the forward convolution's (input size -> out); the transposed one maps out -> size, so
    # output_padding makes up what the strided windows do not reach
    g, w, b, geo, groups = e.args[:5]
    extra = [n - (s * (o - 1) + d * (k - 1) + 1 - lo - hi) for n, o, k, s, d, (lo, hi) in
             zip(geo.size, geo.out, geo.kernel, geo.stride, geo.dilation, geo.pads)]
    attrs = dict(kernel_shape=list(geo.kernel), strides=list(geo.stride), dilations=list(geo.dilation),
                 pads=_nd_pads(geo), group=int(groups))
    if all(x < s for x, s in zip(extra, geo.stride)):
        ins = [g.name, w.name] + ([b.name] if isinstance(b, Var) else [])
        return c.add("ConvTranspose", ins, _out(e), output_padding=extra, **attrs)
    # onnxruntime wants output_padding < stride (PyTorch allows < dilation too): the positions no
    # window reaches get no contribution, so pad them with zeros, then add the bias
    res = c.add("ConvTranspose", [g.name, w.name], **attrs)
    n = len(extra)
    res = c.add("Pad", [res, c.ints([0] * (n + 2) + [0, 0] + extra), _scalar(c, 0, g.dtype)], mode="constant")
    if isinstance(b, Var):
        res = c.add("Add", [res, c.reshape(b.name, [1, -1] + [1] * n)])
    return c.add("Identity", [res], _out(e))


def _max_pool_nd(e, c):
    geo = e.args[1]
    outs = [_out(e), c.tmp()]
    c.add("MaxPool", [_x(e)], outs, kernel_shape=list(geo.kernel), strides=list(geo.stride),
          dilations=list(geo.dilation), pads=_nd_pads(geo))
    if len(e.outvars) > 1:  # ONNX's index runs over the whole tensor; minigrad's within each plane
        plane = c.const(np.asarray(int(np.prod(geo.size)), np.int64))
        c.add("Mod", [outs[1], plane], _out(e, 1))
    return outs[0]


def _avg_pool_nd(e, c):
    x, geo, div = e.args[:3]
    dt = x.dtype
    name = x.name
    if any(lo or hi for lo, hi in geo.pads):
        pads = [0, 0] + [lo for lo, _ in geo.pads] + [0, 0] + [hi for _, hi in geo.pads]
        name = c.add("Pad", [name, c.ints(pads), _scalar(c, 0, dt)], mode="constant")
    mean = c.add("AveragePool", [name], kernel_shape=list(geo.kernel), strides=list(geo.stride))
    total = c.add("Mul", [mean, _scalar(c, int(np.prod(geo.kernel)), dt)])
    return c.add("Div", [total, c.operand(div, dt)], _out(e))


def _topk(x, k, dim, largest, e, c):
    if not x.shape:  # 0-d: the value itself, index 0
        c.add("Identity", [x.name], _out(e))
        return c.add("Identity", [c.const(np.zeros((), np.int64))], _out(e, 1))
    return c.add("TopK", [x.name, c.ints([k])], [_out(e), _out(e, 1)], axis=int(dim), largest=int(bool(largest)),
                 sorted=1)


def _sort(e, c):
    x, dim, descending = e.args[:3]
    return _topk(x, x.shape[int(dim)] if x.shape else 1, dim, descending, e, c)


def _topk_eqn(e, c):
    x, k, dim, largest = e.args[:4]
    return _topk(x, int(k), dim, largest, e, c)


def _layer_norm(e, c):
    x, w, b, axes, eps = e.args[:5]
    axes = sorted(int(a) % len(x.shape) for a in axes)
    if axes != list(range(axes[0], len(x.shape))):
        raise _Unmapped("normalising over axes that are not the trailing ones")
    norm_shape = x.shape[axes[0]:]
    scale = w.name if isinstance(w, Var) else c.const(np.ones(norm_shape, x.dtype))
    ins = [x.name, scale] + ([b.name] if isinstance(b, Var) else [])
    return c.add("LayerNormalization", ins, _out(e), axis=axes[0], epsilon=float(eps))


def _embedding(e, c):
    w, idx = e.args[:2]
    return c.add("Gather", [w.name, c.operand(idx, np.int64)], _out(e), axis=0)


def _leaky_relu(e, c):
    return c.add("LeakyRelu", [_x(e)], _out(e), alpha=float(e.args[1]))


_LN2, _LN10 = math.log(2.0), math.log(10.0)

TABLE = {
    # elementwise, one input
    "neg": _unary("Neg"), "exp": _unary("Exp"), "log": _unary("Log"), "sqrt": _unary("Sqrt"),
    "abs": _unary("Abs"), "tanh": _unary("Tanh"), "sigmoid": _unary("Sigmoid"), "relu": _unary("Relu"),
    "sin": _unary("Sin"), "cos": _unary("Cos"), "tan": _unary("Tan"), "asin": _unary("Asin"),
    "acos": _unary("Acos"), "atan": _unary("Atan"), "sinh": _unary("Sinh"), "cosh": _unary("Cosh"),
    "asinh": _unary("Asinh"), "acosh": _unary("Acosh"), "atanh": _unary("Atanh"),
    "reciprocal": _unary("Reciprocal"), "floor": _unary("Floor"), "ceil": _unary("Ceil"),
    "sign": _unary("Sign"), "erf": _unary("Erf"), "isnan": _unary("IsNaN"), "isinf": _unary("IsInf"),
    "logical_not": lambda e, c: c.add("Not", [_x(e) if e.args[0].dtype == np.bool_ else
                                              c.add("Cast", [_x(e)], to=_tp(np.bool_))], _out(e)),
    "bitwise_not": _bitwise_not, "isfinite": _isfinite, "clone": _unary("Identity"),
    "rsqrt": _composite(lambda c, x, dt, e: c.add("Reciprocal", [c.add("Sqrt", [x])])),
    "exp2": _composite(lambda c, x, dt, e: c.add("Pow", [_scalar(c, 2, dt), x])),
    "expm1": _composite(lambda c, x, dt, e: c.add("Sub", [c.add("Exp", [x]), _scalar(c, 1, dt)])),
    "log1p": _composite(lambda c, x, dt, e: c.add("Log", [c.add("Add", [x, _scalar(c, 1, dt)])])),
    "log2": _composite(lambda c, x, dt, e: c.add("Div", [c.add("Log", [x]), _scalar(c, _LN2, dt)])),
    "log10": _composite(lambda c, x, dt, e: c.add("Div", [c.add("Log", [x]), _scalar(c, _LN10, dt)])),
    "trunc": _composite(_trunc),
    "frac": _composite(lambda c, x, dt, e: c.add("Sub", [x, _trunc(c, x, dt)])),
    "round": _round, "cast": _cast, "logsigmoid": _logsigmoid, "leaky_relu": _leaky_relu,
    "clamp": _clamp, "where": _where, "lerp": _lerp, "addcmul": _addc("Mul"), "addcdiv": _addc("Div"),
    # elementwise, two inputs
    "add": _binary("Add"), "sub": _binary("Sub"), "mul": _binary("Mul"), "div": _binary("Div"),
    "pow": _binary("Pow"), "maximum": _binary("Max"), "minimum": _binary("Min"),
    "eq": _binary("Equal"), "ne": _ne, "lt": _binary("Less"), "le": _binary("LessOrEqual"),
    "gt": _binary("Greater"), "ge": _binary("GreaterOrEqual"),
    "logical_and": _binary("And", True), "logical_or": _binary("Or", True), "logical_xor": _binary("Xor", True),
    "bitwise_and": _bitwise("BitwiseAnd", "And"), "bitwise_or": _bitwise("BitwiseOr", "Or"),
    "bitwise_xor": _bitwise("BitwiseXor", "Xor"),
    "fmod": lambda e, c: c.add("Mod", [c.operand(a, _dt(e)) for a in e.args[:2]], _out(e), fmod=1),
    "remainder": _binary_formula(_remainder), "floor_divide": _binary_formula(_floor_divide),
    "hypot": _binary_formula(_hypot),
    "atan2": _binary_formula(lambda c, y, x, dt: _atan2(c, y, x, dt)), "copysign": _binary_formula(_copysign),
    "isclose": _isclose, "logaddexp": _logaddexp(math.e), "logaddexp2": _logaddexp(2.0),
    # reductions
    "sum": _reduction("ReduceSum"), "mean": _reduction("ReduceMean"), "amax": _reduction("ReduceMax"),
    "amin": _reduction("ReduceMin"), "max": _reduction("ReduceMax"), "min": _reduction("ReduceMin"),
    "prod": _reduction("ReduceProd"), "logsumexp": _reduction("ReduceLogSumExp"),
    "norm2": _reduction("ReduceL2"), "normp": _normp, "std": _unary("Sqrt"),
    "argmax": _argreduce("ArgMax"), "argmin": _argreduce("ArgMin"),
    "all": _allany("ReduceMin"), "any": _allany("ReduceSum"),
    "softmax": _on_axis("Softmax"), "logsoftmax": _on_axis("LogSoftmax"), "log_softmax": _on_axis("LogSoftmax"),
    "cumsum": _on_axis("CumSum"),
    # shapes and indexing
    "reshape": _reshape, "permute": _permute, "expand": _expand, "cat": _cat, "stack": _stack,
    "flip": _flip, "repeat": _repeat, "tril": _trilu(0), "triu": _trilu(1), "getitem": _getitem,
    "pad": _pad, "gather": _gather, "assign": _assign,
    # matmul and nn
    "matmul": _binary("MatMul"), "einsum": _einsum, "linear": _linear, "conv2d": _conv,
    "max_pool2d": _max_pool, "avg_pool2d": _avg_pool, "layer_norm": _layer_norm,
    "embedding": _embedding, "convolution": _conv_nd, "conv_transpose": _conv_transpose_nd,
    "max_pool": _max_pool_nd, "avg_pool": _avg_pool_nd, "sort": _sort, "topk": _topk_eqn,
}


def mapped():
    """The IR primitive names mg.onnx.export maps to ONNX (sorted)."""
    return sorted(TABLE)


def _unmapped_error(e, why=None):
    detail = f" ({why})" if why else ""
    return NotImplementedError(
        f"mg.onnx.export: the op {e.prim!r} has no ONNX mapping{detail}; called at {e.source}. "
        f"Mapped ops: {', '.join(mapped())}")


def to_model(g, input_names=None, output_names=None, dynamic_axes=None, opset_version=OPSET):
    """A traced Graph (an inference program) -> an onnx.ModelProto, checked with onnx.checker."""
    for e in g.eqns:  # an op without a mapping is named first, whether or not onnx is installed
        if e.prim not in TABLE and e.prim != "set_grad" and not e.effect:
            raise _unmapped_error(e)
    onnx, helper = _onnx()
    from onnx import numpy_helper
    if opset_version < 17:
        raise ValueError(f"mg.onnx.export: opset_version must be 17 or newer, got {opset_version}")
    input_names = list(input_names or [f"input_{i}" for i in range(len(g.invars))])
    output_names = list(output_names or [f"output_{i}" for i in range(len(g.outvars))])
    if len(input_names) != len(g.invars) or len(output_names) != len(g.outvars):
        raise ValueError(f"mg.onnx.export: {len(g.invars)} inputs and {len(g.outvars)} outputs, but "
                         f"{len(input_names)} input_names and {len(output_names)} output_names")
    dynamic_axes = dynamic_axes or {}
    batch = g.invars[0].shape[0] if g.invars and g.invars[0].shape else None
    dynamic_batch = bool(input_names) and 0 in dynamic_axes.get(input_names[0], {})
    views = {e.args[0].name for e in g.eqns
             if e.fn is not None and getattr(e.fn, "_is_view", False) and e.args and isinstance(e.args[0], Var)}
    ctx = _Ctx(helper, opset_version, batch, dynamic_batch, views)
    produced = set()
    ctx.is_intermediate = lambda v: v.name in produced
    for e in g.eqns:
        if e.prim == "set_grad" or (e.effect and e.prim != "assign"):
            raise _unmapped_error(e, "a gradient write: export an inference graph (model.eval(), no backward)")
        f = TABLE.get(e.prim)
        if f is None:
            raise _unmapped_error(e)
        try:
            f(e, ctx)
        except _Unmapped as why:
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
        return helper.make_tensor_value_info(nm, _tp(v.dtype), shape)
    graph = helper.make_graph(nodes, "minigrad", [vinfo(v, nm) for v, nm in zip(g.invars, input_names)],
                              [vinfo(v, nm) for v, nm in zip(g.outvars, output_names)], ctx.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset_version)],
                              producer_name="minigrad")
    model.ir_version = min(model.ir_version, 8)
    onnx.checker.check_model(model)
    return model


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
    was = None
    if isinstance(model_or_fn, Module):
        was = model_or_fn.training
        model_or_fn.eval()
    try:
        with no_grad():
            g = trace(model_or_fn, *example_args)
    finally:
        if was:
            model_or_fn.train(was)
    model = to_model(g, input_names, output_names, dynamic_axes, opset_version)
    data = model.SerializeToString()
    with atomic_write(path) as out:
        out.write(data)
    return path
