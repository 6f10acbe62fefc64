"""mg.onnx.export of whole models: onnx.checker passes and onnxruntime reproduces minigrad within
1e-5 * max(1, |ref|) per element (float32); a dynamic batch axis; clear errors; atomic writes.
(tests/onnx/test_onnx_ops.py covers the op registry one op at a time.)"""
import os
import sys

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from _opcheck import close  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _run(path, *xs):
    sess = _session(path)
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})[0]


def _example_model(name):
    sys.path.insert(0, EXAMPLES)
    try:
        import importlib
        return importlib.import_module(name).build_model()
    finally:
        sys.path.remove(EXAMPLES)


def _warm_batch_norm(model, x):
    """A few training-mode forwards so BatchNorm's running statistics are not the initial 0 / 1."""
    model.train()
    with mg.no_grad():
        for _ in range(3):
            model(x)


@pytest.mark.parametrize("example", ["mnist_mlp", "mnist_cnn"])
def test_mnist_example_models_with_a_dynamic_batch(tmp_path, example):
    mg.manual_seed(0)
    model = _example_model(example)
    _warm_batch_norm(model, mg.randn(32, 1, 28, 28) * 2.0 + 0.5)
    model.train()
    path = tmp_path / f"{example}.onnx"
    mg.onnx.export(model, mg.randn(1, 1, 28, 28), path, input_names=["image"], output_names=["logits"],
                   dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    assert model.training  # put back in the mode it was in
    m = onnx.load(str(path))
    onnx.checker.check_model(m)
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    ops = {n.op_type for n in m.graph.node}
    assert "Dropout" not in ops and ("Conv" in ops) == (example == "mnist_cnn")
    x = mg.randn(64, 1, 28, 28)  # exported at batch 1, run at 64
    with mg.no_grad():
        ref = model.eval()(x).numpy()
    got = _run(path, x.numpy())
    assert got.shape == (64, 10)
    close(got, ref)


def _zoo():
    """Every layer kind the issue names, with stride/padding/groups/dilation/ceil_mode variants."""
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, stride=2, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
        nn.Conv2d(4, 8, 3, padding=2, dilation=2, groups=2), nn.ELU(), nn.Dropout(0.5),
        nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), nn.GELU(),
        nn.AvgPool2d(2, stride=1, padding=1, ceil_mode=True, count_include_pad=False), nn.SiLU(),
        nn.AvgPool2d(2), nn.LeakyReLU(0.2), nn.Flatten(),
        nn.Linear(8 * 3 * 3, 16), nn.LayerNorm(16), nn.Tanh(), nn.Linear(16, 16), nn.SELU(), nn.Sigmoid(),
        nn.Linear(16, 12), nn.Softplus(), nn.Mish(), nn.Hardsigmoid(), nn.CELU(), nn.Softsign(),
        nn.Hardtanh(), nn.Linear(12, 6), nn.LogSoftmax(dim=1))


