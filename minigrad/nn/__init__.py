"""minigrad.nn: modules, parameters, losses, and the functional / init / utils submodules, as torch.nn."""
from .parameter import Parameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init, utils  # noqa: E402
from . import parallel  # noqa: E402  (DistributedDataParallel; imports mpi4py only when used)

__all__ = ["Parameter", "functional", "init", "utils", "parallel", *_modules_all]
