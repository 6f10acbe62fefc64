"""gradcheck / gradgradcheck: analytical Jacobians (autograd) against central finite differences."""
import warnings

import numpy as np

from .grad_mode import enable_grad, no_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck when an analytical gradient disagrees with finite differences."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(fn, inputs):
    from ..tensor import Tensor
    return tuple(o for o in _as_tuple(fn(*inputs)) if isinstance(o, Tensor) and o.dtype.kind == "f")


def _realified(fn, inputs):
    """fn and inputs with complex numbers as pairs of reals, as PyTorch's gradcheck checks them: each
    complex input z that requires grad becomes a float leaf of shape (..., 2) (real and imaginary
    parts, perturbed separately) and each complex output its view_as_real. The real Jacobian of that
    function is what the Wirtinger derivatives of the original are (PyTorch's convention: the
    gradient is dL/dx + i dL/dy), so checking it checks them."""
    from ..tensor import Tensor
    from ..ops.complex import view_as_complex, view_as_real
    pos = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad and x.dtype.kind == "c"]
    new = list(inputs)
    for i in pos:
        new[i] = Tensor._make(np.ascontiguousarray(view_as_real(inputs[i].detach())._data).copy()).requires_grad_(True)

    def real_fn(*args):
        args = list(args)
        for i in pos:
            args[i] = view_as_complex(args[i])
        out = fn(*args)
        conv = [view_as_real(o) if isinstance(o, Tensor) and o.dtype.kind == "c" else o for o in _as_tuple(out)]
        return tuple(conv) if isinstance(out, (tuple, list)) else conv[0]
    return real_fn, tuple(new)


def _numerical_jacobians(fn, inputs, diff_idx, eps):
    """J[i][o] of shape (out.numel, in.numel) by central differences, perturbing inputs in place."""
    with no_grad():
        outs = _outputs(fn, inputs)
        jac = {i: [np.zeros((o.numel(), inputs[i].numel())) for o in outs] for i in diff_idx}
        for i in diff_idx:
            flat = inputs[i]._data.reshape(-1)  # a view when contiguous; perturbations land in the tensor
            if flat.size and not np.shares_memory(flat, inputs[i]._data):
                raise ValueError("gradcheck: inputs must be contiguous tensors")
            for k in range(flat.size):
                orig = flat[k]
                flat[k] = orig + eps
                plus = [o._data.astype(np.float64).reshape(-1) for o in _outputs(fn, inputs)]
                flat[k] = orig - eps
                minus = [o._data.astype(np.float64).reshape(-1) for o in _outputs(fn, inputs)]
                flat[k] = orig
                for o, (p, m) in enumerate(zip(plus, minus)):
                    jac[i][o][:, k] = (p - m) / (2 * eps)
    return outs, jac


def _analytical_jacobians(outs, inputs, diff_idx):
    from . import grad
    from ..tensor import Tensor
    jac = {i: [np.zeros((o.numel(), inputs[i].numel())) for o in outs] for i in diff_idx}
    for o, out in enumerate(outs):
        if out.grad_fn is None and not out.requires_grad:
            continue
        for j in range(out.numel()):
            seed = np.zeros(out.numel(), dtype=out.dtype)
            seed[j] = 1
            gs = grad(out, [inputs[i] for i in diff_idx], Tensor._make(seed.reshape(out.shape)),
                      retain_graph=True, allow_unused=True)
            for i, g in zip(diff_idx, gs):
                if g is not None:
                    jac[i][o][j, :] = g._data.reshape(-1)
    return jac


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check fn's gradients against central finite differences.

    Complex inputs and outputs are checked as PyTorch's gradcheck does, through the Wirtinger
    derivatives: the real and imaginary part of each complex input are perturbed separately, and
    each complex output is compared as its real and imaginary parts.

    Args:
        fn: a function of Tensors returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of inputs; those with requires_grad=True are checked
            (use float64: float32 finite differences are too coarse).
        eps, atol, rtol: perturbation and tolerance (|analytical - numerical| <= atol + rtol * |numerical|).
        raise_exception: raise GradcheckError naming the input, the worst element and both values
            (default), or return False.

    Returns:
        True when every Jacobian matches.
    """
    from ..tensor import Tensor
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    fn, inputs = _realified(fn, inputs)  # complex inputs and outputs as (real, imaginary) pairs
    for i in diff_idx:
        if inputs[i].dtype not in (np.float64, np.complex128):
            warnings.warn(f"gradcheck: input {i} is {inputs[i].dtype}, not float64; finite differences "
                          f"will be inaccurate", UserWarning, stacklevel=2)
    outs, numerical = _numerical_jacobians(fn, inputs, diff_idx, eps)
    outs = _outputs(fn, inputs)
    analytical = _analytical_jacobians(outs, inputs, diff_idx)
    for i in diff_idx:
        for o in range(len(outs)):
            a, n = analytical[i][o], numerical[i][o]
            bad = ~(np.abs(a - n) <= atol + rtol * np.abs(n))
            if bad.any():
                err = np.where(bad, np.abs(a - n), -1.0)
                r, c = np.unravel_index(np.argmax(err), err.shape)
                in_shape, out_shape = inputs[i].shape, outs[o].shape
                in_pos = np.unravel_index(c, in_shape) if in_shape else ()
                out_pos = np.unravel_index(r, out_shape) if out_shape else ()
                msg = (f"Jacobian mismatch for output {o} with respect to input {i} (shape {in_shape}): "
                       f"{int(bad.sum())} of {bad.size} elements differ; worst at input index "
                       f"{tuple(int(v) for v in in_pos)}, output index {tuple(int(v) for v in out_pos)}: "
                       f"numerical {n[r, c]:.8g}, analytical {a[r, c]:.8g} "
                       f"(difference {abs(a[r, c] - n[r, c]):.3g}, atol {atol}, rtol {rtol})")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  seed=0):
    """Check second derivatives: gradcheck of the vector-Jacobian product of fn (built with create_graph)."""
    from . import grad
    from ..tensor import Tensor
    inputs = _as_tuple(inputs)
    fn, inputs = _realified(fn, inputs)  # complex inputs and outputs as (real, imaginary) pairs
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(Tensor(rng.standard_normal(o.shape), requires_grad=True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def vjp(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():  # the finite-difference pass runs under no_grad; the VJP needs a graph
            os_ = _outputs(fn, ins)
            d = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
            gs = grad(os_, d, list(gos), create_graph=True, allow_unused=True)
        return tuple(g if g is not None else (x * 0.0) for g, x in zip(gs, d))

    if not diff:
        raise ValueError("gradgradcheck expects at least one input tensor to require gradient")
    return gradcheck(vjp, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
