"""Graph files that cannot run code, read memory or lie (issue 31 items 1, 3, 4).

Each test builds its malicious file itself from a real saved graph: text fields that would escape
a comment of generated code, geometry that would make a kernel read past its input, semantic
tampering (undefined, redefined or mistyped variables, wrong arities, unknown names), flipped bytes,
and version-1 files. Every one must raise GraphFormatError at load (or, for text, be inert), never
run code, never load something that differs from what was saved."""
import random

import numpy as np
import pytest

import minigrad as mg
from helpers import rewrite_graph_file
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.compiler.codegen import compile_graph
from minigrad.graph import GraphFormatError
from minigrad.graph.ir import Eqn, Graph, Var
from minigrad.ops.elementwise import Neg


def _mlp(tmp_path):
    mg.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    g = mg.graph.trace(lambda x: m(x) * mg.full((3,), 2.0) + 1.0, mg.randn(4, 6))
    path = tmp_path / "g.mgg"
    g.save(path)
    return m, g, path


# ---- item 1: nothing from a file becomes code -----------------------------------------------------

def test_text_fields_of_a_file_never_become_code(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"x\n    open({str(marker)!r}, 'w').write('1')  #"  # runs inside the generated function
    m, g, path = _mlp(tmp_path)

    def edit(man):
        for e in man["eqns"]:
            e["source"] = payload                       # the line comment of generated code
        man["state"][0][1] = "w\u2028" + payload        # a state name: the comment after its input
    bad = rewrite_graph_file(path, tmp_path / "bad.mgg", edit)
    h = mg.load_graph(bad)
    compiled = mg.jit(h)                                # the documented way to compile a loaded graph
    state = {hb.name: gb.obj for (_, hb), (_, gb) in zip(h.state, g.state)}
    x = mg.randn(4, 6)
    out = compiled(x, state=state)
    assert np.array_equal(out.numpy(), g(x).numpy())
    assert not marker.exists()
    code_lines = [ln.split("#")[0] for ln in compiled.code.splitlines()]
    assert not any("open(" in ln for ln in code_lines)
    assert all(ln.isascii() for ln in compiled.code.splitlines())


@pytest.mark.parametrize("name", ["a=__import__('os')", "a\nb", "é", "", "a" * 65])
def test_a_variable_name_that_is_not_an_identifier_is_refused(tmp_path, name):
    _, _, path = _mlp(tmp_path)

    def edit(man):
        old = man["invars"][0]
        man["vars"][name] = man["vars"].pop(old)
        man["invars"][0] = name
        for e in man["eqns"]:
            for a in e["args"]:
                if a.get("t") == "var" and a["v"] == old:
                    a["v"] = name
    with pytest.raises(GraphFormatError, match="(not a plain identifier|defined twice|not declared)"):
        mg.load_graph(rewrite_graph_file(path, tmp_path / "bad.mgg", edit))
    # and codegen refuses it even in a graph built in memory
    a = Var(name, (2,), np.dtype(np.float32))
    if not ("v_" + name).isidentifier() or not name.isascii():
        b = Var("b", (2,), np.dtype(np.float32))
        graph = Graph([a], [], [], [Eqn("neg", Neg, [a], [b])], [b], ("t", 0))
        with pytest.raises(ValueError, match="not a plain identifier"):
            compile_graph(graph)


def test_fused_kernel_source_takes_only_numbers_and_known_dtypes():
    from minigrad.kernels import fused
    with pytest.raises(TypeError, match="literal operand must be a number"):
        fused._literal("1) or __import__('os').system('x'")
    with pytest.raises(TypeError, match="cannot be in a generated kernel"):
        fused._dtype_ctor(np.dtype("<U4"))
    assert fused._literal(0.5) == "0.5" and fused._literal(np.float32(2)) == "2.0"


# ---- item 3: geometry that would read memory -------------------------------------------------------

def _geo_graph(tmp_path, fn, shape=(1, 2, 4, 4)):
    g = mg.graph.trace(fn, mg.randn(*shape))
    path = tmp_path / "geo.mgg"
    g.save(path)
    return g, path


@pytest.mark.parametrize("fn", [lambda x: F.max_pool2d(x, 2), lambda x: F.unfold(x, 2),
                                lambda x: F.avg_pool2d(x, 2), lambda x: F.max_pool1d(x[:, :, 0], 2)])
@pytest.mark.parametrize("field, value", [("H", 400), ("OW", 200), ("pt", -3), ("kh", 0), ("sh", 10 ** 12)])
def test_tampered_geometry_is_refused_at_load(tmp_path, fn, field, value):
    g, path = _geo_graph(tmp_path, fn)

    def edit(man):
        for e in man["eqns"]:
            for a in e["args"]:
                if isinstance(a, dict) and a.get("t") == "namedtuple":
                    fields = a["type"].rsplit(".", 1)[1]
                    if fields == "_Geom":
                        names = "N C H W kh kw sh sw dh dw pt pb pl pr OH OW".split()
                        a["v"][names.index(field)] = {"t": "int", "v": value}
                    else:  # _GeomNd: N C size kernel stride dilation pads out, tuples per dimension
                        names = {"H": 2, "OW": 7, "pt": 6, "kh": 3, "sh": 4}
                        item = a["v"][names[field]]
                        if field == "pt":
                            item["v"][0]["v"][0] = {"t": "int", "v": value}
                        else:
                            item["v"][0] = {"t": "int", "v": value}
    with pytest.raises(GraphFormatError, match="(geometry|does not match)"):
        mg.load_graph(rewrite_graph_file(path, tmp_path / "bad.mgg", edit))


def test_ops_and_kernels_check_geometry_whatever_calls_them():
    from minigrad.ops.conv import _GeomNd
    from minigrad.ops.pooling import MaxPool
    from minigrad.graph.interpret import _Ctx
    x = np.zeros((1, 2, 4, 4), np.float32)
    bad = _GeomNd(1, 2, (400, 400), (2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)), (200, 200))
    with pytest.raises(ValueError, match=r"max_pool2d: input of shape \(1, 2, 4, 4\) does not match"):
        MaxPool.forward(_Ctx(), x, bad)
    if mg.kernels.available():
        pool, conv = mg.kernels.load("pool"), mg.kernels.load("conv")
        out = np.empty((4, 200), np.float32)
        with pytest.raises(ValueError, match="do not fit"):
            pool.max2x2_forward(x.reshape(-1), out, np.empty(1600, np.bool_), np.empty((4, 200), np.bool_),
                                np.empty(1600, np.float32))
        with pytest.raises(ValueError, match="does not fit"):
            conv.im2col(x, False, np.empty((8, 9), np.float32), 2, 2, 1, 1, 1, 1, 0, 0, 300, 3)
        loss, norm = mg.kernels.load("loss"), mg.kernels.load("norm")
        p = np.full((2, 3), 1 / 3, np.float32)
        with pytest.raises(IndexError, match="out of range"):  # would write outside dz
            loss.backward(p, np.array([0, 300]), np.float32(1), np.empty((2, 3), np.float32))
        X = np.zeros((4, 3), np.float32)
        with pytest.raises(ValueError, match="do not fit"):  # statistics of 1 row for 4
            norm.rows_forward(X, np.ones(3, np.float32), np.zeros(3, np.float32), 1e-5, np.empty_like(X),
                              np.empty(1, np.float32), np.empty(1, np.float32))


