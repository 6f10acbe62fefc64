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
    supports_jvp / batching / trace / onnx: the later per-op rules, UNCHECKED until declared.
    """

    def __init__(self, name, op, ref, sample_inputs, *, variant="", dtypes=FLOATS, supports_grad=True,
                 supports_gradgrad=True, torch_op="default", grad_fn="default", functions=(),
                 kind="op", aliases=(), atol=1e-5, rtol=1e-3, fwd_rtol=1e-7, fwd_atol=1e-10,
                 skips=None, supports_jvp=UNCHECKED, batching=UNCHECKED, trace=UNCHECKED,
                 onnx=UNCHECKED, doc=""):
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
        self.supports_jvp, self.batching, self.trace, self.onnx = supports_jvp, batching, trace, onnx
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
    out = [SampleInput((x(a), lo(b), hi(c))) for a, b, c in [((2, 3), (2, 1), (1, 3)), ((3,), (), (2, 3))]]
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
        cond = rng.random(np.broadcast_shapes(a, b)) < 0.5
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


# -- registry queries ------------------------------------------------------------------------------
def _nn_op_db():
    # the entries of the nn.functional ops and of the backward Functions live in their own file
    from .opinfo_nn import nn_op_db
    return list(nn_op_db)


op_db = elementwise_ops

op_db = op_db + _nn_op_db()


def _linalg_op_db():
    # sorting/selection, the linalg family's products and diagonals, and mg.linalg: their own file
    from .opinfo_linalg import linalg_op_db
    return list(linalg_op_db)


op_db = op_db + _linalg_op_db()


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
    for n, v in _exported(mg).items():  # minigrad's own names that are op functions
        if getattr(v, "__module__", "").startswith("minigrad.ops."):
            ops[n] = v
    ops.update(_exported(F, "nn.functional."))
    ops.update(_exported(mg.linalg, "linalg."))
    return ops
