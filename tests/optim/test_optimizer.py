"""Optimizer base class: param groups, zero_grad, step/closure, state_dict round trips, errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import ASGD, SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, Optimizer, RAdam, RMSprop


def _param(values, dtype=np.float64):
    return mg.Tensor(np.array(values, dtype=dtype), requires_grad=True)


def _set_grad(p, values):
    p.grad = mg.Tensor(np.array(values, dtype=p.dtype))


# ---- construction and param groups ----------------------------------------------------------

def test_tensor_is_hashable_by_identity():
    a, b = _param([1.0, 2.0]), _param([1.0, 2.0])
    d = {a: 1, b: 2}
    assert d[a] == 1 and d[b] == 2 and len({a, b}) == 2


def test_params_as_list_makes_one_group_with_defaults():
    p = _param([1.0])
    opt = SGD([p], lr=0.5, momentum=0.1)
    assert len(opt.param_groups) == 1
    g = opt.param_groups[0]
    assert g["params"][0] is p and g["lr"] == 0.5 and g["momentum"] == 0.1
    assert g["dampening"] == 0 and g["nesterov"] is False and g["maximize"] is False


def test_generator_of_params_is_accepted():
    ps = [_param([1.0]), _param([2.0])]
    opt = SGD((p for p in ps), lr=0.1)
    got = opt.param_groups[0]["params"]
    assert isinstance(got, list) and len(got) == 2 and got[0] is ps[0] and got[1] is ps[1]


def test_param_groups_with_their_own_lr():
    a, b = _param([1.0, 1.0]), _param([1.0, 1.0])
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    _set_grad(a, [1.0, 2.0])
    _set_grad(b, [1.0, 2.0])
    opt.step()
    np.testing.assert_array_equal(a.data.numpy(), [0.9, 0.8])
    np.testing.assert_array_equal(b.data.numpy(), [0.5, 0.0])
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5


def test_add_param_group_takes_defaults_and_single_tensor():
    a, b = _param([1.0]), _param([2.0])
    opt = Adam([a], lr=0.01)
    opt.add_param_group({"params": b, "betas": (0.5, 0.6)})
    g = opt.param_groups[1]
    assert g["params"][0] is b and g["lr"] == 0.01 and g["betas"] == (0.5, 0.6) and g["amsgrad"] is False


def test_named_params_record_param_names():
    a, b = _param([1.0]), _param([2.0])
    opt = SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.param_groups[0]["params"][1] is b


def test_param_in_two_groups_is_an_error():
    a = _param([1.0])
    with pytest.raises(ValueError, match="more than one parameter group"):
        SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    opt = SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_duplicate_param_in_a_group_warns():
    a = _param([1.0])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        SGD([a, a], lr=0.1)


@pytest.mark.parametrize("bad, err, msg", [
    ([], ValueError, "empty parameter list"),
    ({1, 2}, TypeError, "ordered collections"),
    ([np.zeros(3)], TypeError, "can only optimize Tensors"),
])
def test_bad_params(bad, err, msg):
    with pytest.raises(err, match=msg):
        if isinstance(bad, set):
            SGD([{"params": bad}], lr=0.1)
        else:
            SGD(bad, lr=0.1)


def test_a_tensor_instead_of_an_iterable_is_an_error():
    with pytest.raises(TypeError, match="iterable of Tensors"):
        SGD(_param([1.0, 2.0]), lr=0.1)


def test_non_leaf_is_an_error():
    a = _param([1.0, 2.0])
    with pytest.raises(ValueError, match="non-leaf"):
        SGD([a * 2], lr=0.1)


def test_add_param_group_needs_a_dict():
    opt = SGD([_param([1.0])], lr=0.1)
    with pytest.raises(TypeError, match="must be a dict"):
        opt.add_param_group([_param([1.0])])


@pytest.mark.parametrize("make, msg", [
    (lambda p: SGD([p], lr=-1), "Invalid learning rate: -1"),
    (lambda p: SGD([p], momentum=-0.1), "Invalid momentum value: -0.1"),
    (lambda p: SGD([p], weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: SGD([p], nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: SGD([p], momentum=0.9, dampening=0.1, nesterov=True), "Nesterov"),
    (lambda p: Adam([p], lr=-0.5), "Invalid learning rate: -0.5"),
    (lambda p: Adam([p], eps=-1e-8), "Invalid epsilon value"),
    (lambda p: Adam([p], betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: Adam([p], betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
    (lambda p: Adam([p], weight_decay=-1e-2), "Invalid weight_decay value"),
    (lambda p: AdamW([p], lr=-1), "Invalid learning rate: -1"),
    (lambda p: RMSprop([p], alpha=-0.5), "Invalid alpha value"),
    (lambda p: RMSprop([p], momentum=-1), "Invalid momentum value"),
    (lambda p: RMSprop([p], eps=-1), "Invalid epsilon value"),
    (lambda p: Adagrad([p], lr_decay=-1), "Invalid lr_decay value"),
    (lambda p: Adagrad([p], initial_accumulator_value=-1), "Invalid initial_accumulator_value"),
    (lambda p: Adagrad([p], lr=-3), "Invalid learning rate: -3"),
    (lambda p: Adadelta([p], rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: Adamax([p], betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    (lambda p: NAdam([p], momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda p: RAdam([p], eps=-1), "Invalid epsilon value"),
    (lambda p: ASGD([p], weight_decay=-1), "Invalid weight_decay value: -1"),
])
def test_invalid_hyper_parameters(make, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        make(_param([1.0]))


def test_base_step_is_abstract():
    opt = Optimizer([_param([1.0])], {"lr": 0.1})
    with pytest.raises(NotImplementedError):
        opt.step()


def test_repr_lists_sorted_hyper_parameters_per_group():
    opt = SGD([{"params": [_param([1.0])]}, {"params": [_param([1.0])], "lr": 0.5}], lr=0.1, momentum=0.9)
    r = repr(opt)
    assert r.startswith("SGD (\nParameter Group 0\n    dampening: 0\n    lr: 0.1\n")
    assert "Parameter Group 1\n" in r and "    lr: 0.5\n" in r and r.endswith(")")
    keys = [line.split(":")[0].strip() for line in r.splitlines() if line.startswith("    ")]
    assert keys[:6] == sorted(keys[:6])


# ---- zero_grad and step ---------------------------------------------------------------------

def test_zero_grad_set_to_none():
    a, b = _param([1.0, 2.0]), _param([3.0])
    _set_grad(a, [1.0, 1.0])
    opt = SGD([a, b], lr=0.1)
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_zero_grad_to_zeros_keeps_the_tensor():
    a = _param([1.0, 2.0])
    _set_grad(a, [1.0, 1.0])
    g = a.grad
    SGD([a], lr=0.1).zero_grad(set_to_none=False)
    assert a.grad is g
    np.testing.assert_array_equal(a.grad.data.numpy(), [0.0, 0.0])


def test_zero_grad_to_zeros_after_backward():
    a = _param([1.0, 2.0])
    (a * a).sum().backward()
    opt = SGD([a], lr=0.1)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(a.grad.data.numpy(), [0.0, 0.0])
    (a * a).sum().backward()  # accumulates onto the zeros
    np.testing.assert_array_equal(a.grad.data.numpy(), [2.0, 4.0])


ALL = [SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD]


@pytest.mark.parametrize("cls", ALL)
def test_param_without_grad_is_skipped(cls):
    a, b = _param([1.0, 2.0]), _param([3.0, 4.0])
    opt = cls([a, b], lr=0.1)
    before = len(opt.state.get(b, {}))
    _set_grad(a, [1.0, -1.0])
    opt.step()
    np.testing.assert_array_equal(b.data.numpy(), [3.0, 4.0])
    assert not np.array_equal(a.data.numpy(), [1.0, 2.0])
    assert len(opt.state.get(b, {})) == before  # no state made for b (Adagrad makes it eagerly)


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW, RMSprop, Adagrad])
def test_zero_grad_is_still_a_step(cls):
    # PyTorch: a zero gradient steps (state advances), a None gradient does not
    a = _param([1.0, 2.0])
    opt = cls([a], lr=0.1, weight_decay=0.5)
    _set_grad(a, [0.0, 0.0])
    opt.step()
    assert not np.array_equal(a.data.numpy(), [1.0, 2.0])  # weight decay moved it


def test_closure_is_called_with_grad_enabled_and_returns_loss():
    a = _param([1.0, -2.0])
    opt = SGD([a], lr=0.25)
    seen = []

    def closure():
        seen.append(mg.is_grad_enabled())
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    with mg.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert float(loss.item()) == 5.0
    np.testing.assert_array_equal(a.data.numpy(), [0.5, -1.0])  # a - 0.25 * 2a


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW, RMSprop, Adagrad])
def test_closure_works_for_every_optimizer(cls):
    a = _param([1.0, -2.0])
    opt = cls([a], lr=0.01)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    losses = [float(opt.step(closure).item()) for _ in range(5)]
    assert losses[-1] < losses[0]


def test_step_without_closure_returns_none():
    a = _param([1.0])
    _set_grad(a, [1.0])
    assert SGD([a], lr=0.1).step() is None


def test_lr_changed_in_param_groups_takes_effect():
    a = _param([1.0])
    opt = SGD([a], lr=0.1)
    _set_grad(a, [1.0])
    opt.step()
    opt.param_groups[0]["lr"] = 0.5
    opt.step()
    np.testing.assert_allclose(a.data.numpy(), [1.0 - 0.1 - 0.5], rtol=0, atol=1e-15)


@pytest.mark.parametrize("cls, kw", [
    (SGD, dict(momentum=0.9, nesterov=True, weight_decay=0.1)), (Adam, dict(amsgrad=True, weight_decay=0.1)),
    (AdamW, {}), (RMSprop, dict(centered=True, momentum=0.5)), (Adagrad, dict(lr_decay=0.1)),
])
def test_float32_params_stay_float32(cls, kw):
    a = _param(np.linspace(-1, 1, 6).reshape(2, 3), dtype=np.float32)
    opt = cls([a], lr=0.01, **kw)
    for _ in range(3):
        _set_grad(a, np.ones((2, 3)))
        opt.step()
    assert a.dtype == np.float32 and a.data.numpy().dtype == np.float32
    for v in opt.state[a].values():
        if isinstance(v, mg.Tensor) and v.ndim > 0:
            assert v.dtype == np.float32


def test_update_is_in_place_on_the_same_array():
    a = _param([1.0, 2.0])
    arr = a.data.numpy()
    opt = Adam([a], lr=0.1)
    _set_grad(a, [1.0, 1.0])
    opt.step()
    assert a.data.numpy() is arr


def test_step_does_not_modify_the_gradient():
    a = _param([1.0, 2.0])
    opt = SGD([a], lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True)
    _set_grad(a, [1.0, 1.0])
    opt.step()
    opt.step()
    np.testing.assert_array_equal(a.grad.data.numpy(), [1.0, 1.0])


def test_step_bumps_the_version_so_stale_backward_raises():
    a = _param([1.0, 2.0])
    loss = (a * a).sum()
    loss.backward(retain_graph=True)
    SGD([a], lr=0.1).step()
    with pytest.raises(RuntimeError):
        loss.backward()


# ---- state_dict -----------------------------------------------------------------------------

def test_state_dict_layout():
    a, b, c = _param([1.0]), _param([2.0, 3.0]), _param([4.0])
    opt = Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1)
    for p in (a, b, c):
        _set_grad(p, np.ones(p.shape))
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert set(sd["state"]) == {0, 1, 2}
    st = sd["state"][1]
    assert set(st) == {"step", "exp_avg", "exp_avg_sq"}
    assert isinstance(st["exp_avg"], mg.Tensor) and st["exp_avg"].shape == (2,)
    assert float(st["step"].item()) == 1.0


def test_state_dict_is_a_snapshot():
    a = _param([1.0])
    opt = SGD([a], lr=0.1, momentum=0.9)
    _set_grad(a, [1.0])
    opt.step()
    sd = opt.state_dict()
    opt.step()
    np.testing.assert_array_equal(sd["state"][0]["momentum_buffer"].data.numpy(), [1.0])
    sd["param_groups"][0]["lr"] = 123.0
    assert opt.param_groups[0]["lr"] == 0.1


def test_state_dict_skips_params_without_state():
    a, b = _param([1.0]), _param([1.0])
    opt = SGD([a, b], lr=0.1, momentum=0.9)
    _set_grad(b, [1.0])
    opt.step()
    assert list(opt.state_dict()["state"]) == [1]


def test_load_state_dict_restores_hyper_parameters_and_keeps_params():
    a = _param([1.0])
    opt = SGD([a], lr=0.1, momentum=0.9)
    sd = opt.state_dict()
    sd["param_groups"][0]["lr"] = 0.7
    b = _param([5.0])
    opt2 = SGD([b], lr=0.1)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.7 and opt2.param_groups[0]["momentum"] == 0.9
    assert opt2.param_groups[0]["params"][0] is b


def test_load_state_dict_errors_on_mismatch():
    a, b = _param([1.0]), _param([1.0])
    sd = SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        SGD([a, b], lr=0.1).load_state_dict({"state": {}})


def test_load_state_dict_casts_floating_state_to_param_dtype():
    a = _param([1.0, 2.0])
    opt = Adam([a], lr=0.1)
    _set_grad(a, [1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    b = _param([1.0, 2.0], dtype=np.float32)
    opt2 = Adam([b], lr=0.1)
    opt2.load_state_dict(sd)
    st = opt2.state[b]
    assert st["exp_avg"].dtype == np.float32 and st["exp_avg_sq"].dtype == np.float32
    assert st["step"].dtype == sd["state"][0]["step"].dtype  # step keeps its own dtype
    st["exp_avg"].data[...] = 0
    assert sd["state"][0]["exp_avg"].data.numpy()[0] != 0  # copied, not aliased


def test_load_state_dict_accepts_serializer_friendly_forms():
    # string parameter ids, numpy arrays for state, lists for tuples: what a file format may give back
    a = _param([1.0, 2.0])
    opt = Adam([a], lr=0.1)
    _set_grad(a, [1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    plain = {"state": {str(k): {n: (v.data.numpy() if isinstance(v, mg.Tensor) else v) for n, v in s.items()}
                       for k, s in sd["state"].items()},
             "param_groups": [dict(g, betas=list(g["betas"])) for g in sd["param_groups"]]}
    b = _param([1.0, 2.0])
    opt2 = Adam([b], lr=0.1)
    opt2.load_state_dict(plain)
    assert opt2.param_groups[0]["betas"] == (0.9, 0.999)
    np.testing.assert_array_equal(opt2.state[b]["exp_avg"].data.numpy(), opt.state[a]["exp_avg"].data.numpy())
    b.data[...] = a.data.numpy()
    _set_grad(b, [1.0, 1.0])
    opt.step()
    opt2.step()
    np.testing.assert_array_equal(a.data.numpy(), b.data.numpy())


CASES = [
    (SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (SGD, dict(lr=0.1, momentum=0.5, dampening=0.3)),
    (Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.01)),
    (AdamW, dict(lr=0.01, weight_decay=0.1)),
    (RMSprop, dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
    (Adagrad, dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    (Adadelta, dict(lr=0.5, rho=0.8, weight_decay=0.01)),
    (Adamax, dict(lr=0.01, weight_decay=0.01)),
    (NAdam, dict(lr=0.01, weight_decay=0.05, decoupled_weight_decay=True)),
    (NAdam, dict(lr=0.01, momentum_decay=0.01)),
    (RAdam, dict(lr=0.01, betas=(0.8, 0.9))),
    (RAdam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    (ASGD, dict(lr=0.05, t0=5, lambd=0.01)),
]


def _grads(n, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((3, 4)), rng.standard_normal(4)) for _ in range(n)]


def _run(opt, params, grads):
    for ga, gb in grads:
        w, b = params
        _set_grad(w, 0.5 * w.data.numpy() + ga)  # a quadratic plus noise
        _set_grad(b, 0.5 * b.data.numpy() + gb)
        opt.step()


def _fresh(seed=1):
    rng = np.random.default_rng(seed)
    return [_param(rng.standard_normal((3, 4))), _param(rng.standard_normal(4))]


@pytest.mark.parametrize("cls, kw", CASES, ids=lambda v: getattr(v, "__name__", None) or str(v))
def test_resume_from_state_dict_gives_the_identical_trajectory(cls, kw):
    grads = _grads(20)
    ref = _fresh()
    ref_opt = cls([{"params": ref[:1]}, {"params": ref[1:], "lr": kw["lr"] / 2}], **kw)
    _run(ref_opt, ref, grads)

    first = _fresh()
    opt = cls([{"params": first[:1]}, {"params": first[1:], "lr": kw["lr"] / 2}], **kw)
    _run(opt, first, grads[:10])
    sd = opt.state_dict()
    resumed = [_param(p.data.numpy().copy()) for p in first]
    del opt, first
    opt2 = cls([{"params": resumed[:1]}, {"params": resumed[1:]}], lr=123.0)  # hyper-params come from sd
    opt2.load_state_dict(sd)
    _run(opt2, resumed, grads[10:])
    for p, q in zip(ref, resumed):
        assert np.array_equal(p.data.numpy(), q.data.numpy())


def test_resume_through_mg_save_and_load(tmp_path):
    save, load = getattr(mg, "save", None), getattr(mg, "load", None)
    if save is None or load is None:
        serialization = pytest.importorskip("minigrad.serialization")
        save, load = serialization.save, serialization.load
    grads = _grads(20)
    ref = _fresh()
    ref_opt = Adam(ref, lr=0.01, amsgrad=True)
    _run(ref_opt, ref, grads)
    first = _fresh()
    opt = Adam(first, lr=0.01, amsgrad=True)
    _run(opt, first, grads[:10])
    path = tmp_path / "opt.ckpt"
    save(opt.state_dict(), str(path))
    resumed = [_param(p.data.numpy().copy()) for p in first]
    opt2 = Adam(resumed, lr=0.01, amsgrad=True)
    opt2.load_state_dict(load(str(path)))
    _run(opt2, resumed, grads[10:])
    for p, q in zip(ref, resumed):
        assert np.array_equal(p.data.numpy(), q.data.numpy())


def test_no_warnings_in_a_plain_step():
    a = _param([1.0, 2.0])
    opt = Adam([a], lr=0.1)
    _set_grad(a, [1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        opt.zero_grad()


@pytest.mark.parametrize("cls, kw", [(SGD, dict(lr=0.1, momentum=0.9)), (Adam, dict(lr=0.05)),
                                     (AdamW, dict(lr=0.05)), (RMSprop, dict(lr=0.03)), (Adagrad, dict(lr=0.5))])
def test_linear_regression_loss_falls(cls, kw):
    rng = np.random.default_rng(0)
    x = mg.Tensor(rng.standard_normal((64, 3)))
    y = x @ mg.Tensor(np.array([[1.0], [-2.0], [0.5]])) + 0.3
    w = mg.Tensor(np.zeros((3, 1)), requires_grad=True)
    b = mg.Tensor(np.zeros(1), requires_grad=True)
    opt = cls([w, b], **kw)
    losses = []
    for _ in range(100):
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    assert losses[-1] < 0.01 * losses[0]
