"""Sampling responses from a policy: our own batched loop over a preallocated KV cache.

``sample_batch`` is the whole sampler. A *decoder* runs the model: called with the left-padded
prompts it fills its key/value cache and returns the logits of the next token; called with one new
token per row it appends them and returns the next logits. The loop draws each token from
``softmax(logits / T)`` (argmax at ``T = 0``); a row that has emitted EOS emits padding from then on,
and once a quarter of the rows are done they are dropped from the batch (``keep``). The loop
stops when every row is done or after ``max_new_tokens``.

Two decoders: :class:`LlamaDecoder`, a small pure-torch forward pass of a ``LlamaForCausalLM``
that reuses its weights and writes into a cache allocated once, and :class:`HFDecoder`, the model's
own forward with its own cache, for any other causal LM (GPT-NeoX, ...). On the tiny model
``model.generate`` spends most of its time growing its cache by concatenation, and drawing a random
number per vocabulary entry; see ``benchmarks/sampler_speed.py``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from farmlib.lm.model import adds_bos, cache_kwargs, cache_of, last_logits_kwargs
from farmlib.progress import progress
from farmlib.world import format_prompt


def positions(mask: torch.Tensor) -> torch.Tensor:
    """Position ids that skip left padding."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


# -- decoders ---------------------------------------------------------------------------------------
class HFDecoder:
    """Any HF causal LM through its own forward pass and cache (the generic path)."""

    def __init__(self, model, attention_mask: torch.Tensor, max_new_tokens: int):
        self.model, self.mask, self.past = model, attention_mask, None

    def __call__(self, ids: torch.Tensor) -> torch.Tensor:
        """Append ``ids`` ``[B, n]`` to the sequences; the logits ``[B, V]`` of the next token."""
        if self.past is not None:
            self.mask = torch.cat([self.mask, self.mask.new_ones(ids.shape)], 1)
        out = self.model(input_ids=ids, attention_mask=self.mask, position_ids=positions(self.mask)[:, -ids.size(1):],
                         use_cache=True, **cache_kwargs(self.model, self.past), **last_logits_kwargs(self.model))
        self.past = cache_of(out)
        return out.logits[:, -1]

    def keep(self, rows: torch.Tensor) -> None:
        """Drop every batch row but ``rows``."""
        self.mask = self.mask[rows]
        self.past.reorder_cache(rows)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (HF's ``rotate_half`` convention)."""
    x1, x2 = x.chunk(2, -1)
    return x * cos + torch.cat([-x2, x1], -1) * sin


class LlamaDecoder:
    """A ``LlamaForCausalLM``'s forward pass in a few lines of torch, reusing its weights, with a
    key/value cache allocated once for the prompts and ``max_new_tokens`` more tokens.

    Per layer: ``x += o(attention(rope(q), rope(k), v))`` then ``x += down(silu(gate) * up)``, each
    after an RMS norm; q/k/v and gate/up are one matrix product each, and the queries come out
    already scaled by ``1/sqrt(head_dim)``. Logits equal the HF model's to 1e-5
    (``tests/test_sampling.py``).
    """

    @staticmethod
    def supports(model) -> bool:
        """A plain Llama: no biases, SiLU, default RoPE, one key/value head per query head, no dropout."""
        from transformers import LlamaForCausalLM

        c = model.config
        return (type(model) is LlamaForCausalLM and not c.attention_bias and not c.mlp_bias
                and c.hidden_act == "silu" and c.num_key_value_heads == c.num_attention_heads
                and model.model.rotary_emb.rope_type == "default"
                and not (model.training and c.attention_dropout > 0))

    def __init__(self, model, attention_mask: torch.Tensor, max_new_tokens: int):
        m, c = model.model, model.config
        self.eps, self.n_heads = c.rms_norm_eps, c.num_attention_heads
        head_dim = m.layers[0].self_attn.q_proj.out_features // self.n_heads
        self.embed, self.norm, self.lm_head = m.embed_tokens.weight, m.norm.weight, model.lm_head.weight
        self.layers = [(layer.input_layernorm.weight,
                        torch.cat([a.q_proj.weight * head_dim ** -0.5, a.k_proj.weight, a.v_proj.weight]),
                        a.o_proj.weight,
                        layer.post_attention_layernorm.weight,
                        torch.cat([layer.mlp.gate_proj.weight, layer.mlp.up_proj.weight]),
                        layer.mlp.down_proj.weight)
                       for layer in m.layers for a in [layer.self_attn]]
        B, T = attention_mask.size(0), attention_mask.size(1) + max_new_tokens
        self.pad = (attention_mask == 0).sum(1)  # left padding per row: position = cache index - pad
        self.bias = torch.zeros(B, T, dtype=self.embed.dtype, device=self.embed.device)  # attention logits: -inf
        self.bias[:, :attention_mask.size(1)].masked_fill_(attention_mask == 0, -torch.inf)  # at padding
        cos, sin = m.rotary_emb(self.embed, torch.arange(T, device=self.embed.device)[None])  # [1, T, head_dim]
        self.cos, self.sin = cos[0], sin[0]
        shape = (B, self.n_heads, T, head_dim)
        self.k = [self.embed.new_empty(shape) for _ in m.layers]
        self.v = [self.embed.new_empty(shape) for _ in m.layers]
        self.t = 0  # tokens in the cache

    def __call__(self, ids: torch.Tensor) -> torch.Tensor:
        """Append ``ids`` ``[B, n]`` to the sequences; the logits ``[B, V]`` of the next token."""
        B, n = ids.shape
        t0, t1 = self.t, self.t + n
        self.t = t1
        pos = (torch.arange(t0, t1, device=ids.device) - self.pad[:, None]).clamp(min=0)
        cos, sin = self.cos[pos][:, None], self.sin[pos][:, None]  # [B, 1, n, head_dim]
        bias = self.bias[:, None, None, :t1]  # [B, 1, 1, t1]
        if n > 1:  # the prompt (t0 = 0): causal, and a padding query sees itself (no empty softmax)
            bias = torch.where(torch.eye(n, dtype=torch.bool, device=ids.device), 0.0, bias)
            bias = bias.masked_fill(torch.ones(n, n, dtype=torch.bool, device=ids.device).triu(1), -torch.inf)
        x = F.embedding(ids, self.embed)
        for k_cache, v_cache, (norm1, w_qkv, w_o, norm2, w_gate_up, w_down) in zip(self.k, self.v, self.layers):
            qkv = (F.rms_norm(x, x.shape[-1:], norm1, self.eps) @ w_qkv.T).view(B, n, 3, self.n_heads, -1)
            q, k = _rotate(qkv[:, :, :2].permute(2, 0, 3, 1, 4), cos, sin)  # [B, heads, n, head_dim] each
            k_cache[:, :, t0:t1], v_cache[:, :, t0:t1] = k, qkv[:, :, 2].transpose(1, 2)
            weights = torch.softmax(q @ k_cache[:, :, :t1].transpose(2, 3) + bias, -1)
            x = x + (weights @ v_cache[:, :, :t1]).transpose(1, 2).reshape(B, n, -1) @ w_o.T
            g, u = (F.rms_norm(x, x.shape[-1:], norm2, self.eps) @ w_gate_up.T).chunk(2, -1)
            x = x + (F.silu(g) * u) @ w_down.T
        return F.rms_norm(x[:, -1], x.shape[-1:], self.norm, self.eps) @ self.lm_head.T

    def keep(self, rows: torch.Tensor) -> None:
        """Drop every batch row but ``rows``."""
        self.k, self.v = [k[rows] for k in self.k], [v[rows] for v in self.v]
        self.pad, self.bias = self.pad[rows], self.bias[rows]


# -- the sampler ----------------------------------------------------------------------------------
def draw(logits: torch.Tensor, temperature: float, top_p: float = 1.0) -> torch.Tensor:
    """One token per row from ``p = softmax(logits / temperature)`` (the argmax at temperature 0); with
    ``top_p < 1``, from its nucleus: the most probable tokens until their mass reaches ``top_p``, renormalised.

    By the inverse CDF: the first token whose cumulative probability exceeds a uniform number, one
    uniform number per row (``torch.multinomial`` draws one random number per vocabulary entry).
    """
    if temperature <= 0:
        return logits.argmax(-1)
    p = torch.softmax(logits.float() / temperature, -1)
    order = None
    if top_p < 1.0:
        p, order = p.sort(dim=-1, descending=True, stable=True)
        p = p.masked_fill(p.cumsum(-1) - p >= top_p, 0.0)  # keep a token while the mass before it is below top_p
    cdf = p.double().cumsum(-1)
    u = torch.rand(cdf.size(0), 1, dtype=cdf.dtype, device=cdf.device) * cdf[:, -1:]
    idx = torch.searchsorted(cdf, u, right=True).clamp(max=cdf.size(1) - 1)
    return (idx if order is None else order.gather(1, idx)).squeeze(1)


def sample_batch(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, eos_id: int, pad_id: int,
                 temperature: float = 0.7, max_new_tokens: int = 128, top_p: float = 1.0) -> torch.Tensor:
    """``[B, T]`` sampled continuation ids of left-padded prompts (pad after EOS)."""
    with torch.inference_mode():  # no autograd bookkeeping at all: ~8% faster than no_grad at batch 64
        out = _sample_batch(model, input_ids, attention_mask, eos_id, pad_id, temperature, max_new_tokens, top_p)
    return out.clone()  # an ordinary tensor, which autograd may use later (PPO builds on rollouts)


def _sample_batch(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, eos_id: int, pad_id: int,
                  temperature: float, max_new_tokens: int, top_p: float) -> torch.Tensor:
    B = input_ids.size(0)
    out = input_ids.new_full((B, max_new_tokens), pad_id)
    if max_new_tokens == 0:
        return out
    decoder = (LlamaDecoder if LlamaDecoder.supports(model) else HFDecoder)(model, attention_mask, max_new_tokens)
    logits = decoder(input_ids)
    rows = torch.arange(B, device=input_ids.device)  # the rows of `out` still in the batch
    done = torch.zeros(B, dtype=torch.bool, device=input_ids.device)
    for t in range(max_new_tokens):
        nxt = draw(logits, temperature, top_p).masked_fill(done, pad_id)
        out[rows, t] = nxt
        done |= nxt == eos_id
        n_done = int(done.sum())
        if n_done == len(rows) or t + 1 == max_new_tokens:
            break
        if 4 * n_done >= len(rows):  # a quarter of the batch is finished: drop those rows
            keep = (~done).nonzero().squeeze(1)
            rows, done, nxt = rows[keep], done[keep], nxt[keep]
            decoder.keep(keep)
        logits = decoder(nxt[:, None])
    return out[:, :t + 1]


def sample_ids(model, tokenizer, prompts: list[str], temperature: float = 0.7, max_new_tokens: int = 128,
               batch_size: int = 64, seed: int = 0, desc: str = "sample", top_p: float = 1.0) -> list[list[int]]:
    """Response token ids per prompt (up to and including EOS), in the prompts' order."""
    device = next(model.parameters()).device
    torch.manual_seed(seed)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))  # less padding
    out: list[list[int]] = [[] for _ in prompts]
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    for s in progress(range(0, len(order), batch_size), desc=desc, leave=False):
        idx = order[s:s + batch_size]
        enc = tokenizer([prompts[i] for i in idx], return_tensors="pt", padding=True,
                        add_special_tokens=adds_bos(tokenizer)).to(device)
        gen = sample_batch(model, enc["input_ids"], enc["attention_mask"], eos, pad, temperature, max_new_tokens, top_p)
        for i, row in zip(idx, gen.tolist()):
            out[i] = row[: row.index(eos) + 1] if eos in row else [t for t in row if t != pad]
    return out


