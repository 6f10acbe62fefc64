"""Per-op cost: a chain of elementwise ops, forward + backward; and fan-out accumulation.

    y = y * 1.0001 + 0.001   (each iteration is 2 ops: mul, add), then y.sum().backward()

Configs:
  tiny     -- 100 iterations (200 ops) on a 4-element float32 tensor: per-op dispatch overhead.
  1e6      -- 10 iterations (20 ops) on a 10^6-element float32 tensor: extra passes/temporaries.
  fan-out  -- one 100-element leaf used 100,000 times (s = s + x), backward only: accumulation.
  tiny-no_grad -- tiny's chain, forward only, on a tensor that requires grad inside a user's
              `with no_grad():` block (nothing recorded; the doctor's marking is on).
  tiny-plain   -- the same forward on a tensor that does not require grad, outside no_grad: the
              two must cost the same (issue 29: no_grad used to double the per-op cost).

Times are per op (tiny, 1e6; forward + backward) or per backward (fan-out). The NumPy candidate
is the same arithmetic written by hand, forward and the hand-written backward (the floor).

    python benchmarks/bench_overhead.py [--config tiny] [--rounds 3] [--repeats N]
"""
import time

import numpy as np

import _harness as H

CONFIGS = {
    "tiny": dict(size=4, iters=100, per=200, repeats=200, unit="us", scale=1e6, per_name="op",
                 ratios=[("minigrad", "numpy", None), ("minigrad", "pytorch", 0.5)]),
    "1e6": dict(size=10 ** 6, iters=10, per=20, repeats=20, unit="us", scale=1e6, per_name="op",
                ratios=[("minigrad", "numpy", 1.05), ("minigrad", "pytorch", None)]),
    "tiny-no_grad": dict(size=4, iters=100, per=200, repeats=200, unit="us", scale=1e6, per_name="op",
                         forward="no_grad", skip=("jax",), ratios=[("minigrad", "pytorch", None)]),
    "tiny-plain": dict(size=4, iters=100, per=200, repeats=200, unit="us", scale=1e6, per_name="op",
                       forward="plain", skip=("jax",), ratios=[("minigrad", "pytorch", None)]),
    "fan-out": dict(size=100, uses=100_000, repeats=3, warmup=1, self_timed=True, per_name="backward",
                    skip=("jax",), ratios=[("minigrad", "pytorch", 1.0), ("minigrad", "numpy", None)]),
}


def minigrad_make(cfg):
    import minigrad as mg
    if "uses" in cfg:
        x = mg.tensor(np.ones(cfg["size"], np.float32), requires_grad=True)

        def step():
            s = x * 1.0
            for _ in range(cfg["uses"]):
                s = s + x
            loss = s.sum()
            x.grad = None
            t0 = time.perf_counter()
            loss.backward()
            return time.perf_counter() - t0
        return step
    if "forward" in cfg:
        x = mg.tensor(np.ones(cfg["size"], np.float32), requires_grad=cfg["forward"] == "no_grad")

        def forward():
            y = x
            for _ in range(cfg["iters"]):
                y = y * 1.0001 + 0.001
            return y
        if cfg["forward"] == "no_grad":
            def step():
                with mg.no_grad():
                    return forward()
            return step
        return forward
    x = mg.tensor(np.ones(cfg["size"], np.float32), requires_grad=True)

    def step():
        y = x
        for _ in range(cfg["iters"]):
            y = y * 1.0001 + 0.001
        x.grad = None
        y.sum().backward()
    return step


def numpy_make(cfg):
    if "uses" in cfg:
        x = np.ones(cfg["size"], np.float32)

        def step():  # backward of s = x + x + ... + x: every use adds the upstream gradient once
            g = np.ones_like(x)
            t0 = time.perf_counter()
            gx = g.copy()
            for _ in range(cfg["uses"]):
                gx += g
            return time.perf_counter() - t0
        return step
    x = np.ones(cfg["size"], np.float32)
    a, b = np.float32(1.0001), np.float32(0.001)
    if "forward" in cfg:
        def forward():
            y = x
            for _ in range(cfg["iters"]):
                y = y * a + b
            return y
        return forward

    def step():
        y = x
        for _ in range(cfg["iters"]):
            y = y * a + b
        g = np.ones_like(y)
        for _ in range(cfg["iters"]):  # backward of add is the identity; of mul by a constant, a multiply
            g = g * a
        return g
    return step


def torch_make(cfg):
    import torch
    if "forward" in cfg:
        x = torch.ones(cfg["size"], dtype=torch.float32, requires_grad=cfg["forward"] == "no_grad")

        def forward():
            y = x
            for _ in range(cfg["iters"]):
                y = y * 1.0001 + 0.001
            return y
        if cfg["forward"] == "no_grad":
            def step():
                with torch.no_grad():
                    return forward()
            return step
        return forward
    x = torch.ones(cfg["size"], dtype=torch.float32, requires_grad=True)
    if "uses" in cfg:
        def step():
            s = x * 1.0
            for _ in range(cfg["uses"]):
                s = s + x
            loss = s.sum()
            x.grad = None
            t0 = time.perf_counter()
            loss.backward()
            return time.perf_counter() - t0
        return step

    def step():
        y = x
        for _ in range(cfg["iters"]):
            y = y * 1.0001 + 0.001
        x.grad = None
        y.sum().backward()
    return step


def jax_make(cfg):
    import jax
    import jax.numpy as jnp

    def f(x):
        y = x
        for _ in range(cfg["iters"]):
            y = y * 1.0001 + 0.001
        return y.sum()
    g = jax.grad(f)   # eager (op by op), as minigrad and PyTorch run: no jit
    x = jnp.ones(cfg["size"], jnp.float32)
    return lambda: g(x).block_until_ready()


def main():
    H.main(H.Bench(title=__doc__.splitlines()[0], configs=CONFIGS, candidates={
        "minigrad": H.Candidate(minigrad_make), "numpy": H.Candidate(numpy_make),
        "pytorch": H.Candidate(torch_make, needs="torch"), "jax": H.Candidate(jax_make, needs="jax")}))


if __name__ == "__main__":
    main()
