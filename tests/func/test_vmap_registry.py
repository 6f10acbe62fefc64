"""vmap of every op in the registry (minigrad/testing/opinfo/ `op_db`) against a per-sample loop.

For each entry, one or two of its samples (the first and the one of highest rank; empty and kink
samples left out) are drawn with B different seeds (the registry's samples have the same
structure for every seed, with different values), the op is run on each, and the results are
stacked: that is what vmap must give. Checked:

  * in_dims=0 on every tensor argument;
  * the first tensor argument batched at its last dimension (a non-zero in_dim);
  * the first tensor argument batched, the others not (in_dims None: one copy shared by the batch);
  * out_dims=1 (one sample per op);
  * vmap(vmap(f)) over a (2, 3) batch (one sample per op).

Floating results equal the loop's to rtol 1e-10 (a batched kernel may sum in another order); integer
and bool results are equal. An op without a batching rule goes through the per-sample loop fallback
(its one-time UserWarning); it must give the same results (`fallbacks()` lists them).

Ops whose per-sample semantics vmap cannot give are listed in `UNSUPPORTED` with the reason, and
must raise a RuntimeError that says so. Random ops are checked separately: shapes, and that
randomness="same" gives one draw for the whole batch and "different" one per sample.
"""
import functools
import importlib

import numpy as np
import pytest

import minigrad as mg
from minigrad.func import vmap
from minigrad.testing import op_db
from minigrad.testing.opinfo import make_args, tensor_function

_vm = importlib.import_module("minigrad.func.vmap")  # the module (mg.func.vmap is the function)

B = 3            # the batch
NESTED = (2, 3)  # the outer and inner batch of the nested case


# -- the entries vmap cannot batch, one reason each ---------------------------------------------------------
# ("raises", reason): vmap raises a RuntimeError naming vmap (checked by test_unsupported_ops_raise);
# ("xfail", reason): gives a wrong result or an unclear error today (strict xfail: fixing it fails the test)
_DYNAMIC = "data-dependent output shape: the number of results differs per sample"
_BOOL = "returns a Python bool (one answer for the whole batch), not a tensor"
_RANDOM = ("a random op with a tensor input: vmap's default randomness='error' raises, as PyTorch's; "
           "randomness='same'/'different' are tested in tests/test_multinomial.py")
UNSUPPORTED = {
    "nonzero": ("raises", _DYNAMIC),
    "nonzero.as_tuple": ("raises", _DYNAMIC),
    "nonzero.method": ("raises", _DYNAMIC),
    "masked_select": ("raises", _DYNAMIC),
    "masked_select.broadcast": ("raises", _DYNAMIC),
    "masked_select.broadcast_input": ("raises", _DYNAMIC),
    "repeat_interleave.tensor": ("raises", _DYNAMIC + " (per-sample repeats)"),
    "repeat_interleave.counts": ("raises", _DYNAMIC + " (per-sample counts)"),
    "equal": ("raises", _BOOL),
    "allclose": ("raises", _BOOL),
    "allclose.method": ("raises", _BOOL),
    "is_complex": ("raises", _BOOL),
    "is_conj": ("raises", _BOOL),
    "multinomial.replacement_2d": ("raises", _RANDOM),
    "multinomial.1d": ("raises", _RANDOM),
    "multinomial.method": ("raises", _RANDOM),
}


# -- samples ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _samples(info, seed):
    return info.samples(seed)


def _mg_make(arr, requires_grad):
    return mg.tensor(np.array(arr))


def _rank(s):
    return sum(a.ndim for a in _flat_arrays(s.args))


def _flat_arrays(args):
    from minigrad.testing.opinfo import Const
    for a in args:
        if isinstance(a, Const):
            yield a.value
        elif isinstance(a, np.ndarray):
            yield a
        elif isinstance(a, list) and a and isinstance(a[0], (np.ndarray, Const)):
            yield from _flat_arrays(a)


def _usable(s):
    return not s.kink and all(a.size for a in _flat_arrays(s.args)) and any(True for _ in _flat_arrays(s.args))


def _picked(info):
    """Up to two sample indices: the first usable one and the usable one of highest rank."""
    ss = _samples(info, 0)
    ok = [k for k, s in enumerate(ss) if _usable(s)]
    if not ok:
        return []
    top = max(ok, key=lambda k: _rank(ss[k]))
    return sorted({ok[0], top})