# ---- item 4: semantic tampering, byte flips, versions, inputs --------------------------------------

def _eq(man, i):
    return man["eqns"][i]


TAMPER = [
    (lambda m: _eq(m, 0)["args"].__setitem__(0, {"t": "var", "v": "zz"}), "undefined variable"),
    (lambda m: _eq(m, 1)["outs"].__setitem__(0, m["invars"][0]), "defined twice"),
    (lambda m: m["eqns"].reverse(), "undefined variable"),
    (lambda m: (_eq(m, 0)["args"].pop(), _eq(m, 0)["need"].pop()), "fails when the graph is checked"),
    (lambda m: _eq(m, 0).update(prim="relu"), "names 'relu'"),
    (lambda m: _eq(m, 0).update(fn="builtins.eval"), "unknown primitive"),
    (lambda m: _eq(m, 0).update(effect=True), "names 'linear'"),
    (lambda m: _eq(m, 0).update(need=[True]), "need must be"),
    (lambda m: _eq(m, 0).update(extra=1), "malformed"),
    (lambda m: m["vars"].__setitem__(_eq(m, 0)["outs"][0], [[4, 7], "<f4"]), "declares"),
    (lambda m: m["vars"].__setitem__(_eq(m, 0)["outs"][0], [[4, 5], "<f8"]), "declares"),
    (lambda m: m["vars"].__setitem__(_eq(m, 0)["outs"][0], [[4, 5], "<U8"]), "is not one of"),
    (lambda m: m["vars"].__setitem__(_eq(m, 0)["outs"][0], [[4, -5], "<f4"]), "malformed shape"),
    (lambda m: m["state"][0].__setitem__(2, "code"), "unknown state kind"),
    (lambda m: m.update(out_tree=["t", 7]), "refers to output 7"),
    (lambda m: m.update(out_tree=["t", "0"]), "refers to output"),
    (lambda m: m.update(outvars=["nope"]), "undefined variable"),
    (lambda m: m.update(arg_names=[]), "arg_names must be a list of 1"),
    (lambda m: _eq(m, 2)["args"].__setitem__(1, {"t": "int", "v": 1 << 70}), "out of range"),
    (lambda m: _eq(m, 2)["args"].__setitem__(1, {"t": "float", "v": "0x1p99999"}), "bad float"),
    (lambda m: _eq(m, 2)["args"].__setitem__(1, {"t": "dtype", "v": "|O"}), "is not one of"),
    (lambda m: _eq(m, 2)["args"].__setitem__(1, {"t": "ufunc", "v": "__class__"}), "unknown NumPy ufunc"),
    (lambda m: m["consts"][0].__setitem__(1, {**m["consts"][0][1], "sha256": "0" * 64}), "SHA-256"),
    (lambda m: m["consts"][0].__setitem__(1, {**m["consts"][0][1], "shape": [4]}), "corrupt"),
    (lambda m: m.update(version=4), "unsupported version"),
    (lambda m: m.update(version=True), "unsupported version"),
    (lambda m: m.update(eqns={}), "eqns must be a list"),
]


