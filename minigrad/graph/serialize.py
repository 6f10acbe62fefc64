"""graph.save / mg.load_graph: a Graph without the model's Python code, never executing code on load.

Format (version 2, the mg.save container): a zip (stored, not compressed) holding ``graph.json`` and
one ``.npy`` per constant array. graph.json:
  {"format": "minigrad.graph", "version": 2,
   "vars": {name: [shape, dtype]},            generator vars: [null, "generator"]
   "invars": [names], "arg_names": [...],
   "state": [[var, binding name, kind]],       kind: tensor | grad | generator | hyper
   "consts": [[var, array]],                   array: {"file", "dtype", "shape", "sha256"}
   "eqns": [{"prim", "fn" (registry key), "args" (tagged values), "outs", "side", "need",
             "effect", "target", "source"}],
   "outvars": [names], "out_tree": ...}
Version 3 (written only for a graph holding control flow; a version 2 reader refuses it as an
unsupported version): a cond / while_loop / scan equation's first argument is
  {"t": "cf", "prim": ..., "v": {field: value}}   its layout (counts, free-input indices, out metas)
with each body a sub-graph {"vars", "invars", "consts", "eqns", "outvars"} with its own variable
names, no state and no effects, nested at most MAX_DEPTH deep; loading checks each body against
the equation that runs it, and the run on zeros checks each body once instead of running the loop.
Primitives are looked up by name in a registry of the Function classes defined in minigrad (plus
those registered with `register`); nothing named in the file is ever imported.

Loading trusts nothing in the file (issue 31): the zip is read through minigrad/_safezip.py (sizes
checked before anything is inflated, the manifest at most 64 MiB); every array's dtype, shape and
SHA-256 are checked; every field of the manifest is validated (types, ranges, variable names plain
identifiers, dtypes from a fixed list, every variable defined once and before it is read, op names
those of the registered classes, arities and effects well formed); and the graph is run once on
zeros, checking that every equation gives the shape and dtype its file declares, so a file that
loads also runs (``check=False`` skips that run). Version 1 files (no hashes) load only with
``allow_unverified=True``. Anything wrong raises `GraphFormatError` and nothing else.
"""
import io
import json
import re
import warnings
import zipfile

import numpy as np

from .. import _safezip
from .._atomic import atomic_write
from ..autograd.function import Function, _op_name
from . import _aliases
from .ir import Eqn, Graph, StateBinding, Var

FORMAT, VERSION, MANIFEST = "minigrad.graph", 2, "graph.json"
VERSION_CF = 3  # a graph holding control flow (cond / while_loop / scan): sub-graphs in its parameters
_USER = {}
# the dtypes a graph file may declare (variables, constants, dtype parameters)
DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float16", "float32", "float64", "complex64", "complex128"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_KINDS = ("tensor", "grad", "generator", "hyper")
MAX_DEPTH = 32        # nesting of parameter values and of the output tree
MAX_STR = 4096        # characters of a string parameter, a state name or a source location


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


def _array_entry(a, arrays):
    a = np.asarray(a)
    if a.dtype.name not in DTYPES:
        raise TypeError(f"graph.save: an array of dtype {a.dtype} cannot be saved (one of {', '.join(sorted(DTYPES))})")
    entry = {"file": f"arrays/{len(arrays)}.npy", "dtype": a.dtype.str, "shape": list(a.shape)}
    arrays.append((a, entry))  # the SHA-256 is added when the array is written
    return entry


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
        return {"t": "array", "v": _array_entry(v, arrays)}
    if isinstance(v, np.ufunc):
        return {"t": "ufunc", "v": v.__name__}
    raise TypeError(f"graph.save: cannot save a static parameter of type {type(v).__name__} ({v!r:.60})")


