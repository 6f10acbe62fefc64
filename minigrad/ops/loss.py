"""Fused losses: cross_entropy (CrossEntropyLoss), nll_loss (NllLoss), mse_loss (MseLoss) and the
binary cross entropies. Argument checking lives in nn.functional; these take checked arrays.

cross_entropy's backward is itself an op (CrossEntropyLossBackward): its forward is the NumPy
gradient, its backward the second derivative (through softmax), so one definition serves both.
"""
import numpy as np

from .. import kernels
from ..autograd.function import Function, NoRule, _spread
from ..tensor import Tensor
from .elementwise import LogSigmoid, clamp, log, sigmoid
from .reduction import log_softmax, softmax

__all__ = []  # Function classes only: their public wrappers are nn.functional's

_make = Tensor._make


def _bshape(w, ndim):
    """w of shape (C,) viewed so it broadcasts along dim 1 of an ndim-dimensional (N, C, ...) array."""
    return w.reshape((1, -1) + (1,) * (ndim - 2))


def _reduce_np(loss, reduction, denom, dt):
    if reduction == "mean":
        if denom == 0:  # no target counts (all ignored or of weight 0): nan, as PyTorch, without a warning
            return np.asarray(np.nan, dtype=dt)
        return np.asarray(np.add.reduce(loss, None) / denom, dtype=dt)  # (ndarray.sum's wrapper skipped)
    if reduction == "sum":
        return np.asarray(np.add.reduce(loss, None), dtype=dt)
    return loss.astype(dt, copy=False)


# the `onnx` rule of the ops here that have no ONNX mapping
_NO_ONNX = NoRule("a training loss: export inference graphs (model.eval(), the loss left out)")


