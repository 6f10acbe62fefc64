"""MultiheadAttention, as torch.nn.MultiheadAttention (its forward is F.multi_head_attention_forward)."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .. import init
from .._attention import _canonical_mask, _none_or_dtype
from ..parameter import Parameter
from ._utils import _check_cpu, _empty
from .linear import Linear
from .module import Module


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name: MultiheadAttention's ``out_proj``, as PyTorch's (where the name keeps it
    out of dynamic quantization)."""


class MultiheadAttention(Module):
    r"""Multi-head attention, as ``torch.nn.MultiheadAttention``.

    .. math:: \text{MultiHead}(Q, K, V) = \text{Concat}(\text{head}_1, \dots, \text{head}_h) W^O,\quad
              \text{head}_i = \text{Attention}(Q W_i^Q, K W_i^K, V W_i^V)

    With ``need_weights=False`` the attention runs through
    [`scaled_dot_product_attention()`][minigrad.nn.functional.scaled_dot_product_attention].

    Args:
        embed_dim (int): total dimension of the model (split across the heads).
        num_heads (int): the number of heads; ``embed_dim`` must be divisible by it.
        dropout (float): dropout on the attention weights (training only). Default: 0.0.
        bias (bool): biases on the input and output projections. Default: ``True``.
        add_bias_kv (bool): learn a bias appended to the key and value sequences. Default: ``False``.
        add_zero_attn (bool): append a zero key and value. Default: ``False``.
        kdim, vdim (int): the key / value features. Default: ``embed_dim``.
        batch_first (bool): inputs and outputs are ``(N, L, E)`` rather than ``(L, N, E)``. Default: ``False``.
        dtype: the parameters' dtype. Default: ``mg.get_default_dtype()``.

    Attributes:
        in_proj_weight: ``(3 * embed_dim, embed_dim)``, xavier-uniform (when ``kdim == vdim == embed_dim``);
            else ``q_proj_weight`` ``(E, E)``, ``k_proj_weight`` ``(E, kdim)``, ``v_proj_weight`` ``(E, vdim)``.
        in_proj_bias: ``(3 * embed_dim,)``, zeros. ``out_proj``: a Linear (its bias zeros).
        bias_k, bias_v: ``(1, 1, embed_dim)``, xavier-normal (with ``add_bias_kv``).

    Shape:
        - query: :math:`(L, E)`, :math:`(L, N, E)` or (batch_first) :math:`(N, L, E)`; key / value likewise
          with :math:`S` and :math:`E_k` / :math:`E_v`.
        - key_padding_mask: :math:`(N, S)` or :math:`(S)`; attn_mask: :math:`(L, S)` or
          :math:`(N \cdot \text{num\_heads}, L, S)`; bool (True = not allowed) or float (added).
        - Output: the attention output, shaped as the query, and the weights (``need_weights``):
          :math:`(N, L, S)` averaged over heads, or :math:`(N, \text{num\_heads}, L, S)`; else None.

    Example:
        >>> mha = nn.MultiheadAttention(16, 4, batch_first=True)
        >>> x = mg.randn(2, 5, 16)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        (minigrad.Size([2, 5, 16]), minigrad.Size([2, 5, 5]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        _check_cpu(device)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError(f"embed_dim must be divisible by num_heads (got embed_dim={embed_dim}, "
                                 f"num_heads={num_heads})")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(_empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(_empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_empty(3 * embed_dim, embed_dim, dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(_empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(_empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``; returns ``(attn_output, attn_weights or None)``."""
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            # keep the `is` relations: they pick the packed projections (one GEMM for self-attention)
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight if separate else None,
            k_proj_weight=self.k_proj_weight if separate else None,
            v_proj_weight=self.v_proj_weight if separate else None,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """PyTorch's helper: (merged mask, type) with type 0 attn_mask, 1 key_padding_mask, 2 both
        (expanded to ``(N, num_heads, L, L)`` and added)."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.reshape(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.reshape(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.reshape(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type


__all__ = ["MultiheadAttention"]
