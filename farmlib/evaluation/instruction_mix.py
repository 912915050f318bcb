"""Does the evaluation set represent use? (the paper's Section 4.4, Figure 6)

The paper checks its 805 evaluation instructions against 200 real instructions sent to the Alpaca
demo: the methods' simulated win-rates on both sets correlate with r² = 0.97. In FarmWorld an
instruction set is a *mix* of task families; the evaluation split draws every family equally often,
while the traffic of a demo leans to open questions. Within a family, every set draws its instructions
from the same generator, so a set with other family proportions is the evaluation set *reweighted*:
its win-rate is ``Σ_f w_f · win_f`` over the per-family win-rates ``win_f``, with standard error
``sqrt(Σ_f w_f² · var_f / n_f)``. No new samples are needed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from farmlib.evaluation.win_rate import preference_score
from farmlib.world.families import FAMILIES

#: Closed-form families (one right answer: arithmetic, counting, sorting, extraction, sentiment,
#: classification, facts) and open ones (describe, compare, list, how-to, rewrite).
CLOSED = [f for f, fam in FAMILIES.items() if fam.closed_form]
OPEN = [f for f, fam in FAMILIES.items() if not fam.closed_form]

#: Named mixes (weights need not sum to 1). ``demo traffic``: three quarters open questions, as a chat
#: demo's users ask (our assumption about use, not a measurement of one).
MIXES: dict[str, dict[str, float]] = {
    "evaluation": {f: 1.0 for f in FAMILIES},
    "demo traffic": {**{f: 0.25 / len(CLOSED) for f in CLOSED}, **{f: 0.75 / len(OPEN) for f in OPEN}},
}


def family_scores(annotations: Sequence[dict]) -> dict[str, np.ndarray]:
    """Per family (the record's ``dataset``): the per-instruction scores of ``output_2`` (1 win, 0 loss,
    0.5 tie; missing labels left out)."""
    out: dict[str, list[float]] = {}
    for a in annotations:
        s = preference_score(a["preference"])
        if s is not None:
            out.setdefault(a.get("dataset", ""), []).append(s)
    return {f: np.array(v) for f, v in out.items()}


def mix_win_rate(annotations: Sequence[dict], weights: dict[str, float]) -> tuple[float, float]:
    """(win-rate %, standard error) of the instruction mix ``weights`` (family -> weight), estimated by
    reweighting the families of ``annotations``. A family with weight but no annotated instruction is
    an error: the evaluation set cannot speak for it."""
    scores = family_scores(annotations)
    missing = [f for f, w in weights.items() if w > 0 and f not in scores]
    if missing:
        raise ValueError(f"the annotations have no instruction of families {missing} (field 'dataset')")
    total = sum(w for w in weights.values() if w > 0)
    win, var = 0.0, 0.0
    for f, w in weights.items():
        if w <= 0:
            continue
        s, p = scores[f], w / total
        win += p * s.mean()
        var += p**2 * (s.var(ddof=1) if len(s) > 1 else 0.0) / len(s)
    return 100 * win, 100 * var**0.5


def mix_table(annotations: dict[str, Sequence[dict]], mixes: dict[str, dict[str, float]] | None = None) -> pd.DataFrame:
    """One row per method (``annotations``: method -> its annotations against the reference), a win-rate
    and standard-error column per mix."""
    mixes = mixes or MIXES
    rows = []
    for name, ann in annotations.items():
        row = {"method": name}
        for mix, w in mixes.items():
            row[mix], row[f"{mix} se"] = mix_win_rate(ann, w)
        rows.append(row)
    return pd.DataFrame(rows).set_index("method")


def rank_agreement(x: pd.Series, y: pd.Series) -> float:
    """Spearman of two win-rate columns over the methods they share (:func:`~farmlib.evaluation.end_to_end.spearman`:
    NaN where either ranks nothing, every method tied)."""
    from farmlib.evaluation.end_to_end import spearman

    x, y = x.align(y, join="inner")
    return spearman(x.to_numpy(), y.to_numpy())


def single_families(annotations: dict[str, Sequence[dict]], tables: dict[str, pd.Series]) -> dict[str, float]:
    """How each family alone, as an evaluation set, ranks the methods against the ``demo traffic`` mix (the paper's
    check that no single source stands in for the combination); ``tables``: :func:`mix_table`'s columns
    ``evaluation`` and ``demo traffic``; the last entry is the whole evaluation set's."""
    per_family = pd.DataFrame({m: {f: 100 * s.mean() for f, s in family_scores(ann).items()}
                               for m, ann in annotations.items()}).T
    demo = tables["demo traffic"]
    row = {f: rank_agreement(per_family[f], demo) for f in per_family.columns}
    row["all families (evaluation)"] = rank_agreement(tables["evaluation"], demo)
    return row
