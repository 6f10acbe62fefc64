"""Algebraic simplification, only where the result is bit for bit the same in IEEE arithmetic.

    x * 1, 1 * x, x / 1      -> x   (same shape and dtype only: a widening multiply is not identity)
    x + (-0.0), x - (+0.0)   -> x   (x + 0.0 and x + 0 are NOT rewritten for a float x: they turn
                                     -0.0 into +0.0; for an integer x, x + 0 and x - 0 are x)
    neg(neg(x))              -> x
    reshape x to its own shape, expand x to its own shape, an identity permute, and permute/transpose
    pairs that compose to the identity -> x
    matmul(transpose(a), b)  -> matmul_t a b: the transposed operand is passed to BLAS as a view, as
                                before (the same np.matmul call on the same view: bit for bit)
    sum over the broadcast axes of expand(x), k copies summed (k = 1 or 2), same shape as x
                             -> x + 0.0 (k = 1),  x * 2 + 0.0 (k = 2): NumPy's sum starts from +0.0,
                                so a -0.0 comes out +0.0, and x + x is exactly 2x; k > 2 copies summed
                                round differently from k * x and are left alone
Never: x * 0 -> 0 (NaN and inf), x - x -> 0, reassociation. A rewrite to an existing value x is
skipped when the value is a graph output (the output would share the input's memory), when an
`assign` may write into the value (it would write into x), or when an `assign` may write into x
after the value was computed (the value must keep the old data).
"""
import numpy as np

from ... import _pool
from ...autograd.function import Function, NoRule
from ...graph.ir import Eqn, Var
from ...ops.elementwise import Add, Mul
from ._util import alias_roots, copy_graph, new_names, substitute, with_args, writes


class MatMulT(Function):
    """out = transpose(x, dx) @ transpose(y, dy) (dx, dy: the permutations, or None): a transpose
    folded into matmul by the simplify pass; the same matmul call (_pool.matmul, as eager's) on the same views as before."""
    op_name = "matmul_t"
    batching = NoRule("made by the compiler's simplify pass inside a compiled graph, which vmap does not enter")
    jvp = NoRule("only inside compiled graphs, which forward mode does not enter")
    onnx = NoRule("made by the compiler's simplify pass inside a compiled program, never in a traced graph")

    @staticmethod
    def forward(ctx, x, y, dx, dy):
        return _pool.matmul(x if dx is None else np.transpose(x, dx), y if dy is None else np.transpose(y, dy))


def _scalar(a, const):
    """a (a static scalar or a constant var) as a NumPy array, or None."""
    arr = const.get(a.name) if isinstance(a, Var) else a
    if arr is None or isinstance(arr, (bool, np.bool_)):
        return None
    if isinstance(arr, (int, float, np.ndarray, np.generic)):
        arr = np.asarray(arr)
        if arr.dtype.kind in "fiu" and arr.size > 0:
            return arr
    return None


def _is_one(a, const):
    arr = _scalar(a, const)
    return arr is not None and bool(np.all(arr == 1))


def _is_identity_zero(a, x, const, signbit):
    """Whether adding (signbit=True) or subtracting (False) constant a leaves x's bits as they are."""
    arr = _scalar(a, const)
    if arr is None or not np.all(arr == 0):
        return False
    if np.dtype(x.dtype).kind in "iu":
        return True
    # float x: only x + (-0.0) and x - (+0.0) are exact for x = -0.0; an integer 0 acts as +0.0
    neg = arr.dtype.kind == "f" and bool(np.all(np.signbit(arr)))
    pos = arr.dtype.kind in "iu" or not np.any(np.signbit(arr))
    return neg if signbit else pos


def _swaps_last_two(dims):
    n = len(dims)
    return n >= 2 and tuple(dims) == tuple(range(n - 2)) + (n - 1, n - 2)


