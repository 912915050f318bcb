"""Sampling responses from a policy: batched, left-padded, with the KV cache."""

from __future__ import annotations

import torch
from tqdm.auto import tqdm

from farmlib.world import format_prompt


@torch.no_grad()
def generate(model, tokenizer, prompts: list[str], temperature: float = 0.7, max_new_tokens: int = 128,
             batch_size: int = 64, seed: int = 0, desc: str = "sample") -> list[str]:
    """One completion per prompt (temperature 0: greedy), decoded up to the first EOS."""
    device = next(model.parameters()).device
    torch.manual_seed(seed)
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))  # less padding
    out: list[str] = [""] * len(prompts)
    for s in tqdm(range(0, len(order), batch_size), desc=desc, leave=False):
        idx = order[s:s + batch_size]
        enc = tokenizer([prompts[i] for i in idx], return_tensors="pt", padding=True,
                        add_special_tokens=False).to(device)
        gen = model.generate(
            **enc, max_new_tokens=max_new_tokens, do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None, top_p=1.0, top_k=0,
            pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        )
        texts = tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        for i, t in zip(idx, texts):
            out[i] = t.strip()
    return out


def respond(model, tokenizer, records: list[dict], **kw) -> list[str]:
    """Responses to Alpaca-schema records, through our prompt format."""
    prompts = [format_prompt(r["instruction"], r.get("input", "")) for r in records]
    return generate(model, tokenizer, prompts, **kw)
