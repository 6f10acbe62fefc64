"""nn.TransformerEncoderLayer / DecoderLayer / Encoder / Decoder / Transformer against PyTorch: a PyTorch
state_dict loads (through NumPy) and gives the same outputs and gradients of the inputs and every parameter
(float64 to 1e-10, float32 to the bound stated), and a minigrad state_dict loads into PyTorch."""
import copy
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F

torch = pytest.importorskip("torch")
tnn = torch.nn

RTOL, ATOL = 1e-10, 1e-12
RTOL32, ATOL32 = 1e-4, 2e-5       # float32 through LayerNorms, two attentions and a feed-forward block
S, T, N, E, HEADS, FF = 5, 4, 3, 8, 2, 16


def _close(m, t, rtol=RTOL, atol=ATOL, msg=""):
    m = m.detach().numpy() if isinstance(m, mg.Tensor) else m
    t = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    assert m.shape == t.shape, (msg, m.shape, t.shape)
    np.testing.assert_allclose(m, t, rtol=rtol, atol=atol, err_msg=msg)


def _load(m_mod, t_mod):
    m_mod.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()})


def _both(make, dtype=torch.float64):
    """make(lib, dtype) -> module; the torch one's weights loaded into the minigrad one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor's notice, in both
        torch.manual_seed(0)
        t = make(tnn, torch.nn.functional, dtype)
        m = make(nn, F, mg.float64 if dtype == torch.float64 else mg.float32)
    _load(m, t)
    return m, t


def _compare(m, t, inputs, kwargs=None, train=False, grad=True, rtol=RTOL, atol=ATOL):
    """Forward (+ backward of sum(out * r)) in both; compares output, input and parameter gradients."""
    kwargs = kwargs or {}
    m.train(train)
    t.train(train)
    mi = [mg.tensor(a, requires_grad=grad) for a in inputs]
    ti = [torch.tensor(a, requires_grad=grad) for a in inputs]
    mk = {k: mg.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's nested-tensor prototype notice
        if grad:
            out_t, out_m = t(*ti, **tk), m(*mi, **mk)
        else:
            with torch.no_grad(), mg.no_grad():
                out_t, out_m = t(*ti, **tk), m(*mi, **mk)
    _close(out_m, out_t, rtol, atol, "output")
    if not grad:
        return out_m
    r = np.random.default_rng(9).standard_normal(tuple(out_t.shape))
    (out_t * torch.tensor(r)).sum().backward()
    (out_m * mg.tensor(r)).sum().backward()
    for i, (a, b) in enumerate(zip(mi, ti)):
        _close(a.grad, b.grad, rtol, atol, f"grad of input {i}")
    t_named, m_named = dict(t.named_parameters()), dict(m.named_parameters())
    assert list(m_named) == list(t_named)
    for name in t_named:
        _close(m_named[name].grad, t_named[name].grad, rtol, atol, f"grad {name}")
    return out_m


def _seq(n, batch_first, unbatched=False, seed=0, dtype=np.float64):
    shape = (n, E) if unbatched else ((N, n, E) if batch_first else (n, N, E))
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


_kpm = np.zeros((N, S), bool)
_kpm[0, 3:] = True
_kpm[2, 1:] = True
_causal_T = np.triu(np.full((T, T), -np.inf), 1)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu", "callable"])
def test_encoder_layer_matches_torch(batch_first, norm_first, activation):
    def make(lib, Fn, dt):
        act = (lambda x: Fn.gelu(x, approximate="tanh")) if activation == "callable" else activation
        return lib.TransformerEncoderLayer(E, HEADS, FF, 0.0, act, batch_first=batch_first, norm_first=norm_first,
                                           dtype=dt)
    m, t = _both(make)
    _compare(m, t, [_seq(S, batch_first)], {"src_key_padding_mask": _kpm}, train=True)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(norm_first):
    m, t = _both(lambda lib, Fn, dt: lib.TransformerDecoderLayer(E, HEADS, FF, 0.0, "gelu", batch_first=True,
                                                                  norm_first=norm_first, bias=not norm_first,
                                                                  dtype=dt))
    _compare(m, t, [_seq(T, True), _seq(S, True, seed=1)],
             {"tgt_mask": _causal_T, "memory_key_padding_mask": _kpm, "tgt_is_causal": True}, train=True)


@pytest.mark.parametrize("train, grad", [(True, True), (False, True), (False, False)])
def test_encoder_with_padding_mask_matches_torch(train, grad):
    """Evaluation without gradient is where PyTorch runs its nested-tensor path: the padded positions come
    out as zeros before the final norm; minigrad gives the same outputs."""
    m, t = _both(lambda lib, Fn, dt: lib.TransformerEncoder(
        lib.TransformerEncoderLayer(E, HEADS, FF, 0.0, batch_first=True, dtype=dt), 2,
        lib.LayerNorm(E, dtype=dt)))
    _compare(m, t, [_seq(S, True)], {"src_key_padding_mask": _kpm}, train=train, grad=grad)


def test_encoder_nested_path_zeroes_padding_only_where_torch_does():
    m, t = _both(lambda lib, Fn, dt: lib.TransformerEncoder(
        lib.TransformerEncoderLayer(E, HEADS, FF, 0.0, batch_first=True, dtype=dt), 1))
    src = _seq(S, True)
    out = _compare(m, t, [src], {"src_key_padding_mask": _kpm}, grad=False).numpy()
    assert (out[_kpm] == 0).all() and (out[~_kpm] != 0).all()
    kpm = _kpm.copy()
    kpm[1, 1] = True                                          # not left-aligned: no nested path in PyTorch
    out = _compare(m, t, [src], {"src_key_padding_mask": kpm}, grad=False).numpy()
    assert (out[kpm] != 0).all()
    m.use_nested_tensor = False
    assert (m(mg.tensor(src), src_key_padding_mask=mg.tensor(_kpm)).detach().numpy()[_kpm] != 0).all()


@pytest.mark.parametrize("is_causal", [None, True])
def test_encoder_causal_mask_matches_torch(is_causal):
    m, t = _both(lambda lib, Fn, dt: lib.TransformerEncoder(
        lib.TransformerEncoderLayer(E, HEADS, FF, 0.0, dtype=dt), 2, enable_nested_tensor=False))
    mask = np.triu(np.full((S, S), -np.inf), 1)
    _compare(m, t, [_seq(S, False)], {"mask": mask, "is_causal": is_causal})


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch(batch_first, norm_first):
    m, t = _both(lambda lib, Fn, dt: lib.Transformer(E, HEADS, 2, 2, FF, 0.0, batch_first=batch_first,
                                                      norm_first=norm_first, dtype=dt))
    kw = {"tgt_mask": _causal_T, "src_key_padding_mask": _kpm, "memory_key_padding_mask": _kpm,
          "tgt_key_padding_mask": np.where(np.arange(T) >= 3, -np.inf, 0.0)[None].repeat(N, 0),
          "memory_mask": np.random.default_rng(3).random((T, S)) > 0.9}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bool memory mask with a float tgt padding mask: both frameworks warn
        _compare(m, t, [_seq(S, batch_first), _seq(T, batch_first, seed=1)], kw)


def test_transformer_unbatched_and_callable_activation_match_torch():
    m, t = _both(lambda lib, Fn, dt: lib.Transformer(E, HEADS, 1, 1, FF, 0.0, activation=Fn.gelu, dtype=dt))
    _compare(m, t, [_seq(S, False, unbatched=True), _seq(T, False, unbatched=True, seed=1)],
             {"tgt_mask": _causal_T}, train=True)


def test_transformer_module_activation_follows_torchs_decoder_clone_quirk():
    """PyTorch's TransformerDecoderLayer.__setstate__ gives a deep-copied layer F.relu when its activation
    is a Module; nn.Transformer's decoder layers are such copies, so they run relu. minigrad matches."""
    m, t = _both(lambda lib, Fn, dt: lib.Transformer(E, HEADS, 1, 1, FF, 0.0, activation=lib.GELU("tanh"),
                                                      dtype=dt))
    assert t.decoder.layers[0].activation is torch.nn.functional.relu
    assert m.decoder.layers[0].activation is F.relu
    assert isinstance(m.encoder.layers[0].activation, nn.GELU)
    _compare(m, t, [_seq(S, False), _seq(T, False, seed=1)], train=True)


