"""Indexing: __getitem__ (basic and advanced), __setitem__, gather/scatter_add/index_select/
masked_fill/take_along_dim: forward vs NumPy, gradcheck/gradgradcheck, repeated indices accumulate."""
import numpy as np
import pytest

import minigrad as mg
from helpers import check_op, leaf, sample

_MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
_IDX_T = mg.tensor([2, 0, 2, 2])
_IDX_2D = np.array([[0, 1], [1, 1]])

# forward vs NumPy, gradcheck/gradgradcheck of every x[index] form (basic, advanced, masks, mixed): tests/ops/test_ops.py, from the registry
# (minigrad/testing/opinfo/indexing.py)


@pytest.mark.parametrize("index,expected", [
    ([0, 0, 2], [2.0, 0.0, 1.0, 0.0]),
    (np.array([3, 3, 3]), [0.0, 0.0, 0.0, 3.0]),
    (mg.tensor([1, 1, 0, 1]), [1.0, 3.0, 0.0, 0.0]),
    (mg.tensor([[1, 1], [1, 2]]), [0.0, 3.0, 1.0, 0.0]),
], ids=["list", "array", "tensor", "tensor_2d"])
def test_repeated_indices_accumulate(index, expected):
    x = leaf([10.0, 20.0, 30.0, 40.0])
    x[index].sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), expected)


def test_repeated_indices_weighted():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    w = mg.tensor([[1.0, 1.0], [10.0, 10.0], [100.0, 100.0]], dtype=mg.float64)
    (x[[1, 0, 1]] * w).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[10.0, 10.0], [101.0, 101.0]])


def test_basic_index_is_a_view():
    x = mg.tensor(np.arange(12.0).reshape(3, 4))
    assert np.shares_memory(x[1].data.numpy(), x.data.numpy())
    assert np.shares_memory(x[:, ::2].data.numpy(), x.data.numpy())
    assert np.shares_memory(x[None, ..., 1].data.numpy(), x.data.numpy())


def test_advanced_index_copies():
    x = mg.tensor(np.arange(12.0).reshape(3, 4))
    assert not np.shares_memory(x[[0, 1]].data.numpy(), x.data.numpy())
    assert not np.shares_memory(x[x > 5].data.numpy(), x.data.numpy())


def test_bool_mask_from_comparison():
    x = leaf([[-1.0, 2.0], [3.0, -4.0]])
    y = x[x > 0]
    np.testing.assert_array_equal(y.data.numpy(), [2.0, 3.0])
    (y * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[0.0, 2.0], [2.0, 0.0]])


def test_empty_slice_forward_and_grad():
    x = leaf(np.ones((3, 4)))
    y = x[2:1]
    assert y.shape == (0, 4)
    (y.sum() + x[0].sum()).backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[1.0] * 4, [0.0] * 4, [0.0] * 4])


def test_getitem_out_of_range_names_op_and_shape():
    with pytest.raises(IndexError, match=r"getitem.*\(3, 4\)"):
        mg.ones(3, 4)[5]
    with pytest.raises(IndexError, match="getitem"):
        mg.ones(3, 4)[[0, 7]]


def test_index_with_0d_int_tensor():
    x = leaf([1.0, 2.0, 3.0])
    out = x[mg.tensor(2)]
    assert out.shape == () and out.item() == 3.0


# -- __setitem__ ------------------------------------------------------------------------------------
def test_setitem_gradient_goes_to_value_not_overwritten_entries():
    x = leaf(np.arange(6.0).reshape(2, 3))
    v = leaf([7.0, 8.0, 9.0])
    w = mg.tensor(np.arange(1.0, 7.0).reshape(2, 3), dtype=mg.float64)
    y = x * 1.0
    y[1] = v
    np.testing.assert_array_equal(y.data.numpy(), [[0.0, 1.0, 2.0], [7.0, 8.0, 9.0]])
    (y * w).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(v.grad.data.numpy(), [4.0, 5.0, 6.0])


def test_setitem_broadcast_value_gets_summed_grad():
    x = leaf(np.zeros((3, 2)))
    v = leaf(5.0)
    y = x.clone()
    y[:, 1] = v
    y.sum().backward()
    assert v.grad.shape == () and v.grad.item() == 3.0
    np.testing.assert_array_equal(x.grad.data.numpy(), [[1.0, 0.0]] * 3)


