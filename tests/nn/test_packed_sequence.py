"""nn.utils.rnn (PackedSequence, pack/pad and their inverses) against PyTorch: the packed data and
indices, the padded results, the gradients through pack and pad, and the errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.nn.utils import rnn as mrnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape)


def _idx(v):
    return None if v is None else v.numpy().tolist()


def _same_packed(m, t):
    np.testing.assert_array_equal(m.data.detach().numpy(), t.data.detach().numpy())
    assert _idx(m.batch_sizes) == _idx(t.batch_sizes)
    assert _idx(m.sorted_indices) == _idx(t.sorted_indices)
    assert _idx(m.unsorted_indices) == _idx(t.unsorted_indices)


def test_module_layout():
    import minigrad.nn.utils.rnn as mod
    assert mod is mg.nn.utils.rnn
    p = mrnn.pack_sequence([mg.ones(2, 3), mg.ones(1, 3)])
    assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    data, bs, si, ui = p
    assert bs.dtype == mg.int64 and si is None and ui is None


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [2, 5, 1, 5, 3]], ids=["sorted", "unsorted"])
def test_pack_padded_matches_torch_with_gradients(batch_first, lengths):
    B, T = len(lengths), max(lengths)
    x = _rand(B, T, 2) if batch_first else _rand(T, B, 2)
    sorted_ = lengths == sorted(lengths, reverse=True)
    tx, mx = torch.tensor(x, requires_grad=True), mg.tensor(x, requires_grad=True)
    for lens in (lengths, torch.tensor(lengths)):   # a list or a tensor of lengths
        tp = trnn.pack_padded_sequence(tx, lens, batch_first=batch_first, enforce_sorted=sorted_)
        mp = mrnn.pack_padded_sequence(mx, lens if isinstance(lens, list) else mg.tensor(lengths),
                                       batch_first=batch_first, enforce_sorted=sorted_)
        _same_packed(mp, tp)
    r = _rand(*tuple(tp.data.shape), seed=4)
    (tp.data * torch.tensor(r)).sum().backward()
    (mp.data * mg.tensor(r)).sum().backward()
    np.testing.assert_array_equal(mx.grad.numpy(), tx.grad.numpy())  # zero at the padding
    if not sorted_:
        with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
            mrnn.pack_padded_sequence(mx, lengths, batch_first=batch_first)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_packed_matches_torch_with_gradients(batch_first):
    lengths = [2, 4, 1, 4]
    x = _rand(4, 4, 3)
    tp = trnn.pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False)
    mp = mrnn.pack_padded_sequence(mg.tensor(x), lengths, enforce_sorted=False)
    td = tp.data.clone().requires_grad_()
    md = mp.data.detach().requires_grad_()
    for kw in (dict(), dict(padding_value=-1.5, total_length=6)):
        tout, tl = trnn.pad_packed_sequence(trnn.PackedSequence(td, tp.batch_sizes, tp.sorted_indices,
                                                                tp.unsorted_indices), batch_first=batch_first, **kw)
        mout, ml = mrnn.pad_packed_sequence(mrnn.PackedSequence(md, mp.batch_sizes, mp.sorted_indices,
                                                                mp.unsorted_indices), batch_first=batch_first, **kw)
        np.testing.assert_array_equal(mout.detach().numpy(), tout.detach().numpy())
        assert ml.tolist() == tl.tolist() and ml.dtype == mg.int64
    r = _rand(*tuple(tout.shape), seed=5)
    (tout * torch.tensor(r)).sum().backward()
    (mout * mg.tensor(r)).sum().backward()
    np.testing.assert_array_equal(md.grad.numpy(), td.grad.numpy())
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest"):
        mrnn.pad_packed_sequence(mp, total_length=3)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, side):
    seqs = [_rand(n, 2, seed=n) for n in (3, 1, 4)]
    ts = [torch.tensor(s, requires_grad=True) for s in seqs]
    ms = [mg.tensor(s, requires_grad=True) for s in seqs]
    tout = trnn.pad_sequence(ts, batch_first=batch_first, padding_value=9.0, padding_side=side)
    mout = mrnn.pad_sequence(ms, batch_first=batch_first, padding_value=9.0, padding_side=side)
    np.testing.assert_array_equal(mout.detach().numpy(), tout.detach().numpy())
    r = _rand(*tuple(tout.shape), seed=6)
    (tout * torch.tensor(r)).sum().backward()
    (mout * mg.tensor(r)).sum().backward()
    for a, b in zip(ts, ms):
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())


def test_pack_sequence_and_the_inverses():
    seqs = [_rand(n, 3, seed=n) for n in (2, 5, 3)]
    with pytest.raises(RuntimeError, match="enforce_sorted"):
        mrnn.pack_sequence([mg.tensor(s) for s in seqs])
    mp = mrnn.pack_sequence([mg.tensor(s) for s in seqs], enforce_sorted=False)
    tp = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    _same_packed(mp, tp)
    for a, s in zip(mrnn.unpack_sequence(mp), seqs):
        np.testing.assert_array_equal(a.numpy(), s)
    padded = mrnn.pad_sequence([mg.tensor(s) for s in seqs], batch_first=True)
    for a, s in zip(mrnn.unpad_sequence(padded, mg.tensor([2, 5, 3]), batch_first=True), seqs):
        np.testing.assert_array_equal(a.numpy(), s)
    for a, s in zip(mrnn.unpad_sequence(padded.transpose(0, 1), [2, 5, 3]), seqs):
        np.testing.assert_array_equal(a.numpy(), s)


def test_packed_sequence_conversions_and_errors():
    mp = mrnn.pack_sequence([mg.ones(3, 2), mg.ones(2, 2)])
    assert mp.double().data.dtype == mg.float64 and mp.float().data.dtype == mg.float32
    assert mp.to(mg.float64).batch_sizes.tolist() == [2, 2, 1]
    assert mp.cpu() is mp and not mp.is_cuda
    x = mg.zeros(4, 3, 2)
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 2"):
        mrnn.pack_padded_sequence(x, [3, 2])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        mrnn.pack_padded_sequence(x, [3, 2, 0])
    with pytest.raises(ValueError, match="Expected padding_side to be one of left or right, but got middle"):
        mrnn.pad_sequence([mg.ones(2)], padding_side="middle")
