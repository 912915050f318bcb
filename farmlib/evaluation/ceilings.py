"""Ceilings: how far the true reward R* itself can move the policy, before any reward model is blamed.

If best-of-n *picked by R** cannot beat SFT under the people, no reward model will, however many labels it
learns from; if it can, the gap between it and a method is what the learned reward loses. Two ceilings
(FarmWorld only):

- **oracle best-of-n** along n (:func:`oracle_best_of_n`): one draw of ``n_max`` SFT samples per prompt
  (:func:`farmlib.methods.best_of_n.draw`), R*'s favourite of the first n, judged by the people against the
  reference, beside its KL bound ``log n - (n - 1) / n``;
- **PPO on R*** (:func:`ppo_ceiling`): the chapter's PPO with R* as the reward
  (``PPOConfig.reward = "true_reward"``), judged the same way;
- **PPO on R* with random errors** (:func:`ppo_ceiling` with ``accuracy``; :func:`ppo_accuracy_sentence`): how
  accurate a reward must be before PPO can use it, errors that PPO cannot exploit;
- **DPO on R*'s labels** (:func:`dpo_ceiling`): the chapter's DPO on pairs labelled by R* itself, no noise, at
  the chapter's number of pairs and more: what DPO makes of perfect labels.

Where a selector falls short of R*'s own pick of the same candidates, :func:`headroom` says which of R*'s terms it
leaves behind (a right answer, the detail on it, a defect avoided) and :func:`misses` shows the answers it got wrong.
Between R* and the reward model sits the reward model's teacher: :func:`teacher_picks` picks by the judges' own
scores, no label noise, so :func:`teacher_sentence` can say whether the labels or the learning lose the taste.
"""

from __future__ import annotations

import math
from dataclasses import replace

from farmlib.evaluation.paired import instruction_scores, paired_difference
from farmlib.methods.best_of_n import BestOfNCurveConfig, draw, kl_bound, powers_of_two, prefix_choices
from farmlib.world import REWARD_WEIGHTS
from farmlib.world.true_reward import DEFECTS

#: R*'s terms (:func:`terms`) in a reader's words.
TERMS = {"quality": "a right answer", "detail": "detail on a right answer", "list": "a list on a right answer",
         "repetition": "repetition", "disfluency": "disfluency", "off_topic": "off-topic text", "echo": "echo",
         "broken": "broken text"}


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


def ppo_ceiling(farm, annotator: str = "human", accuracy: float | None = None, **overrides) -> dict:
    """PPO with R* as its reward (the profile's PPO config, then ``overrides``): its win-rate under
    ``annotator`` against the reference on the whole evaluation set (and each instruction's result, ``scores``),
    and the artifact. With ``accuracy``, the reward is R* plus an error fixed per answer, sized so that it ranks
    that share of chapter 5's held-out pairs as R* does (:func:`~farmlib.methods.reward_model.sigma_for_accuracy`): what a reward model that accurate could give
    PPO if its errors were random rather than systematic."""
    from farmlib.evaluation.leaderboard import defect_rates
    from farmlib.methods import ppo
    from farmlib.methods.reward_model import held_out_gaps, sigma_for_accuracy

    noise = sigma_for_accuracy(held_out_gaps(farm), accuracy) if accuracy is not None else 0.0
    cfg = replace(farm.method_config("ppo", overrides), reward="true_reward", reward_noise=noise)
    path = ppo.train(farm, None, cfg)
    outs = farm.samples(path, "eval", generator="ppo_true_reward")
    wr, ann = farm.evaluate(outs, annotator)
    defects = defect_rates(farm, outs)
    return {"path": path, "win_rate": wr.win_rate, "se": wr.standard_error, "scores": instruction_scores(ann),
            "steps": cfg.steps, "rollout_batch": cfg.rollout_batch, "true_reward": sum(farm.true_rewards(outs)) / len(outs),
            "accuracy": 1.0 if accuracy is None else accuracy, "reward_noise": noise,
            "repetitive": defects["repetition_rate"], "disfluent": defects["disfluency_rate"], "outputs": outs}


