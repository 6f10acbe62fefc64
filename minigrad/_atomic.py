"""atomic_write: write a file so that a crash (or an error) mid-write leaves the old file intact.

The temporary file sits next to the target and is named ``.<target name>.<pid>-<random><suffix>``
(e.g. ``.ckpt.mg.4242-9f3a1c0e.tmp``), so it is recognisably ours. A process killed mid-write
cannot remove its temporary file; the next ``atomic_write`` to the same target does: it removes
the temporaries of that target whose writer process is gone, or that nobody has written to for
``STALE_AFTER`` seconds (a reused pid, another machine on a shared disk). Nothing else is touched.
"""
import errno
import os
import re
import secrets
import stat
import time
from contextlib import contextmanager
from pathlib import Path

STALE_AFTER = 600.0  # seconds without a write after which a live-looking temporary counts as stale


def _pid_alive(pid):
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    except OSError:  # e.g. Windows without that pid
        return False
    return True


def _temp_pattern(path, suffix):
    return re.compile(re.escape(f".{path.name}.") + r"(\d+)-[0-9a-f]{8}" + re.escape(suffix))


def clean_stale_temps(path, suffix=".tmp"):
    """Remove the temporary files left next to ``path`` by crashed atomic writes to it."""
    path = Path(path)
    pattern = _temp_pattern(path, suffix)
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    now = time.time()
    for name in names:
        m = pattern.fullmatch(name)
        if m is None:
            continue
        tmp = path.parent / name
        try:
            st = os.lstat(tmp)
            if not stat.S_ISREG(st.st_mode):
                continue
            pid = int(m.group(1))
            if (pid != os.getpid() and not _pid_alive(pid)) or now - st.st_mtime > STALE_AFTER:
                os.unlink(tmp)
        except OSError:  # gone already, or not ours to remove
            pass


def _create_temp(path, suffix):
    """Open a fresh temporary file next to path, created like open(path, "wb") would be: mode
    0o666 minus the umask (0644 under umask 022), or the target's mode if it already exists."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}{suffix}"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))  # overwriting keeps the file's mode
        except OSError:  # no target yet (or a mode we may not copy): the umask's mode stays
            pass
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(path))


@contextmanager
def atomic_write(path, suffix=".tmp"):
    """Yield a binary file in path's folder. On a clean exit it is fsynced and renamed onto path;
    if the block raises (a crash, a failed checksum) it is removed and path is left untouched."""
    path = Path(path)
    clean_stale_temps(path, suffix)
    fd, tmp = _create_temp(path, suffix)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
