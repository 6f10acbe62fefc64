"""Each graph pass on traced and hand-built graphs: what it must rewrite, what it must NOT rewrite,
that the optimized graph computes the same bits, and that each pass reports what it changed."""
import numpy as np
import pytest

import minigrad as mg
from helpers import train_step
from minigrad import nn
from minigrad.compiler.pipeline import format_reports, optimize
from minigrad.compiler.passes.cse import eliminate_common_subexpressions as cse
from minigrad.compiler.passes.dce import eliminate_dead_code as dce
from minigrad.compiler.passes.fold import fold_constants as fold
from minigrad.compiler.passes.simplify import simplify
from minigrad.graph import Eqn, Graph, Var

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf/nan inputs on purpose

SPECIAL = np.array([[-0.0, 0.0, 1.5, -2.25], [np.inf, -np.inf, np.nan, 3e38], [1e-45, -1e-45, 7.0, -0.0]],
                   dtype=np.float32)


def bits(t):
    a = t.detach().numpy() if isinstance(t, mg.Tensor) else np.asarray(t)
    return a.dtype, a.shape, a.tobytes()


def same_bits(a, b):
    a = a if isinstance(a, (list, tuple)) else [a]
    b = b if isinstance(b, (list, tuple)) else [b]
    return len(a) == len(b) and all(bits(x) == bits(y) for x, y in zip(a, b))


def prims(g):
    return [e.prim for e in g.eqns]


# -- constant folding ---------------------------------------------------------------------------

def test_fold_runs_constant_work_once_and_keeps_the_bits():
    w = mg.randn(4, 3)
    g = mg.graph.trace(lambda x: x @ (w * 2.0).exp().t(), mg.randn(2, 3), constants=[w])
    h = fold(g)
    assert prims(g) == ["mul", "exp", "permute", "matmul"]
    assert prims(h) == ["permute", "matmul"]  # a view stays: baked, it would be a contiguous copy
    assert "folded 2 equations" in h.pass_details
    x = mg.randn(2, 3)
    assert same_bits(g(x), h(x))
    assert len(g.eqns) == 4  # the input graph is not changed


def test_fold_leaves_named_inputs_random_draws_and_written_values_alone():
    w = mg.randn(3)  # state: read at each run, so never folded
    g = mg.graph.trace(lambda x: x * w.exp(), mg.randn(3))
    assert prims(fold(g)) == prims(g)
    g = mg.graph.trace(lambda x: x * mg.rand(3), mg.randn(3))  # a draw: its inputs are constants only
    assert prims(fold(g)) == prims(g)

    def f(x):
        z = mg.zeros(3) * 1.0  # computed from constants, then written in place
        z.add_(x)
        return z * 2.0
    g = mg.graph.trace(f, mg.randn(3))
    h = fold(g)
    assert "mul" in prims(h) and h.pass_details == "folded 0 equations"
    x = mg.randn(3)
    assert same_bits(g(x), h(x)) and same_bits(h(x), h(x))  # the second run starts from zeros again


