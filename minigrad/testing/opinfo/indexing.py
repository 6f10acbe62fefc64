"""Registry entries of indexing (ops/indexing.py, ops/scatter.py): getitem/setitem, gather, scatter_add,
index_select, masked_fill, take_along_dim, and the writes at indices and selections: scatter,
scatter_reduce, index_add/index_copy/index_fill, masked_select, nonzero (with their in-place forms).
"""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, case, distinct, nonzero, sample, samples


class AsTensor:
    """An index part given as a tensor of the library under test (mg.tensor / torch.tensor)."""

    def __init__(self, value):
        self.value = np.asarray(value)


def _lib_index(L, index):
    if isinstance(index, tuple):
        return tuple(_lib_index(L, i) for i in index)
    if isinstance(index, AsTensor):
        return L.tensor(index.value)
    return index


def _np_index(index):
    if isinstance(index, tuple):
        return tuple(_np_index(i) for i in index)
    if isinstance(index, AsTensor):
        return index.value
    return index


_MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
_GETITEM = {
    "int": ((3, 4), 1), "neg_int": ((3, 4), -1), "int_int": ((3, 4), (2, 3)), "int_0d": ((3,), 0),
    "slice": ((3, 4), slice(1, None)), "slice_step": ((3, 4), (slice(None), slice(None, None, 2))),
    "slice_start_stop_step": ((5, 4), (slice(1, 5, 2), slice(0, 4, 3))),
    "slice_neg_bounds": ((3, 4), (slice(-2, None), slice(None, -1))), "slice_empty": ((3, 4), slice(2, 1)),
    "none": ((3, 4), None), "none_mid": ((3, 4), (slice(None), None, 1)), "ellipsis": ((2, 3, 4), (Ellipsis, 1)),
    "ellipsis_first": ((2, 3, 4), (0, Ellipsis)), "ellipsis_none": ((2, 3, 4), (Ellipsis, None, slice(1, 3))),
    "bool_mask_full": ((3, 4), _MASK), "bool_mask_tensor": ((3, 4), AsTensor(_MASK)),
    "bool_mask_rows": ((3, 4), np.array([True, False, True])),
    "bool_mask_then_slice": ((3, 4), (np.array([True, False, True]), slice(1, 3))),
    "int_list": ((4, 3), [0, 2, 3]), "int_list_repeated": ((4, 3), [1, 1, 3, 1]),
    "int_array_repeated": ((4, 3), np.array([3, 0, 3])),
    "int_tensor_repeated": ((3, 4), (slice(None), AsTensor([2, 0, 2, 2]))),
    "int_array_2d": ((3, 4), np.array([[0, 1], [1, 1]])), "two_arrays": ((3, 4), ([0, 2, 0], [1, 3, 1])),
    "array_and_slice": ((3, 4), ([2, 0, 2], slice(1, None))),
    "slice_and_array": ((3, 4), (slice(None, None, 2), [3, 3, 0])),
    "ellipsis_and_array": ((2, 3, 4), (Ellipsis, [0, 0, 3])),
    "int_and_array": ((2, 3, 4), (1, slice(None), [2, 2])), "neg_array": ((4, 3), [-1, -1, 0]),
    "none_and_array": ((3, 4), (None, [1, 1])),
    "array_then_array_split": ((2, 3, 4), ([0, 1], slice(None), [1, 1])),
    "ints_apart_from_array": ((2, 3, 12, 5, 4), (1, slice(None), slice(3, 11, 2), [0, 2, 4], slice(0, 2))),
    "int_array_int": ((2, 3, 4, 5), (0, [2, 1], slice(1, 3), -1)),
}
# PyTorch's layout where it differs from NumPy's: an int selects first (NumPy counts it as an advanced
# index, and advanced indices split by a slice send their dims to the front)
_GETITEM_REF = {
    "int_and_array": lambda a: a[1][:, [2, 2]],
    "ints_apart_from_array": lambda a: a[1][:, 3:11:2, [0, 2, 4], 0:2],
    "int_array_int": lambda a: a[0, :, :, -1][[2, 1], 1:3],
}
ops = [
    case("getitem", _n, [_shape], lambda L, x, _i=_idx: x[_lib_index(L, _i)],
         _GETITEM_REF.get(_n, lambda a, _i=_idx: a[_np_index(_i)]), grad_fn=None)  # PyTorch: Select/Slice/Index/...
    for _n, (_shape, _idx) in _GETITEM.items()]


