"""Activation checkpointing: memory and time of a 32-layer MLP (width 1024, batch 256, float32),
plain vs checkpoint_sequential at sqrt(32) ~ 6 segments.

Saved activations: the bytes of distinct buffers that go through the saved-tensor path, counted
by a saved_tensors_hooks pair around the step (the checkpoint's own hooks nest inside it, and its
recomputation is counted while its saved tensors are alive); parameters and gradients excluded.
Cross-check: the peak RSS of a child process running three steps of each mode (parameters and
gradients included there, so the difference between the two is what checkpointing saved). Step time: median of the rounds (alternating plain / checkpointed).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_checkpoint.py
"""
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import minigrad as mg  # noqa: E402
from minigrad.autograd import graph as _graph  # noqa: E402
from minigrad.utils import checkpoint as ck  # noqa: E402

L, W, B = 32, 1024, 256
nn = mg.nn


class Live:
    """Bytes of saved buffers alive now (distinct arrays), and the peak."""

    def __init__(self):
        self.now = self.peak = 0
        self.alive = {}

    def add(self, arr):
        base = arr if arr.base is None else arr.base
        k = id(base)
        n, c = self.alive.get(k, (base.nbytes, 0))
        if c == 0:
            self.now += n
            self.peak = max(self.peak, self.now)
        self.alive[k] = (n, c + 1)
        return k

    def drop(self, k):
        n, c = self.alive[k]
        if c == 1:
            del self.alive[k]
            self.now -= n
        else:
            self.alive[k] = (n, c - 1)


class _Held:
    """What the counting hook hands the graph: the tensor, and its count released when freed."""

    def __init__(self, live, t):
        self.live, self.t, self.key = live, t, live.add(t._data)

    def __del__(self):
        self.live.drop(self.key)


def step(model, x, segments, live):
    # count every saved tensor: outside checkpoints through an outer hook, inside through the
    # checkpoint's recomputation collector (patched to count while its tensors are alive)
    for p in model.parameters():
        p.grad = None
    with _graph.saved_tensors_hooks(lambda t: _Held(live, t), lambda h: h.t):
        out = model(x) if segments == 1 else ck.checkpoint_sequential(model, segments, x, use_reentrant=False)
        loss = out.square().mean() if hasattr(out, "square") else (out * out).mean()
    loss.backward()


_orig_recompute = ck._Frame._recompute


def _counting_recompute(self):
    _orig_recompute(self)
    live = _COUNT[0]
    self.recomputed = [_Counted(live, t) for t in self.recomputed]


def _counted_unpack(self, i):
    if self.recomputed is None:
        self._recompute()
    return self.recomputed[i].t


class _Counted:
    """A recomputed saved tensor, counted while the checkpoint holds it."""
    def __init__(self, live, t):
        self.live, self.t, self.key = live, t, live.add(t._data)

    def __del__(self):
        self.live.drop(self.key)


_COUNT = [None]


def measure(model, x, segments):
    live = Live()
    _COUNT[0] = live
    orig_unpack = ck._Frame.unpack
    ck._Frame._recompute = _counting_recompute
    ck._Frame.unpack = _counted_unpack
    try:
        step(model, x, segments, live)
    finally:
        ck._Frame._recompute = _orig_recompute
        ck._Frame.unpack = orig_unpack
    return live.peak


def child_rss(segments):
    """Peak RSS (MiB) of a fresh process running 3 steps with `segments` (1 = plain)."""
    import subprocess
    out = subprocess.run([sys.executable, __file__, "--child", str(segments)], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def build():
    mg.manual_seed(0)
    layers = []
    for _ in range(L):
        layers += [nn.Linear(W, W), nn.ReLU()]
    return nn.Sequential(*layers), mg.randn(B, W)


def timed(model, x, segments):
    t0 = time.perf_counter()
    for p in model.parameters():
        p.grad = None
    out = model(x) if segments == 1 else ck.checkpoint_sequential(model, segments, x, use_reentrant=False)
    (out * out).mean().backward()
    return time.perf_counter() - t0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        import resource
        model, x = build()
        for _ in range(3):
            timed(model, x, int(sys.argv[2]))
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        sys.exit(0)
    from threadpoolctl import threadpool_info
    print("BLAS:", [(i.get("internal_api"), i.get("version"), i.get("architecture"), i.get("num_threads"))
                    for i in threadpool_info()])
    print("OPENBLAS_CORETYPE:", os.environ.get("OPENBLAS_CORETYPE", "(unset)"))
    model, x = build()
    segs = round(math.sqrt(L))
    print(f"{L}-layer MLP, width {W}, batch {B}; checkpoint_sequential with {segs} segments")
    res = {}
    for name, s in (("plain", 1), ("checkpointed", segs)):
        res[name] = (measure(model, x, s), child_rss(s))
        print(f"  {name:13s} saved activations peak {res[name][0] / 2**20:8.1f} MiB   "
              f"child peak RSS {res[name][1]:8.1f} MiB")
    print(f"  ratio saved-activation peak: {res['checkpointed'][0] / res['plain'][0]:.3f}   "
          f"RSS saved: {res['plain'][1] - res['checkpointed'][1]:.1f} MiB")
    times = {"plain": [], "checkpointed": []}
    timed(model, x, 1)
    for _ in range(5):
        times["plain"].append(timed(model, x, 1))
        times["checkpointed"].append(timed(model, x, segs))
    for k, v in times.items():
        print(f"  {k:13s} step {statistics.median(v) * 1e3:8.1f} ms (min {min(v) * 1e3:.1f}, max {max(v) * 1e3:.1f})")
    print(f"  ratio step time: {statistics.median(times['checkpointed']) / statistics.median(times['plain']):.3f}")
