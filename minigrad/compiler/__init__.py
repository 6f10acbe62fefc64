"""The compiler: passes over the graph IR (minigrad/graph), code generation, and mg.jit.

    pipeline.py    optimize(graph, passes) -> (graph, reports); stats(graph); the pass table
    passes/        one pure Graph -> Graph function per module: fold, dce, cse, simplify, fuse
    memory.py      liveness analysis and buffer reuse (the memory plan codegen follows)
    codegen.py     compile_graph(graph): straight-line NumPy source, exec'd once (compiled.code)
    jit.py         mg.jit / mg.compile: trace on first call, guards, retracing, graph breaks
"""
from .codegen import CompiledGraph, compile_graph  # noqa: F401
from .pipeline import PASSES, PassReport, format_reports, optimize, stats  # noqa: F401
from ..kernels.fused import CacheWarning  # noqa: F401,E402 - the kernel cache's warning (kernels/fused.py)
from .jit import CompiledModule, Explanation, JitFunction, JitWarning, compile, explain, jit, mark_dynamic, reset  # noqa: F401,E402,E501