def generate(model, tokenizer, prompts: list[str], temperature: float = 0.7, max_new_tokens: int = 128,
             batch_size: int = 64, seed: int = 0, desc: str = "sample", top_p: float = 1.0) -> list[str]:
    """One completion per prompt (temperature 0: greedy; ``top_p < 1``: nucleus sampling), up to the first EOS."""
    ids = sample_ids(model, tokenizer, prompts, temperature, max_new_tokens, batch_size, seed, desc, top_p)
    return [t.strip() for t in tokenizer.batch_decode(ids, skip_special_tokens=True)]


def hf_generate(model, tokenizer, prompts: list[str], temperature: float = 0.7, max_new_tokens: int = 128,
                batch_size: int = 64, seed: int = 0) -> list[list[int]]:
    """The same through ``model.generate`` (for the benchmark and tests)."""
    torch.manual_seed(seed)
    out = []
    for s in range(0, len(prompts), batch_size):
        enc = tokenizer(prompts[s:s + batch_size], return_tensors="pt", padding=True,
                        add_special_tokens=adds_bos(tokenizer))
        gen = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=temperature > 0,
                             temperature=temperature if temperature > 0 else None, top_p=1.0, top_k=0,
                             pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
        for row in gen[:, enc["input_ids"].shape[1]:].tolist():
            eos = tokenizer.eos_token_id
            out.append(row[: row.index(eos) + 1] if eos in row else [t for t in row if t != tokenizer.pad_token_id])
    return out


def respond(model, tokenizer, records: list[dict], prefix: str = "", **kw) -> list[str]:
    """Responses to Alpaca-schema records, through our prompt format (after an optional ``prefix``)."""
    prompts = [prefix + format_prompt(r["instruction"], r.get("input", "")) for r in records]
    return generate(model, tokenizer, prompts, **kw)
