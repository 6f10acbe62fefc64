"""Adam (and, with decoupled weight decay, AdamW), as torch.optim.Adam."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .. import kernels, ops
from ..autograd.function import Function, NoRule
from ..kernels import buffers as _buffers
from ..tensor import Tensor
from .optimizer import (_HOST_MATH, Optimizer, _addcdiv_, _addcmul_, _bump, _check_args, _fusable, _host_math, _hyper,
                        _like, _nz, _record_writes, _scalar, _scaled, _scratch, _state_tensor, _step_tensor,
                        _zeros)

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


def _single_tensor_adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                        exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *,
                        amsgrad: bool, beta1, beta2, lr, weight_decay, eps, maximize: bool,
                        decoupled_weight_decay: bool) -> None:
    """One Adam/AdamW step for each parameter, in place, as PyTorch's single-tensor Adam. The
    hyper-parameters are floats, or 0-d tensors under mg.graph.trace (optimizer._hyper)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t.add_(1)
        if _nz(weight_decay):
            if decoupled_weight_decay:
                param.mul_(_like(1 - lr * weight_decay, param))
            else:
                grad = grad + _scaled(param, weight_decay)
        exp_avg.lerp_(grad, _like(1 - beta1, exp_avg))
        _addcmul_(exp_avg_sq.mul_(_like(beta2, exp_avg_sq)), grad, grad, 1 - beta2)
        step_size, bias_correction2_sqrt = _host_math("adam_bias", _scalar(step_t), lr, beta1, beta2)
        if amsgrad:
            ops.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = (max_exp_avg_sqs[i].sqrt() / _like(bias_correction2_sqrt, param)).add_(_like(eps, param))
        else:
            denom = (exp_avg_sq.sqrt() / _like(bias_correction2_sqrt, param)).add_(_like(eps, param))
        _addcdiv_(param, exp_avg, denom, -step_size)


class AdamStep(Function):
    """One Adam/AdamW step (the loop above) for every parameter of a group, written in place: one op
    for the whole group (PyTorch's foreach path), the same arithmetic in the same order as the
    per-tensor ops, so bit for bit the same result (kernels/optim.py's numba loop, or NumPy).

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
    """AdamStep's update of the arrays in place (the hyper-parameters Python floats; scratch: _scratch's
    arrays, or None for fresh temporaries)."""
    kernel = kernels.load("optim").adam if kernels.available() else None
    if kernel is not None:  # the kernel's form of the hyper-parameters, the same for every parameter
        if weight_decay == 0:
            wd_mode, wd = 0, 0.0
        elif decoupled_weight_decay:
            wd_mode, wd = 1, 1 - lr * weight_decay
        else:
            wd_mode, wd = (2, 1.0) if weight_decay == 1 else (3, weight_decay)
        w = 1 - beta1
        small_w = abs(w) < 0.5
    consts = {}
    for i, p in enumerate(ps):
        g, m, v, dt = gs[i], ms[i], vs[i], p.dtype.type
        st = steps[i]
        np.add(st, 1, out=st)
        step_size, bias_correction2_sqrt = _HOST_MATH["adam_bias"](float(st), lr, beta1, beta2)
        if kernel is not None and p.flags.c_contiguous and g.flags.c_contiguous and m.flags.c_contiguous \
                and v.flags.c_contiguous and (not amsgrad or vmaxs[i].flags.c_contiguous):
            # numba: the same arithmetic in one pass over p (kernels/optim.py)
            c = consts.get(dt)  # the step-independent scalars in the parameter's dtype, once per step
            if c is None:
                c = consts[dt] = (dt(wd), dt(w if small_w else 1 - w), dt(beta2), dt(1 - beta2), dt(eps))
            kernel(p, g, m, v, vmaxs[i] if amsgrad else _unused(p.dtype), amsgrad, maximize, wd_mode, c[0],
                   small_w, c[1], c[2], c[3], dt(bias_correction2_sqrt), c[4], dt(-step_size))
            continue
        if scratch is not None:
            rows = scratch[p.dtype]
            tmp, denom = rows[0, :p.size].reshape(p.shape), rows[1, :p.size].reshape(p.shape)
        else:  # a traced step's, or a strided tensor's: recycled temporaries (kernels/buffers.py)
            tmp, denom = _buffers.empty(p.shape, p.dtype), _buffers.empty(p.shape, p.dtype)
        if maximize:
            g = np.negative(g)
        if weight_decay != 0:
            if decoupled_weight_decay:
                np.multiply(p, dt(1 - lr * weight_decay), out=p)
            else:
                g = g + (p if weight_decay == 1 else p * dt(weight_decay))
        # m = lerp(m, g, 1 - beta1), in PyTorch's two forms (as ops.elementwise.Lerp)
        w = 1 - beta1
        diff = np.subtract(g, m, out=tmp)
        if abs(w) < 0.5:
            diff *= w
            np.add(m, diff, out=m)
        else:
            diff *= 1 - w
            np.subtract(g, diff, out=m)
        np.multiply(v, dt(beta2), out=v)
        prod = np.multiply(g, g, out=tmp)
        if 1 - beta2 != 1:
            prod *= 1 - beta2
        np.add(v, prod, out=v)
        if amsgrad:
            np.maximum(vmaxs[i], v, out=vmaxs[i])
            np.sqrt(vmaxs[i], out=denom)
        else:
            np.sqrt(v, out=denom)
        np.true_divide(denom, dt(bias_correction2_sqrt), out=denom)
        np.add(denom, dt(eps), out=denom)
        quot = np.true_divide(m, denom, out=tmp)
        if -step_size != 1:
            quot *= -step_size
        np.add(p, quot, out=p)


_UNUSED = {}


def _unused(dtype):
    """A one-element array of dtype for the kernel's vmax without amsgrad (not one of the arrays it
    writes: passing p there would defeat the vectoriser's aliasing check)."""
    a = _UNUSED.get(dtype)
    if a is None:
        a = _UNUSED[dtype] = np.zeros(1, dtype)
    return a


def _fused_adam(opt, group, params, grads, states) -> None:
    amsgrad = group["amsgrad"]
    ms, vs, steps = [st["exp_avg"] for st in states], [st["exp_avg_sq"] for st in states], [st["step"] for st in states]
    vmaxs = [_state_tensor(st, "max_exp_avg_sq", p) for st, p in zip(states, params)] if amsgrad else []
    beta1, beta2 = group["betas"]
    scratch = None if kernels.available() else _scratch(opt, params, 2)  # numba needs no temporaries
    AdamStep.apply(len(params), amsgrad, group["maximize"], group.get("decoupled_weight_decay", False), scratch,
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
