import gzip
import os
import shutil

import numpy as np
import pytest

import minigrad as mg
from minigrad.data import DataLoader, Subset, default_collate
from minigrad.data.datasets import MNIST, FashionMNIST, IDXError, read_idx
from minigrad.data.datasets import mnist as mnist_mod


# ---- the real files

def test_mnist_test_split_real_files(mnist_dir):
    ds = MNIST(mnist_dir, train=False)
    assert len(ds) == 10000
    assert isinstance(ds.data, mg.Tensor) and isinstance(ds.targets, mg.Tensor)  # as torchvision's
    assert ds.data.shape == (10000, 28, 28) and ds.data.dtype == mg.uint8
    assert ds.targets.dtype == mg.int64 and ds.targets.min() == 0 and ds.targets.max() == 9
    assert np.bincount(ds.targets.numpy()).min() > 800  # all ten digits well represented
    img, label = ds[0]
    assert isinstance(img, mg.Tensor) and img.shape == (1, 28, 28) and img.dtype == mg.float32
    assert isinstance(label, int) and label == 7  # the first official test digit is a 7
    assert img.data.min() == 0.0 and img.data.max() == 1.0
    assert len(ds.classes) == 10 and ds.class_to_idx["7 - seven"] == 7


def test_mnist_train_subset_real_files(mnist_dir):
    ds = MNIST(mnist_dir, train=True)
    assert len(ds) == 10000 and ds[0][1] == 5  # the first training digit is a 5
    x, y = ds.arrays()
    assert x.shape == (10000, 1, 28, 28) and x.dtype == np.float32 and y.dtype == np.int64
    assert 0.0 <= x.min() and x.max() <= 1.0
    np.testing.assert_array_equal(x[123], ds[123][0].data)
    np.testing.assert_array_equal(x[5], ds.data[5][None].numpy() / np.float32(255))


def test_fashion_mnist_real_files(fashion_dir):
    ds = FashionMNIST(fashion_dir, train=False)
    assert len(ds) == 10000 and ds[0][1] == 9  # first test item: an ankle boot
    assert ds.classes[9] == "Ankle boot"
    assert set(np.unique(ds.targets.numpy()).tolist()) == set(range(10))


def test_shared_folder_aliases(shared_data):
    if not (shared_data / "mnist-10k").is_dir():
        pytest.skip("mnist-10k not present")
    assert len(MNIST(shared_data, train=False)) == 10000  # finds root/mnist-10k


def test_torchvision_layout_and_plain_files(tmp_path, mnist_dir):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for name in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        with gzip.open(mnist_dir / (name + ".gz"), "rb") as src, open(raw / name, "wb") as dst:
            shutil.copyfileobj(src, dst)  # plain, un-gzipped IDX files
    ds = MNIST(str(tmp_path), train=False)
    assert len(ds) == 10000 and ds[0][1] == 7 and ds.folder == raw


def test_default_root_from_env(tmp_path, monkeypatch, mnist_dir):
    (tmp_path / "MNIST").mkdir()
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        os.symlink(mnist_dir / name, tmp_path / "MNIST" / name)
    monkeypatch.setenv("MINIGRAD_DATA", str(tmp_path))
    ds = MNIST(train=False)
    assert ds.root == tmp_path and len(ds) == 10000


def test_fashion_finds_debian_package(tmp_path, monkeypatch, fashion_dir):
    deb = tmp_path / "usr-share-datasets-fashion-mnist"
    deb.mkdir()
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        os.symlink(fashion_dir / name, deb / name)
    monkeypatch.setattr(mnist_mod, "DEBIAN_FASHION_MNIST_DIR", deb)
    monkeypatch.setenv("MINIGRAD_DATA", str(tmp_path / "empty-cache"))
    ds = FashionMNIST(train=False)
    assert ds.folder == deb and len(ds) == 10000
    with pytest.raises(RuntimeError, match="download=True"):  # an explicit root does not fall back
        FashionMNIST(tmp_path / "elsewhere", train=False)


def test_missing_files_error(tmp_path):
    with pytest.raises(RuntimeError, match=r"dataset not found.*t10k-images-idx3-ubyte.*download=True"):
        MNIST(tmp_path, train=False)


def test_transforms(mnist_dir):
    seen = []

    def transform(x):
        seen.append((type(x), x.shape, x.dtype))
        return x.reshape(784)

    ds = MNIST(mnist_dir, train=False, transform=transform, target_transform=lambda y: y + 100)
    img, label = ds[0]
    assert seen == [(mg.Tensor, (1, 28, 28), mg.float32)]
    assert img.shape == (784,) and label == 107
    x, y = next(iter(DataLoader(ds, batch_size=4)))  # transforms set: per-item path
    assert x.shape == (4, 784) and y.tolist()[0] == 107


