"""The op registry: one `OpInfo` per public op (PyTorch's OpInfo idea), read by every op test.

An entry declares, once: the op, its NumPy reference, its sample inputs (shapes (), (3,), (2, 3),
the broadcasting pairs (2, 1)x(1, 3) and (4, 2, 3)x(3,), empty and 0-d tensors, and the kinks/ties
where PyTorch defines the subgradient), the dtypes it accepts and what it supports. The tests in
tests/ops/test_ops.py are generated from `op_db`: forward vs the reference, float32 stays float32,
gradcheck, gradgradcheck, PyTorch parity (values, gradients, grad_fn names), and "every public op
has an entry" (the public names are derived from the package's `__all__`s, never hand-listed).

The op's own rules (JVP, batching, fusion, ONNX, ...) live on its Function class and are checked
for every class by tests/ops/test_op_rules.py; the registry's samples then check that each rule gives
the right numbers (test_jvp_rules.py, test_vmap_registry.py, tests/onnx, tests/compiler).

Entries whose op is a backward Function (kind="backward": an op-as-backward Function such as
ReluBackward, whose forward is the NumPy VJP and whose backward gives the second derivative) take
the same fields; their `op` calls `SomeBackward.apply(g, saved...)` and `ref` is the NumPy VJP.

Sample args: a float ndarray becomes a leaf tensor (requires_grad when the op supports grad); an
int/bool ndarray or a `Const(...)` becomes a constant tensor; a list of arrays becomes a list of
tensors (cat, stack); anything else (ints, tuples, strings) is passed through as a static argument.

Layout: core.py holds the entry, the samplers and the helpers; one module per op family holds its
entries as a list `ops` (elementwise, reduction, scan, shape, indexing, sorting, linalg, comparison,
bitwise, inplace, nn); this module assembles `op_db` from them, declares which ops export to ONNX,
and answers the registry queries (ops_named, public_ops).

To add an op: see docs/adding-an-op.md.
"""
import minigrad as mg

from . import bitwise, comparison, elementwise, indexing, inplace, linalg, nn, reduction, scan, shape, sorting
from .core import (  # noqa: F401 - the registry's public names, importable from minigrad.testing.opinfo
    ALL_NUMERIC, BINARY_SHAPES, EMPTY_PAIRS, EMPTY_SHAPES, FLOATS, UNARY_SHAPES, UNCHECKED, Const, OpInfo,
    SampleInput, binary_samples, case, chain, distinct, grad_fn_base, make_args, nonzero, positive, rebuild,
    ref_args, sample, samples, tensor_function, unary_samples)
from .reduction import REDUCTION_DIMS, reduction_samples  # noqa: F401

op_db = (elementwise.ops + reduction.ops + scan.ops + shape.ops + indexing.ops + sorting.ops + linalg.ops
         + comparison.ops + bitwise.ops + inplace.ops + nn.ops)


# -- ONNX export: the `onnx` field ------------------------------------------------------------------
# True: mg.onnx.export maps the op (tests/onnx/test_onnx_ops.py exports each float32 sample on its
# own, checks it with onnx.checker and compares onnxruntime's result with minigrad's). A string: no
# mapping, or only for some of the op's forms (those that export are compared all the same), and why.
# The test fails when an op listed here gains a full mapping or an op not listed loses one, so this
# list changes with minigrad/onnx.
_ONNX_DATA_SHAPE = "the result's shape depends on the data (boolean masks, nonzero, unique)"
_ONNX_ADV_INDEX = "advanced indexing beyond one integer index array on one axis (which maps to Gather)"
_ONNX_SCATTER = "writes at indices (ScatterElements/ScatterND are not mapped yet)"
_ONNX_SHIFT = "ONNX BitShift takes unsigned integers only; minigrad's shifts are on signed ones"
_ONNX_LOSS = "a training loss: export inference graphs (model.eval(), the loss left out)"
_ONNX_IM2COL = "im2col/col2im have no ONNX operator"
_ONNX_BN_TRAIN = "batch norm with batch statistics (training=True); in eval it is elementwise and maps"
_ONNX_SORT = "order statistics (kthvalue, median, mode): not mapped yet (sort and topk map to TopK)"
_ONNX_DIAG = "diagonals (a Gather of computed indices; not mapped yet)"
_ONNX_LINALG = "matrix decompositions and solvers have no ONNX operator"
_ONNX_SCAN = "ONNX has no cumulative op besides CumSum"
_ONNX_PYVALUE = "returns a Python bool, not a tensor"
_ONNX_ND = "unpooling, adaptive max pooling and interpolation: not mapped yet"

