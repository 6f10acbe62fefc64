"""One SGD step of a LeNet-style CNN: minigrad vs PyTorch (and a NumPy im2col reference).

    Conv2d(1, C1, 3, padding=1) -> ReLU -> MaxPool2d(2) -> Conv2d(C1, C2, 3, padding=1) -> ReLU
    -> MaxPool2d(2) -> Flatten -> Linear(C2*49, 10), cross-entropy, SGD(lr=0.01); float32 28x28 inputs.

Configs: "8/16 b64" (the bench model, C1=8, C2=16, batch 64), "32/64 b64", "32/64 b1". Each
candidate runs in its own process (benchmarks/_harness.py).

The NumPy reference is a plain hand-written im2col forward/backward of the same net (one BLAS
matmul per conv and per gradient, 2x2 pooling by reshape, col2im by 9 slice-adds), checked against
minigrad before timing. It is a straightforward version, not a tuned floor: minigrad's conv beats it.

    python benchmarks/bench_cnn.py [--config "8/16 b64"] [--rounds 3] [--repeats 100]
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import _harness as H

LR = 0.01
CONFIGS = {"8/16 b64": dict(c1=8, c2=16, batch=64),
           "32/64 b64": dict(c1=32, c2=64, batch=64, repeats=30),
           "32/64 b1": dict(c1=32, c2=64, batch=1, repeats=300)}


def make_data(cfg, seed=0):
    c1, c2, batch = cfg["c1"], cfg["c2"], cfg["batch"]
    rng = np.random.default_rng(seed)
    x = rng.random((batch, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, batch)
    shapes = [(c1, 1, 3, 3), (c1,), (c2, c1, 3, 3), (c2,), (10, c2 * 49), (10,)]
    fans = [9, 9, c1 * 9, c1 * 9, c2 * 49, c2 * 49]
    params = [rng.uniform(-1, 1, s).astype(np.float32) / np.float32(np.sqrt(f)) for s, f in zip(shapes, fans)]
    return x, y, params


def build_minigrad(c1, c2):
    import minigrad.nn as nn
    return nn.Sequential(nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(c2 * 49, 10))


def minigrad_step(cfg):
    import minigrad as mg
    import minigrad.nn.functional as F
    x, y, params = make_data(cfg)
    model = build_minigrad(cfg["c1"], cfg["c2"])
    for p, v in zip(model.parameters(), params):
        p.data = mg.from_numpy(v.copy())
    opt = mg.optim.SGD(model.parameters(), lr=LR)
    xt, yt = mg.from_numpy(x), mg.from_numpy(y)

    return H.sgd_step(model, opt, F.cross_entropy, xt, yt), lambda: [p.data.numpy() for p in model.parameters()]


def torch_step(cfg):
    import torch
    x, y, params = make_data(cfg)
    c1, c2 = cfg["c1"], cfg["c2"]
    tnn = torch.nn
    model = tnn.Sequential(tnn.Conv2d(1, c1, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                           tnn.Conv2d(c1, c2, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                           tnn.Flatten(), tnn.Linear(c2 * 49, 10))
    with torch.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(torch.from_numpy(v))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    return H.sgd_step(model, opt, torch.nn.functional.cross_entropy, xt, yt), lambda: [p.detach().numpy() for p in model.parameters()]


# ---- the NumPy reference (3x3 convolutions with padding 1, stride 1; 2x2 max-pooling)

def _cols(x):
    """(N, C, H, W) -> (C*9, N*H*W) patches of the zero-padded input."""
    N, C, H, W = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = sliding_window_view(xp, (3, 3), axis=(2, 3))         # (N, C, H, W, 3, 3)
    return win.transpose(1, 4, 5, 0, 2, 3).reshape(C * 9, N * H * W)


def _conv_fwd(x, w, b):
    N, _, H, W = x.shape
    cols = _cols(x)
    out = w.reshape(len(w), -1) @ cols                           # (O, N*H*W)
    out += b[:, None]
    return out.reshape(len(w), N, H, W).transpose(1, 0, 2, 3), cols


def _conv_bwd(g, cols, w, x_shape, need_dx):
    N, C, H, W = x_shape
    g2 = g.transpose(1, 0, 2, 3).reshape(len(w), -1)             # (O, N*H*W)
    dw = (g2 @ cols.T).reshape(w.shape)
    db = g2.sum(1)
    if not need_dx:
        return None, dw, db
    dcols = (w.reshape(len(w), -1).T @ g2).reshape(C, 3, 3, N, H, W)
    dxp = np.zeros((N, C, H + 2, W + 2), np.float32)
    for i in range(3):
        for j in range(3):
            dxp[:, :, i:i + H, j:j + W] += dcols[:, i, j].transpose(1, 0, 2, 3)
    return dxp[:, :, 1:-1, 1:-1], dw, db


def _pool_fwd(x):
    N, C, H, W = x.shape
    r = x.reshape(N, C, H // 2, 2, W // 2, 2)
    out = r.max(axis=(3, 5))
    mask = r == out[:, :, :, None, :, None]
    # ties: keep only the first maximum of each window, as PyTorch
    flat = mask.transpose(0, 1, 2, 4, 3, 5).reshape(N, C, H // 2, W // 2, 4)
    first = np.zeros_like(flat)
    np.put_along_axis(first, flat.argmax(-1)[..., None], True, -1)
    return out, first


def _pool_bwd(g, first, x_shape):
    N, C, H, W = x_shape
    d = first * g[..., None]                                     # (N, C, H/2, W/2, 4)
    return d.reshape(N, C, H // 2, W // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(x_shape)


def numpy_step(cfg):
    x, y, params = make_data(cfg)
    BATCH = len(x)
    w1, b1, w2, b2, w3, b3 = [p.copy() for p in params]
    lr = np.float32(LR)
    rows = np.arange(BATCH)

    def step():
        h1, cols1 = _conv_fwd(x, w1, b1)
        a1 = np.maximum(h1, 0)
        p1, m1 = _pool_fwd(a1)
        h2, cols2 = _conv_fwd(p1, w2, b2)
        a2 = np.maximum(h2, 0)
        p2, m2 = _pool_fwd(a2)
        f = p2.reshape(BATCH, -1)
        z = f @ w3.T + b3
        z -= z.max(1, keepdims=True)
        e = np.exp(z)
        s = e.sum(1, keepdims=True)
        loss = (np.log(s[:, 0]) - z[rows, y]).mean()
        g = e / s
        g[rows, y] -= 1
        g /= BATCH
        gw3, gb3 = g.T @ f, g.sum(0)
        gp2 = (g @ w3).reshape(p2.shape)
        ga2 = _pool_bwd(gp2, m2, a2.shape) * (h2 > 0)
        gp1, gw2, gb2 = _conv_bwd(ga2, cols2, w2, p1.shape, True)
        ga1 = _pool_bwd(gp1, m1, a1.shape) * (h1 > 0)
        _, gw1, gb1 = _conv_bwd(ga1, cols1, w1, x.shape, False)
        for p, gp in ((w1, gw1), (b1, gb1), (w2, gw2), (b2, gb2), (w3, gw3), (b3, gb3)):
            p -= lr * gp
        return loss
    return step, lambda: [w1, b1, w2, b2, w3, b3]


def main():
    H.main(H.Bench(
        title="LeNet-style CNN (conv 1->C1, ReLU, pool, conv C1->C2, ReLU, pool, linear), one SGD step, float32",
        candidates={"minigrad": H.Candidate(minigrad_step), "pytorch": H.Candidate(torch_step, needs="torch"),
                    "numpy-im2col": H.Candidate(numpy_step)},
        configs=CONFIGS, repeats=100, warmup=5, check_steps=3, reference="minigrad",
        ratios=[("minigrad", "pytorch", 1.0), ("minigrad", "numpy-im2col", None)]))


if __name__ == "__main__":
    main()
