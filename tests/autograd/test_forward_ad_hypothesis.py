"""Hypothesis-generated chains of registry ops checked in forward mode (float64).

A chain is a list of (registry entry, sample) links. Link k runs the entry's op on its sample's
arguments, with its first float argument moved by the previous link's output:
`a_k + 0.05 * tanh(resize(h_{k-1}))` (resize: flatten, repeat or cut to a_k's size, reshape; all
registry ops again), so the tangent of every earlier link flows through every later one. Every float
argument of every link is a leaf with its own random tangent. The chain's JVP (the explicit rules)
must equal

- central differences of the whole chain along the tangents,
- the double-VJP identity (the rules switched off), 1e-10,
- the transpose identity <u, J v> == <J^T u, v> with the reverse-mode gradient.

The samples keep at least 0.15 away from kinks and poles (minigrad.testing.opinfo.sample), so the
0.05 moves never cross one; entries whose samples sit on kinks, or which skip gradcheck, are left out.
"""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is a test extra")
from hypothesis import given, settings, strategies as st  # noqa: E402

import minigrad as mg  # noqa: E402
from minigrad.autograd import forward_ad as fwAD  # noqa: E402
from minigrad.testing import op_db  # noqa: E402
from minigrad.testing.opinfo import make_args, rebuild  # noqa: E402


def _float_out(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, mg.Tensor) and o.dtype.kind == "f"]


def _links():
    """(entry, sample index) pairs usable in a chain: smooth at the sample, float64 in and out."""
    links = []
    for info in op_db:
        if not info.supports_grad or info.kind != "op" or "gradcheck" in info.skips:
            continue
        for i, s in enumerate(info.samples()):
            if s.kink:
                continue
            floats = [a for a in s.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
            if not floats or floats[0].size == 0:
                continue
            try:
                args, kwargs, _ = make_args(s, lambda a, rg: mg.tensor(np.array(a)), False)
                outs = _float_out(info.op(*args, **kwargs))
            except Exception:  # noqa: BLE001 - a sample meant to raise (error tests) is no link
                continue
            if outs and outs[0].numel() and all(o.dtype == mg.float64 for o in outs):
                links.append((info, i))
    return links


LINKS = _links()


class Chain:
    def __init__(self, picks, seed):
        self.links = [LINKS[p] for p in picks]
        rng = np.random.default_rng(seed)
        self.samples, self.xs, self.builders, self.kwargs = [], [], [], []
        for info, i in self.links:
            s = info.samples()[i]
            _, kwargs, _ = make_args(s, lambda a, rg: mg.tensor(np.array(a)), True)
            self.samples.append(s)
            self.kwargs.append(kwargs)
            self.builders.append(rebuild(s, None, lambda a: mg.tensor(np.array(a))))
            self.xs.append([np.array(a) for a in s.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"])
        self.flat = [x for xs in self.xs for x in xs]
        self.vs = [rng.standard_normal(x.shape) for x in self.flat]
        self.us = None
        self.rng = rng

    def __call__(self, *leaves):
        """The chain's outputs (the last link's float outputs) for the leaves (all links' floats)."""
        it = iter(leaves)
        h = None
        for (info, _), xs, build, kwargs in zip(self.links, self.xs, self.builders, self.kwargs):
            ls = [next(it) for _ in xs]
            if h is not None:
                first = ls[0]
                n = first.numel()
                flat = h.reshape(-1)
                idx = mg.tensor(np.arange(n) % flat.numel())
                ls[0] = first + (flat[idx].reshape(*first.shape)).tanh() * 0.05
            outs = _float_out(info.op(*build(*ls), **kwargs))
            h = outs[0]
        return outs

    def jvp(self, rules=True):
        fwAD._use_rules[0] = rules
        try:
            with fwAD.dual_level():
                outs = self(*[fwAD.make_dual(mg.tensor(x), mg.tensor(v)) for x, v in zip(self.flat, self.vs)])
                tans = [fwAD.unpack_dual(o).tangent for o in outs]
        finally:
            fwAD._use_rules[0] = True
        return [np.zeros(o.shape) if t is None else t.numpy() for o, t in zip(outs, tans)]


def _name(chain):
    return " -> ".join(f"{info.full_name}[{i}]" for info, i in chain.links)


@settings(max_examples=40, deadline=None)
@given(picks=st.lists(st.integers(0, len(LINKS) - 1), min_size=2, max_size=5), seed=st.integers(0, 2 ** 32 - 1))
def test_random_chains_of_registry_ops_in_forward_mode(picks, seed):
    chain = Chain(picks, seed)
    name = _name(chain)
    jv = chain.jvp()
    eps = 1e-6
    plus = chain(*[mg.tensor(x + eps * v) for x, v in zip(chain.flat, chain.vs)])
    minus = chain(*[mg.tensor(x - eps * v) for x, v in zip(chain.flat, chain.vs)])
    for j, p, m in zip(jv, plus, minus):
        np.testing.assert_allclose(j, (p.numpy() - m.numpy()) / (2 * eps), rtol=1e-4, atol=1e-6,
                                   err_msg=f"{name}: JVP vs central differences")
    for a, b in zip(jv, chain.jvp(rules=False)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=f"{name}: rules vs the identity")
    leaves = [mg.tensor(x, requires_grad=True) for x in chain.flat]
    outs = chain(*leaves)
    live = [(o, chain.rng.standard_normal(o.shape)) for o in outs if o.requires_grad]
    if not live:
        return
    gs = mg.autograd.grad([o for o, _ in live], leaves, [mg.tensor(u) for _, u in live], allow_unused=True)
    lhs = sum(np.sum(u * j) for (o, u), j in zip(live, [j for o, j in zip(outs, jv) if o.requires_grad]))
    rhs = sum(0.0 if g is None else np.sum(g.numpy() * v) for g, v in zip(gs, chain.vs))
    assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs)), f"{name}: <u, Jv> = {lhs} but <J^T u, v> = {rhs}"


def test_the_chains_draw_from_many_registry_ops():
    """The pool is the registry, not a hand-picked few: every family takes part."""
    names = {info.name for info, _ in LINKS}
    assert len(names) > 100, len(names)
    for op in ("matmul", "softmax", "cumsum", "nn.functional.layer_norm", "nn.functional.cross_entropy", "sort"):
        assert op in names, op
