"""mg.save / mg.load: checkpoints that can never execute code when loaded.

Format: a zip archive holding ``minigrad.json`` (a manifest: format name, version, and the object
tree as tagged JSON) and one ``.npy`` member per array or tensor, read back with
``allow_pickle=False``. Supported: dict / OrderedDict (keys: str, int, float, bool, None or tuples
of those; int keys stay int), list, tuple, mg.Tensor (dtype, shape, requires_grad; Parameters come
back as nn.Parameter), numpy arrays and scalars (no object dtypes), bool, int, float, complex, str,
bytes, None.

Writes to a path are atomic: a temporary file in the same folder is written, flushed, fsynced and
``os.replace``d onto the target, so a crash mid-save leaves the previous file intact.
"""
import collections
import json
import os
import zipfile

import numpy as np

from ._atomic import atomic_write

import minigrad as mg

__all__ = ["save", "load", "CheckpointError"]

FORMAT = "minigrad.checkpoint"
VERSION = 1
MANIFEST = "minigrad.json"


class CheckpointError(RuntimeError, ValueError):
    """A file is not a readable minigrad checkpoint (corrupt, truncated, or another format)."""


# ---- encoding: object tree -> (JSON-able tree, list of arrays)

def _encode_float(x):
    return float(x).hex()


def _encode_key(k, path):
    if k is None or isinstance(k, (bool, int, float, str)):
        return _encode(k, [], path)
    if isinstance(k, tuple):
        return {"t": "tuple", "v": [_encode_key(e, path) for e in k]}
    raise TypeError(f"mg.save: unsupported dict key {k!r} of type {type(k).__name__} at {path}; "
                    "keys must be str, int, float, bool, None or tuples of those")


def _array_entry(arr, arrays, path):
    if arr.dtype.hasobject or arr.dtype.kind == "O":
        raise TypeError(f"mg.save: numpy arrays of object dtype cannot be saved safely "
                        f"(found at {path}); convert to a numeric dtype first")
    arrays.append(arr)
    return f"arrays/{len(arrays) - 1}.npy"


def _encode(obj, arrays, path="obj"):
    if obj is None:
        return {"t": "none"}
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
        entry = {"t": "tensor", "file": _array_entry(np.asarray(obj._data), arrays, path),
                 "requires_grad": bool(obj.requires_grad)}
        if type(obj).__name__ == "Parameter":
            entry["parameter"] = True
        return entry
    if isinstance(obj, np.ndarray):
        return {"t": "ndarray", "file": _array_entry(obj, arrays, path)}
    if isinstance(obj, np.generic):
        return {"t": "npscalar", "file": _array_entry(np.asarray(obj), arrays, path)}
    if isinstance(obj, dict):
        return {"t": "odict" if isinstance(obj, collections.OrderedDict) else "dict",
                "v": [[_encode_key(k, path), _encode(v, arrays, f"{path}[{k!r}]")]
                      for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {"t": "list" if isinstance(obj, list) else "tuple",
                "v": [_encode(v, arrays, f"{path}[{i}]") for i, v in enumerate(obj)]}
    raise TypeError(f"mg.save: cannot save an object of type {type(obj).__name__} (at {path}); "
                    "supported: dict, list, tuple, Tensor, numpy array/scalar, bool, int, float, "
                    "complex, str, bytes, None")


# ---- decoding

class _Reader:
    def __init__(self, zf, name):
        self.zf, self.name = zf, name
        self.members = set(zf.namelist())

    def fail(self, msg):
        raise CheckpointError(f"mg.load: {self.name}: {msg}")

    def array(self, entry):
        member = entry.get("file")
        if not isinstance(member, str) or member not in self.members:
            self.fail(f"manifest refers to a missing array member {member!r}")
        try:
            with self.zf.open(member) as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        except ValueError as e:
            self.fail(f"array {member} cannot be read without pickle ({e})")
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            self.fail(f"array {member} is corrupt ({e})")

    def decode(self, e):
        if not isinstance(e, dict) or "t" not in e:
            self.fail(f"malformed manifest entry {e!r:.80}")
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
                items = ((self.decode(k), self.decode(v)) for k, v in e["v"])
                return collections.OrderedDict(items) if t == "odict" else dict(items)
            if t == "list":
                return [self.decode(v) for v in e["v"]]
            if t == "tuple":
                return tuple(self.decode(v) for v in e["v"])
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as err:
            self.fail(f"malformed manifest entry of type {t!r} ({err!r})")
        self.fail(f"unknown manifest entry type {t!r}")


# ---- public API

def _write_array(f, arr):
    np.lib.format.write_array(f, arr, allow_pickle=False)


def _write_zip(fileobj, manifest, arrays):
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest))
        for i, arr in enumerate(arrays):
            with zf.open(f"arrays/{i}.npy", "w", force_zip64=arr.nbytes > (1 << 31) - (1 << 20)) as f:
                _write_array(f, arr)


def save(obj, f):
    """Save ``obj`` (e.g. a state_dict) to a path or a writable binary file object.

    Args:
        obj: nested dicts/lists/tuples of Tensors, numpy arrays, numbers, strings and None.
        f (str, os.PathLike or file object): where to write. A path is written atomically.

    Raises:
        TypeError: an unsupported type or a numpy array of object dtype (nothing is written).

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


def load(f, map_location=None, weights_only=True, **kwargs):
    """Load an object saved by :func:`save` from a path or a readable binary file object.

    Never executes code: the manifest is JSON and arrays are read with ``allow_pickle=False``.
    ``map_location`` and ``weights_only`` are accepted for PyTorch compatibility and ignored.

    Raises:
        CheckpointError: the file is truncated, corrupt, or not a minigrad checkpoint (the
            message names the file).
        FileNotFoundError: no such file.
    """
    name = str(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", repr(f))
    try:
        zf = zipfile.ZipFile(f, "r")
    except zipfile.BadZipFile as e:
        raise CheckpointError(f"mg.load: {name}: not a minigrad checkpoint, or truncated/corrupt "
                              f"(not a valid zip archive: {e})") from None
    with zf:
        reader = _Reader(zf, name)
        if MANIFEST not in reader.members:
            reader.fail(f"not a minigrad checkpoint (no {MANIFEST} inside; files saved by "
                        "torch.save or pickle cannot be loaded)")
        try:
            manifest = json.loads(zf.read(MANIFEST).decode("utf-8"))
        except (zipfile.BadZipFile, OSError, EOFError, UnicodeDecodeError, ValueError) as e:
            reader.fail(f"corrupt manifest ({e})")
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            reader.fail("not a minigrad checkpoint (manifest format tag missing)")
        if manifest.get("version") != VERSION:
            reader.fail(f"unsupported checkpoint version {manifest.get('version')!r} "
                        f"(this minigrad reads version {VERSION})")
        return reader.decode(manifest.get("root"))
