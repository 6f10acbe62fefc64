"""Run under mpirun -n 2: every collective, blocking and async; each rank writes what it got to
OUT_DIR/coll_rank<r>.json and the pytest side checks it against what the ranks sent."""
import json
import sys

import numpy as np

import minigrad as mg
import minigrad.distributed as dist

out_dir = sys.argv[1]
dist.init_process_group("mpi", timeout=60)
rank, world = dist.get_rank(), dist.get_world_size()
res = {"rank": rank, "world": world, "initialized": dist.is_initialized(), "backend": dist.get_backend()}


def base(dtype=np.float64):
    return mg.from_numpy(np.array([1.0, -2.0, 3.0], dtype=dtype) * (rank + 2))  # rank 0: x2, rank 1: x3


for op in ("SUM", "PRODUCT", "MIN", "MAX", "AVG"):
    t = base()
    dist.all_reduce(t, getattr(dist.ReduceOp, op))
    res[f"all_reduce_{op}"] = t.tolist()
t = mg.from_numpy(np.array([5, 7], dtype=np.int64) + rank)
dist.all_reduce(t, dist.ReduceOp.MAX)
res["all_reduce_int64_MAX"] = t.tolist()
t = base(np.float32)
work = dist.all_reduce(t, async_op=True)
res["async_is_work"] = isinstance(work, dist.Work)
res["async_wait"] = work.wait()
res["async_completed"] = work.is_completed()
res["all_reduce_async_float32"] = t.tolist()
# a non-contiguous tensor is reduced in place through a copy
t = mg.from_numpy(np.arange(6, dtype=np.float64).reshape(2, 3) * (rank + 1)).t()
dist.all_reduce(t)
res["all_reduce_transposed"] = t.tolist()

t = base() if rank == 1 else mg.zeros(3, dtype=mg.float64)
dist.broadcast(t, src=1)
res["broadcast_from_1"] = t.tolist()

parts = [mg.zeros(3, dtype=mg.float64) for _ in range(world)]
w = dist.all_gather(parts, base(), async_op=True)
w.wait()
res["all_gather"] = [p.tolist() for p in parts]
out = mg.zeros(world * 3, dtype=mg.float64)
dist.all_gather_into_tensor(out, base())
res["all_gather_into_tensor"] = out.tolist()

out = mg.zeros(2, dtype=mg.float64)
dist.reduce_scatter(out, [mg.tensor([10.0 * r + rank, 1.0], dtype=mg.float64) for r in range(world)])
res["reduce_scatter"] = out.tolist()
out = mg.zeros(2, dtype=mg.float64)
dist.reduce_scatter_tensor(out, mg.arange(4, dtype=mg.float64) + rank, op=dist.ReduceOp.AVG)
res["reduce_scatter_tensor_AVG"] = out.tolist()

glist = [mg.zeros(3, dtype=mg.float64) for _ in range(world)] if rank == 0 else None
dist.gather(base(), glist, dst=0)
res["gather"] = [g.tolist() for g in glist] if glist is not None else None

t = mg.zeros(2, dtype=mg.float64)
slist = [mg.tensor([1.0, 2.0], dtype=mg.float64) * (r + 1) for r in range(world)] if rank == 0 else None
w = dist.scatter(t, slist, src=0, async_op=True)
w.wait()
res["scatter"] = t.tolist()
res["barrier"] = dist.barrier() is None

# differentiable all_reduce: the gradient of sum over ranks is summed over ranks too
from minigrad.distributed.nn.functional import all_reduce as diff_all_reduce  # noqa: E402
x = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
y = diff_all_reduce(x * (rank + 1))
(y * y).sum().backward()
res["diff_all_reduce_value"] = y.tolist()
res["diff_all_reduce_grad"] = x.grad.tolist()

errors = {}
for name, fn in (("bad_op", lambda: dist.all_reduce(base(), op="sum")),
                 ("bad_src", lambda: dist.broadcast(base(), src=5)),
                 ("bad_list", lambda: dist.all_gather([mg.zeros(3)], base())),
                 ("avg_int", lambda: dist.all_reduce(mg.tensor([1, 2]), dist.ReduceOp.AVG)),
                 ("twice", lambda: dist.init_process_group("mpi")),
                 ("backend", lambda: dist.init_process_group("nccl"))):
    try:
        fn()
        errors[name] = None
    except (TypeError, ValueError, RuntimeError) as e:
        errors[name] = f"{type(e).__name__}: {e}"
res["errors"] = errors

dist.destroy_process_group()
res["after_destroy"] = dist.is_initialized()
try:
    dist.get_rank()
except RuntimeError as e:
    res["get_rank_after_destroy"] = str(e)
dist.init_process_group("mpi")  # MPI stays initialised: a second group works
t = base()
dist.all_reduce(t)
res["reinit_all_reduce"] = t.tolist()
dist.destroy_process_group()

with open(f"{out_dir}/coll_rank{rank}.json", "w") as f:
    json.dump(res, f)
