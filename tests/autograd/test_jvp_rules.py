"""The JVPs of every differentiable entry of the op registry (every sample), and the explicit JVP
rules (an op's `jvp` beside its `backward`) against the exact identity they replace:

- forward mode: J v against central finite differences and the transpose identity
  <u, J v> == <J^T u, v> (the cast's float32 round trip within float32's bound), and, where a rule
  is on the op's path, the rule's J v equals the double-VJP identity d/du <J^T u, v> (float64, 1e-10);
  (this is the only per-sample forward-mode check: test_forward_ad.py keeps the dual-tensor API);
- forward-over-reverse (what mg.func.hessian runs): the tangent of the gradient J^T u, which runs
  the JVP rules of the backward's own ops (ThresholdBackward, the conv/norm/pool backward
  Functions...), equals the identity path and central differences of the gradient;
- coverage: a Function class reached without a rule of its own declares so on itself
  (`jvp = NoRule(why)`: today embedding's backward and the in-place ufunc kernel).
(random compositions of registry ops in forward mode: test_forward_ad_hypothesis.py; all outputs
of the decompositions: test_forward_ad_decompositions.py.)
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import forward_ad as fwAD
from minigrad.autograd.function import NoRule
from minigrad.testing import op_db
from minigrad.testing.opinfo import make_args, rebuild

def _float_out(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, mg.Tensor) and o.dtype.kind == "f"]


def _entries():
    return [info for info in op_db if info.supports_grad and info.kind in ("op", "backward")]


class _Problem:
    """One sample as f(*xs) of its float inputs, with random tangents vs and cotangents us."""

    def __init__(self, info, s):
        self.sample = s
        self.info = info
        _, self.kwargs, leaves = make_args(s, lambda a, rg: mg.tensor(np.array(a)), True)
        floats = [j for j, a in enumerate(s.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        self.build = rebuild(s, leaves, lambda a: mg.tensor(np.array(a)))
        self.xs = [np.array(s.args[j]) for j in floats]
        rng = np.random.default_rng(11)
        self.vs = [rng.standard_normal(x.shape) for x in self.xs]
        base = _float_out(self.f(*[mg.tensor(x) for x in self.xs])) if self.xs else []
        self.us = [rng.standard_normal(o.shape) for o in base]
        self.ok = bool(self.xs) and bool(base) and all(o.numel() for o in base) and any(x.size for x in self.xs)
        self.fd_ok = "gradcheck" not in info.skips and not s.kink and all(o.dtype == mg.float64 for o in base)

    def f(self, *ys):
        return self.info.op(*self.build(*ys), **self.kwargs)

    def jvp(self, rules=True, log=None):
        fwAD._use_rules[0], fwAD._dispatch_log = rules, log
        try:
            with fwAD.dual_level():
                duals = [fwAD.make_dual(mg.tensor(x), mg.tensor(v)) for x, v in zip(self.xs, self.vs)]
                outs = _float_out(self.f(*duals))
                tans = [fwAD.unpack_dual(o).tangent for o in outs]
        finally:
            fwAD._use_rules[0], fwAD._dispatch_log = True, None
        return [np.zeros(o.shape) if t is None else t.detach().numpy() for o, t in zip(outs, tans)]

    def vjp(self, xs, create_graph=False):
        """J(xs)^T u as arrays-or-tensors (None for an input the outputs do not reach)."""
        ls = [x if isinstance(x, mg.Tensor) else mg.tensor(x, requires_grad=True) for x in xs]
        outs = _float_out(self.f(*ls))
        diff = [(o, mg.tensor(u)) for o, u in zip(outs, self.us) if o.requires_grad]
        if not diff:
            return None
        return mg.autograd.grad([o for o, _ in diff], ls, [u for _, u in diff], create_graph=create_graph,
                                allow_unused=True)

    def hvp(self, rules=True, log=None):
        """The tangent of J^T u along v: forward-over-reverse (None when nothing is differentiable)."""
        fwAD._use_rules[0], fwAD._dispatch_log = rules, log
        try:
            with fwAD.dual_level():
                leaves = []
                for x, v in zip(self.xs, self.vs):
                    d = fwAD.make_dual(mg.tensor(x), mg.tensor(v))
                    leaf = d.detach().requires_grad_(True)
                    leaf._fw = dict(d._fw)
                    leaves.append(leaf)
                gs = self.vjp(leaves, create_graph=True)
                if gs is None:
                    return None
                tans = [None if g is None else fwAD.unpack_dual(g).tangent for g in gs]
        finally:
            fwAD._use_rules[0], fwAD._dispatch_log = True, None
        return [np.zeros(x.shape) if t is None else t.detach().numpy() for x, t in zip(self.xs, tans)]


def _close(a, b, what, info):
    for p, q in zip(a, b):
        tol = 1e-10 if p.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(p, q, rtol=tol, atol=tol, err_msg=f"{info}: {what}")


def _check_jvp(pb, info, log):
    """J v: the explicit rule vs the double-VJP identity, central differences, <u, Jv> = <J^T u, v>.
    log collects (Function class, has a rule) of every node forward mode ran."""
    jv = pb.jvp(True, log)
    padding = "padding_idx" in info.full_name  # PyTorch's JVP keeps the padding row, its backward drops it
    if any(has for _, has in log) and not padding:  # (an op with no rule on its path is the identity)
        _close(jv, pb.jvp(False), "explicit JVP vs the double-VJP identity", info)
    if pb.fd_ok:
        eps = 1e-6
        plus = _float_out(pb.f(*[mg.tensor(x + eps * v) for x, v in zip(pb.xs, pb.vs)]))
        minus = _float_out(pb.f(*[mg.tensor(x - eps * v) for x, v in zip(pb.xs, pb.vs)]))
        for j, p, m in zip(jv, plus, minus):
            np.testing.assert_allclose(j, (p.numpy() - m.numpy()) / (2 * eps), rtol=1e-4, atol=1e-6,
                                       err_msg=f"{info}: JVP vs central differences")
    gs = pb.vjp(pb.xs)
    if gs is None or padding or not all(j.dtype == np.float64 for j in jv):
        return
    outs = _float_out(pb.f(*[mg.tensor(x, requires_grad=True) for x in pb.xs]))
    lhs = sum(np.sum(u * j) for o, u, j in zip(outs, pb.us, jv) if o.requires_grad)
    rhs = sum(0.0 if g is None else np.sum(g.numpy() * v) for g, v in zip(gs, pb.vs))
    # exact to float64 rounding, except through the cast's float32 round trip (u and v are each
    # rounded to float32 on one side of the identity: float32's epsilon times the terms' size)
    tol = 1e-9 if "gradcheck" not in info.skips else 4 * float(np.finfo(np.float32).eps) * sum(
        np.abs(u).sum() for o, u in zip(outs, pb.us) if o.requires_grad) * max(np.abs(v).max() for v in pb.vs)
    assert abs(lhs - rhs) <= tol * max(1.0, abs(lhs)), f"{info}: <u, Jv> = {lhs} but <J^T u, v> = {rhs}"


def _check_forward_over_reverse(pb, info, log):
    """The tangent of J^T u along v with the rules vs the identity and central differences; False
    when there is nothing to check (no differentiable output, or no explicit rule on the path)."""
    mine = []
    hv = pb.hvp(True, mine)
    log += mine
    if hv is None or not any(has for _, has in mine):
        return False
    if "padding_idx" not in info.full_name:
        _close(hv, pb.hvp(False), "forward-over-reverse with the rules vs the identity", info)
    if pb.fd_ok:
        eps = 1e-6
        gp = pb.vjp([x + eps * v for x, v in zip(pb.xs, pb.vs)])
        gm = pb.vjp([x - eps * v for x, v in zip(pb.xs, pb.vs)])
        for h, p, m, x in zip(hv, gp, gm, pb.xs):
            fd = np.zeros(x.shape) if p is None else (p.numpy() - m.numpy()) / (2 * eps)
            np.testing.assert_allclose(h, fd, rtol=1e-4, atol=1e-6,
                                       err_msg=f"{info}: tangent of the gradient vs central differences")
    return True


@pytest.mark.parametrize("info", _entries(), ids=str)
def test_jvp_and_forward_over_reverse_rules(info):
    """Every sample: forward mode (J v) against the double-VJP identity, central differences and
    the transpose identity; for a twice-differentiable op, forward-over-reverse against the identity
    path and differences of the gradient; and rule coverage: a Function class the op reaches
    (forward, and in its backward) without a rule of its own declares that on the class
    (`jvp = NoRule(why)`), so the gap is visible on the op. (Before 2026-12-06: two tests with one
    item per sample, test_jvp_rule_matches_identity_differences_and_transpose and
    test_forward_over_reverse_rules_match_identity_and_differences, and test_rule_coverage running
    both again over the whole registry; the same checks, per op.)"""
    ran, log = False, []
    for s in info.samples():
        pb = _Problem(info, s)
        if not pb.xs:
            continue
        if not pb.ok:  # no non-empty float output: only the coverage (the rules forward mode reaches)
            pb.jvp(True, log)
            if info.supports_gradgrad:
                pb.hvp(True, log)
            continue
        ran = True
        _check_jvp(pb, info, log)
        if info.supports_gradgrad:
            _check_forward_over_reverse(pb, info, log)
    undeclared = sorted({cls.__name__ for cls, has in log
                         if not has and type(getattr(cls, "jvp", None)) is not NoRule})
    assert not undeclared, f"{info}: Function classes without a jvp rule or a NoRule declaration: {undeclared}"
    if not ran:
        pytest.skip(f"{info}: no sample with a float input and a non-empty float output")
