"""Linear algebra: matmul (1-D, 2-D, batched with broadcasting), mm, bmm, dot, outer, einsum."""
import numpy as np

from ..autograd.function import ALWAYS, NEVER, Function, NoRule, holomorphic
from .._memory_format import _c_order
from ..tensor import Tensor, _shape_of
from .elementwise import _promote
from .._aliases import dim_alias as _dim_alias
from .. import _pool


def _matmul(x, y):
    """np.matmul(x, y); with an inner dimension of 1 the outer product as one broadcast multiply:
    the same numbers (each a single product), where NumPy's matmul costs ~10x as much (46 vs 4 us
    for (10, 1) @ (1, 3136): a batch-1 weight gradient). Under the thread policy "pool" a large
    product is split over minigrad's pool (_pool.matmul)."""
    if x.ndim >= 2 and y.ndim >= 2 and x.shape[-1] == 1 and x.dtype == y.dtype and y.shape[-2] == 1:
        return np.multiply(x, y)
    return _pool.matmul(x, y)


class MatMul(Function):
    """out = x @ y;  dx = g @ y^T,  dy = x^T @ g   (1-D operands as numpy/PyTorch: promoted, then squeezed)"""
    batching = "matmul"
    onnx = "MatMul"

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return _matmul(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        dx = dy = None
        if x.ndim == 1 and y.ndim == 1:  # dot product: g is a scalar
            return (g * y if nx else None), (g * x if ny else None)
        if x.ndim == 1:  # (k,) @ (..., k, n) -> (..., n)
            if nx:
                dx = (g.unsqueeze(-2) @ y.mT).squeeze(-2)
            if ny:
                dy = x.unsqueeze(-1) @ g.unsqueeze(-2)
        elif y.ndim == 1:  # (..., m, k) @ (k,) -> (..., m)
            if nx:
                dx = g.unsqueeze(-1) @ y.unsqueeze(-2)
            if ny:
                dy = (x.mT @ g.unsqueeze(-1)).squeeze(-1)
        else:
            if nx:
                dx = g @ y.mT
            if ny:
                dy = x.mT @ g
        return dx, dy

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors  # bilinear: tx @ y + x @ ty
        a = None if tx is None else MatMul.apply(tx, y)
        b = None if ty is None else MatMul.apply(x, ty)
        return b if a is None else (a if b is None else a + b)


def _check_matmul(x, y, op="matmul"):
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(f"{op}: both arguments need at least 1 dimension, got shapes {x.shape} @ {y.shape}")
    kx = x.shape[-1]
    ky = y.shape[0] if y.ndim == 1 else y.shape[-2]
    if kx != ky:
        raise RuntimeError(f"{op}: {x.shape} @ {y.shape}: inner dimensions {kx} and {ky} differ")
    if x.ndim > 2 or y.ndim > 2:
        try:
            np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        except ValueError:
            raise RuntimeError(f"{op}: {x.shape} @ {y.shape}: batch dimensions {x.shape[:-2]} and "
                               f"{y.shape[:-2]} cannot be broadcast") from None


def matmul(input, other):
    input, other = _promote(input, other)
    _check_matmul(input, other)
    return MatMul.apply(input, other)


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got shapes {input.shape} and {mat2.shape}")
    input, mat2 = _promote(input, mat2)
    _check_matmul(input, mat2, "mm")
    return MatMul.apply(input, mat2)


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected 3-D tensors, got shapes {input.shape} and {mat2.shape}")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: {input.shape} @ {mat2.shape}: batch sizes {input.shape[0]} and {mat2.shape[0]} differ")
    input, mat2 = _promote(input, mat2)
    _check_matmul(input, mat2, "bmm")
    return MatMul.apply(input, mat2)


def dot(input, tensor):
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"dot: 1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input.shape != tensor.shape:
        raise RuntimeError(f"dot: inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{tensor.shape[0]}] to have the same number of elements")
    return matmul(input, tensor)


def _rows(a):
    """a (..., k) as the 2-D (rows, k) matrix one GEMM takes (a view when a is contiguous)."""
    return a if a.ndim == 2 else a.reshape(-1, a.shape[-1])


def _addmm(x, w, b):
    """x @ w^T + b. An N-d x goes through one 2-D GEMM on its rows: np.matmul on the stacked array
    runs one small product per leading index (3.7x slower for (32, 128, 128) @ (128, 384))."""
    out = _pool.matmul(_rows(x), w.T)
    if b is not None:
        out += b
    return out if x.ndim == 2 else out.reshape(*x.shape[:-1], w.shape[0])