def _rule(e, const, defs):
    """("alias", x, first eqn) | ("replace", [(prim, Function, args)], what) | None."""
    if len(e.outvars) != 1 or e.fn is None or e.side:
        return None
    out, args, p = e.outvars[0], e.args, e.prim

    def same(x):
        return isinstance(x, Var) and x.shape == out.shape and x.dtype == out.dtype
    if p == "mul" and len(args) == 2:
        x, y = args
        if same(x) and _is_one(y, const):
            return "alias", x, e
        if same(y) and _is_one(x, const):
            return "alias", y, e
    if p == "div" and e.fn.__name__ == "Div" and same(args[0]) and _is_one(args[1], const):
        return "alias", args[0], e
    if p == "add" and len(args) == 2:
        x, y = args
        if same(x) and _is_identity_zero(y, x, const, True):
            return "alias", x, e
        if same(y) and _is_identity_zero(x, y, const, True):
            return "alias", y, e
    if p == "sub" and len(args) == 2 and same(args[0]) and _is_identity_zero(args[1], args[0], const, False):
        return "alias", args[0], e
    d = defs.get(args[0].name) if args and isinstance(args[0], Var) else None
    if p == "neg" and d is not None and d.prim == "neg" and same(d.args[0]):
        return "alias", d.args[0], d
    if p in ("reshape", "expand") and same(args[0]):
        return "alias", args[0], e
    if p == "permute" and same(args[0]) and tuple(args[1]) == tuple(range(len(args[1]))):
        return "alias", args[0], e
    if p == "permute" and d is not None and d.prim == "permute" and same(d.args[0]):
        p1, p2 = tuple(d.args[1]), tuple(args[1])
        if len(p1) == len(p2) and all(p1[p2[i]] == i for i in range(len(p1))):
            return "alias", d.args[0], d
    if p == "matmul" and e.fn.__name__ == "MatMul" and len(args) == 2:
        new, what = [args[0], args[1], None, None], []
        for i in (0, 1):
            di = defs.get(args[i].name) if isinstance(args[i], Var) else None
            if di is not None and di.prim == "permute" and _swaps_last_two(di.args[1]):
                new[i], new[i + 2] = di.args[0], tuple(di.args[1])
                what.append("xy"[i])
        if what:
            return "replace", [("matmul_t", MatMulT, new)], f"matmul_t[{','.join(what)}]"
    if p == "sum" and e.fn.__name__ == "Sum" and d is not None and d.prim == "expand":
        return _broadcast_sum(e, d, out, same)
    return None


def _broadcast_sum(e, d, out, same):
    x, shape = d.args[0], tuple(d.args[1])
    axes = e.args[1]
    if not same(x) or not axes or np.dtype(x.dtype).kind != "f":
        return None
    lead = len(shape) - len(x.shape)
    k = 1
    for ax in axes:
        if ax >= lead and x.shape[ax - lead] != 1:
            return None  # a real reduction over x's own axis
        k *= shape[ax]
    if k == 1:
        return "replace", [("add", Add, [x, 0.0])], "sum(expand) -> x + 0.0"
    if k == 2:
        return "replace", [("mul", Mul, [x, 2]), ("add", Add, [None, 0.0])], "sum(expand) -> x * 2 + 0.0"
    return None


def simplify(graph):
    """graph with the IEEE-exact algebraic identities rewritten (see the module docstring)."""
    const = {v.name: a for v, a in graph.consts}
    outputs = {v.name for v in graph.outvars if isinstance(v, Var)}
    roots = alias_roots(graph)
    ws = writes(graph, roots)
    written = frozenset().union(*(hit for _, hit in ws))
    names = new_names(graph, "s")
    defs, ren, eqns, rewrites, index = {}, {}, [], [], {}
    for i, e in enumerate(graph.eqns):
        args = substitute(e.args, ren)
        if any(a is not b for a, b in zip(args, e.args)):
            e = with_args(e, args)
        index[id(e)] = i
        found = _rule(e, const, defs)
        if found is not None and found[0] == "alias":
            _, x, first = found
            out = e.outvars[0]
            xr = roots.get(x.name, frozenset([x.name]))
            start = index[id(first)]
            if (out.name not in outputs and out.name not in written
                    and not any(a > start and hit & xr for a, hit in ws)):
                ren[out.name] = x
                rewrites.append(f"{e.prim} {out.name} -> {x.name}")
                continue
        elif found is not None:
            _, steps, what = found
            prev = None
            for j, (prim, fn, a) in enumerate(steps):
                a = [prev if v is None else v for v in a]
                last = j == len(steps) - 1
                ov = e.outvars[0] if last else Var(next(names), e.outvars[0].shape, e.outvars[0].dtype)
                n = Eqn(prim, fn, a, [ov], source=e.source)
                eqns.append(n)
                defs[ov.name] = n
                prev = ov
            rewrites.append(f"{what} ({e.outvars[0].name})")
            continue
        for v in e.outvars:
            defs[v.name] = e
        eqns.append(e)
    outvars = [substitute(v, ren) for v in graph.outvars]
    g = copy_graph(graph, eqns=eqns, outvars=outvars)
    shown = ", ".join(rewrites[:6]) + (", ..." if len(rewrites) > 6 else "")
    g.pass_details = f"{len(rewrites)} rewrites" + (f" ({shown})" if rewrites else "")
    return g
