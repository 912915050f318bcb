"""Bootstrap intervals of the statistics chapter 20 holds to a target (farmlib.evaluation.intervals)."""

import random

import pytest

from farmlib.annotators.validation import agreement_with_humans
from farmlib.evaluation.intervals import agreement_interval, ranking_interval, straddles


def _labels(n_pairs: int, p_agree: float, seed: int = 0):
    """People who all say the same per pair, and an annotator whose first draw agrees with them with ``p_agree``."""
    rng = random.Random(seed)
    humans = [[rng.choice((1, 2))] * 4 for _ in range(n_pairs)]
    draws = [[h[0] if rng.random() < p_agree else 3 - h[0]] * 4 for h in humans]
    return draws, humans


def test_an_agreement_interval_holds_its_point_and_narrows_with_the_pairs():
    few, many = _labels(100, 0.65), _labels(1600, 0.65, seed=1)
    lo, hi = agreement_interval(*few, n_boot=300)
    assert lo < agreement_with_humans([d[0] for d in few[0]], few[1]) < hi
    lo2, hi2 = agreement_interval(*many, n_boot=300)
    assert lo2 < 0.65 < hi2 and (hi2 - lo2) < (hi - lo) / 2.5  # a quarter of the width with 16 times the pairs
    assert agreement_interval(*few, n_boot=300) == (lo, hi)  # seeded: the same interval every time


def test_an_annotator_that_always_agrees_has_no_spread():
    draws, humans = _labels(50, 1.0)
    assert agreement_interval(draws, humans, n_boot=100) == (1.0, 1.0)


@pytest.mark.parametrize("low, high, bounds, holds", [
    (0.75, 0.9, (0.8, None), True), (0.81, 0.9, (0.8, None), False), (0.6, 0.7, (0.62, 0.68), True),
    (0.63, 0.67, (0.62, 0.68), False), (0.66, 0.7, (0.62, 0.68), True), (1.0, 3.0, (None, None), False),
    (0.0, 0.0, (0.0, None), False),
])
def test_an_interval_straddles_a_bound_it_holds(low, high, bounds, holds):
    assert straddles(low, high, bounds) is holds


def test_the_ranking_interval_is_the_leaderboards_spearman_with_its_spread(micro_farm):
    """The point is the Spearman of the win-rates under the judges and the people (as chapter 14 computes it);
    the interval holds it."""
    import pandas as pd

    from farmlib.methods import outputs

    names = ["base", "sft10k", "reference", "expert"]
    rates = {a: [micro_farm.evaluate(outputs(micro_farm, n), a)[0].win_rate for n in names]
             for a in ("p_sim_eval", "human")}
    r = ranking_interval(micro_farm, names, n_boot=200)
    assert r["value"] == pytest.approx(pd.Series(rates["p_sim_eval"]).corr(pd.Series(rates["human"]), method="spearman"))
    assert r["low"] <= r["value"] <= r["high"] and r["level"] == 0.95


def test_other_crowds_rank_as_the_books_people_on_rows_far_apart(micro_farm):
    """Rows far apart (the base model, SFT, the reference, the expert) are ranked alike by every crowd; a crowd's
    correlation with itself would be 1, and each number is a correlation."""
    from farmlib.evaluation.intervals import other_crowds

    names = ["base", "sft10k", "reference", "expert"]
    r = other_crowds(micro_farm, names, crowds=(1, 2))
    assert r["crowds"] == [1, 2] and len(r["people"]) == len(r["sim"]) == 2
    assert all(-1 <= x <= 1 for x in r["people"] + r["sim"])
    same = other_crowds(micro_farm, names, crowds=(0,), judge_draws=(0,))
    assert same["people"] == [pytest.approx(1.0)]  # seed 0 is the book's crowd
    assert same["judges_again"] == [pytest.approx(1.0)] and same["judges_again_vs_people"] == [pytest.approx(same["sim"][0])]
    assert r["judge_draws"] == [1, 2] and set(r["win_rates"]["judges"]) == set(names)
    assert all(len(v) == 3 for v in r["win_rates"]["judges"].values())  # the first draw and two more
    assert all(len(v) == 3 for v in r["win_rates"]["people"].values())  # the book's crowd and crowds 1 and 2


@pytest.mark.parametrize("people, sim, rho, target, says, not_says", [
    ([0.9, 0.7, 0.85], [0.5, 0.8, 0.6], 0.7, 0.8, ["0.70–0.90 (mean 0.82)", "inside", "on 2 of the 3"], ["asks for more"]),
    ([0.7, 0.6], [0.4, 0.5], 0.5, 0.8, ["is below that range", "on 2 of the 2", "asks for more"], []),
    ([0.96, 0.75], [0.95, 0.79], 0.98, 0.8, ["is above that range", "on 1 of the 2"], ["asks for more"]),
])
def test_the_other_crowds_sentence_reads_the_numbers(people, sim, rho, target, says, not_says):
    from farmlib.evaluation.intervals import other_crowds_sentence

    text = other_crowds_sentence({"crowds": list(range(1, len(people) + 1)), "people": people, "sim": sim}, rho, target)
    assert all(s in text for s in says) and not any(s in text for s in not_says), text


def test_the_judges_drawn_again_name_the_rows_that_part_from_the_people_beyond_their_noise():
    from farmlib.evaluation.intervals import judges_taste_sentence

    # each draw's deviations cancel over the rows, so no draw runs higher than another on the average row
    judges = {"a": [40, 41, 42], "b": [31, 30, 29], "c": [27, 28, 26], "d": [35, 34, 36], "e": [21, 20, 19],
              "f": [24, 25, 26], "base": [5, 5, 5]}
    people = {"a": [33, 34, 35], "b": [30, 30, 30], "c": [28, 27, 26], "d": [35, 35, 35], "e": [20, 20, 20],
              "f": [25, 25, 25], "base": [9, 9, 9]}
    crowds = {"judges_again": [0.85, 0.8], "judges_again_vs_people": [0.75, 0.7],
              "win_rates": {"judges": judges, "people": people}}
    text = judges_taste_sentence(crowds)
    assert "Spearman 0.80–0.85 against their first draw and 0.70–0.75 against the book's people" in text
    # gaps a +7, the others 0: mean +7/6; pooled variance between draws 1 (judges) and 2/6 (people), over 3 draws:
    # noise sqrt(1/3 + 1/9) = 0.67; a parts by +5.8, every other row by -1.2, under twice the noise
    assert "the judges run +1.2 points from the people on the average row" in text
    assert "more than twice its noise (± 0.7) are a (+5.8): there the judges' taste differs" in text
    assert "base" not in text and "b (" not in text
    judges["a"] = [34, 35, 33]
    assert "no row parts from that by more than twice its noise" in judges_taste_sentence(crowds)
    judges["a"] = [40, 41, 42]
    for v in people.values():  # the second crowd 6 points kinder on every row: no row's place moves, no noise added
        v[1] += 6
    assert "more than twice its noise (± 0.7) are a (+5.8)" in judges_taste_sentence(crowds)
    assert judges_taste_sentence({"crowds": [1], "people": [0.9], "sim": [0.7]}) == ""  # not drawn again: nothing
