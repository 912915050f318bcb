"""Two sets of outputs judged on the same instructions against the same reference: the noise of their difference.

Each win-rate's standard error carries the luck of which instructions were drawn; a difference between two
win-rates on the same instructions does not, so its standard error is that of the mean per-instruction difference.
Used by the leaderboard (a method against SFT 10k) and by the over-optimisation curve (best-of-n's peak against
its last n). Kept apart from :mod:`farmlib.evaluation.win_rate`, which artifacts' keys read: a helper for the
chapters' sentences should not re-key the preference data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def instruction_scores(annotations: list[dict]) -> list[float | None]:
    """Each annotated pair's result for ``output_2`` (1 won, 0.5 tie, 0 lost, None unparsed), in the
    annotations' order: what :func:`paired_difference` pairs."""
    from farmlib.evaluation.win_rate import preference_score

    return [preference_score(x.get("preference")) for x in annotations]


def paired_difference(a: Iterable, b: Iterable) -> tuple[float, float]:
    """Mean and standard error, in points, of ``a[i] − b[i]`` over the instructions both scored (per-instruction
    scores as :func:`farmlib.evaluation.win_rate.preference_score` gives them: 1 won, 0.5 tie, 0 lost, None
    where missing)."""
    d = [x - y for x, y in zip(a, b) if x is not None and y is not None]
    mean = sum(d) / len(d)
    var = sum((x - mean) ** 2 for x in d) / (len(d) - 1) if len(d) > 1 else 0.0
    return 100 * mean, 100 * math.sqrt(var / len(d))


def verdict(d: float, se: float) -> str:
    """A paired difference ``d`` with standard error ``se``, in words: beyond two standard errors either way, or not."""
    return "a clear gain" if d > 2 * se else "a clear loss" if d < -2 * se else "within noise"