class _Dec:
    """Decodes and validates a manifest's values; every problem is fail(...): GraphFormatError."""

    def __init__(self, zf, name, members, size, version):
        self.zf, self.name, self.members, self.size, self.version = zf, name, members, size, version
        self.vars = {}
        self.depth = 0  # of the control-flow body being read
        self.namedtuples = _namedtuples()

    def fail(self, msg):
        raise GraphFormatError(f"mg.load_graph: {self.name}: {msg}")

    def str_(self, v, what, cap=MAX_STR):
        if type(v) is not str or len(v) > cap:
            self.fail(f"{what} must be a string of at most {cap} characters, got {_show(v)}")
        return v

    def list_(self, v, what, n=None):
        if type(v) is not list or (n is not None and len(v) != n):
            self.fail(f"{what} must be a list{f' of {n}' if n is not None else ''}, got {_show(v)}")
        return v

    def dtype(self, v, what):
        try:
            dt = np.dtype(self.str_(v, what, 16)) if _safezip.DTYPE_RE.fullmatch(v) else None
        except TypeError:
            dt = None
        if dt is None or dt.name not in DTYPES:
            self.fail(f"{what}: dtype {_show(v)} is not one of {', '.join(sorted(DTYPES))}")
        return dt

    def array(self, entry, what):
        if self.version == 1:
            return self.array_v1(entry, what)
        if type(entry) is not dict:
            self.fail(f"{what}: malformed array entry {_show(entry)}")
        member = entry.get("file")
        if type(member) is not str or member not in self.members:
            self.fail(f"{what} refers to a missing array member {_show(member)}")
        dtype, shape, sha = entry.get("dtype"), entry.get("shape"), entry.get("sha256")
        dt = _safezip.check_array_entry(dtype, shape, sha, self.fail, member, DTYPES)
        return _safezip.read_npy(self.zf, self.members[member], dt, shape, sha, self.size, self.fail)

    def array_v1(self, member, what):
        if type(member) is not str or member not in self.members:
            self.fail(f"{what} refers to a missing array member {_show(member)}")
        info = self.members[member]
        if info.compress_type != zipfile.ZIP_STORED:  # version 1 wrote arrays stored
            self.fail(f"array {member} is compressed (version 1 arrays are stored)")
        data = _safezip.read_member(self.zf, info, self.size, self.fail)
        try:
            a = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
        except Exception as e:  # noqa: BLE001 - numpy's header parser raises a dozen types
            self.fail(f"array {member} cannot be read without pickle ({type(e).__name__}: {e})")
        if a.dtype.name not in DTYPES:
            self.fail(f"array {member} has dtype {a.dtype} (one of {', '.join(sorted(DTYPES))})")
        return a

    def var(self, name, what="an equation"):
        v = self.vars.get(name) if type(name) is str else None
        if v is None:
            self.fail(f"{what} refers to an undefined variable {_show(name)}")
        return v

    def scalar(self, v, what):
        if v is None or type(v) in (bool, str, float) or (type(v) is int and abs(v) < 1 << 63):
            if type(v) is str:
                self.str_(v, what)
            return v
        self.fail(f"{what}: {_show(v)} is not a plain value")

    def dec(self, e, depth=0):
        if depth > MAX_DEPTH:
            self.fail(f"a parameter is nested deeper than {MAX_DEPTH} levels")
        if type(e) is not dict or type(e.get("t")) is not str:
            self.fail(f"malformed value {_show(e)}")
        t, v = e["t"], e.get("v")
        if t == "var":
            return self.var(v)
        if t == "py" and (v is None or type(v) in (bool, str)):
            return self.scalar(v, "a string parameter")
        if t == "int" and type(v) is int:
            if abs(v) >= 1 << 63:
                self.fail(f"integer parameter {v} out of range")
            return v
        if t == "float" and type(v) is str and len(v) < 40:
            try:
                return float.fromhex(v)
            except (ValueError, OverflowError):
                self.fail(f"bad float {_show(v)}")
        if t == "namedtuple" and type(v) is list:
            cls = self.namedtuples.get(e.get("type")) if type(e.get("type")) is str else None
            old = _aliases.NAMEDTUPLES.get(e.get("type")) if cls is None and type(e.get("type")) is str else None
            if old is not None:  # a parameter type renamed since the file was saved
                if len(v) != old[0]:
                    self.fail(f"parameter {e['type']} has {len(v)} fields, not {old[0]}")
                return old[1](*(self.dec(x, depth + 1) for x in v))
            if cls is None:
                self.fail(f"unknown parameter type {_show(e.get('type'))} (only minigrad's own are loaded)")
            if len(v) != len(cls._fields):
                self.fail(f"parameter {cls.__name__} has {len(v)} fields, not {len(cls._fields)}")
            return cls(*(self.dec(x, depth + 1) for x in v))
        if t in ("tuple", "list") and type(v) is list:
            items = [self.dec(x, depth + 1) for x in v]
            return tuple(items) if t == "tuple" else items
        if t == "dict" and type(v) is list:
            out = {}
            for kv in v:
                k, x = self.list_(kv, "a dict parameter's item", 2)
                out[self.scalar(k, "a dict parameter's key")] = self.dec(x, depth + 1)
            return out
        if t == "slice" and type(v) is list and len(v) == 3:
            items = [self.dec(x, depth + 1) for x in v]
            if not all(x is None or type(x) is int for x in items):
                self.fail(f"a slice parameter holds {_show(items)}, not integers")
            return slice(*items)
        if t == "ellipsis":
            return Ellipsis
        if t == "dtype" and type(v) is str:
            return self.dtype(v, "a dtype parameter")
        if t == "array":
            return self.array(v, "a parameter")
        if t == "ufunc" and type(v) is str:
            f = getattr(np, v, None) if _NAME.fullmatch(v) else None
            if not isinstance(f, np.ufunc):
                self.fail(f"unknown NumPy ufunc {_show(v)}")
            return f
        self.fail(f"unknown value tag {_show(t)}")


def _show(v):
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


