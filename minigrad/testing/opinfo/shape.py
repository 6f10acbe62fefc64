"""Registry entries of the shape ops (ops/shape.py): reshape/view/flatten/unflatten, squeeze/unsqueeze,
transpose/permute/t, expand/broadcast_to, repeat, flip, narrow, contiguous/clone, tril/triu, cat/stack,
split/chunk/unbind, and the composites roll, repeat_interleave, meshgrid and Tensor.unfold.
"""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, case, samples


def _all_parts(L, parts):
    """Combine a tuple of outputs into one so gradcheck sees every part (weighted differently)."""
    return L.cat([p.reshape(-1) * (i + 1.0) for i, p in enumerate(parts)])


def _np_split(sizes, dim):
    def ref(a):
        return np.concatenate([p.reshape(-1) * (i + 1.0) for i, p in
                               enumerate(np.split(a, np.cumsum(sizes)[:-1], axis=dim))])
    return ref


_SPLITS = [((5, 2), 2, 0, [2, 2, 1]), ((5, 2), 5, 0, [5]), ((2, 6), 3, 1, [3, 3]),
           ((2, 6), [1, 2, 3], -1, [1, 2, 3]), ((4, 2), [4, 0], 0, [4, 0]), ((4, 2), (1, 3), 0, [1, 3])]
_CHUNKS = [((6,), 3, 0, [2, 2, 2]), ((5,), 2, 0, [3, 2]), ((2, 5), 3, 1, [2, 2, 1]), ((3,), 5, 0, [1, 1, 1]),
           ((2, 4), 2, -1, [2, 2])]
_UNBINDS = [((3,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), -1)]


def _np_unbind(dim):
    def ref(a):
        return np.concatenate([np.take(a, i, axis=dim).reshape(-1) * (i + 1.0) for i in range(a.shape[dim])])
    return ref


