"""Graph passes: each a pure function Graph -> Graph (its input is never changed)."""
from ._util import copy_graph  # noqa: F401
