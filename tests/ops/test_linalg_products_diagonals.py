"""diagonal / diag_embed / diag / trace / tensordot / kron / cross / cdist / einsum with '...':
forward against NumPy or PyTorch, gradcheck and gradgradcheck, view semantics and errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck


def leaf(shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


CASES = [
    ("diagonal", lambda x: x.diagonal(), [(3, 4)]),
    ("diagonal_offset_batch", lambda x: mg.diagonal(x, 1, 0, 2), [(3, 2, 4)]),
    ("diagonal_neg", lambda x: mg.diagonal(x, -1), [(4, 3)]),
    ("diag_embed", lambda x: mg.diag_embed(x), [(2, 3)]),
    ("diag_embed_offset", lambda x: mg.diag_embed(x, 1, 0, 2), [(2, 3)]),
    ("diag_vec", lambda x: mg.diag(x, -1), [(3,)]),
    ("diag_mat", lambda x: mg.diag(x, 1), [(3, 3)]),
    ("trace", mg.trace, [(3, 4)]),
    ("tensordot_int", lambda a, b: mg.tensordot(a, b, 2), [(2, 3, 4), (3, 4, 2)]),
    ("tensordot_lists", lambda a, b: mg.tensordot(a, b, ([0, 2], [1, 0])), [(2, 3, 4), (4, 2, 5)]),
    ("kron", mg.kron, [(2, 3), (3, 2)]),
    ("kron_mixed_ndim", mg.kron, [(2,), (2, 3)]),
    ("cross", lambda a, b: mg.cross(a, b, dim=1), [(2, 3), (2, 3)]),
    ("cross_broadcast", lambda a, b: mg.linalg.cross(a, b), [(4, 3), (1, 3)]),
    ("cdist_2", mg.cdist, [(4, 3), (5, 3)]),
    ("cdist_1_batch", lambda a, b: mg.cdist(a, b, 1.0), [(2, 3, 3), (2, 4, 3)]),
    ("cdist_3", lambda a, b: mg.cdist(a, b, 3.0), [(3, 2), (2, 2)]),
    ("einsum_ellipsis", lambda a, b: mg.einsum("...ij,jk->...ik", a, b), [(2, 3, 4), (4, 2)]),
    ("einsum_ellipsis_broadcast", lambda a, b: mg.einsum("...ij,...jk", a, b), [(2, 3, 4), (1, 4, 2)]),
    ("einsum_ellipsis_trace", lambda a: mg.einsum("...ii->...", a), [(2, 3, 3)]),
]


@pytest.mark.parametrize("name,f,shapes", CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, f, shapes):
    xs = [leaf(s, i) for i, s in enumerate(shapes)]
    assert gradcheck(f, xs)
    assert gradgradcheck(f, xs)


@pytest.mark.parametrize("name,f,shapes", CASES, ids=[c[0] for c in CASES])
def test_torch_parity(name, f, shapes):
    torch = pytest.importorskip("torch")
    arrays = [np.random.default_rng(i).standard_normal(s) for i, s in enumerate(shapes)]
    ours = f(*[mg.tensor(a) for a in arrays])
    tf = {"diagonal": lambda x: x.diagonal(), "diagonal_offset_batch": lambda x: torch.diagonal(x, 1, 0, 2),
          "diagonal_neg": lambda x: torch.diagonal(x, -1), "diag_embed": torch.diag_embed,
          "diag_embed_offset": lambda x: torch.diag_embed(x, 1, 0, 2), "diag_vec": lambda x: torch.diag(x, -1),
          "diag_mat": lambda x: torch.diag(x, 1), "trace": torch.trace,
          "tensordot_int": lambda a, b: torch.tensordot(a, b, 2),
          "tensordot_lists": lambda a, b: torch.tensordot(a, b, ([0, 2], [1, 0])), "kron": torch.kron,
          "kron_mixed_ndim": torch.kron, "cross": lambda a, b: torch.cross(a, b, dim=1),
          "cross_broadcast": lambda a, b: torch.linalg.cross(a, b), "cdist_2": torch.cdist,
          "cdist_1_batch": lambda a, b: torch.cdist(a, b, 1.0), "cdist_3": lambda a, b: torch.cdist(a, b, 3.0),
          "einsum_ellipsis": lambda a, b: torch.einsum("...ij,jk->...ik", a, b),
          "einsum_ellipsis_broadcast": lambda a, b: torch.einsum("...ij,...jk", a, b),
          "einsum_ellipsis_trace": lambda a: torch.einsum("...ii->...", a)}[name]
    theirs = tf(*[torch.tensor(a) for a in arrays])
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_diagonal_is_a_writable_view():
    x = mg.zeros(3, 3)
    x.diagonal().fill_(1.0)
    np.testing.assert_array_equal(x.numpy(), np.eye(3))
    # in place through a diagonal view of a tensor in the graph: refused clearly (not silently wrong)
    y = leaf((3, 3)) * 1.0
    with pytest.raises(RuntimeError, match="in-place modification of this view"):
        y.diagonal().mul_(2.0)


def test_cdist_gradient_at_zero_distance_is_zero_as_pytorch():
    a = leaf((2, 3))
    d = mg.cdist(a, a.detach())
    d.sum().backward()
    assert np.isfinite(a.grad.numpy()).all()


def test_errors():
    with pytest.raises(RuntimeError, match="diagonal: dimensions cannot be identical"):
        mg.diagonal(mg.ones(2, 2), 0, 1, 1)
    with pytest.raises(RuntimeError, match="trace: expected a matrix"):
        mg.trace(mg.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="tensordot: contracted dimensions need to match"):
        mg.tensordot(mg.ones(2, 3), mg.ones(2, 3), 1)
    with pytest.raises(RuntimeError, match="linalg.cross: inputs dimension -1 must have length 3"):
        mg.linalg.cross(mg.ones(2, 4), mg.ones(2, 4))
    with pytest.raises(RuntimeError, match="cdist: |X1 and X2 must have the same number of columns"):
        mg.cdist(mg.ones(2, 3), mg.ones(2, 4))


def test_trace_forward_gradient_and_method():
    a = np.random.default_rng(3).standard_normal((3, 5))
    x = mg.tensor(a, requires_grad=True)
    for t in (mg.trace(x), mg.trace(input=x), x.trace()):
        assert t.shape == ()
        np.testing.assert_allclose(t.item(), np.trace(a))
    mg.trace(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3, 5))
    assert mg.trace(mg.ones(0, 3)).item() == 0.0


@pytest.mark.parametrize("rank", [0, 1, 3])
def test_trace_needs_a_matrix(rank):
    with pytest.raises(RuntimeError, match=f"^trace: expected a matrix, but got tensor with dim {rank}"):
        mg.trace(mg.ones(*[2] * rank))


def test_trace_dtypes_as_torch():
    torch = pytest.importorskip("torch")
    for name in ("int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"):
        a = np.arange(6).reshape(2, 3).astype(name)
        ours, theirs = mg.trace(mg.tensor(a)), torch.trace(torch.tensor(a))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], name
        assert ours.item() == theirs.item()
    with pytest.raises(NotImplementedError) as ours:
        mg.trace(mg.ones(2, 2, dtype=mg.bool))
    with pytest.raises(NotImplementedError) as theirs:
        torch.trace(torch.ones(2, 2, dtype=torch.bool))
    assert str(ours.value) == str(theirs.value)