class CrossEntropyLoss(Function):
    """loss_i = -sum_c q_ic * log_softmax(z)_ic;  (dz, dy) = CrossEntropyLossBackward(g, z, y)

    q is the weighted (and smoothed) target distribution: for class indices
    q_ic = (1-eps) w_t [c == t] + eps/C w_c; for probabilities q_ic = w_c ((1-eps) y_ic + eps/C).
    """
    batching = "cross_entropy"
    onnx = _NO_ONNX

    op_name = "cross_entropy"

    @staticmethod
    def forward(ctx, z, target, w, probs, ignore_index, reduction, eps):
        C = z.shape[1]
        dt = z.dtype
        need = ctx.needs_input_grad
        if (not probs and w is None and not eps and z.ndim == 2 and reduction != "none"
                and dt.kind == "f" and kernels.available()):
            # numba: softmax and the per-row losses in one pass (kernels/loss.py), the plain case
            p = np.empty(z.shape, dt)
            rows = np.empty(z.shape[0], dt)
            if kernels.load("loss").forward(z, target, ignore_index, p, rows):
                a = np.ones(z.shape[0], dt)
                denom = dt.type(z.shape[0])
                ctx.st = {"w": w, "probs": probs, "reduction": reduction, "eps": eps, "tt": target[:, None],
                          "a": a, "S": a, "b": None, "plain": True, "denom": denom, "p": p}
                ctx.save_for_backward(z, target)
                return _reduce_np(rows, reduction, denom, dt)
        zs = z - z.max(axis=1, keepdims=True)
        e = np.exp(zs)
        s = e.sum(axis=1, keepdims=True)
        wb = _bshape(w, z.ndim) if w is not None else None
        st = {"w": w, "probs": probs, "reduction": reduction, "eps": eps}
        # the common case: class indices, none ignored, no class weights or smoothing
        plain = (not probs and w is None and not eps and z.ndim == 2
                 and not np.count_nonzero(target == ignore_index))
        if not plain:
            logp = zs
            logp -= np.log(s)
        if probs:
            y = target.astype(dt, copy=False)
            q = y * dt.type(1.0 - eps) + dt.type(eps / C) if eps else y
            if wb is not None:
                q = q * wb
            loss = -(q * logp).sum(axis=1)
            denom = loss.size
            st["q"] = q
            if need and need[1]:
                st["logp"] = logp
        elif plain:
            # the loss straight from the row sums, as a hand-written NumPy step, without the general
            # case's masks and per-sample weights (the same numbers: a = S = 1, loss_i = -picked_i)
            rows = np.arange(z.shape[0])
            loss = np.log(s[:, 0])
            loss -= zs[rows, target]
            a = np.ones(z.shape[0], dt)
            st.update(tt=target[:, None], a=a, S=a, b=None, plain=True)
            denom = dt.type(z.shape[0])
        else:
            valid = target != ignore_index
            tt = np.where(valid, target, 0)[:, None]  # ignored targets may lie outside [0, C)
            if z.ndim == 2:  # plain fancy indexing is a few times cheaper than take_along_axis
                picked = logp[np.arange(len(tt)), tt[:, 0]]
            else:
                picked = np.take_along_axis(logp, tt, axis=1)[:, 0]
            wt = (w[tt[:, 0]] * valid) if w is not None else valid.astype(dt)
            a = wt * dt.type(1.0 - eps) if eps else wt
            loss = -a * picked
            S = a
            b = None
            if eps:
                b = valid.astype(dt) * dt.type(eps / C)
                smooth = -(logp * wb).sum(axis=1) if wb is not None else -logp.sum(axis=1)
                loss = loss + b * smooth
                S = a + b * (w.sum() if w is not None else dt.type(C))
            st.update(tt=tt, a=a, S=S, b=b, valid=valid)
            denom = wt.sum()
        st["denom"] = denom
        if need and need[0]:
            e /= s
            st["p"] = e
        ctx.st = st
        ctx.save_for_backward(z, target)
        return _reduce_np(loss, reduction, denom, dt)

    @staticmethod
    def backward(ctx, g):
        z, target = ctx.saved_tensors
        need = tuple(ctx.needs_input_grad[:2])
        grads = CrossEntropyLossBackward.apply(g, z, target, ctx.st, need)
        return _spread(grads, need) + (None,) * 5

    @staticmethod
    def jvp(ctx, tz, ty, *_):
        # loss_i' = sum_c tz_ic (S_i p_ic - q_ic) - (1-eps) sum_c ty_ic w_c logp_ic, reduced as the loss
        # (the backward's dg with the tangents in place of the cotangents)
        z, y = ctx.saved_tensors
        st = ctx.st
        red, eps, w, probs = st["reduction"], st["eps"], st["w"], st["probs"]
        out = None
        if tz is not None:
            p = softmax(z, 1)
            if probs:
                q = _make(st["q"])
                qs = q.sum(1, keepdim=True)
            else:
                qa = np.zeros(z.shape, dtype=z.dtype)
                np.put_along_axis(qa, st["tt"], st["a"][:, None], axis=1)
                if eps:
                    qa += st["b"][:, None] * (_bshape(w, z.ndim) if w is not None else 1.0)
                q, qs = _make(qa), _make(st["S"][:, None])
            out = (tz * (qs * p - q)).sum(1)
        if ty is not None and probs:
            k = -(1.0 - eps)
            c = ty * log_softmax(z, 1) * (k if w is None else _make(_bshape(w, z.ndim)) * k)
            out = c.sum(1) if out is None else out + c.sum(1)
        if out is None or red == "none":
            return out
        return out.sum() / float(st["denom"]) if red == "mean" else out.sum()


