"""Dead-code elimination: equations none of whose results is used go.

Kept: every effect (`assign`, `set_grad`: they write user-visible state), every draw from a random
generator (removing one would shift the numbers every later draw gets), a user's own Function
(it may do what the graph cannot see), and everything those or an output read, transitively.
Gradient work for an input that does not require grad was never recorded by the tracer (the engine
skips it), so what is left to remove is work whose results nobody reads: unused forward values,
side outputs nobody reads, constants no equation uses.
"""
from ._util import copy_graph, pure


def eliminate_dead_code(graph):
    """graph without the equations whose results nobody reads (effects and draws kept)."""
    live = {v.name for v in graph.outvars if hasattr(v, "name")}
    kept = []
    for e in reversed(graph.eqns):
        outs = [v.name for v in e.outvars] + [s[1].name for s in e.side]
        if not pure(e) or any(n in live for n in outs):
            kept.append(e)
            live.update(v.name for v in e.invars)
    kept.reverse()
    consts = [(v, a) for v, a in graph.consts if v.name in live]
    g = copy_graph(graph, eqns=kept, consts=consts)
    g.pass_details = (f"removed {len(graph.eqns) - len(kept)} equations, "
                      f"{len(graph.consts) - len(consts)} constants")
    return g
