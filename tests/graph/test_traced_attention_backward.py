"""A traced scaled_dot_product_attention backward reads the forward's attention weights P (a side
output of the forward's equation) instead of recomputing them from q and k: the graph holds no
second q k^T product or softmax, and the traced and compiled gradients are eager's, bit for bit."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F


@pytest.mark.parametrize("masking", ["causal", "bool mask, a fully masked row", "float mask"])
def test_traced_attention_backward_uses_the_forwards_weights(masking):
    rng = np.random.default_rng(0)
    q, k, v = (mg.tensor(rng.standard_normal((2, 3, 5, 4)).astype(np.float32), requires_grad=True)
               for _ in range(3))
    kw = {"is_causal": True}
    if masking.startswith("bool"):
        m = rng.random((5, 5)) > 0.3
        m[2] = False
        kw = {"attn_mask": mg.tensor(m)}
    elif masking == "float mask":
        kw = {"attn_mask": mg.tensor(rng.standard_normal((5, 5)).astype(np.float32))}

    def step():                 # q, k, v: state inputs (closure tensors) whose .grad the step sets
        for t in (q, k, v):
            t.grad = None
        out = F.scaled_dot_product_attention(q, k, v, **kw)
        (out * out).sum().backward()
        return out.detach()
    want = [step()] + [t.grad.detach() for t in (q, k, v)]
    g = mg.graph.trace(step)
    counts = g.count()
    assert counts["scaled_dot_product_attention"] == 1
    assert counts["softmax"] == 0 and counts["matmul"] == 4   # dp, dq, dk, dv: no q k^T again
    for run in (g, mg.jit(g)):
        out = run()
        got = [out] + [t.grad.detach() for t in (q, k, v)]
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
