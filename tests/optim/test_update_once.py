"""SGD's and Adam's update is written once (sgd_update, adam_update) and run three ways by
optim/_elementwise.py: numba's loop compiled from its source, the traced NumPy program, and the same
program with minigrad's ops. The three give the same bits, for every flag, float32 and float64, the
first step and a later one, with NaN, infinities and signed zeros in the data."""
import inspect
import itertools

import numpy as np
import pytest

import minigrad as mg
from minigrad import kernels
from minigrad.optim._elementwise import Update, sqrt, where
from minigrad.optim.adam import ADAM, _adam_scalars, adam_update
from minigrad.optim.sgd import SGD_UPDATE, _sgd_scalars

N = 301


def _data(rng, dtype, k):
    out = []
    for j in range(k):
        a = rng.standard_normal(N).astype(dtype)
        if j != 1:       # state and parameters: some zeros of both signs
            a[3], a[4] = 0.0, -0.0
        else:            # the gradient: a NaN, infinities, zeros
            a[7], a[8], a[9], a[10] = np.nan, np.inf, -np.inf, -0.0
        out.append(a)
    out[2:] = [np.abs(a) if j >= 3 else a for j, a in enumerate(out[2:], 2)]  # Adam's v, vmax >= 0
    return out


def _numba(upd, arrays, flags, scalars):
    upd.arrays_step(arrays, flags, scalars, upd.cast(scalars, arrays[0].dtype), {})  # C-contiguous: numba's loop
    return arrays


def _numpy(upd, arrays, flags, scalars):
    old = kernels.set_enabled(False)
    try:
        upd.arrays_step(arrays, flags, scalars, upd.cast(scalars, arrays[0].dtype), {})
    finally:
        kernels.set_enabled(old)
    return arrays


def _tensor(upd, arrays, flags, scalars):
    ts = [None if a is None else mg.tensor(a) for a in arrays]
    with mg.no_grad():
        upd.tensors_step(ts, flags, scalars)
    return [None if t is None else t.numpy() for t in ts]


OTHERS = {"tensor": _tensor, "numba": _numba}


def _same(other, upd, arrays, flags, scalars):
    with np.errstate(all="ignore"):  # the NaN and infinities in the data
        got = [run(upd, [None if a is None else a.copy() for a in arrays], flags, scalars) for run in (_numpy, other)]
    for i in (upd.arrays.index(w) for w in upd.writes):
        a, b = got[0][i], got[1][i]   # (an absent array stays None in NumPy's list)
        if a is not None:  # bit for bit, signed zeros included; a NaN's sign and payload are not compared
            nan = np.isnan(a)
            assert np.array_equal(nan, np.isnan(b)), (upd.arrays[i], flags, scalars)
            a, b = np.where(nan, np.nan, a), np.where(nan, np.nan, b)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (upd.arrays[i], flags, scalars)


def _other(name):
    if name == "numba" and not kernels.available():
        pytest.skip("numba is not installed (or MINIGRAD_NUMBA=0): its loop is not compared")
    return OTHERS[name]


SGD_FLAGS = [(mx, wd, m, first, nest, damp)
             for mx, wd, m, first, nest, damp in itertools.product((False, True), (0.0, 0.01, 1.0), (0.0, 0.9),
                                                                   (False, True), (False, True), (0.0, 0.25))
             if not (nest and (m == 0 or damp != 0)) and not (first and m == 0)]


@pytest.mark.parametrize("other", sorted(OTHERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_sgd_update_is_the_same_bits_with_numpy_tensors_and_numba(dtype, other):
    other = _other(other)
    rng = np.random.default_rng(0)
    for mx, wd, m, first, nest, damp in SGD_FLAGS:
        p, g, buf = _data(rng, dtype, 3)
        flags, scalars = _sgd_scalars(0.1, m, damp, wd, nest, mx, first)
        _same(other, SGD_UPDATE, [p, g, None if (first or m == 0) else buf], flags, scalars)


@pytest.mark.parametrize("other", sorted(OTHERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_adam_update_is_the_same_bits_with_numpy_tensors_and_numba(dtype, other):
    other = _other(other)
    rng = np.random.default_rng(1)
    for mx, wd, ams, dec, (b1, b2), step in itertools.product(
            (False, True), (0.0, 0.01, 1.0), (False, True), (False, True), ((0.9, 0.999), (0.3, 0.0)), (1.0, 7.0)):
        p, g, m, v, vmax = _data(rng, dtype, 5)
        flags, scalars = _adam_scalars(step, 0.01, b1, b2, wd, 1e-8, ams, mx, dec)
        _same(other, ADAM, [p, g, m, v, vmax if ams else None], flags, scalars)


def test_the_numpy_programs_write_in_place_with_few_scratch_rows():
    """No parameter-sized temporary beyond the optimizer's scratch rows: Adam needs one row (two with
    maximize and L2 weight decay: the changed gradient lives on), SGD's momentum step one."""
    flags, scalars = _adam_scalars(3.0, 0.01, 0.9, 0.999, 0.0, 1e-8, False, False, False)
    assert ADAM.program(flags, scalars, (True,) * 4 + (False,)).rows == 1
    flags, scalars = _adam_scalars(3.0, 0.01, 0.9, 0.999, 0.01, 1e-8, True, True, False)
    assert ADAM.program(flags, scalars, (True,) * 5).rows == 2
    flags, scalars = _sgd_scalars(0.1, 0.9, 0.0, 0.0, False, False, False)
    prog = SGD_UPDATE.program(flags, scalars, (True,) * 3)
    assert prog.rows == 1 and len(prog.code) == 4   # buf *= mu; buf += g (dampening 0: no * 1); buf * -lr; p +=


def test_the_kernel_is_compiled_from_the_update_functions_source():
    src = kernels.load("optim").source(ADAM) if kernels.available() else None
    if src is None:
        pytest.skip("numba is not installed")
    assert inspect.getsource(adam_update) in src and "def kernel(" in src


def test_an_update_uses_only_its_arguments_and_the_primitives():
    def uses_numpy(p, g, f, s):
        return np.sqrt(p) * s,
    with pytest.raises(TypeError, match="may use only its arguments"):
        Update(uses_numpy, ("p", "g"), ("f",), ("p",))

    def literal(p, g, f, s):
        return p * 2.0,
    upd = Update(literal, ("p", "g"), ("f",), ("p",))
    with pytest.raises(TypeError, match="constant must be a scalar argument"):
        upd.program((True,), (0.5,), (True, True))

    def branches(p, g, f, s):
        return (p * s if f else g),
    upd = Update(branches, ("p", "g"), ("f",), ("p",))
    with pytest.raises(TypeError, match="use where"):
        upd.tensors_step([mg.ones(2), mg.ones(2)], (mg.tensor(True),), (0.5,))

    def chooses(p, g, f, s):
        return where(f, sqrt(p) * s, g),
    upd = Update(chooses, ("p", "g"), ("f",), ("p",))
    p = mg.tensor([4.0, 9.0])
    upd.tensors_step([p, mg.tensor([1.0, 2.0])], (mg.tensor(True),), (0.5,))
    assert p.tolist() == [1.0, 1.5]
