"""Bootstrap intervals for the statistics chapter 20 holds to a target: how far one build's number could move.

A build's agreement or rank correlation is measured on a fixed draw of pairs or instructions. Another build as good
as this one — another training seed, or the same code on a CPU that adds floats in another order — draws other
samples and so, in effect, other pairs and instructions. Redrawing them with replacement gives the spread such a
build would show; a target inside that spread is one the build cannot settle, whichever side its number fell.

Nothing here is imported by an artifact's builder: these read what the chapters already computed.
"""

from __future__ import annotations

import math
import random
import statistics


def _quantiles(draws: list[float], level: float) -> tuple[float, float]:
    xs = sorted(x for x in draws if x == x)  # a redraw can leave a statistic undefined (NaN)
    if not xs:
        return float("nan"), float("nan")
    return xs[int((1 - level) / 2 * len(xs))], xs[min(len(xs) - 1, int((1 + level) / 2 * len(xs)))]


def agreement_interval(draws: list[list[int | None]], humans: list[list[int]], n_boot: int = 1000, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Interval of an annotator's agreement with the people's majority (its first draw per pair against each
    leave-one-out majority of the people, :func:`farmlib.annotators.validation.agreement_with_humans`), redrawing
    the pairs with replacement, each with all its labels."""
    from farmlib.annotators.validation import agreement_with_humans

    rng = random.Random(f"agreement-interval-{seed}")
    first = [d[0] for d in draws]
    out = []
    for _ in range(n_boot):
        idx = [rng.randrange(len(first)) for _ in first]
        out.append(agreement_with_humans([first[i] for i in idx], [humans[i] for i in idx]))
    return _quantiles(out, level)


def ranking_interval(farm, names: list[str], sim: str = "p_sim_eval", people: str = "human", n_boot: int = 1000,
                     seed: int = 0, level: float = 0.95) -> dict[str, float]:
    """Spearman's correlation over ``names`` between their win-rates under ``sim`` and under ``people`` (each
    method's outputs as :func:`farmlib.methods.outputs` gives them, judged against the reference), with a bootstrap
    interval that redraws the evaluation instructions, the same draw for every method and both annotators
    (:func:`farmlib.evaluation.end_to_end.correlations`). Reads the annotations the leaderboard made."""
    from farmlib.evaluation.end_to_end import correlations, scores
    from farmlib.methods import outputs

    per_instruction = {}
    for name in names:
        outs = outputs(farm, name)
        per_instruction[name] = {col: scores(farm.evaluate(outs, judge)[1]) for col, judge in (("sim", sim),
                                                                                             ("people", people))}
    r = correlations(per_instruction, n_boot=n_boot, seed=seed, level=level).loc["spearman"]
    return {"value": float(r["value"]), "low": float(r["low"]), "high": float(r["high"]), "level": level}


def other_crowds(farm, names: list[str], crowds: tuple[int, ...] = (1, 2, 3, 4, 5), sim: str = "p_sim_eval",
                 people: str = "human", judge_draws: tuple[int, ...] = (1, 2)) -> dict[str, list]:
    """How well the book's people, and the judges, predict the ranking of another crowd of people on the same outputs,
    and how much of the judges' ranking holds when the judges are drawn again.

    Each of ``crowds`` seeds another crowd (other people: their own tastes around R* and their own noise) that judges
    the same outputs of ``names`` against the reference on the same instructions. For each, Spearman's correlation over
    ``names`` between its win-rates and the book's people's (``people``, the crowd of seed 0), and between its
    win-rates and the judges' (``sim``). The first is the ranking's own reproducibility: a simulator as good as another
    crowd of people would score about that against the book's people, so a target above it asks more than people give.

    Each of ``judge_draws`` seeds another draw of the judges (which member takes each pair, how each samples its
    label): ``judges_again`` is its Spearman against the judges' own first draw, ``judges_again_vs_people`` against
    the book's people. ``win_rates`` keeps every draw's win-rate of each of ``names``: ``people`` the book's crowd and
    then each of ``crowds``, ``judges`` the first draw and then each of ``judge_draws``
    (:func:`judges_taste_sentence` reads them).
    """
    from farmlib.evaluation.end_to_end import spearman
    from farmlib.methods import outputs

    outs = {name: outputs(farm, name) for name in names}

    def rates(annotator: str, seed: int) -> list[float]:
        return [farm.evaluate(outs[name], annotator, seed=seed)[0].win_rate for name in names]

    book, judges = rates(people, 0), rates(sim, 0)
    others = [rates(people, c) for c in crowds]
    again = [rates(sim, d) for d in judge_draws]
    return {"crowds": list(crowds), "people": [float(spearman(book, o)) for o in others],
            "sim": [float(spearman(judges, o)) for o in others],
            "judge_draws": list(judge_draws), "judges_again": [float(spearman(judges, a)) for a in again],
            "judges_again_vs_people": [float(spearman(book, a)) for a in again],
            "win_rates": {"people": {n: [r[i] for r in [book, *others]] for i, n in enumerate(names)},
                          "judges": {n: [r[i] for r in [judges, *again]] for i, n in enumerate(names)}}}


def other_crowds_sentence(crowds: dict[str, list], rho: float, target: float) -> str:
    """Chapter 14's reading of :func:`other_crowds` beside the judges' Spearman ``rho`` against the book's people."""
    ppl, sim = crowds["people"], crowds["sim"]
    mean_p, mean_s = sum(ppl) / len(ppl), sum(sim) / len(sim)
    behind = sum(s < p for s, p in zip(sim, ppl))
    text = (f"{len(ppl)} other crowds of people, judging the same outputs, rank the methods with Spearman "
            f"{min(ppl):.2f}–{max(ppl):.2f} (mean {mean_p:.2f}) against the book's people; the judges' {rho:.2f} "
            f"against the book's people is {'below' if rho < min(ppl) else 'above' if rho > max(ppl) else 'inside'} "
            "that range. "
            f"Against the same crowds the judges' ranking gets {min(sim):.2f}–{max(sim):.2f} (mean {mean_s:.2f}), "
            f"below the book's people's on {behind} of the {len(ppl)}.")
    if mean_p < target:
        text += (f" A Spearman of {target} asks for more than another crowd of people reaches on rows this close: "
                 "the people's own ranking does not reproduce to that degree.")
    return text


def judges_taste_sentence(crowds: dict, leave_out: tuple[str, ...] = ("base",)) -> str:
    """How much of the judges' ranking is theirs to keep, from :func:`other_crowds`' draws: how well the judges drawn
    again rank the methods as their first draw and as the book's people do, and the rows (other than ``leave_out``: a
    baseline far below the methods would be named whatever the methods do) where the judges' mean win-rate over their
    draws parts from the people's mean over their crowds by more than twice its noise, once the average row's gap is
    set aside. A row's noise is how much its place moves from one draw to another: each draw less its own mean over
    the rows (a crowd harsher on every row moves no row's place), the variance between draws pooled over the rows and
    divided by the number of draws, the judges' and the people's added. Empty when the judges were not drawn again."""
    rates = crowds.get("win_rates")
    if not crowds.get("judges_again") or not rates:
        return ""
    rows = [m for m in rates["judges"] if m not in leave_out]
    if len(rows) < 3:
        return ""

    def placed(d: dict[str, list[float]]) -> dict[str, list[float]]:  # each draw less its mean over the rows
        means = [statistics.fmean(d[m][i] for m in rows) for i in range(len(d[rows[0]]))]
        return {m: [x - mu for x, mu in zip(d[m], means)] for m in rows}

    J, P = rates["judges"], rates["people"]
    pj, pp = placed(J), placed(P)
    mean = statistics.fmean(statistics.fmean(J[m]) - statistics.fmean(P[m]) for m in rows)
    gap = {m: statistics.fmean(pj[m]) - statistics.fmean(pp[m]) for m in rows}  # the row's gap less the average's
    var = lambda d: statistics.fmean(statistics.variance(d[m]) for m in rows) / len(d[rows[0]])  # noqa: E731
    se = math.sqrt(var(pj) + var(pp))
    apart = sorted((m for m in rows if abs(gap[m]) > 2 * se), key=lambda m: -gap[m])
    again, vs = crowds["judges_again"], crowds["judges_again_vs_people"]
    text = (f"Drawn again ({len(again)} more draws: which member takes each pair, how it samples its label), the judges "
            f"rank the methods with Spearman {min(again):.2f}–{max(again):.2f} against their first draw and "
            f"{min(vs):.2f}–{max(vs):.2f} against the book's people. Over all {len(J[rows[0]])} draws of the judges and "
            f"{len(P[rows[0]])} crowds of people, the judges run {mean:+.1f} points from the people on the average row")
    if not apart:
        return text + (f", and no row parts from that by more than twice its noise (± {se:.1f}): the judges' ranking "
                       "misses the people's by their own noise, not by a taste of theirs.")
    return text + (f"; the rows that part from that by more than twice its noise (± {se:.1f}) are "
                   + ", ".join(f"{m} ({gap[m]:+.1f})" for m in apart)
                   + ": there the judges' taste differs from the people's, whatever the draw.")


def straddles(low: float, high: float, bounds: tuple[float | None, float | None]) -> bool:
    """Whether the interval ``[low, high]`` holds a bound of the target ``bounds`` (lower, upper; None: no such
    bound): then the same build redrawn could fall on either side of it. An interval of no width (a number with no
    noise) holds nothing."""
    return low < high and any(b is not None and low <= b <= high for b in bounds)