class Addmm(Function):
    """out = x @ w^T + b;  (dx, dw, db) = AddmmBackward(g, x, w)

    Fused (rather than matmul + transpose + add) because it is the hot op of every MLP: one node
    instead of three, and the weight gradient comes out contiguous, ready to become w.grad.
    """
    batching = "addmm"

    op_name = "linear"

    # declared: forward is _addmm, backward reads x and w (linear records it in one call, _call)
    _declared = True
    _fast = staticmethod(_addmm)
    _saves = (ALWAYS, ALWAYS, NEVER)
    _optional = (2,)  # the bias may be None
    _input_names = ("x", "w", "b")

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        out = AddmmBackward.apply(g, x, w, need)  # unrecorded: its _fast, the products from the arrays
        if len(out) == 3:  # every input needs its gradient (the common hidden layer)
            return out
        it = iter(out)
        return tuple([next(it) if n else None for n in need])

    @staticmethod
    def jvp(ctx, tx, tw, tb):
        x, w = ctx.saved_tensors  # tx @ w^T + x @ tw^T + tb
        out = None
        for term in (None if tx is None else Addmm.apply(tx, w, None), None if tw is None else Addmm.apply(x, tw, None), tb):
            if term is not None:
                out = term if out is None else out + term
        return out

    @staticmethod
    def onnx(e, c):
        x, w, b = e.args[:3]
        bias = [b.name] if c.is_var(b) else []
        if len(x.shape) == 2:
            return c.add("Gemm", [x.name, w.name] + bias, c.out(e), transB=1)
        xw = c.add("MatMul", [x.name, c.add("Transpose", [w.name], perm=[1, 0])])
        return c.add("Add", [xw] + bias, c.out(e)) if bias else c.result(e, xw)


def _addmm_grads(g, x, w, need):
    """(dx, dw, db) of out = x @ w^T + b for upstream g, None for those not in need."""
    nx, nw, nb = need
    g2 = _rows(g)  # one 2-D GEMM per gradient, whatever the leading dims (see _addmm)
    return ((_pool.matmul(g, w) if g.ndim == 2 else _pool.matmul(g2, w).reshape(*g.shape[:-1], w.shape[1])) if nx else None,
            _matmul(g2.T, _rows(x)) if nw else None,
            np.add.reduce(g2, 0) if nb else None)  # g2.sum(0) without ndarray.sum's Python-level wrapper


def _addmm_backward(g, x, w, need):
    """AddmmBackward's outputs: the gradients in need, in order."""
    return tuple([d for d in _addmm_grads(g, x, w, need) if d is not None])


