"""Recurrent steps: one fused op per time step of nn.RNN / nn.LSTM / nn.GRU (and their cells).

The recurrent modules (nn/modules/rnn.py) split the work of a layer in two:

  1. the input projection of ALL time steps as one GEMM (the fused linear, ops/linalg.py Addmm):
     gi = x @ W_ih^T + b_ih for x of shape (sum of the step batch sizes, input_size), then
     `SplitWithSizes` cuts gi into the per-step rows in one node (PyTorch's split_with_sizes);
  2. the recurrence, one node per time step (`RNNStep`, `LSTMStep`, `GRUStep`): the hidden
     projection h @ W_hh^T of all gates in one GEMM, the gate nonlinearities and the cell update.

The graph unrolls over time, so the backward through time is the engine's ordinary backward.

CONTRACT of one time step (what a compiler `scan` primitive would carry; every array 2-D, rows =
the batch of the step; B_t <= B_{t-1} for packed sequences, the caller slicing the carry):

  =========  ==========================================  ===========================================
  op         inputs (per step / loop-invariant)          carry in -> out, outputs
  =========  ==========================================  ===========================================
  RNNStep    gi (B, H) / W_hh (H, H), b_hh (H,) or None,  h (B, H) -> h' = act(gi + h W_hh^T + b_hh)
             nonlinearity "tanh" | "relu" (static)        output h'
  LSTMStep   gi (B, 4H) / W_hh (4H, P), b_hh (4H,)|None   (h (B, P), c (B, H)) -> (h', c'):
                                                          i,f,g,o = split(gi + h W_hh^T + b_hh)
                                                          (sigmoid, sigmoid, tanh, sigmoid)
                                                          c' = f c + i g, h' = o tanh(c')
                                                          (h' is (B, H): with proj_size the caller
                                                          applies W_hr, h'' = h' W_hr^T (B, P))
  GRUStep    gi (B, 3H) / W_hh (3H, H), b_hh (3H,)|None   h (B, H) -> h':
                                                          gh = h W_hh^T + b_hh, r,z from gi + gh,
                                                          n = tanh(gi_n + r * gh_n),
                                                          h' = (1 - z) n + z h
  =========  ==========================================  ===========================================

  Gate order is PyTorch's (LSTM i, f, g, o; GRU r, z, n), so parameters interchange with PyTorch.

What the backward keeps, per step: the inputs (gi, h, [c], W_hh, b_hh: references, no copies) and
the activated gates of the step (RNN: h'; LSTM: i, f, g, o and tanh(c'); GRU: r, z, n and gh_n).
When no graph of the backward is recorded (an ordinary loss.backward()) the VJP is plain NumPy on
those arrays; when it is (create_graph=True, forward AD over it, mg.graph.trace) the same formulas
run in Tensor ops on gates recomputed from the saved inputs, so they are differentiable again
(double backward through time). The per-step VJP (cotangents dh' [, dc']):
  dG (the gate pre-activations' cotangent) -> d gi = dG (RNN, LSTM; GRU: dG with the n part),
  d h = dG_h W_hh (+ dh' z for GRU), d W_hh = dG_h^T h, d b_hh = sum_rows dG_h, d c = dc_total f.
"""
import numpy as np

from ..autograd.function import Function, NoRule, _plain, _unrecorded

__all__ = []  # Function classes only: the public API is nn.RNN / nn.LSTM / nn.GRU and their cells


def _sig_(a):
    """sigmoid of a, in place (a float view): 1 / (1 + exp(-a)), exp overflowing to inf gives 0."""
    np.negative(a, out=a)
    np.exp(a, out=a)
    a += 1.0
    np.reciprocal(a, out=a)
    return a


def _hidden_gates(h, w, b):
    """h @ w^T + b as a fresh array."""
    out = h @ w.T
    if b is not None:
        out += b
    return out


def _add(a, b):
    return b if a is None else (a if b is None else a + b)


def _proj_tangent(th, tw, tb, h, w):
    """The tangent of h @ w^T + b from the tangents of h, w, b (None for those without one)."""
    out = None
    if th is not None:
        out = th @ w.mT
    if tw is not None:
        out = _add(out, h @ tw.mT)
    return _add(out, tb)


def _cat(parts, tensors):
    if tensors:
        from .shape import cat
        return cat(parts, 1)
    return np.concatenate(parts, axis=1)


