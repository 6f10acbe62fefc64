"""The op registry: one `OpInfo` per public op (PyTorch's OpInfo idea), read by every op test.

An entry declares, once: the op, its NumPy reference, its sample inputs (shapes (), (3,), (2, 3),
the broadcasting pairs (2, 1)x(1, 3) and (4, 2, 3)x(3,), empty and 0-d tensors, and the kinks/ties
where PyTorch defines the subgradient), the dtypes it accepts and what it supports. The tests in
tests/ops/test_ops.py are generated from `op_db`: forward vs the reference, float32 stays float32,
gradcheck, gradgradcheck, PyTorch parity (values, gradients, grad_fn names), and "every public op
has an entry" (the public names are derived from the package's `__all__`s, never hand-listed).

Rules added later (forward mode, vmap, tracing, ONNX) get a field here, defaulting to UNCHECKED;
their test module iterates `op_db` and fails for an op whose field is still UNCHECKED:

    @pytest.mark.parametrize("info", op_db, ids=str)
    def test_has_jvp(info):
        assert info.supports_jvp is not UNCHECKED, f"{info}: no JVP rule declared"

`missing_rule("supports_jvp")` lists the ops still unchecked for a rule.

Entries whose op is a backward Function (kind="backward": an op-as-backward Function such as
ReluBackward, whose forward is the NumPy VJP and whose backward gives the second derivative) take
the same fields; their `op` calls `SomeBackward.apply(g, saved...)` and `ref` is the NumPy VJP.

Sample args: a float ndarray becomes a leaf tensor (requires_grad when the op supports grad); an
int/bool ndarray or a `Const(...)` becomes a constant tensor; a list of arrays becomes a list of
tensors (cat, stack); anything else (ints, tuples, strings) is passed through as a static argument.

To add an op: see docs/adding-an-op.md.
"""
import math
import re
from functools import partial

import numpy as np

import minigrad as mg

