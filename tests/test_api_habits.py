"""A PyTorch user's habits work: torch's keyword names, axis=/keepdims= aliases, a Tensor method for
every function that has one in PyTorch, mg.Size, and tensors printed in PyTorch's format.

The keyword sweep reads PyTorch's own signatures (inspect.signature for Python functions, the
signature lines of the docstring for builtins, which have none) and calls every public op that the
op registry samples with its arguments passed *by name*: where PyTorch accepts the call, minigrad
must accept it too and give the same values. Run this file as a script for the figures:
`python tests/test_api_habits.py`.
"""
import inspect
import pickle
import re

import numpy as np
import pytest

import minigrad as mg
from minigrad.testing.opinfo import make_args, op_db

# -- PyTorch's signatures --------------------------------------------------------------------------


def _split_params(text):
    """'input, dim: Optional[List[int]], *, out=None' -> top-level comma-separated pieces."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _names(params):
    """Keyword-passable parameter names in order (stops at *args; drops '*', '/', out, self)."""
    names = []
    for p in params:
        if p in ("*", "/"):
            continue
        if p.startswith("*"):
            break
        name = re.split(r"[:=\s]", p, maxsplit=1)[0]
        if name in ("out", "self") or not name.isidentifier():
            continue
        names.append(name)
    return names


# where torch's docstring gives no signature line, or a name the parser can't trust (Tensor.div's
# says `value`; the keyword PyTorch accepts is `other`): candidates, kept only where PyTorch accepts them
HAND_OVERLOADS = {
    "relu": [["input"]], "lerp": [["input", "end", "weight"]], "masked_fill": [["input", "mask", "value"]],
    "log_softmax": [["input", "dim", "dtype"]], "logsumexp": [["input", "dim", "keepdim"]],
    "index_fill": [["input", "dim", "index", "value"]], "broadcast_to": [["input", "size"]],
    "unique": [["input", "sorted", "return_inverse", "return_counts", "dim"]], "where": [["input", "condition", "other"]],
    "narrow": [["input", "dim", "start", "length"]], "permute": [["input", "dims"]], "reshape": [["input", "shape"]],
    "index_copy": [["input", "dim", "index", "source"]],
    **{n: [["input", "other"]] for n in ("div", "mul", "matmul", "fmod", "remainder", "floor_divide", "logical_and",
                                         "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor")},
    "bmm": [["input", "mat2"]], "dot": [["input", "tensor"]],
}


def torch_overloads(torch, name, method=False):
    """The parameter-name lists of torch.<name> (or torch.Tensor.<name>), one per overload."""
    found = _parsed_overloads(torch, name, method)
    for names in HAND_OVERLOADS.get(name, ()):
        names = names[1:] if method and name != "where" else names
        if method and name == "where":
            names = ["condition", "other"]
        if names not in found:
            found.append(names)
    return found


def _parsed_overloads(torch, name, method):
    fn = getattr(torch.Tensor if method else torch, name)
    try:
        sig = inspect.signature(fn)
        return [_names([str(p) if p.kind != p.VAR_POSITIONAL else "*" + p.name
                        for p in sig.parameters.values()])]
    except (TypeError, ValueError):
        pass
    doc = fn.__doc__ or ""
    found = []
    for m in re.finditer(rf"(?:^|\s){re.escape(name)}\((.*?)\)\s*->", doc, flags=re.M):
        names = _names(_split_params(m.group(1)))
        if names not in found:
            found.append(names)
    return found


# -- calling both with keywords --------------------------------------------------------------------


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in _flat(o)]
    if hasattr(out, "detach"):
        return [np.asarray(out.detach().numpy())]
    return [np.asarray(out)]


def _same(a, b):
    fa, fb = _flat(a), _flat(b)
    return len(fa) == len(fb) and all(
        x.shape == y.shape and np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=1e-6,
                                           atol=1e-9, equal_nan=True) for x, y in zip(fa, fb))


def _entries():
    """(name, OpInfo) for registry entries whose op is the public function mg.<name> itself."""
    seen = {}
    for info in op_db:
        if info.kind == "op" and "." not in info.name and getattr(mg, info.name, None) is info.op:
            seen.setdefault(info.name, info)
    return sorted(seen.items())


def _hand_samples():
    """Samples for the public ops whose registry entries wrap them (a lambda fixing dims, ...)."""
    from minigrad.testing.opinfo import SampleInput
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((2, 3)) for _ in range(3))
    v, w = rng.standard_normal(3), rng.standard_normal(3)
    m, n, bat = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((2, 3, 4))
    idx = np.array([[0, 1, 0], [1, 0, 1]])
    S = lambda *args, **kw: SampleInput(args, kw)  # noqa: E731
    table = {
        "addcdiv": [S(a, b, c + 3.0)], "addcmul": [S(a, b, c)], "amax": [S(a, 1, True)], "arccos": [S(a / 3)],
        "arccosh": [S(np.abs(a) + 1)], "arcsin": [S(a / 3)], "arcsinh": [S(a)], "arctan": [S(a)], "arctan2": [S(a, b)],
        "arctanh": [S(a / 3)], "argsort": [S(a, 1, True)], "bmm": [S(bat, rng.standard_normal((2, 4, 2)))],
        "broadcast_to": [S(v, (2, 3))], "cat": [S([a, b], 1)], "chunk": [S(a, 3, 1)], "clip": [S(a, -0.5, 0.5)],
        "clone": [S(a)], "concat": [S([a, b], 1)], "cross": [S(a, b, 1)], "dot": [S(v, w)], "fix": [S(a * 3)],
        "flatten": [S(bat, 1, 2)], "flip": [S(a, (0, 1))], "gather": [S(a, 1, idx)],
        "index_add": [S(a, 1, np.array([0, 2]), b[:, :2])], "index_copy": [S(a, 1, np.array([0, 2]), b[:, :2])],
        "index_fill": [S(a, 1, np.array([0, 2]), 1.5)], "index_select": [S(a, 1, np.array([2, 0]))],
        "kthvalue": [S(a, 2, 1, True)], "logsumexp": [S(a, 1, True)], "masked_fill": [S(a, a > 0, 0.5)],
        "masked_select": [S(a, a > 0)], "mean": [S(a, 1, True)], "mm": [S(m.T, n.T[:, :3].T)], "mode": [S(idx * 1.0, 1, True)],
        "narrow": [S(a, 1, 1, 2)], "norm": [S(a, 2, 1, True)], "outer": [S(v, w)], "permute": [S(bat, (2, 0, 1))],
        "prod": [S(a, 1, True)], "repeat_interleave": [S(a, 2, 1)], "reshape": [S(a, (3, 2))], "roll": [S(a, 1, 1)],
        "scatter": [S(a, 1, np.array([[0, 2, 1], [2, 1, 0]]), b)], "scatter_add": [S(a, 1, idx, b)], "scatter_reduce": [S(a, 1, idx, b, "amax")],
        "sort": [S(a, 1, True)], "split": [S(a, 2, 1)], "squeeze": [S(a[:, None], 1)], "stack": [S([a, b], 1)],
        "swapaxes": [S(bat, 0, 2)], "t": [S(a)], "take_along_dim": [S(a, idx, 1)], "topk": [S(a, 2, 1, False)],
        "transpose": [S(bat, 0, 2)], "tril": [S(m, 1)], "triu": [S(m, -1)], "unbind": [S(a, 1)],
        "unflatten": [S(bat, 2, (2, 2))], "unsqueeze": [S(a, 1)], "cumsum": [S(a, 1)], "softmax": [S(a, 1)],
        "log_softmax": [S(a, 1)], "max": [S(a, 1, True), S(a, b)], "min": [S(a, 1, True), S(a, b)], "sum": [S(a, 1, True)],
        "std": [S(a, 1)], "var": [S(a, 1)], "argmax": [S(a, 1, True)], "cumprod": [S(a, 1)],
        "matmul": [S(m.T, a.T)], "median": [S(a, 1, True)], "nanmedian": [S(a, 1, True)], "all": [S(a > 0, 1, True)],
        "any": [S(a > 0, 1, True)], "amin": [S(a, 1, True)], "argmin": [S(a, 1, True)], "div": [S(a, b + 3.0, "floor")],
        "add": [S(a, b, alpha=2.0)], "sub": [S(a, b, alpha=2.0)], "cummax": [S(a, 1)], "logcumsumexp": [S(a, 1)],
        "var_mean": [S(a, 1)], "std_mean": [S(a, 1)], "diagonal": [S(bat, 1, 1, 2)], "round": [S(a * 10, 1)],
    }

    class _Hand:
        def __init__(self, samples):
            self._samples = samples

        def samples(self):
            return self._samples
    return {k: _Hand(v) for k, v in table.items()}


def _cases():
    """{name: object with .samples()}: the registry's entries plus the hand table."""
    cases = dict(_entries())
    hand = _hand_samples()
    for name, h in hand.items():
        if name in cases:  # both: the hand samples (dims, keywords) first
            entry = cases[name]
            cases[name] = type(h)(h.samples() + entry.samples()[:3])
        elif callable(getattr(mg, name, None)):
            cases[name] = h
    return sorted(cases.items())


