"""examples/mnist_ddp.py on 2 ranks: a short run, and --resume after --stop-after follows exactly
the uninterrupted trajectory (every rank loads rank 0's checkpoint)."""
import os

import pytest

import minigrad as mg
from mpi_helpers import REPO, requires_mpi, run_mpi

DATA = os.environ.get("MINIGRAD_DATA") or str(REPO.parent / "shared" / "data")
needs_mnist = pytest.mark.skipif(not os.path.isdir(os.path.join(DATA, "mnist-10k")),
                                 reason=f"shared MNIST data not found under {DATA}")
EXAMPLE = REPO / "examples" / "mnist_ddp.py"


def run(out, *extra):
    proc = run_mpi(EXAMPLE, "--data", DATA, "--epochs", 2, "--limit", 256, "--test-limit", 200,
                   "--batch-size", 32, "--no-progress", "--out", out, *extra)
    assert proc.returncode == 0, f"mnist_ddp.py {extra} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@requires_mpi
@needs_mnist
def test_mnist_ddp_runs_and_resumes_exactly(tmp_path):
    out = run(tmp_path / "full")
    assert out.count("MNIST CNN, DDP on 2 ranks") == 1  # only rank 0 prints
    assert out.count("data: ") == 1 and out.count("config: minigrad ") == 1  # not once per rank
    assert "16 per rank" in out and "final test accuracy" in out
    full = mg.load(tmp_path / "full" / "checkpoint.mg")
    assert full["world_size"] == 2 and full["epoch"] == 2
    run(tmp_path / "cut", "--stop-after", 1)
    assert mg.load(tmp_path / "cut" / "checkpoint.mg")["epoch"] == 1
    out = run(tmp_path / "cut", "--resume")
    assert "resumed from" in out
    cut = mg.load(tmp_path / "cut" / "checkpoint.mg")
    assert cut["history"]["train_loss"] == full["history"]["train_loss"]
    assert cut["history"]["test_acc"] == full["history"]["test_acc"]
    for k, v in full["model"].items():
        assert (cut["model"][k].numpy() == v.numpy()).all(), k
