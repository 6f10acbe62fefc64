"""mg.profiler (also mg.autograd.profiler): PyTorch's profiler API for minigrad's ops.

    with mg.profiler.profile(record_shapes=True) as prof:
        loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # open in chrome://tracing or ui.perfetto.dev

Every op (every Function.apply, the forward ops and the ones backward runs) is one event with its
start, duration and input shapes; `record_function(name)` adds a labelled range of your own. An
op's self time is its time minus the ops nested inside it. Nothing is paid when not profiling:
the timing is an op observer (autograd/observers.py), registered only while a profiler is open.
"""
import functools
import json
import os
import threading
import time

from .autograd import observers as _observers

__all__ = ["profile", "record_function", "ProfilerActivity"]


class ProfilerActivity:
    """What to profile, as torch.profiler.ProfilerActivity: ``CPU``, the only activity minigrad has
    (``activities=[ProfilerActivity.CUDA]`` raises RuntimeError)."""
    CPU = "CPU"
    CUDA = "CUDA"


class _Event:
    __slots__ = ("name", "start", "end", "shapes", "children_time", "tid", "depth")

    def __init__(self, name, start, shapes, tid, depth):
        self.name, self.start, self.shapes, self.tid, self.depth = name, start, shapes, tid, depth
        self.end = start
        self.children_time = 0.0

    @property
    def total(self):
        return self.end - self.start

    @property
    def self_time(self):
        return self.total - self.children_time


_active = []          # open profilers (the innermost records)
_observer = [None]    # the op observer's handle while any profiler is open
_stack = threading.local()


def _shapes(args):
    return [list(a.shape) if hasattr(a, "_data") else [] for a in args]


def _push(name, shapes):
    prof = _active[-1]
    st = getattr(_stack, "s", None)
    if st is None:
        st = _stack.s = []
    ev = _Event(name, time.perf_counter_ns(), shapes if prof.record_shapes else None, threading.get_ident(), len(st))
    st.append(ev)
    return prof, ev


def _pop(prof, ev):
    ev.end = time.perf_counter_ns()
    st = _stack.s
    st.pop()
    if st:
        st[-1].children_time += ev.total
    prof.events.append(ev)


class _OpTimer:
    """The op observer (autograd/observers.py) while a profiler is open: one event per op."""

    def enter(self, cls, args):
        if not _active:
            return None
        name = getattr(cls, "op_name", None) or _snake(cls.__name__)
        return _push(name, _shapes(args))

    def exit(self, cls, args, out, token):
        if token is not None:
            _pop(*token)


def _snake(name):
    """'ThresholdBackward' -> 'threshold_backward' (the op names PyTorch's profiler shows, without aten::)."""
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))


class record_function:
    """A labelled range in the profile (context manager or decorator), as torch.profiler.record_function."""

    def __init__(self, name, args=None):
        self.name = name

    def __enter__(self):
        self._ev = _push(self.name, None) if _active else None
        return self

    def __exit__(self, *exc):
        if self._ev is not None:
            _pop(*self._ev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name):
                return fn(*a, **k)
        return wrapper


class FunctionEventAvg:
    """The events of one op name (and input shapes, when grouped by them), summed."""

    def __init__(self, key, shapes):
        self.key, self.input_shapes = key, shapes
        self.count = 0
        self.cpu_time_total = 0.0       # microseconds, as PyTorch reports them
        self.self_cpu_time_total = 0.0

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    @property
    def self_cpu_time(self):
        return self.self_cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_fmt(self.self_cpu_time)} "
                f"cpu_time={_fmt(self.cpu_time)} input_shapes={self.input_shapes}>")


_SORT = {"self_cpu_time_total": "self_cpu_time_total", "cpu_time_total": "cpu_time_total",
         "cpu_time": "cpu_time", "self_cpu_time": "self_cpu_time", "count": "count"}


