"""nn modules (activations, distances, losses, GroupNorm/InstanceNorm, Bilinear,
PixelShuffle) against torch.nn with the same parameters: outputs, input and parameter gradients,
buffers and reprs."""
import numpy as np
import pytest

import minigrad as mg

nn = mg.nn

CASES = [
    ("CELU", (0.5,), [(3, 4)]), ("SELU", (), [(3, 4)]), ("Hardsigmoid", (), [(3, 4)]), ("Hardswish", (), [(3, 4)]),
    ("Mish", (), [(3, 4)]), ("Softsign", (), [(3, 4)]), ("Tanhshrink", (), [(3, 4)]), ("GLU", (1,), [(3, 4)]),
    ("CosineSimilarity", (1,), [(3, 4), (3, 4)]), ("PairwiseDistance", (), [(3, 4), (3, 4)]),
    ("TripletMarginLoss", (), [(3, 4), (3, 4), (3, 4)]),
    ("PixelShuffle", (2,), [(1, 8, 2, 3)]), ("PixelUnshuffle", (2,), [(1, 2, 4, 6)]),
    ("GroupNorm", (2, 4), [(2, 4, 3, 3)]), ("InstanceNorm1d", (3,), [(2, 3, 5)]),
    ("InstanceNorm2d", (3,), [(2, 3, 4, 4)]), ("Bilinear", (3, 4, 2), [(5, 3), (5, 4)]),
]


@pytest.mark.parametrize("name,args,shapes", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, args, shapes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = getattr(nn, name)(*args).double() if hasattr(nn.Module, "double") else getattr(nn, name)(*args)
    theirs = getattr(torch.nn, name)(*args).double()
    with torch.no_grad():
        for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n == tn
            tp.copy_(torch.tensor(rng.standard_normal(tuple(tp.shape))))
            p.data.copy_(mg.tensor(tp.numpy()))
    xs = [mg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = ours(*xs), theirs(*ts)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    if name == "Hardsigmoid":  # PyTorch's backward uses 1/6 in float32 (see the registry entry's skip)
        return
    w = rng.standard_normal(tuple(tout.shape))
    (out * mg.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-10)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-8, atol=1e-10)
    assert repr(ours) == repr(theirs)


def test_losses_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), np.abs(rng.standard_normal((3, 4)))
    for kw in ({"reduction": "batchmean"}, {"reduction": "sum", "log_target": True}):
        ours = nn.KLDivLoss(**kw)(mg.tensor(a), mg.tensor(b)).item()
        theirs = torch.nn.KLDivLoss(**kw)(torch.tensor(a), torch.tensor(b)).item()
        assert abs(ours - theirs) < 1e-12
    y = np.array([1.0, -1.0, 1.0])
    x1, x2 = rng.standard_normal(3), rng.standard_normal(3)
    ours = nn.MarginRankingLoss(0.3)(mg.tensor(x1), mg.tensor(x2), mg.tensor(y)).item()
    theirs = torch.nn.MarginRankingLoss(0.3)(torch.tensor(x1), torch.tensor(x2), torch.tensor(y)).item()
    assert abs(ours - theirs) < 1e-12


def test_instance_norm_running_stats_and_errors():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((4, 3, 5, 5))
    ours, theirs = nn.InstanceNorm2d(3, track_running_stats=True).double(), torch.nn.InstanceNorm2d(3, track_running_stats=True).double()
    ours(mg.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-10)
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="glu: Halving dimension must be even"):
        nn.GLU(1)(mg.ones(2, 3))
