"""The generic parts of the op registry: the entry (`OpInfo`), its sample inputs (`SampleInput`,
`Const`), the samplers and sample generators, how a sample becomes arguments for minigrad, NumPy and
PyTorch (make_args, ref_args, rebuild, tensor_function), the table-style entry builder `case`, and
the NumPy references NumPy lacks. The entries themselves live in one module per op family beside
this one; minigrad/testing/opinfo/__init__.py assembles them into `op_db`.
"""
import math
import re
from functools import partial

import numpy as np

import minigrad as mg

FLOATS = ("float32", "float64")
ALL_NUMERIC = ("float32", "float64", "int64")


# -- sample inputs ---------------------------------------------------------------------------------
class Const:
    """A sample argument that becomes a tensor which never requires grad (a mask, a fixed weight)."""

    def __init__(self, value):
        self.value = np.asarray(value)

    def __repr__(self):
        return f"Const(shape={self.value.shape})"


class SampleInput:
    """One call of an op: op(*args, **kwargs).

    kink=True marks a point where finite differences do not apply (a tie, a kink, a step): it is
    skipped by gradcheck/gradgradcheck and its gradient is compared with PyTorch's instead.
    """

    def __init__(self, args, kwargs=None, *, name=None, kink=False):
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.kink = kink
        self.name = name or "x".join(_shape_str(a) for a in self.args if _is_array(a)) or "noargs"

    def __repr__(self):
        return f"SampleInput({self.name})"


def _is_array(a):
    return isinstance(a, (np.ndarray, Const)) or (isinstance(a, list) and a and _is_array(a[0]))


def _shape_str(a):
    if isinstance(a, Const):
        a = a.value
    if isinstance(a, list):
        return "[" + ",".join(_shape_str(x) for x in a) + "]"
    return str(tuple(a.shape)).replace(" ", "")


def tensor_function(info, args, kwargs):
    """(fn, tensors): the op as a function of its tensor arguments (also those inside a list, as
    cat's), every other argument fixed; tracing, compiling and exporting tests call it."""
    tens, spec = [], []
    for a in args:
        if isinstance(a, mg.Tensor):
            spec.append(("t", len(tens)))
            tens.append(a)
        elif isinstance(a, list) and a and isinstance(a[0], mg.Tensor):
            spec.append(("l", list(range(len(tens), len(tens) + len(a)))))
            tens.extend(a)
        else:
            spec.append(("s", a))

    def fn(*ts):
        real = [ts[s[1]] if s[0] == "t" else [ts[i] for i in s[1]] if s[0] == "l" else s[1] for s in spec]
        return info.op(*real, **kwargs)
    return fn, tens


def make_args(sample, make, diff, dtype=None):
    """Build (args, kwargs, leaves) for a sample: make(array, requires_grad) makes one tensor.

    dtype (a NumPy dtype name) casts the float arrays first (float32 runs, int runs)."""
    leaves = []

    def conv(v):
        if isinstance(v, Const):
            return make(_cast(v.value, dtype), False)
        if isinstance(v, np.ndarray):
            if v.dtype.kind == "f":
                t = make(_cast(v, dtype), diff and _cast(v, dtype).dtype.kind == "f")
                if diff and t.requires_grad:
                    leaves.append(t)
                return t
            return make(v, False)
        if isinstance(v, list) and v and _is_array(v[0]):
            return [conv(x) for x in v]
        return v

    args = tuple(conv(a) for a in sample.args)
    return args, dict(sample.kwargs), leaves


def _cast(a, dtype):
    if dtype is None or a.dtype.kind != "f":
        return a
    if np.dtype(dtype).kind in "iu":
        return np.round(a * 2).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return a > 0
    return a.astype(dtype)


def ref_args(sample, dtype=None):
    """The sample's arguments as NumPy arrays (lists stay lists), for the reference function."""
    def conv(v):
        if isinstance(v, Const):
            return _cast(v.value.copy(), dtype)
        if isinstance(v, np.ndarray):
            return _cast(v.copy(), dtype)
        if isinstance(v, list) and v and _is_array(v[0]):
            return [conv(x) for x in v]
        return v
    return tuple(conv(a) for a in sample.args)


def rebuild(sample, leaves_in, make_const):
    """A function of the leaves only (for gradcheck): the other arguments are fixed."""
    def fn(*leaves):
        it = iter(leaves)

        def conv(v):
            if isinstance(v, Const):
                return make_const(v.value)
            if isinstance(v, np.ndarray):
                return next(it) if v.dtype.kind == "f" else make_const(v)
            if isinstance(v, list) and v and _is_array(v[0]):
                return [conv(x) for x in v]
            return v
        return tuple(conv(a) for a in sample.args)
    return fn


