"""minigrad.nn.parallel: DistributedDataParallel (torch.nn.parallel)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
