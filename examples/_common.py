"""Shared pieces of the training examples: CLI, data, training loop, checkpoints, plots.

Each example (mnist_mlp.py, mnist_cnn.py, fashion_mnist.py) builds its model and optimizer and
hands them to :func:`fit`, which owns everything else:

- ``--data``: the data folder. Without it the dataset classes resolve it themselves, in this
  order: ``$MINIGRAD_DATA``, ``<repo>/../shared/data`` (when it exists), the per-user cache
  ``$XDG_CACHE_HOME/minigrad`` (``~/.cache/minigrad``). They look for their files in the folder
  and in its ``mnist-10k`` / ``fashion-mnist`` / ``MNIST/raw`` subfolders, so either the shared
  folder or the dataset folder itself works. When no folder holds the files they are downloaded
  (official files, MD5-checked, written atomically) into ``--data``, ``$MINIGRAD_DATA`` or the
  cache; ``--no-download`` turns that off (offline, the error says which files to put where).
- ``--limit N`` / ``--test-limit N``: train / evaluate on the first N images only. The run says
  which training set it used: the 10k subset in ``../shared/data/mnist-10k`` or the full 60k.
- ``--out DIR``: where ``checkpoint.mg`` (written each epoch with ``mg.save``) and
  ``curves.png`` (train loss and test accuracy per epoch) go.
- ``--resume``: reload ``DIR/checkpoint.mg`` and continue. The checkpoint holds the model,
  optimizer and scheduler state dicts plus the state of both random generators (the loader's
  shuffling generator and the default one, which Dropout draws from), so a run interrupted
  (``--stop-after``, or killed) and resumed with the same ``--epochs`` follows exactly the
  trajectory of the uninterrupted run. Resuming to another length (``--epochs 2`` then
  ``--epochs 4 --resume``) rebuilds the learning-rate schedule for the new length: the remaining
  epochs use exactly the learning rates an uninterrupted ``--epochs 4`` run uses for them (not the
  2-epoch schedule's, which has reached 0), and the run says so; the epochs already done keep the
  learning rates they had, so the result is not that of a fresh 4-epoch run. The learning rate of
  each epoch is in the checkpoint's history (``"lr"``).

tqdm and matplotlib are optional: tqdm's bars are drawn only on a terminal; without tqdm, or
when the output is redirected, progress is a plain line every ~10% of an epoch (``--no-progress``:
none); without matplotlib the plot is skipped with a message naming the pip extra.
"""
import argparse
import copy
import json
import sys
import warnings
import time
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

# Run from a checkout without installing: put the repository root on the path.
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import minigrad as mg  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from minigrad._optional import install_hint  # noqa: E402  (the pip extra that installs a package)

try:
    from tqdm import tqdm
except ImportError:  # optional dependency
    tqdm = None

CHECKPOINT = "checkpoint.mg"
PLOT = "curves.png"


