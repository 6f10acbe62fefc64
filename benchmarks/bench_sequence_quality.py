"""Training quality, minigrad vs PyTorch: the same sequence model trained from the same initial weights on
the same data order, each framework in a process of its own; validation curves and seed-to-seed spread.

Models (the example files, loaded as written for minigrad and with `minigrad` renamed to `torch`):
  gpt:  examples/gpt_model.py on the Shakespeare characters (char_gpt's corpus and split): 2 layers,
        d_model 64, 4 heads, context 64, batch 16, dropout 0; AdamW (betas 0.9/0.99, weight decay 0.1 on
        the matrices), lr 3e-3 with a 20-step linear warm-up and a cosine decay to 3e-4, clip_grad_norm_ 1;
        random windows drawn from a NumPy generator seeded by the run's seed. Validation: the mean loss
        (nats/char) over 10 fixed batches of the validation part.
  lstm: examples/lstm_model.py on the Shakespeare words (lstm_lm's tokens, split and batching), vocabulary
        5,000, emsize = nhid = 128, 2 layers, dropout 0, batch 20, BPTT 35; SGD lr 20 divided by 4 when the
        validation loss stalls, clip_grad_norm_ 0.25, truncated BPTT with the hidden state carried and
        detached (repackage_hidden). Validation: perplexity over the first 10,000 validation tokens
        (10 streams, as examples/lstm_lm.py).
Dropout is 0 (--dropout to change): with the same weights and data the two frameworks then run the same
computation, so a same-seed pair differs only by floating-point rounding and its growth over training.
That growth is fast where training is chaotic (the LSTM at SGD lr 20: same-seed runs part after a few
dozen steps and the early validation perplexity swings by tens of percent from one evaluation to the
next), so the verdict compares means over seeds, and the report gives the seed-to-seed noise beside it
(the difference of the means over its standard error).

For each seed the parent builds the model in minigrad (mg.manual_seed(seed)) and saves its state_dict as
.npz; a minigrad child and a PyTorch child (`python bench_sequence_quality.py --child ...`, the repository
root on PYTHONPATH, BLAS / torch threads set to --threads) load it, train, and hand back their curves.
The parent prints both validation curves (mean over seeds, min-max), each framework's seed-to-seed
spread, the same-seed differences, and the verdicts against the targets: minigrad's final validation
loss within 0.05 nats of PyTorch's (gpt), its final perplexity within 3 % of PyTorch's (lstm), means
over the seeds at equal steps.

    python benchmarks/bench_sequence_quality.py                  # default: 3 seeds (about 10-15 min idle)
    python benchmarks/bench_sequence_quality.py --quick          # ~2 min idle: fewer steps
    python benchmarks/bench_sequence_quality.py --gpt-steps 600 --lstm-steps 400 --seeds 0 1 2 3 4
    python benchmarks/bench_sequence_quality.py --models lstm --perturb 1e-7   # + the rounding-noise floor
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
for p in (str(REPO), str(EXAMPLES)):
    if p not in sys.path:
        sys.path.insert(0, p)

GPT = dict(context=64, n_layer=2, n_head=4, d_model=64, batch=16, lr=3e-3, warmup=20, weight_decay=0.1,
           eval_iters=10, clip=1.0)
LSTM = dict(vocab=5000, emsize=128, nhid=128, nlayers=2, batch=20, bptt=35, lr=20.0, clip=0.25,
            val_tokens=10_000, eval_batch=10)
TARGET = {"gpt": ("loss", 0.05), "lstm": ("ppl", 0.03)}


def load_model(name, framework):
    """examples/<name> as a module, for minigrad or (the names renamed) for torch."""
    path = EXAMPLES / name
    src = path.read_text()
    if framework == "torch":
        src = src.replace("minigrad", "torch")
    mod = types.ModuleType(f"{path.stem}_{framework}")
    exec(compile(src, str(path), "exec"), mod.__dict__)
    return mod


# ---- data (NumPy only: the same arrays for both frameworks)

def gpt_data(data):
    from char_gpt import Corpus, load_corpus
    text, _ = load_corpus(data, prog="bench_sequence_quality")
    return Corpus(text)


def lstm_data(data):
    from lstm_lm import WordCorpus, batchify
    from char_gpt import load_corpus
    text, _ = load_corpus(data, prog="bench_sequence_quality")
    corpus = WordCorpus(text, LSTM["vocab"])
    return (len(corpus.itos), batchify(corpus.train, LSTM["batch"]),
            batchify(corpus.val[:LSTM["val_tokens"]], LSTM["eval_batch"]))


def build(model, L, vocab, framework):
    if model == "gpt":
        return load_model("gpt_model.py", framework).GPT(vocab, GPT["context"], GPT["n_layer"], GPT["n_head"],
                                                         GPT["d_model"], DROPOUT)
    mod = load_model("lstm_model.py", framework)
    return mod.RNNModel(vocab, LSTM["emsize"], LSTM["nhid"], LSTM["nlayers"], DROPOUT), mod.repackage_hidden


DROPOUT = 0.0


# ---- one training run (the child)

def gpt_lr(step, steps):
    if step < GPT["warmup"]:
        return GPT["lr"] * (step + 1) / GPT["warmup"]
    frac = (step - GPT["warmup"]) / max(1, steps - GPT["warmup"])
    lo = GPT["lr"] / 10
    return lo + 0.5 * (GPT["lr"] - lo) * (1 + math.cos(math.pi * min(1.0, frac)))


def train_gpt(L, framework, weights, seed, steps, eval_every, data):
    corpus = gpt_data(data)
    model = build("gpt", L, len(corpus.chars), framework)
    model.load_state_dict({k: L.from_numpy(v) for k, v in weights.items()})
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    opt = L.optim.AdamW([{"params": decay, "weight_decay": GPT["weight_decay"]},
                         {"params": no_decay, "weight_decay": 0.0}], lr=GPT["lr"], betas=(0.9, 0.99))
    B, T = GPT["batch"], GPT["context"]

    def batch(split, rng):
        starts = rng.integers(0, len(split) - T - 1, B)
        idx = starts[:, None] + np.arange(T)
        return L.from_numpy(split[idx]), L.from_numpy(split[idx + 1])

    def val_loss():
        model.eval()
        rng = np.random.default_rng(1234)
        with L.no_grad():
            out = float(np.mean([model(*batch(corpus.val, rng))[1].item() for _ in range(GPT["eval_iters"])]))
        model.train()
        return out

    rng = np.random.default_rng(seed)
    curve = {"step": [0], "val": [val_loss()], "train": [None]}
    model.train()
    t0, losses = time.perf_counter(), []
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = gpt_lr(step, steps)
        _, loss = model(*batch(corpus.train, rng))
        opt.zero_grad()
        loss.backward()
        L.nn.utils.clip_grad_norm_(model.parameters(), GPT["clip"])
        opt.step()
        losses.append(loss.item())
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            curve["step"].append(step + 1)
            curve["val"].append(val_loss())
            curve["train"].append(float(np.mean(losses)))
            losses = []
    curve["seconds"] = time.perf_counter() - t0
    return curve


def train_lstm(L, framework, weights, seed, steps, eval_every, data):
    vocab, train_data, val_data = lstm_data(data)
    model, repackage_hidden = build("lstm", L, vocab, framework)
    model.load_state_dict({k: L.from_numpy(v) for k, v in weights.items()})
    opt = L.optim.SGD(model.parameters(), lr=LSTM["lr"])
    F = L.nn.functional
    bptt = LSTM["bptt"]

    def get_batch(source, i):
        n = min(bptt, len(source) - 1 - i)
        return L.from_numpy(source[i:i + n]), L.from_numpy(source[i + 1:i + 1 + n].reshape(-1))

    def val_loss():
        model.eval()
        total, count = 0.0, 0
        hidden = model.init_hidden(val_data.shape[1])
        with L.no_grad():
            for i in range(0, len(val_data) - 1, bptt):
                x, y = get_batch(val_data, i)
                out, hidden = model(x, hidden)
                total += F.nll_loss(out, y, reduction="sum").item()
                count += y.shape[0]
        model.train()
        return total / count

    # the data order: the example's sequential streams, entered at a seed-dependent segment
    segments = len(range(0, len(train_data) - 1, bptt))
    offset = int(np.random.default_rng(seed).integers(0, segments))
    curve = {"step": [0], "val": [val_loss()], "train": [None], "lr": [LSTM["lr"]]}
    lr, best = LSTM["lr"], None
    hidden = model.init_hidden(LSTM["batch"])
    model.train()
    t0, losses = time.perf_counter(), []
    for step in range(steps):
        seg = (offset + step) % segments
        if seg == 0 and step > 0:
            hidden = model.init_hidden(LSTM["batch"])
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = get_batch(train_data, seg * bptt)
        hidden = repackage_hidden(hidden)
        opt.zero_grad()
        out, hidden = model(x, hidden)
        loss = F.nll_loss(out, y)
        loss.backward()
        L.nn.utils.clip_grad_norm_(model.parameters(), LSTM["clip"])
        opt.step()
        losses.append(loss.item())
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            v = val_loss()
            curve["step"].append(step + 1)
            curve["val"].append(v)
            curve["train"].append(float(np.mean(losses)))
            losses = []
            if best is None or v < best:
                best = v
            else:
                lr /= 4.0
            curve["lr"].append(lr)
    curve["seconds"] = time.perf_counter() - t0
    return curve


def child(args):
    global DROPOUT
    DROPOUT = args.dropout
    if args.child == "torch":
        import torch as L
        torch_threads = args.threads
        L.set_num_threads(torch_threads)
    else:
        import minigrad as L
    weights = dict(np.load(args.weights))
    train = train_gpt if args.model == "gpt" else train_lstm
    curve = train(L, args.child, weights, args.seed, args.steps, args.eval_every, args.data)
    Path(args.result).write_text(json.dumps(curve))


# ---- the parent

def initial_weights(model, seed, data_info, path):
    """The model built by minigrad from mg.manual_seed(seed), its state_dict saved to path (.npz)."""
    import minigrad as mg
    mg.manual_seed(seed)
    m = build(model, mg, data_info, "minigrad")
    m = m[0] if isinstance(m, tuple) else m
    np.savez(path, **{k: v.numpy() for k, v in m.state_dict().items()})


def vocab_size(model, data):
    return len(gpt_data(data).chars) if model == "gpt" else lstm_data(data)[0]


def run_child(framework, model, seed, weights, steps, eval_every, args, tmp):
    result = Path(tmp) / f"{model}-{framework}-{Path(weights).stem}-{seed}.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[v] = str(args.threads)
    cmd = [sys.executable, __file__, "--child", framework, "--model", model, "--seed", str(seed),
           "--weights", str(weights), "--steps", str(steps), "--eval-every", str(eval_every),
           "--result", str(result), "--threads", str(args.threads), "--dropout", str(args.dropout),
           "--lstm-lr", str(args.lstm_lr)]
    if args.data is not None:
        cmd += ["--data", str(args.data)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{framework} {model} seed {seed} failed:\n{p.stdout}\n{p.stderr}")
    return json.loads(result.read_text())


def summarize(model, curves, steps_label):
    """Print the curves and verdict for one model; curves[framework] = list over seeds."""
    metric, tol = TARGET[model]
    fw = [f for f in ("minigrad", "torch") if curves.get(f)]
    unit = "val loss (nats/char)" if model == "gpt" else "val perplexity"

    def value(c):
        return np.array(c["val"]) if model == "gpt" else np.exp(np.array(c["val"]))
    steps = curves[fw[0]][0]["step"]
    print(f"\n[{model}] {unit} at each evaluation: mean over {len(curves[fw[0]])} seeds [min-max]")
    print(f"  {'step':>6}  " + "  ".join(f"{f:>26}" for f in fw))
    for j, s in enumerate(steps):
        cells = []
        for f in fw:
            v = np.array([value(c)[j] for c in curves[f]])
            cells.append(f"{v.mean():10.4f} [{v.min():.4f}-{v.max():.4f}]".rjust(26))
        print(f"  {s:>6}  " + "  ".join(cells))
    finals = {f: np.array([value(c)[-1] for c in curves[f]]) for f in fw}
    for f in fw:
        secs = [c["seconds"] for c in curves[f]]
        print(f"  {f}: final {unit} per seed {np.round(finals[f], 4).tolist()}; seed-to-seed spread "
              f"(max-min) {np.ptp(finals[f]):.4f}, std {finals[f].std(ddof=1) if len(finals[f]) > 1 else 0:.4f}; "
              f"training {np.mean(secs):.0f} s per run (wall, loaded machine)")
    if curves.get("minigrad-perturbed"):
        pert = np.array([value(c)[-1] for c in curves["minigrad-perturbed"]])
        what = "nats" if metric == "loss" else "relative"
        d = pert - finals["minigrad"] if metric == "loss" else pert / finals["minigrad"] - 1
        print(f"  rounding-noise floor: minigrad from perturbed weights vs minigrad, final per seed: "
              f"{np.round(d, 4).tolist()} ({what}; the same-seed pairs below differ by no more than chaos "
              f"allows when these are as large)")
    if len(fw) < 2:
        print("  (PyTorch not available: no comparison)")
        return None
    a, b = finals["minigrad"], finals["torch"]
    same_seed = a - b
    # the seed noise the comparison has to beat: the standard error of the difference of the two means
    # (on the loss for gpt, on log-perplexity for lstm), and the step where same-seed runs part
    la, lb = (a, b) if metric == "loss" else (np.log(a), np.log(b))
    n = len(la)
    se = math.sqrt((la.var(ddof=1) + lb.var(ddof=1)) / n) if n > 1 else float("nan")
    va = np.array([c["val"] for c in curves["minigrad"]])
    vb = np.array([c["val"] for c in curves["torch"]])
    apart = np.abs(va - vb).max(axis=0) > 0.01
    first = steps[int(np.argmax(apart))] if apart.any() else None
    print(f"  same-seed runs: {'every evaluation within 0.01 nats' if first is None else f'first differ by more than 0.01 nats at step {first}'}"
          f"; difference of the means / its standard error over seeds: "
          f"{(la.mean() - lb.mean()) / se if se == se and se > 0 else float('nan'):+.2f} "
          f"(|z| < 2: within the seed-to-seed noise)")
    ta = np.array([c["train"][-1] for c in curves["minigrad"]])
    tb = np.array([c["train"][-1] for c in curves["torch"]])
    print(f"  mean training loss over the last {steps[-1] - steps[-2]} steps, mean over seeds: minigrad "
          f"{ta.mean():.4f} vs pytorch {tb.mean():.4f} ({ta.mean() - tb.mean():+.4f} nats; per seed "
          f"{np.round(ta - tb, 4).tolist()})")
    if metric == "loss":
        diff = a.mean() - b.mean()
        ok = abs(diff) <= tol
        print(f"  same-seed differences minigrad - pytorch: {np.round(same_seed, 4).tolist()} nats")
        print(f"  verdict: mean final val loss minigrad {a.mean():.4f} vs pytorch {b.mean():.4f}: difference "
              f"{diff:+.4f} nats (target within {tol}) -> {'MET' if ok else 'NOT MET'} at step {steps[-1]}")
    else:
        rel = a.mean() / b.mean() - 1
        ok = abs(rel) <= tol
        print(f"  same-seed ratios minigrad / pytorch - 1: {np.round(a / b - 1, 4).tolist()}")
        print(f"  verdict: mean final val perplexity minigrad {a.mean():.2f} vs pytorch {b.mean():.2f}: "
              f"{100 * rel:+.2f} % (target within {100 * tol:.0f} %) -> {'MET' if ok else 'NOT MET'} "
              f"at step {steps[-1]}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", type=Path, default=None, help="folder holding shakespeare.txt.gz")
    p.add_argument("--models", nargs="+", default=["gpt", "lstm"], choices=["gpt", "lstm"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--gpt-steps", type=int, default=400)
    p.add_argument("--lstm-steps", type=int, default=200)
    p.add_argument("--eval-every", type=int, default=None, help="default: steps / 4")
    p.add_argument("--quick", action="store_true", help="gpt 100 steps, lstm 40 steps (about 2 min idle)")
    p.add_argument("--threads", type=int, default=1, help="BLAS / torch threads of every child")
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--lstm-lr", type=float, default=LSTM["lr"],
                   help="the LSTM's initial SGD learning rate (PyTorch's example: 20)")
    p.add_argument("--perturb", type=float, default=0.0, metavar="EPS",
                   help="also train minigrad from the weights times (1 + EPS * N(0, 1)) per seed: the "
                        "rounding-noise floor (how far a same-seed pair parts without any framework difference)")
    p.add_argument("--json", type=Path, default=None, help="also write every curve here")
    # the child's arguments
    p.add_argument("--child", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    p.add_argument("--weights", help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args()
    LSTM["lr"] = args.lstm_lr
    if args.child:
        return child(args)
    if args.quick:
        args.gpt_steps, args.lstm_steps = 100, 40
    try:
        import torch  # noqa: F401
        frameworks = ["minigrad", "torch"]
    except ImportError:
        frameworks = ["minigrad"]
    import platform
    print(f"{__doc__.splitlines()[0]}")
    print(f"load average (1, 5, 15 min) at the start: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} core(s); python {platform.python_version()}, numpy {np.__version__}; "
          f"{args.threads} thread(s) per child; seeds {args.seeds}; dropout {args.dropout}")
    t_start = time.perf_counter()
    verdicts, everything = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            steps = args.gpt_steps if model == "gpt" else args.lstm_steps
            every = args.eval_every or max(1, steps // 4)
            cfg = GPT if model == "gpt" else LSTM
            print(f"\n[{model}] {steps} steps, evaluation every {every}; config {cfg}")
            info = vocab_size(model, args.data)
            curves = {f: [] for f in frameworks + (["minigrad-perturbed"] if args.perturb else [])}
            for seed in args.seeds:
                weights = Path(tmp) / f"{model}-{seed}.npz"
                initial_weights(model, seed, info, weights)
                runs = [(f, f, weights) for f in frameworks]
                if args.perturb:
                    w = dict(np.load(weights))
                    rng = np.random.default_rng(10_000 + seed)
                    pw = Path(tmp) / f"{model}-{seed}-perturbed.npz"
                    np.savez(pw, **{k: (v * (1 + args.perturb * rng.standard_normal(v.shape))).astype(v.dtype)
                                    if v.dtype.kind == "f" else v for k, v in w.items()})
                    runs.append(("minigrad-perturbed", "minigrad", pw))
                for f, fw, wpath in runs:
                    t0 = time.perf_counter()
                    c = run_child(fw, model, seed, wpath, steps, every, args, tmp)
                    curves[f].append(c)
                    print(f"  seed {seed} {f:>8}: final val {c['val'][-1]:.4f} "
                          f"({time.perf_counter() - t0:.0f} s with start-up)", flush=True)
            verdicts[model] = summarize(model, curves, steps)
            everything[model] = curves
    if args.json:
        args.json.write_text(json.dumps(everything))
    print(f"\nload average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"total {time.perf_counter() - t_start:.0f} s")
    return verdicts


if __name__ == "__main__":
    main()
