"""Packed and padded sequences for the recurrent modules, as torch.nn.utils.rnn.

A PackedSequence holds a batch of variable-length sequences time step by time step: `data` has the
rows of step 0 for every sequence, then those of step 1 for the sequences still running, ...;
`batch_sizes[t]` is how many sequences run at step t (non-increasing: the sequences are sorted by
decreasing length, `sorted_indices` maps that order to the caller's, `unsorted_indices` back).

Every conversion here is one gather (an advanced-index getitem) of the rows it moves, so gradients
flow through pack and pad, and the backward is one scatter, not one per time step.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Iterable

import numpy as np

from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence", "invert_permutation"]


def _ints(v) -> np.ndarray | None:
    """A list / tuple / Tensor / array of integers as an int64 NumPy array (None stays None)."""
    if v is None:
        return None
    if isinstance(v, Tensor):
        v = v._data
    return np.asarray(v, dtype=np.int64).reshape(-1)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation (an int64 tensor): out[permutation[i]] = i; None for None."""
    if permutation is None:
        return None
    p = _ints(permutation)
    out = np.empty_like(p)
    out[p] = np.arange(p.size, dtype=np.int64)
    return Tensor._make(out)


def _as_index(v) -> Tensor | None:
    return None if v is None else Tensor._make(_ints(v))


_PackedSequenceBase = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """A batch of variable-length sequences, packed time step by time step (torch.nn.utils.rnn's).

    Fields (a named tuple): ``data`` (the packed rows, ``(sum(batch_sizes), *)``), ``batch_sizes``
    (int64, the number of sequences at each time step), ``sorted_indices`` (int64 or None: the
    caller's batch index of each packed sequence), ``unsorted_indices`` (its inverse). Make one with
    pack_padded_sequence or pack_sequence, not by hand.
    """

    def __new__(cls, data: Tensor, batch_sizes: Any = None, sorted_indices: Any = None,
                unsorted_indices: Any = None) -> "PackedSequence":
        if batch_sizes is None:
            raise TypeError("PackedSequence: batch_sizes is required (make one with pack_padded_sequence)")
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, _as_index(batch_sizes), _as_index(sorted_indices),
                               _as_index(unsorted_indices))

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        """The same sequence with data converted by Tensor.to (dtype or device); the indices stay."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    def float(self) -> "PackedSequence":
        """data as float32."""
        return self.to(dtype=_dtype("float32"))

    def double(self) -> "PackedSequence":
        """data as float64."""
        return self.to(dtype=_dtype("float64"))

    def cpu(self) -> "PackedSequence":
        """Itself (minigrad runs on the CPU)."""
        return self

    @property
    def is_cuda(self) -> bool:
        """False: minigrad's tensors live on the CPU."""
        return False

    def is_pinned(self) -> bool:
        """False: no pinned memory on the CPU."""
        return False


def _dtype(name):
    import minigrad as mg
    return getattr(mg, name)


