"""The downloader, against a local HTTP server on 127.0.0.1 (never the internet)."""
import functools
import os
import stat
import http.server
import threading

import pytest

from minigrad.data.datasets import MNIST, ChecksumError, DownloadError, download_url, md5sum
from minigrad.data.datasets import download as download_mod


class _Handler(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        _Handler.requests.append(self.path)
        super().do_GET()


@pytest.fixture
def server(mnist_dir):
    _Handler.requests = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(mnist_dir)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _files(folder):
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_download_success_then_cached(tmp_path, server):
    ds = MNIST(tmp_path, train=False, download=True, base_url=server)
    assert len(ds) == 10000 and ds[0][1] == 7
    raw = tmp_path / "MNIST" / "raw"
    assert _files(tmp_path) == ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    assert md5sum(raw / "t10k-labels-idx1-ubyte.gz") == "ec29112dd5afa0611ce80d1b7f02629c"
    assert sorted(_Handler.requests) == ["/t10k-images-idx3-ubyte.gz", "/t10k-labels-idx1-ubyte.gz"]
    MNIST(tmp_path, train=False, download=True, base_url=server)
    assert len(_Handler.requests) == 2  # already there: no second download


def test_download_checksum_mismatch_leaves_nothing(tmp_path, server):
    # the shared train files are a 10k subset, so their MD5 differs from the published one
    with pytest.raises(ChecksumError, match=r"checksum mismatch for http://127.0.0.1:\d+/train-images"):
        MNIST(tmp_path, train=True, download=True, base_url=server)
    assert _files(tmp_path) == []


def test_base_url_from_environment(tmp_path, server, monkeypatch):
    monkeypatch.setenv("MINIGRAD_MNIST_URL", server)
    assert len(MNIST(tmp_path, train=False, download=True)) == 10000
    assert len(_Handler.requests) == 2


def test_http_error(tmp_path, server):
    with pytest.raises(DownloadError, match="404"):
        download_url(server + "no-such-file.gz", tmp_path / "x.gz")
    assert _files(tmp_path) == []


def test_download_url_without_tqdm(tmp_path, server, monkeypatch):
    monkeypatch.setattr(download_mod, "_tqdm", None)
    out = download_url(server + "t10k-labels-idx1-ubyte.gz", tmp_path / "sub" / "labels.gz",
                       md5="ec29112dd5afa0611ce80d1b7f02629c")
    assert out.is_file() and _files(tmp_path) == ["labels.gz"]


def test_checksum_mismatch_keeps_existing_destination(tmp_path, server):
    dest = tmp_path / "labels.gz"
    dest.write_bytes(b"previous")
    with pytest.raises(ChecksumError):
        download_url(server + "t10k-labels-idx1-ubyte.gz", dest, md5="0" * 32)
    assert dest.read_bytes() == b"previous" and _files(tmp_path) == ["labels.gz"]


class _LyingHandler(http.server.BaseHTTPRequestHandler):
    """Announces 1000 bytes, sends 600 and closes the connection (a download cut short)."""
    body = bytes(range(256)) * 4

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(self.body[:600] if self.path == "/short" else self.body[:1000])
        self.wfile.flush()
        self.close_connection = True


@pytest.fixture
def lying_server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _LyingHandler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def test_truncated_download_without_md5_is_refused(tmp_path, lying_server, monkeypatch):
    monkeypatch.setattr(download_mod, "_tqdm", None)
    dest = tmp_path / "f.bin"
    dest.write_bytes(b"previous")
    with pytest.raises(DownloadError, match=r"truncated: got 600 of the 1000 bytes"):
        download_url(lying_server + "short", dest)
    assert dest.read_bytes() == b"previous" and _files(tmp_path) == ["f.bin"]
    # the same server sending the whole announced length is accepted
    out = download_url(lying_server + "full", tmp_path / "g.bin")
    assert out.read_bytes() == _LyingHandler.body[:1000]


def test_downloaded_file_mode_follows_umask(tmp_path, server):
    old = os.umask(0o022)
    try:
        out = download_url(server + "t10k-labels-idx1-ubyte.gz", tmp_path / "labels.gz")
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
