"""One training epoch of examples/mnist_mlp.py and examples/mnist_cnn.py (MNIST 10k subset): minigrad vs PyTorch.

Same model (the example's build_model; for PyTorch the same layers), optimizer (Adam, the
example's lr), batch size (64) and per-batch preprocessing (normalisation and random 2-pixel
shifts, in NumPy, shared by both) as the example. minigrad loads batches with
mg.data.DataLoader(shuffle=True) over the MNIST dataset, as the example does; PyTorch indexes
the same arrays with torch.randperm batches (its fastest idiomatic loop; torch's per-item
DataLoader would only make it slower). Each framework runs in its own process
(benchmarks/_harness.py); a step here is one whole epoch.

    python benchmarks/bench_mnist_epoch.py [--config mlp] [--rounds 3]
    MINIGRAD_DATA=DIR selects the data folder (default ../shared/data next to the checkout)
"""
import os
import sys
from pathlib import Path

import numpy as np

import _harness as H

sys.path.insert(0, str(H.ROOT / "examples"))

BATCH, SHIFT = 64, 2
CONFIGS = {"mlp": dict(example="mnist_mlp", lr=1e-3, dropout=0.1, repeats=3, warmup=1),
           "cnn": dict(example="mnist_cnn", lr=2e-3, dropout=0.25, repeats=1, warmup=1)}


def _data():
    import minigrad as mg
    root = Path(os.environ.get("MINIGRAD_DATA") or H.REPO.parent / "shared" / "data")
    return mg.data.datasets.MNIST(root, train=True)


def minigrad_epoch(cfg):
    import importlib

    import _common as examples_common
    import minigrad as mg
    import minigrad.nn.functional as F
    train = _data()
    mg.manual_seed(0)
    model = importlib.import_module(cfg["example"]).build_model(cfg["dropout"])
    opt = mg.optim.Adam(model.parameters(), lr=cfg["lr"])
    gen = mg.Generator().manual_seed(0)
    loader = mg.data.DataLoader(train, batch_size=BATCH, shuffle=True, generator=gen)
    prep = examples_common.image_batches(examples_common.MNIST_MEAN_STD, SHIFT)
    rng = np.random.default_rng(1)

    def epoch():
        model.train()
        for x, y in loader:
            loss = F.cross_entropy(model(prep(x, True, rng)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss.item()
    return epoch


def torch_model(torch, cfg):
    """The example's build_model, in PyTorch's layers."""
    tnn, d = torch.nn, cfg["dropout"]
    if cfg["example"] == "mnist_mlp":
        return tnn.Sequential(tnn.Flatten(), tnn.Linear(784, 256), tnn.ReLU(), tnn.Dropout(d),
                              tnn.Linear(256, 128), tnn.ReLU(), tnn.Dropout(d), tnn.Linear(128, 10))
    return tnn.Sequential(
        tnn.Conv2d(1, 16, 3, padding=1), tnn.BatchNorm2d(16), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Conv2d(16, 32, 3, padding=1), tnn.BatchNorm2d(32), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Flatten(), tnn.Dropout(d), tnn.Linear(32 * 7 * 7, 128), tnn.ReLU(), tnn.Dropout(d),
        tnn.Linear(128, 10))


def torch_epoch(cfg):
    import _common as examples_common
    import torch
    train = _data()
    torch.manual_seed(0)
    model = torch_model(torch, cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    images, labels = train.arrays()
    labels_t = torch.from_numpy(labels)
    mean, std = (np.float32(v) for v in examples_common.MNIST_MEAN_STD)
    rng = np.random.default_rng(1)

    def epoch():
        model.train()
        perm = torch.randperm(len(labels))
        for i in range(0, len(labels), BATCH):
            idx = perm[i:i + BATCH]
            x = examples_common.random_shift(images[idx.numpy()], SHIFT, rng)
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy((x - mean) / std)),
                                                     labels_t[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss.item()
    return epoch


def main():
    H.main(H.Bench(
        title=__doc__.splitlines()[0],
        candidates={"minigrad": H.Candidate(minigrad_epoch), "pytorch": H.Candidate(torch_epoch, needs="torch")},
        configs=CONFIGS, unit="s", scale=1, per_name="epoch", ratios=[("minigrad", "pytorch", 1.0)]))


if __name__ == "__main__":
    main()