ops = [
    case("reshape", "", [(2, 3)], lambda L, x: x.reshape(3, 2), lambda x: x.reshape(3, 2), grad_fn="View"),
    case("reshape", "tuple", [(2, 3)], lambda L, x: x.reshape((6,)), lambda x: x.reshape(6), grad_fn="View"),
    case("reshape", "-1", [(2, 3, 4)], lambda L, x: x.reshape(-1, 4), lambda x: x.reshape(-1, 4), grad_fn="View"),
    case("reshape", "-1_mid", [(2, 3, 4)], lambda L, x: L.reshape(x, (2, -1, 2)), lambda x: x.reshape(2, -1, 2),
         grad_fn="View"),
    case("reshape", "0d_to_1", [()], lambda L, x: x.reshape(1), lambda x: x.reshape(1), grad_fn="View"),
    case("reshape", "to_0d", [(1,)], lambda L, x: x.reshape(()), lambda x: x.reshape(()), grad_fn="View"),
    case("reshape", "same", [(2, 3)], lambda L, x: x.reshape(2, 3), lambda x: x, grad_fn="View"),
    case("reshape", "empty", [np.zeros((0, 3))], lambda L, x: x.reshape(3, 0), lambda x: x.reshape(3, 0),
         grad_fn="View"),
    case("view", "", [(2, 3)], lambda L, x: x.view(6), lambda x: x.reshape(6)),
    case("view", "-1", [(2, 3)], lambda L, x: x.view(-1), lambda x: x.reshape(-1)),
    case("view", "as", [(2, 3)], lambda L, x: x.view_as(L.zeros(3, 2)), lambda x: x.reshape(3, 2)),
    case("flatten", "", [(2, 3, 4)], lambda L, x: x.flatten(), lambda x: x.reshape(-1), grad_fn="View"),
    case("flatten", "1", [(2, 3, 4)], lambda L, x: x.flatten(1), lambda x: x.reshape(2, 12), grad_fn="View"),
    case("flatten", "0_1", [(2, 3, 4)], lambda L, x: L.flatten(x, 0, 1), lambda x: x.reshape(6, 4),
         grad_fn="View"),
    case("flatten", "0d", [()], lambda L, x: x.flatten(), lambda x: x.reshape(1), grad_fn="View"),
    case("unflatten", "", [(2, 12)], lambda L, x: x.unflatten(1, (3, 4)), lambda x: x.reshape(2, 3, 4),
         grad_fn="View"),
    case("unflatten", "-1", [(2, 12)], lambda L, x: x.unflatten(-1, (-1, 2)), lambda x: x.reshape(2, 6, 2),
         grad_fn="View"),
    case("squeeze", "", [(1, 3, 1)], lambda L, x: x.squeeze(), lambda x: x.squeeze()),
    case("squeeze", "dim", [(1, 3, 1)], lambda L, x: x.squeeze(0), lambda x: x.squeeze(0)),
    case("squeeze", "neg", [(1, 3, 1)], lambda L, x: x.squeeze(-1), lambda x: x.squeeze(-1)),
    case("squeeze", "noop", [(2, 3)], lambda L, x: x.squeeze(1), lambda x: x),
    case("squeeze", "tuple", [(1, 3, 1)], lambda L, x: L.squeeze(x, (0, 2)), lambda x: x.reshape(3)),
    case("unsqueeze", "", [(2, 3)], lambda L, x: x.unsqueeze(0), lambda x: x[None]),
    case("unsqueeze", "mid", [(2, 3)], lambda L, x: x.unsqueeze(1), lambda x: x[:, None]),
    case("unsqueeze", "neg", [(2, 3)], lambda L, x: L.unsqueeze(x, -1), lambda x: x[..., None]),
    case("unsqueeze", "0d", [()], lambda L, x: x.unsqueeze(0), lambda x: x.reshape(1)),
    case("transpose", "", [(2, 3)], lambda L, x: x.transpose(0, 1), lambda x: x.T),
    case("transpose", "3d", [(2, 3, 4)], lambda L, x: L.transpose(x, 0, -1), lambda x: np.swapaxes(x, 0, 2)),
    case("transpose", "1d", [(3,)], lambda L, x: x.transpose(0, -1), lambda x: x),
    case("transpose", "mT", [(2, 3, 4)], lambda L, x: x.mT, lambda x: np.swapaxes(x, -1, -2)),
    case("swapaxes", "", [(2, 3, 4)], lambda L, x: x.swapaxes(1, 2), lambda x: np.swapaxes(x, 1, 2),
         grad_fn="Transpose"),
    case("permute", "", [(2, 3, 4)], lambda L, x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1)),
    case("permute", "tuple", [(2, 3, 4)], lambda L, x: L.permute(x, (1, 2, 0)), lambda x: x.transpose(1, 2, 0)),
    case("permute", "neg", [(2, 3, 4)], lambda L, x: x.permute(-1, -3, -2), lambda x: x.transpose(2, 0, 1)),
    case("permute", "T", [(2, 3)], lambda L, x: x.T, lambda x: x.T, grad_fn=None),
    case("permute", "T_3d", [(2, 3, 4)], lambda L, x: x.permute(2, 1, 0), lambda x: x.T),
    case("permute", "T_1d", [(3,)], lambda L, x: x.T, lambda x: x, grad_fn=None),
    case("t", "", [(2, 3)], lambda L, x: x.t(), lambda x: x.T),
    case("t", "1d", [(3,)], lambda L, x: L.t(x), lambda x: x),
    case("expand", "", [(3, 1)], lambda L, x: x.expand(3, 4), lambda x: np.broadcast_to(x, (3, 4))),
    case("expand", "new_dims", [(3,)], lambda L, x: x.expand(2, 4, 3), lambda x: np.broadcast_to(x, (2, 4, 3))),
    case("expand", "-1", [(1, 3)], lambda L, x: x.expand(2, -1), lambda x: np.broadcast_to(x, (2, 3))),
    case("expand", "0d", [()], lambda L, x: x.expand(2, 3), lambda x: np.broadcast_to(x, (2, 3))),
    case("expand", "same", [(2, 3)], lambda L, x: x.expand(2, 3), lambda x: x),
    case("expand_as", "", [(2, 1)], lambda L, x: x.expand_as(L.zeros(2, 3)), lambda x: np.broadcast_to(x, (2, 3)),
         grad_fn="Expand"),
    case("broadcast_to", "", [(1, 3)], lambda L, x: x.broadcast_to((2, 3)), lambda x: np.broadcast_to(x, (2, 3)),
         grad_fn="Expand"),
    case("broadcast_to", "fn", [(3,)], lambda L, x: L.broadcast_to(x, (4, 3)), lambda x: np.broadcast_to(x, (4, 3)),
         grad_fn="Expand"),
    case("broadcast_tensors", "", [(2, 1), (3,)], lambda L, x, y: L.broadcast_tensors(x, y),
         lambda x, y: tuple(np.broadcast_arrays(x, y)), grad_fn="Expand"),
    case("repeat", "", [(2, 3)], lambda L, x: x.repeat(2, 3), lambda x: np.tile(x, (2, 3))),
    case("repeat", "new_dims", [(2, 3)], lambda L, x: x.repeat(2, 1, 2), lambda x: np.tile(x, (2, 1, 2))),
    case("repeat", "tuple", [(3,)], lambda L, x: x.repeat((3,)), lambda x: np.tile(x, 3)),
    case("repeat", "fn", [(3,)], lambda L, x: L.repeat(x, (3,)) if L is mg else x.repeat(3), lambda x: np.tile(x, 3)),
    case("repeat", "0d", [()], lambda L, x: x.repeat(3), lambda x: np.tile(x, 3)),
    case("flip", "", [(2, 3)], lambda L, x: x.flip(0), lambda x: x[::-1]),
    case("flip", "both", [(2, 3)], lambda L, x: x.flip((0, 1)), lambda x: x[::-1, ::-1]),
    case("flip", "neg", [(2, 3, 4)], lambda L, x: L.flip(x, [-1]), lambda x: x[..., ::-1]),
    case("narrow", "", [(4, 3)], lambda L, x: x.narrow(0, 1, 2), lambda x: x[1:3], grad_fn="Slice"),
    case("narrow", "dim1", [(2, 5)], lambda L, x: L.narrow(x, 1, 2, 3), lambda x: x[:, 2:5], grad_fn="Slice"),
    case("narrow", "neg_start", [(2, 5)], lambda L, x: x.narrow(-1, -2, 2), lambda x: x[:, 3:5], grad_fn="Slice"),
    case("select", "", [(4, 3)], lambda L, x: x.select(0, 2), lambda x: x[2], grad_fn="Select"),
    case("select", "dim1_neg", [(2, 5, 3)], lambda L, x: L.select(x, -2, -1), lambda x: x[:, -1], grad_fn="Select"),
    case("contiguous", "", [(2, 3)], lambda L, x: x.T.contiguous(), lambda x: x.T, grad_fn="Clone"),
    case("contiguous", "noop", [(2, 3)], lambda L, x: x.contiguous() * 1.0, lambda x: x, grad_fn="Mul"),
    case("clone", "", [(2, 3)], lambda L, x: x.clone(), lambda x: x),
    case("clone", "fn", [(2, 3)], lambda L, x: L.clone(x), lambda x: x.copy()),
    case("tril", "", [(3, 4)], lambda L, x: x.tril(), np.tril),
    case("tril", "k1", [(3, 4)], lambda L, x: L.tril(x, 1), lambda x: np.tril(x, 1)),
    case("tril", "k-1", [(3, 4)], lambda L, x: x.tril(diagonal=-1), lambda x: np.tril(x, -1)),
    case("tril", "batched", [(2, 3, 3)], lambda L, x: x.tril(), np.tril),
    case("triu", "", [(3, 4)], lambda L, x: x.triu(), np.triu),
    case("triu", "k1", [(4, 3)], lambda L, x: L.triu(x, 1), lambda x: np.triu(x, 1)),
    case("triu", "k-1", [(2, 3, 3)], lambda L, x: x.triu(-1), lambda x: np.triu(x, -1)),
]
for _shapes, _d in [(((2, 3), (4, 3)), 0), (((2, 3), (2, 1), (2, 2)), 1), (((2, 3), (2, 3)), -1),
                    (((3,), (2,)), 0), (((2, 1, 3), (2, 2, 3)), -2), (((0, 3), (2, 3)), 0)]:
    _v = "x".join(str(s) for s in _shapes).replace(" ", "") + f"-dim{_d}"
    ops.append(case("cat", _v, [list(_shapes)], lambda L, xs, _d=_d: L.cat(xs, _d),
                          lambda xs, _d=_d: np.concatenate(xs, axis=_d), aliases=("concat", "concatenate")))
