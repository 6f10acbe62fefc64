"""mg.onnx.export of the sequence examples' models (issue 36): the GPT of examples/gpt_model.py (small
config, a dynamic batch axis) and the word LSTM LM of examples/lstm_model.py (logits and the carried
(h, c) state), in eval mode (a function is traced in the mode its modules are in: dropout has no
ONNX mapping), checked by onnx.checker and against onnxruntime: every element within
1e-5 * max(1, |ref|) (float32; tests/onnx/_opcheck.close)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from _opcheck import close  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _module(name):
    spec = importlib.util.spec_from_file_location(f"{name}_onnx_test", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def test_gpt_exports_with_a_dynamic_batch(tmp_path):
    mg.manual_seed(0)
    model = _module("gpt_model").GPT(20, context=8, n_layer=2, n_head=2, d_model=16, dropout=0.1).eval()
    rng = np.random.default_rng(0)
    path = tmp_path / "gpt.onnx"
    mg.onnx.export(lambda idx: model(idx)[0], mg.from_numpy(rng.integers(0, 20, (3, 8))), path,
                   input_names=["idx"], output_names=["logits"],
                   dynamic_axes={"idx": {0: "batch"}, "logits": {0: "batch"}})
    onnx.checker.check_model(onnx.load(str(path)))
    sess = _session(path)
    for batch in (3, 5):   # the traced batch and another
        idx = rng.integers(0, 20, (batch, 8))
        got = sess.run(None, {"idx": idx})[0]
        with mg.no_grad():
            close(got, model(mg.from_numpy(idx))[0].numpy())


@pytest.mark.parametrize("tied", [False, True])
def test_lstm_lm_exports_with_its_state(tmp_path, tied):
    """The recurrent layers export as one Loop per layer (the step's composite as its body); the
    sequence length and the batch are the traced ones; the state goes in and comes out as graph inputs and outputs."""
    mg.manual_seed(0)
    model = _module("lstm_model").RNNModel(30, 12, 12, 2, dropout=0.2, tie_weights=tied).eval()
    rng = np.random.default_rng(1)
    x = rng.integers(0, 30, (6, 3))
    h0, c0 = (rng.standard_normal((2, 3, 12)).astype(np.float32) * 0.5 for _ in range(2))

    def step(x, h, c):
        logp, (h, c) = model(x, (h, c))
        return logp, h, c
    path = tmp_path / "lstm.onnx"
    mg.onnx.export(step, (mg.from_numpy(x), mg.from_numpy(h0), mg.from_numpy(c0)), path,
                   input_names=["x", "h0", "c0"], output_names=["logp", "h", "c"])
    onnx.checker.check_model(onnx.load(str(path)))
    got = _session(path).run(None, {"x": x, "h0": h0, "c0": c0})
    with mg.no_grad():
        want = step(mg.from_numpy(x), mg.from_numpy(h0), mg.from_numpy(c0))
    assert [g.shape for g in got] == [(18, 30), (2, 3, 12), (2, 3, 12)]
    for g, w in zip(got, want):
        close(g, w.numpy())
