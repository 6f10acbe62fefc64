"""Benchmarks as users run them: every framework in a process of its own.

A benchmark file declares its workloads (``configs``) and its ``candidates`` (minigrad, the
hand-written NumPy version, PyTorch, JAX, ...) and calls ``main(bench)``. The parent process then

* starts one child process per (candidate, config, round) -- ``python <file> --child ...`` with
  the repository root on PYTHONPATH, so a checkout runs without an install -- in alternating
  order (A B C A B C ...), so that a burst of load from elsewhere hits every candidate;
* unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for those children only (some machines set them
  to force an older BLAS kernel; a user's machine has neither), and says so -- ``--keep-env``
  keeps them. Tests and CI never go through here;
* matches thread counts: the children get NumPy's BLAS thread count, PyTorch gets
  ``torch.set_num_threads`` of the same, and every child reports what it actually runs with;
* with ``--busy``, starts one CPU-bound competitor process (a pure-Python spin loop) before the
  timed runs and stops it after them -- also when a run fails, at exit, and by itself when the
  parent dies -- so the figures are those of a machine with one core taken (issue 38);
* with ``--variant NAME:VAR=VALUE[,VAR=VALUE...]`` (repeatable), adds for every minigrad candidate a
  row ``minigrad[NAME]``: the same candidate, its children run with those environment variables
  (e.g. ``--variant pool:MINIGRAD_THREAD_POLICY=pool,MINIGRAD_NUM_THREADS=2``), in the same
  alternating rounds, with its ratio to the plain row; minigrad's children report the threads and
  thread policy they ran with;
* prints the BLAS library each child loaded (threadpoolctl: internal_api, version,
  architecture = the kernel's core type, threading layer, threads);
* prints, per candidate, the median over rounds of each process's median step time, the spread
  (min-max of those medians), p95/median of the step times within a process, the minor page
  faults per step (memory mapped afresh every step: a figure load on the machine does not move),
  the process's CPU time per step (all its threads; waiting for a busy core does not count, so
  on a loaded machine it is steadier than the wall time -- compare with the same thread counts),
  and the ratios the file asks for, each with its per-round range.

Before timing, each child of the first round runs a few steps from the same start and hands back
its weights; the parent checks that every candidate agrees with the reference.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# the checkout whose minigrad a child imports: this one, or the --before tree for "minigrad-before"
ROOT = Path(os.environ.get("MINIGRAD_BENCH_ROOT") or REPO)
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
BEFORE = "-before"


@dataclass
class Candidate:
    """make(cfg) -> step callable, or (step, weights) where weights() returns a list of arrays
    compared across candidates after ``check_steps`` steps. ``needs``: a module that must import
    (else the candidate is reported as skipped); "torch" also gets torch.set_num_threads."""
    make: object
    needs: str = None


@dataclass
class Bench:
    title: str
    candidates: dict                       # name -> Candidate
    configs: dict = field(default_factory=lambda: {"": {}})   # name -> cfg dict passed to make
    repeats: int = 100                     # timed steps per process
    warmup: int = 5
    rounds: int = 3
    unit: str = "ms"
    scale: float = 1e3                     # seconds -> unit
    per: int = 1                           # a step is `per` items (e.g. ops): times are divided by it
    per_name: str = "step"
    check_steps: int = 0                   # 0: no cross-candidate check
    reference: str = None                  # candidate the others are checked against
    tol: float = 1e-4
    ratios: list = field(default_factory=list)  # (a, b, target or None)
    self_timed: bool = False               # step() returns the seconds to count (e.g. backward only)
    rate_name: str = None                  # also print the throughput, 1 / (seconds per item), as this

    def settings(self, config):
        """This bench's settings with the config's overrides: a config dict may carry any field
        above under the same name (repeats, unit, per, ratios, ...) and ``skip`` (candidates that
        have no version of it); the rest of the dict is passed to ``make``."""
        cfg = dict(self.configs[config])
        over = {k: cfg.pop(k) for k in list(cfg) if k in self.__dataclass_fields__ or k == "skip"}
        skip = over.pop("skip", ())
        return type(self)(**{**self.__dict__, **over}), cfg, skip


# ---------------------------------------------------------------- child side

def blas_info():
    """The BLAS/OpenMP libraries loaded in this process, as threadpoolctl reports them."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return [{"internal_api": "unknown (threadpoolctl not installed)"}]
    keys = ("user_api", "internal_api", "version", "architecture", "threading_layer", "num_threads")
    return [{k: d.get(k) for k in keys if d.get(k) is not None} for d in threadpool_info()]