ops.append(case("cat", "kw_list", [[(2, 3), (2, 3)]], lambda L, xs: L.cat(list(xs), dim=1),
                      lambda xs: np.concatenate(xs, axis=1)))
ops.append(case("concat", "", [[(2, 3), (1, 3)]], lambda L, xs: L.concat(xs), lambda xs: np.concatenate(xs),
                      grad_fn="Cat"))
ops.append(case("concatenate", "", [[(2, 3), (1, 3)]], lambda L, xs: L.concatenate(xs),
                      lambda xs: np.concatenate(xs), grad_fn="Cat"))
for _shape, _n, _d in [((3,), 2, 0), ((3,), 3, 1), ((2, 3), 3, 0), ((2, 3), 2, -1), ((2, 3), 2, 2), ((), 3, 0)]:
    ops.append(case("stack", f"{_shape}x{_n}-dim{_d}".replace(" ", ""), [[_shape] * _n],
                          lambda L, xs, _d=_d: L.stack(xs, _d), lambda xs, _d=_d: np.stack(xs, axis=_d)))
for _shape, _arg, _d, _sizes in _SPLITS:
    _v = f"{_shape}-{_arg}-dim{_d}".replace(" ", "")
    ops.append(case("split", _v, [_shape], lambda L, x, _a=_arg, _d=_d: _all_parts(L, L.split(x, _a, _d)),
                          _np_split(_sizes, _d), grad_fn="Cat"))
    ops.append(case("split", _v + "-first", [_shape], lambda L, x, _a=_arg, _d=_d: x.split(_a, dim=_d)[0],
                          lambda x, _s=_sizes, _d=_d: np.split(x, np.cumsum(_s)[:-1], axis=_d)[0], grad_fn=None))
