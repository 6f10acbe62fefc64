import collections
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import minigrad as mg
import minigrad.serialization as ser
from minigrad.serialization import CheckpointError, load, save


def _model_state():
    return collections.OrderedDict([
        ("0.weight", mg.tensor(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))),
        ("0.bias", mg.zeros(4)),
        ("bn.running_mean", mg.tensor(np.arange(4, dtype=np.float64))),
        ("bn.num_batches_tracked", mg.tensor(np.array(7, dtype=np.int64))),
        ("mask", mg.tensor(np.array([True, False]))),
    ])


def _optim_state():
    return {
        "state": {0: {"step": 3, "exp_avg": mg.ones(4, 3), "exp_avg_sq": mg.full((4, 3), 0.5)},
                  1: {"step": 3.0, "momentum_buffer": None}},
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                          "amsgrad": False, "maximize": False, "params": [0, 1], "name": "ü-group"}],
    }


def _assert_tensors_equal(a, b):
    assert isinstance(b, mg.Tensor) and a.dtype == b.dtype and a.shape == b.shape
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.data.numpy(), b.data.numpy())


def test_model_state_dict_round_trip(tmp_path):
    sd = _model_state()
    save(sd, tmp_path / "m.mg")
    out = load(tmp_path / "m.mg")
    assert isinstance(out, collections.OrderedDict) and list(out) == list(sd)
    for k in sd:
        _assert_tensors_equal(sd[k], out[k])
    assert out["bn.num_batches_tracked"].shape == ()


def test_optimizer_state_dict_round_trip(tmp_path):
    sd = _optim_state()
    path = str(tmp_path / "o.mg")
    save(sd, path)
    out = load(path)
    assert set(out["state"]) == {0, 1} and all(type(k) is int for k in out["state"])
    assert out["state"][0]["step"] == 3 and type(out["state"][0]["step"]) is int
    assert type(out["state"][1]["step"]) is float and out["state"][1]["momentum_buffer"] is None
    _assert_tensors_equal(sd["state"][0]["exp_avg_sq"], out["state"][0]["exp_avg_sq"])
    g = out["param_groups"][0]
    assert g == {k: v for k, v in sd["param_groups"][0].items()}
    assert isinstance(g["betas"], tuple) and g["amsgrad"] is False and g["name"] == "ü-group"


def test_scalars_arrays_and_keys(tmp_path):
    obj = {
        "nan": float("nan"), "inf": float("-inf"), "tiny": 5e-324, "pi": 3.141592653589793,
        "big": 2**100, "neg": -3, "c": 1 + 2j, "b": b"\x00\xff", "s": "", "none": None,
        "np_f32": np.float32(1.5), "np_i64": np.int64(-4), "np_bool": np.bool_(True),
        "arr": np.arange(6, dtype=np.uint8).reshape(2, 3), "empty": np.zeros((0, 5), dtype=np.float16),
        "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)), "nested": [[], (), {}, [1, (2, [3])]],
        1.5: "float key", None: "none key", True: "bool key", (1, "a"): "tuple key", -7: "int key",
    }
    save(obj, tmp_path / "x")
    out = load(tmp_path / "x")
    assert np.isnan(out["nan"]) and out["inf"] == float("-inf") and out["tiny"] == 5e-324
    assert out["pi"] == obj["pi"] and out["big"] == 2**100 and out["c"] == 1 + 2j and out["b"] == b"\x00\xff"
    assert out["s"] == "" and out["none"] is None
    assert type(out["np_f32"]) is np.float32 and out["np_f32"] == 1.5
    assert type(out["np_i64"]) is np.int64 and type(out["np_bool"]) is np.bool_
    for k in ("arr", "empty", "fortran"):
        assert out[k].dtype == obj[k].dtype and out[k].shape == obj[k].shape
        np.testing.assert_array_equal(out[k], obj[k])
    assert out["nested"] == [[], (), {}, [1, (2, [3])]]
    assert out[1.5] == "float key" and out[None] == "none key" and out[True] == "bool key"
    assert out[(1, "a")] == "tuple key" and out[-7] == "int key"


def test_requires_grad_and_parameters(tmp_path):
    t = mg.tensor(np.ones(3, dtype=np.float64), requires_grad=True)
    save({"t": t, "d": t.detach()}, tmp_path / "g")
    out = load(tmp_path / "g")
    assert out["t"].requires_grad and out["t"].is_leaf and out["t"].dtype == mg.float64
    assert not out["d"].requires_grad


def test_parameters_come_back_as_parameters(tmp_path):
    nn = pytest.importorskip("minigrad.nn.parameter")
    p = nn.Parameter(mg.zeros(2, 2))
    save([p], tmp_path / "p")
    q, = load(tmp_path / "p")
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.shape == (2, 2)


def test_file_objects():
    buf = io.BytesIO()
    save({"a": mg.ones(2)}, buf)
    buf.seek(0)
    np.testing.assert_array_equal(load(buf)["a"].data.numpy(), [1, 1])


