"""The Transformer and its encoder / decoder stacks and layers, as torch.nn.Transformer*.

Submodule and parameter names are PyTorch's, so a PyTorch state_dict (as NumPy arrays) loads and gives the
same outputs."""
from __future__ import annotations

import copy
import warnings
from typing import Any, Callable

import numpy as np

import minigrad as mg
from ...autograd.grad_mode import is_grad_enabled
from ...tensor import Tensor
from .. import functional as F
from .. import init
from .._attention import _canonical_mask, _none_or_dtype
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """(sz, sz): -inf above the diagonal, 0 on and below it."""
    return mg.triu(mg.full((sz, sz), float("-inf"), dtype=dtype if dtype is not None else mg.get_default_dtype()),
                   diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None, size: int | None = None) -> bool:
    """is_causal when given; else whether `mask` equals the square subsequent mask (PyTorch's check)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        make_causal = tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())
    return make_causal


def _get_clones(module: Module, N: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    r"""Self-attention and a feed-forward network, each with a residual connection and LayerNorm, as
    ``torch.nn.TransformerEncoderLayer``.

    ``norm_first=False``: :math:`x = \text{norm1}(x + \text{SA}(x))`, :math:`x = \text{norm2}(x + \text{FF}(x))`;
    ``norm_first=True``: :math:`x = x + \text{SA}(\text{norm1}(x))`, :math:`x = x + \text{FF}(\text{norm2}(x))`,
    with :math:`\text{FF}(x) = \text{linear2}(\text{dropout}(\text{activation}(\text{linear1}(x))))`.

    Args:
        d_model (int): the number of expected features.
        nhead (int): the number of attention heads.
        dim_feedforward (int): the feed-forward network's width. Default: 2048.
        dropout (float): the dropout. Default: 0.1.
        activation (str or callable): ``"relu"``, ``"gelu"`` or a unary callable. Default: ``F.relu``.
        layer_norm_eps (float): the LayerNorms' eps. Default: 1e-5.
        batch_first (bool): ``(N, S, E)`` rather than ``(S, N, E)``. Default: ``False``.
        norm_first (bool): LayerNorm before attention / feed-forward. Default: ``False``.
        bias (bool): biases on the Linear and LayerNorm layers. Default: ``True``.
        dtype: the parameters' dtype.

    Shape:
        - src: :math:`(S, E)`, :math:`(S, N, E)` or (batch_first) :math:`(N, S, E)`; output the same.

    Example:
        >>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, batch_first=True)
        >>> layer(mg.randn(2, 5, 16)).shape
        minigrad.Size([2, 5, 16])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        """The layer on ``src``; ``src_mask`` (attention mask), ``src_key_padding_mask`` as MultiheadAttention's,
        ``is_causal`` a hint that ``src_mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    r"""Self-attention, attention over the encoder's output (``memory``) and a feed-forward network, each
    with a residual connection and LayerNorm, as ``torch.nn.TransformerDecoderLayer``.

    Args:
        d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias:
            as [`TransformerEncoderLayer`][minigrad.nn.TransformerEncoderLayer].

    Shape:
        - tgt: :math:`(T, E)`, :math:`(T, N, E)` or (batch_first) :math:`(N, T, E)`; memory likewise with
          :math:`S`; output as tgt.

    Example:
        >>> layer = nn.TransformerDecoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> layer(mg.randn(6, 2, 16), mg.randn(5, 2, 16)).shape
        minigrad.Size([6, 2, 16])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def __setstate__(self, state: dict) -> None:
        # PyTorch's, quirk included: a Module activation lives in state["_modules"], not in state, so an
        # unpickled or deep-copied layer (the clones in TransformerDecoder, hence nn.Transformer's decoder)
        # built with activation=nn.GELU() runs F.relu. Kept, so that PyTorch-trained weights give PyTorch's
        # outputs; a function activation (F.gelu, "gelu") is unaffected.
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """The layer on ``tgt`` attending to ``memory``; masks as MultiheadAttention's attn_mask /
        key_padding_mask, ``*_is_causal`` hints that the matching mask is the causal mask."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                  is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=is_causal,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                   is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _left_aligned(keep: np.ndarray) -> bool:
    """Every row of `keep` is some Trues followed by Falses (PyTorch's nested-tensor precondition)."""
    n = keep.sum(1, keepdims=True)
    return bool((keep == (np.arange(keep.shape[1]) < n)).all())


class TransformerEncoder(Module):
    r"""A stack of ``num_layers`` copies of ``encoder_layer`` and an optional final ``norm``, as
    ``torch.nn.TransformerEncoder``.

    ``enable_nested_tensor`` is accepted; minigrad has no nested tensors, but where PyTorch would run its
    nested-tensor path (evaluation, batch_first, a left-aligned ``src_key_padding_mask``, no ``mask``, no
    gradient) it gives PyTorch's outputs: the padded positions are 0 before the final norm.

    Args:
        encoder_layer (TransformerEncoderLayer): the layer to clone (deep copies).
        num_layers (int): the number of layers.
        norm (Module, optional): applied to the last layer's output.
        enable_nested_tensor (bool): PyTorch's sparsity fast path switch (see above). Default: ``True``.
        mask_check (bool): check that the padding mask is left-aligned before that path. Default: ``True``.

    Example:
        >>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        >>> enc(mg.randn(5, 2, 16)).shape
        minigrad.Size([5, 2, 16])
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        enc_layer = "encoder_layer"
        why_not = ""
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            why_not = f"{enc_layer} was not TransformerEncoderLayer"
        elif encoder_layer.norm_first:
            why_not = f"{enc_layer}.norm_first was True"
        elif not encoder_layer.self_attn.batch_first:
            why_not = (f"{enc_layer}.self_attn.batch_first was not True"
                       "(use batch_first for better inference performance)")
        elif not encoder_layer.self_attn._qkv_same_embed_dim:
            why_not = f"{enc_layer}.self_attn._qkv_same_embed_dim was not True"
        elif encoder_layer.self_attn.in_proj_bias is None:
            why_not = f"{enc_layer}.self_attn was passed bias=False"
        elif not encoder_layer.activation_relu_or_gelu:
            why_not = f"{enc_layer}.activation_relu_or_gelu was not True"
        elif encoder_layer.norm1.eps != encoder_layer.norm2.eps:
            why_not = f"{enc_layer}.norm1.eps was not equal to {enc_layer}.norm2.eps"
        elif encoder_layer.self_attn.num_heads % 2 == 1:
            why_not = f"{enc_layer}.self_attn.num_heads is odd"
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          UserWarning, stacklevel=2)
            self.use_nested_tensor = False

    def _pads_like_nested(self, src: Tensor, mask: Tensor | None, kpm: Tensor | None) -> np.ndarray | None:
        """The padded positions (N, S) where PyTorch would run its nested-tensor path, else None."""
        if (not getattr(self, "use_nested_tensor", False) or self.layers[0].training or src.dim() != 3
                or kpm is None or mask is not None):
            return None
        pad = kpm.detach().numpy() != 0  # PyTorch: logical_not of the (float) mask marks the kept tokens
        if getattr(self, "mask_check", True) and not _left_aligned(~pad):
            return None
        first = self.layers[0]
        args = (src, first.self_attn.in_proj_weight, first.self_attn.in_proj_bias, first.self_attn.out_proj.weight,
                first.self_attn.out_proj.bias, first.norm1.weight, first.norm1.bias, first.norm2.weight,
                first.norm2.bias, first.linear1.weight, first.linear1.bias, first.linear2.weight, first.linear2.bias)
        if is_grad_enabled() and any(a is not None and a.requires_grad for a in args):
            return None
        return pad

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        """The layers in turn on ``src`` (then ``norm``); ``mask`` / ``src_key_padding_mask`` as the layer's;
        ``is_causal=None`` detects whether ``mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask),
                                               "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0]
        pad = self._pads_like_nested(src, mask, src_key_padding_mask)
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, first.self_attn.batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if pad is not None:  # PyTorch's to_padded_tensor(0.0): the padded tokens come back as zeros
            output = output.masked_fill(mg.tensor(pad[..., None]), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    r"""A stack of ``num_layers`` copies of ``decoder_layer`` and an optional final ``norm``, as
    ``torch.nn.TransformerDecoder``.

    Args:
        decoder_layer (TransformerDecoderLayer): the layer to clone (deep copies).
        num_layers (int): the number of layers.
        norm (Module, optional): applied to the last layer's output.

    Example:
        >>> layer = nn.TransformerDecoderLayer(d_model=16, nhead=4, dim_feedforward=32)
        >>> dec = nn.TransformerDecoder(layer, num_layers=2)
        >>> dec(mg.randn(6, 2, 16), mg.randn(5, 2, 16)).shape
        minigrad.Size([6, 2, 16])
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """The layers in turn on ``tgt`` attending to ``memory`` (then ``norm``); ``tgt_is_causal=None``
        detects whether ``tgt_mask`` is the causal mask."""
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    r"""The encoder-decoder Transformer of "Attention Is All You Need", as ``torch.nn.Transformer``: an
    encoder stack with a final LayerNorm, a decoder stack with a final LayerNorm; every parameter with more
    than one dimension re-drawn with ``xavier_uniform_``.

    Args:
        d_model (int): the number of expected features. Default: 512.
        nhead (int): the number of attention heads. Default: 8.
        num_encoder_layers (int): Default: 6. num_decoder_layers (int): Default: 6.
        dim_feedforward (int): Default: 2048. dropout (float): Default: 0.1.
        activation (str or callable): ``"relu"``, ``"gelu"`` or a unary callable. Default: ``F.relu``.
        custom_encoder, custom_decoder (Module, optional): used instead of the default stacks.
        layer_norm_eps (float): Default: 1e-5. batch_first (bool): Default: ``False``.
        norm_first (bool): Default: ``False``. bias (bool): Default: ``True``.
        dtype: the parameters' dtype.

    Shape:
        - src: :math:`(S, E)`, :math:`(S, N, E)` or (batch_first) :math:`(N, S, E)`; tgt likewise with
          :math:`T`; output as tgt.

    Example:
        >>> model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
        ...                        dim_feedforward=32)
        >>> tgt_mask = nn.Transformer.generate_square_subsequent_mask(6)
        >>> model(mg.randn(5, 2, 16), mg.randn(6, 2, 16), tgt_mask=tgt_mask).shape
        minigrad.Size([6, 2, 16])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, custom_encoder: Any | None = None,
                 custom_decoder: Any | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **kw)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **kw)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Encode ``src``, decode ``tgt`` against it; masks as the encoder's / decoder's."""
        is_batched = src.dim() == 3
        b = 0 if self.batch_first else 1
        if is_batched and (tgt.dim() != 3 or src.shape[b] != tgt.shape[b]):
            raise RuntimeError(f"Transformer: the batch number of src and tgt must be equal (src "
                               f"{tuple(src.shape)}, tgt {tuple(tgt.shape)}, batch_first={self.batch_first})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"Transformer: the feature number of src and tgt must be equal to d_model "
                               f"({self.d_model}); got src {tuple(src.shape)}, tgt {tuple(tgt.shape)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask for a sequence of ``sz``: -inf above the diagonal, 0 elsewhere (float)."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