for _shape, _c, _d, _sizes in _CHUNKS:
    ops.append(case("chunk", f"{_shape}-{_c}-dim{_d}".replace(" ", ""), [_shape],
                          lambda L, x, _c=_c, _d=_d: _all_parts(L, L.chunk(x, _c, _d)), _np_split(_sizes, _d),
                          grad_fn="Cat"))
for _shape, _d in _UNBINDS:
    ops.append(case("unbind", f"{_shape}-dim{_d}".replace(" ", ""), [_shape],
                          lambda L, x, _d=_d: _all_parts(L, L.unbind(x, _d)), _np_unbind(_d), grad_fn="Cat"))


# -- composites: roll, repeat_interleave, meshgrid, Tensor.unfold --------------------------------
def _np_unfold(x, d, size, step):
    n = x.shape[d]
    wins = [np.take(x, np.arange(s, s + size), axis=d) for s in range(0, n - size + 1, step)]
    return np.moveaxis(np.stack(wins, axis=d), d + 1, -1)


ops += [
    case("roll", "", [(2, 3)], lambda L, x: L.roll(x, 1, 1), lambda x: np.roll(x, 1, 1), grad_fn=None),
    case("roll", "flat", [(2, 3)], lambda L, x: L.roll(x, 4), lambda x: np.roll(x, 4), grad_fn=None),
    case("roll", "dims", [(2, 3, 4)], lambda L, x: x.roll((1, -5), (0, 2)), lambda x: np.roll(x, (1, -5), (0, 2)),
         grad_fn=None),
    case("repeat_interleave", "int", [(2, 3)], lambda L, x: L.repeat_interleave(x, 2, dim=1),
         lambda x: np.repeat(x, 2, axis=1), grad_fn=None),
    case("repeat_interleave", "flat", [(2, 3)], lambda L, x: x.repeat_interleave(2), lambda x: np.repeat(x, 2),
         grad_fn=None),
    case("repeat_interleave", "tensor", [(3, 2), np.array([1, 0, 3])],
         lambda L, x, r: x.repeat_interleave(r, dim=0), lambda x, r: np.repeat(x, r, axis=0), grad_fn=None),
    OpInfo("repeat_interleave", lambda r: mg.repeat_interleave(r), lambda r: np.repeat(np.arange(r.size), r),
           samples(SampleInput((np.array([2, 0, 1]),))), variant="counts", supports_grad=False),
    case("meshgrid", "ij", [(2,), (3,)], lambda L, x, y: L.cat([g.reshape(-1) for g in L.meshgrid(x, y, indexing="ij")]),
         lambda x, y: np.concatenate([g.reshape(-1) for g in np.meshgrid(x, y, indexing="ij")]), grad_fn=None),
    case("meshgrid", "xy3", [(2,), (3,), (1,)],
         lambda L, x, y, z: L.cat([g.reshape(-1) * (k + 1.0) for k, g in enumerate(L.meshgrid(x, y, z, indexing="xy"))]),
         lambda x, y, z: np.concatenate([g.reshape(-1) * (k + 1.0) for k, g in
                                         enumerate(np.meshgrid(x, y, z, indexing="xy"))]), grad_fn=None),
    case("unfold", "", [(2, 5)], lambda L, x: x.unfold(1, 2, 2), lambda x: _np_unfold(x, 1, 2, 2), grad_fn=None,
         kind="method"),
    case("unfold", "dim0_overlap", [(5, 3)], lambda L, x: x.unfold(0, 3, 1), lambda x: _np_unfold(x, 0, 3, 1),
         grad_fn=None, kind="method"),
]


