"""Validating simulated annotators against people: the paper's agreement, bias, variance and style.

On pairs of SFT outputs, every annotator labels each pair ``draws`` times (people: ``draws``
different people). Then, as in the paper:

* **agreement** with the human majority: one label against the majority of 3 of the 4 people,
  averaged over the 4 ways to leave one out (for people: the held-out person against the others);
* **variance**: the error of one held-out draw against the majority of the annotator's other draws;
* **bias**: the error of the annotator's own majority (its mode) against the human majority;
* **P(prefer longer)**, **P(prefer lists)** over all draws.
"""

from __future__ import annotations

import random
import time

from farmlib.annotators import (
    Annotator,
    Crowd,
    agreement_with,
    heldout_agreement,
    majority,
    prefers_lists,
    prefers_longer,
)
from farmlib.annotators.statistics import chose_list, chose_longer
from farmlib.data import paired


def sft_pairs(farm, split: str = "val", temperature: float = 1.0, model: str | None = None,
              top_p: float = 1.0, n: int | None = None) -> list[dict]:
    """Two independent SFT samples per instruction of ``split`` (its first ``n``; None: all); identical pairs are
    dropped. ``model``: another SFT model (default: the farm's SFT 10k); ``top_p < 1``: nucleus sampling."""
    sft = model or farm.sft_model()
    a = farm.samples(sft, split=split, temperature=temperature, seed=1, generator="sft_a", top_p=top_p, n=n)
    b = farm.samples(sft, split=split, temperature=temperature, seed=2, generator="sft_b", top_p=top_p, n=n)
    return paired(a, b, fields=("dataset",))


def writer_pairs(farm, writer, split: str = "val") -> list[dict]:
    """Two independent answers of a FarmWorld writer per instruction of ``split`` (identical pairs dropped):
    pairs of *sensible* outputs, on which the crowd's taste for length and lists is calibrated."""
    a, b = (farm.writer_outputs(writer, split, seed=s) for s in (101, 102))
    return paired(a, b, fields=("dataset",))


def content_gap(world, pairs: list[dict]) -> dict[str, float]:
    """Mean task quality (R*'s ``quality``) of the longer vs the shorter output, and of the list vs the prose
    output (over pairs where exactly one is a list): whether length and lists go with better content. Also
    the mean cost of R*'s defects (repetition, disfluency, off-topic, echo, broken) of the longer and the shorter."""
    from farmlib.world import REWARD_WEIGHTS, is_list
    from farmlib.world.true_reward import DEFECTS

    def quality_and_cost(r: dict, o: str) -> tuple[float, float]:
        b = world.reward_breakdown(r["instruction"], r["input"], o)
        return b["quality"], -sum(REWARD_WEIGHTS[k] * b[k] for k in DEFECTS)

    longer, shorter, listed, prose, cost_longer, cost_shorter = [], [], [], [], [], []
    for r in pairs:
        o1, o2 = r["output_1"], r["output_2"]
        (q1, c1), (q2, c2) = quality_and_cost(r, o1), quality_and_cost(r, o2)
        if len(o1) != len(o2):
            (ql, cl), (qs, cs) = ((q1, c1), (q2, c2)) if len(o1) > len(o2) else ((q2, c2), (q1, c1))
            longer.append(ql), shorter.append(qs), cost_longer.append(cl), cost_shorter.append(cs)
        if is_list(o1) != is_list(o2):
            listed.append(q1 if is_list(o1) else q2), prose.append(q2 if is_list(o1) else q1)

    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs) if xs else float("nan")

    return {"quality_longer": mean(longer), "quality_shorter": mean(shorter), "quality_list": mean(listed),
            "quality_prose": mean(prose), "defect_cost_longer": mean(cost_longer), "defect_cost_shorter": mean(cost_shorter)}


def what_decides(world, pairs: list[dict], labels: list[list[int]]):
    """For each part of R*: the share of pairs where the two outputs differ in it, and how often the side
    that part favours (more quality or detail; less of a defect) wins the people's majority of ``labels``
    — what a judge must read to agree with people on these pairs."""
    import pandas as pd

    good = {"quality": 1, "detail": 1, "list": 1, "repetition": -1, "disfluency": -1, "off_topic": -1,
            "echo": -1, "broken": -1}
    rows = {k: {"differs": 0, "decides": 0} for k in good}
    counted = 0
    for r, lab in zip(pairs, labels):
        m = majority(lab)
        if m is None:
            continue
        counted += 1
        b1 = world.reward_breakdown(r["instruction"], r.get("input", ""), r["output_1"])
        b2 = world.reward_breakdown(r["instruction"], r.get("input", ""), r["output_2"])
        for k, sign in good.items():
            d = sign * (b2[k] - b1[k])
            if abs(d) > 1e-9:
                rows[k]["differs"] += 1
                rows[k]["decides"] += (m == 2) == (d > 0)
    return pd.DataFrame({k: {"pairs where it differs": v["differs"] / max(counted, 1),
                             "its side wins the majority": v["decides"] / v["differs"] if v["differs"] else float("nan")}
                         for k, v in rows.items()}).T


