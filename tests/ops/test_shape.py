"""Shape ops: forward vs NumPy, gradcheck/gradgradcheck; views share memory, joins/splits route gradients."""
import numpy as np
import pytest

import minigrad as mg
from helpers import check_op, grads, leaf, sample
from minigrad.testing import op_db

# forward vs NumPy, gradcheck/gradgradcheck of every calling form (the old CASES table):
# tests/ops/test_ops.py, from the registry's shape entries
CASES = {o.full_name.replace(".", "_").rstrip("_"): o for o in op_db if o.name in (
    "reshape", "view", "transpose", "permute", "expand", "narrow", "squeeze", "unsqueeze", "flatten", "flip",
    "repeat", "clone", "contiguous")}


def _view_case(name):
    info = CASES[name]
    x = mg.tensor(info.samples()[0].args[0])
    return info.op(x), x


@pytest.mark.parametrize("name", ["reshape", "view", "transpose", "permute", "expand", "narrow",
                                  "squeeze", "unsqueeze", "flatten_1", "permute_T"])
def test_views_share_memory(name):
    out, x = _view_case(name)
    assert np.shares_memory(out.data.numpy(), x.data.numpy())


@pytest.mark.parametrize("name", ["flip", "repeat", "clone", "contiguous"])
def test_copies_do_not_share_memory(name):
    out, x = _view_case(name)
    assert not np.shares_memory(out.data.numpy(), x.data.numpy())


def test_contiguous_makes_c_contiguous():
    x = mg.randn(2, 3).T
    assert not x.data.numpy().flags.c_contiguous
    assert x.contiguous().data.numpy().flags.c_contiguous
    y = mg.randn(2, 3)
    assert y.contiguous() is y or np.shares_memory(y.contiguous().data.numpy(), y.data.numpy())


def test_expand_grad_sums_over_broadcast():
    _, (g,) = grads(lambda x: x.expand(4, 3) * mg.tensor(np.arange(4.0)[:, None], dtype=mg.float64),
                    [[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(g, [[6.0, 6.0, 6.0]])


@pytest.mark.parametrize("x,shape", [
    (np.array(2.5, np.float32), (4, 10)),                     # a 0-d gradient of sum(), broadcast back
    (np.arange(4.0).reshape(4, 1), (3, 4, 5)),                # a new leading axis and a size-1 axis
    (np.arange(6.0).reshape(2, 3).T, (4, 3, 2)),              # F-contiguous
    (np.arange(12.0).reshape(3, 4)[:, ::2], (2, 3, 2)),       # not contiguous: np.broadcast_to itself
    (np.zeros((0, 1)), (0, 3)),                               # empty
])
def test_expand_is_broadcast_to_view(x, shape):
    """Expand's forward builds the broadcast view itself for contiguous inputs (broadcast_to's setup
    is Python code): the same values, strides and memory as np.broadcast_to, read-only as it is."""
    out = mg.from_numpy(x).expand(*shape).numpy()
    ref = np.broadcast_to(x, shape)
    assert out.shape == ref.shape and out.strides == ref.strides and out.dtype == ref.dtype
    np.testing.assert_array_equal(out, ref)
    assert not out.flags.writeable and (x.size == 0 or np.shares_memory(out, x))


def test_repeat_grad_sums_over_copies():
    _, (g,) = grads(lambda x: x.repeat(2, 3), [[1.0, 2.0]])
    np.testing.assert_array_equal(g, [[6.0, 6.0]])


# -- joins and splits --------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes,dim", [
    (((2, 3), (4, 3)), 0),
    (((2, 3), (2, 1), (2, 2)), 1),
    (((2, 3), (2, 3)), -1),
    (((3,), (2,)), 0),
    (((2, 1, 3), (2, 2, 3)), -2),
], ids=str)
def test_cat(shapes, dim):
    check_op(lambda *xs: mg.cat(xs, dim), lambda *xs: np.concatenate(xs, axis=dim), *shapes)


def test_cat_aliases_and_mixed_requires_grad():
    a = leaf([[1.0, 2.0]])
    b = mg.tensor([[3.0, 4.0]], dtype=mg.float64)
    out = mg.concat([a, b]) if hasattr(mg, "concat") else mg.cat([a, b])
    np.testing.assert_array_equal(out.data.numpy(), [[1, 2], [3, 4]])
    (out * mg.tensor([[1.0], [10.0]], dtype=mg.float64)).sum().backward()
    np.testing.assert_array_equal(a.grad.data.numpy(), [[1.0, 1.0]])
    assert b.grad is None


def test_cat_promotes_dtypes():
    out = mg.cat([mg.ones(2, dtype=mg.float32), mg.ones(2, dtype=mg.float64)])
    assert out.dtype == mg.float64
    assert mg.cat([mg.tensor([1]), mg.ones(1)]).dtype == mg.float32


def test_cat_shape_mismatch_error():
    with pytest.raises(RuntimeError, match=r"cat.*\(2, 3\).*\(2, 4\)"):
        mg.cat([mg.ones(2, 3), mg.ones(2, 4)], 0)
    with pytest.raises(RuntimeError):
        mg.cat([])


@pytest.mark.parametrize("shape,n,dim", [((3,), 2, 0), ((3,), 3, 1), ((2, 3), 3, 0), ((2, 3), 2, -1),
                                         ((2, 3), 2, 2), ((), 3, 0)], ids=str)
def test_stack(shape, n, dim):
    shapes = [shape] * n
    check_op(lambda *xs: mg.stack(xs, dim), lambda *xs: np.stack(xs, axis=dim), *shapes)


def test_stack_unequal_shapes_error():
    with pytest.raises(RuntimeError, match="stack"):
        mg.stack([mg.ones(2), mg.ones(3)])


def _all_parts(parts):
    """Combine a tuple of outputs into one so gradcheck sees every part (weighted differently)."""
    return mg.cat([p.reshape(-1) * (i + 1.0) for i, p in enumerate(parts)])


@pytest.mark.parametrize("shape,arg,dim,sizes", [
    ((5, 2), 2, 0, [2, 2, 1]),
    ((5, 2), 5, 0, [5]),
    ((2, 6), 3, 1, [3, 3]),
    ((2, 6), [1, 2, 3], -1, [1, 2, 3]),
    ((4, 2), [4, 0], 0, [4, 0]),
    ((4, 2), (1, 3), 0, [1, 3]),
], ids=str)
def test_split(shape, arg, dim, sizes):
    x = mg.tensor(sample(shape, np.random.default_rng(0)))
    parts = x.split(arg, dim)
    assert isinstance(parts, tuple) and [p.shape[dim] for p in parts] == sizes
    refs = np.split(x.data.numpy(), np.cumsum(sizes)[:-1], axis=dim)
    for p, r in zip(parts, refs):
        np.testing.assert_array_equal(p.data.numpy(), r)
    check_op(lambda t: _all_parts(mg.split(t, arg, dim)), None, shape)
    check_op(lambda t: t.split(arg, dim=dim)[0], None, shape)


def test_split_bad_sizes():
    with pytest.raises(RuntimeError, match="sum"):
        mg.ones(5).split([2, 2])


@pytest.mark.parametrize("shape,chunks,dim,sizes", [
    ((6,), 3, 0, [2, 2, 2]),
    ((5,), 2, 0, [3, 2]),
    ((2, 5), 3, 1, [2, 2, 1]),
    ((3,), 5, 0, [1, 1, 1]),
    ((2, 4), 2, -1, [2, 2]),
], ids=str)
def test_chunk(shape, chunks, dim, sizes):
    x = mg.tensor(sample(shape, np.random.default_rng(0)))
    parts = x.chunk(chunks, dim)
    assert [p.shape[dim] for p in parts] == sizes
    np.testing.assert_array_equal(mg.cat(parts, dim).data.numpy(), x.data.numpy())
    check_op(lambda t: _all_parts(mg.chunk(t, chunks, dim)), None, shape)


@pytest.mark.parametrize("shape,dim", [((3,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), -1)], ids=str)
def test_unbind(shape, dim):
    x = mg.tensor(sample(shape, np.random.default_rng(0)))
    parts = x.unbind(dim)
    assert len(parts) == shape[dim]
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(p.data.numpy(), np.take(x.data.numpy(), i, axis=dim))
    check_op(lambda t: _all_parts(mg.unbind(t, dim)), None, shape)


def test_unbind_grad_only_to_used_parts():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    a, b = x.unbind(0)
    (b * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[0.0, 0.0], [3.0, 3.0]])


