"""Run under mpirun -n 2 to check that failure is loud: `exception` raises on rank 1 while rank 0
waits in a barrier (the job must abort, printing rank 1's traceback); `timeout` has rank 1 skip an
all_reduce that rank 0 waits for (rank 0 must fail naming the op, its number and its rank); `exit`
has rank 1 call sys.exit(3) and `skip` has it skip a barrier and end normally while rank 0 waits
(rank 0 must fail at once naming rank 1 and where it left); `mismatch` all-reduces 4 elements on
rank 0 and 3 on rank 1 (run with MINIGRAD_DISTRIBUTED_DEBUG=DETAIL: named before MPI runs it);
`ddp` builds DistributedDataParallel over models whose second layer differs."""
import sys
import time

import minigrad as mg
import minigrad.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=float(sys.argv[2]) if len(sys.argv) > 2 else None)
rank = dist.get_rank()
dist.barrier()                                            # collective #1
if mode == "exception":
    if rank == 1:
        raise ValueError("boom from rank 1")
    dist.barrier()                                        # rank 0 waits here until the abort
elif mode == "timeout":
    if rank == 0:
        dist.all_reduce(mg.ones(4))                       # collective #2: rank 1 never joins
    else:
        time.sleep(60)                                    # "hung": killed by the abort
elif mode == "exit":
    if rank == 1:
        sys.exit(3)                                       # leaves after collective #1
    dist.barrier()                                        # collective #2: rank 1 never joins
elif mode == "skip":
    if rank == 0:
        dist.barrier()                                    # collective #2: rank 1 skipped it and ended
elif mode == "mismatch":
    dist.all_reduce(mg.ones(4 if rank == 0 else 3))
elif mode == "ddp":
    model = mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.Linear(4, 2 if rank == 0 else 5))
    mg.nn.parallel.DistributedDataParallel(model)
print(f"rank {rank} finished normally", flush=True)
