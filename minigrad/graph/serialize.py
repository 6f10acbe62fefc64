"""graph.save / mg.load_graph: a Graph without the model's Python code, never executing code on load.

Format (the mg.save container style): a zip holding ``graph.json`` and one ``.npy`` per constant
array (read with allow_pickle=False). graph.json:
  {"format": "minigrad.graph", "version": 1,
   "vars": {name: [shape, dtype]},            generator vars: [null, "generator"]
   "invars": [names], "arg_names": [...],
   "state": [[var, binding name, kind]],       kind: tensor | grad | generator | hyper
   "consts": [[var, "arrays/i.npy"]],
   "eqns": [{"prim", "fn" (registry key), "args" (tagged values), "outs", "side", "need",
             "effect", "target", "source"}],
   "outvars": [names], "out_tree": ...}
Primitives are looked up by name in a registry of the Function classes defined in minigrad (plus
those registered with `register`); nothing named in the file is ever imported.
"""
import json
import zipfile

import numpy as np

from .._atomic import atomic_write
from ..autograd.function import Function
from .ir import Eqn, Graph, StateBinding, Var

FORMAT, VERSION, MANIFEST = "minigrad.graph", 1, "graph.json"
_USER = {}


class GraphFormatError(RuntimeError, ValueError):
    """A file is not a readable minigrad graph (corrupt, tampered with, or another format)."""


def register(cls):
    """Make a user Function class loadable by mg.load_graph (as a decorator or a call)."""
    _USER[_key(cls)] = cls
    return cls


