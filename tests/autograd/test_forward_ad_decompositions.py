"""The JVP rules of the decompositions on every output (the registry's entries see one output each:
R of qr, S of svd, the eigenvalues of eigh): each rule against the double-VJP identity it replaces
(float64, 1e-10), the transpose identity <u, J v> == <J^T u, v> over all outputs, and central
differences where the output is unique (Q and R, L, det at a singular matrix, solve)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import forward_ad as fwAD

rng = np.random.default_rng(7)


def _spd(n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _sym(a):
    return 0.5 * (a + np.swapaxes(a, -1, -2))


SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2: det = 0

CASES = {
    # name: (f(*tensors) -> tuple of float outputs, inputs, tangent maker, finite differences valid)
    "inv": (lambda A: (mg.linalg.inv(A),), [rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)], None, True),
    "det": (lambda A: (mg.linalg.det(A),), [rng.standard_normal((2, 3, 3))], None, True),
    "det_singular": (lambda A: (mg.linalg.det(A),), [SINGULAR], None, True),
    "slogdet": (lambda A: (mg.linalg.slogdet(A).logabsdet,), [rng.standard_normal((3, 3)) + 3 * np.eye(3)], None, True),
    "solve": (lambda A, B: (mg.linalg.solve(A, B),), [rng.standard_normal((3, 3)) + 3 * np.eye(3),
                                                      rng.standard_normal((3, 2))], None, True),
    "solve_vector": (lambda A, b: (mg.linalg.solve(A, b),), [rng.standard_normal((2, 3, 3)) + 3 * np.eye(3),
                                                             rng.standard_normal((2, 3))], None, True),
    "cholesky": (lambda A: (mg.linalg.cholesky(A),), [_spd(3, (2,))], _sym, True),
    "cholesky_upper": (lambda A: (mg.linalg.cholesky(A, upper=True),), [_spd(4)], _sym, True),
    "qr_tall": (lambda A: tuple(mg.linalg.qr(A)), [rng.standard_normal((5, 3))], None, True),
    "qr_square": (lambda A: tuple(mg.linalg.qr(A)), [rng.standard_normal((2, 3, 3))], None, True),
    "qr_wide": (lambda A: tuple(mg.linalg.qr(A)), [rng.standard_normal((3, 5))], None, True),
    # eigenvectors and singular vectors: unique up to sign only, so no finite differences
    "eigh": (lambda A: tuple(mg.linalg.eigh(A)), [_spd(4, (2,))], _sym, False),
    "svd_tall": (lambda A: tuple(mg.linalg.svd(A, full_matrices=False)), [rng.standard_normal((5, 3))], None, False),
    "svd_wide": (lambda A: tuple(mg.linalg.svd(A, full_matrices=False)), [rng.standard_normal((2, 3, 5))], None, False),
    "svd_square_full": (lambda A: tuple(mg.linalg.svd(A)), [rng.standard_normal((4, 4))], None, False),
}


def _jvp(f, xs, vs, rules):
    fwAD._use_rules[0] = rules
    try:
        with fwAD.dual_level():
            outs = f(*[fwAD.make_dual(mg.tensor(x), mg.tensor(v)) for x, v in zip(xs, vs)])
            tans = [fwAD.unpack_dual(o).tangent for o in outs]
    finally:
        fwAD._use_rules[0] = True
    return [np.zeros(o.shape) if t is None else t.numpy() for o, t in zip(outs, tans)]


@pytest.mark.parametrize("name", list(CASES))
def test_decomposition_jvp_rules_on_every_output(name):
    f, xs, tangent, fd = CASES[name]
    vs = [rng.standard_normal(x.shape) for x in xs]
    if tangent is not None:
        vs = [tangent(v) for v in vs]
    log = []
    fwAD._dispatch_log = log
    try:
        jv = _jvp(f, xs, vs, True)
    finally:
        fwAD._dispatch_log = None
    assert any(has and cls.__module__.endswith("decomposition") for cls, has in log), log
    for a, b in zip(jv, _jvp(f, xs, vs, False)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=f"{name}: rule vs identity")
    # transpose identity over all outputs: <u, J v> == <J^T u, v>
    leaves = [mg.tensor(x, requires_grad=True) for x in xs]
    outs = f(*leaves)
    us = [rng.standard_normal(o.shape) for o in outs]
    gs = mg.autograd.grad(list(outs), leaves, [mg.tensor(u) for u in us], allow_unused=True)
    lhs = sum(np.sum(u * j) for u, j in zip(us, jv))
    rhs = sum(np.sum(g.numpy() * v) for g, v in zip(gs, vs) if g is not None)
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs)), (name, lhs, rhs)
    if fd:
        eps = 1e-6
        plus = f(*[mg.tensor(x + eps * v) for x, v in zip(xs, vs)])
        minus = f(*[mg.tensor(x - eps * v) for x, v in zip(xs, vs)])
        for j, p, m in zip(jv, plus, minus):
            np.testing.assert_allclose(j, (p.numpy() - m.numpy()) / (2 * eps), rtol=1e-5, atol=1e-7,
                                       err_msg=f"{name}: JVP vs central differences")


def test_svd_jvp_with_full_matrices_of_a_non_square_matrix_raises_naming_the_op():
    with fwAD.dual_level():
        A = fwAD.make_dual(mg.tensor(rng.standard_normal((4, 3))), mg.tensor(rng.standard_normal((4, 3))))
        with pytest.raises(RuntimeError, match="linalg.svd.*full_matrices"):
            mg.linalg.svd(A, full_matrices=True)