def dpo_ceiling(farm, sizes: tuple[int, ...] = (1000, 8000), annotator: str = "human", **overrides) -> list[dict]:
    """DPO (the profile's config, then ``overrides``) on R*'s own labels of the first n of chapter 5's curve pairs
    (:func:`~farmlib.methods.reward_model.curve_pairs`, ties dropped), for each n in ``sizes`` (at most what the
    splits hold): win-rate under ``annotator`` against the reference on the whole evaluation set (and each
    instruction's result, ``scores``), the shares of disfluent and repetitive answers (the people's defects) and the
    mean R*."""
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
        rows.append({"pairs": len(data), **judged(farm, outs, annotator)})
    return rows


def judged(farm, outs: list[dict], annotator: str = "human") -> dict:
    """A policy's evaluation answers as the ceilings' rows give them: win-rate and standard error under ``annotator``
    against the reference, each instruction's result (``scores``), the shares of disfluent and repetitive answers
    (the people's defects) and the mean R*."""
    from farmlib.evaluation.leaderboard import defect_rates

    wr, ann = farm.evaluate(outs, annotator)
    defects = defect_rates(farm, outs)
    return {"win_rate": wr.win_rate, "se": wr.standard_error, "scores": instruction_scores(ann),
            "disfluent": defects["disfluency_rate"], "repetitive": defects["repetition_rate"],
            "true_reward": sum(farm.true_rewards(outs)) / len(outs)}


def dpo_ceiling_sentence(rows: list[dict], run: dict, sft: dict) -> str:
    """What :func:`dpo_ceiling`'s rows say beside the chapter's run and SFT 10k (each a dict with ``win_rate``,
    ``se`` and ``pairs`` for the run), in two sentences. Where SFT 10k's dict and the rows carry per-instruction
    ``scores``, the gain is judged against the standard error of the difference paired over the instructions."""
    best = max(rows, key=lambda r: r["win_rate"])
    gain = best["win_rate"] - sft["win_rate"]
    margin = 2 * _difference_se(best, sft["se"], sft.get("scores"))
    points = ", ".join(f"{r['win_rate']:.1f} ± {r['se']:.1f} % with {r['pairs']:,} pairs "
                       f"({r['disfluent']:.0%} disfluent)" for r in rows)
    verdict = (f"perfect labels move the policy {gain:+.1f} points past SFT 10k, so the gap to the chapter's run is "
               "what its labels lose" if gain > margin else
               f"not even perfect labels move the policy past SFT 10k ({gain:+.1f} points, within twice the standard "
               "error of the difference): what holds DPO back here is not the labels' noise" if gain >= -margin else
               f"even perfect labels leave the policy {-gain:.1f} points below SFT 10k: DPO's updates, not the "
               "labels, are what hurts here")
    return (f"Trained on R*'s own labels, DPO reaches {points}, against SFT 10k's {sft['win_rate']:.1f} ± "
            f"{sft['se']:.1f} % and the chapter's run on {run['pairs']:,} `p_sim_ann` pairs at "
            f"{run['win_rate']:.1f} ± {run['se']:.1f} %: {verdict}.")


def ceiling_sentence(oracle: list[dict], ppo: dict, sft_people: float, sft_se: float,
                     sft_scores: list | None = None) -> str:
    """What the ceilings say, in two sentences computed from :func:`oracle_best_of_n`'s rows, :func:`ppo_ceiling`'s
    result and SFT 10k's win-rate (and standard error) under the people. With SFT 10k's per-instruction results
    (``sft_scores``) and PPO's (``ppo["scores"]``), PPO's gain is judged against the standard error of the difference
    paired over the instructions; without them, against the two standard errors combined (which overstates it)."""
    first, last = oracle[0], oracle[-1]
    best = max(oracle, key=lambda r: r["win_rate"])
    held = best["win_rate"] - first["win_rate"]
    moved = ppo["win_rate"] - sft_people
    margin = 2 * _difference_se(ppo, sft_se, sft_scores)
    budget = f" ({ppo['steps']} steps of {ppo['rollout_batch']} rollouts)" if "steps" in ppo else ""
    verdict = ("well above SFT 10k: the true reward can move this policy" if moved > margin else
               "within twice the standard error of the difference from SFT 10k: at this budget not even the true reward moves the policy "
               "(`benchmarks/ceilings.py --ppo` trains it with more rollouts)"
               if abs(moved) <= margin else "below SFT 10k")
    return (f"Picked by R* itself, the best of n SFT samples goes from {first['win_rate']:.1f} % at n = 1 to "
            f"{last['win_rate']:.1f} % at n = {last['n']} under the people (best: {best['win_rate']:.1f} % at n = "
            f"{best['n']}): the policy's own samples hold {held:+.1f} points for a selector that knows what people "
            f"want. PPO trained against R* itself{budget} reaches {ppo['win_rate']:.1f} ± {ppo['se']:.1f} % against SFT 10k's "
            f"{sft_people:.1f} ± {sft_se:.1f} % ({moved:+.1f} points), {verdict}.")


