"""Property tests: broadcastable shape pairs for the binary ops, and random compositions of ops,
each checked against central finite differences (gradcheck in float64)."""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra.numpy import mutually_broadcastable_shapes  # noqa: E402

import minigrad as mg  # noqa: E402
from minigrad.autograd import gradcheck, gradgradcheck  # noqa: E402

SHAPES2 = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3)
SHAPES3 = mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=1, max_side=3)
SEEDS = st.integers(0, 2 ** 32 - 1)


def _off_grid(shape, rng):
    """Values in {±0.25, ±0.75, ...} up to ±1.75: at least 0.25 from every value of `_on_grid`."""
    return (rng.integers(-4, 4, size=shape) + 0.5) * 0.5


def _on_grid(shape, rng):
    """Values in {-2, -1.5, ..., 2} except 0 (so they can be divisors)."""
    v = rng.integers(1, 5, size=shape) * 0.5
    return np.where(rng.random(shape) < 0.5, -v, v)


def _leaves(rng, shapes, samplers):
    return tuple(mg.tensor(np.asarray(s(shape, rng) + rng.uniform(-0.05, 0.05, size=shape), dtype=np.float64),
                           requires_grad=True) for s, shape in zip(samplers, shapes))


BINARY = {
    "add": (lambda x, y: x + y, np.add),
    "sub": (lambda x, y: x - y, np.subtract),
    "mul": (lambda x, y: x * y, np.multiply),
    "div": (lambda x, y: x / y, np.divide),
    "maximum": (mg.maximum, np.maximum),
    "minimum": (mg.minimum, np.minimum),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=30, deadline=None)
@given(shapes=SHAPES2, seed=SEEDS)
def test_binary_broadcasting_gradcheck(name, shapes, seed):
    fn, ref = BINARY[name]
    rng = np.random.default_rng(seed)
    # x off the grid and y on it: no ties for maximum/minimum, no zero divisors
    x, y = _leaves(rng, shapes.input_shapes, [_off_grid, _on_grid])
    out = fn(x, y)
    assert out.shape == shapes.result_shape
    np.testing.assert_allclose(out.data.numpy(), ref(x.data.numpy(), y.data.numpy()), rtol=1e-12)
    assert gradcheck(fn, (x, y))
    assert x.grad is None  # gradcheck must not touch .grad


@settings(max_examples=30, deadline=None)
@given(shapes=SHAPES3, seed=SEEDS)
def test_where_broadcasting_gradcheck(shapes, seed):
    rng = np.random.default_rng(seed)
    sc, sx, sy = shapes.input_shapes
    cond = mg.tensor(rng.random(sc) < 0.5)
    x, y = _leaves(rng, (sx, sy), [_off_grid, _on_grid])
    out = mg.where(cond, x, y)
    assert out.shape == shapes.result_shape
    np.testing.assert_array_equal(out.data.numpy(), np.where(cond.data.numpy(), x.data.numpy(), y.data.numpy()))
    assert gradcheck(lambda a, b: mg.where(cond, a, b), (x, y))


@settings(max_examples=25, deadline=None)
@given(shapes=SHAPES2, seed=SEEDS)
def test_binary_broadcasting_gradgradcheck(shapes, seed):
    rng = np.random.default_rng(seed)
    x, y = _leaves(rng, shapes.input_shapes, [_off_grid, _on_grid])
    assert gradgradcheck(lambda a, b: a * b / (b * b + 1.0) - mg.maximum(a, b), (x, y))


