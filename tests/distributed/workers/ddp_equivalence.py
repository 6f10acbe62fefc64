"""Run under mpirun -n 2: DDP (2 ranks x batch 32) against one process with batch 64, and the rest of
DDP's behaviour (no_sync, find_unused_parameters, buffer broadcast, SyncBatchNorm). Each rank
writes its findings as JSON to OUT_DIR/ddp_rank<r>.json; the pytest side asserts on them."""
import json
import sys

import numpy as np

import minigrad as mg
import minigrad.distributed as dist
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.nn.parallel import DistributedDataParallel as DDP

out_dir = sys.argv[1]
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == 2, world
res = {}


def mlp():
    return nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 3))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3), nn.ReLU(), nn.Flatten(), nn.Linear(6 * 2 * 2, 3))


def cnn_bn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


def data(kind, steps, dtype, seed=123):
    rng = np.random.default_rng(seed)
    shape = (64, 10) if kind == "mlp" else (64, 1, 8, 8)
    xs = [rng.standard_normal(shape).astype(dtype) for _ in range(steps)]
    ys = [rng.integers(0, 3, 64) for _ in range(steps)]
    return xs, ys


def build(factory, dtype, seed):
    mg.manual_seed(seed)
    m = factory()
    return m.double() if dtype == np.float64 else m


def make_opt(name, params):
    return mg.optim.SGD(params, lr=0.1, momentum=0.9) if name == "sgd" else mg.optim.Adam(params, lr=1e-2)


def train(model, opt, xs, ys, shard):
    for x, y in zip(xs, ys):
        x, y = x[shard], y[shard]
        loss = F.cross_entropy(model(mg.from_numpy(x)), mg.from_numpy(y))
        opt.zero_grad()
        loss.backward()
        opt.step()


def flat_state(model):
    return np.concatenate([v.detach().numpy().astype(np.float64).ravel() for v in model.state_dict().values()])


def all_equal_across_ranks(arr):
    t = mg.from_numpy(np.ascontiguousarray(arr, dtype=np.float64))
    parts = [mg.zeros_like(t) for _ in range(world)]
    dist.all_gather(parts, t)
    return float(np.abs(parts[0].numpy() - parts[1].numpy()).max())


# ---- 1. equivalence: 50 SGD and 50 Adam steps, MLP and CNN (and the CNN with SyncBatchNorm)
sl = slice(32 * rank, 32 * (rank + 1))
for kind, factory in (("mlp", mlp), ("cnn", cnn), ("cnn_syncbn", cnn_bn)):
    for dtype in (np.float64, np.float32):
        for opt_name in ("sgd", "adam"):
            xs, ys = data("mlp" if kind == "mlp" else "cnn", 50, dtype)
            ref = build(factory, dtype, 0)
            train(ref, make_opt(opt_name, ref.parameters()), xs, ys, slice(0, 64))
            # rank 1 starts from other weights: DDP's construction broadcast must fix that
            local = build(factory, dtype, 0 if rank == 0 else 99)
            if kind == "cnn_syncbn":
                local = nn.SyncBatchNorm.convert_sync_batchnorm(local)
            model = DDP(local, bucket_cap_mb=0.0005)  # several small buckets: the ordered launch path
            train(model, make_opt(opt_name, model.parameters()), xs, ys, sl)
            key = f"{kind}_{np.dtype(dtype).name}_{opt_name}"
            res[key] = float(np.abs(flat_state(ref) - flat_state(model.module)).max())
            res[key + "_buckets"] = len(model._buckets)
            res[key + "_replicas_differ"] = all_equal_across_ranks(flat_state(model.module))

# ---- 2. no_sync: the first micro-batch accumulates locally, the second backward reduces the sum
xs, ys = data("mlp", 2, np.float64, seed=7)
ref = build(mlp, np.float64, 1)
for x, y in zip(xs, ys):
    F.cross_entropy(ref(mg.from_numpy(x)), mg.from_numpy(y)).backward()