ONNX_NO_MAPPING = {
    "getitem.bool_mask_full": _ONNX_DATA_SHAPE, "getitem.bool_mask_tensor": _ONNX_DATA_SHAPE,
    "getitem.bool_mask_rows": _ONNX_DATA_SHAPE, "getitem.bool_mask_then_slice": _ONNX_DATA_SHAPE,
    "unique": _ONNX_DATA_SHAPE, "masked_select": _ONNX_DATA_SHAPE,
    "masked_select.broadcast": _ONNX_DATA_SHAPE, "masked_select.broadcast_input": _ONNX_DATA_SHAPE,
    "nonzero": _ONNX_DATA_SHAPE, "nonzero.as_tuple": _ONNX_DATA_SHAPE,
    "nonzero.method": _ONNX_DATA_SHAPE,
    "getitem.two_arrays": _ONNX_ADV_INDEX, "getitem.array_and_slice": _ONNX_ADV_INDEX,
    "getitem.slice_and_array": _ONNX_ADV_INDEX, "getitem.ellipsis_and_array": _ONNX_ADV_INDEX,
    "getitem.none_and_array": _ONNX_ADV_INDEX, "getitem.array_then_array_split": _ONNX_ADV_INDEX,
    "setitem": _ONNX_SCATTER, "scatter_add.(3,4)-dim0-src(2,4)": _ONNX_SCATTER,
    "scatter_add.(3,4)-dim0-src(2,4)-fn": _ONNX_SCATTER,
    "scatter_add.(3,4)-dim1-src(3,2)": _ONNX_SCATTER,
    "scatter_add.(3,4)-dim1-src(3,2)-fn": _ONNX_SCATTER,
    "scatter_add.(4,)-dim0-src(4,)": _ONNX_SCATTER,
    "scatter_add.(4,)-dim0-src(4,)-fn": _ONNX_SCATTER,
    "scatter_add.(3,4)-dim1-src(2,3)": _ONNX_SCATTER,
    "scatter_add.(3,4)-dim1-src(2,3)-fn": _ONNX_SCATTER, "scatter.src": _ONNX_SCATTER,
    "scatter.src_dim1_larger": _ONNX_SCATTER,
    "scatter.reduce_add": _ONNX_SCATTER,
    "scatter.inplace": _ONNX_SCATTER, "scatter_add.inplace": _ONNX_SCATTER,
    "index_add": _ONNX_SCATTER, "index_add.dim1_alpha": _ONNX_SCATTER,
    "index_add.inplace": _ONNX_SCATTER, "index_copy": _ONNX_SCATTER,
    "index_copy.dim1": _ONNX_SCATTER, "index_copy.inplace": _ONNX_SCATTER,
    "scatter_reduce.sum": _ONNX_SCATTER, "scatter_reduce.sum-exclude_self": _ONNX_SCATTER,
    "scatter_reduce.prod": _ONNX_SCATTER, "scatter_reduce.prod-exclude_self": _ONNX_SCATTER,
    "scatter_reduce.mean": _ONNX_SCATTER, "scatter_reduce.mean-exclude_self": _ONNX_SCATTER,
    "scatter_reduce.amax": _ONNX_SCATTER, "scatter_reduce.amax-exclude_self": _ONNX_SCATTER,
    "scatter_reduce.amin": _ONNX_SCATTER, "scatter_reduce.amin-exclude_self": _ONNX_SCATTER,
    "scatter_reduce.src_larger": _ONNX_SCATTER, "scatter_reduce.amax-ties": _ONNX_SCATTER,
    "scatter_reduce.inplace": _ONNX_SCATTER,
    "equal": _ONNX_PYVALUE, "allclose": _ONNX_PYVALUE, "allclose.method": _ONNX_PYVALUE,
    "bitwise_left_shift": _ONNX_SHIFT, "bitwise_right_shift": _ONNX_SHIFT,
    "bitwise_left_shift.operator": _ONNX_SHIFT, "bitwise_right_shift.operator": _ONNX_SHIFT,
    "nn.functional.cross_entropy": _ONNX_LOSS,
    "nn.functional.cross_entropy.weight_smoothing_sum": _ONNX_LOSS,
    "nn.functional.cross_entropy.none_3d": _ONNX_LOSS,
    "nn.functional.cross_entropy.probs": _ONNX_LOSS, "nn.functional.nll_loss": _ONNX_LOSS,
    "nn.functional.nll_loss.none": _ONNX_LOSS, "nn.functional.mse_loss": _ONNX_LOSS,
    "nn.functional.mse_loss.none": _ONNX_LOSS,
    "nn.functional.binary_cross_entropy.none": _ONNX_LOSS,
    "nn.functional.binary_cross_entropy_with_logits.none": _ONNX_LOSS,
    "nn.functional.binary_cross_entropy_with_logits.pos_weight": _ONNX_LOSS,
    "nn.functional.unfold": _ONNX_IM2COL, "nn.functional.fold": _ONNX_IM2COL,
    "nn.functional.batch_norm": _ONNX_BN_TRAIN,
    "kthvalue": _ONNX_SORT, "median": _ONNX_SORT, "median.dim": _ONNX_SORT, "nanmedian": _ONNX_SORT,
    "mode": _ONNX_SORT,
    "diagonal": _ONNX_DIAG, "diagonal.offset": _ONNX_DIAG, "diag": _ONNX_DIAG, "trace": _ONNX_DIAG,
    "linalg.diagonal": _ONNX_DIAG, "diag_embed": _ONNX_DIAG,
    "linalg.inv": _ONNX_LINALG, "linalg.det": _ONNX_LINALG, "linalg.slogdet": _ONNX_LINALG,
    "linalg.solve": _ONNX_LINALG, "linalg.cholesky": _ONNX_LINALG, "linalg.qr": _ONNX_LINALG,
    "linalg.eigh": _ONNX_LINALG, "linalg.eigvalsh": _ONNX_LINALG, "linalg.svd": _ONNX_LINALG,
    "linalg.svdvals": _ONNX_LINALG,
    "cumprod": _ONNX_SCAN, "cumprod.method": _ONNX_SCAN, "cumprod.inplace": _ONNX_SCAN,
    "cummax": _ONNX_SCAN, "cummin": _ONNX_SCAN, "cummax.method": _ONNX_SCAN,
    "logcumsumexp": _ONNX_SCAN, "logcumsumexp.method": _ONNX_SCAN,
    "nn.functional.max_unpool1d": _ONNX_ND, "nn.functional.max_unpool2d": _ONNX_ND,
    "nn.functional.max_unpool2d.stride_padding": _ONNX_ND, "nn.functional.max_unpool3d": _ONNX_ND,
    "nn.functional.adaptive_max_pool1d": _ONNX_ND, "nn.functional.adaptive_max_pool2d": _ONNX_ND,
    "nn.functional.adaptive_max_pool2d.none_indices": _ONNX_ND,
    "nn.functional.adaptive_max_pool3d": _ONNX_ND, "nn.functional.interpolate.nearest_1d": _ONNX_ND,
    "nn.functional.interpolate.nearest_2d_size": _ONNX_ND,
    "nn.functional.interpolate.nearest_3d": _ONNX_ND,
    "nn.functional.interpolate.nearest_exact": _ONNX_ND,
    "nn.functional.interpolate.linear": _ONNX_ND, "nn.functional.interpolate.bilinear": _ONNX_ND,
    "nn.functional.interpolate.bilinear_align_corners": _ONNX_ND,
    "nn.functional.interpolate.bilinear_recompute_down": _ONNX_ND,
    "nn.functional.interpolate.trilinear": _ONNX_ND, "nn.functional.interpolate.bicubic": _ONNX_ND,
    "nn.functional.interpolate.bicubic_align_corners": _ONNX_ND,
}


