"""Data-parallel training throughput: the MNIST CNN on 1 and 2 MPI ranks, and where the time goes.

    python benchmarks/bench_ddp.py              # about three minutes; --steps / --rounds to change

Every configuration runs in processes of its own (``mpirun -n R python bench_ddp.py --child ...``,
loopback only), in alternating rounds so a burst of load from elsewhere hits each of them:

- ``1 rank (1 thread)``: one process, one BLAS thread, global batch 64 (no communication);
- ``1 rank, batch 32``: the same at batch 32 -- one rank's share of the work on 2 ranks;
- ``1 proc, 2 threads``: batch 64 with two BLAS threads (what one process gets from this machine);
- ``2 ranks, no communication``: two processes each training on 32 images per step with no
  communication at all (each takes its own steps): the most 2 ranks can do on this machine,
  including what running side by side costs (shared L3 cache and memory bandwidth);
- ``2 ranks, DDP``: DistributedDataParallel, one BLAS thread per rank, 32 images per rank
  (global batch 64), default 25 MiB buckets (for this 0.8 MB model: one bucket, started when
  the last gradient is ready);
- ``2 ranks, DDP small buckets``: ``bucket_cap_mb=0.05``: the classifier's gradients start
  reducing while the convolutions' backward still runs (overlap);
- ``2 ranks, flat after backward``: no DDP; one all-reduce of all gradients flattened, after
  backward (bucketed, no overlap);
- ``2 ranks, per-tensor after backward``: one blocking all-reduce per parameter after backward
  (neither bucketing nor overlap).

Columns: throughput in global images per second over the timed steps (median over rounds, min-max
in brackets); wall ms per step; CPU ms per step outside communication waits (process CPU time,
median [min-max] over ranks and rounds: what load from other programs moves least; what DDP's own
work adds shows as "2 ranks, DDP" minus "2 ranks, no communication"); per-rank compute ms per step
(wall step time minus the time that rank was blocked on communication); and the
communication-wait share of step time: in the manual variants the all-reduce calls (with the flat
variant's copies), with DDP the buffer broadcast before each forward plus the wait at the end of
backward. On 2 ranks the wait also holds load imbalance (one rank waiting for the other).

The bound lines say what compute alone allows: 2 ranks on 32 images each can be at most
T(batch 64) / T(batch 32) times faster than 1 rank on 64 (communication free, no contention), and
at most the "no communication" row's speed-up with both ranks actually running at once.
Inputs are random MNIST-shaped batches (the arithmetic is the same as for real images).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "examples"))

UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

CONFIGS = {  # name -> (ranks, BLAS threads per rank, mode)
    "1 rank (1 thread)": (1, 1, "local"),
    "1 rank, batch 32": (1, 1, "local32"),
    "1 proc, 2 threads": (1, 2, "local"),
    "2 ranks, no communication": (2, 1, "nocomm"),
    "2 ranks, DDP": (2, 1, "ddp"),
    "2 ranks, DDP small buckets": (2, 1, "ddp_small"),
    "2 ranks, flat after backward": (2, 1, "flat"),
    "2 ranks, per-tensor after backward": (2, 1, "per_tensor"),
}
GLOBAL_BATCH = 64


def child(mode, steps, warmup):
    import numpy as np

    import minigrad as mg
    import minigrad.distributed as dist
    import minigrad.nn.functional as F
    from mnist_cnn import build_model

    distributed = not mode.startswith("local")
    if distributed:
        dist.init_process_group("mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    mg.manual_seed(0)
    model = build_model()
    net = model
    if mode == "ddp":
        net = mg.nn.parallel.DistributedDataParallel(model)
    elif mode == "ddp_small":
        net = mg.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.05)
    opt = mg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(rank)
    per_rank = GLOBAL_BATCH // 2 if mode == "local32" else GLOBAL_BATCH // world
    batches = [(mg.from_numpy(rng.standard_normal((per_rank, 1, 28, 28)).astype(np.float32)),
                mg.from_numpy(rng.integers(0, 10, per_rank))) for _ in range(8)]
    params = list(model.parameters())
    comm = [0.0, 0.0]  # wall and CPU seconds in the manual variants' all-reduce calls

    def reduce_after_backward():
        t0, c0 = time.perf_counter(), time.process_time()
        if mode == "flat":
            flat = mg.from_numpy(np.concatenate([p.grad.numpy().ravel() for p in params]))
            dist.all_reduce(flat, dist.ReduceOp.AVG)
            off = 0
            for p in params:
                n = p.numel()
                p.grad.copy_(flat[off:off + n].reshape(p.shape))
                off += n
        else:
            for p in params:
                dist.all_reduce(p.grad, dist.ReduceOp.AVG)
        comm[0] += time.perf_counter() - t0
        comm[1] += time.process_time() - c0

    def step(i):
        x, y = batches[i % len(batches)]
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        if mode in ("flat", "per_tensor"):
            reduce_after_backward()
        opt.step()

    for i in range(warmup):
        step(i)
    if distributed:
        dist.barrier()
    comm[:] = [0.0, 0.0]
    if hasattr(net, "_comm_wait_s"):
        net._comm_wait_s = net._comm_wait_cpu_s = 0.0
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(steps):
        step(i)
    cpu = time.process_time() - c0
    t1 = time.perf_counter()
    if distributed:
        dist.barrier()  # the last rank to finish sets the pace: elapsed ends when both are done
    elapsed = time.perf_counter() - t0
    waited, waited_cpu = (net._comm_wait_s, net._comm_wait_cpu_s) if hasattr(net, "_comm_wait_s") else comm
    # per rank: [wait share of its step time, compute ms/step (its own steps minus its waits),
    # CPU ms/step outside the waits (a waiting rank spins: that CPU time is not compute)]
    mine = [waited / elapsed, 1e3 * ((t1 - t0) - waited) / steps, 1e3 * (cpu - waited_cpu) / steps]
    per_rank = [mine]
    if distributed:
        parts = [mg.zeros(3, dtype=mg.float64) for _ in range(world)]
        dist.all_gather(parts, mg.tensor(mine, dtype=mg.float64))
        per_rank = [p.tolist() for p in parts]
    images = steps * (GLOBAL_BATCH // 2 if mode == "local32" else GLOBAL_BATCH)
    if rank == 0:
        try:
            from threadpoolctl import threadpool_info
            blas = [(i["internal_api"], i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]
        except ImportError:
            blas = "threadpoolctl not installed"
        print("RESULT " + json.dumps({"images_per_s": images / elapsed, "step_ms": 1e3 * elapsed / steps,
                                      "comm_share": [r[0] for r in per_rank],
                                      "compute_ms": [r[1] for r in per_rank],
                                      "cpu_ms": [r[2] for r in per_rank],
                                      "blas": blas, "buckets": len(getattr(net, "_buckets", ()))}),
              flush=True)
    if distributed:
        dist.destroy_process_group()


PHASE_MODES = {"1 rank, batch 64": (1, "local"), "1 rank, batch 32": (1, "local32"),
               "2 ranks, DDP (rank 0)": (2, "ddp"), "2 ranks, DDP small buckets (rank 0)": (2, "ddp_small")}
PHASES = ["forward", "  buffer broadcast", "backward", "  DDP hooks", "    bucket copy-in + issue",
          "    progress tests", "  DDP finalize", "    wait", "    copy-out / average", "optimizer", "step"]


def phases_child(mode, steps, warmup):
    """Per-phase time of one rank's step: CPU (thread_time: what load elsewhere moves least) and wall."""
    import numpy as np

    import minigrad as mg
    import minigrad.distributed as dist
    import minigrad.nn.functional as F
    from mnist_cnn import build_model

    rank = 0
    if mode.startswith("ddp"):
        dist.init_process_group("mpi")
        rank = dist.get_rank()
    mg.manual_seed(0)
    model = build_model()
    net = model
    acc = {}

    def timed(fn, key):
        def run(*args):
            c0, w0 = time.thread_time(), time.perf_counter()
            try:
                return fn(*args)
            finally:
                c, w = acc.get(key, (0.0, 0.0))
                acc[key] = (c + time.thread_time() - c0, w + time.perf_counter() - w0)
        return run

    if mode.startswith("ddp"):
        net = mg.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.05 if mode == "ddp_small" else None)
        net._sync_buffers = timed(net._sync_buffers, "  buffer broadcast")
        net._launch = timed(net._launch, "    bucket copy-in + issue")
        net._progress = timed(net._progress, "    progress tests")
        import minigrad.distributed.distributed_c10d as c10d
        in_finalize = [False]
        wait, timed_wait = c10d.Work.wait, timed(c10d.Work.wait, "    wait")
        c10d.Work.wait = lambda self, timeout=None: (timed_wait if in_finalize[0] else wait)(self, timeout)
        finalize = net._finalize

        def flagged_finalize():
            in_finalize[0] = True
            try:
                finalize()
            finally:
                in_finalize[0] = False
        net._finalize = timed(flagged_finalize, "  DDP finalize")
        for h in net._handles:  # re-register the hooks through the timer
            h.remove()
        hook = timed(net._on_grad_ready, "  DDP hooks")
        net._handles = [p.register_post_accumulate_grad_hook(hook) for p in net._params]
    opt = mg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(rank)
    batch = GLOBAL_BATCH if mode == "local" else GLOBAL_BATCH // 2
    batches = [(mg.from_numpy(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)),
                mg.from_numpy(rng.integers(0, 10, batch))) for _ in range(8)]
    rows = []
    for i in range(warmup + steps):
        acc.clear()
        x, y = batches[i % len(batches)]
        t = [(time.thread_time(), time.perf_counter())]
        loss = F.cross_entropy(net(x), y)
        t.append((time.thread_time(), time.perf_counter()))
        opt.zero_grad()
        loss.backward()
        t.append((time.thread_time(), time.perf_counter()))
        opt.step()
        t.append((time.thread_time(), time.perf_counter()))
        row = {k: (t[j + 1][0] - t[j][0], t[j + 1][1] - t[j][1])
               for j, k in enumerate(["forward", "backward", "optimizer"])}
        row["step"] = (t[3][0] - t[0][0], t[3][1] - t[0][1])
        row.update(acc)
        if "  DDP finalize" in row:  # the wait happens inside finalize: copy-out is the rest
            f, w = row["  DDP finalize"], row.get("    wait", (0.0, 0.0))
            row["    copy-out / average"] = (f[0] - w[0], f[1] - w[1])
        if i >= warmup:
            rows.append(row)
    if rank == 0:
        out = {k: [1e3 * statistics.median(r.get(k, (0.0, 0.0))[j] for r in rows) for j in (0, 1)]
               for k in PHASES if k in rows[0]}
        print("RESULT " + json.dumps(out), flush=True)
    if mode.startswith("ddp"):
        dist.destroy_process_group()


