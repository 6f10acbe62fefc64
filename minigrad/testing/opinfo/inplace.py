"""Registry entries of the casts and in-place kernels (ops/inplace.py; the Tensor methods to(), fill_(),
copy_(), add_() ...).
"""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, sample, samples, unary_samples


def _inplace_add(x, y):
    from minigrad.ops import inplace
    return inplace(x * 1.0, mg.add, y, name="add_")  # x * 1.0: in place on a non-leaf, as add_ needs


ops = [
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