def _setitem_fn(L, x, v):
    y = x * 1.0
    y[1, ::2] = v
    y[y < -1.0] = 0.0
    return y * y


def _np_setitem(x, v):
    y = x.copy()
    y[1, ::2] = v
    y[y < -1.0] = 0.0
    return y * y


def _np_gather(a, dim, idx):
    return np.take_along_axis(a, idx, axis=dim)


def _np_scatter_add(a, dim, idx, src):
    out = a.copy()
    src = src[tuple(slice(0, s) for s in idx.shape)]
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        out[tuple(tgt)] += src[pos]
    return out


ops.append(case("setitem", "", [(3, 4), (2,)], _setitem_fn, _np_setitem, grad_fn="Mul"))
for _shape, _d, _idx in [((3, 4), 0, [[0, 1, 2, 0], [2, 2, 2, 2]]), ((3, 4), 1, [[3, 3], [0, 1], [1, 1]]),
                         ((3, 4), -1, [[0], [3], [2]]), ((2, 3, 4), 1, [[[0, 2, 2, 1]], [[1, 1, 0, 0]]]),
                         ((4,), 0, [3, 3, 0])]:
    _idx = np.array(_idx)
    _v = f"{_shape}-dim{_d}".replace(" ", "")
    ops.append(case("gather", _v, [_shape], lambda L, x, _d=_d, _i=_idx: x.gather(_d, L.tensor(_i)),
                             lambda a, _d=_d, _i=_idx: _np_gather(a, _d, _i)))
    ops.append(case("gather", _v + "-fn", [_shape, _idx], lambda L, x, i, _d=_d: L.gather(x, _d, i),
                             lambda a, i, _d=_d: _np_gather(a, _d, i)))
for _shape, _d, _idx, _ss in [((3, 4), 0, [[0, 1, 2, 0], [0, 0, 2, 2]], (2, 4)), ((3, 4), 1, [[3, 3], [0, 1], [1, 1]], (3, 2)),
                              ((4,), 0, [3, 3, 0, 3], (4,)), ((3, 4), 1, [[0], [2]], (2, 3))]:
    _idx = np.array(_idx)
    _v = f"{_shape}-dim{_d}-src{_ss}".replace(" ", "")
    # src larger than the index: PyTorch raises in backward, minigrad gives the unused part 0
    _torch_ok = _ss == _idx.shape
    ops.append(case("scatter_add", _v, [_shape, _ss],
                             lambda L, x, s, _d=_d, _i=_idx: x.scatter_add(_d, L.tensor(_i), s),
                             lambda a, s, _d=_d, _i=_idx: _np_scatter_add(a, _d, _i, s), torch=_torch_ok))
    ops.append(case("scatter_add", _v + "-fn", [_shape, _idx, _ss],
                             lambda L, x, i, s, _d=_d: L.scatter_add(x, _d, i, s),
                             lambda a, i, s, _d=_d: _np_scatter_add(a, _d, i, s), torch=_torch_ok))
for _shape, _d, _idx in [((4, 3), 0, [3, 0, 3]), ((3, 4), 1, [1, 1]), ((3, 4), -1, [0]), ((4,), 0, [2, 2, 2]),
                         ((2, 3, 4), 1, [2, 0])]:
    _v = f"{_shape}-dim{_d}".replace(" ", "")
    ops.append(case("index_select", _v, [_shape],
                             lambda L, x, _d=_d, _i=_idx: x.index_select(_d, L.tensor(_i)),
                             lambda a, _d=_d, _i=_idx: np.take(a, _i, axis=_d), grad_fn=None))  # via getitem
    ops.append(case("index_select", _v + "-fn", [_shape, np.array(_idx)],
                             lambda L, x, i, _d=_d: L.index_select(x, _d, i),
                             lambda a, i, _d=_d: np.take(a, i, axis=_d), grad_fn=None))
