"""mg.show_config() / mg.__config__ (issue 32 item 6): what the process computes with."""
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad import _config, kernels


def test_show_config_prints_the_report_once_and_returns_none(capsys):
    assert mg.show_config() is None  # None: an interactive prompt shows the report once, not twice
    out = capsys.readouterr().out
    assert out == mg.__config__.show() + "\n"
    assert out.startswith(f"minigrad {mg.__version__} (Python ")
    assert f"numpy {np.__version__}" in out and "BLAS: " in out and "cores available" in out


def test_numba_installed_on_off_and_missing(monkeypatch):
    if _config._version("numba") is not None:
        monkeypatch.setattr(kernels, "_enabled", True)
        assert f"numba {_config._version('numba')}: on" in _config.show()
        monkeypatch.setattr(kernels, "_enabled", False)
        assert ": installed, off (by MINIGRAD_NUMBA=0" in _config.show()
        assert " off, BLAS" in _config.summary()
    real = _config._version
    monkeypatch.setattr(_config, "_version", lambda d: None if d == "numba" else real(d))
    text = _config.show()
    assert 'numba: not installed: pip install -e ".[jit]"' in text
    assert "numba not installed" in _config.summary()


def test_blas_threads_from_threadpoolctl():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    blas = [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]
    if not blas:
        pytest.skip("threadpoolctl sees no BLAS in this process")
    lib = blas[0]
    assert f"BLAS: {lib['internal_api']} {lib['version']}" in _config.show()
    assert f"{lib['num_threads']} threads" in _config.show()
    assert f"{lib['num_threads']} threads" in _config.parallel_info()


def test_blas_falls_back_to_numpy_show_config(monkeypatch):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import raises ImportError
    b = _config._blas()
    assert b["source"] == "numpy.show_config" and b["threads"] is None
    built = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    assert b["library"] == built["name"]
    assert "threads unknown (pip install threadpoolctl" in _config.show()


def test_summary_is_one_line_naming_the_essentials():
    line = _config.summary()
    assert "\n" not in line
    assert line.startswith(f"minigrad {mg.__version__}, numpy {np.__version__}, numba")
    assert "BLAS" in line and line.endswith(" cores")
