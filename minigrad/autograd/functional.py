"""mg.autograd.functional: PyTorch's older functional API (torch.autograd.functional) — jacobian,
hessian, vjp, jvp, hvp, vhp — with its create_graph / strict / vectorize arguments.

inputs is a Tensor or a tuple of Tensors, and results follow the same structure. Without
create_graph the results are detached (as PyTorch); with it they can be differentiated again.
strict=True raises when an output does not depend on an input (instead of returning zeros).
vectorize=True computes a Jacobian in one batched pass with mg.func.vmap, as PyTorch's does with
vmap: the reverse-mode rows are vmap(vjp) over the standard basis of the outputs (one backward for
all rows), the forward-mode columns (strategy="forward-mode", which requires vectorize=True, as in
PyTorch) vmap(jvp) over the standard basis of the inputs; hessian's outer Jacobian likewise
(outer_jacobian_strategy="forward-mode": forward-over-reverse). Without vectorize the rows are
computed one backward at a time.
"""
import numpy as np

from ..tensor import Tensor
from .grad_mode import enable_grad
from . import grad as _grad

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _tuple(x, what):
    is_tuple = isinstance(x, (tuple, list))
    xs = tuple(x) if is_tuple else (x,)
    for t in xs:
        if not isinstance(t, Tensor):
            raise TypeError(f"The {what} given to the function must be either a Tensor or a tuple of Tensors "
                            f"but the value at index {xs.index(t)} has type {type(t).__name__}.")
    return is_tuple, xs


def _prepare(inputs, create_graph):
    return tuple(x.detach().requires_grad_(True) if not (create_graph and x.requires_grad) else x
                 for x in inputs)


