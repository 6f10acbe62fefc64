"""Tests generated from the op registry (minigrad/testing/opinfo/, `op_db`), one item per entry
running over its samples: the forward against its NumPy reference, float32 in -> float32 out, gradcheck and
gradgradcheck (float64), PyTorch parity of values, gradients and grad_fn names (when torch is
installed), and "every public op has an entry" (public names derived from the package)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function, gradcheck, gradgradcheck
from minigrad.testing import op_db, public_ops
from minigrad.testing.opinfo import grad_fn_base, make_args, ref_args, rebuild
from helpers import ops_seen

OPS = [o for o in op_db]


def _mg_make(arr, requires_grad):
    return mg.tensor(np.array(arr), requires_grad=requires_grad)


def _mg_const(arr):
    return mg.tensor(np.array(arr))


def _tensors(out):
    """The Tensor outputs of an op result (a Tensor, a tuple/namedtuple of them, or a Python value)."""
    if isinstance(out, mg.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, mg.Tensor)]
    return []


def _skip(info, test):
    if test in info.skips:
        pytest.skip(f"{info.full_name}: {info.skips[test]}")


# -- forward (one item per op: every sample, every dtype, the dispatch) ---------------------------
def _check_forward(info, s, skipped):
    """The sample's forward against its NumPy reference (float64 in -> float64 out)."""
    if "forward" in info.skips:
        skipped.add(f"forward: {info.skips['forward']}")
        return
    args, kwargs, _ = make_args(s, _mg_make, info.supports_grad)
    out = info.op(*args, **kwargs)
    ref = info.ref(*ref_args(s), **s.kwargs)
    outs = _tensors(out)
    if not outs:  # a Python value (equal, allclose)
        assert out == ref, f"{info} ({s.name}): {out!r} != NumPy's {ref!r}"
        return
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    assert len(outs) == len(refs), f"{info} ({s.name}): {len(outs)} outputs, NumPy's reference {len(refs)}"
    for o, r in zip(outs, refs):
        r = np.asarray(r)
        assert o.shape == r.shape, f"{info} ({s.name}): shape {o.shape} != NumPy's {r.shape}"
        np.testing.assert_allclose(o.detach().numpy(), r, rtol=info.fwd_rtol, atol=info.fwd_atol,
                                   err_msg=f"{info} ({s.name})")
        if r.dtype.kind == "f":
            assert o.dtype == mg.float64, f"{info} ({s.name}): float64 inputs gave {o.dtype}"


def _check_float32(info, s, skipped):
    """float32 in -> float32 out (where float64 in gives float64 out)."""
    if "float32" in info.skips:
        skipped.add(f"float32: {info.skips['float32']}")
        return
    args, kwargs, _ = make_args(s, _mg_make, info.supports_grad, dtype="float32")
    args64, _, _ = make_args(s, _mg_make, False)
    for o, o64 in zip(_tensors(info.op(*args, **kwargs)), _tensors(info.op(*args64, **kwargs))):
        if o64.dtype == mg.float64:
            assert o.dtype == mg.float32, f"{info} ({s.name}): float32 inputs gave {o.dtype}"


def _check_other_dtypes(info, s):
    """Each other declared dtype (ints, bools, float16) against the reference in that dtype."""
    for dt in info.dtypes:
        if dt in ("float32", "float64"):
            continue
        args, kwargs, _ = make_args(s, _mg_make, False, dtype=dt)
        ref = info.ref(*ref_args(s, dtype=dt), **s.kwargs)
        for o, r in zip(_tensors(info.op(*args, **kwargs)), [ref] if not isinstance(ref, tuple) else ref):
            np.testing.assert_allclose(o.numpy(), np.asarray(r), rtol=1e-6, err_msg=f"{info} ({s.name}, {dt})")


def _check_dispatch(info, s):
    """Every op goes through Function.apply (where levels interpret and observers watch), with and
    without inputs requiring grad; an op that is not differentiable gives outputs without a graph."""
    for grad in (False, True):
        args, kwargs, _ = make_args(s, _mg_make, grad and info.supports_grad)
        inputs = {id(a) for a in args}
        with ops_seen() as seen:
            out = info.op(*args, **kwargs)
        outs = _tensors(out)
        if not outs or all(id(o) in inputs for o in outs):
            continue  # a Python value, or the input itself (an identity)
        assert seen, f"{info} ({s.name}): computed its result without Function.apply (grad={grad})"
    if not info.supports_grad:
        args, kwargs, _ = make_args(s, lambda a, r: mg.tensor(np.array(a), requires_grad=r and a.dtype.kind == "f"), True)
        for o in _tensors(info.op(*args, **kwargs)):
            assert not o.requires_grad and o.grad_fn is None, f"{info} ({s.name}): output requires grad"