class CrossEntropyLossBackward(Function):
    """dz = gi * (sum_c q_ic * softmax(z)_i - q_i), dy = -gi (1-eps) w log_softmax(z) (probabilities),
    gi = g / denom, g or g per sample by reduction; second derivative: dz is linear in g and depends
    on z through softmax (and on y through q), dy on z through log_softmax"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")

    op_name = "cross_entropy_backward"

    @staticmethod
    def forward(ctx, g, z, target, st, need):
        ctx.st, ctx.need = st, need
        ctx.save_for_backward(g, z, target)
        red, eps, w, probs = st["reduction"], st["eps"], st["w"], st["probs"]
        nz, ny = need
        dt = z.dtype
        ndim = z.ndim
        if red == "mean":
            if st["denom"]:
                gi = (g / dt.type(st["denom"])).astype(dt)
            else:
                with np.errstate(divide="ignore", invalid="ignore"):  # a zero denominator: see below
                    gi = (g / dt.type(st["denom"])).astype(dt)
        elif red == "sum":
            gi = g.astype(dt, copy=False)
        else:
            gi = g[:, None]
        out = []
        if probs:
            if nz:
                q = st["q"]
                dz = st["p"] * q.sum(axis=1, keepdims=True)
                dz -= q
                dz *= gi
                out.append(dz.astype(dt, copy=False))
            if ny:
                dy = st["logp"] * (-(1.0 - eps) * gi)
                if w is not None:
                    dy = dy * _bshape(w, ndim)
                out.append(dy.astype(dt, copy=False))
        elif nz and red != "none" and "plain" in st:  # forward's common case: a = S = 1, nothing ignored
            p = st["p"]
            if kernels.available() and p.flags.c_contiguous:
                dz = np.empty(p.shape, dt)
                kernels.load("loss").backward(p, st["tt"][:, 0], dt.type(gi), dz)
            else:
                dz = p * gi
                dz[np.arange(dz.shape[0]), st["tt"][:, 0]] -= gi
            out.append(dz)
        elif nz and red == "mean" and st["denom"] == 0:
            # no target counts (every one ignored, or all their weights 0): as PyTorch, a row whose
            # target is ignored gets no gradient, the others nan (0/0) -- not nan everywhere, and no
            # division-by-zero warnings
            dz = np.zeros(z.shape, dt)
            np.copyto(dz, np.nan, where=np.expand_dims(st["valid"], 1))  # each counted row, all classes
            out.append(dz)
        elif nz:
            p, tt, a, S = st["p"], st["tt"], st["a"], st["S"]
            gi_el = gi[:, 0] if red == "none" else gi
            dz = p * (gi_el * S)[:, None]
            if ndim == 2:
                dz[np.arange(dz.shape[0]), tt[:, 0]] -= gi_el * a
            else:
                vals = np.take_along_axis(dz, tt, axis=1)
                vals -= (gi_el * a)[:, None]
                np.put_along_axis(dz, tt, vals, axis=1)
            if eps:
                sm = (gi_el * st["b"])[:, None]
                dz -= sm * _bshape(w, ndim) if w is not None else sm
            out.append(dz.astype(dt, copy=False))
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        g, z, y = ctx.saved_tensors
        gdz, gdy = _spread(grads, ctx.need)
        st = ctx.st
        red, eps, w, probs = st["reduction"], st["eps"], st["w"], st["probs"]
        ng, nz, ny = ctx.needs_input_grad[:3]
        ndim = z.ndim
        wb = _make(_bshape(w, ndim)) if w is not None else None
        gi = g / float(st["denom"]) if red == "mean" else (g if red == "sum" else g.unsqueeze(1))
        p = softmax(z, 1)
        if probs:
            q = y * (1.0 - eps) + eps / z.shape[1] if eps else y
            if wb is not None:
                q = q * wb
            qs = q.sum(1, keepdim=True)
            r_dz = qs * p - q  # dz = gi * r_dz
            k = -(1.0 - eps) if wb is None else wb * (-(1.0 - eps))
            dy_coef = log_softmax(z, 1) * k  # dy = gi * dy_coef
        else:
            qa = np.zeros(z.shape, dtype=z.dtype)
            np.put_along_axis(qa, st["tt"], st["a"][:, None], axis=1)
            if eps:
                qa += st["b"][:, None] * (_bshape(w, ndim) if w is not None else 1.0)
            qs = _make(st["S"][:, None])
            r_dz = qs * p - _make(qa)
        dg = dz = dy = None
        if ng:
            t = None
            if gdz is not None:
                t = (gdz * r_dz).sum(1)
            if gdy is not None:
                u = (gdy * dy_coef).sum(1)
                t = u if t is None else t + u
            if t is not None:
                dg = t if red == "none" else (t.sum() / float(st["denom"]) if red == "mean" else t.sum())
        if nz:
            if gdz is not None:  # through softmax: p * (v - sum_c v p)
                v = gdz * gi * qs
                dz = p * (v - (v * p).sum(1, keepdim=True))
            if gdy is not None:  # through log_softmax: c - p * sum_c c
                c = gdy * gi * k
                t = c - p * c.sum(1, keepdim=True)
                dz = t if dz is None else dz + t
        if ny and probs and gdz is not None:  # q is linear in y
            dq = gi * ((gdz * p).sum(1, keepdim=True) - gdz)
            dy = dq * (1.0 - eps)
            if wb is not None:
                dy = dy * wb
        return dg, dz, dy, None, None

    @staticmethod
    def jvp(ctx, tg, tz, ty, *_):
        # dz = gi r, r = qs p - q;  dy = gi k logp (probabilities), k = -(1-eps) w;  with p' = p (tz - <p, tz>)
        # and logp' = tz - <p, tz>:  dz' = tgi r + gi (qs p' + qs' p - q'),  dy' = tgi k logp + gi k logp'
        g, z, y = ctx.saved_tensors
        st = ctx.st
        red, eps, w, probs = st["reduction"], st["eps"], st["w"], st["probs"]
        wb = _make(_bshape(w, z.ndim)) if w is not None else None

        def per(v):  # g (or its tangent) as the per-element factor gi
            return v / float(st["denom"]) if red == "mean" else (v if red == "sum" else v.unsqueeze(1))
        gi = per(g)
        tgi = per(tg) if tg is not None else None
        p = softmax(z, 1)
        dlogp = tz - (p * tz).sum(1, keepdim=True) if tz is not None else None
        if probs:
            q = y * (1.0 - eps) + eps / z.shape[1] if eps else y
            tq = ty * (1.0 - eps) if ty is not None else None
            if wb is not None:
                q = q * wb
                tq = tq * wb if tq is not None else None
        else:
            qa = np.zeros(z.shape, dtype=z.dtype)
            np.put_along_axis(qa, st["tt"], st["a"][:, None], axis=1)
            if eps:
                qa += st["b"][:, None] * (_bshape(w, z.ndim) if w is not None else 1.0)
            q, tq = _make(qa), None
        qs = q.sum(1, keepdim=True) if probs else _make(st["S"][:, None])

        def add(a, b):
            return b if a is None else (a if b is None else a + b)
        out = []
        if ctx.need[0]:
            d = tgi * (qs * p - q) if tgi is not None else None
            inner = qs * (p * dlogp) if dlogp is not None else None
            if tq is not None:
                inner = add(inner, tq.sum(1, keepdim=True) * p - tq)
            out.append(add(d, gi * inner if inner is not None else None))
        if ctx.need[1]:
            k = -(1.0 - eps) if wb is None else wb * (-(1.0 - eps))
            d = tgi * k * log_softmax(z, 1) if tgi is not None else None
            out.append(add(d, gi * k * dlogp if dlogp is not None else None))
        return tuple(out)


class NllLoss(Function):
    """loss_i = -w[t_i] * x[i, t_i];  dx = scatter of -g_i * w[t_i] at t_i (constant in x)"""
    batching = "cross_entropy"
    onnx = _NO_ONNX

    op_name = "nll_loss"

    @staticmethod
    def forward(ctx, x, t, w, ignore_index, reduction):
        dt = x.dtype
        valid = t != ignore_index
        tt = np.where(valid, t, 0)[:, None]
        wt = (w[tt[:, 0]] * valid) if w is not None else valid.astype(dt)
        loss = -wt * np.take_along_axis(x, tt, axis=1)[:, 0]
        ctx.tt, ctx.wt, ctx.reduction, ctx.shape, ctx.dtype = tt, wt, reduction, x.shape, dt
        ctx.valid = valid
        ctx.denom = wt.sum()
        ctx.denom_arr = np.asarray(ctx.denom, dtype=dt)   # an array: a side output under tracing (see _nll_mask)
        ctx.save_for_backward()
        return _reduce_np(loss, reduction, ctx.denom, dt)

    @staticmethod
    def backward(ctx, g):
        ctx.saved_tensors  # raises if the graph was freed
        m = np.zeros(ctx.shape, ctx.dtype)
        red = ctx.reduction
        if red == "mean" and ctx.denom == 0:
            # no target counts (every one ignored, or all their weights 0): as PyTorch, -w[t_i] / 0
            # at each counted target (nan), 0 everywhere else -- not g / 0 spread over the whole input
            with np.errstate(divide="ignore", invalid="ignore"):
                vals = np.where(ctx.valid, -ctx.wt / ctx.dtype.type(0), ctx.dtype.type(0))
            np.put_along_axis(m, ctx.tt, np.expand_dims(vals, 1), axis=1)
            return g * _make(m), None, None, None, None
        m = _nll_mask(ctx)
        if red == "mean":
            g = g / _make(ctx.denom_arr)
        elif red == "none":
            g = g.unsqueeze(1)
        return g * m, None, None, None, None

    @staticmethod
    def jvp(ctx, tx, *_):
        # loss_i' = -w[t_i] tx[i, t_i], reduced as the loss
        out = (tx * _nll_mask(ctx)).sum(1)
        red = ctx.reduction
        return out.sum() / _make(ctx.denom_arr) if red == "mean" else (out.sum() if red == "sum" else out)


def _nll_mask(ctx):
    """-w[t_i] at [i, t_i], zero elsewhere. Under mg.graph.trace / mg.jit: a ScatterAdd op on the forward's
    arrays (ctx.tt, ctx.wt), which are side outputs of the forward there, so the compiled backward reads
    each call's targets instead of baking the traced call's into a constant."""
    from ..autograd import function as _function
    if _function._state.tracer is None:   # eager: the NumPy scatter (half the time of the op's copy + add.at)
        m = np.zeros(ctx.shape, ctx.dtype)
        np.put_along_axis(m, ctx.tt, -ctx.wt[:, None], axis=1)
        return _make(m)
    from .indexing import ScatterAdd
    zeros = _make(np.zeros(ctx.shape, ctx.dtype))
    return ScatterAdd.apply(zeros, 1, ctx.tt, (-_make(ctx.wt)).unsqueeze(1))


class MseLoss(Function):
    """loss = reduce((x - y)^2);  dx = 2 g (x - y) (/ n for 'mean'),  dy = -dx"""
    batching = "mse"
    onnx = _NO_ONNX

    op_name = "mse_loss"

    @staticmethod
    def forward(ctx, x, y, reduction):
        d = x - y
        loss = d * d
        ctx.reduction, ctx.n = reduction, loss.size
        ctx.save_for_backward(x, y)
        if reduction == "mean":
            if not loss.size:  # the mean of nothing: nan, as PyTorch, without NumPy's warning
                return np.asarray(np.nan, dtype=loss.dtype)
            return np.asarray(loss.mean())
        if reduction == "sum":
            return np.asarray(loss.sum())
        return loss

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        gd = g * (2.0 / max(ctx.n, 1)) if ctx.reduction == "mean" else g * 2.0  # (n = 0: an empty gradient)
        d = gd * (x - y)
        nx, ny = ctx.needs_input_grad[:2]
        return (d if nx else None), (-d if ny else None), None

    @staticmethod
    def jvp(ctx, tx, ty, _reduction):
        x, y = ctx.saved_tensors
        td = tx if ty is None else (-ty if tx is None else tx - ty)
        lt = (x - y) * td * 2.0
        return lt.mean() if ctx.reduction == "mean" else (lt.sum() if ctx.reduction == "sum" else lt)


class BinaryCrossEntropy(Function):
    """loss = -(y log x + (1-y) log(1-x)), logs clamped at -100;  dx = g (x-y) / max(x(1-x), 1e-12),
    dy = -g logit(x) = -g log(x / (1-x)), not clamped (PyTorch's: inf at x = 0, 115.1 at x = 1e-50)"""
    batching = "elementwise"
    fusion = NoRule("a loss: its reduction argument is static")
    onnx = _NO_ONNX

    op_name = "binary_cross_entropy"

    @staticmethod
    def forward(ctx, x, y):
        with np.errstate(divide="ignore"):
            lx = np.maximum(np.log(x), -100)
            l1x = np.maximum(np.log1p(-x), -100)
        ctx.save_for_backward(x, y)
        return (-(y * lx + (1 - y) * l1x)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        dx = dy = None
        if ctx.needs_input_grad[0]:
            dx = g * (x - y) / clamp(x * (1.0 - x), min=1e-12)
        if ctx.needs_input_grad[1]:
            dy = -g * log(x / (1.0 - x))
        return dx, dy

    @staticmethod
    def jvp(ctx, tx, ty):
        # elementwise: the backward's factors times the tangents
        x, y = ctx.saved_tensors
        a = tx * (x - y) / clamp(x * (1.0 - x), min=1e-12) if tx is not None else None
        b = -ty * log(x / (1.0 - x)) if ty is not None else None
        return b if a is None else (a if b is None else a + b)


class BinaryCrossEntropyWithLogits(Function):
    """loss = (1-y) x + L softplus(-x), L = 1 + (pw-1) y;  dx = g (L sigmoid(x) - L + 1 - y),
    dy = g ((pw-1) softplus(-x) - x), dpw = g y softplus(-x)"""
    _torch_edges = (0, 1)  # input, target: pos_weight is no edge in PyTorch
    batching = "elementwise"
    fusion = NoRule("a loss: its reduction argument is static")
    onnx = _NO_ONNX

    op_name = "binary_cross_entropy_with_logits"

    @staticmethod
    def forward(ctx, x, y, pw):
        sp = np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x)))  # softplus(-x) = -log(sigmoid(x)), stable
        if pw is None:
            loss = (1 - y) * x + sp
        else:
            loss = (1 - y) * x + (1 + (pw - 1) * y) * sp
        ctx.save_for_backward(x, y, pw)
        return loss.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, y, pw = ctx.saved_tensors
        need = ctx.needs_input_grad
        dx = dy = dpw = None
        sp = None
        if need[1] or (len(need) > 2 and need[2]):
            sp = -LogSigmoid.apply(x)  # softplus(-x)
        if pw is None:
            if need[0]:
                dx = g * (sigmoid(x) - y)
            if need[1]:
                dy = -g * x
        else:
            L = 1.0 + (pw - 1.0) * y
            if need[0]:
                dx = g * (L * sigmoid(x) - L + 1.0 - y)
            if need[1]:
                dy = g * ((pw - 1.0) * sp - x)
            if need[2]:
                dpw = g * y * sp
        return dx, dy, dpw

    @staticmethod
    def jvp(ctx, tx, ty, tpw):
        # elementwise: the backward's factors times the tangents
        x, y, pw = ctx.saved_tensors
        sp = -LogSigmoid.apply(x) if (ty is not None and pw is not None) or tpw is not None else None
        if pw is None:
            terms = [tx * (sigmoid(x) - y) if tx is not None else None, -ty * x if ty is not None else None]
        else:
            L = 1.0 + (pw - 1.0) * y
            terms = [tx * (L * sigmoid(x) - L + 1.0 - y) if tx is not None else None,
                     ty * ((pw - 1.0) * sp - x) if ty is not None else None,
                     tpw * y * sp if tpw is not None else None]
        out = None
        for t in terms:
            if t is not None:
                out = t if out is None else out + t
        return out


