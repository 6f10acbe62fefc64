"""Elementwise fusion: maximal connected groups of elementwise equations of one shape become one
`fused` equation computed in one pass over memory (minigrad/kernels/fused.py: numba when installed,
else NumPy).

Grouping walks the program in order. An elementwise equation (an op declaring a fused `Kernel`: arithmetic, sqrt, relu
and its backward, max/min, where, casts between floats; exp/log/tanh/... with the NumPy backend or
when asked) with a float result of at least `min_size`
elements joins the open group(s) of the same shape that produced one of its inputs (several such
groups merge), or opens a new one. A group closes when any other equation reads one of its results,
and all groups close at an effect (`assign`, `set_grad`) or an equation with dict sinks: the fused
equation runs where its last member ran, so no read moves past a write and every result is there
before its first outside reader. The fused equation's outputs are the members' results read outside
the group (or returned); the others never reach memory. A group of fewer than `min_ops` (3)
equations is left alone.
"""
import numpy as np

from ...graph.ir import Eqn, Var
from ...kernels import fused as kernels
from ._util import copy_graph, pure
from .fuse_rows import fuse_rows


def fusible(e, min_size, exact_only=False):
    k = kernels.kernel_of(e.fn) if e.fn is not None and pure(e) and len(e.outvars) == 1 else None
    if k is None or (exact_only and not k.exact):
        return False
    if e.fn.__name__ == "Div" and e.prim != "div":
        return False
    v = e.outvars[0]
    if v.shape is None or np.dtype(v.dtype).kind != "f" or int(np.prod(v.shape, dtype=np.int64)) < min_size:
        return False
    n = len(k.cast)
    for a in e.args[:n]:
        if isinstance(a, Var):
            if a.shape is None or np.dtype(a.dtype).kind not in "fbiu" or len(a.shape) > len(v.shape):
                return False
        elif type(a) not in (int, float, bool):
            return False
    return len(e.args) == n or e.fn.__name__ == "ToCopy"


class FusedFunction:
    """Base of the per-group classes a fused equation calls (op_name "fused")."""
    op_name = "fused"
    _fast = None
    _writes_out = False

    @staticmethod
    def forward(ctx, expr, *inputs):
        raise RuntimeError("fused: run through _fast")


def _fused_eqn(graph_eqns, members, outs, backend, counter):
    """(Eqn) computing `members` (eqns, in order) with `outs` (their result vars leaving the group)."""
    names = {e.outvars[0].name: j for j, e in enumerate(members)}
    inputs, in_index, ops, statics = [], {}, [], []
    for e in members:
        n = len(kernels.kernel_of(e.fn).cast)
        operands = []
        for a in e.args[:n]:
            if isinstance(a, Var):
                if a.name in names:
                    operands.append(("t", names[a.name]))
                else:
                    if a.name not in in_index:
                        in_index[a.name] = len(inputs)
                        inputs.append(a)
                    operands.append(("in", in_index[a.name]))
            else:
                operands.append(("lit", a))
        ops.append((e.fn, operands, np.dtype(e.outvars[0].dtype)))
        statics.append(tuple(e.args[n:]))
    shape = members[0].outvars[0].shape
    group = kernels.Group([(v.shape, np.dtype(v.dtype)) for v in inputs], ops,
                          [names[v.name] for v in outs], shape)
    kernel = kernels.build(group, statics, backend)
    expr = group.expr([v.name for v in inputs], [e.outvars[0].name for e in members])
    cls = type(f"Fused{next(counter)}", (FusedFunction,), {
        "__module__": __name__, "_fast": kernel, "_writes_out": len(outs) == 1, "group": group,
        "members": tuple(members), "__doc__": f"fused: {expr}"})
    e = Eqn("fused", cls, [expr] + inputs, outs, source=members[-1].source)
    return e


def _counter():
    i = 0
    while True:
        yield i
        i += 1


