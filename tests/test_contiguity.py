"""is_contiguous() of every registry op's outputs agrees with PyTorch's (issue 32 item 9).

Tensor.view is as strict as PyTorch's (a shape that is not expressible on the tensor's strides
raises), so a result that PyTorch lays out contiguously must be contiguous here too, or
`out.view(...)` in ported code would raise here and not there. Every entry with a `torch_op` runs
each sample with its inputs as the registry makes them (C order, "C") and again with every 2-D+
input transposed in memory ("T": the same values, reversed strides, as ``x.T`` of a C array), and
compares ``is_contiguous()`` of each tensor output. The remaining mismatches are listed in KNOWN
with the reason; the list is strict (an entry that agrees now must be removed)."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.testing import op_db
from minigrad.testing.opinfo import make_args

# -- known mismatches: (entry, layout) -> reason ----------------------------------------------------
# Harmful direction (ours non-contiguous where PyTorch's is contiguous): a strict view of the result
# raises here and not in PyTorch.
_NORM = ("the normalisation forward keeps x's layout on purpose (its numba kernels and backward work in "
         "x's memory order); only a non-C input (here transposed) gives a non-C result")
_HARMFUL = {
    **{(n, "T"): _NORM for n in (
        "nn.functional.batch_norm", "nn.functional.batch_norm.eval", "nn.functional.instance_norm",
        "nn.functional.layer_norm", "nn.functional.layer_norm.2d_noaffine", "nn.functional.rms_norm",
        "nn.functional.rms_norm.2d_noaffine_eps")},
    ("nn.functional.adaptive_avg_pool2d", "T"): "a composite (A_h @ x @ A_w^T) whose matmuls keep the "
                                                 "transposed input's batch layout",
    ("nn.functional.cross_entropy.none_3d", "T"): "the per-position losses keep the transposed input's layout",
    ("nn.functional.scaled_dot_product_attention.causal_4d", "T"): "a composite (softmax(q k^T) v) whose last "
                                                                    "matmul keeps the transposed inputs' batch layout",
}
# Harmless direction (ours contiguous where PyTorch's is not): a view of ours never raises where
# PyTorch's would not (ported code is unaffected).
_TORCH_VIEW = "PyTorch returns a strided view (or a permuted result); ours is a C-order copy"
_TORCH_KEEPS = "PyTorch keeps the transposed input's layout (its in-place/clone/elementwise result); ours is C order"
_LAPACK = "PyTorch returns LAPACK's column-major (Fortran) result; ours is C order"
_HARMLESS = {
    **{(n, lay): _TORCH_VIEW for n, lay in (
        ("einsum.ii->i", "C"), ("einsum.iij->ij", "C"), ("einsum.ij->ji", "C"), ("unfold", "C"),
        ("einsum.ii->i", "T"), ("einsum.iij->ij", "T"), ("einsum.ij->ij", "T"), ("einsum.bi,bj->bij", "T"),
        ("einsum.ij,ij->ij", "T"), ("unfold", "T"), ("getitem.ellipsis_and_array", "T"),
        ("getitem.ints_apart_from_array", "T"))},
    **{(n, lay): _LAPACK for n in (
        "linalg.cholesky", "linalg.inv", "linalg.qr", "linalg.solve", "linalg.lstsq", "linalg.lstsq.batch_wide",
        "linalg.lu_solve", "linalg.lu_solve.adjoint", "lu_solve", "linalg.solve_triangular.upper",
        "linalg.solve_triangular.lower", "linalg.solve_triangular.upper_unit", "triangular_solve",
        "triangular_solve.lower_t_unit", "linalg.cholesky_ex", "linalg.inv_ex", "linalg.solve_ex",
        "linalg.householder_product") for lay in "CT"},
    **{(n, "C"): _LAPACK for n in ("linalg.lu_factor", "linalg.lu_factor_ex", "lu")},
    **{(n, "T"): _TORCH_KEEPS for n in (
        "acos.inplace", "addcdiv", "addcdiv.inplace", "addcmul", "addcmul.inplace", "argsort", "asin.inplace",
        "atan.inplace", "clone", "clone.fn", "copysign.inplace", "cosh.inplace", "cumprod.inplace",
        "exp2.inplace", "flip", "flip.both", "flip.neg", "frac.inplace", "gru_cell", "hypot.inplace",
        "index_add.inplace", "index_copy.inplace", "index_fill", "index_fill.inplace", "index_fill.tensor_value",
        "kron", "lerp.inplace", "log10.inplace", "log2.inplace", "msort", "scatter.inplace",
        "scatter_add.inplace", "scatter_reduce.inplace", "sinc.inplace", "sinh.inplace", "sort",
        "sort.descending", "sqrt.inplace", "square.inplace", "trunc.inplace", "xlogy.inplace",
        "nn.functional.dropout.p1", "nn.functional.gelu.large", "flipud", "fliplr", "rot90.k2",
        "deg2rad.inplace", "rad2deg.inplace", "nan_to_num.inplace")},
    **{(n, "C"): _TORCH_VIEW for n in ("rot90", "rot90.k-1_dims", "rot90.k3_method")},
    **{(n + ".inplace", "T"): _TORCH_KEEPS for n in (  # the special functions' in-place forms (as xlogy's)
        "lgamma", "digamma", "erfc", "erfinv", "logit", "i0", "mvlgamma", "igamma", "igammac")},
}


def _layout(arr, lay, tensor, transpose):
    a = np.array(arr)
    if lay == "T" and a.ndim >= 2:
        return transpose(tensor(np.ascontiguousarray(a.T)))  # x.T of a C array: the values of arr, F order
    return tensor(a)


def _outputs(out, cls):
    if isinstance(out, cls):
        return [out]
    return [o for o in out if isinstance(o, cls)] if isinstance(out, (tuple, list)) else []


def _mismatches(torch, lay):
    found = {}
    with warnings.catch_warnings():  # PyTorch's deprecation/performance notes on some samples
        warnings.simplefilter("ignore")
        _run_all(torch, lay, found)
    return found


def _run_all(torch, lay, found):
    for info in op_db:
        if info.torch_op is None or "torch" in info.skips:
            continue
        for s in info.samples():
            try:
                a, k, _ = make_args(s, lambda x, rg: _layout(x, lay, mg.tensor, lambda t: t.T), False)
                ours = info.op(*a, **k)
            except Exception:  # noqa: BLE001  (a transposed input the op rejects: compared only if both accept it)
                if lay == "C":
                    raise
                continue
            a, k, _ = make_args(s, lambda x, rg: _layout(x, lay, torch.tensor,
                                                         lambda t: t.permute(*reversed(range(t.ndim)))), False)
            try:
                theirs = info.torch_op(torch, *a, **k)
            except RuntimeError:  # PyTorch rejects the transposed input (a view of it): nothing to compare
                if lay == "C":
                    raise
                continue
            for i, (x, y) in enumerate(zip(_outputs(ours, mg.Tensor), _outputs(theirs, torch.Tensor))):
                if x.is_contiguous() != y.is_contiguous():
                    found.setdefault((str(info), lay), []).append(
                        f"{s.name} output {i}: ours {x.is_contiguous()} strides {x.stride()}, "
                        f"PyTorch's {y.is_contiguous()} strides {tuple(y.stride())}")


@pytest.mark.parametrize("lay", ["C", "T"])
def test_is_contiguous_matches_torch(lay):
    torch = pytest.importorskip("torch")
    found = _mismatches(torch, lay)
    known = {k: v for k, v in {**_HARMFUL, **_HARMLESS}.items() if k[1] == lay}
    new = {k: v for k, v in found.items() if k not in known}
    assert not new, f"is_contiguous() differs from PyTorch's (not in KNOWN): {new}"
    fixed = sorted(k for k in known if k not in found)
    assert not fixed, f"KNOWN lists mismatches that agree now (remove them): {fixed}"
    for k in found:  # a known harmless mismatch must stay harmless (ours contiguous) and vice versa
        ours_contig = "ours True" in found[k][0]
        assert ours_contig == (k in _HARMLESS), f"{k}: {found[k]}"


def test_known_mismatch_counts():
    """What is left (the report's numbers): harmful (ours non-contiguous) and harmless entries."""
    assert len(_HARMFUL) == 10 and len(_HARMLESS) == 112  # 63 + 9 special in-place forms + 40 of issue 33's


# -- view is as strict as PyTorch's -------------------------------------------------------------------
_VIEW_MSG = "view size is not compatible with input tensor's size and stride"


def test_view_of_a_transpose_raises_and_reshape_copies():
    x = mg.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match=_VIEW_MSG):
        x.T.view(6)
    with pytest.raises(RuntimeError, match=r"Use \.reshape\(\.\.\.\) instead"):
        x.T.view(-1)
    np.testing.assert_array_equal(x.T.reshape(6).numpy(), [0, 3, 1, 4, 2, 5])
    np.testing.assert_array_equal(x.T.contiguous().view(6).numpy(), [0, 3, 1, 4, 2, 5])
    assert x.T.cumsum(0).is_contiguous()  # PyTorch's layout: so x.T.cumsum(0).view(-1) works in both
    np.testing.assert_array_equal(x.T.cumsum(0).view(-1).numpy(), [0, 3, 1, 7, 3, 12])
    assert x.view(mg.int32).shape == (2, 3)  # view(dtype) unchanged


