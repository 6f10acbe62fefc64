"""Data-parallel training throughput: the MNIST CNN on 1 and 2 MPI ranks, and where the time goes.

    python benchmarks/bench_ddp.py              # about a minute; --steps / --rounds to change

Every configuration runs in processes of its own (``mpirun -n R python bench_ddp.py --child ...``,
loopback only), in alternating rounds so a burst of load from elsewhere hits each of them:

- ``1 rank``: one process, one BLAS thread, global batch 64 (no communication);
- ``1 proc, 2 threads``: the same with two BLAS threads (what one process gets from this machine);
- ``2 ranks, DDP``: DistributedDataParallel, one BLAS thread per rank, 32 images per rank
  (global batch 64), default 25 MiB buckets (for this 0.8 MB model: one bucket, started when
  the last gradient is ready);
- ``2 ranks, DDP small buckets``: ``bucket_cap_mb=0.05``: the classifier's gradients start
  reducing while the convolutions' backward still runs (overlap);
- ``2 ranks, flat after backward``: no DDP; one all-reduce of all gradients flattened, after
  backward (bucketed, no overlap);
- ``2 ranks, per-tensor after backward``: one blocking all-reduce per parameter after backward
  (neither bucketing nor overlap).

Throughput is global images per second over the timed steps (median over rounds, min-max
spread in brackets). "comm wait" is the share of step time a rank spent blocked on communication
(rank 0 and rank 1 averaged): in the manual variants the all-reduce calls, with DDP the wait at
the end of backward. On 2 ranks it also holds load imbalance (one rank waiting for the other).
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
    "1 proc, 2 threads": (1, 2, "local"),
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

    distributed = mode != "local"
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
    per_rank = GLOBAL_BATCH // world
    batches = [(mg.from_numpy(rng.standard_normal((per_rank, 1, 28, 28)).astype(np.float32)),
                mg.from_numpy(rng.integers(0, 10, per_rank))) for _ in range(8)]
    params = list(model.parameters())
    comm = [0.0]

    def reduce_after_backward():
        t0 = time.perf_counter()
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
    comm[0] = 0.0
    if hasattr(net, "_comm_wait_s"):
        net._comm_wait_s = 0.0
    t0 = time.perf_counter()
    for i in range(steps):
        step(i)
    if distributed:
        dist.barrier()
    elapsed = time.perf_counter() - t0
    waited = net._comm_wait_s if hasattr(net, "_comm_wait_s") else comm[0]
    share = waited / elapsed
    if distributed:
        t = mg.tensor([share], dtype=mg.float64)
        dist.all_reduce(t, dist.ReduceOp.AVG)
        share = t.item()
    if rank == 0:
        try:
            from threadpoolctl import threadpool_info
            blas = [(i["internal_api"], i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]
        except ImportError:
            blas = "threadpoolctl not installed"
        print("RESULT " + json.dumps({"images_per_s": steps * GLOBAL_BATCH / elapsed,
                                      "step_ms": 1e3 * elapsed / steps, "comm_share": share,
                                      "blas": blas, "buckets": len(getattr(net, "_buckets", ()))}),
              flush=True)
    if distributed:
        dist.destroy_process_group()


def run_config(name, steps, warmup):
    from minigrad.distributed.run import build_command, mpi_env
    ranks, threads, mode = CONFIGS[name]
    env = mpi_env()
    for k in UNSET:
        env.pop(k, None)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    args = ["--child", mode, "--steps", str(steps), "--warmup", str(warmup)]
    if mode == "local":
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
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return child(a.child, a.steps, a.warmup)
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
    base = statistics.median(x["images_per_s"] for x in results["1 rank (1 thread)"])
    print(f"{'configuration':38s} {'images/s':>18s} {'ms/step':>8s} {'vs 1 rank':>10s} {'comm wait':>10s}")
    for name, runs in results.items():
        ips = [x["images_per_s"] for x in runs]
        med = statistics.median(ips)
        share = statistics.median(x["comm_share"] for x in runs)
        ms = statistics.median(x["step_ms"] for x in runs)
        extra = f"  ({runs[0]['buckets']} buckets)" if runs[0]["buckets"] else ""
        print(f"{name:38s} {med:8.0f} [{min(ips):.0f}-{max(ips):.0f}] {ms:8.1f} {med / base:9.2f}x "
              f"{100 * share:9.1f}%{extra}")


if __name__ == "__main__":
    main()
