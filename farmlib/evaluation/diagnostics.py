"""Where learning from feedback can work, family by family (FarmWorld only).

For each task family, four numbers that together say whether feedback can help there and which link breaks:

- ``sft_quality``: how often SFT 10k's answers are right (the mean of R*'s task-success part on the eval set):
  a family whose answers are never right leaves nothing to select;
- ``oracle_gain``: the people's win-rate of best-of-n picked *by R** minus best-of-1, on the same draw of SFT
  samples (:func:`farmlib.methods.best_of_n.draw`): the headroom in the policy's own samples;
- ``rm_accuracy``: the reward model's agreement with R* on held-out pairs of SFT samples (ties dropped): can
  the learned reward see the difference;
- ``judge_agreement``: ``p_sim_eval``'s agreement with the people's majority on those pairs: can the
  simulated annotators.

A family with headroom and an accurate reward model is where a method should gain; a family with headroom and
a reward model near 50 % is where the reward model is the weakest link.
"""

from __future__ import annotations

import pandas as pd

from farmlib.evaluation.win_rate import win_rate


def _by_family(records: list[dict]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        out.setdefault(r.get("dataset", ""), []).append(i)
    return out


def oracle_gains(farm, n: int = 16, n_prompts: int = 200, annotator: str = "human", seed: int = 0,
                 draw_n: int | None = None) -> dict[str, dict]:
    """Per family: best-of-1 and oracle best-of-``n`` (R*'s pick among the first ``n``) win-rates under ``annotator``
    against the reference, on one draw of ``draw_n`` (default ``n``) SFT samples for each of the first ``n_prompts``
    evaluation instructions; pass the ceilings' ``n_max`` as ``draw_n`` to share their draw."""
    from farmlib.methods.best_of_n import BestOfNCurveConfig, draw, prefix_choices

    _, cands = draw(farm, BestOfNCurveConfig(n_max=max(n, draw_n or n), n_prompts=n_prompts, seed=seed))
    true = [farm.true_rewards(row) for row in cands]
    picks = prefix_choices(true, [1, n])
    reference = farm.reference_outputs()[:len(cands)]
    out = {}
    for k in (1, n):
        outs = [dict(cands[i][j], generator=f"oracle_best_of_{k}") for i, j in enumerate(picks[k])]
        ann = farm.evaluate(outs, annotator, reference=reference)[1]
        for fam, idx in _by_family(outs).items():
            wr = win_rate(ann[i]["preference"] for i in idx)
            out.setdefault(fam, {"n_prompts": len(idx)})[f"best_of_{k}"] = wr.win_rate
    return out


def per_family(farm, rm_path: str, n: int = 16, n_prompts: int = 200, judges: str | None = "p_sim_eval",
               draw_n: int | None = None) -> pd.DataFrame:
    """One row per family (see the module's docstring), in the order of :data:`farmlib.world.FAMILIES`;
    ``judges``: the annotator whose agreement with the people is measured (None: not measured); ``draw_n``: see
    :func:`oracle_gains`."""
    from farmlib.annotators.validation import sft_pairs
    from farmlib.methods.reward_model import load_reward_model, rewards
    from farmlib.world import FAMILIES

    if not farm.is_farmworld:
        farm.not_in_real_world("the per-family diagnostics (they read R*)")
    sft = farm.samples(farm.sft_model(), "eval", generator="sft10k")
    quality = {fam: [farm.world.reward_breakdown(sft[i]["instruction"], sft[i]["input"], sft[i]["output"])["quality"]
                     for i in idx] for fam, idx in _by_family(sft).items()}
    gains = oracle_gains(farm, n, n_prompts, draw_n=draw_n)
    pairs = sft_pairs(farm, split="val")
    w = farm.world
    true = [(w.true_reward(r["instruction"], r["input"], r["output_1"]),
             w.true_reward(r["instruction"], r["input"], r["output_2"])) for r in pairs]
    rm, tok = load_reward_model(rm_path, farm.profile.device), farm.tokenizer()
    r1 = rewards(rm, tok, pairs, "output_1", max_length=farm.profile.model.max_length).tolist()
    r2 = rewards(rm, tok, pairs, "output_2", max_length=farm.profile.model.max_length).tolist()
    crowd = farm.annotator("human")
    judged = farm.annotator(judges).annotate_pairs(pairs, seed=0) if judges else [{"preference": None}] * len(pairs)
    rows = []
    by_pair = _by_family(pairs)
    for fam in dict.fromkeys([*quality, *gains, *by_pair]):  # every family seen anywhere, once
        idx = by_pair.get(fam, [])
        decided = [i for i in idx if true[i][0] != true[i][1]]
        rm_hits = [(r2[i] > r1[i]) == (true[i][1] > true[i][0]) for i in decided]
        labelled = [i for i in idx if judged[i]["preference"] in (1, 2)]
        agree = [judged[i]["preference"] == crowd.majority_label(pairs[i]) for i in labelled]
        g = gains.get(fam, {})
        rows.append({"family": fam, "closed_form": FAMILIES[fam].closed_form if fam in FAMILIES else None,
                     "sft_quality": sum(quality.get(fam, [])) / max(len(quality.get(fam, [])), 1),
                     "best_of_1": g.get("best_of_1"), f"oracle_best_of_{n}": g.get(f"best_of_{n}"),
                     "oracle_gain": (g[f"best_of_{n}"] - g["best_of_1"]) if g else None,
                     "n_prompts": g.get("n_prompts", 0),
                     "rm_accuracy": sum(rm_hits) / len(rm_hits) if rm_hits else None, "n_pairs": len(decided),
                     "judge_agreement": sum(agree) / len(agree) if agree else None})
    order = {f: k for k, f in enumerate(FAMILIES)}
    return pd.DataFrame(sorted(rows, key=lambda r: order.get(r["family"], len(order)))).set_index("family")


def weakest_link(table: pd.DataFrame, min_gain: float = 10.0, min_rm: float = 0.6) -> str:
    """One sentence, computed from :func:`per_family`'s table: which families have headroom (an oracle gain of at
    least ``min_gain`` points) and in which of those the reward model is the weakest link (accuracy below
    ``min_rm``)."""
    room = table[table["oracle_gain"].fillna(0) >= min_gain]
    weak = room[room["rm_accuracy"].fillna(0) < min_rm]
    if room.empty:
        return f"No family has {min_gain:g} points of headroom under R*'s own selection: the policy's samples are the limit."
    names = ", ".join(room.index)
    if weak.empty:
        return (f"{len(room)} of {len(table)} families have at least {min_gain:g} points of headroom ({names}), and the "
                f"reward model ranks their pairs at least {min_rm:.0%} right in each.")
    return (f"{len(room)} of {len(table)} families have at least {min_gain:g} points of headroom ({names}); in "
            f"{len(weak)} of them ({', '.join(weak.index)}) the reward model ranks fewer than {min_rm:.0%} of the pairs "
            f"right, so it is the weakest link there.")