ENTRIES = _cases()
# names whose torch keyword calls minigrad deliberately does not take: {name: why} (none now; mg.trace
# is torch.trace, the graph tracer is mg.graph.trace)
KNOWN = {}


def keyword_calls(torch, name, info, method=False, max_samples=4, rename=None):
    """Yield (description, mg_result_or_exception, torch_result) for each sample/overload that
    PyTorch accepts with every argument passed by keyword (renamed by `rename`, e.g. dim -> axis;
    only overloads with a name to rename then)."""
    overloads = torch_overloads(torch, name, method)
    if rename:
        overloads = [[rename.get(n, n) for n in names] for names in overloads if set(names) & set(rename)]
    for s in info.samples()[:max_samples]:
        if not any(isinstance(a, np.ndarray) or (isinstance(a, list) and a) for a in s.args):
            continue
        mg_args, kw, _ = make_args(s, lambda a, rg: mg.tensor(a), False)
        t_args, _, _ = make_args(s, lambda a, rg: torch.from_numpy(np.array(a)), False)
        if method:
            if not isinstance(mg_args[0], mg.Tensor):
                return
            mg_self, t_self, mg_args, t_args = mg_args[0], t_args[0], mg_args[1:], t_args[1:]
        for names in overloads:
            if len(names) < len(mg_args):
                continue
            tkw = {**dict(zip(names, t_args)), **kw}
            try:
                want = getattr(t_self, name)(**tkw) if method else getattr(torch, name)(**tkw)
            except Exception:  # noqa: BLE001 - not a call PyTorch accepts: nothing to match
                continue
            mkw = {**dict(zip(names, mg_args)), **kw}
            call = f"{'Tensor.' if method else 'mg.'}{name}({', '.join(mkw)})"
            try:
                got = getattr(mg_self, name)(**mkw) if method else getattr(mg, name)(**mkw)
            except Exception as e:  # noqa: BLE001 - reported by the caller
                got = e
            yield call, got, want
            break


