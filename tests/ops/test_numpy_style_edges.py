"""The NumPy-style top-level functions (ops/numpy_style.py) against PyTorch at their edges: rot90's k and dims,
diff's n/prepend/append, gradient's spacing and edge_order, nan_to_num's defaults per dtype, fmax/fmin
with NaN, atleast_*'s return forms, einsum's sublist form, and bad inputs named by the op. (Forward,
gradients, JVP, vmap and tracing of each are checked from the registry entries in
minigrad/testing/opinfo/shape.py and elementwise.py.)"""
import numpy as np
import pytest

import minigrad as mg

NAN, INF = float("nan"), float("inf")


def _both(torch, a, dtype=None):
    return mg.tensor(a, dtype=dtype), torch.tensor(a, dtype=None if dtype is None else getattr(torch, str(dtype)))


def _same(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("k", [-5, -1, 0, 1, 2, 3, 6])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0), (2, 1)])
def test_rot90_every_k_and_dims_as_torch(k, dims):
    torch = pytest.importorskip("torch")
    a = np.arange(24.0).reshape(2, 3, 4)
    x, t = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    out, ref = mg.rot90(x, k, dims), torch.rot90(t, k, dims)
    _same(out, ref)
    w = np.random.default_rng(0).standard_normal(tuple(ref.shape))
    (out * mg.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("args, msg", [
    (((0,),), "rotation dims == 2"), (((0, 0),), "rotation dims to be different"),
    (((0, -3),), "rotation dims to be different"), (((4, 4),), "rot90: dimension 4 out of range")])
def test_rot90_bad_dims_raise_as_torch(args, msg):
    with pytest.raises(IndexError if "range" in msg else RuntimeError, match=msg):
        mg.rot90(mg.ones(2, 3, 4), 1, *args)
    with pytest.raises(RuntimeError, match="rot90: expected total dims >= 2"):
        mg.rot90(mg.ones(3))


@pytest.mark.parametrize("n, dim, pre, app", [(1, -1, None, None), (2, 0, None, None), (3, 1, (2, 1), (2, 2)),
                                              (0, -1, None, None), (7, 1, None, None), (2, 1, None, (2, 1))])
def test_diff_n_dim_prepend_append_as_torch(n, dim, pre, app):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4))
    p = None if pre is None else rng.standard_normal(pre)
    q = None if app is None else rng.standard_normal(app)
    ours = mg.diff(mg.tensor(a), n, dim, None if p is None else mg.tensor(p), None if q is None else mg.tensor(q))
    ref = torch.diff(torch.tensor(a), n, dim, None if p is None else torch.tensor(p),
                     None if q is None else torch.tensor(q))
    _same(ours, ref)


def test_diff_of_bool_and_int_tensors_and_its_errors_as_torch():
    torch = pytest.importorskip("torch")
    for a in ([True, False, False, True], [3, 1, 4, 1, 5]):
        _same(mg.diff(mg.tensor(a)), torch.diff(torch.tensor(a)))
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        mg.diff(mg.tensor(1.0))
    with pytest.raises(RuntimeError, match="same dimension as input"):
        mg.diff(mg.ones(2, 3), prepend=mg.ones(3))
    with pytest.raises(RuntimeError, match="order must be non-negative"):
        mg.diff(mg.ones(3), n=-1)


@pytest.mark.parametrize("kw", [{}, {"spacing": 2.0}, {"spacing": [0.5, 3.0]}, {"edge_order": 2},
                                {"dim": 1, "spacing": [2.0], "edge_order": 2}, {"dim": -2}, {"dim": [1, 0]},
                                {"spacing": "coords"}, {"spacing": "coords", "edge_order": 2}])
def test_gradient_spacing_dim_and_edge_order_as_torch(kw):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(2).standard_normal((3, 4))
    mk, tk = dict(kw), dict(kw)
    if kw.get("spacing") == "coords":
        c0, c1 = np.array([0.0, 0.4, 1.5]), np.array([-1.0, 0.0, 0.2, 2.0])
        mk["spacing"] = [mg.tensor(c0), mg.tensor(c1)]
        tk["spacing"] = [torch.tensor(c0), torch.tensor(c1)]
    ours, ref = mg.gradient(mg.tensor(a), **mk), torch.gradient(torch.tensor(a), **tk)
    assert isinstance(ours, tuple) and len(ours) == len(ref)
    for o, r in zip(ours, ref):
        _same(o, r)


def test_gradient_of_integers_and_short_dims():
    torch = pytest.importorskip("torch")
    _same(mg.gradient(mg.tensor([1, 4, 9, 16]))[0], torch.gradient(torch.tensor([1, 4, 9, 16]))[0])
    _same(mg.gradient(mg.tensor([1.0, 4.0]))[0], torch.gradient(torch.tensor([1.0, 4.0]))[0])
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        mg.gradient(mg.tensor([1.0, 4.0]), edge_order=2)
    with pytest.raises(RuntimeError, match="edge_order=1 and edge_order=2"):
        mg.gradient(mg.ones(4), edge_order=3)
    with pytest.raises(RuntimeError, match="a list of length equal to 'self.dim\\(\\) = 2'"):
        mg.gradient(mg.ones(3, 3), spacing=[1.0])     # one number for two dims: refused, as PyTorch
    with pytest.raises(RuntimeError, match="spacing and dim arguments to have the same length"):
        mg.gradient(mg.ones(3, 3), spacing=[1.0, 2.0, 3.0], dim=(0, 1))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_to_num_defaults_per_dtype_as_torch(dtype):
    torch = pytest.importorskip("torch")
    x, t = _both(torch, [NAN, INF, -INF, 1.5], getattr(mg, dtype))
    _same(mg.nan_to_num(x), torch.nan_to_num(t))
    _same(x.nan_to_num(nan=-1.0, neginf=7.0), t.nan_to_num(nan=-1.0, neginf=7.0))


