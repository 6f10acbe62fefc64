"""The article's claims about the two modes of AD, measured with minigrad.

1. Forward vs reverse crossover: the full Jacobian of f: R^n -> R^m, f(x) = tanh(W2 tanh(W1 x)),
   by mg.func.jacfwd (one forward-mode pass per input) and mg.func.jacrev (one reverse pass per
   output), for (n, m) from (1000, 4) to (4, 1000). jacrev should win where m << n, jacfwd where n << m.
2. Reverse-mode gradient cost as a multiple of one forward pass (the "small constant"), MNIST MLP.
3. Numerical vs automatic differentiation: the error of central differences against the exact AD
   gradient as a function of the step h (1e-1 ... 1e-12), float64 and float32: the truncation /
   round-off V, saved as docs/figures/fd_error.png.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_ad_modes.py
"""
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
import minigrad as mg  # noqa: E402
from minigrad import func  # noqa: E402


def best_of(fn, reps=3):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def crossover():
    print("1. full Jacobian of f: R^n -> R^m  (hidden width 32)")
    print(f"   {'n':>5} {'m':>5} {'jacfwd ms':>10} {'jacrev ms':>10} {'fwd/rev':>8}  winner")
    rng = np.random.default_rng(0)
    for n, m in [(1000, 4), (300, 10), (100, 30), (30, 100), (10, 300), (4, 1000)]:
        W1 = mg.tensor(rng.standard_normal((32, n)) / np.sqrt(n))
        W2 = mg.tensor(rng.standard_normal((m, 32)) / np.sqrt(32))

        def f(x):
            return (W2 @ (W1 @ x).tanh()).tanh()
        x = mg.tensor(rng.standard_normal(n))
        Jf = func.jacfwd(f)(x)
        Jr = func.jacrev(f)(x)
        assert np.allclose(Jf.numpy(), Jr.numpy(), atol=1e-10)
        tf = best_of(lambda: func.jacfwd(f)(x))
        tr = best_of(lambda: func.jacrev(f)(x))
        print(f"   {n:5d} {m:5d} {tf * 1e3:10.1f} {tr * 1e3:10.1f} {tf / tr:8.2f}  {'jacfwd' if tf < tr else 'jacrev'}")


def reverse_cost():
    mg.manual_seed(0)
    nn = mg.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    x, y = mg.randn(128, 784), mg.randint(0, 10, (128,))

    def fwd():
        return nn.functional.cross_entropy(model(x), y)

    def fwd_bwd():
        model.zero_grad()
        fwd().backward()
    for _ in range(3):
        fwd_bwd()
    tf = statistics.median(best_of(fwd, 1) for _ in range(15))
    tb = statistics.median(best_of(fwd_bwd, 1) for _ in range(15))
    print(f"\n2. MNIST MLP (784-256-128-10, batch 128): forward {tf * 1e3:.2f} ms, forward + backward "
          f"{tb * 1e3:.2f} ms -> the gradient costs {tb / tf:.2f}x one forward pass ({(tb - tf) / tf:.2f}x for "
          f"the backward alone)")


def fd_error(path):
    print("\n3. central differences vs AD: max relative error over the gradient of sum(sin(x) * exp(x / 3))")
    hs = 10.0 ** -np.arange(1, 13)
    res = {}
    for dtype in ("float64", "float32"):
        x0 = np.linspace(-2, 2, 8).astype(dtype)
        f = lambda a: np.sum(np.sin(a) * np.exp(a / np.asarray(3, dtype)))  # noqa: E731
        xt = mg.tensor(x0, requires_grad=True)
        ((xt.sin() * (xt / 3).exp()).sum()).backward()
        g = xt.grad.numpy().astype(np.float64)
        errs = []
        for h in hs:
            fd = np.zeros(len(x0))
            for i in range(len(x0)):
                e = np.zeros(len(x0), dtype)
                e[i] = h
                fd[i] = (float(f(x0 + e)) - float(f(x0 - e))) / (2 * h)
            errs.append(float(np.max(np.abs(fd - g) / np.maximum(np.abs(g), 1e-30))))
        res[dtype] = errs
        best = int(np.argmin(errs))
        print(f"   {dtype}: " + "  ".join(f"h=1e-{i + 1}:{e:.1e}" for i, e in enumerate(errs)))
        print(f"   {dtype}: smallest error {errs[best]:.1e} at h = 1e-{best + 1}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("   (matplotlib not installed: no figure)")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for dtype, errs in res.items():
        ax.loglog(hs, np.maximum(errs, 1e-17), "o-", label=dtype)
    ax.set_xlabel("step h")
    ax.set_ylabel("max relative error of central differences")
    ax.set_title("Numerical vs automatic differentiation")
    ax.invert_xaxis()
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"   figure: {os.path.relpath(path)}")


if __name__ == "__main__":
    crossover()
    reverse_cost()
    fd_error(os.path.join(ROOT, "docs", "figures", "fd_error.png"))