class Counted(mg.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        Counted.calls += 1
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_a_users_function_is_never_folded_merged_or_dropped():
    c = mg.ones(3)
    g = mg.graph.trace(lambda x: (Counted.apply(c), Counted.apply(c), x + 1), mg.randn(3), constants=[c])
    h, _ = optimize(g)
    Counted.calls = 0
    h(mg.randn(3))
    assert Counted.calls == 2


# -- dead-code elimination --------------------------------------------------------------------

def test_dce_removes_unused_work_and_constants():
    def f(x):
        unused = (x * 3.0).exp()  # noqa: F841
        return x + 1.0
    g = mg.graph.trace(f, mg.randn(3))
    h = dce(g)
    assert prims(h) == ["add"] and len(h.consts) == 1
    assert "removed 2 equations, 1 constants" == h.pass_details


def test_dce_keeps_effects_and_random_draws():
    state = mg.zeros(3)

    def f(x):
        state.add_(x)                                 # an effect nobody reads afterwards
        nn.functional.dropout(x, 0.5)                 # unused, but it moves the generator
        return nn.functional.dropout(x, 0.5)
    x = mg.ones(3, 50)
    state = mg.zeros(3, 50)
    g = mg.graph.trace(f, x)
    h = dce(g)
    assert h.count()["dropout_mask"] == 2 and h.count()["assign"] == 1
    mg.manual_seed(3)
    a = g(x)
    mg.manual_seed(3)
    b = h(x)
    assert same_bits(a, b)


def test_dce_keeps_the_whole_training_step():
    m, opt, step, x, y = _mlp_step()
    g = mg.graph.trace(step, x, y)
    assert len(dce(g).eqns) == len(g.eqns)


# -- common-subexpression elimination ----------------------------------------------------------

def test_cse_merges_the_same_op_on_the_same_inputs():
    g = mg.graph.trace(lambda x: (x.exp() + x.exp()) * (x.t() @ x.t()), mg.randn(3, 3))
    h = cse(g)
    assert h.count()["exp"] == 1 and h.count()["permute"] == 1
    assert h.pass_details == "merged 2 equations"
    x = mg.randn(3, 3)
    assert same_bits(g(x), h(x))


def test_cse_tells_static_parameters_apart_including_the_sign_of_zero():
    g = mg.graph.trace(lambda x: (x + 0.0) * (x + (-0.0)) * (x + 0.0) * x.sum(0) * x.sum(1), mg.randn(3, 3))
    h = cse(g)
    assert h.count()["add"] == 2 and h.count()["sum"] == 2 and h.pass_details == "merged 1 equations"
    assert same_bits(g(mg.tensor(SPECIAL[:3, :3])), h(mg.tensor(SPECIAL[:3, :3])))


def test_cse_never_merges_random_draws():
    g = mg.graph.trace(lambda x: nn.functional.dropout(x, 0.5) + nn.functional.dropout(x, 0.5), mg.ones(4, 4))
    assert cse(g).count()["dropout_mask"] == 2


def test_cse_never_merges_across_a_write_or_a_value_that_is_written():
    def f(x):
        a = x * 2.0
        x.add_(1.0)                 # x's memory changes: x * 2.0 after it is a new value
        b = x * 2.0
        u = x * 3.0
        w = x * 3.0
        u.add_(1.0)                 # u is written: w must stay its own array
        return a, b, u, w
    x0 = mg.randn(4)
    g = mg.graph.trace(f, x0.clone())
    h = cse(g)
    assert h.count()["mul"] == g.count()["mul"] == 4
    assert same_bits(g(x0.clone()), h(x0.clone()))


def test_cse_keeps_two_outputs_two_arrays():
    g = mg.graph.trace(lambda x: (x.exp(), x.exp()), mg.randn(3))
    h = cse(g)
    a, b = h(mg.randn(3))
    assert h.count()["exp"] == 2 and not np.shares_memory(a.numpy(), b.numpy())


# -- algebraic simplification ------------------------------------------------------------------

def _simplified(fn, *args):
    """fn's graph before and after simplify + dce; both run on SPECIAL values must agree bitwise."""
    wrapped = (lambda *a: fn(*a) * 1.0)  # the result is not a graph output itself
    g = mg.graph.trace(wrapped, *args)
    h = dce(simplify(g))
    assert same_bits(g(*args), h(*args))
    return g, h


@pytest.mark.parametrize("fn", [lambda x: x * 1, lambda x: 1.0 * x, lambda x: x / 1, lambda x: x + (-0.0),
                                lambda x: x - 0.0, lambda x: x - 0, lambda x: -(-x),
                                lambda x: x.reshape(3, 4), lambda x: x.expand(3, 4), lambda x: x.t().t(),
                                lambda x: x.permute(1, 0).permute(1, 0)],
                         ids=["x*1", "1*x", "x/1", "x+-0", "x-0.0", "x-0", "negneg", "reshape", "expand",
                              "tt", "permute2"])
def test_identities_are_removed_and_keep_the_bits(fn):
    x = mg.tensor(SPECIAL)
    g, h = _simplified(fn, x)
    assert len(h.eqns) == 1 and len(h.eqns) < len(g.eqns)  # only the final `* 1.0` is left... on x
    assert h.eqns[0].invars[0].name == "a"


@pytest.mark.parametrize("fn", [lambda x: x + 0, lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x - (-0.0),
                                lambda x: x * 0, lambda x: x - x, lambda x: x * 2.0 / 2.0,
                                lambda x: x.expand(4, 3, 4).sum(0)],
                         ids=["x+0", "x+0.0", "0.0+x", "x--0", "x*0", "x-x", "reassociate", "sum4copies"])
def test_what_would_change_ieee_results_is_not_rewritten(fn):
    x = mg.tensor(SPECIAL)
    g, h = _simplified(fn, x)
    assert prims(g) == prims(h)


def test_integer_zero_is_an_identity_for_integers_only():
    i = mg.tensor([[-3, 0, 5]])
    g, h = _simplified(lambda x: x + 0, i)
    assert "add" in prims(g) and "add" not in prims(h)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes,fn", [
    (((5, 7), (5, 3)), lambda a, b: a.t() @ b),
    (((7, 5), (3, 5)), lambda a, b: a @ b.t()),
    (((5, 7), (3, 5)), lambda a, b: a.t() @ b.t()),
    (((2, 6, 4), (2, 6, 3)), lambda a, b: a.transpose(1, 2) @ b),
    (((64, 33), (64, 17)), lambda a, b: mg.matmul(a.transpose(0, 1), b)),
], ids=["tx", "ty", "txty", "batched", "big"])
def test_transpose_folded_into_matmul_is_bitwise_the_same(shapes, fn, dtype):
    rng = np.random.default_rng(0)
    a, b = (mg.tensor(rng.standard_normal(s).astype(dtype)) for s in shapes)
    g, h = _simplified(fn, a, b)
    assert "matmul_t" in prims(h) and "permute" not in prims(h)
    assert same_bits(fn(a, b) * 1.0, h(a, b))  # eager, too