class AddmmBackward(Function):
    """The fused linear's backward as an op: dx = g @ w, dw = g^T @ x, db = sum of g over the batch
    (those in need); second derivative, from the cotangents (A, B, C) of (dx, dw, db):
    dg = A @ w^T + x @ B^T + C,  dx = g @ B,  dw = A^T @ g"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "linear_backward"
    _fast = staticmethod(_addmm_backward)  # the three products straight in NumPy when nothing is recorded

    @staticmethod
    def forward(ctx, g, x, w, need):
        ctx.need = need
        ctx.save_for_backward(g, x, w)
        return _addmm_backward(g, x, w, need)

    @staticmethod
    def backward(ctx, *grads):
        g, x, w = ctx.saved_tensors
        it = iter(grads)
        A, B, C = (next(it) if n else None for n in ctx.need)
        ng, nx, nw = ctx.needs_input_grad[:3]
        g2 = g.reshape(-1, g.shape[-1]) if g.ndim != 2 else g
        dg = dx = dw = None
        if ng:
            terms = [A @ w.mT if A is not None else None,
                     (x.reshape(-1, x.shape[-1]) @ B.mT).reshape(*g.shape) if B is not None else None,
                     C.expand(*g.shape) if C is not None else None]
            for t in terms:
                if t is not None:
                    dg = t if dg is None else dg + t
        if nx and B is not None:
            dx = (g2 @ B).reshape(*x.shape)
        if nw and A is not None:
            dw = g2.mT @ A.reshape(-1, A.shape[-1])
        return dg, dx, dw, None

    @staticmethod
    def jvp(ctx, tg, tx, tw, _need):
        # bilinear in (g, x) and (g, w): dx' = tg @ w + g @ tw, dw' = tg^T x + g^T tx, db' = sum tg
        g, x, w = ctx.saved_tensors

        def flat(v):
            return v.reshape(-1, v.shape[-1]) if v.ndim != 2 else v

        def add(a, b):
            return b if a is None else (a if b is None else a + b)
        nx, nw, nb = ctx.need
        out = []
        if nx:
            out.append(add(tg @ w if tg is not None else None, g @ tw if tw is not None else None))
        if nw:
            out.append(add(flat(tg).mT @ flat(x) if tg is not None else None,
                           flat(g).mT @ flat(tx) if tx is not None else None))
        if nb:
            out.append(flat(tg).sum(0) if tg is not None else None)
        return tuple(out)


def linear(x, weight, bias=None):
    """x @ weight.T + bias (torch.nn.functional.linear), as one fused node."""
    if isinstance(x, Tensor) and isinstance(weight, Tensor):  # the common layer, checked on the arrays
        xd, wd = x._data, weight._data
        dt = wd.dtype
        if (type(xd) is np.ndarray and type(wd) is np.ndarray and wd.ndim == 2 and xd.ndim
                and xd.shape[-1] == wd.shape[1] and xd.dtype is dt and dt.kind == "f"
                and (bias is None or (isinstance(bias, Tensor) and type(bias._data) is np.ndarray
                                      and bias._data.dtype is dt))):
            return Addmm._call(x, weight, bias)
    # anything else, with its errors (plain tuples: x.shape makes a Size)
    xs = _shape_of(x) if isinstance(x, Tensor) else x.shape
    ws = _shape_of(weight) if isinstance(weight, Tensor) else weight.shape
    if not xs or len(ws) not in (1, 2) or xs[-1] != ws[-1]:
        why = (f"in_features {xs[-1] if xs else None} and {ws[-1]} differ" if len(ws) in (1, 2)
               else "the weight must be 1-D or 2-D")
        raise RuntimeError(f"linear: input of shape {xs} and weight of shape {ws}: {why}")
    if len(ws) == 1:
        out = matmul(x, weight)
        return out + bias if bias is not None else out
    # no silent promotion, as PyTorch: an int64 or float64 input into a float32 layer is an error
    wt = weight.dtype
    if x.dtype != wt or (bias is not None and bias.dtype != wt):
        raise RuntimeError(f"linear: mat1 and mat2 must have the same dtype, but got {x.dtype} and "
                           f"{weight.dtype}" + ("" if bias is None else f" (bias {bias.dtype})")
                           + f" (input of shape {x.shape}, weight of shape {weight.shape}); "
                           f"convert the input with .to({weight.dtype})")
    if wt.kind == "c":  # Addmm's backward is real calculus in NumPy: complex goes by matmul (Wirtinger rules)
        out = matmul(x, weight.transpose(-2, -1))
        return out + bias if bias is not None else out
    return Addmm._call(x, weight, bias)


def outer(input, vec2):
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: 1D tensors expected, got shapes {input.shape} and {vec2.shape}")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


class Einsum(Function):
    """out = einsum(eq, *xs);  dx_i = einsum of g with the other operands, re-diagonalised for ii-style subscripts"""
    batching = "einsum_rule"

    @staticmethod
    def forward(ctx, eq, *xs):
        ctx.save_for_backward(*xs)
        ctx.eq = eq
        return _c_order(np.asarray(np.einsum(eq, *xs, optimize=len(xs) > 2)))  # PyTorch's layout

    @staticmethod
    def backward(ctx, g):
        xs = ctx.saved_tensors
        ins, out = ctx.eq.split("->")
        subs = ins.split(",")
        grads = [None]
        for i, need in enumerate(ctx.needs_input_grad[1:]):
            grads.append(_einsum_grad(g, out, xs, subs, i) if need else None)
        return tuple(grads)

    @staticmethod
    def jvp(ctx, _eq, *txs):
        # multilinear: the sum over operands of the einsum with that operand's tangent in its place
        xs = ctx.saved_tensors
        out = None
        for i, t in enumerate(txs):
            if t is not None:
                term = Einsum.apply(ctx.eq, *xs[:i], t, *xs[i + 1:])
                out = term if out is None else out + term
        return out

    @staticmethod
    def onnx(e, c):
        eq, xs = e.args[0], e.args[1:]
        if not isinstance(eq, str):
            raise c.unmapped("the sublist form")
        return c.add("Einsum", [x.name for x in xs], c.out(e), equation=eq.replace(" ", ""))


def _einsum_grad(g, out, xs, subs, i):
    sub = subs[i]
    sizes = {c: s for x, sb in zip(xs, subs) for c, s in zip(sb, x.shape)}
    uniq = "".join(dict.fromkeys(sub))
    avail = set(out).union(*[set(s) for j, s in enumerate(subs) if j != i])
    present = "".join(c for c in uniq if c in avail)
    others = [x for j, x in enumerate(xs) if j != i]
    other_subs = [s for j, s in enumerate(subs) if j != i]
    core = einsum(",".join([out] + other_subs) + "->" + present, g, *others)
    # letters summed only inside operand i: the gradient is constant along them
    if len(present) < len(uniq):
        shape = [sizes[c] if c in present else 1 for c in uniq]
        perm = [present.index(c) for c in uniq if c in present]
        core = core.permute(*perm) if perm != list(range(len(perm))) else core
        core = core.reshape([sizes[c] if c in present else 1 for c in uniq]).expand(*[sizes[c] for c in uniq])
    if len(uniq) == len(sub):
        return core
    # repeated letters (e.g. 'ii'): the gradient lives on the diagonal
    from .indexing import IndexAdd
    grids = np.ogrid[tuple(slice(0, sizes[c]) for c in uniq)]
    index = tuple(grids[uniq.index(c)] for c in sub)
    shape = tuple(sizes[c] for c in sub)
    return IndexAdd.apply(core, index, shape)


def _expand_ellipsis(eq, operands):
    """Rewrite '...' as explicit letters (right-aligned across operands, broadcast as PyTorch),
    expanding size-1 ellipsis dims of an operand to the broadcast size. Returns (eq, operands)."""
    lhs, arrow, rhs = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) != len(operands):
        raise RuntimeError(f"einsum: equation {eq!r} has {len(subs)} operands but {len(operands)} were given")
    used = set(eq) - {".", ",", "-", ">"}
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    ell_shapes = []
    for sub, x in zip(subs, operands):
        if sub.count("...") > 1 or sub.replace("...", "").count(".") or ("..." not in sub and "." in sub):
            raise RuntimeError(f"einsum: subscript {sub!r} has an invalid ellipsis")
        n = x.ndim - len(sub.replace("...", "")) if "..." in sub else 0
        if n < 0:
            raise RuntimeError(f"einsum: subscript {sub!r} has more letters than the operand has dims ({x.shape})")
        ell_shapes.append(tuple(x.shape[sub.index("..."):sub.index("...") + n]) if "..." in sub else ())
    try:
        full = np.broadcast_shapes(*ell_shapes)
    except ValueError:
        raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                           f"{[tuple(o.shape) for o in operands]}") from None
    letters = "".join(free[:len(full)])
    new_subs, new_ops = [], []
    for sub, x, es in zip(subs, operands, ell_shapes):
        if "..." in sub:
            mine = letters[len(letters) - len(es):] if es else ""
            i = sub.index("...")
            if es != full[len(full) - len(es):]:  # size-1 dims broadcast: expand them
                target = x.shape[:i] + full[len(full) - len(es):] + x.shape[i + len(es):]
                x = x.expand(*target)
            sub = sub.replace("...", mine)
        new_subs.append(sub)
        new_ops.append(x)
    if arrow:
        out = rhs.replace("...", letters)
    else:
        rest = "".join(new_subs).replace(letters, "") if letters else "".join(new_subs)
        singles = "".join(sorted(c for c in set(rest) if "".join(new_subs).count(c) == 1 and c not in letters))
        out = letters + singles
    return ",".join(new_subs) + "->" + out, new_ops


def _normalise_equation(eq, operands):
    eq = eq.replace(" ", "")
    if "->" not in eq:
        letters = eq.replace(",", "")
        eq = eq + "->" + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = eq.split("->")[0].split(",")
    if len(ins) != len(operands):
        raise RuntimeError(f"einsum: equation {eq!r} has {len(ins)} operands but {len(operands)} were given")
    sizes = {}
    for sub, x in zip(ins, operands):
        if len(sub) != x.ndim:
            raise RuntimeError(f"einsum: subscript {sub!r} has {len(sub)} letters but the operand has shape {x.shape}")
        for c, s in zip(sub, x.shape):
            if sizes.setdefault(c, s) != s:
                raise RuntimeError(f"einsum: letter {c!r} is size {sizes[c]} in one operand and {s} in another")
    return eq


def _sublist_letter(n):
    if n is Ellipsis:
        return "..."
    if isinstance(n, (int, np.integer)) and 0 <= n < 26:
        return chr(ord("A") + int(n))
    if isinstance(n, (int, np.integer)) and 26 <= n < 52:
        return chr(ord("a") + int(n) - 26)
    raise ValueError(f"einsum(): subscript in subscript list is not within the valid range [0, 52): got {n!r}")


def _sublist_equation(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) as (equation, operands), as PyTorch
    writes it: subscripts 0-25 are 'A'-'Z', 26-51 'a'-'z', Ellipsis is '...'."""
    for sub in args[1::2]:
        if not isinstance(sub, (list, tuple)):
            raise TypeError(f"einsum(): in the sublist form each operand is followed by a list of subscripts, "
                            f"got {type(sub).__name__}")
    eq = ",".join("".join(_sublist_letter(n) for n in sub) for sub in args[1::2])
    if len(args) % 2 == 1:
        return eq + "->" + "".join(_sublist_letter(n) for n in args[-1]), args[:-1:2]
    return eq, args[::2]