def _one(info):
    """The sample index of the highest rank (for out_dims and the nested case)."""
    p = _picked(info)
    return p[-1:] if p else []


def _build(info, k, seed):
    """(fn, arrays): the op as a function of its tensor arguments, and those arguments' values."""
    s = _samples(info, seed)[k]
    args, kwargs, _ = make_args(s, _mg_make, False)
    fn, tens = tensor_function(info, args, kwargs)
    return fn, [t.numpy().copy() for t in tens]


def _fresh(arrays):
    return [mg.tensor(a.copy()) for a in arrays]   # fresh tensors per call: some ops write into their input


def _outputs(out):
    if isinstance(out, mg.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, mg.Tensor)]
    raise AssertionError(f"not a tensor result: {out!r}")


def _check(got, want, what):
    got, want = _outputs(got), [np.stack(w) for w in want]
    assert len(got) == len(want), f"{what}: {len(got)} outputs, the loop gives {len(want)}"
    for j, (g, w) in enumerate(zip(got, want)):
        assert not isinstance(g, _vm.BatchedTensor), f"{what}: output {j} is still batched"
        assert tuple(g.shape) == w.shape, f"{what}: output {j} shape {tuple(g.shape)}, the loop gives {w.shape}"
        assert g.dtype == w.dtype, f"{what}: output {j} dtype {g.dtype}, the loop gives {w.dtype}"
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-10, atol=1e-12, equal_nan=True,
                                       err_msg=f"{what}: output {j}")
        else:
            np.testing.assert_array_equal(g.numpy(), w, err_msg=f"{what}: output {j}")


def _loop(fn, per_sample):
    """Per output, the list of per-sample results (arrays) of fn over per_sample argument lists."""
    outs = [_outputs(fn(*_fresh(a))) for a in per_sample]
    return [[o[j].numpy() for o in outs] for j in range(len(outs[0]))]


# -- fallbacks are recorded ----------------------------------------------------------------------------
_FELL_BACK = {}


@pytest.fixture(autouse=True)
def _record_fallbacks(request, monkeypatch):
    orig = _vm._fallback

    def recording(cls, level, args):
        _FELL_BACK.setdefault(_vm._op_name(cls), set()).add(request.node.callspec.id.split("-")[0]
                                                           if hasattr(request.node, "callspec") else "")
        return orig(cls, level, args)
    monkeypatch.setattr(_vm, "_fallback", recording)


def fallbacks():
    """{op class name: registry entries} of the ops that went through the loop fallback in this run."""
    return dict(_FELL_BACK)


# -- cases -----------------------------------------------------------------------------------------
OPS = [o for o in op_db if o.full_name not in UNSUPPORTED]


def _per_sample(info, k, n):
    built = [_build(info, k, seed) for seed in range(n)]
    return built[0][0], [a for _, a in built]


def _in_dims_0(info, fn, per, want):
    stacked = [mg.tensor(np.stack(x)) for x in zip(*per)]
    _check(vmap(fn)(*stacked), want, f"{info} in_dims=0")


def _first_at_last_dim(info, fn, per, want):
    stacked = [np.stack(x) for x in zip(*per)]
    first = np.moveaxis(stacked[0], 0, -1)
    dims = (first.ndim - 1,) + (0,) * (len(stacked) - 1)
    _check(vmap(fn, in_dims=dims)(mg.tensor(first), *[mg.tensor(x) for x in stacked[1:]]), want,
           f"{info} in_dims={dims}")


def _first_argument_only(info, fn, per):
    per = [[p[0]] + per[0][1:] for p in per]   # the other arguments: sample 0's, shared
    want = _loop(fn, per)
    first = mg.tensor(np.stack([p[0] for p in per]))
    dims = (0,) + (None,) * (len(per[0]) - 1)
    _check(vmap(fn, in_dims=dims)(first, *_fresh(per[0][1:])), want, f"{info} in_dims={dims}")


def _out_dims_1(info, fn, per, want):
    """False when a per-sample output is 0-d (out_dims=1 is out of range for it)."""
    if not all(np.ndim(w[0]) >= 1 for w in want):
        return False
    stacked = [mg.tensor(np.stack(x)) for x in zip(*per)]
    got = _outputs(vmap(fn, out_dims=1)(*stacked))
    _check([mg.tensor(np.moveaxis(g.numpy(), 1, 0)) for g in got], want, f"{info} out_dims=1")
    return True


