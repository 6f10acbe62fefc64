"""Helpers shared by the distributions (torch.distributions.utils)."""
import inspect
import numbers

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property"]


def _mg():
    import minigrad
    return minigrad


def broadcast_all(*values):
    """Broadcast the arguments (Tensors or numbers) to one shape; numbers become Tensors of the
    first Tensor's dtype (or the default dtype), as torch.distributions.utils.broadcast_all."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, minigrad.Tensor or "
                         "objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dt = next((v.dtype for v in values if isinstance(v, Tensor)), _dtype.get_default_dtype())
        values = [v if isinstance(v, Tensor) else Tensor(np.asarray(v, dtype=dt)) for v in values]
    return _mg().broadcast_tensors(*values)


def _standard_normal(shape, dtype):
    return _mg().randn(*shape, dtype=dtype) if len(shape) else _mg().randn((), dtype=dtype)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.ndim - dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for binary, softmax over the last dimension otherwise."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def clamp_probs(probs):
    """Clamp probabilities into [eps, 1 - eps] of their dtype."""
    eps = _mg().finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities: log(p) - log1p(-p) for binary, log(p) otherwise (clamped)."""
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


class lazy_property:
    """A property computed on first access and then stored on the instance (as PyTorch's)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with grad_mode.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _inherit_docs(cls, defaults=None):
    """An override without a docstring takes its base's (mean, log_prob, ... are documented once)."""
    for name, value in list(vars(cls).items()):
        if name.startswith("_"):
            continue
        base = next((vars(k)[name] for k in cls.__mro__[1:] if name in vars(k)), None)
        doc = getattr(base, "__doc__", None) if base is not None and not isinstance(base, (int, bool)) else None
        doc = doc or (defaults or {}).get(name)
        if not doc:
            continue
        if isinstance(value, property) and not value.__doc__:
            try:
                value.__doc__ = doc
            except AttributeError:
                setattr(cls, name, type(value)(value.fget, value.fset, value.fdel, doc))
        elif isinstance(value, (staticmethod, classmethod)) and not value.__func__.__doc__:
            value.__func__.__doc__ = doc
        elif inspect.isfunction(value) and not value.__doc__:
            value.__doc__ = doc
