"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, as torch.nn's.

Parameters (names, shapes, registration order, initialisation) and gate order are PyTorch's, so a
PyTorch state_dict loads and gives the same outputs. A layer runs as: the input projection of all
time steps in one GEMM, then one fused node per time step (ops/recurrent.py, whose docstring holds
the per-step contract). Padded and packed input take the same path: a padded batch is a packed one
whose batch size never drops. Under mg.graph.trace / mg.jit the time loop of a layer and direction
is one mg.scan over that step (_scan_layer): a graph whose size does not depend on the sequence
length, with eager's values and gradients bit for bit; packed sequences of different lengths
(a step's batch shrinks, a scan's carry cannot) still unroll.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ...control_flow import _tracing_here, scan
from ...ops.linalg import linear
from ...ops.recurrent import GRUStep, LSTMStep, RNNStep, split_steps
from ...ops.shape import cat, stack
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ._utils import _check_cpu, _empty
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_NAME = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _zeros(shape, dtype) -> Tensor:
    return Tensor._make(np.zeros(shape, dtype=dtype))


def _select_rows(x: Tensor, index: np.ndarray | None, dim: int) -> Tensor:
    """x with its dim `dim` reordered by index (None: unchanged) -- permute_hidden's index_select."""
    if index is None:
        return x
    return x[(slice(None),) * dim + (Tensor._make(index),)]


