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


def test_not_a_graph():
    with pytest.raises(ValueError, match="not part of a graph"):
        viz.draw(mg.ones(3))


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
