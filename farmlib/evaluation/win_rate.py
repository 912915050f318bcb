"""Win-rate against a reference model, in AlpacaEval's annotation format.

An annotation compares ``output_1`` (the reference, ``generator_1``) with ``output_2`` (the
model, ``generator_2``). ``preference`` is 1 or 2 for the winner; a tie is 0 or 1.5 and counts
half; ``None``/NaN means the annotator gave no usable answer and the record is left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from farmlib.data import DataFormatError, load_records

REQUIRED = ("instruction", "output_1", "output_2", "generator_1", "generator_2", "preference")


@dataclass
class WinRate:
    win_rate: float  # percent
    standard_error: float  # percent
    n_total: int
    n_wins: int
    n_draws: int

    def __str__(self) -> str:
        return f"{self.win_rate:.1f} ± {self.standard_error:.1f} % (n={self.n_total})"

    def to_dict(self) -> dict:
        return asdict(self)


def plus_minus(mean: float, se: float, digits: int = 1, sign: bool = False) -> str:
    """``mean ± se`` for a table cell, joined by non-breaking spaces: a narrow column wraps between cells, never
    inside a number and its error. ``sign`` writes the mean's sign (``+2.0 ± 1.5``) for a difference."""
    return f"{mean:{'+' if sign else ''}.{digits}f}\u00a0±\u00a0{se:.{digits}f}"


def preference_score(pref) -> float | None:
    """How much ``output_2`` won: 1, 0 or 0.5 for a tie; None for a missing annotation."""
    if pref is None or (isinstance(pref, float) and math.isnan(pref)):
        return None
    p = float(pref)
    if p == 0 or p == 1.5:
        return 0.5
    if p in (1.0, 2.0):
        return p - 1.0
    if 1.0 < p < 2.0:  # soft preferences, as some AlpacaEval annotators give
        return p - 1.0
    raise ValueError(f"preference must be 0, 1, 1.5, 2 or null, got {pref!r}")


def win_rate(preferences: Iterable) -> WinRate:
    """Percent of comparisons ``output_2`` wins (ties half), with the standard error of the mean."""
    scores = [s for s in map(preference_score, preferences) if s is not None]
    n = len(scores)
    if n == 0:
        return WinRate(float("nan"), float("nan"), 0, 0, 0)
    mean = sum(scores) / n
    var = sum((s - mean) ** 2 for s in scores) / (n - 1) if n > 1 else 0.0
    return WinRate(100 * mean, 100 * math.sqrt(var / n), n,
                   sum(s == 1.0 for s in scores), sum(s == 0.5 for s in scores))


def preference_from_scores(score_ref: float, score_model: float) -> float:
    """AlpacaEval preference from two scalar scores: 2 if the model's is higher, 1.5 on a tie."""
    if score_model > score_ref:
        return 2.0
    if score_model < score_ref:
        return 1.0
    return 1.5


def load_annotations(path: str | Path) -> list[dict]:
    """An AlpacaEval annotation file, checked record by record (one-line error on bad input)."""
    recs = load_records(path, required=REQUIRED)
    for i, r in enumerate(recs):
        try:
            preference_score(r["preference"])
        except (ValueError, TypeError):
            raise DataFormatError(f"{path}: record {i}: field 'preference' is {r['preference']!r}, "
                                  "expected 0, 1, 1.5, 2 or null") from None
        for f in ("output_1", "output_2"):
            if not isinstance(r[f], str):
                raise DataFormatError(f"{path}: record {i}: field {f!r} must be a string")
    return recs


def leaderboard_from_files(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per ``generator_2`` over all files: win-rate, standard error, n, average length."""
    rows: dict[str, list[dict]] = {}
    for p in paths:
        for r in load_annotations(p):
            rows.setdefault(str(r["generator_2"]), []).append(r)
    table = []
    for name, recs in rows.items():
        wr = win_rate(r["preference"] for r in recs)
        scored = [r for r in recs if preference_score(r["preference"]) is not None]
        avg_len = sum(len(r["output_2"]) for r in scored) / max(len(scored), 1)
        table.append({"name": name, "win_rate": round(wr.win_rate, 2),
                      "standard_error": round(wr.standard_error, 2), "n_total": wr.n_total,
                      "avg_length": round(avg_len)})
    cols = ["name", "win_rate", "standard_error", "n_total", "avg_length"]
    return pd.DataFrame(table, columns=cols).sort_values("win_rate", ascending=False, ignore_index=True)
