"""The op registry: one `OpInfo` per public op (PyTorch's OpInfo idea), read by every op test.

An entry declares, once: the op, its NumPy reference, its sample inputs (shapes (), (3,), (2, 3),
the broadcasting pairs (2, 1)x(1, 3) and (4, 2, 3)x(3,), empty and 0-d tensors, and the kinks/ties
where PyTorch defines the subgradient), the dtypes it accepts and what it supports. The tests in
tests/ops/test_ops.py are generated from `op_db`: forward vs the reference, float32 stays float32,
gradcheck, gradgradcheck, PyTorch parity (values, gradients, grad_fn names), and "every public op
has an entry" (the public names are derived from the package's `__all__`s, never hand-listed).

The op's own rules (JVP, batching, fusion, ONNX, ...) live on its Function class and are checked
for every class by tests/ops/test_op_rules.py; the registry's samples then check that each rule gives
the right numbers (test_jvp_rules.py, test_vmap_registry.py, tests/onnx, tests/compiler).

Entries whose op is a backward Function (kind="backward": an op-as-backward Function such as
ReluBackward, whose forward is the NumPy VJP and whose backward gives the second derivative) take
the same fields; their `op` calls `SomeBackward.apply(g, saved...)` and `ref` is the NumPy VJP.

Sample args: a float ndarray becomes a leaf tensor (requires_grad when the op supports grad); an
int/bool ndarray or a `Const(...)` becomes a constant tensor; a list of arrays becomes a list of
tensors (cat, stack); anything else (ints, tuples, strings) is passed through as a static argument.

Layout: core.py holds the entry, the samplers and the helpers; one module per op family holds its
entries as a list `ops` (elementwise, reduction, scan, shape, indexing, sorting, linalg, comparison,
bitwise, inplace, nn, recurrent, special); this module assembles `op_db` from them and answers the registry queries (ops_named, public_ops).

To add an op: see docs/adding-an-op.md.
"""
import minigrad as mg

from . import (bitwise, comparison, complex, elementwise, indexing, inplace, linalg, nn, recurrent, reduction, scan,
               shape, sorting)
from . import random, sparse, special
from .core import (  # noqa: F401 - the registry's public names, importable from minigrad.testing.opinfo
    ALL_NUMERIC, BINARY_SHAPES, EMPTY_PAIRS, EMPTY_SHAPES, FLOATS, UNARY_SHAPES, Const, OpInfo,
    SampleInput, binary_samples, case, chain, distinct, grad_fn_base, make_args, nonzero, positive, rebuild,
    ref_args, sample, samples, tensor_function, unary_samples)
from .reduction import REDUCTION_DIMS, reduction_samples  # noqa: F401

op_db = (elementwise.ops + reduction.ops + scan.ops + shape.ops + indexing.ops + sorting.ops + linalg.ops
         + comparison.ops + bitwise.ops + inplace.ops + nn.ops + recurrent.ops + sparse.ops + random.ops
         + special.ops + complex.ops)
for _alias, _target in special.ALIASES.items():  # minigrad.special's names for ops registered elsewhere
    _entry = next(o for o in op_db if o.name == _target and not o.variant)
    _entry.aliases += (_alias,)


# -- registry queries ------------------------------------------------------------------------------
def ops_named(name):
    """The registry entries for the op ``name`` (under its name or one of its aliases)."""
    return [o for o in op_db if o.name == name or name in o.aliases]


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
    ops.update(_exported(mg.special, "special."))
    return ops
