"""Constant folding: an equation whose tensor inputs are all constants runs once, now.

Its results become constants of the graph (owned copies: nothing at run time writes into them).
Not folded: a strided view (expand, permute: free at run time, and baked it would be a contiguous
copy, which BLAS rounds differently from the strided view eager passes it), an equation
whose results are bigger than its inputs (over 4096 elements), effects, random ops, ops with side
outputs (their sinks are filled per run), a user's own Function (it runs as often as traced),
values an `assign` writes into, and anything reading a named input (parameters, state, gradients
are read at each run unless the user declared them constant: mg.graph.trace(..., constants=...) or
mg.compile(model, freeze=True)).
"""
import numpy as np

from ...graph.interpret import _resolve, eval_eqn as _eval
from ._util import alias_roots, copy_graph, pure, substitute, with_args, writes


def eval_eqn(e, vals):
    """Run eqn e's forward on NumPy values, as graph.run does: its outputs as arrays."""
    return _eval(e, vals)[0]


def _inflates(e, const):
    """Whether folding e would bake a big array made from small ones (expand(1.0) to a million
    elements is a free broadcast view at run time; baked, it is 4 MB read at every call)."""
    out = sum(int(np.prod(v.shape, dtype=np.int64)) for v in e.outvars if v.shape is not None)
    ins = sum(const[v.name].size for v in e.invars)
    return out > 4096 and out > ins


def fold_constants(graph):
    """graph with the equations on constants only run now, their results constants."""
    const = {v.name: a for v, a in graph.consts}
    consts = list(graph.consts)
    # memory an `assign` writes is not constant, nor is anything computed to be written into
    written = frozenset().union(*(hit for _, hit in writes(graph, alias_roots(graph))))
    eqns, folded = [], 0
    for e in graph.eqns:
        ins = e.invars
        if (pure(e) and ins and all(v.name in const and v.name not in written for v in ins)
                and not any(v.name in written for v in e.outvars) and not _inflates(e, const)):
            try:
                outs = eval_eqn(e, [_resolve(a, const) for a in e.args])
            except Exception:  # noqa: BLE001 - an op that fails here fails at run time, where it says so
                eqns.append(e)
                continue
            if getattr(e.fn, "_is_view", False) and not all(o.flags.c_contiguous for o in outs):
                eqns.append(e)  # a strided view: baked, it would be a contiguous copy BLAS rounds differently
                continue
            for v, o in zip(e.outvars, outs):
                o = np.array(o, dtype=v.dtype, copy=True)  # owned: later ops may not write into it
                const[v.name] = o
                consts.append((v, o))
            folded += 1
            continue
        eqns.append(e)
    g = copy_graph(graph, eqns=eqns, consts=consts)
    g.pass_details = f"folded {folded} equations"
    return g


__all__ = ["fold_constants", "eval_eqn", "substitute", "with_args"]
