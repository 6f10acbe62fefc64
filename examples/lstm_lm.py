"""A word-level LSTM language model on the complete works of Shakespeare (PyTorch's word_language_model).

    python examples/lstm_lm.py                        # the default run (a few minutes; see README)
    python examples/lstm_lm.py --steps 4 --eval-interval 2 --val-tokens 700   # a smoke run

The model is examples/lstm_model.py: Embedding -> dropout -> 2-layer nn.LSTM -> dropout -> Linear
decoder (``--tied``: the decoder shares the embedding's weight), PyTorch's example's defaults
(emsize = nhid = 200, dropout 0.2, batch 20, BPTT 35, SGD at lr 20, clip_grad_norm_ 0.25).

Training is PyTorch's: the training tokens are laid out as --batch-size parallel streams
(``batchify``); each step takes the next --bptt tokens of every stream, starts from the hidden state
the previous segment ended with, detached from its history (``repackage_hidden``: truncated
backpropagation through time), and runs one plain SGD step after clipping the gradient norm. At the
end of the training tokens the streams start over (a new epoch) from zero states. Every
--eval-interval steps (and at the last) the run prints the mean training loss since the last report
and the validation loss and perplexity, and, as PyTorch's example does after each epoch, divides the
learning rate by 4 when the validation loss did not improve on the best so far.

Data: ``shakespeare.txt.gz`` (../shared/data/shakespeare/; found as examples/char_gpt.py finds it:
--data, $MINIGRAD_DATA, <repo>/../shared/data, the cache). The text is cut at the first line break
after 90 % of its characters: the part before trains, the rest validates. Tokenisation: lowercased;
tokens are words (runs of letters, with inner apostrophes: "o'er", "is't") and the punctuation marks
. , ; : ! ?; every non-empty line ends with ``<eos>`` (as PyTorch's data.py); other characters
(hyphens, quotes, brackets, digits) are dropped. The vocabulary is ``<unk>``, ``<eos>`` and the
--vocab - 2 most frequent other words of the training part (ties: first occurrence first); every
other word reads as ``<unk>`` (about 2 % of the tokens at the default 10,000).

Validation: the first --val-tokens tokens of the validation part (default 25,000 of its ~127,000,
to keep the default run short; 0: all of it), laid out as 10 streams (PyTorch's eval batch size) and
read in --bptt segments from zero states, the state carried across segments. The perplexity is
exp(mean loss per token).

- ``--out DIR``: ``checkpoint.mg`` (model, optimizer, learning rate, best validation loss, step,
  history, the carried hidden state and the dropout generator's state, written at each report with
  mg.save) and ``curves.png`` (matplotlib, optional; ``--no-plot``: none).
- ``--resume``: continue from ``DIR/checkpoint.mg``: ``--steps 200`` then ``--steps 300 --resume``
  follows the trajectory of ``--steps 300`` when 200 is a multiple of --eval-interval (a report at
  the last step may anneal the learning rate, and a longer run does not report there).
- ``--jit``: compile the training step with mg.jit (the eager numbers up to float32 rounding: the compiled
  program may sum in another order).
- ``--no-progress``: no per-step progress line between reports.
"""
import argparse
import collections
import json
import math
import re
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
import minigrad.nn.functional as F  # noqa: E402
from char_gpt import load_corpus  # noqa: E402
from lstm_model import RNNModel, repackage_hidden  # noqa: E402

CHECKPOINT, PLOT = "checkpoint.mg", "curves.png"
EVAL_BATCH = 10
TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*|[.,;:!?]")


def tokenize(text):
    """The token list of text: lowercased words and . , ; : ! ?, an <eos> after every non-empty line."""
    out = []
    for line in text.lower().split("\n"):
        words = TOKEN.findall(line)
        if words:
            out.extend(words)
            out.append("<eos>")
    return out


class WordCorpus:
    """Train / validation token ids (int64) and the vocabulary, built from the training part only."""

    def __init__(self, text, vocab=10_000):
        cut = text.find("\n", int(0.9 * len(text)))
        cut = len(text) if cut < 0 else cut
        train, val = tokenize(text[:cut]), tokenize(text[cut:])
        counts = collections.Counter(train)
        del counts["<eos>"]
        self.itos = ["<unk>", "<eos>"] + [w for w, _ in counts.most_common(max(0, vocab - 2))]
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        ids = collections.defaultdict(int, self.stoi)      # 0: <unk>
        self.train = np.fromiter(map(ids.__getitem__, train), np.int64, len(train))
        self.val = np.fromiter(map(ids.__getitem__, val), np.int64, len(val))

    def unk_rate(self, ids):
        return float(np.mean(ids == 0))


