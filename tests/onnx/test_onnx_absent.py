"""Without the onnx extra: a clear ImportError naming the extra, and unmapped ops still named first."""
import sys

import pytest

import minigrad as mg


@pytest.fixture
def no_onnx(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError


def test_export_without_onnx_names_the_extra(no_onnx, tmp_path):
    with pytest.raises(ImportError, match=r"pip install -e \"\.\[onnx\]\""):
        mg.onnx.export(lambda x: x + 1.0, mg.randn(3), tmp_path / "a.onnx")
    assert not (tmp_path / "a.onnx").exists()


def test_unmapped_op_is_named_even_without_onnx(no_onnx, tmp_path):
    with pytest.raises(NotImplementedError, match=r"'cumprod' has no ONNX mapping.*test_onnx_absent.py:\d+"):
        mg.onnx.export(lambda x: mg.cumprod(x, 0), mg.randn(3), tmp_path / "b.onnx")
