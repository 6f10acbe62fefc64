"""The compiler against eager: eager minigrad, mg.jit minigrad (passes + fusion + memory plan),
hand-written NumPy, PyTorch eager, and (opt-in) torch.compile, on

    mlp         the MNIST MLP training step (784-256-128-10, batch 128, SGD; bench_mlp.py's model
                and its hand-written NumPy step)
    cnn         the LeNet-style CNN training step (bench_cnn.py's 8/16 model, batch 64)
    chain       8 elementwise ops (mul add tanh mul sub relu mul add) on 10^6 float32, forward +
                backward (loss = sum): the fusion target (jit >= 3x faster than eager)
    chain-arith the same with `* 0.75` in place of tanh: every op fusible by numba
    gpt         the char GPT AdamW training step of bench_gpt.py --config train (4 layers, d 128,
                context 128, batch 32; its model builder)
    lstm        the word LM training step of bench_lstm.py's "lstm" config (2-layer LSTM 256, vocab
                10k, BPTT 35, batch 20, SGD + clip_grad_norm_; its model builder)

Each candidate runs in its own process (benchmarks/_harness.py: alternating rounds, median and
spread, BLAS printed). After the timings (in the parent only): compile cost (the first call of the
jitted MLP step in a new process with an empty kernel cache, then in another new process with the
cache warm) and the per-pass table (equations and intermediate bytes before -> after, memory plan)
of the MLP and CNN training graphs.

    python benchmarks/bench_jit.py [--config mlp] [--rounds 3] [--repeats 50]
    python benchmarks/bench_jit.py --quick --config gpt --config lstm --rounds 1   # a smoke run: tiny
        GPT and LSTM models, a few steps, and the GPT compile-time report on the tiny model

After the MLP figures, the compile time of the GPT training step: trace, passes, codegen and the
numba kernels of its first run (the first run less a second), with the kernel cache empty and then
warm (a new process each; target: trace + passes + codegen + numba <= 2 s warm).
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
import bench_gpt
import bench_lstm
import bench_mlp

N_CHAIN = 10 ** 6
CNN = bench_cnn.CONFIGS["8/16 b64"]
QUICK = "--quick" in sys.argv   # tiny GPT / LSTM models and few steps: a smoke run of this file
if QUICK:
    sys.argv.remove("--quick")
    if "--child" not in sys.argv:
        os.environ["BENCH_JIT_QUICK"] = "1"   # the children get it too
QUICK = QUICK or bool(os.environ.get("BENCH_JIT_QUICK"))
GPT_SIZES = dict(layers=1, d=32, heads=2, context=16, batch=2) if QUICK else {}
LSTM = dict(kind="LSTM", layers=1, batch=2) if QUICK else bench_lstm.CONFIGS["lstm"]


def _jit(step):
    import minigrad as mg
    from minigrad.compiler.pipeline import FUSED
    return mg.jit(step, passes=FUSED)


# ---- mlp / cnn: the existing bench models, eager and jitted

def _mg_train(cfg, jit):
    if cfg["model"] in ("gpt", "lstm"):
        return _mg_seq(cfg["model"], jit)
    if cfg["model"] == "mlp":
        step, weights = bench_mlp.minigrad_step(cfg)
    else:
        step, weights = bench_cnn.minigrad_step(CNN)
    return (_jit(step) if jit else step), weights


# ---- gpt / lstm: bench_gpt.py's and bench_lstm.py's models and steps, the step compiled whole

def _mg_seq(model_name, jit):
    """train(x, y) of bench_gpt / bench_lstm, eager or jitted, stepping through their batches (the
    cycling is outside the compiled function: it is Python state)."""
    import minigrad as mg
    if model_name == "gpt":
        model, _, train, data = bench_gpt.build_train(mg, "minigrad", **GPT_SIZES)
    else:
        model, train, data = bench_lstm.minigrad_parts(LSTM)
    step = bench_lstm.cycle(_jit(train) if jit else train, data)
    return step, lambda: [p.detach().numpy() for p in model.parameters()]


def _torch_seq(cfg):
    if cfg["model"] == "gpt":
        return bench_gpt.torch_step({"sizes": GPT_SIZES})
    return bench_lstm.torch_step(LSTM)


def minigrad_eager(cfg):
    return _mg_train(cfg, False) if "model" in cfg else _chain_mg(cfg, False)


def minigrad_jit(cfg):
    return _mg_train(cfg, True) if "model" in cfg else _chain_mg(cfg, True)


def numpy_ref(cfg):
    if "model" in cfg:
        return bench_mlp.numpy_step(cfg) if cfg["model"] == "mlp" else bench_cnn.numpy_step(CNN)
    return _chain_np(cfg)


def torch_eager(cfg):
    if cfg.get("model") in ("gpt", "lstm"):
        return _torch_seq(cfg)
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
            # checked against eager minigrad (no NumPy version); PyTorch as in bench_gpt / bench_lstm
            "gpt": dict(model="gpt", repeats=3 if QUICK else 10, check_steps=3, reference="minigrad",
                        skip=("numpy",), ratios=[("minigrad-jit", "minigrad", 1.0)] + jit_ratios[2:]),
            "lstm": dict(model="lstm", repeats=3 if QUICK else 20, check_steps=3, reference="minigrad",
                         skip=("numpy",), ratios=[("minigrad-jit", "minigrad", 1.0)] + jit_ratios[2:]),
        },
        # warm-up: mg.jit traces at the first two calls (no gradients yet, then with them) and times
        # the next six against eager (two of them run eagerly): none of that in the timed steps
        warmup=8, rounds=3, check_steps=3, reference="numpy", tol=1e-4)


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


GPT_COST = r"""
import json, sys, time
sys.path.insert(0, {bench_dir!r})
import minigrad as mg
import bench_jit
from minigrad.compiler.codegen import compile_graph
from minigrad.compiler.pipeline import FUSED, optimize
model, _, train, data = bench_jit.bench_gpt.build_train(mg, "minigrad", **bench_jit.GPT_SIZES)
x, y = data[0]
train(x, y)   # gradients and AdamW state exist: the program mg.jit runs from the second call on
t = time.perf_counter(); g = mg.graph.trace(train, x, y); t_trace = time.perf_counter() - t
t = time.perf_counter(); h, _ = optimize(g, FUSED); t_opt = time.perf_counter() - t
t = time.perf_counter(); c = compile_graph(h); t_cg = time.perf_counter() - t
x, y = data[1]
t = time.perf_counter(); c(x, y); t_first = time.perf_counter() - t
runs = []
for x, y in data[2:5]:
    t = time.perf_counter(); c(x, y); runs.append(time.perf_counter() - t)
