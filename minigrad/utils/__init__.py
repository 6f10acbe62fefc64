"""mg.utils: checkpointing (mg.utils.checkpoint), timing (mg.utils.benchmark) and mg.utils.data (the same module as mg.data), as torch.utils."""
import sys as _sys

from .. import data  # noqa: F401  (torch.utils.data's name, so a script ports by renaming torch to mg)
from . import checkpoint  # noqa: F401
from . import benchmark  # noqa: F401  (torch.utils.benchmark: Timer, Measurement, Compare)

# `from minigrad.utils.data.dataloader import default_collate` must reach mg.data's own modules, not
# load a second copy of each (with classes of their own): register them under this name too
for _name, _mod in list(_sys.modules.items()):
    if _name == "minigrad.data" or _name.startswith("minigrad.data."):
        _sys.modules["minigrad.utils." + _name[len("minigrad."):]] = _mod
