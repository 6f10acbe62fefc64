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


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _forward_jacobians(fn, inputs, diff_idx, n_outs):
    """J[i][o] by forward mode: one dual pass per input element (a one-hot tangent)."""
    from . import forward_ad as fwAD
    from ..tensor import Tensor
    jac = {}
    for i in diff_idx:
        cols = None
        x = inputs[i]
        for k in range(x.numel()):
            t = np.zeros(x.numel(), x.dtype)
            t[k] = 1
            with fwAD.dual_level():
                args = list(inputs)
                args[i] = fwAD.make_dual(x.detach().requires_grad_(), Tensor._make(t.reshape(x.shape)))
                outs = _outputs(fn, args)
                tans = [fwAD.unpack_dual(o).tangent for o in outs]
            if cols is None:
                cols = [np.zeros((o.numel(), x.numel())) for o in outs]
            for o, tan in enumerate(tans):
                if tan is not None:
                    cols[o][:, k] = tan._data.astype(np.float64).reshape(-1)
        jac[i] = cols if cols is not None else [np.zeros((0, 0))] * n_outs
    return jac


def _compare(jacobians, numerical, inputs, outs, diff_idx, atol, rtol, what):
    """The first mismatch between two sets of Jacobians, as a message (None when they agree)."""
    for i in diff_idx:
        for o in range(len(outs)):
            a, n = jacobians[i][o], numerical[i][o]
            bad = ~(np.abs(a - n) <= atol + rtol * np.abs(n))
            if bad.any():
                err = np.where(bad, np.abs(a - n), -1.0)
                r, c = np.unravel_index(np.argmax(err), err.shape)
                in_shape, out_shape = inputs[i].shape, outs[o].shape
                in_pos = np.unravel_index(c, in_shape) if in_shape else ()
                out_pos = np.unravel_index(r, out_shape) if out_shape else ()
                return (f"{what}Jacobian mismatch for output {o} with respect to input {i} (shape {in_shape}): "
                        f"{int(bad.sum())} of {bad.size} elements differ; worst at input index "
                        f"{tuple(int(v) for v in in_pos)}, output index {tuple(int(v) for v in out_pos)}: "
                        f"numerical {n[r, c]:.8g}, analytical {a[r, c]:.8g} "
                        f"(difference {abs(a[r, c] - n[r, c]):.3g}, atol {atol}, rtol {rtol})")
    return None


def _check_zero_grad_outputs(fn, inputs, diff_idx, outs, undefined):
    """PyTorch's _test_backward_mul_by_grad_output (and, with undefined, _test_undefined_backward_mode):
    with zero output gradients every input gradient is None or zero, of the input's dtype and shape."""
    from . import grad
    from ..tensor import Tensor
    outs = [o for o in outs if o.requires_grad]
    if not outs:
        return None
    xs = [inputs[i] for i in diff_idx]
    try:
        gs = grad(outs, xs, [Tensor._make(np.zeros(o.shape, o.dtype)) for o in outs], retain_graph=True,
                  allow_unused=True)
    except RuntimeError as e:
        if undefined:
            return f"Expected backward function to handle undefined output grads ({e})"
        raise
    for g, x in zip(gs, xs):
        if g is None:
            continue
        if (g._data != 0).any():
            return ("backward not multiplied by grad_output: with zero output gradients, an input gradient "
                    "is not zero")
        if g.dtype != x.dtype:
            return "grad is incorrect type"
        if tuple(g.shape) != tuple(x.shape):
            return "grad is incorrect size"
    return None


