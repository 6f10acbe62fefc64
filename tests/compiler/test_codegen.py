"""compile_graph: the generated straight-line NumPy code computes graph.run's and eager's bits, on
traced forward graphs and on whole training steps (optimized or not, with and without the memory
plan), and its source is what runs."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.compiler.codegen import compile_graph
from minigrad.compiler.pipeline import optimize

from _steps import cnn_batchnorm, make, mlp_dropout, same_bits, snapshot

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _outs(r):
    return [t.detach().numpy() for t in (r if isinstance(r, (list, tuple)) else [r])]


def _forward_cases():
    mg.manual_seed(0)
    mlp = mlp_dropout().eval()
    cnn = cnn_batchnorm().eval()
    x = mg.randn(8, 1, 28, 28)
    special = mg.tensor([[-0.0, 0.0, 1.5, -2.25], [np.inf, -np.inf, np.nan, 3e38]])
    return {
        "mlp": (mlp, (x,)),
        "cnn": (cnn, (x,)),
        "elementwise": (lambda a: ((a.exp() * 2.0 - a).tanh() + a.abs().sqrt(), a.sum(1), a.t() @ a), (special,)),
        "softmax": (lambda a: nn.functional.log_softmax(a * 3.0, 1).sum(), (mg.randn(5, 7),)),
    }


@pytest.mark.parametrize("plan", [True, False], ids=["plan", "noplan"])
@pytest.mark.parametrize("optimized", [True, False], ids=["opt", "raw"])
@pytest.mark.parametrize("case", ["mlp", "cnn", "elementwise", "softmax"])
def test_compiled_forward_equals_graph_run_and_eager_bitwise(case, optimized, plan):
    fn, args = _forward_cases()[case]
    g = mg.graph.trace(fn, *args)
    h = optimize(g)[0] if optimized else g
    c = compile_graph(h, plan=plan)
    eager = _outs(fn(*args))
    for _ in range(2):  # the second call reuses the buffers
        compiled = _outs(c(*args))
        assert all(same_bits(a, b) for a, b in zip(eager, _outs(g(*args))))
        assert len(compiled) == len(eager) and all(same_bits(a, b) for a, b in zip(eager, compiled))


CONFIGS = {
    "mlp_dropout_sgd_momentum": (mlp_dropout, lambda p: mg.optim.SGD(p, lr=0.05, momentum=0.9)),
    "mlp_dropout_adam": (mlp_dropout, lambda p: mg.optim.Adam(p, lr=1e-3)),
    "cnn_batchnorm_sgd": (cnn_batchnorm, lambda p: mg.optim.SGD(p, lr=0.02, momentum=0.9)),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_compiled_training_step_equals_eager_bitwise(name):
    steps = 12
    build, make_opt = CONFIGS[name]
    m1, opt1, step1, x, y = make(build, make_opt)
    m2, opt2, step2, _, _ = make(build, make_opt)
    mg.manual_seed(5)
    l1 = [step1(x, y).item() for _ in range(steps)]
    mg.manual_seed(5)
    g = mg.graph.trace(step2, x, y)
    c = compile_graph(optimize(g)[0])
    l2 = [g.result.item()] + [c(x, y).item() for _ in range(steps - 1)]
    assert l1 == l2
    for (k, a), (_, b) in zip(snapshot(m1, opt1), snapshot(m2, opt2)):
        assert same_bits(a, b), k  # parameters, gradients, momentum/Adam state, BatchNorm statistics
    m2.train(False)  # still usable from eager code
    assert m2(x).shape == (16, 10)


def test_code_is_viewable_and_is_what_runs():
    fn, args = _forward_cases()["elementwise"]
    g = optimize(mg.graph.trace(fn, *args))[0]
    c = compile_graph(g)
    assert c.code.startswith("def compiled(_in, _st, _objs, _B):")
    assert "out=_B[0]" in c.code and "# exp" in c.code and "test_codegen.py" in c.code
    assert "del v_" in c.code  # values are dropped after their last read
    assert "plan" not in repr(compile_graph(g, plan=False)) or "None" in repr(compile_graph(g, plan=False))
    assert "out=_B" not in compile_graph(g, plan=False).code


def test_outputs_are_the_callers_and_a_constant_output_is_copied():
    g = mg.graph.trace(lambda a: ((a * 2.0).exp(), mg.ones(3)), mg.randn(3))
    c = compile_graph(g)
    a1, k1 = c(mg.randn(3))
    a1_bits, k1.numpy()[:] = a1.numpy().copy(), 5.0
    a2, k2 = c(mg.randn(3))
    assert same_bits(a1.numpy(), a1_bits)            # the next call did not write into my result
    assert np.array_equal(k2.numpy(), np.ones(3))    # writing my result did not change the constant


def test_wrong_argument_names_the_argument_and_shapes():
    def f(inp):
        return inp * 2.0
    c = compile_graph(mg.graph.trace(f, mg.randn(3)))
    with pytest.raises(TypeError, match=r"argument 'inp' has shape \(4,\).*compiled for \(3,\)"):
        c(mg.randn(4))
    with pytest.raises(TypeError, match="expected 1 tensor arguments"):
        c()
