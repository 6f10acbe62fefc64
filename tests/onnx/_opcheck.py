"""Export one op-registry entry sample by sample and compare onnxruntime with minigrad (helper of
test_onnx_ops.py; no tests here)."""

import numpy as np

import minigrad as mg
from minigrad.testing.opinfo import make_args, tensor_function

MAX_SAMPLES = 6


def _flat(o):
    if isinstance(o, mg.Tensor):
        return [o.detach().numpy()]
    if isinstance(o, (tuple, list)):
        return [x for y in o for x in _flat(y)]
    return []


def close(got, ref):
    """Per element |got - ref| <= 1e-5 * max(1, |ref|) (float), equal (int/bool); nan where ref is nan."""
    assert got.shape == ref.shape, (got.shape, ref.shape)
    if ref.dtype.kind != "f":
        assert got.dtype == ref.dtype and np.array_equal(got, ref), (got, ref)
        return
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    both_inf = np.isinf(ref) & (got == ref)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan), (got, ref)
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    ok = (err <= 1e-5 * np.maximum(1.0, np.abs(ref.astype(np.float64)))) | both_inf | nan
    assert ok.all(), f"worst {err[~ok].max()} at ref {ref[~ok][:4]} got {got[~ok][:4]}"


def _options(ort):
    """One thread (the test machine is shared), basic graph optimisations (less start-up time)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.log_severity_level = 3
    return so


def check(info, onnx, ort):
    """Export each sample of `info` (float32 when it accepts float32). Returns (exported, unmapped):
    the number of samples exported and agreeing, and the NotImplementedErrors of the rest."""
    dt = "float32" if "float32" in info.dtypes else info.dtypes[0]
    exported, unmapped = 0, []
    for s in info.samples(0)[:MAX_SAMPLES]:
        args, kwargs, _ = make_args(s, lambda a, rg: mg.tensor(a), False, dt)
        fn, tens = tensor_function(info, args, kwargs)
        if not tens:
            continue
        try:
            want = _flat(fn(*tens))
        except Exception:  # an error sample (the op's own tests check the message)
            continue
        if not want:
            continue
        try:
            model = mg.onnx.to_model(mg.graph.trace(fn, *tens))
        except NotImplementedError as e:
            unmapped.append(e)
            continue
        sess = ort.InferenceSession(model.SerializeToString(), _options(ort), providers=["CPUExecutionProvider"])
        feeds = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), tens)}
        got = sess.run(None, feeds)
        assert len(got) == len(want), s
        for g, w in zip(got, want):
            try:
                close(np.asarray(g), w)
            except AssertionError as err:
                raise AssertionError(f"{info} sample {s}: onnxruntime differs: {err}") from None
        exported += 1
    return exported, unmapped
