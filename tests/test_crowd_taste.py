"""Chapter 4's crowd findings on hand-made tables: every branch that words a conclusion."""

import math

import pandas as pd
import pytest

from farmlib.annotators import crowd_taste as T
from farmlib.paper import CROWD_RANGES

LO, HI = CROWD_RANGES["p_longer"]


class FakeWorld:
    """R*'s breakdown where an output's quality is the number it starts with (defects: none)."""

    def reward_breakdown(self, instruction, input, output):
        return {"quality": float(output.split()[0]), **dict.fromkeys(
            ["detail", "list", "repetition", "disfluency", "off_topic", "echo", "broken"], 0.0)}


def test_mean_and_output_quality():
    w = FakeWorld()
    pairs = [{"instruction": "i", "input": "", "output_1": "0.2 a", "output_2": "0.6 b b"}]
    assert T.mean_quality(w, pairs) == pytest.approx(0.4)
    assert T.output_quality(w, [{"instruction": "i", "input": "", "output": "0.5"}]) == 0.5


def test_crowd_row_counts_the_longer_outputs_gain():
    w = FakeWorld()
    pairs = [{"instruction": "i", "input": "", "output_1": "0.2", "output_2": "0.8 and more"}] * 3
    row = T.crowd_row(w, pairs, [[2, 2, 2, 2]] * 3)
    assert row["P(longer)"] == 1.0 and row["quality longer − shorter"] == pytest.approx(0.6)
    assert "P(longer) 95 %" not in row
    row = T.crowd_row(w, pairs, [[2, 2, 2, 2]] * 3, ci={"p_longer": (0.1, 0.2), "p_list": (0.3, 0.4)})
    assert row["P(longer) 95 %"] == "0.10–0.20"


def test_pair_sets_sentence_branches():
    cal = pd.Series({"P(longer)": 0.63, "P(list)": 0.65})
    sft = pd.Series({"P(longer)": 0.45, "P(list)": 0.60})
    flat = {"quality_longer": 0.3, "quality_shorter": 0.3, "quality_list": 0.3, "quality_prose": 0.3}
    s = T.pair_sets_sentence(cal, sft, flat)
    assert "hardly better done, so people" in s and "for the tidiness" in s
    better = {"quality_longer": 0.6, "quality_shorter": 0.3, "quality_list": 0.6, "quality_prose": 0.3}
    s = T.pair_sets_sentence(cal, sft, better)
    assert "Its longer outputs are better done" in s and "Its lists are better done" in s


def _by_seed(p_longer: dict, p_list: float = 0.65) -> pd.DataFrame:
    idx = pd.MultiIndex.from_tuples(list(p_longer), names=["base seed", "SFT seed"])
    return pd.DataFrame({"P(longer)": list(p_longer.values()), "P(list)": [p_list] * len(p_longer)}, index=idx)


CI = {"p_longer": (0.45, 0.55)}  # one model's interval: 0.10 wide


@pytest.mark.parametrize("values, phrase", [
    ([0.40, 0.45, 0.42], "Every model falls below the range"),
    ([0.70, 0.75, 0.72], "Every model falls above the range"),
    ([0.60, 0.62, 0.63], "Every model falls inside the range"),
    ([0.50, 0.62, 0.63], "Some models fall inside the range and some outside"),
])
def test_seed_sentence_against_the_range(values, phrase):
    by_seed = _by_seed({(0, 0): values[0], (0, 1): values[1], (1, 0): values[2]})
    s = T.seed_sentence(by_seed, {k: CI for k in by_seed.index}, base0=0, sft0=0)
    assert phrase in s


def test_seed_sentence_which_retraining_moves_more():
    # SFT seeds differ by 0.01, base models by 0.20: the base model moves it more, and more than one interval
    by_seed = _by_seed({(0, 0): 0.40, (0, 1): 0.41, (1, 0): 0.60})
    s = T.seed_sentence(by_seed, {k: CI for k in by_seed.index}, base0=0, sft0=0)
    assert "Retraining the base model moves the statistic more" in s
    assert "2 base models differ by up to 0.200" in s and "more than the width" in s
    by_seed = _by_seed({(0, 0): 0.40, (0, 1): 0.60, (1, 0): 0.41})
    s = T.seed_sentence(by_seed, {k: CI for k in by_seed.index}, base0=0, sft0=0)
    assert "no more than reshuffling SFT" in s


