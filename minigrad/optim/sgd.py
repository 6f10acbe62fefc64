"""SGD: stochastic gradient descent with optional (Nesterov) momentum, as torch.optim.SGD."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .. import kernels
from ..autograd.function import Function, NoRule
from ..kernels import buffers as _buffers
from ..tensor import Tensor
from .optimizer import (Optimizer, _bump, _check_args, _fusable, _hyper, _like, _nz, _record_writes, _scaled,
                        _scratch)

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum), step for step as PyTorch's.

    For each parameter with a gradient::

        g = -grad if maximize else grad
        g = g + weight_decay * p                                  (if weight_decay != 0)
        b = g (first step)  or  b = momentum * b + (1 - dampening) * g    (if momentum != 0)
        g = g + momentum * b  if nesterov  else  b
        p = p - lr * g

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-3).
        momentum (float): momentum factor (default: 0).
        dampening (float): dampening of the momentum (default: 0).
        weight_decay (float): L2 penalty (default: 0).
        nesterov (bool): Nesterov momentum; needs momentum > 0 and dampening 0 (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).

    State: ``'momentum_buffer'`` per parameter when momentum is non-zero.

    Example:
        >>> opt = mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check_args(lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, group, params, grads, states) -> None:
        bufs = [st.get("momentum_buffer") for st in states]
        if _fusable(group, params, grads, bufs):
            _fused_sgd(self, group, params, grads, bufs)
            if group["momentum"] != 0:
                for st, buf in zip(states, bufs):
                    st["momentum_buffer"] = buf
            return
        made = group["momentum"] == 0 or all(b is not None for b in bufs)  # (the first step makes them)
        if made and _fusable(group, params, grads, bufs, traced=True):
            _traced_sgd(group, params, grads, bufs)  # under mg.graph.trace: one equation
            return
        _single_tensor_sgd(params, grads, bufs, lr=_hyper(group, "lr"), momentum=_hyper(group, "momentum"),
                           dampening=_hyper(group, "dampening"), weight_decay=_hyper(group, "weight_decay"),
                           nesterov=group["nesterov"], maximize=group["maximize"])
        if group["momentum"] != 0:
            for st, buf in zip(states, bufs):
                st["momentum_buffer"] = buf


def _single_tensor_sgd(params: list[Tensor], grads: list[Tensor], momentum_buffers: list[Tensor | None], *,
                       lr, momentum, dampening, weight_decay, nesterov: bool, maximize: bool) -> None:
    """One SGD step for each parameter; a None momentum buffer is made (in the list) on first use.
    The hyper-parameters are floats, or 0-d tensors under mg.graph.trace (optimizer._hyper)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        if _nz(weight_decay):
            grad = grad + _scaled(param, weight_decay)
        if _nz(momentum):
            buf = momentum_buffers[i]
            if buf is None:
                buf = momentum_buffers[i] = grad.detach().clone()
            else:
                buf.mul_(_like(momentum, buf)).add_(_scaled(grad, 1 - dampening))
            grad = grad + _scaled(buf, momentum) if nesterov else buf
        param.add_(_scaled(grad, -lr))


class SGDStep(Function):
    """p <- p - lr * d for every parameter of a group, d the SGD direction of the loop above (weight
    decay, momentum, Nesterov, maximize), written in place: one op for the whole group (PyTorch's
    foreach path), the same arithmetic in the same order as the per-tensor ops, so bit for bit the
    same result (kernels/optim.py's numba loop, or NumPy).

    Eagerly the step calls its forward function (_sgd_step) directly, or through apply when something
    wraps apply (the profiler). Under mg.graph.trace it is recorded as ONE equation (outputs=True): its
    tensor inputs are the parameters, gradients and momentum buffers of the group, its
    hyper-parameters the group's named "hyper" inputs (read at each run: a scheduler's new learning
    rate changes no program), and it returns the arrays it wrote, each then `assign`ed back to its
    tensor (optimizer._record_writes). A compiled step thus runs the same code as the eager step.

    forward(ctx, n, nesterov, maximize, scratch, outputs, lr, momentum, dampening, weight_decay,
    *arrays): arrays = the n parameters, the n gradients, then (with momentum) the n momentum buffers,
    a None one made on first use; the hyper-parameters floats or 0-d arrays. With outputs it returns
    the parameters' arrays, then the buffers' when it was given buffers."""
    batching = NoRule("an optimizer update: it is not run under vmap")
    jvp = NoRule("an optimizer update: not differentiated")
    onnx = NoRule("an optimizer step: export an inference graph (model.eval(), no training step)")

    op_name = "sgd_step"

    @staticmethod
    def forward(ctx, n, nesterov, maximize, scratch, outputs, lr, momentum, dampening, weight_decay, *arrays):
        if len(arrays) not in (2 * n, 3 * n):
            raise ValueError(f"sgd_step: expected {2 * n} or {3 * n} arrays for {n} parameters, got {len(arrays)}")
        ps, gs = arrays[:n], arrays[n:2 * n]
        bufs = list(arrays[2 * n:]) or [None] * n
        _sgd_step(ps, gs, bufs, scratch, float(lr), float(momentum), float(dampening), float(weight_decay),
                  nesterov, maximize)
        if not outputs:
            return ()
        # what it was given decides what it returns (not the momentum's value: a graph's outputs are static)
        return tuple(ps) + (tuple(bufs) if len(arrays) == 3 * n else ())


