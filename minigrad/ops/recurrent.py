"""Recurrent steps: one fused op per time step of nn.RNN / nn.LSTM / nn.GRU (and their cells).

The recurrent modules (nn/modules/rnn.py) split the work of a layer in two:

  1. the input projection of ALL time steps as one GEMM (the fused linear, ops/linalg.py Addmm):
     gi = x @ W_ih^T + b_ih for x of shape (sum of the step batch sizes, input_size), then
     `SplitWithSizes` cuts gi into the per-step rows in one node (PyTorch's split_with_sizes);
  2. the recurrence, one node per time step (`RNNStep`, `LSTMStep`, `GRUStep`): the hidden
     projection h @ W_hh^T of all gates in one GEMM, the gate nonlinearities and the cell update.

Eagerly the graph unrolls over time, so the backward through time is the engine's ordinary backward.
Traced (mg.graph.trace, mg.jit) the modules run the step as the body of one mg.scan per layer and
direction (the contract below), whose reverse reads the activations each step saved.

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
Both paths compute the gates in the same order of operations (mg.sigmoid's formula, (h W^T + b) +
gi), so they agree to the last bit (mg.jit replays the Tensor path; tests/graph compares the bits).

The other rules: jvp in Tensor ops (on recomputed gates); vmap folds the vmap batch into the
step's rows when the weights are shared, and runs the step's composite (`_composite`, a batched
GEMM) for per-sample weights (vmap over grad); ONNX writes the step as its composite (MatMul, Slice,
Sigmoid, Tanh, Mul, Add), inside the Loop of a traced module's scan; fusion: none (not elementwise).
Under a trace with no create_graph (mg.jit's training steps, a scan's reverse body) a step's backward
is one op (`RNNStepBackward`, `LSTMStepBackward`, `GRUStepBackward`): eager's NumPy VJP on the
activations the forward saved (side outputs of its equation), not the Tensor path's recomputation.

Public here: PyTorch's functional cells (torch.rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell:
the input projection, then the step) and split_with_sizes; the modules are nn/modules/rnn.py's.
"""
import numpy as np

from ..autograd import levels as _levels
from ..autograd.function import Function, NoRule, _unrecorded
from ..autograd.grad_mode import _state as _grad_state
from .elementwise import _sigmoid_np
from .linalg import _matmul  # an outer product (batch 1) as one broadcast multiply

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "split_with_sizes"]
__methods__ = ["split_with_sizes"]


def _fold_rows(n_rows):
    """vmap rule of a step op. Shared weights: the per-sample rows (its first n_rows arguments: gi,
    h[, c]) folded into the op's own batch (rows), one node. Per-sample weights (vmap over grad:
    per-sample gradients): the step as its composite of Tensor ops (cls._composite) on the physical
    tensors, the batch in front, the GEMM batched."""
    def rule(cls, level, args):
        from ..func.batching_rules import Fallback, _wrap
        from ..func.vmap import _expand_to, _is_batched, _size
        rows, w, b, static = args[:n_rows], args[n_rows], args[n_rows + 1], args[n_rows + 2:]
        if any(r.ndim != 2 for r in rows) or w.ndim != 2:
            raise Fallback
        V = _size(level)
        phys = [_expand_to(r, level) for r in rows]
        B = phys[0].shape[1]
        if _is_batched(w, level) or _is_batched(b, level):
            pb = None if b is None else _expand_to(b, level).unsqueeze(1)
            out = cls._composite(*phys, _expand_to(w, level), pb, *static)
            return tuple(_wrap(o, 0, level) for o in out) if type(out) is tuple else _wrap(out, 0, level)
        out = cls.apply(*[p.reshape(V * B, p.shape[2]) for p in phys], w, b, *static)
        if type(out) is tuple:
            return tuple(_wrap(o.reshape(V, B, o.shape[-1]), 0, level) for o in out)
        return _wrap(out.reshape(V, B, out.shape[-1]), 0, level)
    return rule


