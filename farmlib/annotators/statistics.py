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


def prefers_longer(records: list[dict]) -> float:
    """P(the chosen output is the longer one), over pairs of different lengths."""
    xs = [(r["preference"] == 2) == (len(r["output_2"]) > len(r["output_1"]))
          for r in records if r.get("preference") in (1, 2) and len(r["output_1"]) != len(r["output_2"])]
    return sum(xs) / len(xs) if xs else float("nan")


def prefers_lists(records: list[dict]) -> float:
    """P(the chosen output is the one formatted as a list), over pairs where exactly one is."""
    from farmlib.world import is_list

    xs = []
    for r in records:
        l1, l2 = is_list(r["output_1"]), is_list(r["output_2"])
        if r.get("preference") in (1, 2) and l1 != l2:
            xs.append((r["preference"] == 2) == l2)
    return sum(xs) / len(xs) if xs else float("nan")


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
