"""mg.viz: draw the autograd graph (`mg.viz.draw(loss)`), as torchviz.make_dot does for PyTorch."""
from .graph.draw import Drawing, draw  # noqa: F401

__all__ = ["draw", "Drawing"]