def _key(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def registry():
    """registry key -> Function class: every Function subclass defined in minigrad, and registered ones."""
    out, stack = {}, [Function]
    while stack:
        c = stack.pop()
        for s in c.__subclasses__():
            stack.append(s)
            if s.__module__.startswith("minigrad."):
                out[_key(s)] = s
    out.update(_USER)
    return out


def _namedtuples():
    """The namedtuple parameter types (e.g. conv geometry) of minigrad's already-imported modules."""
    import sys
    out = {}
    for name, mod in list(sys.modules.items()):
        if name.startswith("minigrad.") and mod is not None:
            for obj in vars(mod).values():
                if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
                    out[_key(obj)] = obj
    return out


def _enc(v, arrays):
    if isinstance(v, Var):
        return {"t": "var", "v": v.name}
    if v is None or isinstance(v, (bool, str)):
        return {"t": "py", "v": v}
    if isinstance(v, (int, np.integer)):
        return {"t": "int", "v": int(v)}
    if isinstance(v, (float, np.floating)):
        return {"t": "float", "v": float(v).hex()}
    if isinstance(v, tuple) and type(v) is not tuple and hasattr(type(v), "_fields"):
        return {"t": "namedtuple", "type": _key(type(v)), "v": [_enc(x, arrays) for x in v]}
    if isinstance(v, tuple):
        return {"t": "tuple", "v": [_enc(x, arrays) for x in v]}
    if isinstance(v, list):
        return {"t": "list", "v": [_enc(x, arrays) for x in v]}
    if isinstance(v, dict):
        return {"t": "dict", "v": [[k, _enc(x, arrays)] for k, x in v.items()]}
    if isinstance(v, slice):
        return {"t": "slice", "v": [_enc(x, arrays) for x in (v.start, v.stop, v.step)]}
    if v is Ellipsis:
        return {"t": "ellipsis"}
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return {"t": "dtype", "v": np.dtype(v).str}
    if isinstance(v, np.ndarray):
        if v.dtype.hasobject:
            raise TypeError("graph.save: an object array cannot be saved")
        arrays.append(v)
        return {"t": "array", "v": f"arrays/{len(arrays) - 1}.npy"}
    if isinstance(v, np.ufunc):
        return {"t": "ufunc", "v": v.__name__}
    raise TypeError(f"graph.save: cannot save a static parameter of type {type(v).__name__} ({v!r:.60})")


class _Dec:
    def __init__(self, zf, name, vars_):
        self.zf, self.name, self.vars = zf, name, vars_
        self.members = set(zf.namelist())

    def fail(self, msg):
        raise GraphFormatError(f"mg.load_graph: {self.name}: {msg}")

    def array(self, member):
        if not isinstance(member, str) or member not in self.members:
            self.fail(f"refers to a missing array member {member!r}")
        try:
            with self.zf.open(member) as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        except (ValueError, zipfile.BadZipFile, OSError, EOFError) as e:
            self.fail(f"array {member} cannot be read without pickle ({e})")

    def var(self, name):
        v = self.vars.get(name) if isinstance(name, str) else None
        if v is None:
            self.fail(f"refers to an undefined variable {name!r}")
        return v

    def dec(self, e):
        if not isinstance(e, dict) or "t" not in e:
            self.fail(f"malformed value {e!r:.80}")
        t, v = e["t"], e.get("v")
        if t == "var":
            return self.var(v)
        if t == "py" and (v is None or isinstance(v, (bool, str))):
            return v
        if t == "int" and isinstance(v, int):
            return v
        if t == "float" and isinstance(v, str):
            try:
                return float.fromhex(v)
            except ValueError:
                self.fail(f"bad float {v!r}")
        if t == "namedtuple" and isinstance(v, list):
            cls = _namedtuples().get(e.get("type"))
            if cls is None:
                self.fail(f"unknown parameter type {e.get('type')!r} (only minigrad's own are loaded)")
            return cls(*(self.dec(x) for x in v))
        if t in ("tuple", "list") and isinstance(v, list):
            items = [self.dec(x) for x in v]
            return tuple(items) if t == "tuple" else items
        if t == "dict" and isinstance(v, list):
            return {k: self.dec(x) for k, x in v}
        if t == "slice" and isinstance(v, list) and len(v) == 3:
            return slice(*(self.dec(x) for x in v))
        if t == "ellipsis":
            return Ellipsis
        if t == "dtype" and isinstance(v, str):
            try:
                dt = np.dtype(v)
            except TypeError:
                self.fail(f"bad dtype {v!r}")
            if dt.hasobject:
                self.fail("object dtypes are not allowed")
            return dt
        if t == "array":
            return self.array(v)
        if t == "ufunc" and isinstance(v, str):
            f = getattr(np, v, None)
            if not isinstance(f, np.ufunc):
                self.fail(f"unknown NumPy ufunc {v!r}")
            return f
        self.fail(f"unknown value tag {t!r}")


def save_graph(graph, path):
    """Write `graph` to `path` atomically (see the module docstring for the format)."""
    arrays, vars_ = [], {}

    def note(v):
        vars_[v.name] = [list(v.shape) if v.shape is not None else None,
                         np.dtype(v.dtype).str if v.dtype is not None else "generator"]
        return v.name
    for v in graph.invars:
        note(v)
    state = [[note(v), b.name, b.kind] for v, b in graph.state]
    consts = []
    for v, a in graph.consts:
        note(v)
        arrays.append(np.asarray(a))
        consts.append([v.name, f"arrays/{len(arrays) - 1}.npy"])
    eqns = []
    for e in graph.eqns:
        for v in e.outvars:
            note(v)
        for _, v in e.side:
            note(v)
        eqns.append({"prim": e.prim, "fn": _key(e.fn) if e.fn is not None else None,
                     "args": [_enc(a, arrays) for a in e.args],
                     "outs": [v.name for v in e.outvars],
                     "side": [[_enc(list(p), arrays), v.name] for p, v in e.side],
                     "need": list(e.need) if e.need is not None else None,
                     "effect": e.effect, "target": e.target, "source": e.source})
    manifest = {"format": FORMAT, "version": VERSION, "vars": vars_,
                "invars": [v.name for v in graph.invars], "arg_names": graph.arg_names,
                "state": state, "consts": consts, "eqns": eqns,
                "outvars": [v.name for v in graph.outvars], "out_tree": graph.out_tree}
    with atomic_write(path) as out:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr(MANIFEST, json.dumps(manifest))
            for i, a in enumerate(arrays):
                with zf.open(f"arrays/{i}.npy", "w") as f:
                    np.lib.format.write_array(f, a, allow_pickle=False)


def load_graph(path, bind=None):
    """Read a graph saved by `graph.save`. State inputs are unbound (pass them to run(state=...)),
    except the random generator, bound to mg.default_generator; `bind` (name -> Tensor/Generator)
    binds them now.

    Raises:
        GraphFormatError: not a minigrad graph, corrupt, or tampered with (an unknown primitive, an
            undefined variable, a constant whose shape differs from its declaration, ...).
    """
    name = str(path)
    try:
        zf = zipfile.ZipFile(path, "r")
    except zipfile.BadZipFile as e:
        raise GraphFormatError(f"mg.load_graph: {name}: not a minigrad graph (not a zip archive: {e})") from None
    with zf:
        try:
            m = json.loads(zf.read(MANIFEST).decode("utf-8"))
        except KeyError:
            raise GraphFormatError(f"mg.load_graph: {name}: not a minigrad graph (no {MANIFEST})") from None
        except (ValueError, UnicodeDecodeError, zipfile.BadZipFile, OSError) as e:
            raise GraphFormatError(f"mg.load_graph: {name}: corrupt manifest ({e})") from None
        if not isinstance(m, dict) or m.get("format") != FORMAT:
            raise GraphFormatError(f"mg.load_graph: {name}: not a minigrad graph (format tag missing)")
        if m.get("version") != VERSION:
            raise GraphFormatError(f"mg.load_graph: {name}: unsupported version {m.get('version')!r}")
        try:
            return _build(zf, name, m, bind or {})
        except GraphFormatError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            raise GraphFormatError(f"mg.load_graph: {name}: malformed graph ({e!r})") from None


def _build(zf, name, m, bind):
    from ..random import default_generator
    vars_ = {}
    for vn, (shape, dt) in m["vars"].items():
        if dt == "generator":
            vars_[vn] = Var(vn, None, None)
        else:
            d = np.dtype(dt)
            if d.hasobject:
                raise GraphFormatError(f"mg.load_graph: {name}: object dtypes are not allowed")
            vars_[vn] = Var(vn, tuple(int(s) for s in shape), d)
    dec = _Dec(zf, name, vars_)
    reg = registry()
    state = []
    for vn, bname, kind in m["state"]:
        if kind not in ("tensor", "grad", "generator", "hyper"):
            dec.fail(f"unknown state kind {kind!r}")
        obj = bind.get(bname, default_generator if kind == "generator" and bname == "rng" else None)
        state.append((dec.var(vn), StateBinding(bname, kind, obj)))
    consts = []
    for vn, member in m["consts"]:
        v, a = dec.var(vn), dec.array(member)
        if a.shape != v.shape or a.dtype != v.dtype:
            dec.fail(f"constant {vn} is {a.dtype}{list(a.shape)} but declared {v.dtype}{list(v.shape)}")
        consts.append((v, a))
    eqns = []
    for e in m["eqns"]:
        fn = None
        if e["fn"] is not None:
            fn = reg.get(e["fn"])
            if fn is None:
                dec.fail(f"unknown primitive {e['fn']!r} ({e['prim']!r}): not a registered Function "
                         f"(load_graph never imports code named in a file; register user Functions "
                         f"with mg.graph.serialize.register)")
        elif e["prim"] not in ("assign", "set_grad"):
            dec.fail(f"unknown effect {e['prim']!r}")
        args = [None if a is None else dec.dec(a) for a in e["args"]]
        side = [(tuple(dec.dec(p)), dec.var(vn)) for p, vn in e["side"]]
        eq = Eqn(e["prim"], fn, args, [dec.var(v) for v in e["outs"]], side, bool(e["effect"]),
                 e.get("source"), e.get("target"))
        eq.need = tuple(e["need"]) if e.get("need") is not None else None
        eqns.append(eq)
    g = Graph([dec.var(v) for v in m["invars"]], state, consts, eqns, [dec.var(v) for v in m["outvars"]],
              _tree(m["out_tree"], dec), m.get("arg_names"))
    return g


def _tree(t, dec):
    kind, body = t
    if kind in ("tuple", "list"):
        return [kind, [_tree(b, dec) for b in body]]
    if kind == "dict":
        return [kind, [[k, _tree(b, dec)] for k, b in body]]
    if kind in ("t", "py"):
        return [kind, body]
    dec.fail(f"bad output tree node {kind!r}")
