"""The on-disk cache of fused kernels is verified before use (issue 31 item 2).

A cached module is executed from the source minigrad regenerates (never from the file, never from
a bytecode cache) and rewritten when the file differs; numba's cache files (its index is a pickle)
are used only when they match the SHA-256 recorded when they were written; folders are created
0700 and refused when another user owns them, others may write them, or they are links. Every
refusal is a CacheWarning and the kernel still computes the right result."""
import json
import os
import shutil
import stat
import tempfile

import numpy as np
import pytest

import minigrad as mg
from minigrad.compiler.passes.fuse import fuse_elementwise
from minigrad.kernels import fused

pytestmark = pytest.mark.skipif(fused.numba_or_none() is None, reason="numba is an optional extra")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache folder and temporary folder; nothing loaded in this process is reused."""
    monkeypatch.setenv("MINIGRAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    os.makedirs(tmp_path / "tmp")
    monkeypatch.setattr(fused, "_loaded", {})
    monkeypatch.setattr(fused, "_private", [])
    return tmp_path / "cache" / "kernels"


def _fn(a):
    return ((a * 3.0 - 1.0) * a).relu() + 0.25


def _kernel():
    """(the fused kernel of _fn, a function running it on x)."""
    g = mg.graph.trace(_fn, mg.randn(77))
    h = fuse_elementwise(g, backend="numba", min_size=1)
    return h.eqns[0].fn._fast, h


def _check(h):
    x = mg.randn(77)
    np.testing.assert_array_equal(h(x).numpy(), _fn(x).numpy())


def _evil(marker):
    # what a planted module would do: run code at import, and compute something else
    return (f"open({str(marker)!r}, 'w').write('ran')\n"
            "import numba\n@numba.njit\ndef kernel(*a):\n    pass\n")


def test_folder_is_private_and_a_kernel_runs_from_its_regenerated_source(cache, tmp_path):
    k, h = _kernel()
    _check(h)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    src = cache / f"{k._stem}.py"
    assert src.read_text() == k.source
    # the numba files written on the first call are recorded with their SHA-256
    manifest = json.loads((cache / f"{k._stem}.json").read_text())["numba"]
    assert manifest and all(n.endswith((".nbi", ".nbc")) for n in manifest)


@pytest.mark.parametrize("content", ["evil", "", "truncated"])
def test_an_edited_corrupt_or_empty_cached_kernel_is_rewritten(cache, tmp_path, monkeypatch, content):
    k, _ = _kernel()
    path = cache / f"{k._stem}.py"
    marker = tmp_path / "pwned"
    path.write_text({"evil": _evil(marker), "": "", "truncated": k.source[:40]}[content])
    monkeypatch.setattr(fused, "_loaded", {})
    with pytest.warns(fused.CacheWarning, match="not the source minigrad generates"):
        k2, h = _kernel()
    _check(h)
    assert not marker.exists()
    assert path.read_text() == k2.source


def test_a_tampered_or_unrecorded_numba_cache_is_removed(cache, monkeypatch):
    k, h = _kernel()
    _check(h)  # compiles and writes numba's index and machine code, recorded in the manifest
    folder, names = fused._numba_files(k.fn, k._stem)
    index = [n for n in names if n.endswith(".nbi")][0]
    with open(os.path.join(folder, index), "ab") as f:
        f.write(b"planted")
    monkeypatch.setattr(fused, "_loaded", {})
    with pytest.warns(fused.CacheWarning, match="do not match the SHA-256"):
        k2, h2 = _kernel()
    assert fused._numba_files(k2.fn, k2._stem)[1] == []
    _check(h2)  # compiled again, and recorded again
    (cache / f"{k._stem}.json").unlink()  # files nobody recorded are not trusted either
    monkeypatch.setattr(fused, "_loaded", {})
    with pytest.warns(fused.CacheWarning, match="do not match"):
        _, h3 = _kernel()
    _check(h3)


@pytest.mark.parametrize("why", ["world-writable", "another user", "symlink"])
def test_a_shared_or_foreign_folder_is_not_used(cache, tmp_path, monkeypatch, why):
    k, _ = _kernel()  # learn the kernel's file name; then plant it in folders that must be refused
    name = f"{k._stem}.py"
    marker = tmp_path / "pwned"
    uid = os.getuid()
    fallback = tmp_path / "tmp" / f"minigrad-kernels-{uid}"
    for d in (cache, fallback):
        os.makedirs(d, exist_ok=True)
        (d / name).write_text(_evil(marker))
    if why == "world-writable":
        for d in (cache, fallback):
            os.chmod(d, 0o777)
    elif why == "another user":
        monkeypatch.setattr(os, "getuid", lambda: uid + 1)
        fallback.rename(tmp_path / "tmp" / f"minigrad-kernels-{uid + 1}")
    else:
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        for d in (cache, fallback):
            (tmp_path / "elsewhere" / d.name).mkdir(mode=0o700)
            (tmp_path / "elsewhere" / d.name / name).write_text(_evil(marker))
            shutil.rmtree(d)
            d.symlink_to(tmp_path / "elsewhere" / d.name)
    monkeypatch.setattr(fused, "_loaded", {})
    with pytest.warns(fused.CacheWarning, match="not using the kernel cache"):
        k2, h = _kernel()
    _check(h)
    assert not marker.exists()
    private = fused.kernel_dir()
    assert private not in (str(cache), str(fallback)) and stat.S_IMODE(os.stat(private).st_mode) == 0o700
    assert os.path.exists(os.path.join(private, name))
