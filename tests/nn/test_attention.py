"""F.scaled_dot_product_attention, F.multi_head_attention_forward and nn.MultiheadAttention against PyTorch:
outputs, attention weights, gradients of the inputs and of every parameter (float64 to 1e-10, float32 to the
bound stated), masks, fully masked rows, dropout, state_dict interchange and errors."""
import copy
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RTOL, ATOL = 1e-10, 1e-12          # float64
RTOL32, ATOL32 = 1e-5, 2e-6        # float32: a few ulps through softmax and two matmuls


def _close(m, t, rtol=RTOL, atol=ATOL, msg=""):
    m = m.detach().numpy() if isinstance(m, mg.Tensor) else m
    t = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    assert m.shape == t.shape, (msg, m.shape, t.shape)
    assert (np.isnan(m) == np.isnan(t)).all(), f"{msg}: nan in different places"
    np.testing.assert_allclose(m, t, rtol=rtol, atol=atol, err_msg=msg)


def _pair(a, grad=True):
    a = np.asarray(a)
    g = grad and a.dtype.kind == "f"
    return mg.tensor(a, requires_grad=g), torch.tensor(a, requires_grad=g)


# -- scaled_dot_product_attention ------------------------------------------------------------------

B, H, L, S, E = 2, 3, 4, 5, 6
_R = np.random.default_rng(7)
_fully = np.ones((B, H, L, S), bool)
_fully[0, 1, 2] = False                                   # one query sees no key
_finf = _R.standard_normal((B, H, L, S))
_finf[1, 0, 3] = -np.inf                                  # a float mask that masks a whole row
_finf[0, 2, :, 1] = -np.inf

