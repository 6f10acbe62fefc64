"""mg.profiler: per-op counts, self/total times and shapes; PyTorch's table layout; a Chrome trace
a viewer opens; nothing left installed after the block."""
import json

import numpy as np
import pytest

import minigrad as mg


def test_counts_shapes_and_self_time():
    mg.manual_seed(0)
    model = mg.nn.Sequential(mg.nn.Linear(8, 4), mg.nn.ReLU(), mg.nn.Linear(4, 2))
    x = mg.randn(16, 8)
    with mg.profiler.profile(record_shapes=True) as prof:
        with mg.profiler.record_function("my_forward"):
            loss = model(x).sum()
        loss.backward()
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["my_forward"].count == 1
    assert avg["relu"].count == 1
    lin = [e for k, e in avg.items() if "linear" in k.lower() or "addmm" in k.lower()]
    assert lin and lin[0].count == 2
    # the user range contains the forward ops: its total is at least their total, its self time less
    fwd = avg["my_forward"]
    assert fwd.cpu_time_total >= fwd.self_cpu_time_total >= 0
    by_shape = prof.key_averages(group_by_input_shape=True)
    shapes = [e.input_shapes for e in by_shape if e.input_shapes]
    assert [16, 8] in [s[0] for s in shapes if s]
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    lines = table.splitlines()
    assert lines[1].split()[:2] == ["Name", "Self"] and "# of Calls" in lines[1]
    assert lines[-1].startswith("Self CPU time total:")
    assert len([l for l in lines if l and not l.startswith("-")]) == 1 + 5 + 1
    with pytest.raises(AttributeError, match="can't sort by"):
        prof.key_averages().table(sort_by="nope")


def test_chrome_trace_and_cleanup(tmp_path):
    import minigrad.autograd.function as F
    before = F.Function.__dict__["apply"]
    with mg.autograd.profiler.profile() as prof:
        (mg.ones(3, requires_grad=True) * 2).sum().backward()
    assert F.Function.__dict__["apply"] is before
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    evs = trace["traceEvents"]
    assert evs and all(e["ph"] == "X" and e["dur"] >= 0 for e in evs)
    assert [e["ts"] for e in evs] == sorted(e["ts"] for e in evs)
    assert {"mul", "sum"} <= {e["name"] for e in evs}


def test_cpu_only():
    with pytest.raises(RuntimeError, match="CPU only"):
        mg.profiler.profile(activities=[mg.profiler.ProfilerActivity.CUDA])