def numpy_threads():
    """NumPy's BLAS thread count (threadpoolctl; else the usual variables; else the core count)."""
    for d in blas_info():
        if d.get("user_api") == "blas" and d.get("num_threads"):
            return int(d["num_threads"]), f"threadpoolctl ({d.get('internal_api')})"
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var):
            return int(os.environ[var]), f"${var}"
    return os.cpu_count() or 1, "os.cpu_count() (assumed)"


def _child(bench, args):
    bench, cfg, _ = bench.settings(args.child_config)
    cand = bench.candidates[args.child]
    out = {"pid": os.getpid(), "env": {v: os.environ.get(v) for v in UNSET}}
    if cand.needs:
        try:
            mod = __import__(cand.needs)
        except ImportError as e:
            out["skipped"] = f"{cand.needs} not installed ({e})"
            print(json.dumps(out))
            return
        out["version"] = getattr(mod, "__version__", "?")
        if cand.needs == "torch":
            mod.set_num_threads(args.threads)
            out["threads"] = f"torch.set_num_threads({args.threads}); get_num_threads() = {mod.get_num_threads()}"
        elif cand.needs == "jax":
            out["threads"] = f"XLA CPU client, {len(mod.devices())} device(s), {os.cpu_count()} core(s)"
    if "threads" not in out:
        out["threads"] = f"numpy BLAS {numpy_threads()[0]} thread(s)"
    if args.check_file:
        made = cand.make(cfg)
        step, weights = made if isinstance(made, tuple) else (made, None)
        for _ in range(bench.check_steps):
            step()
        if weights is not None:
            np.savez(args.check_file, *[np.asarray(w) for w in weights()])
    made = cand.make(cfg)
    step = made[0] if isinstance(made, tuple) else made
    for _ in range(bench.warmup):
        step()
    times, cpu = [], []
    clock, cpu_clock = time.perf_counter, time.process_time
    n = args.repeats or bench.repeats
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(n):
        c0 = cpu_clock()
        t0 = clock()
        dt = step()
        t1 = clock()
        cpu.append(cpu_clock() - c0 if not bench.self_timed else float("nan"))  # nan: not the timed part
        times.append(dt if bench.self_timed else t1 - t0)
    # minor page faults per step: memory the step maps afresh (deterministic, unlike the times)
    out["faults"] = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0) / n
    out["times"] = times
    out["cpu"] = cpu
    mg = sys.modules.get("minigrad")
    if mg is not None and hasattr(mg, "get_num_threads") and args.child.startswith("minigrad"):
        try:
            from minigrad import _pool, _threads
            out["threads"] += (f"; minigrad get_num_threads() = {mg.get_num_threads()}, policy "
                               f"{getattr(_threads, '_policy', 'blas')}, pool threads {_pool.threads()}")
        except ImportError:   # a --before tree without the pool
            pass
    out["blas"] = blas_info()   # after the run: libraries a framework loads lazily are in by now
    print(json.dumps(out))


# ---------------------------------------------------------------- parent side

# the --busy competitor: spins on one core until told to stop, and stops by itself when its parent
# goes (Linux: the kernel's parent-death signal; anywhere: its parent id changes, checked ~every 10 ms)
_SPIN = """
import os, sys
ppid = int(sys.argv[1])
try:
    import ctypes, signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG (Linux)
except Exception:
    pass
if os.getppid() != ppid:
    sys.exit(0)
n = 0
while True:
    n += 1
    if n % 100000 == 0 and os.getppid() != ppid:
        break
"""