for _shape, _m in [((3, 4), _MASK), ((3, 4), np.array([True, False, False, True])),
                   ((3, 4), np.array([[True], [False], [True]])), ((), np.array(True))]:
    _v = f"{_shape}-mask{_m.shape}".replace(" ", "")
    ops.append(case("masked_fill", _v, [_shape, _m], lambda L, x, m: x.masked_fill(m, -5.0),
                             lambda a, m: np.where(m, -5.0, a), grad_fn=None))  # PyTorch: MaskedFill; minigrad: where
    ops.append(case("masked_fill", _v + "-tensor_value", [_shape, _m, ()],
                             lambda L, x, m, v: L.masked_fill(x, m, v * v), lambda a, m, v: np.where(m, v * v, a),
                             grad_fn=None))
for _shape, _d, _idx in [((3, 4), 1, [[0, 3], [2, 2], [1, 0]]), ((3, 4), 0, [[2, 0, 0, 1]]),
                         ((3, 4), 1, [[1], [3], [3]]), ((3, 4), None, [11, 0, 11])]:
    _idx = np.array(_idx)
    _v = f"{_shape}-dim{_d}-{_idx.shape}".replace(" ", "")
    _ref = (lambda a, i, _d=_d: np.take_along_axis(a, i, axis=_d)) if _d is not None else \
        (lambda a, i: np.take_along_axis(a.reshape(-1), i, axis=0))
    ops.append(case("take_along_dim", _v, [_shape, _idx], lambda L, x, i, _d=_d: x.take_along_dim(i, _d),
                             _ref, grad_fn="Gather"))
    ops.append(case("take_along_dim", _v + "-fn", [_shape, _idx],
                             lambda L, x, i, _d=_d: L.take_along_dim(x, i, dim=_d), _ref, grad_fn="Gather"))