SDPA_CASES = {
    "plain": ((B, H, L, E), (B, H, S, E), (B, H, S, E), None, {}),
    "value_dim": ((B, H, L, E), (B, H, S, E), (B, H, S, 7), None, {}),
    "causal_L<S": ((B, H, L, E), (B, H, S, E), (B, H, S, E), None, {"is_causal": True}),
    "causal_L>S": ((B, H, S, E), (B, H, L, E), (B, H, L, E), None, {"is_causal": True}),
    "scale": ((B, H, L, E), (B, H, S, E), (B, H, S, E), None, {"scale": 0.3}),
    "2d": ((L, E), (S, E), (S, E), None, {}),
    "3d": ((B, L, E), (B, S, E), (B, S, E), None, {}),
    "5d": ((2, B, H, L, E), (2, B, H, S, E), (2, B, H, S, E), None, {}),
    "kv_batch_broadcast": ((B, H, L, E), (1, H, S, E), (1, H, S, E), None, {}),
    "bool_LS": ((B, H, L, E), (B, H, S, E), (B, H, S, E), _R.random((L, S)) > 0.3, {}),
    "bool_B11S": ((B, H, L, E), (B, H, S, E), (B, H, S, E), _R.random((B, 1, 1, S)) > 0.3, {}),
    "bool_full_rows": ((B, H, L, E), (B, H, S, E), (B, H, S, E), _fully, {}),
    "float_LS": ((B, H, L, E), (B, H, S, E), (B, H, S, E), _R.standard_normal((L, S)), {}),
    "float_H1S": ((B, H, L, E), (B, H, S, E), (B, H, S, E), _R.standard_normal((H, 1, S)), {}),
    "float_inf_rows": ((B, H, L, E), (B, H, S, E), (B, H, S, E), _finf, {}),
    "float32_mask": ((B, H, L, E), (B, H, S, E), (B, H, S, E), _R.standard_normal((L, S)).astype(np.float32), {}),
    "gqa": ((B, 6, L, E), (B, 2, S, E), (B, 2, S, E), None, {"enable_gqa": True}),
    "gqa_kv_heads_differ": ((B, 6, L, E), (B, 3, S, E), (B, 2, S, E), _R.random((L, S)) > 0.2,
                            {"enable_gqa": True, "scale": 0.5}),
    "empty_query": ((B, H, 0, E), (B, H, S, E), (B, H, S, E), None, {}),
    "empty_keys": ((B, H, L, E), (B, H, 0, E), (B, H, 0, E), None, {}),
    "gqa_empty_keys": ((B, 6, L, E), (B, 2, 0, E), (B, 2, 0, E), None, {"enable_gqa": True}),
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch_values_and_gradients(case):
    qs, ks, vs, mask, kw = SDPA_CASES[case]
    rng = np.random.default_rng(0)
    (mq, tq), (mk, tk), (mv, tv) = (_pair(rng.standard_normal(s)) for s in (qs, ks, vs))
    mm, tm = (None, None) if mask is None else _pair(mask, grad=False)
    out_t = TF.scaled_dot_product_attention(tq, tk, tv, tm, **kw)
    out_m = F.scaled_dot_product_attention(mq, mk, mv, mm, **kw)
    _close(out_m, out_t, msg="output")
    assert out_m.dtype == mg.float64
    r = rng.standard_normal(tuple(out_t.shape))
    (out_t * torch.tensor(r)).sum().backward()
    (out_m * mg.tensor(r)).sum().backward()
    for name, a, b in (("q", mq, tq), ("k", mk, tk), ("v", mv, tv)):
        _close(a.grad, b.grad, msg=f"grad {name}")


def test_sdpa_fully_masked_query_gives_zeros_and_no_gradient():
    rng = np.random.default_rng(1)
    (mq, tq), (mk, tk), (mv, tv) = (_pair(rng.standard_normal(s)) for s in ((B, H, L, E), (B, H, S, E), (B, H, S, E)))
    out = F.scaled_dot_product_attention(mq, mk, mv, mg.tensor(_fully))
    assert (out.detach().numpy()[0, 1, 2] == 0).all()
    out.sum().backward()
    assert (mq.grad.numpy()[0, 1, 2] == 0).all() and np.isfinite(mk.grad.numpy()).all()


def test_sdpa_float32_matches_torch_within_bound():
    rng = np.random.default_rng(2)
    arrs = [rng.standard_normal(s).astype(np.float32) for s in ((B, H, L, E), (B, H, S, E), (B, H, S, E))]
    mask = rng.random((L, S)) > 0.3
    out_m = F.scaled_dot_product_attention(*map(mg.tensor, arrs), mg.tensor(mask))
    out_t = TF.scaled_dot_product_attention(*map(torch.tensor, arrs), torch.tensor(mask))
    assert out_m.dtype == mg.float32
    _close(out_m, out_t, RTOL32, ATOL32)


def test_sdpa_float32_mask_on_float64_query_and_float64_mask_on_float32_query():
    q = mg.randn(2, 3, 4, dtype=mg.float64)
    assert F.scaled_dot_product_attention(q, q, q, mg.zeros(3, 3, dtype=mg.float32)).dtype == mg.float64
    q32 = q.to(mg.float32)
    with pytest.raises(RuntimeError, match="attn_mask dtype"):
        F.scaled_dot_product_attention(q32, q32, q32, mg.zeros(3, 3, dtype=mg.float64))


@pytest.mark.parametrize("args, match", [
    (lambda: ((6,), (5, 6), (5, 6), None, {}), "at least 2 dimensional"),
    (lambda: ((4, 6), (5, 6), (5, 6), np.zeros((4, 5), np.int64), {}), "attn_mask dtype"),
    (lambda: ((4, 6), (5, 6), (5, 6), np.zeros((4, 6)), {}), r"attn_mask of shape \(4, 6\)"),
    (lambda: ((4, 6), (5, 6), (6, 6), None, {}), "same sequence length"),
    (lambda: ((4, 6), (5, 6), (5, 6), np.ones((4, 5), bool), {"is_causal": True}), "is_causal"),
    (lambda: ((B, 6, L, E), (B, 4, S, E), (B, 4, S, E), None, {"enable_gqa": True}), "must divide"),
])
def test_sdpa_errors(args, match):
    qs, ks, vs, mask, kw = args()
    with pytest.raises(RuntimeError, match=match):
        F.scaled_dot_product_attention(mg.randn(*qs, dtype=mg.float64), mg.randn(*ks, dtype=mg.float64),
                                       mg.randn(*vs, dtype=mg.float64), None if mask is None else mg.tensor(mask),
                                       **kw)


def test_sdpa_mixed_dtypes_raise_as_torch():
    q = mg.randn(4, 6, dtype=mg.float64)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(q, q.to(mg.float32), q)


def _dropped_weights(p, seed, shape=(2, 4, 50, 40)):
    """With value = I (S x S) the output is the (dropped-out) attention weights themselves."""
    rng = np.random.default_rng(3)
    q = mg.tensor(rng.standard_normal(shape[:-1] + (8,)))
    k = mg.tensor(rng.standard_normal(shape[:-2] + (shape[-1], 8)))
    v = mg.eye(shape[-1], dtype=mg.float64)
    mg.manual_seed(seed)
    return (F.scaled_dot_product_attention(q, k, v, dropout_p=p).numpy(),
            F.scaled_dot_product_attention(q, k, v).numpy())


def test_sdpa_dropout_zeroes_weights_and_scales_the_rest():
    p = 0.3
    dropped, weights = _dropped_weights(p, seed=11)
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], weights[kept] / (1 - p), rtol=1e-12)
    frac = 1 - kept.mean()                                    # 16000 draws: sd of the fraction ~0.004
    assert abs(frac - p) < 0.02, frac