# -- ONNX: each step written as its unrolled composite (MatMul, Add, Slice, Sigmoid, Tanh, Mul) --------
def _onnx_hidden(c, h, w, b):
    """h @ w^T (+ b) as ONNX nodes; returns the name."""
    out = c.add("MatMul", [h.name, c.add("Transpose", [w.name], perm=[1, 0])])
    return c.add("Add", [out, b.name]) if c.is_var(b) else out


def _onnx_cols(c, x, start, stop):
    """Columns start:stop of the 2-D x (a Slice on axis 1)."""
    return c.add("Slice", [x, c.ints([start]), c.ints([stop]), c.ints([1])])


def _split_rule(cls, level, args):
    """vmap rule of SplitWithSizes: the batch dim in front, the split dim shifted by one."""
    from ..func.batching_rules import Fallback, _out, _shift
    from ..func.vmap import _front, _is_batched
    x, sizes, d = args
    if not _is_batched(x, level):
        raise Fallback
    return _out(cls.apply(_front(x), sizes, _shift(d, x.ndim)), level)


def _sig_(a):
    """sigmoid of a, in place (a float view): mg.sigmoid's own function, so the NumPy and the
    Tensor-op paths of every backward below agree to the last bit."""
    return _sigmoid_np(a, out=a)


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
    """(x[0:s0], x[s0:s0+s1], ...) = split_with_sizes(x, sizes, dim) (views, as PyTorch's);
    dx = cat(g_0, g_1, ...) along dim (an output nobody used sends zeros)"""
    _is_view = True
    batching = staticmethod(_split_rule)

    op_name = "split_with_sizes"

    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.sizes, ctx.dim = sizes, dim
        return tuple(np.split(x, np.cumsum(sizes[:-1]).tolist(), axis=dim))

    @staticmethod
    def backward(ctx, *grads):
        from .shape import cat
        return cat(list(grads), ctx.dim), None, None

    @staticmethod
    def jvp(ctx, t, _sizes, _dim):
        return SplitWithSizes.apply(t, ctx.sizes, ctx.dim)

    @staticmethod
    def onnx(e, c):
        sizes = [int(s) for s in e.args[1]]
        return c.add("Split", [c.x(e), c.ints(sizes)], [c.out(e, i) for i in range(len(sizes))],
                     axis=int(e.args[2]))


def split_with_sizes(input, split_sizes, dim=0):
    """input cut along dim into pieces of the given sizes (torch.split_with_sizes), as one node: its
    backward is one concatenation (split's narrow views each scatter into a full-size zero gradient)."""
    if input.ndim == 0:
        raise RuntimeError("split_with_sizes expects at least a 1-dimensional tensor")
    d = dim % input.ndim if -input.ndim <= dim < input.ndim else None
    if d is None:
        raise IndexError(f"split_with_sizes: Dimension out of range (expected to be in range of "
                         f"[{-input.ndim}, {input.ndim - 1}], but got {dim})")
    sizes = tuple(int(s) for s in split_sizes)
    if sum(sizes) != input.shape[d] or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {input.shape[d]} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={list(sizes)}")
    return SplitWithSizes.apply(input, sizes, d)


def split_steps(x, sizes):
    """x (N, G) cut into rows of sizes (one per time step; sum(sizes) == N) as one node."""
    if len(sizes) == 1:
        return (x,)
    return split_with_sizes(x, sizes, 0)


# -- a step's backward as one op where only a trace records it ---------------------------------------
def _traced_only():
    """Whether a step's backward is recorded by a trace and nothing else: mg.graph.trace / mg.jit
    (or a traced mg.scan's reverse body) open and no other transform, and no graph of the backward
    wanted (no create_graph). The backward is then one `*_step_backward` equation reading the
    activations the forward saved (side outputs of its equation) -- the NumPy path of eager's
    backward, bit for bit -- instead of the Tensor path's recomputed gates (a GEMM and ~40 ops)."""
    if _grad_state.enabled:
        return False
    lv = _levels.current()
    return bool(lv) and all(x.kind == "trace" for x in lv)


def _plain_backward():
    """Whether a step's backward is its backward op (the NumPy VJP on the activations the forward
    saved) rather than the Tensor path's recomputed gates: wherever the gradient is not differentiated
    again -- no graph recorded (a plain backward, the op runs as NumPy through apply) or a trace
    recording it as one equation (_traced_only)."""
    return _unrecorded() or _traced_only()