# -- scatter / index writes / selections (ops/scatter.py) -----------------------------------------
_I = np.array
ops += [
    case("scatter", "src", [(3, 4), _I([[0, 2, 1, 0], [2, 0, 0, 1]]), (2, 4)],
         lambda L, x, i, s: L.scatter(x, 0, i, s), lambda x, i, s: _np_scatter(x, 0, i, s), grad_fn=None),
    case("scatter", "src_dim1_larger", [(3, 4), _I([[3, 0], [1, 2], [0, 3]]), (3, 3)],
         lambda L, x, i, s: x.scatter(1, i, s), lambda x, i, s: _np_scatter(x, 1, i, s), grad_fn=None,
         skips={"torch": "PyTorch's backward raises for src larger than index (minigrad: 0 for the unused part)"}),
    case("scatter", "value", [(3, 4), _I([[0, 2, 1, 0]])],
         lambda L, x, i: L.scatter(x, 0, i, 1.5), lambda x, i: _np_scatter(x, 0, i, np.full(i.shape, 1.5)),
         grad_fn=None),
    case("scatter", "value_kw", [(3, 4), _I([[1], [3], [0]])],
         lambda L, x, i: x.scatter(1, i, value=-2.0), lambda x, i: _np_scatter(x, 1, i, np.full(i.shape, -2.0)),
         grad_fn=None),
    case("scatter", "reduce_add", [(3, 4), _I([[0, 0, 1, 0], [0, 2, 1, 0]]), (2, 4)],
         lambda L, x, i, s: x.scatter(0, i, s, reduce="add"), lambda x, i, s: _np_scatter_add_at(x, 0, i, s),
         grad_fn=None, skips={"torch": "PyTorch's scatter(reduce=) has no derivative"}),
    case("scatter", "inplace", [(3, 4), _I([[0, 2, 1, 0]]), (1, 4)],
         lambda L, x, i, s: x.clone().scatter_(0, i, s), lambda x, i, s: _np_scatter(x, 0, i, s), grad_fn=None,
         aliases=("scatter_",)),
    case("scatter_add", "inplace", [(3, 4), _I([[0, 0, 1, 0], [0, 2, 1, 0]]), (2, 4)],
         lambda L, x, i, s: x.clone().scatter_add_(0, i, s), lambda x, i, s: _np_scatter_add_at(x, 0, i, s),
         grad_fn=None, aliases=("scatter_add_",)),
    case("index_add", "", [(4, 3), _I([0, 2, 0]), (3, 3)], lambda L, x, i, s: L.index_add(x, 0, i, s),
         lambda x, i, s: _np_index_add(x, 0, i, s), grad_fn=None),
    case("index_add", "dim1_alpha", [(2, 4), _I([3, 3, 1]), (2, 3)],
         lambda L, x, i, s: x.index_add(1, i, s, alpha=-0.5), lambda x, i, s: _np_index_add(x, 1, i, -0.5 * s),
         grad_fn=None),
    case("index_add", "inplace", [(4, 3), _I([1, 2]), (2, 3)], lambda L, x, i, s: x.clone().index_add_(0, i, s),
         lambda x, i, s: _np_index_add(x, 0, i, s), grad_fn=None, aliases=("index_add_",)),
    case("index_copy", "", [(4, 3), _I([3, 0]), (2, 3)], lambda L, x, i, s: L.index_copy(x, 0, i, s),
         lambda x, i, s: _np_index_copy(x, 0, i, s), grad_fn=None),
    case("index_copy", "dim1", [(2, 4), _I([1, 2, 0]), (2, 3)], lambda L, x, i, s: x.index_copy(1, i, s),
         lambda x, i, s: _np_index_copy(x, 1, i, s), grad_fn=None),
    case("index_copy", "inplace", [(4, 3), _I([2]), (1, 3)], lambda L, x, i, s: x.clone().index_copy_(0, i, s),
         lambda x, i, s: _np_index_copy(x, 0, i, s), grad_fn=None, aliases=("index_copy_",)),
    case("index_fill", "", [(4, 3), _I([3, 0, 3])], lambda L, x, i: L.index_fill(x, 0, i, -1.0),
         lambda x, i: _np_index_fill(x, 0, i, -1.0), grad_fn=None),
    case("index_fill", "tensor_value", [(2, 4), _I([1]), ()], lambda L, x, i, v: x.index_fill(1, i, v * 2),
         lambda x, i, v: _np_index_fill(x, 1, i, v * 2), grad_fn=None),
    case("index_fill", "inplace", [(4, 3), _I([1])], lambda L, x, i: x.clone().index_fill_(1, i, 2.0),
         lambda x, i: _np_index_fill(x, 1, i, 2.0), grad_fn=None, aliases=("index_fill_",)),
    case("masked_select", "", [(3, 4), _I([[True, False, True, True], [False] * 4, [True, False, False, True]])],
         lambda L, x, m: L.masked_select(x, m), lambda x, m: x[m], grad_fn=None),
    case("masked_select", "broadcast", [(3, 4), _I([True, False, False, True])],
         lambda L, x, m: x.masked_select(m), lambda x, m: np.broadcast_to(x, (3, 4))[np.broadcast_to(m, (3, 4))],
         grad_fn=None),
    case("masked_select", "broadcast_input", [(4,), _I([[True], [False], [True]])],
         lambda L, x, m: L.masked_select(x, m), lambda x, m: np.broadcast_to(x, (3, 4))[np.broadcast_to(m, (3, 4))],
         grad_fn=None),
]
for _red in ("sum", "prod", "mean", "amax", "amin"):
    for _self in (True, False):
        _smp = nonzero if _red == "prod" else (distinct if _red in ("amax", "amin") else sample)
        ops.append(OpInfo(
            "scatter_reduce", lambda x, i, s, _r=_red, _s=_self: mg.scatter_reduce(x, 0, i, s, _r, include_self=_s),
            lambda x, i, s, _r=_red, _s=_self: _np_scatter_reduce(x, 0, i, s, _r, _s),
            lambda rng, _smp=_smp: [SampleInput((_smp((3, 4), rng), _I([[0, 0, 1, 0], [2, 0, 1, 0]]),
                                                 _smp((2, 4), rng))),
                                    SampleInput((_smp((3, 2), rng), _I([[1, 1], [1, 0], [1, 1]]),
                                                 _smp((3, 2), rng)))],
            variant=f"{_red}{'' if _self else '-exclude_self'}",
            torch_op=lambda torch, x, i, s, _r=_red, _s=_self: torch.scatter_reduce(x, 0, i, s, _r, include_self=_s),
            grad_fn="ScatterReduce", skips={"torch_double_backward": "PyTorch's second derivative of prod with "
                                            "include_self=False differs; minigrad's passes gradgradcheck"}
            if (_red, _self) == ("prod", False) else None))