@pytest.mark.parametrize("info", OPS, ids=str)
def test_forward_dtypes_and_dispatch(info):
    """Per sample: the forward against its NumPy reference, float32 in -> float32 out, the other
    declared dtypes, the dispatch through Function.apply, no graph from a non-differentiable op.
    (Before 2026-12-06 these were five tests with one item per sample: test_forward_matches_reference,
    test_float32_stays_float32, test_other_dtypes_forward, test_op_goes_through_function_apply,
    test_non_differentiable_output_has_no_grad; the checks are the same, per op.)"""
    skipped = set()
    for s in info.samples():
        if info.ref is not None:
            _check_forward(info, s, skipped)
            if any(d not in ("float32", "float64") for d in info.dtypes):
                _check_other_dtypes(info, s)
        if "float32" in info.dtypes:
            _check_float32(info, s, skipped)
        _check_dispatch(info, s)
    if skipped:  # the rest ran; say what did not
        pytest.skip("; ".join(sorted(skipped)) + " (the other checks passed)")


# -- gradients -------------------------------------------------------------------------------------
def _diff_fn(info, s):
    args, kwargs, leaves = make_args(s, _mg_make, True)
    build = rebuild(s, leaves, _mg_const)

    def fn(*xs):
        return info.op(*build(*xs), **kwargs)
    return fn, leaves


@pytest.mark.parametrize("info", [o for o in OPS if o.supports_grad], ids=str)
def test_gradcheck_and_gradgradcheck(info):
    """Every sample that is not a kink: gradcheck (float64 finite differences; it must not touch
    .grad), and gradgradcheck where the op is twice differentiable. (Before 2026-12-06: one item
    per sample for each; the same checks, per op.)"""
    skipped = {f"{t}: {info.skips[t]}" for t in ("gradcheck", "gradgradcheck") if t in info.skips}
    ran = False
    for s in info.samples():
        if s.kink:
            continue
        fn, leaves = _diff_fn(info, s)
        if not leaves:
            continue
        ran = True
        if "gradcheck" not in info.skips:
            assert gradcheck(fn, tuple(leaves), atol=info.atol, rtol=info.rtol), f"{info} ({s.name})"
            assert all(x.grad is None for x in leaves)  # gradcheck must not touch .grad
        if info.supports_gradgrad and "gradgradcheck" not in info.skips:
            assert gradgradcheck(fn, tuple(leaves), atol=info.atol, rtol=info.rtol), f"{info} ({s.name})"
    if not ran:
        pytest.skip(f"{info}: no smooth sample with a float input")
    if skipped:
        pytest.skip("; ".join(sorted(skipped)) + " (the rest passed)")


@pytest.mark.parametrize("info", [o for o in OPS if o.supports_grad and o.grad_fn is not None], ids=str)
def test_grad_fn_name(info):
    """The node name is PyTorch's for the op (AminBackward0 for amin; the overload number aside)."""
    for s in info.samples():
        fn, leaves = _diff_fn(info, s)
        for o in _tensors(fn(*leaves)):
            if o.grad_fn is not None:
                assert grad_fn_base(o.grad_fn.name()) == info.grad_fn, f"{info} ({s.name}): {o.grad_fn.name()}"


# -- PyTorch parity ---------------------------------------------------------------------------------
def _torch_run(torch, info, s):
    def make(arr, rg):
        return torch.tensor(np.array(arr), requires_grad=rg)
    args, kwargs, leaves = make_args(s, make, info.supports_grad)
    return info.torch_op(torch, *args, **kwargs), leaves


def _mg_run(info, s):
    args, kwargs, leaves = make_args(s, _mg_make, info.supports_grad)
    return info.op(*args, **kwargs), leaves


def _torch_tensors(torch, out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, torch.Tensor)]
    return []


def _values_and_grads_match(torch, info, s):
    """Values, dtypes, shapes and the VJP of one sample equal PyTorch's."""
    out_mg, leaves_mg = _mg_run(info, s)
    out_t, leaves_t = _torch_run(torch, info, s)
    outs_mg, outs_t = _tensors(out_mg), _torch_tensors(torch, out_t)
    if not outs_mg:
        assert out_mg == (out_t.item() if hasattr(out_t, "item") else out_t)
        return
    assert len(outs_mg) == len(outs_t)
    for a, b in zip(outs_mg, outs_t):
        assert a.shape == tuple(b.shape), f"{info}: shape {a.shape} != torch's {tuple(b.shape)}"
        assert str(a.dtype) == str(b.dtype).replace("torch.", ""), f"{info}: dtype {a.dtype} vs {b.dtype}"
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{info} ({s.name})")
    if not info.supports_grad or not leaves_mg:
        return
    rng = np.random.default_rng(1)
    diff = [(a, b) for a, b in zip(outs_mg, outs_t) if b.requires_grad]
    assert [a.requires_grad for a, _ in diff] == [True] * len(diff)
    if not diff:
        return
    cots = [rng.standard_normal(a.shape) for a, _ in diff]
    g_mg = mg.autograd.grad([a for a, _ in diff], leaves_mg, [mg.tensor(c) for c in cots], allow_unused=True)
    g_t = torch.autograd.grad([b for _, b in diff], leaves_t, [torch.tensor(c) for c in cots], allow_unused=True)
    for k, (a, b) in enumerate(zip(g_mg, g_t)):
        a = np.zeros(leaves_mg[k].shape) if a is None else a.numpy()
        b = np.zeros(leaves_mg[k].shape) if b is None else b.numpy()
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=f"{info} ({s.name}): gradient of input {k}")


