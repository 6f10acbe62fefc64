"""Graph files holding control flow (mg.cond / mg.while_loop / mg.scan, nested): their sub-graphs
are saved inside the file (version 3), loaded under the same rules as the rest of the file (no code
run, every field validated, each body type-checked against the equation that runs it and checked
once on zeros), and run by the interpreter and by mg.jit bit for bit as eager does."""
import json
import zipfile

import numpy as np
import pytest

import minigrad as mg
from helpers import nested_control_flow, rewrite_graph_file
from minigrad.graph import GraphFormatError

_W = np.random.default_rng(4).standard_normal((3, 3)).astype(np.float32)


def _fns():
    w = mg.tensor(_W)

    nested = nested_control_flow(w)   # a reversed scan holding a cond and a scan

    def loop(x):      # never ends on zeros: the load check must not run it
        return mg.while_loop(lambda i, v: v.abs().sum() < 50, lambda i, v: (i + 1, v * 2 + w[0] + 0.5),
                             (mg.tensor(0), x))

    def branch(x):
        return mg.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: mg.while_loop(
            lambda v: v.sum() < 10, lambda v: v + 1.0, (a,))[0], (x,))
    return w, [(nested, (6, 3)), (loop, (3,)), (branch, (3,))]


def _eq(a, b):
    return a.dtype == b.dtype and np.array_equal(a.numpy(), b.numpy())


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def test_round_trip_interpreter_and_jit_bitwise(tmp_path):
    w, fns = _fns()
    rng = np.random.default_rng(0)
    for k, (fn, shape) in enumerate(fns):
        g = mg.graph.trace(fn, mg.tensor(rng.standard_normal(shape).astype(np.float32)))
        path = tmp_path / f"cf{k}.mgg"
        g.save(path)
        assert json.loads(zipfile.ZipFile(path).read("graph.json"))["version"] == 3
        h = mg.load_graph(path, bind={b.name: w for _, b in g.state})
        compiled = mg.jit(h)
        for x in (rng.standard_normal(shape).astype(np.float32), -np.abs(rng.standard_normal(shape)).astype(np.float32)):
            x = mg.tensor(x)
            want = _flat(fn(x))
            for got in (h.run(x), compiled(x)):
                assert all(_eq(a, b) for a, b in zip(_flat(got), want)), fn.__name__
        assert h.count() == g.count()


def test_a_training_step_through_scan_and_cond_round_trips(tmp_path):
    """The traced backward of a scan is a scan of the step's VJP (a cond's VJP inside), reading the
    forward's carries as side outputs: saved, loaded, run, the same bits as eager."""
    w = mg.tensor(_W, requires_grad=True)

    def step(xs):
        w.grad = None
        body = lambda c, x: ((mg.cond(c[0].sum() > 0, lambda a: (a @ w).tanh(), lambda a: a * w[0],  # noqa: E731
                                      (c[0] + x,)), c[1] + 1), c[0].sum())
        (h, _), ys = mg.scan(body, (mg.zeros(3), mg.tensor(0)), xs)
        loss = h.sum() + ys.sum()
        loss.backward()
        return loss.detach()
    g = mg.graph.trace(step, mg.randn(5, 3))
    g.save(tmp_path / "step.mgg")
    h = mg.load_graph(tmp_path / "step.mgg", bind={b.name: b.obj for _, b in g.state})
    x = mg.randn(5, 3)
    want = step(x)
    want_grad = w.grad.numpy().copy()
    for run in (h, mg.jit(h)):
        w.grad = None
        assert _eq(run(x), want)
        np.testing.assert_array_equal(w.grad.numpy(), want_grad)


def test_a_graph_without_control_flow_stays_version_2(tmp_path):
    g = mg.graph.trace(lambda x: x * 2.0, mg.randn(3))
    g.save(tmp_path / "g.mgg")
    assert json.loads(zipfile.ZipFile(tmp_path / "g.mgg").read("graph.json"))["version"] == 2