class EventList(list):
    """key_averages()'s result: one FunctionEventAvg per op; .table() prints it as PyTorch does."""

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None, top_level_events_only=False):
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT:
                raise AttributeError(f"table: can't sort by '{sort_by}'; use one of {sorted(_SORT)}")
            rows.sort(key=lambda r: getattr(r, _SORT[sort_by]), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total_self = sum(r.self_cpu_time_total for r in self) or 1.0
        shapes = any(r.input_shapes is not None for r in self)
        name_w = min(max([len("Name")] + [len(r.key) for r in rows]) + 2, max_name_column_width)
        cols = [("Name", name_w), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12), ("CPU total", 12),
                ("CPU time avg", 12), ("# of Calls", 12)]
        if shapes:
            cols.append(("Input Shapes", 40))
        sep = "-" * name_w + "  " + "  ".join("-" * w for _, w in cols[1:])
        head = cols[0][0].ljust(name_w) + "  " + "  ".join(n.rjust(w) for n, w in cols[1:])
        lines = [sep, head, sep]
        for r in rows:
            cells = [f"{100 * r.self_cpu_time_total / total_self:.2f}%", _fmt(r.self_cpu_time_total),
                     f"{100 * r.cpu_time_total / total_self:.2f}%", _fmt(r.cpu_time_total), _fmt(r.cpu_time),
                     str(r.count)]
            if shapes:
                cells.append(str(r.input_shapes) if r.input_shapes is not None else "[]")
            name = r.key if len(r.key) <= name_w - 2 else r.key[:name_w - 5] + "..."
            lines.append(name.ljust(name_w) + "  " + "  ".join(c.rjust(w) for c, (_, w) in zip(cells, cols[1:])))
        lines += [sep, f"Self CPU time total: {_fmt(total_self)}", ""]
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def _fmt(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class profile:
    """Profile the ops run inside the block (PyTorch's torch.profiler.profile, CPU activity).

    record_shapes: keep each op's input shapes (group_by_input_shape in key_averages)."""

    def __init__(self, activities=None, *, record_shapes=False, profile_memory=False, with_stack=False,
                 use_cuda=False, enabled=True, **kwargs):
        if use_cuda or (activities and any(a != ProfilerActivity.CPU for a in activities)):
            raise RuntimeError("profile: minigrad runs on the CPU only; use activities=[ProfilerActivity.CPU]")
        self.enabled, self.record_shapes = enabled, record_shapes
        self.events = []
        self._t0 = None

    def __enter__(self):
        if not self.enabled:
            return self
        if not _active:
            _observer[0] = _observers.register_op_observer(_OpTimer())
        _active.append(self)
        self._t0 = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        _active.remove(self)
        if not _active:
            _observer[0].remove()
        return False

    def key_averages(self, group_by_input_shape=False):
        """The events grouped by op name (and by input shapes with ``group_by_input_shape=True``), as
        torch's ``prof.key_averages()``; ``.table(...)`` prints them."""
        groups = {}
        for ev in self.events:
            shapes = ev.shapes if group_by_input_shape else None
            key = (ev.name, str(shapes) if group_by_input_shape else None)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(ev.name, shapes)
            avg.count += 1
            avg.cpu_time_total += ev.total / 1e3
            avg.self_cpu_time_total += ev.self_time / 1e3
        return EventList(groups.values())

    def table(self, **kwargs):
        """``self.key_averages().table(**kwargs)``: the per-op table (``sort_by=``, ``row_limit=``)."""
        return self.key_averages().table(**kwargs)

    def export_chrome_trace(self, path):
        """Write the events as Chrome trace JSON ("X" complete events), atomically."""
        from ._atomic import atomic_write
        t0 = self._t0 or (min(e.start for e in self.events) if self.events else 0)
        pid = os.getpid()
        trace = {"traceEvents": [
            {"name": e.name, "ph": "X", "cat": "cpu_op", "ts": (e.start - t0) / 1e3, "dur": e.total / 1e3,
             "pid": pid, "tid": e.tid, "args": {"Input Dims": e.shapes} if e.shapes is not None else {}}
            for e in sorted(self.events, key=lambda e: e.start)], "displayTimeUnit": "ms"}
        data = json.dumps(trace).encode()
        with atomic_write(path) as f:
            f.write(data)