def _step_backward_only(name):
    return (f"{name}: the backward op of a recurrent step is recorded only where its results are not "
            f"differentiated again (a trace's backward without create_graph); a second derivative takes "
            f"the step's Tensor-op backward instead")


class _StepBackward(Function):
    """The family of the steps' backward ops (not an op itself): forward is the NumPy VJP of eager's
    backward, on the activations the step's forward saved; need says which gradients it returns."""
    batching = NoRule("a backward op recorded only under a trace with no other transform open")
    jvp = NoRule("a backward op recorded only under a trace with no other transform open")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")
    fusion = NoRule("not elementwise: a recurrent step's backward (GEMMs)")

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_step_backward_only(type(ctx).__name__))


def _picked(grads, need):
    return tuple(g for g, n in zip(grads, need) if n)


def _spread_need(out, need):
    it = iter(out if type(out) is tuple else (out,))
    return tuple(next(it) if n else None for n in need)


def _rnn_backward_np(g, y, h, w, nonlinearity, need):
    da = g * (1.0 - y * y) if nonlinearity == "tanh" else np.where(y > 0, g, 0.0).astype(y.dtype, copy=False)
    return _picked((da, da @ w if need[1] else None, _matmul(da.T, h) if need[2] else None,
                    da.sum(0) if need[3] else None), need)


class RNNStepBackward(_StepBackward):
    """RNNStep's backward (g, h', h, w) -> (d gi, d h, d w, d b) (those in need), as eager's NumPy path"""
    op_name = "rnn_step_backward"
    _fast = staticmethod(_rnn_backward_np)

    @staticmethod
    def forward(ctx, g, y, h, w, nonlinearity, need):
        return _rnn_backward_np(g, y, h, w, nonlinearity, need)


def _lstm_backward_np(dh, dc, acts, tc, c, h, w, need):
    H = tc.shape[-1]
    dG, dcp = _lstm_vjp(dh, dc, acts[:, :H], acts[:, H:2 * H], acts[:, 2 * H:3 * H], acts[:, 3 * H:], tc, c, False)
    return _picked((dG, dG @ w if need[1] else None, dcp, _matmul(dG.T, h) if need[3] else None,
                    dG.sum(0) if need[4] else None), need)


class LSTMStepBackward(_StepBackward):
    """LSTMStep's backward (dh', dc', gates, tanh(c'), c, h, w) -> (d gi, d h, d c, d w, d b) (those in
    need), as eager's NumPy path"""
    op_name = "lstm_step_backward"
    _fast = staticmethod(_lstm_backward_np)

    @staticmethod
    def forward(ctx, dh, dc, acts, tc, c, h, w, need):
        return _lstm_backward_np(dh, dc, acts, tc, c, h, w, need)


def _gru_backward_np(dh, r, z, n, ghn, h, w, need):
    dgi, dgh, dhz = _gru_vjp(dh, r, z, n, ghn, h, False)
    return _picked((dgi, dgh @ w + dhz if need[1] else None, _matmul(dgh.T, h) if need[2] else None,
                    dgh.sum(0) if need[3] else None), need)


class GRUStepBackward(_StepBackward):
    """GRUStep's backward (dh', r, z, n, gh_n, h, w) -> (d gi, d h, d w, d b) (those in need), as eager's
    NumPy path"""
    op_name = "gru_step_backward"
    _fast = staticmethod(_gru_backward_np)

    @staticmethod
    def forward(ctx, dh, r, z, n, ghn, h, w, need):
        return _gru_backward_np(dh, r, z, n, ghn, h, w, need)