def sweep(torch, method=False):
    """{name: None (accepts torch's keywords, same values) | message | 'untested'}."""
    result = {}
    for name, info in ENTRIES:
        if not hasattr(torch.Tensor if method else torch, name) or (not method and name in KNOWN):
            continue
        if method and not hasattr(mg.Tensor, name):
            result[name] = f"mg.Tensor has no method {name}"
            continue
        status = "untested"
        for call, got, want in keyword_calls(torch, name, info, method):
            if isinstance(got, Exception):
                status = f"{call}: {type(got).__name__}: {got}"
                break
            if not _same(got, want):
                status = f"{call}: values differ from PyTorch's"
                break
            status = None
        result[name] = status
    return result


def tensor_method_gap(torch):
    """torch.Tensor methods (and in-place forms) named after a function minigrad has, missing on mg.Tensor."""
    public = set(mg.ops.__all__) | {n for n in dir(mg) if not n.startswith("_")}
    wanted = []
    for n in dir(torch.Tensor):
        if n.startswith("_") or not callable(getattr(torch.Tensor, n, None)):
            continue
        base = n[:-1] if n.endswith("_") else n
        if base in public and callable(getattr(mg, base, None)):
            wanted.append(n)
    return sorted(wanted), sorted(n for n in wanted if not hasattr(mg.Tensor, n))


