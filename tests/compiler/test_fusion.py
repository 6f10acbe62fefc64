"""Elementwise fusion: which equations become one fused equation, that the fused program keeps the
effects and their order, and that it computes the unfused bits (arithmetic; the NumPy backend with
anything) or stays within the documented tolerance (numba's transcendentals) -- with numba and with
numba absent; numba's kernels are cached on disk for the next process."""
import os
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad.kernels import fused as kernels
from minigrad.compiler.codegen import compile_graph
from minigrad.compiler.passes.fuse import fuse_elementwise
from minigrad.compiler.pipeline import FUSED, optimize

from _steps import cnn_batchnorm, make, mlp_dropout, same_bits, snapshot

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    kernels.numba_or_none() is None, reason="numba is an optional extra (pip install 'minigrad[jit]')"))]


@pytest.fixture(autouse=True)
def _kernel_cache(tmp_path_factory, monkeypatch):
    # one cache directory for the module's tests: kernels compiled once are reused, as in real use
    monkeypatch.setenv("MINIGRAD_CACHE", str(tmp_path_factory.getbasetemp() / "mgcache"))


def same_bits_but_nan_payload(a, b):
    """Bit for bit, except that a NaN may carry another sign or payload (IEEE 754 leaves which NaN an
    operation returns unspecified; NumPy's loops and LLVM's code pick differently)."""
    na, nb = np.isnan(a), np.isnan(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(na, nb) and \
        same_bits(np.where(na, 0, a), np.where(nb, 0, b))


def _special(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype) * 3
    flat = a.reshape(-1)
    vals = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1e-45 if dtype == np.float32 else 5e-324,
                     np.finfo(dtype).max, -np.finfo(dtype).tiny], dtype=dtype)
    flat[: 8 * (flat.size // 64)] = np.resize(vals, 8 * (flat.size // 64))
    rng.shuffle(flat)
    return mg.tensor(a)


def arith(x, y, b):
    z = ((x * y + 1.0) * x - y).relu() * 0.5 + x     # 6 ops
    return mg.where(z > b, z / (b.abs() + 1.0), -z).sqrt() * y + b  # b broadcasts along rows


def _fused(fn, args, backend, **kw):
    g = mg.graph.trace(fn, *args)
    h = fuse_elementwise(g, backend=backend, min_size=1, **kw)
    return g, h


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", [(3, 7), (300, 257)], ids=["small", "big"])
def test_arithmetic_groups_are_bitwise_the_unfused_program(backend, dtype, shape):
    x, y = _special(shape, dtype, 0), _special(shape, dtype, 1)
    b = _special(shape[1:], dtype, 2)
    g, h = _fused(arith, (x, y, b), backend)
    assert h.count()["fused"] >= 1 and len(h.eqns) < len(g.eqns)
    ref = g(x, y, b).numpy()
    same = same_bits if backend == "numpy" else same_bits_but_nan_payload
    assert same(h(x, y, b).numpy(), ref)
    c = compile_graph(h)
    for _ in range(2):  # into the planned buffer, twice
        assert same(c(x, y, b).numpy(), ref)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_fused_equation_is_recognisable_in_the_graph_and_the_code(backend):
    x = mg.randn(64, 64)
    g, h = _fused(lambda a: ((a * 2.0 + 1.0) * a - 3.0).relu(), (x,), backend)
    assert [e.prim for e in h.eqns] == ["fused"]
    text = str(h)
    assert "fused[expr='" in text and "=relu(" in text
    assert h.pass_details == f"1 groups of 5 equations ({backend} kernels)"
    code = compile_graph(h).code
    assert "# fused" in code and "out=_B" not in code  # the output is the caller's, not a buffer
    if backend == "numba":
        src = h.eqns[0].fn._fast.source
        assert "@numba.njit(" in src and "cache=True" in src and "o0[i] = " in src


def test_transcendentals_with_numpy_are_bitwise_and_run_block_by_block():
    n = 3 * kernels.CHUNK + 123  # several blocks and a ragged end
    x, y = _special((n,), np.float32, 3), _special((n,), np.float32, 4)
    f = lambda a, b: (a.exp() * b + a).tanh().sigmoid() * a - b.log()  # noqa: E731
    g, h = _fused(f, (x, y), "numpy")
    assert [e.prim for e in h.eqns] == ["fused"]
    assert same_bits(compile_graph(h)(x, y).numpy(), g(x, y).numpy())


@pytest.mark.skipif(kernels.numba_or_none() is None, reason="numba is an optional extra")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_numba_transcendentals_stay_within_the_documented_tolerance(dtype):
    rng = np.random.default_rng(5)
    x = mg.tensor(rng.uniform(-4, 4, 5000).astype(dtype))
    y = mg.tensor(rng.uniform(0.1, 4, 5000).astype(dtype))
    f = lambda a, b: (a.exp() * b + a).tanh() * a - b.log()  # noqa: E731
    g = mg.graph.trace(f, x, y)
    assert [e.prim for e in fuse_elementwise(g, backend="numba", min_size=1).eqns] != ["fused"]  # not by default
    h = fuse_elementwise(g, backend="numba", min_size=1, transcendentals=True)
    assert [e.prim for e in h.eqns] == ["fused"]
    depth = h.eqns[0].fn.group.transcendental_depth()
    assert depth == 2  # exp then tanh on the longest path
    rtol = kernels.ULPS_PER_TRANSCENDENTAL * depth * np.finfo(dtype).eps
    fused, ref = h(x, y).numpy(), g(x, y).numpy()
    # relative to the result's scale: a - b cancels, so the ulps of the operands are what counts
    scale = np.abs(x.numpy()) * 2 + np.abs(np.log(y.numpy())) + 1
    assert np.all(np.abs(fused - ref) <= rtol * scale * 4)


def test_effects_and_their_order_stay_and_no_read_moves_past_a_write():
    state = mg.zeros(100)

    def f(a):
        u = a * 2.0 + 1.0          # read before the write
        state.add_(a)              # an effect: groups close here
        v = (state * 3.0 - u) * a  # read after it
        return v, u * u
    a = mg.randn(100)
    g = mg.graph.trace(f, a)
    h = fuse_elementwise(g, backend="numpy", min_size=1, min_ops=2)
    assert [e.prim for e in h.eqns] == ["fused", "add", "assign", "fused", "mul"]
    state.zero_()
    ref = [t.numpy() for t in g(a)]
    state.zero_()
    got = [t.numpy() for t in compile_graph(h)(a)]
    assert all(same_bits(p, q) for p, q in zip(ref, got))


def test_a_result_read_outside_leaves_the_group_and_an_outside_reader_splits_it():
    def f(a):
        u = a * 2.0
        s = u.sum()            # an outside reader of u (not elementwise)
        w = (u + 1.0) * a      # after the reader: a new group
        return w * s, u
    a = mg.randn(50)
    g = mg.graph.trace(f, a)
    h = fuse_elementwise(g, backend="numpy", min_size=1)
    fused = [e for e in h.eqns if e.prim == "fused"]
    assert len(fused) == 1 and [len(e.outvars) for e in fused] == [1]
    assert all(same_bits(p.numpy(), q.numpy()) for p, q in zip(g(a), h(a)))


def test_groups_of_another_shape_or_too_small_are_left_alone():
    g = mg.graph.trace(lambda a, b: (a * 2.0).sum(0) * b + 1.0, mg.randn(8, 4), mg.randn(4))
    h = fuse_elementwise(g, backend="numpy", min_size=1, min_ops=2)
    assert h.count()["fused"] == 1 and h.count()["mul"] == 1  # a*2 alone; (.*b + 1) fused
    assert fuse_elementwise(g, backend="numpy", min_size=1000).pass_details == "0 groups"


def test_without_numba_the_numpy_backend_runs(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now raises ImportError
    assert kernels.numba_or_none() is None and kernels.resolve_backend(None) == "numpy"
    x, y, b = mg.randn(40, 30), mg.randn(40, 30), mg.randn(30)
    g = mg.graph.trace(arith, x, y, b)
    h, reports = optimize(g, FUSED)
    assert reports[-1].details == "2 groups of 7, 6 equations (numpy kernels)"  # split at the bool z > b
    assert same_bits(compile_graph(h)(x, y, b).numpy(), g(x, y, b).numpy())
    with pytest.raises(ImportError, match=r"pip install 'minigrad\[jit\]'"):
        kernels.build([e for e in h.eqns if e.prim == "fused"][-1].fn.group, [()] * 20, "numba")


@pytest.mark.skipif(kernels.numba_or_none() is None, reason="numba is an optional extra")
def test_numba_kernels_are_cached_on_disk_for_the_next_process(tmp_path):
    env = dict(os.environ, MINIGRAD_CACHE=str(tmp_path))
    prog = ("import minigrad as mg\n"
            "from minigrad.compiler.passes.fuse import fuse_elementwise\n"
            "g = mg.graph.trace(lambda a: ((a * 3.0 - 1.0) * a).relu() + 0.25, mg.randn(77))\n"
            "h = fuse_elementwise(g, backend='numba', min_size=1)\n"
            "k = h.eqns[0].fn._fast\n"
            "h(mg.randn(77))\n"
            "print(sum(k.fn.stats.cache_hits.values()), sum(k.fn.stats.cache_misses.values()))\n")
    runs = [subprocess.run([sys.executable, "-c", prog], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout.split() == ["0", "1"]   # compiled, and written to the cache
    assert runs[1].stdout.split() == ["1", "0"]   # a new process: loaded, not compiled
    files = os.listdir(tmp_path / "kernels")
    assert len([f for f in files if f.endswith(".py")]) == 1 and "__pycache__" in files


CONFIGS = {
    "mlp_dropout_sgd_momentum": (mlp_dropout, lambda p: mg.optim.SGD(p, lr=0.05, momentum=0.9)),
    "cnn_batchnorm_sgd": (cnn_batchnorm, lambda p: mg.optim.SGD(p, lr=0.02, momentum=0.9)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_fused_training_step_equals_eager_bitwise(name, backend):
    steps = 6
    build, make_opt = CONFIGS[name]
    m1, opt1, step1, x, y = make(build, make_opt)
    m2, opt2, step2, _, _ = make(build, make_opt)
    mg.manual_seed(5)
    l1 = [step1(x, y).item() for _ in range(steps)]
    mg.manual_seed(5)
    g = mg.graph.trace(step2, x, y)
    h, _ = optimize(g)
    h = fuse_elementwise(h, backend=backend, min_size=1, min_ops=2)
    # the forward and backward chains; the SGD update is one sgd_step op (no elementwise chain left there)
    assert h.count()["fused"] >= 2 and h.count()["sgd_step"] == 1
    assert [(e.prim, e.target) for e in h.effects] == [(e.prim, e.target) for e in g.effects]
    c = compile_graph(h)
    l2 = [g.result.item()] + [c(x, y).item() for _ in range(steps - 1)]
    assert l1 == l2
    for (k, a), (_, b) in zip(snapshot(m1, opt1), snapshot(m2, opt2)):
        assert same_bits(a, b), k


@pytest.mark.skipif(kernels.numba_or_none() is None, reason="numba is an optional extra")
def test_an_unwritable_cache_directory_falls_back_to_a_private_temporary_one(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("MINIGRAD_CACHE", str(blocker))   # <file>/kernels cannot be created
    g = mg.graph.trace(lambda a: (a * 5.0 - 2.0).relu(), mg.randn(33))
    h = fuse_elementwise(g, backend="numba", min_size=1)
    assert h.eqns[0].prim == "fused" and same_bits(h(mg.ones(33)).numpy(), g(mg.ones(33)).numpy())


def test_a_pair_is_not_worth_a_kernel_by_default():
    g = mg.graph.trace(lambda a: (a * 2.0 + 1.0).sum(), mg.randn(5000))   # a pair, then a reduction
    assert fuse_elementwise(g, backend="numpy").pass_details == "0 groups"
    assert fuse_elementwise(g, backend="numpy", min_ops=2).pass_details == "1 groups of 2 equations (numpy kernels)"


def test_the_pass_does_not_import_numba_when_there_is_nothing_to_fuse():
    code = ("import sys, minigrad as mg\n"
            "from minigrad.compiler.pipeline import FUSED, optimize\n"
            "g = mg.graph.trace(lambda a: a.sum() * 2.0, mg.randn(10))\n"
            "h, _ = optimize(g, FUSED)\n"
            "print('numba' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False"]