def save_graph(graph, path):
    """Write `graph` to `path` atomically (see the module docstring for the format)."""
    from ..serialization import _write_array
    arrays = []
    body = _enc_graph(graph, arrays)
    manifest = {"format": FORMAT, "version": VERSION_CF if body.pop("cf") else VERSION,
                "vars": body["vars"], "invars": body["invars"], "arg_names": list(graph.arg_names),
                "state": body["state"], "consts": body["consts"], "eqns": body["eqns"],
                "outvars": body["outvars"], "out_tree": graph.out_tree}
    with atomic_write(path) as out:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for a, entry in arrays:
                with zf.open(entry["file"], "w", force_zip64=a.nbytes > (1 << 31) - (1 << 20)) as f:
                    entry["sha256"] = _write_array(f, a)
            zf.writestr(MANIFEST, json.dumps(manifest))  # last: it holds the arrays' hashes


def _enc_graph(graph, arrays, depth=0):
    """A graph's variables, inputs, state, constants, equations and outputs as manifest fields;
    "cf": whether it (or a sub-graph) holds control flow. A control-flow equation's parameter
    holds its sub-graphs, each encoded the same way with its own variable names."""
    if depth > MAX_DEPTH:
        raise ValueError(f"graph.save: control flow nested deeper than {MAX_DEPTH} levels")
    vars_ = {}
    cf = [False]

    def note(v):
        if v.dtype is not None and np.dtype(v.dtype).name not in DTYPES:
            raise TypeError(f"graph.save: variable {v.name} has dtype {v.dtype}, which a graph file cannot hold")
        vars_[v.name] = [list(v.shape) if v.shape is not None else None,
                         np.dtype(v.dtype).str if v.dtype is not None else "generator"]
        return v.name

    def enc_arg(a):
        if _cf_spec(a):
            cf[0] = True
            return _enc_spec(a, arrays, depth)
        return _enc(a, arrays)
    for v in graph.invars:
        note(v)
    state = [[note(v), b.name, b.kind] for v, b in graph.state]
    consts = []
    for v, a in graph.consts:
        note(v)
        consts.append([v.name, _array_entry(a, arrays)])
    eqns = []
    for e in graph.eqns:
        for v in e.outvars:
            note(v)
        for _, v in e.side:
            note(v)
        eqns.append({"prim": e.prim, "fn": _key(e.fn) if e.fn is not None else None,
                     "args": [enc_arg(a) for a in e.args],
                     "outs": [v.name for v in e.outvars],
                     "side": [[_enc(list(p), arrays), v.name] for p, v in e.side],
                     "need": [bool(n) for n in e.need] if e.need is not None else None,
                     "effect": bool(e.effect), "target": e.target, "source": e.source})
    return {"vars": vars_, "invars": [v.name for v in graph.invars], "state": state, "consts": consts,
            "eqns": eqns, "outvars": [v.name for v in graph.outvars], "cf": cf[0]}


def _cf_spec(a):
    from ..control_flow import _Spec
    return type(a) is _Spec


# the fields of each control-flow equation's parameter (minigrad/control_flow.py's _Spec), by kind:
# "int" (>= 0), "bool", "idx" (free-input indices), "meta" ([(shape, dtype)]), "body" (a sub-graph),
# "res" (a scan's residuals: [(body equation index, ctx path of str/int)]); _CF_OPTIONAL: fields a
# file written before them may lack (their default)
_CF_FIELDS = {
    "cond": {"n_ops": "int", "true_fn": "body", "false_fn": "body", "true_idx": "idx",
             "false_idx": "idx", "out_meta": "meta"},
    "scan": {"length": "int", "reverse": "bool", "n_carry": "int", "n_xs": "int", "y_meta": "meta",
             "body": "body", "res": "res", "res_meta": "meta"},
    "while_loop": {"n_carry": "int", "cond_fn": "body", "body_fn": "body", "cond_idx": "idx", "body_idx": "idx"},
}
_CF_SHOW = {"cond": (), "scan": ("length", "reverse"), "while_loop": ()}
_CF_OPTIONAL = {"res": [], "res_meta": []}
_SUB = {"vars", "invars", "consts", "eqns", "outvars"}


def _enc_spec(spec, arrays, depth):
    from ..control_flow import _Body
    prim = spec._prim
    fields = _CF_FIELDS.get(prim)
    if fields is None or set(spec.__dict__) != set(fields) | {"_prim", "_show"}:
        raise TypeError(f"graph.save: a control-flow parameter of an unknown layout ({prim!r}, "
                        f"{sorted(spec.__dict__)})")
    out = {}
    for k, kind in fields.items():
        v = getattr(spec, k)
        if kind == "body":
            if type(v) is not _Body:
                raise TypeError(f"graph.save: {prim}'s {k} is not a traced body")
            sub = _enc_graph(v.graph, arrays, depth + 1)
            if sub["state"]:
                raise TypeError(f"graph.save: {prim}'s {k} reads state inputs")
            out[k] = {key: sub[key] for key in _SUB}
        elif kind == "meta":
            out[k] = [[list(shape), np.dtype(dt).str] for shape, dt in v]
        elif kind == "res":
            out[k] = [[j, list(path)] for j, path in v]
        else:
            out[k] = list(v) if kind == "idx" else v
    return {"t": "cf", "prim": prim, "v": out}