# -- CTC (connectionist temporal classification) -------------------------------------------------

def _ctc_check(lp, targets, il, tl):
    """The values PyTorch checks (lengths in range, targets long enough), and labels in [0, C)
    (PyTorch reads out of bounds there), each a RuntimeError naming ctc_loss."""
    op = "ctc_loss"
    T, N, C = lp.shape
    if N and int(il.max()) > T:
        raise RuntimeError(f"{op}: Expected input_lengths to have value at most {T}, but got value {int(il.max())}")
    for name, v in (("input_lengths", il), ("target_lengths", tl)):
        if N and int(v.min()) < 0:
            raise RuntimeError(f"{op}: Expected {name} to have value at least 0, but got value {int(v.min())}")
    if targets.ndim == 2:
        if N and targets.shape[1] < int(tl.max()):
            raise RuntimeError(f"{op}: Expected padded targets to have size at least {int(tl.max())} at "
                               f"dimension 1 (the longest target length), but got shape {targets.shape}")
        used = targets[np.arange(targets.shape[1])[None, :] < tl[:, None]]
    else:
        if targets.shape[0] != int(tl.sum()):
            raise RuntimeError(f"{op}: concatenated targets of shape {targets.shape} must hold "
                               f"sum(target_lengths) = {int(tl.sum())} labels")
        used = targets
    if used.size and (int(used.min()) < 0 or int(used.max()) >= C):
        raise RuntimeError(f"{op}: target labels must be in [0, {C}) (C = log_probs.shape[-1]), got values "
                           f"in [{int(used.min())}, {int(used.max())}]")