def _sgd_step(ps, gs, bufs, scratch, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """SGDStep's forward: the update of the arrays ps in place (bufs: the momentum buffers' arrays, a
    None made here on first use; scratch: _scratch's arrays, or None for a fresh temporary)."""
    kernel = kernels.load("optim").sgd if kernels.available() else None
    consts = {}  # the kernel's scalars in each parameter dtype, made once per step
    for i, p in enumerate(ps):
        g, dt = gs[i], p.dtype.type
        if kernel is not None and p.flags.c_contiguous and g.flags.c_contiguous:
            # numba: the same arithmetic in one pass over p (kernels/optim.py)
            buf = bufs[i]
            first = momentum != 0 and buf is None
            if first:
                buf = bufs[i] = np.empty_like(p)
            if buf is None or buf.flags.c_contiguous:
                c = consts.get(dt)
                if c is None:
                    c = consts[dt] = (dt(-lr), dt(weight_decay), dt(momentum), dt(1 - dampening))
                kernel(p, g, p if buf is None else buf, first, c[0], c[1], c[2], c[3], nesterov, maximize)
                continue
        # without the optimizer's scratch (a traced step, a strided tensor): a recycled one (kernels/buffers.py)
        tmp = scratch[p.dtype][0, :p.size].reshape(p.shape) if scratch is not None else \
            _buffers.empty(p.shape, p.dtype)
        if maximize:
            g = np.negative(g)
        if weight_decay != 0:
            g = g + p * dt(weight_decay)
        if momentum != 0:
            buf = bufs[i]
            if buf is None:  # first step: the buffer is a copy of the direction
                buf = bufs[i] = g.copy()
            else:
                np.multiply(buf, dt(momentum), out=buf)
                if 1 - dampening != 1:
                    np.add(buf, np.multiply(g, dt(1 - dampening), out=tmp), out=buf)
                else:
                    np.add(buf, g, out=buf)
            if nesterov:
                g = g + buf * dt(momentum)
            else:
                g = buf
        np.add(p, np.multiply(g, dt(-lr), out=tmp), out=p)
    return ()


def _fused_sgd(opt, group, params, grads, bufs) -> None:
    """The group's step as one SGDStep; a None momentum buffer is made (in the list) on first use."""
    arrays = [b._data if b is not None else None for b in bufs]
    scratch = None if kernels.available() else _scratch(opt, params)  # numba needs no temporaries
    n, momentum = len(params), float(group["momentum"])
    outs = SGDStep.apply(n, group["nesterov"], group["maximize"], scratch, True, float(group["lr"]), momentum,
                         float(group["dampening"]), float(group["weight_decay"]), *[p._data for p in params],
                         *[g._data for g in grads], *(arrays if momentum != 0 else ()))
    _bump(params)
    if momentum != 0:  # the buffers come back after the parameters
        for i, b in enumerate(bufs):
            if b is None:  # made by this step
                bufs[i] = Tensor._make(outs[n + i]._data)
            else:
                b._bump_version()


def _traced_sgd(group, params, grads, bufs) -> None:
    """The group's step under mg.graph.trace: one SGDStep equation (hyper-parameters as named inputs)
    and an `assign` of each tensor it wrote (every momentum buffer exists: the first step, which makes
    them, is traced tensor by tensor)."""
    momentum = _hyper(group, "momentum")
    bufs = bufs if _nz(momentum) else []
    outs = SGDStep.apply(len(params), group["nesterov"], group["maximize"], None, True, _hyper(group, "lr"),
                         momentum, _hyper(group, "dampening"), _hyper(group, "weight_decay"), *params, *grads, *bufs)
    _record_writes(params + bufs, outs)
