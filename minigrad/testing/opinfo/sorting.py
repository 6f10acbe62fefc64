"""Registry entries of sorting and selection (ops/sorting.py): sort, argsort, msort, topk, kthvalue,
median/nanmedian, mode, unique. Inputs have distinct values (no ties), where these ops are smooth.
"""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, distinct


def _distinct_samples(shapes=((3,), (2, 3), (3, 4))):
    def gen(rng):
        return [SampleInput((distinct(s, rng),)) for s in shapes]
    return gen


def _values(name, mg_fn, np_fn, torch_fn, grad_fn, samples=None, **kw):
    """An op returning (values, indices): the entry checks values (indices are checked in tests/ops/test_sorting.py)."""
    return OpInfo(name, lambda x: mg_fn(x)[0], lambda x: np_fn(x), samples or _distinct_samples(),
                  torch_op=lambda torch, x: torch_fn(torch, x)[0], grad_fn=grad_fn, **kw)


ops = [
    _values("sort", lambda x: mg.sort(x), lambda x: np.sort(x, -1), lambda t, x: t.sort(x), "Sort"),
    _values("sort", lambda x: mg.sort(x, 0, descending=True), lambda x: -np.sort(-x, 0),
            lambda t, x: t.sort(x, 0, descending=True), "Sort", variant="descending"),
    OpInfo("argsort", lambda x: mg.argsort(x), lambda x: np.argsort(x, -1, kind="stable"),
           _distinct_samples(), supports_grad=False, grad_fn=None),
    OpInfo("msort", mg.msort, lambda x: np.sort(x, 0), _distinct_samples(), grad_fn="Sort",
           torch_op=lambda torch, x: torch.sort(x, 0)[0]),
    _values("topk", lambda x: mg.topk(x, 2), lambda x: -np.sort(-x, -1)[..., :2], lambda t, x: t.topk(x, 2), "Topk",
            samples=_distinct_samples(((3,), (2, 3), (3, 4)))),
    _values("kthvalue", lambda x: mg.kthvalue(x, 2), lambda x: np.sort(x, -1)[..., 1], lambda t, x: t.kthvalue(x, 2),
            "Kthvalue"),
    OpInfo("median", mg.median, lambda x: np.sort(x.reshape(-1))[(x.size - 1) // 2], _distinct_samples(),
           grad_fn="Median"),
    _values("median", lambda x: mg.median(x, -1), lambda x: np.sort(x, -1)[..., (x.shape[-1] - 1) // 2],
            lambda t, x: t.median(x, -1), "Median", variant="dim"),
    OpInfo("nanmedian", mg.nanmedian, lambda x: np.sort(x.reshape(-1))[(x.size - 1) // 2], _distinct_samples(),
           grad_fn="Nanmedian"),
    _values("mode", lambda x: mg.mode(x), lambda x: np.sort(x, -1)[..., 0], lambda t, x: t.mode(x), "Mode"),
    OpInfo("unique", mg.unique, np.unique, _distinct_samples(), supports_grad=False, grad_fn=None),
]