def load_graph(path, bind=None, *, check=True, allow_unverified=False):
    """Read a graph saved by `graph.save`. State inputs are unbound (pass them to run(state=...)),
    except the random generator, bound to mg.default_generator; `bind` (name -> Tensor/Generator)
    binds them now.

    Nothing in the file is trusted: sizes are checked before anything is read (no deflate bomb),
    every array against its SHA-256, every field of the program (names, dtypes, shapes, op names,
    arities, every variable defined before it is read), and the graph is run once on zeros to check
    that each equation gives the shape and dtype the file declares (``check=False`` skips that run,
    for a trusted graph with ops that zeros cannot run, e.g. a Cholesky factorization). Inputs the
    graph does not assign are passed to its ops read-only: a loaded graph cannot write into the
    caller's tensors unless the traced function did.

    Args:
        path: the file.
        bind: name -> Tensor/Generator for state inputs.
        check: run the graph once on zeros at load (default True).
        allow_unverified: read a version 1 file (written before graph files held SHA-256 hashes).

    Raises:
        GraphFormatError: not a minigrad graph, corrupt, truncated, tampered with (an unknown
            primitive, an undefined variable, a constant whose bytes or shape differ from the
            file's record, a parameter that makes an op fail, ...); the only error a bad file gives.
    """
    name = str(path)
    try:
        with open(path, "rb") as fh:
            return _load(fh, name, bind or {}, check, allow_unverified)
    except GraphFormatError:
        raise
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as e:  # noqa: BLE001 - the contract: a bad file is GraphFormatError, whatever broke
        raise GraphFormatError(f"mg.load_graph: {name}: malformed graph ({type(e).__name__}: {e})") from None


def _load(fh, name, bind, check, allow_unverified):
    def fail(msg):
        raise GraphFormatError(f"mg.load_graph: {name}: {msg}")
    fh.seek(0, 2)
    size = fh.tell()
    fh.seek(0)
    try:
        zf = zipfile.ZipFile(fh, "r")
    except zipfile.BadZipFile as e:
        fail(f"not a minigrad graph (not a zip archive, or truncated: {e})")
    with zf:
        members = _safezip.members(zf, fail)
        if MANIFEST not in members:
            fail(f"not a minigrad graph (no {MANIFEST})")
        raw = _safezip.read_member(zf, members[MANIFEST], _safezip.MANIFEST_CAP, fail)
        try:
            m = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            fail(f"corrupt manifest ({type(e).__name__}: {str(e)[:200]})")
        if type(m) is not dict or m.get("format") != FORMAT:
            fail("not a minigrad graph (format tag missing)")
        version = m.get("version")
        if type(version) is not int or version not in (1, VERSION, VERSION_CF):
            fail(f"unsupported version {_show(version)} (this minigrad reads 2 and 3, and 1 with "
                 f"allow_unverified=True)")
        if version == 1 and not allow_unverified:
            fail("a version 1 graph file has no SHA-256 of its arrays, so tampering cannot be detected; "
                 "if you trust the file, load it with mg.load_graph(path, allow_unverified=True) and save "
                 "it again to get a verified version 2 file")
        dec = _Dec(zf, name, members, size, version)
        g = _build(dec, m, bind)
    if check:
        _check_run(g, dec)
    return g


_TOP = {"format", "version", "vars", "invars", "arg_names", "state", "consts", "eqns", "outvars", "out_tree"}