# -- the sweep as tests ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n, _ in ENTRIES])
def test_function_accepts_torch_keyword_names(name):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the keyword names")
    info = dict(ENTRIES)[name]
    if not hasattr(torch, name):
        pytest.skip(f"torch has no {name}")
    if name in KNOWN:
        pytest.skip(KNOWN[name])
    ran = 0
    for call, got, want in keyword_calls(torch, name, info):
        assert not isinstance(got, Exception), f"{call} (as PyTorch accepts it) raised {got!r}"
        assert _same(got, want), f"{call}: values differ from PyTorch's"
        ran += 1
    if not ran:
        pytest.skip(f"PyTorch accepts none of {name}'s samples with keyword arguments")


NUMPY_NAMES = {"dim": "axis", "keepdim": "keepdims"}


@pytest.mark.parametrize("name", [n for n, _ in ENTRIES])
@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
def test_axis_and_keepdims_aliases(name, method):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for where axis= is accepted")
    info = dict(ENTRIES)[name]
    if not hasattr(torch.Tensor if method else torch, name) or (not method and name in KNOWN):
        pytest.skip(f"torch has no {name}")
    ran = 0
    for call, got, want in keyword_calls(torch, name, info, method, rename=NUMPY_NAMES):
        assert not isinstance(got, Exception), f"{call} (as PyTorch accepts it) raised {got!r}"
        assert _same(got, want), f"{call}: values differ from PyTorch's"
        ran += 1
    if not ran:
        pytest.skip(f"PyTorch takes no axis=/keepdims= for {name}")


def test_axis_alias_conflicts_and_required_dim():
    x = mg.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match=r"sum\(\): got both dim=0 and its alias axis=1"):
        mg.sum(x, 0, axis=1)
    with pytest.raises(TypeError, match="cumsum.*missing required argument 'dim'"):
        mg.cumsum(x)
    assert mg.cumsum(x, axis=1).tolist() == [[0.0, 1.0, 3.0], [3.0, 7.0, 12.0]]
    assert x.mean(axis=0, keepdims=True).shape == (1, 3)


@pytest.mark.parametrize("name", [n for n, _ in ENTRIES])
def test_method_accepts_torch_keyword_names(name):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the keyword names")
    info = dict(ENTRIES)[name]
    if not hasattr(torch.Tensor, name):
        pytest.skip(f"torch.Tensor has no method {name}")
    assert hasattr(mg.Tensor, name), f"mg.Tensor has no method {name} (torch.Tensor.{name} exists)"
    ran = 0
    for call, got, want in keyword_calls(torch, name, info, method=True):
        assert not isinstance(got, Exception), f"{call} (as PyTorch accepts it) raised {got!r}"
        assert _same(got, want), f"{call}: values differ from PyTorch's"
        ran += 1
    if not ran:
        pytest.skip(f"PyTorch accepts none of Tensor.{name}'s samples with keyword arguments")


def test_every_torch_method_of_an_implemented_function_exists():
    torch = pytest.importorskip("torch", reason="dir(torch.Tensor) is the list of methods")
    wanted, missing = tensor_method_gap(torch)
    assert len(wanted) > 200
    assert not missing, f"{len(missing)} of {len(wanted)} torch.Tensor methods missing on mg.Tensor: {missing}"


