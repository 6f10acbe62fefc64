"""Fusion with reductions: an elementwise neighbour folded into the row kernel of the reduction op
next to it (what the training graphs of Transformers are made of; the elementwise pass finds
nothing there, since layer_norm, softmax, GELU and cross_entropy are single ops already).

Kinds (each a pattern of the graph, each one numba kernel in minigrad/kernels/norm.py that the
eager op shares its row code with, each with the unfused ops' NumPy code as its fallback):

  add_layer_norm           s = a + r; y = layer_norm(s)   (the residual stream into a pre-norm)
                           -> s, y from one pass: the row of s is normalised while in cache.
  layer_norm_backward_add  dx, dw, db = layer_norm_backward(...); t = res + dx   (the residual
                           gradient accumulating a normalisation's gradient; dx read by the add
                           only) -> t, dw, db, never writing dx.
  rms_norm                 the composite F.rms_norm traces to: b = x * x; c = mean(b, trailing
                           axes, keepdim); e = c + eps; f = rsqrt(e); g = x * f [; h = g * w]
                           -> the results read outside (f, g, h for a backward) from one row kernel;
                           b (read only by the mean) never reaches memory. Forward only: the
                           backward is a longer composite, left to the elementwise pass.

Tolerance: the layer_norm kinds are bitwise. The fused kernels inline the same row routines (`_ln_row`,
`_ln_row_backward`) as eager's layer_norm kernels and add with a correctly rounded add compiled
without fast-math flags (never contracted into a multiply-add), so they give the unfused bits;
without numba (or on inputs the kernels do not take: non-contiguous, mixed dtypes, other axes)
the fused op runs the unfused ops' code in order, the same bits trivially. rms_norm is within
RMS_NORM_ULPS (8) eps relative (its mean of squares is summed in float64 where NumPy sums pairwise
in the dtype); without numba it is bitwise. Being not bitwise, it is opt-in (reassociate=True).

Not fused, and why: softmax, log_softmax, layer_norm, GELU and cross_entropy (log_softmax + NLL)
are each one op in eager already (cross_entropy, layer_norm and GELU with numba kernels), so
re-fusing their insides gains nothing; GELU's bias add is inside `linear` (the GEMM adds it), so
there is no separate bias add next to the GELU to fold in; rms_norm's backward and the softmax
backward that attention's backward writes out (out * (g - sum(g * out))) need a generated row
kernel (a reduction inside an elementwise group) rather than a pattern (see docs/compiler.md).
"""
import math

import numpy as np

from ... import kernels
from ...graph.interpret import eval_eqn
from ...graph.ir import Eqn, Var
from ...ops import normalization as _norm
from ._util import copy_graph


# rtol of a fused rms_norm's results against the unfused ops', in units of the dtype's eps: only the
# mean of the squares differs (a float64 sum in the kernel, NumPy's pairwise sum in the dtype: a few
# eps apart, worst case about (16 + log2(D / 128)) eps for float32 at D <= 2^16), and rsqrt halves it;
# measured at most 2 (tests/compiler/test_fusion_kinds.py checks the bound)
RMS_NORM_ULPS = 8


class _RowFused:
    """Base of the fused row ops (a fused equation's fn; they run through forward(ctx, ...))."""
    _fast = None
    _writes_out = False
    fusion = None   # not an elementwise kernel for fuse.py's groups


def _is_add(e):
    return (e.fn is not None and e.fn.__name__ == "Add" and e.prim == "add" and len(e.args) == 2
            and not e.side and not e.effect and all(isinstance(a, Var) for a in e.args)
            and e.args[0].shape == e.args[1].shape == e.outvars[0].shape
            and np.dtype(e.args[0].dtype) == np.dtype(e.args[1].dtype) == np.dtype(e.outvars[0].dtype)
            and np.dtype(e.outvars[0].dtype).kind == "f")


def _kernel_ok(x, axes, *others):
    """Whether the row kernels take x (normalised over axes) with same-shape, same-dtype others."""
    return kernels.available() and all(
        o.shape == x.shape and o.dtype == x.dtype and o.flags.c_contiguous for o in others)


