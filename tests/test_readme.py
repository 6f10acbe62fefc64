"""README's promises: the quick start prints 20.0 4.0 4.0 5.0, and so does the worked example."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_quick_start_block_prints_the_worked_example(capsys):
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start.*?```python\n(.*?)```", readme, re.S).group(1)
    exec(compile(block, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "20.0 4.0 4.0 5.0"


def test_worked_example_script():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "worked_example.py")],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "20.0 4.0 4.0 5.0"
    assert "MulBackward0" in out and "AddBackward0" in out and "AccumulateGrad" in out
