"""What DPO's pushed-down half costs: the same winners, learnt with and without a losing answer beside them.

Expert iteration's first round (chapter 10) draws n answers to each unlabeled instruction from SFT 10k, lets the
reward model pick the best, and fine-tunes on the winners: every update pulls a good answer up. DPO on pairs the same
reward model makes of the same candidates (its best answer against its worst, or against a random other one,
:func:`pairs_from_scores`) pulls the same winners up *and* pushes a loser down. Set side by side,
under the people, the two isolate what the second half of DPO's loss does to this policy.
"""

from __future__ import annotations

import random
from dataclasses import replace

from farmlib.evaluation.paired import instruction_scores, paired_difference

WINNERS = "SFT on the winners (expert iteration's round 1)"
REJECTED = {"worst": "DPO: the winner against the worst", "random": "DPO: the winner against a random other"}


def pairs_from_scores(candidates: list[list[dict]], rewards: list[list[float]], rejected: str = "worst",
                      seed: int = 0) -> list[dict]:
    """Preference pairs a reward model makes of each instruction's candidates (``candidates[k][i]``: answer k to
    instruction i; ``rewards[k][i]`` its score): its best answer preferred to its worst (``"worst"``) or to one of the
    others drawn at random (``"random"``, the UltraFeedback/Zephyr recipe). An instruction whose two answers read
    the same gives no pair."""
    if rejected not in ("worst", "random"):
        raise ValueError(f"rejected is {rejected!r}; choose 'worst' or 'random'")
    rng = random.Random(seed)
    out = []
    for i in range(len(candidates[0])):
        scores = [r[i] for r in rewards]
        best = max(range(len(scores)), key=scores.__getitem__)
        other = (min(range(len(scores)), key=scores.__getitem__) if rejected == "worst" else
                 rng.choice([k for k in range(len(scores)) if k != best]))
        w, lo = candidates[best][i], candidates[other][i]
        if w["output"] != lo["output"]:
            out.append({"instruction": w["instruction"], "input": w["input"], "output_1": w["output"],
                        "output_2": lo["output"], "preference": 1})
    return out