def test_iter_unbinds_dim0():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    rows = list(x)
    assert len(rows) == 2 and rows[1].shape == (2,)
    (rows[0] * 2.0 + rows[1]).sum().backward()
    np.testing.assert_array_equal(x.grad.data.numpy(), [[2.0, 2.0], [1.0, 1.0]])


# -- errors -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,exc", [
    (lambda x: x.reshape(4, 2), RuntimeError),
    (lambda x: x.reshape(-1, -1), RuntimeError),
    (lambda x: x.view(5, -1), RuntimeError),
    (lambda x: x.permute(0, 1, 2), RuntimeError),
    (lambda x: x.permute(0, 0), RuntimeError),
    (lambda x: x.expand(4, 3), RuntimeError),
    (lambda x: x.expand(3), RuntimeError),
    (lambda x: x.repeat(2), RuntimeError),
    (lambda x: x.transpose(0, 2), IndexError),
    (lambda x: x.unsqueeze(3), IndexError),
    (lambda x: x.squeeze(2), IndexError),
    (lambda x: x.flatten(1, 0), RuntimeError),
    (lambda x: x.unflatten(1, (2, 2)), RuntimeError),
    (lambda x: x.narrow(1, 2, 2), IndexError),
    (lambda x: x.split(0), RuntimeError),
    (lambda x: mg.ones(3).tril(), RuntimeError),
    (lambda x: mg.ones(2, 2, 2).t(), RuntimeError),
], ids=["reshape", "two_-1", "view_-1", "permute_len", "permute_repeat", "expand_size", "expand_ndim",
        "repeat_ndim", "transpose_dim", "unsqueeze_dim", "squeeze_dim", "flatten_order", "unflatten_sizes",
        "narrow_range", "split_zero", "tril_1d", "t_3d"])
def test_shape_errors(fn, exc):
    with pytest.raises(exc):
        fn(mg.ones(2, 3))


def test_reshape_error_names_shape():
    with pytest.raises(RuntimeError, match=r"\[4, 2\].*size 6"):
        mg.ones(2, 3).reshape(4, 2)


def test_cat_skips_a_1d_empty_tensor_as_pytorch():
    """PyTorch's legacy rule: a tensor of shape (0,) cats with anything (it is skipped, the usual
    seed of a loop's `out = torch.cat([out, chunk])`); it raised a size mismatch. It still takes part
    in the dtype promotion."""
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    out = mg.cat([mg.zeros(0), x, mg.zeros(0)], 1)
    assert out.shape == (2, 3) and out.tolist() == x.tolist()
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))
    assert mg.cat([mg.zeros(0, dtype=mg.float64), mg.ones(2, 2)]).dtype == mg.float64
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        mg.cat([mg.zeros(0), mg.ones(2, 3), mg.ones(2, 4)])