def _grads(outputs, inputs, grad_outputs, create_graph, strict, what):
    gs = _grad(outputs, inputs, grad_outputs, retain_graph=True, create_graph=True, allow_unused=True)
    out = []
    for i, (g, x) in enumerate(zip(gs, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                   f"This is not allowed in strict mode{what}.")
            g = Tensor._make(np.zeros(x.shape, x.dtype))
        out.append(g if create_graph else g.detach())
    return tuple(out)


def _fill(outs, inputs):
    return [o if o.requires_grad else o * 0.0 + _zero_link(inputs) for o in outs]


def _zero_link(inputs):
    """0 * (something depending on the inputs): keeps an output independent of them in the graph."""
    return sum((x * 0.0).sum() for x in inputs)


def _call(func, inputs):
    out = func(*inputs)
    is_tuple, outs = _tuple(out, "outputs")
    return out, is_tuple, outs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product of func at inputs."""
    in_tuple, inputs = _tuple(inputs, "inputs")
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        out, out_tuple, outs = _call(func, xs)
        if v is None:
            if any(o.numel() != 1 for o in outs):
                raise RuntimeError("The vector v can only be None if the user-provided function returns a "
                                   "single Tensor with a single element.")
            vs = tuple(Tensor._make(np.ones(o.shape, o.dtype)) for o in outs)
        else:
            _, vs = _tuple(v, "v")
        outs = _fill(outs, xs)
        res = _grads(list(outs), list(xs), list(vs), create_graph, strict, "")
    out = out if create_graph else (tuple(o.detach() for o in outs) if out_tuple else outs[0].detach())
    return out, (res if in_tuple else res[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product (by the double-VJP identity)."""
    in_tuple, inputs = _tuple(inputs, "inputs")
    if v is None:
        if any(x.numel() != 1 for x in inputs):
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is "
                               "a single Tensor with a single element.")
        v = tuple(Tensor._make(np.ones(x.shape, x.dtype)) for x in inputs)
    _, vs = _tuple(v, "v")
    with enable_grad():
        xs = _prepare(inputs, True)
        out, out_tuple, outs = _call(func, xs)
        outs = _fill(outs, xs)
        us = [Tensor._make(np.zeros(o.shape, o.dtype)).requires_grad_(True) for o in outs]
        g = _grads(outs, list(xs), us, True, strict, "")
        s = sum((gi * vi).sum() for gi, vi in zip(g, vs))
        if not s.requires_grad:
            jv = tuple(Tensor._make(np.zeros(o.shape, o.dtype)) for o in outs)
        else:
            jv = _grads([s], us, None, create_graph, False, "")
    outs = tuple(o if create_graph else o.detach() for o in outs)
    return (outs if out_tuple else outs[0]), (jv if out_tuple else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: `J[i][j]` of shape outputs[i].shape + inputs[j].shape.

    vectorize=True: all rows (reverse mode) or columns (strategy="forward-mode") in one pass under
    mg.func.vmap; strategy="forward-mode" requires it and supports neither create_graph nor strict
    (as PyTorch)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('jacobian: `create_graph=True` and `strategy="forward-mode"` are not supported '
                                      'together (yet). Please either set `create_graph=False` or '
                                      '`strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('jacobian: `strict=True` and `strategy="forward-mode"` are not supported together '
                               '(yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("jacobian: computing the Jacobian with forward-mode AD is only implemented "
                                      "for `vectorize=True` (as in PyTorch)")
        return _jacobian_forward(func, inputs)
    if vectorize:
        if strict:
            raise RuntimeError("jacobian: `strict=True` and `vectorized=True` are not supported together. Please "
                               "either set `strict=False` or `vectorize=False`.")
        return _jacobian_vectorized(func, inputs, create_graph)
    in_tuple, inputs = _tuple(inputs, "inputs")
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        out, out_tuple, outs = _call(func, xs)
        from ..ops.shape import stack
        J = []
        for i, o in enumerate(outs):
            flat = o.reshape(-1)
            rows = [[] for _ in xs]
            for k in range(flat.numel()):
                if flat.requires_grad:
                    gs = _grads([flat[k]], list(xs), None, create_graph, strict,
                                f" (output {i}, element {k})" if strict else "")
                else:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. "
                                           "The outputs must be computed in a differentiable manner from the "
                                           "input when running in strict mode.")
                    gs = tuple(Tensor._make(np.zeros(x.shape, x.dtype)) for x in xs)
                for j, g in enumerate(gs):
                    rows[j].append(g.reshape(-1))
            Ji = tuple((stack(r) if r else Tensor._make(np.zeros((0, x.numel()), x.dtype)))
                       .reshape(*(tuple(o.shape) + tuple(x.shape))) for r, x in zip(rows, xs))
            J.append(Ji if in_tuple else Ji[0])
    return tuple(J) if out_tuple else J[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs (`H[i][j]` of shape inputs[i].shape + inputs[j].shape).

    vectorize=True: the Jacobian of the gradient in one pass under mg.func.vmap;
    outer_jacobian_strategy="forward-mode" (vectorize=True only) is forward-over-reverse."""
    if outer_jacobian_strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if vectorize or outer_jacobian_strategy == "forward-mode":
        return _hessian_vectorized(func, inputs, create_graph, strict, vectorize, outer_jacobian_strategy)
    in_tuple, inputs = _tuple(inputs, "inputs")

    def grad_fn(*xs):
        with enable_grad():
            out = func(*xs)
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise RuntimeError("The function given to hessian should return a single Tensor with a "
                                   "single element")
            if not out.requires_grad:
                return tuple(x * 0.0 for x in xs)
            return _grads([out.reshape(())], list(xs), None, True, strict, "")

    if not in_tuple:
        return jacobian(grad_fn, inputs[0], create_graph=create_graph, strict=strict)[0]
    return jacobian(grad_fn, inputs, create_graph=create_graph, strict=strict)


def _basis(tensors):
    """The standard basis of the flattened, concatenated tensors, split per tensor: for each, a
    (N, *shape) tensor, N the total number of elements (row k is the k-th basis vector's part)."""
    sizes = [t.numel() for t in tensors]
    N = sum(sizes)
    parts, off = [], 0
    for t, n in zip(tensors, sizes):
        e = np.zeros((N, n), dtype=t.dtype)
        e[off + np.arange(n), np.arange(n)] = 1
        parts.append(Tensor._make(e.reshape((N,) + tuple(t.shape))))
        off += n
    return parts, sizes


def _split(rows, sizes):
    out, off = [], 0
    for n in sizes:
        out.append(rows[off:off + n])
        off += n
    return out


def _jacobian_vectorized(func, inputs, create_graph):
    """Reverse mode, vectorized: vmap over the output basis of one vjp (a single backward)."""
    from ..func import vjp as func_vjp, vmap
    in_tuple, inputs = _tuple(inputs, "inputs")
    with enable_grad():
        xs = _prepare(inputs, create_graph)
        out, out_tuple, outs = _call(func, xs)
    us, out_sizes = _basis(outs)

    def rows(*cots):
        _, vjp_fn = func_vjp(func, *xs)
        return tuple(vjp_fn(*cots))
    with enable_grad():
        R = vmap(rows)(*us)          # per input: (N, *x.shape)
    J = []
    for i, o in enumerate(outs):
        Ji = tuple(_split(r, out_sizes)[i].reshape(*(tuple(o.shape) + tuple(x.shape))) for r, x in zip(R, xs))
        Ji = tuple(j if create_graph else j.detach() for j in Ji)
        J.append(Ji if in_tuple else Ji[0])
    return tuple(J) if out_tuple else J[0]


def _jacobian_forward(func, inputs):
    """Forward mode, vectorized: vmap over the input basis of one jvp (one dual pass)."""
    from ..func import jvp as func_jvp, vmap
    in_tuple, inputs = _tuple(inputs, "inputs")
    xs = tuple(x.detach() for x in inputs)
    ts, in_sizes = _basis(xs)
    shape = {}

    def cols(*tangents):
        out, jv = func_jvp(func, xs, tangents)
        shape["tuple"] = isinstance(out, tuple)
        return jv
    C = vmap(cols)(*ts)              # per output: (M, *out.shape)
    out_tuple = shape["tuple"]
    Cs = C if out_tuple else (C,)
    J = []
    for c in Cs:
        oshape = tuple(c.shape[1:])
        parts = _split(c, in_sizes)
        Ji = tuple(p.permute(*range(1, p.ndim), 0).reshape(*(oshape + tuple(x.shape))).detach()
                   for p, x in zip(parts, xs))
        J.append(Ji if in_tuple else Ji[0])
    return tuple(J) if out_tuple else J[0]


def _hessian_vectorized(func, inputs, create_graph, strict, vectorize, strategy):
    from ..func import grad as func_grad
    in_tuple, inputs = _tuple(inputs, "inputs")

    def scalar(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element")
        return out.reshape(())
    g = func_grad(scalar, argnums=tuple(range(len(inputs))))
    H = jacobian(g, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize, strategy=strategy)
    return H if in_tuple else H[0][0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): the vector-Hessian product of a scalar func."""
    in_tuple, inputs = _tuple(inputs, "inputs")
    _, vs = _tuple(v, "v") if v is not None else (None, None)
    with enable_grad():
        xs = _prepare(inputs, True)
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to vhp/hvp should return a single Tensor with a single element")
        if vs is None:
            if any(x.numel() != 1 for x in xs):
                raise RuntimeError("The vector v can only be None if the input to the user-provided function "
                                   "is a single Tensor with a single element.")
            vs = tuple(Tensor._make(np.ones(x.shape, x.dtype)) for x in xs)
        g = _grads([out], list(xs), None, True, strict, "")
        s = sum((gi * vi).sum() for gi, vi in zip(g, vs))
        res = _grads([s], list(xs), None, create_graph, strict, "") if s.requires_grad else \
            tuple(Tensor._make(np.zeros(x.shape, x.dtype)) for x in xs)
    out = out if create_graph else out.detach()
    return out, (res if in_tuple else res[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product (H is symmetric, so H v = (v^T H)^T)."""
    return vhp(func, inputs, v, create_graph, strict)
