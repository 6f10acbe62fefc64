"""What real PyTorch scripts reached for, and wrong numbers they found (benchmark
timers, MNIST tensors, alpha dropout, CTC loss, legacy overloads, model ensembling over 'meta',
gradcheck's flags), each against PyTorch 2.13 where it is installed."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F


# ---- item 3: F.interpolate on uint8, mode by mode and dtype by dtype ------------------------------

def test_interpolate_uint8_bilinear_is_the_issue_example():
    x = mg.tensor([[[[10, 20], [30, 40]]]], dtype=mg.uint8)
    out = F.interpolate(x, size=(3, 3), mode="bilinear", align_corners=True)
    assert out.dtype == mg.uint8
    assert out.tolist() == [[[[10, 15, 20], [20, 25, 30], [30, 35, 40]]]]


def test_interpolate_uint8_bytes_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    # (channels, in, out): upsampling, downsampling, one side unchanged, the generic path (C > 4)
    cases = [(1, (2, 2), (3, 3)), (3, (5, 7), (9, 4)), (2, (8, 3), (3, 11)), (1, (4, 6), (4, 9)),
             (5, (6, 5), (3, 8)), (3, (1, 6), (4, 2))]
    for C, (h, w), size in cases:
        x = rng.integers(0, 256, (2, C, h, w)).astype(np.uint8)
        for mode in ("bilinear", "bicubic", "nearest", "nearest-exact"):
            for ac in ((False, True) if mode in ("bilinear", "bicubic") else (None,)):
                kw = {} if ac is None else {"align_corners": ac}
                want = torch.nn.functional.interpolate(torch.from_numpy(x), size=size, mode=mode, **kw).numpy()
                got = F.interpolate(mg.tensor(x), size=size, mode=mode, **kw).numpy()
                assert got.dtype == np.uint8
                np.testing.assert_array_equal(got, want, err_msg=f"{mode} {ac} {x.shape} -> {size}")


@pytest.mark.parametrize("dtype,shape,mode", [
    ("uint8", (1, 1, 3), "linear"), ("uint8", (1, 1, 2, 2, 2), "trilinear"), ("uint8", (1, 1, 3, 3), "area"),
    ("int32", (1, 1, 3, 3), "nearest"), ("int64", (1, 1, 3, 3), "bilinear"), ("bool", (1, 1, 3), "nearest"),
    ("int8", (1, 1, 3, 3), "nearest-exact")])
def test_interpolate_refuses_the_integer_modes_torch_refuses(dtype, shape, mode):
    x = mg.ones(*shape, dtype=getattr(mg, dtype))
    with pytest.raises(NotImplementedError, match="interpolate"):
        F.interpolate(x, scale_factor=2, mode=mode)
    torch = pytest.importorskip("torch")
    with pytest.raises(NotImplementedError):
        torch.nn.functional.interpolate(torch.ones(*shape, dtype=getattr(torch, dtype)), scale_factor=2, mode=mode)


# ---- item 5: F.pad reflect/replicate to a zero-size output; pad's error types -------------------

@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [((1, 1, 4, 3), (1, 1, -2, -2)), ((1, 1, 4, 3), (-1, -2, 1, 1)),
                                       ((1, 1, 3, 4, 3), (0, 0, -1, -3, -1, -2)), ((1, 1, 4, 3), (-1, -2, -2, -2)),
                                       ((1, 1, 3), (-1, -2)), ((1, 0, 3), (1, 1)), ((0, 1, 3), (1, 1))])
def test_pad_to_empty_outputs_as_torch(mode, shape, pad):
    torch = pytest.importorskip("torch")
    try:
        want = torch.nn.functional.pad(torch.ones(*shape), pad, mode=mode).shape
    except RuntimeError:
        with pytest.raises(RuntimeError, match="pad"):
            F.pad(mg.ones(*shape), pad, mode=mode)
        return
    assert tuple(F.pad(mg.ones(*shape), pad, mode=mode).shape) == tuple(want)


@pytest.mark.parametrize("shape,pad,mode,kw", [((2, 3), (1,), "constant", {}), ((2, 3), (1,) * 6, "constant", {}),
                                               ((1, 1, 3), (3, 3), "reflect", {}), ((1, 1, 3), (4, 0), "circular", {}),
                                               ((1, 1, 3), (1, 1), "reflect", {"value": 1.0}),
                                               ((1, 1, 3), (-4, 0), "constant", {})])
def test_pad_errors_are_runtime_errors_as_torch(shape, pad, mode, kw):
    with pytest.raises(RuntimeError, match="pad"):
        F.pad(mg.ones(*shape), pad, mode=mode, **kw)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.nn.functional.pad(torch.ones(*shape), pad, mode=mode, **kw)


@pytest.mark.parametrize("op", ["__lshift__", "__rshift__", "__and__", "__or__"])
def test_integer_tensor_with_float_tensor_bitwise_is_not_implemented_as_torch(op):
    a, b = mg.tensor([1, 2], dtype=mg.int32), mg.tensor([1.0, 2.0], dtype=mg.float64)
    with pytest.raises(NotImplementedError, match="float64"):
        getattr(a, op)(b)
    torch = pytest.importorskip("torch")
    with pytest.raises(NotImplementedError):
        getattr(torch.tensor([1, 2], dtype=torch.int32), op)(torch.tensor([1.0, 2.0], dtype=torch.float64))


# ---- MNIST(...).data / .targets are Tensors, as torchvision's ----------------------------------

def _fake_mnist(folder, n=5):
    import gzip
    folder.mkdir(parents=True, exist_ok=True)
    imgs = (np.arange(n * 28 * 28) % 256).astype(np.uint8)
    labs = (np.arange(n) * 3 % 10).astype(np.uint8)
    for name, magic, dims, payload in (("t10k-images-idx3-ubyte", 2051, [n, 28, 28], imgs.tobytes()),
                                       ("t10k-labels-idx1-ubyte", 2049, [n], labs.tobytes())):
        head = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in dims)
        (folder / (name + ".gz")).write_bytes(gzip.compress(head + payload))
    return imgs.reshape(n, 28, 28), labs.astype(np.int64)


def test_mnist_data_and_targets_are_tensors(tmp_path):
    imgs, labs = _fake_mnist(tmp_path)
    ds = mg.data.datasets.MNIST(tmp_path, train=False)
    assert isinstance(ds.data, mg.Tensor) and isinstance(ds.targets, mg.Tensor)
    assert ds.data.dtype == mg.uint8 and tuple(ds.data.shape) == (5, 28, 28)
    assert ds.targets.dtype == mg.int64 and ds.targets.tolist() == labs.tolist()
    x = ds.data.unsqueeze(1).clone().float() / 255  # what tutorials do with them
    assert tuple(x.shape) == (5, 1, 28, 28)
    np.testing.assert_array_equal(x.numpy(), ds.arrays()[0])
    # a script may cut the split down: the items, len and the loader's fast path follow
    ds.data, ds.targets = ds.data[:2], ds.targets[:2]
    assert len(ds) == 2 and ds.arrays()[0].shape == (2, 1, 28, 28)
    xb, yb = next(iter(mg.data.DataLoader(ds, batch_size=8)))
    assert tuple(xb.shape) == (2, 1, 28, 28) and yb.tolist() == labs[:2].tolist()
    np.testing.assert_array_equal(ds[1][0].numpy()[0], imgs[1] / np.float32(255))


# ---- nn.AlphaDropout, nn.FeatureAlphaDropout --------------------------------------------------

@pytest.mark.parametrize("feature", [False, True])
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_values_and_gradient_match_torch(feature, p):
    torch = pytest.importorskip("torch")
    mg.manual_seed(0)
    x = np.random.default_rng(1).standard_normal((4, 6, 5))
    f_mg = F.feature_alpha_dropout if feature else F.alpha_dropout
    f_t = torch.nn.functional.feature_alpha_dropout if feature else torch.nn.functional.alpha_dropout
    xt = mg.tensor(x, requires_grad=True)
    out = f_mg(xt, p=p, training=True)
    out.backward(mg.ones_like(out))
    ref = f_t(torch.from_numpy(x), p=p, training=True).numpy()
    alpha = 1.7580993408473766
    a = 1.0 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    drop_value, kept_shift = -alpha * a + alpha * a * p, alpha * a * p
    got = out.detach().numpy()
    kept = np.isclose(got, x * a + kept_shift, rtol=0, atol=1e-12)
    assert (kept | np.isclose(got, drop_value, rtol=0, atol=1e-12)).all()
    assert 0 < kept.mean() < 1
    if feature:  # one draw per (sample, channel)
        assert (kept == kept[:, :, :1]).all()
    np.testing.assert_allclose(xt.grad.numpy(), a * kept, rtol=0, atol=1e-15)
    # the same constants in torch's output: every element is x * a + shift or the dropped value
    t_kept = np.isclose(ref, x * a + kept_shift, rtol=0, atol=1e-12)
    assert (t_kept | np.isclose(ref, drop_value, rtol=0, atol=1e-12)).all() and 0 < t_kept.mean() < 1


def test_alpha_dropout_keeps_selu_statistics_and_modules_as_torch():
    mg.manual_seed(0)
    x = mg.randn(200, 500, dtype=mg.float64)
    y = nn.AlphaDropout(0.3)(x)
    assert abs(y.mean().item()) < 0.01 and abs(y.std().item() - 1) < 0.01
    m = nn.FeatureAlphaDropout(0.5).eval()
    assert m(x) is x and repr(m) == "FeatureAlphaDropout(p=0.5, inplace=False)"
    assert (F.alpha_dropout(x, 1.0, training=True) == 0).all()  # p = 1: x * 0, as PyTorch
    assert F.alpha_dropout(x, 0.5) is x  # training defaults to False, as torch's functional form
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(mg.ones(3), 0.5, training=True)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.AlphaDropout(1.5)


# ---- nn.CTCLoss / F.ctc_loss against torch: values and gradients --------------------------------

_CTC_CASES = [  # (T, N, C, targets, input_lengths, target_lengths, kwargs)
    (6, 3, 5, [[1, 2, 2], [3, 1, 0], [4, 4, 4]], [6, 5, 6], [3, 2, 3], {"reduction": "none"}),
    (6, 3, 5, [[1, 2, 2], [3, 1, 0], [4, 4, 4]], [6, 5, 6], [3, 2, 3], {}),
    (6, 3, 5, [[1, 2, 2], [3, 1, 0], [2, 4, 4]], [6, 5, 6], [3, 2, 3], {"reduction": "sum", "blank": 2}),
    (6, 3, 5, [1, 2, 2, 3, 1, 4, 4, 4], [6, 5, 4], [3, 2, 3], {}),                      # concatenated
    (4, 2, 5, [[1, 1, 1], [1, 1, 1]], [4, 4], [3, 1], {"reduction": "none"}),           # infinite loss
    (4, 2, 5, [[1, 1, 1], [1, 1, 1]], [4, 4], [3, 1], {"zero_infinity": True}),
    (4, 2, 5, [[1, 2], [1, 1]], [0, 4], [0, 2], {"reduction": "none"}),                 # no frames
    (5, 2, 4, [[1, 2], [1, 1]], [5, 3], [0, 0], {}),                                    # empty targets
]


def _ctc_pair(torch, case, dtype, g_seed=0):
    T, N, C, tg, il, tl, kw = case
    rng = np.random.default_rng(len(tg) + T)
    x = rng.standard_normal((T, N, C)).astype(dtype)
    lp = x - np.log(np.exp(x).sum(2, keepdims=True))
    red = kw.get("reduction", "mean")
    g = np.random.default_rng(g_seed).standard_normal((N,)).astype(dtype) if red == "none" else np.array(1.3, dtype)
    res = []
    for L, f in ((torch, torch.nn.functional), (mg, F)):
        a = L.tensor(lp, requires_grad=True)
        loss = f.ctc_loss(a, L.tensor(tg), L.tensor(il), L.tensor(tl), **kw)
        loss.backward(L.tensor(g))
        res.append((loss.detach().numpy(), a.grad.numpy()))
    return res


@pytest.mark.parametrize("case", range(len(_CTC_CASES)))
def test_ctc_loss_values_and_gradients_match_torch(case):
    torch = pytest.importorskip("torch")
    (lt, gt), (lm, gm) = _ctc_pair(torch, _CTC_CASES[case], np.float64)
    assert lm.dtype == np.float64 and lm.shape == lt.shape
    np.testing.assert_allclose(lm, lt, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gm, gt, rtol=1e-10, atol=1e-12)  # nan where torch's is (an infinite loss)


def test_ctc_loss_float32_long_sequences_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    case = (50, 4, 20, rng.integers(1, 20, (4, 15)).tolist(), [50, 40, 30, 45], [15, 10, 12, 1], {})
    (lt, gt), (lm, gm) = _ctc_pair(torch, case, np.float32)
    assert lm.dtype == np.float32 and gm.dtype == np.float32
    # torch runs the recursion in float32, minigrad in float64 then rounds: float32-level differences
    np.testing.assert_allclose(lm, lt, rtol=1e-5)
    np.testing.assert_allclose(gm, gt, rtol=1e-3, atol=3e-5)


def test_ctc_loss_unbatched_module_and_lists_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    lp = rng.standard_normal((6, 4))
    lp -= np.log(np.exp(lp).sum(1, keepdims=True))
    want = torch.nn.functional.ctc_loss(torch.tensor(lp), torch.tensor([1, 2]), torch.tensor(6), torch.tensor(2),
                                        reduction="none")
    got = F.ctc_loss(mg.tensor(lp), mg.tensor([1, 2]), mg.tensor(6), mg.tensor(2), reduction="none")
    assert got.shape == () and abs(got.item() - want.item()) < 1e-12
    lp3 = mg.tensor(np.stack([lp, lp[::-1]], 1), requires_grad=True)
    m = nn.CTCLoss(blank=0, zero_infinity=True)
    assert repr(m) == "CTCLoss()"
    loss = m(lp3, mg.tensor([[1, 2], [3, 3]]), [6, 5], (2, 2))  # lengths as Python sequences, as torch takes them
    t = torch.tensor(lp3.detach().numpy(), requires_grad=True)
    tl = torch.nn.CTCLoss(zero_infinity=True)(t, torch.tensor([[1, 2], [3, 3]]), [6, 5], (2, 2))
    loss.backward()
    tl.backward()
    assert abs(loss.item() - tl.item()) < 1e-12 and loss.grad_fn.name() == "MeanBackward0"
    np.testing.assert_allclose(lp3.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-13)
    assert F.ctc_loss(lp3, mg.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2], reduction="none").grad_fn.name() == \
        "CtcLossBackward0"


def test_ctc_loss_is_once_differentiable_and_forward_mode_is_the_derivative():
    x = mg.tensor(np.random.default_rng(1).standard_normal((5, 2, 4)), requires_grad=True)

    def f(a):
        return F.ctc_loss(a.log_softmax(2), mg.tensor([[1, 2], [3, 3]]), [5, 4], [2, 2], reduction="none")
    assert mg.autograd.gradcheck(f, (x,))
    g, = mg.autograd.grad(f(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="ctc_loss.*not differentiable"):
        mg.autograd.grad(g.sum(), x)
    v = mg.tensor(np.random.default_rng(2).standard_normal((5, 2, 4)))
    _, jv = mg.func.jvp(f, (x.detach(),), (v,))
    eps = 1e-6
    fd = (f(x.detach() + eps * v) - f(x.detach() - eps * v)) / (2 * eps)
    np.testing.assert_allclose(jv.numpy(), fd.numpy(), rtol=1e-6)


@pytest.mark.parametrize("args,match", [
    (((5, 2, 4), [[1, 2], [1, 1]], [6, 4], [2, 2], {}), "input_lengths to have value at most 5"),
    (((5, 2, 4), [[1, 2], [1, 1]], [5, 4], [3, 2], {}), "size at least 3"),
    (((5, 2, 4), [1, 2, 1], [5, 4], [2, 2], {}), "sum\\(target_lengths\\) = 4"),
    (((5, 2, 4), [[1, 2], [1, 1]], [5, 4, 4], [2, 2], {}), "input_lengths must be of size batch_size"),
    (((5, 2, 4), [[1, 2], [1, 1]], [5, 4], [-1, 2], {}), "target_lengths to have value at least 0"),
    (((5, 2, 4), [[1, 2], [1, 1]], [5, 4], [2, 2], {"blank": 4}), "blank must be in label range"),
    (((5, 2, 4), [[1, 7], [1, 1]], [5, 4], [2, 2], {}), "target labels must be in \\[0, 4\\)"),
])
def test_ctc_loss_errors_name_the_op(args, match):
    shape, tg, il, tl, kw = args
    with pytest.raises(RuntimeError, match="ctc_loss: .*" + match):
        F.ctc_loss(mg.randn(*shape).log_softmax(2), mg.tensor(tg), il, tl, **kw)


# ---- the deprecated add_(Number, Tensor) overloads, with PyTorch's warning -----------------------

_OVERLOADS = [("add_", lambda L, x, y: x.clone().add_(2, y)), ("add", lambda L, x, y: L.add(x, 2, y)),
              ("add", lambda L, x, y: x.add(2, y)), ("sub_", lambda L, x, y: x.clone().sub_(2, y)),
              ("sub", lambda L, x, y: L.sub(x, 2, y)), ("addcmul_", lambda L, x, y: x.clone().addcmul_(2, y, y)),
              ("addcmul", lambda L, x, y: L.addcmul(x, 2, y, y)), ("addcdiv_", lambda L, x, y: x.clone().addcdiv_(2, y, y + 1)),
              ("addcdiv", lambda L, x, y: L.addcdiv(x, 0.5, y, y + 1))]


@pytest.mark.parametrize("k", range(len(_OVERLOADS)))
def test_deprecated_number_first_overloads_run_with_torchs_warning(k, monkeypatch):
    from minigrad.ops import elementwise
    monkeypatch.setattr(elementwise, "_WARNED_OVERLOADS", set())
    name, f = _OVERLOADS[k]
    x, y = mg.tensor([1.0, 2.0, 3.0]), mg.tensor([0.0, 1.5, 2.0])
    with pytest.warns(UserWarning, match=rf"This overload of {name} is deprecated:\n\t{name}\(") as rec:
        got = f(mg, x, y)
    with _no_warning():  # once per process, as PyTorch's TORCH_WARN_ONCE
        f(mg, x, y)
    torch = pytest.importorskip("torch")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(torch, torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.0, 1.5, 2.0]))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    msg = str(rec[0].message)
    assert "Consider using one of the following signatures instead:" in msg


def _no_warning():
    import contextlib
    import warnings

    @contextlib.contextmanager
    def ctx():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            yield
        assert not [x for x in w if "overload" in str(x.message)]
    return ctx()


def test_other_extra_positional_arguments_stay_type_errors():
    x = mg.ones(2)
    with pytest.raises(TypeError, match="add_\\(\\) takes 1 positional argument but 2 were given"):
        x.add_(x, 2)  # alpha is keyword-only, as in PyTorch
    with pytest.raises(TypeError, match="add\\(\\) takes 2 positional arguments"):
        mg.add(x, x, 2)


# ---- mg.utils.benchmark: Timer, Measurement, Compare ----------------------------------------------

def test_benchmark_timer_measures_and_prints_as_torch():
    from minigrad.utils import benchmark
    assert mg.utils.benchmark is benchmark
    x = mg.ones(8)
    t = benchmark.Timer("x + x", globals={"x": x}, label="add", sub_label="8", description="plus")
    m = t.timeit(200)
    assert m.number_per_run == 200 and len(m.times) == 1 and 0 < m.median < 1e-2
    lines = repr(m).splitlines()
    assert lines[0].startswith("<minigrad.utils.benchmark.Measurement object at 0x")
    assert lines[1:3] == ["add: 8", "plus"] and lines[4] == "  1 measurement, 200 runs , 1 thread"
    b = t.blocked_autorange(min_run_time=0.02)
    assert sum(b.raw_times) >= 0.02 and b.number_per_run >= 1 and len(b.times) >= 1
    a = t.adaptive_autorange(min_run_time=0.005, max_run_time=0.05)
    assert len(a.times) > 3 or sum(a.raw_times) > 0.05
    seen = []
    benchmark.Timer("y = mg.relu(z)", setup="z = mg.randn(4)").blocked_autorange(
        callback=lambda n, s: seen.append((n, s)), min_run_time=0.01)
    assert seen and all(s > 0 for _, s in seen)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("pass", global_setup="#include <x>")
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat()


def test_benchmark_measurement_and_compare_text_equal_torchs():
    tb = pytest.importorskip("torch.utils.benchmark")
    from torch.utils.benchmark.utils.common import TaskSpec as TorchSpec
    from minigrad.utils import benchmark as mb
    rng = np.random.default_rng(0)
    # one, three (no IQR line) and five measurements; one- and multi-line statements
    for n, spec in ((1, dict(stmt="x+x", setup="x=1")), (3, dict(stmt="x+x", setup="pass", label="L")),
                    (5, dict(stmt="a\nb", setup="p\nq", sub_label="s", description="d", num_threads=3)),
                    (6, dict(stmt="f()", setup="pass"))):
        raw = list(2e-4 * (1 + (0.5 if n == 6 else 0.05) * rng.random(n)))
        want = tb.Measurement(10, raw, TorchSpec(**spec))
        got = mb.Measurement(10, raw, mb.TaskSpec(**spec))
        assert repr(got).split("\n", 1)[1] == repr(want).split("\n", 1)[1]
        assert (got.median, got.mean, got.iqr, got.significant_figures, got.has_warnings) == \
            pytest.approx((want.median, want.mean, want.iqr, want.significant_figures, want.has_warnings), rel=1e-12)
    specs = [dict(stmt="x+x", setup="pass", label="add", sub_label=s, description=d, num_threads=nt, env=e)
             for s in ("float", "int") for d in ("n=1", "n=100") for nt in (1, 2) for e in ("A", "BB")]
    for trim in (False, True):
        T, M = [], []
        for k, spec in enumerate(specs):
            raw = list(1e-5 * (1 + k) * (1 + 0.3 * rng.random(7)))
            T.append(tb.Measurement(100, raw, TorchSpec(**spec)))
            M.append(mb.Measurement(100, raw, mb.TaskSpec(**spec)))
        ct, cm = tb.Compare(T), mb.Compare(M)
        if trim:
            for c in (ct, cm):
                c.trim_significant_figures()
                c.highlight_warnings()
        assert str(cm) == str(ct)


# ---- meta tensors, stack_module_state, the model-ensembling tutorial, make_functional -------------

def test_meta_tensors_keep_shapes_and_refuse_data():
    m = nn.Linear(2, 3).to("meta")
    w = m.weight
    assert w.is_meta and not w.is_cpu and w.device == mg.device("meta") and str(w.device) == "meta"
    assert repr(w) == "Parameter containing:\ntensor(..., device='meta', size=(3, 2), requires_grad=True)"
    assert isinstance(w, nn.Parameter) and w.requires_grad  # the same objects, as Module.to's casts
    for view in (w.T, w[0], w.reshape(6), w.unsqueeze(0), w.expand(2, 3, 2), w.detach(), w.double()):
        assert view.is_meta  # shape-only ops stay meta
    assert tuple(w.T.shape) == (2, 3) and w.double().dtype == mg.float64
    for read in (lambda: w.tolist(), lambda: w.detach().numpy(), lambda: np.asarray(w.detach()), lambda: w + 1,
                 lambda: m(mg.ones(2)), lambda: float(m.bias[0]), lambda: w.sum(), lambda: mg.ones(2).to("meta").to("cpu")):
        with pytest.raises(RuntimeError, match="meta tensor \\(device='meta'\\) has a shape and a dtype but no data"):
            read()
    assert repr(mg.empty(2, 3, device="meta")) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(mg.zeros(2, dtype=mg.int64, device="meta")) == "tensor(..., device='meta', size=(2,), dtype=minigrad.int64)"
    for t in (mg.ones(4, device="meta"), mg.full((2,), 1.0, device="meta"), mg.randn(3, device="meta"),
              mg.zeros_like(mg.empty(2, device="meta")), mg.ones(3).to("meta")):
        assert t.is_meta
    import copy
    bn = copy.deepcopy(nn.BatchNorm1d(3).to("meta"))
    assert bn.weight.is_meta and bn.running_mean.is_meta and bn.num_batches_tracked.is_meta
    assert not mg.ones(2).is_meta and mg.ones(2).device == mg.device("cpu")
    with pytest.raises(RuntimeError, match="arange: device='meta' is not supported here"):
        mg.arange(3, device="meta")


class _MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def test_model_ensembling_tutorial_runs_and_matches_torch():
    """torch.func's model-ensembling tutorial, ported by renaming torch to mg (smaller sizes)."""
    import copy
    from minigrad.func import functional_call, stack_module_state
    mg.manual_seed(0)
    num_models = 3
    data = mg.randn(5, 8, 1, 3, 4)
    models = [_MLP() for _ in range(num_models)]
    minibatches = data[:num_models]
    loop = [model(mb) for model, mb in zip(models, minibatches)]
    minibatch = data[0]
    loop2 = [model(minibatch) for model in models]
    params, buffers = stack_module_state(models)
    assert [p.size(0) for p in params.values()] == [num_models] * 4 and buffers == {}
    assert all(p.requires_grad and p.is_leaf for p in params.values())
    base_model = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))
    out1 = mg.vmap(fmodel)(params, buffers, minibatches)
    assert mg.allclose(out1, mg.stack(loop), atol=1e-6, rtol=1e-5)
    out2 = mg.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    assert mg.allclose(out2, mg.stack(loop2), atol=1e-6, rtol=1e-5)
    assert base_model.fc1.weight.is_meta  # functional_call put the meta tensors back
    torch = pytest.importorskip("torch")
    tmodels = []
    for m in models:
        t = torch.nn.Sequential(torch.nn.Flatten(1), torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        t.load_state_dict({"1.weight": torch.tensor(m.fc1.weight.detach().numpy()), "1.bias": torch.tensor(m.fc1.bias.detach().numpy()),
                           "3.weight": torch.tensor(m.fc2.weight.detach().numpy()), "3.bias": torch.tensor(m.fc2.bias.detach().numpy())})
        tmodels.append(t)
    tparams, _ = torch.func.stack_module_state(tmodels)
    np.testing.assert_array_equal(params["fc1.weight"].detach().numpy(), tparams["1.weight"].detach().numpy())
    tbase = copy.deepcopy(tmodels[0]).to("meta")
    tout = torch.vmap(lambda p, x: torch.func.functional_call(tbase, p, (x,)))(tparams, torch.tensor(minibatches.numpy()))
    np.testing.assert_allclose(out1.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_stack_module_state_buffers_and_errors_as_torch():
    from minigrad.func import stack_module_state
    bns = [nn.BatchNorm1d(3) for _ in range(2)]
    params, buffers = stack_module_state(bns)
    assert {k: tuple(v.shape) for k, v in buffers.items()} == {"running_mean": (2, 3), "running_var": (2, 3),
                                                               "num_batches_tracked": (2,)}
    assert buffers["num_batches_tracked"].dtype == mg.int64 and not buffers["running_mean"].requires_grad
    with pytest.raises(RuntimeError, match="Expected all models to have the same training/eval mode"):
        stack_module_state([nn.Linear(2, 3), nn.Linear(2, 3).eval()])
    with pytest.raises(RuntimeError, match="Expected all models to be of the same class"):
        stack_module_state([nn.Linear(2, 3), nn.Conv1d(2, 3, 1)])
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        stack_module_state([])
    with pytest.raises(RuntimeError, match="different shapes"):
        stack_module_state([nn.Linear(2, 3), nn.Linear(2, 4)])


def test_make_functional_with_buffers_as_functorch():
    m = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).eval()
    with pytest.warns(FutureWarning, match="functorch.make_functional_with_buffers` is deprecated"):
        fmodel, params, buffers = mg.func.make_functional_with_buffers(m)
    assert [tuple(p.shape) for p in params] == [(3, 3), (3,), (3,), (3,)] and len(buffers) == 3
    assert params[0] is not m[0].weight and params[0].requires_grad
    x = mg.randn(4, 3)
    assert mg.allclose(fmodel(params, buffers, x), m(x))
    doubled = tuple(p * 2 for p in params[:2]) + params[2:]
    assert not mg.allclose(fmodel(doubled, buffers, x), m(x))
    assert repr(fmodel).startswith("FunctionalModuleWithBuffers(\n  (stateless_model): Sequential(")
    # the ensembling form: vmap over stacked copies
    ps = tuple(mg.stack([p.detach(), p.detach() + 1]) for p in params)
    bs = tuple(mg.stack([b, b]) for b in buffers)
    out = mg.vmap(fmodel)(ps, bs, mg.stack([x, x]))
    assert mg.allclose(out[0], m(x))
    with pytest.warns(FutureWarning):
        f2, p2 = mg.func.make_functional(nn.Linear(2, 3), disable_autograd_tracking=True)
    assert not p2[0].requires_grad and tuple(f2(p2, mg.ones(1, 2)).shape) == (1, 3)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="has buffers"):
        mg.func.make_functional(nn.BatchNorm1d(2))