@pytest.mark.parametrize("edit, match", TAMPER)
def test_semantic_tampering_is_graph_format_error(tmp_path, edit, match):
    _, _, path = _mlp(tmp_path)
    with pytest.raises(GraphFormatError, match=match):
        mg.load_graph(rewrite_graph_file(path, tmp_path / "bad.mgg", edit))


def test_deeply_nested_parameters_and_manifest_are_graph_format_error(tmp_path):
    _, _, path = _mlp(tmp_path)
    deep = {"t": "py", "v": None}
    for _ in range(40):
        deep = {"t": "tuple", "v": [deep]}
    with pytest.raises(GraphFormatError, match="nested deeper"):
        mg.load_graph(rewrite_graph_file(path, tmp_path / "bad.mgg", lambda m: _eq(m, 2)["args"].append(deep)))
    text = '{"format": "minigrad.graph", "version": 2, "vars": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(GraphFormatError, match="corrupt manifest"):
        mg.load_graph(rewrite_graph_file(path, tmp_path / "bad2.mgg", members={"graph.json": text.encode()}))


def test_version_1_files_load_only_when_allowed(tmp_path):
    m, g, path = _mlp(tmp_path)

    def to_v1(man):
        man["version"] = 1
        man["consts"] = [[v, e["file"]] for v, e in man["consts"]]
    old = rewrite_graph_file(path, tmp_path / "v1.mgg", to_v1)
    with pytest.raises(GraphFormatError, match=r"version 1 .*allow_unverified=True"):
        mg.load_graph(old)
    h = mg.load_graph(old, allow_unverified=True)
    x = mg.randn(4, 6)
    assert np.array_equal(h.run(x, state=_state_of(g)).numpy(), g(x).numpy())


def _state_of(g):
    return {b.name: b.obj for _, b in g.state}