def _build(dec, m, bind):
    from ..random import default_generator
    if set(m) != _TOP:
        dec.fail(f"manifest fields {sorted(set(m) ^ _TOP)} missing or unknown")
    define = _definer(dec, _types(dec, m["vars"]))
    invars = []
    for vn in dec.list_(m["invars"], "invars"):
        v = define(vn, "input")
        if v.shape is None:
            dec.fail(f"input {vn} is a generator")
        invars.append(v)
    arg_names = [dec.str_(a, "an argument name", 200) for a in dec.list_(m["arg_names"], "arg_names", len(invars))]
    state = []
    for item in dec.list_(m["state"], "state"):
        vn, bname, kind = dec.list_(item, "a state entry", 3)
        dec.str_(bname, "a state name", 1000)
        if kind not in _KINDS:
            dec.fail(f"unknown state kind {_show(kind)}")
        v = define(vn, "state input")
        if (v.shape is None) != (kind == "generator"):
            dec.fail(f"state input {vn} ({kind}) has type {v.type_str}")
        obj = bind.get(bname, default_generator if kind == "generator" and bname == "rng" else None)
        state.append((v, StateBinding(bname, kind, obj)))
    consts = _consts(dec, m["consts"], define)
    reg = registry()
    eqns = [_eqn(dec, e, i, reg, define) for i, e in enumerate(dec.list_(m["eqns"], "eqns"))]
    outvars = [dec.var(vn, "the outputs") for vn in dec.list_(m["outvars"], "outvars")]
    tree = _tree(m["out_tree"], dec, len(outvars))
    state_names = {b.name for _, b in state}
    for e in eqns:
        if e.prim == "assign" and e.target not in state_names and e.target != e.args[0].name:
            dec.fail(f"an assign writes {_show(e.target)}, which is neither a state input nor its target variable")
        if e.prim == "set_grad" and e.target not in state_names:
            dec.fail(f"a set_grad writes {_show(e.target)}, which is not a state input")
    g = Graph(invars, state, consts, eqns, outvars, tree, arg_names)
    # the inputs no assign writes: runs pass them to the ops read-only (interpret.run, codegen)
    written = {e.args[0].name for e in eqns if e.prim == "assign"}
    g.readonly_inputs = frozenset(v.name for v in invars) - written
    return g


def _types(dec, decl):
    """The declared variables: name -> (shape, dtype), (None, None) for a generator."""
    if type(decl) is not dict:
        dec.fail("vars must be an object")
    types_ = {}
    for vn, spec in decl.items():
        if not _NAME.fullmatch(vn):
            dec.fail(f"variable name {_show(vn)} is not a plain identifier")
        shape, dt = dec.list_(spec, f"variable {vn}'s type", 2)
        if dt == "generator":
            if shape is not None:
                dec.fail(f"generator variable {vn} has a shape")
            types_[vn] = (None, None)
            continue
        d = dec.dtype(dt, f"variable {vn}")
        if not (type(shape) is list and len(shape) <= 64 and all(type(n) is int and 0 <= n < 1 << 40 for n in shape)):
            dec.fail(f"variable {vn} has a malformed shape {_show(shape)}")
        types_[vn] = (tuple(shape), d)
    return types_


def _definer(dec, types_):
    defined = dec.vars

    def define(vn, what):
        if type(vn) is not str or vn not in types_:
            dec.fail(f"{what} {_show(vn)} is not declared in vars")
        if vn in defined:
            dec.fail(f"variable {vn} is defined twice ({what})")
        v = defined[vn] = Var(vn, *types_[vn])
        return v
    return define


def _consts(dec, items, define):
    consts = []
    for item in dec.list_(items, "consts"):
        vn, entry = dec.list_(item, "a constant entry", 2)
        v = define(vn, "constant")
        a = dec.array(entry, f"constant {vn}")
        if v.shape is None or a.shape != v.shape or a.dtype != v.dtype:
            dec.fail(f"constant {vn} is {a.dtype}{list(a.shape)} but declared {v.type_str}")
        consts.append((v, a))
    return consts


def _subgraph(dec, m, what, reg):
    """A control-flow body: a graph with its own variables (no state, no effects), validated as
    the file's graph is, nested at most MAX_DEPTH deep."""
    if type(m) is not dict or set(m) != _SUB:
        dec.fail(f"{what} is malformed (fields {_show(sorted(m) if type(m) is dict else m)})")
    if dec.depth >= MAX_DEPTH:
        dec.fail(f"control flow is nested deeper than {MAX_DEPTH} levels")
    outer, dec.vars = dec.vars, {}
    dec.depth += 1
    try:
        define = _definer(dec, _types(dec, m["vars"]))
        invars = [define(vn, f"an input of {what}") for vn in dec.list_(m["invars"], f"{what}'s invars")]
        consts = _consts(dec, m["consts"], define)
        eqns = [_eqn(dec, e, i, reg, define) for i, e in enumerate(dec.list_(m["eqns"], f"{what}'s eqns"))]
        for e in eqns:
            if e.effect:
                dec.fail(f"{what} holds an effect ({e.prim}); a traced body writes nothing")
        outvars = [dec.var(vn, f"the outputs of {what}") for vn in dec.list_(m["outvars"], f"{what}'s outvars")]
        if any(v.shape is None for v in outvars):
            dec.fail(f"{what} outputs a generator")
    finally:
        dec.vars = outer
        dec.depth -= 1
    return Graph(invars, [], consts, eqns, outvars, ("tuple", [("t", i) for i in range(len(outvars))]))


def _ty(vs):
    return [(v.shape, v.dtype) for v in vs]


