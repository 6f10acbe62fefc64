"""A character-level GPT on the complete works of Shakespeare (nanoGPT's shakespeare_char, smaller).

    python examples/char_gpt.py                      # the default run (see README for its figure)
    python examples/char_gpt.py --steps 20 --eval-interval 10 --eval-iters 2   # a smoke run

The model is examples/gpt_model.py (4 layers, d_model 128, 4 heads, context 128 by default). The
corpus is `shakespeare.txt.gz` (../shared/data/shakespeare/, see its README): the first 90 % of the
text trains, the last 10 % validates; the vocabulary is its distinct characters. Training draws
random windows (batch 32) from a seeded generator, runs AdamW with a linear warm-up and a cosine
decay, clips the gradient norm at 1, and every --eval-interval steps prints the mean train and
validation loss (nats per character) over --eval-iters fixed batches. At the end it samples text
with temperature and top-k through the key/value cache.

- ``--data``: the folder holding ``shakespeare.txt.gz`` (or a ``shakespeare/`` folder with it).
  Without it: ``$MINIGRAD_DATA``, ``<repo>/../shared/data``, then ``$XDG_CACHE_HOME/minigrad``.
  The corpus is not downloaded (its source is the `shakespeare` package's texts, not a file with a
  stable address): the error says where to put it.
- ``--out DIR``: ``checkpoint.mg`` (model, optimizer, step, history and the batch generator's
  state, written at each evaluation with mg.save) and ``curves.png`` (matplotlib, optional).
- ``--resume``: continue from ``DIR/checkpoint.mg``. With the same ``--steps`` an interrupted run
  continues exactly. With more (``--steps 200`` then ``--steps 400 --resume``) the remaining steps
  take the learning rates of the 400-step schedule (computed from the step and ``--steps``), but
  steps 1-200 had the 200-step schedule's (the same only during the warm-up), so the result
  differs from a fresh ``--steps 400`` run's once the first run decayed; the run says so.
- ``--jit``: compile the training step with mg.jit (same numbers as eager).
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for p in (str(REPO), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import minigrad as mg  # noqa: E402
from minigrad._optional import install_hint  # noqa: E402  (the pip extra that installs a package)
from gpt_model import GPT  # noqa: E402

CORPUS = "shakespeare.txt.gz"
TEXT_MD5 = "76f015e20dc635a376e279e9c51dc18b"   # of the uncompressed text (../shared/data/README.md)
CHECKPOINT, PLOT = "checkpoint.mg", "curves.png"


def data_folders(data=None):
    """Where the corpus is looked for, in order."""
    if data is not None:
        return [Path(data)]
    out = []
    if os.environ.get("MINIGRAD_DATA"):
        out.append(Path(os.environ["MINIGRAD_DATA"]))
    if (REPO.parent / "shared" / "data").is_dir():
        out.append(REPO.parent / "shared" / "data")
    out.append(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "minigrad")
    return out


def load_corpus(data=None, prog="char_gpt"):
    """The text of shakespeare.txt.gz from the first folder (or its shakespeare/ subfolder) that has it;
    ``prog`` names the example in the error when none has it."""
    tried = []
    for folder in data_folders(data):
        for path in (folder / CORPUS, folder / "shakespeare" / CORPUS):
            tried.append(str(path))
            if path.is_file():
                raw = gzip.decompress(path.read_bytes())
                if hashlib.md5(raw).hexdigest() != TEXT_MD5:
                    print(f"note: {path} is not the corpus of ../shared/data/README.md (md5 of the text "
                          f"differs); training on it anyway")
                return raw.decode("ascii", errors="replace"), path
    raise SystemExit(f"{prog}: {CORPUS} not found; looked in:\n  " + "\n  ".join(tried)
                     + f"\nPut the corpus there (the complete works, one ASCII text, gzipped; md5 of the text "
                       f"{TEXT_MD5}) or pass --data FOLDER. It is not downloaded: see "
                       f"../shared/data/README.md for its source.")


class Corpus:
    """The text as int64 ids; first 90 % train, last 10 % validation."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        ids = np.frombuffer(text.encode("ascii", errors="replace"), dtype=np.uint8)
        lut = np.zeros(256, np.int64)
        for c, i in self.stoi.items():
            lut[ord(c)] = i
        data = lut[ids]
        n = int(0.9 * len(data))
        self.train, self.val = data[:n], data[n:]

    def encode(self, s):
        return [self.stoi[c] for c in s]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


def get_batch(split, batch, context, rng):
    """batch random windows of split: inputs (batch, context) and the next characters as targets."""
    starts = rng.integers(0, len(split) - context - 1, batch)
    idx = starts[:, None] + np.arange(context)
    return mg.from_numpy(split[idx]), mg.from_numpy(split[idx + 1])


