"""DistributedDataParallel: data parallelism across MPI ranks, as torch.nn.parallel.DistributedDataParallel.

Each rank holds a full replica of the model and runs it on its own part of the batch; DDP keeps
the replicas identical by averaging the gradients over ranks during ``backward()``:

- at construction, rank 0's parameters and buffers are broadcast to every rank;
- the parameters are split into buckets (about ``bucket_cap_mb`` each, in reverse registration
  order, which is roughly the order backward produces their gradients);
- a post-accumulate-grad hook on every parameter marks it ready once its ``.grad`` is final; when
  a whole bucket is ready its gradients are flattened into one buffer and a non-blocking
  ``Iallreduce`` starts, so the transfer overlaps the rest of the backward (buckets start strictly
  in bucket order, so every rank issues the same collectives in the same order);
- a callback queued on the engine runs when the backward has walked the whole graph: it waits for
  every bucket and writes the averages (sum / world_size) back into each ``.grad``, so that
  ``backward()`` returns with synchronised gradients and ``optimizer.step()`` can follow.

``no_sync()`` skips the reduction (gradients accumulate locally; the next synchronised backward
reduces the accumulated sum). Buffers (BatchNorm's running statistics) are broadcast from rank 0
before every forward (``broadcast_buffers=True``, PyTorch's default);
[`minigrad.nn.SyncBatchNorm`][minigrad.nn.SyncBatchNorm] computes the batch statistics over all ranks instead.
"""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from ... import distributed as dist
from ...autograd.engine import queue_callback
from ...autograd.function import AccumulateGrad
from ...autograd.grad_mode import is_grad_enabled
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_BUCKET_CAP_MB = 25  # as PyTorch


class _Bucket:
    """Parameters reduced together. ``buffer`` (allocated at the first launch, reused every step)
    holds their gradients flattened, ``spans[i]`` the slice of ``params[i]`` in it."""
    __slots__ = ("index", "params", "spans", "pending", "work", "buffer", "flat", "ready")

    def __init__(self, index, params):
        self.index, self.params = index, params
        self.spans, offset = [], 0
        for p in params:
            self.spans.append((offset, offset + p._data.size))
            offset += p._data.size
        self.buffer = self.flat = None
        self.reset()

    def reset(self):
        self.pending = len(self.params)
        self.ready = set()
        self.work = None


