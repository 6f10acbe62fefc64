"""Memory formats, as PyTorch names them (``mg.contiguous_format``, ``mg.channels_last``, ...).

minigrad keeps a tensor's data as a NumPy array, so a memory format is a layout request that the
calls taking one (``Tensor.to(memory_format=)``, ``Module.to(memory_format=)``) check and honour as
far as NumPy's layout goes: ``contiguous_format`` gives C-contiguous data, ``preserve_format`` keeps
the layout, and ``channels_last`` / ``channels_last_3d`` check the rank PyTorch requires and leave
the values unchanged. They exist so that ported scripts that name them run unchanged.
"""

import numpy as np

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]


class memory_format:
    """A memory format (``mg.contiguous_format``, ``mg.preserve_format``, ``mg.channels_last``,
    ``mg.channels_last_3d``), as ``torch.memory_format``: one object per format, compared by identity."""

    __slots__ = ("_name",)

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __setattr__(self, *a):
        raise AttributeError("memory_format objects are immutable")

    def __repr__(self):
        return f"minigrad.{self._name}"

    def __reduce__(self):
        return self._name  # pickles as the module-level singleton


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

_RANK = {channels_last: 4, channels_last_3d: 5}


def check_rank(fmt, ndim):
    """channels_last needs a 4-d tensor and channels_last_3d a 5-d one, as in PyTorch."""
    need = _RANK.get(fmt)
    if need is not None and ndim != need:
        raise RuntimeError(f"required rank {need} tensor to use {fmt._name} format")


def _c_order(a):
    """``a`` in C order (PyTorch's contiguous layout), for an op whose PyTorch counterpart allocates a
    contiguous result where NumPy keeps the input's layout (a reduction, a scan, a gather of a
    transposed input). No copy when ``a`` is already C-contiguous; a 0-d array (or NumPy scalar)
    stays 0-d (np.ascontiguousarray would make it 1-d)."""
    if a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a)
