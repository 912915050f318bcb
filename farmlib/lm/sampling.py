"""Sampling responses from a policy: our own batched loop over the KV cache.

``sample_ids`` is the whole sampler: one forward pass over the left-padded prompts fills the
key/value cache, then each step feeds only the newest token (with its true position, so left
padding does not shift positions) and draws the next one from ``softmax(logits / T)``. A row
that has emitted EOS keeps emitting padding; the loop stops when every row is done. It is what
``model.generate`` does for plain sampling, without the per-step machinery (see
``benchmarks/sampler_speed.py``).
"""

from __future__ import annotations

import torch

from farmlib.progress import progress
from farmlib.world import format_prompt


@torch.no_grad()
def sample_batch(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, eos_id: int, pad_id: int,
                 temperature: float = 0.7, max_new_tokens: int = 128) -> torch.Tensor:
    """``[B, T]`` sampled continuation ids of left-padded prompts (pad after EOS)."""
    B = input_ids.size(0)
    positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=positions, use_cache=True)
    past, logits = out.past_key_values, out.logits[:, -1]
    next_pos = positions[:, -1:] + 1
    done = torch.zeros(B, dtype=torch.bool, device=input_ids.device)
    new: list[torch.Tensor] = []
    for _ in range(max_new_tokens):
        if temperature > 0:
            nxt = torch.multinomial(torch.softmax(logits.float() / temperature, -1), 1).squeeze(1)
        else:
            nxt = logits.argmax(-1)
        nxt = torch.where(done, torch.full_like(nxt, pad_id), nxt)
        new.append(nxt)
        done |= nxt == eos_id
        if done.all():
            break
        attention_mask = torch.cat([attention_mask, attention_mask.new_ones((B, 1))], dim=1)
        out = model(input_ids=nxt[:, None], attention_mask=attention_mask, position_ids=next_pos,
                    past_key_values=past, use_cache=True)
        past, logits = out.past_key_values, out.logits[:, -1]
        next_pos = next_pos + 1
    return torch.stack(new, 1) if new else input_ids.new_zeros((B, 0))


def sample_ids(model, tokenizer, prompts: list[str], temperature: float = 0.7, max_new_tokens: int = 128,
               batch_size: int = 64, seed: int = 0, desc: str = "sample") -> list[list[int]]:
    """Response token ids per prompt (up to and including EOS), in the prompts' order."""
    device = next(model.parameters()).device
    torch.manual_seed(seed)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))  # less padding
    out: list[list[int]] = [[] for _ in prompts]
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    for s in progress(range(0, len(order), batch_size), desc=desc, leave=False):
        idx = order[s:s + batch_size]
        enc = tokenizer([prompts[i] for i in idx], return_tensors="pt", padding=True,
                        add_special_tokens=False).to(device)
        gen = sample_batch(model, enc["input_ids"], enc["attention_mask"], eos, pad, temperature, max_new_tokens)
        for i, row in zip(idx, gen.tolist()):
            out[i] = row[: row.index(eos) + 1] if eos in row else [t for t in row if t != pad]
    return out


def generate(model, tokenizer, prompts: list[str], temperature: float = 0.7, max_new_tokens: int = 128,
             batch_size: int = 64, seed: int = 0, desc: str = "sample") -> list[str]:
    """One completion per prompt (temperature 0: greedy), decoded up to the first EOS."""
    ids = sample_ids(model, tokenizer, prompts, temperature, max_new_tokens, batch_size, seed, desc)
    return [t.strip() for t in tokenizer.batch_decode(ids, skip_special_tokens=True)]


def hf_generate(model, tokenizer, prompts: list[str], temperature: float = 0.7, max_new_tokens: int = 128,
                batch_size: int = 64, seed: int = 0) -> list[list[int]]:
    """The same through ``model.generate`` (for the benchmark and tests)."""
    torch.manual_seed(seed)
    out = []
    for s in range(0, len(prompts), batch_size):
        enc = tokenizer(prompts[s:s + batch_size], return_tensors="pt", padding=True, add_special_tokens=False)
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
