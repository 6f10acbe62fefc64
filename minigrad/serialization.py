"""mg.save / mg.load: checkpoints that can never execute code when loaded, and never load corrupt data.

Format (version 2): a zip archive (stored, not compressed) holding ``minigrad.json`` (a manifest:
format name, version, and the object tree as tagged JSON) and one ``.npy`` member per array or
tensor. Supported: dict / OrderedDict (keys: str, int, float, bool, None or tuples of those; int
keys stay int), list, tuple, mg.Tensor (dtype, shape, requires_grad; Parameters come back as
nn.Parameter), numpy arrays and scalars (no object or structured dtypes), bool, int, float,
complex, str, bytes, None; nested at most ``MAX_DEPTH`` levels.

Integrity: the manifest records each array's dtype, shape and the SHA-256 of its whole ``.npy``
member. ``load`` checks the zip CRC of the manifest, compares each member's ``.npy`` header
byte for byte with the one the manifest implies (and its length with the archive's) *before*
allocating, and checks every array's SHA-256 (and CRC). The ``.npy`` header is never parsed with
``eval``/``literal_eval``. Anything corrupt, truncated or foreign raises `CheckpointError`
and nothing else; version-1 files (no hashes) are read only with ``load(..., allow_unverified=True)``
(the zip CRC their only check). Member sizes are checked before anything is inflated
(minigrad/_safezip.py), so a deflate bomb is refused.

Writes to a path are atomic (see ``minigrad._atomic``): a temporary file next to the target is
written, fsynced and ``os.replace``d onto it, so a crash mid-save leaves the previous file intact.
"""
import collections
import hashlib
import io
import json
import os
import zipfile

import numpy as np

from . import _safezip
from ._atomic import atomic_write

import minigrad as mg

__all__ = ["save", "load", "CheckpointError"]

FORMAT = "minigrad.checkpoint"
VERSION = 2
READS = (1, 2)  # versions load() understands
MANIFEST = "minigrad.json"
MAX_DEPTH = 100  # containers nested deeper than this are refused by save and load
_CHUNK = 1 << 22
# a plain (non-structured, non-object) dtype as numpy's dtype.str spells it: '<f4', '|b1', '<U7', '<M8[ns]'
_DTYPE_RE, _SHA_RE = _safezip.DTYPE_RE, _safezip.SHA_RE


class CheckpointError(RuntimeError, ValueError):
    """A file is not a readable minigrad checkpoint (corrupt, truncated, tampered with, or another
    format). The only error ``mg.load`` raises for a bad file; the message names the file."""


_npy_header = _safezip.npy_header  # the .npy header, built (never parsed) from dtype and shape


# ---- encoding: object tree -> (JSON-able tree, list of (array, manifest entry))

def _encode_float(x):
    return float(x).hex()


def _encode_key(k, path):
    if k is None or isinstance(k, (bool, int, float, str)):
        return _encode(k, [], path)
    if isinstance(k, tuple):
        return {"t": "tuple", "v": [_encode_key(e, path) for e in k]}
    raise TypeError(f"mg.save: unsupported dict key {k!r} of type {type(k).__name__} at {path}; "
                    "keys must be str, int, float, bool, None or tuples of those")


def _array_entry(arr, arrays, path, entry):
    if arr.dtype.hasobject or arr.dtype.names is not None or arr.dtype.subdtype is not None:
        kind = "object" if arr.dtype.hasobject else "structured"
        raise TypeError(f"mg.save: numpy arrays of {kind} dtype ({arr.dtype}) cannot be saved safely "
                        f"(found at {path}); convert to a plain numeric dtype first")
    entry.update(file=f"arrays/{len(arrays)}.npy", dtype=arr.dtype.str, shape=list(arr.shape))
    arrays.append((arr, entry))  # the SHA-256 is added to entry when the array is written
    return entry