def test_seed_sentence_one_base_model_claims_nothing_of_retraining_it():
    by_seed = _by_seed({(0, 0): 0.40, (0, 1): 0.41, (0, 2): 0.45})
    s = T.seed_sentence(by_seed, {k: CI for k in by_seed.index}, base0=0, sft0=0)
    assert "3 SFT seeds differ by up to 0.050" in s and "All share one base model (`base_seeds` adds others)" in s
    assert "Retraining the base model" not in s


def test_seed_sentence_one_model():
    by_seed = _by_seed({(0, 0): 0.5})
    s = T.seed_sentence(by_seed, {(0, 0): CI}, base0=0, sft0=0)
    assert "one SFT seed only" in s and "sd –" in s


def _by_accuracy(p_longer, sft_p=0.45, wins=(10.0, 20.0, 30.0), sft_win=5.0) -> pd.DataFrame:
    rows = {f"writer, accuracy {a:g}": {"accuracy": a, "mean quality": a, "quality longer − shorter": 0.1 * a,
                                         "defect cost longer − shorter": 0.0, "P(longer)": p, T.WIN: w}
            for a, p, w in zip((0.3, 0.6, 0.9), p_longer, wins)}
    rows["SFT 10k (this chapter's pairs)"] = {"accuracy": float("nan"), "mean quality": 0.1,
                                              "quality longer − shorter": 0.0, "defect cost longer − shorter": 0.1,
                                              "P(longer)": sft_p, T.WIN: sft_win}
    return pd.DataFrame(rows).T.astype(float)


def test_accuracy_sentence_and_where_the_range_is_entered():
    t = _by_accuracy([0.45, 0.62, 0.66])
    s = T.accuracy_sentence(t, (0.40, 0.50))
    assert "from accuracy 0.6 (mean quality 0.60) on" in s
    assert ", below every writer tried" in s
    assert "not in the people's taste" in s
    assert T.enters_range_quality(t) == pytest.approx(0.6)
    t = _by_accuracy([0.45, 0.50, 0.55], sft_p=0.62)
    s = T.accuracy_sentence(t, (0.55, 0.70))
    assert "at no accuracy tried" in s and "is inside the real crowd's range" in s
    assert T.enters_range_quality(t) is None
    s = T.accuracy_sentence(_by_accuracy([0.45, 0.50, 0.55], sft_p=0.9), (0.8, 0.95))
    assert "more than the real crowd" in s


def test_at_paper_win_rate_interpolates_or_says_none():
    t = _by_accuracy([0.40, 0.50, 0.70])
    at = T.at_paper_win_rate(t, 25.0)
    assert at["accuracy"] == pytest.approx(0.75) and at["p_longer"] == pytest.approx(0.60)
    assert T.at_paper_win_rate(t, 44.3) is None
    s = T.standing_sentence(t, 25.0, at, 0.62)
    assert "accuracy about 0.75" in s and "inside the real crowd's range" in s
    s = T.standing_sentence(t, 44.3, None, 0.62)
    assert "No writer tried wins that often" in s and "less than every writer tried" in s
    assert "much weaker than the paper's" in s


def _moves(p_longer, quality, calib=(0.62, 0.64, 0.66)) -> pd.DataFrame:
    names = ["nothing (the book's SFT pairs)", "people: detail 4, not 3", "people: detail 6, not 3",
             "temperature 0.7, not 1", "SFT 52k"]
    return pd.DataFrame({"mean quality": quality, "P(longer)": p_longer,
                         "P(longer), calibration": [*calib, math.nan, math.nan]}, index=names)


def test_what_moves_sentence_branches():
    t = _moves([0.45, 0.47, 0.50, 0.46, 0.48], [0.30, 0.30, 0.30, 0.40, 0.36])
    s = T.what_moves_sentence(t, 0.6)
    assert "no change reaches the real crowd's range" in s
    assert "Better outputs alone do not close it (temperature 0.7, not 1; SFT 52k" in s
    assert "from mean quality 0.60." in s
    assert "+0.05 (people: detail 6, not 3)" in s
    t = _moves([0.45, 0.47, 0.60, 0.46, 0.48], [0.30, 0.30, 0.30, 0.31, 0.30])
    s = T.what_moves_sentence(t, None)
    assert "at least one change reaches" in s and "Better outputs" not in s