# -- Elman RNN step ----------------------------------------------------------------------------
class RNNStep(Function):
    """h' = act(gi + h @ w^T + b), act = tanh or relu (static);
    da = g * (1 - h'^2) (tanh) or g * (h' > 0) (relu); dgi = da, dh = da @ w, dw = da^T h, db = sum da"""
    batching = staticmethod(_fold_rows(2))
    fusion = NoRule("not elementwise: a GEMM with its activation")
    op_name = "rnn_step"

    @staticmethod
    def onnx(e, c):
        gi, h, w, b, nonlinearity = e.args[:5]
        a = c.add("Add", [_onnx_hidden(c, h, w, b), gi.name])
        return c.add("Tanh" if nonlinearity == "tanh" else "Relu", [a], c.out(e))

    @staticmethod
    def _composite(gi, h, w, b, nonlinearity):
        """The step in Tensor ops (any leading batch dims): vmap's rule for per-sample weights."""
        return _rnn_tensor(gi, h, w, b, nonlinearity)

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
        gi, h, w, b = ctx.saved_tensors
        if _plain_backward():
            return _spread_need(RNNStepBackward.apply(g, ctx.out, h, w, ctx.nonlinearity, tuple(need[:4])),
                                need[:4]) + (None,)
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
    a = h @ w.mT
    if b is not None:
        a = a + b
    a = a + gi  # the forward's order of the sums, so the bits agree
    return tanh(a) if nonlinearity == "tanh" else relu(a)


def _check_cell(op, input, hx, w_ih, w_hh, gates):
    """PyTorch's checks of a cell's input and states (check_rnn_cell_forward_input / _hidden)."""
    if any(t.dtype.kind == "c" for t in [input, w_ih, w_hh, *hx]):  # (the fused steps compute real gates)
        raise RuntimeError(f"{op}: complex tensors are not supported by minigrad's recurrent cells")
    if input.ndim != 2:
        raise RuntimeError(f"{op}: expected a 2-D input (batch, input_size), got shape {tuple(input.shape)}")
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"{op}: input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{w_ih.shape[1]} (input of shape {tuple(input.shape)}, weight_ih {tuple(w_ih.shape)})")
    H = w_hh.shape[0] // gates
    for k, h in enumerate(hx):
        which = "" if len(hx) == 1 else f"[{k}]"
        if h.ndim != 2 or h.shape[0] != input.shape[0]:
            raise RuntimeError(f"{op}: Input batch size {input.shape[0]} doesn't match hidden{which} batch size "
                               f"{h.shape[0] if h.ndim else None} (hidden of shape {tuple(h.shape)})")
        if h.shape[1] != (w_hh.shape[1] if k == 0 else H):
            raise RuntimeError(f"{op}: hidden{which} has inconsistent hidden_size: got {h.shape[1]}, expected "
                               f"{w_hh.shape[1] if k == 0 else H}")


def _input_projection(input, w_ih, b_ih):
    from .linalg import linear
    return linear(input, w_ih, b_ih)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step tanh(input @ w_ih^T + b_ih + hx @ w_hh^T + b_hh) (torch.rnn_tanh_cell):
    the input projection, then the recurrence as one node (RNNStep)."""
    _check_cell("rnn_tanh_cell", input, [hx], w_ih, w_hh, 1)
    return RNNStep.apply(_input_projection(input, w_ih, b_ih), hx, w_hh, b_hh, "tanh")


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step relu(input @ w_ih^T + b_ih + hx @ w_hh^T + b_hh) (torch.rnn_relu_cell)."""
    _check_cell("rnn_relu_cell", input, [hx], w_ih, w_hh, 1)
    return RNNStep.apply(_input_projection(input, w_ih, b_ih), hx, w_hh, b_hh, "relu")


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
    G = h @ w.mT
    if b is not None:
        G = G + b
    G = G + gi  # the forward's order of the sums, so the bits agree
    H = c.shape[-1]
    i, f, g, o = (G[..., k * H:(k + 1) * H] for k in range(4))
    i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
    c2 = f * c + i * g
    return i, f, g, o, c2, tanh(c2)


