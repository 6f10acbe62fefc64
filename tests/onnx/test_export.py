"""mg.onnx.export: onnx.checker passes and onnxruntime reproduces minigrad (1e-5 * max(1, |ref|))."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")


def _run(path, x):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def _close(a, ref):
    assert np.all(np.abs(a - ref) <= 1e-5 * np.maximum(1.0, np.abs(ref)))


def test_mlp_dynamic_batch(tmp_path):
    mg.manual_seed(0)
    m = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 10))
    path = tmp_path / "mlp.onnx"
    mg.onnx.export(m, mg.randn(1, 1, 28, 28), path, input_names=["input"], output_names=["logits"],
                   dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    onnx.checker.check_model(onnx.load(str(path)))
    x = mg.randn(64, 1, 28, 28)
    _close(_run(path, x.numpy()), m.eval()(x).detach().numpy())


@pytest.mark.parametrize("name, fn", [
    ("add", lambda x: x + 1.5), ("sub", lambda x: x - 2.0), ("mul", lambda x: x * x), ("div", lambda x: x / 3.0),
    ("neg", lambda x: -x), ("exp", mg.exp), ("tanh", mg.tanh), ("sigmoid", mg.sigmoid), ("relu", mg.relu),
    ("abs", mg.abs), ("sin", mg.sin), ("cos", mg.cos), ("matmul", lambda x: x @ x.T),
    ("softmax", lambda x: mg.softmax(x, 1)), ("log_softmax", lambda x: mg.log_softmax(x, 1)),
    ("log", lambda x: mg.log(mg.abs(x) + 1.0)), ("sqrt", lambda x: mg.sqrt(mg.abs(x))),
])
def test_elementwise_ops_one_by_one(tmp_path, name, fn):
    x = mg.randn(4, 4)
    path = tmp_path / f"{name}.onnx"
    mg.onnx.export(fn, x, path)
    _close(_run(path, x.numpy()), fn(x).numpy())


def test_unmapped_op_names_the_op_and_the_line(tmp_path):
    def f(x):
        return mg.cumsum(x, 0)
    with pytest.raises(NotImplementedError, match=r"'cumsum'.*test_export.py:\d+"):
        mg.onnx.export(f, mg.randn(3), tmp_path / "x.onnx")
    assert not (tmp_path / "x.onnx").exists()  # never a half file