def _ctc_labels(targets, tl, blank):
    """The extended label sequences (N, 2 S + 1): blank, l_1, blank, l_2, ..., blank, with S the
    longest target; targets padded (N, S') or concatenated (sum(tl),) as PyTorch takes them."""
    N = tl.shape[0]
    S = int(tl.max()) if N else 0
    cols = np.arange(S)
    keep = cols[None, :] < tl[:, None]
    if targets.ndim == 1:  # concatenated: sample n's labels start after the earlier samples'
        start = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
        idx = np.clip(start[:, None] + cols[None, :], 0, max(targets.shape[0] - 1, 0))
        lab = targets[idx] if targets.shape[0] else np.zeros((N, S), np.int64)
    else:
        lab = targets[:, :S]
    ext = np.full((N, 2 * S + 1), blank, np.int64)
    ext[:, 1::2] = np.where(keep, lab, blank)
    return ext


def _ctc_alpha_beta(lp, ext, il, tl, blank, with_beta):
    """Log-space forward variables alpha (T, N, L) (and backward beta), vectorised over the batch
    and the extended labels: alpha[t, s] = lp[t, l'_s] + logsumexp(alpha[t-1, s], alpha[t-1, s-1],
    alpha[t-1, s-2] where s is a label position whose label differs from l'_{s-2}, as PyTorch's test,
    which a target equal to the blank passes too); beta the same from the end
    (both include lp[t, l'_s], as PyTorch's). Returns (nll (N,), alpha, beta, lp gathered)."""
    T, N, _ = lp.shape
    L = ext.shape[1]
    ar = np.arange(N)
    lpe = lp[:, ar[:, None], ext]                       # (T, N, L): lp[t, n, l'_s]
    skip = np.zeros((N, L), bool)
    skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]  # a label (odd s, even one equal to the blank) after a different one
    valid = np.arange(L)[None, :] < (2 * tl + 1)[:, None]
    neg = -np.inf
    alpha = np.full((T, N, L), neg)
    if T:
        a = np.full((N, L), neg)
        a[:, 0] = lpe[0, :, 0]
        if L > 1:
            a[:, 1] = np.where(tl > 0, lpe[0, :, 1], neg)
        alpha[0] = a
        for t in range(1, T):
            p = alpha[t - 1]
            acc = p.copy()
            acc[:, 1:] = np.logaddexp(acc[:, 1:], p[:, :-1])
            acc[:, 2:] = np.logaddexp(acc[:, 2:], np.where(skip[:, 2:], p[:, :-2], neg))
            alpha[t] = np.where(valid, acc + lpe[t], neg)
    last = alpha[np.maximum(il - 1, 0), ar] if T else np.full((N, L), neg)
    end = np.logaddexp(last[ar, 2 * tl], np.where(tl > 0, last[ar, np.maximum(2 * tl - 1, 0)], neg))
    ll = np.where(il > 0, end, np.where(tl == 0, 0.0, neg))  # no frames: only the empty target, as PyTorch
    if not with_beta:
        return -ll, alpha, None, lpe
    beta = np.full((T, N, L), neg)
    first = np.full((N, L), neg)
    for t in range(T - 1, -1, -1):
        if t + 1 < T:
            q = beta[t + 1]
            acc = q.copy()
            acc[:, :-1] = np.logaddexp(acc[:, :-1], q[:, 1:])
            acc[:, :-2] = np.logaddexp(acc[:, :-2], np.where(skip[:, 2:], q[:, 2:], neg))
            b = acc + lpe[t]
        else:
            b = np.full((N, L), neg)
        start = il - 1 == t
        if start.any():  # the last frame of sample n: the path ends in the last label or the blank after it
            first.fill(neg)
            first[ar, 2 * tl] = lpe[t, ar, 2 * tl]
            has = ar[tl > 0]
            first[has, 2 * tl[has] - 1] = lpe[t, has, 2 * tl[has] - 1]
            b = np.where(start[:, None], first, b)
        beta[t] = np.where((t < il)[:, None] & valid, b, neg)
    return -ll, alpha, beta, lpe