if __name__ == "__main__":
    import torch

    for method in (False, True):
        acc, tot = 0, 0
        for name, info in ENTRIES:
            if not hasattr(torch.Tensor if method else torch, name) or name in KNOWN:
                continue
            if method and not hasattr(mg.Tensor, name):
                continue
            calls = list(keyword_calls(torch, name, info, method, rename=NUMPY_NAMES))
            if calls:
                tot += 1
                acc += all(not isinstance(g, Exception) and _same(g, w) for _, g, w in calls)
                for c, g, w in calls:
                    if isinstance(g, Exception) or not _same(g, w):
                        print("   axis/keepdims:", c, repr(g)[:120])
        print(f"axis=/keepdims= ({'methods' if method else 'functions'}): {acc} of {tot} that PyTorch accepts")

    fs = sweep(torch)
    ok = sorted(n for n, v in fs.items() if v is None)
    bad = {n: v for n, v in fs.items() if v not in (None, "untested")}
    print(f"functions: {len(ok)} of {len(ok) + len(bad)} accept torch's keyword names "
          f"({sum(v == 'untested' for v in fs.values())} untested: PyTorch takes no sample by keyword)")
    for n, v in sorted(bad.items()):
        print("  ", v)
    ms = sweep(torch, method=True)
    ok = sorted(n for n, v in ms.items() if v is None)
    bad = {n: v for n, v in ms.items() if v not in (None, "untested")}
    print(f"methods: {len(ok)} of {len(ok) + len(bad)} accept torch's keyword names")
    for n, v in sorted(bad.items()):
        print("  ", v)
    wanted, missing = tensor_method_gap(torch)
    print(f"torch.Tensor methods for functions minigrad has: {len(wanted) - len(missing)} of {len(wanted)} "
          f"on mg.Tensor; missing: {missing}")


# -- mg.Size ---------------------------------------------------------------------------------------


def test_size_is_a_tuple_that_prints_like_torch_size():
    x = mg.zeros(2, 3)
    s = x.shape
    assert type(s) is mg.Size and isinstance(s, tuple)
    assert x.size() == s == (2, 3) and hash(s) == hash((2, 3)) and x.size(1) == 3 and type(x.size(1)) is int
    assert repr(s) == str(s) == "minigrad.Size([2, 3])"
    assert repr(mg.tensor(1.0).shape) == "minigrad.Size([])" and mg.tensor(1.0).shape.numel() == 1
    assert s.numel() == 6 and mg.zeros(0, 4).shape.numel() == 0
    for derived, want in ((s[1:], (3,)), (s + (4,), (2, 3, 4)), ((1,) + s, (1, 2, 3)), (s * 2, (2, 3, 2, 3))):
        assert type(derived) is mg.Size and derived == want
    assert type(s[0]) is int and s[-1] == 3
    rows, cols = s
    assert (rows, cols) == (2, 3)
    assert f"{s}" == "(2, 3)"  # error messages format shapes as tuples (a deliberate difference)
    assert mg.Size([2, mg.tensor(3)]) == (2, 3)
    with pytest.raises(TypeError, match="item 1 is 'float'"):
        mg.Size([2, 2.5])


def test_size_pickles_and_serialises(tmp_path):
    s = mg.zeros(2, 3).shape
    back = pickle.loads(pickle.dumps(s))
    assert type(back) is mg.Size and back == (2, 3)
    mg.save({"shape": s, "w": mg.ones(2)}, tmp_path / "a.mg")
    loaded = mg.load(tmp_path / "a.mg")
    assert loaded["shape"] == (2, 3)  # stored as a tuple of ints (mg.save's format has no Size tag)


