"""Kernel selection (minigrad/kernels/select.py, ``mg.backends.cpu.benchmark``): off by default;
on, each op times its candidates once per key and caches the choice in choices.json beside the
kernels; the cache survives the process, a corrupt or tampered file or entry is ignored with a
warning and rewritten, a cached choice is used without timing (deterministic), mg.jit.explain lists
the choices, and every candidate of an op agrees with the others (forward and backward)."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.kernels import select
from minigrad.kernels.fused import CacheWarning
from minigrad.ops import _conv2d as C

from helpers import assert_results_close, conv3x3_case

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
needs_numba = pytest.mark.skipif(not kernels.available(),
                                 reason="Winograd, the direct weight gradient and the pooling kernel are numba kernels")


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    """A private cache folder and an empty selector for every test (and benchmark restored after)."""
    monkeypatch.setenv("MINIGRAD_CACHE", str(tmp_path))
    monkeypatch.setattr(mg.backends.cpu, "benchmark", mg.backends.cpu.benchmark)
    select.clear()
    yield
    select.clear()


def _conv_step(shape=(2, 8, 4, 6, 5), dtype=np.float32, **kw):
    xs, ws, bs, gs = conv3x3_case(shape, kw.get("padding", 1), dtype, True)
    x, w, b = (mg.tensor(a, requires_grad=True) for a in (xs, ws, bs))
    out = F.conv2d(x, w, b, padding=kw.get("padding", 1))
    out.backward(mg.tensor(gs))
    return [out.detach().numpy().copy()] + [t.grad.numpy().copy() for t in (x, w, b)]


def _file():
    return select.cache_file()


# -- the switch ------------------------------------------------------------------------------------

def test_benchmark_is_off_by_default_and_then_nothing_is_timed_or_written(monkeypatch):
    import minigrad.backends.cpu as cpu
    assert cpu is mg.backends.cpu and cpu.benchmark is False
    monkeypatch.setattr(select, "_time", lambda fn: pytest.fail("timed with benchmark off"))
    _conv_step()
    assert mg.backends.cpu.choices() == {}
    assert not os.path.exists(_file())


@needs_numba
def test_benchmark_times_once_per_key_and_writes_the_cache(monkeypatch):
    mg.backends.cpu.benchmark = True
    timed = []
    real = select._time
    # the forward's choice decides which backward keys exist (a Winograd forward's backward follows
    # it; im2col's has candidates of its own): time for real, but rank the later candidate first so
    # the outcome does not depend on the machine (the forward's timing picked Winograd 1 run in 6)
    monkeypatch.setattr(select, "_time", lambda fn: timed.append(fn) or real(fn) * 0 - len(timed))
    _conv_step()
    made = mg.backends.cpu.choices()
    ops = sorted(json.loads(k)[0] for k in made)
    assert ops == ["conv2d", "conv2d_input_grad", "conv2d_weight_grad"]
    assert all(how == "timed" for _, how in made.values())
    assert len(timed) == 6  # two candidates for each key
    on_disk = json.load(open(_file()))
    assert on_disk["choices"] == {k: c for k, (c, _) in made.items()}
    assert os.stat(_file()).st_mode & 0o077 == 0
    n = len(timed)
    _conv_step()  # the same shapes: no timing again
    assert len(timed) == n
    _conv_step((2, 8, 4, 7, 5))  # another shape: a new key
    assert len(timed) > n


# -- the cache across processes and under tampering ------------------------------------------------

_CHILD = """
import json, minigrad as mg, minigrad.nn.functional as F
from minigrad.kernels import select
print(json.dumps(mg.backends.cpu.benchmark))
mg.backends.cpu.benchmark = True
select._time = None  # a cached key must not be timed
x = mg.randn(2, 3, 6, 5, requires_grad=True)
w = mg.randn(4, 3, 3, 3, requires_grad=True)
F.conv2d(x, w, padding=1, stride=1, dilation=1).sum().backward()
print(json.dumps(mg.backends.cpu.choices()))
"""


def test_the_cache_survives_the_process(tmp_path):
    mg.backends.cpu.benchmark = True
    x = mg.randn(2, 3, 6, 5, requires_grad=True)
    F.conv2d(x, mg.randn(4, 3, 3, 3, requires_grad=True), padding=1).sum().backward()
    first = mg.backends.cpu.choices()
    assert first and all(how == "timed" for _, how in first.values())
    env = dict(os.environ, MINIGRAD_CACHE=str(tmp_path), PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    default, made = r.stdout.strip().splitlines()[-2:]
    assert json.loads(default) is False  # off by default in a fresh process
    second = json.loads(made)
    assert {k: c for k, (c, _) in second.items()} == {k: c for k, (c, _) in first.items()}
    assert all(how == "cache" for _, how in second.values())


def _conv_key(N=2, C_=8, O=4, H=6, W=5, op="conv2d"):
    geo = C._make_geom("conv2d", (N, C_, H, W), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1))
    return select.make_key(op, C._conv_key(geo, 1, O, np.float32, False))


def _write(choices, **over):
    doc = {"format": select.FORMAT, "version": select.VERSION, "machine": select._fingerprint(), "choices": choices}
    doc.update(over)
    os.makedirs(os.path.dirname(_file()), exist_ok=True)
    with open(_file(), "w") as f:
        json.dump(doc, f)
    os.chmod(_file(), 0o600)


@pytest.mark.parametrize("content", [
    b"{not json", b"\xff\xfe", b"[1, 2]", b'{"format": "pickle", "version": 1}',
    b'{"format": "minigrad-kernel-choices", "version": 1, "machine": {}, "choices": [], "x": NaN}',
])
def test_a_corrupt_cache_file_is_ignored_with_a_warning_and_rewritten(content):
    os.makedirs(os.path.dirname(_file()), exist_ok=True)
    with open(_file(), "wb") as f:
        f.write(content)
    os.chmod(_file(), 0o600)
    mg.backends.cpu.benchmark = True
    with pytest.warns(CacheWarning, match="ignored"):
        _conv_step()
    doc = json.load(open(_file()))  # rewritten, valid, with this run's timed choices
    assert doc["format"] == select.FORMAT and doc["choices"]
    assert all(how == "timed" for _, how in mg.backends.cpu.choices().values())


def test_a_tampered_entry_is_ignored_and_the_file_rewritten_without_it(monkeypatch):
    good = _conv_key(op="conv2d_input_grad")  # a key with candidates with or without numba
    other = _conv_key(H=8)
    _write({good: "flat",
            other: "direct",  # a candidate of another op
            _conv_key(H=9): "__import__('os').system('true')",
            good.replace(",", ", "): "col2im",  # not the canonical form of its key
            '["conv3d",1]': "im2col"})  # an op that has no choices
    mg.backends.cpu.benchmark = True
    with pytest.warns(CacheWarning, match="4 invalid entries ignored"):
        _conv_step()
    assert mg.backends.cpu.choices()[good] == ("flat", "cache")
    doc = json.load(open(_file()))
    assert doc["choices"][good] == "flat" and other not in doc["choices"]
    assert set(json.loads(k)[0] for k in doc["choices"]) <= set(select.OPS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rewritten file reads cleanly
        select.clear()
        _conv_step()


def test_a_cache_file_others_may_write_is_not_trusted():
    _write({_conv_key(): "im2col"})
    os.chmod(_file(), 0o666)
    mg.backends.cpu.benchmark = True
    with pytest.warns(CacheWarning, match="not a private regular file"):
        select._load()
    assert select._memory == {}
    assert os.stat(_file()).st_mode & 0o077 == 0  # rewritten privately


@needs_numba
@pytest.mark.parametrize("choice", ["winograd", "im2col"])
def test_choices_are_deterministic_under_a_fixed_cache(monkeypatch, choice):
    """A cached choice runs without timing, even against the fixed rule (which takes Winograd for
    64 tiles of 8 channels and im2col below)."""
    geo_key = _conv_key(N=8, H=8, W=8)
    _write({geo_key: choice})
    mg.backends.cpu.benchmark = True
    monkeypatch.setattr(select, "_time", lambda fn: 0.0)  # the other keys: timing without measuring
    wino = []
    real = C._wino_forward
    monkeypatch.setattr(C, "_wino_forward", lambda *a: wino.append(1) or real(*a))
    for _ in range(2):
        _conv_step((8, 8, 4, 8, 8))
        assert mg.backends.cpu.choices()[geo_key] == (choice, "cache")
    assert bool(wino) == (choice == "winograd")
    assert json.load(open(_file()))["choices"][geo_key] == choice


@pytest.mark.parametrize("choice", ["flat", "col2im"])
def test_input_grad_choice_is_deterministic_under_a_fixed_cache(monkeypatch, choice):
    key = _conv_key(op="conv2d_input_grad")
    _write({key: choice})
    mg.backends.cpu.benchmark = True
    monkeypatch.setattr(select, "_time", lambda fn: 0.0)  # the other keys: timing without measuring
    flat = []
    real = C._conv_dx_flat
    monkeypatch.setattr(C, "_conv_dx_flat", lambda *a: flat.append(1) or real(*a))
    with select.force("conv2d", "im2col"):
        for _ in range(2):
            _conv_step()
            assert mg.backends.cpu.choices()[key] == (choice, "cache")
    assert len(flat) == (2 if choice == "flat" else 0)


def test_another_machines_cache_is_dropped_silently():
    _write({_conv_key(): "im2col"}, machine={"numpy": "0.0", "numba": True, "cpus": 1})
    mg.backends.cpu.benchmark = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        select._load()
    assert select._memory == {}
    assert json.load(open(_file()))["machine"] == select._fingerprint()


@needs_numba
def test_jit_explain_shows_the_choices():
    mg.backends.cpu.benchmark = True

    def f(x, w):
        return F.max_pool2d(F.conv2d(x, w, padding=1), 2).sum()
    x, w = mg.randn(2, 8, 6, 6), mg.randn(4, 8, 3, 3)
    text = str(mg.jit.explain(f, x, w))
    assert '["conv2d",[2,8,6,6,3,3,1,1,1,1,1,1,1,1],4,1,"float32",false]' in text
    assert '["max_pool2d_2x2",[2,4,6,6],"float32",false]' in text
    mg.backends.cpu.benchmark = False
    select.clear()
    assert "fixed rules; mg.backends.cpu.benchmark off" in str(mg.jit.explain(mg.jit(f), x, w))


# -- every candidate agrees with the others --------------------------------------------------------

def _run_forced(op, name, fn):
    with select.force(op, name):
        return fn()


@needs_numba
@pytest.mark.parametrize("shape,padding,dtype", [
    ((3, 8, 5, 7, 9), 1, np.float32),   # odd output sizes: half tiles at the edges
    ((2, 9, 8, 6, 5), 0, np.float64),
])
def test_conv2d_candidates_agree(shape, padding, dtype):
    got = _run_forced("conv2d", "winograd", lambda: _conv_step(shape, dtype, padding=padding))
    ref = _run_forced("conv2d", "im2col", lambda: _conv_step(shape, dtype, padding=padding))
    assert_results_close(got, ref, dtype)


@needs_numba
@pytest.mark.parametrize("shape,dtype", [((2, 2, 3, 9, 8), np.float32), ((1, 1, 2, 5, 7), np.float64)])
def test_conv2d_weight_grad_candidates_agree(shape, dtype):
    with select.force("conv2d", "im2col"):
        got = _run_forced("conv2d_weight_grad", "direct", lambda: _conv_step(shape, dtype))
        ref = _run_forced("conv2d_weight_grad", "gemm", lambda: _conv_step(shape, dtype))
    assert_results_close(got, ref, dtype)


@pytest.mark.parametrize("xs,ws,kw,dtype", [
    ((2, 4, 9, 8), (6, 2, 3, 2), dict(dilation=2, padding=(1, 2), groups=2), np.float64),
    ((3, 3, 7, 6), (5, 3, 3, 3), dict(padding=1), np.float32),
    ((2, 2, 5, 5), (3, 2, 1, 4), dict(padding=(0, 2), dilation=(1, 2)), np.float32),
])
def test_conv2d_input_grad_candidates_agree(xs, ws, kw, dtype):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)

    def step():
        x, w = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
        out = F.conv2d(x, w, **kw)
        out.backward(mg.tensor(np.cos(np.arange(out.numel())).reshape(out.shape).astype(dtype)))
        return [out.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy()]
    with select.force("conv2d", "im2col"):
        got = _run_forced("conv2d_input_grad", "flat", step)
        ref = _run_forced("conv2d_input_grad", "col2im", step)
    assert_results_close(got, ref, dtype)


def test_split_k_candidates_agree():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 16, 8003))  # 16 * 8 * 8003 > _SPLIT_K_MNK multiply-adds: a tail chunk
    b = rng.standard_normal((16, 8003, 8))
    one = _run_forced("matmul_split_k", "one", lambda: C._matmul_split_k(a, b))
    chunks = _run_forced("matmul_split_k", "chunks", lambda: C._matmul_split_k(a, b))
    assert_results_close([chunks], [one], np.float64)
    assert_results_close([one], [np.einsum("bmk,bkn->bmn", a, b)], np.float64)


@needs_numba
def test_max_pool_candidates_agree_bitwise():
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 3, (2, 3, 6, 10)).astype(np.float32)  # ties: the first maximum wins in both
    a[0, 0, 0, 0] = np.nan

    def step():
        x = mg.tensor(a, requires_grad=True)
        out = F.max_pool2d(x, 2)
        out.backward(mg.tensor(np.arange(out.numel(), dtype=np.float32).reshape(out.shape)))
        return out.detach().numpy().copy(), x.grad.numpy().copy()
    for u, v in zip(_run_forced("max_pool2d_2x2", "numba", step), _run_forced("max_pool2d_2x2", "numpy", step)):
        np.testing.assert_array_equal(u, v)
        assert u.tobytes() == v.tobytes()


@needs_numba
def test_second_derivatives_with_benchmark_on():
    """A double backward's convolutions (no forward of their own, x or w absent) with benchmark on."""
    mg.backends.cpu.benchmark = True
    rng = np.random.default_rng(4)
    x = mg.tensor(rng.standard_normal((1, 2, 4, 3)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((2, 2, 3, 3)), requires_grad=True)
    assert mg.autograd.gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1), (x, w))
    assert mg.backends.cpu.choices()


def test_force_names_a_candidate():
    with pytest.raises(ValueError, match="no candidate 'fft'"):
        with select.force("conv2d", "fft"):
            pass