# ---- gradcheck's flags, with PyTorch's meaning ---------------------------------------------------

def _fn_pair():
    x = mg.randn(3, dtype=mg.float64, requires_grad=True)
    y = mg.randn(3, dtype=mg.float64, requires_grad=True)
    return x, y


def test_gradcheck_flags_pass_on_a_correct_function():
    from minigrad.autograd import gradcheck, gradgradcheck
    x, y = _fn_pair()

    def f(a, b):
        return (a * b).sin(), a.exp().sum()
    assert gradcheck(f, (x, y), check_forward_ad=True, check_batched_grad=True, check_batched_forward_grad=True,
                     check_grad_dtypes=True, check_undefined_grad=True, fast_mode=True, nondet_tol=0.0)
    assert gradcheck(f, (x, y), check_forward_ad=True, check_backward_ad=False)
    assert gradgradcheck(lambda a: (a * a).sin(), (x,), check_fwd_over_rev=True, check_batched_grad=True)
    with pytest.raises(ValueError, match="at least one of check_forward_ad or check_backward_ad"):
        gradcheck(f, (x, y), check_backward_ad=False)


def _custom(backward, jvp):
    class Op(mg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    Op.backward = staticmethod(backward)
    Op.jvp = staticmethod(jvp)
    return Op.apply


def test_gradcheck_flags_catch_what_torchs_catch():
    from minigrad.autograd import GradcheckError, gradcheck
    x, _ = _fn_pair()
    right_bw, right_jvp = (lambda ctx, g: g * 2), (lambda ctx, t: t * 2)
    # a wrong forward-mode rule: only check_forward_ad sees it
    wrong_jvp = _custom(right_bw, lambda ctx, t: t * 3)
    assert gradcheck(wrong_jvp, (x,))
    with pytest.raises(GradcheckError, match="Forward-mode \\(forward AD\\) Jacobian mismatch"):
        gradcheck(wrong_jvp, (x,), check_forward_ad=True)
    assert gradcheck(wrong_jvp, (x,), check_forward_ad=True, raise_exception=False) is False
    # a wrong backward: check_backward_ad=False skips it
    wrong_bw = _custom(lambda ctx, g: g * 3, right_jvp)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch"):
        gradcheck(wrong_bw, (x,))
    assert gradcheck(wrong_bw, (x,), check_backward_ad=False, check_forward_ad=True)

    # right Jacobian, but a nonzero gradient for zero output gradients
    def not_mul(ctx, g):
        return g * 2 if bool((g != 0).any()) else g * 0 + 1.0
    bad_zero = _custom(not_mul, right_jvp)
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(bad_zero, (x,))

    # a backward returning another dtype: the engine casts it to the input's, as PyTorch's engine does
    wrong_dtype = _custom(lambda ctx, g: (g * 2).float(), right_jvp)
    assert gradcheck(wrong_dtype, (x,), check_grad_dtypes=True, atol=1e-6, rtol=1e-6)

    # a backward that reads values: a custom Function has no batching rule, so vmap runs it once
    # per sample (its warning silenced there, as PyTorch's gradcheck does) and the batched gradients are right
    def reads_values(ctx, g):
        return mg.tensor(g.detach().numpy() * 2)
    assert gradcheck(_custom(reads_values, right_jvp), (x,), check_batched_grad=True)


# ---- item 6: complex results never silently lose a gradient ---------------------------------------
# (issue 35 then made complex autograd real: these ops record with PyTorch's convention, and an op
# not marked complex-capable still raises naming it; tests/complex has the rest)

@pytest.mark.parametrize("which", ["to", "mul", "radd"])
def test_an_op_with_a_complex_result_records_the_gradient_as_pytorch(which):
    torch = pytest.importorskip("torch")
    ops = {"to": lambda L, x: x.to(L.complex128),
           "mul": lambda L, x: x * L.tensor(np.array([1j, 2j, 0j])),
           "radd": lambda L, x: L.tensor(np.array([1 + 1j, 2j, 1 + 0j])) + x}
    x = mg.randn(3, dtype=mg.float64, requires_grad=True)
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    ops[which](mg, x).abs().sum().backward()
    ops[which](torch, xt).abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_an_op_not_complex_capable_raises_naming_it():
    x = mg.randn(3, dtype=mg.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="^softmax: the gradient of this op for complex tensors is not implemented"):
        mg.nn.functional.softmax(x * 1j, 0)
    assert mg.nn.functional.softmax(x.detach() * 1j, 0).dtype.kind == "c"  # without a graph it runs


def test_a_complex_tensor_can_require_grad():
    z = mg.from_numpy(np.array([1 + 2j]))
    for t in (z.requires_grad_(), mg.tensor(np.array([1 + 2j]), requires_grad=True),
              mg.zeros(2, dtype=np.complex64, requires_grad=True)):
        assert t.requires_grad and t.is_leaf


# ---- item 7: error types as PyTorch's (RuntimeError), still the old type for existing callers ------

_ERROR_CASES = {
    "broadcast": lambda L: L.ones(2, 3) + L.ones(4, 3),
    "where": lambda L: L.where(L.ones(2, 3) > 0, L.ones(4, 3), L.ones(2, 3)),
    "gather": lambda L: L.ones(2, 3).gather(1, L.tensor([[5]])),
    "scatter": lambda L: L.zeros(3).scatter(0, L.tensor([5]), L.ones(1)),
    "narrow": lambda L: L.ones(3).narrow(0, 2, 5),
    "chunk0": lambda L: L.ones(3).chunk(0),
    "masked_fill": lambda L: L.ones(2, 3).masked_fill(L.ones(4, 3) > 0, 0.0),
    "mse_shape": lambda L: L.nn.functional.mse_loss(L.ones(2, 3), L.ones(3, 3)),
    "one_hot": lambda L: L.nn.functional.one_hot(L.tensor([5]), 3),
    "layer_norm": lambda L: L.nn.functional.layer_norm(L.ones(2, 3), (4,)),
    "batch_norm": lambda L: L.nn.functional.batch_norm(L.ones(2, 3), L.ones(4), L.ones(4)),
    "int_floordiv_zero": lambda L: L.tensor([1, 2]) // L.tensor([0, 1]),
    "int_mod_zero": lambda L: L.tensor([1, 2]) % 0,
    "int_div_floor_zero": lambda L: L.div(L.tensor([1]), L.tensor([0]), rounding_mode="floor"),
    "bool_sub": lambda L: L.tensor([True]) - L.tensor([False]),
    "lerp": lambda L: L.lerp(L.ones(2), L.ones(3), 0.5),
    "conv_small": lambda L: L.nn.functional.conv2d(L.ones(1, 1, 2, 2), L.ones(1, 1, 3, 3)),
    "avg_pool_pad": lambda L: L.nn.functional.avg_pool2d(L.ones(1, 1, 4, 4), 2, padding=2),
    "div_mode": lambda L: L.div(L.ones(2), L.ones(2), rounding_mode="typo"),
    "int_pow_neg": lambda L: L.tensor([2, 3]) ** -2,
}


@pytest.mark.parametrize("name", sorted(_ERROR_CASES))
def test_error_types_are_torchs(name):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError):
            _ERROR_CASES[name](mg)
        torch = pytest.importorskip("torch")
        with pytest.raises(RuntimeError):
            _ERROR_CASES[name](torch)


