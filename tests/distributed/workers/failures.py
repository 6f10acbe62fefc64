"""Run under mpirun -n 2 to check that failure is loud: `exception` raises on rank 1 while rank 0
waits in a barrier (the job must abort, printing rank 1's traceback); `timeout` has rank 1 skip an
all_reduce that rank 0 waits for (rank 0 must fail naming the op, its number and its rank)."""
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
print(f"rank {rank} finished normally", flush=True)