def einsum(equation, *operands):
    """einsum(equation, *operands) as torch.einsum (with '...' broadcasting); differentiable in every operand.
    The sublist form einsum(a, [0, 1], b, [1, 2], [0, 2]) works too (subscripts 0-51 and Ellipsis)."""
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation,) + operands)
    elif not isinstance(equation, str):
        raise TypeError(f"einsum(): the first argument must be an equation string or a Tensor (the sublist form), "
                        f"got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = [o if isinstance(o, Tensor) else Tensor(o) for o in operands]
    dt = operands[0].dtype
    for o in operands[1:]:
        dt = np.promote_types(dt, o.dtype)
    operands = [o if o.dtype == dt else o.to(dt) for o in operands]
    equation = equation.replace(" ", "")
    if "." in equation:
        equation, operands = _expand_ellipsis(equation, operands)
    return Einsum.apply(_normalise_equation(equation, operands), *operands)


# -- diagonals, products of tensors, cross products and distances -------------------------------
class Diagonal(Function):
    """out = the diagonal of x in (dim1, dim2) with offset, moved last (a view of x);
    dx = zeros with g written back onto that diagonal"""
    _is_view = True
    batching = "diagonal"
    onnx = NoRule("diagonals (a Gather of computed indices; not mapped yet)")

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.shape, ctx.args = x.shape, (offset, dim1, dim2)
        out = np.diagonal(x, offset, dim1, dim2)
        if x.flags.writeable:
            out.flags.writeable = True  # NumPy hands out read-only diagonal views; PyTorch's are writable
        return out

    @staticmethod
    def backward(ctx, g):
        return DiagEmbed.apply(g, ctx.shape, *ctx.args), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return Diagonal.apply(t, *ctx.args)


class DiagEmbed(Function):
    """out = zeros(shape) with g on the diagonal (offset, dim1, dim2);  dg = diagonal(out_grad)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("diagonals (a Gather of computed indices; not mapped yet)")

    @staticmethod
    def forward(ctx, g, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        out = np.zeros(shape, dtype=g.dtype)
        view = np.diagonal(out, offset, dim1, dim2)
        view.flags.writeable = True
        view[...] = g
        return out

    @staticmethod
    def backward(ctx, gout):
        return Diagonal.apply(gout, *ctx.args), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return type(ctx).apply(t, *ctx.fw_args[1:])  # linear: the op itself on the tangent


def _dim_pair(ndim, dim1, dim2, op):
    d1, d2 = dim1 % ndim if -ndim <= dim1 < ndim else None, dim2 % ndim if -ndim <= dim2 < ndim else None
    if d1 is None or d2 is None:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                         f"but got {dim1 if d1 is None else dim2})")
    if d1 == d2:
        raise RuntimeError(f"{op}: dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input, offset=0, dim1=0, dim2=1):  # noqa: A002
    """The diagonal of input in dims (dim1, dim2) (offset > 0: above it), as the last dim; a view."""
    if input.ndim < 2:
        raise RuntimeError(f"diagonal: input must have at least 2 dimensions (shape {tuple(input.shape)})")
    d1, d2 = _dim_pair(input.ndim, dim1, dim2, "diagonal")
    return Diagonal.apply(input, int(offset), d1, d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """A tensor whose diagonals (in the new dims dim1, dim2) are filled by input's last dim."""
    n = input.ndim + 1
    d1, d2 = _dim_pair(n, dim1, dim2, "diag_embed")
    m = input.shape[-1] + abs(int(offset)) if input.ndim else 1
    rest = list(input.shape[:-1])
    shape = []
    for i in range(n):
        shape.append(m if i in (d1, d2) else rest.pop(0))
    return DiagEmbed.apply(input, tuple(shape), int(offset), d1, d2)


def diag(input, diagonal=0):  # noqa: A002
    """1-D input: the square matrix with it on a diagonal; 2-D input: that diagonal."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return Diagonal.apply(input, int(diagonal), 0, 1).contiguous()  # a copy in PyTorch (diagonal() is the view)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D (shape {tuple(input.shape)})")


def trace(input):  # noqa: A002
    """The sum of the main diagonal of a 2-D tensor, as torch.trace: integer inputs give int64,
    floating inputs keep their dtype; bool has no trace (as in PyTorch).

    Example:
        >>> mg.trace(mg.arange(9.).reshape(3, 3))
        tensor(12.)
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim} (shape {tuple(input.shape)})")
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return diagonal(input).sum()


