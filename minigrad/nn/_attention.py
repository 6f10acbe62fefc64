"""Multi-head attention's functional form (torch.nn.functional.multi_head_attention_forward) and the input
checks of scaled_dot_product_attention; exported through minigrad.nn.functional.

A composition of Tensor ops (linear, reshape, cat, softmax, matmul) and, when no attention weights are asked
for, F.scaled_dot_product_attention (looked up at call time, so a faster SDPA serves MultiheadAttention too)."""
from __future__ import annotations

import math
import warnings

import numpy as np

import minigrad as mg
from ..tensor import Tensor
from . import functional as F

def _is_float(t: Tensor) -> bool:
    return np.dtype(t.dtype).kind == "f"


def _sdpa_check(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None):
    """scaled_dot_product_attention's input checks, as PyTorch's (ranks, dtypes, the mask's dtype and
    broadcast shape); returns the mask in the query's dtype when it is a float mask."""
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"scaled_dot_product_attention: Expected query, key, and value to all be at least 2 "
                           f"dimensional, but got query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: "
                           f"{value.ndim} instead.")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"scaled_dot_product_attention: Expected query, key, and value to have the same dtype, "
                           f"but got query.dtype: {query.dtype} key.dtype: {key.dtype} and value.dtype: "
                           f"{value.dtype} instead.")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key {tuple(key.shape)} and value {tuple(value.shape)} "
                           f"must have the same sequence length (dim -2)")
    if attn_mask is None:
        return None
    if attn_mask.dtype != mg.bool_ and attn_mask.dtype != mg.float32 and attn_mask.dtype != query.dtype:
        raise RuntimeError(f"scaled_dot_product_attention: Expected attn_mask dtype to be bool or float or to "
                           f"match query dtype, but got attn_mask.dtype: {attn_mask.dtype} and query.dtype: "
                           f"{query.dtype} instead.")
    scores = query.shape[:-2] + (query.shape[-2], key.shape[-2])
    try:
        np.broadcast_shapes(tuple(attn_mask.shape), tuple(scores))
    except ValueError:
        raise RuntimeError(f"scaled_dot_product_attention: attn_mask of shape {tuple(attn_mask.shape)} does not "
                           f"broadcast to the attention scores' shape {tuple(scores)} (query "
                           f"{tuple(query.shape)}, key {tuple(key.shape)})") from None
    if attn_mask.dtype != mg.bool_ and attn_mask.dtype != query.dtype:
        attn_mask = attn_mask.to(query.dtype)  # a float32 mask on a float64 query: added in the query's dtype
    return attn_mask


# -- PyTorch's private helpers, same names ----------------------------------------------------------