model = DDP(build(mlp, np.float64, 1))
with model.no_sync():
    F.cross_entropy(model(mg.from_numpy(xs[0][sl])), mg.from_numpy(ys[0][sl])).backward()
grads_local = np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])
res["no_sync_local_grads_differ"] = all_equal_across_ranks(grads_local)
F.cross_entropy(model(mg.from_numpy(xs[1][sl])), mg.from_numpy(ys[1][sl])).backward()
res["no_sync_vs_reference"] = float(max(np.abs(p.grad.numpy() - q.grad.numpy()).max()
                                        for p, q in zip(model.module.parameters(), ref.parameters())))


# ---- 3. find_unused_parameters
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(4, 2)

    def forward(self, x, use_b):
        h = self.body(x).relu()
        return self.b(h) if use_b else self.a(h)


mg.manual_seed(5)
x = mg.randn(6, 4, dtype=mg.float64) + rank
m = DDP(TwoHeads().double(), find_unused_parameters=True)
# head b is used by no rank: its .grad stays None; head a and the body are averaged
m(x, False).sum().backward()
res["unused_nobody_grad_is_none"] = m.module.b.weight.grad is None
res["unused_used_grads_agree"] = all_equal_across_ranks(m.module.a.weight.grad.numpy())
# head a used on rank 0 only, head b on rank 1 only: the other rank contributes zeros, so every
# rank ends with (the using rank's gradient) / 2
m.zero_grad()
m(x, rank == 1).sum().backward()
probe = TwoHeads().double()
probe.load_state_dict(m.module.state_dict())
probe(x, rank == 1).sum().backward()
for head, user in (("a", 0), ("b", 1)):
    g_user = mg.from_numpy(getattr(probe, head).weight.grad.numpy() if rank == user else np.zeros((2, 4)))
    dist.broadcast(g_user, src=user)
    res[f"unused_head_{head}_grad"] = float(np.abs(getattr(m.module, head).weight.grad.numpy()
                                                   - g_user.numpy() / 2).max())
# without find_unused_parameters, a parameter without gradient is an error naming it
m2 = DDP(TwoHeads().double())
try:
    m2(x, False).sum().backward()
    res["unused_error"] = None
except RuntimeError as e:
    res["unused_error"] = str(e)

# ---- 4. BatchNorm buffers: broadcast from rank 0 before each forward
mg.manual_seed(3)
m = DDP(nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4)).double())
for _ in range(2):
    m(mg.randn(8, 5, dtype=mg.float64) * (rank + 1)).sum().backward()
buf = lambda: np.concatenate([b.numpy().astype(np.float64).ravel() for b in m.module.buffers()])  # noqa: E731
res["buffers_differ_after_local_forward"] = all_equal_across_ranks(buf())
m.eval()
with mg.no_grad():
    m(mg.randn(8, 5, dtype=mg.float64))
res["buffers_after_eval_forward"] = all_equal_across_ranks(buf())

# ---- 5. SyncBatchNorm against BatchNorm over the global batch (uneven shards: 3 + 5 samples)
for shape in ((8, 3), (8, 3, 5), (8, 3, 4, 4)):
    rng = np.random.default_rng(11)
    xg = rng.standard_normal(shape) * 2 + 1
    wg = rng.standard_normal(shape)
    shard = slice(0, 3) if rank == 0 else slice(3, 8)
    bn = (nn.BatchNorm1d if len(shape) < 4 else nn.BatchNorm2d)(3).double()
    with mg.no_grad():
        bn.weight.copy_(mg.from_numpy(rng.standard_normal(3)))
        bn.bias.copy_(mg.from_numpy(rng.standard_normal(3)))
    sbn = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(bn)).double()[0]
    sbn_ref = (nn.BatchNorm1d if len(shape) < 4 else nn.BatchNorm2d)(3).double()
    sbn_ref.load_state_dict(sbn.state_dict())
    x_ref = mg.tensor(xg, requires_grad=True)
    y_ref = sbn_ref(x_ref)
    (y_ref * mg.from_numpy(wg)).sum().backward()
    x_loc = mg.tensor(xg[shard], requires_grad=True)
    y_loc = sbn(x_loc)
    (y_loc * mg.from_numpy(wg[shard])).sum().backward()
    gw, gbias = sbn.weight.grad.clone(), sbn.bias.grad.clone()
    dist.all_reduce(gw)
    dist.all_reduce(gbias)
    key = "syncbn_" + "x".join(map(str, shape))
    res[key] = {
        "out": float(np.abs(y_loc.detach().numpy() - y_ref.detach().numpy()[shard]).max()),
        "running_mean": float(np.abs(sbn.running_mean.numpy() - sbn_ref.running_mean.numpy()).max()),
        "running_var": float(np.abs(sbn.running_var.numpy() - sbn_ref.running_var.numpy()).max()),
        "grad_input": float(np.abs(x_loc.grad.numpy() - x_ref.grad.numpy()[shard]).max()),
        "grad_weight": float(np.abs(gw.numpy() - sbn_ref.weight.grad.numpy()).max()),
        "grad_bias": float(np.abs(gbias.numpy() - sbn_ref.bias.grad.numpy()).max()),
        "num_batches_tracked": int(sbn.num_batches_tracked.item()),
    }

