import os
from pathlib import Path

import pytest


def _shared_data_dir():
    candidates = []
    if os.environ.get("MINIGRAD_DATA"):
        candidates.append(Path(os.environ["MINIGRAD_DATA"]))
    # tests/data/conftest.py -> parents[2] is the project root; the shared folder lies beside it
    candidates.append(Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
    for c in candidates:
        if (c / "mnist-10k").is_dir() or (c / "fashion-mnist").is_dir():
            return c.resolve()
    return None


@pytest.fixture(scope="session")
def shared_data():
    d = _shared_data_dir()
    if d is None:
        pytest.skip("shared data folder (../shared/data or $MINIGRAD_DATA) not found")
    return d


@pytest.fixture(scope="session")
def mnist_dir(shared_data):
    d = shared_data / "mnist-10k"
    if not d.is_dir():
        pytest.skip(f"{d} not found")
    return d


@pytest.fixture(scope="session")
def fashion_dir(shared_data):
    d = shared_data / "fashion-mnist"
    if not d.is_dir():
        pytest.skip(f"{d} not found")
    return d