def _dec_spec(dec, raw, fn, args, outs, side, where, reg):
    """The parameter of a control-flow equation (cond / scan / while_loop): its sub-graphs, and
    the layout of its inputs and outputs checked against them and against the equation's Vars."""
    from ..control_flow import _Body, _Spec
    prim = _op_name(fn)
    fields = _CF_FIELDS[prim]
    if dec.version < VERSION_CF:
        dec.fail(f"{where}: control flow in a version {dec.version} file (control flow is version {VERSION_CF})")
    if type(raw) is not dict or set(raw) != {"t", "prim", "v"} or raw["t"] != "cf" or raw["prim"] != prim \
            or type(raw["v"]) is not dict or not set(fields) - set(_CF_OPTIONAL) <= set(raw["v"]) <= set(fields):
        dec.fail(f"{where}: malformed control-flow parameter {_show(raw)}")
    if not all(isinstance(a, Var) for a in args) or not outs:   # (side outputs: what backward reads)
        dec.fail(f"{where}: takes tensor inputs only and gives tensor outputs")
    kw = {}
    for k, kind in fields.items():
        x, what = raw["v"].get(k, _CF_OPTIONAL.get(k)), f"{where}'s {k}"
        if kind == "int" and not (type(x) is int and 0 <= x < 1 << 40):
            dec.fail(f"{what} must be a count, got {_show(x)}")
        if kind == "bool" and type(x) is not bool:
            dec.fail(f"{what} must be true or false, got {_show(x)}")
        if kind == "idx":
            if type(x) is not list or len(x) > len(args) or not all(type(i) is int and 0 <= i < len(args) for i in x):
                dec.fail(f"{what} must be a list of input indices, got {_show(x)}")
        if kind == "meta":
            metas = []
            for item in dec.list_(x, what):
                shape, dt = dec.list_(item, f"an item of {what}", 2)
                if not (type(shape) is list and len(shape) <= 64 and all(type(n) is int and 0 <= n < 1 << 40
                                                                          for n in shape)):
                    dec.fail(f"{what} holds a malformed shape {_show(shape)}")
                metas.append((tuple(shape), dec.dtype(dt, what)))
            x = metas
        if kind == "res":
            items = []
            for item in dec.list_(x, what):
                j, path = dec.list_(item, f"an item of {what}", 2)
                if not (type(j) is int and 0 <= j < 1 << 40 and type(path) is list and 2 <= len(path) <= 5
                        and path[0] == "attr" and all(type(p) in (str, int) for p in path)):
                    dec.fail(f"{what} holds a malformed residual {_show(item)}")
                items.append((j, tuple(path)))
            x = items
        if kind == "body":
            x = _Body(_subgraph(dec, x, what, reg))
        kw[k] = x
    s = _Spec(_prim=prim, _show=_CF_SHOW[prim], **kw)

    def need(ok, msg):
        if not ok:
            dec.fail(f"{where}: {msg}")

    def sig(body, ins, name):
        need(_ty(body.graph.invars) == _ty(ins), f"{name}'s inputs {_ty(body.graph.invars)} are not those "
                                                  f"the equation passes {_ty(ins)}")

    def frees(idx, free, name):
        need(all(i < len(free) for i in idx), f"{name} reads free input {max(idx, default=0)} of {len(free)}")
        return [free[i] for i in idx]
    if prim == "cond":
        need(len(args) >= 1 + s.n_ops, f"has {len(args)} inputs, fewer than 1 + {s.n_ops} operands")
        pred, ops, free = args[0], args[1:1 + s.n_ops], args[1 + s.n_ops:]
        need(pred.shape is not None and int(np.prod(pred.shape)) == 1, "its predicate is not one value")
        for name, body, idx in (("true_fn", s.true_fn, s.true_idx), ("false_fn", s.false_fn, s.false_idx)):
            sig(body, ops + frees(idx, free, name), name)
            need(_ty(body.graph.outvars) == _ty(outs), f"{name}'s outputs are not the equation's")
        need(s.out_meta == _ty(outs), "out_meta is not the equation's outputs")
    elif prim == "scan":
        nc, nx = s.n_carry, s.n_xs
        need(len(args) >= nc + nx, f"has {len(args)} inputs, fewer than {nc} carried + {nx} scanned")
        init, xs, free = args[:nc], args[nc:nc + nx], args[nc + nx:]
        need(all(v.shape is not None for v in init + xs), "a carried or scanned input is a generator")
        need(all(len(x.shape) >= 1 and x.shape[0] == s.length for x in xs),
             f"a scanned input's leading dimension is not the length {s.length}")
        sig(s.body, init + [Var("x", x.shape[1:], x.dtype) for x in xs] + free, "body")
        need(_ty(s.body.graph.outvars) == _ty(init) + s.y_meta + s.res_meta,
             "body's outputs are not the carry, y_meta and res_meta")
        need(len(s.res) == len(s.res_meta) and all(j < len(s.body.graph.eqns) for j, _ in s.res),
             "its residuals do not match the body")
        need(_ty(outs) == _ty(init) + [((s.length,) + m[0], m[1]) for m in s.y_meta],
             "its outputs are not the carry and the stacked ys")
    else:
        n = s.n_carry
        need(len(args) >= n and all(v.shape is not None for v in args[:n]), f"has {len(args)} inputs, "
             f"fewer than {n} carried tensors")
        carried, free = args[:n], args[n:]
        sig(s.cond_fn, carried + frees(s.cond_idx, free, "cond_fn"), "cond_fn")
        co = s.cond_fn.graph.outvars
        need(len(co) == 1 and int(np.prod(co[0].shape)) == 1, "cond_fn does not give one value")
        sig(s.body_fn, carried + frees(s.body_idx, free, "body_fn"), "body_fn")
        need(_ty(s.body_fn.graph.outvars) == _ty(carried), "body_fn's outputs are not the carried values")
        need(_ty(outs) == _ty(carried), "its outputs are not the carried values")
    return s