def test_layer_zoo_dynamic_batch(tmp_path):
    mg.manual_seed(1)
    model = _zoo()
    _warm_batch_norm(model, mg.randn(16, 2, 15, 15))
    model.eval()
    path = tmp_path / "zoo.onnx"
    mg.onnx.export(model, mg.randn(1, 2, 15, 15), path, input_names=["x"], output_names=["y"],
                   dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    ops = {n.op_type for n in onnx.load(str(path)).graph.node}
    assert {"Conv", "MaxPool", "AveragePool", "LayerNormalization", "Gemm", "LogSoftmax"} <= ops
    x = mg.randn(64, 2, 15, 15)
    with mg.no_grad():
        ref = model(x).numpy()
    close(_run(path, x.numpy()), ref)


def test_embedding_and_softmax_model(tmp_path):
    mg.manual_seed(2)
    emb, head = nn.Embedding(50, 8), nn.Linear(8, 5)

    def f(tokens):
        return mg.softmax(head(emb(tokens).mean(1)), dim=-1)
    tokens = mg.randint(0, 50, (3, 7))
    path = tmp_path / "emb.onnx"
    mg.onnx.export(f, tokens, path)
    assert "Gather" in {n.op_type for n in onnx.load(str(path)).graph.node}
    close(_run(path, tokens.numpy()), f(tokens).detach().numpy())


def test_opset_17_reductions_take_axes_as_attributes(tmp_path):
    def f(x):
        return x.mean(1, keepdim=True) + x.amax(0) * x.logsumexp(1, keepdim=True) - x.prod(1, keepdim=True)
    x = mg.randn(3, 4)
    for opset in (17, 18):
        path = tmp_path / f"r{opset}.onnx"
        mg.onnx.export(f, x, path, opset_version=opset)
        m = onnx.load(str(path))
        assert m.opset_import[0].version == opset
        mean = next(n for n in m.graph.node if n.op_type == "ReduceMean")
        assert (len(mean.input) == 2) == (opset >= 18)  # axes: an input from opset 18, an attribute before
        close(_run(path, x.numpy()), f(x).numpy())
    with pytest.raises(ValueError, match="opset_version must be an int from 17 to"):
        mg.onnx.export(f, x, tmp_path / "old.onnx", opset_version=13)


def test_unmapped_op_names_the_op_and_the_line(tmp_path):
    def f(x):
        return mg.cumprod(x, 0) + 1.0
    target = tmp_path / "x.onnx"
    with pytest.raises(NotImplementedError, match=r"'cumprod' has no ONNX mapping.*test_export.py:\d+"):
        mg.onnx.export(f, mg.randn(3), target)
    assert not target.exists()  # never a half file
    target.write_bytes(b"an earlier export")
    with pytest.raises(NotImplementedError):
        mg.onnx.export(f, mg.randn(3), target)
    assert target.read_bytes() == b"an earlier export"  # a failed export leaves the old file alone
    assert [p.name for p in tmp_path.iterdir()] == ["x.onnx"]  # and no temporary behind


def test_the_error_carries_the_declared_reason(tmp_path):
    with pytest.raises(NotImplementedError, match=r"'cumprod' has no ONNX mapping \(ONNX has no cumulative op") as e:
        mg.onnx.export(lambda x: mg.cumprod(x, 0), mg.randn(3), tmp_path / "c.onnx")
    assert e.value.op is mg.ops.scan.Cumprod and e.value.reason == mg.ops.scan.Cumprod.onnx.why

    class Cube(mg.autograd.Function):  # a user's Function declares no rule: no mapping, no reason
        @staticmethod
        def forward(ctx, x):
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            return g
    with pytest.raises(NotImplementedError, match=r"'cube' has no ONNX mapping; called at") as e:
        mg.onnx.export(lambda x: Cube.apply(x), mg.randn(3), tmp_path / "u.onnx")
    assert e.value.op is Cube and e.value.reason is None


def test_number_minus_tensor_and_rounding_division(tmp_path):
    # rsub (a number minus a tensor) had no mapping, and div's rounding_mode was exported as plain Div
    x = mg.tensor(np.array([-3.5, -1.0, 2.5, 7.0], np.float32))
    y = mg.tensor(np.array([2.0, -3.0, 2.0, -2.0], np.float32))
    cases = [(lambda a: 1.0 - a, (x,)),
             (lambda a, b: mg.div(a, b, rounding_mode="trunc"), (x, y)),
             (lambda a, b: mg.div(a, b, rounding_mode="floor"), (x, y)),
             (lambda a, b: mg.div(a, b, rounding_mode="trunc"),
              (mg.tensor(np.array([-7, 7, -8, 9])), mg.tensor(np.array([2, -2, 3, 4]))))]
    for i, (f, args) in enumerate(cases):
        path = tmp_path / f"r{i}.onnx"
        mg.onnx.export(f, args, path)
        close(_run(path, *(a.numpy() for a in args)), f(*args).numpy())
    with pytest.raises(NotImplementedError, match=r"integer floor division"):
        mg.onnx.export(lambda a, b: mg.div(a, b, rounding_mode="floor"), cases[3][1], tmp_path / "f.onnx")


def test_a_write_into_a_parameter_is_refused(tmp_path):
    w = mg.zeros(3)

    def f(x):
        with mg.no_grad():
            w.add_(x)
        return x * 2.0
    with pytest.raises(NotImplementedError, match="'assign'.*in-place write into an input, a parameter"):
        mg.onnx.export(f, mg.randn(3), tmp_path / "w.onnx")


def test_in_place_ops_on_intermediates_export(tmp_path):
    def f(x):
        y = x * 2.0
        y.add_(1.0).relu_()
        return y
    x = mg.randn(4)
    mg.onnx.export(f, x, tmp_path / "ip.onnx")
    close(_run(tmp_path / "ip.onnx", x.numpy()), f(x).numpy())


def test_input_output_names_must_match(tmp_path):
    with pytest.raises(ValueError, match="1 inputs and 1 outputs"):
        mg.onnx.export(lambda x: x + 1.0, mg.randn(2), tmp_path / "n.onnx", input_names=["a", "b"])


def test_an_output_that_is_an_input_or_repeated(tmp_path):
    x = mg.randn(2, 3)
    path = tmp_path / "id.onnx"
    mg.onnx.export(lambda x: (x, x.exp(), x.exp().sum()), x, path)
    sess = _session(path)
    a, b, c = sess.run(None, {"input_0": x.numpy()})
    close(a, x.numpy())
    close(b, x.exp().numpy())
    close(c, x.exp().sum().numpy())


def test_sort_and_topk_break_ties_as_minigrad(tmp_path):
    x = mg.tensor([[1.0, 3.0, 1.0, 3.0, 2.0, 1.0, 3.0], [0.0, 0.0, -1.0, 5.0, 5.0, 0.0, 2.0]])
    for i, f in enumerate([lambda x: mg.sort(x, 1), lambda x: mg.sort(x, 1, descending=True),
                           lambda x: mg.topk(x, 3), lambda x: mg.topk(x, 2, largest=False)]):
        path = tmp_path / f"s{i}.onnx"
        mg.onnx.export(f, x, path)
        values, indices = _session(path).run(None, {"input_0": x.numpy()})
        want = f(x)
        close(values, want[0].numpy())
        close(indices, want[1].numpy())


def test_dynamic_batch_through_slicing_and_expand(tmp_path):
    mg.manual_seed(3)
    lin = nn.Linear(5, 4)

    def f(x):
        h = lin(x[:, 1:6])                              # basic indexing keeps the batch axis
        return (h.unsqueeze(1).expand(-1, 3, -1) * mg.arange(3.0).reshape(1, 3, 1)).sum(2)
    path = tmp_path / "dyn.onnx"
    mg.onnx.export(f, mg.randn(2, 8), path, input_names=["x"], output_names=["y"],
                   dynamic_axes={"x": {0: "n"}, "y": {0: "n"}})
    x = mg.randn(64, 8)
    close(_run(path, x.numpy()), f(x).detach().numpy())


def test_what_cannot_be_exported_faithfully_is_refused_before_writing(tmp_path):
    """Issue 31 item 8: each of these wrote a file (a NumPy example became a constant and the model had
    no input; opset 99 and a function returning None gave files onnxruntime cannot load; unknown or
    out-of-range dynamic axes were ignored) and now raises naming the argument."""
    m, path = nn.Linear(3, 2), tmp_path / "m.onnx"
    cases = [((m, np.ones((2, 3), np.float32)), {}, TypeError, "example_args"),
             ((lambda x, y: x * y, (mg.ones(2), np.ones(2, np.float32))), {}, TypeError, r"example_args\[1\] is a ndarray"),
             ((m, mg.ones(2, 3)), {"opset_version": 99}, ValueError, "opset_version must be an int from 17 to"),
             ((lambda x: None, mg.ones(2)), {}, ValueError, "returns no tensor"),
             ((m, mg.ones(2, 3)), {"dynamic_axes": {"q": {0: "b"}}}, ValueError, "'q', which is not an input or output"),
             ((m, mg.ones(2, 3)), {"dynamic_axes": {"input_0": {2: "b"}}}, ValueError, r"axis 2, out of range for its shape \(2, 3\)")]
    for (fn, args), kw, err, msg in cases:
        with pytest.raises(err, match=msg):
            mg.onnx.export(fn, args, path, **kw)
        assert not path.exists()


def test_a_branch_on_a_dynamic_axis_warns_with_the_line_and_the_list_form_of_dynamic_axes(tmp_path):
    def f(x):
        if x.shape[0] == 1:
            return x * 2.0
        return x * 3.0                          # the line the warning names
    line = f.__code__.co_firstlineno + 3
    path = tmp_path / "f.onnx"
    with pytest.warns(mg.onnx.ExportWarning, match=rf"'batch'.*size 1 differs from the one at size 4, in a constant read at .*:{line} \(mul\)"):
        mg.onnx.export(f, mg.ones(4, 3), path, input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    assert not np.allclose(_run(path, np.ones((1, 3), np.float32)), f(mg.ones(1, 3)).numpy())  # why it warns
    with pytest.warns(mg.onnx.ExportWarning, match=r"shape made from a shape"):
        mg.onnx.export(lambda x: x + mg.ones(x.shape[0], 1), mg.ones(4, 3), path, dynamic_axes={"input_0": [0]})


def test_batch_and_sequence_axes_through_reshapes_export_without_a_warning(tmp_path):
    import warnings

    def g(x):
        B, T, C = x.shape
        return (x.reshape(B * T, C) * 2.0).reshape(B, T, C).sum(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", mg.onnx.ExportWarning)
        mg.onnx.export(g, mg.randn(4, 5, 3), tmp_path / "g.onnx", input_names=["x"],
                       dynamic_axes={"x": {0: "batch", 1: "t"}})
        mg.onnx.export(model, mg.randn(4, 3), tmp_path / "m.onnx", input_names=["x"],
                       dynamic_axes={"x": [0]})
    x = np.random.default_rng(0).standard_normal((7, 3)).astype(np.float32)
    close(_run(tmp_path / "m.onnx", x), model(mg.tensor(x)).detach().numpy())
