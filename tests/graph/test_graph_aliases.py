"""Graph files saved before ops were renamed or merged still load (minigrad/graph/_aliases.py).

data/conv_pool_before_merge.mgg was saved by minigrad before convolution and pooling became one N-d
family each: it records conv2d's Convolution ("conv2d") and ConvolutionBackward ("conv2d_backward"),
ops/conv_nd.py's ConvolutionNd, ConvTransposeNd and ConvWeightNd, ops/pooling.py's AvgPool2D and
AvgPool2DBackward, ops/pooling_nd.py's AvgPoolNd, AvgPoolNdBackward and MaxPoolNd, and both old
geometry types (conv.py's flat _Geom, conv_nd.py's _GeomNd). It was made by `_step` below, traced on
`_inputs()` with `mg.graph.trace(_step, *_inputs())` and saved with `Graph.save`.

data/max_pool_before_merge.mgg was saved before max pooling became one family (ops/pooling.py's
MaxPool, MaxPoolBackward, MaxPoolDoubleBackward): it records max_pool2d's MaxPool2DWithIndices (the
2x2 backend's pairs and the window offsets, as side outputs), MaxPool2DWithIndicesBackward and
MaxPoolDoubleBackward, and the N-d MaxPoolNd (with its indices). It was made by `_max_step` on
`_max_inputs()` the same way."""
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from helpers import rewrite_graph_file
import minigrad.nn.functional as F
from minigrad.graph import GraphFormatError

OLD = Path(__file__).parent / "data" / "conv_pool_before_merge.mgg"


def _step(x, w, b, x1, w1, wt, x3):
    y = F.conv2d(x, w, b, padding=1)
    y = F.max_pool2d(F.relu(y), 2)
    y = F.avg_pool2d(y, 2, ceil_mode=True, count_include_pad=False)
    z = F.conv1d(x1, w1, padding=1)
    p, i = F.max_pool1d(z, 2, return_indices=True)
    q = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)[0]
    t = F.conv_transpose2d(x, wt, stride=2, padding=1)
    u = F.fold(F.unfold(x, 2, stride=2), x.shape[2:], 2, stride=2)
    v = F.avg_pool3d(x3, 2) + F.max_pool3d(x3, 2)
    loss = (y ** 2).sum() + (p ** 2).sum() + (q ** 2).sum() + (t ** 2).sum() + (u * u).sum() + (v ** 2).sum()
    gs = mg.autograd.grad(loss, [x, w, b, x1, w1, wt, x3], create_graph=True)
    return (loss,) + tuple(gs)


def _inputs():
    rng = np.random.default_rng(1)
    shapes = [(2, 3, 8, 8), (4, 3, 3, 3), (4,), (2, 3, 7), (4, 3, 3), (3, 2, 3, 3), (1, 2, 4, 4, 4)]
    return [mg.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


def test_a_graph_saved_before_the_conv_pool_merge_loads_and_runs_as_today():
    g = mg.load_graph(OLD)
    prims = {e.prim for e in g.eqns}
    assert {"convolution", "convolution_backward", "conv_transpose", "avg_pool", "avg_pool_backward",
            "max_pool", "max_pool_backward", "unfold", "fold"} <= prims
    assert not prims & {"conv2d", "conv2d_backward", "convolution_weight", "avg_pool2d", "avg_pool2d_backward",
                        "max_pool2d", "max_pool2d_backward"}
    got = g(*[t.detach() for t in _inputs()])
    want = _step(*_inputs())
    assert len(got) == len(want) == 8
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


OLD_MAX = Path(__file__).parent / "data" / "max_pool_before_merge.mgg"


def _max_step(x, x1, x3):
    y = F.max_pool2d(x, 2)                                         # MaxPool2DWithIndices (the 2x2 pairs)
    z = F.max_pool2d(x, 3, stride=2, padding=1)                    # MaxPool2DWithIndices (window offsets)
    p, i = F.max_pool1d(x1, 3, stride=2, padding=1, return_indices=True)  # MaxPoolNd
    q = F.max_pool3d(x3, 2)                                        # MaxPoolNd
    loss = (y ** 2).sum() + (z ** 2).sum() + (p ** 2).sum() + (q ** 2).sum()
    gs = mg.autograd.grad(loss, [x, x1, x3], create_graph=True)
    gg = mg.autograd.grad((gs[0] ** 2).sum(), [x])                # MaxPool2DWithIndicesBackward's backward
    return (loss, i) + tuple(gs) + tuple(gg)


def _max_inputs():
    rng = np.random.default_rng(3)
    shapes = [(2, 2, 6, 6), (2, 2, 9), (1, 2, 4, 4, 4)]
    return [mg.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


def test_a_graph_saved_before_the_max_pool_merge_loads_and_runs_as_today():
    g = mg.load_graph(OLD_MAX)
    prims = {e.prim for e in g.eqns}
    assert {"max_pool", "max_pool_backward", "max_pool_double_backward"} <= prims
    assert not prims & {"max_pool2d", "max_pool2d_backward"}
    assert {e.fn.__name__ for e in g.eqns if e.prim.startswith("max_pool")} == {
        "MaxPool", "MaxPoolBackward", "MaxPoolDoubleBackward"}
    got = g(*[t.detach() for t in _max_inputs()])
    want = _max_step(*_max_inputs())
    assert len(got) == len(want) == 6
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.detach().numpy().tobytes() == b.detach().numpy().tobytes()


def _rewrite(tmp_path, edit):
    return rewrite_graph_file(OLD, tmp_path / "old.mgg", edit)


def _first(m, fn):
    return next(e for e in m["eqns"] if e["fn"] == fn)


def test_an_old_name_under_another_op_name_or_with_other_arguments_is_refused(tmp_path):
    def wrong_prim(m):
        _first(m, "minigrad.ops.conv_nd.ConvWeightNd")["prim"] = "conv2d"

    def wrong_args(m):
        _first(m, "minigrad.ops.conv_nd.ConvWeightNd")["args"].pop()

    def short_geometry(m):
        geo = next(a for a in _first(m, "minigrad.ops.conv.Convolution")["args"] if a.get("t") == "namedtuple")
        geo["v"].pop()
    for edit, msg in ((wrong_prim, "unknown primitive"), (wrong_args, "(need must be|do not fit)"),
                      (short_geometry, "has 15 fields, not 16")):
        with pytest.raises(GraphFormatError, match=msg):
            mg.load_graph(_rewrite(tmp_path, edit))
