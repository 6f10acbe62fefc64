"""One training epoch of examples/mnist_mlp.py (MNIST 10k subset): minigrad vs PyTorch.

Same model (784-256-128-10 ReLU MLP with dropout 0.1), optimizer (Adam, lr 1e-3), batch size
(64) and per-batch preprocessing (normalisation and random 2-pixel shifts, in NumPy, shared by
both) as the example. minigrad loads batches with mg.data.DataLoader(shuffle=True) over the MNIST
dataset, as the example does; PyTorch indexes the same arrays with torch.randperm batches
(its fastest idiomatic loop; torch's per-item DataLoader would only make it slower).

    python benchmarks/bench_mnist_epoch.py [--data DIR] [--repeats 3]
"""
import argparse
import os
import sys
from pathlib import Path

import numpy as np

import _common

import minigrad as mg
import minigrad.nn.functional as F



def _import_examples():
    """examples/_common.py and examples/mnist_mlp.py. Both folders have a ``_common`` module, so
    the examples' one is imported with this one set aside, then this one is put back."""
    ours = sys.modules.pop("_common")
    sys.path.insert(0, str(_common.REPO / "examples"))
    try:
        import _common as ex_common
        import mnist_mlp
    finally:
        sys.path.pop(0)
        sys.modules["_common"] = ours
    return ex_common, mnist_mlp.build_model


examples_common, build_model = _import_examples()

BATCH, LR, SHIFT = 64, 1e-3, 2


def minigrad_epoch(train):
    mg.manual_seed(0)
    model = build_model(0.1)
    opt = mg.optim.Adam(model.parameters(), lr=LR)
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


def torch_epoch(torch, train):
    torch.manual_seed(0)
    tnn = torch.nn
    model = tnn.Sequential(tnn.Flatten(), tnn.Linear(784, 256), tnn.ReLU(), tnn.Dropout(0.1),
                           tnn.Linear(256, 128), tnn.ReLU(), tnn.Dropout(0.1), tnn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=LR)
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
    default = Path(os.environ.get("MINIGRAD_DATA") or _common.REPO.parent / "shared" / "data")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=default)
    ap.add_argument("--repeats", type=int, default=3, help="epochs timed per framework")
    args = ap.parse_args()
    train = mg.data.datasets.MNIST(args.data.numpy(), train=True)
    threads = _common.header(f"one epoch of examples/mnist_mlp.py: {len(train)} images, batch {BATCH}, "
                             f"Adam, {-(-len(train) // BATCH)} steps", args.repeats)
    torch = _common.import_torch(threads)
    _common.torch_line(torch, threads)
    fns = {"minigrad": minigrad_epoch(train)}
    if torch is not None:
        fns["pytorch"] = torch_epoch(torch, train)
    times = _common.best_of_interleaved(fns, args.repeats, rounds=args.repeats, warmup=1)
    for name, t in times.items():
        _common.row(name, t, "s/epoch", scale=1)
    if torch is not None:
        _common.ratio("minigrad", times["minigrad"], "pytorch", times["pytorch"])


if __name__ == "__main__":
    main()