# -- the split of the input projection into time steps ------------------------------------------
class SplitWithSizes(Function):
    """(x[0:s0], x[s0:s0+s1], ...) = split_with_sizes(x, sizes) along dim 0 (views, as PyTorch's);
    dx = cat(g_0, g_1, ...) (an output nobody used sends zeros)"""
    _is_view = True
    batching = NoRule("the pieces are the time steps of a recurrence: vmap runs it once per sample")

    op_name = "split_with_sizes"

    @staticmethod
    def forward(ctx, x, sizes):
        ctx.sizes = sizes
        return tuple(np.split(x, np.cumsum(sizes[:-1]).tolist(), axis=0))

    @staticmethod
    def backward(ctx, *grads):
        if _unrecorded():
            return _plain(np.concatenate([g._data for g in grads], axis=0)), None
        from .shape import cat
        return cat(list(grads), 0), None

    @staticmethod
    def jvp(ctx, t, _sizes):
        return SplitWithSizes.apply(t, ctx.sizes)

    @staticmethod
    def onnx(e, c):
        sizes = [int(s) for s in e.args[1]]
        return c.add("Split", [c.x(e), c.ints(sizes)], [c.out(e, i) for i in range(len(sizes))], axis=0)


def split_steps(x, sizes):
    """x (N, G) cut into rows of sizes (one per time step; sum(sizes) == N) as one node."""
    sizes = tuple(int(s) for s in sizes)
    if sum(sizes) != x.shape[0]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {x.shape[0]} (input "
                           f"tensor's size at dimension 0), but got split_sizes={list(sizes)}")
    if len(sizes) == 1:
        return (x,)
    return SplitWithSizes.apply(x, sizes)


# -- Elman RNN step ----------------------------------------------------------------------------
class RNNStep(Function):
    """h' = act(gi + h @ w^T + b), act = tanh or relu (static);
    da = g * (1 - h'^2) (tanh) or g * (h' > 0) (relu); dgi = da, dh = da @ w, dw = da^T h, db = sum da"""
    batching = NoRule("a recurrence step: its batch is already dim 0; vmap runs it once per sample")
    fusion = NoRule("not elementwise: a GEMM with its activation")
    onnx = NoRule("a recurrence step; export an unrolled graph of MatMul/Add/Tanh is not written yet")

    op_name = "rnn_step"

    @staticmethod
    def forward(ctx, gi, h, w, b, nonlinearity):
        a = _hidden_gates(h, w, b)
        a += gi
        if nonlinearity == "tanh":
            np.tanh(a, out=a)
        else:
            np.maximum(a, 0, out=a)
        ctx.nonlinearity = nonlinearity
        ctx.out = a
        ctx.save_for_backward(gi, h, w, b)
        return a

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        tanh = ctx.nonlinearity == "tanh"
        if _unrecorded():
            y, gd = ctx.out, g._data
            da = gd * (1.0 - y * y) if tanh else np.where(y > 0, gd, 0.0).astype(y.dtype, copy=False)
            gi, h, w, b = ctx.saved_tensors
            return (_plain(da) if need[0] else None, _plain(da @ w._data) if need[1] else None,
                    _plain(da.T @ h._data) if need[2] else None,
                    _plain(da.sum(0)) if need[3] else None, None)
        gi, h, w, b = ctx.saved_tensors
        y = _rnn_tensor(gi, h, w, b, ctx.nonlinearity)
        if tanh:
            da = g * (1.0 - y * y)
        else:
            from .elementwise import where
            da = where(y > 0, g, 0.0)
        return (da if need[0] else None, da @ w if need[1] else None, da.mT @ h if need[2] else None,
                da.sum(0) if need[3] else None, None)

    @staticmethod
    def jvp(ctx, tgi, th, tw, tb, _nl):
        gi, h, w, b = ctx.saved_tensors
        y = _rnn_tensor(gi, h, w, b, ctx.nonlinearity)
        ta = _add(tgi, _proj_tangent(th, tw, tb, h, w))
        if ctx.nonlinearity == "tanh":
            return ta * (1.0 - y * y)
        from .elementwise import where
        return where(y > 0, ta, 0.0)


def _rnn_tensor(gi, h, w, b, nonlinearity):
    """RNNStep's output recomputed in Tensor ops (differentiable)."""
    from .elementwise import relu, tanh
    a = gi + h @ w.mT
    if b is not None:
        a = a + b
    return tanh(a) if nonlinearity == "tanh" else relu(a)


def rnn_step(gi, h, w, b, nonlinearity="tanh"):
    """One Elman RNN step: act(gi + h @ w^T + b) as one node (gi: the input projection, bias included)."""
    return RNNStep.apply(gi, h, w, b, nonlinearity)


