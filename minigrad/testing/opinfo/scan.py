"""Registry entries of the scans (ops/scan.py): cumprod, cummax/cummin, logcumsumexp and their
method and in-place forms (cumsum is a reduction: minigrad/testing/opinfo/reduction.py).
"""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, _inplace_form, distinct, nonzero, sample


def _np_scan(fn):
    def ref(x, d):
        return fn(x.reshape(1) if x.ndim == 0 else x, axis=d if x.ndim else 0).reshape(x.shape)
    return ref


_SCAN_DIMS = [((3,), 0), ((2, 3), 1), ((2, 3), 0), ((2, 3, 4), -2), ((), 0), ((0, 2), 1)]


def _scan_samples(sampler, extra=(), empty=True):
    def gen(rng):
        return [SampleInput((sampler(s, rng), d)) for s, d in _SCAN_DIMS if empty or 0 not in s] + list(extra)
    return gen


_CUMPROD_ZEROS = [SampleInput((np.array([2.0, 0.0, 3.0, 0.5]), 0), name="one_zero"),
                  SampleInput((np.array([[0.0, 1.5, 0.0, 2.0], [1.0, -2.0, 0.0, 3.0]]), 1), name="zeros"),
                  SampleInput((np.array([[0.0, 2.0], [3.0, 0.0]]), 0), name="zeros_dim0")]


def _cum_extreme_ref(ufunc):
    def ref(x, d):
        xs = x.reshape(1) if x.ndim == 0 else x
        xm = np.moveaxis(xs, d, -1)
        out = ufunc.accumulate(xm, axis=-1)
        pos = np.broadcast_to(np.arange(xm.shape[-1]), xm.shape)
        idx = np.maximum.accumulate(np.where(xm == out, pos, -1), axis=-1)
        return np.moveaxis(out, -1, d).reshape(x.shape), np.moveaxis(idx, -1, d).reshape(x.shape)
    return ref


_CUM_TIES = [SampleInput((np.array([[1.0, 3.0, 3.0, 2.0, 5.0], [2.0, 2.0, 0.0, 2.0, -1.0]]), 1), name="ties",
                         kink=True)]

ops = [
    OpInfo("cumprod", mg.cumprod, _np_scan(np.cumprod), _scan_samples(nonzero, _CUMPROD_ZEROS)),
    OpInfo("cumprod", lambda x, d: x.cumprod(d), _np_scan(np.cumprod), _scan_samples(nonzero, _CUMPROD_ZEROS[1:2]),
           variant="method", torch_op=lambda torch, x, d: x.cumprod(d)),
    OpInfo("cumprod", lambda x, d: _inplace_form("cumprod_")(x, d), _np_scan(np.cumprod),
           _scan_samples(nonzero), variant="inplace", torch_op=lambda torch, x, d: x.clone().cumprod_(d),
           aliases=("cumprod_",), grad_fn=None),
    # no empty sample for cummax/cummin: PyTorch's gradient of an empty input requires grad (a quirk)
    OpInfo("cummax", mg.cummax, _cum_extreme_ref(np.maximum), _scan_samples(distinct, _CUM_TIES, empty=False)),
    OpInfo("cummin", mg.cummin, _cum_extreme_ref(np.minimum), _scan_samples(distinct, _CUM_TIES, empty=False)),
    OpInfo("cummax", lambda x, d: x.cummax(d), _cum_extreme_ref(np.maximum), _scan_samples(distinct, empty=False),
           variant="method", torch_op=lambda torch, x, d: x.cummax(d), grad_fn="Cummax"),
    OpInfo("logcumsumexp", mg.logcumsumexp, _np_scan(np.logaddexp.accumulate), _scan_samples(sample, [
        SampleInput((np.array([800.0, -800.0, 1e4, 3.0]), 0), name="huge")])),
    OpInfo("logcumsumexp", lambda x, d: x.logcumsumexp(d), _np_scan(np.logaddexp.accumulate),
           _scan_samples(sample), variant="method", torch_op=lambda torch, x, d: x.logcumsumexp(d)),
]
