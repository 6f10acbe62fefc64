"""Per-sample gradients: mg.func.vmap(grad(loss), in_dims=(None, 0, 0)) vs a Python loop of per-sample backward passes.

Two workloads (float32, the default dtype):

* mlp: a 16-32-1 ReLU MLP, mse loss, 1,000 samples -- the loop pays the per-call overhead of a
  forward and a backward for every sample, which vmap removes (target: >= 20x);
* mnist: the MNIST MLP 784-128-10 (ReLU, cross entropy), a batch of 64 -- bounded by writing the
  64 copies of the gradients (64 x 100k floats) either way (target: >= 2x).

Candidates: `minigrad-vmap` (functional_call + grad inside vmap: one batched forward and one
backward), `minigrad-loop` (the model called on each sample, backward, each parameter's .grad
collected and stacked),
and `torch-vmap` (torch.func's vmap(grad(...)) with functional_call, for reference, when torch is
installed). All three give the (n, *param.shape) per-sample gradients; the parent checks that they
agree before timing. Ratios: vmap / loop (the target is loop/vmap >= 20 resp. 2, i.e. this ratio
<= 0.05 resp. 0.5) and loop / vmap (the speed-up). `--before <older checkout>` adds both minigrad
candidates run from that tree.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_vmap.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import _harness as H  # noqa: E402

CONFIGS = {
    "mlp-16-32-1-n1000": {"sizes": (16, 32, 1), "n": 1000, "classify": False, "repeats": 5, "warmup": 1,
                          "ratios": [("minigrad-vmap", "minigrad-loop", 0.05), ("minigrad-loop", "minigrad-vmap", None),
                                    ("minigrad-vmap", "torch-vmap", None)]},
    "mnist-784-128-10-b64": {"sizes": (784, 128, 10), "n": 64, "classify": True, "repeats": 20, "warmup": 2,
                             "ratios": [("minigrad-vmap", "minigrad-loop", 0.5), ("minigrad-loop", "minigrad-vmap", None),
                                        ("minigrad-vmap", "torch-vmap", None)]},
}


def _data(cfg):
    rng = np.random.default_rng(0)
    sizes, n = cfg["sizes"], cfg["n"]
    x = rng.standard_normal((n, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], n) if cfg["classify"] else rng.standard_normal((n, sizes[-1])).astype(np.float32)
    ws = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(a)
        ws += [rng.uniform(-bound, bound, (b, a)).astype(np.float32), rng.uniform(-bound, bound, b).astype(np.float32)]
    return x, y, ws


def _minigrad_model(cfg):
    import minigrad as mg
    nn = mg.nn
    x, y, ws = _data(cfg)
    layers = []
    for a, b in zip(cfg["sizes"][:-1], cfg["sizes"][1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    with mg.no_grad():
        for p, w in zip(model.parameters(), ws):
            p.copy_(mg.tensor(w))
    loss_fn = nn.functional.cross_entropy if cfg["classify"] else nn.functional.mse_loss
    return mg, model, mg.tensor(x), mg.tensor(y), loss_fn


def make_vmap(cfg):
    mg, model, x, y, loss_fn = _minigrad_model(cfg)
    from minigrad.func import functional_call, grad, vmap
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        return loss_fn(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))
    out = {}

    def step():
        out["g"] = per_sample(params, x, y)
    return step, lambda: [out["g"][k].numpy() for k in params]


def make_loop(cfg):
    mg, model, x, y, loss_fn = _minigrad_model(cfg)
    params = list(model.parameters())
    out = {}

    def step():
        per = [[] for _ in params]
        for i in range(x.shape[0]):
            for p in params:
                p.grad = None
            loss_fn(model(x[i:i + 1]), y[i:i + 1]).backward()
            for acc, p in zip(per, params):
                acc.append(p.grad)
        out["g"] = [mg.stack(acc) for acc in per]
    return step, lambda: [g.numpy() for g in out["g"]]


def make_torch(cfg):
    import torch
    from torch.func import functional_call, grad, vmap
    x, y, ws = _data(cfg)
    layers = []
    for a, b in zip(cfg["sizes"][:-1], cfg["sizes"][1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    with torch.no_grad():
        for p, w in zip(model.parameters(), ws):
            p.copy_(torch.from_numpy(w))
    params = {k: v.detach() for k, v in model.named_parameters()}
    loss_fn = torch.nn.functional.cross_entropy if cfg["classify"] else torch.nn.functional.mse_loss
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def loss(p, xi, yi):
        return loss_fn(functional_call(model, p, (xi.unsqueeze(0),)), yi.unsqueeze(0))
    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))
    out = {}

    def step():
        out["g"] = per_sample(params, tx, ty)
    return step, lambda: [out["g"][k].numpy() for k in params]


if __name__ == "__main__":
    H.main(H.Bench(title=__doc__.splitlines()[0], configs=CONFIGS, rounds=3, check_steps=1, reference="minigrad-loop",
                   tol=1e-4, unit="ms", candidates={
                       "minigrad-vmap": H.Candidate(make_vmap), "minigrad-loop": H.Candidate(make_loop),
                       "torch-vmap": H.Candidate(make_torch, needs="torch")}))
