"""Deflate bombs, lying sizes, path tricks and truncations never load and never inflate (issue 31
item 5): mg.load and mg.load_graph read zips through minigrad/_safezip.py, which checks each
member's declared size against a cap (the JSON manifest: 64 MiB) or the manifest's dtype and shape
(arrays: stored, never compressed) before inflating, and against what deflate can produce at all.

The crafted files are built here; they are loaded in a subprocess under an address-space limit and
a time limit, so a regression fails the test instead of exhausting the machine."""
import json
import os
import re
import struct
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import minigrad as mg
from minigrad import serialization as ser
from minigrad.graph import GraphFormatError

BOMB = 65 << 20  # bytes a bomb inflates to: over the 64 MiB manifest cap, 300 KB on disk


def _bomb_zip(path, manifest_name, head, size=BOMB):
    """A zip whose manifest is `head` followed by `size` bytes of JSON whitespace, deflated."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open(manifest_name, "w", force_zip64=True) as f:
            f.write(head.encode())
            block = b" " * (1 << 20)
            for _ in range(size >> 20):
                f.write(block)
    return path


def _patch_central_size(path, name, size):
    """Make the central directory declare `size` uncompressed bytes for member `name` (a lying header)."""
    blob = bytearray(path.read_bytes())
    cd = blob.index(b"PK\x01\x02")
    while True:
        n = struct.unpack("<H", blob[cd + 28:cd + 30])[0]
        if blob[cd + 46:cd + 46 + n].decode() == name:
            break
        cd = blob.index(b"PK\x01\x02", cd + 4)
    extra = struct.unpack("<H", blob[cd + 30:cd + 32])[0]
    if struct.unpack("<I", blob[cd + 24:cd + 28])[0] == 0xFFFFFFFF:  # zip64: the size is in the extra field
        x = cd + 46 + n
        end = x + extra
        while x < end:
            tag, ln = struct.unpack("<HH", blob[x:x + 4])
            if tag == 1:
                blob[x + 4:x + 12] = struct.pack("<Q", size)
                break
            x += 4 + ln
    else:
        blob[cd + 24:cd + 28] = struct.pack("<I", size)
    path.write_bytes(bytes(blob))
    return path


def _with_members(src, dst, compress=(), rename=None):
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w") as zo:
        for n in zi.namelist():
            data = zi.read(n)
            zo.writestr((rename or {}).get(n, n), data,
                        zipfile.ZIP_DEFLATED if n in compress else zipfile.ZIP_STORED)
    return dst


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    d = tmp_path_factory.mktemp("bombs")
    ck_head = json.dumps({"format": ser.FORMAT, "version": 2, "root": {"t": "none"}})
    g = mg.graph.trace(lambda x: (x * 2).relu() + mg.ones(3), mg.randn(3))
    g.save(d / "g.mgg")
    mg.save({"w": mg.ones(1000)}, d / "c.mg")
    with zipfile.ZipFile(d / "g.mgg") as zf:
        gjson = zf.read("graph.json").decode()
    cases = {
        # (file, loader, message)
        "checkpoint manifest bomb": (_bomb_zip(d / "cb.mg", "minigrad.json", ck_head), "load", "over the limit"),
        "graph manifest bomb": (_bomb_zip(d / "gb.mgg", "graph.json", gjson), "load_graph", "over the limit"),
        "checkpoint bomb declaring 1 KB": (_patch_central_size(_bomb_zip(d / "cl.mg", "minigrad.json", ck_head,
                                                                         4 << 20), "minigrad.json", 1000),
                                           "load", "corrupt|longer"),
        "graph bomb declaring 60 MB from 2 KB": (_patch_central_size(_bomb_zip(d / "gl.mgg", "graph.json", gjson,
                                                                               2 << 20), "graph.json", 60 << 20),
                                                 "load_graph", "more than deflate can produce"),
        "graph array deflated": (_with_members(d / "g.mgg", d / "gz.mgg", compress={"arrays/0.npy"}),
                                 "load_graph", "arrays/0.npy is corrupt"),
        "checkpoint array deflated": (_with_members(d / "c.mg", d / "cz.mg", compress={"arrays/0.npy"}),
                                      "load", "arrays/0.npy is corrupt"),
        "graph member ../x": (_with_members(d / "g.mgg", d / "gp.mgg", rename={"arrays/0.npy": "../evil"}),
                              "load_graph", "not a plain relative path"),
        "checkpoint member /etc/x": (_with_members(d / "c.mg", d / "cp.mg", rename={"arrays/0.npy": "/etc/x"}),
                                     "load", "not a plain relative path"),
    }
    for src, loader in ((d / "g.mgg", "load_graph"), (d / "c.mg", "load")):
        blob = src.read_bytes()
        for k in (0, 10, 30, len(blob) // 3, len(blob) // 2, len(blob) - 30, len(blob) - 1):
            p = d / f"t{k}{src.suffix}"
            p.write_bytes(blob[:k])
            cases[f"{src.name} truncated at {k}"] = (p, loader, "")
    return cases


def test_bombs_truncations_and_path_tricks_never_load(crafted):
    files = {k: (str(p), loader) for k, (p, loader, _) in crafted.items()}
    child = textwrap.dedent("""
        import json, resource, sys, time
        import minigrad as mg
        files = json.loads(sys.argv[1])
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as f:
            vm = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (vm + (400 << 20), hard))   # 400 MB more than now
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = {}
        for name, (path, loader) in files.items():
            t = time.perf_counter()
            try:
                getattr(mg, loader)(path)
                out[name] = ["loaded", ""]
            except Exception as e:
                out[name] = [type(e).__name__, str(e)]
            out[name].append(time.perf_counter() - t)
        out["peak growth KB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
        print(json.dumps(out))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", child, json.dumps(files)], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout.splitlines()[-1])
    assert res.pop("peak growth KB") < 50_000  # nothing near the 65 MB a bomb holds
    for name, (kind, msg, seconds) in res.items():
        loader, match = crafted[name][1], crafted[name][2]
        want = "GraphFormatError" if loader == "load_graph" else "CheckpointError"
        assert kind == want, (name, kind, msg)
        assert crafted[name][0].name in msg and seconds < 5, (name, msg, seconds)
        if match:
            assert re.search(match, msg), (name, msg)


def test_the_limits_leave_real_files_alone(tmp_path):
    # a real manifest near the cap's scale is not what the cap is for: ordinary files load
    g = mg.graph.trace(lambda x: x * mg.arange(4000.0), mg.randn(4000))
    g.save(tmp_path / "g.mgg")
    x = mg.randn(4000)
    assert np.array_equal(mg.load_graph(tmp_path / "g.mgg").run(x).numpy(), g(x).numpy())
    with pytest.raises(GraphFormatError, match="over the limit"):
        from minigrad import _safezip

        def fail(msg):
            raise GraphFormatError(msg)
        with zipfile.ZipFile(tmp_path / "g.mgg") as zf:
            _safezip.read_member(zf, zf.getinfo("graph.json"), 10, fail)
