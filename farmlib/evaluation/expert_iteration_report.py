"""What chapter 10 says about expert iteration's rounds, computed: a row per round (what the reward model saw
among the round's candidates, and how one sample of the round's policy does on the evaluation instructions)
and the sentence that reads them. Kept here, tested on hand-made rows, so the chapter's cells stay short."""

from __future__ import annotations

import pandas as pd

from farmlib.evaluation.paired import instruction_scores, paired_difference, verdict
from farmlib.evaluation.win_rate import plus_minus


def round_rows(farm, history: list[dict], sft_outs: list[dict], run: str) -> list[dict]:
    """One dict per round of :func:`farmlib.methods.expert_iteration.iterate`'s ``history``: the reward model's
    mean score of the candidates (best-of-1) and of the winners on the unlabeled split; then one sample of the
    round's policy per evaluation instruction: its win-rate under each evaluation annotator with the paired
    difference to SFT 10k (``d_<annotator>``, ``se_<annotator>``) and to round 1 (``d1_<annotator>``,
    ``se1_<annotator>``), and in FarmWorld the mean true reward R* of the winners and of the samples."""
    base = {a: farm.evaluate(sft_outs, a)[1] for a in farm.evaluation_annotators()}
    first: dict[str, list] = {}
    rows = []
    for h in history:
        sel = h["selection"]
        n = max(sel["outputs"])
        outs = farm.samples(h["policy"], "eval", generator=f"{run} round {h['round']}")
        row = {"round": h["round"], "candidates' reward": sel["mean_reward"][1], "winners' reward": sel["mean_reward"][n]}
        for a, sft_ann in base.items():
            wr, ann = farm.evaluate(outs, a)
            scores = instruction_scores(ann)
            first.setdefault(a, scores)
            d, se = paired_difference(scores, instruction_scores(sft_ann))
            d1, se1 = paired_difference(scores, first[a])
            row |= {f"win_rate_{a}": wr.win_rate, f"d_{a}": d, f"se_{a}": se, f"d1_{a}": d1, f"se1_{a}": se1}
        if farm.is_farmworld:
            w = sel["outputs"][n]
            row["winners' R*"] = sum(farm.true_rewards(w)) / len(w)
            row["eval R*"] = sum(farm.true_rewards(outs)) / len(outs)
        rows.append(row)
    return rows


_WHO = {"human": "people", "p_sim_eval": "judges"}  # short column names: the table must fit the page


def round_table(rows: list[dict]) -> pd.DataFrame:
    """:func:`round_rows` for the page: one row per round, win-rates as "w (d ± se)" under "people" and "judges"."""
    shown = []
    for r in rows:
        s = {"candidates' reward": r["candidates' reward"], "winners' reward": r["winners' reward"]}
        if "winners' R*" in r:
            s |= {"winners' R*": r["winners' R*"], "eval R*": r["eval R*"]}
        for a in [k[len("win_rate_"):] for k in r if k.startswith("win_rate_")]:
            s[f"{_WHO.get(a, a)} (vs SFT 10k)"] = f"{r[f'win_rate_{a}']:.1f} ({plus_minus(r[f'd_{a}'], r[f'se_{a}'], sign=True)})"
        shown.append(pd.Series(s, name=f"round {r['round']}"))
    return pd.DataFrame(shown)


def round_sentence(rows: list[dict], annotator: str = "human") -> str:
    """What the rounds did under ``annotator``: the win-rate's path over rounds, whether the last round is
    beyond two standard errors of SFT 10k, and whether the rounds after the first added more than their noise."""
    who = {"human": "the simulated people", "p_sim_eval": "the simulated judges"}.get(annotator, f"`{annotator}`")
    if f"d_{annotator}" not in rows[0]:
        return f"No round was judged by {who}."
    path = " → ".join(f"{r[f'win_rate_{annotator}']:.1f}" for r in rows)
    first, last = rows[0], rows[-1]
    d, se = last[f"d_{annotator}"], last[f"se_{annotator}"]
    text = (f"**What to see.** Under {who}, one sample of each round's policy wins {path} % against the reference; "
            f"after round {last['round']} that is {d:+.1f} ± {se:.1f} points against SFT 10k, paired over the "
            f"instructions ({verdict(d, se)}).")
    if len(rows) > 1:
        gain, noise = last[f"d1_{annotator}"], last[f"se1_{annotator}"]  # paired against round 1's samples
        more = ("more than twice its noise: the reranker, applied again to a better sampler, found better answers "
                "again" if gain > 2 * noise else
                "a loss of more than twice its noise: the later rounds cost more than they gave" if gain < -2 * noise
                else "less than twice its noise: the later rounds added little")
        text += f" From round 1 to round {last['round']} it moved {gain:+.1f} ± {noise:.1f} points, paired, {more}."
    if "winners' R*" in rows[0]:
        r0, r1 = first["winners' R*"], last["winners' R*"]
        text += (f" The true reward R* of the winners went {r0:.2f} → {r1:.2f} on the unlabeled instructions, "
                 + ("so the picks were truly better, not only better liked by the reward model." if r1 > r0 else
                    "so the picks did not get truly better."))
    return text


def distil_sentence(sft: float, best: float, ours: float, run: str, n: int, rounds: int = 1) -> str:
    """The reward model's mean score of one SFT sample (``sft``), of best-of-``n`` of SFT (``best``) and of one
    sample of the trained policy (``ours``, after ``rounds`` rounds), in words: what share of the reranker's gain the
    policy kept."""
    text = (f"**What to see.** By the reward model, one sample of {run} scores {ours:.3f}, against {sft:.3f} for SFT "
            f"and {best:.3f} for best-of-{n} of SFT")
    if best == sft:
        return text + ": the reranker gained nothing to distil."
    share = 100 * (ours - sft) / (best - sft)
    if share > 100 and rounds > 1:
        return text + (f": {share:.0f} % of the reranker's gain, more than one round of distillation could give "
                       "(the later rounds reranked a better sampler).")
    if share > 100:
        return text + f": {share:.0f} % of the reranker's gain, its samples scoring above the winners it learned from."
    return text + f": the distillation kept {share:.0f} % of the reranker's gain."
