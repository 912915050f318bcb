"""Ceilings: how far the true reward R* itself can move the policy, before any reward model is blamed.

If best-of-n *picked by R** cannot beat SFT under the people, no reward model will, however many labels it
learns from; if it can, the gap between it and a method is what the learned reward loses. Two ceilings
(FarmWorld only):

- **oracle best-of-n** along n (:func:`oracle_best_of_n`): one draw of ``n_max`` SFT samples per prompt
  (:func:`farmlib.methods.best_of_n.draw`), R*'s favourite of the first n, judged by the people against the
  reference, beside its KL bound ``log n - (n - 1) / n``;
- **PPO on R*** (:func:`ppo_ceiling`): the chapter's PPO with R* as the reward
  (``PPOConfig.reward = "true_reward"``), judged the same way;
- **DPO on R*'s labels** (:func:`dpo_ceiling`): the chapter's DPO on pairs labelled by R* itself, no noise, at
  the chapter's number of pairs and more: what DPO makes of perfect labels.
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


def dpo_ceiling(farm, sizes: tuple[int, ...] = (1000, 8000), annotator: str = "human", **overrides) -> list[dict]:
    """DPO (the profile's config, then ``overrides``) on R*'s own labels of the first n of chapter 5's curve pairs
    (:func:`~farmlib.methods.reward_model.curve_pairs`, ties dropped), for each n in ``sizes`` (at most what the
    splits hold): win-rate under ``annotator`` against the reference on the whole evaluation set, the shares of
    disfluent and repetitive answers (the people's defects) and the mean R*."""
    from farmlib.evaluation.leaderboard import defect_rates
    from farmlib.methods import dpo
    from farmlib.methods.reward_model import curve_pairs

    if not farm.is_farmworld:
        farm.not_in_real_world("DPO on R*'s labels")
    cfg = replace(farm.method_config("dpo", overrides), annotator="true_reward")
    pairs = curve_pairs(farm, max(sizes))
    labelled = farm.annotator("true_reward").annotate_pairs(pairs, seed=cfg.seed)
    rows = []
    for n in sorted({min(s, len(pairs)) for s in sizes}):
        data = [r for r in labelled[:n] if r["preference"] in (1, 2)]
        path = dpo.train(farm, cfg, prefs=data)
        outs = farm.samples(path, "eval", generator=f"dpo_true_reward_{n}")
        wr = farm.evaluate(outs, annotator)[0]
        defects = defect_rates(farm, outs)
        rows.append({"pairs": len(data), "win_rate": wr.win_rate, "se": wr.standard_error,
                     "disfluent": defects["disfluency_rate"], "repetitive": defects["repetition_rate"],
                     "true_reward": sum(farm.true_rewards(outs)) / len(outs)})
    return rows


def dpo_ceiling_sentence(rows: list[dict], run: dict, sft: dict) -> str:
    """What :func:`dpo_ceiling`'s rows say beside the chapter's run and SFT 10k (each a dict with ``win_rate``,
    ``se`` and ``pairs`` for the run), in two sentences."""
    best = max(rows, key=lambda r: r["win_rate"])
    gain = best["win_rate"] - sft["win_rate"]
    margin = 2 * math.hypot(best["se"], sft["se"])
    points = ", ".join(f"{r['win_rate']:.1f} ± {r['se']:.1f} % with {r['pairs']:,} pairs "
                       f"({r['disfluent']:.0%} disfluent)" for r in rows)
    verdict = (f"perfect labels move the policy {gain:+.1f} points past SFT 10k, so the gap to the chapter's run is "
               "what its labels lose" if gain > margin else
               f"not even perfect labels move the policy past SFT 10k ({gain:+.1f} points, within twice the standard "
               "error): what holds DPO back here is not the labels' noise" if gain >= -margin else
               f"even perfect labels leave the policy {-gain:.1f} points below SFT 10k: DPO's updates, not the "
               "labels, are what hurts here")
    return (f"Trained on R*'s own labels, DPO reaches {points}, against SFT 10k's {sft['win_rate']:.1f} ± "
            f"{sft['se']:.1f} % and the chapter's run on {run['pairs']:,} `p_sim_ann` pairs at "
            f"{run['win_rate']:.1f} ± {run['se']:.1f} %: {verdict}.")


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
