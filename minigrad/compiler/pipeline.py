"""optimize(graph, passes): run passes by name, measuring each (equations and intermediate bytes
before -> after); format_reports prints the table mg.jit.explain shows."""
import math

import numpy as np

from ..graph.ir import Var
from .passes.cse import eliminate_common_subexpressions
from .passes.dce import eliminate_dead_code
from .passes.fold import fold_constants
from .passes.fuse import fuse_elementwise
from .passes.simplify import simplify

PASSES = {
    "fold": fold_constants,
    "dce": eliminate_dead_code,
    "cse": eliminate_common_subexpressions,
    "simplify": simplify,
    "fuse": fuse_elementwise,
}
# the default is bit for bit the traced program; FUSED adds elementwise fusion (bitwise too, unless
# fuse_elementwise(transcendentals=True) is called directly)
DEFAULT = ("fold", "dce", "cse", "simplify", "dce")
FUSED = DEFAULT + ("fuse",)


def stats(graph):
    """{'eqns', 'by_prim' (Counter), 'bytes': bytes of intermediate values (equation results that
    are not graph outputs)}."""
    outs = {v.name for v in graph.outvars if isinstance(v, Var)}
    nbytes = 0
    size = {}
    for e in graph.eqns:
        if e.effect:
            continue
        for v in e.outvars + [s[1] for s in e.side]:
            if v.shape is not None and v.name not in outs:
                dt = v.dtype
                item = size.get(dt)
                if item is None:
                    item = size[dt] = np.dtype(dt).itemsize
                nbytes += math.prod(v.shape) * item   # (math.prod: NumPy's is 10 us a call)
    return {"eqns": len(graph.eqns), "by_prim": graph.count(), "bytes": nbytes}


class PassReport:
    """What one pass changed."""

    def __init__(self, name, before, after, details=""):
        self.name, self.before, self.after, self.details = name, before, after, details

    @property
    def changed(self):
        """Whether the pass changed the graph (its equation count or its bytes)."""
        return self.before["eqns"] != self.after["eqns"] or self.before["bytes"] != self.after["bytes"]

    def __repr__(self):
        return (f"PassReport({self.name}: {self.before['eqns']} -> {self.after['eqns']} eqns, "
                f"{self.before['bytes']} -> {self.after['bytes']} bytes)")


def optimize(graph, passes=None):
    """Run the passes (names from PASSES; None: DEFAULT, which leaves out "fuse") in order.

    Returns (the optimized graph, [PassReport]). The input graph is not changed.
    """
    names = list(DEFAULT if passes is None else passes)
    reports = []
    for name in names:
        if name not in PASSES:
            raise ValueError(f"optimize: unknown pass {name!r}; known: {sorted(PASSES)}")
    after = None
    for name in names:
        before = after if after is not None else stats(graph)  # the last pass's "after" (same graph)
        graph = PASSES[name](graph)
        after = stats(graph)
        reports.append(PassReport(name, before, after, getattr(graph, "pass_details", "")))
    return graph, reports


def format_reports(reports, extra=()):
    """The pass table: one row per pass (and `extra` rows (name, before, after, details))."""
    rows = [(r.name, r.before, r.after, r.details) for r in reports] + list(extra)
    lines = [f"{'pass':<10} {'eqns':>13} {'intermediate bytes':>27}  details"]
    for name, b, a, d in rows:
        lines.append(f"{name:<10} {b['eqns']:>5} -> {a['eqns']:<5} {b['bytes']:>12,} -> {a['bytes']:<12,}  {d}")
    return "\n".join(lines)
