"""Adam (and, with decoupled weight decay, AdamW), as torch.optim.Adam."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..autograd.function import Function, NoRule
from ..tensor import Tensor
from ._elementwise import Update, maximum, sqrt, where
from .optimizer import (Optimizer, _bump, _check_args, _fusable, _host_math, _hyper, _like, _nz, _record_writes,
                        _scalar, _scratch, _state_tensor, _step_tensor, _zeros)

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Adam, step for step as PyTorch's.

    For each parameter with a gradient, at step t::

        g = -grad if maximize else grad
        p = p * (1 - lr * weight_decay)      if decoupled_weight_decay   (AdamW)
        g = g + weight_decay * p             otherwise, if weight_decay != 0
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        vmax = max(vmax, v)  and use vmax for v                            (if amsgrad)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params (iterable): parameters or parameter groups (dicts).
        lr (float): learning rate (default: 1e-3).
        betas (tuple[float, float]): decay rates of the gradient's running mean and of its square
            (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        amsgrad (bool): use the maximum of the past second moments (AMSGrad) (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW (default: False).

    State: ``'step'``, ``'exp_avg'``, ``'exp_avg_sq'`` and, with amsgrad, ``'max_exp_avg_sq'``.

    Example:
        >>> opt = mg.optim.Adam(model.parameters(), lr=1e-3)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_args(betas, lr=lr, eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _init_state(self, p, st, group) -> None:
        st["step"] = _step_tensor()
        st["exp_avg"] = _zeros(p)
        st["exp_avg_sq"] = _zeros(p)
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = _zeros(p)

    def _update(self, group, params, grads, states) -> None:
        amsgrad = group["amsgrad"]
        lists = (grads, [st["exp_avg"] for st in states], [st["exp_avg_sq"] for st in states],
                 [_state_tensor(st, "max_exp_avg_sq", p) for st, p in zip(states, params)] if amsgrad else
                 [None] * len(params))
        if _fusable(group, params, *lists):
            _fused_adam(self, group, params, grads, states)
            return
        if _fusable(group, params, *lists, traced=True):  # under mg.graph.trace: one equation
            _traced_adam(group, params, grads, states)
            return
        _single_tensor_adam(
            params, grads, [st["exp_avg"] for st in states], [st["exp_avg_sq"] for st in states],
            [_state_tensor(st, "max_exp_avg_sq", p) for st, p in zip(states, params)] if amsgrad else [],
            [st["step"] for st in states], amsgrad=amsgrad, beta1=_hyper(group, "betas", 0),
            beta2=_hyper(group, "betas", 1), lr=_hyper(group, "lr"), weight_decay=_hyper(group, "weight_decay"),
            eps=_hyper(group, "eps"), maximize=group["maximize"],
            decoupled_weight_decay=group.get("decoupled_weight_decay", False))


def adam_update(p, g, m, v, vmax, maximize, l2, decoupled, amsgrad, small_w, wd, w, w1, b2, c2, bc2, eps, nss):
    """One element of an Adam/AdamW step: the only statement of its math (optim/_elementwise.py runs
    it with numba, with NumPy ufuncs and with minigrad's ops). The flags and scalars are
    _adam_scalars': wd = 1 - lr * weight_decay (decoupled) or weight_decay (l2); m = lerp(m, g, w) in
    PyTorch's two forms (w1 = 1 - w); c2 = 1 - beta2; bc2 = sqrt(1 - beta2**t); nss = -lr / (1 - beta1**t)."""
    if maximize:
        g = -g
    if decoupled:
        p = p * wd
    elif l2:
        g = g + p * wd
    d = g - m
    m = where(small_w, m + d * w, g - d * w1)
    v = v * b2 + g * g * c2
    if amsgrad:
        vmax = maximum(vmax, v)
        v_hat = vmax
    else:
        v_hat = v
    p = p + m / (sqrt(v_hat) / bc2 + eps) * nss
    return p, m, v, vmax


ADAM = Update(adam_update, ("p", "g", "m", "v", "vmax"), ("maximize", "l2", "decoupled", "amsgrad", "small_w"),
              writes=("p", "m", "v", "vmax"), optional={"vmax": "amsgrad"})


def _adam_scalars(step, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, decoupled_weight_decay, like=None):
    """adam_update's flags and scalars at step count `step` (the count after this step's increment),
    as floats or, under mg.graph.trace or as the user gave them, 0-d tensors (in float64: each
    backend rounds them to the element's dtype once). like: the parameter, for a tensor beta1 (lerp
    with a tensor weight: the weight in its dtype, its form chosen when the step runs, as Lerp)."""
    step_size, bias_correction2_sqrt = _host_math("adam_bias", step, lr, beta1, beta2)
    decay = _nz(weight_decay)
    w = 1 - beta1
    if type(w) is float:
        w1, small_w = 1 - w, abs(w) < 0.5
    else:
        w = _like(w, like)
        w1, small_w = 1 - w, w.abs() < 0.5
    return ((maximize, decay and not decoupled_weight_decay, decay and decoupled_weight_decay, amsgrad, small_w),
            ((1 - lr * weight_decay) if decoupled_weight_decay else weight_decay, w, w1, beta2, 1 - beta2,
             bias_correction2_sqrt, eps, -step_size))


def _single_tensor_adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                        exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *,
                        amsgrad: bool, beta1, beta2, lr, weight_decay, eps, maximize: bool,
                        decoupled_weight_decay: bool) -> None:
    """One Adam/AdamW step for each parameter, in place, as PyTorch's single-tensor Adam: adam_update
    with minigrad's ops. The hyper-parameters are floats, or 0-d tensors under mg.graph.trace
    (optimizer._hyper)."""
    for i, param in enumerate(params):
        step_t = state_steps[i]
        step_t.add_(1)
        flags, scalars = _adam_scalars(_scalar(step_t), lr, beta1, beta2, weight_decay, eps, amsgrad, maximize,
                                       decoupled_weight_decay, param)
        ADAM.tensors_step([param, grads[i], exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i] if amsgrad else None],
                          flags, scalars)