def _ctc_grad_terms(lp, targets, il, tl, blank, as_torch=False):
    """(nll, log of sum over s with l'_s = c of alpha * beta, as (T, N, C)): what both derivatives read.
    as_torch: PyTorch's backward sets (rather than adds) the last frame's entry of the last label, so
    where that label is the blank itself the trailing blank's term is dropped there; the same here."""
    lp64 = lp.astype(np.float64, copy=False)
    ext = _ctc_labels(targets, tl, blank)
    nll, alpha, beta, _ = _ctc_alpha_beta(lp64, ext, il, tl, blank, True)
    ab = alpha + beta
    if as_torch:
        n = np.nonzero((tl > 0) & (il > 0))[0]
        n = n[ext[n, 2 * tl[n] - 1] == blank]
        ab[il[n] - 1, n, 2 * tl[n]] = -np.inf
    m = ab.max(axis=2, keepdims=True) if ab.shape[2] else np.zeros(ab.shape[:2] + (1,))
    m = np.where(np.isfinite(m), m, 0.0)
    onehot = np.zeros(ext.shape + (lp.shape[2],))
    np.put_along_axis(onehot, ext[..., None], 1.0, axis=2)
    with np.errstate(divide="ignore"):
        lcab = np.log(np.einsum("tnl,nlc->tnc", np.exp(ab - m), onehot)) + m
    return lp64, nll, lcab


