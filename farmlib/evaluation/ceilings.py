"""Ceilings: how far the true reward R* itself can move the policy, before any reward model is blamed.

If best-of-n *picked by R** cannot beat SFT under the people, no reward model will, however many labels it
learns from; if it can, the gap between it and a method is what the learned reward loses. Two ceilings
(FarmWorld only):

- **oracle best-of-n** along n (:func:`oracle_best_of_n`): one draw of ``n_max`` SFT samples per prompt
  (:func:`farmlib.methods.best_of_n.draw`), R*'s favourite of the first n, judged by the people against the
  reference, beside its KL bound ``log n - (n - 1) / n``;
- **PPO on R*** (:func:`ppo_ceiling`): the chapter's PPO with R* as the reward
  (``PPOConfig.reward = "true_reward"``), judged the same way.
"""

from __future__ import annotations

import math
from dataclasses import replace

from farmlib.methods.best_of_n import BestOfNCurveConfig, draw, kl_bound, powers_of_two, prefix_choices


def oracle_best_of_n(farm, n_max: int = 256, n_prompts: int = 200, annotator: str = "human", seed: int = 0,
                     split: str = "eval") -> list[dict]:
    """Per n (powers of two up to ``n_max``): R*'s pick of the first n candidates on the first ``n_prompts``
    instructions, its mean R*, the KL bound, and its win-rate (and standard error) under ``annotator`` against
    the reference on the same instructions."""
    if not farm.is_farmworld:
        farm.not_in_real_world("the oracle best-of-n (R* picks)")
    cfg = BestOfNCurveConfig(n_max=n_max, n_prompts=n_prompts, seed=seed, split=split)
    _, cands = draw(farm, cfg)
    true = [farm.true_rewards(row) for row in cands]  # [i][k]
    reference = farm.reference_outputs()[:len(cands)] if split == "eval" else None
    ns = powers_of_two(n_max)
    picks = prefix_choices(true, ns)
    rows = []
    for n in ns:
        outs = [dict(cands[i][k], generator=f"oracle_best_of_{n}") for i, k in enumerate(picks[n])]
        wr = farm.evaluate(outs, annotator, reference=reference)[0]
        rows.append({"n": n, "kl": kl_bound(n), "sqrt_kl": math.sqrt(kl_bound(n)),
                     "true_reward": sum(true[i][k] for i, k in enumerate(picks[n])) / len(picks[n]),
                     "win_rate": wr.win_rate, "se": wr.standard_error})
    return rows


def ppo_ceiling(farm, annotator: str = "human", **overrides) -> dict:
    """PPO with R* as its reward (the profile's PPO config, then ``overrides``): its win-rate under
    ``annotator`` against the reference on the whole evaluation set, and the artifact."""
    from farmlib.methods import ppo

    cfg = replace(farm.method_config("ppo", overrides), reward="true_reward")
    path = ppo.train(farm, None, cfg)
    outs = farm.samples(path, "eval", generator="ppo_true_reward")
    wr = farm.evaluate(outs, annotator)[0]
    return {"path": path, "win_rate": wr.win_rate, "se": wr.standard_error,
            "true_reward": sum(farm.true_rewards(outs)) / len(outs), "outputs": outs}


def ceiling_sentence(oracle: list[dict], ppo: dict, sft_people: float, sft_se: float) -> str:
    """What the ceilings say, in two sentences computed from :func:`oracle_best_of_n`'s rows, :func:`ppo_ceiling`'s
    result and SFT 10k's win-rate (and standard error) under the people."""
    first, last = oracle[0], oracle[-1]
    best = max(oracle, key=lambda r: r["win_rate"])
    held = best["win_rate"] - first["win_rate"]
    moved = ppo["win_rate"] - sft_people
    margin = 2 * math.hypot(ppo["se"], sft_se)
    verdict = ("well above SFT 10k: the true reward can move this policy" if moved > margin else
               "within twice the standard error of SFT 10k: at these settings not even the true reward moves the policy"
               if abs(moved) <= margin else "below SFT 10k")
    return (f"Picked by R* itself, the best of n SFT samples goes from {first['win_rate']:.1f} % at n = 1 to "
            f"{last['win_rate']:.1f} % at n = {last['n']} under the people (best: {best['win_rate']:.1f} % at n = "
            f"{best['n']}): the policy's own samples hold {held:+.1f} points for a selector that knows what people "
            f"want. PPO trained against R* itself reaches {ppo['win_rate']:.1f} ± {ppo['se']:.1f} % against SFT 10k's "
            f"{sft_people:.1f} ± {sft_se:.1f} % ({moved:+.1f} points), {verdict}.")