def _encode(obj, arrays, path="obj", depth=0):
    if depth > MAX_DEPTH:
        raise ValueError(f"mg.save: object nested deeper than {MAX_DEPTH} levels at {path} "
                         "(a reference cycle?)")
    if obj is None:
        return {"t": "none"}
    if isinstance(obj, np.generic):  # before float: np.float64 is a float, and comes back as np.float64
        return _array_entry(np.asarray(obj), arrays, path, {"t": "npscalar"})
    if isinstance(obj, bool):
        return {"t": "bool", "v": obj}
    if isinstance(obj, int):
        return {"t": "int", "v": str(int(obj))}
    if isinstance(obj, float):
        return {"t": "float", "v": _encode_float(obj)}
    if isinstance(obj, complex):
        return {"t": "complex", "v": [_encode_float(obj.real), _encode_float(obj.imag)]}
    if isinstance(obj, str):
        return {"t": "str", "v": obj}
    if isinstance(obj, bytes):
        return {"t": "bytes", "v": obj.hex()}
    if isinstance(obj, mg.Tensor):
        entry = {"t": "tensor", "requires_grad": bool(obj.requires_grad)}
        if type(obj).__name__ == "Parameter":
            entry["parameter"] = True
        return _array_entry(np.asarray(obj._data), arrays, path, entry)
    if isinstance(obj, np.ndarray):
        return _array_entry(obj, arrays, path, {"t": "ndarray"})
    if isinstance(obj, dict):
        return {"t": "odict" if isinstance(obj, collections.OrderedDict) else "dict",
                "v": [[_encode_key(k, path), _encode(v, arrays, f"{path}[{k!r}]", depth + 1)]
                      for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"t": "list" if isinstance(obj, list) else "tuple",
                "v": [_encode(v, arrays, f"{path}[{i}]", depth + 1) for i, v in enumerate(obj)]}
    if callable(getattr(obj, "state_dict", None)):  # a Module, an optimizer, a scheduler...
        kind = type(obj).__name__
        raise TypeError(
            f"mg.save: cannot save a whole {kind} (at {path}): checkpoints hold data, never code; save "
            f"its state_dict() instead, e.g. mg.save(model.state_dict(), 'model.mg'), and restore it "
            f"into a newly built {kind} with .load_state_dict(mg.load('model.mg')), as PyTorch recommends")
    raise TypeError(f"mg.save: cannot save an object of type {type(obj).__name__} (at {path}); "
                    "supported: dict, list, tuple, Tensor, numpy array/scalar, bool, int, float, "
                    "complex, str, bytes, None")


# ---- decoding

class _Reader:
    def __init__(self, zf, name, version, size, members):
        self.zf, self.name, self.version, self.size, self.members = zf, name, version, size, members

    def fail(self, msg):
        raise CheckpointError(f"mg.load: {self.name}: {msg}")

    def member(self, entry):
        member = entry.get("file")
        if not isinstance(member, str) or member not in self.members:
            self.fail(f"manifest refers to a missing array member {member!r}")
        return member, self.members[member]

    def array(self, entry):
        if self.version == 1:
            return self.array_v1(entry)
        member, info = self.member(entry)
        dtype, shape, sha = entry.get("dtype"), entry.get("shape"), entry.get("sha256")
        dt = _safezip.check_array_entry(dtype, shape, sha, self.fail, member)
        return _safezip.read_npy(self.zf, info, dt, shape, sha, self.size, self.fail)

    def array_v1(self, entry):
        member, info = self.member(entry)
        if info.compress_type != zipfile.ZIP_STORED:  # minigrad wrote version 1 stored
            self.fail(f"array {member} is compressed (version 1 arrays are stored)")
        data = _safezip.read_member(self.zf, info, self.size, self.fail)  # checks its CRC
        buf = io.BytesIO(data)
        fmt = np.lib.format
        version = fmt.read_magic(buf)
        shape, fortran, dt = (fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0)(buf)
        if dt.hasobject:
            self.fail(f"array {member} cannot be read without pickle (object dtype)")
        count = 1
        for n in shape:
            count *= n
        if buf.tell() + count * dt.itemsize != len(data):  # before allocating anything
            self.fail(f"array {member} is corrupt (its header does not match its length)")
        arr = np.frombuffer(data, dt, count, buf.tell())
        return arr.reshape(shape[::-1]).transpose() if fortran else arr.reshape(shape).copy()

    def decode(self, e, depth=0):
        if not isinstance(e, dict) or "t" not in e:
            self.fail(f"malformed manifest entry {e!r:.80}")
        if depth > MAX_DEPTH:
            self.fail(f"manifest nested deeper than {MAX_DEPTH} levels")
        t = e["t"]
        try:
            if t == "none":
                return None
            if t == "bool":
                return bool(e["v"])
            if t == "int":
                return int(e["v"])
            if t == "float":
                return float.fromhex(e["v"])
            if t == "complex":
                return complex(float.fromhex(e["v"][0]), float.fromhex(e["v"][1]))
            if t == "str":
                return str(e["v"])
            if t == "bytes":
                return bytes.fromhex(e["v"])
            if t == "tensor":
                arr = self.array(e)
                if e.get("parameter"):
                    from .nn.parameter import Parameter
                    return Parameter(arr, requires_grad=bool(e["requires_grad"]))
                out = mg.from_numpy(arr)
                if e["requires_grad"]:
                    out.requires_grad_(True)
                return out
            if t == "ndarray":
                return self.array(e)
            if t == "npscalar":
                return self.array(e)[()]
            if t in ("dict", "odict"):
                items = ((self.decode(k, depth + 1), self.decode(v, depth + 1)) for k, v in e["v"])
                return collections.OrderedDict(items) if t == "odict" else dict(items)
            if t == "list":
                return [self.decode(v, depth + 1) for v in e["v"]]
            if t == "tuple":
                return tuple(self.decode(v, depth + 1) for v in e["v"])
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as err:
            self.fail(f"malformed manifest entry of type {t!r:.40} ({err!r:.200})")
        self.fail(f"unknown manifest entry type {t!r:.40}")


# ---- public API

def _write_array(f, arr):
    """Write arr as a .npy member (C order); return the SHA-256 of the bytes written."""
    arr = arr if arr.flags.c_contiguous else arr.copy(order="C")  # (ascontiguousarray makes 0-d 1-d)
    h = hashlib.sha256()
    for b in (_npy_header(arr.dtype, arr.shape), arr.reshape(-1).view(np.uint8)):
        f.write(b)
        h.update(b)
    return h.hexdigest()


def _write_zip(fileobj, manifest, arrays):
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for arr, entry in arrays:
            with zf.open(entry["file"], "w", force_zip64=arr.nbytes > (1 << 31) - (1 << 20)) as f:
                entry["sha256"] = _write_array(f, arr)
        zf.writestr(MANIFEST, json.dumps(manifest))  # last: it holds the arrays' hashes


def save(obj, f):
    """Save ``obj`` (e.g. a state_dict) to a path or a writable binary file object.

    Args:
        obj: nested dicts/lists/tuples of Tensors, numpy arrays, numbers, strings and None.
        f (str, os.PathLike or file object): where to write. A path is written atomically.

    Raises:
        TypeError: an unsupported type or a numpy array of object dtype (nothing is written).
        ValueError: containers nested deeper than ``MAX_DEPTH`` (nothing is written).

    Example:
        >>> mg.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, "ckpt.mg")
    """
    arrays = []
    manifest = {"format": FORMAT, "version": VERSION, "root": _encode(obj, arrays)}
    if not isinstance(f, (str, os.PathLike)):
        _write_zip(f, manifest, arrays)
        return
    with atomic_write(f) as out:
        _write_zip(out, manifest, arrays)


def _load(fh, name, allow_unverified=False):
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    fh.seek(0)
    try:
        zf = zipfile.ZipFile(fh, "r")
    except zipfile.BadZipFile as e:
        raise CheckpointError(f"mg.load: {name}: not a minigrad checkpoint, or truncated/corrupt "
                              f"(not a valid zip archive: {e})") from None
    with zf:
        def fail(msg):
            raise CheckpointError(f"mg.load: {name}: {msg}")
        members = _safezip.members(zf, fail)
        if MANIFEST not in members:
            raise CheckpointError(f"mg.load: {name}: not a minigrad checkpoint (no {MANIFEST} inside; "
                                  "files saved by torch.save or pickle cannot be loaded)")
        try:
            manifest = json.loads(_safezip.read_member(zf, members[MANIFEST], _safezip.MANIFEST_CAP, fail)
                                  .decode("utf-8"))  # read_member checks the size cap and the CRC
        except RecursionError:
            raise CheckpointError(f"mg.load: {name}: corrupt manifest (nested too deeply)") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise CheckpointError(f"mg.load: {name}: not a minigrad checkpoint (manifest format tag missing)")
        version = manifest.get("version")
        if version not in READS or isinstance(version, bool):
            raise CheckpointError(f"mg.load: {name}: unsupported checkpoint version {version!r:.40} "
                                  f"(this minigrad reads versions {', '.join(map(str, READS))})")
        if version == 1 and not allow_unverified:
            raise CheckpointError(
                f"mg.load: {name}: a version 1 checkpoint has no SHA-256 of its arrays, so tampering "
                f"cannot be detected (only the zip CRC); if you trust the file, load it with "
                f"mg.load(path, allow_unverified=True) and save it again to get a verified version 2 file")
        return _Reader(zf, name, version, size, members).decode(manifest.get("root"))


def load(f, map_location=None, weights_only=True, *, allow_unverified=False, **kwargs):
    """Load an object saved by [`save()`][minigrad.save] from a path or a readable, seekable binary file object.

    Never executes code: the manifest is JSON and arrays are plain bytes checked against their
    SHA-256. ``map_location`` and ``weights_only`` are accepted for PyTorch compatibility and ignored.
    Version 1 files (written before arrays were hashed) load only with ``allow_unverified=True``.
    Every member's declared size is checked before it is read (a JSON manifest at most 64 MiB,
    arrays exactly their manifest's dtype and shape, nothing compressed), so a deflate bomb is
    refused without inflating it.

    Raises:
        CheckpointError: the file is truncated, corrupt, tampered with, or not a minigrad
            checkpoint (the message names the file). No other error escapes for bad contents.
        FileNotFoundError: no such file (and other errors of opening the path).
    """
    if isinstance(f, (str, os.PathLike)):
        name = str(f)
        with open(f, "rb") as fh:
            return _load_wrapped(fh, name, allow_unverified)
    return _load_wrapped(f, getattr(f, "name", repr(f)), allow_unverified)


def _load_wrapped(fh, name, allow_unverified=False):
    try:
        return _load(fh, name, allow_unverified)
    except CheckpointError:
        raise
    except Exception as e:  # noqa: BLE001 - zipfile/zlib/json report corruption in a dozen types
        raise CheckpointError(f"mg.load: {name}: corrupt checkpoint ({type(e).__name__}: {e})") from e
