"""mg.jit's specialised guards (compiler/guards.py): whenever the last program's fast guard passes,
the generic guard key must be the one of that program -- checked for each kind of state change the
key reads. (The guard's cost is a benchmark figure, not a test: benchmarks/bench_jit.py.)"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn

SCALE = 2.0
CFG = {"k": 1.0}


def _setup():
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.0), nn.Linear(8, 2))
    opt = mg.optim.Adam(model.parameters(), lr=1e-2)

    def step(x):
        opt.zero_grad()
        loss = (model(x) * SCALE * CFG["k"]).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    return model, opt, step


def _mutations(model, opt):
    lin = model[0]
    g = globals()
    return {
        "eval()": lambda: model.eval(),
        "Dropout's p": lambda: setattr(model[1], "p", 0.5),
        "a parameter replaced by setattr": lambda: setattr(lin, "bias", nn.Parameter(lin.bias.detach().clone())),
        "a parameter replaced in the dict": lambda: lin._parameters.__setitem__("bias", nn.Parameter(lin.bias.detach().clone())),
        "a child replaced in the dict": lambda: model._modules.__setitem__("2", nn.Linear(8, 2)),
        "requires_grad off": lambda: lin.weight.requires_grad_(False),
        "a new shape through .data": lambda: setattr(lin.bias, "data", mg.zeros(8, 1)),
        "optimizer state cleared": lambda: opt.state.clear(),
        "a gradient set to None": lambda: setattr(lin.weight, "grad", None),
        "a global rebound": lambda: g.__setitem__("SCALE", 3.0),
        "a global dict entry": lambda: CFG.__setitem__("k", 5.0),
        "an equal global float": lambda: g.__setitem__("SCALE", float("2.0")),
    }


@pytest.mark.parametrize("what", list(_mutations(*_setup()[:2])))
def test_a_passing_fast_guard_means_the_same_key(what):
    global SCALE
    SCALE, CFG["k"] = 2.0, 1.0
    model, opt, step = _setup()
    jf = mg.jit(step)
    x = mg.randn(3, 4)
    for _ in range(4):
        jf(x)
    entry = jf._last
    assert entry.fast is not None and entry.fast((x,), {})   # the steady state: the fast path runs
    key = jf._key((x,), {})[0]
    _mutations(model, opt)[what]()
    if entry.fast((x,), {}):
        assert jf._key((x,), {})[0] == key, what
    else:
        assert what == "an equal global float" or jf._key((x,), {})[0] != key, what
    SCALE, CFG["k"] = 2.0, 1.0


def test_arguments_and_grad_mode_are_guarded():
    f = mg.jit(lambda x, n: x * n)
    x = mg.randn(3)
    for _ in range(3):
        f(x, 2)
    fast = f._last.fast
    assert fast((x,), {}) is False and fast((x, 2), {}) is True
    assert not fast((mg.randn(4), 2), {}) and not fast((x.double(), 2), {}) and not fast((x, 3), {})
    assert not fast((x.requires_grad_(), 2), {})
    x.requires_grad_(False)
    with mg.no_grad():
        assert not fast((x, 2), {})
    np.testing.assert_array_equal(f(x, 3).numpy(), (x * 3).numpy())
