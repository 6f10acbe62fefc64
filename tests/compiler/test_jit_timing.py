"""mg.jit times the first runs of each program against eager (a few of them run the function eagerly
instead of the program, never both) and explain says which is faster, flagging a program slower
than eager; a step's side effects (an optimizer step) happen once per call whichever ran."""
import copy
import importlib
import time
import warnings

import numpy as np

import minigrad as mg
import minigrad.nn as nn
from minigrad.compiler.jit import JitWarning, _TIMING_RUNS
from _steps import train_step

jit_mod = importlib.import_module("minigrad.compiler.jit")


def _step_setup(seed=0):
    mg.manual_seed(seed)
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    return m


def _make_step(m):
    opt = mg.optim.Adam(m.parameters(), lr=1e-2)
    return train_step(m, opt), opt


def test_explain_shows_compiled_and_eager_per_call_and_steps_run_once():
    m = _step_setup()
    m2 = copy.deepcopy(m)
    step, opt = _make_step(m)
    eager_step, eager_opt = _make_step(m2)
    jitted = mg.jit(step)
    rng = np.random.default_rng(0)
    batches = [(mg.tensor(rng.standard_normal((4, 8)).astype(np.float32)), mg.tensor(rng.integers(0, 3, 4)))
               for _ in range(len(_TIMING_RUNS) + 4)]
    losses = [jitted(*batches[0]), jitted(*batches[1])]   # (no grads yet at the first: two programs)
    ex = jitted.explain(*batches[1])                       # cached: explain runs nothing
    assert "per call: not measured yet" in str(ex) and ex.compiled_per_call is None
    losses += [jitted(x, y) for x, y in batches[2:]]
    want = [eager_step(*b) for b in batches]
    # every call stepped exactly once (Adam's step count), whether the program or eager ran it
    assert all(int(s["step"]) == len(batches) for s in opt.state.values())
    assert all(int(s["step"]) == len(batches) for s in eager_opt.state.values())
    for p, q in zip(m.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    for i, (got, ref) in enumerate(zip(losses, want)):
        assert i < 2 or not got.requires_grad   # an eager timed run gives what the program gives
        np.testing.assert_array_equal(got.detach().numpy(), ref.detach().numpy())
    assert jitted.traces == 2           # no grads yet at the first call, then grads: no retrace from timing
    ex = jitted.explain(*batches[0])
    assert ex.compiled_per_call > 0 and ex.eager_per_call > 0
    assert "per call: compiled " in str(ex) and " vs eager " in str(ex)
    assert jitted._last.timing is None  # timing is over: a run tests one attribute


class _Slow:
    """A compiled program with a fixed cost per call added."""

    def __init__(self, prog):
        self.prog, self.code, self.plan = prog, prog.code, prog.plan

    def __call__(self, *a, **k):
        time.sleep(0.003)
        return self.prog(*a, **k)


def test_a_program_slower_than_eager_is_flagged(monkeypatch):
    real = jit_mod.compile_graph
    monkeypatch.setattr(jit_mod, "compile_graph", lambda g: _Slow(real(g)))
    jitted = mg.jit(lambda x: (x * 2.0).exp().sum())
    x = mg.ones(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with mg.debug.watch():
            for _ in range(len(_TIMING_RUNS) + 3):
                np.testing.assert_allclose(jitted(x).numpy(), (x * 2.0).exp().sum().numpy())
    ex = jitted.explain(x)
    assert ex.compiled_per_call >= 0.003 > ex.eager_per_call
    assert "compiled is SLOWER by" in str(ex) and "without mg.jit" in str(ex)
    slow = [w for w in caught if issubclass(w.category, JitWarning) and "SLOWER" in str(w.message)]
    assert len(slow) == 1                # once, and only under mg.debug.watch()
    j2 = mg.jit(lambda x: (x * 3.0).sum())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(len(_TIMING_RUNS) + 2):
            j2(x)
    assert not [w for w in caught if issubclass(w.category, JitWarning)]
    assert "SLOWER" in str(j2.explain(x))


def test_a_frozen_module_says_why_eager_is_not_timed():
    m = _step_setup().eval()
    fast = mg.compile(m, freeze=True)
    x = mg.randn(2, 8)
    for _ in range(len(_TIMING_RUNS) + 1):
        fast(x)
    text = str(fast.explain(x))
    assert "eager time not measured because a frozen program reads the parameters" in text
