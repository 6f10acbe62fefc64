"""Downloading dataset files: urllib only, MD5-verified, written atomically, tqdm progress if present."""
import hashlib
import http.client
import urllib.error
import urllib.request
from pathlib import Path

from ..._atomic import atomic_write

try:  # optional: a progress bar
    from tqdm.auto import tqdm as _tqdm
except ImportError:  # pragma: no cover - depends on the environment
    _tqdm = None

__all__ = ["ChecksumError", "DownloadError", "download_url", "md5sum"]


class DownloadError(RuntimeError):
    """A file could not be fetched from any mirror."""


class ChecksumError(DownloadError):
    """A downloaded file's MD5 differs from the published one (nothing is left on disk)."""


def md5sum(path, chunk_size=1 << 20):
    """The hex MD5 of the file at ``path``."""
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            h.update(chunk)
    return h.hexdigest()


def download_url(url, dest, md5=None, timeout=60.0, progress=True, chunk_size=1 << 16):
    """Fetch ``url`` to the file ``dest``, atomically: stream into a temporary file in the same
    folder while hashing, check the MD5 (if given), fsync, then ``os.replace`` onto ``dest``.

    Without ``md5``, the byte count is checked against the ``Content-Length`` the server announced.

    Raises:
        ChecksumError: the MD5 differs (the temporary file is removed; ``dest`` is untouched).
        DownloadError: the HTTP request failed, or fewer/more bytes arrived than announced.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.md5()
    with atomic_write(dest, suffix=".part") as out:
        try:
            req = urllib.request.Request(url, headers={"User-Agent": "minigrad"})
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                total = resp.headers.get("Content-Length")
                total = int(total) if total and total.strip().isdigit() else None
                got_bytes = 0
                bar = None
                if progress and _tqdm is not None:
                    bar = _tqdm(total=total, unit="B", unit_scale=True,
                                unit_divisor=1024, desc=dest.name, leave=False,
                                disable=None)  # None: no bar when stderr is not a terminal (a log)
                try:
                    for chunk in iter(lambda: resp.read(chunk_size), b""):
                        out.write(chunk)
                        h.update(chunk)
                        got_bytes += len(chunk)
                        if bar is not None:
                            bar.update(len(chunk))
                finally:
                    if bar is not None:
                        bar.close()
        except http.client.IncompleteRead as e:  # the connection closed before Content-Length bytes
            raise DownloadError(f"download of {url} is truncated: got {got_bytes} of the {total} bytes "
                                f"the server announced; the file was not saved to {dest}") from e
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            raise DownloadError(f"download of {url} failed: {e}") from e
        # without an MD5 the announced length is the only sign of a connection cut short
        if total is not None and got_bytes != total:  # raising here removes the temporary file
            raise DownloadError(f"download of {url} is truncated: got {got_bytes} of the {total} bytes "
                                f"the server announced; the file was not saved to {dest}")
        got = h.hexdigest()
        if md5 is not None and got != md5:  # raising here removes the temporary file
            raise ChecksumError(f"checksum mismatch for {url}: expected MD5 {md5}, got {got}; "
                                f"the file was not saved to {dest}")
    return dest