class AddLayerNorm(_RowFused):
    """fused add + layer_norm: (s, y) = (a + r, layer_norm(a + r, w, b)); mean and rstd on ctx, as
    layer_norm's (see minigrad/compiler/passes/fuse_rows.py)."""
    op_name = "fused_add_layer_norm"
    add_eqn = None

    @classmethod
    def forward(cls, ctx, a, r, w, b, axes, eps, stats=None):
        if stats is None and _kernel_ok(a, axes, r) and _norm._rows_ok(a, axes, w, b):
            k = len(axes)
            A = _norm._rows(a, k)
            N, D = A.shape
            dt = a.dtype
            s, out = np.empty(a.shape, dt), np.empty(a.shape, dt)
            mean, rstd = np.empty(N, dt), np.empty(N, dt)
            kernels.load("norm").rows_add_forward(
                A, _norm._rows(r, k), np.ones(D, dt) if w is None else w.reshape(D),
                np.zeros(D, dt) if b is None else b.reshape(D), eps, _norm._rows(s, k), _norm._rows(out, k),
                mean, rstd)
            kshape = a.shape[:a.ndim - k] + (1,) * k
            ctx.xhat, ctx.mean, ctx.rstd = None, mean.reshape(kshape), rstd.reshape(kshape)
            ctx.axes, ctx.eps = axes, eps
            ctx.save_for_backward(s, w)
            return s, out
        s = eval_eqn(cls.add_eqn, [a, r])[0][0]   # the unfused ops, in order
        return s, _norm.NativeLayerNorm.forward(ctx, s, w, b, axes, eps, stats)


class LayerNormBackwardAdd(_RowFused):
    """fused layer_norm_backward + add: (res + dx, dw, db), those of dw, db in need (see
    minigrad/compiler/passes/fuse_rows.py)."""
    op_name = "fused_layer_norm_backward_add"
    add_eqn = None
    dx_first = False  # whether the add reads dx as its first operand

    @classmethod
    def forward(cls, ctx, g, x, w, mean, rstd, axes, eps, need, xhat, res):
        k = len(axes)
        if (need[0] and xhat is None and g.shape == x.shape and g.dtype == x.dtype and _kernel_ok(x, axes, res)
                and _norm._rows_ok(x, axes, w) and mean.size * math.prod(x.shape[x.ndim - k:]) == x.size):
            X = _norm._rows(x, k)
            D = X.shape[1]
            dt = x.dtype
            t = np.empty(x.shape, dt)
            dw, db = np.zeros(D), np.zeros(D)
            kernels.load("norm").rows_backward_add(
                _norm._rows(np.ascontiguousarray(g, dtype=dt), k), X, np.ones(D, dt) if w is None else w.reshape(D),
                mean.reshape(-1), rstd.reshape(-1), _norm._rows(res, k), _norm._rows(t, k), dw, db, np.empty(D, dt))
            pshape = x.shape[x.ndim - k:]
            out = [t]
            if need[1]:
                out.append(dw.astype(np.result_type(g, x)).reshape(pshape))
            if need[2]:
                out.append(db.astype(g.dtype).reshape(pshape))
            return tuple(out)
        outs = _norm.NativeLayerNormBackward.forward(ctx, g, x, w, mean, rstd, axes, eps, need, xhat)
        dx = outs[0]
        t = eval_eqn(cls.add_eqn, [dx, res] if cls.dx_first else [res, dx])[0][0]
        return (t,) + tuple(outs[1:])


class RmsNorm(_RowFused):
    """fused rms_norm forward: the composite x * rsqrt(mean(x * x) + eps) [* w] in one row kernel;
    returns the members' results that are read outside (`keep`, in member order; see
    minigrad/compiler/passes/fuse_rows.py)."""
    op_name = "fused_rms_norm"
    members = ()   # the unfused equations (mul, mean, add, rsqrt, mul[, mul])
    keep = ()      # indices of members whose results are outputs

    @classmethod
    def forward(cls, ctx, x, eps, w, k):
        ms = cls.members
        dt = x.dtype
        eps_a = np.asarray(eps)
        if (kernels.available() and x.ndim >= k and x.size and x.flags.c_contiguous and dt.kind == "f"
                and eps_a.size == 1 and eps_a.dtype == dt and 0 not in cls.keep
                and (w is None or (w.dtype == dt and w.flags.c_contiguous and w.shape == x.shape[x.ndim - k:]))):
            X = _norm._rows(x, k)
            N, D = X.shape
            kshape = x.shape[:x.ndim - k] + (1,) * k
            m, e, r = np.empty(N, dt), np.empty(N, dt), np.empty(N, dt)
            need_y, need_out = 4 in cls.keep, 5 in cls.keep
            y = np.empty(x.shape, dt) if need_y else np.empty((1, 1), dt)
            out = np.empty(x.shape, dt) if need_out else np.empty((1, 1), dt)
            kernels.load("norm").rms_rows_forward(
                X, np.ones(D, dt) if w is None else w.reshape(D), dt.type(eps_a.reshape(())), m, e, r,
                _norm._rows(y, k) if need_y else y, _norm._rows(out, k) if need_out else out, need_y, need_out)
            vals = {1: m.reshape(kshape), 2: e.reshape(kshape), 3: r.reshape(kshape), 4: y, 5: out}
            res = tuple(vals[j] for j in cls.keep)
            return res[0] if len(res) == 1 else res
        env = {}   # the unfused ops, in order
        x_name = ms[0].args[0].name
        for e in ms:
            vals = []
            for a in e.args:
                if isinstance(a, Var):
                    vals.append(env[a.name] if a.name in env else x if a.name == x_name else
                                eps if a is ms[2].args[1] else w)
                else:
                    vals.append(a)
            env[e.outvars[0].name] = eval_eqn(e, vals)[0][0]
        res = tuple(env[ms[j].outvars[0].name] for j in cls.keep)
        return res[0] if len(res) == 1 else res


