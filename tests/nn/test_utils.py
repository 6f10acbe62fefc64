"""nn.utils: gradient clipping and parameter/vector conversion."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def _params_with_grads(grads, dtype=np.float64):
    params = []
    for g in grads:
        g = np.asarray(g, dtype=dtype)
        p = nn.Parameter(mg.zeros(*g.shape, dtype=dtype))
        p.grad = mg.tensor(g.copy(), dtype=dtype)
        params.append(p)
    return params


def test_attribute_path():
    assert mg.nn.utils.clip_grad_norm_ is nn.utils.clip_grad_norm_
    from minigrad.nn.utils import clip_grad_value_, parameters_to_vector, vector_to_parameters  # noqa: F401


def test_clip_grad_norm_scales_when_above():
    grads = [[3.0, 0.0], [[0.0, 4.0]]]  # total 2-norm 5
    params = _params_with_grads(grads)
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    assert isinstance(total, mg.Tensor) and total.ndim == 0
    assert total.item() == pytest.approx(5.0)
    coef = 1.0 / (5.0 + 1e-6)
    np.testing.assert_allclose(params[0].grad.data.numpy(), [3.0 * coef, 0.0], rtol=1e-12)
    np.testing.assert_allclose(params[1].grad.data.numpy(), [[0.0, 4.0 * coef]], rtol=1e-12)
    new_norm = math.sqrt(sum(float((p.grad.data.numpy() ** 2).sum()) for p in params))
    assert new_norm == pytest.approx(1.0, abs=1e-6)


def test_clip_grad_norm_leaves_small_grads():
    params = _params_with_grads([[0.3, 0.4]])
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    assert total.item() == pytest.approx(0.5)
    np.testing.assert_allclose(params[0].grad.data.numpy(), [0.3, 0.4], rtol=1e-12)


def test_clip_grad_norm_inf_and_p_norms():
    params = _params_with_grads([[1.0, -7.0], [2.0]])
    total = nn.utils.clip_grad_norm_(params, max_norm=3.5, norm_type=math.inf)
    assert total.item() == pytest.approx(7.0)
    np.testing.assert_allclose(params[0].grad.data.numpy(), np.array([1.0, -7.0]) * 3.5 / (7.0 + 1e-6))
    params = _params_with_grads([[1.0, -2.0], [3.0]])
    total = nn.utils.clip_grad_norm_(params, max_norm=100.0, norm_type=1)
    assert total.item() == pytest.approx(6.0)
    total = nn.utils.clip_grad_norm_(params, max_norm=100.0, norm_type=3)
    assert total.item() == pytest.approx((1 + 8 + 27) ** (1 / 3))


def test_clip_grad_norm_skips_params_without_grad_and_accepts_single_tensor():
    p_none = nn.Parameter(mg.zeros(2))
    (p,) = _params_with_grads([[6.0, 8.0]])
    total = nn.utils.clip_grad_norm_([p_none, p], 5.0)
    assert total.item() == pytest.approx(10.0) and p_none.grad is None
    (q,) = _params_with_grads([[6.0, 8.0]])
    assert nn.utils.clip_grad_norm_(q, 5.0).item() == pytest.approx(10.0)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite():
    params = _params_with_grads([[np.inf, 1.0]])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    params = _params_with_grads([[np.nan, 1.0]])
    total = nn.utils.clip_grad_norm_(params, 1.0)
    assert math.isnan(total.item())


def test_clip_grad_norm_keeps_grad_objects_and_dtype():
    params = _params_with_grads([[30.0, 40.0]], dtype=np.float32)
    g = params[0].grad
    total = nn.utils.clip_grad_norm_(params, 1.0)
    assert params[0].grad is g and g.dtype == mg.float32 and total.dtype == mg.float32


def test_clip_grad_norm_after_real_backward():
    w = nn.Parameter(mg.tensor([1.0, 2.0], dtype=mg.float64))
    (w * mg.tensor([30.0, 40.0], dtype=mg.float64)).sum().backward()
    total = nn.utils.clip_grad_norm_([w], 10.0)
    assert total.item() == pytest.approx(50.0)
    np.testing.assert_allclose(w.grad.data.numpy(), [6.0, 8.0], rtol=1e-6)


def test_clip_grad_value():
    params = _params_with_grads([[-3.0, 0.5, 2.0]])
    assert nn.utils.clip_grad_value_(params, 1.0) is None
    np.testing.assert_allclose(params[0].grad.data.numpy(), [-1.0, 0.5, 1.0])


def test_parameters_to_vector_and_back():
    a = nn.Parameter(mg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    b = nn.Parameter(mg.tensor([5.0]))
    vec = nn.utils.parameters_to_vector([a, b])
    np.testing.assert_allclose(vec.data.numpy(), [1, 2, 3, 4, 5])
    assert vec.shape == (5,)
    (vec * mg.arange(5).float()).sum().backward()  # differentiable
    np.testing.assert_allclose(a.grad.data.numpy(), [[0, 1], [2, 3]])
    nn.utils.vector_to_parameters(mg.tensor([9.0, 8.0, 7.0, 6.0, 5.0]), [a, b])
    np.testing.assert_allclose(a.data.numpy(), [[9, 8], [7, 6]])
    assert a.shape == (2, 2) and isinstance(a, nn.Parameter)
    np.testing.assert_allclose(b.data.numpy(), [5.0])


def test_vector_to_parameters_errors():
    a = nn.Parameter(mg.zeros(3))
    with pytest.raises(TypeError, match="expected Tensor"):
        nn.utils.vector_to_parameters([1.0, 2.0, 3.0], [a])
    with pytest.raises(ValueError):
        nn.utils.vector_to_parameters(mg.zeros(4), [a])
