"""mg.utils: checkpointing (mg.utils.checkpoint), as torch.utils."""
from . import checkpoint  # noqa: F401