def test_setitem_scalar_and_mask():
    x = leaf([1.0, -2.0, 3.0, -4.0])
    y = x * 2.0
    y[y < 0] = 0.0
    np.testing.assert_array_equal(y.data.numpy(), [2.0, 0.0, 6.0, 0.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [2.0, 0.0, 2.0, 0.0])


def test_setitem_advanced_index_and_slice_step():
    x = leaf(np.ones(5))
    v = leaf([10.0, 20.0])
    y = x + 0.0
    y[::3] = v
    np.testing.assert_array_equal(y.data.numpy(), [10.0, 1.0, 1.0, 20.0, 1.0])
    (y * y).sum().backward()
    np.testing.assert_array_equal(v.grad.data.numpy(), [20.0, 40.0])
    np.testing.assert_array_equal(x.grad.data.numpy(), [0.0, 2.0, 2.0, 0.0, 2.0])
    z = mg.zeros(4)
    z[[0, 2]] = mg.tensor([1.0, 2.0])
    np.testing.assert_array_equal(z.data.numpy(), [1.0, 0.0, 2.0, 0.0])


def test_setitem_gradcheck():
    rng = np.random.default_rng(0)
    x, v = leaf(sample((3, 4), rng)), leaf(sample((3, 2), rng))

    def fn(x, v):
        y = x * 1.0
        y[:, 1:3] = v * v
        return y * x

    assert mg.autograd.gradcheck(fn, (x, v))
    assert mg.autograd.gradgradcheck(fn, (x, v))


def test_setitem_on_leaf_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf"):
        x[0] = 5.0
    with mg.no_grad():
        x[0] = 5.0
    assert x.data.numpy()[0] == 5.0


def test_setitem_casts_value_to_tensor_dtype():
    x = mg.zeros(3, dtype=mg.float32)
    x[1] = mg.tensor(2.5, dtype=mg.float64)
    assert x.dtype == mg.float32 and x.data.numpy()[1] == 2.5


# -- gather / scatter_add / index_select / masked_fill / take_along_dim -------------------------------
def _np_gather(a, dim, idx):
    return np.take_along_axis(a, idx, axis=dim)


GATHER = [
    ((3, 4), 0, np.array([[0, 1, 2, 0], [2, 2, 2, 2]])),
    ((3, 4), 1, np.array([[3, 3], [0, 1], [1, 1]])),
    ((3, 4), -1, np.array([[0], [3], [2]])),
    ((2, 3, 4), 1, np.array([[[0, 2, 2, 1]], [[1, 1, 0, 0]]])),
    ((4,), 0, np.array([3, 3, 0])),
]


@pytest.mark.parametrize("shape,dim,idx", GATHER, ids=[f"{s}-{d}" for s, d, _ in GATHER])
def test_gather(shape, dim, idx):
    check_op(lambda x: x.gather(dim, mg.tensor(idx)), lambda a: _np_gather(a, dim, idx), shape)
    check_op(lambda x: mg.gather(x, dim, idx), lambda a: _np_gather(a, dim, idx), shape)


def test_gather_index_smaller_than_input():
    # PyTorch allows index.size(d) <= input.size(d) in the non-gathered dims
    x = leaf(np.arange(12.0).reshape(3, 4))
    out = x.gather(1, mg.tensor([[1, 0], [3, 3]]))
    np.testing.assert_array_equal(out.data.numpy(), [[1.0, 0.0], [7.0, 7.0]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[1, 1, 0, 0], [0, 0, 0, 2], [0, 0, 0, 0]])


def test_gather_errors():
    x = mg.ones(3, 4)
    with pytest.raises(RuntimeError, match="int64"):
        x.gather(1, mg.tensor([[0.0]]))
    with pytest.raises(RuntimeError, match="dimensions"):
        x.gather(1, mg.tensor([0, 1]))
    with pytest.raises(IndexError, match="gather"):
        x.gather(1, mg.tensor([[4]]))


SCATTER = [
    ((3, 4), 0, np.array([[0, 1, 2, 0], [0, 0, 2, 2]]), (2, 4)),
    ((3, 4), 1, np.array([[3, 3], [0, 1], [1, 1]]), (3, 2)),
    ((4,), 0, np.array([3, 3, 0, 3]), (4,)),
    ((3, 4), 1, np.array([[0], [2]]), (2, 3)),  # src larger than index: only the index's extent is used
]


def _np_scatter_add(a, dim, idx, src):
    out = a.copy()
    src = src[tuple(slice(0, s) for s in idx.shape)]
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        out[tuple(tgt)] += src[pos]
    return out


@pytest.mark.parametrize("shape,dim,idx,src_shape", SCATTER, ids=[f"{s}-{d}-{ss}" for s, d, _, ss in SCATTER])
def test_scatter_add(shape, dim, idx, src_shape):
    check_op(lambda x, s: x.scatter_add(dim, mg.tensor(idx), s),
             lambda a, s: _np_scatter_add(a, dim, idx, s), shape, src_shape)
    check_op(lambda x, s: mg.scatter_add(x, dim, idx, s),
             lambda a, s: _np_scatter_add(a, dim, idx, s), shape, src_shape)


def test_scatter_add_repeated_targets_accumulate():
    x = leaf(np.zeros(3))
    src = leaf([1.0, 2.0, 3.0, 4.0])
    out = x.scatter_add(0, mg.tensor([2, 2, 0, 2]), src)
    np.testing.assert_array_equal(out.data.numpy(), [3.0, 0.0, 7.0])
    (out * mg.tensor([1.0, 10.0, 100.0], dtype=mg.float64)).sum().backward()
    np.testing.assert_array_equal(src.grad.data.numpy(), [100.0, 100.0, 1.0, 100.0])
    np.testing.assert_array_equal(x.grad.data.numpy(), [1.0, 10.0, 100.0])


def test_scatter_add_src_larger_than_index_gets_zero_grad_outside():
    # PyTorch raises here ("invalid gradient ... got [2, 1]"); minigrad gives the unused part 0
    x = leaf(np.zeros((3, 4)))
    src = leaf(np.arange(6.0).reshape(2, 3))
    out = x.scatter_add(1, mg.tensor([[0], [2]]), src)
    np.testing.assert_array_equal(out.data.numpy()[:2], [[0.0, 0, 0, 0], [0, 0, 3.0, 0]])
    (out * 2.0).sum().backward()
    np.testing.assert_array_equal(src.grad.data.numpy(), [[2.0, 0.0, 0.0], [2.0, 0.0, 0.0]])


INDEX_SELECT = [((4, 3), 0, [3, 0, 3]), ((3, 4), 1, [1, 1]), ((3, 4), -1, [0]), ((4,), 0, [2, 2, 2]),
                ((2, 3, 4), 1, [2, 0])]


@pytest.mark.parametrize("shape,dim,idx", INDEX_SELECT, ids=[f"{s}-{d}" for s, d, _ in INDEX_SELECT])
def test_index_select(shape, dim, idx):
    check_op(lambda x: x.index_select(dim, mg.tensor(idx)), lambda a: np.take(a, idx, axis=dim), shape)
    check_op(lambda x: mg.index_select(x, dim, np.array(idx)), lambda a: np.take(a, idx, axis=dim), shape)


def test_index_select_rejects_2d_index():
    with pytest.raises(IndexError, match="vector"):
        mg.ones(3, 4).index_select(0, mg.tensor([[0, 1]]))


MASKED_FILL = [((3, 4), _MASK), ((3, 4), np.array([True, False, False, True])),
               ((3, 4), np.array([[True], [False], [True]])), ((), np.array(True))]


@pytest.mark.parametrize("shape,mask", MASKED_FILL, ids=[f"{s}-{m.shape}" for s, m in MASKED_FILL])
def test_masked_fill(shape, mask):
    check_op(lambda x: x.masked_fill(mg.tensor(mask), -5.0), lambda a: np.where(mask, -5.0, a), shape)
    x = leaf(sample(shape, np.random.default_rng(0)))
    v = leaf(2.0)
    out = mg.masked_fill(x, mg.tensor(mask), v)
    np.testing.assert_array_equal(out.data.numpy(), np.where(mask, 2.0, x.data.numpy()))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), np.broadcast_to(~mask, shape))
    assert v.grad.shape == () and v.grad.item() == np.broadcast_to(mask, shape).sum()
    assert mg.autograd.gradcheck(lambda x, v: x.masked_fill(mg.tensor(mask), v * v), (x, v))


