"""The compiler: passes over the graph IR (minigrad/graph), code generation, and mg.jit.

    pipeline.py    optimize(graph, passes) -> (graph, reports); stats(graph); the pass table
    passes/        one pure Graph -> Graph function per module: fold, dce, cse, simplify, fuse;
                   schedule.py finds independent branches (the inter-op schedule)
    memory.py      liveness analysis and buffer reuse (the memory plan codegen follows)
    codegen.py     compile_graph(graph): straight-line NumPy source, exec'd once (compiled.code)
    _interop.py    runs a parallel group's branches at once on the inter-op threads
    jit.py         mg.jit / mg.compile: trace on first call, guards, retracing, graph breaks
"""
from .codegen import CompiledGraph, compile_graph  # noqa: F401
from .pipeline import PASSES, PassReport, format_reports, optimize, stats  # noqa: F401
from ..kernels.fused import CacheWarning  # noqa: F401,E402 - the kernel cache's warning (kernels/fused.py)
from .jit import CompiledModule, Explanation, JitFunction, JitWarning, compile, explain, jit, mark_dynamic, reset  # noqa: F401,E402,E501
