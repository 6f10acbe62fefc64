"""examples/export_onnx.py runs (a short run on the shared MNIST data) and reports agreement."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnx", reason="the onnx extra is not installed")
pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ["MINIGRAD_DATA"]) if os.environ.get("MINIGRAD_DATA") else REPO.parent / "shared" / "data"


@pytest.mark.skipif(not (DATA / "mnist-10k").is_dir(), reason=f"shared MNIST data not found at {DATA}")
@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_export_example_agrees(tmp_path, model):
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "export_onnx.py"), "--data", str(DATA),
                           "--model", model, "--epochs", "1", "--limit", "300", "--test-limit", "200",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / f"{model}.onnx").is_file()
    assert "every element within 1e-5*max(1,|ref|): True" in proc.stdout, proc.stdout
    acc = re.search(r"accuracy: minigrad ([\d.]+)%, onnxruntime ([\d.]+)%", proc.stdout)
    assert acc and acc.group(1) == acc.group(2), proc.stdout
