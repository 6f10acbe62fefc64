"""What the passes share: rebuilding a graph with new equations, renaming uses of a var, which
equations are pure, and which values may share memory (so a pass never moves a read across a write)."""
import numpy as np

from ...graph.ir import Graph, Var


def copy_graph(g, eqns=None, consts=None, outvars=None):
    """A new Graph like g with some parts replaced (the others shared: passes never mutate)."""
    h = Graph(g.invars, g.state, g.consts if consts is None else consts, g.eqns if eqns is None else eqns,
              g.outvars if outvars is None else outvars, g.out_tree, g.arg_names)
    for attr in ("dynamic", "breaks", "trace_seconds", "result", "readonly_inputs"):
        if hasattr(g, attr):
            setattr(h, attr, getattr(g, attr))
    return h


def substitute(a, ren):
    """Argument a with every Var renamed through ren (name -> Var)."""
    if isinstance(a, Var):
        return ren.get(a.name, a)
    if type(a) is tuple:
        return tuple(substitute(x, ren) for x in a)
    if type(a) is list:
        return [substitute(x, ren) for x in a]
    if type(a) is dict:
        return {k: substitute(x, ren) for k, x in a.items()}
    return a


def with_args(e, args):
    """A copy of eqn e with new args (the same outputs)."""
    from ...graph.ir import Eqn
    n = Eqn(e.prim, e.fn, args, e.outvars, e.side, e.effect, e.source, e.target)
    n.need = e.need
    return n


def rename_all(eqns, outvars, ren):
    """Eqns and outvars with uses renamed through ren; eqns unchanged are kept as they are."""
    if not ren:
        return eqns, outvars
    out = []
    for e in eqns:
        args = substitute(e.args, ren)
        out.append(e if all(a is b for a, b in zip(args, e.args)) else with_args(e, args))
    return out, [substitute(v, ren) for v in outvars]


def has_generator(e):
    return any(v.shape is None for v in e.invars)


def pure(e):
    """Whether eqn e may be removed, merged or run at compile time: not an effect, draws from no
    generator, fills no dict sink, and is one of minigrad's own ops (a user's Function may do
    things the graph cannot see, e.g. count its calls, so it runs exactly as often as traced)."""
    if e.effect or e.fn is None or e.side or has_generator(e) or any(type(a) is dict for a in e.args):
        return False
    return (getattr(e.fn, "__module__", "") or "").startswith("minigrad.")


def alias_roots(graph):
    """var name -> the names whose memory it may share. Conservative: an equation's results may be
    views of any of its inputs; an `assign` result is its target's array."""
    roots = {}

    def root(v):
        return roots.get(v.name, frozenset([v.name]))
    for e in graph.eqns:
        if e.prim == "assign":
            roots[e.outvars[0].name] = root(e.args[0])
            continue
        r = frozenset().union(*(root(v) for v in e.invars)) if e.invars else frozenset()
        for v in e.outvars + [s[1] for s in e.side]:
            roots[v.name] = r | {v.name}
    return roots


def writes(graph, roots=None):
    """[(eqn index, names whose memory the `assign` at that index may write)]."""
    roots = alias_roots(graph) if roots is None else roots
    return [(i, roots.get(e.args[0].name, frozenset([e.args[0].name])))
            for i, e in enumerate(graph.eqns) if e.prim == "assign"]


def new_names(graph, prefix):
    """A generator of var names not used in graph (for equations a pass adds)."""
    used = {v.name for v in graph.invars} | {v.name for v, _ in graph.state} | {v.name for v, _ in graph.consts}
    for e in graph.eqns:
        used.update(v.name for v in e.outvars)
        used.update(s[1].name for s in e.side)
    i = 0
    while True:
        n = f"{prefix}{i}"
        i += 1
        if n not in used:
            yield n


def nbytes(v):
    return int(np.prod(v.shape, dtype=np.int64)) * np.dtype(v.dtype).itemsize


def static_key(a):
    """A hashable key of a static argument that tells apart what must not be merged (-0.0 / 0.0,
    NaN payloads, arrays by dtype, shape and bytes)."""
    if isinstance(a, Var):
        return ("var", a.name)
    if isinstance(a, float):
        return ("f", a.hex() if a == a else "nan")
    if isinstance(a, np.ndarray):
        return ("a", a.dtype.str, a.shape, a.tobytes())
    if isinstance(a, np.generic):
        return ("g", a.dtype.str, a.tobytes())
    if type(a) in (tuple, list):
        return (type(a).__name__,) + tuple(static_key(x) for x in a)
    if type(a) is dict:
        return None  # a sink forward may fill: never merged
    if isinstance(a, slice):
        return ("s", static_key(a.start), static_key(a.stop), static_key(a.step))
    try:
        hash(a)
    except TypeError:
        return None
    return (type(a).__name__, a)
