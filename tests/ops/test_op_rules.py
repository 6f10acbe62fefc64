"""Every op class of minigrad declares every rule on itself (docs/adding-an-op.md): no side tables.

An op missing a rule fails here by name, instead of vmap silently looping over the batch. Whether a
declared rule gives the right numbers is what the registry tests check (tests/func/test_vmap_registry.py
for batching); this file checks that nothing is left undeclared and that every declaration resolves.
"""
import importlib
import pkgutil

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.function import BinaryUfunc, Function, NoRule, UnaryUfunc
from minigrad.func import batching_rules
from minigrad.kernels import fused
from minigrad.kernels.fused import kernel_of


def _all_op_classes():
    for m in pkgutil.walk_packages(mg.__path__, "minigrad."):
        try:
            importlib.import_module(m.name)
        except ImportError:   # a module of an optional extra that is not installed
            continue
    seen, todo = set(), [Function]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    # family bases (a leading underscore, or the ufunc bases) are not ops: their subclasses are
    return sorted((c for c in seen if c.__module__.startswith("minigrad.") and not c.__name__.startswith("_")
                   and c not in (UnaryUfunc, BinaryUfunc)), key=lambda c: (c.__module__, c.__name__))


OPS = _all_op_classes()


def _name(c):
    return f"{c.__module__.removeprefix('minigrad.')}.{c.__name__}"


def test_the_walk_finds_the_ops():
    names = {c.__name__ for c in OPS}
    assert {"Add", "Exp", "MatMul", "Convolution", "Sum", "GetItem", "CrossEntropyLoss"} <= names
    assert len(OPS) > 150


@pytest.mark.parametrize("cls", OPS, ids=_name)
def test_batching_rule_declared(cls):
    rule = cls.batching
    if getattr(cls, "_random", False):
        return   # a random op: vmap's `randomness` argument decides (func/vmap.py _random_op)
    assert rule is not None, (f"{_name(cls)} declares no batching rule: set `batching` to a family rule of "
                              f"func/batching_rules.py, a function, or NoRule('why vmap loops')")
    if type(rule) is str:
        assert callable(getattr(batching_rules, rule, None)), f"{_name(cls)}: no family rule {rule!r}"
    elif type(rule) is NoRule:
        assert rule.why and len(rule.why) > 10, f"{_name(cls)}: NoRule needs the reason"
    else:
        assert callable(rule), f"{_name(cls)}: batching = {rule!r} is not a rule"


@pytest.mark.parametrize("cls", OPS, ids=_name)
def test_jvp_rule_declared(cls):
    rule = next((k.__dict__["jvp"] for k in cls.__mro__ if "jvp" in k.__dict__ and k is not Function), None)
    assert rule is not None, (f"{_name(cls)} declares no jvp: write jvp(ctx, *tangents), or set "
                              f"jvp = NoRule('why forward mode runs the double-VJP identity')")
    if type(rule) is NoRule:
        assert len(rule.why) > 10, f"{_name(cls)}: NoRule needs the reason"
    else:
        assert callable(rule.__get__(None, cls)), f"{_name(cls)}: jvp = {rule!r} is not a rule"


# -- fusion: an elementwise op declares its fused loop body, and that body computes the op -------------
ELEMENTWISE = [c for c in OPS if c.batching == "elementwise"]
FUSED = [c for c in OPS if kernel_of(c) is not None]


@pytest.mark.parametrize("cls", ELEMENTWISE, ids=_name)
def test_fusion_rule_declared(cls):
    """An elementwise op is fused by its Kernel (or its ufunc, for the ufunc family), or says why not."""
    if kernel_of(cls) is None:
        assert type(cls.fusion) is NoRule and len(cls.fusion.why) > 10, (
            f"{_name(cls)} is elementwise but declares no fused Kernel: set fusion = Kernel(...) or "
            f"NoRule('why it is not fused')")


def _operands(cls, k, rng, dtype):
    lo, hi = (1.2, 3.0) if cls.__name__ == "Acosh" else (0.2, 0.9)  # inside every op's domain
    out = [rng.uniform(lo, hi, (5, 7)).astype(dtype) for _ in k.cast]
    out[0][0, :3] = [0.0, -0.5, 1.0] if cls.__name__ not in ("Acosh", "Log", "Log2", "Log10", "Sqrt", "Rsqrt",
                                                             "Atanh", "Reciprocal") else out[0][0, :3]
    if cls.__name__ == "Where":
        out[0] = out[0] > 0.5
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("cls", [c for c in FUSED if c.__name__ != "ToCopy"], ids=_name)
def test_fused_kernel_computes_the_op(cls, dtype):
    """The op's loop body, compiled by numba, against the op's own NumPy forward (the numpy
    backend): bit for bit when the Kernel says exact, else within the fused kernels' ulp bound."""
    pytest.importorskip("numba", reason="the numba backend of fused kernels needs numba")
    k = kernel_of(cls)
    xs = _operands(cls, k, np.random.default_rng(0), dtype)
    group = fused.Group([(x.shape, x.dtype) for x in xs], [(cls, [("in", i) for i in range(len(xs))],
                                                             np.dtype(dtype))], [0], xs[0].shape)
    want = fused.build(group, [()], "numpy")("", *xs)
    got = fused.build(group, [()], "numba")("", *xs)
    if k.exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=fused.ULPS_PER_TRANSCENDENTAL * np.finfo(dtype).eps,
                                   atol=np.finfo(dtype).tiny)
def _onnx_schema(name):
    try:
        import onnx.defs
    except ImportError:
        return True  # the extra is not installed: the name is checked where it is
    return onnx.defs.has(name)


@pytest.mark.parametrize("cls", OPS, ids=_name)
def test_onnx_rule_declared(cls):
    rule = cls.onnx
    assert rule is not None, (f"{_name(cls)} declares no ONNX rule: set `onnx` to an ONNX operator's name, "
                              f"a staticmethod onnx(e, c), or NoRule('why export cannot write it')")
    if type(rule) is str:
        assert _onnx_schema(rule), f"{_name(cls)}: onnx = {rule!r} is not an ONNX operator"
    elif type(rule) is NoRule:
        assert rule.why and len(rule.why) > 10, f"{_name(cls)}: NoRule needs the reason"
    else:
        assert callable(rule), f"{_name(cls)}: onnx = {rule!r} is not a rule"
