"""The gradient doctor's cost: per-op (tiny tensors, forward + backward) and an MLP training step
(784-256-128-10, batch 128, SGD) with the doctor idle, inside `mg.debug.watch()`, and inside
anomaly mode. Alternating rounds in one process (the same framework in every candidate), median
and min-max of the per-round times.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_debug.py
"""
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import minigrad as mg  # noqa: E402

nn, F = mg.nn, mg.nn.functional


def tiny_ops():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x
    for _ in range(50):
        y = (y * 1.001 + 0.5).tanh()
    y.sum().backward()
    return 50 * 3 + 1  # ops: mul, add, tanh per iteration, + sum


mg.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
opt = mg.optim.SGD(model.parameters(), lr=0.01)
xb, yb = mg.randn(128, 784), mg.randint(0, 10, (128,))


def mlp_step():
    opt.zero_grad()
    F.cross_entropy(model(xb), yb).backward()
    opt.step()
    return 1


class Idle:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


MODES = {"idle": Idle, "watch": mg.debug.watch, "anomaly": lambda: mg.autograd.detect_anomaly()}


def run(work, reps, rounds=7):
    times = {m: [] for m in MODES}
    for _ in range(rounds):
        for mode, ctx in MODES.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with ctx():
                    work()
                    t0 = time.perf_counter()
                    n = sum(work() for _ in range(reps))
                    times[mode].append((time.perf_counter() - t0) / n)
    return times


def report(title, times, unit, scale):
    base = statistics.median(times["idle"])
    print(f"\n{title}")
    for mode, ts in times.items():
        med = statistics.median(ts)
        print(f"  {mode:8s} {med * scale:8.2f} {unit}  (min {min(ts) * scale:.2f}, max {max(ts) * scale:.2f})"
              f"  {med / base:5.2f}x idle")


if __name__ == "__main__":
    report("per op, tiny tensors, forward + backward", run(tiny_ops, 20), "us/op", 1e6)
    report("MLP training step 784-256-128-10, batch 128", run(mlp_step, 10), "ms/step", 1e3)