def _declare_onnx(db):
    """Fill each public op's `onnx` field: True (exports), or the reason from ONNX_NO_MAPPING."""
    for o in db:
        if o.kind == "op" and o.onnx is UNCHECKED:
            o.onnx = ONNX_NO_MAPPING.get(o.full_name, True)


_declare_onnx(op_db)


# -- registry queries ------------------------------------------------------------------------------
def ops_named(name):
    return [o for o in op_db if o.name == name or name in o.aliases]


def _exported(module, prefix=""):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    out = {}
    for n in names:
        v = getattr(module, n)
        if callable(v) and not isinstance(v, type) and getattr(v, "__module__", "").startswith("minigrad."):
            out[prefix + n] = v
    return out


def public_ops():
    """{public name: function} for every op exported by minigrad.ops, minigrad (the names it takes
    from the op families) and minigrad.nn.functional. Derived from the modules, not hand-listed."""
    import minigrad.ops
    import minigrad.nn.functional as F
    ops = _exported(minigrad.ops)
    for n in dir(minigrad.ops):  # and the Tensor-method kernels it exports beside __all__ (view, getitem, ...)
        v = getattr(minigrad.ops, n)
        if not n.startswith("_") and callable(v) and not isinstance(v, type) \
                and getattr(v, "__module__", "").startswith("minigrad.ops."):
            ops[n] = v
    for n, v in _exported(mg).items():  # minigrad's own names that are op functions
        if getattr(v, "__module__", "").startswith("minigrad.ops."):
            ops[n] = v
    ops.update(_exported(F, "nn.functional."))
    ops.update(_exported(mg.linalg, "linalg."))
    return ops