def crowd_labels(crowd: Crowd, pairs: list[dict], n: int = 4, seed: int = 0) -> list[list[int]]:
    """``n`` labels per pair, each by a different random person."""
    rng = random.Random(f"crowd-labels-{seed}")
    out = []
    for r in pairs:
        people = rng.sample(crowd.people, n)
        out.append([2 if rng.random() < crowd.p_prefer_2(p, r) else 1 for p in people])
    return out


def crowd_intervals(pairs: list[dict], humans: list[list[int]], n_boot: int = 1000, seed: int = 0,
                    level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Bootstrap intervals of the people's agreement, variance, P(longer) and P(list) on ``pairs``.

    The pairs are redrawn with replacement, each with all its labels (``humans[i]``): the labels of one pair
    are not independent, so the pair is the unit."""
    rng = random.Random(f"crowd-intervals-{seed}")
    # each pair's counts once (a redraw sums the counts of its pairs, so its statistics are those of its records)
    counts = []
    for r, h in zip(pairs, humans):
        longer = [chose_longer(dict(r, preference=p)) for p in h]
        listed = [chose_list(dict(r, preference=p)) for p in h]
        held = [x for x in h if x is not None]
        agree = [majority(held[:k] + held[k + 1:]) for k in range(len(held))]
        counts.append((sum(m is not None and x == m for x, m in zip(held, agree)), sum(m is not None for m in agree),
                       sum(x is True for x in longer), sum(x is not None for x in longer),
                       sum(x is True for x in listed), sum(x is not None for x in listed)))
    draws: dict[str, list[float]] = {"agreement": [], "p_longer": [], "p_list": []}
    for _ in range(n_boot):
        hits, total, won_longer, n_longer, won_list, n_list = (sum(c) for c in zip(*(counts[rng.randrange(len(pairs))]
                                                                                     for _ in pairs)))
        draws["agreement"].append(hits / total if total else float("nan"))
        draws["p_longer"].append(won_longer / n_longer if n_longer else float("nan"))
        draws["p_list"].append(won_list / n_list if n_list else float("nan"))
    out = {}
    for k, xs in draws.items():
        xs = sorted(x for x in xs if x == x)  # a redraw can hold no pair of different lengths or styles
        out[k] = ((xs[int((1 - level) / 2 * len(xs))], xs[min(len(xs) - 1, int((1 + level) / 2 * len(xs)))])
                  if xs else (float("nan"), float("nan")))
    out["variance"] = (1 - out["agreement"][1], 1 - out["agreement"][0])
    return out


def annotator_draws(annotator: Annotator, pairs: list[dict], n: int = 4) -> tuple[list[list[int | None]], float]:
    """``n`` labels per pair from independent draws (seeds) of a simulator, and the seconds spent."""
    t0 = time.perf_counter()
    runs = [[a["preference"] for a in annotator.annotate_pairs(pairs, seed=s)] for s in range(n)]
    return [list(x) for x in zip(*runs)], time.perf_counter() - t0


def agreement_with_humans(labels: list[int | None], humans: list[list[int]]) -> float:
    """One label per pair vs the majority of each leave-one-out triple of the people's labels."""
    hits = total = 0
    for x, hs in zip(labels, humans):
        if x is None:
            continue
        for k in range(len(hs)):
            m = majority(hs[:k] + hs[k + 1:])
            if m is not None:
                hits += x == m
                total += 1
    return hits / total if total else float("nan")


def stats(draws: list[list[int | None]], humans: list[list[int]], pairs: list[dict], is_human: bool = False) -> dict:
    """The paper's statistics of one annotator (see the module docstring)."""
    first = [d[0] for d in draws]
    human_major = [majority(h) for h in humans]
    if is_human:
        agreement = heldout_agreement(humans)
    else:
        agreement = agreement_with_humans(first, humans)
    modes = [majority([x for x in d if x is not None]) for d in draws]
    labelled = [dict(r, preference=p) for r, d in zip(pairs, draws) for p in d]  # every draw counts
    return {
        "agreement": agreement,
        "bias": 0.0 if is_human else 1 - agreement_with(modes, human_major),
        "variance": 1 - heldout_agreement(draws),
        "p_longer": prefers_longer(labelled),
        "p_list": prefers_lists(labelled),
        "missing": sum(x is None for d in draws for x in d) / max(sum(len(d) for d in draws), 1),
    }


def validation_table(annotators: dict, pairs: list[dict], humans: list[list[int]], draws: int,
                     member_cost: dict[str, float], single_cost: float, human_cost: float):
    """One row per annotator (and one for people): kind, the statistics above, USD and our seconds per 1000.

    ``member_cost`` prices each pool member's prompts (``api_judge.estimate_cost_per_1000``); the pool costs
    their mean, ``p_sim_ann`` that mean times the share of comparisons a judge answered (the coin is free).
    Returns (table, labels): ``labels[name]`` are the annotator's draws per pair.
    """
    import pandas as pd

    mean_cost = sum(member_cost.values()) / max(len(member_cost), 1)
    rows, labels = [], {}
    for name, ann in annotators.items():
        d, seconds = annotator_draws(ann, pairs, n=draws)
        labels[name] = d
        if name in member_cost:
            cost, kind = member_cost[name], "pool member"
        elif name == "p_sim_ann":
            cost, kind = mean_cost * ann.judged / (draws * len(pairs)), "pool + noise"
        elif name == "p_sim_eval":
            cost, kind = mean_cost, "pool"
        elif name == "p_sim_single":
            cost, kind = single_cost, "single"
        else:
            cost, kind = 0.0, "local LM"
        rows.append({"annotator": name, "kind": kind, **stats(d, humans, pairs), "cost_per_1000": cost,
                     "our_seconds_per_1000": 1000 * seconds / (draws * len(pairs))})
    rows.append({"annotator": "human", "kind": "people", **stats(humans, humans, pairs, is_human=True),
                 "cost_per_1000": human_cost, "our_seconds_per_1000": float("nan")})
    return pd.DataFrame(rows).set_index("annotator"), labels


def agreement_matrix(labels: dict[str, list[int | None]]):
    """Percent of pairs on which two annotators' labels agree (missing labels skipped), as a DataFrame."""
    import pandas as pd

    names = list(labels)
    rows = {}
    for a in names:
        row = {}
        for b in names:
            xs = [x == y for x, y in zip(labels[a], labels[b]) if x is not None and y is not None]
            row[b] = 100 * sum(xs) / len(xs) if xs else float("nan")
        rows[a] = row
    return pd.DataFrame.from_dict(rows, orient="index")[names]


def likelihood_gap(lms: dict, crowd: Crowd, pairs: list[dict]):
    """Why a judge can misread a model's outputs. On ``pairs`` (``output_1``: the reference's answer,
    ``output_2``: a model's), per judge family: the mean per-token log-probability its own LM (the tuned
    one, else the base reader) gives each side, how often its head (greedy) prefers the model's output,
    and how often that choice matches the people's majority. A head learned on writers' answers, where
    likelier meant better, reads a model's fluent samples as good whether or not they are right."""
    import pandas as pd

    from farmlib.annotators.judges import feature_index

    ref = [dict(r, output=r["output_1"]) for r in pairs]
    model = [dict(r, output=r["output_2"]) for r in pairs]
    people = [crowd.majority_label(r) == 2 for r in pairs]
    rows = {}
    for name, lm in lms.items():
        reader = lm.tuned or lm.reader
        col = feature_index("fluency_only", reader.layers, reader.hidden)[0]  # mean log-probability per token
        lp_ref, lp_model = (reader.features(x)[:, col].mean().item() for x in (ref, model))
        s_ref, s_model = lm.scores(ref), lm.scores(model)
        head = [b > a for a, b in zip(s_ref, s_model)]
        rows[name] = {"log-prob, reference": lp_ref, "log-prob, model": lp_model,
                      "head prefers model (%)": 100 * sum(head) / len(head),
                      "people prefer model (%)": 100 * sum(people) / len(people),
                      "head agrees with people (%)": 100 * sum(h == p for h, p in zip(head, people)) / len(head)}
    return pd.DataFrame.from_dict(rows, orient="index")