def test_sampling_sentence_branches():
    t_row = pd.Series({"mean quality": 0.3, "P(longer)": 0.5})
    sft_row = pd.Series({"quality longer − shorter": 0.01, "defect cost longer − shorter": 0.2})
    assert "much worse than what it knows" in T.sampling_sentence(0.6, 0.3, 0.7, t_row, sft_row)
    assert "Sampling costs the model little" in T.sampling_sentence(0.35, 0.3, 0.7, t_row, sft_row)


def test_sentences_without_list_pairs_say_so_instead_of_nan():
    cal = pd.Series({"P(longer)": 0.63, "P(list)": 0.65})
    sft = pd.Series({"P(longer)": 0.45, "P(list)": math.nan})
    gap = {"quality_longer": 0.3, "quality_shorter": 0.3, "quality_list": math.nan, "quality_prose": math.nan}
    s = T.pair_sets_sentence(cal, sft, gap)
    assert "nan" not in s and "No pair of its outputs sets a list against prose." in s
    by_seed = _by_seed({(0, 0): 0.4, (0, 1): 0.45}, p_list=math.nan)
    s = T.seed_sentence(by_seed, {k: CI for k in by_seed.index}, base0=0, sft0=0)
    assert "nan" not in s and "no model's pairs set a list against prose" in s


def test_what_moves_shown_keeps_what_the_sentence_reads():
    t = _moves([0.45, 0.47, 0.50, 0.46, 0.48], [0.30, 0.30, 0.30, 0.40, 0.36])
    t["pairs"], t["quality longer − shorter"], t["P(longer) 95 %"] = 20, 0.0, "0.40–0.60"
    shown = T.what_moves_shown(t).data
    assert list(shown.columns)[-1] == "P(longer), demonstrator pairs" and "agreement" not in shown


# -- the plumbing the chapter calls, on hand-made data ----------------------------------------------------------
class LongerCrowd:
    """People who always prefer the longer output."""

    people = [0, 1, 2, 3]

    def p_prefer_2(self, person, r):
        return 1.0 if len(r["output_2"]) > len(r["output_1"]) else 0.0


def test_calibration_and_sft_sets_label_the_calibration_pairs_and_keep_the_sft_labels():
    pairs = [{"instruction": "i", "input": "", "output_1": "0.2 a", "output_2": "0.6 b b"},
             {"instruction": "i", "input": "", "output_1": "0.9 c c c", "output_2": "0.1 d"}]
    sft_humans = [[1, 1], [2, 2]]  # the shorter one, every time
    table, shown, intervals = T.calibration_and_sft_sets(FakeWorld(), LongerCrowd(), pairs, pairs, sft_humans, draws=2)
    assert list(table.index) == [T.CALIBRATION_SET, T.SFT_SET] and set(intervals) == {T.CALIBRATION_SET, T.SFT_SET}
    assert table.loc[T.CALIBRATION_SET, "P(longer)"] == 1.0 and table.loc[T.SFT_SET, "P(longer)"] == 0.0
    assert shown.loc[T.CALIBRATION_SET, "P(longer)"].startswith("1.00 (")


def test_accuracy_shown_drops_the_accuracy_and_keeps_three_decimals_for_p_longer():
    styled = T.accuracy_shown(_by_accuracy([0.45, 0.62, 0.66]))
    assert "accuracy" not in styled.data and T.WIN in styled.data
    assert "0.620" in styled.to_html() and "30.0" in styled.to_html()


def test_sampling_reading_finds_its_rows_by_the_tables_own_names():
    moves = pd.DataFrame({"mean quality": [0.2, 0.3], "P(longer)": [0.45, 0.5]},
                         index=["nothing (the book's SFT pairs)", T.temperature_row(0.7)])
    s = T.sampling_reading(0.6, 0.3, 0.7, moves, _by_accuracy([0.45, 0.62, 0.66]))
    assert "at temperature 0.7, mean quality is 0.30" in s and "much worse than what it knows" in s
    assert "+0.00 in quality and costs +0.10 more in defects" in s  # the SFT row of the accuracy table


def test_greedy_and_sampled_quality_reads_both_decodings():
    class Farm:
        world = FakeWorld()

        def sft_model(self):
            return "sft"

        def samples(self, model, split, temperature, seed=0, generator=None):
            q = "0.8" if temperature == 0.0 else "0.4"
            return [{"instruction": "i", "input": "", "output": f"{q} words"}] * 3

    assert T.greedy_and_sampled_quality(Farm()) == (pytest.approx(0.8), pytest.approx(0.4))
