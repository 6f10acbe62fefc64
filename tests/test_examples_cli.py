"""The examples' command-line habits (issue 32 item 8): an optional package that is missing is
named with its pip extra (no bare ModuleNotFoundError), draw_graph.py writes where --out says, and
progress bars are drawn only on a terminal. Fast: no training, no data."""
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad as mg
from test_examples import _common
from minigrad._optional import install_hint, require

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def _hide(tmp_path, *modules):
    """A folder to put first on PYTHONPATH in which importing each of `modules` fails as if absent."""
    blocker = tmp_path / "blocker"
    blocker.mkdir(exist_ok=True)
    for m in modules:
        (blocker / f"{m}.py").write_text(f"raise ModuleNotFoundError(\"No module named '{m}'\", name='{m}')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(REPO)])}


def _run(args, env, timeout=60):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env=env)


@pytest.mark.parametrize("hidden", ["onnx", "onnxruntime"])
def test_export_onnx_names_the_extra(tmp_path, hidden):
    proc = _run([EXAMPLES / "export_onnx.py", "--out", tmp_path / "out"], _hide(tmp_path, hidden))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"needs {hidden}, which is not installed: pip install -e \".[onnx]\"" in proc.stderr


def test_draw_graph_without_matplotlib_names_the_extra(tmp_path):
    proc = _run([EXAMPLES / "draw_graph.py", "--out", tmp_path], _hide(tmp_path, "matplotlib"))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert 'pip install -e ".[examples]"' in proc.stderr


def test_draw_graph_writes_into_out(tmp_path):
    pytest.importorskip("matplotlib")
    proc = _run([EXAMPLES / "draw_graph.py", "--out", tmp_path / "figs"], {**os.environ, "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["graph_mlp.png", "graph_worked_example.png"]


def test_library_optional_imports_name_the_extra(monkeypatch):
    with pytest.raises(ModuleNotFoundError, match=r'feature X needs no_such_pkg_32, which is not installed: '
                                                  r'pip install no_such_pkg_32'):
        require("no_such_pkg_32", feature="feature X")
    assert install_hint("onnx") == 'pip install -e ".[onnx]" in a checkout (or pip install onnx)'
    monkeypatch.setitem(sys.modules, "onnx", None)  # importing onnx now fails as if absent
    with pytest.raises(ModuleNotFoundError, match=r'mg.onnx.export needs onnx.*pip install -e "\.\[onnx\]"'):
        mg.onnx.export(mg.nn.Linear(2, 2), (mg.ones(1, 2),), io.BytesIO())
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    a = mg.tensor(1.0, requires_grad=True)
    with pytest.raises(ModuleNotFoundError, match=r'viz.save: drawing PNG/SVG .*pip install -e "\.\[examples\]"'):
        mg.viz.draw(a * 2).save("/tmp/never-written-32.png")
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    from minigrad.distributed import distributed_c10d
    with pytest.raises(RuntimeError, match=r'pip install -e "\.\[distributed\]"'):
        distributed_c10d._import_mpi()


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


def test_progress_bars_only_on_a_terminal(monkeypatch):
    common = _common()
    assert common.progress(range(3), 3, "x", enabled=False) is None  # --no-progress
    monkeypatch.setattr(sys, "stderr", _Stream(tty=False))
    assert isinstance(common.progress(range(3), 3, "x"), common._PlainProgress)  # a log: plain lines
    if common.tqdm is not None:
        monkeypatch.setattr(sys, "stderr", _Stream(tty=True))
        bar = common.progress(range(3), 3, "x")
        assert isinstance(bar, common.tqdm)
        bar.close()
