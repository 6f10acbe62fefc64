"""SGD: stochastic gradient descent with optional (Nesterov) momentum, as torch.optim.SGD."""
from __future__ import annotations

from collections.abc import Iterable

from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from ._elementwise import Update, detached
from .optimizer import Optimizer, _bump, _check_args, _fusable, _hyper, _nz, _record_writes, _scratch

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


def sgd_update(p, g, buf, maximize, l2, momentum, first, nesterov, nlr, wd, mu, damp):
    """One element of an SGD step: the only statement of its math (optim/_elementwise.py runs it with
    numba, with NumPy ufuncs and with minigrad's ops). nlr = -lr; mu = momentum; damp = 1 - dampening;
    first: the step that makes the momentum buffer (a copy of the direction, detached as PyTorch's)."""
    d = -g if maximize else g
    if l2:
        d = d + p * wd
    if momentum:
        buf = detached(d) if first else buf * mu + d * damp
        d = d + buf * mu if nesterov else buf
    return p + d * nlr, buf


SGD_UPDATE = Update(sgd_update, ("p", "g", "buf"), ("maximize", "l2", "momentum", "first", "nesterov"),
                    writes=("p", "buf"), optional={"buf": "momentum"})


def _sgd_scalars(lr, momentum, dampening, weight_decay, nesterov, maximize, first):
    """sgd_update's flags and scalars (floats, or 0-d tensors under mg.graph.trace)."""
    return ((maximize, _nz(weight_decay), _nz(momentum), first, nesterov),
            (-lr, weight_decay, momentum, 1 - dampening))


def _single_tensor_sgd(params: list[Tensor], grads: list[Tensor], momentum_buffers: list[Tensor | None], *,
                       lr, momentum, dampening, weight_decay, nesterov: bool, maximize: bool) -> None:
    """One SGD step for each parameter (sgd_update with minigrad's ops); a None momentum buffer is
    made (in the list) on first use. The hyper-parameters are floats, or 0-d tensors under
    mg.graph.trace (optimizer._hyper)."""
    for i, param in enumerate(params):
        buf = momentum_buffers[i]
        flags, scalars = _sgd_scalars(lr, momentum, dampening, weight_decay, nesterov, maximize, buf is None)
        ts = [param, grads[i], buf]
        SGD_UPDATE.tensors_step(ts, flags, scalars)
        momentum_buffers[i] = ts[2]


class SGDStep(Function):
    """One SGD step (sgd_update) for every parameter of a group, written in place: one op for the whole
    group (PyTorch's foreach path), the function the per-tensor path runs with minigrad's ops, here
    through kernels/optim.py's numba loop or its NumPy program: bit for bit the same result.

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
    None made here on first use; scratch: the optimizer's scratch rows, or None for recycled
    temporaries)."""
    flags, scalars = _sgd_scalars(lr, momentum, dampening, weight_decay, nesterov, maximize, False)
    first = flags[:3] + (True,) + flags[4:]
    dt = cast = None  # the scalars in the parameters' dtype (made again when it changes)
    for i, p in enumerate(ps):
        if p.dtype is not dt:
            dt, cast = p.dtype, SGD_UPDATE.cast(scalars, p.dtype)
        if momentum != 0:
            arrays = [p, gs[i], bufs[i]]
            SGD_UPDATE.arrays_step(arrays, flags if arrays[2] is not None else first, scalars, cast, scratch)
            bufs[i] = arrays[2]
        else:
            SGD_UPDATE.arrays_step([p, gs[i], None], flags, scalars, cast, scratch)
    return ()


def _fused_sgd(opt, group, params, grads, bufs) -> None:
    """The group's step as one SGDStep; a None momentum buffer is made (in the list) on first use."""
    arrays = [b._data if b is not None else None for b in bufs]
    n, momentum = len(params), float(group["momentum"])
    outs = SGDStep.apply(n, group["nesterov"], group["maximize"], _scratch(opt), True, float(group["lr"]), momentum,
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
