"""Fused losses: cross_entropy (CrossEntropyLoss), nll_loss (NllLoss), mse_loss (MseLoss) and the
binary cross entropies. Argument checking lives in nn.functional; these take checked arrays.

cross_entropy's backward is itself an op (CrossEntropyLossBackward): its forward is the NumPy
gradient, its backward the second derivative (through softmax), so one definition serves both.
"""
import numpy as np

from .. import kernels
from ..autograd.function import Function, NoRule, _spread, _unrecorded
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
        if _unrecorded():  # no graph of this backward is wanted: its forward, straight from the arrays
            grads = CrossEntropyLossBackward._apply_plain(None, (g._data, z._data, target._data, ctx.st, need))
        else:
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