class LSTMStep(Function):
    """(h', c') = o * tanh(c'), f * c + i * g with (i, f, g, o) = (sig, sig, tanh, sig)(gi + h @ w^T + b)
    (split in 4 along dim 1); backward: see _lstm_vjp and the module docstring"""
    batching = staticmethod(_fold_rows(3))
    fusion = NoRule("not elementwise: a GEMM with its gates and cell update")
    op_name = "lstm_step"

    @staticmethod
    def onnx(e, c):
        gi, h, cc, w, b = e.args[:5]
        H = int(cc.shape[-1])
        G = c.add("Add", [_onnx_hidden(c, h, w, b), gi.name])
        i, f, g, o = (c.add(op, [_onnx_cols(c, G, k * H, (k + 1) * H)])
                      for k, op in enumerate(("Sigmoid", "Sigmoid", "Tanh", "Sigmoid")))
        c2 = c.add("Add", [c.add("Mul", [f, cc.name]), c.add("Mul", [i, g])], c.out(e, 1))
        return c.add("Mul", [o, c.add("Tanh", [c2])], c.out(e, 0))

    @staticmethod
    def _composite(gi, h, c, w, b):
        """The step in Tensor ops (any leading batch dims): vmap's rule for per-sample weights."""
        i, f, g, o, c2, tc = _lstm_tensor(gi, h, c, w, b)
        return o * tc, c2

    @staticmethod
    def forward(ctx, gi, h, c, w, b):
        G = _hidden_gates(h, w, b)
        G += gi
        H = c.shape[-1]
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
        if _plain_backward():
            return _spread_need(LSTMStepBackward.apply(dh, dc, ctx.acts, ctx.tc, c, h, w, tuple(need)), need)
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


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step (torch.lstm_cell): hx = (h, c) -> (h', c'), gates i, f, g, o of
    input @ w_ih^T + b_ih + h @ w_hh^T + b_hh; the recurrence as one node (LSTMStep)."""
    h, c = hx
    _check_cell("lstm_cell", input, [h, c], w_ih, w_hh, 4)
    return LSTMStep.apply(_input_projection(input, w_ih, b_ih), h, c, w_hh, b_hh)


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
    r = sigmoid(gi[..., :H] + gh[..., :H])
    z = sigmoid(gi[..., H:2 * H] + gh[..., H:2 * H])
    ghn = gh[..., 2 * H:]
    n = tanh(gi[..., 2 * H:] + r * ghn)
    return r, z, n, ghn, gh


class GRUStep(Function):
    """h' = (1 - z) n + z h, r = sig(gi_r + gh_r), z = sig(gi_z + gh_z), n = tanh(gi_n + r gh_n),
    gh = h @ w^T + b; backward: see _gru_vjp and the module docstring"""
    batching = staticmethod(_fold_rows(2))
    fusion = NoRule("not elementwise: a GEMM with its gates")
    op_name = "gru_step"

    @staticmethod
    def onnx(e, c):
        gi, h, w, b = e.args[:4]
        H = int(h.shape[-1])
        gh = _onnx_hidden(c, h, w, b)
        r, z = (c.add("Sigmoid", [c.add("Add", [_onnx_cols(c, gi.name, k * H, (k + 1) * H),
                                                _onnx_cols(c, gh, k * H, (k + 1) * H)])]) for k in (0, 1))
        n = c.add("Tanh", [c.add("Add", [_onnx_cols(c, gi.name, 2 * H, 3 * H),
                                         c.add("Mul", [r, _onnx_cols(c, gh, 2 * H, 3 * H)])])])
        return c.add("Add", [c.add("Mul", [c.add("Sub", [h.name, n]), z]), n], c.out(e))

    @staticmethod
    def _composite(gi, h, w, b):
        """The step in Tensor ops (any leading batch dims): vmap's rule for per-sample weights."""
        r, z, n, _ghn, _gh = _gru_tensor(gi, h, w, b)
        return (h - n) * z + n

    @staticmethod
    def forward(ctx, gi, h, w, b):
        gh = _hidden_gates(h, w, b)
        H = h.shape[-1]
        rz = gi[:, :2 * H] + gh[:, :2 * H]
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
        if _plain_backward():
            return _spread_need(GRUStepBackward.apply(dh, *ctx.acts, h, w, tuple(need)), need)
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


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step (torch.gru_cell): gates r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
    h' = (1 - z) n + z h; the recurrence as one node (GRUStep)."""
    _check_cell("gru_cell", input, [hx], w_ih, w_hh, 3)
    return GRUStep.apply(_input_projection(input, w_ih, b_ih), hx, w_hh, b_hh)


# complex tensors (ops/complex.py): splitting is linear with real coefficients
SplitWithSizes._complex = True