def test_eval_mode_dropout_matches_torch_and_train_mode_is_seeded():
    m, t = _both(lambda lib, Fn, dt: lib.Transformer(E, HEADS, 1, 1, FF, 0.3, batch_first=True, dtype=dt))
    src, tgt = _seq(S, True), _seq(T, True, seed=1)
    _compare(m, t, [src, tgt], {"tgt_mask": _causal_T}, train=False)
    m.train()
    outs = []
    for seed in (3, 3, 4):
        mg.manual_seed(seed)
        outs.append(m(mg.tensor(src), mg.tensor(tgt)).detach().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    assert np.abs(outs[0] - outs[2]).max() > 1e-3


def test_float32_matches_torch_within_bound():
    m, t = _both(lambda lib, Fn, dt: lib.Transformer(E, HEADS, 1, 1, FF, 0.0, batch_first=True, dtype=dt),
                 dtype=torch.float32)
    out = _compare(m, t, [_seq(S, True, dtype=np.float32), _seq(T, True, seed=1, dtype=np.float32)],
                   {"tgt_mask": _causal_T.astype(np.float32)}, rtol=RTOL32, atol=ATOL32)
    assert out.dtype == mg.float32


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_state_dict_into_torch():
    mg.manual_seed(0)
    m = nn.Transformer(E, HEADS, 1, 2, FF, 0.0, dtype=mg.float64, norm_first=True)
    t = tnn.Transformer(E, HEADS, 1, 2, FF, 0.0, dtype=torch.float64, norm_first=True)
    assert list(m.state_dict()) == list(t.state_dict())
    t.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    _compare(m, t, [_seq(S, False), _seq(T, False, seed=1)], {"tgt_mask": _causal_T})


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_names_init_and_attributes_as_torch():
    m = nn.Transformer(E, HEADS, 1, 1, FF)
    t = tnn.Transformer(E, HEADS, 1, 1, FF)
    assert [n for n, _ in m.named_modules()] == [n for n, _ in t.named_modules()]
    assert list(m.state_dict()) == list(t.state_dict())
    assert repr(m) == repr(t)
    w = m.encoder.layers[0].linear1.weight.detach().numpy()      # re-drawn with xavier_uniform_
    bound = np.sqrt(6 / (E + FF))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    layer = m.encoder.layers[0]
    assert layer.activation_relu_or_gelu == 1 and not layer.norm_first and layer.self_attn.dropout == 0.1
    assert nn.TransformerEncoderLayer(E, HEADS, activation="gelu").activation_relu_or_gelu == 2
    assert nn.TransformerEncoderLayer(E, HEADS, activation=mg.tanh).activation_relu_or_gelu == 0


def test_generate_square_subsequent_mask():
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    _close(mask, tnn.Transformer.generate_square_subsequent_mask(4))
    assert mask.dtype == mg.get_default_dtype()
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=mg.float64).dtype == mg.float64