_EQN = {"prim", "fn", "args", "outs", "side", "need", "effect", "target", "source"}


def _eqn(dec, e, i, reg, define):
    if type(e) is not dict or set(e) != _EQN:
        dec.fail(f"equation {i} is malformed (fields {_show(sorted(e) if type(e) is dict else e)})")
    prim = dec.str_(e["prim"], f"equation {i}'s primitive", 100)
    where = f"equation {i} ({_show(prim)})"
    source = e["source"] if e["source"] is None else dec.str_(e["source"], f"{where}'s source", 1000)
    target = e["target"] if e["target"] is None else dec.str_(e["target"], f"{where}'s target", 1000)
    if type(e["effect"]) is not bool:
        dec.fail(f"{where}: effect must be true or false")
    fn = None
    alias = _aliases.OPS.get((e["fn"], prim)) if type(e["fn"]) is str else None
    if alias is not None:  # an op renamed, moved or merged since the file was saved: today's class
        fn = reg.get(alias[0])
        prim = _op_name(fn)
        if e["effect"]:
            dec.fail(f"{where} names an op, not an effect")
    elif e["fn"] is not None:
        fn = reg.get(e["fn"]) if type(e["fn"]) is str else None
        if fn is None:
            dec.fail(f"unknown primitive {_show(e['fn'])} ({_show(prim)}): not a registered Function "
                     f"(load_graph never imports code named in a file; register user Functions "
                     f"with mg.graph.serialize.register)")
        if prim != _op_name(fn) or e["effect"]:
            dec.fail(f"{where} names {_show(prim)}, but its Function {e['fn']} is {_op_name(fn)!r}")
    elif prim not in ("assign", "set_grad") or not e["effect"]:
        dec.fail(f"unknown effect {_show(prim)}")
    raw_args = dec.list_(e["args"], f"{where}'s arguments")
    cf = fn is not None and fn.__module__ == "minigrad.control_flow" and _op_name(fn) in _CF_FIELDS
    if cf and not raw_args:
        dec.fail(f"{where}: a control-flow equation without its parameter")
    args = [None if a is None else dec.dec(a) for a in (raw_args[1:] if cf else raw_args)]
    need = e["need"]
    if need is not None:
        if type(need) is not list or len(need) != len(raw_args) or not all(type(n) is bool for n in need):
            dec.fail(f"{where}: need must be a list of {len(raw_args)} booleans")
        need = tuple(need)
    if alias is not None and alias[1] is not None:
        try:
            args, need = alias[1](args, need)
        except (TypeError, ValueError, IndexError):
            dec.fail(f"{where}: its arguments do not fit the op it was renamed to")
    side_in = dec.list_(e["side"], f"{where}'s side outputs")
    side_paths = []
    for item in side_in:
        p, vn = dec.list_(item, f"{where}'s side output", 2)
        path = dec.dec(p)
        if type(path) is not list or len(path) < 2 or path[0] not in ("arg", "attr", "saved") \
                or not all(type(k) in (int, str) for k in path[1:]) \
                or type(path[1]) is not (str if path[0] == "attr" else int):
            dec.fail(f"{where}: malformed side output path {_show(path)}")
        side_paths.append((tuple(path), vn))
    outs = [define(vn, f"output of {where}") for vn in dec.list_(e["outs"], f"{where}'s outputs")]
    side = [(path, define(vn, f"side output of {where}")) for path, vn in side_paths]
    if any(v.shape is None for v in outs + [s for _, s in side]):
        dec.fail(f"{where} outputs a generator")
    if fn is None:
        if prim == "assign" and (len(args) != 2 or not all(isinstance(a, Var) for a in args) or len(outs) != 1
                                 or side or type(target) is not str):
            dec.fail(f"{where}: an assign takes a target and a value variable and gives one output")
        if prim == "set_grad" and (len(args) != 1 or not (args[0] is None or isinstance(args[0], Var))
                                   or len(outs) != (args[0] is not None) or side or type(target) is not str):
            dec.fail(f"{where}: a set_grad takes one value variable (or null) and gives it as its output")
        if prim == "assign" and (args[0].shape is None or outs[0].shape != args[0].shape
                                 or outs[0].dtype != args[0].dtype):
            dec.fail(f"{where}: its output is not of its target's type")
    elif target is not None:
        dec.fail(f"{where}: only an effect has a target")
    if cf:
        args = [_dec_spec(dec, raw_args[0], fn, args, outs, side, where, reg)] + args
    eq = Eqn(prim, fn, args, outs, side, e["effect"], source, target)
    eq.need = need
    return eq


