"""Constraints: the sets a distribution's parameters and samples live in, as torch.distributions.constraints.

Each constraint's ``check(value)`` returns a bool Tensor of the batch shape (event dimensions reduced),
which ``validate_args`` reads; ``is_discrete`` and ``event_dim`` say what kind of set it is.
"""
import numpy as np

from ..tensor import Tensor
from .utils import _inherit_docs

__all__ = ["Constraint", "boolean", "cat", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval",
           "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "nonnegative",
           "nonnegative_integer", "one_hot", "positive", "positive_semidefinite", "positive_definite",
           "positive_integer", "real", "real_vector", "simplex", "square", "stack", "symmetric",
           "unit_interval"]


def _np(value):
    return value.detach().numpy() if isinstance(value, Tensor) else np.asarray(value)


def _out(a):
    return Tensor(np.asarray(a, dtype=bool))


class Constraint:
    """A region over which a variable is valid, as torch.distributions.constraints.Constraint.

    ``check(value)`` says elementwise (over the batch) whether ``value`` lies in the region.
    """
    is_discrete = False
    event_dim = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _inherit_docs(cls, {"is_discrete": "Whether the constrained space is discrete.",
                            "event_dim": "The number of rightmost dimensions that form one event."})

    def check(self, value):
        """A bool Tensor: whether each event of ``value`` satisfies the constraint."""
        return _out(self._check(_np(value)))

    def _check(self, v):
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a variable whose support depends on other variables: not checked."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a dependent constraint (one that validation skips)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose value is a dependent constraint (``support`` of Uniform, Binomial)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        if fn is not None and fn.__doc__:
            self.__doc__ = fn.__doc__
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """Reinterprets ``reinterpreted_batch_ndims`` batch dimensions of a constraint as event dimensions."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def _check(self, v):
        result = self.base_constraint._check(v)
        if result.ndim < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {v.ndim}")
        n = self.reinterpreted_batch_ndims
        return result.reshape(result.shape[:result.ndim - n] + (-1,)).all(-1) if n else result

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def _check(self, v):
        return (v == 0) | (v == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def _check(self, v):
        return ((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _check(self, v):
        return (v % 1 == 0) & (_np(self.lower_bound) <= v) & (v <= _np(self.upper_bound))

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def _check(self, v):
        return (v % 1 == 0) & (v >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def _check(self, v):
        return v == v       # False only for nan


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def _check(self, v):
        return _np(self.lower_bound) < v

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def _check(self, v):
        return _np(self.lower_bound) <= v

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def _check(self, v):
        return v < _np(self.upper_bound)

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _check(self, v):
        return (_np(self.lower_bound) <= v) & (v <= _np(self.upper_bound))

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _check(self, v):
        return (_np(self.lower_bound) <= v) & (v < _np(self.upper_bound))

    def __repr__(self):
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def _check(self, v):
        return (v >= 0).all(-1) & (np.abs(v.sum(-1) - 1) < 1e-6)


class _LowerTriangular(Constraint):
    event_dim = 2

    def _check(self, v):
        return (np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).min(-1).astype(bool)


class _LowerCholesky(Constraint):
    event_dim = 2

    def _check(self, v):
        lower = (np.tril(v) == v).reshape(v.shape[:-2] + (-1,)).min(-1).astype(bool)
        return lower & (np.diagonal(v, axis1=-2, axis2=-1) > 0).min(-1).astype(bool)


class _Square(Constraint):
    event_dim = 2

    def _check(self, v):
        return np.full(v.shape[:-2], v.shape[-2] == v.shape[-1], dtype=bool)


class _Symmetric(_Square):
    def _check(self, v):
        sq = super()._check(v)
        if not sq.all():
            return sq
        return np.isclose(v, np.swapaxes(v, -1, -2), atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def _check(self, v):
        sym = super()._check(v)
        if not sym.all():
            return sym
        return (np.linalg.eigvalsh(v) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def _check(self, v):
        sym = super()._check(v)
        if not sym.all():
            return sym
        return (np.linalg.eigvalsh(v) > 0).all(-1)


class _Cat(Constraint):
    """Applies a sequence of constraints to pieces of ``dim`` of sizes ``lengths``."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def _check(self, v):
        parts, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            parts.append(c._check(np.take(v, range(start, start + n), axis=self.dim)))
            start += n
        return np.concatenate(parts, self.dim)


class _Stack(Constraint):
    """Applies a sequence of constraints to the slices of ``dim``."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq) + (1 if self.dim < 0 else 0)

    def _check(self, v):
        return np.stack([c._check(np.take(v, i, axis=self.dim)) for i, c in enumerate(self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack


for _cls, _doc in [(_Boolean, "Values 0 or 1."), (_OneHot, "One-hot vectors: 0s and a single 1 in the last dimension."),
                   (_IntegerInterval, "Integers in [lower_bound, upper_bound]."),
                   (_IntegerGreaterThan, "Integers >= lower_bound."), (_Real, "The real line (anything but nan)."),
                   (_GreaterThan, "Reals > lower_bound."), (_GreaterThanEq, "Reals >= lower_bound."),
                   (_LessThan, "Reals < upper_bound."), (_Interval, "Reals in [lower_bound, upper_bound]."),
                   (_HalfOpenInterval, "Reals in [lower_bound, upper_bound)."),
                   (_Simplex, "Non-negative vectors that sum to 1 over the last dimension."),
                   (_LowerTriangular, "Lower-triangular square matrices."),
                   (_LowerCholesky, "Lower-triangular matrices with a positive diagonal."),
                   (_Square, "Square matrices."), (_Symmetric, "Symmetric matrices."),
                   (_PositiveSemidefinite, "Positive semi-definite symmetric matrices."),
                   (_PositiveDefinite, "Positive-definite symmetric matrices.")]:
    _cls.__doc__ = _doc