@mg.graph.serialize.register
class _WritesItsInput(mg.autograd.Function):
    """A (buggy or hostile) op that writes into its argument: a loaded graph must not let it."""

    @staticmethod
    def forward(ctx, x):
        np.multiply(x, 0, out=x)
        return x + 1


def test_a_loaded_graph_does_not_write_the_callers_inputs(tmp_path):
    g = mg.graph.trace(lambda x: _WritesItsInput.apply(x.clone()) * 2, mg.ones(3))
    e = [e for e in g.eqns if e.fn is _WritesItsInput][0]
    e.args = [g.invars[0]]  # as a tampered file would: the op reads the input itself
    g.save(tmp_path / "w.mgg")
    x = mg.ones(3)
    with pytest.raises(GraphFormatError, match="read-only"):
        mg.load_graph(tmp_path / "w.mgg")  # the check run on zeros already meets the write
    h = mg.load_graph(tmp_path / "w.mgg", check=False)
    for run in (h.run, mg.jit(h)):
        with pytest.raises(ValueError, match="read-only"):
            run(x)
        assert np.array_equal(x.numpy(), np.ones(3, np.float32))
    # an in-place write the traced function made is kept
    g2 = mg.graph.trace(lambda x: x.mul_(3), mg.ones(3))
    g2.save(tmp_path / "w2.mgg")
    h2 = mg.load_graph(tmp_path / "w2.mgg")
    x2 = mg.ones(3)
    h2.run(x2)
    assert np.array_equal(x2.numpy(), np.full(3, 3, np.float32))


def _regions(blob):
    """Byte offsets to flip: every structure of the zip (local headers, the manifest, .npy headers
    and data, the central directory, its end record), a few from each."""
    marks = sorted({0, len(blob) - 1} | {i for sig in (b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"\x93NUMPY")
                                          for i in _find_all(blob, sig)})
    rng = random.Random(31)
    out = set()
    for a, b in zip(marks, marks[1:] + [len(blob)]):
        out.update(rng.randrange(a, max(a + 1, b)) for _ in range(12))
    return sorted(o for o in out if o < len(blob))


def _find_all(blob, sig):
    i = blob.find(sig)
    while i >= 0:
        yield i
        i = blob.find(sig, i + 1)


def test_fuzzed_graph_files_load_identically_or_raise(tmp_path):
    """Byte flips in every region and truncations: each loads a graph identical to the saved one
    (printed program, constants, results) or raises GraphFormatError, and whatever loads runs."""
    m, g, path = _mlp(tmp_path)
    blob = path.read_bytes()
    x = mg.randn(4, 6)
    want = g(x).numpy()
    consts = [a for _, a in g.consts]
    f = tmp_path / "fuzz.mgg"
    loaded = failed = 0
    rng = random.Random(7)
    cases = [(i, 1 << rng.randrange(8)) for i in _regions(blob)]
    cases += [(None, n) for n in sorted(rng.sample(range(len(blob)), 25))]
    for i, v in cases:
        data = bytearray(blob)
        if i is None:
            data = data[:v]
        else:
            data[i] ^= v
        f.write_bytes(bytes(data))
        try:
            h = mg.load_graph(f)
        except GraphFormatError:
            failed += 1
            continue
        loaded += 1
        assert str(h) == str(g), (i, v)
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, (_, b) in zip(consts, h.consts)), (i, v)
        assert np.array_equal(h.run(x, state=_state_of(g)).numpy(), want), (i, v)
    assert failed > len(cases) // 2 and loaded + failed == len(cases)


def test_fuzzed_checkpoints_never_load_silently_wrong(tmp_path):
    obj = {"w": mg.arange(12.0).reshape(3, 4), "n": 3, "s": "x"}
    p = tmp_path / "c.mg"
    mg.save(obj, p)
    blob = p.read_bytes()
    for i in _regions(blob)[::2]:
        data = bytearray(blob)
        data[i] ^= 0x10
        p.write_bytes(bytes(data))
        try:
            got = mg.load(p)
        except mg.serialization.CheckpointError:
            continue
        assert got["n"] == 3 and got["s"] == "x" and np.array_equal(got["w"].numpy(), obj["w"].numpy()), i