def _batch_sizes_of(lengths: np.ndarray) -> np.ndarray:
    """batch_sizes of sequences of the given lengths sorted in decreasing order."""
    T = int(lengths.max()) if lengths.size else 0
    return (lengths[None, :] > np.arange(T)[:, None]).sum(1).astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch of variable-length sequences (torch.nn.utils.rnn.pack_padded_sequence).

    Args:
        input (Tensor): ``(T, B, *)`` (``(B, T, *)`` with batch_first), sequence b valid for its
            first ``lengths[b]`` steps.
        lengths (list or Tensor): the length of each sequence (all > 0).
        batch_first (bool): the layout of input. Default: False.
        enforce_sorted (bool): require lengths in decreasing order (else they are sorted here and
            the order is kept in sorted_indices). Default: True.
    """
    L = _ints(lengths)
    bdim = 0 if batch_first else 1
    if input.ndim < 2:
        raise ValueError(f"pack_padded_sequence: input must have at least 2 dimensions (time and batch), "
                         f"got shape {tuple(input.shape)}")
    B, T = input.shape[bdim], input.shape[1 - bdim]
    if L.size != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {L.size} "
                           f"(batch_size={B})")
    if L.size and L.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in "
                           "'lengths' that is <= 0")
    if L.size and L.max() > T:
        raise RuntimeError(f"pack_padded_sequence: a length ({int(L.max())}) exceeds the padded sequence "
                           f"length {T} (input of shape {tuple(input.shape)})")
    if enforce_sorted:
        if np.any(np.diff(L) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                               "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                               "pack_sequence to sidestep this requirement if you do not need ONNX "
                               "exportability.")
        order = None
    else:
        order = np.argsort(-L, kind="stable")
        L = L[order]
    bs = _batch_sizes_of(L)
    # the packed rows: step t, sorted sequence p -> padded (t, order[p])
    cols = np.arange(B) if order is None else order
    t_idx = np.repeat(np.arange(bs.size), bs)
    p_idx = np.concatenate([np.arange(b) for b in bs]) if bs.size else np.zeros(0, np.int64)
    b_idx = cols[p_idx]
    idx = (b_idx, t_idx) if batch_first else (t_idx, b_idx)
    data = input[idx]
    return PackedSequence(data, bs, None if order is None else order, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Unpack a PackedSequence into a padded batch and the lengths (torch.nn.utils.rnn.pad_packed_sequence).

    Returns ``(padded, lengths)``: padded ``(T, B, *)`` (``(B, T, *)`` with batch_first) in the
    original batch order, T = total_length or the longest length; lengths an int64 tensor.
    """
    from ...ops.shape import cat
    data = sequence.data
    bs = _ints(sequence.batch_sizes)
    T = int(bs.size)
    B = int(bs[0]) if T else 0
    if total_length is not None:
        if total_length < T:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in "
                             f"input, but got total_length={total_length} and max sequence length being {T}")
        T_out = int(total_length)
    else:
        T_out = T
    unsorted = _ints(sequence.unsorted_indices)
    pos = np.arange(B) if unsorted is None else unsorted  # caller's j -> packed (sorted) position
    offsets = np.concatenate([[0], np.cumsum(bs)]).astype(np.int64)
    N = int(offsets[-1])
    t = np.arange(T_out)[:, None]
    valid = t < T
    bs_t = np.where(valid[:, 0], np.concatenate([bs, np.zeros(T_out - T, np.int64)]), 0)[:, None]
    off_t = np.concatenate([offsets[:-1], np.full(T_out - T, N, np.int64)])[:, None]
    idx = np.where(pos[None, :] < bs_t, off_t + pos[None, :], N)  # (T_out, B); N: the padding row
    if batch_first:
        idx = idx.T
    pad = Tensor._make(np.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data._data.dtype))
    padded = cat([data, pad], 0)[Tensor._make(idx)]
    lengths_sorted = (bs[None, :] > np.arange(B)[:, None]).sum(1)  # sorted position p -> its length
    return padded, Tensor._make(lengths_sorted[pos].astype(np.int64))


def pad_sequence(sequences: Iterable[Tensor] | Tensor, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Pad a list of ``(L_i, *)`` tensors to one ``(max L, B, *)`` tensor (``(B, max L, *)`` with
    batch_first) filled with padding_value (torch.nn.utils.rnn.pad_sequence).

    Args:
        padding_side (str): "right" (the padding after each sequence) or "left". Default: "right".
    """
    from ...ops.shape import cat
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    trail = tuple(seqs[0].shape[1:])
    for i, s in enumerate(seqs):
        if s.ndim < 1 or tuple(s.shape[1:]) != trail:
            raise RuntimeError(f"pad_sequence: the sequences must have the same trailing dimensions: "
                               f"sequence 0 has shape {tuple(seqs[0].shape)}, sequence {i} {tuple(s.shape)}")
    lens = np.array([s.shape[0] for s in seqs], dtype=np.int64)
    T, B = int(lens.max()), len(seqs)
    starts = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    N = int(starts[-1])
    t = np.arange(T)[:, None]
    shift = (T - lens)[None, :] if padding_side == "left" else 0
    k = t - shift  # the step of sequence b shown at padded position t
    idx = np.where((k >= 0) & (k < lens[None, :]), starts[:-1][None, :] + k, N)  # (T, B)
    if batch_first:
        idx = idx.T
    dt = seqs[0]._data.dtype
    for s in seqs[1:]:
        dt = np.result_type(dt, s._data.dtype)
    pad = Tensor._make(np.full((1,) + trail, padding_value, dtype=dt))
    return cat(seqs + [pad], 0)[Tensor._make(idx)]


def pack_sequence(sequences: Iterable[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of ``(L_i, *)`` tensors (torch.nn.utils.rnn.pack_sequence): pad_sequence, then
    pack_padded_sequence with their lengths."""
    seqs = list(sequences)
    lengths = [s.shape[0] for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """The list of sequences ``(L_i, *)`` of a padded batch (torch.nn.utils.rnn.unpad_sequence)."""
    L = _ints(lengths)
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(L)]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences ``(L_i, *)`` of a PackedSequence, in the original order
    (torch.nn.utils.rnn.unpack_sequence)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