def test_sdpa_dropout_is_deterministic_under_minigrads_generator():
    a, _ = _dropped_weights(0.5, seed=5)
    b, _ = _dropped_weights(0.5, seed=5)
    c, _ = _dropped_weights(0.5, seed=6)
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


def test_sdpa_dropout_gradient_flows_through_kept_weights_only():
    rng = np.random.default_rng(4)
    q = mg.tensor(rng.standard_normal((1, 1, 3, 4)), requires_grad=True)
    k = mg.tensor(rng.standard_normal((1, 1, 5, 4)))
    v = mg.tensor(rng.standard_normal((1, 1, 5, 2)), requires_grad=True)
    mg.manual_seed(3)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    mg.manual_seed(3)
    w = F.scaled_dot_product_attention(q, k, mg.eye(5, dtype=mg.float64), dropout_p=0.5).detach()  # same mask
    np.testing.assert_allclose(out.detach().numpy(), (w @ v.detach()).numpy(), rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), w.numpy().sum(-2)[..., None].repeat(2, -1), rtol=1e-12)


# -- nn.MultiheadAttention ---------------------------------------------------------------------------

def _load(m_mod, t_mod):
    m_mod.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()})


def _mha_pair(dtype=torch.float64, **kw):
    torch.manual_seed(0)
    t = torch.nn.MultiheadAttention(**kw, dtype=dtype)
    m = nn.MultiheadAttention(**kw, dtype=mg.float64 if dtype == torch.float64 else mg.float32)
    _load(m, t)
    return m, t


def _run_mha(m, t, q, k, v, same="", rtol=RTOL, atol=ATOL, **fwd):
    """Forward + backward in both (loss: sum(out * r) + sum(nan_to_num(weights)^2)); compares the output, the
    weights and the gradients of the inputs and of every parameter."""
    (mq, tq) = _pair(q)
    (mk, tk) = (mq, tq) if "qk" in same else _pair(k)
    (mv, tv) = (mk, tk) if "kv" in same else _pair(v)
    tf = {a: torch.tensor(b) if isinstance(b, np.ndarray) else b for a, b in fwd.items()}
    mf = {a: mg.tensor(b) if isinstance(b, np.ndarray) else b for a, b in fwd.items()}
    out_t, w_t = t(tq, tk, tv, **tf)
    out_m, w_m = m(mq, mk, mv, **mf)
    _close(out_m, out_t, rtol, atol, "output")
    r = np.random.default_rng(9).standard_normal(tuple(out_t.shape))
    loss_t, loss_m = (out_t * torch.tensor(r)).sum(), (out_m * mg.tensor(r)).sum()
    if w_t is None:
        assert w_m is None
    else:
        _close(w_m, w_t, rtol, atol, "weights")
        loss_t = loss_t + (w_t.nan_to_num() ** 2).sum()
        loss_m = loss_m + (mg.where(w_m != w_m, 0.0, w_m) ** 2).sum()
    loss_t.backward()
    loss_m.backward()
    for name, a, b in (("query", mq, tq), ("key", mk, tk), ("value", mv, tv)):
        if b.grad is not None:
            _close(a.grad, b.grad, rtol, atol, f"grad {name}")
    t_named, m_named = dict(t.named_parameters()), dict(m.named_parameters())
    assert list(m_named) == list(t_named)
    for name in t_named:
        _close(m_named[name].grad, t_named[name].grad, rtol, atol, f"grad {name}")
    return out_m, w_m