def test_size_in_reshape_and_the_graph_ir(tmp_path):
    x = mg.arange(6.0).reshape(2, 3)
    y = mg.zeros(3, 2)
    assert x.reshape(y.shape).shape == (3, 2) and x.view(y.size()).shape == (3, 2)
    g = mg.graph.trace(lambda a, b: a.reshape(b.shape) * 2, x, y)
    out = g(x, y)
    assert out.shape == (3, 2) and out.tolist() == (x.reshape(3, 2) * 2).tolist()
    g.save(tmp_path / "g.mgg")
    g2 = mg.load_graph(tmp_path / "g.mgg")
    assert g2(x, y).tolist() == out.tolist()


# -- printing --------------------------------------------------------------------------------------


def _print_cases():
    rng = np.random.default_rng(0)
    cases = []
    for scale in (1e-6, 1e-3, 1e-1, 1.0, 10.0, 1e3, 1e5, 1e9):
        cases += [rng.standard_normal((3, 4)) * scale, rng.standard_normal(5) * scale]
    cases += [np.array([1.0, 2.0, 3.0]), np.array([1e10, 1.0]), np.array([0.0, 0.0]), np.array([-0.0, 1.0]),
              np.array([np.nan, np.inf, -np.inf, 1.5]), np.array([np.nan, 1.0, 2.0]), np.array([np.inf]),
              np.array(3.5), np.array(1e-8), np.array(7), np.array(True), np.arange(12).reshape(3, 4),
              np.arange(2000), rng.standard_normal((50, 50)), rng.standard_normal((2, 3, 4, 5)),
              rng.standard_normal((40, 30, 2)), np.array([True, False]), np.zeros((0,)), np.zeros((0, 3)),
              np.zeros((2, 0), dtype=np.int64), np.zeros((0,), dtype=np.int32), np.array([1, 2], dtype=np.int32),
              np.array([1.5, 2.0], dtype=np.float16), rng.standard_normal(30), rng.standard_normal((3, 30)) * 1000,
              np.arange(-5, 100) * 12345, np.array([1e-5, 1.0]), np.array([123456789.0, 1.0]),
              np.array([0.1, 0.2, 0.3]), np.array([-1, 2, 100], dtype=np.int8), np.array([255], dtype=np.uint8)]
    out = []
    for a in cases:
        kinds = ("float32", "float64") if a.dtype.kind == "f" and a.dtype != np.float16 else (a.dtype,)
        out += [a.astype(k) for k in kinds]
    return out


def _same_layout(r):
    # mg's dtype names are longer ("minigrad.float64"), which may move a suffix to its own line
    return re.sub(r",\n *(dtype|size|grad_fn|requires_grad)=", r", \1=", r.replace("torch.", "minigrad."))


OPTIONS = [{}, dict(precision=2), dict(threshold=5), dict(edgeitems=1, threshold=5), dict(linewidth=40),
           dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"), dict(profile="full"),
           dict(edgeitems=0, threshold=3)]


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_repr_matches_torch(opts):
    torch = pytest.importorskip("torch", reason="PyTorch's repr is the reference")
    try:
        mg.set_printoptions(**opts)
        torch.set_printoptions(**opts)
        bad = []
        for a in _print_cases():
            ours, theirs = repr(mg.tensor(a)), repr(torch.from_numpy(a.copy()))
            if _same_layout(ours) != _same_layout(theirs):
                bad.append(f"{ours}\n  torch:\n{theirs}")
        assert not bad, f"{len(bad)} reprs differ:\n" + "\n\n".join(bad[:3])
    finally:
        mg.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_repr_autograd_suffixes_match_torch():
    torch = pytest.importorskip("torch", reason="PyTorch's repr is the reference")
    rng = np.random.default_rng(1)
    for a in (np.array([1.0, 2.0]), rng.standard_normal((4, 20)), np.array(2.5)):
        x, tx = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        for ours, theirs in ((x, tx), (x * 2, tx * 2), (x.sum(), tx.sum()), (x.exp(), tx.exp())):
            assert _same_layout(repr(ours)) == _same_layout(repr(theirs))