class AdamStep(Function):
    """One Adam/AdamW step (adam_update) for every parameter of a group, written in place: one op for
    the whole group (PyTorch's foreach path), the function the per-tensor path runs with minigrad's
    ops, here through kernels/optim.py's numba loop or its NumPy program: bit for bit the same result.

    Eagerly it returns nothing (outputs=False). Under mg.graph.trace it is recorded as ONE equation
    (outputs=True): its tensor inputs are the parameters, gradients, moments, (amsgrad) maximum second
    moments and step counts of the group, its hyper-parameters the group's named "hyper" inputs (read
    at each run: a scheduler's new learning rate changes no program), and it returns the arrays it
    wrote, each then `assign`ed back to its tensor (optimizer._record_writes). A compiled step thus
    calls this same forward, on the same arrays, as the eager step.

    forward(ctx, n, amsgrad, maximize, decoupled_weight_decay, scratch, outputs, beta1, beta2, lr,
    weight_decay, eps, *arrays): arrays = the n parameters, then the n gradients, exp_avgs, exp_avg_sqs,
    (amsgrad) max_exp_avg_sqs and steps; the hyper-parameters floats or 0-d arrays."""
    batching = NoRule("an optimizer update: it is not run under vmap")
    jvp = NoRule("an optimizer update: not differentiated")
    onnx = NoRule("an optimizer step: export an inference graph (model.eval(), no training step)")

    op_name = "adam_step"

    @staticmethod
    def forward(ctx, n, amsgrad, maximize, decoupled_weight_decay, scratch, outputs, beta1, beta2, lr,
                weight_decay, eps, *arrays):
        k = 5 if amsgrad else 4
        if len(arrays) != (k + 1) * n:
            raise ValueError(f"adam_step: expected {(k + 1) * n} arrays for {n} parameters "
                             f"(amsgrad={amsgrad}), got {len(arrays)}")
        ps, gs, ms, vs = (arrays[i * n:(i + 1) * n] for i in range(4))
        vmaxs = arrays[4 * n:5 * n] if amsgrad else ()
        steps = arrays[k * n:]
        _adam_step(ps, gs, ms, vs, vmaxs, steps, scratch, amsgrad, float(beta1), float(beta2), float(lr),
                   float(weight_decay), float(eps), maximize, decoupled_weight_decay)
        if not outputs:
            return ()
        return tuple(ps) + tuple(ms) + tuple(vs) + tuple(vmaxs) + tuple(steps)  # the arrays written


def _adam_step(ps, gs, ms, vs, vmaxs, steps, scratch, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize,
               decoupled_weight_decay):
    """AdamStep's update of the arrays in place (the hyper-parameters Python floats; scratch: the
    optimizer's scratch rows, or None for recycled temporaries)."""
    made = {}  # adam_update's flags and scalars per step count and dtype (the same count for all, but for
    for i, p in enumerate(ps):  # a parameter that missed a step)
        st = steps[i]
        np.add(st, 1, out=st)
        key = (float(st), p.dtype)
        fs = made.get(key)
        if fs is None:
            flags, scalars = _adam_scalars(key[0], lr, beta1, beta2, weight_decay, eps, amsgrad, maximize,
                                           decoupled_weight_decay)
            fs = made[key] = (flags, scalars, ADAM.cast(scalars, p.dtype))
        ADAM.arrays_step([p, gs[i], ms[i], vs[i], vmaxs[i] if amsgrad else None], *fs, scratch)


def _fused_adam(opt, group, params, grads, states) -> None:
    amsgrad = group["amsgrad"]
    ms, vs, steps = [st["exp_avg"] for st in states], [st["exp_avg_sq"] for st in states], [st["step"] for st in states]
    vmaxs = [_state_tensor(st, "max_exp_avg_sq", p) for st, p in zip(states, params)] if amsgrad else []
    beta1, beta2 = group["betas"]
    AdamStep.apply(len(params), amsgrad, group["maximize"], group.get("decoupled_weight_decay", False), _scratch(opt),
                   False, float(beta1), float(beta2), float(group["lr"]), float(group["weight_decay"]),
                   float(group["eps"]), *[t._data for ts in (params, grads, ms, vs, vmaxs, steps) for t in ts])
    for ts in (params, ms, vs, vmaxs, steps):
        _bump(ts)


def _traced_adam(group, params, grads, states) -> None:
    """The group's step under mg.graph.trace: one AdamStep equation (hyper-parameters as named inputs)
    and an `assign` of each tensor it wrote."""
    amsgrad = group["amsgrad"]
    ms, vs, steps = [st["exp_avg"] for st in states], [st["exp_avg_sq"] for st in states], [st["step"] for st in states]
    vmaxs = [_state_tensor(st, "max_exp_avg_sq", p) for st, p in zip(states, params)] if amsgrad else []
    outs = AdamStep.apply(len(params), amsgrad, group["maximize"], group.get("decoupled_weight_decay", False), None,
                          True, _hyper(group, "betas", 0), _hyper(group, "betas", 1), _hyper(group, "lr"),
                          _hyper(group, "weight_decay"), _hyper(group, "eps"), *params, *grads, *ms, *vs, *vmaxs,
                          *steps)
    _record_writes(params + ms + vs + vmaxs + steps, outs)
