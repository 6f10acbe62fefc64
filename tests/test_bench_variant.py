"""benchmarks/_harness.py's --variant option (issue 38): one harness run compares minigrad
candidates that differ only by environment variables, alternating in the same rounds, each variant
a row minigrad[NAME] with its ratio to the plain row. A tiny benchmark only (no real one runs here)."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))
import _harness as H  # noqa: E402

_TINY = """
import os, sys
sys.path.insert(0, {bench!r})
import _harness as H

def make(cfg):
    with open(os.environ["MG_VARIANT_LOG"], "a") as f:   # which child ran, with which variables
        f.write(f"{{os.environ.get('MG_A', '-')}} {{os.environ.get('MG_B', '-')}}\\n")
    return lambda: sum(range(100))

H.main(H.Bench("tiny", {{"minigrad": H.Candidate(make), "other": H.Candidate(make)}},
               configs={{"c1": {{}}, "c2": {{"ratios": [("minigrad", "other", None)]}}}},
               repeats=3, warmup=1, rounds=2))
"""


def _run(tmp_path, *extra):
    script = tmp_path / "bench_tiny.py"
    script.write_text(textwrap.dedent(_TINY.format(bench=str(BENCH))))
    log = tmp_path / "log.txt"
    env = dict(os.environ, PYTHONPATH=str(BENCH), MG_VARIANT_LOG=str(log))
    env.pop("MG_A", None)
    env.pop("MG_B", None)
    p = subprocess.run([sys.executable, str(script), *extra], capture_output=True, text=True, timeout=120, env=env)
    return p, (log.read_text().splitlines() if log.exists() else [])


def test_variants_run_alternating_with_their_variables(tmp_path):
    # config c2 has ratios of its own (they replace the file's): the variants' ratios stay
    p, log = _run(tmp_path, "--config", "c2", "--only", "minigrad,minigrad[x],minigrad[y]",
                  "--variant", "x:MG_A=1,MG_B=two", "--variant", "y:MG_A=3")
    assert p.returncode == 0, p.stdout + p.stderr
    # per round: minigrad, minigrad[x], minigrad[y]; only the variants' children see the variables
    assert log == ["- -", "1 two", "3 -"] * 2
    assert "variant minigrad[x]: the minigrad candidates' children run with MG_A=1 MG_B=two" in p.stdout
    for row in ("minigrad[x]", "minigrad[y]"):
        assert f"\n  {row} " in p.stdout                 # its own row in the table
        assert f"{row} / minigrad = " in p.stdout        # and its ratio to the plain row


@pytest.mark.parametrize("spec", ["x", "x:", "x:MG_A", ":MG_A=1", "a b:MG_A=1", "x:1A=2"])
def test_bad_variant_specs_are_refused(spec):
    with pytest.raises(SystemExit, match="--variant"):
        H._parse_variant(spec)


def test_variant_names_map_back_to_their_candidates():
    assert H._variant_of("minigrad[pool]") == ("minigrad", "pool")
    assert H._variant_of("minigrad-jit[pool]-before") == ("minigrad-jit", "pool")
    assert H._variant_of("minigrad") == ("minigrad", None)
    assert H._parse_variant("pool:MINIGRAD_THREAD_POLICY=pool,MINIGRAD_NUM_THREADS=2") == (
        "pool", {"MINIGRAD_THREAD_POLICY": "pool", "MINIGRAD_NUM_THREADS": "2"})
