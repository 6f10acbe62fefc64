"""Creation functions: shapes, dtypes, values, requires_grad, *_like, from_numpy."""
import numpy as np
import pytest

import minigrad as mg


@pytest.mark.parametrize("fn,value", [(mg.zeros, 0.0), (mg.ones, 1.0)])
def test_zeros_ones(fn, value):
    for t in (fn(2, 3), fn((2, 3)), fn([2, 3])):
        assert t.shape == (2, 3) and t.dtype == mg.float32
        assert (t.data.numpy() == value).all()
    assert fn(4).shape == (4,)
    assert fn(()).shape == ()
    assert fn(2, dtype=mg.int64).dtype == mg.int64
    t = fn(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_empty():
    t = mg.empty(3, 2)
    assert t.shape == (3, 2) and t.dtype == mg.float32
    assert mg.empty((0, 4)).numel() == 0


def test_full():
    t = mg.full((2, 2), 7.5)
    assert t.shape == (2, 2) and t.dtype == mg.float32 and (t.data.numpy() == 7.5).all()
    i = mg.full((3,), 4)
    assert i.dtype == mg.int64 and i.tolist() == [4, 4, 4]
    assert mg.full((1,), True).dtype == mg.bool_
    assert mg.full((2,), 1, dtype=mg.float64).dtype == mg.float64
    assert mg.full(3, 0.5).shape == (3,)


def test_arange():
    assert mg.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert mg.arange(5).dtype == mg.int64
    assert mg.arange(2, 8, 2).tolist() == [2, 4, 6]
    f = mg.arange(0.0, 1.0, 0.25)
    assert f.dtype == mg.float32
    np.testing.assert_allclose(f.data.numpy(), [0.0, 0.25, 0.5, 0.75])
    assert mg.arange(3, dtype=mg.float64).dtype == mg.float64
    assert mg.arange(5, 0, -2).tolist() == [5, 3, 1]


def test_linspace():
    t = mg.linspace(0, 1, 5)
    assert t.dtype == mg.float32 and t.shape == (5,)
    np.testing.assert_allclose(t.data.numpy(), [0.0, 0.25, 0.5, 0.75, 1.0])
    assert mg.linspace(-1, 1, 3, dtype=mg.float64).dtype == mg.float64


def test_eye():
    np.testing.assert_array_equal(mg.eye(3).data.numpy(), np.eye(3))
    assert mg.eye(3).dtype == mg.float32
    assert mg.eye(2, 4).shape == (2, 4)
    np.testing.assert_array_equal(mg.eye(2, 4).data.numpy(), np.eye(2, 4))


def test_rand_randn_shapes_and_ranges():
    mg.manual_seed(0)
    r = mg.rand(1000)
    assert r.shape == (1000,) and r.dtype == mg.float32
    assert (r.data.numpy() >= 0).all() and (r.data.numpy() < 1).all()
    assert 0.4 < r.data.numpy().mean() < 0.6
    n = mg.randn(50, 40)
    assert n.shape == (50, 40) and n.dtype == mg.float32
    assert abs(n.data.numpy().mean()) < 0.1 and 0.9 < n.data.numpy().std() < 1.1
    assert mg.rand((2, 3)).shape == (2, 3)
    assert mg.randn(3, dtype=mg.float64).dtype == mg.float64
    assert mg.randn(2, requires_grad=True).requires_grad


def test_randint():
    mg.manual_seed(0)
    t = mg.randint(0, 5, (1000,))
    assert t.dtype == mg.int64 and t.shape == (1000,)
    assert t.data.numpy().min() == 0 and t.data.numpy().max() == 4
    t2 = mg.randint(3, (4, 2))
    assert t2.shape == (4, 2) and (t2.data.numpy() < 3).all() and (t2.data.numpy() >= 0).all()
    t3 = mg.randint(-2, 2, (100,))
    assert t3.data.numpy().min() >= -2 and t3.data.numpy().max() <= 1
    assert mg.randint(0, 2, (3,), dtype=mg.int32).dtype == mg.int32


def test_like_functions():
    x = mg.tensor(np.ones((2, 3), dtype=np.float64))
    for fn in (mg.zeros_like, mg.ones_like, mg.rand_like, mg.randn_like):
        t = fn(x)
        assert t.shape == (2, 3) and t.dtype == mg.float64
    assert (mg.zeros_like(x).data.numpy() == 0).all() and (mg.ones_like(x).data.numpy() == 1).all()
    f = mg.full_like(x, 3.0)
    assert f.shape == (2, 3) and f.dtype == mg.float64 and (f.data.numpy() == 3.0).all()
    assert mg.zeros_like(x, dtype=mg.int64).dtype == mg.int64
    i = mg.tensor([1, 2])
    assert mg.full_like(i, 7).dtype == mg.int64
    assert mg.ones_like(x, requires_grad=True).requires_grad
    assert not mg.zeros_like(mg.tensor([1.0], requires_grad=True)).requires_grad


def test_from_numpy_shares_memory():
    arr = np.array([1.0, 2.0, 3.0])
    t = mg.from_numpy(arr)
    assert t.dtype == mg.float64
    arr[0] = 10.0
    assert t.data.numpy()[0] == 10.0
    t.data[1] = 20.0
    assert arr[1] == 20.0
    with mg.no_grad():
        t.mul_(2)
    assert arr.tolist() == [20.0, 40.0, 6.0]


def test_from_numpy_keeps_dtype_and_rejects_lists():
    assert mg.from_numpy(np.arange(3, dtype=np.int32)).dtype == mg.int32
    with pytest.raises(TypeError):
        mg.from_numpy([1.0, 2.0])


def test_created_leaves_are_differentiable():
    w = mg.zeros(3, requires_grad=True)
    (w * mg.arange(3.0)).sum().backward()
    np.testing.assert_allclose(w.grad.data.numpy(), [0.0, 1.0, 2.0])