# samplers: (shape, rng) -> float64 array
def sample(shape, rng, low=-2.0, high=2.0, away=(), margin=0.15):
    """Uniform float64 values in [low, high], nudged at least `margin` from each point in `away`
    (kinks, poles, integer steps) so finite differences never straddle one."""
    x = rng.uniform(low, high, size=shape)
    for k in away:
        close = np.abs(x - k) < margin
        x = np.where(close, k + np.where(x >= k, margin, -margin), x)
    return np.asarray(x, dtype=np.float64)


def positive(shape, rng, low=0.3, high=2.0):
    return np.asarray(rng.uniform(low, high, size=shape), dtype=np.float64)


def nonzero(shape, rng, low=0.3, high=2.0):
    """Values with |x| in [low, high] and random sign (away from a pole or kink at 0)."""
    mag = rng.uniform(low, high, size=shape)
    return np.asarray(np.where(rng.random(shape) < 0.5, -mag, mag), dtype=np.float64)


def distinct(shape, rng):
    """Values at least 0.1 apart (no ties: max/min/sort are smooth there)."""
    n = int(np.prod(shape))
    v = (rng.permutation(n) - n / 2.0) * 0.3 + rng.uniform(-0.05, 0.05, size=n)
    return np.asarray(v.reshape(shape), dtype=np.float64)


UNARY_SHAPES = [(), (3,), (2, 3)]
EMPTY_SHAPES = [(0,), (2, 0)]
BINARY_SHAPES = [
    ((), ()),
    ((3,), (3,)),
    ((2, 3), (2, 3)),
    ((2, 1), (1, 3)),
    ((4, 2, 3), (3,)),
    ((5, 1, 4), (1, 1, 4)),
    ((2, 3), ()),
]
EMPTY_PAIRS = [((0,), (0,)), ((0, 3), (3,)), ((2, 0), (1,))]


def unary_samples(sampler=sample, kinks=(), empty=True, shapes=UNARY_SHAPES, **kwargs):
    """Samples of a one-input op: shapes (), (3,), (2, 3), empty, plus kink points (1-D arrays)."""
    def gen(rng):
        out = [SampleInput((sampler(s, rng),), kwargs) for s in shapes]
        if empty:
            out += [SampleInput((np.zeros(s),), kwargs) for s in EMPTY_SHAPES]
        out += [SampleInput((np.asarray(k, dtype=np.float64),), kwargs, name=f"kink{list(k)}", kink=True)
                for k in kinks]
        return out
    return gen


def binary_samples(sx=sample, sy=sample, kinks=(), empty=True, **kwargs):
    """Samples of a two-input op: same shapes, broadcasting pairs, 0-d, empty, plus kink pairs."""
    def gen(rng):
        out = [SampleInput((sx(a, rng), sy(b, rng)), kwargs) for a, b in BINARY_SHAPES]
        if empty:
            out += [SampleInput((np.zeros(a), np.ones(b)), kwargs) for a, b in EMPTY_PAIRS]
        out += [SampleInput(tuple(np.asarray(v, dtype=np.float64) for v in k), kwargs,
                            name=f"kink{[list(v) for v in k]}", kink=True) for k in kinks]
        return out
    return gen


def samples(*items):
    """Fixed samples: items are SampleInputs or functions rng -> SampleInput / list of them."""
    def gen(rng):
        out = []
        for it in items:
            r = it(rng) if callable(it) else it
            out += list(r) if isinstance(r, (list, tuple)) else [r]
        return out
    return gen


def chain(*gens):
    """Concatenate sample generators."""
    def gen(rng):
        return [s for g in gens for s in g(rng)]
    return gen


