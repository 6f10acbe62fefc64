"""Complex samples for every op of the registry: each entry's last sample with its float inputs made
complex (random imaginary parts). Where minigrad computes the op, its values equal PyTorch's; where
minigrad records it (the op is complex-capable), its gradients equal PyTorch's too; anywhere else
minigrad raises. So an op marked complex-capable with a wrong backward, or a NumPy forward that is
silently wrong for complex (a real-only formula), fails here by name."""
import zlib

import numpy as np
import pytest

import minigrad as mg
from minigrad.testing.opinfo import complex as complex_entries, op_db

torch = pytest.importorskip("torch")

# minigrad computes these for complex where PyTorch raises (NumPy's rules: ordering compares the real
# part first, ...); not compared. The gradient is refused all the same (not complex-capable).
TORCH_REFUSES = "PyTorch raises for complex; minigrad's forward follows NumPy"


# every calling form of these (their variants index, broadcast and contract differently); one entry
# per op elsewhere (the suite's time: each entry calls PyTorch three times)
ALL_VARIANTS = {"getitem", "pow", "einsum", "matmul", "gather", "scatter_add", "index_select", "div", "mul"}


def _entries():
    skip = {id(o) for o in complex_entries.ops}  # (those read complex from real pairs already)
    out, seen = [], set()
    for info in op_db:
        if info.kind != "op" or info.torch_op is None or id(info) in skip:
            continue
        if info.name in seen and info.name not in ALL_VARIANTS:
            continue
        seen.add(info.name)
        usable = [s for s in info.samples() if not s.kink and any(
            isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size for a in s.args)]
        if usable:
            out.append(pytest.param(info, usable[-1], id=info.full_name))
    return out


def _np(t):
    if isinstance(t, mg.Tensor):
        return t.detach().numpy()
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    return np.asarray(t)


def _args(lib, sample, values, grad):
    out = []
    for i, a in enumerate(sample.args):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            out.append(lib.tensor(values[i], requires_grad=grad))
        elif isinstance(a, np.ndarray):
            out.append(lib.tensor(a))
        else:
            out.append(a)
    return out


def _tensors(out, cls):
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in out if isinstance(o, cls)]


@pytest.mark.parametrize("info,sample", _entries())
def test_complex_sample_matches_torch_or_is_refused(info, sample):
    rng = np.random.default_rng(zlib.crc32(info.full_name.encode()))
    values = {i: a + 0.5j * rng.uniform(-1, 1, a.shape) for i, a in enumerate(sample.args)
              if isinstance(a, np.ndarray) and a.dtype.kind == "f"}
    # 1. the forward without a graph: minigrad's values, where it computes, are PyTorch's
    try:
        with mg.no_grad():
            got = info.op(*_args(mg, sample, values, False), **sample.kwargs)
    except Exception:
        got = None
    if got is not None:
        try:
            want = info.torch_op(torch, *_args(torch, sample, values, False), **sample.kwargs)
        except Exception:
            pytest.skip(TORCH_REFUSES)
        gm, gt = _tensors(got, mg.Tensor) or [got], _tensors(want, torch.Tensor) or [want]
        for a, b in zip(gm, gt):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-7, atol=1e-9, equal_nan=True)
    # 2. with a graph: recorded (gradients as PyTorch's) or refused with an error
    leaves = _args(mg, sample, values, info.supports_grad)
    try:
        out = info.op(*leaves, **sample.kwargs)
    except Exception:
        return  # refused (the complex-capable check, or NumPy's own refusal)
    outs = [o for o in _tensors(out, mg.Tensor) if o.requires_grad]
    if not outs:
        return
    tleaves = _args(torch, sample, values, True)
    try:
        touts = [o for o in _tensors(info.torch_op(torch, *tleaves, **sample.kwargs), torch.Tensor) if o.requires_grad]
    except (RuntimeError, NotImplementedError):  # (silu: "does not support automatic differentiation")
        pytest.skip("PyTorch has no derivative for it with complex inputs; minigrad's is checked by gradcheck")
    w = [rng.standard_normal(o.shape) + 1j * rng.standard_normal(o.shape) for o in outs]

    def loss(lib, os):
        return sum((o * lib.tensor(c).conj()).real.sum() if o.is_complex() else (o * lib.tensor(c.real)).sum()
                   for o, c in zip(os, w))
    mine = [t for t in leaves if isinstance(t, mg.Tensor) and t.requires_grad]
    theirs = [t for t in tleaves if isinstance(t, torch.Tensor) and t.requires_grad]
    gm = mg.autograd.grad(loss(mg, outs), mine, allow_unused=True)
    try:
        gt = torch.autograd.grad(loss(torch, touts), theirs, allow_unused=True)
    except (RuntimeError, NotImplementedError):  # (asinh_, scatter(reduce=), silu: no complex derivative)
        pytest.skip("PyTorch has no derivative for it with complex inputs; minigrad's is checked by gradcheck")
    for a, b, x in zip(gm, gt, mine):
        a = np.zeros(x.shape, x.dtype) if a is None else _np(a)
        b = np.zeros(x.shape, x.dtype) if b is None else _np(b)
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9, err_msg=f"{info}: gradient")
