"""Per-op overhead: a chain of 200 tiny elementwise ops, forward + backward.

    y = y * 1.0001 + 0.001   (100 iterations = 200 ops) on a 4-element float32 tensor

Prints microseconds per op for minigrad, for the same arithmetic in raw NumPy (forward and the
hand-written backward: the floor), and for PyTorch when installed, all from one run.
"""
import argparse
import time

import numpy as np

import minigrad as mg

N_ITERS = 100          # each iteration is 2 ops (mul, add)
N_OPS = 2 * N_ITERS


def run_minigrad():
    x = mg.tensor(np.ones(4, np.float32), requires_grad=True)
    y = x
    for _ in range(N_ITERS):
        y = y * 1.0001 + 0.001
    y.sum().backward()
    return x.grad


def run_numpy():
    x = np.ones(4, np.float32)
    y = x
    for _ in range(N_ITERS):
        y = y * np.float32(1.0001) + np.float32(0.001)
    g = np.ones_like(y)
    for _ in range(N_ITERS):  # backward of add is the identity; of mul by a constant, a multiply
        g = g * np.float32(1.0001)
    return g


def run_torch(torch):
    x = torch.ones(4, dtype=torch.float32, requires_grad=True)
    y = x
    for _ in range(N_ITERS):
        y = y * 1.0001 + 0.001
    y.sum().backward()
    return x.grad


def best_of(fn, repeats):
    fn()  # warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) / N_OPS * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    rows = [("minigrad", best_of(run_minigrad, args.repeats)), ("numpy (floor)", best_of(run_numpy, args.repeats))]
    try:
        import torch
        torch.set_num_threads(1)
        rows.append((f"pytorch {torch.__version__}", best_of(lambda: run_torch(torch), args.repeats)))
    except ImportError:
        torch = None
    mg_us = rows[0][1]
    print(f"chain of {N_OPS} elementwise ops on 4 floats, forward + backward, best of {args.repeats}")
    print(f"{'':16s} {'us/op':>8s} {'x numpy':>8s} {'x pytorch':>10s}")
    for name, us in rows:
        vs_torch = f"{us / rows[2][1]:10.2f}" if torch else f"{'-':>10s}"
        print(f"{name:16s} {us:8.2f} {us / rows[1][1]:8.2f} {vs_torch}")
    if torch:
        print(f"minigrad / pytorch = {mg_us / rows[2][1]:.2f} (target <= 0.8)")


if __name__ == "__main__":
    main()
