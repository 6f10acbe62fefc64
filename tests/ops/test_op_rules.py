"""Every op class of minigrad declares every rule on itself (docs/adding-an-op.md): no side tables.

An op missing a rule fails here by name, instead of vmap silently looping over the batch. Whether a
declared rule gives the right numbers is what the registry tests check (tests/func/test_vmap_registry.py
for batching); this file checks that nothing is left undeclared and that every declaration resolves.
"""
import importlib
import pkgutil

import pytest

import minigrad as mg
from minigrad.autograd.function import BinaryUfunc, Function, NoRule, UnaryUfunc
from minigrad.func import batching_rules


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
