"""Random ops stay random in traces: mg.rand, randn, randint, randperm and the *_like forms become
equations drawing from a generator input when the graph runs, consuming it exactly as eager does."""
import numpy as np
import pytest

import minigrad as mg

DRAWS = {
    "rand": (lambda x: x + mg.rand(2, 3), "rand"),
    "rand_f64": (lambda x: x + mg.rand(2, 3, dtype=mg.float64), "rand"),
    "randn": (lambda x: x * mg.randn(2, 3), "randn"),
    "randn_tuple": (lambda x: x * mg.randn((2, 3)), "randn"),
    "rand_like": (lambda x: mg.rand_like(x) - x, "rand"),
    "randn_like": (lambda x: mg.randn_like(x) + x, "randn"),
    "randint": (lambda x: x + mg.randint(0, 10, (2, 3)), "randint"),
    "randint_high_only": (lambda x: x + mg.randint(7, (2, 3)), "randint"),
    "randint_like": (lambda x: x + mg.randint_like(x, 3, 9), "randint"),
    "randperm": (lambda x: x[:, mg.randperm(3)], "randperm"),
    "two_draws": (lambda x: x + mg.randn(2, 3) * mg.rand(3), "randn"),
}


def _np(t):
    return t.numpy()


@pytest.mark.parametrize("name", DRAWS)
def test_traced_draw_repeats_eagers_draws(name):
    fn, prim = DRAWS[name]
    x = mg.arange(6.0).reshape(2, 3)
    g = mg.graph.trace(fn, x)
    assert prim in g.count(), str(g)
    assert [b.kind for _, b in g.state] == ["generator"], str(g)
    assert not any(a.shape == (2, 3) for _, a in g.consts), "a draw was baked in as a constant"
    mg.manual_seed(7)
    want = [_np(fn(x)), _np(fn(x))]
    after_eager = mg.default_generator.get_state()
    mg.manual_seed(7)
    got = [_np(g(x)), _np(g(x))]
    assert not np.array_equal(want[0], want[1])  # two draws, not one value twice
    for w, o in zip(want, got):
        assert w.dtype == o.dtype and np.array_equal(w, o)
    # the generator was consumed exactly as eager consumed it
    assert mg.default_generator.get_state() == after_eager


def test_trace_itself_draws_like_eager():
    mg.manual_seed(3)
    eager = _np(mg.randn(4))
    mg.manual_seed(3)
    g = mg.graph.trace(lambda: mg.randn(4))
    assert np.array_equal(_np(g.result), eager)


def test_user_generator_is_a_named_input_and_the_default_is_untouched():
    gen = mg.Generator().manual_seed(11)
    fn = lambda x: x + mg.randn(5, generator=gen)  # noqa: E731
    x = mg.zeros(5)
    g = mg.graph.trace(fn, x)
    [(v, b)] = g.state
    assert b.kind == "generator" and b.obj is gen and b.name == "gen"
    gen.manual_seed(11)
    want = [_np(fn(x)), _np(fn(x))]
    gen.manual_seed(11)
    mg.manual_seed(0)
    before = mg.default_generator.get_state()
    got = [_np(g(x)), _np(g(x))]
    assert all(np.array_equal(w, o) for w, o in zip(want, got))
    assert mg.default_generator.get_state() == before
    # another generator bound by name draws from that one
    other = mg.Generator().manual_seed(11)
    assert np.array_equal(_np(g.run(x, state={"gen": other})), want[0])


def test_saved_and_loaded_graph_draws_afresh(tmp_path):
    fn = lambda x: x * mg.randn(3, 2) + mg.randint(0, 4, (3, 2)) + x[mg.randperm(3)]  # noqa: E731
    x = mg.ones(3, 2)
    g = mg.graph.trace(fn, x)
    g.save(tmp_path / "r.mgg")
    h = mg.load_graph(tmp_path / "r.mgg")
    mg.manual_seed(2)
    want = [_np(fn(x)), _np(fn(x))]
    mg.manual_seed(2)
    got = [_np(h(x)), _np(h(x))]
    assert not np.array_equal(want[0], want[1])
    assert all(np.array_equal(w, o) for w, o in zip(want, got))


def test_noise_injection_training_step_follows_eager():
    """A step adding randn noise to the input, traced, run 5 times = 5 eager steps under one seed."""
    import minigrad.nn as nn

    def setup():
        mg.manual_seed(0)
        m = nn.Linear(4, 2)
        return m, mg.optim.SGD(m.parameters(), lr=0.1)
    x, y = mg.randn(8, 4), mg.randn(8, 2)

    def make_step(m, opt):
        def step(x, y):
            opt.zero_grad()
            loss = ((m(x + 0.1 * mg.randn_like(x)) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return step
    m1, o1 = setup()
    s1 = make_step(m1, o1)
    mg.manual_seed(9)
    for _ in range(5):
        s1(x, y)
    m2, o2 = setup()
    start = [p.detach().numpy().copy() for p in m2.parameters()]
    g = mg.graph.trace(make_step(m2, o2), x, y)  # runs one real step (and a draw) at trace time
    assert "randn" in g.count()
    for p, a in zip(m2.parameters(), start):  # undo that step
        p._data[...] = a
    mg.manual_seed(9)
    for _ in range(5):
        g(x, y)
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())


def test_bad_randint_bounds_name_the_op():
    with pytest.raises(ValueError, match="randint"):
        mg.randint(5, 2, (3,))


@pytest.mark.parametrize("init, prim", [(lambda w: mg.nn.init.normal_(w, 1.0, 2.0), "normal"),
                                        (lambda w: mg.nn.init.uniform_(w, -1.0, 3.0), "uniform")])
def test_in_place_inits_draw_at_each_run(init, prim):
    w = mg.zeros(2, 3)

    def fn(x):
        init(w)
        return x * w
    x = mg.arange(6.0).reshape(2, 3)
    g = mg.graph.trace(fn, x)
    assert prim in g.count() and "assign" in g.count(), str(g)
    mg.manual_seed(4)
    want = [fn(x).numpy(), fn(x).numpy()]
    mg.manual_seed(4)
    got = [g(x).numpy(), g(x).numpy()]
    assert not np.array_equal(want[0], want[1])
    assert all(np.array_equal(a, b) for a, b in zip(want, got))


def test_loaded_graph_with_a_user_generator_needs_it_bound(tmp_path):
    gen = mg.Generator().manual_seed(5)
    fn = lambda x: x + mg.rand(4, generator=gen)  # noqa: E731
    x = mg.zeros(4)
    mg.graph.trace(fn, x).save(tmp_path / "u.mgg")
    h = mg.load_graph(tmp_path / "u.mgg")
    with pytest.raises(RuntimeError, match="'gen'.*not bound"):
        h(x)
    gen.manual_seed(5)
    want = [fn(x).numpy(), fn(x).numpy()]
    h = mg.load_graph(tmp_path / "u.mgg", bind={"gen": mg.Generator().manual_seed(5)})
    got = [h(x).numpy(), h(x).numpy()]
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
