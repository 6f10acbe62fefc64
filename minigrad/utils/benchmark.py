"""Timing statements, as torch.utils.benchmark: `Timer` (``timeit``, ``blocked_autorange``,
``adaptive_autorange``), the `Measurement` it returns (median, IQR, the same printout as
PyTorch's) and `Compare` (a table of many measurements).

minigrad runs on the CPU, so the timer is ``timeit.default_timer`` (no device to synchronize).
``num_threads`` is recorded and printed as PyTorch's, but minigrad does not resize NumPy's BLAS
thread pool for the measurement (NumPy offers no portable switch): set ``OMP_NUM_THREADS`` before
starting Python for single-threaded numbers.

Example:
    >>> from minigrad.utils import benchmark
    >>> x = mg.randn(64, 64)
    >>> m = benchmark.Timer("x @ x", globals={"x": x}, label="matmul").blocked_autorange(min_run_time=0.05)
    >>> m.median > 0
    True
"""
from __future__ import annotations

import collections
import dataclasses
import enum
import math
import textwrap
import timeit
from typing import Any, Callable

import numpy as np

__all__ = ["Timer", "Measurement", "TaskSpec", "Compare", "Language", "select_unit", "unit_to_english",
           "trim_sigfig"]

_MAX_SIGFIGS = 4
_MIN_CI = 25e-9          # a confidence interval is never taken narrower than 25 ns
_IQR_WARN = 0.1          # IQR / median above this: "system fluctuation"
_IQR_GROSS_WARN = 0.25   # above this: "significant environmental influence"


def select_unit(t: float) -> tuple[str, float]:
    """(unit, scale) that shows the time t (seconds) with O(1) digits: ns, us, ms or s."""
    exp3 = math.floor(math.log10(t) / 3) if t > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exp3, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def unit_to_english(u: str) -> str:
    """'us' -> 'microsecond' (for Compare's footer)."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """x rounded to n significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise ValueError(f"trim_sigfig: the number of significant figures must be an integer, got {n}")
    if x == 0:
        return 0.0
    scale = 10.0 ** (math.ceil(math.log10(abs(x))) - n)
    return float(np.round(x / scale) * scale)