_L, _S, _N, _E = 4, 5, 2, 8


def _inputs(kdim=_E, vdim=_E, batch_first=False, unbatched=False, L=_L, S=_S):
    rng = np.random.default_rng(1)

    def shape(n, d):
        return (n, d) if unbatched else ((_N, n, d) if batch_first else (n, _N, d))
    return rng.standard_normal(shape(L, _E)), rng.standard_normal(shape(S, kdim)), rng.standard_normal(shape(S, vdim))


MHA_CASES = {
    "default": ({}, {}, {}),
    "per_head_weights": ({}, {}, {"average_attn_weights": False}),
    "no_weights": ({}, {}, {"need_weights": False}),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, {"kdim": 3, "vdim": 5}, {}),
    "kdim_vdim_sdpa_batch_first": ({"kdim": 3, "vdim": 5, "batch_first": True},
                                   {"kdim": 3, "vdim": 5, "batch_first": True}, {"need_weights": False}),
    "bias_kv_zero_attn_nobias": ({"num_heads": 4, "bias": False, "add_bias_kv": True, "add_zero_attn": True}, {}, {}),
    "bias_kv_zero_attn_masks_sdpa": ({"num_heads": 4, "add_bias_kv": True, "add_zero_attn": True}, {},
                                     {"need_weights": False,
                                      "attn_mask": np.random.default_rng(2).random((_L, _S)) > .5,
                                      "key_padding_mask": np.random.default_rng(3).random((_N, _S)) > .5}),
    "unbatched": ({}, {"unbatched": True}, {}),
    "unbatched_sdpa_kpm": ({"batch_first": True}, {"unbatched": True},
                           {"need_weights": False, "key_padding_mask": np.array([0, 0, 1, 0, 1], bool)}),
    "unbatched_3d_mask": ({}, {"unbatched": True}, {"attn_mask": np.random.default_rng(4).random((2, _L, _S)) > .5}),
}


@pytest.mark.parametrize("case", list(MHA_CASES))
def test_mha_matches_torch(case):
    ctor, shape, fwd = MHA_CASES[case]
    ctor = {"embed_dim": _E, "num_heads": 2, **ctor}
    m, t = _mha_pair(**ctor)
    _run_mha(m, t, *_inputs(**shape), **fwd)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_self_attention_packed_projection(batch_first, need_weights):
    m, t = _mha_pair(embed_dim=_E, num_heads=2, batch_first=batch_first)
    q, _, _ = _inputs(batch_first=batch_first, L=_S)
    _run_mha(m, t, q, q, q, same="qkkv", need_weights=need_weights)


def test_mha_encoder_decoder_attention_key_is_value():
    m, t = _mha_pair(embed_dim=_E, num_heads=4)
    q, k, _ = _inputs()
    _run_mha(m, t, q, k, k, same="kv")


_rng = np.random.default_rng(5)
_am_bool = _rng.random((_L, _S)) > 0.6
_am_float = np.where(_am_bool, -np.inf, _rng.standard_normal((_L, _S)))
_am_3d = _rng.random((_N * 2, _L, _S)) > 0.6
_kpm = np.zeros((_N, _S), bool)
_kpm[1] = True                           # the second sequence is all padding: every row fully masked
_kpm_some = np.zeros((_N, _S), bool)
_kpm_some[0, 3:] = True
_causal = np.triu(np.full((_L, _S), -np.inf), 1)