def test_masked_fill_errors():
    x = mg.ones(2, 3)
    with pytest.raises(RuntimeError, match="bool"):
        x.masked_fill(mg.tensor([1, 0, 1]), 0.0)
    with pytest.raises(RuntimeError, match="0-dimensional"):
        x.masked_fill(mg.tensor([True, False, True]), mg.ones(3))
    with pytest.raises(ValueError, match=r"masked_fill.*\(4,\)"):
        x.masked_fill(mg.tensor([True] * 4), 0.0)


TAKE = [((3, 4), 1, np.array([[0, 3], [2, 2], [1, 0]])), ((3, 4), 0, np.array([[2, 0, 0, 1]])),
        ((3, 4), 1, np.array([[1], [3], [3]])), ((3, 4), None, np.array([11, 0, 11]))]


@pytest.mark.parametrize("shape,dim,idx", TAKE, ids=[f"{s}-{d}-{i.shape}" for s, d, i in TAKE])
def test_take_along_dim(shape, dim, idx):
    ref = (lambda a: np.take_along_axis(a, idx, axis=dim)) if dim is not None else \
        (lambda a: np.take_along_axis(a.reshape(-1), idx, axis=0))
    check_op(lambda x: x.take_along_dim(mg.tensor(idx), dim), ref, shape)
    check_op(lambda x: mg.take_along_dim(x, mg.tensor(idx), dim=dim), ref, shape)


