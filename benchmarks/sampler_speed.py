"""Our KV-cache sampler vs ``model.generate``: tokens/s on the same model and prompts (goal >= 1.0x).

    python benchmarks/sampler_speed.py --profile tiny --n 256
"""

from __future__ import annotations

import argparse
import time

import torch

from farmlib import Farm, format_prompt
from farmlib.lm.sampling import hf_generate, sample_ids


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--temperature", type=float, default=0.7)
    a = ap.parse_args()
    farm = Farm(a.profile)
    model, tok = farm.load(farm.sft_model()), farm.tokenizer()
    prompts = [format_prompt(r["instruction"], r["input"]) for r in farm.splits()["eval"][: a.n]]
    kw = dict(temperature=a.temperature, max_new_tokens=farm.profile.max_new_tokens, batch_size=a.batch_size)
    greedy = dict(kw, temperature=0.0)
    same = sample_ids(model, tok, prompts[:32], **greedy) == hf_generate(model, tok, prompts[:32], **greedy)
    rows = {}
    for name, fn in [("model.generate", hf_generate), ("farmlib sampler", sample_ids)] * 2:  # warm-up, then timed
        t0 = time.perf_counter()
        ids = fn(model, tok, prompts, **kw)
        rows[name] = sum(map(len, ids)) / (time.perf_counter() - t0)
    print(f"torch threads: {torch.get_num_threads()}; {a.n} prompts, batch {a.batch_size}, T={a.temperature}")
    for name, tps in rows.items():
        print(f"{name:16s} {tps:8.0f} tokens/s")
    print(f"ratio (ours / generate): {rows['farmlib sampler'] / rows['model.generate']:.2f}x (goal >= 1.0x)")
    print(f"greedy outputs identical to model.generate on 32 prompts: {same}")


if __name__ == "__main__":
    main()