def test_shape_and_index_errors_keep_their_old_types_too():
    with pytest.raises(ValueError, match="add: shapes \\(2, 3\\) and \\(4, 3\\) cannot be broadcast"):
        mg.ones(2, 3) + mg.ones(4, 3)
    with pytest.raises(IndexError, match="gather\\(\\): index out of range"):
        mg.ones(2, 3).gather(1, mg.tensor([[5]]))
    with pytest.raises(TypeError):
        mg.tensor([True]) - mg.tensor([False])
    assert (mg.tensor([1.0]) // 0).tolist() == [float("inf")]  # floats divide by zero as IEEE says


def test_meta_modules_and_state_dicts_as_torch():
    import warnings
    m, meta = nn.Linear(2, 3), nn.Linear(2, 3).to("meta")
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor"):
        m.load_state_dict(meta.state_dict())  # never the placeholder's zeros
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        meta.load_state_dict(m.state_dict())  # into meta: a no-op with PyTorch's warning
    assert meta.weight.is_meta and any("which is a no-op" in str(x.message) for x in w)
    meta.load_state_dict(m.state_dict(), assign=True)  # PyTorch's meta-init pattern
    assert not meta.weight.is_meta and mg.allclose(meta(mg.ones(2)), m(mg.ones(2)))
    with pytest.raises(RuntimeError, match="copy_: a meta tensor"):
        mg.ones(3, 2).copy_(mg.empty(3, 2, device="meta"))
