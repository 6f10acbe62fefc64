"""First run on a fresh machine: where the data is looked for, and the download when it is nowhere.

Everything runs against tiny fake IDX files served by an HTTP server on 127.0.0.1 (never the
internet); the dataset classes' published MD5s are swapped for the fake files' own, so the
checksum check still runs. "A fresh machine" means: no ``$MINIGRAD_DATA``, no ``../shared/data``
(``paths.checkout_data_dir`` patched to None) and an empty ``$XDG_CACHE_HOME``.
"""
import functools
import gzip
import hashlib
import http.server
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from minigrad.data.datasets import MNIST, DownloadError, FashionMNIST, paths
from minigrad.data.datasets import mnist as mnist_mod

REPO = Path(__file__).resolve().parents[1]
N_TRAIN, N_TEST = 96, 40


def _idx_gz(arr, ndim_code):
    header = bytes([0, 0, 0x08, ndim_code]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    return gzip.compress(header + arr.astype(np.uint8).tobytes(), mtime=0)


def write_fake_mnist(folder, seed=0):
    """The four gzipped IDX files, small; returns {name: md5}."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for split, n in (("train", N_TRAIN), ("t10k", N_TEST)):
        labels = rng.integers(0, 10, n)
        # images that depend on the label, so a model can learn something from them
        images = rng.integers(0, 60, (n, 28, 28)) + (labels[:, None, None] * 20)
        files[f"{split}-images-idx3-ubyte"] = _idx_gz(images, 3)
        files[f"{split}-labels-idx1-ubyte"] = _idx_gz(labels, 1)
    md5 = {}
    for name, raw in files.items():
        (folder / (name + ".gz")).write_bytes(raw)
        md5[name] = hashlib.md5(raw).hexdigest()
    return md5


def fake_resources(md5):
    return {True: tuple((n, md5[n]) for n in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")),
            False: tuple((n, md5[n]) for n in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))}


class _Handler(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        _Handler.requests.append(self.path)
        super().do_GET()


@pytest.fixture
def mirror(tmp_path):
    """(base URL, {name: md5}) of a loopback server holding fake MNIST files."""
    md5 = write_fake_mnist(tmp_path / "mirror")
    _Handler.requests = []
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(tmp_path / "mirror")))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", md5
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def fresh_machine(tmp_path, monkeypatch):
    """No $MINIGRAD_DATA, no ../shared/data, an empty cache under tmp_path/cache."""
    monkeypatch.delenv("MINIGRAD_DATA", raising=False)
    monkeypatch.delenv("MINIGRAD_MNIST_URL", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(paths, "checkout_data_dir", lambda: None)
    monkeypatch.setattr(mnist_mod, "DEBIAN_FASHION_MNIST_DIR", tmp_path / "no-debian")
    return tmp_path / "cache" / "minigrad"


# ---- where the data is looked for

def test_cache_dir_honours_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir() == tmp_path / "xdg" / "minigrad"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert paths.cache_dir() == tmp_path / "home" / ".cache" / "minigrad"


def test_checkout_data_dir_is_the_shared_folder_beside_the_repo():
    d = paths.checkout_data_dir()
    shared = REPO.parent / "shared" / "data"
    assert d == (shared if shared.is_dir() else None)


def test_resolution_order(tmp_path, monkeypatch, fresh_machine):
    shared = tmp_path / "shared"
    write_fake_mnist(shared / "mnist-10k", seed=1)
    write_fake_mnist(fresh_machine / "MNIST" / "raw", seed=2)
    first_label = {}
    for name, seed in (("shared", 1), ("cache", 2)):
        first_label[name] = int(np.random.default_rng(seed).integers(0, 10, N_TRAIN)[0])

    # no shared folder: the cache
    assert MNIST().folder == fresh_machine / "MNIST" / "raw"
    # a checkout's shared folder comes before the cache
    monkeypatch.setattr(paths, "checkout_data_dir", lambda: shared)
    assert paths.default_roots() == [shared, fresh_machine]
    ds = MNIST()
    assert ds.folder == shared / "mnist-10k" and int(ds.targets[0]) == first_label["shared"]
    # $MINIGRAD_DATA alone, before both
    env = tmp_path / "env"
    monkeypatch.setenv("MINIGRAD_DATA", str(env))
    assert paths.default_roots() == [env]
    with pytest.raises(RuntimeError, match="dataset not found"):
        MNIST()
    write_fake_mnist(env, seed=3)
    assert MNIST().folder == env
    # an explicit root alone, before everything
    with pytest.raises(RuntimeError, match="dataset not found"):
        MNIST(tmp_path / "explicit")
    assert MNIST(shared).folder == shared / "mnist-10k"


# ---- the download, and the messages when there is none

def test_download_into_the_cache_then_reuse(mirror, fresh_machine, monkeypatch):
    url, md5 = mirror
    monkeypatch.setattr(MNIST, "resources", fake_resources(md5))
    train = MNIST(train=True, download=True, base_url=url)
    test = MNIST(train=False, download=True, base_url=url)
    raw = fresh_machine / "MNIST" / "raw"
    assert train.folder == raw and len(train) == N_TRAIN and len(test) == N_TEST
    assert sorted(p.name for p in raw.iterdir()) == sorted(n + ".gz" for n in md5)  # no .part left
    assert sorted(_Handler.requests) == sorted(f"/{n}.gz" for n in md5)
    MNIST(train=True, download=True, base_url=url)
    assert len(_Handler.requests) == 4  # found in the cache: nothing fetched again


def test_download_into_minigrad_data_when_set(mirror, fresh_machine, monkeypatch, tmp_path):
    url, md5 = mirror
    monkeypatch.setattr(MNIST, "resources", fake_resources(md5))
    monkeypatch.setenv("MINIGRAD_DATA", str(tmp_path / "mine"))
    monkeypatch.setenv("MINIGRAD_MNIST_URL", url)
    assert MNIST(train=False, download=True).folder == tmp_path / "mine" / "MNIST" / "raw"
    assert not fresh_machine.exists()


def _closed_port_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"  # nothing listens there now: connection refused


def _assert_names_every_file_once(msg, raw, cls=MNIST):
    # issue 32 item 4: all four files (both splits) in one message, the cache folder to put them
    # in, their MD5s, and one command that fetches them on a machine with network access
    assert f"put these 4 files into {raw}:" in msg
    for split in (True, False):
        for name, md5 in cls.resources[split]:
            assert f"{name}.gz (MD5 {md5})" in msg
    command = msg[msg.index("curl -fL --remote-name-all "):].splitlines()[0].split()
    assert sorted(command[3:]) == sorted(cls.mirrors[0] + n + ".gz" for s in (True, False)
                                         for n, _ in cls.resources[s])
    assert "shared" not in msg


def test_offline_error_says_which_files_go_where(fresh_machine):
    with pytest.raises(DownloadError) as info:
        MNIST(train=True, download=True, base_url=_closed_port_url())
    msg = str(info.value)
    raw = fresh_machine / "MNIST" / "raw"
    assert "Offline?" in msg
    assert f"put these 4 files into {raw}:" in msg and "train-images-idx3-ubyte.gz" in msg and "t10k-labels" in msg
    assert not any(raw.glob("*")) if raw.exists() else True  # nothing half-written


def test_not_found_without_download_says_which_files_go_where(fresh_machine):
    with pytest.raises(RuntimeError, match="dataset not found") as info:
        FashionMNIST(train=False)
    msg = str(info.value)
    assert isinstance(info.value, mnist_mod.DatasetNotFoundError)
    assert "download=True" in msg
    _assert_names_every_file_once(msg, fresh_machine / "FashionMNIST" / "raw", FashionMNIST)


def test_not_found_names_only_what_is_missing(fresh_machine, tmp_path):
    # the training split placed (e.g. after a first message): only the test files are asked for
    write_fake_mnist(fresh_machine / "MNIST" / "raw")
    for name, _ in MNIST.resources[False]:
        (fresh_machine / "MNIST" / "raw" / (name + ".gz")).unlink()
    assert len(MNIST(train=True)) == N_TRAIN
    with pytest.raises(mnist_mod.DatasetNotFoundError) as info:
        MNIST(train=False)
    assert [n for n, _ in info.value.missing] == [n + ".gz" for n, _ in MNIST.resources[False]]
    assert "put these 2 files into" in str(info.value)


def test_example_offline_names_every_file_at_once(tmp_path):
    # README's main example on a fresh machine with --no-download: one message, every file, and
    # no "download=True" (the example's switch is --no-download)
    env = {k: v for k, v in os.environ.items() if k not in ("MINIGRAD_DATA", "XDG_CACHE_HOME")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, "MNIST", repr(MNIST.resources), str(REPO / "examples" / "mnist_mlp.py"),
         "--no-download", "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
        cwd=REPO, env=env)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    msg = proc.stderr
    assert "download=True" not in msg and "Run without --no-download to download them" in msg
    _assert_names_every_file_once(msg, tmp_path / "cache" / "minigrad" / "MNIST" / "raw")


# ---- README's main command on a fresh machine

DRIVER = """
import os, runpy, sys
from minigrad.data.datasets import paths, mnist
paths.checkout_data_dir = lambda: None                      # a fresh clone: no ../shared/data
mnist.DEBIAN_FASHION_MNIST_DIR = mnist.Path("/nonexistent")
getattr(mnist, sys.argv[1]).resources = eval(sys.argv[2])   # the fake files' MD5s
sys.argv = sys.argv[3:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize("script, cls, url_env", [
    ("mnist_mlp.py", "MNIST", "MINIGRAD_MNIST_URL"),
    ("fashion_mnist.py", "FashionMNIST", "MINIGRAD_FASHION_MNIST_URL"),
])
def test_example_first_run_downloads_into_the_cache(mirror, tmp_path, script, cls, url_env):
    url, md5 = mirror
    env = {k: v for k, v in os.environ.items() if k not in ("MINIGRAD_DATA", "XDG_CACHE_HOME")}
    env.update({"XDG_CACHE_HOME": str(tmp_path / "cache"), url_env: url, "MPLBACKEND": "Agg"})

    def run(out):
        proc = subprocess.run(
            [sys.executable, "-c", DRIVER, cls, repr(fake_resources(md5)),
             str(REPO / "examples" / script), "--epochs", "1", "--no-progress", "--out", str(out)],
            capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    out = run(tmp_path / "run1")
    raw = tmp_path / "cache" / "minigrad" / cls / "raw"
    assert f"data: {raw}: {N_TRAIN} training images, a {N_TRAIN}-image subset of the official 60,000" in out
    assert "final test accuracy:" in out and (tmp_path / "run1" / "checkpoint.mg").is_file()
    assert sorted(_Handler.requests) == sorted(f"/{n}.gz" for n in md5)
    out = run(tmp_path / "run2")  # the second run finds the cache
    assert f"data: {raw}:" in out and len(_Handler.requests) == 4
