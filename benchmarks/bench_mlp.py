"""One SGD step of a 784-256-128-10 ReLU MLP, batch 128, cross-entropy: minigrad vs NumPy vs PyTorch.

The NumPy version is the same net written by hand (float32 forward, backward and update, weights
in the (out, in) layout nn.Linear uses): the floor minigrad is measured against. JAX (where
installed) runs the same step under jax.jit, as a JAX user would write it. Each candidate runs in
its own process (benchmarks/_harness.py).

    python benchmarks/bench_mlp.py [--rounds 3] [--repeats 200]
"""
import numpy as np

import _harness as H

SIZES = (784, 256, 128, 10)
BATCH = 128
LR = 0.01


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((BATCH, SIZES[0]), dtype=np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return x, y, params


def minigrad_step(cfg):
    import minigrad as mg
    import minigrad.nn as nn
    import minigrad.nn.functional as F
    x, y, params = make_data()
    model = nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]), nn.ReLU(),
                          nn.Linear(SIZES[2], SIZES[3]))
    for p, v in zip(model.parameters(), params):
        p.data = mg.from_numpy(v.copy())
    opt = mg.optim.SGD(model.parameters(), lr=LR)
    xt, yt = mg.from_numpy(x), mg.from_numpy(y)

    return H.sgd_step(model, opt, F.cross_entropy, xt, yt), lambda: [p.data.numpy() for p in model.parameters()]


def numpy_step(cfg):
    x, y, params = make_data()
    W1, b1, W2, b2, W3, b3 = [p.copy() for p in params]
    lr = np.float32(LR)
    rows = np.arange(BATCH)

    def step():
        h1 = x @ W1.T
        h1 += b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ W2.T
        h2 += b2
        a2 = np.maximum(h2, 0)
        z = a2 @ W3.T
        z += b3
        z -= z.max(1, keepdims=True)
        e = np.exp(z)
        s = e.sum(1, keepdims=True)
        loss = (np.log(s[:, 0]) - z[rows, y]).mean()
        g = e / s                               # softmax
        g[rows, y] -= 1
        g /= BATCH                              # d loss / d logits
        gW3, gb3 = g.T @ a2, g.sum(0)
        g2 = g @ W3
        g2 *= h2 > 0
        gW2, gb2 = g2.T @ a1, g2.sum(0)
        g1 = g2 @ W2
        g1 *= h1 > 0
        gW1, gb1 = g1.T @ x, g1.sum(0)
        for p, gp in ((W1, gW1), (b1, gb1), (W2, gW2), (b2, gb2), (W3, gW3), (b3, gb3)):
            gp *= lr
            p -= gp
        return loss
    return step, lambda: [W1, b1, W2, b2, W3, b3]


def torch_step(cfg):
    import torch
    x, y, params = make_data()
    model = torch.nn.Sequential(torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(),
                                torch.nn.Linear(SIZES[1], SIZES[2]), torch.nn.ReLU(),
                                torch.nn.Linear(SIZES[2], SIZES[3]))
    with torch.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(torch.from_numpy(v))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    return H.sgd_step(model, opt, torch.nn.functional.cross_entropy, xt, yt), lambda: [p.detach().numpy() for p in model.parameters()]


def jax_step(cfg):
    import jax
    import jax.numpy as jnp
    x, y, params = make_data()
    state = {"p": [jnp.asarray(p) for p in params]}
    xj, yj = jnp.asarray(x), jnp.asarray(y)

    def loss_fn(p, x, y):
        h = x
        for i in range(0, 4, 2):
            h = jax.nn.relu(h @ p[i].T + p[i + 1])
        z = h @ p[4].T + p[5]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(z), y[:, None], 1))

    @jax.jit
    def update(p, x, y):
        g = jax.grad(loss_fn)(p, x, y)
        return [a - LR * b for a, b in zip(p, g)]

    def step():
        state["p"] = update(state["p"], xj, yj)
        state["p"][-1].block_until_ready()
    return step, lambda: [np.asarray(p) for p in state["p"]]


def main():
    H.main(H.Bench(
        title=f"MLP {'-'.join(map(str, SIZES))} ReLU, batch {BATCH}, cross-entropy, one SGD step "
              f"(forward + backward + update), float32",
        candidates={"minigrad": H.Candidate(minigrad_step), "numpy": H.Candidate(numpy_step),
                    "pytorch": H.Candidate(torch_step, needs="torch"),
                    "jax": H.Candidate(jax_step, needs="jax")},
        repeats=200, warmup=10, check_steps=5, reference="numpy",
        ratios=[("minigrad", "numpy", 1.10), ("minigrad", "pytorch", None), ("minigrad", "jax", None)]))


if __name__ == "__main__":
    main()
