"""One SGD step of a 784-256-128-10 ReLU MLP, batch 128, cross-entropy: minigrad vs NumPy vs PyTorch.

The NumPy version is the same net written by hand (float32 forward, backward and update, weights
in the (out, in) layout nn.Linear uses): the floor minigrad is measured against.

    python benchmarks/bench_mlp.py [--repeats 200]
"""
import argparse

import numpy as np

import _common

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F

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


def minigrad_step(x, y, params):
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    for p, v in zip(model.parameters(), params):
        p.data = mg.from_numpy(v.copy())
    opt = mg.optim.SGD(model.parameters(), lr=LR)
    xt, yt = mg.from_numpy(x), mg.from_numpy(y)

    return _common.sgd_step(model, opt, F.cross_entropy, xt, yt), lambda: [p.data.numpy() for p in model.parameters()]


def numpy_step(x, y, params):
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


def torch_step(torch, x, y, params):
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 10))
    with torch.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(torch.from_numpy(v))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    return _common.sgd_step(model, opt, torch.nn.functional.cross_entropy, xt, yt), lambda: [p.detach().numpy() for p in model.parameters()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    threads = _common.header(f"MLP {'-'.join(map(str, SIZES))} ReLU, batch {BATCH}, cross-entropy, "
                             f"one SGD step (forward + backward + update), float32", args.repeats)
    torch = _common.import_torch(threads)
    _common.torch_line(torch, threads)
    x, y, params = make_data()

    cands = {"minigrad": minigrad_step, "numpy": numpy_step}
    if torch is not None:
        cands["pytorch"] = lambda *a: torch_step(torch, *a)
    # correctness first: 5 steps of each from the same weights end at the same weights
    times = _common.check_then_time(cands, (x, y, params), args.repeats, 5, "numpy")
    _common.ratio("minigrad", times["minigrad"], "numpy", times["numpy"], target=1.15)
    if torch is not None:
        _common.ratio("minigrad", times["minigrad"], "pytorch", times["pytorch"])


if __name__ == "__main__":
    main()