ops.append(OpInfo(  # src larger than index: its unused part gets a 0 gradient (PyTorch's backward raises)
    "scatter_reduce", lambda x, i, s: mg.scatter_reduce(x, 0, i, s, "sum"),
    lambda x, i, s: _np_scatter_reduce(x, 0, i, s, "sum", True),
    lambda rng: [SampleInput((sample((3, 2), rng), _I([[1, 1], [1, 0]]), sample((3, 3), rng)))],
    variant="src_larger", skips={"torch": "PyTorch's backward raises for src larger than index"}))
ops.append(OpInfo(
    "scatter_reduce", lambda x, i, s: mg.scatter_reduce(x, 0, i, s, "amax"),
    lambda x, i, s: _np_scatter_reduce(x, 0, i, s, "amax", True),
    samples(SampleInput((np.array([[1.0, 2.0], [0.0, 5.0]]), _I([[0, 0], [0, 1]]), np.array([[1.0, 2.0], [1.0, 0.0]])),
                        name="ties", kink=True)), variant="amax-ties",
    torch_op=lambda torch, x, i, s: torch.scatter_reduce(x, 0, i, s, "amax"), grad_fn="ScatterReduce"))
ops.append(OpInfo(
    "scatter_reduce", lambda x, i, s: x.clone().scatter_reduce_(1, i, s, "sum"),
    lambda x, i, s: _np_scatter_reduce(x, 1, i, s, "sum", True),
    lambda rng: [SampleInput((sample((2, 3), rng), _I([[0, 2], [1, 1]]), sample((2, 2), rng)))],
    variant="inplace", aliases=("scatter_reduce_",), grad_fn=None,
    torch_op=lambda torch, x, i, s: x.clone().scatter_reduce_(1, i, s, "sum")))


def _full(x, dim, i):
    grids = list(np.ogrid[tuple(slice(0, s) for s in i.shape)])
    grids[dim] = i
    return tuple(grids)


def _np_scatter(x, dim, i, s):
    out = x.copy()
    out[_full(x, dim, i)] = s[tuple(slice(0, n) for n in i.shape)]
    return out


def _np_scatter_add_at(x, dim, i, s):
    out = x.copy()
    np.add.at(out, _full(x, dim, i), s[tuple(slice(0, n) for n in i.shape)])
    return out


def _np_scatter_reduce(x, dim, i, s, red, include_self):
    full = _full(x, dim, i)
    s = s[tuple(slice(0, n) for n in i.shape)]
    out = x.copy()
    written = np.zeros(x.shape, dtype=bool)
    written[full] = True
    groups = {}
    for k in np.ndindex(i.shape):
        groups.setdefault(tuple(f[k] if np.ndim(f) else f for f in np.broadcast_arrays(*full)), []).append(s[k])
    for tgt, vals in groups.items():
        vals = ([x[tgt]] if include_self else []) + vals
        out[tgt] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[red](vals)
    return out


def _np_index_add(x, dim, i, s):
    out = x.copy()
    np.add.at(out, (slice(None),) * dim + (i,), s)
    return out


def _np_index_copy(x, dim, i, s):
    out = x.copy()
    out[(slice(None),) * dim + (i,)] = s
    return out


def _np_index_fill(x, dim, i, v):
    out = x.copy()
    out[(slice(None),) * dim + (i,)] = v
    return out


def _nonzero_samples(rng):
    return [SampleInput((np.array([[0.0, 1.5], [2.0, 0.0], [0.0, 0.0]]),)),
            SampleInput((np.array([0, 3, 0, -1]),), name="int"), SampleInput((np.zeros((2, 0)),), name="empty"),
            SampleInput((np.array(2.0),), name="0d")]


ops += [
    OpInfo("nonzero", mg.nonzero, lambda x: np.argwhere(x), _nonzero_samples, supports_grad=False),
    OpInfo("nonzero", lambda x: mg.nonzero(x, as_tuple=True), lambda x: np.nonzero(x) if x.ndim else
           (np.zeros(int(x != 0), dtype=np.int64),), _nonzero_samples, variant="as_tuple", supports_grad=False,
           torch_op=lambda torch, x: torch.nonzero(x, as_tuple=True)),
    OpInfo("nonzero", lambda x: x.nonzero(), lambda x: np.argwhere(x), _nonzero_samples, variant="method",
           supports_grad=False, torch_op=lambda torch, x: x.nonzero()),
]