MASK_CASES = {
    "bool_2d": {"attn_mask": _am_bool},
    "float_2d_with_inf": {"attn_mask": _am_float},
    "bool_3d": {"attn_mask": _am_3d},
    "float_3d": {"attn_mask": np.where(_am_3d, -1e9, 0.25)},
    "kpm_bool_partial": {"key_padding_mask": _kpm_some},
    "kpm_bool_fully_masked": {"key_padding_mask": _kpm},
    "kpm_float": {"key_padding_mask": np.where(_kpm_some, -np.inf, 0.5)},
    "kpm_and_attn_mask": {"key_padding_mask": _kpm, "attn_mask": _am_bool},
    "causal_hint": {"attn_mask": _causal, "is_causal": True},
}


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("case", list(MASK_CASES))
def test_mha_masks_match_torch(case, need_weights):
    m, t = _mha_pair(embed_dim=_E, num_heads=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mismatched-mask-types deprecation (both frameworks)
        _run_mha(m, t, *_inputs(), need_weights=need_weights, **MASK_CASES[case])


def test_mha_fully_masked_rows_nan_with_weights_zero_without():
    m, t = _mha_pair(embed_dim=_E, num_heads=2)
    q, k, v = map(mg.tensor, _inputs())
    out, w = m(q, k, v, key_padding_mask=mg.tensor(_kpm))
    assert np.isnan(out.detach().numpy()[:, 1]).all() and np.isnan(w.detach().numpy()[1]).all()
    assert np.isfinite(out.detach().numpy()[:, 0]).all()
    out, w = m(q, k, v, key_padding_mask=mg.tensor(_kpm), need_weights=False)
    assert w is None
    # attention output 0, so the output is out_proj's bias
    np.testing.assert_allclose(out.detach().numpy()[:, 1], np.broadcast_to(m.out_proj.bias.detach().numpy(),
                                                                           (_L, _E)))


def test_mha_float32_matches_torch_within_bound():
    m, t = _mha_pair(dtype=torch.float32, embed_dim=_E, num_heads=2)
    q, k, v = (a.astype(np.float32) for a in _inputs())
    out, w = _run_mha(m, t, q, k, v, rtol=RTOL32, atol=ATOL32, key_padding_mask=_kpm_some)
    assert out.dtype == mg.float32 and w.dtype == mg.float32


def test_mha_parameters_names_shapes_and_init():
    m = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    t = torch.nn.MultiheadAttention(16, 4, add_bias_kv=True)
    assert list(m.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        assert tuple(m.state_dict()[k].shape) == tuple(v.shape), k
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear" and isinstance(m.out_proj, nn.Linear)
    assert (m.in_proj_bias.detach().numpy() == 0).all() and (m.out_proj.bias.detach().numpy() == 0).all()
    bound = np.sqrt(6 / (16 + 48))                             # xavier_uniform_ on (3E, E)
    w = m.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    sep = nn.MultiheadAttention(16, 4, kdim=3, vdim=5, bias=False)
    tsep = torch.nn.MultiheadAttention(16, 4, kdim=3, vdim=5, bias=False)
    assert list(sep.state_dict()) == list(tsep.state_dict())
    assert sep.in_proj_weight is None and sep.in_proj_bias is None and sep.out_proj.bias is None
    assert np.abs(sep.k_proj_weight.detach().numpy()).max() <= np.sqrt(6 / (16 + 3))
    assert not sep._qkv_same_embed_dim and m._qkv_same_embed_dim and m.head_dim == 4
    assert repr(m) == repr(t).replace("torch.", "")


def test_mha_init_draws_from_minigrads_generator():
    mg.manual_seed(4)
    a = nn.MultiheadAttention(8, 2, add_bias_kv=True)
    mg.manual_seed(4)
    b = nn.MultiheadAttention(8, 2, add_bias_kv=True)
    for (n, p), (_, p2) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), p2.detach().numpy(), err_msg=n)
    assert a.bias_k.detach().numpy().std() > 0


def test_mha_state_dict_into_torch():
    m = nn.MultiheadAttention(_E, 2, kdim=3, vdim=5, add_bias_kv=True, dtype=mg.float64)
    t = torch.nn.MultiheadAttention(_E, 2, kdim=3, vdim=5, add_bias_kv=True, dtype=torch.float64)
    t.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    _run_mha(m, t, *_inputs(kdim=3, vdim=5))


