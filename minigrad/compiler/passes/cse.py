"""Common-subexpression elimination: the same primitive on the same inputs with the same static
parameters is computed once.

Never merged: effects, random ops (a generator input: each call draws), ops with side outputs or
dict arguments (sinks forward fills), a user's own Function, and any value an `assign` may write
into later (two names for one array would then both see the write). An `assign` writes its target's
array in place, and views share memory with what they view, so after an assign an earlier
expression reading anything that may share the target's memory is forgotten. Which memory a value
may share is tracked from the inputs: an op's results may be views of any of its inputs
(conservative). A graph output is never merged into another value (each output its own array).
"""
from ._util import alias_roots, copy_graph, pure, static_key, substitute, with_args, writes


def eliminate_common_subexpressions(graph):
    """graph with repeated pure equations (same op, inputs, parameters) computed once."""
    roots = alias_roots(graph)
    written = frozenset().union(*(hit for _, hit in writes(graph, roots)))

    def root(v):
        return roots.get(v.name, frozenset([v.name]))
    seen, ren, eqns, merged = {}, {}, [], 0
    outputs = {v.name for v in graph.outvars if hasattr(v, "name")}
    for e in graph.eqns:
        args = substitute(e.args, ren)
        if any(a is not b for a, b in zip(args, e.args)):
            e = with_args(e, args)
        if e.prim == "assign":
            hit = root(e.args[0])
            for k, prev in list(seen.items()):
                if any(root(v) & hit for v in prev.invars):
                    del seen[k]
            eqns.append(e)
            continue
        key = None
        if pure(e) and not any(v.name in written for v in e.outvars):
            ks = tuple(static_key(a) for a in e.args)
            if None not in ks:
                key = (e.fn, e.prim, ks)
        prev = seen.get(key) if key is not None else None
        if prev is not None and len(prev.outvars) == len(e.outvars) and \
                not any(v.name in outputs for v in e.outvars):
            for a, b in zip(e.outvars, prev.outvars):
                ren[a.name] = b
            merged += 1
            continue
        if key is not None:
            seen[key] = e
        eqns.append(e)
    g = copy_graph(graph, eqns=eqns, outvars=[substitute(v, ren) for v in graph.outvars])
    g.pass_details = f"merged {merged} equations"
    return g