def test_nan_to_num_leaves_integers_and_gradient_is_zero_off_finite():
    torch = pytest.importorskip("torch")
    _same(mg.nan_to_num(mg.tensor([1, 2])), torch.nan_to_num(torch.tensor([1, 2])))
    x = mg.tensor([NAN, INF, -INF, 1.5], requires_grad=True)
    mg.nan_to_num(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]


def test_fmax_fmin_with_nan_ints_and_ties_as_torch():
    torch = pytest.importorskip("torch")
    a, b = [1.0, NAN, NAN, 2.0, 3.0], [NAN, 2.0, NAN, 2.0, 1.0]
    for name in ("fmax", "fmin"):
        x, y = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
        t, u = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        out, ref = getattr(mg, name)(x, y), getattr(torch, name)(t, u)
        _same(out, ref)
        out.sum().backward()
        ref.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
        np.testing.assert_array_equal(y.grad.numpy(), u.grad.numpy())
        _same(getattr(mg, name)(mg.tensor([1, 5]), mg.tensor([3, 0])),
              getattr(torch, name)(torch.tensor([1, 5]), torch.tensor([3, 0])))
        _same(getattr(mg, name)(mg.tensor([1, 5]), mg.tensor([NAN, 0.5])),
              getattr(torch, name)(torch.tensor([1, 5]), torch.tensor([NAN, 0.5])))


def test_atleast_return_forms_as_torch():
    torch = pytest.importorskip("torch")
    s, v = mg.tensor(1.0), mg.ones(3)
    assert mg.atleast_1d(v) is v and mg.atleast_1d(s).shape == (1,)
    assert isinstance(mg.atleast_2d(s, v), tuple) and [tuple(o.shape) for o in mg.atleast_2d(s, v)] == [(1, 1), (1, 3)]
    assert [tuple(o.shape) for o in mg.atleast_3d([s, v, mg.ones(2, 3)])] == \
        [tuple(o.shape) for o in torch.atleast_3d([torch.tensor(1.0), torch.ones(3), torch.ones(2, 3)])]
    assert mg.atleast_1d([]) == ()


def test_deg2rad_rad2deg_dtypes_as_torch():
    torch = pytest.importorskip("torch")
    for a in ([180, 90], [True, False], [1.0, -2.0]):
        _same(mg.deg2rad(mg.tensor(a)), torch.deg2rad(torch.tensor(a)))
        _same(mg.rad2deg(mg.tensor(a)), torch.rad2deg(torch.tensor(a)))
    _same(mg.tensor([1.0], dtype=mg.float64).rad2deg(), torch.tensor([1.0], dtype=torch.float64).rad2deg())


def test_tile_inner_ravel_flips_shapes_and_errors_as_torch():
    torch = pytest.importorskip("torch")
    a = np.arange(6.0).reshape(2, 3)
    x, t = mg.tensor(a), torch.tensor(a)
    for dims in [(2,), (1, 2), (2, 1, 2), (), (0, 2)]:
        _same(mg.tile(x, dims), torch.tile(t, dims))
    _same(x.tile(2, 1, 2), t.tile(2, 1, 2))
    _same(mg.inner(x, x), torch.inner(t, t))
    _same(mg.inner(mg.tensor(2.0), x), torch.inner(torch.tensor(2.0), t))
    _same(x.T.ravel(), t.T.ravel())
    _same(mg.fliplr(x), torch.fliplr(t))
    _same(mg.flipud(x), torch.flipud(t))
    with pytest.raises(RuntimeError, match="inner\\(\\) the last dimension must match"):
        mg.inner(x, mg.ones(2, 2))
    with pytest.raises(RuntimeError, match="fliplr: Input must be >= 2-d"):
        mg.fliplr(mg.ones(3))
    with pytest.raises(RuntimeError, match="flipud: Input must be >= 1-d"):
        mg.flipud(mg.tensor(1.0))
    with pytest.raises(TypeError, match="tile"):
        mg.tile(np.ones(3), (2,))


def test_einsum_sublist_form_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    x, y, t, u = mg.tensor(a), mg.tensor(b), torch.tensor(a), torch.tensor(b)
    _same(mg.einsum(x, [0, 1], y, [1, 2], [0, 2]), torch.einsum(t, [0, 1], u, [1, 2], [0, 2]))
    _same(mg.einsum(x, [40, 1], y, [1, 2]), torch.einsum(t, [40, 1], u, [1, 2]))  # implicit output: 'C' < 'o'
    _same(mg.einsum(x, [Ellipsis, 0], [0, Ellipsis]), torch.einsum(t, [Ellipsis, 0], [0, Ellipsis]))
    with pytest.raises(ValueError, match="valid range \\[0, 52\\)"):
        mg.einsum(x, [0, 52])