def _check_batched_grad(fn, inputs, diff_idx, outs, seed=0):
    """PyTorch's _test_batched_grad: the vector-Jacobian products of two random output gradients,
    one at a time against one vmap over both (each output in turn)."""
    from .. import func
    from ..tensor import Tensor
    from ..ops.shape import stack
    import warnings as _w
    rng = np.random.default_rng(seed)
    xs = [inputs[i] for i in diff_idx]
    for o, out in enumerate(outs):
        if not out.requires_grad:
            continue

        def f(*ys, o=o):
            args = list(inputs)
            for i, y in zip(diff_idx, ys):
                args[i] = y
            return _outputs(fn, args)[o]
        _, vjp_fn = func.vjp(f, *[x.detach() for x in xs])
        gos = [Tensor._make(rng.standard_normal(out.shape).astype(out.dtype)) for _ in range(2)]
        expected = [stack(s) for s in zip(*[vjp_fn(g) for g in gos])]

        def per_sample(*args, f=f):
            # the graph is recorded inside vmap (the inputs repeated along the batch), so the
            # backward formulas run on batched cotangents: minigrad's vmap would otherwise run a
            # graph recorded outside it once per sample
            return func.vjp(f, *args[:-1])[1](args[-1])
        with _w.catch_warnings():
            _w.filterwarnings("ignore", message="There is a performance drop")
            try:
                result = func.vmap(per_sample)(*[stack([x.detach(), x.detach()]) for x in xs], stack(gos))
            except (RuntimeError, TypeError, ValueError) as e:
                return f"While computing batched gradients, got: {type(e).__name__}: {e}"
        for i, (r, e) in enumerate(zip(result, expected)):
            if not np.allclose(r._data, e._data, rtol=1e-5, atol=1e-8):
                return (f"For output {o} and input {i}: the batched gradient (vmap over grad_outputs) differs "
                        f"from the per-sample gradients: largest difference {np.abs(r._data - e._data).max():.3g}")
    return None


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, *, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Check fn's gradients against central finite differences, as torch.autograd.gradcheck.

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
        check_backward_ad: check the reverse-mode Jacobian (default True); then also that zero
            output gradients give zero (or None) input gradients of the inputs' dtype and shape.
        check_forward_ad: check the forward-mode Jacobian (mg.autograd.forward_ad, one dual pass
            per input element). Default False.
        check_undefined_grad: check that backward handles all-zero ("undefined") output gradients,
            giving None or zero input gradients. Default True.
        check_grad_dtypes: check that each gradient has its input's dtype. Default False.
        check_batched_grad: check that vmap over two output gradients of the vector-Jacobian
            product gives the per-sample results (the backward formulas run on batched cotangents).
            Default False.
        check_batched_forward_grad: the same for forward mode (vmap over two tangents of the
            Jacobian-vector product). Default False.
        nondet_tol: PyTorch's tolerance for a backward that differs between runs; accepted:
            minigrad's backward is deterministic. fast_mode: accepted; the full (slow-mode) check
            runs, which implies fast mode's. masked: accepted (no sparse tensors in minigrad).

    Returns:
        True when every check passes (False instead of raising with raise_exception=False).
    """
    from ..tensor import Tensor
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    if not check_forward_ad and not check_backward_ad:
        raise ValueError("gradcheck: Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise ValueError("gradcheck: check_batched_forward_grad needs check_forward_ad=True (as PyTorch)")
    fn, inputs = _realified(fn, inputs)  # complex inputs and outputs as (real, imaginary) pairs
    for i in diff_idx:
        if inputs[i].dtype not in (np.float64, np.complex128):
            warnings.warn(f"gradcheck: input {i} is {inputs[i].dtype}, not float64; finite differences "
                          f"will be inaccurate", UserWarning, stacklevel=2)
    outs, numerical = _numerical_jacobians(fn, inputs, diff_idx, eps)
    outs = _outputs(fn, inputs)
    if check_backward_ad:
        analytical = _analytical_jacobians(outs, inputs, diff_idx)
        msg = _compare(analytical, numerical, inputs, outs, diff_idx, atol, rtol, "")
        if msg:
            return _fail(msg, raise_exception)
        if check_grad_dtypes:
            msg = _grad_dtypes(outs, inputs, diff_idx)
            if msg:
                return _fail(msg, raise_exception)
    if check_forward_ad:
        forward = _forward_jacobians(fn, inputs, diff_idx, len(outs))
        msg = _compare(forward, numerical, inputs, outs, diff_idx, atol, rtol, "Forward-mode (forward AD) ")
        if msg:
            return _fail(msg, raise_exception)
        if check_batched_forward_grad:
            msg = _check_batched_forward(fn, inputs, diff_idx)
            if msg:
                return _fail(msg, raise_exception)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        msg = _check_batched_grad(fn, inputs, diff_idx, outs)
        if msg:
            return _fail(msg, raise_exception)
    # one backward with zero output gradients serves both of PyTorch's checks (the first's message)
    msg = _check_zero_grad_outputs(fn, inputs, diff_idx, outs, check_undefined_grad)
    if msg:
        return _fail(msg, raise_exception)
    return True


def _grad_dtypes(outs, inputs, diff_idx):
    from . import grad
    from ..tensor import Tensor
    live = [o for o in outs if o.requires_grad]
    if not live:
        return None
    gs = grad(live, [inputs[i] for i in diff_idx], [Tensor._make(np.ones(o.shape, o.dtype)) for o in live],
              retain_graph=True, allow_unused=True)
    for i, g in zip(diff_idx, gs):
        if g is not None and g.dtype != inputs[i].dtype:
            return f"Gradient has dtype mismatch: input {i} is {inputs[i].dtype}, its gradient {g.dtype}"
    return None


def _check_batched_forward(fn, inputs, diff_idx, seed=0):
    """vmap over two tangents of the Jacobian-vector product against one at a time."""
    from .. import func
    from ..tensor import Tensor
    from ..ops.shape import stack
    import warnings as _w
    rng = np.random.default_rng(seed)
    xs = [inputs[i].detach() for i in diff_idx]

    def f(*ys):
        args = list(inputs)
        for i, y in zip(diff_idx, ys):
            args[i] = y
        return _outputs(fn, args)

    def jv(*ts):
        return func.jvp(f, tuple(xs), tuple(ts))[1]
    tangents = [[Tensor._make(rng.standard_normal(x.shape).astype(x.dtype)) for x in xs] for _ in range(2)]
    expected = [stack(s) for s in zip(*[jv(*t) for t in tangents])]
    with _w.catch_warnings():
        _w.filterwarnings("ignore", message="There is a performance drop")
        try:
            result = func.vmap(jv)(*[stack(s) for s in zip(*tangents)])
        except RuntimeError as e:
            return f"While computing batched forward gradients, got: {e}"
    for o, (r, e) in enumerate(zip(result, expected)):
        if not np.allclose(r._data, e._data, rtol=1e-5, atol=1e-8):
            return (f"For output {o}: the batched forward gradient (vmap over tangents) differs from the "
                    f"per-sample ones: largest difference {np.abs(r._data - e._data).max():.3g}")
    return None


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  seed=0, *, gen_non_contig_grad_outputs=False, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: gradcheck of the vector-Jacobian product of fn (built with
    create_graph), as torch.autograd.gradgradcheck: check_rev_over_rev (default True) checks its
    reverse-mode Jacobian, check_fwd_over_rev its forward-mode one; check_undefined_grad,
    check_grad_dtypes and check_batched_grad are gradcheck's, applied to the VJP.
    gen_non_contig_grad_outputs, nondet_tol, fast_mode and masked are accepted (see gradcheck)."""
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
            from .. import func as _func
            if _func._vmap_open():  # under check_batched_grad's vmap: the transforms' backward (func/vmap.py)
                gs = _func._grad_of(os_, d, list(gos))
            else:
                gs = grad(os_, d, list(gos), create_graph=True, allow_unused=True)
        return tuple(g if g is not None else (x * 0.0) for g, x in zip(gs, d))

    if not diff:
        raise ValueError("gradgradcheck expects at least one input tensor to require gradient")
    return gradcheck(vjp, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