def make_parser(name, description, *, epochs, batch_size, lr, shift=0, seed=0):
    """The CLI every training example shares; ``name`` names the default output folder."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", type=Path, default=None,
                   help="data folder (default: $MINIGRAD_DATA, else <repo>/../shared/data if it "
                        "exists, else the cache $XDG_CACHE_HOME/minigrad)")
    p.add_argument("--epochs", type=int, default=epochs, help="total number of epochs")
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--lr", type=float, default=lr, help="peak learning rate")
    p.add_argument("--seed", type=int, default=seed)
    p.add_argument("--shift", type=int, default=shift,
                   help="augmentation: shift training images by up to this many pixels")
    p.add_argument("--limit", type=int, default=None,
                   help="train on the first N training images only (smoke runs)")
    p.add_argument("--test-limit", type=int, default=None,
                   help="evaluate on the first N test images only (smoke runs)")
    p.add_argument("--out", type=Path, default=Path("runs") / name,
                   help="folder for the checkpoint and the PNG of the curves")
    p.add_argument("--resume", action="store_true",
                   help=f"continue from OUT/{CHECKPOINT}")
    p.add_argument("--stop-after", type=int, default=None, metavar="K",
                   help="stop after epoch K as if interrupted (the run can then be --resume'd)")
    p.add_argument("--download", action=argparse.BooleanOptionalAction, default=True,
                   help="download the official files when no data folder holds them")
    p.add_argument("--no-progress", action="store_true", help="no progress display (tqdm bars on a terminal, a line per ~10%% otherwise)")
    p.add_argument("--jit", action="store_true",
                   help="compile the training step with mg.jit and the evaluation with mg.compile "
                        "(same results as eager; the first epoch includes tracing)")
    return p


def require(module, feature):
    """Import an optional package, or exit naming the pip extra that installs it (no traceback)."""
    import importlib
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or e.name.partition(".")[0] != module.partition(".")[0]:
            raise
        sys.exit(f"error: {feature} needs {module}, which is not installed: {install_hint(module)}")


def config_line():
    """One line saying what this process computes with (versions, numba on/off, BLAS and its
    threads, cores); ``mg.show_config()`` prints the whole report."""
    return "config: " + mg.__config__.summary()


def load_data(dataset_cls, args, log=print):
    """(train, test) datasets; ``train`` cut to the first ``args.limit`` images if given.

    Prints (with ``log``: rank 0's print in a distributed run, nothing elsewhere) the config line
    and where the data came from and which training set it is (subset or full).
    """
    log(config_line())
    try:  # a missing or offline dataset names every missing file of both splits at once
        train = dataset_cls(args.data, train=True, download=args.download)
        test = dataset_cls(args.data, train=False, download=args.download)
    except mg.data.datasets.DatasetNotFoundError as e:  # --no-download: this CLI's switch, not download=True
        sys.exit(f"error: {e.message('Run without --no-download to download them')}\n"
                 f"(or point --data or $MINIGRAD_DATA at a folder that holds them)")
    except RuntimeError as e:
        sys.exit(f"error: {e}\n(point --data or $MINIGRAD_DATA at the data folder)")
    log(describe_training_set(train, args.limit))
    if args.limit is not None:
        if args.limit <= 0:
            sys.exit("error: --limit must be positive")
        train = mg.data.Subset(train, range(min(args.limit, len(train))))
    if args.test_limit is not None:
        if args.test_limit <= 0:
            sys.exit("error: --test-limit must be positive")
        test = mg.data.Subset(test, range(min(args.test_limit, len(test))))
    return train, test


OFFICIAL_TRAIN_SIZE = 60000  # MNIST and Fashion-MNIST alike


def describe_training_set(train, limit=None):
    """One line naming the training set: its folder, and the full 60k or a subset of it."""
    n = len(train)
    which = ("the full official training set" if n == OFFICIAL_TRAIN_SIZE else
             f"a {n:,}-image subset of the official {OFFICIAL_TRAIN_SIZE:,}")
    used = f"; training on the first {min(limit, n):,} (--limit)" if limit is not None and limit < n else ""
    return f"data: {train.folder}: {n:,} training images, {which}{used}"


# ---- batch preprocessing (normalisation and augmentation, on whole batches in NumPy)

MNIST_MEAN_STD = (0.1307, 0.3081)
FASHION_MNIST_MEAN_STD = (0.2860, 0.3530)


def random_shift(images, max_shift, rng):
    """Translate each image of a (B, C, H, W) batch by its own random offset in
    [-max_shift, max_shift] pixels along each axis, filling with zeros (one gather, no loop)."""
    if max_shift <= 0:
        return images
    B, C, H, W = images.shape
    s = max_shift
    padded = np.pad(images, ((0, 0), (0, 0), (s, s), (s, s)))
    windows = sliding_window_view(padded, (H, W), axis=(2, 3))  # (B, C, 2s+1, 2s+1, H, W)
    dy = rng.integers(0, 2 * s + 1, B)
    dx = rng.integers(0, 2 * s + 1, B)
    return np.ascontiguousarray(windows[np.arange(B), :, dy, dx])


def image_batches(mean_std, max_shift=0):
    """A ``batch_transform`` for :func:`fit`: normalise by (mean, std); while training, also
    shift each image by up to ``max_shift`` pixels."""
    mean, std = np.float32(mean_std[0]), np.float32(mean_std[1])

    def transform(x, train, rng):
        a = x.data.numpy()
        if train and max_shift:
            a = random_shift(a, max_shift, rng)
        return mg.from_numpy((a - mean) / std)
    return transform


# ---- progress

class _PlainProgress:
    """What the loop needs from tqdm, printing a line every ~10% instead."""

    def __init__(self, iterable, total, desc):
        self.iterable, self.total, self.desc = iterable, total, desc
        self.every = max(1, total // 10)
        self.postfix = ""

    def __iter__(self):
        for i, item in enumerate(self.iterable, 1):
            yield item
            if i % self.every == 0 or i == self.total:
                print(f"  {self.desc}: {i}/{self.total} {self.postfix}", flush=True)

    def set_postfix_str(self, s):
        self.postfix = s

    def close(self):
        pass


def progress(iterable, total, desc, enabled=True):
    """A progress display for the loop: tqdm's bar on a terminal; a line every ~10% when tqdm is
    missing or the output is not a terminal (a redirected log gets no bar redraws); None when
    ``enabled`` is False (``--no-progress``)."""
    if not enabled:
        return None
    if tqdm is not None and sys.stderr.isatty():  # tqdm draws on stderr
        return tqdm(iterable, total=total, desc=desc, leave=False, dynamic_ncols=True)
    return _PlainProgress(iterable, total, desc)


# ---- train / evaluate

def make_train_step(model, opt):
    """The training step: forward, zero_grad, backward, optimizer step; returns the loss.
    ``mg.jit(make_train_step(model, opt))`` is its compiled drop-in replacement."""
    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return train_step


def train_epoch(model, loader, opt, *, batch_transform=None, rng=None, desc="train",
                show_progress=True, step=None):
    """One pass over ``loader``; returns the mean training loss (weighted by batch size).
    ``step(x, y)`` (optional, e.g. a jitted :func:`make_train_step`) replaces the eager step."""
    model.train()
    if step is None:
        step = make_train_step(model, opt)
    bar = progress(loader, len(loader), desc, show_progress)
    total, count = 0.0, 0
    for i, (x, y) in enumerate(bar if bar is not None else loader):
        if batch_transform is not None:
            x = batch_transform(x, True, rng)
        loss = step(x, y)
        n = len(y)
        total += loss.item() * n
        count += n
        if bar is not None and i % 10 == 0:
            bar.set_postfix_str(f"loss {total / count:.4f}")
    if bar is not None:
        bar.close()
    return total / count


def evaluate(model, loader, batch_transform=None, predict=None):
    """Test accuracy in [0, 1], computed under mg.no_grad() with the model in eval mode.
    ``predict`` (optional, e.g. ``mg.compile(model)``) replaces ``model(x)``."""
    model.eval()
    predict = model if predict is None else predict
    correct, count = 0, 0
    with mg.no_grad():
        for x, y in loader:
            if batch_transform is not None:
                x = batch_transform(x, False, None)
            correct += int((predict(x).argmax(1) == y).sum().item())
            count += len(y)
    return correct / count


# ---- checkpoints and plots

def _rng_state(gen):
    return json.dumps(gen.get_state())  # PCG64's 128-bit ints: keep them exact as JSON text


def _set_rng_state(gen, text):
    gen.set_state(json.loads(text))


def save_checkpoint(path, model, opt, scheduler, epoch, epochs, history, loader_gen, aug_gen):
    mg.save({
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "epoch": epoch,
        "epochs": epochs,
        "history": history,
        "rng": {"loader": _rng_state(loader_gen), "augment": _rng_state(aug_gen),
                "default": _rng_state(mg.random.default_generator)},
    }, path)


def load_checkpoint(path, model, opt, scheduler, loader_gen, aug_gen):
    ckpt = mg.load(path)
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    if scheduler is not None and ckpt.get("scheduler") is not None:
        scheduler.load_state_dict(ckpt["scheduler"])
    _set_rng_state(loader_gen, ckpt["rng"]["loader"])
    _set_rng_state(aug_gen, ckpt["rng"]["augment"])
    _set_rng_state(mg.random.default_generator, ckpt["rng"]["default"])
    return ckpt["epoch"], ckpt["epochs"], {k: list(v) for k, v in ckpt["history"].items()}


def rebuild_schedule(scheduler, fresh_state, start):
    """Put ``scheduler`` (and its optimizer's learning rates) where an uninterrupted run of the
    length it was built for is after ``start`` epochs.

    ``fresh_state`` is the scheduler's ``state_dict()`` as constructed for the new run (before a
    checkpoint overwrote it). Used when a run is resumed to another length than it was planned
    for: the checkpoint's schedule belongs to the old length (a cosine schedule has reached its
    minimum at the old end), so it is replaced by the new length's, replayed from the start with
    the same arithmetic as the uninterrupted run (so its learning rates are the same numbers).
    """
    scheduler.load_state_dict(copy.deepcopy(fresh_state))
    for group, base_lr in zip(scheduler.optimizer.param_groups, scheduler.base_lrs):
        group["lr"] = group["initial_lr"] = base_lr
    with warnings.catch_warnings():  # stepping without optimizer steps between: a replay
        warnings.simplefilter("ignore")
        for _ in range(start):
            scheduler.step()


def resume_note(planned, epochs, start):
    """What a resume to another length than planned does (printed by the examples)."""
    return (f"note: the checkpoint's run was planned for {planned} epochs; its learning-rate schedule is "
            f"rebuilt for {epochs}: epochs {start + 1}-{epochs} use the learning rates of an uninterrupted "
            f"{epochs}-epoch run, while epochs 1-{start} keep those of the {planned}-epoch schedule, so the "
            f"result is not that of a fresh {epochs}-epoch run")


def plot_history(history, path, title):
    """Train loss and test accuracy per epoch, side by side, to ``path`` (PNG)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: skipping the plot ({install_hint('matplotlib')})")
        return False
    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, history["train_loss"], "o-")
    ax1.set(xlabel="epoch", ylabel="train loss", title="training loss")
    ax1.set_yscale("log")
    ax2.plot(epochs, 100 * np.asarray(history["test_acc"]), "o-", color="tab:green")
    ax2.set(xlabel="epoch", ylabel="test accuracy (%)", title="test accuracy")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# ---- the whole run