class Competitor:
    """One CPU-bound process beside the benchmark (``--busy``): ``start()`` then ``stop()``, which is
    safe to call twice and is also registered with atexit; the process also ends when its parent
    dies, so it never outlives the benchmark."""

    def __init__(self):
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid if self.proc is not None else None

    def start(self):
        import atexit
        self.proc = subprocess.Popen([sys.executable, "-c", _SPIN, str(os.getpid())], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        atexit.register(self.stop)
        return self

    def stop(self):
        p = self.proc
        if p is None or p.poll() is not None:
            return
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _child_env(keep_env):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    # the thread count is the harness's to set (matched across frameworks): minigrad's adaptation to
    # a busy machine would change it mid-run for minigrad only (set MINIGRAD_ADAPTIVE_THREADS=1 to measure it)
    env.setdefault("MINIGRAD_ADAPTIVE_THREADS", "0")
    removed = {}
    if not keep_env:
        for v in UNSET:
            if v in env:
                removed[v] = env.pop(v)
    return env, removed


def _variant_of(name):
    """'minigrad[pool]' or 'minigrad[pool]-before' -> ('minigrad', 'pool'); else (name, None)."""
    m = re.fullmatch(r"(.*)\[([^\[\]]+)\]", name[:-len(BEFORE)] if name.endswith(BEFORE) else name)
    return (m.group(1), m.group(2)) if m else (name, None)


def _parse_variant(spec):
    """'NAME:VAR=VALUE,VAR=VALUE' -> (NAME, {VAR: VALUE})."""
    name, sep, rest = spec.partition(":")
    env = {}
    for item in rest.split(",") if rest else []:
        var, eq, value = item.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise SystemExit(f"--variant {spec!r}: {item!r} is not VAR=VALUE")
        env[var] = value
    if not sep or not re.fullmatch(r"[A-Za-z0-9_.+=-]+", name) or not env:
        raise SystemExit(f"--variant {spec!r}: expected NAME:VAR=VALUE[,VAR=VALUE...] (NAME: letters, digits, "
                         f"_ . + = -)")
    return name, env


def _run_child(script, name, config, args, threads, env, check_file):
    variant = _variant_of(name)[1]
    if variant is not None:
        env = dict(env, **args.variants[variant])
    if name.endswith(BEFORE):   # the same candidate, importing minigrad from the --before tree
        env = dict(env, MINIGRAD_BENCH_ROOT=str(args.before),
                   PYTHONPATH=os.pathsep.join([str(args.before), env["PYTHONPATH"]]))
    cmd = [sys.executable, script, "--child", name, "--child-config", config, "--threads", str(threads)]
    if args.repeats:
        cmd += ["--repeats", str(args.repeats)]
    if check_file:
        cmd += ["--check-file", check_file]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{name} [{config}] failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fmt(x):
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def _blas_line(info):
    parts = []
    for d in info:
        s = " ".join(str(d[k]) for k in ("internal_api", "version", "architecture", "threading_layer") if k in d)
        if "num_threads" in d:
            s += f", {d['num_threads']} thread(s)"
        parts.append(s)
    return "; ".join(parts) or "no BLAS/OpenMP library seen by threadpoolctl"


def main(bench):
    ap = argparse.ArgumentParser(description=bench.title)
    ap.add_argument("--repeats", type=int, help="timed steps per process (default: per config)")
    ap.add_argument("--rounds", type=int, default=bench.rounds, help="processes per candidate (alternating)")
    ap.add_argument("--only", help="comma-separated candidates to run")
    ap.add_argument("--config", action="append", help="config(s) to run (default: all)")
    ap.add_argument("--keep-env", action="store_true", help="keep OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE")
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    ap.add_argument("--before", type=Path, help="another checkout (e.g. `git archive` of an older commit): "
                    "adds a minigrad-before candidate importing minigrad from it, in the same alternation")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-config", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, help="threads for every candidate (default: numpy's BLAS "
                    "default); sets OPENBLAS_NUM_THREADS/OMP_NUM_THREADS for the children")
    ap.add_argument("--check-file", help=argparse.SUPPRESS)
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:VAR=VALUE[,VAR=VALUE...]",
                    help="one more row per minigrad candidate, minigrad[NAME], whose children run with these "
                    "environment variables, in the same alternating rounds (repeatable), e.g. "
                    "pool:MINIGRAD_THREAD_POLICY=pool,MINIGRAD_NUM_THREADS=2")
    ap.add_argument("--busy", action="store_true", help="start one CPU-bound competitor process (a pure-Python "
                    "spin loop) before the timed runs and stop it after: the figures of a busy machine (minigrad's "
                    "adaptation to a busy machine stays off, as in every run, unless MINIGRAD_ADAPTIVE_THREADS=1: "
                    "set it to measure as users run minigrad)")
    args = ap.parse_args()
    args.variants = dict(_parse_variant(v) for v in args.variant)
    if args.child:   # a variant's child runs its base candidate (the parent set the variables)
        base = _variant_of(args.child)[0]
        if args.child not in bench.candidates and base in bench.candidates:
            bench.candidates[args.child[:-len(BEFORE)] if args.child.endswith(BEFORE) else args.child] = \
                bench.candidates[base]
    else:
        bases = [n for n in bench.candidates if n.startswith("minigrad") and not n.endswith(BEFORE)]
        for v in args.variants:
            for n in bases:
                bench.candidates[f"{n}[{v}]"] = bench.candidates[n]
                bench.ratios = bench.ratios + [(f"{n}[{v}]", n, None)]
    if args.before or (args.child or "").endswith(BEFORE):
        for n in [n for n in bench.candidates if n.startswith("minigrad") and not n.endswith(BEFORE)]:
            bench.candidates[n + BEFORE] = bench.candidates[n]
        bench.ratios = bench.ratios + [(n, n + BEFORE, None) for n in bench.candidates if n + BEFORE in bench.candidates]
    if args.child:
        return _child(bench, args)

    script = str(Path(sys.modules["__main__"].__file__).resolve())
    names = list(bench.candidates) if not args.only else args.only.split(",")
    configs = args.config or list(bench.configs)
    env, removed = _child_env(args.keep_env)
    threads, how = numpy_threads()
    if args.threads:
        threads, how = args.threads, "--threads"
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
    print(bench.title)
    print(f"load average (1, 5, 15 min) at the start: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"(a shared machine: read the spread)")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; {os.cpu_count()} core(s); "
          f"threads for every candidate: {threads} [numpy's BLAS, via {how}]")
    for v, venv in args.variants.items():
        print(f"variant minigrad[{v}]: the minigrad candidates' children run with "
              + " ".join(f"{k}={x}" for k, x in venv.items()))
    if args.keep_env:
        print("--keep-env: OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE passed to the children as set: "
              + ", ".join(f"{v}={os.environ.get(v)}" for v in UNSET))
    else:
        print("benchmark children run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset ("
              + (", ".join(f"{k}={v} removed" for k, v in removed.items()) or "neither was set here")
              + "); tests and CI are not affected")
    print(f"each candidate in its own process, {args.rounds} round(s) in alternating order "
          f"({' '.join(names)}, ...); per process: warm-up steps, then the timed steps")
    results = {}
    competitor = Competitor() if args.busy else None
    try:
        if competitor is not None:
            competitor.start()
            print(f"--busy: one CPU-bound competitor process (pid {competitor.pid}, a pure-Python spin loop) "
                  f"runs through every timed run; stopped at the end, on error and at exit")
        top = bench
        for config in configs:
            bench, _, skip = top.settings(config)
            cnames = [n for n in names if n not in skip]
            # a config's own ratios replace the file's: keep the --before and --variant comparisons in them too
            bench.ratios = bench.ratios + [r for r in top.ratios if (r[1].endswith(BEFORE) or _variant_of(r[0])[1])
                                           and r not in bench.ratios]
            print(f"\n[{config}] " if config else "", end="")
            print(f"{args.repeats or bench.repeats} timed steps per process after {bench.warmup} warm-up"
                  + (f" (a step is {bench.per} {bench.per_name}s)" if bench.per > 1 else "")
                  + (f"; {', '.join(n for n in names if n in skip)}: no version of this workload" if set(skip) & set(names) else ""))
            runs = {n: [] for n in cnames}
            faults = {}
            cpus = {}
            info = {}
            tmp = tempfile.mkdtemp(prefix="mgbench-")
            for r in range(args.rounds):
                for n in cnames:
                    check = os.path.join(tmp, f"{n}.npz") if (r == 0 and bench.check_steps) else None
                    res = _run_child(script, n, config, args, threads, env, check)
                    if "skipped" in res:
                        info[n] = res
                        continue
                    info.setdefault(n, res)
                    runs[n].append(np.asarray(res["times"]) * bench.scale / bench.per)
                    cpus.setdefault(n, []).append(float(np.median(res["cpu"])) * bench.scale / bench.per)
                    faults.setdefault(n, []).append(res["faults"])
            if bench.check_steps and bench.reference in runs and runs[bench.reference]:
                ref = np.load(os.path.join(tmp, f"{bench.reference}.npz"))
                for n in cnames:
                    path = os.path.join(tmp, f"{n}.npz")
                    if n == bench.reference or not os.path.exists(path):
                        continue
                    got = np.load(path)
                    err = max(float(np.abs(got[k] - ref[k]).max()) for k in ref.files)
                    if err >= bench.tol:
                        raise SystemExit(f"{n} disagrees with {bench.reference} after {bench.check_steps} "
                                         f"steps (max |diff| {err:.2e})")
                print(f"check: {', '.join(n for n in cnames if runs[n])} agree with {bench.reference} "
                      f"after {bench.check_steps} steps from the same start (max |diff| < {bench.tol:g})")
            for n in cnames:
                res = info.get(n, {})
                if "skipped" in res:
                    print(f"  {n}: skipped: {res['skipped']}")
                    continue
                ver = f" {res['version']}" if "version" in res else ""
                print(f"  {n}{ver}: {res['threads']}; BLAS: {_blas_line(res['blas'])}")
            print(f"  {'candidate':<16s} {'median':>9s} {'spread (min-max)':>20s} {'p95/median':>10s} "
                  f"{'faults/step':>11s} {'cpu median':>10s} {'cpu spread':>14s}  [{bench.unit} per {bench.per_name}; "
                  f"page faults per step; cpu: the process's CPU time per {bench.per_name} (all its threads), "
                  f"which waiting for a busy core does not inflate]")
            meds = {}
            for n in cnames:
                if not runs[n]:
                    continue
                per_run = [float(np.median(t)) for t in runs[n]]
                p95 = statistics.median(float(np.percentile(t, 95) / np.median(t)) for t in runs[n])
                meds[n] = per_run
                med = statistics.median(per_run)
                flt = statistics.median(faults[n])
                c = cpus[n]
                print(f"  {n:<16s} {_fmt(med):>9s} {_fmt(min(per_run)) + '-' + _fmt(max(per_run)):>20s} "
                      f"{p95:10.2f} {flt:11.0f} {_fmt(statistics.median(c)):>10s} {_fmt(min(c)) + '-' + _fmt(max(c)):>14s}")
                results.setdefault(config, {})[n] = {"median": med, "runs": per_run, "p95_over_median": p95,
                                                     "faults_per_step": flt, "cpu_median": statistics.median(c),
                                                     "cpu_runs": c}
            if bench.rate_name and meds:
                rates = {n: bench.scale / statistics.median(m) for n, m in meds.items()}
                print("  throughput (from the medians): "
                      + ", ".join(f"{n} {_fmt(r)} {bench.rate_name}" for n, r in rates.items()))
                for n, r in rates.items():
                    results[config][n]["rate"] = r
            for a, b, target in bench.ratios:
                if a in meds and b in meds:
                    per = [x / y for x, y in zip(meds[a], meds[b])]
                    r = statistics.median(meds[a]) / statistics.median(meds[b])
                    t = f"; target <= {target}: {'met' if r <= target else 'NOT met'}" if target else ""
                    cper = [x / y for x, y in zip(cpus[a], cpus[b])]
                    cr = statistics.median(cpus[a]) / statistics.median(cpus[b])
                    print(f"  {a} / {b} = {r:.2f} (per round {min(per):.2f}-{max(per):.2f}){t}; "
                          f"cpu time {cr:.2f} (per round {min(cper):.2f}-{max(cper):.2f})")
                    results[config][f"{a}/{b}"] = r
                    results[config][f"{a}/{b} cpu"] = cr
    finally:
        if competitor is not None:
            competitor.stop()
    print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def sgd_step(model, opt, loss_fn, x, y):
    """One training step closure (zero_grad, loss, backward, step) for a minigrad or PyTorch model:
    both frameworks spell it the same way, so one closure serves both."""
    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step