def run(farm, rejected: tuple[str, ...] = ("worst", "random"), annotator: str = "human", **overrides) -> list[dict]:
    """One row per way of learning the reward model's winners (:data:`WINNERS`, then DPO against each kind of
    ``rejected`` answer, with the profile's DPO config and ``overrides``): win-rate and standard error under
    ``annotator`` against the reference, the difference from SFT 10k paired over the instructions (``gain``,
    ``gain_se``) and, for the DPO rows, from the winners-only row (``vs_winners``, ``vs_winners_se``); the shares
    of disfluent and repetitive answers, the mean R*, and DPO's implicit rewards of the chosen and the rejected
    answers over the last tenth of its steps (``chosen``, ``rejected``: β times the log-ratio to SFT)."""
    from farmlib import methods
    from farmlib.artifacts import read_artifact
    from farmlib.evaluation.ceilings import judged
    from farmlib.methods import best_of_n, dpo, expert_iteration

    if not farm.is_farmworld:
        farm.not_in_real_world("DPO on the reward model's pairs under the people")
    rm = methods.reward_model_path(farm)
    ei = replace(farm.method_config("expert_iteration"), rounds=1)
    first = expert_iteration.iterate(farm, rm, ei)[0]
    candidates = best_of_n.candidates(farm, expert_iteration.selection_config(ei), first["sampler"])
    _, sft_ann = farm.evaluate(farm.samples(farm.sft_model(), "eval", generator="sft10k"), annotator)
    sft_scores = instruction_scores(sft_ann)
    cfg = farm.method_config("dpo", overrides)

    def row(name: str, path: str, generator: str) -> dict:
        r = {"learnt from": name, "pairs": None, **judged(farm, farm.samples(path, "eval", generator=generator), annotator)}
        r["gain"], r["gain_se"] = paired_difference(r["scores"], sft_scores)
        return r

    rows = [row(WINNERS, first["policy"], "expert_iteration round 1")]
    for kind in rejected:
        prefs = pairs_from_scores(candidates, first["selection"]["rewards"], kind, seed=cfg.seed)
        path = dpo.train(farm, cfg, prefs=prefs)
        r = row(REJECTED[kind], path, f"dpo_rm_{kind}")
        r["vs_winners"], r["vs_winners_se"] = paired_difference(r["scores"], rows[0]["scores"])
        hist = read_artifact(path)
        tail = hist[-max(1, len(hist) // 10):]
        r |= {"pairs": len(prefs), "chosen": sum(h["rewards/chosen"] for h in tail) / len(tail),
              "rejected": sum(h["rewards/rejected"] for h in tail) / len(tail)}
        rows.append(r)
    return rows


def shown(rows: list[dict]):
    """The rows as chapter 8 shows them: one line a row, short names."""
    import pandas as pd

    short = {WINNERS: "winners alone", REJECTED["worst"]: "DPO vs worst", REJECTED["random"]: "DPO vs random"}
    cols = {"learnt from": "learnt from", "pairs": "pairs", "gain": "people − SFT", "gain_se": "±",
            "disfluent": "disfluent", "repetitive": "repeats", "true_reward": "R*", "chosen": "chosen",
            "rejected": "rejected"}
    table = pd.DataFrame([{k: short.get(r[k], r[k]) if k == "learnt from" else r.get(k) for k in cols}
                          for r in rows]).rename(columns=cols)
    return (table.style.format({"pairs": lambda v: "–" if v is None or v != v else f"{int(v):,}",
                                "people − SFT": "{:+.1f}", "±": "{:.1f}", "disfluent": "{:.0%}", "repeats": "{:.0%}",
                                "R*": "{:.2f}", "chosen": "{:+.2f}", "rejected": "{:+.2f}"}, na_rep="–")
            .hide(axis="index")
            .set_table_styles([{"selector": "td, th", "props": "white-space: nowrap; font-size: 0.85em; padding: 2px 4px;"}]))


def _beyond(d: float, se: float) -> str:
    return "beyond twice its noise" if abs(d) > 2 * se else "within twice its noise"


def sentence(rows: list[dict], sft_disfluent: float) -> str:
    """What :func:`run`'s rows say: the winners-only gain, each DPO row against it, and whether DPO lowered the
    winners' own probability (a negative implicit reward of the chosen answer) while it pushed the losers down."""
    first, dpos = rows[0], rows[1:]
    text = (f"Fine-tuned on the reward model's winners alone, the policy gains {first['gain']:+.1f} ± "
            f"{first['gain_se']:.1f} points over SFT 10k under the people ({_beyond(first['gain'], first['gain_se'])}).")
    for r in dpos:
        kind = r["learnt from"].split(": ", 1)[1]
        text += (f" DPO on the same winners, {kind}: {r['gain']:+.1f} ± {r['gain_se']:.1f} over SFT 10k and "
                 f"{r['vs_winners']:+.1f} ± {r['vs_winners_se']:.1f} against the winners alone "
                 f"({_beyond(r['vs_winners'], r['vs_winners_se'])}), with {r['disfluent']:.0%} of its answers "
                 f"disfluent (SFT 10k {sft_disfluent:.0%})")
        text += ("; it lowered the winners' own probability too (implicit reward "
                 f"{r['chosen']:+.2f}) while it pushed the losers down ({r['rejected']:+.2f})." if r["chosen"] < 0 else
                 f"; the winners' implicit reward rose to {r['chosen']:+.2f} and the losers' fell to {r['rejected']:+.2f}.")
    worse = [r for r in dpos if r["vs_winners"] < -2 * r["vs_winners_se"]]
    if worse:
        costs = sorted(-r["vs_winners"] for r in worse)
        cost = f"{costs[0]:.1f}" if len(costs) == 1 else f"{costs[0]:.1f} to {costs[-1]:.1f}"
        text += (f" Same winners, same reward model: DPO's pushed-down half costs {cost} points against the winners "
                 "alone here")
        text += (", and the probability it took from the losers did not go to the winners."
                 if all(r["chosen"] < 0 for r in worse) else ".")
    elif dpos:
        text += " The pushed-down half neither helps nor hurts beyond the noise here."
    return text