# ---- 6. bucket buffers: allocated once and reused; .grad never aliases them; zero_grad(set_to_none=False)
# (the averaged gradient is divided straight into the existing .grad array) still matches batch 64
xs, ys = data("mlp", 5, np.float64, seed=11)
ref = build(mlp, np.float64, 2)
ref_opt = mg.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
model = DDP(build(mlp, np.float64, 2), bucket_cap_mb=0.0005)
opt = mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
buffer_ids, aliased, grad_arrays_kept = set(), False, True
for step, (x, y) in enumerate(zip(xs, ys)):
    for m_, o_, shard in ((ref, ref_opt, slice(0, 64)), (model, opt, sl)):
        o_.zero_grad(set_to_none=False)
        F.cross_entropy(m_(mg.from_numpy(x[shard])), mg.from_numpy(y[shard])).backward()
        o_.step()
    grads = [p.grad._data for p in model.parameters()]
    if step > 0:  # zero_grad(set_to_none=False) keeps the arrays; DDP writes the average into them
        grad_arrays_kept &= all(a is b for a, b in zip(grads, prev))
    prev = grads
    buffer_ids.update(id(b.buffer) for b in model._buckets)
    aliased |= any(np.shares_memory(g, b.buffer) for g in grads for b in model._buckets)
res["bucket_buffers_reused"] = len(buffer_ids) == len(model._buckets)
res["grad_aliases_bucket_buffer"] = bool(aliased)
res["grad_arrays_kept"] = bool(grad_arrays_kept)
res["set_to_none_false_vs_reference"] = float(np.abs(flat_state(ref) - flat_state(model.module)).max())

# ---- 7. the coalesced broadcast (construction and buffers): one collective for mixed dtypes, and
# every rank ends with rank 0's exact values, whatever the dtypes and shapes
from minigrad.nn.parallel.distributed import _broadcast_coalesced  # noqa: E402


def mixed(r):
    return [mg.tensor(np.arange(3) * (r + 1), dtype=mg.int64),
            mg.tensor(np.full((2, 3), 0.1 * (r + 1)), dtype=mg.float32),
            mg.tensor(np.float64(r) - 0.3, dtype=mg.float64), mg.tensor([r == 0, r == 1]),
            mg.tensor(np.arange(5.0) / (r + 3), dtype=mg.float64)]


ts = mixed(rank)
seq_before = dist.distributed_c10d._group.seq
_broadcast_coalesced(ts)
res["coalesced_broadcast_collectives"] = dist.distributed_c10d._group.seq - seq_before
res["coalesced_broadcast_exact"] = all(
    t.dtype == w.dtype and t.shape == w.shape and np.array_equal(t.numpy(), w.numpy()) for t, w in zip(ts, mixed(0)))

with open(f"{out_dir}/ddp_rank{rank}.json", "w") as f:
    json.dump(res, f)
dist.destroy_process_group()