def _difference_se(row: dict, base_se: float, base_scores: list | None) -> float:
    """The standard error of ``row``'s win-rate minus a baseline's: paired over the instructions where both carry
    per-instruction results (``row["scores"]`` and ``base_scores``), else the two standard errors combined."""
    if base_scores is not None and row.get("scores") is not None:
        return paired_difference(row["scores"], base_scores)[1]
    return math.hypot(row["se"], base_se)


def ppo_accuracy_sentence(rows: list[dict], sft_people: float, target_gain: float) -> str:
    """What PPO against rewards of known accuracy says (:func:`ppo_ceiling`'s results, each with ``accuracy`` and
    ``win_rate``; R* itself at accuracy 1), in one or two sentences: the gain over SFT 10k's ``sft_people`` at each
    accuracy, and the accuracy at which the gain reaches ``target_gain`` points (interpolated between rows)."""
    from farmlib.methods.reward_model import crossing

    if not rows:
        return ("This build did not measure PPO against rewards of known accuracy (`ceiling_ppo_accuracies` is "
                "empty: each run is as long as PPO on R* above).")
    rows = sorted(rows, key=lambda r: r["accuracy"])
    gains = [r["win_rate"] - sft_people for r in rows]
    points = ", ".join(f"{g:+.1f} points at {r['accuracy']:.0%}" for r, g in zip(rows, gains))
    needed = crossing([r["accuracy"] for r in rows], gains, target_gain)
    verdict = (f"a reward must rank about {needed:.0%} of held-out pairs as R* does before PPO gains {target_gain:g} "
               "points, and a learned reward model's errors, unlike these, are systematic, so PPO can seek them out"
               if needed is not None else
               f"no accuracy measured here, R*'s own included, gains {target_gain:g} points at these PPO settings")
    return (f"Against R* plus an error fixed per answer, PPO's win-rate under the people moves from SFT 10k's "
            f"{sft_people:.1f} %: {points}. So {verdict}.")


def terms(parts: dict[str, float], weights: dict[str, float] = REWARD_WEIGHTS) -> dict[str, float]:
    """R*'s total (:func:`farmlib.world.true_reward.total`) as a sum of terms, one per part: ``quality`` is
    ``w_q · quality``; ``detail`` and ``list`` what they add on top of it (``w_q · quality · w_d · detail``, ...:
    an explanation is worth something only as far as the answer is right); each defect ``w_k · part_k`` (negative)."""
    q = weights["quality"] * parts["quality"]
    return {"quality": q, "detail": q * weights["detail"] * parts["detail"], "list": q * weights["list"] * parts["list"],
            **{k: weights[k] * parts[k] for k in DEFECTS}}


def oracle_picks(world, candidates: list[list[dict]], n: int | None = None) -> list[dict]:
    """R*'s favourite of the first ``n`` (default: all) of each prompt's candidates, ``candidates[k][i]`` being
    sample k for prompt i (:func:`farmlib.methods.best_of_n.candidates`); ties go to the earlier sample."""
    n = n or len(candidates)
    true = [[world.true_reward(c[i]["instruction"], c[i]["input"], c[i]["output"]) for c in candidates[:n]]
            for i in range(len(candidates[0]))]  # [i][k]
    return [candidates[k][i] for i, k in enumerate(prefix_choices(true, [n])[n])]


def best_picks(candidates: list[list[dict]], flat_scores: list[float]) -> list[dict]:
    """Each prompt's best candidate by ``flat_scores`` (candidate k of prompt i at ``k * n_prompts + i``, the order
    of ``[c for row in candidates for c in row]``); ties go to the earlier sample."""
    n, k_max = len(candidates[0]), len(candidates)
    by_prompt = [[flat_scores[k * n + i] for k in range(k_max)] for i in range(n)]  # [i][k]
    return [candidates[k][i] for i, k in enumerate(prefix_choices(by_prompt, [k_max])[k_max])]