# -- LSTM step ---------------------------------------------------------------------------------
def _lstm_vjp(dh, dc, i, f, gg, o, tc, c, T):
    """dG (the cotangent of the 4 gate pre-activations, i f g o) and d c from dh', dc' (arrays or
    Tensors: T says which)."""
    dct = dh * o * (1.0 - tc * tc) + dc
    dG = _cat([dct * gg * i * (1.0 - i), dct * c * f * (1.0 - f), dct * i * (1.0 - gg * gg),
               dh * tc * o * (1.0 - o)], T)
    return dG, dct * f


def _lstm_tensor(gi, h, c, w, b):
    """The LSTM step's gates and tanh(c') recomputed in Tensor ops: (i, f, g, o, c', tanh(c'))."""
    from .elementwise import sigmoid, tanh
    G = gi + h @ w.mT
    if b is not None:
        G = G + b
    H = c.shape[-1]
    i, f, g, o = (G[:, k * H:(k + 1) * H] for k in range(4))
    i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
    c2 = f * c + i * g
    return i, f, g, o, c2, tanh(c2)


class LSTMStep(Function):
    """(h', c') = o * tanh(c'), f * c + i * g with (i, f, g, o) = (sig, sig, tanh, sig)(gi + h @ w^T + b)
    (split in 4 along dim 1); backward: see _lstm_vjp and the module docstring"""
    batching = NoRule("a recurrence step: its batch is already dim 0; vmap runs it once per sample")
    fusion = NoRule("not elementwise: a GEMM with its gates and cell update")
    onnx = NoRule("a recurrence step; export an unrolled graph of MatMul/Sigmoid/Tanh is not written yet")

    op_name = "lstm_step"

    @staticmethod
    def forward(ctx, gi, h, c, w, b):
        G = _hidden_gates(h, w, b)
        G += gi
        H = c.shape[-1]
        with np.errstate(over="ignore"):
            _sig_(G[:, :2 * H])
            np.tanh(G[:, 2 * H:3 * H], out=G[:, 2 * H:3 * H])
            _sig_(G[:, 3 * H:])
        i, f, g, o = G[:, :H], G[:, H:2 * H], G[:, 2 * H:3 * H], G[:, 3 * H:]
        c2 = f * c
        c2 += i * g
        tc = np.tanh(c2)
        h2 = o * tc
        ctx.acts, ctx.tc = G, tc
        ctx.save_for_backward(gi, h, c, w, b)
        return h2, c2

    @staticmethod
    def backward(ctx, dh, dc):
        need = ctx.needs_input_grad
        gi, h, c, w, b = ctx.saved_tensors
        if _unrecorded():
            G, H = ctx.acts, ctx.tc.shape[-1]
            dG, dcp = _lstm_vjp(dh._data, dc._data, G[:, :H], G[:, H:2 * H], G[:, 2 * H:3 * H], G[:, 3 * H:],
                                ctx.tc, c._data, False)
            return (_plain(dG) if need[0] else None, _plain(dG @ w._data) if need[1] else None,
                    _plain(dcp) if need[2] else None, _plain(dG.T @ h._data) if need[3] else None,
                    _plain(dG.sum(0)) if need[4] else None)
        i, f, g, o, _c2, tc = _lstm_tensor(gi, h, c, w, b)
        dG, dcp = _lstm_vjp(dh, dc, i, f, g, o, tc, c, True)
        return (dG if need[0] else None, dG @ w if need[1] else None, dcp if need[2] else None,
                dG.mT @ h if need[3] else None, dG.sum(0) if need[4] else None)

    @staticmethod
    def jvp(ctx, tgi, th, tc_in, tw, tb):
        gi, h, c, w, b = ctx.saved_tensors
        i, f, g, o, _c2, tc = _lstm_tensor(gi, h, c, w, b)
        tG = _add(tgi, _proj_tangent(th, tw, tb, h, w))
        if tG is None and tc_in is None:
            return None, None
        H = c.shape[-1]
        dc2 = None
        if tG is not None:
            ti, tf, tg, to = (tG[:, k * H:(k + 1) * H] for k in range(4))
            dc2 = ti * i * (1.0 - i) * g + tf * f * (1.0 - f) * c + i * (tg * (1.0 - g * g))
        if tc_in is not None:
            dc2 = _add(dc2, f * tc_in)
        dh2 = o * (1.0 - tc * tc) * dc2
        if tG is not None:
            dh2 = dh2 + to * o * (1.0 - o) * tc
        return dh2, dc2


def lstm_step(gi, h, c, w, b):
    """One LSTM step: (h', c') as one node (gi: the input projection of the step, bias included)."""
    return LSTMStep.apply(gi, h, c, w, b)


