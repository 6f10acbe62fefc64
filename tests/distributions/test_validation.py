"""validate_args: bad parameters and values outside the support raise ValueError naming the parameter
(or value) and the distribution, as PyTorch; validate_args=False turns the checks off."""
import re

import numpy as np
import pytest

import minigrad as mg
import minigrad.distributions as D


@pytest.mark.parametrize("make, param, constraint", [
    (lambda: D.Normal(mg.tensor([0.0]), mg.tensor([-1.0])), "scale", "GreaterThan(lower_bound=0.0)"),
    (lambda: D.Normal(mg.tensor([float("nan")]), mg.tensor([1.0])), "loc", "Real()"),
    (lambda: D.Bernoulli(probs=mg.tensor([1.5])), "probs", "Interval(lower_bound=0.0, upper_bound=1.0)"),
    (lambda: D.Categorical(probs=mg.tensor([[0.5, -0.1, 0.6]])), "probs", "Simplex()"),
    (lambda: D.Uniform(mg.tensor([2.0]), mg.tensor([1.0])), "low", "LessThan"),
    (lambda: D.Gamma(mg.tensor([0.0]), mg.tensor([1.0])), "concentration", "GreaterThan"),
    # Beta builds its Dirichlet first, which raises (as PyTorch's)
    (lambda: D.Beta(mg.tensor([1.0]), mg.tensor([-2.0])), "concentration", "IndependentConstraint(GreaterThan"),
    (lambda: D.Dirichlet(mg.tensor([1.0, -1.0])), "concentration", "IndependentConstraint"),
    (lambda: D.Poisson(mg.tensor([-1.0])), "rate", "GreaterThanEq"),
    (lambda: D.Binomial(mg.tensor([2.5]), probs=mg.tensor([0.5])), "total_count", "IntegerGreaterThan"),
    (lambda: D.StudentT(mg.tensor([-1.0])), "df", "GreaterThan"),
    (lambda: D.MultivariateNormal(mg.zeros(2), covariance_matrix=mg.tensor([[1.0, 2.0], [2.0, 1.0]])),
     "covariance_matrix", "PositiveDefinite()"),
    (lambda: D.MultivariateNormal(mg.zeros(2), scale_tril=mg.tensor([[1.0, 1.0], [0.0, 1.0]])),
     "scale_tril", "LowerCholesky()"),
    (lambda: D.LowRankMultivariateNormal(mg.zeros(2), mg.ones(2, 1), mg.tensor([1.0, 0.0])), "cov_diag",
     "IndependentConstraint"),
])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # LowRank: the capacitance of a zero diagonal, before the check
def test_bad_parameters_raise(make, param, constraint):
    with pytest.raises(ValueError, match=f"Expected parameter {param} .* of distribution .* to satisfy the "
                                         f"constraint {re.escape(constraint)}"):
        make()


def test_the_message_names_the_distribution_and_values():
    with pytest.raises(ValueError) as e:
        D.Normal(mg.tensor([0.0, 1.0]), mg.tensor([1.0, -2.0]))
    msg = str(e.value)
    assert msg.startswith("Expected parameter scale (Tensor of shape (2,)) of distribution Normal(loc: ")
    assert "but found invalid values:\ntensor([ 1., -2.])" in msg


@pytest.mark.parametrize("make, value, support", [
    (lambda **kw: D.Exponential(mg.tensor([1.0]), **kw), [-1.0], "GreaterThanEq"),
    (lambda **kw: D.Bernoulli(mg.tensor([0.3]), **kw), [0.5], "Boolean()"),
    (lambda **kw: D.Categorical(mg.tensor([0.3, 0.7]), **kw), [-1], "IntegerInterval"),
    (lambda **kw: D.Beta(mg.tensor([2.0]), mg.tensor([2.0]), **kw), [1.5], "Interval"),
    (lambda **kw: D.Poisson(mg.tensor([2.0]), **kw), [1.5], "IntegerGreaterThan"),
    (lambda **kw: D.Dirichlet(mg.tensor([1.0, 2.0]), **kw), [0.3, 0.3], "Simplex()"),
    (lambda **kw: D.Uniform(mg.tensor([0.0]), mg.tensor([1.0]), **kw), [1.5], "Interval"),
    (lambda **kw: D.LogNormal(mg.tensor([0.0]), mg.tensor([1.0]), **kw), [-0.5], "GreaterThan"),
])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # unchecked: log(0) and log of a negative number
def test_values_outside_the_support_raise(make, value, support):
    v = mg.tensor(np.asarray(value))
    expected = f"Expected value argument .* to be within the support \\({re.escape(support)}"
    with pytest.raises(ValueError, match=expected):
        make().log_prob(v)
    make(validate_args=False).log_prob(v)      # no check: PyTorch's formula, whatever it gives there


def test_shape_errors():
    d = D.MultivariateNormal(mg.zeros(3), covariance_matrix=mg.eye(3))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        d.log_prob(mg.zeros(2))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape\\+event_shape"):
        D.Normal(mg.zeros(3), mg.ones(3)).log_prob(mg.zeros(2))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both"):
        D.Bernoulli(probs=mg.tensor(0.5), logits=mg.tensor(0.0))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        D.Categorical()
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(mg.zeros(2))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        D.MultivariateNormal(mg.tensor(0.0), covariance_matrix=mg.eye(1))
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 3 x m"):
        D.LowRankMultivariateNormal(mg.zeros(3), mg.ones(2, 1), mg.ones(3))
    with pytest.raises(ValueError, match="Expected reinterpreted_batch_ndims <= len"):
        D.Independent(D.Normal(mg.zeros(3), mg.ones(3)), 2)
    with pytest.raises(ValueError, match="needs to be an instance of minigrad.distributions.Categorical"):
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(mg.zeros(2), mg.ones(2)))
    with pytest.raises(ValueError, match="`mixture_distribution component` \\(3\\) does not equal"):
        D.MixtureSameFamily(D.Categorical(mg.ones(3)), D.Normal(mg.zeros(2), mg.ones(2)))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count not supported by `entropy`"):
        D.Binomial(mg.tensor([2.0, 3.0]), probs=mg.tensor([0.5, 0.5])).entropy()


def test_validation_can_be_turned_off():
    D.Normal(mg.tensor([0.0]), mg.tensor([-1.0]), validate_args=False)
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(mg.tensor([0.0]), mg.tensor([-1.0]))
        D.Exponential(mg.tensor([1.0])).log_prob(mg.tensor([-1.0]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(mg.tensor([0.0]), mg.tensor([-1.0]))