def _ctc_mask(lp, il, nll, zero_infinity):
    """Where a gradient is not zero: frames t < input_length (and not an infinite loss with zero_infinity)."""
    keep = np.arange(lp.shape[0])[:, None] < il[None, :]
    if zero_infinity:
        keep = keep & ~np.isinf(nll)[None, :]
    return keep[..., None]


class CtcLoss(Function):
    """loss_n = -log sum over the alignments of targets_n to the first input_lengths_n frames of
    prod_t exp(log_probs[t, n, a_t]) (the CTC alignment sum, by the alpha recursion);
    d log_probs = CtcLossBackward(g, ...) (PyTorch's gradient: see there)"""
    batching = NoRule("ctc_loss: the alignment recursion runs over the whole batch already")
    onnx = _NO_ONNX

    op_name = "ctc_loss"

    @staticmethod
    def forward(ctx, lp, targets, il, tl, blank, zero_infinity):
        _ctc_check(lp, targets, il, tl)
        ctx.blank, ctx.zero_infinity = blank, zero_infinity
        ctx.save_for_backward(lp, targets, il, tl)
        ext = _ctc_labels(targets, tl, blank)
        nll, _, _, _ = _ctc_alpha_beta(lp.astype(np.float64, copy=False), ext, il, tl, blank, False)
        if zero_infinity:
            nll = np.where(np.isinf(nll), 0.0, nll)
        return nll.astype(lp.dtype)

    @staticmethod
    def backward(ctx, g):
        lp, targets, il, tl = ctx.saved_tensors
        return CtcLossBackward.apply(g, lp, targets, il, tl, ctx.blank, ctx.zero_infinity), None, None, None, None, None

    @staticmethod
    def jvp(ctx, tlp, *_):
        # the true derivative: d loss_n = -sum over t < T_n and c of exp(lcab + nll - lp) tlp[t, n, c]
        lp, targets, il, tl = (t._data for t in ctx.saved_tensors)
        lp64, nll, lcab = _ctc_grad_terms(lp, targets, il, tl, ctx.blank)
        with np.errstate(invalid="ignore", over="ignore"):
            d = -np.exp(lcab + nll[None, :, None] - lp64)
        d = np.where(_ctc_mask(lp, il, nll, ctx.zero_infinity), d, 0.0).astype(lp.dtype)
        return (tlp * _make(d)).sum((0, 2))