def test_take_along_dim_broadcasts_index():
    x = leaf(np.arange(12.0).reshape(3, 4))
    out = mg.take_along_dim(x, mg.tensor([[0], [3], [1]]), 1)
    np.testing.assert_array_equal(out.data.numpy(), [[0.0], [7.0], [9.0]])
    # an index with size 1 in a non-indexed dim broadcasts against the input, as PyTorch
    out = mg.take_along_dim(x, mg.tensor([[3, 0]]), 1)
    np.testing.assert_array_equal(out.data.numpy(), [[3.0, 0.0], [7.0, 4.0], [11.0, 8.0]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[1, 0, 0, 1]] * 3)


def test_take_along_dim_with_argmax_picks_max():
    x = leaf(sample((3, 5), np.random.default_rng(2)))
    idx = x.argmax(1, keepdim=True)
    np.testing.assert_array_equal(mg.take_along_dim(x, idx, 1).data.numpy()[:, 0], x.data.numpy().max(1))


def test_scatter_with_duplicate_indices_writes_once_and_every_src_gets_its_gradient():
    # issue 33 item 2: the duplicate writes were summed ([3, 2, 3, 4]); PyTorch writes one of them
    assert mg.tensor([1., 2., 3., 4.]).scatter(0, mg.tensor([0, 0]), mg.tensor([1., 2.])).tolist() == [2., 2., 3., 4.]
    x = mg.tensor([1., 2., 3., 4.], requires_grad=True)
    s = mg.tensor([1., 2., 5.], requires_grad=True)
    out = x.scatter(0, mg.tensor([0, 0, 2]), s)
    (out * mg.tensor([1., 2., 3., 4.])).sum().backward()
    # PyTorch 2.13: out [2, 2, 5, 4], x.grad [0, 2, 0, 4], src.grad [1, 1, 3] (gathered at every index)
    assert out.tolist() == [2., 2., 5., 4.] and out.grad_fn.name() == "ScatterBackward0"
    assert x.grad.tolist() == [0., 2., 0., 4.] and s.grad.tolist() == [1., 1., 3.]


def test_a_tuple_inside_a_multi_index_is_an_index_array():
    # issue 33 item 4: the tuple gave shape (2, 1, 2); NumPy and PyTorch (2, 1)
    a = mg.arange(24.).reshape(2, 3, 4).requires_grad_()
    out = a[0, (0, 1), None, [0, 1]]
    assert out.shape == (2, 1)
    np.testing.assert_array_equal(out.detach().numpy(), np.arange(24.).reshape(2, 3, 4)[0, [0, 1], None, [0, 1]])
    out.sum().backward()
    assert a.grad.numpy()[0, 0, 0] == 1 and a.grad.numpy()[0, 1, 1] == 1 and a.grad.numpy().sum() == 2