def _is(e, name, nargs):
    return (e.fn is not None and e.fn.__name__ == name and not e.side and not e.effect and len(e.args) == nargs
            and len(e.outvars) == 1)


def _match_rms(eqns, i, readers):
    """The members (indices) of an rms_norm composite starting at eqns[i] (b = x * x), or None:
    b = x * x; c = mean(b, trailing axes, keepdim); e = c + eps; f = rsqrt(e); g = x * f [; h = g * w]."""
    e0 = eqns[i]
    if not (_is(e0, "Mul", 2) and isinstance(e0.args[0], Var) and isinstance(e0.args[1], Var)
            and e0.args[0].name == e0.args[1].name):
        return None
    x = e0.args[0]
    if x.shape is None or np.dtype(x.dtype).kind != "f" or not x.shape:
        return None
    dt = np.dtype(x.dtype)

    def only_reader(v, pred):
        rs = readers.get(v.name, [])
        cands = [j for j in rs if j >= 0 and pred(eqns[j])]
        return cands[0] if len(cands) == 1 else None
    b = e0.outvars[0]
    if len(readers.get(b.name, [])) != 1 or readers[b.name][0] < 0:   # x * x read by the mean only
        return None
    j1 = readers[b.name][0]
    m = eqns[j1]
    nd = len(x.shape)
    if not (_is(m, "Mean", 3) and m.args[2] is True and m.args[1]):
        return None
    axes = tuple(sorted(int(a) % nd for a in m.args[1]))
    k = len(axes)
    if axes != tuple(range(nd - k, nd)):
        return None
    c = m.outvars[0]
    j2 = only_reader(c, lambda e: _is(e, "Add", 2) and isinstance(e.args[0], Var)
                     and e.args[0].name == c.name and isinstance(e.args[1], Var) and e.args[1].shape == ())
    if j2 is None:
        return None
    ev = eqns[j2].outvars[0]
    j3 = only_reader(ev, lambda e: _is(e, "Rsqrt", 1) and e.args[0].name == ev.name)
    if j3 is None:
        return None
    f = eqns[j3].outvars[0]
    j4 = only_reader(f, lambda e: _is(e, "Mul", 2) and all(isinstance(a, Var) for a in e.args)
                     and e.args[0].name == x.name and e.args[1].name == f.name)
    if j4 is None:
        return None
    g = eqns[j4].outvars[0]
    idx = [i, j1, j2, j3, j4]
    j5 = only_reader(g, lambda e: _is(e, "Mul", 2) and all(isinstance(a, Var) for a in e.args)
                     and e.args[0].name == g.name and e.args[1].shape == x.shape[nd - k:])
    if j5 is not None:
        idx.append(j5)
    if any(np.dtype(eqns[j].outvars[0].dtype) != dt for j in idx) or np.dtype(eqns[j2].args[1].dtype) != dt \
            or (j5 is not None and np.dtype(eqns[j5].args[1].dtype) != dt) or idx != sorted(idx):
        return None
    return idx, k


def _readers(eqns, outvars):
    """var name -> indices of the equations reading it (graph outputs: -1)."""
    r = {}
    for i, e in enumerate(eqns):
        for v in e.invars:
            r.setdefault(v.name, []).append(i)
    for v in outvars:
        if isinstance(v, Var):
            r.setdefault(v.name, []).append(-1)
    return r


def _defined_before(graph, eqns, i):
    names = {v.name for v in graph.invars} | {v.name for v, _ in graph.state} | {v.name for v, _ in graph.consts}
    for e in eqns[:i]:
        names.update(v.name for v in e.outvars)
        names.update(s[1].name for s in e.side)
    return names