def test_unsupported_types_rejected_before_writing(tmp_path):
    path = tmp_path / "bad"
    with pytest.raises(TypeError, match=r"object dtype.*obj\['w'\]"):
        save({"w": np.array([1, "a"], dtype=object)}, path)
    with pytest.raises(TypeError, match="set"):
        save({"s": {1, 2}}, path)
    with pytest.raises(TypeError, match="key"):
        save({frozenset(): 1}, path)
    assert os.listdir(tmp_path) == []


def test_crash_mid_save_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.mg"
    save({"epoch": 1, "w": mg.ones(3)}, path)
    before = path.read_bytes()
    real = ser._write_array

    def crash(f, arr):
        real(f, arr)
        f.write(b"partial")
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(ser, "_write_array", crash)
    with pytest.raises(OSError, match="simulated"):
        save({"epoch": 2, "w": mg.zeros(3)}, path)
    assert os.listdir(tmp_path) == ["ckpt.mg"]  # no temporary file left behind
    assert path.read_bytes() == before and load(path)["epoch"] == 1

    def interrupt(f, arr):
        raise KeyboardInterrupt

    monkeypatch.setattr(ser, "_write_array", interrupt)
    with pytest.raises(KeyboardInterrupt):
        save({"epoch": 3, "w": mg.zeros(3)}, path)
    assert os.listdir(tmp_path) == ["ckpt.mg"] and load(path)["epoch"] == 1


def test_truncated_file(tmp_path):
    path = tmp_path / "ckpt.mg"
    save(_model_state(), path)
    blob = path.read_bytes()
    for cut in (0, 10, len(blob) // 2, len(blob) - 1):
        path.write_bytes(blob[:cut])
        with pytest.raises(CheckpointError, match=r"ckpt\.mg"):
            load(path)


def test_corrupt_array_bytes(tmp_path):
    path = tmp_path / "ckpt.mg"
    save({"w": mg.tensor(np.arange(1000, dtype=np.float64))}, path)
    blob = bytearray(path.read_bytes())
    i = blob.find(np.arange(1000, dtype=np.float64)[500:501].tobytes())
    assert i > 0
    blob[i] ^= 0xFF
    path.write_bytes(bytes(blob))
    with pytest.raises(CheckpointError, match=r"ckpt\.mg.*corrupt"):
        load(path)


def test_not_a_checkpoint(tmp_path):
    p = tmp_path / "garbage.bin"
    p.write_bytes(os.urandom(300))
    with pytest.raises(CheckpointError, match="garbage.bin"):
        load(p)
    z = tmp_path / "other.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("data.pkl", b"x")
    with pytest.raises(CheckpointError, match=r"other.zip: not a minigrad checkpoint"):
        load(z)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing")
    assert issubclass(CheckpointError, RuntimeError) and issubclass(CheckpointError, ValueError)


class _Evil:
    def __reduce__(self):
        return (os.mkdir, (self.target,))


def _evil(target):
    e = _Evil()
    e.target = str(target)
    return e


def test_pickle_payloads_are_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    p = tmp_path / "plain.pkl"
    p.write_bytes(pickle.dumps(_evil(marker)))
    with pytest.raises(CheckpointError, match="plain.pkl"):
        load(p)
    # a forged checkpoint whose array member is a pickled object array
    forged = tmp_path / "forged.mg"
    manifest = {"format": ser.FORMAT, "version": ser.VERSION, "root": {"t": "ndarray", "file": "arrays/0.npy"}}
    npy = io.BytesIO()
    np.save(npy, np.array([_evil(marker)], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(forged, "w") as zf:
        zf.writestr(ser.MANIFEST, json.dumps(manifest))
        zf.writestr("arrays/0.npy", npy.getvalue())
    with pytest.raises(CheckpointError, match=r"forged.mg.*without pickle"):
        load(forged)
    assert not marker.exists()


def test_torch_checkpoint_rejected(tmp_path):
    torch = pytest.importorskip("torch")
    p = tmp_path / "t.pt"
    torch.save({"w": torch.ones(2)}, p)
    with pytest.raises(CheckpointError, match="not a minigrad checkpoint"):
        load(p)


def test_malformed_manifest(tmp_path):
    for i, root in enumerate([{"t": "what"}, {"t": "ndarray", "file": "nope.npy"}, {"t": "int"}, [1]]):
        f = tmp_path / f"m{i}.mg"
        with zipfile.ZipFile(f, "w") as zf:
            zf.writestr(ser.MANIFEST, json.dumps({"format": ser.FORMAT, "version": 1, "root": root}))
        with pytest.raises(CheckpointError, match=f"m{i}.mg"):
            load(f)
    f = tmp_path / "v.mg"
    with zipfile.ZipFile(f, "w") as zf:
        zf.writestr(ser.MANIFEST, json.dumps({"format": ser.FORMAT, "version": 99, "root": {"t": "none"}}))
    with pytest.raises(CheckpointError, match="version 99"):
        load(f)
