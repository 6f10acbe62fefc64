"""Every public op in the registry, exported to ONNX on its own: onnx.checker passes and onnxruntime
reproduces minigrad's float32 output within 1e-5 * max(1, |reference|) per element (ints and bools
exactly). The entry's `onnx` field says whether the op maps (True) or why not (a string, from
ONNX_NO_MAPPING in minigrad/testing/opinfo/__init__.py); the test fails when that declaration is out
of date."""
import pytest

from minigrad.testing.opinfo import ONNX_NO_MAPPING, UNCHECKED, op_db

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from _opcheck import check  # noqa: E402  (after the importorskips: it needs the extra)

OPS = [i for i in op_db if i.kind == "op"]


@pytest.mark.parametrize("info", OPS, ids=str)
def test_op_exports_and_onnxruntime_agrees(info):
    assert info.onnx is not UNCHECKED, f"{info}: no ONNX declaration"
    exported, unmapped = check(info, onnx, ort)  # every sample that exports must agree
    if info.onnx is True:
        assert exported and not unmapped, (
            f"{info} is declared as mapped but {len(unmapped)} sample(s) have no mapping: {unmapped[:1]}; "
            f"add it to ONNX_NO_MAPPING with the reason, or map it")
    else:
        assert isinstance(info.onnx, str) and info.onnx
        assert unmapped or not exported, (
            f"{info} exports now ({exported} samples agree with onnxruntime): remove it from ONNX_NO_MAPPING")
        for msg in unmapped:  # the error names the op and the user's line
            assert "has no ONNX mapping" in msg and "called at" in msg and "_opcheck.py" in msg, msg


def test_no_mapping_list_names_only_registry_ops():
    names = {i.full_name for i in OPS}
    assert sorted(k for k in ONNX_NO_MAPPING if k not in names) == []