# -- random compositions ------------------------------------------------------------------------------
# every op maps a (2, 3) tensor to a (2, 3) tensor and is smooth on the values it can receive
# (bounded inputs: each op's output stays within a few units, so no pole or kink is ever reached)
UNARY = {
    "sin": lambda x: x.sin(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "exp_tanh": lambda x: x.tanh().exp(),
    "log1p_sq": lambda x: (x * x).log1p(),
    "sqrt_1p_sq": lambda x: (x * x + 1.0).sqrt(),
    "scale": lambda x: x * 0.7 - 0.2,
    "rsub": lambda x: 1.0 - x,
    "pow3": lambda x: x ** 3 * 0.3,
    "erf": lambda x: x.erf(),
    "softmax0": lambda x: mg.softmax(x, 0),
    "softmax1": lambda x: mg.softmax(x, -1),
    "log_softmax1": lambda x: mg.log_softmax(x, 1) * 0.3,
    "center": lambda x: x - x.mean(1, keepdim=True),
    "normalize": lambda x: x / (x.norm(dim=1, keepdim=True) + 1.0),
    "lse_shift": lambda x: x - x.logsumexp(0, keepdim=True) * 0.5,
    "cumsum": lambda x: x.cumsum(1) * 0.5,
    "flip": lambda x: x.flip(1),
    "gather_repeat": lambda x: x[:, [2, 0, 2]],
    "transpose_back": lambda x: x.T.contiguous().T,
    "reshape_roundtrip": lambda x: x.reshape(3, 2).reshape(2, 3),
    "stack_mean": lambda x: mg.stack([x, x.flip(0)], 0).mean(0),
    "cat_narrow": lambda x: mg.cat([x, x * 2.0], 1).narrow(1, 2, 3),
    "var_keep": lambda x: x - x.var(1, keepdim=True),
    "matmul_sq": lambda x: (x @ x.T) @ x * 0.2,
    "amax_shift": lambda x: x - x.amax(1, keepdim=True) * 0.5,
}
BINARY_COMPOSE = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div_safe": lambda x, y: x / (y * y + 1.0),
    "where": lambda x, y: mg.where(y > 0, x, y * 0.5),
    "pow_pos": lambda x, y: (x * x + 0.5) ** (y * 0.5),
    "einsum_rows": lambda x, y: mg.einsum("ij,kj->ij", x, y.broadcast_to((2, 3))) * 0.5,
}
FINAL = {
    "sum": lambda x: x.sum(),
    "mean1": lambda x: x.mean(1),
    "prod0": lambda x: (x.tanh() + 2.0).prod(0),
    "lse": lambda x: x.logsumexp(1),
    "std": lambda x: (x * x + 0.1).std(0),
    "none": lambda x: x,
    "max_dim": lambda x: x.max(1).values,
}

STEP = st.one_of(st.tuples(st.just("u"), st.sampled_from(sorted(UNARY))),
                 st.tuples(st.just("b"), st.sampled_from(sorted(BINARY_COMPOSE))))


def _build(steps, final):
    def fn(x, y):
        h = x
        for kind, name in steps:
            h = UNARY[name](h) if kind == "u" else BINARY_COMPOSE[name](h, y)
        return FINAL[final](h)
    return fn


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=4), final=st.sampled_from(sorted(FINAL)),
       y_shape=st.sampled_from([(2, 3), (3,), (1, 3), ()]), seed=SEEDS)
def test_random_composition_gradcheck(steps, final, y_shape, seed):
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.uniform(-1, 1, (2, 3)), requires_grad=True)
    y = mg.tensor(rng.uniform(-1, 1, y_shape), requires_grad=True)
    fn = _build(steps, final)
    out = fn(x, y)
    assert np.isfinite(out.data.numpy()).all()
    if final == "max_dim":
        # max(dim) has a kink where two entries of a row are within the finite-difference step
        # (exact copies, as from x[:, [2, 0, 2]], move together and are harmless)
        for row in _build(steps, "none")(x, y).data.numpy():
            top = np.sort(row)[::-1]
            gaps = top[0] - top[1:]
            hypothesis.assume(np.all((gaps == 0) | (gaps > 1e-4)))
    assert gradcheck(fn, (x, y), atol=1e-5, rtol=1e-3)


@settings(max_examples=15, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=3), final=st.sampled_from(["sum", "mean1", "lse", "none"]),
       seed=SEEDS)
def test_random_composition_gradgradcheck(steps, final, seed):
    steps = [s for s in steps if s[1] not in ("amax_shift", "where")]  # piecewise: second order is 0 a.e.
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.uniform(-1, 1, (2, 3)), requires_grad=True)
    y = mg.tensor(rng.uniform(-1, 1, (3,)), requires_grad=True)
    assert gradgradcheck(_build(steps, final), (x, y), atol=1e-4, rtol=1e-3)
