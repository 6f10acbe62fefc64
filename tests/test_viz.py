"""mg.viz.draw: DOT text, the worked example's shape, and a readable layered picture of the CNN."""
import itertools
import sys
from pathlib import Path

import pytest

import minigrad as mg
import minigrad.nn as nn
from minigrad import viz

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def _worked():
    a, b, c = (mg.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    return (a + b) * c, dict(a=a, b=b, c=c)


def test_worked_example_has_5_nodes_and_4_edges():
    y, params = _worked()
    d = viz.draw(y, params=params)
    assert len(d.nodes) == 5 and len(d.edges) == 4
    labels = sorted(label.split("\n")[0] for _, label in d.nodes.values())
    assert labels == ["AddBackward0", "MulBackward0", "a", "b", "c"]
    assert d.dot.count("->") == 4


def test_dot_is_deterministic():
    y1, p1 = _worked()
    y2, p2 = _worked()
    assert viz.draw(y1, params=p1).dot == viz.draw(y2, params=p2).dot
    assert "0x" not in viz.draw(y1, params=p1).dot  # no addresses


def test_save_dot_png_svg(tmp_path):
    pytest.importorskip("matplotlib", reason="PNG/SVG drawing needs matplotlib")
    y, params = _worked()
    d = viz.draw(y, params=params)
    d.save(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text() == d.dot
    d.save(tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    d.save(tmp_path / "g.svg")
    assert "<svg" in (tmp_path / "g.svg").read_text()
    with pytest.raises(ValueError, match="unsupported"):
        d.save(tmp_path / "g.jpg")


def test_a_tensor_outside_any_graph_is_one_node():
    # as torchviz's make_dot: the tensor alone, no error (issue 33)
    d = viz.draw(mg.ones(3))
    assert len(d.nodes) == 1 and not d.edges
    assert "f32[3]" in d.dot


def _cnn_loss():
    from mnist_cnn import build_model
    mg.manual_seed(0)
    m = build_model()
    x = mg.randn(4, 1, 28, 28)
    loss = nn.functional.cross_entropy(m(x), mg.tensor([1, 2, 3, 4]))
    return loss, dict(m.named_parameters())


@pytest.mark.parametrize("show_saved", [False, True])
def test_cnn_picture_is_readable(show_saved, tmp_path):
    pytest.importorskip("matplotlib", reason="PNG drawing needs matplotlib")
    loss, params = _cnn_loss()
    d = viz.draw(loss, params=params, show_saved=show_saved)
    assert len(d.nodes) > 25
    names = {label.split("\n")[0] for _, label in d.nodes.values()}
    assert "0.weight" in names and any("Conv" in n for n in names)
    # every edge points one way: the input is drawn above its consumer
    boxes = d.layout()
    for s, t in d.edges:
        assert boxes[s][1] > boxes[t][1], (d.nodes[s], d.nodes[t])
    # no two label boxes overlap, in the layout and in the picture matplotlib renders
    ext = d.text_extents()
    assert len(ext) == len(d.nodes)
    for (n1, a), (n2, b) in itertools.combinations(ext.items(), 2):
        overlap = a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
        assert not overlap, (d.nodes[n1], d.nodes[n2])
    d.save(tmp_path / "cnn.png")


def _unrolled_lstm(steps=3):
    mg.manual_seed(0)
    cell = nn.LSTMCell(4, 5)
    x = mg.randn(steps, 2, 4)
    h, c = mg.zeros(2, 5), mg.zeros(2, 5)
    for t in range(steps):
        h, c = cell(x[t], (h, c))
    return h.sum(), dict(cell.named_parameters())


def test_unrolled_lstm_draws_each_parameter_once():
    # a recurrence unrolled over 3 steps is one cell repeated: each shared weight is ONE node
    # with an edge into each step, not a copy per step
    loss, params = _unrolled_lstm(3)
    d = viz.draw(loss, params=params)
    first = {nid: label.split("\n")[0] for nid, (_, label) in d.nodes.items()}
    by_name = {}
    for nid, name in first.items():
        by_name.setdefault(name, []).append(nid)
    for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        assert len(by_name[p]) == 1, p
    steps, proj = by_name["LSTMStepBackward0"], by_name["AddmmBackward0"]
    assert len(steps) == 3 and len(proj) == 3 and len(d.nodes) == 4 + 3 + 3 + 1
    outs = lambda n: sorted(t for s, t in d.edges if s == n)  # noqa: E731
    # the recurrent weights feed the 3 steps, the input weights the 3 input projections
    assert outs(by_name["weight_hh"][0]) == outs(by_name["bias_hh"][0]) == sorted(steps)
    assert outs(by_name["weight_ih"][0]) == outs(by_name["bias_ih"][0]) == sorted(proj)
    # the steps form one chain (h, c carried: one edge per step), each fed by its own projection
    chain = [n for n in steps if not any(s in steps for s, t in d.edges if t == n)]
    while len(chain) < 3:
        nxt = [t for t in outs(chain[-1]) if t in steps]
        assert len(nxt) == 1
        chain.append(nxt[0])
    for n in chain:
        assert sum(s in proj for s, t in d.edges if t == n) == 1
    assert outs(chain[-1]) == by_name["SumBackward0"]


def test_unrolled_lstm_picture(tmp_path):
    pytest.importorskip("matplotlib", reason="PNG drawing needs matplotlib")
    loss, params = _unrolled_lstm(3)
    d = viz.draw(loss, params=params)
    boxes = d.layout()
    for s, t in d.edges:  # inputs above consumers; the steps go down the page in time order
        assert boxes[s][1] > boxes[t][1]
    # the frame holds every edge, including long ones bent around the boxes
    fig = d._figure()
    (x0, x1), (y0, y1) = fig.axes[0].get_xlim(), fig.axes[0].get_ylim()
    for route in boxes.routes.values():
        for px, py in route:
            assert x0 <= px <= x1 and y0 <= py <= y1
    ext = d.text_extents()
    for (n1, a), (n2, b) in itertools.combinations(ext.items(), 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (d.nodes[n1], d.nodes[n2])
    d.save(tmp_path / "lstm.png")


def test_layout_keeps_the_ordering_with_fewest_crossings():
    # the crossing count the ordering minimises: two edges cross when their ends swap order
    rows = [["a", "b"], ["c", "d"]]
    vouts = {"a": ["d"], "b": ["c"], "c": [], "d": []}
    assert viz._crossings(rows, vouts) == 1
    assert viz._crossings([["a", "b"], ["d", "c"]], vouts) == 0
    assert viz._inversions([3, 1, 2, 0]) == 5 and viz._inversions([0, 1, 1, 2]) == 0
    # the unrolled LSTM: its shared weights span the layers, so some crossings are unavoidable;
    # 7 is what trying every permutation of each row in turn (from the kept ordering) cannot beat
    loss, params = _unrolled_lstm(3)
    assert viz.draw(loss, params=params).layout().crossings <= 7