def test_loader_fast_path_matches_items(mnist_dir):
    ds = MNIST(mnist_dir, train=False)
    sub = Subset(ds, list(range(0, 500, 7)))
    g1, g2 = mg.Generator().manual_seed(0), mg.Generator().manual_seed(0)
    fast = list(DataLoader(sub, batch_size=16, shuffle=True, generator=g1))
    slow = list(DataLoader(sub, batch_size=16, shuffle=True, generator=g2, collate_fn=lambda b: default_collate(b)))
    assert len(fast) == len(slow) == 5
    for (xf, yf), (xs, ys) in zip(fast, slow):
        assert xf.shape == xs.shape and xf.dtype == xs.dtype == mg.float32 and yf.dtype == ys.dtype == mg.int64
        np.testing.assert_array_equal(xf.data, xs.data)
        np.testing.assert_array_equal(yf.data, ys.data)
    x, y = next(iter(DataLoader(ds, batch_size=128)))
    assert x.shape == (128, 1, 28, 28) and y.shape == (128,)


# ---- malformed files

def _idx(magic, dims, payload):
    return magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in dims) + payload


def _write_pair(folder, n_img=3, n_lab=3, img_magic=2051, lab_magic=2049, img_payload=None,
                lab_payload=None, gz=True, labels=None):
    folder.mkdir(parents=True, exist_ok=True)
    img_payload = bytes(n_img * 784) if img_payload is None else img_payload
    lab = bytes(labels if labels is not None else [i % 10 for i in range(n_lab)])
    lab_payload = lab if lab_payload is None else lab_payload
    files = {"t10k-images-idx3-ubyte": _idx(img_magic, [n_img, 28, 28], img_payload),
             "t10k-labels-idx1-ubyte": _idx(lab_magic, [n_lab], lab_payload)}
    for name, blob in files.items():
        if gz:
            (folder / (name + ".gz")).write_bytes(gzip.compress(blob))
        else:
            (folder / name).write_bytes(blob)
    return folder


def test_small_valid_file(tmp_path):
    _write_pair(tmp_path, gz=False, img_payload=bytes(range(256)) * 9 + bytes(48))
    ds = MNIST(tmp_path, train=False)
    assert len(ds) == 3 and ds.data[0, 0, 5] == 5 and ds.targets.tolist() == [0, 1, 2]
    assert ds.data.numpy().flags.writeable


@pytest.mark.parametrize("kwargs, match", [
    (dict(img_magic=2049), r"t10k-images-idx3-ubyte.gz: bad magic number 2049 \(expected 2051"),
    (dict(lab_magic=2051), r"t10k-labels-idx1-ubyte.gz: bad magic number 2051 \(expected 2049"),
    (dict(img_payload=bytes(3 * 784 - 10)), r"t10k-images-idx3-ubyte.gz: header says .*\(truncated\)"),
    (dict(lab_payload=bytes(5)), r"t10k-labels-idx1-ubyte.gz: header says .*\(trailing data\)"),
    (dict(n_lab=4), r"3 images but .*t10k-labels-idx1-ubyte.gz holds 4 labels"),
    (dict(labels=[0, 10, 2]), r"t10k-labels-idx1-ubyte.gz: label 10 out of range"),
])
def test_header_errors_name_the_file(tmp_path, kwargs, match):
    _write_pair(tmp_path, **kwargs)
    with pytest.raises(IDXError, match=match):
        MNIST(tmp_path, train=False)


def test_truncated_header_and_corrupt_gzip(tmp_path):
    p = tmp_path / "short.idx"
    p.write_bytes((2051).to_bytes(4, "big") + b"\0\0")
    with pytest.raises(IDXError, match=r"short.idx: truncated header"):
        read_idx(p, 2051)
    p.write_bytes(b"\1")
    with pytest.raises(IDXError, match="too short"):
        read_idx(p)
    g = tmp_path / "bad.gz"
    g.write_bytes(gzip.compress(_idx(2049, [100], bytes(100)))[:-12])
    with pytest.raises(IDXError, match=r"bad.gz: corrupt or truncated gzip"):
        read_idx(g, 2049)
    p.write_bytes(b"\x12\x34\x56\x78" + bytes(8))
    with pytest.raises(IDXError, match="not an IDX file"):
        read_idx(p)


def test_read_idx_other_dtypes(tmp_path):
    arr = np.arange(6, dtype=">i4").reshape(2, 3)
    p = tmp_path / "ints.idx"
    p.write_bytes(_idx(0x00000C02, [2, 3], arr.tobytes()))
    out = read_idx(p)
    assert out.dtype == np.int32 and out.dtype.isnative
    np.testing.assert_array_equal(out, np.arange(6).reshape(2, 3))


def test_loader_over_mnist_does_not_touch_items(mnist_dir, monkeypatch):
    ds = MNIST(mnist_dir, train=False)
    calls = []
    orig = MNIST.__getitem__
    monkeypatch.setattr(MNIST, "__getitem__", lambda self, i: calls.append(i) or orig(self, i))
    n = sum(len(y.data) for _, y in DataLoader(ds, batch_size=1000, shuffle=True))
    assert n == 10000 and calls == []
