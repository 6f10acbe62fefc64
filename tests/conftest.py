"""Shared pytest set-up: make tests/helpers.py importable, keep hypothesis quick on small machines,
and give every test the same random numbers on every run."""
import os
import random
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# One BLAS thread count for the whole run: minigrad lowers BLAS's threads while other processes hold
# the cores (minigrad/_threads.py), and a GEMM's bits can depend on the thread count, so tests that
# compare two paths bit for bit would depend on the machine's load. tests/test_threads.py turns it on.
os.environ.setdefault("MINIGRAD_ADAPTIVE_THREADS", "0")

try:
    from hypothesis import settings
except ImportError:  # hypothesis is a test extra; modules that need it importorskip it
    pass
else:
    # deadline=None: timings on a shared 2-core machine are too noisy for per-example deadlines
    settings.register_profile("minigrad", max_examples=40, deadline=None)
    settings.register_profile("thorough", max_examples=500, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "minigrad"))


@pytest.fixture(autouse=True)
def _seeded_randomness(request):
    """Seed every random source a test may draw from with a number made from the test's id, so that a
    test sees the same inputs on every run, whichever tests ran before it in its process (pytest -n
    deals tests to workers differently from run to run; minigrad's default generator is unseeded, as
    PyTorch's): minigrad's default generator, NumPy's and Python's global ones, torch's when loaded, and
    a test module's own generator (a module-level ``RNG`` or ``rng``), which is replaced for the test."""
    seed = zlib.crc32(request.node.nodeid.encode())
    random.seed(seed)
    np.random.seed(seed)
    mg = sys.modules.get("minigrad")
    if mg is not None:
        mg.manual_seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    module = getattr(request, "module", None)
    for name in ("RNG", "rng"):
        if isinstance(getattr(module, name, None), np.random.Generator):
            setattr(module, name, np.random.default_rng(seed))
