"""Numerics at the edges: log_softmax/softmax/logsumexp/cross_entropy/logsigmoid at |x| up
to 1e8, and logsigmoid's gradient at 0 (PyTorch's values; parity where torch is installed)."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

SCALES = [1e4, 1e5, 1e6, 1e7, 1e8]


def test_logsigmoid_gradient_at_zero_is_one_half():
    x = mg.tensor([0.0, -3.0, 3.0], requires_grad=True)
    F.logsigmoid(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 1 / (1 + math.exp(-3)), 1 / (1 + math.exp(3))], rtol=1e-6)
    assert F.logsigmoid(x).grad_fn.name() == "LogSigmoidBackward0"


def test_logsigmoid_gradcheck_and_gradgradcheck():
    x = mg.tensor(np.array([-30.0, -2.0, -0.3, 0.0, 0.4, 2.5, 30.0]), requires_grad=True)
    assert gradcheck(F.logsigmoid, (x,))
    assert gradgradcheck(F.logsigmoid, (x,))


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("dtype", [mg.float32, mg.float64])
def test_log_softmax_of_equal_large_values(scale, dtype):
    for sign in (1, -1):
        x = mg.full((3, 4), sign * scale, dtype=dtype)
        logp = mg.log_softmax(x, 1)
        np.testing.assert_allclose(logp.numpy(), -math.log(4), rtol=1e-6)
        np.testing.assert_allclose(mg.softmax(x, 1).sum(1).numpy(), 1.0, rtol=1e-6)
        np.testing.assert_allclose(logp.exp().sum(1).numpy(), 1.0, rtol=1e-6)
        assert logp.dtype == dtype


def test_log_softmax_keeps_the_small_differences_of_large_logits():
    x = mg.tensor([[1e7, 1e7 + 1.0, 1e7 + 2.0]], dtype=mg.float32)  # exactly representable
    want = np.array([0.0, 1.0, 2.0]) - np.log(np.exp([0.0, 1.0, 2.0]).sum())
    np.testing.assert_allclose(mg.log_softmax(x, 1).numpy()[0], want, rtol=1e-6)


def _torch_cases():
    rng = np.random.default_rng(7)
    for scale in SCALES:
        for sign in (1, -1):
            yield f"equal{sign * scale:g}", np.full((2, 5), sign * scale)
            yield f"spread{sign * scale:g}", sign * scale + rng.integers(-3, 4, size=(2, 5)).astype(np.float64)
            yield f"mixed{sign * scale:g}", rng.choice([-scale, 0.0, scale], size=(2, 5)) * sign


CASES = list(_torch_cases())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,x", CASES, ids=[c[0] for c in CASES])
def test_softmax_family_at_extremes_matches_torch(name, x, dtype):
    torch = pytest.importorskip("torch")
    x = x.astype(dtype)
    target = np.array([1, 3])
    fns = {
        "logsumexp": (lambda t: mg.logsumexp(t, 1), lambda t: torch.logsumexp(t, 1)),
        "softmax": (lambda t: mg.softmax(t, 1), lambda t: torch.softmax(t, 1)),
        "log_softmax": (lambda t: mg.log_softmax(t, 1), lambda t: torch.log_softmax(t, 1)),
        "cross_entropy": (lambda t: F.cross_entropy(t, mg.tensor(target)),
                          lambda t: torch.nn.functional.cross_entropy(t, torch.tensor(target))),
        "logsigmoid": (F.logsigmoid, torch.nn.functional.logsigmoid),
    }
    for op, (ours, theirs) in fns.items():
        a = mg.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        out, ref = ours(a), theirs(b)
        w = np.random.default_rng(0).standard_normal(ref.shape).astype(dtype)  # a non-uniform upstream gradient
        (out * mg.tensor(w)).sum().backward()
        (ref * torch.tensor(w)).sum().backward()
        assert out.dtype == a.dtype, op
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-6, err_msg=op)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=op)