def test_enable_nested_tensor_warning_and_attributes_as_torch():
    layer = nn.TransformerEncoderLayer(E, HEADS, FF)              # batch_first=False
    with pytest.warns(UserWarning, match="self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(layer, 1)
    assert enc.enable_nested_tensor and not enc.use_nested_tensor and enc.mask_check
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, HEADS, FF, batch_first=True), 1)
        nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
    assert enc.use_nested_tensor


def test_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(E, HEADS, FF)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    np.testing.assert_array_equal(enc.layers[0].linear1.weight.detach().numpy(),
                                  layer.linear1.weight.detach().numpy())
    dec = copy.deepcopy(nn.TransformerDecoderLayer(E, HEADS, FF, activation="gelu"))
    assert dec.activation is F.gelu                               # a function activation survives the copy


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(E, HEADS, activation="tanh")
    model = nn.Transformer(E, HEADS, 1, 1, FF)
    with pytest.raises(RuntimeError, match=r"batch number of src and tgt must be equal .*\(5, 3, 8\).*\(4, 2, 8\)"):
        model(mg.randn(S, N, E), mg.randn(T, 2, E))
    with pytest.raises(RuntimeError, match=r"feature number .* d_model \(8\).*\(4, 3, 6\)"):
        model(mg.randn(S, N, E), mg.randn(T, N, 6))
    with pytest.raises(AssertionError, match=r"MultiheadAttention: .*embedding dimension of 8, but got 6"):
        nn.TransformerEncoderLayer(E, HEADS, FF)(mg.randn(S, N, 6))