def teacher_scores(farm, outputs: list[dict]) -> list[float]:
    """The simulated annotators' own score of each output: the mean, over the pool's 13 members, of their family's
    score (so each family weighs as many members as it has), without the pool's prompt mechanisms or its label
    noise. The judges read text and their knowledge of the world, never R*."""
    from farmlib.annotators.judges import default_pool

    lms = farm.judge_lms()
    share = {f: sum(c.model == f for c in default_pool()) for f in lms}
    mean = [0.0] * len(outputs)
    for f, lm in lms.items():
        mean = [m + share[f] * x for m, x in zip(mean, lm.scores(outputs))]
    return mean


def teacher_picks(farm, candidates: list[list[dict]]) -> list[dict]:
    """The simulated annotators' own favourite of each prompt's candidates (``candidates[k][i]``, as
    :func:`oracle_picks`) by :func:`teacher_scores`: what a reward model that learned ``p_sim_ann``'s labels
    perfectly would pick."""
    return best_picks(candidates, teacher_scores(farm, [c for row in candidates for c in row]))


def untrained_picks(farm, candidates: list[list[dict]], cfg=None) -> list[dict]:
    """The reward model's favourite *before it sees a label* (``cfg``: the chapter's reward-model config): with
    ``reads="likelihood"`` the SFT model's mean log-likelihood of the answer, with ``"last"`` a fresh head, and with
    ``backward`` the backward reader's term beside it at weight 1. What the trained reward model adds to it is what
    it learned from its labels."""
    from farmlib.methods import backward_reader
    from farmlib.methods.reward_model import new_reward_model, rewards

    cfg = cfg or farm.method_config("reward_model")
    tok, max_len = farm.tokenizer(), farm.profile.model.max_length
    back = backward_reader.of_config(farm, cfg)
    model = new_reward_model(farm.sft_model(), tok, farm.profile.device, cfg.seed, cfg.reads, back, max_len).eval()
    flat = [c for row in candidates for c in row]
    return best_picks(candidates, rewards(model, tok, flat, max_length=farm.profile.model.max_length).tolist())


def teacher_sentence(win_rates: dict[str, float], se: dict[str, float], base: str, prior: str, picked: str,
                     teacher: str, oracle: str, scores: dict[str, list] | None = None) -> str:
    """Which link loses the headroom, from the people's win-rates (``win_rates``, standard errors ``se``) of five
    selections of the same candidates: ``base`` (best-of-1), ``prior`` (the reward model before training,
    :func:`untrained_picks`), ``picked`` (the trained reward model's), ``teacher`` (:func:`teacher_picks`) and
    ``oracle`` (R*'s). A gap counts only beyond twice its standard error: paired over the instructions where
    ``scores`` holds each selection's per-instruction results, else the two selections' errors added in quadrature
    (a conservative bound for picks of the same candidates)."""
    def clear(a: str, b: str) -> bool:
        noise = (paired_difference(scores[a], scores[b])[1] if scores and a in scores and b in scores
                 else math.hypot(se[a], se[b]))
        return win_rates[a] - win_rates[b] > 2 * noise

    b, q, p, t, o = (win_rates[k] for k in (base, prior, picked, teacher, oracle))
    out = (f"Under the people, {oracle} wins {o:.1f} %, {teacher} {t:.1f} %, {picked} {p:.1f} %, {prior} {q:.1f} % "
           f"and {base} {b:.1f} %. ")
    if not clear(teacher, base):
        return out + (f"The judges' own taste gains nothing clear over {base}: here the labels, not the reward model, "
                      "are the weakest link.")
    learned = (f"training on their labels moved the reward model's picks {p - q:+.1f} points from what it picked "
               f"before it saw a label")
    if clear(teacher, picked):
        return out + (f"The judges' own scores gain {t - b:.1f} points over {base}; {learned}, so the weakest link is "
                      "the reward model's learning, not its teacher.")
    return out + (f"The judges' own scores gain {t - b:.1f} points over {base}, and {learned}: the reward model keeps "
                  f"its teacher's taste; what is left lies between the judges and R* ({o - t:.1f} points).")


