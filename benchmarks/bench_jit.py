"""The compiler against eager: eager minigrad, mg.jit minigrad (passes + fusion + memory plan),
hand-written NumPy, PyTorch eager, and (opt-in) torch.compile, on

    mlp         the MNIST MLP training step (784-256-128-10, batch 128, SGD; bench_mlp.py's model
                and its hand-written NumPy step)
    cnn         the LeNet-style CNN training step (bench_cnn.py's 8/16 model, batch 64)
    chain       8 elementwise ops (mul add tanh mul sub relu mul add) on 10^6 float32, forward +
                backward (loss = sum): the fusion target (jit >= 3x faster than eager)
    chain-arith the same with `* 0.75` in place of tanh: every op fusible by numba

Each candidate runs in its own process (benchmarks/_harness.py: alternating rounds, median and
spread, BLAS printed). After the timings (in the parent only): compile cost (the first call of the
jitted MLP step in a new process with an empty kernel cache, then in another new process with the
cache warm) and the per-pass table (equations and intermediate bytes before -> after, memory plan)
of the MLP and CNN training graphs.

    python benchmarks/bench_jit.py [--config mlp] [--rounds 3] [--repeats 50]
    BENCH_TORCH_COMPILE=1 python benchmarks/bench_jit.py   # adds torch.compile
torch.compile is opt-in: on the shared 2-core machine its first call of a small MLP training step
took 188 s (inductor compiling C++ under load), longer than the rest of this benchmark. jax.jit is
not installed here (bench_mlp.py has a jax candidate where it is).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import _harness as H
import bench_cnn
import bench_mlp

N_CHAIN = 10 ** 6
CNN = bench_cnn.CONFIGS["8/16 b64"]


def _jit(step):
    import minigrad as mg
    from minigrad.compiler.pipeline import FUSED
    return mg.jit(step, passes=FUSED)


# ---- mlp / cnn: the existing bench models, eager and jitted

def _mg_train(cfg, jit):
    if cfg["model"] == "mlp":
        step, weights = bench_mlp.minigrad_step(cfg)
    else:
        step, weights = bench_cnn.minigrad_step(CNN)
    return (_jit(step) if jit else step), weights


def minigrad_eager(cfg):
    return _mg_train(cfg, False) if "model" in cfg else _chain_mg(cfg, False)


def minigrad_jit(cfg):
    return _mg_train(cfg, True) if "model" in cfg else _chain_mg(cfg, True)


def numpy_ref(cfg):
    if "model" in cfg:
        return bench_mlp.numpy_step(cfg) if cfg["model"] == "mlp" else bench_cnn.numpy_step(CNN)
    return _chain_np(cfg)


def torch_eager(cfg):
    if "model" in cfg:
        return bench_mlp.torch_step(cfg) if cfg["model"] == "mlp" else bench_cnn.torch_step(CNN)
    return _chain_torch(cfg, False)


def torch_compiled(cfg):
    import torch
    if "model" in cfg:
        step, weights = torch_eager(cfg)
        return torch.compile(step), weights
    return _chain_torch(cfg, True)


# ---- the elementwise chain

def _chain_data():
    rng = np.random.default_rng(0)
    return rng.standard_normal(N_CHAIN, dtype=np.float32), rng.standard_normal(N_CHAIN, dtype=np.float32)


def _chain_mg(cfg, jit):
    import minigrad as mg
    xa, ya = _chain_data()
    x, y = mg.tensor(xa, requires_grad=True), mg.tensor(ya, requires_grad=True)
    arith = cfg["arith"]

    def step():
        x.grad = None
        y.grad = None
        h = x * y + 1.0
        h = h * 0.75 if arith else h.tanh()
        z = (h * x - y).relu() * 0.5 + x
        z.sum().backward()
        return z
    return (_jit(step) if jit else step), lambda: [x.grad.numpy(), y.grad.numpy()]


def _chain_np(cfg):
    x, y = _chain_data()
    arith, out = cfg["arith"], {}

    def step():
        a = x * y
        a += np.float32(1.0)
        t = a * np.float32(0.75) if arith else np.tanh(a)
        b = t * x
        b -= y
        mask = b > 0
        r = b * mask
        z = r * np.float32(0.5)
        z += x
        gb = mask * np.float32(0.5)                 # dz/db (the loss is sum(z))
        gt = gb * x
        ga = gt * np.float32(0.75) if arith else gt * (1 - t * t)
        out["gx"] = gb * t + ga * y + 1
        out["gy"] = ga * x - gb
        return z
    return step, lambda: [out["gx"], out["gy"]]


def _chain_torch(cfg, compiled):
    import torch
    xa, ya = _chain_data()
    x, y = torch.tensor(xa, requires_grad=True), torch.tensor(ya, requires_grad=True)
    arith = cfg["arith"]

    def step():
        x.grad = None
        y.grad = None
        h = x * y + 1.0
        h = h * 0.75 if arith else h.tanh()
        z = (h * x - y).relu() * 0.5 + x
        z.sum().backward()
        return z
    return (torch.compile(step) if compiled else step), lambda: [x.grad.numpy(), y.grad.numpy()]


def bench():
    cands = {"minigrad": H.Candidate(minigrad_eager), "minigrad-jit": H.Candidate(minigrad_jit),
             "numpy": H.Candidate(numpy_ref), "pytorch": H.Candidate(torch_eager, needs="torch")}
    if os.environ.get("BENCH_TORCH_COMPILE"):
        cands["torch.compile"] = H.Candidate(torch_compiled, needs="torch")
    jit_ratios = [("minigrad-jit", "minigrad", None), ("minigrad-jit", "numpy", None),
                  ("minigrad-jit", "pytorch", None), ("minigrad-jit", "torch.compile", None)]
    return H.Bench(
        title="mg.jit (fold, dce, cse, simplify, fuse; memory plan) vs eager, NumPy and PyTorch",
        candidates=cands,
        configs={
            "mlp": dict(model="mlp", repeats=100, ratios=[("minigrad-jit", "numpy", 0.95)] + jit_ratios),
            "cnn": dict(model="cnn", repeats=30, ratios=[("minigrad-jit", "pytorch", 0.9)] + jit_ratios),
            "chain": dict(arith=False, repeats=20, tol=1e-3,
                          ratios=[("minigrad-jit", "minigrad", 1 / 3)] + jit_ratios[1:]),
            "chain-arith": dict(arith=True, repeats=20, tol=1e-3,
                                ratios=[("minigrad-jit", "minigrad", 1 / 3)] + jit_ratios[1:]),
        },
        warmup=3, rounds=3, check_steps=3, reference="numpy", tol=1e-4)


# ---- compile cost and the pass table (parent only)

COST = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {bench_dir!r})
import minigrad as mg
import bench_jit
from minigrad.compiler.codegen import compile_graph
from minigrad.compiler.pipeline import FUSED, optimize
t_import = time.perf_counter() - t0
make = {make}
step, _ = make()
t = time.perf_counter(); g = mg.graph.trace(step); t_trace = time.perf_counter() - t
t = time.perf_counter(); h, _ = optimize(g, FUSED); t_opt = time.perf_counter() - t
t = time.perf_counter(); c = compile_graph(h); t_cg = time.perf_counter() - t
t = time.perf_counter(); c(); t_first = time.perf_counter() - t
t = time.perf_counter(); c(); t_second = time.perf_counter() - t
print(json.dumps(dict(imports=t_import, trace=t_trace, optimize=t_opt, codegen=t_cg, first_run=t_first,
                      second_run=t_second, fused=h.count()["fused"])))
"""
WORKLOADS = {"MLP training step": "lambda: bench_jit.bench_mlp.minigrad_step({})",
             "elementwise chain (arith)": "lambda: bench_jit._chain_mg({'arith': True}, False)"}