def fuse_rows(graph, reassociate=False):
    """Fold residual adds into layer_norm's forward and backward kernels (the kinds above); with
    reassociate=True also the rms_norm composite (within RMS_NORM_ULPS, not bitwise: off by default,
    so the default pipeline keeps eager's bits, as elementwise fusion's transcendentals).

    Returns a new graph with `pass_details` naming how many of each kind were fused."""
    eqns = list(graph.eqns)
    counts = {"add_layer_norm": 0, "layer_norm_backward_add": 0, "rms_norm": 0}
    n = 0
    i = 0
    if reassociate:
        eqns, n = _fuse_rms(graph, eqns, counts, n)
    while i < len(eqns):
        e = eqns[i]
        if e.prim == "layer_norm" and e.fn is _norm.NativeLayerNorm and isinstance(e.args[0], Var) \
                and len(e.outvars) == 1 and e.args[5] is None:
            j = _producer(eqns, e.args[0].name, i)
            if j is not None and _is_add(eqns[j]) and _quiet(eqns, j, i) and \
                    {v.name for v in e.invars[1:]} <= _defined_before(graph, eqns, j):
                add = eqns[j]
                cls = type(f"AddLayerNorm{n}", (AddLayerNorm,), {"add_eqn": add, "__module__": __name__})
                f = Eqn("fused_add_layer_norm", cls, list(add.args) + list(e.args[1:]),
                        [add.outvars[0]] + list(e.outvars), e.side, source=e.source)
                f.need = e.need
                eqns = eqns[:j] + [f] + eqns[j + 1:i] + eqns[i + 1:]
                counts["add_layer_norm"] += 1
                n += 1
                continue   # eqns[i] is now the equation after the layer_norm's old place
        if e.prim == "layer_norm_backward" and e.fn is _norm.NativeLayerNormBackward and not e.side \
                and e.args[7][0]:
            dx = e.outvars[0]
            readers = _readers(eqns, graph.outvars).get(dx.name, [])
            if len(readers) == 1 and readers[0] > i and _is_add(eqns[readers[0]]) and \
                    sum(a is dx or (isinstance(a, Var) and a.name == dx.name) for a in eqns[readers[0]].args) == 1:
                j = readers[0]
                add = eqns[j]
                others = {v.name for v in e.outvars[1:]}
                between = eqns[i + 1:j]
                if _quiet(eqns, i, j) and not any(v.name in others for b in between for v in b.invars):
                    first = add.args[0].name == dx.name
                    res = add.args[1] if first else add.args[0]
                    cls = type(f"LayerNormBackwardAdd{n}", (LayerNormBackwardAdd,),
                               {"add_eqn": add, "dx_first": first, "__module__": __name__})
                    f = Eqn("fused_layer_norm_backward_add", cls, list(e.args) + [res],
                            [add.outvars[0]] + list(e.outvars[1:]), source=add.source)
                    f.need = None
                    eqns = eqns[:i] + between + [f] + eqns[j + 1:]
                    counts["layer_norm_backward_add"] += 1
                    n += 1
                    continue
        i += 1
    g = copy_graph(graph, eqns=eqns)
    g.pass_details = ", ".join(f"{c} {k}" for k, c in counts.items() if c)
    return g


def _fuse_rms(graph, eqns, counts, n):
    i = 0
    while i < len(eqns):
        got = _match_rms(eqns, i, _readers(eqns, graph.outvars)) if eqns[i].prim == "mul" else None
        if got is None:
            i += 1
            continue
        idx, k = got
        last = idx[-1]
        ms = [eqns[j] for j in idx]
        w = ms[5].args[1] if len(ms) == 6 else None
        defined = _defined_before(graph, eqns, idx[0] + 1)
        if not _quiet(eqns, idx[0], last) or (w is not None and w.name not in defined) \
                or ms[2].args[1].name not in defined:
            i += 1
            continue
        readers = _readers(eqns, graph.outvars)
        keep = [p for p, e in enumerate(ms) if any(
            r < 0 or r not in idx for r in readers.get(e.outvars[0].name, []))]
        if 0 in keep or not keep:
            i += 1
            continue
        outs = [ms[p].outvars[0] for p in keep]
        cls = type(f"RmsNorm{n}", (RmsNorm,), {"members": tuple(ms), "keep": tuple(keep), "__module__": __name__})
        f = Eqn("fused_rms_norm", cls, [ms[0].args[0], ms[2].args[1], w, k], outs, source=ms[-1].source)
        f.need = None
        # at the first member's place: its inputs (x, eps, w) are there, and every outside reader of a
        # member comes after that member
        # the equations between the members run after the fused one (any of them reading a member
        # then finds it computed)
        between = [e for j, e in enumerate(eqns[idx[0]:last + 1], idx[0]) if j not in idx]
        eqns = eqns[:idx[0]] + [f] + between + eqns[last + 1:]
        counts["rms_norm"] += 1
        n += 1
        i = idx[0] + 1
    return eqns, n


def _producer(eqns, name, before):
    for j in range(before - 1, -1, -1):
        if any(v.name == name for v in eqns[j].outvars):
            return j
    return None


def _quiet(eqns, lo, hi):
    """No effect (assign, set_grad) or dict sink strictly between eqns lo and hi: moving a read of
    values across them cannot see another write."""
    return not any(e.effect or e.fn is None or any(type(a) is dict for a in e.args) for e in eqns[lo + 1:hi])
