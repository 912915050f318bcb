"""End-to-end validation (the paper's Fig. 3 and Table 2): does the simulator rank methods as people do?

Each method is trained twice on the same preference pairs: once on the simulated judges' labels
(``p_sim_ann``) and evaluated by the simulated judges (``p_sim_eval``), once on the people's labels
(``human``) and evaluated by people. Baselines learn from no feedback, so their one model is evaluated
both ways. The agreement of the two columns — Spearman and Pearson over methods, with bootstrap
intervals that resample the evaluation instructions — is the simulator's headline number.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from farmlib.evaluation.win_rate import preference_score
from farmlib.methods import BASELINES, outputs
from farmlib.progress import progress


def scores(annotations: list[dict]) -> np.ndarray:
    """Per instruction: 1 if the method's output won, 0 if the reference's did, 0.5 for a tie, NaN for
    no label (left out of the means, as :func:`~farmlib.evaluation.win_rate.win_rate` leaves it out)."""
    s = [preference_score(a["preference"]) for a in annotations]
    return np.array([np.nan if x is None else x for x in s], dtype=float)


def trained_both_ways(farm, methods: list[str], sim: str = "p_sim_ann", people: str = "human",
                      sim_eval: str = "p_sim_eval") -> tuple[pd.DataFrame, dict[str, dict[str, np.ndarray]]]:
    """One row per method: win-rate (± se) and length of the copy trained on ``sim`` feedback, judged by
    ``sim_eval``, and of the copy trained on ``people``'s feedback, judged by ``people``; and each
    column's per-instruction scores (for :func:`correlations`). Trains whatever is missing."""
    rows, per_instruction = [], {}
    for name in progress(methods, desc="methods, trained on both feedbacks"):
        row, per_instruction[name] = {"method": name, "feedback": name not in BASELINES}, {}
        for col, feedback, judge in (("sim", sim, sim_eval), ("people", people, people)):
            outs = outputs(farm, name, feedback=None if name in BASELINES else feedback)
            wr, ann = farm.evaluate(outs, judge)
            per_instruction[name][col] = scores(ann)
            row.update({f"{col}_win_rate": wr.win_rate, f"{col}_se": wr.standard_error,
                        f"{col}_length": sum(len(o["output"]) for o in outs) / len(outs)})
        rows.append(row)
    return pd.DataFrame(rows), per_instruction


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0 else float("nan")


def spearman(x, y) -> float:
    """Spearman's correlation of two equally long sequences; NaN where either ranks nothing (all its values tied),
    which a reader sees as 'nan' rather than as a library's warning."""
    return _pearson(pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy())


def correlations(per_instruction: dict[str, dict[str, np.ndarray]], n_boot: int = 1000, seed: int = 0,
                 level: float = 0.95) -> pd.DataFrame:
    """Spearman, Pearson and R² between the ``sim`` and ``people`` win-rates over methods, each with a
    bootstrap interval: every replicate redraws the evaluation instructions (the same draw for every
    method and both columns) and recomputes all win-rates."""
    names = list(per_instruction)
    sim = np.stack([per_instruction[n]["sim"] for n in names])  # [methods, instructions]
    ppl = np.stack([per_instruction[n]["people"] for n in names])
    stats = {"spearman": spearman, "pearson": _pearson, "r2": lambda x, y: _pearson(x, y) ** 2}
    point = {k: f(np.nanmean(sim, 1), np.nanmean(ppl, 1)) for k, f in stats.items()}
    rng = np.random.default_rng(seed)
    boot = {k: [] for k in stats}
    for _ in range(n_boot):
        idx = rng.integers(0, sim.shape[1], sim.shape[1])
        xs, ys = np.nanmean(sim[:, idx], 1), np.nanmean(ppl[:, idx], 1)
        for k, f in stats.items():
            boot[k].append(f(xs, ys))
    lo, hi = (1 - level) / 2, 1 - (1 - level) / 2
    return pd.DataFrame({k: {"value": point[k], "low": _quantile(boot[k], lo), "high": _quantile(boot[k], hi)}
                         for k in stats}).T


def _quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of the defined values; NaN where no replicate defined one (every method tied in every
    redraw), without numpy's all-NaN warning on the page."""
    finite = [v for v in values if np.isfinite(v)]
    return float(np.quantile(finite, q)) if finite else float("nan")
