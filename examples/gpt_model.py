"""A nanoGPT-style decoder-only Transformer: the model of examples/char_gpt.py and benchmarks/bench_gpt.py.

This file imports minigrad and nothing else of the project, under the names a PyTorch user types
(`mg`, `nn`, `F`): rename `minigrad` to `torch` and the same code runs under PyTorch, which is how
the benchmark runs its peer and how tests/test_examples.py checks the port (same loss at step 0
from the same weights).

Each block: x + attn(ln_1(x)), then x + mlp(ln_2(x)) (pre-norm, GPT-2's layout); attention through
F.scaled_dot_product_attention with the causal mask; the MLP's GELU is the exact (erf) one; the
output projection shares its weight with the token embedding (weight tying, as GPT-2).
Generation keeps a key/value cache per block, so each new token costs one position's work.
"""
import math

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__()
        assert d_model % n_head == 0, "d_model must be a multiple of n_head"
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.dropout = dropout

    def forward(self, x, cache=None):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)   # (B, H, T, hs)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if cache is not None:
            # generation: keys and values of earlier positions come from the cache; the prompt runs
            # with an empty cache (causal), each later token alone (it attends to everything kept)
            if cache:
                k = mg.cat([cache["k"], k], dim=2)
                v = mg.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        causal = cache is None or k.shape[2] == T
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal and T > 1,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, d_model, dropout=0.0):
        super().__init__()
        self.c_fc = nn.Linear(d_model, 4 * d_model)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, dropout)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = MLP(d_model, dropout)

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, context=128, n_layer=4, n_head=4, d_model=128, dropout=0.0):
        super().__init__()
        self.context = context
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(context, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(d_model, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight          # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():         # GPT-2's scaled init of the residual projections
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None, caches=None):
        B, T = idx.shape
        start = 0 if not caches or not caches[0] else caches[0]["k"].shape[2]
        pos = mg.arange(start, start + T)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches[i])
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))
        return logits, loss

    @mg.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        """Sample max_new_tokens after idx (B, T) through a key/value cache: the prompt runs once, then
        each step feeds only the newest token. The cache restarts from the last context // 2 tokens
        when it is full (the window slides)."""
        caches = [dict() for _ in self.blocks]
        logits, _ = self(idx[:, -self.context:], caches=caches)
        for _ in range(max_new_tokens):
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = mg.topk(logits, min(top_k, logits.shape[-1]))
                logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
            probs = F.softmax(logits, dim=-1)
            nxt = mg.multinomial(probs, num_samples=1, generator=generator)
            idx = mg.cat([idx, nxt], dim=1)
            if caches[0]["k"].shape[2] >= self.context:
                caches = [dict() for _ in self.blocks]
                logits, _ = self(idx[:, -(self.context // 2):], caches=caches)
            else:
                logits, _ = self(nxt, caches=caches)
        return idx