def test_repr_known_strings():
    # without torch: a few reprs written out (PyTorch's, with minigrad's dtype names)
    assert repr(mg.tensor([0.8577, 2.8813, -0.6253, -0.282])) == "tensor([ 0.8577,  2.8813, -0.6253, -0.2820])"
    assert repr(mg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(mg.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(mg.tensor([1.0, 2.0], dtype=mg.float64)) == "tensor([1., 2.], dtype=minigrad.float64)"
    assert repr(mg.tensor([[1, 2], [3, 4]])) == "tensor([[1, 2],\n        [3, 4]])"
    assert repr(mg.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(mg.tensor([], dtype=mg.int64)) == "tensor([], dtype=minigrad.int64)"
    assert repr(mg.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr(mg.tensor(float("nan"))) == "tensor(nan)"


def test_printoptions_roundtrip_and_profiles():
    before = mg.get_printoptions()
    assert before == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
    try:
        mg.set_printoptions(precision=2)
        assert repr(mg.tensor([1.12345])) == "tensor([1.12])"
        mg.set_printoptions(threshold=5)
        assert repr(mg.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
        mg.set_printoptions(profile="short")
        assert mg.get_printoptions()["edgeitems"] == 2 and mg.get_printoptions()["precision"] == 2
        mg.set_printoptions(sci_mode=True)
        assert repr(mg.tensor([1.5])) == "tensor([1.50e+00])"
        with pytest.raises(ValueError, match="profile must be one of"):
            mg.set_printoptions(profile="long")
    finally:
        mg.set_printoptions(**before)
    assert mg.get_printoptions() == before
    assert repr(mg.tensor([1.12345])) == "tensor([1.1235])"


# -- Tensor.type, Tensor.view(dtype), Tensor.new_* --------------------------------------------------


def test_tensor_type():
    x = mg.tensor([1.5, -2.0])
    assert x.type() == "minigrad.FloatTensor"
    assert mg.tensor([1]).type() == "minigrad.LongTensor" and mg.tensor([True]).type() == "minigrad.BoolTensor"
    assert x.type(mg.float64).dtype == mg.float64
    assert x.type("minigrad.DoubleTensor").dtype == mg.float64 and x.type("torch.LongTensor").tolist() == [1, -2]
    assert x.type(mg.float32) is x
    with pytest.raises(ValueError, match="invalid type 'torch.cuda.FloatTensor'"):
        x.type("torch.cuda.FloatTensor")
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    w.type(mg.float64).sum().backward()
    assert w.grad.tolist() == [1.0, 1.0]


def test_view_dtype_reinterprets_bytes_like_torch():
    torch = pytest.importorskip("torch", reason="PyTorch's view(dtype) is the reference")
    cases = [(np.arange(6, dtype=np.int64).reshape(2, 3), ("int32", "float64", "uint8", "int16")),
             (np.array([1.0, -2.5, 3.25, 0.0], dtype=np.float32), ("int32", "int16", "uint8", "float64")),
             (np.arange(4, dtype=np.int8), ("int16", "int32", "uint8", "bool")),
             (np.array(1.0, dtype=np.float32), ("int32",))]
    for a, dts in cases:
        for dt in dts:
            ours = mg.tensor(a).view(getattr(mg, dt) if dt != "bool" else mg.bool)
            theirs = torch.from_numpy(a.copy()).view(getattr(torch, dt))
            assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == dt
            assert np.array_equal(ours.numpy(), theirs.numpy())
    errors = [(lambda m: m.arange(6).reshape(2, 3).t(), "int32", "stride"),
              (lambda m: m.tensor(1.0), "float16", "dim"),
              (lambda m: m.arange(3).to(m.int8), "int16", "divisible")]
    for make, dt, word in errors:
        with pytest.raises(RuntimeError, match=word):
            make(torch).view(getattr(torch, dt))
        with pytest.raises(RuntimeError, match=word):
            make(mg).view(getattr(mg, dt))


def test_view_dtype_shares_memory_and_is_cut_from_the_graph():
    x = mg.arange(6).reshape(2, 3)
    v = x.view(mg.int32)
    v[0, 0] = 7
    assert x[0, 0].item() == 7 and x._version == v._version > 0
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    assert not w.view(mg.int32).requires_grad and w.view(dtype=mg.float32).grad_fn is None
    assert x.view(3, 2).shape == (3, 2) and x.view(-1).shape == (6,)


def test_new_tensor_family():
    x = mg.tensor([1, 2], dtype=mg.int32)
    assert x.new_zeros(2, 3).shape == (2, 3) and x.new_zeros((2, 3)).dtype == mg.int32
    assert x.new_ones(2).tolist() == [1, 1] and x.new_full((2,), 7).tolist() == [7, 7]
    assert x.new_empty(4).shape == (4,) and x.new_tensor([3.7]).dtype == mg.int32
    f = mg.zeros(1).new_zeros(2, dtype=mg.float64, requires_grad=True)
    assert f.dtype == mg.float64 and f.requires_grad and f.is_leaf
    with pytest.raises(RuntimeError):
        x.new_zeros(2, device="cuda")


def test_methods_take_torch_arguments():
    x = mg.tensor([[5.0, -3.0], [2.0, 7.0]])
    assert x.div(2.0, rounding_mode="floor").tolist() == [[2.0, -2.0], [1.0, 3.0]]
    assert x.fmod(3.0).tolist() == [[2.0, -0.0], [2.0, 1.0]] and x.remainder(3.0).tolist() == [[2.0, 0.0], [2.0, 1.0]]
    assert mg.add(x, x, alpha=2).tolist() == (x * 3).tolist() and x.sub(x, alpha=0.5).tolist() == (x * 0.5).tolist()
    assert mg.matmul(input=x, other=x).tolist() == (x @ x).tolist()
    assert x.flip(0, 1).tolist() == [[7.0, 2.0], [-3.0, 5.0]] and x.permute(dims=(1, 0)).tolist() == x.T.tolist()
    assert mg.sum(x, dim=1, keepdim=True, dtype=mg.float64).dtype == mg.float64
    y = x.clone()
    y.exp_()
    assert np.allclose(y.numpy(), np.exp(x.numpy()))
    y.tril_()
    assert y[0, 1].item() == 0.0
    assert x.equal(x.clone()) and not x.equal(x + 1)


def test_inplace_shape_methods_as_torch():
    torch = pytest.importorskip("torch", reason="PyTorch is the reference")
    a = np.arange(6.0).reshape(2, 3)
    for name, args in (("unsqueeze_", (0,)), ("t_", ()), ("transpose_", (0, 1)), ("swapaxes_", (1, 0)),
                       ("squeeze_", ())):
        x, tx = mg.tensor(a[:, None] if name == "squeeze_" else a), torch.tensor(a[:, None] if name == "squeeze_" else a)
        assert getattr(x, name)(*args) is x
        getattr(tx, name)(*args)
        assert x.shape == tuple(tx.shape) and x.tolist() == tx.tolist()
    w, tw = mg.tensor([1.0, 2.0, 3.0], requires_grad=True), torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.unsqueeze_(0)
    y, ty = w * 2, tw * 2
    y.unsqueeze_(0)
    ty.unsqueeze_(0)
    assert y.grad_fn.name() == "UnsqueezeBackward0" and y.shape == (1, 3)
    (y * mg.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    (ty * torch.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert w.grad.tolist() == tw.grad.tolist()
    s = (w * 2)
    saved = s.sin()
    s.t_()
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        saved.sum().backward()
    base = mg.zeros(2, 3)
    v = base[0]
    v.unsqueeze_(0)
    v[0, 1] = 5.0  # still a view of base's memory
    assert base[0, 1].item() == 5.0