def _double_backward_matches(torch, info, s):
    """Second derivatives (the Hessian-vector product) equal PyTorch's, kinks and ties included."""
    res = []
    for lib, run in ((mg, lambda: _mg_run(info, s)), (torch, lambda: _torch_run(torch, info, s))):
        out, leaves = run()
        outs = _tensors(out) if lib is mg else _torch_tensors(torch, out)
        outs = [o for o in outs if o.requires_grad]
        if not leaves or not outs:
            return
        rng = np.random.default_rng(2)
        cots = [lib.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
        gs = lib.autograd.grad(outs, leaves, cots, create_graph=True, allow_unused=True)
        pairs = [(g, x) for g, x in zip(gs, leaves) if g is not None and g.requires_grad]
        if not pairs:
            res.append([])
            continue
        vs = [lib.tensor(rng.standard_normal(tuple(g.shape))) for g, _ in pairs]
        hs = lib.autograd.grad([g for g, _ in pairs], leaves, vs, allow_unused=True)
        res.append([np.zeros(tuple(x.shape)) if h is None else _np(h) for h, x in zip(hs, leaves)])
    a, b = res
    if a and b:
        for k, (x, y) in enumerate(zip(a, b)):
            if s.kink:  # at a kink PyTorch's second derivative may be nan (0 ** y); minigrad's is finite
                assert np.isfinite(x).all(), f"{info} ({s.name}): Hv of input {k} not finite: {x}"
                x, y = x[np.isfinite(y)], y[np.isfinite(y)]
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12, err_msg=f"{info} ({s.name}): Hv of input {k}")


@pytest.mark.parametrize("info", [o for o in OPS if o.torch_op is not None], ids=str)
def test_matches_torch(info):
    """Every sample: values, shapes, dtypes and gradients equal PyTorch's; for a twice-differentiable
    op, the Hessian-vector product too. (Before 2026-12-06: test_matches_torch and
    test_double_backward_matches_torch, one item per sample each; the same checks, per op.)"""
    torch = pytest.importorskip("torch")
    _skip(info, "torch")
    second = info.supports_gradgrad and "torch_double_backward" not in info.skips
    for s in info.samples():
        _values_and_grads_match(torch, info, s)
        if second:
            _double_backward_matches(torch, info, s)
    if info.supports_gradgrad and not second:
        pytest.skip(f"{info}: values and gradients match PyTorch's; double backward not compared: "
                    f"{info.skips['torch_double_backward']}")


def _np(t):
    t = t.detach()
    return t.numpy() if isinstance(t, mg.Tensor) else t.numpy(force=True)  # torch: a ZeroTensor too


@pytest.mark.parametrize("info", [o for o in OPS if o.supports_grad and not o.supports_gradgrad
                                  and o.torch_op is not None], ids=str)
def test_once_differentiable_only_where_torch_is(info):
    """An op marked once-differentiable must be once-differentiable in PyTorch too."""
    torch = pytest.importorskip("torch")
    s = next(s for s in info.samples() if not s.kink)
    out, leaves = _torch_run(torch, info, s)
    outs = [o for o in _torch_tensors(torch, out) if o.requires_grad]
    gs = torch.autograd.grad([o.sum() for o in outs], leaves, create_graph=True, allow_unused=True)
    second = [g for g in gs if g is not None and g.requires_grad]
    with pytest.raises(RuntimeError):
        torch.autograd.grad([g.sum() for g in second], leaves, allow_unused=True)
        if not second:
            raise RuntimeError("no second derivative")


# -- the registry covers the package -------------------------------------------------------------
def _covered():
    names = set()
    for o in op_db:
        names.add(o.name)
        names.update(o.aliases)
    return names


@pytest.mark.parametrize("name", sorted(public_ops()))
def test_every_public_op_has_an_opinfo(name):
    assert name in _covered(), (f"{name} is exported but has no OpInfo entry in "
                                "minigrad/testing/opinfo/ (see docs/adding-an-op.md)")


def test_registry_entries_are_public_ops():
    public = public_ops()
    for o in op_db:
        if o.kind == "op":
            assert o.name in public, f"{o}: not an exported op (kind='op')"


def test_variants_are_unique():
    names = [o.full_name for o in op_db]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