class DistributedDataParallel(Module):
    r"""Wrap ``module`` so that ``backward()`` averages its gradients over all ranks.

    Call [`minigrad.distributed.init_process_group()`][minigrad.distributed.init_process_group] first; give
    every rank the same model and its own shard of the data (see
    [`minigrad.data.DistributedSampler`][minigrad.data.DistributedSampler]).

    Args:
        module (Module): the model to replicate.
        device_ids, output_device, dim: accepted for PyTorch compatibility (CPU only).
        broadcast_buffers (bool): broadcast rank 0's buffers before each forward. Default: ``True``.
        process_group: only ``None`` (the default group).
        bucket_cap_mb (float): bucket size in MiB. Default: 25.
        find_unused_parameters (bool): after each forward, walk the graph from the outputs and
            mark the parameters it does not reach as ready (they contribute zeros; a parameter no
            rank used keeps its ``.grad``). Without it a parameter that gets no gradient leaves its
            bucket incomplete and backward raises, naming it. Default: ``False``.
        gradient_as_bucket_view, static_graph: accepted; only ``False`` is supported.

    Example:
        >>> dist.init_process_group("mpi")
        >>> model = nn.parallel.DistributedDataParallel(build_model())
        >>> loss = F.cross_entropy(model(x_shard), y_shard); loss.backward(); opt.step()
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, **kwargs) -> None:
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel: Default process group has not been initialized, "
                               "please make sure to call init_process_group.")
        if process_group is not None:
            raise ValueError("DistributedDataParallel: only the default process group is supported")
        if gradient_as_bucket_view or static_graph:
            raise NotImplementedError("DistributedDataParallel: gradient_as_bucket_view and static_graph "
                                      "are not supported")
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an nn.Module, got {type(module).__name__}")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.world_size = dist.get_world_size()
        self.rank = dist.get_rank()
        self.bucket_cap_mb = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any "
                               "parameter that requires a gradient.")
        self._param_names = {id(p): n for n, p in named}
        self._params = [p for _, p in named]
        if self.world_size > 1:  # as PyTorch's _verify_param_shape_across_processes, always: a
            # parameter whose shape differs between ranks corrupted the heap in the flat broadcasts
            from ...distributed.distributed_c10d import _require, _verify_same
            _verify_same(_require("DistributedDataParallel"), "DistributedDataParallel (the model on each rank)",
                         [f"parameter {n!r}: {tuple(p.shape)} {p.dtype}" for n, p in module.named_parameters()] +
                         [f"buffer {n!r}: {tuple(b.shape)} {b.dtype}" for n, b in module.named_buffers()])
        self._sync_module_states()
        self._buckets = self._make_buckets(self._params, self.bucket_cap_mb * 2 ** 20)
        self._bucket_of = {id(p): b for b in self._buckets for p in b.params}
        self._next_bucket = 0      # buckets start in order: the next one to launch
        self._in_backward = False  # a finalize callback is queued for the running backward
        self._unused = ()          # parameters the last forward did not reach (find_unused_parameters)
        self._comm_wait_s = 0.0    # seconds blocked on communication: buffer broadcasts + backward's final wait
        self._comm_wait_cpu_s = 0.0  # the CPU time of those waits (a waiting rank spins on MPI_Test)
        self._handles = [p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in self._params]

    # ---- construction ---------------------------------------------------------------------------
    @staticmethod
    def _make_buckets(params, cap_bytes):
        """Buckets in reverse parameter order (about backward's order), one dtype per bucket."""
        buckets, cur, size, dtype = [], [], 0, None
        for p in reversed(params):
            nbytes = p._data.nbytes
            if cur and (p.dtype != dtype or size + nbytes > cap_bytes):
                buckets.append(_Bucket(len(buckets), cur))
                cur, size = [], 0
            cur.append(p)
            size += nbytes
            dtype = p.dtype
        if cur:
            buckets.append(_Bucket(len(buckets), cur))
        return buckets

    def _sync_module_states(self):
        """Broadcast rank 0's parameters and buffers (one flat broadcast per dtype)."""
        _broadcast_coalesced(list(self.module.parameters()) + [b for b in self.module.buffers()])

    def _sync_buffers(self):
        bufs = [b for b in self.module.buffers()]
        if bufs:
            _broadcast_coalesced(bufs)

    # ---- forward --------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._in_backward:
            raise RuntimeError("DistributedDataParallel: forward called while the previous backward's "
                               "gradient reduction has not finished")
        if self.require_forward_param_sync and self.broadcast_buffers and self.world_size > 1:
            t0, c0 = time.perf_counter(), time.thread_time()
            self._sync_buffers()  # a collective: it also waits for a rank that is behind
            self._comm_wait_s += time.perf_counter() - t0
            self._comm_wait_cpu_s += time.thread_time() - c0
        out = self.module(*inputs, **kwargs)
        if self.find_unused_parameters and self.require_backward_grad_sync and is_grad_enabled():
            self._unused = self._find_unused(out)
        return out

    def _find_unused(self, out):
        """The parameters that the graph of `out` does not reach (walked through next_functions)."""
        seen, stack, reached = set(), [], set()
        for t in _tensors_in(out):
            if t.grad_fn is not None:
                stack.append(t.grad_fn)
            elif t.requires_grad:
                reached.add(id(t))
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, AccumulateGrad):
                v = node.variable
                if v is not None:
                    reached.add(id(v))
                continue
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None and nxt not in seen)
        return [p for p in self._params if id(p) not in reached]

    # ---- backward: hooks and reduction ---------------------------------------------------------
    @contextmanager
    def no_sync(self):
        """Inside, backward only accumulates local gradients; the first backward after it reduces."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _on_grad_ready(self, param):
        if not self.require_backward_grad_sync or self.world_size == 1:
            return
        if not self._in_backward:
            self._in_backward = True
            queue_callback(self._finalize)
            for p in self._unused:  # find_unused_parameters: they will get no gradient this time
                self._mark_ready(p)
        self._mark_ready(param)
        self._launch_ready()
        self._progress()

    def _mark_ready(self, param):
        b = self._bucket_of[id(param)]
        if id(param) in b.ready:
            raise RuntimeError(
                f"DistributedDataParallel: parameter {self._param_names[id(param)]!r} was marked ready "
                f"twice in one backward (is it reused by several backward passes before optimizer "
                f"step?) -- use no_sync() for all but the last of them")
        b.ready.add(id(param))
        b.pending -= 1

    def _launch_ready(self):
        buckets = self._buckets
        while self._next_bucket < len(buckets) and buckets[self._next_bucket].pending == 0:
            self._launch(buckets[self._next_bucket])
            self._next_bucket += 1

    def _launch(self, b):
        # copy the gradients into the bucket's own buffer (no allocation per step), then start
        # the non-blocking all-reduce on it
        dtype = b.params[0]._data.dtype
        if b.buffer is None or b.buffer.dtype != dtype:  # first step, or the model changed dtype
            b.buffer = np.empty(b.spans[-1][1], dtype)
            b.flat = Tensor._make(b.buffer)
        buf = b.buffer
        for p, (lo, hi) in zip(b.params, b.spans):
            g = p._grad
            if g is None:  # unused here: contributes zeros
                buf[lo:hi] = 0
            else:
                np.copyto(buf[lo:hi].reshape(g._data.shape), g._data)
        b.work = dist.all_reduce(b.flat, dist.ReduceOp.SUM, async_op=True)

    def _progress(self):
        # Open MPI advances a non-blocking collective only inside MPI calls: test the started ones
        for b in self._buckets[:self._next_bucket]:
            if b.work is not None and not b.work._done:
                b.work.is_completed()

    def _finalize(self):
        """End of backward: every bucket reduced, averaged gradients written back into .grad."""
        try:
            if self._next_bucket < len(self._buckets):
                for b in self._buckets[:self._next_bucket]:  # MPI may still write into them
                    b.work.wait()
                missing = [self._param_names[id(p)] for b in self._buckets[self._next_bucket:]
                           for p in b.params if id(p) not in b.ready]
                raise RuntimeError(
                    f"DistributedDataParallel (rank {self.rank}): these parameters received no gradient "
                    f"in this backward, so their buckets could not be reduced: {missing}. Pass "
                    f"find_unused_parameters=True if the forward does not use every parameter, and "
                    f"make sure all forward outputs take part in the loss.")
            t0, c0 = time.perf_counter(), time.thread_time()
            for b in self._buckets:
                b.work.wait()
            self._comm_wait_s += time.perf_counter() - t0
            self._comm_wait_cpu_s += time.thread_time() - c0
            unused = {id(p) for p in self._unused}
            used_any = self._globally_used(unused) if self.find_unused_parameters else None
            ws = self.world_size
            for b in self._buckets:
                buf = b.buffer
                for p, (lo, hi) in zip(b.params, b.spans):
                    if used_any is not None and not used_any[id(p)]:
                        continue  # no rank used it: its .grad stays as it was (PyTorch's rule)
                    _set_grad(p, buf[lo:hi].reshape(p._data.shape), ws)
        finally:
            for b in self._buckets:
                b.reset()
            self._next_bucket = 0
            self._in_backward = False
            self._unused = ()

    def _globally_used(self, unused):
        """For find_unused_parameters: whether any rank used each parameter in this iteration (one
        MAX all-reduce of a used-map over all parameters, the same length on every rank)."""
        flags = Tensor._make(np.array([id(p) not in unused for p in self._params], dtype=np.int64))
        dist.all_reduce(flags, dist.ReduceOp.MAX)
        return {id(p): bool(f) for p, f in zip(self._params, flags._data)}

    # ---- module plumbing ------------------------------------------------------------------------
    def extra_repr(self):
        return (f"world_size={self.world_size}, buckets={len(self._buckets)}, "
                f"find_unused_parameters={self.find_unused_parameters}")


def _set_grad(p, total, world_size):
    """p.grad = total / world_size: divided straight into the existing .grad (one pass, no
    allocation) when it is a plain writeable array of the right shape, else into a new one (never
    a view of the bucket's buffer, which the next backward overwrites)."""
    g = p._grad
    if (g is not None and g.grad_fn is None and g._data.flags.writeable
            and g._data.shape == total.shape and g._data.dtype == total.dtype):
        np.divide(total, world_size, out=g._data)
        g._bump_version()
    else:
        p._grad = Tensor._make(total / world_size)


def _broadcast_coalesced(tensors, src=0):
    """Broadcast tensors from rank `src` as ONE collective: their bytes packed into one buffer
    (BatchNorm's float running statistics and int64 counters alike; a broadcast copies bits), so a
    forward with ``broadcast_buffers`` pays one latency, not one per dtype."""
    if not tensors:
        return
    ts = sorted(tensors, key=lambda t: -t._data.itemsize)  # keeps every slice aligned for its dtype
    flat = np.concatenate([np.ascontiguousarray(t._data).reshape(-1).view(np.uint8) for t in ts])
    dist.broadcast(Tensor._make(flat), src)
    offset = 0
    for t in ts:
        n = t._data.nbytes
        t._data[...] = flat[offset:offset + n].view(t._data.dtype).reshape(t._data.shape)
        t._bump_version()
        offset += n


def _tensors_in(obj):
    """Every Tensor inside a (nested) forward output: a tensor, list, tuple or dict."""
    stack, out = [obj], []
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            out.append(o)
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
    return out