# -- NumPy-style composites: movedim/moveaxis, tensor_split and h/v/d splits and stacks ------------
def _np_parts(split):
    def ref(a):
        return np.concatenate([p.reshape(-1) * (i + 1.0) for i, p in enumerate(split(a))])
    return ref


ops += [
    case("movedim", "", [(2, 3, 4)], lambda L, x: L.movedim(x, 0, 2), lambda x: np.moveaxis(x, 0, 2), grad_fn="Permute",
         aliases=("moveaxis",)),
    case("movedim", "seq", [(2, 3, 4)], lambda L, x: L.movedim(x, (0, 1), (2, 0)),
         lambda x: np.moveaxis(x, (0, 1), (2, 0)), grad_fn="Permute"),
    case("moveaxis", "", [(2, 3, 4)], lambda L, x: x.moveaxis(-1, 0), lambda x: np.moveaxis(x, -1, 0), grad_fn="Permute"),
    case("tensor_split", "sections", [(2, 7)], lambda L, x: _all_parts(L, L.tensor_split(x, 3, 1)),
         _np_parts(lambda a: np.array_split(a, 3, axis=1)), grad_fn="Cat"),
    case("tensor_split", "indices", [(5, 2)], lambda L, x: _all_parts(L, L.tensor_split(x, [1, 4, 9])),
         _np_parts(lambda a: np.array_split(a, [1, 4, 9])), grad_fn="Cat"),
    case("hsplit", "", [(2, 6)], lambda L, x: _all_parts(L, L.hsplit(x, 3)), _np_parts(lambda a: np.hsplit(a, 3)),
         grad_fn="Cat"),
    case("vsplit", "", [(4, 3)], lambda L, x: _all_parts(L, L.vsplit(x, [1, 3])),
         _np_parts(lambda a: np.vsplit(a, [1, 3])), grad_fn="Cat"),
    case("dsplit", "", [(2, 2, 4)], lambda L, x: _all_parts(L, L.dsplit(x, 2)), _np_parts(lambda a: np.dsplit(a, 2)),
         grad_fn="Cat"),
    case("hstack", "", [[(2, 3), (2, 1)]], lambda L, xs: L.hstack(xs), lambda xs: np.hstack(xs), grad_fn="Cat"),
    case("hstack", "1d", [[(3,), (2,)]], lambda L, xs: L.hstack(xs), lambda xs: np.hstack(xs), grad_fn="Cat"),
    case("vstack", "", [[(3,), (1, 3)]], lambda L, xs: L.vstack(xs), lambda xs: np.vstack(xs), grad_fn="Cat",
         aliases=("row_stack",)),
    case("row_stack", "", [[(2, 3), (2, 3)]], lambda L, xs: L.row_stack(xs), lambda xs: np.vstack(xs), grad_fn="Cat"),
    case("dstack", "", [[(3,), (1, 3, 2)]], lambda L, xs: L.dstack(xs), lambda xs: np.dstack(xs), grad_fn="Cat"),
    case("column_stack", "", [[(3,), (3, 2)]], lambda L, xs: L.column_stack(xs), lambda xs: np.column_stack(xs),
         grad_fn="Cat"),
]