# -- GRU step ----------------------------------------------------------------------------------
def _gru_vjp(dh, r, z, n, ghn, h, T):
    """(d gi, d gh) -- the cotangents of the input and hidden projections -- and the direct part of
    d h (dh' z) from dh' (arrays or Tensors: T says which)."""
    dn = dh * (1.0 - z)
    dan = dn * (1.0 - n * n)
    dar = dan * ghn * r * (1.0 - r)
    daz = dh * (h - n) * z * (1.0 - z)
    return _cat([dar, daz, dan], T), _cat([dar, daz, dan * r], T), dh * z


def _gru_tensor(gi, h, w, b):
    """The GRU step's (r, z, n, gh_n) recomputed in Tensor ops."""
    from .elementwise import sigmoid, tanh
    gh = h @ w.mT
    if b is not None:
        gh = gh + b
    H = h.shape[-1]
    r = sigmoid(gi[:, :H] + gh[:, :H])
    z = sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    ghn = gh[:, 2 * H:]
    n = tanh(gi[:, 2 * H:] + r * ghn)
    return r, z, n, ghn, gh


class GRUStep(Function):
    """h' = (1 - z) n + z h, r = sig(gi_r + gh_r), z = sig(gi_z + gh_z), n = tanh(gi_n + r gh_n),
    gh = h @ w^T + b; backward: see _gru_vjp and the module docstring"""
    batching = NoRule("a recurrence step: its batch is already dim 0; vmap runs it once per sample")
    fusion = NoRule("not elementwise: a GEMM with its gates")
    onnx = NoRule("a recurrence step; export an unrolled graph of MatMul/Sigmoid/Tanh is not written yet")

    op_name = "gru_step"

    @staticmethod
    def forward(ctx, gi, h, w, b):
        gh = _hidden_gates(h, w, b)
        H = h.shape[-1]
        rz = gi[:, :2 * H] + gh[:, :2 * H]
        with np.errstate(over="ignore"):
            _sig_(rz)
        r, z = rz[:, :H], rz[:, H:]
        ghn = gh[:, 2 * H:]
        n = r * ghn
        n += gi[:, 2 * H:]
        np.tanh(n, out=n)
        h2 = h - n
        h2 *= z
        h2 += n
        ctx.acts = (r, z, n, ghn)
        ctx.save_for_backward(gi, h, w, b)
        return h2

    @staticmethod
    def backward(ctx, dh):
        need = ctx.needs_input_grad
        gi, h, w, b = ctx.saved_tensors
        if _unrecorded():
            r, z, n, ghn = ctx.acts
            dgi, dgh, dhz = _gru_vjp(dh._data, r, z, n, ghn, h._data, False)
            return (_plain(dgi) if need[0] else None, _plain(dgh @ w._data + dhz) if need[1] else None,
                    _plain(dgh.T @ h._data) if need[2] else None, _plain(dgh.sum(0)) if need[3] else None)
        r, z, n, ghn, _gh = _gru_tensor(gi, h, w, b)
        dgi, dgh, dhz = _gru_vjp(dh, r, z, n, ghn, h, True)
        return (dgi if need[0] else None, dgh @ w + dhz if need[1] else None,
                dgh.mT @ h if need[2] else None, dgh.sum(0) if need[3] else None)

    @staticmethod
    def jvp(ctx, tgi, th, tw, tb):
        gi, h, w, b = ctx.saved_tensors
        r, z, n, ghn, _gh = _gru_tensor(gi, h, w, b)
        tgh = _proj_tangent(th, tw, tb, h, w)
        H = h.shape[-1]

        def part(t, k):
            return None if t is None else t[:, k * H:(k + 1) * H]
        tar, taz = _add(part(tgi, 0), part(tgh, 0)), _add(part(tgi, 1), part(tgh, 1))
        tr = None if tar is None else tar * r * (1.0 - r)
        tz = None if taz is None else taz * z * (1.0 - z)
        tan = _add(part(tgi, 2), _add(None if tr is None else tr * ghn, None if tgh is None else r * part(tgh, 2)))
        tn = None if tan is None else tan * (1.0 - n * n)
        out = None if tn is None else tn * (1.0 - z)
        if tz is not None:
            out = _add(out, tz * (h - n))
        if th is not None:
            out = _add(out, z * th)
        return out


def gru_step(gi, h, w, b):
    """One GRU step: h' as one node (gi: the input projection of the step, b_ih included)."""
    return GRUStep.apply(gi, h, w, b)