def headroom(world, selections: dict[str, list[dict]]) -> list[dict]:
    """Where each selection's mean R* comes from: one row per R* term (:func:`terms`) and a ``total`` row, each
    with the term's mean over every selection's answers (a column per name in ``selections``)."""
    means = {}
    for name, outs in selections.items():
        rows = [terms(world.reward_breakdown(r["instruction"], r["input"], r["output"])) for r in outs]
        means[name] = {k: sum(t[k] for t in rows) / len(rows) for k in TERMS}
    out = [{"term": k, "reads": TERMS[k], **{name: m[k] for name, m in means.items()}} for k in TERMS]
    return out + [{"term": "total", "reads": "R*", **{name: sum(m.values()) for name, m in means.items()}}]


def headroom_sentence(rows: list[dict], base: str, picked: str, oracle: str,
                      win_rates: dict[str, float] | None = None) -> str:
    """What :func:`headroom`'s rows say of ``picked`` (a selection), measured from ``base`` (best-of-1, say) against
    ``oracle`` (R*'s own pick of the same candidates): the share of the oracle's gain in R* it takes, term by term
    for the terms that hold at least a tenth of that gain, and the term it leaves the most of; ``win_rates`` (per
    selection, under the people) opens the sentence."""
    by = {r["term"]: r for r in rows}
    gain = {k: by[k][oracle] - by[k][base] for k in by}
    took = {k: by[k][picked] - by[k][base] for k in by}
    total = gain["total"]
    opening = ""
    if win_rates:
        opening = (f"Under the people, {oracle} wins {win_rates[oracle]:.1f} % against the reference, {picked} "
                   f"{win_rates[picked]:.1f} % and {base} {win_rates[base]:.1f} %. ")
    if total <= 0:
        return opening + (f"R*'s own pick is no better than {base} ({total:+.2f} in mean R*): these candidates hold "
                          "no headroom to share out.")

    def said(k: str) -> str:
        return f"less {TERMS[k]}" if k in DEFECTS else TERMS[k]

    big = sorted((k for k in TERMS if gain[k] >= total / 10), key=lambda k: -gain[k])
    shares = "; ".join(f"{said(k)} {gain[k]:+.2f}, of which it takes {took[k] / gain[k]:.0%}" for k in big)
    left = max(TERMS, key=lambda k: gain[k] - took[k])
    return opening + (
        f"In mean R*, {oracle} gains {total:+.2f} over {base} and {picked} {took['total']:+.2f} "
        f"({took['total'] / total:.0%} of it). By term: {shares}. It leaves the most behind in {said(left)} "
        f"({gain[left] - took[left]:.2f} of the {total - took['total']:.2f} left): that is what a better reward model "
        "would have to see.")


def misses(world, picked: list[dict], oracle: list[dict], k: int = 3, margin: float = 0.5,
           name: str = "the selector") -> tuple[list[dict], str]:
    """Where a selection (``picked``, by ``name``) loses to R*'s own pick (``oracle``) of the same candidates: the
    ``k`` largest losses among picks free of every defect (a fluent answer the selector could not fault), and a
    sentence counting, among the prompts it loses by more than ``margin`` in R*, those whose pick is fluent and
    less right than R*'s."""
    lost, rows = 0, []
    for p, o in zip(picked, oracle):
        bp, bo = (world.reward_breakdown(r["instruction"], r["input"], r["output"]) for r in (p, o))
        gap = bo["total"] - bp["total"]
        if gap <= margin:
            continue
        lost += 1
        if all(bp[d] == 0 for d in DEFECTS) and bp["quality"] < bo["quality"]:
            rows.append({"instruction": p["instruction"] + (f" [{p['input']}]" if p["input"] else ""),
                         f"{name}'s pick": p["output"], "its R*": bp["total"], "R*'s pick": o["output"],
                         "R* of R*'s pick": bo["total"], "gap": gap})
    fluent = len(rows)
    who = name[0].upper() + name[1:]
    text = (f"{who} loses to R*'s pick by more than {margin} on {lost} of {len(picked)} instructions; on "
            f"{fluent} of them ({fluent / max(lost, 1):.0%}) its pick has no defect at all and is less right than "
            "R*'s: fluent, and on the wrong task or thinner." if lost else
            f"{who} never loses to R*'s pick by more than {margin}.")
    rows.sort(key=lambda r: -r["gap"])
    return [{key: v for key, v in r.items() if key != "gap"} for r in rows[:k]], text
