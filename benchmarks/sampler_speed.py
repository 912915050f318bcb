"""Our sampler vs ``model.generate``, and PPO steps/s, on the tiny profile's model (goals: >= 10k tokens/s
at batch 256 on 2 CPU cores, >= 4x generate; PPO >= 1 step/s at a rollout batch of 64).

    python benchmarks/sampler_speed.py [--batch-sizes 64 256] [--repeats 3] [--ppo-steps 3] [--sft]

The model has the tiny profile's architecture (``PROFILES["tiny"].model``) with random weights from its
seed, so nothing is trained (``--sft`` samples from the trained SFT model instead, training it if needed);
a random model rarely emits EOS, so every response runs to ``max_new_tokens``. The two samplers take
turns, ``--repeats`` times each, and the medians are printed: on a machine shared with other work, only
the ratios measured in the same run mean much.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from contextlib import contextmanager

import torch
from transformers import LlamaForSequenceClassification

from farmlib import Farm, format_prompt
from farmlib.lm import sampling
from farmlib.lm.model import new_model
from farmlib.lm.sampling import hf_generate, sample_ids
from farmlib.methods.ppo import PPOConfig, ppo_loop


@contextmanager
def generic_sampler():
    """Our sampling loop on the model's own forward pass and cache (the path for non-Llama models)."""
    supports = sampling.LlamaDecoder.supports
    sampling.LlamaDecoder.supports = staticmethod(lambda model: False)
    try:
        yield
    finally:
        sampling.LlamaDecoder.supports = supports


def tokens_per_second(fn, model, tok, prompts: list[str], **kw) -> float:
    t0 = time.perf_counter()
    ids = fn(model, tok, prompts, **kw)
    return sum(map(len, ids)) / (time.perf_counter() - t0)


def ppo_steps_per_second(policy, tok, prompts: list[str], steps: int, max_new_tokens: int) -> float:
    """Steps/s of ``ppo_loop`` (rollout batch 64, minibatch 32) from copies of ``policy``; value and reward
    models of the same architecture with a scalar head."""
    rm_config = copy.deepcopy(policy.config)
    rm_config.num_labels = 1
    torch.manual_seed(1)
    rm = LlamaForSequenceClassification(rm_config).eval()
    cfg = PPOConfig(steps=steps, rollout_batch=64, minibatch=32, n_eval_prompts=8, eval_every=steps)
    _, _, seconds = ppo_loop(copy.deepcopy(policy), copy.deepcopy(policy), copy.deepcopy(rm), rm, tok, prompts,
                             prompts[:cfg.n_eval_prompts], cfg, max_new_tokens)
    return steps / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256, help="prompts sampled per measurement")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--ppo-steps", type=int, default=3, help="PPO steps per measurement (0: skip PPO)")
    ap.add_argument("--sft", action="store_true", help="the trained tiny SFT model instead of random weights")
    a = ap.parse_args()
    farm = Farm("tiny")
    tok = farm.tokenizer()
    model = farm.load(farm.sft_model()) if a.sft else new_model(farm.profile.model, tok, seed=0).eval()
    prompts = [format_prompt(r["instruction"], r["input"]) for r in farm.splits()["eval"][: a.n]]
    max_new = farm.profile.max_new_tokens
    print(f"tiny model ({'SFT' if a.sft else 'random weights'}), {a.n} prompts, max_new_tokens {max_new}, "
          f"T={a.temperature}; torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs; medians of {a.repeats} interleaved runs")
    greedy = dict(temperature=0.0, max_new_tokens=max_new, batch_size=32)
    same = sample_ids(model, tok, prompts[:32], **greedy) == hf_generate(model, tok, prompts[:32], **greedy)
    for bs in a.batch_sizes:
        kw = dict(temperature=a.temperature, max_new_tokens=max_new, batch_size=bs)
        tokens_per_second(sample_ids, model, tok, prompts[:bs], **kw)  # warm-up
        ours, gen = [], []
        for _ in range(a.repeats):
            gen.append(tokens_per_second(hf_generate, model, tok, prompts, **kw))
            ours.append(tokens_per_second(sample_ids, model, tok, prompts, **kw))
        ratio = statistics.median(o / g for o, g in zip(ours, gen))
        print(f"batch {bs:4d}: farmlib sampler {statistics.median(ours):7.0f} tokens/s | model.generate "
              f"{statistics.median(gen):7.0f} tokens/s | ratio {ratio:.2f}x (goal >= 4x)")
    print(f"greedy outputs identical to model.generate on 32 prompts: {same}")
    if a.ppo_steps:
        fast, generic = [], []
        for _ in range(a.repeats):
            fast.append(ppo_steps_per_second(model, tok, prompts, a.ppo_steps, max_new))
            with generic_sampler():
                generic.append(ppo_steps_per_second(model, tok, prompts, a.ppo_steps, max_new))
        print(f"PPO (rollout batch 64, {a.ppo_steps} steps): {statistics.median(fast):.2f} steps/s "
              f"| with the generic HF-forward sampler {statistics.median(generic):.2f} steps/s (goal >= 1)")


if __name__ == "__main__":
    main()