eager = []
for x, y in data[5:8]:
    t = time.perf_counter(); train(x, y); eager.append(time.perf_counter() - t)
print(json.dumps(dict(trace=t_trace, passes=t_opt, codegen=t_cg, first=t_first, run=min(runs), eager=min(eager),
                      eqns=len(g.eqns), opt_eqns=len(h.eqns), fused=h.count()["fused"])))
"""


def gpt_compile_time():
    """trace + passes + codegen + numba of the GPT training step, kernel cache empty then warm."""
    import json
    bench_dir = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([H.REPO.as_posix(), os.environ.get("PYTHONPATH", "")]))
    for v in H.UNSET:
        env.pop(v, None)
    what = "tiny GPT (--quick)" if QUICK else "GPT"
    print(f"\ncompile time of the {what} training step (AdamW; seconds, a process each, under the machine's "
          f"load): trace, passes (FUSED), codegen, numba (the first run less a later one: kernels compiled or "
          f"loaded from the cache)")
    print(f"  {'':34s} {'trace':>6s} {'passes':>6s} {'codegen':>7s} {'numba':>6s} {'total':>6s}   "
          f"{'step: compiled':>14s} {'eager':>6s}  eqns traced -> optimized, fused groups")
    with tempfile.TemporaryDirectory() as cache:
        env["MINIGRAD_CACHE"] = cache
        for label in ("cold: empty kernel cache", "warm: a new process, cache filled"):
            p = subprocess.run([sys.executable, "-c", GPT_COST.format(bench_dir=bench_dir)], env=env,
                               capture_output=True, text=True)
            if p.returncode:
                print(f"compile time: failed\n{p.stderr[-2000:]}")
                return
            r = json.loads(p.stdout.strip().splitlines()[-1])
            numba = max(r["first"] - r["run"], 0.0)
            total = r["trace"] + r["passes"] + r["codegen"] + numba
            print(f"  {label:34s} {r['trace']:6.2f} {r['passes']:6.2f} {r['codegen']:7.3f} {numba:6.2f} "
                  f"{total:6.2f}   {r['run']:14.3f} {r['eager']:6.3f}  {r['eqns']} -> {r['opt_eqns']}, {r['fused']}")
    print("  (target: total <= 2 s warm; the trace runs the step once eagerly, so it costs at least one eager step)")


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
        if not QUICK:
            compile_cost()
        gpt_compile_time()
        if not QUICK:
            pass_table()
