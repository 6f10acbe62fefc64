"""One training step of a word-level language model: embedding -> recurrent layers -> linear decoder ->
cross-entropy, SGD with clip_grad_norm_(0.25), minigrad vs PyTorch (each in its own process,
benchmarks/_harness.py).

Configs:
  "lstm": the PyTorch word_language_model example's small setting: vocabulary 10k, embedding 256,
          2-layer LSTM of hidden 256, BPTT 35, batch 20;
  "gru_latency": 1-layer GRU of hidden 256, batch 1 (the per-step overhead dominates).
Every step takes a fresh batch (a pool of batches cycled through, the same in every candidate) and
starts from zero states.

    python benchmarks/bench_lstm.py [--rounds 3] [--repeats 20]
"""
import numpy as np

import _harness as H

VOCAB, EMB, HIDDEN, BPTT = 10_000, 256, 256, 35
LR, CLIP = 1.0, 0.25
POOL = 8   # distinct batches, cycled

CONFIGS = {"lstm": dict(kind="LSTM", layers=2, batch=20),
           "gru_latency": dict(kind="GRU", layers=1, batch=1, repeats=30)}


def make_data(cfg, seed=0):
    rng = np.random.default_rng(seed)
    B = cfg["batch"]
    batches = [(rng.integers(0, VOCAB, (BPTT, B)), rng.integers(0, VOCAB, (BPTT, B))) for _ in range(POOL)]
    return batches


def build(L, cfg, seed=0):
    """The model in library L (minigrad or torch), its parameters drawn here (the same in both)."""
    nn = L.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, EMB)
            self.rnn = getattr(nn, cfg["kind"])(EMB, HIDDEN, cfg["layers"])
            self.dec = nn.Linear(HIDDEN, VOCAB)

        def forward(self, x):
            out, _ = self.rnn(self.emb(x))
            return self.dec(out).reshape(-1, VOCAB)

    model = LM()
    rng = np.random.default_rng(seed + 1)
    values = [rng.uniform(-0.1, 0.1, tuple(p.shape)).astype(np.float32) for p in model.parameters()]
    return model, values


def train_step(L, model, clip):
    """train(x, y) -> loss: one step on the batch it is given (no Python state of its own, so mg.jit
    can compile it)."""
    opt = L.optim.SGD(model.parameters(), lr=LR)
    F = L.nn.functional

    def train(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y.reshape(-1))
        loss.backward()
        clip(model.parameters(), CLIP)
        opt.step()
        return loss
    return train


def cycle(train, batches):
    """step() -> train on the next batch of the pool (the harness's steps take no arguments)."""
    state = {"i": 0}

    def step():
        x, y = batches[state["i"] % len(batches)]
        state["i"] += 1
        return train(x, y)
    return step


def make_step(L, model, batches, clip):
    return cycle(train_step(L, model, clip), batches)


def minigrad_parts(cfg):
    """(model, train(x, y), [(x, y)] batches) in minigrad, the weights drawn as for every candidate."""
    import minigrad as mg
    model, values = build(mg, cfg)
    for p, v in zip(model.parameters(), values):
        p.data = mg.from_numpy(v.copy())
    batches = [(mg.from_numpy(x), mg.from_numpy(y)) for x, y in make_data(cfg)]
    return model, train_step(mg, model, mg.nn.utils.clip_grad_norm_), batches


def minigrad_step(cfg):
    model, train, batches = minigrad_parts(cfg)
    return cycle(train, batches), lambda: [p.data.numpy() for p in model.parameters()]


def torch_step(cfg):
    import torch
    model, values = build(torch, cfg)
    with torch.no_grad():
        for p, v in zip(model.parameters(), values):
            p.copy_(torch.from_numpy(v))
    batches = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in make_data(cfg)]
    step = make_step(torch, model, batches, torch.nn.utils.clip_grad_norm_)
    return step, lambda: [p.detach().numpy() for p in model.parameters()]


def main():
    H.main(H.Bench(
        title=f"Word LM training step: embedding {EMB} (vocab {VOCAB}) -> recurrent (hidden {HIDDEN}) -> "
              f"linear decoder -> cross-entropy, BPTT {BPTT}, SGD + clip_grad_norm_({CLIP}), float32",
        candidates={"minigrad": H.Candidate(minigrad_step), "pytorch": H.Candidate(torch_step, needs="torch")},
        configs=CONFIGS, repeats=20, warmup=3, check_steps=3, reference="pytorch",
        ratios=[("minigrad", "pytorch", None)]))


if __name__ == "__main__":
    main()
