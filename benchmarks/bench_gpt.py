"""One AdamW training step of a character-level GPT (examples/gpt_model.py): minigrad vs PyTorch.

The model is the file examples/gpt_model.py, loaded as written for minigrad and with `minigrad`
renamed to `torch` for PyTorch (the same code). 4 layers, d_model 128, 4 heads, context 128,
batch 32, vocabulary 84 (the Shakespeare corpus' characters), dropout 0, AdamW(lr=3e-4); a fresh
batch every step (random token ids, drawn once per process from a fixed seed). Both start from the
same weights (minigrad's init, copied into PyTorch) and are checked to agree after two steps.

    python benchmarks/bench_gpt.py [--rounds 3] [--repeats 10] [--threads 1]

Configs: "train" (the step), "generate" (tokens per second sampling 64 tokens through the
key/value cache after a 16-token prompt, batch 1, temperature 0.8, top-k 10: the model's own
`generate`, the same code for both frameworks; checked first by comparing the logits of the prompt
and 8 fixed tokens fed through the cache).

    python benchmarks/bench_gpt.py --config generate --threads 1
"""
import types
from pathlib import Path

import numpy as np

import _harness as H

VOCAB, CONTEXT, LAYERS, HEADS, D, BATCH = 84, 128, 4, 4, 128, 32
LR = 3e-4
NEW_TOKENS = 64
MODEL = Path(__file__).resolve().parent.parent / "examples" / "gpt_model.py"


def load_model(framework):
    """examples/gpt_model.py as a module, for minigrad or (the names renamed) for torch."""
    src = MODEL.read_text()
    if framework == "torch":
        src = src.replace("minigrad", "torch")
    mod = types.ModuleType(f"gpt_model_{framework}")
    exec(compile(src, str(MODEL), "exec"), mod.__dict__)
    return mod


def initial_weights(**sizes):
    """The minigrad model's initial state (seed 0), as NumPy arrays by name."""
    import minigrad as mg
    z = {**SIZES, **sizes}
    mg.manual_seed(0)
    model = load_model("minigrad").GPT(z["vocab"], z["context"], z["layers"], z["heads"], z["d"])
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


def batches(n=8, seed=0, **sizes):
    z = {**SIZES, **sizes}
    V, B, T = z["vocab"], z["batch"], z["context"]
    rng = np.random.default_rng(seed)
    return [(rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))) for _ in range(n)]


SIZES = dict(vocab=VOCAB, context=CONTEXT, layers=LAYERS, heads=HEADS, d=D, batch=BATCH)


def build(L, framework, **sizes):
    """The model (examples/gpt_model.py in library L, the minigrad initial weights loaded), for the
    sizes given (default SIZES: the benchmark's)."""
    z = {**SIZES, **sizes}
    gm = load_model(framework)
    model = gm.GPT(z["vocab"], z["context"], z["layers"], z["heads"], z["d"])
    model.load_state_dict({k: L.from_numpy(v) for k, v in initial_weights(**sizes).items()})
    return model


def build_train(L, framework, **sizes):
    """The "train" config's parts: (model, AdamW, train(x, y) -> loss, [(x, y)] batches). train is one
    step on the batch it is given (no Python state of its own, so mg.jit can compile it)."""
    model = build(L, framework, **sizes)
    opt = L.optim.AdamW(model.parameters(), lr=LR)
    data = [(L.from_numpy(x), L.from_numpy(y)) for x, y in batches(**sizes)]

    def train(x, y):
        opt.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        opt.step()
        return loss
    return model, opt, train, data


def _make(L, framework, cfg):
    sizes = cfg.get("sizes", {})   # (bench_jit.py --quick: a tiny model)
    if cfg.get("mode") == "generate":
        model = build(L, framework, **sizes)
        model.eval()
        prompt = L.from_numpy(np.arange(16).reshape(1, 16) % VOCAB)
        gen = L.Generator().manual_seed(0)

        def step():
            model.generate(prompt, NEW_TOKENS, temperature=0.8, top_k=10, generator=gen)

        def cached_logits():
            # the two frameworks' random streams differ, so their samples do; what is checked is the
            # arithmetic generation runs: the prompt, then 8 fixed tokens one at a time through the cache
            with L.no_grad():
                caches = [dict() for _ in model.blocks]
                out = [model(prompt, caches=caches)[0][:, -1]]
                for t in (3, 1, 4, 1, 5, 9, 2, 6):
                    out.append(model(L.from_numpy(np.array([[t]])), caches=caches)[0][:, -1])
            return [o.numpy() for o in out]
        return step, cached_logits
    model, _, train, data = build_train(L, framework, **sizes)
    state = {"i": 0}

    def step():
        x, y = data[state["i"] % len(data)]
        state["i"] += 1
        train(x, y)
    return step, lambda: [p.detach().numpy() for p in model.parameters()]


def minigrad_step(cfg):
    import minigrad as mg
    return _make(mg, "minigrad", cfg)


def torch_step(cfg):
    import torch
    return _make(torch, "torch", cfg)


def main():
    H.main(H.Bench(
        title=f"char GPT ({LAYERS} layers, d={D}, {HEADS} heads, context {CONTEXT}, batch {BATCH}, vocab {VOCAB}), "
              f"float32",
        candidates={"minigrad": H.Candidate(minigrad_step), "pytorch": H.Candidate(torch_step, needs="torch")},
        configs={"train": {"repeats": 10, "warmup": 2, "check_steps": 2, "reference": "pytorch", "tol": 1e-4,
                           "ratios": [("minigrad", "pytorch", 1.0)]},
                 "generate": {"mode": "generate", "repeats": 5, "warmup": 1, "per": NEW_TOKENS, "per_name": "token",
                              "rate_name": "tokens/s", "check_steps": 1, "reference": "pytorch", "tol": 1e-4,
                              "ratios": [("minigrad", "pytorch", 1.0)]}},
        rounds=3))


if __name__ == "__main__":
    main()
