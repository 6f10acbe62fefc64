"""Train examples/mnist_cnn.py's CNN data-parallel on several MPI ranks with DistributedDataParallel.

    mpirun -n 2 python examples/mnist_ddp.py                    # as root: see docs/distributed.md
    python -m minigrad.distributed.run -n 2 examples/mnist_ddp.py --epochs 1 --limit 2000
    python -m minigrad.distributed.run -n 2 examples/mnist_ddp.py --resume      # continue

The same model, optimizer (Adam, cosine schedule), augmentation and global batch (--batch-size,
split evenly over the ranks) as mnist_cnn.py, so a run on N ranks follows the single-process
example's recipe. Each rank trains on its DistributedSampler shard; DDP averages the gradients.
BatchNorm statistics are per rank (PyTorch's default) unless --sync-bn. Rank 0 alone prints and
writes the checkpoint (atomically, with mg.save); with --resume every rank loads it. The random
streams (shuffling, dropout, shifts) are derived from (seed, rank, epoch), so a resumed run follows
exactly the trajectory of an uninterrupted one; resumed to another --epochs, the learning-rate
schedule is rebuilt for the new length (see _common.py).
"""
import copy
import sys
import time

import numpy as np

import _common
from mnist_cnn import build_model

import minigrad as mg
import minigrad.distributed as dist
import minigrad.nn as nn


def epoch_streams(seed, rank, epoch):
    """The augmentation generator for (seed, rank, epoch); also reseeds the default one (Dropout)."""
    mg.manual_seed(int(np.random.SeedSequence([seed, rank, epoch]).generate_state(1)[0]))
    return np.random.default_rng([seed, rank, epoch, 1])


def evaluate(model, test_set, transform, rank, world):
    """Accuracy over the whole test set: each rank scores every world-th image, counts are summed."""
    shard = mg.data.Subset(test_set, range(rank, len(test_set), world))
    loader = mg.data.DataLoader(shard, batch_size=1000)
    model.eval()
    correct, count = 0, 0
    with mg.no_grad():
        for x, y in loader:
            correct += int((model(transform(x, False, None)).argmax(1) == y).sum().item())
            count += len(y)
    totals = mg.tensor([correct, count], dtype=mg.int64)
    dist.all_reduce(totals)
    c, n = totals.tolist()
    return c / n


def main(argv=None):
    parser = _common.make_parser("mnist_ddp", __doc__.splitlines()[0],
                                 epochs=8, batch_size=64, lr=2e-3, shift=2)
    parser.add_argument("--dropout", type=float, default=0.25)
    parser.add_argument("--sync-bn", action="store_true", help="BatchNorm statistics over all ranks")
    args = parser.parse_args(argv)

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        sys.exit(f"error: --batch-size {args.batch_size} is not divisible by the {world} ranks")
    log = print if rank == 0 else (lambda *a, **k: None)

    mg.manual_seed(args.seed)
    train_set, test_set = _common.load_data(mg.data.datasets.MNIST, args, log=log)
    model = build_model(args.dropout)
    if args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    opt = mg.optim.Adam(model.parameters(), lr=args.lr)
    sched = mg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)

    ckpt_path = args.out / _common.CHECKPOINT
    start, history = 0, {"train_loss": [], "test_acc": [], "epoch_time": [], "lr": []}
    if args.resume:  # every rank loads the same file (on several machines: a shared file system)
        if not ckpt_path.is_file():
            sys.exit(f"error: --resume: no checkpoint at {ckpt_path}")
        fresh = copy.deepcopy(sched.state_dict())  # the schedule built for this run's --epochs
        ckpt = mg.load(ckpt_path)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        sched.load_state_dict(ckpt["scheduler"])
        start = ckpt["epoch"]
        history = {k: list(v) for k, v in ckpt["history"].items()}
        history.setdefault("lr", [])
        log(f"resumed from {ckpt_path} after epoch {start}")
        if ckpt["epochs"] != args.epochs and start < args.epochs:  # the schedule of the new length
            _common.rebuild_schedule(sched, fresh, start)
            log(_common.resume_note(ckpt["epochs"], args.epochs, start))
    ddp = nn.parallel.DistributedDataParallel(model)  # after loading: rank 0's weights win anyway

    sampler = mg.data.DistributedSampler(train_set, shuffle=True, seed=args.seed)
    loader = mg.data.DataLoader(train_set, batch_size=args.batch_size // world, sampler=sampler)
    transform = _common.image_batches(_common.MNIST_MEAN_STD, args.shift)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"MNIST CNN, DDP on {world} ranks: {len(train_set)} training / {len(test_set)} test images, "
        f"{n_params:,} parameters, {args.epochs} epochs, global batch {args.batch_size} "
        f"({args.batch_size // world} per rank), lr {args.lr:g}, sync BN {args.sync_bn}")
    if rank == 0:
        args.out.mkdir(parents=True, exist_ok=True)

    for epoch in range(start + 1, args.epochs + 1):
        t0 = time.perf_counter()
        sampler.set_epoch(epoch)
        rng = epoch_streams(args.seed, rank, epoch)
        history["lr"].append(opt.param_groups[0]["lr"])  # this epoch's learning rate
        loss = _common.train_epoch(ddp, loader, opt, batch_transform=transform, rng=rng,
                                   desc=f"epoch {epoch}/{args.epochs}",
                                   show_progress=rank == 0 and not args.no_progress)
        sched.step()
        mean_loss = mg.tensor([loss], dtype=mg.float64)
        dist.all_reduce(mean_loss, dist.ReduceOp.AVG)  # every shard has the same size
        acc = evaluate(ddp, test_set, transform, rank, world)
        dt = time.perf_counter() - t0
        history["train_loss"].append(mean_loss.item())
        history["test_acc"].append(acc)
        history["epoch_time"].append(dt)
        log(f"epoch {epoch:3d}/{args.epochs}: train loss {mean_loss.item():.4f}  "
            f"test accuracy {100 * acc:.2f}%  ({dt:.1f} s)", flush=True)
        if rank == 0:  # mg.save writes atomically: a crash mid-write leaves the old checkpoint
            mg.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                     "scheduler": sched.state_dict(), "epoch": epoch, "epochs": args.epochs,
                     "world_size": world, "history": history}, ckpt_path)
        dist.barrier()  # nobody races ahead (or resumes) before the checkpoint exists
        if args.stop_after is not None and epoch >= args.stop_after and epoch < args.epochs:
            log(f"stopping after epoch {epoch} (--stop-after); continue with --resume")
            break

    if rank == 0 and history["test_acc"]:
        _common.plot_history(history, args.out / _common.PLOT, f"MNIST CNN, DDP x{world}")
        label = "final" if len(history["test_acc"]) >= args.epochs else "latest"
        print(f"checkpoint: {ckpt_path}")
        print(f"{label} test accuracy: {100 * history['test_acc'][-1]:.2f}% "
              f"({len(history['test_acc'])} epochs, {sum(history['epoch_time']):.1f} s)")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