class CtcLossBackward(Function):
    """PyTorch's ctc_loss gradient (aten/src/ATen/native/LossCTC.cpp): d log_probs[t, n, c] =
    g_n (exp(lp[t, n, c]) - exp(lcab[t, n, c] + nll_n - lp[t, n, c])) for t < input_lengths_n, 0 after
    (and 0 for an infinite loss with zero_infinity), lcab = log sum over s with l'_s = c of
    alpha[t, s] beta[t, s]. The exp(lp) term is the gradient through a log_softmax in front (it sums
    to zero there), as PyTorch's; linear in g, and not differentiable in log_probs (nor is PyTorch's)"""
    batching = NoRule("a backward op: vmap(grad(f)) runs it once per sample")
    onnx = NoRule("a backward op: export an inference graph (model.eval(), no backward)")
    jvp = NoRule("linear in g (the double-VJP identity); the derivative in log_probs is refused, as PyTorch")

    op_name = "ctc_loss_backward"

    @staticmethod
    def forward(ctx, g, lp, targets, il, tl, blank, zero_infinity):
        lp64, nll, lcab = _ctc_grad_terms(lp, targets, il, tl, blank, as_torch=True)
        with np.errstate(invalid="ignore", over="ignore"):
            unit = np.exp(lp64) - np.exp(lcab + nll[None, :, None] - lp64)
        unit = np.where(_ctc_mask(lp, il, nll, zero_infinity), unit, 0.0)
        ctx.unit = unit.astype(lp.dtype)
        ctx.save_for_backward()
        return (unit * g.astype(np.float64)[None, :, None]).astype(lp.dtype)

    @staticmethod
    def backward(ctx, gg):
        ctx.saved_tensors  # raises if the graph was freed
        if ctx.needs_input_grad[1]:
            raise RuntimeError("ctc_loss: the gradient of ctc_loss is not differentiable with respect to "
                               "log_probs (double backward), as in PyTorch (derivative for _ctc_loss_backward "
                               "is not implemented)")
        return (gg * _make(ctx.unit)).sum((0, 2)), None, None, None, None, None, None
