"""The op library: one file per family, one Function per op with its wrapper below it."""
from .elementwise import (  # noqa: F401
    add, sub, mul, div, neg, pow, abs, exp, log, log1p, expm1, sqrt, rsqrt, reciprocal, sin, cos, tan,
    tanh, sigmoid, relu, sign, floor, ceil, round, clamp, clip, maximum, minimum, where, erf, cast,
    floor_divide, remainder, fmod, eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_not,
    logical_xor, isnan, isinf, isfinite, equal, allclose, lerp, addcmul, addcdiv)
from .reduction import (  # noqa: F401
    sum, mean, var, std, prod, max, min, amax, amin, argmax, argmin, any, all, logsumexp, softmax,
    log_softmax, norm, cumsum)
from .shape import (  # noqa: F401
    reshape, view, flatten, unflatten, squeeze, unsqueeze, permute, transpose, swapaxes, t, expand,
    expand_as, broadcast_to, broadcast_tensors, repeat, flip, clone, contiguous, cat, concat,
    concatenate, stack, narrow, split, chunk, unbind, tril, triu)
from .indexing import getitem, setitem, gather, scatter_add, index_select, masked_fill, take_along_dim  # noqa: F401
from .linalg import (  # noqa: F401
    matmul, mm, bmm, dot, outer, einsum, linear, diagonal, diag_embed, diag, trace, tensordot, kron, cross, cdist)
from .inplace import inplace, fill_, copy_, sqrt_, lerp_, addcmul_, addcdiv_  # noqa: F401
from .sorting import sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique  # noqa: F401