UNCHECKED = "unchecked"  # a per-op rule nobody has declared yet (a later test fails on it)
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
    supports_jvp / batching / trace: the later per-op rules, UNCHECKED until declared (the ONNX
        mapping is declared on the op class: Function.onnx).
    """

    def __init__(self, name, op, ref, sample_inputs, *, variant="", dtypes=FLOATS, supports_grad=True,
                 supports_gradgrad=True, torch_op="default", grad_fn="default", functions=(),
                 kind="op", aliases=(), atol=1e-5, rtol=1e-3, fwd_rtol=1e-7, fwd_atol=1e-10,
                 skips=None, supports_jvp=UNCHECKED, batching=UNCHECKED, trace=UNCHECKED,
                 doc=""):
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
        self.supports_jvp, self.batching, self.trace = supports_jvp, batching, trace
        self.doc = doc

    @property
    def full_name(self):
        return self.name + (f".{self.variant}" if self.variant else "")

    def __repr__(self):
        return self.full_name

    def samples(self, seed=0):
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


# -- the registry ----------------------------------------------------------------------------------
def _ew(name, ref, sampler=sample, *, kinks=(), op=None, **kw):
    """An elementwise one-input op with the standard samples."""
    return OpInfo(name, op or getattr(mg, name), ref, unary_samples(sampler, kinks), **kw)


_STEPS = partial(sample, away=(-2, -1, 0, 1, 2))

elementwise_ops = [
    _ew("neg", np.negative),
    _ew("neg", np.negative, op=lambda x: -x, variant="dunder"),
    _ew("abs", np.abs, nonzero, kinks=([-1.0, 0.0, 2.0],)),
    _ew("abs", np.abs, nonzero, op=lambda x: abs(x), variant="dunder"),
    _ew("exp", np.exp),
    _ew("log", np.log, positive),
    _ew("log1p", np.log1p, partial(sample, low=-0.7, high=2.0), grad_fn="Log1P"),
    _ew("expm1", np.expm1),
    _ew("sqrt", np.sqrt, positive),
    _ew("rsqrt", lambda x: 1 / np.sqrt(x), positive),
    _ew("reciprocal", np.reciprocal, nonzero),
    _ew("sin", np.sin),
    _ew("cos", np.cos),
    _ew("tan", np.tan, partial(sample, low=-1.2, high=1.2)),
    _ew("tanh", np.tanh),
    _ew("sigmoid", _np_sigmoid, kinks=([-800.0, -30.0, 0.0, 30.0, 800.0],)),
    _ew("relu", lambda x: np.maximum(x, 0), nonzero, kinks=([-1.0, 0.0, 2.0],)),
    _ew("erf", _np_erf),
    _ew("sign", np.sign, nonzero, kinks=([-1.0, 0.0, 1.0],)),
    _ew("floor", np.floor, _STEPS, kinks=([-1.5, 0.5, 1.0, 2.7],)),
    _ew("ceil", np.ceil, _STEPS, kinks=([-1.5, 0.5, 1.0, 2.7],)),
    _ew("round", np.round, partial(sample, away=(-1.5, -0.5, 0.5, 1.5)), kinks=([0.5, 1.5, 2.5, -0.5],)),
]

# clamp: bounds as scalars (ClampBackward1) or tensors (ClampBackward0); PyTorch passes the
# gradient where lo <= x <= hi, bounds included
_CLAMP_X = partial(sample, away=(-0.5, 0.7))


def _clamp_tensor_samples(rng):
    def lo(shape):
        return rng.uniform(-1.5, -0.5, size=shape)

    def hi(shape):
        return rng.uniform(0.5, 1.5, size=shape)

    def x(shape):  # a mix of below, inside and above, away from both bounds
        return sample(shape, rng, low=-3, high=3, away=(-1.5, -0.5, 0.5, 1.5), margin=0.12)
    out = [SampleInput((x(a), lo(b), hi(c))) for a, b, c in [((2, 3), (2, 1), (1, 3)), ((2, 3), (), (3,))]]
    out.append(SampleInput((np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), np.full(5, -1.0), np.full(5, 1.0)),
                           name="at_bounds", kink=True))
    return out


elementwise_ops += [
    OpInfo("clamp", lambda x: mg.clamp(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7),
           unary_samples(_CLAMP_X, kinks=([-2.0, -0.5, 0.0, 0.7, 2.0],)),
           torch_op=lambda torch, x: torch.clamp(x, -0.5, 0.7)),
    OpInfo("clamp", lambda x: x.clamp(min=-0.5), lambda x: np.maximum(x, -0.5),
           unary_samples(partial(sample, away=(-0.5,)), kinks=([-1.0, -0.5, 1.0],)), variant="min",
           torch_op=lambda torch, x: x.clamp(min=-0.5)),
    OpInfo("clamp", lambda x: x.clamp(max=0.7), lambda x: np.minimum(x, 0.7),
           unary_samples(partial(sample, away=(0.7,)), kinks=([-1.0, 0.7, 1.0],)), variant="max",
           torch_op=lambda torch, x: x.clamp(max=0.7)),
    OpInfo("clamp", mg.clamp, lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), _clamp_tensor_samples,
           variant="tensor_bounds"),
    OpInfo("clamp", mg.clamp, lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), lambda rng: [SampleInput((
        sample((3,), rng, low=-3, high=3, away=(-1.5, -0.5, 0.5, 1.5), margin=0.12), rng.uniform(-1.5, -0.5, size=()),
        rng.uniform(0.5, 1.5, size=(2, 3))))], variant="tensor_bounds_broadcast_x",
        skips={"torch": "PyTorch's clamp does not broadcast the input to the bounds' shape (minigrad does)"}),
    OpInfo("clip", lambda x: mg.clip(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7),
           unary_samples(_CLAMP_X), torch_op=lambda torch, x: torch.clip(x, -0.5, 0.7), grad_fn="Clamp"),
    # pow: scalar exponent (PowBackward0), tensor exponent (PowBackward1), scalar base (PowBackward2)
    OpInfo("pow", lambda x: x ** 2, np.square, unary_samples(kinks=([0.0, 3.0],)), variant="square",
           torch_op=lambda torch, x: x ** 2),
    OpInfo("pow", lambda x: x ** 3, lambda x: x ** 3, unary_samples(), variant="cube",
           torch_op=lambda torch, x: x ** 3),
    OpInfo("pow", lambda x: x ** 0.5, np.sqrt, unary_samples(positive), variant="half",
           torch_op=lambda torch, x: x ** 0.5),
    OpInfo("pow", lambda x: x ** -1, np.reciprocal, unary_samples(nonzero), variant="neg1",
           torch_op=lambda torch, x: x ** -1),
    OpInfo("pow", lambda x: x.pow(-1.5), lambda x: x ** -1.5, unary_samples(positive), variant="neg_float",
           torch_op=lambda torch, x: x.pow(-1.5)),
    OpInfo("pow", lambda x: x ** 0, lambda x: x ** 0, unary_samples(kinks=([0.0, 3.0],)), variant="zero",
           torch_op=lambda torch, x: x ** 0),
    OpInfo("pow", lambda x: 2.0 ** x, lambda x: 2.0 ** x, unary_samples(kinks=([0.0, 1.0, -1.0],)),
           variant="rpow", torch_op=lambda torch, x: 2.0 ** x),
    OpInfo("pow", lambda x: 0.0 ** x, lambda x: 0.0 ** x, samples(
        SampleInput((np.array([1.0, 2.0]),), name="zero_base", kink=True)), variant="rpow_zero_base",
        torch_op=lambda torch, x: 0.0 ** x),
    OpInfo("pow", lambda x, y: x ** y, np.power,
           binary_samples(positive, sample, kinks=(([0.0, 0.0, 0.0, 2.0], [0.0, 1.0, 2.0, 3.0]),)),
           variant="dunder", torch_op=lambda torch, x, y: x ** y),
    OpInfo("pow", mg.pow, np.power, binary_samples(positive, sample)),
    OpInfo("mul", lambda x: x * x, np.square, unary_samples(), variant="square",
           torch_op=lambda torch, x: x * x),
]


def _binary(name, ref, sx=sample, sy=sample, *, op=None, kinks=(), **kw):
    return OpInfo(name, op or getattr(mg, name), ref, binary_samples(sx, sy, kinks), **kw)


def _where_samples(rng):
    out = []
    for a, b in BINARY_SHAPES + EMPTY_PAIRS:
        cond = np.asarray(rng.random(np.broadcast_shapes(a, b)) < 0.5)
        out.append(SampleInput((cond, sample(a, rng), sample(b, rng))))
    return out


elementwise_ops += [
    _binary("add", np.add, dtypes=ALL_NUMERIC),
    _binary("add", np.add, op=lambda x, y: x + y, variant="dunder", torch_op=lambda torch, x, y: x + y),
    _binary("add", lambda x, y: x + 2 * y, op=lambda x, y: x.add(y, alpha=2.0), variant="alpha",
            torch_op=lambda torch, x, y: x.add(y, alpha=2.0)),
    _binary("sub", np.subtract, dtypes=ALL_NUMERIC),
    _binary("sub", np.subtract, op=lambda x, y: x - y, variant="dunder", torch_op=lambda torch, x, y: x - y),
    _binary("mul", np.multiply, dtypes=ALL_NUMERIC),
    _binary("mul", np.multiply, op=lambda x, y: x * y, variant="dunder", torch_op=lambda torch, x, y: x * y),
    _binary("div", np.divide, sample, nonzero),
    _binary("div", np.divide, sample, nonzero, op=lambda x, y: x / y, variant="dunder",
            torch_op=lambda torch, x, y: x / y),
    _binary("maximum", np.maximum, kinks=(([1.0, 2.0, 3.0], [1.0, 0.0, 5.0]),
                                          ([1.0, 1.0, 2.0], [1.0]))),
    _binary("minimum", np.minimum, kinks=(([1.0, 2.0, 3.0], [1.0, 0.0, 5.0]),
                                          ([[1.0, 2.0], [0.0, 1.0]], [1.0]))),
    _binary("max", np.maximum, op=lambda x, y: mg.max(x, y), variant="binary", grad_fn="Maximum",
            torch_op=lambda torch, x, y: torch.max(x, y)),
    _binary("min", np.minimum, op=lambda x, y: mg.min(x, y), variant="binary", grad_fn="Minimum",
            torch_op=lambda torch, x, y: torch.min(x, y)),
    OpInfo("where", mg.where, np.where, _where_samples),
    # atan2(input, other): the angle of (other, input); PyTorch's gradient at the origin is 0
    _binary("atan2", np.arctan2, nonzero, nonzero, aliases=("arctan2",)),
    _binary("atan2", np.arctan2, nonzero, nonzero, op=lambda y, x: y.atan2(x), variant="method",
            torch_op=lambda torch, y, x: y.atan2(x)),
    OpInfo("atan2", mg.arctan2, np.arctan2, samples(SampleInput(
        (np.array([0.0, 1.0, 0.0, -2.0]), np.array([0.0, 0.0, -1.0, 3.0])), name="origin", kink=True)),
        variant="origin", skips={"torch_double_backward": "PyTorch's second derivative at (0, 0) is nan; "
                                                          "minigrad's is 0 (finite)"}),
]


# lerp / addcmul / addcdiv: the optimizers' fused updates; in-place forms write into the first input
_TERNARY_SHAPES = [((), (), ()), ((3,), (3,), (3,)), ((2, 3), (2, 3), (2, 3)), ((2, 3), (1, 3), (2, 1)),
                   ((2, 1), (1, 3), ()), ((0, 3), (3,), (1,))]


def _ternary_samples(s1=sample, s2=sample, s3=sample, inplace=False, **kwargs):
    # in place: only shapes whose broadcast is the first input's (the result is written into it)
    shapes = [t for t in _TERNARY_SHAPES if not inplace or np.broadcast_shapes(*t) == t[0]]

    def gen(rng):
        return [SampleInput((s1(a, rng), s2(b, rng), s3(c, rng)), kwargs) for a, b, c in shapes]
    return gen


def _np_lerp(x, end, w):
    return x + w * (end - x)


def _inplace_form(method):
    """op(x, ...) as x.clone().<method>(...): the in-place variant checked through its graph rebase."""
    return lambda x, *args, **kw: getattr(x.clone(), method)(*args, **kw)


_LERP_SCALAR = binary_samples()
elementwise_ops += [
    OpInfo("lerp", lambda x, e: mg.lerp(x, e, 0.3), lambda x, e: _np_lerp(x, e, 0.3), _LERP_SCALAR,
           variant="scalar_weight", torch_op=lambda torch, x, e: torch.lerp(x, e, 0.3)),
    OpInfo("lerp", lambda x, e: mg.lerp(x, e, 0.8), lambda x, e: _np_lerp(x, e, 0.8), _LERP_SCALAR,
           variant="scalar_weight_high", torch_op=lambda torch, x, e: torch.lerp(x, e, 0.8)),
    OpInfo("lerp", mg.lerp, _np_lerp, _ternary_samples(s3=partial(sample, away=(-0.5, 0.5)))),
    OpInfo("addcmul", lambda x, a, b: mg.addcmul(x, a, b, value=-0.7), lambda x, a, b: x - 0.7 * a * b,
           _ternary_samples(), torch_op=lambda torch, x, a, b: torch.addcmul(x, a, b, value=-0.7)),
    OpInfo("addcdiv", lambda x, a, b: mg.addcdiv(x, a, b, value=0.4), lambda x, a, b: x + 0.4 * a / b,
           _ternary_samples(s3=nonzero), torch_op=lambda torch, x, a, b: torch.addcdiv(x, a, b, value=0.4)),
    OpInfo("lerp", _inplace_form("lerp_"), _np_lerp, _ternary_samples(s3=partial(sample, away=(-0.5, 0.5)),
                                                                     inplace=True),
           variant="inplace", torch_op=lambda torch, x, e, w: x.clone().lerp_(e, w), aliases=("lerp_",),
           grad_fn=None),
    OpInfo("addcmul", _inplace_form("addcmul_"), lambda x, a, b: x + a * b, _ternary_samples(inplace=True),
           variant="inplace", torch_op=lambda torch, x, a, b: x.clone().addcmul_(a, b), aliases=("addcmul_",),
           grad_fn=None),
    OpInfo("addcdiv", _inplace_form("addcdiv_"), lambda x, a, b: x + a / b,
           _ternary_samples(s3=nonzero, inplace=True),
           variant="inplace", torch_op=lambda torch, x, a, b: x.clone().addcdiv_(a, b), aliases=("addcdiv_",),
           grad_fn=None),
    OpInfo("sqrt", _inplace_form("sqrt_"), np.sqrt, unary_samples(positive), variant="inplace",
           torch_op=lambda torch, x: x.clone().sqrt_(), aliases=("sqrt_",), grad_fn=None),
]


# -- reductions ------------------------------------------------------------------------------------
# (shape, dim) pairs: None, int, negative int, tuple, negative tuple, and 0-d
REDUCTION_DIMS = [((), None), ((3,), None), ((3,), 0), ((2, 3), None), ((2, 3), 1), ((2, 3), -2),
                  ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, -2)), ((2, 3, 4), 1)]


def _group_size(shape, dim):
    if dim is None:
        return int(np.prod(shape)) if shape else 1
    dims = dim if isinstance(dim, tuple) else (dim,)
    return int(np.prod([shape[d] for d in dims])) if shape else 1


def reduction_samples(sampler=sample, min_group=1, empty=True, extra=(), **fixed):
    """dim None/int/negative/tuple and keepdim False/True over REDUCTION_DIMS, plus empty inputs."""
    def gen(rng):
        out = []
        for shape, dim in REDUCTION_DIMS:
            if _group_size(shape, dim) < min_group:
                continue
            for keep in (False, True):
                kw = dict(fixed, dim=dim, keepdim=keep)
                out.append(SampleInput((sampler(shape, rng),), kw,
                                       name=f"{shape}-dim{dim}{'-keep' if keep else ''}".replace(" ", "")))
        if empty:
            out.append(SampleInput((np.zeros((2, 0)),), dict(fixed, dim=1), name="empty(2,0)-dim1"))
        for e in extra:
            out.append(e)
        return out
    return gen


def _np_reduce(fn, **np_kw):
    def ref(x, dim=None, keepdim=False, **_):
        axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
        if x.ndim == 0:
            axis = None
        return np.asarray(fn(x, axis=axis, keepdims=keepdim, **np_kw))
    return ref


def _torch_red(name):
    """x.<name>(dim, keepdim) in PyTorch, with dim None/tuple spelled the way each op accepts."""
    def call(torch, x, dim=None, keepdim=False, **kw):
        if dim is None:
            dim = tuple(range(x.ndim))
        if x.ndim == 0:
            return getattr(x, name)(0, keepdim=keepdim, **kw) if name in ("logsumexp", "prod") \
                else getattr(x, name)(**kw)
        if name == "prod" and isinstance(dim, tuple):  # one dim at a time
            for d in sorted((d % x.ndim for d in dim), reverse=True):
                x = x.prod(d, keepdim=True)
            return x if keepdim else x.reshape([s for i, s in enumerate(x.shape)
                                                if i not in {d % x.ndim for d in dim}])
        return getattr(x, name)(dim, keepdim=keepdim, **kw)
    return call


def _np_lse(x, axis, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def _np_pnorm(p):
    def fn(x, axis, keepdims):
        a = np.abs(x)
        if p == "fro":
            return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
        if p == float("inf"):
            return np.amax(a, axis=axis, keepdims=keepdims)
        if p == float("-inf"):
            return np.amin(a, axis=axis, keepdims=keepdims)
        if p == 0:
            return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
        return np.sum(a ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)
    return fn


def _method(name):
    """op calling the Tensor method: x.name(dim, keepdim=...) as the existing tests did."""
    def op(x, **kw):
        return getattr(x, name)(**kw)
    return op


def _norm_op(p):
    def op(x, **kw):
        return x.norm(p, **kw)
    return op


_PROD_ZEROS = [SampleInput((np.array(v),), name=f"zeros{v}") for v in
               ([2.0, 0.0, 4.0], [0.0, 0.0, 4.0], [0.0, 0.0, 0.0])] + [
    SampleInput((np.array([[1.0, 0.0, 3.0], [2.0, 3.0, 4.0], [0.0, 0.0, 1.0]]),), {"dim": 1},
                name="zeros_rows-dim1"),
    SampleInput((np.array([[1.0, 0.0, 3.0], [2.0, 3.0, 4.0], [0.0, 5.0, 1.0]]),), {"dim": 0, "keepdim": True},
                name="zeros_cols-dim0-keep")]
_TIES = [SampleInput((np.array([[1.0, 3.0], [3.0, 3.0]]),), name="ties", kink=True),
         SampleInput((np.array([[2.0, 2.0, 1.0], [0.0, 1.0, 1.0]]),), {"dim": 1}, name="ties_rows", kink=True),
         SampleInput((np.array([0.0, 5.0, 0.0]),), {"dim": 0, "keepdim": True}, name="ties_low", kink=True)]
_NORM_ZEROS = [SampleInput((np.zeros(3),), name="zero", kink=True),
               SampleInput((np.array([[0.0, 0.0], [3.0, 4.0]]),), {"dim": 1}, name="zero_row", kink=True),
               SampleInput((np.array([0.0, 1.0, -2.0]),), name="zero_elem", kink=True)]


def _red(name, np_fn, sampler=sample, *, variant="", op=None, min_group=1, extra=(), np_kw=None,
         fixed=None, empty=True, **kw):
    kw.setdefault("torch_op", _torch_red(name))
    return OpInfo(name, op or getattr(mg, name), _np_reduce(np_fn, **(np_kw or {})),
                  reduction_samples(sampler, min_group, empty, extra=extra, **(fixed or {})), variant=variant,
                  **kw)


reduction_ops = [
    _red("sum", np.sum, dtypes=ALL_NUMERIC),
    _red("sum", np.sum, op=_method("sum"), variant="method"),
    _red("mean", np.mean, op=_method("mean"), empty=False),
    _red("prod", np.prod, nonzero, op=_method("prod"), extra=_PROD_ZEROS),
    _red("amax", np.amax, distinct, op=_method("amax"), extra=_TIES, empty=False),
    _red("amin", np.amin, distinct, extra=_TIES, empty=False),
    _red("logsumexp", lambda x, axis, keepdims: _np_lse(x, axis, keepdims), op=_method("logsumexp")),
    _red("var", np.var, op=_method("var"), min_group=2, np_kw={"ddof": 1}, grad_fn=None, empty=False),
    _red("var", np.var, variant="biased", op=_method("var"), fixed={"unbiased": False}, grad_fn=None, empty=False),
    _red("var", np.var, variant="correction0", fixed={"correction": 0}, grad_fn=None, empty=False),
    _red("var", np.var, variant="correction2", fixed={"correction": 2}, min_group=3, np_kw={"ddof": 2}, empty=False,
         grad_fn=None),
    _red("std", np.std, op=_method("std"), min_group=2, np_kw={"ddof": 1}, empty=False,
         extra=[SampleInput((np.array([2.0, 2.0, 2.0]),), name="constant", kink=True)]),
    _red("std", np.std, variant="biased", fixed={"unbiased": False}, empty=False),
]
for _p, _v in (("fro", ""), (1, "p1"), (3, "p3"), (1.5, "p1.5"), (0.5, "p0.5"), (float("inf"), "inf"),
               (float("-inf"), "neginf"), (0, "p0")):
    reduction_ops.append(OpInfo(
        "norm", _norm_op(_p), _np_reduce(_np_pnorm(_p)),
        reduction_samples(nonzero, empty=_p not in (float("inf"), float("-inf")),
                          extra=_NORM_ZEROS if _p not in (float("inf"), float("-inf")) else ()),
        variant=_v, torch_op=lambda torch, x, _p=_p, dim=None, **kw: x.norm(_p, dim, **kw),
        grad_fn=None))  # p-dependent (Norm2, NormP, or abs/amax/sum composites); PyTorch: LinalgVectorNorm


def _max_dim_samples(rng):
    out = []
    for shape, dim in REDUCTION_DIMS:
        if isinstance(dim, int):
            for keep in (False, True):
                out.append(SampleInput((distinct(shape, rng), dim), {"keepdim": keep}))
    out.append(SampleInput((np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0], [5.0, 5.0, 5.0]]), 1), name="ties",
                           kink=True))
    return out


def _np_max_dim(fn, arg):
    def ref(x, dim, keepdim=False):
        return np.asarray(fn(x, axis=dim, keepdims=keepdim)), np.asarray(arg(x, axis=dim, keepdims=keepdim))
    return ref


def _softmax_samples(rng):
    out = [SampleInput((sample(s, rng, low=-3, high=3), d)) for s, d in
           [((3,), 0), ((3,), -1), ((2, 3), 1), ((2, 3), 0), ((2, 3, 4), -2), ((2, 3, 4), 2), ((), 0)]]
    out.append(SampleInput((np.array([[1e4, 0.0, -1e4], [1e4, 1e4, 1e4 - 1.0]]), -1), name="huge"))
    out.append(SampleInput((np.zeros((0, 3)), 1), name="empty"))
    return out


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


def _dim_samples(cases, sampler=sample):
    def gen(rng):
        return [SampleInput((sampler(s, rng), d)) for s, d in cases]
    return gen


reduction_ops += [
    OpInfo("max", lambda x: x.max(), _np_reduce(np.max), samples(
        lambda rng: [SampleInput((distinct(s, rng),)) for s in UNARY_SHAPES], *_TIES[:1]), variant="full",
        torch_op=lambda torch, x: x.max(), grad_fn="Max"),
    OpInfo("min", lambda x: x.min(), _np_reduce(np.min), samples(
        lambda rng: [SampleInput((distinct(s, rng),)) for s in UNARY_SHAPES],
        SampleInput((np.array([0.0, 5.0, 0.0]),), name="ties", kink=True)), variant="full",
        torch_op=lambda torch, x: x.min(), grad_fn="Min"),
    OpInfo("max", mg.max, _np_max_dim(np.max, np.argmax), _max_dim_samples, variant="dim", grad_fn=None,
           torch_op=lambda torch, x, d, **kw: tuple(torch.max(x, d, **kw))),
    OpInfo("min", mg.min, _np_max_dim(np.min, np.argmin), _max_dim_samples, variant="dim", grad_fn=None,
           torch_op=lambda torch, x, d, **kw: tuple(torch.min(x, d, **kw))),
    OpInfo("softmax", mg.softmax, _np_softmax, _softmax_samples),
    OpInfo("log_softmax", mg.log_softmax, _np_log_softmax, _softmax_samples, grad_fn="LogSoftmax"),
    OpInfo("cumsum", mg.cumsum, lambda x, d: np.cumsum(x, axis=d) if x.ndim else x.copy(), _dim_samples(
        [((3,), 0), ((3,), -1), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), -2), ((), 0), ((0, 2), 1)])),
    OpInfo("cumsum", lambda x, d: x.cumsum(d), lambda x, d: np.cumsum(x, axis=d) if x.ndim else x.copy(),
           _dim_samples([((2, 3), 1), ((), 0)]), variant="method", torch_op=lambda torch, x, d: x.cumsum(d)),
]


def _nondiff_red_samples(rng):
    out = [SampleInput((sample((3, 4), rng),))]
    for d, k in [(0, False), (1, True), (-1, False)]:
        out.append(SampleInput((sample((3, 4), rng),), {"dim": d, "keepdim": k}))
    out.append(SampleInput((np.array([[1.0, 7.0], [7.0, 0.0]]),), name="ties"))
    out.append(SampleInput((np.array([[1.0, 7.0], [7.0, 0.0]]),), {"dim": 0}, name="ties_dim"))
    return out


def _bool_red_samples(rng):
    m = np.array([[True, False], [True, True]])
    return [SampleInput((m,)), SampleInput((m,), {"dim": 1}), SampleInput((m,), {"dim": 0, "keepdim": True}),
            SampleInput((np.zeros((0,), dtype=bool),), name="empty"), SampleInput((sample((2, 3), rng) > 0,))]


reduction_ops += [
    OpInfo(n, getattr(mg, n), _np_reduce(getattr(np, n)), _nondiff_red_samples, supports_grad=False)
    for n in ("argmax", "argmin")] + [
    OpInfo(n, getattr(mg, n), _np_reduce(getattr(np, n)), _bool_red_samples, supports_grad=False,
           dtypes=("bool",)) for n in ("any", "all")]


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


def _all_parts(L, parts):
    """Combine a tuple of outputs into one so gradcheck sees every part (weighted differently)."""
    return L.cat([p.reshape(-1) * (i + 1.0) for i, p in enumerate(parts)])


def _np_split(sizes, dim):
    def ref(a):
        return np.concatenate([p.reshape(-1) * (i + 1.0) for i, p in
                               enumerate(np.split(a, np.cumsum(sizes)[:-1], axis=dim))])
    return ref


_SPLITS = [((5, 2), 2, 0, [2, 2, 1]), ((5, 2), 5, 0, [5]), ((2, 6), 3, 1, [3, 3]),
           ((2, 6), [1, 2, 3], -1, [1, 2, 3]), ((4, 2), [4, 0], 0, [4, 0]), ((4, 2), (1, 3), 0, [1, 3])]
_CHUNKS = [((6,), 3, 0, [2, 2, 2]), ((5,), 2, 0, [3, 2]), ((2, 5), 3, 1, [2, 2, 1]), ((3,), 5, 0, [1, 1, 1]),
           ((2, 4), 2, -1, [2, 2])]
_UNBINDS = [((3,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), -1)]


def _np_unbind(dim):
    def ref(a):
        return np.concatenate([np.take(a, i, axis=dim).reshape(-1) * (i + 1.0) for i in range(a.shape[dim])])
    return ref


shape_ops = [
    case("reshape", "", [(2, 3)], lambda L, x: x.reshape(3, 2), lambda x: x.reshape(3, 2), grad_fn="View"),
    case("reshape", "tuple", [(2, 3)], lambda L, x: x.reshape((6,)), lambda x: x.reshape(6), grad_fn="View"),
    case("reshape", "-1", [(2, 3, 4)], lambda L, x: x.reshape(-1, 4), lambda x: x.reshape(-1, 4), grad_fn="View"),
    case("reshape", "-1_mid", [(2, 3, 4)], lambda L, x: L.reshape(x, (2, -1, 2)), lambda x: x.reshape(2, -1, 2),
         grad_fn="View"),
    case("reshape", "0d_to_1", [()], lambda L, x: x.reshape(1), lambda x: x.reshape(1), grad_fn="View"),
    case("reshape", "to_0d", [(1,)], lambda L, x: x.reshape(()), lambda x: x.reshape(()), grad_fn="View"),
    case("reshape", "same", [(2, 3)], lambda L, x: x.reshape(2, 3), lambda x: x, grad_fn="View"),
    case("reshape", "empty", [np.zeros((0, 3))], lambda L, x: x.reshape(3, 0), lambda x: x.reshape(3, 0),
         grad_fn="View"),
    case("view", "", [(2, 3)], lambda L, x: x.view(6), lambda x: x.reshape(6)),
    case("view", "-1", [(2, 3)], lambda L, x: x.view(-1), lambda x: x.reshape(-1)),
    case("view", "as", [(2, 3)], lambda L, x: x.view_as(L.zeros(3, 2)), lambda x: x.reshape(3, 2)),
    case("flatten", "", [(2, 3, 4)], lambda L, x: x.flatten(), lambda x: x.reshape(-1), grad_fn="View"),
    case("flatten", "1", [(2, 3, 4)], lambda L, x: x.flatten(1), lambda x: x.reshape(2, 12), grad_fn="View"),
    case("flatten", "0_1", [(2, 3, 4)], lambda L, x: L.flatten(x, 0, 1), lambda x: x.reshape(6, 4),
         grad_fn="View"),
    case("flatten", "0d", [()], lambda L, x: x.flatten(), lambda x: x.reshape(1), grad_fn="View"),
    case("unflatten", "", [(2, 12)], lambda L, x: x.unflatten(1, (3, 4)), lambda x: x.reshape(2, 3, 4),
         grad_fn="View"),
    case("unflatten", "-1", [(2, 12)], lambda L, x: x.unflatten(-1, (-1, 2)), lambda x: x.reshape(2, 6, 2),
         grad_fn="View"),
    case("squeeze", "", [(1, 3, 1)], lambda L, x: x.squeeze(), lambda x: x.squeeze()),
    case("squeeze", "dim", [(1, 3, 1)], lambda L, x: x.squeeze(0), lambda x: x.squeeze(0)),
    case("squeeze", "neg", [(1, 3, 1)], lambda L, x: x.squeeze(-1), lambda x: x.squeeze(-1)),
    case("squeeze", "noop", [(2, 3)], lambda L, x: x.squeeze(1), lambda x: x),
    case("squeeze", "tuple", [(1, 3, 1)], lambda L, x: L.squeeze(x, (0, 2)), lambda x: x.reshape(3)),
    case("unsqueeze", "", [(2, 3)], lambda L, x: x.unsqueeze(0), lambda x: x[None]),
    case("unsqueeze", "mid", [(2, 3)], lambda L, x: x.unsqueeze(1), lambda x: x[:, None]),
    case("unsqueeze", "neg", [(2, 3)], lambda L, x: L.unsqueeze(x, -1), lambda x: x[..., None]),
    case("unsqueeze", "0d", [()], lambda L, x: x.unsqueeze(0), lambda x: x.reshape(1)),
    case("transpose", "", [(2, 3)], lambda L, x: x.transpose(0, 1), lambda x: x.T),
    case("transpose", "3d", [(2, 3, 4)], lambda L, x: L.transpose(x, 0, -1), lambda x: np.swapaxes(x, 0, 2)),
    case("transpose", "1d", [(3,)], lambda L, x: x.transpose(0, -1), lambda x: x),
    case("transpose", "mT", [(2, 3, 4)], lambda L, x: x.mT, lambda x: np.swapaxes(x, -1, -2)),
    case("swapaxes", "", [(2, 3, 4)], lambda L, x: x.swapaxes(1, 2), lambda x: np.swapaxes(x, 1, 2),
         grad_fn="Transpose"),
    case("permute", "", [(2, 3, 4)], lambda L, x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1)),
    case("permute", "tuple", [(2, 3, 4)], lambda L, x: L.permute(x, (1, 2, 0)), lambda x: x.transpose(1, 2, 0)),
    case("permute", "neg", [(2, 3, 4)], lambda L, x: x.permute(-1, -3, -2), lambda x: x.transpose(2, 0, 1)),
    case("permute", "T", [(2, 3)], lambda L, x: x.T, lambda x: x.T, grad_fn=None),
    case("permute", "T_3d", [(2, 3, 4)], lambda L, x: x.permute(2, 1, 0), lambda x: x.T),
    case("permute", "T_1d", [(3,)], lambda L, x: x.T, lambda x: x, grad_fn=None),
    case("t", "", [(2, 3)], lambda L, x: x.t(), lambda x: x.T),
    case("t", "1d", [(3,)], lambda L, x: L.t(x), lambda x: x),
    case("expand", "", [(3, 1)], lambda L, x: x.expand(3, 4), lambda x: np.broadcast_to(x, (3, 4))),
    case("expand", "new_dims", [(3,)], lambda L, x: x.expand(2, 4, 3), lambda x: np.broadcast_to(x, (2, 4, 3))),
    case("expand", "-1", [(1, 3)], lambda L, x: x.expand(2, -1), lambda x: np.broadcast_to(x, (2, 3))),
    case("expand", "0d", [()], lambda L, x: x.expand(2, 3), lambda x: np.broadcast_to(x, (2, 3))),
    case("expand", "same", [(2, 3)], lambda L, x: x.expand(2, 3), lambda x: x),
    case("expand_as", "", [(2, 1)], lambda L, x: x.expand_as(L.zeros(2, 3)), lambda x: np.broadcast_to(x, (2, 3)),
         grad_fn="Expand"),
    case("broadcast_to", "", [(1, 3)], lambda L, x: x.broadcast_to((2, 3)), lambda x: np.broadcast_to(x, (2, 3)),
         grad_fn="Expand"),
    case("broadcast_to", "fn", [(3,)], lambda L, x: L.broadcast_to(x, (4, 3)), lambda x: np.broadcast_to(x, (4, 3)),
         grad_fn="Expand"),
    case("broadcast_tensors", "", [(2, 1), (3,)], lambda L, x, y: L.broadcast_tensors(x, y),
         lambda x, y: tuple(np.broadcast_arrays(x, y)), grad_fn="Expand"),
    case("repeat", "", [(2, 3)], lambda L, x: x.repeat(2, 3), lambda x: np.tile(x, (2, 3))),
    case("repeat", "new_dims", [(2, 3)], lambda L, x: x.repeat(2, 1, 2), lambda x: np.tile(x, (2, 1, 2))),
    case("repeat", "tuple", [(3,)], lambda L, x: x.repeat((3,)), lambda x: np.tile(x, 3)),
    case("repeat", "fn", [(3,)], lambda L, x: L.repeat(x, (3,)) if L is mg else x.repeat(3), lambda x: np.tile(x, 3)),
    case("repeat", "0d", [()], lambda L, x: x.repeat(3), lambda x: np.tile(x, 3)),
    case("flip", "", [(2, 3)], lambda L, x: x.flip(0), lambda x: x[::-1]),
    case("flip", "both", [(2, 3)], lambda L, x: x.flip((0, 1)), lambda x: x[::-1, ::-1]),
    case("flip", "neg", [(2, 3, 4)], lambda L, x: L.flip(x, [-1]), lambda x: x[..., ::-1]),
    case("narrow", "", [(4, 3)], lambda L, x: x.narrow(0, 1, 2), lambda x: x[1:3], grad_fn="Slice"),
    case("narrow", "dim1", [(2, 5)], lambda L, x: L.narrow(x, 1, 2, 3), lambda x: x[:, 2:5], grad_fn="Slice"),
    case("narrow", "neg_start", [(2, 5)], lambda L, x: x.narrow(-1, -2, 2), lambda x: x[:, 3:5], grad_fn="Slice"),
    case("contiguous", "", [(2, 3)], lambda L, x: x.T.contiguous(), lambda x: x.T, grad_fn="Clone"),
    case("contiguous", "noop", [(2, 3)], lambda L, x: x.contiguous() * 1.0, lambda x: x, grad_fn="Mul"),
    case("clone", "", [(2, 3)], lambda L, x: x.clone(), lambda x: x),
    case("clone", "fn", [(2, 3)], lambda L, x: L.clone(x), lambda x: x.copy()),
    case("tril", "", [(3, 4)], lambda L, x: x.tril(), np.tril),
    case("tril", "k1", [(3, 4)], lambda L, x: L.tril(x, 1), lambda x: np.tril(x, 1)),
    case("tril", "k-1", [(3, 4)], lambda L, x: x.tril(diagonal=-1), lambda x: np.tril(x, -1)),
    case("tril", "batched", [(2, 3, 3)], lambda L, x: x.tril(), np.tril),
    case("triu", "", [(3, 4)], lambda L, x: x.triu(), np.triu),
    case("triu", "k1", [(4, 3)], lambda L, x: L.triu(x, 1), lambda x: np.triu(x, 1)),
    case("triu", "k-1", [(2, 3, 3)], lambda L, x: x.triu(-1), lambda x: np.triu(x, -1)),
]
for _shapes, _d in [(((2, 3), (4, 3)), 0), (((2, 3), (2, 1), (2, 2)), 1), (((2, 3), (2, 3)), -1),
                    (((3,), (2,)), 0), (((2, 1, 3), (2, 2, 3)), -2), (((0, 3), (2, 3)), 0)]:
    _v = "x".join(str(s) for s in _shapes).replace(" ", "") + f"-dim{_d}"
    shape_ops.append(case("cat", _v, [list(_shapes)], lambda L, xs, _d=_d: L.cat(xs, _d),
                          lambda xs, _d=_d: np.concatenate(xs, axis=_d), aliases=("concat", "concatenate")))
shape_ops.append(case("cat", "kw_list", [[(2, 3), (2, 3)]], lambda L, xs: L.cat(list(xs), dim=1),
                      lambda xs: np.concatenate(xs, axis=1)))
shape_ops.append(case("concat", "", [[(2, 3), (1, 3)]], lambda L, xs: L.concat(xs), lambda xs: np.concatenate(xs),
                      grad_fn="Cat"))
shape_ops.append(case("concatenate", "", [[(2, 3), (1, 3)]], lambda L, xs: L.concatenate(xs),
                      lambda xs: np.concatenate(xs), grad_fn="Cat"))
for _shape, _n, _d in [((3,), 2, 0), ((3,), 3, 1), ((2, 3), 3, 0), ((2, 3), 2, -1), ((2, 3), 2, 2), ((), 3, 0)]:
    shape_ops.append(case("stack", f"{_shape}x{_n}-dim{_d}".replace(" ", ""), [[_shape] * _n],
                          lambda L, xs, _d=_d: L.stack(xs, _d), lambda xs, _d=_d: np.stack(xs, axis=_d)))
for _shape, _arg, _d, _sizes in _SPLITS:
    _v = f"{_shape}-{_arg}-dim{_d}".replace(" ", "")
    shape_ops.append(case("split", _v, [_shape], lambda L, x, _a=_arg, _d=_d: _all_parts(L, L.split(x, _a, _d)),
                          _np_split(_sizes, _d), grad_fn="Cat"))
    shape_ops.append(case("split", _v + "-first", [_shape], lambda L, x, _a=_arg, _d=_d: x.split(_a, dim=_d)[0],
                          lambda x, _s=_sizes, _d=_d: np.split(x, np.cumsum(_s)[:-1], axis=_d)[0], grad_fn=None))
for _shape, _c, _d, _sizes in _CHUNKS:
    shape_ops.append(case("chunk", f"{_shape}-{_c}-dim{_d}".replace(" ", ""), [_shape],
                          lambda L, x, _c=_c, _d=_d: _all_parts(L, L.chunk(x, _c, _d)), _np_split(_sizes, _d),
                          grad_fn="Cat"))
for _shape, _d in _UNBINDS:
    shape_ops.append(case("unbind", f"{_shape}-dim{_d}".replace(" ", ""), [_shape],
                          lambda L, x, _d=_d: _all_parts(L, L.unbind(x, _d)), _np_unbind(_d), grad_fn="Cat"))


# -- indexing --------------------------------------------------------------------------------------
class AsTensor:
    """An index part given as a tensor of the library under test (mg.tensor / torch.tensor)."""

    def __init__(self, value):
        self.value = np.asarray(value)


def _lib_index(L, index):
    if isinstance(index, tuple):
        return tuple(_lib_index(L, i) for i in index)
    if isinstance(index, AsTensor):
        return L.tensor(index.value)
    return index


def _np_index(index):
    if isinstance(index, tuple):
        return tuple(_np_index(i) for i in index)
    if isinstance(index, AsTensor):
        return index.value
    return index


_MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
_GETITEM = {
    "int": ((3, 4), 1), "neg_int": ((3, 4), -1), "int_int": ((3, 4), (2, 3)), "int_0d": ((3,), 0),
    "slice": ((3, 4), slice(1, None)), "slice_step": ((3, 4), (slice(None), slice(None, None, 2))),
    "slice_start_stop_step": ((5, 4), (slice(1, 5, 2), slice(0, 4, 3))),
    "slice_neg_bounds": ((3, 4), (slice(-2, None), slice(None, -1))), "slice_empty": ((3, 4), slice(2, 1)),
    "none": ((3, 4), None), "none_mid": ((3, 4), (slice(None), None, 1)), "ellipsis": ((2, 3, 4), (Ellipsis, 1)),
    "ellipsis_first": ((2, 3, 4), (0, Ellipsis)), "ellipsis_none": ((2, 3, 4), (Ellipsis, None, slice(1, 3))),
    "bool_mask_full": ((3, 4), _MASK), "bool_mask_tensor": ((3, 4), AsTensor(_MASK)),
    "bool_mask_rows": ((3, 4), np.array([True, False, True])),
    "bool_mask_then_slice": ((3, 4), (np.array([True, False, True]), slice(1, 3))),
    "int_list": ((4, 3), [0, 2, 3]), "int_list_repeated": ((4, 3), [1, 1, 3, 1]),
    "int_array_repeated": ((4, 3), np.array([3, 0, 3])),
    "int_tensor_repeated": ((3, 4), (slice(None), AsTensor([2, 0, 2, 2]))),
    "int_array_2d": ((3, 4), np.array([[0, 1], [1, 1]])), "two_arrays": ((3, 4), ([0, 2, 0], [1, 3, 1])),
    "array_and_slice": ((3, 4), ([2, 0, 2], slice(1, None))),
    "slice_and_array": ((3, 4), (slice(None, None, 2), [3, 3, 0])),
    "ellipsis_and_array": ((2, 3, 4), (Ellipsis, [0, 0, 3])),
    "int_and_array": ((2, 3, 4), (1, slice(None), [2, 2])), "neg_array": ((4, 3), [-1, -1, 0]),
    "none_and_array": ((3, 4), (None, [1, 1])),
    "array_then_array_split": ((2, 3, 4), ([0, 1], slice(None), [1, 1])),
    "ints_apart_from_array": ((2, 3, 12, 5, 4), (1, slice(None), slice(3, 11, 2), [0, 2, 4], slice(0, 2))),
    "int_array_int": ((2, 3, 4, 5), (0, [2, 1], slice(1, 3), -1)),
}
# PyTorch's layout where it differs from NumPy's: an int selects first (NumPy counts it as an advanced
# index, and advanced indices split by a slice send their dims to the front)
_GETITEM_REF = {
    "int_and_array": lambda a: a[1][:, [2, 2]],
    "ints_apart_from_array": lambda a: a[1][:, 3:11:2, [0, 2, 4], 0:2],
    "int_array_int": lambda a: a[0, :, :, -1][[2, 1], 1:3],
}
indexing_ops = [
    case("getitem", _n, [_shape], lambda L, x, _i=_idx: x[_lib_index(L, _i)],
         _GETITEM_REF.get(_n, lambda a, _i=_idx: a[_np_index(_i)]), grad_fn=None)  # PyTorch: Select/Slice/Index/...
    for _n, (_shape, _idx) in _GETITEM.items()]


def _setitem_fn(L, x, v):
    y = x * 1.0
    y[1, ::2] = v
    y[y < -1.0] = 0.0
    return y * y


def _np_setitem(x, v):
    y = x.copy()
    y[1, ::2] = v
    y[y < -1.0] = 0.0
    return y * y


def _np_gather(a, dim, idx):
    return np.take_along_axis(a, idx, axis=dim)


def _np_scatter_add(a, dim, idx, src):
    out = a.copy()
    src = src[tuple(slice(0, s) for s in idx.shape)]
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        out[tuple(tgt)] += src[pos]
    return out


indexing_ops.append(case("setitem", "", [(3, 4), (2,)], _setitem_fn, _np_setitem, grad_fn="Mul"))
for _shape, _d, _idx in [((3, 4), 0, [[0, 1, 2, 0], [2, 2, 2, 2]]), ((3, 4), 1, [[3, 3], [0, 1], [1, 1]]),
                         ((3, 4), -1, [[0], [3], [2]]), ((2, 3, 4), 1, [[[0, 2, 2, 1]], [[1, 1, 0, 0]]]),
                         ((4,), 0, [3, 3, 0])]:
    _idx = np.array(_idx)
    _v = f"{_shape}-dim{_d}".replace(" ", "")
    indexing_ops.append(case("gather", _v, [_shape], lambda L, x, _d=_d, _i=_idx: x.gather(_d, L.tensor(_i)),
                             lambda a, _d=_d, _i=_idx: _np_gather(a, _d, _i)))
    indexing_ops.append(case("gather", _v + "-fn", [_shape, _idx], lambda L, x, i, _d=_d: L.gather(x, _d, i),
                             lambda a, i, _d=_d: _np_gather(a, _d, i)))
for _shape, _d, _idx, _ss in [((3, 4), 0, [[0, 1, 2, 0], [0, 0, 2, 2]], (2, 4)), ((3, 4), 1, [[3, 3], [0, 1], [1, 1]], (3, 2)),
                              ((4,), 0, [3, 3, 0, 3], (4,)), ((3, 4), 1, [[0], [2]], (2, 3))]:
    _idx = np.array(_idx)
    _v = f"{_shape}-dim{_d}-src{_ss}".replace(" ", "")
    # src larger than the index: PyTorch raises in backward, minigrad gives the unused part 0
    _torch_ok = _ss == _idx.shape
    indexing_ops.append(case("scatter_add", _v, [_shape, _ss],
                             lambda L, x, s, _d=_d, _i=_idx: x.scatter_add(_d, L.tensor(_i), s),
                             lambda a, s, _d=_d, _i=_idx: _np_scatter_add(a, _d, _i, s), torch=_torch_ok))
    indexing_ops.append(case("scatter_add", _v + "-fn", [_shape, _idx, _ss],
                             lambda L, x, i, s, _d=_d: L.scatter_add(x, _d, i, s),
                             lambda a, i, s, _d=_d: _np_scatter_add(a, _d, i, s), torch=_torch_ok))
for _shape, _d, _idx in [((4, 3), 0, [3, 0, 3]), ((3, 4), 1, [1, 1]), ((3, 4), -1, [0]), ((4,), 0, [2, 2, 2]),
                         ((2, 3, 4), 1, [2, 0])]:
    _v = f"{_shape}-dim{_d}".replace(" ", "")
    indexing_ops.append(case("index_select", _v, [_shape],
                             lambda L, x, _d=_d, _i=_idx: x.index_select(_d, L.tensor(_i)),
                             lambda a, _d=_d, _i=_idx: np.take(a, _i, axis=_d), grad_fn=None))  # via getitem
    indexing_ops.append(case("index_select", _v + "-fn", [_shape, np.array(_idx)],
                             lambda L, x, i, _d=_d: L.index_select(x, _d, i),
                             lambda a, i, _d=_d: np.take(a, i, axis=_d), grad_fn=None))
for _shape, _m in [((3, 4), _MASK), ((3, 4), np.array([True, False, False, True])),
                   ((3, 4), np.array([[True], [False], [True]])), ((), np.array(True))]:
    _v = f"{_shape}-mask{_m.shape}".replace(" ", "")
    indexing_ops.append(case("masked_fill", _v, [_shape, _m], lambda L, x, m: x.masked_fill(m, -5.0),
                             lambda a, m: np.where(m, -5.0, a), grad_fn=None))  # PyTorch: MaskedFill; minigrad: where
    indexing_ops.append(case("masked_fill", _v + "-tensor_value", [_shape, _m, ()],
                             lambda L, x, m, v: L.masked_fill(x, m, v * v), lambda a, m, v: np.where(m, v * v, a),
                             grad_fn=None))
for _shape, _d, _idx in [((3, 4), 1, [[0, 3], [2, 2], [1, 0]]), ((3, 4), 0, [[2, 0, 0, 1]]),
                         ((3, 4), 1, [[1], [3], [3]]), ((3, 4), None, [11, 0, 11])]:
    _idx = np.array(_idx)
    _v = f"{_shape}-dim{_d}-{_idx.shape}".replace(" ", "")
    _ref = (lambda a, i, _d=_d: np.take_along_axis(a, i, axis=_d)) if _d is not None else \
        (lambda a, i: np.take_along_axis(a.reshape(-1), i, axis=0))
    indexing_ops.append(case("take_along_dim", _v, [_shape, _idx], lambda L, x, i, _d=_d: x.take_along_dim(i, _d),
                             _ref, grad_fn="Gather"))
    indexing_ops.append(case("take_along_dim", _v + "-fn", [_shape, _idx],
                             lambda L, x, i, _d=_d: L.take_along_dim(x, i, dim=_d), _ref, grad_fn="Gather"))


# -- linear algebra --------------------------------------------------------------------------------
_MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (2, 3, 4)),
                  ((2, 4, 3), (3,)), ((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)), ((2, 3), (2, 3, 4)),
                  ((2, 1, 2, 3), (3, 3, 2)), ((1, 2, 3), (2, 1, 3, 2)), ((1, 3), (3, 1)), ((0, 3), (3, 2))]
_EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("ii->i", [(3, 3)]),
           ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("ij->j", [(2, 3)]),
           ("i,i->", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]), ("ij,jk", [(2, 3), (3, 4)]),
           ("ba,ac", [(2, 3), (3, 4)]), ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
           ("bi,bj->bij", [(2, 3), (2, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]), ("iij->ij", [(2, 2, 3)]),
           ("ijk->kj", [(2, 3, 4)]), ("i->", [(4,)]), ("i->i", [(4,)]), ("ij->ij", [(2, 3)]),
           ("ii,i->i", [(3, 3), (3,)]), (" ij , jk -> ik ", [(2, 3), (3, 2)])]


def _matmul_samples(rng):
    return [SampleInput((sample(a, rng), sample(b, rng))) for a, b in _MATMUL_SHAPES]


linalg_ops = [
    OpInfo("matmul", lambda x, y: x @ y, np.matmul, _matmul_samples, variant="dunder",
           torch_op=lambda torch, x, y: x @ y, grad_fn=None),  # PyTorch: Mm/Bmm/Dot/Mv/... by shapes
    OpInfo("matmul", mg.matmul, np.matmul, _matmul_samples, grad_fn=None),
    OpInfo("matmul", lambda x, y: x.matmul(y), np.matmul, _matmul_samples, variant="method",
           torch_op=lambda torch, x, y: x.matmul(y), grad_fn=None),
    case("mm", "", [(2, 3), (3, 4)], lambda L, x, y: L.mm(x, y), np.matmul, grad_fn=None),
    case("mm", "method", [(2, 3), (3, 2)], lambda L, x, y: x.mm(y), np.matmul, grad_fn=None),
    case("bmm", "", [(2, 2, 3), (2, 3, 4)], lambda L, x, y: L.bmm(x, y), np.matmul, grad_fn=None),
    case("dot", "", [(4,), (4,)], lambda L, x, y: L.dot(x, y), np.dot, grad_fn=None),
    case("dot", "method", [(3,), (3,)], lambda L, x, y: x.dot(y), np.dot, grad_fn=None),
    case("outer", "", [(3,), (4,)], lambda L, x, y: L.outer(x, y), np.outer, grad_fn=None),
    case("outer", "method", [(2,), (1,)], lambda L, x, y: x.outer(y), np.outer, grad_fn=None),
]
for _eq, _shapes in _EINSUM:
    linalg_ops.append(case("einsum", _eq.replace(" ", "_"), list(_shapes),
                           lambda L, *xs, _eq=_eq: L.einsum(_eq, *xs),
                           lambda *xs, _eq=_eq: np.einsum(_eq.replace(" ", ""), *xs), grad_fn=None))
for _xs in [(3,), (4, 3), (2, 4, 3)]:
    for _b in (True, False):
        linalg_ops.append(case(
            "linear", f"{_xs}-{'bias' if _b else 'nobias'}".replace(" ", ""), [_xs, (5, 3)] + ([(5,)] if _b else []),
            lambda L, x, w, *b: (mg.ops.linear if L is mg else L.nn.functional.linear)(x, w, *b),
            lambda x, w, *b: x @ w.T + (b[0] if b else 0), grad_fn=None))  # H1: Addmm for the fused 2-D case


# -- no gradient: integer division, remainder, comparisons, logic, tests ---------------------------
def _cmp_samples(rng):
    out = [SampleInput((sample(a, rng), sample(b, rng))) for a, b in BINARY_SHAPES]
    out.append(SampleInput((np.array([1.0, 2.0, 3.0]), np.array([[2.0], [1.0]])), name="ties"))
    out.append(SampleInput((np.array([1.0, 2.0, 3.0]), 2.0), name="scalar"))
    out.append(SampleInput((np.array([1.0, 2.0, 3.0]), 2), name="int_scalar"))
    return out


def _logic_samples(rng):
    a, b = np.array([True, True, False]), np.array([True, False, False])
    return [SampleInput((a, b)), SampleInput((rng.random((2, 3)) < 0.5, rng.random((3,)) < 0.5))]


def _div_samples(rng):
    return [SampleInput((np.array([-7.0, -3.5, 2.0, 7.5]), np.array([2.0, 2.0, -3.0, 2.0]))),
            SampleInput((np.array([-7.0, -3.5, 2.0, 7.5]), 2), name="scalar"),
            SampleInput((7, np.array([2.0, 2.0, -3.0, 2.0])), name="rscalar"),
            SampleInput((sample((2, 3), rng), nonzero((3,), rng)))]


nondiff_ops = [
    OpInfo(n, getattr(mg, n), getattr(np, f), _div_samples, supports_grad=False, dtypes=ALL_NUMERIC,
           skips={"torch": "PyTorch differentiates remainder/fmod (minigrad does not yet)"} if n != "floor_divide"
           else None)
    for n, f in [("floor_divide", "floor_divide"), ("remainder", "remainder"), ("fmod", "fmod")]] + [
    OpInfo(n, getattr(mg, n), getattr(np, f), _cmp_samples, supports_grad=False, dtypes=ALL_NUMERIC)
    for n, f in [("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                 ("ge", "greater_equal")]] + [
    OpInfo(n, getattr(mg, n), getattr(np, n), _logic_samples, supports_grad=False, dtypes=("bool",))
    for n in ("logical_and", "logical_or", "logical_xor")] + [
    OpInfo("logical_not", mg.logical_not, np.logical_not, samples(
        SampleInput((np.array([True, False, False]),)), SampleInput((np.array([[1.0, 0.0]]),), name="float")),
        supports_grad=False, dtypes=("bool",)),
    OpInfo("logical_not", lambda x: ~x, np.logical_not, samples(SampleInput((np.array([True, False]),))),
           variant="invert", supports_grad=False, torch_op=lambda torch, x: ~x, dtypes=("bool",))] + [
    OpInfo(n, getattr(mg, n), getattr(np, n), samples(
        SampleInput((np.array([1.0, float("nan"), float("inf"), -float("inf")]),)),
        lambda rng: SampleInput((sample((2, 3), rng),)), SampleInput((np.zeros(0),), name="empty")),
        supports_grad=False)
    for n in ("isnan", "isinf", "isfinite")] + [
    OpInfo("equal", mg.equal, lambda x, y: x.shape == y.shape and bool(np.array_equal(x, y)), samples(
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.0]))), SampleInput((np.array([1.0, 2.0]), np.array([1.0, 3.0]))),
        SampleInput((np.array([1.0, 2.0]), np.array([[1.0, 2.0]])), name="shapes")), supports_grad=False),
    OpInfo("allclose", mg.allclose, np.allclose, samples(
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))),
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.1]))),
        SampleInput((np.array([1.0, 2.0]), np.array([1.0, 2.1])), {"atol": 0.2}, name="atol")), supports_grad=False),
]


# -- bitwise (ops/bitwise.py): integer dtype kept, logical on bool ----------------------------------
def _bitwise_samples(rng):
    a = np.array([5, -3, 0, 12, -128, 127])
    return [SampleInput((a, np.array([6, 6, -1, 10, 1, -1]))),
            SampleInput((rng.integers(-50, 50, (2, 1)), rng.integers(-50, 50, (1, 3))), name="broadcast"),
            SampleInput((a.astype(np.int32), 6), name="int_scalar"),
            SampleInput((6, a.astype(np.int16)), name="rscalar"),
            SampleInput((a.astype(np.int16), a.astype(np.int32)), name="promote"),
            SampleInput((np.array([200, 7], dtype=np.uint8), np.array([15, 255], dtype=np.uint8)), name="uint8"),
            SampleInput((np.array([True, True, False]), np.array([True, False, False])), name="bool")]


def _shift_samples(rng):
    a = np.array([5, -3, 0, 12, -128, 127])
    return [SampleInput((a, np.array([0, 1, 2, 3, 4, 62]))),
            SampleInput((a.astype(np.int32), 3), name="int_scalar"),
            SampleInput((3, np.array([0, 1, 7], dtype=np.int8)), name="rscalar"),
            SampleInput((np.array([200, 7], dtype=np.uint8), np.array([1, 5], dtype=np.uint8)), name="uint8")]


_BITWISE = [("bitwise_and", np.bitwise_and, lambda x, y: x & y), ("bitwise_or", np.bitwise_or, lambda x, y: x | y),
            ("bitwise_xor", np.bitwise_xor, lambda x, y: x ^ y)]
_SHIFTS = [("bitwise_left_shift", np.left_shift, lambda x, y: x << y),
           ("bitwise_right_shift", np.right_shift, lambda x, y: x >> y)]
bitwise_ops = [
    OpInfo(n, getattr(mg, n), f, smp, supports_grad=False, dtypes=("int64",))
    for (n, f, _), smp in [(b, _bitwise_samples) for b in _BITWISE] + [(b, _shift_samples) for b in _SHIFTS]] + [
    OpInfo(n, dunder, f, smp, variant="operator", supports_grad=False, dtypes=("int64",),
           torch_op=lambda torch, x, y, _d=dunder: _d(x, y))  # & | ^ << >> and their reflected forms
    for (n, f, dunder), smp in [(b, _bitwise_samples) for b in _BITWISE] + [(b, _shift_samples) for b in _SHIFTS]] + [
    OpInfo("bitwise_not", mg.bitwise_not, np.invert, samples(
        SampleInput((np.array([5, -3, 0, 127]),)), SampleInput((np.array([0, 200], dtype=np.uint8),), name="uint8"),
        SampleInput((np.array([True, False]),), name="bool")), supports_grad=False, dtypes=("int64",)),
    OpInfo("bitwise_not", lambda x: ~x, np.invert, samples(
        SampleInput((np.array([5, -3, 0, 127], dtype=np.int32),)), SampleInput((np.array([True, False]),), name="bool")),
        variant="invert", supports_grad=False, torch_op=lambda torch, x: ~x, dtypes=("int64",)),
]


# -- registry queries ------------------------------------------------------------------------------
# -- casts and in-place kernels (the Tensor methods to(), fill_(), copy_(), add_() ...) -------------
def _inplace_add(x, y):
    from minigrad.ops import inplace
    return inplace(x * 1.0, mg.add, y, name="add_")  # x * 1.0: in place on a non-leaf, as add_ needs


inplace_ops = [
    # float64 -> float32 -> float64: both casts, values as NumPy rounds them
    OpInfo("cast", lambda x: mg.ops.cast(mg.ops.cast(x, np.float32), np.float64),
           lambda x: x.astype(np.float32).astype(np.float64), unary_samples(),
           torch_op=lambda torch, x: x.to(torch.float32).to(torch.float64), grad_fn="ToCopy",
           skips={"float32": "the op casts to float64 by definition",
                  "gradcheck": "finite differences cannot resolve a float32 round trip; the gradient (g cast "
                               "back) is compared with PyTorch's", "gradgradcheck": "as gradcheck"}),
    OpInfo("fill_", lambda x: (x * 1.0).fill_(2.5), lambda x: np.full_like(x, 2.5), unary_samples(),
           torch_op=lambda torch, x: (x * 1.0).fill_(2.5), grad_fn=None),
    OpInfo("copy_", lambda x, y: (x * 1.0).copy_(y), lambda x, y: np.broadcast_to(y, x.shape).copy(),
           samples(lambda rng: [SampleInput((sample(a, rng), sample(b, rng))) for a, b in
                                [((2, 3), (2, 3)), ((2, 3), (3,)), ((), ())]]),
           torch_op=lambda torch, x, y: (x * 1.0).copy_(y), grad_fn=None),
    OpInfo("inplace", _inplace_add, np.add, samples(lambda rng: [
        SampleInput((sample(a, rng), sample(b, rng))) for a, b in [((2, 3), (2, 3)), ((2, 3), (3,)), ((), ())]]),
        torch_op=lambda torch, x, y: (x * 1.0).add_(y), grad_fn="Add"),
]


def _nn_op_db():
    # the entries of the nn.functional ops and of the backward Functions live in their own file
    from .opinfo_nn import nn_op_db
    return list(nn_op_db)


op_db = elementwise_ops + reduction_ops + shape_ops + indexing_ops + linalg_ops + nondiff_ops + inplace_ops + bitwise_ops

op_db = op_db + _nn_op_db()


def _linalg_op_db():
    # sorting/selection, the linalg family's products and diagonals, and mg.linalg: their own file
    from .opinfo_linalg import linalg_op_db
    return list(linalg_op_db)


op_db = op_db + _linalg_op_db()


def _breadth_op_db():
    # issue 8's breadth ops (elementwise math, scatter/index, scans, statistics): their own file
    from .opinfo_breadth import breadth_op_db
    return list(breadth_op_db)


op_db = op_db + _breadth_op_db()


def ops_named(name):
    return [o for o in op_db if o.name == name or name in o.aliases]


def missing_rule(rule):
    """The entries (public ops) whose `rule` field is still UNCHECKED."""
    return [o for o in op_db if o.kind == "op" and getattr(o, rule) is UNCHECKED]


def _exported(module, prefix=""):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    out = {}
    for n in names:
        v = getattr(module, n)
        if callable(v) and not isinstance(v, type) and getattr(v, "__module__", "").startswith("minigrad."):
            out[prefix + n] = v
    return out


def public_ops():
    """{public name: function} for every op exported by minigrad.ops, minigrad (the names it takes
    from the op families) and minigrad.nn.functional. Derived from the modules, not hand-listed."""
    import minigrad.ops
    import minigrad.nn.functional as F
    ops = _exported(minigrad.ops)
    for n in dir(minigrad.ops):  # and the Tensor-method kernels it exports beside __all__ (view, getitem, ...)
        v = getattr(minigrad.ops, n)
        if not n.startswith("_") and callable(v) and not isinstance(v, type) \
                and getattr(v, "__module__", "").startswith("minigrad.ops."):
            ops[n] = v
    for n, v in _exported(mg).items():  # minigrad's own names that are op functions
        if getattr(v, "__module__", "").startswith("minigrad.ops."):
            ops[n] = v
    ops.update(_exported(F, "nn.functional."))
    ops.update(_exported(mg.linalg, "linalg."))
    return ops
