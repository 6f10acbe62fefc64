"""The graph as an object: trace a function into an IR (mg.graph.trace), run it, save and load it.

    ir.py         Graph, Var, Eqn (typed SSA, printed like a jaxpr)
    trace.py      mg.graph.trace: records Function.apply (the one hook), in-place writes and grad accumulation
    interpret.py  Graph.run: NumPy forward of each primitive, effects in program order
    serialize.py  graph.save / mg.load_graph: JSON + .npy in a pickle-free zip
"""
from .ir import Eqn, Graph, GuardFailure, StateBinding, Var  # noqa: F401
from .trace import GraphBreak, trace  # noqa: F401
from .serialize import GraphFormatError, load_graph, register  # noqa: F401,E402
