"""Function: an op's forward (NumPy) and backward (Tensor ops), and the graph node it leaves behind.

The instance made for each call is both the op's `ctx` and its node in the backward graph (as in
PyTorch, where `y.grad_fn` is the ctx of the op that made y). Forward receives NumPy arrays: it is
never differentiated. Backward receives and returns Tensors: with create_graph=True it is recorded,
so it can be differentiated again.
"""
import weakref

import numpy as np

from .grad_mode import _state

_FREED = object()
_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


class Node:
    """A node of the backward graph. `next_functions` are the edges to the nodes of its inputs."""

    _edges = ()
    _pre_hooks = None

    def name(self):
        return type(self).__name__ + "Backward0"

    @property
    def next_functions(self):
        return tuple((n, nr) for n, nr in self._edges)

    def register_prehook(self, output_nr, fn):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return _RemovableHandle(hooks, fn)

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The node at a leaf that requires grad: adds the arriving gradient into `variable.grad`."""

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "AccumulateGrad"


class _RemovableHandle:
    def __init__(self, hooks, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self):
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


class _NoGradCtx:
    """The ctx given to forward when no graph is recorded: saving is a no-op."""

    needs_input_grad = ()

    def save_for_backward(self, *xs):
        pass

    def mark_non_differentiable(self, *xs):
        pass


class Function(Node):
    """Base class of every differentiable op, built-in or user-defined.

    Subclasses define two static methods:
      forward(ctx, *args) -> ndarray or tuple of ndarrays   (Tensor args arrive as ndarrays)
      backward(ctx, *grads) -> one Tensor (or None) per forward argument
    and are called with `MyOp.apply(*args)`.

    Example:
        >>> class Cube(mg.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         x, = ctx.saved_tensors
        ...         return g * 3 * x ** 2
    """

    # set on view ops (reshape, transpose, basic indexing, ...): the output shares the input's memory
    _is_view = False

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    # -- ctx API -------------------------------------------------------------------------------
    def save_for_backward(self, *xs):
        self._to_save = xs

    def mark_non_differentiable(self, *xs):
        self._non_diff = xs

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(f"{self.name()}: " + _FREED_MSG)
        out = []
        for kind, value, vc, version in saved:
            if kind == 0:  # a Tensor (an input, or one the user passed): check it was not modified
                if (vc[0] if vc else 0) != version:
                    raise RuntimeError(_modified_msg(self, value, (value._vc or [0])[0], version))
                out.append(value)
            elif kind == 1:  # the op's own output: rebuilt on demand so no cycle keeps the graph alive
                arr, nr = value
                if vc[0] != version:
                    raise RuntimeError(_modified_msg(self, arr, vc[0], version))
                t = Tensor._make(arr, True, self, nr)
                t._vc = vc
                out.append(t)
            else:  # anything else (a constant array or a Python value)
                out.append(value)
        return tuple(out)

    def _release(self):
        self._saved = _FREED

    # -- apply ----------------------------------------------------------------------------------
    @classmethod
    def apply(cls, *args):
        arrays = [a.data if isinstance(a, Tensor) else a for a in args]
        if _state.enabled:
            needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
            if True in needs:
                return cls._apply_recorded(args, arrays, needs)
        try:
            out = cls.forward(_NoGradCtx(), *arrays)
        except (ValueError, IndexError, TypeError) as e:
            raise _op_error(cls, arrays, e) from None
        if type(out) is tuple:
            outs = tuple(Tensor._make(o if type(o) is np.ndarray else np.asarray(o)) for o in out)
            if cls._is_view:
                for o in outs:
                    _share_view(o, args[0])
            return outs
        t = Tensor._make(out if type(out) is np.ndarray else np.asarray(out))
        if cls._is_view:
            _share_view(t, args[0])
        return t

    @classmethod
    def _apply_recorded(cls, args, arrays, needs):
        ctx = cls.__new__(cls)
        ctx.needs_input_grad = needs
        ctx._to_save = None
        ctx._non_diff = None
        try:
            out = cls.forward(ctx, *arrays)
        except (ValueError, IndexError, TypeError) as e:
            raise _op_error(cls, arrays, e) from None
        edges = []
        meta = []
        for a, need in zip(args, needs):
            if need:
                fn = a.grad_fn
                edges.append((fn, a._output_nr) if fn is not None else (_accumulator(a), 0))
                meta.append((a.data.shape, a.data.dtype))
            else:
                edges.append((None, 0))
                meta.append(None)
        ctx._edges = edges
        ctx._in_meta = meta
        multi = type(out) is tuple
        outs = out if multi else (out,)
        outs = tuple(o if type(o) is np.ndarray else np.asarray(o) for o in outs)
        ctx._out_meta = [(o.shape, o.dtype) for o in outs]
        non_diff = ctx._non_diff
        results = []
        for i, o in enumerate(outs):
            diff = o.dtype.kind == "f" and not (non_diff and any(o is n for n in non_diff))
            t = Tensor._make(o, True, ctx, i) if diff else Tensor._make(o)
            if cls._is_view:
                _share_view(t, args[0])
            results.append(t)
        to_save = ctx._to_save
        if to_save:
            ctx._saved = tuple(_pack(x, args, arrays, outs, results) for x in to_save)
        else:
            ctx._saved = ()
        del ctx._to_save
        return tuple(results) if multi else results[0]


def _pack(x, args, arrays, outs, results):
    """Turn what forward passed to save_for_backward into (kind, value, version counter, version)."""
    if isinstance(x, Tensor):
        return (0, x, x._vc, (x._vc or [0])[0])
    if isinstance(x, np.ndarray):
        for a, arr in zip(args, arrays):
            if arr is x and isinstance(a, Tensor):
                if a._vc is None:
                    a._vc = [0]
                return (0, a, a._vc, a._vc[0])
        for i, o in enumerate(outs):
            if o is x:
                t = results[i]
                if t._vc is None:
                    t._vc = [0]
                if t.grad_fn is None:  # a non-differentiable output: save it as a constant
                    return (0, t, t._vc, t._vc[0])
                return (1, (x, i), t._vc, t._vc[0])
        return (2, Tensor._make(x), None, 0)
    return (2, x, None, 0)


def _accumulator(t):
    """The AccumulateGrad node of leaf t (one per leaf while a graph uses it; held weakly by t)."""
    ref = t._acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._acc = weakref.ref(acc)
    return acc


def _share_view(out, src):
    """A view shares its base's version counter, so in-place writes through either are seen."""
    if isinstance(src, Tensor):
        if src._vc is None:
            src._vc = [0]
        out._vc = src._vc
        out._base = src if src._base is None else src._base


def _modified_msg(node, x, now, then):
    shape = tuple(x.shape)
    return (f"{node.name()}: one of the variables needed for gradient computation has been modified "
            f"by an inplace operation: a tensor of shape {shape} saved by {node.name()} is at version "
            f"{now}; expected version {then} instead. Hint: avoid the in-place op, or clone() the "
            f"tensor before modifying it.")


def _op_name(cls):
    return getattr(cls, "op_name", None) or cls.__name__.lower()


def _op_error(cls, arrays, e):
    shapes = [tuple(a.shape) for a in arrays if isinstance(a, np.ndarray)]
    name = _op_name(cls)
    msg = str(e)
    if "broadcast" in msg and len(shapes) >= 2:
        return ValueError(f"{name}: shapes {' and '.join(map(str, shapes))} cannot be broadcast")
    detail = ", ".join(str(s) for s in shapes)
    return type(e)(f"{name}: {msg} (input shapes {detail})")


from ..tensor import Tensor  # noqa: E402  (Tensor imports this module's names lazily)
