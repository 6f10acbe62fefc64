"""minigrad: a NumPy-backed define-by-run autodiff framework with PyTorch's API.

    import minigrad as mg
    a = mg.tensor(2.0, requires_grad=True)
"""
from ._dtype import (  # noqa: F401
    float16, float32, float64, int8, uint8, int16, int32, int64, bool_, half, float, double, short, int,
    long, get_default_dtype, set_default_dtype)
from ._dtype import bool_ as bool  # noqa: F401,A001
from .tensor import Tensor  # noqa: F401
from .random import Generator, manual_seed, default_generator  # noqa: F401
from .creation import (  # noqa: F401
    tensor, as_tensor, from_numpy, zeros, ones, empty, full, zeros_like, ones_like, empty_like, full_like,
    arange, linspace, eye, rand, randn, randint, randperm, rand_like, randn_like, randint_like)
from .ops import (  # noqa: F401
    add, sub, mul, div, neg, pow, abs, exp, log, log1p, expm1, sqrt, rsqrt, reciprocal, sin, cos, tan,
    tanh, sigmoid, relu, sign, floor, ceil, round, clamp, clip, maximum, minimum, where, erf,
    floor_divide, remainder, fmod, eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_not,
    logical_xor, isnan, isinf, isfinite, equal, allclose, lerp, addcmul, addcdiv,
    sum, mean, var, std, prod, max, min, amax, amin, argmax, argmin, any, all, logsumexp, softmax,
    log_softmax, norm, cumsum,
    reshape, flatten, unflatten, squeeze, unsqueeze, permute, transpose, swapaxes, t, expand,
    broadcast_to, broadcast_tensors, repeat, flip, clone, cat, concat, concatenate, stack, narrow, split,
    chunk, unbind, tril, triu,
    gather, scatter_add, index_select, masked_fill, take_along_dim,
    matmul, mm, bmm, dot, outer, einsum, diagonal, diag_embed, diag, trace, tensordot, kron, cross, cdist,
    sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique)
from . import autograd  # noqa: F401
from .autograd import no_grad, enable_grad, set_grad_enabled, is_grad_enabled  # noqa: F401

__version__ = "0.1.0"
from .serialization import save, load  # noqa: F401,E402
from . import nn, optim, data, linalg, debug  # noqa: F401,E402
from .graph.trace import trace_or_matrix_trace as trace, GraphBreak  # noqa: F401,E402
from .graph.serialize import load_graph  # noqa: F401,E402
from . import onnx  # noqa: F401,E402  (imports the onnx package only when exporting)
from . import viz  # noqa: F401,E402