# -- NumPy-style functions (ops/numpy_style.py), composites of the ops above -----------
def _np_gradient(*spacing, **kw):
    def ref(a):
        g = np.gradient(a, *spacing, **kw)
        parts = g if isinstance(g, (list, tuple)) else [g]
        return np.concatenate([p.reshape(-1) * (i + 1.0) for i, p in enumerate(parts)])
    return ref


def _np_diff(x, n=1, axis=-1, prepend=None, append=None):
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(x, n, axis, **kw)


ops += [
    case("atleast_1d", "", [()], lambda L, x: L.atleast_1d(x), np.atleast_1d, grad_fn=None),
    case("atleast_1d", "many", [(), (2,)], lambda L, x, y: _all_parts(L, L.atleast_1d(x, y)),
         lambda x, y: np.concatenate([np.atleast_1d(x), np.atleast_1d(y) * 2.0]), grad_fn=None),
    case("atleast_2d", "", [(3,)], lambda L, x: L.atleast_2d(x), np.atleast_2d, grad_fn=None),
    case("atleast_2d", "list", [(), (2, 3, 1)], lambda L, x, y: _all_parts(L, L.atleast_2d([x, y])),
         lambda x, y: np.concatenate([np.atleast_2d(x).reshape(-1), y.reshape(-1) * 2.0]), grad_fn=None),
    case("atleast_3d", "", [(3,)], lambda L, x: L.atleast_3d(x), np.atleast_3d, grad_fn=None),
    case("atleast_3d", "2d", [(2, 3)], lambda L, x: L.atleast_3d(x), np.atleast_3d, grad_fn=None),
    case("atleast_3d", "0d", [()], lambda L, x: L.atleast_3d(x), np.atleast_3d, grad_fn=None),
    case("diff", "", [(2, 5)], lambda L, x: L.diff(x), np.diff, grad_fn=None),
    case("diff", "n2_dim0", [(4, 3)], lambda L, x: L.diff(x, n=2, dim=0), lambda x: np.diff(x, 2, 0), grad_fn=None),
    case("diff", "prepend_append", [(2, 3), (2, 1), (2, 2)],
         lambda L, x, p, a: L.diff(x, 2, 1, prepend=p, append=a),
         lambda x, p, a: _np_diff(x, 2, 1, p, a), grad_fn=None),
    case("diff", "method", [(4,)], lambda L, x: x.diff(n=3), lambda x: np.diff(x, 3), grad_fn=None),
    case("gradient", "", [(4, 3)], lambda L, x: _all_parts(L, L.gradient(x)), _np_gradient(), grad_fn=None),
    case("gradient", "1d", [(5,)], lambda L, x: _all_parts(L, L.gradient(x)), _np_gradient(), grad_fn=None),
    case("gradient", "spacing_edge2", [(4, 3)],
         lambda L, x: _all_parts(L, L.gradient(x, spacing=[2.0, 0.5], edge_order=2)),
         _np_gradient(2.0, 0.5, edge_order=2), grad_fn=None),
    case("gradient", "coords_dim", [(3, 4)],
         lambda L, x: _all_parts(L, L.gradient(x, spacing=[L.tensor([0.0, 0.5, 2.0, 2.5], dtype=x.dtype)], dim=1)),
         lambda x: np.gradient(x, np.array([0.0, 0.5, 2.0, 2.5]), axis=1).reshape(-1), grad_fn=None),
    case("gradient", "coords_edge2", [(4,)],
         lambda L, x: _all_parts(L, L.gradient(x, spacing=(L.tensor([0.0, 1.0, 1.5, 3.0], dtype=x.dtype),),
                                               edge_order=2)),
         lambda x: np.gradient(x, np.array([0.0, 1.0, 1.5, 3.0]), edge_order=2), grad_fn=None),
    case("tile", "", [(2, 3)], lambda L, x: L.tile(x, (2,)), lambda x: np.tile(x, (2,)), grad_fn="Repeat"),
    case("tile", "more_dims", [(3,)], lambda L, x: L.tile(x, (2, 2)), lambda x: np.tile(x, (2, 2)), grad_fn="Repeat"),
    case("tile", "method", [(2, 1)], lambda L, x: x.tile((1, 3)), lambda x: np.tile(x, (1, 3)), grad_fn="Repeat"),
    case("inner", "", [(2, 3), (4, 3)], lambda L, x, y: L.inner(x, y), np.inner, grad_fn=None),
    case("inner", "1d", [(3,), (3,)], lambda L, x, y: L.inner(x, y), np.inner, grad_fn=None),
    case("inner", "0d", [(), (2, 3)], lambda L, x, y: L.inner(x, y), np.inner, grad_fn=None),
    case("inner", "method", [(2, 2, 3), (3,)], lambda L, x, y: x.inner(y), np.inner, grad_fn=None),
    case("flipud", "", [(3, 2)], lambda L, x: L.flipud(x), np.flipud, grad_fn="Flip"),
    case("fliplr", "", [(2, 3, 2)], lambda L, x: L.fliplr(x), np.fliplr, grad_fn="Flip"),
    case("rot90", "", [(2, 3)], lambda L, x: L.rot90(x), np.rot90, grad_fn=None),
    case("rot90", "k2", [(2, 3)], lambda L, x: L.rot90(x, 2), lambda x: np.rot90(x, 2), grad_fn="Flip"),
    case("rot90", "k-1_dims", [(2, 3, 4)], lambda L, x: L.rot90(x, -1, [2, 0]),
         lambda x: np.rot90(x, -1, (2, 0)), grad_fn=None),
    case("rot90", "k3_method", [(3, 2)], lambda L, x: x.rot90(3, [-1, -2]), lambda x: np.rot90(x, 3, (-1, -2)),
         grad_fn=None),
    case("ravel", "", [(2, 3)], lambda L, x: L.ravel(x), np.ravel, grad_fn=None),
    case("ravel", "method_noncontig", [(3, 2)], lambda L, x: x.t().ravel(), lambda x: np.ravel(x.T), grad_fn=None),
    case("einsum", "sublist", [(2, 3), (3, 4)], lambda L, x, y: L.einsum(x, [0, 1], y, [1, 2], [0, 2]),
         lambda x, y: np.einsum(x, [0, 1], y, [1, 2], [0, 2]), grad_fn=None),
    case("einsum", "sublist_implicit", [(2, 3), (3, 4)], lambda L, x, y: L.einsum(x, [30, 1], y, [1, 2]),
         lambda x, y: np.einsum("xb,bc", x, y), grad_fn=None),
    case("einsum", "sublist_ellipsis", [(3, 2, 2)], lambda L, x: L.einsum(x, [Ellipsis, 0, 0], [Ellipsis]),
         lambda x: np.einsum("...ii->...", x), grad_fn=None),
]