def test_mha_dropout_eval_is_dropout_free_and_train_is_seeded():
    m, t = _mha_pair(embed_dim=_E, num_heads=2, dropout=0.5)
    m.eval()
    t.eval()
    _run_mha(m, t, *_inputs())                                 # eval: no dropout in either
    m.train()
    q, k, v = map(mg.tensor, _inputs())
    outs = []
    for seed in (1, 1, 2):
        mg.manual_seed(seed)
        outs.append(m(q, k, v, average_attn_weights=False)[1].detach().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    assert (outs[0] != outs[2]).any() and (outs[0] == 0).any()
    ref = copy.deepcopy(m).eval()(q, k, v, average_attn_weights=False)[1].detach().numpy()
    kept = outs[0] != 0
    np.testing.assert_allclose(outs[0][kept], ref[kept] / 0.5, rtol=1e-6)


def test_mha_mismatched_mask_types_warn_as_torch():
    m = nn.MultiheadAttention(_E, 2)
    q, k, v = map(mg.tensor, (a.astype(np.float32) for a in _inputs()))
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        m(q, k, v, key_padding_mask=mg.tensor(_kpm_some), attn_mask=mg.zeros(_L, _S))


@pytest.mark.parametrize("call, exc, match", [
    (lambda m, q, k, v: m(q[..., :6], k, v), AssertionError, r"MultiheadAttention: .*embedding dimension of 8.*6"),
    (lambda m, q, k, v: m(q, k, v[:3]), AssertionError,
     r"key shape \(5, 2, 8\) does not match value shape \(3, 2, 8\)"),
    (lambda m, q, k, v: m(q, k, v, attn_mask=mg.zeros(4, 4)), RuntimeError, r"2D attn_mask is \(4, 4\).*\(4, 5\)"),
    (lambda m, q, k, v: m(q, k, v, attn_mask=mg.zeros(3, 4, 5)), RuntimeError, r"3D attn_mask is \(3, 4, 5\)"),
    (lambda m, q, k, v: m(q, k, v, key_padding_mask=mg.zeros(2, 4, dtype=mg.bool_)), AssertionError,
     r"key_padded_mask of shape \(2, 5\).*\(2, 4\)"),
    (lambda m, q, k, v: m(q, k, v, key_padding_mask=mg.zeros(5, dtype=mg.bool_)), AssertionError, "1-D"),
    (lambda m, q, k, v: m(q, k[0], v[0]), AssertionError, "expected `key` and `value` to be 3-D"),
    (lambda m, q, k, v: m(q[None], k, v), AssertionError, "4-D query"),
    (lambda m, q, k, v: m(q, k, v, is_causal=True), RuntimeError, "Need attn_mask"),
    (lambda m, q, k, v: m(q, k, v, attn_mask=mg.zeros(4, 5, dtype=mg.int64)), AssertionError,
     "only bool and floating types of attn_mask"),
])
def test_mha_errors_name_the_module_and_shapes(call, exc, match):
    m = nn.MultiheadAttention(_E, 2)
    q, k, v = map(mg.tensor, (a.astype(np.float32) for a in _inputs()))
    with pytest.raises(exc, match=match):
        call(m, q, k, v)


def test_mha_constructor_errors():
    with pytest.raises(AssertionError, match="divisible"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="greater than 0"):
        nn.MultiheadAttention(0, 2)


def test_mha_need_weights_false_runs_scaled_dot_product_attention(monkeypatch):
    calls = []
    sdpa = F.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append(args[0].shape)
        return sdpa(*args, **kwargs)
    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    m = nn.MultiheadAttention(_E, 2)
    q, k, v = map(mg.tensor, (a.astype(np.float32) for a in _inputs()))
    m(q, k, v, need_weights=False)
    assert calls == [(_N, 2, _L, _E // 2)]
    m(q, k, v)
    assert len(calls) == 1


def test_functional_multi_head_attention_forward_static_kv_matches_torch():
    rng = np.random.default_rng(6)
    heads, hd = 2, _E // 2
    ws = [rng.standard_normal(s) for s in ((3 * _E, _E), (3 * _E,), (_E, _E), (_E,))]
    q, k, v = _inputs()
    sk, sv = rng.standard_normal((_N * heads, 3, hd)), rng.standard_normal((_N * heads, 3, hd))
    args_t = [torch.tensor(a) for a in ws]
    args_m = [mg.tensor(a) for a in ws]
    out_t, w_t = TF.multi_head_attention_forward(
        *map(torch.tensor, (q, k, v)), _E, heads, args_t[0], args_t[1], None, None, False, 0.0, args_t[2],
        args_t[3], static_k=torch.tensor(sk), static_v=torch.tensor(sv))
    out_m, w_m = F.multi_head_attention_forward(
        *map(mg.tensor, (q, k, v)), _E, heads, args_m[0], args_m[1], None, None, False, 0.0, args_m[2],
        args_m[3], static_k=mg.tensor(sk), static_v=mg.tensor(sv))
    _close(out_m, out_t)
    _close(w_m, w_t)
