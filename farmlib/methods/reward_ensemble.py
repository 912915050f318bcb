"""An ensemble of reward models (Coste et al. 2023, *Reward model ensembles help mitigate overoptimization*).

Member ``(b, s)`` is SFT 10k trained with SFT seed ``s`` on the base model pretrained with seed ``b``, fitted as the
book's reward model on the book's preference pairs: members differ in their SFT seed (the order the demonstrations
are seen in, on one base model), in their pretraining seed (Coste et al.'s), or both. Each member's scores are
standardised over the records they score (members read likelihoods on their own scales), then combined:

- mean: ``mean_j z_j(x, y)``;
- worst case (WCO): ``min_j z_j(x, y)``, an answer is as good as its harshest member says;
- uncertainty-weighted (UWO): ``mean_j z_j - λ · std_j z_j`` with λ = 1, members that disagree count against it.

The same members before any label (the SFT models' likelihoods, :func:`farmlib.methods.reward_model.new_reward_model`)
separate what the ensemble's labels add from what its readers add.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from farmlib.artifacts import read_json, write_json
from farmlib.methods import backward_reader, reward_model
from farmlib.provenance import data_digest

#: How the members' standardised scores combine, by name.
AGGREGATES = {
    "mean": statistics.fmean,
    "worst case": min,
    "mean − std": lambda z: statistics.fmean(z) - statistics.pstdev(z),
}


def standardise(scores: list[float]) -> list[float]:
    """``(s - mean) / sd`` over ``scores`` (all zeros when they are all equal)."""
    mu, sd = statistics.fmean(scores), statistics.pstdev(scores)
    return [(s - mu) / sd if sd > 0 else 0.0 for s in scores]


def aggregate(member_scores: list[list[float]], how: str = "mean") -> list[float]:
    """One score per record from each member's scores of the same records (``member_scores[j][i]``), each member
    standardised first (:func:`standardise`), combined by ``how`` (a name in :data:`AGGREGATES`)."""
    if how not in AGGREGATES:
        raise ValueError(f"aggregate is {how!r}; choose from {', '.join(AGGREGATES)}")
    z = [standardise(s) for s in member_scores]
    return [AGGREGATES[how]([m[i] for m in z]) for i in range(len(z[0]))]


def as_members(members) -> list[tuple[int, int]]:
    """``members`` as distinct ``(pretraining seed, SFT seed)`` pairs, in order (a notebook parameter's lists too)."""
    out = []
    for m in members:
        if len(m) != 2:
            raise ValueError(f"an ensemble member is (pretraining seed, SFT seed), got {list(m)!r}")
        out.append((int(m[0]), int(m[1])))
    return list(dict.fromkeys(out))


def label(member: tuple[int, int], of, farm) -> str:
    """A member's name in the table: what differs between the members of ``of`` (SFT seed, base, or both); the
    book's own pair is the book's reward model."""
    b, s = member
    bases, seeds = {m[0] for m in of}, {m[1] for m in of}
    name = (f"SFT seed {s}" if len(bases) == 1 else f"base {b}" if len(seeds) == 1 else f"base {b}, SFT seed {s}")
    own = (b, s) == (farm.profile.pretrain.seed, farm.profile.sft.seed)
    return f"member: {name}" + (" (the book's reward model)" if own else "")


def member_sfts(farm, of) -> dict[tuple[int, int], str]:
    """SFT 10k with SFT seed ``s`` on the base model of pretraining seed ``b``, for each member ``(b, s)`` of ``of``
    (``farm.models.with_base_seed``); the book's own seeds give the book's SFT 10k."""
    from farmlib.methods import policy

    return {(b, s): policy(farm.models.with_base_seed(b), "sft10k", seed=s)[0] for b, s in as_members(of)}


def members(farm, of, cfg=None) -> dict[tuple[int, int], str]:
    """The reward model fitted from the SFT 10k of each member of ``of`` (:func:`member_sfts`) on the book's
    preference pairs (``cfg``: the profile's reward-model config); the book's own seeds give the book's reward model."""
    cfg = cfg or farm.method_config("reward_model")
    return {m: reward_model.train(farm, cfg, sft=sft) for m, sft in member_sfts(farm, of).items()}


def scores(farm, records: list[dict], of, trained: bool = True, cfg=None) -> dict[tuple[int, int], list[float]]:
    """Each member's (``of``: ``(pretraining seed, SFT seed)`` pairs) reward of each record (``trained=False``: the
    member before any label, its SFT model's likelihood), cached as one artifact per set of members and records."""
    cfg = cfg or farm.method_config("reward_model")
    paths = members(farm, of, cfg) if trained else member_sfts(farm, of)
    tok, max_len, device = farm.tokenizer(), farm.profile.model.max_length, farm.profile.device
    back = backward_reader.of_config(farm, cfg) if not trained else None

    def build(work: Path) -> None:
        out = {}
        for (b, s), path in paths.items():
            model = (reward_model.load_reward_model(path, device) if trained else
                     reward_model.new_reward_model(path, tok, device, cfg.seed, cfg.reads, back, max_len).eval())
            out[f"{b},{s}"] = reward_model.rewards(model, tok, records, max_length=max_len).tolist()
        write_json(work / "scores.json", out)

    path = farm.artifact("reward_ensemble_scores", {"members": {f"{b},{s}": p for (b, s), p in paths.items()},
                                                    "trained": trained, "reads": cfg.reads,
                                                    **({"backward_model": back} if back else {}),
                                                    "records": data_digest(records)}, build)
    return {tuple(int(x) for x in k.split(",")): v for k, v in read_json(Path(path) / "scores.json").items()}


# -- best-of-n by the ensemble, in the book (chapter 9) ---------------------------------------------------------------
def selections(farm, candidates: list[list[dict]], of, cfg=None) -> dict[str, list[dict]]:
    """Each prompt's favourite of its candidates (``candidates[k][i]``, chapter 9's) by each member (``of``:
    ``(pretraining seed, SFT seed)`` pairs) alone, by the ensemble under each of :data:`AGGREGATES`, and by the
    ensemble's mean before any label."""
    from farmlib.evaluation.ceilings import best_picks

    flat = [c for row in candidates for c in row]
    trained, untrained = (scores(farm, flat, of, t, cfg) for t in (True, False))
    out = {label(m, trained, farm): best_picks(candidates, s) for m, s in trained.items()}
    for how in AGGREGATES:
        out[f"ensemble: {how}"] = best_picks(candidates, aggregate(list(trained.values()), how))
    out["ensemble before any label: mean"] = best_picks(candidates, aggregate(list(untrained.values()), "mean"))
    return out


def table(farm, selected: dict[str, list[dict]], base_outputs: list[dict], annotator: str = "human") -> list[dict]:
    """Per selection: its win-rate under ``annotator`` against the reference, its paired difference from
    ``base_outputs`` (SFT 10k's answers) on the same instructions, the mean R* of its picks, and each instruction's
    result (``scores``, for further pairing)."""
    from farmlib.evaluation.paired import instruction_scores, paired_difference

    base = instruction_scores(farm.evaluate(base_outputs, annotator)[1])
    rows = []
    for i, (name, outs) in enumerate(selected.items()):
        outs = [dict(o, generator=f"reward_ensemble_{i}") for o in outs]
        wr, ann = farm.evaluate(outs, annotator)
        sc = instruction_scores(ann)
        d, se = paired_difference(sc, base)
        rows.append({"selector": name, "win-rate": wr.win_rate, "se": wr.standard_error, "vs SFT 10k": d,
                     "paired se": se, "mean R*": statistics.fmean(farm.true_rewards(outs)), "scores": sc})
    return rows


def sentence(rows: list[dict]) -> str:
    """What the ensemble's mean adds over the book's reward model and over its best member, and what its labels
    add (against the same ensemble before any label): each a paired difference on the same instructions, called a
    gain only beyond twice its standard error."""
    from farmlib.evaluation.paired import paired_difference

    by = {r["selector"]: r for r in rows}
    ens, prior = by["ensemble: mean"], by["ensemble before any label: mean"]
    book = next(r for r in rows if "the book's" in r["selector"])
    singles = [r for r in rows if r["selector"].startswith("member")]

    def versus(a: dict, b: dict) -> tuple[str, bool]:
        d, se = paired_difference(a["scores"], b["scores"])
        beyond = abs(d) > 2 * se
        return f"{d:+.1f} ± {se:.1f} points ({'beyond' if beyond else 'within'} twice its standard error)", beyond

    lo, hi = min(r["vs SFT 10k"] for r in singles), max(r["vs SFT 10k"] for r in singles)
    best = max(singles, key=lambda r: r["vs SFT 10k"])
    labels, labels_move = versus(ens, prior)
    return (f"Under the people the ensemble's mean picks {ens['win-rate']:.1f} % ({ens['vs SFT 10k']:+.1f} ± "
            f"{ens['paired se']:.1f} over SFT 10k on the same instructions); its {len(singles)} members alone pick "
            f"between {lo:+.1f} and {hi:+.1f} over SFT 10k, so the SFT model a reward model starts from moves its "
            f"best-of-n by {hi - lo:.1f} points. Against the book's reward model the ensemble moves by "
            f"{versus(ens, book)[0]}, against its best member by {versus(ens, best)[0]}; against the same members before any label, by {labels}: "
            + ("its labels move its picks." if labels_move else "what the ensemble adds is its readers', not its labels'."))


def shown(rows: list[dict]):
    """The table as the chapter shows it: one row per selector, each number with its standard error."""
    import pandas as pd

    from farmlib.evaluation.win_rate import plus_minus

    return pd.DataFrame([{"selector of the best": r["selector"], "people": plus_minus(r["win-rate"], r["se"]),
                          "vs SFT 10k (paired)": plus_minus(r["vs SFT 10k"], r["paired se"], sign=True),
                          "mean R*": f"{r['mean R*']:.2f}"} for r in rows]).set_index("selector of the best")