def _canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True) -> Tensor | None:
    """A bool mask (True = masked) as an additive float mask of target_type (0 / -inf); a float mask as is."""
    if mask is None:
        return None
    is_float = _is_float(mask)
    if mask.dtype != mg.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for "
                      f"both instead.", UserWarning, stacklevel=3)
    if not is_float:
        mask = mg.zeros(tuple(mask.shape), dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _none_or_dtype(input: Tensor | None):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or minigrad.Tensor")


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None, num_heads: int) -> bool:
    """PyTorch's rank checks; True when the input is batched (3-D query)."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"MultiheadAttention: For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"MultiheadAttention: For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"MultiheadAttention: For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"MultiheadAttention: For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"MultiheadAttention: For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"MultiheadAttention: For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"MultiheadAttention: Expected `attn_mask` shape to be {expected} but got "
                                         f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"MultiheadAttention: query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor (shape {tuple(query.shape)})")


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None = None):
    """q, k, v through the packed (3E, E) projection: one GEMM for self-attention, two for k is v."""
    E = q.shape[-1]
    if w.shape[-1] != E or w.shape[0] != 3 * E:
        raise RuntimeError(f"MultiheadAttention: expecting in_proj_weight of shape {(3 * E, E)}, but got "
                           f"{tuple(w.shape)}")  # PyTorch: linear's RuntimeError
    if k is v:
        if q is k:  # self-attention
            return F.linear(q, w, b).chunk(3, -1)
        w_q, w_kv = w.split([E, 2 * E])
        b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
        k_out, v_out = F.linear(k, w_kv, b_kv).chunk(2, -1)
        return F.linear(q, w_q, b_q), k_out, v_out
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v through separate projections (kdim / vdim differ from embed_dim), shapes checked as PyTorch."""
    Eq, Ek, Ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, t, want in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                          ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)), ("key bias", b_k, (Eq,)),
                          ("value bias", b_v, (Eq,))):
        if t is not None and tuple(t.shape) != want:
            raise AssertionError(f"MultiheadAttention: expecting {name} shape of {want}, but got {tuple(t.shape)}")
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
        add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
        training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
        k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    r"""Multi-head attention, as ``torch.nn.functional.multi_head_attention_forward`` (what
    [`MultiheadAttention`][minigrad.nn.MultiheadAttention] runs): project, split into heads, attend, merge, project.

    .. math:: \text{out} = \text{Concat}(\text{head}_1, \dots, \text{head}_h) W^O,\quad
              \text{head}_i = \text{softmax}\big(Q W_i^Q (K W_i^K)^T / \sqrt{d} + \text{mask}\big) V W_i^V

    Args:
        query, key, value (Tensor): sequence-first inputs.
        embed_dim_to_check (int): the expected embedding dimension of ``query``.
        num_heads (int): the number of heads (``embed_dim`` must be divisible by it).
        in_proj_weight, in_proj_bias: the packed ``(3E, E)`` projection and its ``(3E,)`` bias.
        bias_k, bias_v: ``(1, 1, E)`` biases appended to the key and value sequences, or None.
        add_zero_attn (bool): append a zero key and value (after the projection).
        dropout_p (float): dropout on the attention weights (only when ``training``).
        out_proj_weight, out_proj_bias: the output projection.
        training (bool): apply dropout. Default: True.
        key_padding_mask: ``(N, S)`` or ``(S,)``; bool (True = ignore that key) or float (added).
        need_weights (bool): also return the attention weights; False runs
            [`scaled_dot_product_attention()`][minigrad.nn.functional.scaled_dot_product_attention]. Default: True.
        attn_mask: ``(L, S)`` or ``(N * num_heads, L, S)``; bool (True = not allowed) or float (added).
        use_separate_proj_weight (bool): use ``q/k/v_proj_weight`` instead of ``in_proj_weight``.
        static_k, static_v: ``(N * num_heads, S, E / num_heads)`` keys / values used as they are.
        average_attn_weights (bool): average the returned weights over the heads. Default: True.
        is_causal (bool): a hint that ``attn_mask`` is the causal mask (it must be given).

    Shape:
        - query: :math:`(L, E)` or :math:`(L, N, E)`; key, value: :math:`(S, E_k)` / :math:`(S, N, E_k)`.
        - Output: :math:`(L, E)` or :math:`(L, N, E)`, and the weights :math:`(N, L, S)` (averaged) or
          :math:`(N, \text{num\_heads}, L, S)` (no batch dimension for unbatched input), or None.

    A query whose every key is masked gets nan weights and output when ``need_weights`` (a plain softmax, as
    PyTorch's) and zeros when not (scaled_dot_product_attention's safe softmax).

    Example:
        >>> q = mg.randn(5, 2, 8)
        >>> w, b = mg.randn(24, 8), mg.zeros(24)
        >>> out, weights = F.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0,
        ...                                               mg.randn(8, 8), mg.zeros(8))
        >>> out.shape, weights.shape
        (minigrad.Size([5, 2, 8]), minigrad.Size([2, 5, 5]))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:  # unbatched: run with a batch of one, squeeze it at the end
        same_kv, same_qk = key is value, query is key
        query = query.unsqueeze(1)
        key = query if same_qk else key.unsqueeze(1)
        value = key if same_kv else value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone goes to scaled_dot_product_attention
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"MultiheadAttention: was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim} (query of shape {tuple(query.shape)})")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"MultiheadAttention: embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"MultiheadAttention: key's sequence and batch dims {tuple(key.shape[:2])} do not "
                                 f"match value's {tuple(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"MultiheadAttention: key shape {tuple(key.shape)} does not match value shape "
                             f"{tuple(value.shape)}")

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    # the attention mask, 3-D
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"MultiheadAttention: The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"MultiheadAttention: The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # bias along the (key) sequence
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = mg.cat([k, bias_k.repeat(1, bsz, 1)])
        v = mg.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads: (seq, N, E) -> (N * heads, seq, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.shape[0] != bsz * num_heads or static_k.shape[2] != head_dim:
            raise AssertionError(f"MultiheadAttention: expecting static_k of shape ({bsz * num_heads}, S, "
                                 f"{head_dim}), but got {tuple(static_k.shape)}")
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.shape[0] != bsz * num_heads or static_v.shape[2] != head_dim:
            raise AssertionError(f"MultiheadAttention: expecting static_v of shape ({bsz * num_heads}, S, "
                                 f"{head_dim}), but got {tuple(static_v.shape)}")
        v = static_v

    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = mg.cat([k, mg.zeros(zeros, dtype=k.dtype)], dim=1)
        v = mg.cat([v, mg.zeros(zeros, dtype=v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))

    src_len = k.shape[1]

    # merge the key padding mask into the attention mask
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"MultiheadAttention: Expected key_padded_mask of shape {(bsz, src_len)} (batch, "
                                 f"source length), but got {tuple(key_padding_mask.shape)}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = q_scaled @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = attn_mask + scores  # baddbmm(attn_mask, q_scaled, k^T)
        with np.errstate(invalid="ignore"):  # a fully masked query: nan weights, silently, as PyTorch
            weights = F.softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    # no weights asked for: scaled_dot_product_attention on (N, heads, seq, head_dim)
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