def batchify(data, bsz):
    """The token stream as bsz parallel columns (rows: time), the tail that does not fill a row dropped."""
    n = len(data) // bsz
    return np.ascontiguousarray(data[:n * bsz].reshape(bsz, n).T)


def get_batch(source, i, bptt):
    """Rows i .. i+bptt of source as input (seq, batch), the rows one later as the flat targets."""
    seq_len = min(bptt, len(source) - 1 - i)
    return mg.from_numpy(source[i:i + seq_len]), mg.from_numpy(source[i + 1:i + 1 + seq_len].reshape(-1))


@mg.no_grad()
def evaluate(model, source, bptt):
    """Mean loss per token over source (batchified), from zero states carried across segments."""
    model.eval()
    total, count = 0.0, 0
    hidden = model.init_hidden(source.shape[1])
    for i in range(0, len(source) - 1, bptt):
        data, targets = get_batch(source, i, bptt)
        output, hidden = model(data, hidden)
        total += F.nll_loss(output, targets, reduction="sum").item()
        count += targets.shape[0]
    model.train()
    return total / count


def plot(history, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot (pip install matplotlib)")
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(history["step"], history["train"], "o-")
    ax1.set(xlabel="step", ylabel="loss (nats / word)", title="training loss")
    ax2.plot(history["step"], np.exp(history["val"]), "o-", color="tab:green")
    ax2.set(xlabel="step", ylabel="perplexity", title="validation perplexity")
    ax2.set_yscale("log")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle("word-level LSTM LM on Shakespeare")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"curves: {path}")


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", type=Path, default=None, help="folder holding shakespeare.txt.gz")
    p.add_argument("--vocab", type=int, default=10_000, help="vocabulary size, <unk> and <eos> included")
    p.add_argument("--steps", type=int, default=300, help="total training steps (BPTT segments)")
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--bptt", type=int, default=35, help="sequence length of a segment")
    p.add_argument("--emsize", type=int, default=200)
    p.add_argument("--nhid", type=int, default=200)
    p.add_argument("--nlayers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--tied", action="store_true", help="tie the decoder's weight to the embedding's")
    p.add_argument("--lr", type=float, default=20.0, help="initial learning rate (divided by 4 on a stall)")
    p.add_argument("--clip", type=float, default=0.25, help="gradient norm clipping")
    p.add_argument("--eval-interval", type=int, default=100)
    p.add_argument("--val-tokens", type=int, default=25_000,
                   help="validate on the first N tokens of the validation part (0: all)")
    p.add_argument("--seed", type=int, default=1111, help="PyTorch's example's seed")
    p.add_argument("--out", type=Path, default=Path("runs") / "lstm_lm")
    p.add_argument("--resume", action="store_true", help=f"continue from OUT/{CHECKPOINT}")
    p.add_argument("--jit", action="store_true", help="compile the training step with mg.jit")
    p.add_argument("--no-progress", action="store_true", help="no per-step progress line between reports")
    p.add_argument("--no-plot", action="store_true", help=f"do not write OUT/{PLOT}")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.tied and args.emsize != args.nhid:
        sys.exit("error: --tied needs --emsize equal to --nhid")
    text, path = load_corpus(args.data, prog="lstm_lm")
    corpus = WordCorpus(text, args.vocab)
    V = len(corpus.itos)
    val_ids = corpus.val if args.val_tokens <= 0 else corpus.val[:args.val_tokens]
    print(f"corpus: {path}: {len(corpus.train):,} training / {len(corpus.val):,} validation tokens; vocabulary "
          f"{V:,} (<unk>: {100 * corpus.unk_rate(corpus.train):.1f} % of training, "
          f"{100 * corpus.unk_rate(corpus.val):.1f} % of validation tokens); validating on "
          f"{'all' if len(val_ids) == len(corpus.val) else f'the first {len(val_ids):,}'} validation tokens")
    train_data = batchify(corpus.train, args.batch_size)
    val_data = batchify(val_ids, EVAL_BATCH)
    segments = len(range(0, len(train_data) - 1, args.bptt))

    mg.manual_seed(args.seed)
    model = RNNModel(V, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied)
    opt = mg.optim.SGD(model.parameters(), lr=args.lr)
    lr, best_val, start = args.lr, None, 0
    history = {"step": [], "train": [], "val": [], "lr": []}
    hidden = model.init_hidden(args.batch_size)
    args.out.mkdir(parents=True, exist_ok=True)
    ckpt_path = args.out / CHECKPOINT
    if args.resume:
        if not ckpt_path.is_file():
            sys.exit(f"error: --resume: no checkpoint at {ckpt_path}")
        ckpt = mg.load(ckpt_path)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        lr, best_val, start = ckpt["lr"], ckpt["best_val"], ckpt["step"]
        history = {k: list(v) for k, v in ckpt["history"].items()}
        hidden = tuple(ckpt["hidden"])
        mg.random.default_generator.set_state(json.loads(ckpt["rng"]))
        print(f"resumed from {ckpt_path} at step {start} (lr {lr:g})")
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {args.nlayers}-layer LSTM, emsize {args.emsize}, nhid {args.nhid}, dropout {args.dropout}"
          f"{', tied' if args.tied else ''}: {n_params:,} parameters; {args.steps} steps of batch "
          f"{args.batch_size} x bptt {args.bptt} ({segments} steps per epoch), SGD lr {args.lr:g}, clip {args.clip}")

    def train_step(data, targets, h, c):
        output, (h, c) = model(data, (h, c))
        loss = F.nll_loss(output, targets)
        opt.zero_grad()
        loss.backward()
        mg.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        return loss, h, c

    step_fn = train_step
    if args.jit:
        step_fn = mg.jit(train_step, dynamic={0: 0, 1: 0})   # the epoch's last segment is shorter
        print("mode: mg.jit (compiled training step)")
    t0 = time.perf_counter()
    model.train()
    total, count = 0.0, 0
    for step in range(start, args.steps):
        i = (step % segments) * args.bptt
        if i == 0 and step > 0:
            hidden = model.init_hidden(args.batch_size)     # a new epoch: the streams start over
        for group in opt.param_groups:
            group["lr"] = lr
        data, targets = get_batch(train_data, i, args.bptt)
        hidden = repackage_hidden(hidden)
        loss, *hidden = step_fn(data, targets, *hidden)
        hidden = tuple(hidden)
        total, count = total + loss.item(), count + 1
        if not args.no_progress and (step + 1) % max(1, args.eval_interval // 10) == 0:
            print(f"  step {step + 1}: loss {total / count:.3f} ({time.perf_counter() - t0:.0f} s)", flush=True)
        last = step + 1 == args.steps
        if (step + 1) % args.eval_interval == 0 or last:
            val_loss = evaluate(model, val_data, args.bptt)
            train_loss = total / count
            total, count = 0.0, 0
            history["step"].append(step + 1)
            history["train"].append(train_loss)
            history["val"].append(val_loss)
            history["lr"].append(lr)
            print(f"step {step + 1:5d} (epoch {step / segments:.2f}): train loss {train_loss:.3f}, val loss "
                  f"{val_loss:.3f}, val ppl {math.exp(val_loss):.1f} (lr {lr:g}, {time.perf_counter() - t0:.0f} s)",
                  flush=True)
            if best_val is None or val_loss < best_val:
                best_val = val_loss
            else:
                lr /= 4.0          # PyTorch's example: anneal when the validation loss stalls
            mg.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "lr": lr, "best_val": best_val,
                     "step": step + 1, "history": history, "hidden": list(repackage_hidden(hidden)),
                     "rng": json.dumps(mg.random.default_generator.get_state())}, ckpt_path)
    if history["step"]:
        if not args.no_plot:
            plot(history, args.out / PLOT)
        print(f"final validation perplexity {math.exp(history['val'][-1]):.1f} (loss {history['val'][-1]:.3f} "
              f"nats/word) after {history['step'][-1]} steps, {time.perf_counter() - t0:.0f} s")
    return history


if __name__ == "__main__":
    main()