@pytest.mark.parametrize("fn,k", [(lambda x: x.expand(2, 3, 4).sum(0), 2),
                                  (lambda x: x.reshape(3, 1, 4).expand(3, 2, 4).sum(1, keepdim=True).reshape(3, 4), 2),
                                  (lambda x: x.expand(1, 3, 4).sum(0), 1)], ids=["k2", "k2keep", "k1"])
def test_broadcast_then_sum_pairs(fn, k):
    x = mg.tensor(SPECIAL)
    g, h = _simplified(fn, x)
    assert "sum" not in prims(h) and "expand" not in prims(h)
    assert same_bits(fn(x) * 1.0, h(x))


def test_simplify_never_makes_an_output_share_an_input():
    g = mg.graph.trace(lambda x: x * 1, mg.randn(3))
    h = simplify(g)
    assert prims(h) == ["mul"]
    x = mg.randn(3)
    assert not np.shares_memory(h(x).numpy(), x.numpy())


def test_simplify_respects_writes():
    def written_value(x):
        y = x * 1
        y.add_(1.0)        # writes y: as x, it would write the caller's input
        return y * 1.0

    def written_input(x):
        y = x * 1
        x.add_(1.0)        # y keeps the old value
        return y * 1.0, x * 1.0
    for f in (written_value, written_input):
        x0 = mg.randn(3)
        g = mg.graph.trace(f, x0.clone())
        h = simplify(g)
        assert h.pass_details == "0 rewrites", f.__name__
        x1, x2 = x0.clone(), x0.clone()
        assert same_bits(g(x1), h(x2)) and same_bits(x1, x2)


# -- the pipeline and the reports --------------------------------------------------------------