def compile_cost():
    import json
    bench_dir = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([H.REPO.as_posix(), os.environ.get("PYTHONPATH", "")]))
    for v in H.UNSET:
        env.pop(v, None)
    if "--threads" in sys.argv:  # the thread count the timed candidates ran with
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = sys.argv[sys.argv.index("--threads") + 1]
    print("\ncompile cost, seconds (a process each; first call = trace + optimize + codegen + 1st run, "
          "where numba compiles or loads the kernels; under the machine's load):")
    print(f"  {'':76s} {'imports':>8s} {'trace':>7s} {'optimize':>8s} {'codegen':>8s} {'1st run':>8s} "
          f"{'first call':>10s} {'2nd run':>8s}")
    for name, make in WORKLOADS.items():
        with tempfile.TemporaryDirectory() as cache:
            env["MINIGRAD_CACHE"] = cache
            for label in ("cold: empty kernel cache", "warm: a new process, cache filled"):
                p = subprocess.run([sys.executable, "-c", COST.format(bench_dir=bench_dir, make=make)], env=env,
                                   capture_output=True, text=True)
                if p.returncode:
                    print(f"compile cost: failed\n{p.stderr[-2000:]}")
                    return
                r = json.loads(p.stdout.strip().splitlines()[-1])
                first = r["trace"] + r["optimize"] + r["codegen"] + r["first_run"]
                row = f"{name}, {r['fused']} fused groups, {label}"
                print(f"  {row:76s} {r['imports']:8.2f} {r['trace']:7.2f} {r['optimize']:8.2f} "
                      f"{r['codegen']:8.3f} {r['first_run']:8.2f} {first:10.2f} {r['second_run']:8.4f}")
    print("  (targets for the MLP step: first call <= 3 s cold, <= 1 s warm)")


def pass_table():
    sys.path.insert(0, str(H.REPO))
    import minigrad as mg
    from minigrad.compiler.memory import plan_memory
    from minigrad.compiler.pipeline import FUSED, format_reports, optimize
    for name, make in (("MLP 784-256-128-10 b128", lambda: bench_mlp.minigrad_step({})),
                       ("LeNet CNN 8/16 b64", lambda: bench_cnn.minigrad_step(CNN))):
        step, _ = make()
        g = mg.graph.trace(step)
        h, reports = optimize(g, FUSED)
        before, after = plan_memory(g), plan_memory(h)
        print(f"\npasses on the {name} training step graph:")
        print(format_reports(reports))
        print(f"memory plan, traced graph:    {before!r}")
        print(f"memory plan, optimized graph: {after!r}")


if __name__ == "__main__":
    H.main(bench())
    if "--child" not in sys.argv:
        compile_cost()
        pass_table()