def tensordot(a, b, dims=2):
    """Sum of products over the last `dims` dims of a and first of b, or over the dims listed in a pair."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0])), \
                 ([dims[1]] if isinstance(dims[1], int) else list(dims[1]))
        if isinstance(dims, Tensor):
            da, db = dims[0].tolist(), dims[1].tolist()
    if len(da) != len(db):
        raise RuntimeError(f"tensordot: both dimension lists should have same length (got {da} and {db})")
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"tensordot: contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in dim {j}")
    keep_a = [d for d in range(a.ndim) if d not in da]
    keep_b = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da])) if da else 1
    A = a.permute(*(keep_a + da)).reshape(-1, k)
    B = b.permute(*(db + keep_b)).reshape(k, -1)
    return matmul(A, B).reshape(*([a.shape[d] for d in keep_a] + [b.shape[d] for d in keep_b]))


def kron(input, other):
    """The Kronecker product: out[i*m + k, ...] = a[i, ...] * b[k, ...] over every dim."""
    n = max(input.ndim, other.ndim)
    input = input.reshape(*((1,) * (n - input.ndim) + tuple(input.shape)))
    other = other.reshape(*((1,) * (n - other.ndim) + tuple(other.shape)))
    # interleave: a's dims at even positions, b's at odd, then merge each pair
    ax = input.reshape(*[s for d in input.shape for s in (d, 1)])
    bx = other.reshape(*[s for d in other.shape for s in (1, d)])
    return (ax * bx).reshape(*[sa * sb for sa, sb in zip(input.shape, other.shape)])


def cross(input, other, dim=None, *, axis=None):  # noqa: A002
    """The 3-D cross product along dim (the first dim of size 3 when None, as torch.cross)."""
    if axis is not None:  # NumPy's name, as PyTorch accepts
        dim = _dim_alias("cross", dim, axis, default=None)[0]
    input, other = _promote(input, other)
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions (shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)})")
    if dim is None:
        shape = np.broadcast_shapes(input.shape, other.shape)
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError(f"no dimension of size 3 in input (shapes {tuple(input.shape)} and {tuple(other.shape)})")
        dim = dims[0] - len(shape)
    try:
        shape = np.broadcast_shapes(input.shape, other.shape)
    except ValueError:
        raise RuntimeError(f"linalg.cross: inputs of shapes {tuple(input.shape)} and {tuple(other.shape)} "
                           f"cannot be broadcast") from None
    n = len(shape)
    if not -n <= dim < n or shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim] if -input.ndim <= dim < input.ndim else '?'} and "
                           f"{other.shape[dim] if -other.ndim <= dim < other.ndim else '?'}")
    input, other = input.expand(*shape), other.expand(*shape)
    d = dim % n

    def take(t, order):
        return t.index_select(d, Tensor._make(np.array(order, dtype=np.int64)))
    return take(input, [1, 2, 0]) * take(other, [2, 0, 1]) - take(input, [2, 0, 1]) * take(other, [1, 2, 0])


def cdist(x1, x2, p=2.0):
    """Pairwise p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M) -> (..., P, R)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values (got {p})")
    from .reduction import norm
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return norm(diff, p, -1)


# complex tensors (ops/complex.py): MatMul's and Einsum's backwards are products with the other
# operand (holomorphic: run on conj(g) and conjugated, g @ y^H); the others move values
for _cls in (MatMul, Einsum):
    holomorphic(_cls)
for _cls in (Diagonal, DiagEmbed):
    _cls._complex = True
