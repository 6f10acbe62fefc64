"""nn.init: gains, fans, the distributions' bounds and moments, in-place semantics, generators, errors."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.init as init


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1
    assert init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == pytest.approx(0.75)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "a")


def test_fans():
    assert init._calculate_fan_in_and_fan_out(mg.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(mg.empty(8, 4, 3, 2)) == (24, 48)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(mg.empty(4))


def test_fill_functions_in_place_on_a_leaf_that_requires_grad():
    t = mg.empty(3, 4, requires_grad=True)
    arr = t.data.numpy()
    assert init.constant_(t, 2.5) is t
    assert (t.detach().numpy() == 2.5).all() and t.grad_fn is None and t.requires_grad
    assert np.shares_memory(arr, t.data.numpy()) or (arr == 2.5).all()
    assert (init.ones_(t).detach().numpy() == 1).all()
    assert (init.zeros_(t).detach().numpy() == 0).all()
    assert t.dtype == mg.float32


def test_uniform_and_normal_moments():
    t = mg.empty(200, 100)
    init.uniform_(t, -2.0, 3.0)
    a = t.numpy()
    assert a.min() >= -2.0 and a.max() <= 3.0 and abs(a.mean() - 0.5) < 0.05
    init.normal_(t, 1.0, 0.5)
    a = t.numpy()
    assert abs(a.mean() - 1.0) < 0.02 and abs(a.std() - 0.5) < 0.02
    init.trunc_normal_(t, 0.0, 1.0, -0.5, 0.5)
    a = t.numpy()
    assert a.min() >= -0.5 and a.max() <= 0.5 and a.std() > 0.2


def test_generator_reproducibility():
    a = init.normal_(mg.empty(4, 4), generator=mg.Generator().manual_seed(5)).numpy()
    b = init.normal_(mg.empty(4, 4), generator=mg.Generator().manual_seed(5)).numpy()
    c = init.normal_(mg.empty(4, 4), generator=mg.Generator().manual_seed(6)).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    mg.manual_seed(1)
    d = init.kaiming_uniform_(mg.empty(4, 4)).numpy()
    mg.manual_seed(1)
    np.testing.assert_array_equal(d, init.kaiming_uniform_(mg.empty(4, 4)).numpy())


def test_xavier():
    t = mg.empty(300, 200)
    bound = math.sqrt(6 / 500) * 2.0
    a = init.xavier_uniform_(t, gain=2.0).numpy()
    assert a.max() <= bound and a.min() >= -bound and a.max() > 0.95 * bound
    a = init.xavier_normal_(t).numpy()
    assert abs(a.std() - math.sqrt(2 / 500)) < 0.003


def test_kaiming():
    w = mg.empty(64, 32, 3, 3)  # fan_in 288, fan_out 576
    bound = math.sqrt(3) * init.calculate_gain("leaky_relu", math.sqrt(5)) / math.sqrt(288)
    a = init.kaiming_uniform_(w, a=math.sqrt(5)).numpy()  # PyTorch's Linear/Conv default
    assert a.max() <= bound and a.min() >= -bound and a.max() > 0.95 * bound
    assert bound == pytest.approx(1 / math.sqrt(288))  # gain sqrt(2 / 6) makes it 1/sqrt(fan_in)
    a = init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu").numpy()
    assert abs(a.std() - math.sqrt(2 / 576)) < 0.002
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.kaiming_normal_(mg.empty(5))


def test_eye_and_orthogonal():
    e = init.eye_(mg.empty(3, 5)).numpy()
    np.testing.assert_array_equal(e, np.eye(3, 5))
    q = init.orthogonal_(mg.empty(4, 6), gain=2.0).numpy().astype(np.float64)
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(4), atol=1e-5)
    with pytest.raises(ValueError, match="2 dimensions"):
        init.eye_(mg.empty(2, 2, 2))