def fit(args, model, opt, train_set, test_set, *, scheduler=None, batch_transform=None,
        title="training"):
    """Train for ``args.epochs`` epochs (resuming if asked), checkpointing and plotting each epoch.

    ``scheduler`` (optional) is stepped once per epoch. ``batch_transform(x, train, rng)``
    (optional) maps each input batch before the model sees it (see :func:`image_batches`);
    ``rng`` is a NumPy Generator for augmentation, seeded from ``args.seed`` and checkpointed.
    Returns the history dict
    ``{"train_loss": [...], "test_acc": [...], "epoch_time": [...]}``.
    """
    loader_gen = mg.Generator().manual_seed(args.seed)
    aug_gen = mg.Generator().manual_seed(args.seed + 1)
    train_loader = mg.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                      generator=loader_gen)
    test_loader = mg.data.DataLoader(test_set, batch_size=1000)
    args.out.mkdir(parents=True, exist_ok=True)
    ckpt_path = args.out / CHECKPOINT

    start, history = 0, {"train_loss": [], "test_acc": [], "epoch_time": [], "lr": []}
    if args.resume:
        if not ckpt_path.is_file():
            sys.exit(f"error: --resume: no checkpoint at {ckpt_path}")
        fresh = copy.deepcopy(scheduler.state_dict()) if scheduler is not None else None
        start, planned, history = load_checkpoint(ckpt_path, model, opt, scheduler, loader_gen,
                                                  aug_gen)
        history.setdefault("lr", [])
        print(f"resumed from {ckpt_path} after epoch {start}")
        if planned != args.epochs and scheduler is not None and start < args.epochs:
            rebuild_schedule(scheduler, fresh, start)
            print(resume_note(planned, args.epochs, start))
        if start >= args.epochs:
            print(f"nothing to do: the checkpoint already has {start} epochs (--epochs {args.epochs})")

    n_params = sum(p.numel() for p in model.parameters())
    print(f"{title}: {len(train_set)} training / {len(test_set)} test images, "
          f"{n_params:,} parameters, {args.epochs} epochs, batch {args.batch_size}, lr {args.lr:g}")
    step = predict = None
    if getattr(args, "jit", False):
        # dim 0 (the batch) is dynamic: the last, smaller batch gets its own program once, not
        # a retrace warning; the learning rate the scheduler sets is an input of the program
        step = mg.jit(make_train_step(model, opt), dynamic=0)
        predict = mg.compile(model, dynamic=0)
        print("mode: mg.jit (compiled training step and evaluation)")
    for epoch in range(start + 1, args.epochs + 1):
        t0 = time.perf_counter()
        history["lr"].append(opt.param_groups[0]["lr"])  # this epoch's learning rate
        loss = train_epoch(model, train_loader, opt, batch_transform=batch_transform,
                           rng=mg.random.get_rng(aug_gen), desc=f"epoch {epoch}/{args.epochs}",
                           show_progress=not args.no_progress, step=step)
        if scheduler is not None:
            scheduler.step()
        acc = evaluate(model, test_loader, batch_transform, predict=predict)
        dt = time.perf_counter() - t0
        history["train_loss"].append(loss)
        history["test_acc"].append(acc)
        history["epoch_time"].append(dt)
        print(f"epoch {epoch:3d}/{args.epochs}: train loss {loss:.4f}  "
              f"test accuracy {100 * acc:.2f}%  ({dt:.1f} s)", flush=True)
        save_checkpoint(ckpt_path, model, opt, scheduler, epoch, args.epochs, history,
                        loader_gen, aug_gen)
        if args.stop_after is not None and epoch >= args.stop_after and epoch < args.epochs:
            print(f"stopping after epoch {epoch} (--stop-after); continue with --resume")
            break

    if history["test_acc"]:
        plot_history(history, args.out / PLOT, title)
        print(f"checkpoint: {ckpt_path}   curves: {args.out / PLOT}")
        label = "final" if len(history["test_acc"]) >= args.epochs else "latest"
        print(f"{label} test accuracy: {100 * history['test_acc'][-1]:.2f}% "
              f"({len(history['test_acc'])} epochs, {sum(history['epoch_time']):.1f} s)")
        if step is not None:
            print(f"mg.jit: the training step traced {step.traces} times, the evaluation "
                  f"{predict.traces} times; epoch times {', '.join(f'{t:.1f}' for t in history['epoch_time'])} s")
    return history
