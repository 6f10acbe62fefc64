"""benchmarks/_harness.py's --busy option (issue 38): one CPU-bound competitor process beside the
timed runs, never left running -- after a run, after a benchmark that raises, after its parent is
killed. A tiny benchmark only (no real one runs here)."""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))
import _harness as H  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _running(pid):
    """Whether pid is a live process (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone(pid, timeout=10.0):
    end = time.monotonic() + timeout
    while _running(pid) and time.monotonic() < end:
        time.sleep(0.02)
    return not _running(pid)


def test_competitor_spins_and_stops():
    c = H.Competitor().start()
    try:
        time.sleep(0.3)
        assert _running(c.pid)
        with open(f"/proc/{c.pid}/stat") as f:
            utime = int(f.read().rsplit(")", 1)[1].split()[11])
        assert utime > 0   # it burns CPU
    finally:
        c.stop()
    assert not _running(c.pid)
    c.stop()   # twice: harmless


def test_competitor_exits_when_its_parent_is_killed():
    code = ("import sys, time; sys.path.insert(0, %r); import _harness as H\n"
            "c = H.Competitor().start(); print(c.pid, flush=True); time.sleep(60)\n" % str(BENCH))
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        assert _running(pid)
        parent.send_signal(signal.SIGKILL)   # no finally, no atexit: the competitor must notice
        parent.wait(10)
        assert _gone(pid)
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.stdout.close()


_TINY = """
import sys
sys.path.insert(0, {bench!r})
import _harness as H

def make(cfg):
    if cfg.get("fail"):
        raise RuntimeError("this benchmark fails")
    return lambda: sum(range(100))

H.main(H.Bench("tiny", {{"spin": H.Candidate(make)}},
               configs={{"ok": {{}}, "fail": {{"fail": True}}}}, repeats=3, warmup=1, rounds=1))
"""


@pytest.mark.parametrize("config, ok", [("ok", True), ("fail", False)])
def test_busy_run_never_leaves_its_competitor(tmp_path, config, ok):
    script = tmp_path / "bench_tiny.py"
    script.write_text(textwrap.dedent(_TINY.format(bench=str(BENCH))))
    p = subprocess.run([sys.executable, str(script), "--busy", "--config", config], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(BENCH)))
    m = re.search(r"--busy: one CPU-bound competitor process \(pid (\d+)", p.stdout)
    assert m, p.stdout + p.stderr
    assert (p.returncode == 0) == ok, p.stdout + p.stderr
    if not ok:
        assert "this benchmark fails" in p.stdout + p.stderr
    assert _gone(int(m.group(1)), timeout=2.0)
