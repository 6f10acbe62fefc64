"""Shared pytest set-up: make tests/helpers.py importable and keep hypothesis quick on small machines."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    from hypothesis import settings
except ImportError:  # hypothesis is a test extra; modules that need it importorskip it
    pass
else:
    # deadline=None: timings on a shared 2-core machine are too noisy for per-example deadlines
    settings.register_profile("minigrad", max_examples=40, deadline=None)
    settings.register_profile("thorough", max_examples=500, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "minigrad"))
