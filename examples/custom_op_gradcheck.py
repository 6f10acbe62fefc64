"""Define a new differentiable op with mg.autograd.Function and check its gradients.

    python examples/custom_op_gradcheck.py

1. ``Swish`` (a.k.a. SiLU): swish(x) = x * sigmoid(x), with a numerically stable sigmoid in the
   NumPy forward and a backward written in Tensor ops, so it is differentiable again.
   ``mg.autograd.gradcheck`` compares its backward with central finite differences, and
   ``gradgradcheck`` does the same for the backward's own backward (second derivatives).
2. ``BrokenSwish``: the same op with a deliberately wrong backward (it forgets the product rule
   and returns g * sigmoid(x)). gradcheck catches it; the example prints its report, once with
   ``raise_exception=False`` (returns False) and once as the ``GradcheckError`` it raises.
3. The checked op trains: a tiny Swish network fits y = sin(x).

Exits 0 when the correct op passes both checks and the broken one is caught.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import minigrad as mg  # noqa: E402
from minigrad.autograd import GradcheckError, gradcheck, gradgradcheck  # noqa: E402


def stable_sigmoid(x):
    """sigmoid without overflow: exp of a non-positive number only."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


class Swish(mg.autograd.Function):
    """out = x * s, s = sigmoid(x);   dx = g * (s + x * s * (1 - s))

    Only x is saved: the backward recomputes s with mg.sigmoid (a Tensor op), so under
    create_graph=True the backward is itself differentiable with respect to x.
    """

    @staticmethod
    def forward(ctx, x):           # x arrives as a NumPy array
        ctx.save_for_backward(x)
        return x * stable_sigmoid(x)

    @staticmethod
    def backward(ctx, g):          # g and the saved tensors are Tensors
        x, = ctx.saved_tensors
        s = mg.sigmoid(x)
        return g * (s + x * s * (1 - s))


class BrokenSwish(Swish):
    """The same forward, a wrong backward: g * sigmoid(x) drops the x * s * (1 - s) term."""

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * mg.sigmoid(x)


def swish(x):
    return Swish.apply(x)


def main():
    rng = np.random.default_rng(0)
    # float64 inputs: finite differences in float32 are too coarse to check anything
    x = mg.tensor(rng.standard_normal((3, 4)) * 3, dtype=mg.float64, requires_grad=True)

    print("1. Swish: forward against x * sigmoid(x), including extreme inputs")
    big = mg.tensor([-1e4, -50.0, 0.0, 50.0, 1e4], dtype=mg.float64)
    with np.errstate(over="raise"):
        y = swish(big)
    print(f"   swish({big.tolist()}) = {y.tolist()}")
    assert np.allclose(swish(x).data.numpy(), x.data.numpy() / (1 + np.exp(-x.data.numpy())))

    ok1 = gradcheck(swish, (x,))
    print(f"   gradcheck(Swish):     {'passed' if ok1 else 'FAILED'}")
    ok2 = gradgradcheck(swish, (x,))
    print(f"   gradgradcheck(Swish): {'passed' if ok2 else 'FAILED'}")

    print("\n2. BrokenSwish: a backward that forgets the product rule")
    ok3 = gradcheck(BrokenSwish.apply, (x,), raise_exception=False)
    print(f"   gradcheck(BrokenSwish, raise_exception=False) returned {ok3}")
    caught = False
    try:
        gradcheck(BrokenSwish.apply, (x,))
    except GradcheckError as e:
        caught = True
        print(f"   gradcheck(BrokenSwish) raised GradcheckError:\n     {e}")

    print("\n3. Training with it: 1-32-1 Swish network fitting sin(x) on [-3, 3]")
    mg.manual_seed(0)
    xs = mg.linspace(-3, 3, 64).reshape(64, 1)
    ys = mg.sin(xs)
    l1, l2 = mg.nn.Linear(1, 32), mg.nn.Linear(32, 1)
    opt = mg.optim.Adam(list(l1.parameters()) + list(l2.parameters()), lr=0.01)
    for step in range(301):
        loss = mg.nn.functional.mse_loss(l2(swish(l1(xs))), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"   step {step:3d}: mse {loss.item():.5f}")
    final = loss.item()

    good = ok1 and ok2 and ok3 is False and caught and final < 0.01
    print("\nall checks behaved as expected" if good else "\nSOMETHING IS WRONG")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
