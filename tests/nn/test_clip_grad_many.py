"""nn.utils.clip_grad_norm_ over many parameters (issue 36 item 4): PyTorch's numbers, and one pass
(the norms and the scaling are NumPy over the gradients' memory: no op, no graph per parameter)."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn


def _params(rng, n, dtype):
    shapes = [tuple(rng.integers(1, 6, rng.integers(1, 4))) for _ in range(n)]
    data = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [rng.standard_normal(s).astype(dtype) * rng.uniform(0.01, 3) for s in shapes]
    return data, grads


def _mg_params(data, grads):
    ps = []
    for d, g in zip(data, grads):
        p = nn.Parameter(mg.tensor(d))
        p.grad = mg.tensor(g.copy())
        ps.append(p)
    return ps


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-13), (np.float32, 3e-6)])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_200_parameters_match_torch(dtype, tol, norm_type):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    data, grads = _params(rng, 200, dtype)
    ps = _mg_params(data, grads)
    tps = [torch.nn.Parameter(torch.tensor(d)) for d in data]
    for p, g in zip(tps, grads):
        p.grad = torch.tensor(g.copy())
    max_norm = 1.5
    total = nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type=norm_type)
    assert total.dtype == mg.float64 if dtype == np.float64 else total.dtype == mg.float32
    # float32: the norms sum ~800 squares in another order (tolerance stated: 3e-6 relative)
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=tol)
    assert total.item() > max_norm          # so the gradients were scaled
    for p, tp in zip(ps, tps):
        assert p.grad.dtype == (mg.float64 if dtype == np.float64 else mg.float32)
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=tol, atol=0)
        assert p.grad.grad_fn is None and not p.grad.requires_grad
    # the clipped gradients have the norm max_norm (up to the 1e-6 in the coefficient)
    after = nn.utils.get_total_norm([p.grad for p in ps], norm_type)
    np.testing.assert_allclose(after.item(), max_norm, rtol=max(tol, 1e-6 / max_norm * 2))


def test_the_scaling_writes_each_gradient_in_place_and_bumps_its_version():
    rng = np.random.default_rng(1)
    data, grads = _params(rng, 200, np.float32)
    ps = _mg_params(data, grads)
    before = [(p.grad._data, p.grad._version) for p in ps]
    nn.utils.clip_grad_norm_(ps, 0.1)
    for p, (arr, v) in zip(ps, before):
        assert p.grad._data is arr                 # the same memory: no new tensor per parameter
        assert p.grad._version == v + 1            # as mul_ (a saved gradient is seen as modified)


def test_no_clipping_below_max_norm_and_nan_propagates():
    ps = _mg_params([np.zeros(3)] * 2, [np.array([0.1, 0.2, 0.2]), np.array([0.0, 0.0, 0.0])])
    total = nn.utils.clip_grad_norm_(ps, 10.0)
    np.testing.assert_allclose(total.item(), 0.3, rtol=1e-15)
    assert ps[0].grad.tolist() == [0.1, 0.2, 0.2]
    ps = _mg_params([np.zeros(2)], [np.array([np.nan, 1.0])])
    nn.utils.clip_grad_norm_(ps, 1.0)
    assert np.isnan(ps[0].grad.numpy()).all()
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(_mg_params([np.zeros(1)], [np.array([np.inf])]), 1.0, error_if_nonfinite=True)
