"""Old spellings that still work, with a DeprecationWarning naming the new one."""
import inspect
import warnings

from .ops import linalg as _linalg
from .tensor import Tensor


def trace(*args, **kwargs):
    """The sum of the main diagonal of a 2-D tensor, as torch.trace (see mg.ops.trace).

    The graph tracer is mg.graph.trace(fn, *example_args). The old spelling mg.trace(fn, ...)
    (a callable first argument) still traces, with a DeprecationWarning naming the new one.

    Example:
        >>> mg.trace(mg.eye(3))
        tensor(3.)
    """
    fn = args[0] if args else kwargs.get("fn")
    if fn is not None and callable(fn) and not isinstance(fn, Tensor):
        warnings.warn("mg.trace(fn, *args) as the graph tracer is deprecated: use mg.graph.trace(fn, *args) "
                      "(mg.trace(x) is torch.trace, the sum of a matrix's diagonal)",
                      DeprecationWarning, stacklevel=2)
        from .graph.trace import trace as graph_trace
        return graph_trace(*args, **kwargs)
    return _linalg.trace(*args, **kwargs)


trace.__signature__ = inspect.signature(_linalg.trace)  # (input), as torch.trace