def _spec(m, prim):
    """The encoded parameter of the first equation `prim` (searching bodies too)."""
    stack = [m]
    while stack:
        g = stack.pop()
        for e in g["eqns"]:
            a = e["args"][0] if e["args"] else None
            if type(a) is dict and a.get("t") == "cf":
                if a["prim"] == prim:
                    return a
                stack.extend(v for v in a["v"].values() if type(v) is dict and "eqns" in v)
    raise AssertionError(prim)


def _body_var_shape(m):
    body = _spec(m, "cond")["v"]["true_fn"]
    name = body["invars"][0]
    body["vars"][name][0] = [4]


def _body_unknown_op(m):
    _spec(m, "cond")["v"]["false_fn"]["eqns"][0]["fn"] = "os.system"


def _free_index(m):
    _spec(m, "cond")["v"]["true_idx"] = [7]


def _scan_length(m):
    _spec(m, "scan")["v"]["length"] = 5


def _undefined_in_body(m):
    body = _spec(m, "scan")["v"]["body"]
    body["outvars"][0] = "zz"


def _outer_var_in_body(m):   # a body reads a variable of the graph around it: not in its scope
    body = _spec(m, "scan")["v"]["body"]
    body["eqns"][0]["args"][0] = {"t": "var", "v": m["invars"][0]}


def _effect_in_body(m):
    body = _spec(m, "scan")["v"]["body"]
    v = body["invars"][0]
    body["vars"]["zz"] = body["vars"][v]
    body["eqns"].append({"prim": "assign", "fn": None, "args": [{"t": "var", "v": v}, {"t": "var", "v": v}],
                         "outs": ["zz"], "side": [], "need": None, "effect": True, "target": v, "source": None})


def _old_version(m):
    m["version"] = 2


def _extra_field(m):
    _spec(m, "scan")["v"]["code"] = "print(1)"


def _cf_tag_elsewhere(m):    # a sub-graph parameter where an ordinary op's parameter goes
    body = _spec(m, "scan")["v"]["body"]
    e = next(e for e in body["eqns"] if e["prim"] == "sum")
    e["args"][1] = _spec(m, "cond")


@pytest.mark.parametrize("edit, match", [
    (_body_var_shape, "true_fn's inputs"), (_body_unknown_op, "unknown primitive 'os.system'"),
    (_free_index, "true_idx must be a list of input indices|reads free input"),
    (_scan_length, "leading dimension is not the length 5"),
    (_undefined_in_body, "undefined variable 'zz'"), (_outer_var_in_body, "undefined variable"),
    (_effect_in_body, "holds an effect"), (_old_version, "control flow in a version 2 file"),
    (_extra_field, "malformed control-flow parameter"), (_cf_tag_elsewhere, "unknown value tag 'cf'")])
def test_a_tampered_sub_graph_is_refused(tmp_path, edit, match):
    w, fns = _fns()
    g = mg.graph.trace(fns[0][0], mg.randn(6, 3))
    path = tmp_path / "cf.mgg"
    g.save(path)
    with pytest.raises(GraphFormatError, match=match):
        mg.load_graph(rewrite_graph_file(path, tmp_path / "bad.mgg", edit))


def test_a_body_that_fails_on_zeros_is_refused_and_an_older_reader_says_so(tmp_path):
    g = mg.graph.trace(lambda x: mg.scan(lambda c, v: (c + v.reshape(3), c), mg.zeros(3), x), mg.randn(2, 3))
    path = tmp_path / "cf.mgg"
    g.save(path)

    def edit(m):    # reshape's target changed to one the input cannot take: fails when checked
        for e in _spec(m, "scan")["v"]["body"]["eqns"]:
            if e["prim"] == "reshape":
                e["args"][1] = {"t": "tuple", "v": [{"t": "int", "v": 4}]}
    with pytest.raises(GraphFormatError, match="reshape.*fails when the graph is checked on zeros"):
        mg.load_graph(rewrite_graph_file(path, tmp_path / "bad.mgg", edit))
    with pytest.raises(GraphFormatError, match="unsupported version 4"):
        mg.load_graph(rewrite_graph_file(path, tmp_path / "v4.mgg", lambda m: m.update(version=4)))