def _mlp_step(momentum=0.9, make_opt=None):
    mg.manual_seed(1)
    m = nn.Sequential(nn.Flatten(), nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 5))
    opt = (make_opt or (lambda p: mg.optim.SGD(p, lr=0.1, momentum=momentum)))(m.parameters())
    x, y = mg.randn(8, 16), mg.randint(0, 5, (8,))
    step = train_step(m, opt)
    step(x, y)  # the first step makes the momentum buffers
    return m, opt, step, x, y


def test_optimized_training_step_equals_eager_bitwise_and_keeps_effects_in_order():
    m1, opt1, step1, x, y = _mlp_step()
    m2, opt2, step2, _, _ = _mlp_step()
    g = mg.graph.trace(step2, x, y)
    step1(x, y)
    h, reports = optimize(g)
    assert [(e.prim, e.target) for e in h.effects] == [(e.prim, e.target) for e in g.effects]
    assert len(h.eqns) < len(g.eqns)
    for _ in range(5):
        assert same_bits(step1(x, y), h(x, y))
    for (k, a), (_, b) in zip(m1.state_dict().items(), m2.state_dict().items()):
        assert same_bits(a, b), k


def test_every_pass_reports_equations_and_bytes_before_and_after():
    # RMSprop's step is traced tensor by tensor (SGD's and Adam's are one fused op): the hyper-parameter
    # casts it repeats per parameter give CSE something to merge
    m, opt, step, x, y = _mlp_step(make_opt=lambda p: mg.optim.RMSprop(p, lr=0.01, momentum=0.9))
    g = mg.graph.trace(step, x, y)
    h, reports = optimize(g)
    assert [r.name for r in reports] == ["fold", "dce", "cse", "simplify", "dce"]
    assert reports[0].before["eqns"] == len(g.eqns) and reports[-1].after["eqns"] == len(h.eqns)
    for a, b in zip(reports, reports[1:]):
        assert a.after == b.before
    cse_r = reports[2]
    assert cse_r.changed and cse_r.after["eqns"] < cse_r.before["eqns"]
    assert cse_r.after["bytes"] < cse_r.before["bytes"] and cse_r.details.startswith("merged")
    table = format_reports(reports)
    assert table.splitlines()[0].split()[:3] == ["pass", "eqns", "intermediate"]
    assert f"{cse_r.before['eqns']} -> {cse_r.after['eqns']}" in table
    with pytest.raises(ValueError, match="unknown pass 'nope'"):
        optimize(g, ["nope"])
    h2, r2 = optimize(g, ["cse"])
    assert [r.name for r in r2] == ["cse"]


def test_passes_on_a_hand_built_graph():
    from minigrad.ops.elementwise import Add, Exp, Mul
    a, c = Var("a", (3,), np.float32), Var("c", (), np.float32)
    b1, b2, d, e, f = (Var(n, (3,), np.float32) for n in ("b1", "b2", "d", "e", "f"))
    eqns = [Eqn("exp", Exp, [a], [b1]), Eqn("exp", Exp, [a], [b2]),      # a common subexpression
            Eqn("mul", Mul, [b2, c], [d]),                                 # c == 1: an identity
            Eqn("add", Add, [b1, d], [e]), Eqn("exp", Exp, [e], [f])]      # f: dead
    g = Graph([a], [], [(c, np.array(1.0, np.float32))], eqns, [e], ("t", 0))
    h, reports = optimize(g)
    assert [str(x) for x in h.eqns] == ["b1:f32[3] = exp a", "e:f32[3] = add b1 b1"]
    x = np.array([-0.0, 1.0, np.nan], np.float32)
    assert same_bits(g(x), h(x))


def test_fold_does_not_bake_a_broadcast_into_a_big_array():
    x = mg.randn(100_000, requires_grad=True)

    def step():
        x.grad = None
        (x * 2.0).sum().backward()   # the seed 1.0 expanded to x's shape: a view, not 400 kB
        return x.grad * 1.0
    g = mg.graph.trace(step)
    h = fold(g)
    assert "expand" in prims(h) and all(a.size < 100 for _, a in h.consts)
    assert same_bits(g(), h())