def fuse_elementwise(graph, backend=None, min_size=1024, min_ops=3, transcendentals=False, rows=True,
                     reassociate=False):
    """Fuse elementwise groups (after fuse_rows.fuse_rows, unless rows=False, has folded residual
    adds into layer_norm's kernels; reassociate=True: the rms_norm composite too, within
    fuse_rows.RMS_NORM_ULPS). backend: "numba", "numpy" or None (numba when installed); min_size:
    the fewest elements a result needs to be worth a kernel call; min_ops: the fewest equations a
    group needs (a pair saves one pass over memory, less than a numba compile costs on a first
    call: ~1 s here); transcendentals: put exp, log, tanh, ... into numba groups too (within
    kernels.ULPS_PER_TRANSCENDENTAL ulp, and slower than NumPy's SIMD versions where numba has no
    SVML)."""
    backend = kernels.resolve_backend(backend)
    row_details = ""
    if rows:
        graph = fuse_rows(graph, reassociate)
        row_details = graph.pass_details
    exact_only = backend == "numba" and not transcendentals
    eqns = graph.eqns
    open_groups = {}   # group id -> {"shape", "members" (eqn indices), "names"}
    owner = {}         # member result name -> group id (open groups only)
    done = []          # closed groups (lists of eqn indices)
    gid = _counter()

    def close(k):
        g = open_groups.pop(k)
        for n in g["names"]:
            owner.pop(n, None)
        done.append(g["members"])
    for i, e in enumerate(eqns):
        if fusible(e, min_size, exact_only):
            shape = e.outvars[0].shape
            ks = []
            for v in e.invars:
                k = owner.get(v.name)
                if k is not None and k not in ks:
                    if open_groups[k]["shape"] == shape:
                        ks.append(k)
                    else:
                        close(k)  # read by an op of another shape: an outside reader
            if not ks:
                k = next(gid)
                open_groups[k] = {"shape": shape, "members": [], "names": set()}
            else:
                k = ks[0]
                for other in ks[1:]:  # e connects several groups: one group
                    g = open_groups.pop(other)
                    open_groups[k]["members"] += g["members"]
                    open_groups[k]["names"] |= g["names"]
                    for n in g["names"]:
                        owner[n] = k
            open_groups[k]["members"].append(i)
            open_groups[k]["names"].add(e.outvars[0].name)
            owner[e.outvars[0].name] = k
            continue
        if e.effect or e.side or any(type(a) is dict for a in e.args) or (e.fn is not None and not pure(e) and
                                                                         not any(v.shape is None for v in e.invars)):
            for k in list(open_groups):
                close(k)
            continue
        for v in e.invars:
            k = owner.get(v.name)
            if k is not None:
                close(k)
    for k in list(open_groups):
        close(k)
    groups = [sorted(m) for m in done if len(m) >= max(2, min_ops)]
    if not groups:
        g = copy_graph(graph)
        g.pass_details = "0 groups" + (f"; {row_details}" if row_details else "")
        return g
    # which member results are read outside their group (or returned)
    member_of = {i: gi for gi, m in enumerate(groups) for i in m}
    read_outside = {v.name for v in graph.outvars if isinstance(v, Var)}
    for i, e in enumerate(eqns):
        gi = member_of.get(i)
        for v in e.invars:
            if gi is None or v.name not in {eqns[j].outvars[0].name for j in groups[gi]}:
                read_outside.add(v.name)
    emit, counter, sizes = {}, _counter(), []
    for m in groups:
        members = [eqns[i] for i in m]
        outs = [e.outvars[0] for e in members if e.outvars[0].name in read_outside]
        emit[m[-1]] = _fused_eqn(eqns, members, outs, backend, counter)
        sizes.append(len(m))
    new = []
    for i, e in enumerate(eqns):
        if i in emit:
            new.append(emit[i])
        elif i not in member_of:
            new.append(e)
    g = copy_graph(graph, eqns=new)
    kind = type(next(iter(emit.values())).fn._fast).__name__.replace("Kernel", "").lower()
    g.pass_details = (f"{len(groups)} groups of {', '.join(map(str, sizes))} equations "
                      f"({kind} kernels)" + (f"; {row_details}" if row_details else ""))
    return g