def lr_at(step, args):
    """Linear warm-up to --lr over --warmup steps, then cosine decay to --lr / 10 at --steps."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    frac = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr / 10 + 0.5 * (args.lr - args.lr / 10) * (1 + math.cos(math.pi * min(1.0, frac)))


@mg.no_grad()
def estimate_loss(model, corpus, args):
    """Mean loss over --eval-iters batches of each split, the same batches at every evaluation."""
    model.eval()
    out = {}
    for name, split in (("train", corpus.train), ("val", corpus.val)):
        rng = np.random.default_rng(1234)
        out[name] = float(np.mean([model(*get_batch(split, args.batch_size, args.context, rng))[1].item()
                                   for _ in range(args.eval_iters)]))
    model.train()
    return out


def plot(history, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib not installed: no plot ({install_hint('matplotlib')})")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(history["step"], history["train"], label="train")
    ax.plot(history["step"], history["val"], label="validation")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats / char)")
    ax.set_title("char GPT on Shakespeare")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"curves: {path}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", type=Path, default=None, help="folder holding shakespeare.txt.gz")
    p.add_argument("--steps", type=int, default=600, help="total training steps")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--eval-interval", type=int, default=100)
    p.add_argument("--eval-iters", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample", type=int, default=400, help="characters to sample at the end (0: none)")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--out", type=Path, default=Path("runs") / "char_gpt")
    p.add_argument("--resume", action="store_true", help=f"continue from OUT/{CHECKPOINT}")
    p.add_argument("--jit", action="store_true", help="compile the training step with mg.jit")
    args = p.parse_args(argv)
    print("config: " + mg.__config__.summary())  # what this process computes with (mg.show_config())

    text, path = load_corpus(args.data)
    corpus = Corpus(text)
    print(f"corpus: {path} ({len(text):,} characters, vocabulary {len(corpus.chars)}; "
          f"{len(corpus.train):,} train / {len(corpus.val):,} validation)")
    mg.manual_seed(args.seed)
    model = GPT(len(corpus.chars), args.context, args.layers, args.heads, args.d_model, args.dropout)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = mg.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                          {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.99))
    rng = np.random.default_rng(args.seed)
    history = {"step": [], "train": [], "val": []}
    start = 0
    args.out.mkdir(parents=True, exist_ok=True)
    ckpt_path = args.out / CHECKPOINT
    if args.resume and ckpt_path.exists():
        ckpt = mg.load(ckpt_path)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        rng.bit_generator.state = json.loads(ckpt["rng"])
        start, history = ckpt["step"], {k: list(v) for k, v in ckpt["history"].items()}
        print(f"resumed from {ckpt_path} at step {start}")
        planned = ckpt.get("steps", args.steps)
        if planned != args.steps and start < args.steps:
            print(f"note: the checkpoint's run was planned for {planned} steps; steps {start + 1}-{args.steps} "
                  f"use the {args.steps}-step schedule's learning rates, while steps 1-{start} had the "
                  f"{planned}-step schedule's (the same only during the warm-up), so the result can "
                  f"differ from a fresh {args.steps}-step run's")
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {args.layers} layers, d_model {args.d_model}, {args.heads} heads, context {args.context}: "
          f"{n_params:,} parameters; {args.steps} steps of batch {args.batch_size}, AdamW lr {args.lr:g}")

    def train_step(x, y):
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        mg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    step_fn = mg.jit(train_step) if args.jit else train_step
    t0 = time.perf_counter()
    model.train()
    for step in range(start, args.steps):
        lr = lr_at(step, args)
        for group in opt.param_groups:
            group["lr"] = lr
        loss = step_fn(*get_batch(corpus.train, args.batch_size, args.context, rng))
        last = step + 1 == args.steps
        if (step + 1) % args.eval_interval == 0 or last:
            losses = estimate_loss(model, corpus, args)
            history["step"].append(step + 1)
            history["train"].append(losses["train"])
            history["val"].append(losses["val"])
            dt = time.perf_counter() - t0
            print(f"step {step + 1:5d}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f} "
                  f"(batch loss {loss.item():.4f}, lr {lr:.2e}, {dt:.0f} s)", flush=True)
            mg.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step + 1,
                     "steps": args.steps, "history": history, "rng": json.dumps(rng.bit_generator.state)}, ckpt_path)
    if history["step"]:
        plot(history, args.out / PLOT)
        print(f"final validation loss {history['val'][-1]:.4f} nats/char after {history['step'][-1]} steps")
    if args.sample:
        gen = mg.Generator().manual_seed(args.seed)
        model.eval()
        out = model.generate(mg.tensor([corpus.encode("\n")]), args.sample, temperature=args.temperature,
                             top_k=args.top_k, generator=gen)
        print("--- sample ---")
        print(corpus.decode(out[0].tolist()))
    return history


if __name__ == "__main__":
    main()