def _tree(t, dec, n, depth=0):
    if depth > MAX_DEPTH:
        dec.fail(f"the output tree is nested deeper than {MAX_DEPTH} levels")
    kind, body = dec.list_(t, "an output tree node", 2)
    if kind in ("tuple", "list"):
        return [kind, [_tree(b, dec, n, depth + 1) for b in dec.list_(body, "an output tree node")]]
    if kind == "dict":
        items = [dec.list_(kv, "an output tree item", 2) for kv in dec.list_(body, "an output tree node")]
        return [kind, [[dec.scalar(k, "an output key"), _tree(b, dec, n, depth + 1)] for k, b in items]]
    if kind == "t":
        if type(body) is not int or not 0 <= body < n:
            dec.fail(f"the output tree refers to output {_show(body)} of {n}")
        return [kind, body]
    if kind == "py":
        return [kind, dec.scalar(body, "an output constant")]
    dec.fail(f"bad output tree node {_show(kind)}")


def _check_run(g, dec):
    """Run g once on zeros (inputs and state), checking each equation's outputs against the shapes
    and dtypes the file declares: a file that loads also runs. A fresh generator serves random ops
    (the default one is not advanced)."""
    from ..random import Generator
    from .interpret import _resolve, _side_value, eval_eqn, readonly
    from ..control_flow import _Spec
    env = {}
    for v in g.invars:  # (a control-flow body's inputs may include a generator its random ops draw from)
        env[v.name] = Generator(0) if v.shape is None else \
            readonly(_zeros(v)) if v.name in getattr(g, "readonly_inputs", ()) else _zeros(v)
    for v, b in g.state:
        env[v.name] = Generator(0) if b.kind == "generator" else _zeros(v)
    for v, a in g.consts:
        env[v.name] = a.copy()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, e in enumerate(g.eqns):
            where = f"equation {i} ({e.prim}, traced at {e.source})"
            if e.fn is None:
                if e.prim == "assign":
                    t, val = env[e.args[0].name], env[e.args[1].name]
                    try:
                        np.broadcast_to(val, t.shape)
                    except ValueError:
                        dec.fail(f"{where} writes a {list(val.shape)} value into a {list(t.shape)} target")
                    env[e.outvars[0].name] = t
                elif e.outvars:
                    env[e.outvars[0].name] = env[e.args[0].name].copy()
                continue
            if e.args and type(e.args[0]) is _Spec:
                # control flow: each body checked once on zeros (not run: a loop on zeros might
                # never end, a scan's length might be huge); its outputs typed as declared (_dec_spec)
                for _, body in e.args[0]._bodies():
                    _check_run(body.graph, dec)
                for v in e.outvars + [v for _, v in e.side]:
                    env[v.name] = _zeros(v)
                continue
            vals = [_resolve(a, env) for a in e.args]
            try:
                outs, ctx = eval_eqn(e, vals)
                side = [_side_value(p, vals, ctx) for p, _ in e.side]
            except np.linalg.LinAlgError:
                return  # a factorization zeros cannot run: checked as far as here
            except RecursionError:
                dec.fail(f"{where} recursed too deeply when checked on zeros")
            except MemoryError:
                dec.fail(f"{where} needs more memory than there is when checked on zeros")
            except Exception as err:  # noqa: BLE001 - any failure of a tampered parameter
                dec.fail(f"{where} fails when the graph is checked on zeros ({type(err).__name__}: "
                         f"{str(err)[:300]}); a corrupt or tampered file (load a trusted graph whose ops "
                         f"cannot run on zeros with check=False)")
            if len(outs) < len(e.outvars):
                dec.fail(f"{where} gives {len(outs)} outputs, the file declares {len(e.outvars)}")
            for v, o in list(zip(e.outvars, outs)) + [(v, np.asarray(o)) for (_, v), o in zip(e.side, side)]:
                if o.shape != v.shape and o.dtype == v.dtype and o.ndim == len(v.shape) and e.prim in _DATA_SHAPED:
                    o = _zeros(v)  # its shape depends on the values (zeros here); later ops get the traced one
                if o.shape != v.shape or o.dtype != v.dtype:
                    dec.fail(f"{where} gives {v.name} as {o.dtype}{list(o.shape)}, the file declares {v.type_str}")
                env[v.name] = o


# ops whose output shape depends on their input's values (a graph holds the traced shape)
_DATA_SHAPED = frozenset({"nonzero", "unique", "getitem"})


def _zeros(v):
    return np.zeros(v.shape, v.dtype)
