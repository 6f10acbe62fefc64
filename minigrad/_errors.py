"""Error types that are PyTorch's and minigrad's earlier ones at once.

PyTorch raises RuntimeError for bad shapes, out-of-range indices and unsupported dtypes, where
minigrad raised ValueError, IndexError or TypeError (NumPy's types). Each class below is both, so a
ported script's ``except RuntimeError`` and existing code's ``except ValueError`` both catch it (as
serialization.CheckpointError does).
"""


class ShapeError(RuntimeError, ValueError):
    """Shapes or sizes that do not fit (broadcasting, a normalized shape, a target's size): a
    RuntimeError as in PyTorch, and a ValueError."""


class IndexRangeError(RuntimeError, IndexError):
    """An index out of range for a dimension (gather, scatter, narrow): a RuntimeError as in PyTorch,
    and an IndexError."""


class DtypeError(RuntimeError, TypeError):
    """A dtype the op does not take (bool subtraction or negation): a RuntimeError as in PyTorch, and a
    TypeError."""


_AS_TORCH = {ValueError: ShapeError, IndexError: IndexRangeError, TypeError: DtypeError}


def as_torch(exc_type):
    """The class to raise for what minigrad raised as exc_type (itself if PyTorch's type already)."""
    return _AS_TORCH.get(exc_type, exc_type)
