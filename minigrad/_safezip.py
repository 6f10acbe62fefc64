"""Reading minigrad's zip containers (checkpoints, graph files) without trusting what they declare.

A zip archive states each member's sizes and compression in its directory; zipfile inflates what it
is asked to, so a 2 MB file of deflated zeros can make a reader allocate gigabytes (a "deflate
bomb"). Everything here is checked before a byte is inflated or allocated:

- member names: plain relative paths (no absolute path, ``..``, backslash, control character or
  duplicate), at most ``MAX_MEMBERS`` members;
- compression: stored, or deflate whose declared size is at most ``MAX_RATIO`` times its compressed
  size (deflate cannot do better than ~1032:1, so a larger claim is a lie) and at most the caller's
  cap; zipfile never returns more than the declared size, and reads here stream in blocks;
- arrays (``read_npy``): stored only, the ``.npy`` header compared byte for byte with the one the
  manifest's dtype and shape imply (never parsed), the member's length equal to header + data, then
  the data read in blocks into one array and its SHA-256 compared with the manifest's.

Errors are raised through the caller's ``fail(message)`` (CheckpointError, GraphFormatError).
"""
import hashlib
import io
import re
import zipfile

import numpy as np

MAX_MEMBERS = 1 << 20
MAX_RATIO = 1100              # deflate's best is ~1032:1
MANIFEST_CAP = 64 << 20       # bytes of JSON manifest read at most
_BLOCK = 1 << 22
_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*")
# a plain (non-structured, non-object) dtype as numpy's dtype.str spells it: '<f4', '|b1', '<U7', '<M8[ns]'
DTYPE_RE = re.compile(r"[<>|][biufcSUVmM]\d{1,6}(\[[0-9a-zA-Z]{1,8}\])?")
SHA_RE = re.compile(r"[0-9a-f]{64}")


def members(zf, fail):
    """name -> ZipInfo of the archive's members, after checking names, count and compression."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        fail(f"too many members ({len(infos)})")
    out = {}
    for info in infos:
        n = info.filename
        if len(n) > 255 or not _NAME_RE.fullmatch(n) or any(p in (".", "..") for p in n.split("/")):
            fail(f"member name {n!r:.80} is not a plain relative path")
        if n in out:
            fail(f"duplicate member {n!r}")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            fail(f"member {n} uses compression method {info.compress_type} (only stored or deflate)")
        if info.flag_bits & 0x1:
            fail(f"member {n} is encrypted")
        out[n] = info
    return out


def read_member(zf, info, cap, fail):
    """The bytes of member `info`, at most `cap` of them: its declared size is checked against the cap
    (and, when deflated, against what deflate can produce) before anything is inflated, and it is
    read in blocks; the zip CRC is checked at its end."""
    n = info.filename
    if info.file_size > cap:
        fail(f"member {n} declares {info.file_size} bytes, over the limit of {cap}")
    if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
        fail(f"member {n} is corrupt (stored with differing sizes)")
    if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        fail(f"member {n} declares {info.file_size} bytes from {info.compress_size} compressed "
             f"(more than deflate can produce): a deflate bomb or a corrupt file")
    out, extra, err = bytearray(), b"", None
    try:
        with zf.open(info) as f:
            while len(out) < info.file_size:
                b = f.read(min(_BLOCK, info.file_size - len(out)))
                if not b:
                    break
                out += b
            extra = f.read(1)  # the end of the member, where zipfile checks the CRC
    except Exception as e:  # noqa: BLE001 - zipfile/zlib report corruption in several types
        err = e
    if err is not None:
        fail(f"member {n} is corrupt ({type(err).__name__}: {err})")
    if len(out) < info.file_size:
        fail(f"member {n} is truncated")
    if extra:
        fail(f"member {n} is longer than declared")
    return bytes(out)


def npy_header(dtype, shape):
    """The exact bytes numpy writes before the data of a C-ordered array of this dtype and shape."""
    d = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": tuple(shape)}
    buf = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buf, d)
    except ValueError:  # header over 64 KiB: numpy's format 2.0
        buf = io.BytesIO()
        np.lib.format.write_array_header_2_0(buf, d)
    return buf.getvalue()


def check_array_entry(dtype, shape, sha, fail, what, dtypes=None):
    """The np.dtype of a manifest's array entry after checking its fields' types and ranges."""
    if not (isinstance(dtype, str) and DTYPE_RE.fullmatch(dtype) and isinstance(sha, str)
            and SHA_RE.fullmatch(sha) and isinstance(shape, list) and len(shape) <= 64
            and all(type(n) is int and 0 <= n < 1 << 62 for n in shape)):
        fail(f"malformed manifest entry for {what} (dtype {dtype!r:.40}, shape {shape!r:.80})")
    dt = np.dtype(dtype)
    if dt.hasobject or dt.str != dtype or (dtypes is not None and dt.name not in dtypes):
        fail(f"malformed manifest entry for {what} (dtype {dtype!r})")
    return dt


def read_npy(zf, info, dt, shape, sha, archive_size, fail):
    """The array of stored member `info`, which must be the .npy of dtype dt and shape (C order)
    whose SHA-256 is sha: sizes checked against the archive before allocating, header bytes compared,
    data hashed."""
    member = info.filename
    header = npy_header(dt, shape)
    nbytes = dt.itemsize
    for n in shape:
        nbytes *= n
    if info.compress_type != zipfile.ZIP_STORED or info.file_size != len(header) + nbytes \
            or info.compress_size != info.file_size or info.header_offset + info.file_size > archive_size:
        fail(f"array {member} is corrupt (its size in the archive does not match "
             f"dtype {dt.str} and shape {tuple(shape)} in the manifest)")
    h = hashlib.sha256()
    try:
        arr = _read_npy_data(zf, info, header, nbytes, dt, shape, h)
    except _Bad as e:
        fail(f"array {member} {e}")
    except Exception as e:  # noqa: BLE001 - zipfile/zlib report corruption in several types
        fail(f"array {member} is corrupt ({type(e).__name__}: {e})")
    if h.hexdigest() != sha:
        fail(f"array {member} is corrupt (SHA-256 mismatch)")
    return arr


class _Bad(Exception):
    pass


def _read_npy_data(zf, info, header, nbytes, dt, shape, h):
    with zf.open(info) as f:
        got = f.read(len(header))
        if got != header:
            if b"'descr': '|O'" in got:
                raise _Bad("cannot be read without pickle (object dtype)")
            raise _Bad(f"is corrupt (its .npy header does not match dtype {dt.str} and shape "
                       f"{tuple(shape)} in the manifest)")
        h.update(got)
        arr = np.empty(shape, dt)
        flat = arr.reshape(-1).view(np.uint8)
        for start in range(0, nbytes, _BLOCK):
            chunk = f.read(min(_BLOCK, nbytes - start))
            if len(chunk) != min(_BLOCK, nbytes - start):
                raise _Bad("is truncated")
            flat[start:start + len(chunk)] = np.frombuffer(chunk, np.uint8)
            h.update(chunk)
        if f.read(1):  # also the end of the member, where zipfile checks its CRC
            raise _Bad("is corrupt (longer than its header says)")
    return arr
