"""Registry entries for the random ops with tensor inputs (mg.multinomial, ops/random.py): `ops`.

A random op's draws cannot be compared with a reference, so its entries take inputs whose draw is
certain (one category of positive weight per row): the registry's tests then check the plumbing
(dtypes, shapes, tracing, mg.jit, vmap's per-sample loop, PyTorch parity). The distributions are
tested in tests/test_multinomial.py.
"""
import numpy as np

from .core import case

_ONE_HOT_ROWS = np.array([[0.0, 0.0, 2.5, 0.0], [0.7, 0.0, 0.0, 0.0]])
_ONE_HOT = np.array([0.0, 0.0, 0.3])

ops = [
    case("multinomial", "replacement_2d", [_ONE_HOT_ROWS], lambda L, p: L.multinomial(p, 3, True),
         lambda p: np.repeat(np.argmax(p, -1)[:, None], 3, axis=1), supports_grad=False, grad_fn=None),
    case("multinomial", "1d", [_ONE_HOT], lambda L, p: L.multinomial(p, 1),
         lambda p: np.argmax(p, -1)[None], supports_grad=False, grad_fn=None),
    case("multinomial", "method", [_ONE_HOT_ROWS], lambda L, p: p.multinomial(2, replacement=True),
         lambda p: np.repeat(np.argmax(p, -1)[:, None], 2, axis=1), supports_grad=False, grad_fn=None),
]