class Language(enum.Enum):
    """The statement's language: only Python is supported (PyTorch's C++ timing needs a compiler)."""
    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What was timed: the statement, its setup and the labels a Timer was given."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the statement) and the sub-label: the first line of a printout."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        """The setup line(s) of a printout ('' for none)."""
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """Title, description and setup, one block per line (a multi-line block followed by a blank line)."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_SPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


class Measurement:
    """The result of a Timer: ``raw_times`` (seconds per block of ``number_per_run`` runs of the
    statement) and the TaskSpec; ``times`` are per run. Statistics (``median``, ``mean``, ``iqr``)
    use linear-interpolation quantiles, as PyTorch's. Its repr is PyTorch's printout::

        <minigrad.utils.benchmark.Measurement object at 0x...>
        x @ x
          Median: 24.13 us
          IQR:    0.51 us (23.90 to 24.41)
          9 measurements, 1000 runs per measurement, 1 thread

    The TaskSpec's fields (``label``, ``stmt``, ``num_threads``, ...) read as attributes too.
    """

    def __init__(self, number_per_run: int, raw_times: list, task_spec: TaskSpec, metadata: dict | None = None):
        self.number_per_run = int(number_per_run)
        self.raw_times = [float(t) for t in raw_times]
        self.task_spec = task_spec
        self.metadata = metadata
        self._stats = None

    def __getattr__(self, name: str) -> Any:
        if name in _SPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self) -> list:
        """Seconds per run of the statement, one per measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    def _lazy(self):
        if self._stats is None:
            ts = np.sort(np.asarray(self.times, dtype=np.float64))
            if ts.size:
                q25, q50, q75 = np.quantile(ts, [0.25, 0.5, 0.75])
                self._stats = (ts, float(q50), float(ts.mean()), float(q25), float(q75))
            else:
                self._stats = (ts, -1.0, -1.0, -1.0, -1.0)
        return self._stats

    @property
    def median(self) -> float:
        """The median time per run (seconds)."""
        return self._lazy()[1]

    @property
    def mean(self) -> float:
        """The mean time per run (seconds)."""
        return self._lazy()[2]

    @property
    def iqr(self) -> float:
        """The interquartile range of the times per run (seconds)."""
        _, _, _, q25, q75 = self._lazy()
        return q75 - q25

    def meets_confidence(self, threshold: float = _IQR_WARN) -> bool:
        """Whether iqr / median is below threshold."""
        return self.iqr / self.median < threshold

    @property
    def _warnings(self) -> tuple:
        if not self.raw_times:
            return ()
        rel = self.iqr / self.median * 100
        for limit, why in ((_IQR_GROSS_WARN, "This suggests significant environmental influence."),
                           (_IQR_WARN, "This could indicate system fluctuation.")):
            if not self.meets_confidence(limit):
                return (f"  WARNING: Interquartile range is {rel:.1f}% of the median measurement.\n"
                        f"           {why}",)
        return ()

    @property
    def has_warnings(self) -> bool:
        """Whether the spread (IQR / median) is above 10 %."""
        return bool(self._warnings)

    @property
    def significant_figures(self) -> int:
        """Digits the measurement supports (1 to 4): from a 90 % confidence interval of the median
        over the interquartile points, as PyTorch's (Compare trims to it)."""
        ts = self._lazy()[0]
        n = len(ts)
        mid = ts[n // 4:int(math.ceil(3 * n / 4))]
        ci = max(1.645 * float(np.std(mid)) / math.sqrt(len(mid)), _MIN_CI) if len(mid) else _MIN_CI
        return min(max(int(math.floor(math.log10(self.median / ci))), 1), _MAX_SIGFIGS)

    @property
    def title(self) -> str:
        """The TaskSpec's title."""
        return self.task_spec.title

    @property
    def env(self) -> str:
        """The env tag, or 'Unspecified env'."""
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        """A Compare row's name: the sub-label, else the statement."""
        return self.task_spec.sub_label or self.task_spec.stmt or "[Unknown]"

    def __repr__(self) -> str:
        ts, med, _, q25, q75 = self._lazy()
        n = len(ts)
        unit, scale = select_unit(med)
        lines = [f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{med / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {(q75 - q25) / scale:.2f} {unit} ({q25 / scale:.2f} to {q75 / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines += list(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements) -> list:
        """Replicates of the same TaskSpec pooled into one Measurement each (times per run, number_per_run 1)."""
        groups = collections.OrderedDict()
        for m in measurements:
            groups.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, ts, spec) for spec, ts in groups.items()]


class Timer:
    """Time a Python statement, as torch.utils.benchmark.Timer (a ``timeit.Timer`` underneath, with a
    warm-up run and replicates).

    Args:
        stmt (str): the code to time.
        setup (str): code run once before (defines what stmt uses). Default: ``'pass'``.
        global_setup (str): C++ only in PyTorch: refused.
        timer (callable): returns the current time in seconds. Default: ``timeit.default_timer``.
        globals (dict, optional): the names stmt and setup see (``mg`` and ``minigrad`` are added).
        label, sub_label, description, env (str, optional): what the printout and Compare show
            (description picks Compare's column, env separates A/B runs).
        num_threads (int): recorded and printed (see the module's note). Default: 1.
        language: ``'python'`` only.

    Example:
        >>> t = Timer("mg.relu(x)", setup="x = mg.randn(100)")
        >>> t.timeit(100).number_per_run
        100
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timeit.default_timer, globals: dict | None = None,
                 label: str | None = None, sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1, language=Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Timer: only a `str` stmt is supported (as PyTorch's); wrap a callable as "
                             "Timer('f()', globals={'f': f})")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Timer: language {language!r} is not supported: minigrad times Python statements "
                             f"only (PyTorch's C++ timing compiles the statement)")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                             f"simply be moved to `setup`.")
        import minigrad
        self._globals = dict(globals or {})
        self._globals.setdefault("mg", minigrad)
        self._globals.setdefault("minigrad", minigrad)
        stmt, setup = (self._clean(s) for s in (stmt, setup))
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env,
                                   num_threads=num_threads)

    @staticmethod
    def _clean(code):
        code = textwrap.dedent(code)
        return (code[1:] if code[:1] == "\n" else code).rstrip()

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run stmt `number` times as one measurement (after a warm-up of number // 100 runs), as
        ``timeit.Timer.timeit``."""
        self._timeit(max(int(number // 100), 2))
        return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        """Not provided, as in PyTorch: use blocked_autorange."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        """Not provided, as in PyTorch: use blocked_autorange."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        # the timer's own cost (5 empty runs), then 1, 10, 100, ... runs per block until that cost is
        # under 1e-4 of a block and a block takes min_run_time / 1000, or one block takes min_run_time
        overhead = float(np.median([self._timeit(0) for _ in range(5)]))
        number = 1
        while True:
            took = self._timeit(number)
            if (overhead / took <= 1e-4 and took >= min_run_time / 1000) or took > min_run_time \
                    or number * 10 > 2147483647:
                return number
            number *= 10

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, times, can_stop = 0.0, [], False
        while total < min_run_time or not can_stop:
            took = self._timeit(number)
            times.append(took)
            total += took
            if callback:
                callback(number, took)
            can_stop = stop(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of a fixed number of runs (large enough that the timer's cost is negligible),
        measured until min_run_time seconds have passed, as PyTorch's.

        Args:
            callback (callable, optional): called as callback(number, seconds) after each block.
            min_run_time (float): the total time to measure for. Default: 0.2.
        """
        number = self._block_size(min_run_time)
        times = self._loop(number, lambda ts: True, min_run_time, callback=callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0, callback=None) -> Measurement:
        """As blocked_autorange, but measuring until iqr / median < threshold (with more than 3
        blocks and min_run_time passed) or max_run_time is reached, as PyTorch's."""
        number = self._block_size(0.05)

        def stop(ts):
            return len(ts) > 3 and Measurement(number, ts, self._task_spec).meets_confidence(threshold)
        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number, times, self._task_spec)

    def collect_callgrind(self, *args, **kwargs):
        """Not available: instruction counts need valgrind's callgrind wrapper (PyTorch-only)."""
        raise NotImplementedError("Timer.collect_callgrind: instruction counting (valgrind) is not provided by "
                                  "minigrad; use blocked_autorange for wall-clock times")


class Compare:
    """A table of Measurements, as torch.utils.benchmark.Compare: one table per label, a row per
    (num_threads, env, sub-label or stmt), a column per description, the medians in one unit.

    Example:
        >>> ms = [Timer("x + x", globals={"x": mg.ones(n)}, label="add", description=f"n={n}").timeit(100)
        ...       for n in (10, 1000)]
        >>> Compare(ms).print()   # doctest: +SKIP
    """

    def __init__(self, results: list) -> None:
        self._results = []
        self.extend_results(results)
        self._trim = False
        self._highlight = False

    def extend_results(self, results) -> None:
        """Add Measurements to the table."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Compare: expected instances of Measurement, got {type(r).__name__} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Show each median to the digits its measurement supports."""
        self._trim = True

    def highlight_warnings(self) -> None:
        """Mark noisy measurements with (! XX%), the IQR / median."""
        self._highlight = True

    def colorize(self, rowwise: bool = False) -> None:
        """Accepted for PyTorch's API; minigrad's table is plain text."""

    def print(self) -> None:
        """Print the table(s)."""
        print(str(self))

    def __str__(self) -> str:
        groups = collections.OrderedDict()
        for m in Measurement.merge(self._results):
            groups.setdefault(m.label, []).append(m)
        return "\n".join(self._table(label, ms) for label, ms in groups.items())

    def _column_format(self, ms, scale):
        """One column's number format: right-aligned to its widest median, with the decimals its
        measurements support when trimming (1 otherwise), and room for a (! XX%) mark."""
        lead = [math.ceil(math.log10(m.median / scale)) for m in ms]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(ms, lead)) if self._trim else 1
        width = max(lead) + decimals + (1 if decimals else 0)
        mark = self._highlight and any(m.has_warnings for m in ms)
        return width, decimals, mark

    def _cell(self, m, scale, fmt):
        width, decimals, mark = fmt
        if m is None:
            return " " * (width + (7 if mark else 0))
        v = m.median / scale
        if self._trim:
            v = trim_sigfig(v, m.significant_figures)
        spread = f" (! {m.iqr / m.median * 100:.0f}%)" if mark and m.has_warnings else ""
        return f"{v:>{width}.{decimals}f}" + f"{spread:>{7 if mark else 0}}"

    def _table(self, label, ms):
        unit, scale = select_unit(min(m.median for m in ms))
        rows = list(dict.fromkeys((m.num_threads, m.env, m.as_row_name) for m in ms))
        rows.sort(key=lambda k: k[:2])
        cols = list(dict.fromkeys(m.description for m in ms))
        at = {((m.num_threads, m.env, m.as_row_name), m.description): m for m in ms}
        fmts = [self._column_format([m for m in ms if m.description == c], scale) for c in cols]
        envs = {m.env for m in ms}
        pad = max(len(e) for e in envs) if len(envs) > 1 else 0
        cells = [[""] + ["" if c is None else str(c) for c in cols]]
        prior = (None, None)
        for r in rows:  # the env is shown on the first row of each env (within a thread count)
            shown = len(envs) > 1 and (r[0], r[1]) != prior
            prior = (r[0], r[1])
            name = "  " + (f"({r[1]})" if shown else "").ljust(pad + 4) + r[2]
            cells.append([name] + [self._cell(at.get((r, c)), scale, f) for c, f in zip(cols, fmts)])
        widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
        header = "  |  ".join(s.center(w) for s, w in zip(cells[0], widths))
        out, prev_threads = [header], None
        for r, row in zip(rows, cells[1:]):
            if r[0] != prev_threads:
                out.append(f"{r[0]} threads: ".ljust(len(header), "-"))
                prev_threads = r[0]
            out.append("  |  ".join([row[0].ljust(widths[0])] + [s.center(w) for s, w in zip(row[1:], widths[1:])]))
        noisy = self._highlight and any(m.has_warnings for m in ms)
        return (f"[{(' ' + (label or '') + ' ').center(len(header) - 2, '-')}]\n" + "\n".join(out) +
                f"\n\nTimes are in {unit_to_english(unit)}s ({unit}).\n" +
                ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if noisy else ""))
