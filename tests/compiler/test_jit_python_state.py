"""mg.jit never runs a stale program or drops a Python side effect (issue 31, items 6 and 7).

A trace bakes the Python values the function reads into its program; mg.jit guards on them
(minigrad/compiler/pystate.py), so a changed value traces again, as torch.compile does. A function
that writes Python state outside itself runs eagerly with a warning at the line (fullgraph=True
raises). And one jitted function called from many threads, or many threads each compiling their
own step, gives the right numbers.
"""
import sys
import threading
import types
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.graph.trace import GraphBreak

K = 2.0
CFG = {"k": 4.0}


class _Config:
    def __init__(self):
        self.scale = 5.0


OPTS = _Config()


def _helper(x):
    return x * K


def test_rebound_global_changed_dict_entry_attribute_and_helper_global_trace_again():
    global K
    x = mg.ones(3)
    jf = mg.jit(lambda x: (x * K).sum())
    jd = mg.jit(lambda x: (x * CFG["k"]).sum())
    jo = mg.jit(lambda x: (x * OPTS.scale).sum())
    jh = mg.jit(lambda x: _helper(x).sum())   # a global read by a function it calls
    try:
        assert [j(x).item() for j in (jf, jd, jo, jh)] == [6.0, 12.0, 15.0, 6.0]
        assert [j(x).item() for j in (jf, jd, jo, jh)] == [6.0, 12.0, 15.0, 6.0]  # compiled now
        K, CFG["k"], OPTS.scale = 3.0, 1.0, 0.5
        assert [j(x).item() for j in (jf, jd, jo, jh)] == [9.0, 3.0, 1.5, 9.0]  # eager: 9, 3, 1.5, 9
        assert jf.traces == 2 and jd.traces == 2 and jo.traces == 2 and jh.traces == 2
    finally:
        K, CFG["k"], OPTS.scale = 2.0, 4.0, 5.0


def test_a_closure_cell_is_guarded_too():
    def make():
        factor = 2.0

        def f(x):
            return (x * factor).sum()

        def set_factor(v):
            nonlocal factor
            factor = v
        return f, set_factor
    f, set_factor = make()
    jf = mg.jit(f)
    assert jf(mg.ones(2)).item() == 4.0 and jf(mg.ones(2)).item() == 4.0
    set_factor(5.0)
    assert jf(mg.ones(2)).item() == 10.0


@pytest.mark.parametrize("kind", ["append", "global", "nonlocal", "setitem", "print"])
def test_a_write_to_outside_state_runs_at_every_call_with_a_warning_at_its_line(kind, capsys):
    calls, box = [], {"n": 0}
    ns = {"calls": calls, "box": box, "counter": 0}
    src = {
        "append": "def f(x):\n    calls.append(1)\n    return x * 2\n",
        "global": "def f(x):\n    global counter\n    counter += 1\n    return x * 2\n",
        "setitem": "def f(x):\n    box['n'] = box['n'] + 1\n    return x * 2\n",
        "print": "def f(x):\n    print('step')\n    return x * 2\n",
    }
    if kind == "nonlocal":
        def outer():
            n = 0

            def f(x):
                nonlocal n
                n += 1
                return x * 2
            return f, lambda: n
        f, count = outer()
    else:
        exec(compile(src[kind], f"<{kind}>", "exec"), ns)
        f = ns["f"]
        count = {"append": lambda: len(calls), "global": lambda: ns["counter"],
                 "setitem": lambda: box["n"], "print": lambda: capsys.readouterr().out.count("step")}[kind]
    jf = mg.jit(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            np.testing.assert_array_equal(jf(mg.ones(2)).numpy(), [2.0, 2.0])
    assert count() == 3                       # the write ran at every call, not once
    msgs = [str(w.message) for w in caught if issubclass(w.category, mg.compiler.JitWarning)]
    assert len(msgs) == 1 and "runs eagerly" in msgs[0], msgs
    with pytest.raises(GraphBreak, match="runs eagerly"):
        mg.jit(f, fullgraph=True)(mg.ones(2))


def test_reads_and_local_containers_are_not_writes():
    table = {"a": 1.0}

    def f(x):
        out = []                    # a local list: appending to it is the function's own business
        out.append(x * table["a"])
        d = {}
        d["y"] = out[0]
        return d["y"].sum()
    jf = mg.jit(f, fullgraph=True)
    assert jf(mg.ones(2)).item() == 2.0 and jf(mg.ones(2)).item() == 2.0 and jf.traces == 1


def test_one_jitted_function_from_many_threads_and_many_threads_compiling():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        w = mg.randn(24, 24)
        jf = mg.jit(lambda x, w: ((x @ w).tanh() * 2.0 + 1.0).sum(1))
        xs = [mg.randn(8 + i % 3, 24) for i in range(8)]       # three shapes: three programs
        want = [((x @ w).tanh() * 2.0 + 1.0).sum(1).numpy() for x in xs]
        wrong, errors = [], []

        def call(i):
            try:
                for _ in range(60):
                    if not np.allclose(jf(xs[i], w).numpy(), want[i], rtol=1e-6):
                        wrong.append(i)
            except Exception as e:  # noqa: BLE001 -- reported below
                errors.append(repr(e))

        def train(i):
            try:
                mg.manual_seed(i)
                m = mg.nn.Linear(4, 1)
                opt = mg.optim.SGD(m.parameters(), lr=0.1)
                x = mg.randn(16, 4)
                y = x.sum(1, keepdim=True)

                @mg.jit
                def step(x, y):
                    opt.zero_grad()
                    loss = ((m(x) - y) ** 2).mean()
                    loss.backward()
                    opt.step()
                    return loss
                first = step(x, y).item()
                for _ in range(60):
                    last = step(x, y).item()
                if not last < first * 0.1:
                    wrong.append(("train", i, first, last))
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
        threads = [threading.Thread(target=call, args=(i,)) for i in range(8)] + \
                  [threading.Thread(target=train, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and not wrong, (errors[:3], wrong[:3])
    finally:
        sys.setswitchinterval(old)


def test_python_state_guard_reads_only_user_code():
    from minigrad.compiler.pystate import analyse
    a = analyse(lambda x: mg.nn.functional.relu(x) * K)
    names = {n for _, n in a.reads}
    assert "K" in names and "mg" in names and not a.writes
    assert isinstance(types, types.ModuleType)  # (the module objects themselves are guarded by identity)