# -- the entry -------------------------------------------------------------------------------------
class OpInfo:
    """One public op (or one variant of it: variant names a different calling form).

    name: the public name (as exported by minigrad / minigrad.ops / minigrad.nn.functional;
        nn.functional ops are named "nn.functional.relu").
    op: callable(*args, **kwargs) -> Tensor (or tuple of Tensors, or a Python value).
    ref: NumPy reference taking the same arguments as arrays (None: no forward comparison).
    sample_inputs: callable(rng) -> list of SampleInput (float64 arrays).
    dtypes: NumPy dtype names the op accepts (forward checked for each).
    supports_grad: differentiable (gradcheck). supports_gradgrad: twice differentiable
        (gradgradcheck); False only where PyTorch's op is once-differentiable too (checked).
    torch_op: callable(torch, *args, **kwargs) for parity; default getattr(torch, name); None: none.
    grad_fn: PyTorch's grad_fn name without its number ("Amin" for AminBackward0), checked on
        every differentiable sample; None where the op is a composite of other ops (the name is
        the last op's).
    functions: the Function classes implementing the op (what a tracer records).
    kind: "op" (public op), "backward" (an op-as-backward Function), or "internal".
    skips: {test name: reason} to skip one generated test for this op, with the reason shown.
    (The op's rules -- JVP, batching, fusion, ONNX -- are declared on its Function classes and read
    from there: tests/ops/test_op_rules.py.)
    """

    def __init__(self, name, op, ref, sample_inputs, *, variant="", dtypes=FLOATS, supports_grad=True,
                 supports_gradgrad=True, torch_op="default", grad_fn="default", functions=(),
                 kind="op", aliases=(), atol=1e-5, rtol=1e-3, fwd_rtol=1e-7, fwd_atol=1e-10,
                 skips=None, doc=""):
        self.name, self.variant, self.op, self.ref = name, variant, op, ref
        self.sample_inputs = sample_inputs
        self.dtypes = tuple(dtypes)
        self.supports_grad = supports_grad
        self.supports_gradgrad = supports_grad and supports_gradgrad
        self.torch_op = _default_torch_op(name) if torch_op == "default" else torch_op
        self.grad_fn = _default_grad_fn(name) if grad_fn == "default" else grad_fn
        self.functions = tuple(functions)
        self.kind = kind
        self.aliases = tuple(aliases)
        self.atol, self.rtol = atol, rtol
        self.fwd_rtol, self.fwd_atol = fwd_rtol, fwd_atol
        self.skips = dict(skips or {})
        self.doc = doc

    @property
    def full_name(self):
        """``name``, or ``name.variant`` for a variant of the op."""
        return self.name + (f".{self.variant}" if self.variant else "")

    def __repr__(self):
        return self.full_name

    def samples(self, seed=0):
        """The sample inputs drawn with ``np.random.default_rng(seed)``."""
        return self.sample_inputs(np.random.default_rng(seed))


def _default_torch_op(name):
    """torch.<name> (or torch.nn.functional.<name> for "nn.functional.<name>")."""
    def call(torch, *args, **kwargs):
        mod = torch
        for part in name.split(".")[:-1]:
            mod = getattr(mod, part)
        return getattr(mod, name.split(".")[-1])(*args, **kwargs)
    return call


def _default_grad_fn(name):
    """PyTorch's node name for most ops is the op's name in CamelCase: amin -> Amin."""
    base = name.split(".")[-1]
    return "".join(p[:1].upper() + p[1:] for p in base.split("_"))


def grad_fn_base(node_name):
    """'AminBackward0' -> 'Amin' (PyTorch numbers the overloads; we compare the op part)."""
    return re.sub(r"Backward\d*$", "", node_name)


# -- references not in NumPy -----------------------------------------------------------------------
_erf_vec = np.vectorize(math.erf, otypes=[np.float64])


def _np_erf(x):
    return _erf_vec(x).astype(x.dtype) if x.size else x.copy()


def _np_sigmoid(x):
    with np.errstate(over="ignore"):  # exp(800) = inf gives the right limit 0
        return 1.0 / (1.0 + np.exp(-x))


def _np_softmax(x, dim):
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def _np_log_softmax(x, dim):
    if x.ndim == 0:
        return np.zeros_like(x)
    m = x.max(dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(dim, keepdims=True))


# -- helpers shared by the family modules -------------------------------------------------------
def _inplace_form(method):
    """op(x, ...) as x.clone().<method>(...): the in-place variant checked through its graph rebase."""
    return lambda x, *args, **kw: getattr(x.clone(), method)(*args, **kw)


# -- table-style entries: one calling form each, written for both libraries ----------------------
def case(name, variant, inputs, fn, ref, *, torch=True, kinks=(), **kw):
    """An entry whose op is fn(L, *xs) with L the library (minigrad here, torch for parity).

    inputs: shapes (sampled with `sample`) or arrays; kinks: extra input tuples marked kink=True.
    """
    def conv(i, rng):
        if isinstance(i, tuple):
            return sample(i, rng)
        if isinstance(i, list):
            return [conv(s, rng) for s in i]
        return i if isinstance(i, Const) else np.asarray(i)

    def gen(rng):
        out = [SampleInput(tuple(conv(i, rng) for i in inputs))]
        out += [SampleInput(tuple(np.asarray(v, dtype=np.float64) for v in k), kink=True,
                            name=f"kink{j}") for j, k in enumerate(kinks)]
        return out
    return OpInfo(name, partial(fn, mg), ref, gen, variant=variant,
                  torch_op=fn if torch else None, **kw)
