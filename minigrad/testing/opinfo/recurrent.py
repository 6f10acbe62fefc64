"""Registry entries of the recurrent steps (ops/recurrent.py): rnn_tanh_cell, rnn_relu_cell, lstm_cell,
gru_cell (PyTorch's functional cells: the input projection, then the fused step op RNNStep / LSTMStep /
GRUStep) and split_with_sizes (how a layer cuts its input projection into time steps).

The cells' references are NumPy transcriptions of PyTorch's formulas; PyTorch itself (torch.lstm_cell
...) checks values, gradients and second derivatives. grad_fn is None: on the CPU PyTorch's cells are
composites (their last node is a Mul or an Add), ours end in the fused step.
"""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, sample


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_rnn(act):
    def ref(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
        a = x @ w_ih.T + h @ w_hh.T + (0 if b_ih is None else b_ih) + (0 if b_hh is None else b_hh)
        return np.tanh(a) if act == "tanh" else np.maximum(a, 0)
    return ref


def _np_lstm(x, h, c, w_ih, w_hh, b_ih=None, b_hh=None):
    G = x @ w_ih.T + h @ w_hh.T + (0 if b_ih is None else b_ih) + (0 if b_hh is None else b_hh)
    i, f, g, o = np.split(G, 4, axis=1)
    c2 = _sig(f) * c + _sig(i) * np.tanh(g)
    return _sig(o) * np.tanh(c2), c2


def _np_gru(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    gi = x @ w_ih.T + (0 if b_ih is None else b_ih)
    gh = h @ w_hh.T + (0 if b_hh is None else b_hh)
    H = h.shape[1]
    r = _sig(gi[:, :H] + gh[:, :H])
    z = _sig(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h


def _cell_samples(gates, lstm=False, relu=False):
    """(x, h[, c], w_ih, w_hh, b_ih, b_hh) with B=3, I=4, H=2, and the same without biases (relu: each
    drawn again until its pre-activations are 0.05 or more away from relu's kink, where finite
    differences hold)."""
    def gen(rng):
        B, I, H = 3, 4, 2
        G = gates * H

        def draw(bias):
            n_states = 2 if lstm else 1
            while True:
                args = (sample((B, I), rng),) + tuple(sample((B, H), rng) for _ in range(n_states)) + (
                    sample((G, I), rng, -0.7, 0.7), sample((G, H), rng, -0.7, 0.7))
                if bias:
                    args += (sample((G,), rng, -0.5, 0.5), sample((G,), rng, -0.5, 0.5))
                if not relu or _relu_away_from_kink(args):
                    return args
        return [SampleInput(draw(True), name="bias"), SampleInput(draw(False), name="nobias")]
    return gen


def _relu_away_from_kink(args):
    x, h, w_ih, w_hh = args[:4]
    b = sum(args[4:]) if len(args) > 4 else 0
    return bool(np.all(np.abs(x @ w_ih.T + h @ w_hh.T + b) > 0.05))


def _cell(name, gates, ref, lstm=False, relu=False):
    if lstm:  # (x, h, c, weights...) -> lstm_cell(x, (h, c), weights...)
        def call(L, x, h, c, *w):
            return L.lstm_cell(x, (h, c), *w)
        return OpInfo(name, lambda *a: call(mg, *a), ref, _cell_samples(gates, lstm, relu), grad_fn=None,
                      torch_op=call)
    return OpInfo(name, lambda *a, **k: getattr(mg, name)(*a, **k), ref, _cell_samples(gates, lstm, relu),
                  grad_fn=None)


def _split_samples(rng):
    return [SampleInput((sample((6, 3), rng), (3, 2, 1))),
            SampleInput((sample((2, 5), rng), (1, 4), 1), name="dim1"),
            SampleInput((sample((4, 2), rng), (4,)), name="one_piece")]


def _np_split(x, sizes, dim=0):
    return tuple(np.split(x, np.cumsum(sizes[:-1]).tolist(), axis=dim))


def _split():
    return OpInfo("split_with_sizes", lambda *a, **k: mg.split_with_sizes(*a, **k), _np_split, _split_samples,
                  grad_fn="SplitWithSizes")


ops = [
    _cell("rnn_tanh_cell", 1, _np_rnn("tanh")),
    _cell("rnn_relu_cell", 1, _np_rnn("relu"), relu=True),
    _cell("lstm_cell", 4, _np_lstm, lstm=True),
    _cell("gru_cell", 3, _np_gru),
    _split(),
]