def run_phases(steps, warmup):
    """One process (or mpirun) per configuration of PHASE_MODES; a table of median ms per phase."""
    res = {}
    for name, (ranks, mode) in PHASE_MODES.items():
        res[name] = _launch(ranks, 1, ["--phases-child", mode, "--steps", str(steps), "--warmup", str(warmup)], name)
    print(f"\nPer-phase time of one rank's step, median ms over {steps} steps: CPU (thread time) / wall")
    print(f"{'phase':28s}" + "".join(f"{n[:22]:>24s}" for n in res))
    for k in PHASES:
        cells = "".join((f"{res[n][k][0]:9.2f} / {res[n][k][1]:8.2f}  " if k in res[n] else f"{'-':>22s}  ")
                        for n in res)
        print(f"{k:28s}{cells}")


def run_config(name, steps, warmup):
    ranks, threads, mode = CONFIGS[name]
    return _launch(ranks, threads, ["--child", mode, "--steps", str(steps), "--warmup", str(warmup)], name)


def _launch(ranks, threads, args, name):
    """Run this file with `args` in a process of its own (mpirun for ranks > 1, or for modes that
    join a process group); return the dict its rank 0 printed after RESULT."""
    from minigrad.distributed.run import build_command, mpi_env
    env = mpi_env()
    for k in UNSET:
        env.pop(k, None)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    if args[1].startswith("local"):
        cmd = [sys.executable, __file__, *args]
    else:
        cmd = build_command(ranks, __file__, args)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{name} failed (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40, help="timed steps per process")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--phases", action="store_true",
                   help="instead: per-phase CPU and wall time of one rank's step (batch 64, batch 32, DDP)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--phases-child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return child(a.child, a.steps, a.warmup)
    if a.phases_child:
        return phases_child(a.phases_child, a.steps, a.warmup)
    if a.phases:
        return run_phases(a.steps, a.warmup)
    dropped = [k for k in UNSET if k in os.environ]
    if dropped:
        print(f"(unset for the children: {', '.join(dropped)})")
    results = {name: [] for name in CONFIGS}
    for r in range(a.rounds):
        for name in CONFIGS:
            results[name].append(run_config(name, a.steps, a.warmup))
        print(f"round {r + 1}/{a.rounds} done", flush=True)
    print(f"\nMNIST CNN (examples/mnist_cnn.py), SGD, global batch {GLOBAL_BATCH}; {a.steps} timed steps "
          f"x {a.rounds} rounds; BLAS: {results['1 rank (1 thread)'][0]['blas']} / "
          f"{results['1 proc, 2 threads'][0]['blas']}")
    print(report(results))


