"""Linear algebra: matmul (1-D, 2-D, batched with broadcasting), mm, bmm, dot, outer, einsum."""
import numpy as np

from ..autograd.function import Function
from ..autograd.grad_mode import _state
from ..tensor import Tensor
from .elementwise import _promote

_make = Tensor._make


class MatMul(Function):
    """out = x @ y;  dx = g @ y^T,  dy = x^T @ g   (1-D operands as numpy/PyTorch: promoted, then squeezed)"""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return np.matmul(x, y)

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


def _check_matmul(x, y, op="matmul"):
    if x.ndim == 0 or y.ndim == 0:
        raise RuntimeError(f"{op}: both arguments need at least 1 dimension, got shapes {x.shape} @ {y.shape}")
    kx = x.shape[-1]
    ky = y.shape[0] if y.ndim == 1 else y.shape[-2]
    if kx != ky:
        raise ValueError(f"{op}: {x.shape} @ {y.shape}: inner dimensions {kx} and {ky} differ")
    if x.ndim > 2 or y.ndim > 2:
        try:
            np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        except ValueError:
            raise ValueError(f"{op}: {x.shape} @ {y.shape}: batch dimensions {x.shape[:-2]} and "
                             f"{y.shape[:-2]} cannot be broadcast") from None


def matmul(x, y):
    x, y = _promote(x, y)
    _check_matmul(x, y)
    return MatMul.apply(x, y)


def mm(x, y):
    if x.ndim != 2 or y.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got shapes {x.shape} and {y.shape}")
    x, y = _promote(x, y)
    _check_matmul(x, y, "mm")
    return MatMul.apply(x, y)


def bmm(x, y):
    if x.ndim != 3 or y.ndim != 3:
        raise RuntimeError(f"bmm: expected 3-D tensors, got shapes {x.shape} and {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"bmm: {x.shape} @ {y.shape}: batch sizes {x.shape[0]} and {y.shape[0]} differ")
    x, y = _promote(x, y)
    _check_matmul(x, y, "bmm")
    return MatMul.apply(x, y)


def dot(x, y):
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"dot: 1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    if x.shape != y.shape:
        raise RuntimeError(f"dot: inconsistent tensor size, expected tensor [{x.shape[0]}] and src "
                           f"[{y.shape[0]}] to have the same number of elements")
    return matmul(x, y)


class Linear(Function):
    """out = x @ w^T + b;  dx = g @ w,  dw = g^T @ x,  db = sum of g over the batch

    Fused (rather than matmul + transpose + add) because it is the hot op of every MLP: one node
    instead of three, and the weight gradient comes out contiguous, ready to become w.grad.
    """

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        out = np.matmul(x, w.T)
        if b is not None:
            out += b
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad
        if not _state.enabled:
            # no graph to record (the usual backward): the same three products straight in NumPy,
            # which skips the per-op cost of matmul/transpose/sum Tensor calls (most of this node's time)
            gd, xd = g._data, x._data
            g2 = gd.reshape(-1, gd.shape[-1]) if gd.ndim != 2 else gd
            return (_make(gd @ w._data) if nx else None,
                    _make(g2.T @ (xd.reshape(-1, xd.shape[-1]) if xd.ndim != 2 else xd)) if nw else None,
                    _make(g2.sum(0)) if nb else None)
        # create_graph: Tensor ops, so that this backward can itself be differentiated
        dx = g @ w if nx else None
        dw = db = None
        if nw or nb:
            g2 = g.reshape(-1, g.shape[-1]) if g.ndim != 2 else g
            if nw:
                x2 = x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x
                dw = g2.mT @ x2
            if nb:
                db = g2.sum(0)
        return dx, dw, db


def linear(x, weight, bias=None):
    """x @ weight.T + bias (torch.nn.functional.linear), as one fused node."""
    if weight.ndim != 2:
        out = matmul(x, weight)
        return out + bias if bias is not None else out
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input of shape {x.shape} and weight of shape {weight.shape}: "
                         f"in_features {x.shape[-1] if x.ndim else None} and {weight.shape[1]} differ")
    if x.dtype != weight.dtype or (bias is not None and bias.dtype != weight.dtype):
        dt = np.result_type(x.dtype, weight.dtype, *(() if bias is None else (bias.dtype,)))
        x, weight = x.to(dt), weight.to(dt)
        bias = bias.to(dt) if bias is not None else None
    return Linear.apply(x, weight, bias)


def outer(x, y):
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"outer: 1D tensors expected, got shapes {x.shape} and {y.shape}")
    return x.unsqueeze(1) * y.unsqueeze(0)


class Einsum(Function):
    """out = einsum(eq, *xs);  dx_i = einsum of g with the other operands, re-diagonalised for ii-style subscripts"""

    @staticmethod
    def forward(ctx, eq, *xs):
        ctx.save_for_backward(*xs)
        ctx.eq = eq
        return np.asarray(np.einsum(eq, *xs, optimize=len(xs) > 2))

    @staticmethod
    def backward(ctx, g):
        xs = ctx.saved_tensors
        ins, out = ctx.eq.split("->")
        subs = ins.split(",")
        grads = [None]
        for i, need in enumerate(ctx.needs_input_grad[1:]):
            grads.append(_einsum_grad(g, out, xs, subs, i) if need else None)
        return tuple(grads)


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


def _normalise_equation(eq, operands):
    eq = eq.replace(" ", "")
    if "." in eq:
        raise NotImplementedError("einsum: '...' (ellipsis) subscripts are not supported yet")
    if "->" not in eq:
        letters = eq.replace(",", "")
        eq = eq + "->" + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = eq.split("->")[0].split(",")
    if len(ins) != len(operands):
        raise ValueError(f"einsum: equation {eq!r} has {len(ins)} operands but {len(operands)} were given")
    sizes = {}
    for sub, x in zip(ins, operands):
        if len(sub) != x.ndim:
            raise ValueError(f"einsum: subscript {sub!r} has {len(sub)} letters but the operand has shape {x.shape}")
        for c, s in zip(sub, x.shape):
            if sizes.setdefault(c, s) != s:
                raise ValueError(f"einsum: letter {c!r} is size {sizes[c]} in one operand and {s} in another")
    return eq


def einsum(equation, *operands):
    """einsum(equation, *operands) as torch.einsum (no ellipsis); differentiable in every operand."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = [o if isinstance(o, Tensor) else Tensor(o) for o in operands]
    dt = operands[0].dtype
    for o in operands[1:]:
        dt = np.promote_types(dt, o.dtype)
    operands = [o if o.dtype == dt else o.to(dt) for o in operands]
    return Einsum.apply(_normalise_equation(equation, operands), *operands)