def _view_cases():
    """(make the input from a C array a, new shape): non-contiguous inputs, viewable or not."""
    return [
        (lambda a: a[:6].reshape(2, 3).T, (6,)),
        (lambda a: a[:6].reshape(2, 3).T, (3, 2)),
        (lambda a: a[:6].reshape(2, 3).T, (3, 1, 2)),  # size-1 dims inserted: viewable
        (lambda a: a[:6].reshape(2, 3).T, (1, 3, 2, 1)),
        (lambda a: a[:6].reshape(2, 3)[:, ::2], (4,)),
        (lambda a: a[:6].reshape(2, 3)[:, ::2], (2, 2)),
        (lambda a: a[:6].reshape(2, 3)[:, :2], (4,)),  # rows not adjacent: no
        (lambda a: a[:6].reshape(2, 3)[:, :2], (2, 1, 2)),
        (lambda a: a.reshape(2, 3, 4).transpose(0, 1), (3, 8)),  # merging a transposed pair: no
        (lambda a: a.reshape(2, 3, 4).transpose(0, 1), (6, 4)),
        (lambda a: a.reshape(2, 3, 4).transpose(0, 1), (3, 2, 2, 2)),  # splitting the contiguous last dim: yes
        (lambda a: a.reshape(2, 3, 4).transpose(0, 1), (-1, 2, 2)),
        (lambda a: a.reshape(2, 3, 4).permute(1, 0, 2)[:, :, 1:3], (3, 4)),
        (lambda a: a.reshape(2, 3, 4).permute(2, 0, 1), (4, 6)),  # (2, 3) stay adjacent: yes
        (lambda a: a.reshape(2, 3, 4).permute(2, 0, 1), (8, 3)),
        (lambda a: a.reshape(4, 6)[::2, ::3], (4,)),
        (lambda a: a.reshape(4, 6)[:, 1:5][:, :1], (4,)),  # a column: stride 6 dims merge to one
        (lambda a: a.reshape(2, 1, 12)[:, :, ::2], (12,)),
        (lambda a: a.reshape(2, 3, 4)[:, :0], (0, 4)),  # empty: any view
        (lambda a: a.reshape(1, 24).T, (4, 6)),
        (lambda a: a.reshape(24)[3], ()),
        (lambda a: a.reshape(24)[3], (1, 1)),
    ]


@pytest.mark.parametrize("case", range(len(_view_cases())))
def test_view_agrees_with_torch(case):
    """Each view of a non-contiguous tensor raises where PyTorch's does, and equals it where not."""
    torch = pytest.importorskip("torch")
    make, shape = _view_cases()[case]
    a = np.arange(24.0)
    x, t = make(mg.tensor(a)), make(torch.tensor(a))
    try:
        expected = t.view(shape)
    except RuntimeError as e:
        assert _VIEW_MSG in str(e)
        with pytest.raises(RuntimeError, match=_VIEW_MSG):
            x.view(shape)
        return
    got = x.view(shape)
    assert got.shape == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