def _nested(info, k):
    n1, n2 = NESTED
    fn, per = _per_sample(info, k, n1 * n2)
    want = _loop(fn, per)
    want = [[np.stack(w[i * n2:(i + 1) * n2]) for i in range(n1)] for w in want]
    stacked = [mg.tensor(np.stack(x).reshape((n1, n2) + np.shape(x[0]))) for x in zip(*per)]
    _check(vmap(vmap(fn))(*stacked), want, f"{info} vmap(vmap(f))")


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("info", [o for o in OPS if _picked(o)], ids=str)
def test_vmap_matches_a_loop(info):
    """On the op's picked samples (the first usable one and the one of highest rank): vmap with
    in_dims=0, with the first argument batched at its last dim, with only the first argument
    batched (ops of 2+ tensors), and on the highest-rank sample out_dims=1 and vmap(vmap(f)), each
    against a Python loop over the batch. (Before 2026-12-06: five tests with one item per sample,
    each computing the loop again; the same checks, per op, the loop computed once.)"""
    one = _one(info)
    for k in _picked(info):
        fn, per = _per_sample(info, k, B)
        want = _loop(fn, per)
        _in_dims_0(info, fn, per, want)
        _first_at_last_dim(info, fn, per, want)
        if len(per[0]) > 1:
            _first_argument_only(info, fn, per)
        if k in one:
            _out_dims_1(info, fn, per, want)
            _nested(info, k)


# -- the entries vmap cannot batch ---------------------------------------------------------------------
def _unsupported_cases():
    out = []
    by_name = {o.full_name: o for o in op_db}
    for name, (how, why) in UNSUPPORTED.items():
        info = by_name[name]   # a stale name (entry renamed or removed) fails here
        marks = [pytest.mark.xfail(strict=True, reason=why)] if how == "xfail" else []
        out += [pytest.param(info, k, how, id=f"{name}-{k}", marks=marks) for k in _picked(info)]
    return out


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("info,k,how", _unsupported_cases())
def test_unsupported_ops_raise(info, k, how):
    fn, per = _per_sample(info, k, B)
    stacked = [mg.tensor(np.stack(x)) for x in zip(*per)]
    if how == "xfail":   # what it should do: match the loop
        _check(vmap(fn)(*stacked), _loop(fn, per), f"{info} in_dims=0")
        return
    # (ValueError: vmap's own refusal of a Python value as the output, as torch.vmap's)
    with pytest.raises((RuntimeError, ValueError), match="vmap"):
        vmap(fn)(*stacked)


# -- random ops: randomness="same" / "different" ---------------------------------------------------------
F = mg.nn.functional
RANDOM = {   # the registry's dropout entries are p=0, p=1 and eval (no draw): dropout drawing is here
    "rand_like": lambda x: mg.rand_like(x),
    "randn_like": lambda x: mg.randn_like(x),
    "randint_like": lambda x: mg.randint_like(x, 0, 1000),
    "dropout": lambda x: F.dropout(x, 0.5),
    "rand": lambda x: mg.rand(4, 3, dtype=mg.float64) + x,
    "randn": lambda x: x * mg.randn(4, 3, dtype=mg.float64),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_ops_same_and_different(name):
    f = RANDOM[name]
    x = mg.ones(B, 4, 3, dtype=mg.float64)
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(f)(x)
    same = vmap(f, randomness="same")(x).numpy()
    diff = vmap(f, randomness="different")(x).numpy()
    assert same.shape == diff.shape == (B, 4, 3)
    for i in range(1, B):
        np.testing.assert_array_equal(same[i], same[0])
        assert not np.array_equal(diff[i], diff[0]), f"{name}: samples 0 and {i} drew the same"
    nested = vmap(vmap(f, randomness="different"), randomness="same")(mg.ones(2, B, 4, 3, dtype=mg.float64))
    nested = nested.numpy()
    np.testing.assert_array_equal(nested[1], nested[0])   # the outer level shares its draw
    assert not np.array_equal(nested[0, 1], nested[0, 0])