class RNNBase(Module):
    r"""The base of RNN, LSTM and GRU: the parameters of every layer and direction and the forward
    over padded or packed sequences (torch.nn.RNNBase).

    Args:
        mode (str): "LSTM", "GRU", "RNN_TANH" or "RNN_RELU".
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        num_layers (int): stacked layers.
        bias (bool): whether the layers have biases.
        batch_first (bool): input and output as (batch, seq, feature).
        dropout (float): dropout between layers (training only).
        bidirectional (bool): a reverse direction too.
        proj_size (int): LSTM only: project h to this size (0: none).
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        D = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(D):
                layer_input = input_size if layer == 0 else real_hidden * D
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input)), ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                names = []
                for fmt, shape in shapes:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(_empty(*shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op: PyTorch packs the weights for cuDNN; minigrad reads them where they are."""

    @property
    def _flat_weights(self) -> list[Parameter]:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters per layer and direction: [[weight_ih, weight_hh, (bias_ih, bias_hh), (weight_hr)], ...]."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- checks (PyTorch's messages, prefixed with the module's name) ------------------------------
    def _name(self) -> str:
        return _NAME[self.mode]

    def _check_input(self, input: Tensor, packed: bool) -> None:
        w = self.weight_ih_l0
        if input.dtype != w.dtype:
            raise ValueError(f"{self._name()}: RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert model: "
                             f"model.to({input.dtype})")
        expected = 2 if packed else 3
        if input.ndim != expected:
            raise RuntimeError(f"{self._name()}: input must have {expected} dimensions, got {input.ndim} "
                               f"(input of shape {tuple(input.shape)})")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"{self._name()}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]} (input of shape {tuple(input.shape)})")

    def _check_hidden(self, hx: Tensor, expected: tuple, what: str = "hidden") -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"{self._name()}: Expected {what} size {expected}, got {tuple(hx.shape)}")

    # -- forward -------------------------------------------------------------------------------------
    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, Any]:
        """Run the layers over the sequence; returns (output, h_n) -- for LSTM (output, (h_n, c_n)).

        input: ``(T, B, input_size)`` (``(B, T, input_size)`` with batch_first), ``(T, input_size)``
        unbatched, or a PackedSequence (then the output is one too, and h_n holds each sequence's
        state at its own last step, in the caller's order).
        """
        lstm = self.mode == "LSTM"
        name = self._name()
        D = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        if packed:
            data, bs_t, sorted_idx, unsorted_idx = input
            batch_sizes = [int(b) for b in bs_t._data]
            sorted_idx = None if sorted_idx is None else sorted_idx._data
            unsorted_idx = None if unsorted_idx is None else unsorted_idx._data
            self._check_input(data, True)
            B = batch_sizes[0]
            batched = True
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D instead "
                                 f"(input of shape {tuple(input.shape)})")
            batched = input.ndim == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                input = input.unsqueeze(batch_dim)
                if hx is not None:
                    if lstm:
                        if hx[0].ndim != 2 or hx[1].ndim != 2:
                            raise RuntimeError(f"{name}: For unbatched 2-D input, hx and cx should also be 2-D "
                                               f"but got ({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
                        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                    else:
                        if hx.ndim != 2:
                            raise RuntimeError(f"{name}: For unbatched 2-D input, hx should also be 2-D but got "
                                               f"{hx.ndim}-D tensor")
                        hx = hx.unsqueeze(1)
            elif hx is not None:
                if lstm and (hx[0].ndim != 3 or hx[1].ndim != 3):
                    raise RuntimeError(f"{name}: For batched 3-D input, hx and cx should also be 3-D but got "
                                       f"({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
                if not lstm and hx.ndim != 3:
                    raise RuntimeError(f"{name}: For batched 3-D input, hx should also be 3-D but got "
                                       f"{hx.ndim}-D tensor")
            self._check_input(input, False)
            x = input.transpose(0, 1) if self.batch_first else input
            T, B = x.shape[0], x.shape[1]
            data = x.reshape(T * B, x.shape[2])
            batch_sizes = [B] * T
            sorted_idx = unsorted_idx = None
        dt = data._data.dtype
        LD = self.num_layers * D
        if hx is None:
            h0 = _zeros((LD, B, real_hidden), dt)
            c0 = _zeros((LD, B, self.hidden_size), dt) if lstm else None
        else:
            h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
            if lstm:
                self._check_hidden(h0, (LD, B, real_hidden), "hidden[0]")
                self._check_hidden(c0, (LD, B, self.hidden_size), "hidden[1]")
            else:
                self._check_hidden(h0, (LD, B, real_hidden))
            h0 = _select_rows(h0, sorted_idx, 1)
            c0 = _select_rows(c0, sorted_idx, 1) if lstm else None
        if len(batch_sizes) == 0:
            raise RuntimeError(f"{name}: the input sequence is empty (input of shape {tuple(data.shape)})")
        layer_in = data
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                k = layer * D + d
                params = self.all_weights[k]
                h, c, out = self._run(layer_in, batch_sizes, h0[k], None if c0 is None else c0[k], params, d == 1)
                outs.append(out)
                h_n.append(h)
                if lstm:
                    c_n.append(c)
            layer_in = outs[0] if D == 1 else cat(outs, 1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        hn = _select_rows(stack(h_n, 0), unsorted_idx, 1)
        cn = _select_rows(stack(c_n, 0), unsorted_idx, 1) if lstm else None
        if packed:
            output = PackedSequence(layer_in, input.batch_sizes, input.sorted_indices, input.unsorted_indices)
        else:
            output = layer_in.reshape(T, B, layer_in.shape[-1])
            if self.batch_first:
                output = output.transpose(0, 1)
            if not batched:
                output = output.squeeze(batch_dim)
                hn = hn.squeeze(1)
                cn = cn.squeeze(1) if lstm else None
        return output, ((hn, cn) if lstm else hn)

    def _run(self, data: Tensor, batch_sizes: list[int], h0: Tensor, c0: Tensor | None, params: list[Parameter],
             reverse: bool) -> tuple[Tensor, Tensor | None, Tensor]:
        """One layer, one direction over the packed rows: (h_n, c_n, output rows)."""
        mode = self.mode
        w_ih, w_hh = params[0], params[1]
        b_ih, b_hh = (params[2], params[3]) if self.bias else (None, None)
        w_hr = params[-1] if self.proj_size > 0 else None
        gi_all = linear(data, w_ih, b_ih)  # every step's input projection: one GEMM
        T = len(batch_sizes)

        def step(gi, h, c):
            if mode == "LSTM":
                h, c = LSTMStep.apply(gi, h, c, w_hh, b_hh)
                return (linear(h, w_hr) if w_hr is not None else h), c
            if mode == "GRU":
                return GRUStep.apply(gi, h, w_hh, b_hh), None
            return RNNStep.apply(gi, h, w_hh, b_hh, "tanh" if mode == "RNN_TANH" else "relu"), None

        if batch_sizes[-1] == batch_sizes[0] and _tracing_here():  # traced: one scan over time
            return _scan_layer(step, gi_all, T, h0, c0, reverse)
        gis = split_steps(gi_all, batch_sizes)
        outs = [None] * T
        if not reverse:
            h, c = h0, c0
            done_h, done_c = [], []  # the states of sequences that ended, latest first after reversal
            for t in range(T):
                bt = batch_sizes[t]
                if h.shape[0] > bt:
                    done_h.append(h[bt:])
                    h = h[:bt]
                    if c is not None:
                        done_c.append(c[bt:])
                        c = c[:bt]
                h, c = step(gis[t], h, c)
                outs[t] = h
            if done_h:
                h = cat([h] + done_h[::-1], 0)
                c = cat([c] + done_c[::-1], 0) if c is not None else None
        else:
            last = batch_sizes[-1]
            full = h0.shape[0]
            h = h0 if last == full else h0[:last]
            c = c0 if (c0 is None or last == full) else c0[:last]
            for t in range(T - 1, -1, -1):
                bt = batch_sizes[t]
                if h.shape[0] < bt:  # sequences that start (from their end) at this step
                    h = cat([h, h0[h.shape[0]:bt]], 0)
                    if c is not None:
                        c = cat([c, c0[c.shape[0]:bt]], 0)
                h, c = step(gis[t], h, c)
                outs[t] = h
        return h, c, (outs[0] if T == 1 else cat(outs, 0))


def _scan_layer(step, gi_all: Tensor, T: int, h0: Tensor, c0: Tensor | None,
                reverse: bool) -> tuple[Tensor, Tensor | None, Tensor]:
    """One layer, one direction as ONE mg.scan over the time steps (under mg.graph.trace / mg.jit:
    a graph whose size does not depend on the sequence length). The body is the eager loop's step
    on one (B, G) slice of the input projection, so the values (and the gradients: the scan's VJP
    recomputes the step and runs its backward) are the unrolled loop's bit for bit. Every step has
    the same batch (padded input, or packed sequences of equal lengths)."""
    gi = gi_all.reshape(T, gi_all.shape[0] // T, gi_all.shape[1])
    if c0 is None:
        def body(h, g):
            h = step(g, h, None)[0]
            return h, h
        (h, ys), c = scan(body, h0, gi, reverse=reverse), None
    else:
        def body(carry, g):
            h, c = step(g, carry[0], carry[1])
            return (h, c), h
        (h, c), ys = scan(body, (h0, c0), gi, reverse=reverse)
    return h, c, ys.reshape(T * ys.shape[1], ys.shape[2])


class RNN(RNNBase):
    r"""A multi-layer Elman RNN: :math:`h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})`
    (or ReLU), as ``torch.nn.RNN``.

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        num_layers (int): stacked layers. Default: 1.
        nonlinearity (str): ``'tanh'`` or ``'relu'``. Default: ``'tanh'``.
        bias (bool): use bias_ih and bias_hh. Default: True.
        batch_first (bool): input and output as ``(B, T, *)``. Default: False.
        dropout (float): dropout on the outputs of every layer but the last (training). Default: 0.
        bidirectional (bool): Default: False.

    Returns ``(output, h_n)``: output ``(T, B, D * hidden_size)``, h_n ``(D * num_layers, B, hidden_size)``.

    Example:
        >>> rnn = nn.RNN(10, 20, 2)
        >>> output, hn = rnn(mg.randn(5, 3, 10), mg.randn(2, 3, 20))
        >>> tuple(output.shape), tuple(hn.shape)
        ((5, 3, 20), (2, 3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"RNN.__init__() got an unexpected keyword argument {next(iter(kwargs))!r}")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    r"""A multi-layer LSTM (gates i, f, g, o; optional projection of h by proj_size), as ``torch.nn.LSTM``.

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional: as nn.RNN.
        proj_size (int): if > 0, h_t = (o_t * tanh(c_t)) W_hr^T of size proj_size. Default: 0.

    Returns ``(output, (h_n, c_n))``.

    Example:
        >>> lstm = nn.LSTM(10, 20, 2)
        >>> output, (hn, cn) = lstm(mg.randn(5, 3, 10))
        >>> tuple(output.shape), tuple(hn.shape), tuple(cn.shape)
        ((5, 3, 20), (2, 3, 20), (2, 3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    r"""A multi-layer GRU (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn))), as ``torch.nn.GRU``.

    Args:
        input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional: as nn.RNN.

    Returns ``(output, h_n)``.

    Example:
        >>> gru = nn.GRU(10, 20, 2)
        >>> output, hn = gru(mg.randn(5, 3, 10))
        >>> tuple(output.shape), tuple(hn.shape)
        ((5, 3, 20), (2, 3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"GRU.__init__() got an unexpected keyword argument {next(iter(kwargs))!r}")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)


# -- cells ------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """The base of the cells: weight_ih (chunks * hidden, input), weight_hh (chunks * hidden, hidden),
    bias_ih and bias_hh, from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) (torch.nn.RNNCellBase)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_cpu(device)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(_empty(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input: Tensor, hx: Any, n_states: int) -> tuple[Tensor, list[Tensor], bool]:
        """(2-D input, the 2-D states, batched?) with PyTorch's checks and messages."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead "
                             f"(input of shape {tuple(input.shape)})")
        states = [] if hx is None else ([hx] if n_states == 1 else list(hx))
        for s in states:
            if s.ndim not in (1, 2):
                raise ValueError(f"{name}: Expected hx[0] to be 1D or 2D, got {s.ndim}D instead" if n_states > 1
                                 else f"{name}: Expected hidden to be 1D or 2D, got {s.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
            states = [s.unsqueeze(0) for s in states]
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got {input.shape[1]} expected "
                               f"{self.input_size} (input of shape {tuple(input.shape)})")
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"{name}: expected the input's dtype {input.dtype} to match the weights' "
                               f"{self.weight_ih.dtype}")
        B = input.shape[0]
        if not states:
            states = [_zeros((B, self.hidden_size), input._data.dtype) for _ in range(n_states)]
        for k, s in enumerate(states):
            which = "" if n_states == 1 else f"[{k}]"
            if s.shape[0] != B:
                raise RuntimeError(f"{name}: Input batch size {B} doesn't match hidden{which} batch size "
                                   f"{s.shape[0]}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"{name}: hidden{which} has inconsistent hidden_size: got {s.shape[1]}, "
                                   f"expected {self.hidden_size}")
        return input, states, batched


class RNNCell(RNNCellBase):
    r"""One Elman RNN step :math:`h' = \tanh(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})` (or ReLU),
    as ``torch.nn.RNNCell``.

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        bias (bool): whether the cell has biases. Default: True.
        nonlinearity (str): ``'tanh'`` or ``'relu'``. Default: ``'tanh'``.

    Example:
        >>> cell = nn.RNNCell(10, 20)
        >>> tuple(cell(mg.randn(3, 10)).shape)
        (3, 20)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """h' for input (B, input_size) or (input_size,) and hx (B, hidden_size) (zeros when None)."""
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, (h,), batched = self._prepare(input, hx, 1)
        out = RNNStep.apply(linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                            self.nonlinearity)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""One LSTM step, as ``torch.nn.LSTMCell``: returns ``(h', c')``.

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        bias (bool): whether the cell has biases. Default: True.

    Example:
        >>> cell = nn.LSTMCell(10, 20)
        >>> h, c = cell(mg.randn(3, 10))
        >>> tuple(h.shape), tuple(c.shape)
        ((3, 20), (3, 20))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        """(h', c') for input (B, input_size) or (input_size,) and hx = (h, c) (zeros when None)."""
        x, (h, c), batched = self._prepare(input, hx, 2)
        h2, c2 = LSTMStep.apply(linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h2, c2) if batched else (h2.squeeze(0), c2.squeeze(0))


class GRUCell(RNNCellBase):
    r"""One GRU step, as ``torch.nn.GRUCell``.

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        bias (bool): whether the cell has biases. Default: True.

    Example:
        >>> cell = nn.GRUCell(10, 20)
        >>> tuple(cell(mg.randn(3, 10)).shape)
        (3, 20)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """h' for input (B, input_size) or (input_size,) and hx (B, hidden_size) (zeros when None)."""
        x, (h,), batched = self._prepare(input, hx, 1)
        out = GRUStep.apply(linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)
