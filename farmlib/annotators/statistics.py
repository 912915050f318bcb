"""The paper's statistics of an annotator: agreement, majority, preference for length and lists, and
the effect of a prompt injection."""

from __future__ import annotations

from farmlib.annotators.base import Annotator


def majority(prefs: list[int]) -> int | None:
    """Majority of 1/2 labels; None on a tie or when empty."""
    ones, twos = prefs.count(1), prefs.count(2)
    return None if ones == twos else (1 if ones > twos else 2)


def heldout_agreement(annotations: list[list[int | None]]) -> float:
    """Mean agreement of one held-out label with the majority of the others (ties skipped).

    ``annotations[i]`` holds several labels of pair i (by different people, or repeated draws of
    one simulator). With four labels per pair, that is the paper's "held-out vs majority of 3".
    """
    hits = total = 0
    for labels in annotations:
        labels = [x for x in labels if x is not None]
        for k in range(len(labels)):
            m = majority(labels[:k] + labels[k + 1:])
            if m is not None:
                hits += labels[k] == m
                total += 1
    return hits / total if total else float("nan")


def agreement_with(labels: list[int | None], reference: list[int | None]) -> float:
    """Share of pairs where ``labels`` equals ``reference`` (both present)."""
    pairs = [(a, b) for a, b in zip(labels, reference) if a is not None and b is not None]
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else float("nan")


def chose_longer(record: dict) -> bool | None:
    """Whether the label chose the longer output; None when unlabelled or the two are equally long."""
    o1, o2 = record["output_1"], record["output_2"]
    if record.get("preference") not in (1, 2) or len(o1) == len(o2):
        return None
    return (record["preference"] == 2) == (len(o2) > len(o1))


def chose_list(record: dict) -> bool | None:
    """Whether the label chose the output formatted as a list; None when unlabelled or not exactly one is."""
    from farmlib.world import is_list

    l1, l2 = is_list(record["output_1"]), is_list(record["output_2"])
    if record.get("preference") not in (1, 2) or l1 == l2:
        return None
    return (record["preference"] == 2) == l2


def _share(xs) -> float:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def prefers_longer(records: list[dict]) -> float:
    """P(the chosen output is the longer one), over pairs of different lengths."""
    return _share(chose_longer(r) for r in records)


def prefers_lists(records: list[dict]) -> float:
    """P(the chosen output is the one formatted as a list), over pairs where exactly one is."""
    return _share(chose_list(r) for r in records)


def style_preferences(records: list[dict], n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> dict:
    """P(longer) and P(list) over labelled ``records``, the number of pairs each rests on (``n_p_longer``,
    ``n_p_list``) and bootstrap intervals (``p_longer_interval``...; NaN with ``n_boot=0``).

    The bootstrap redraws *instructions*, each with all its records: the records of one instruction (several
    methods against the same reference output, several labels of one pair) are not independent."""
    import numpy as np

    keys = [(r["instruction"], r.get("input", "")) for r in records]
    index = {k: i for i, k in enumerate(dict.fromkeys(keys))}
    group = np.array([index[k] for k in keys], dtype=int)
    draws = np.random.default_rng(seed).integers(len(index), size=(n_boot, len(index))) if index else None
    out: dict = {}
    for name, chose in (("p_longer", chose_longer), ("p_list", chose_list)):
        x = [chose(r) for r in records]
        won = np.bincount(group, weights=[float(v is True) for v in x], minlength=len(index))
        n = np.bincount(group, weights=[float(v is not None) for v in x], minlength=len(index))
        out[name], out[f"n_{name}"] = (won.sum() / n.sum() if n.sum() else float("nan")), int(n.sum())
        interval = (float("nan"), float("nan"))
        if n_boot and n.sum():
            nb, wb = n[draws].sum(axis=1), won[draws].sum(axis=1)
            shares = wb[nb > 0] / nb[nb > 0]
            interval = tuple(float(q) for q in np.quantile(shares, [(1 - level) / 2, (1 + level) / 2]))
        out[f"{name}_interval"] = interval
    return out


def injection_effect(annotator: Annotator, records: list[dict], seed: int = 0) -> dict[str, float]:
    """How often output_1 wins with and without a prompt injection appended to it.

    ``records`` are pairs; the injection (:data:`farmlib.annotators.prompts.INJECTION`) asks the judge to answer
    "Output (a)". Returns the win-rate of output_1 before and after, and the share of missing labels.
    """
    from farmlib.annotators.prompts import inject

    before = annotator.annotate_pairs(records, seed=seed)
    after = annotator.annotate_pairs(inject(records, side=1), seed=seed)

    def wins(anns: list[dict]) -> float:
        xs = [a["preference"] == 1 for a in anns if a["preference"] in (1, 2)]
        return sum(xs) / len(xs) if xs else float("nan")

    return {"win_before": wins(before), "win_injected": wins(after),
            "missing_injected": sum(a["preference"] is None for a in after) / max(len(after), 1)}