def _spread(values, fmt="{:.1f}"):
    vals = list(values)
    return f"{fmt.format(statistics.median(vals))} [{fmt.format(min(vals))}-{fmt.format(max(vals))}]"


def report(results):
    """The table and the bound lines, from each configuration's list of RESULT dicts (one a round)."""
    base = statistics.median(x["images_per_s"] for x in results["1 rank (1 thread)"])
    lines = [f"{'configuration':36s} {'images/s':>16s} {'vs 1 rank':>9s} {'ms/step':>7s} "
             f"{'CPU ms/step/rank':>19s} {'compute ms/step/rank':>21s} {'comm wait share':>17s}"]
    for name, runs in results.items():
        ips = [x["images_per_s"] for x in runs]
        med = statistics.median(ips)
        ms = statistics.median(x["step_ms"] for x in runs)
        cpu = _spread(c for x in runs for c in x["cpu_ms"])
        compute = _spread(c for x in runs for c in x["compute_ms"])
        shares = [100 * s for x in runs for s in x["comm_share"]]
        share = _spread(shares) + "%" if any(shares) else "-"
        extra = f"  ({runs[0]['buckets']} buckets)" if runs[0]["buckets"] else ""
        lines.append(f"{name:36s} {f'{med:.0f} [{min(ips):.0f}-{max(ips):.0f}]':>16s} {med / base:8.2f}x "
                     f"{ms:7.1f} {cpu:>19s} {compute:>21s} {share:>17s}{extra}")
    # bounds, per round (the configurations of one round ran back to back), then median [min-max]
    t64 = [x["step_ms"] for x in results["1 rank (1 thread)"]]
    t32 = [x["step_ms"] for x in results["1 rank, batch 32"]]
    free = [a / b for a, b in zip(t64, t32)]
    both = [x["images_per_s"] / y["images_per_s"]
            for x, y in zip(results["2 ranks, no communication"], results["1 rank (1 thread)"])]
    ddp = [x["images_per_s"] / y["images_per_s"]
           for x, y in zip(results["2 ranks, DDP"], results["1 rank (1 thread)"])]
    lines.append(f"bound, compute only: T(batch 64) / T(batch 32) on 1 rank = {_spread(free, '{:.2f}')}x "
                 f"(2 ranks can be at most this much faster than 1 if communication were free)")
    lines.append(f"bound, both ranks busy at once (no communication): {_spread(both, '{:.2f}')}x")
    lines.append(f"DDP on 2 ranks vs 1 rank: {_spread(ddp, '{:.2f}')}x per round (target >= 1.7x)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
