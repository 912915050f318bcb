"""Chapter 4's judge findings on hand-made tables: every branch that words a conclusion."""

import pandas as pd
import pytest

from farmlib.annotators import judge_findings as J


def _table(e_var=0.25, s_var=0.10, h_var=0.34, a_var=0.45, e_agree=0.60) -> pd.DataFrame:
    rows = {
        "gpt4_1": {"kind": "pool member", "agreement": 0.58, "bias": 0.3, "variance": 0.2, "p_longer": 0.5,
                   "p_list": 0.5, "cost_per_1000": 3.0},
        "p_sim_eval": {"kind": "pool", "agreement": e_agree, "bias": 0.3, "variance": e_var, "p_longer": 0.55,
                       "p_list": 0.6, "cost_per_1000": 2.0},
        "p_sim_ann": {"kind": "pool + noise", "agreement": 0.55, "bias": 0.35, "variance": a_var, "p_longer": 0.52,
                      "p_list": 0.55, "cost_per_1000": 1.0},
        "p_sim_single": {"kind": "single", "agreement": 0.61, "bias": 0.3, "variance": s_var, "p_longer": 0.57,
                         "p_list": 0.6, "cost_per_1000": 4.0},
        "local_lm": {"kind": "local LM", "agreement": 0.50, "bias": 0.5, "variance": 0.5, "p_longer": 0.5,
                     "p_list": 0.5, "cost_per_1000": 0.0},
        "human": {"kind": "people", "agreement": 0.66, "bias": 0.0, "variance": h_var, "p_longer": 0.50,
                  "p_list": 0.65, "cost_per_1000": 300.0},
    }
    return pd.DataFrame(rows).T


def test_calibration_sentence():
    calib = {"logit_scale": 4, "n_pairs": 100, "seconds": 12.0,
             "rows": [{"logit_scale": s, "agreement": a, "variance": v, "p_longer": 0.5, "p_list": 0.5}
                      for s, a, v in [(16, 0.66, 0.17), (1, 0.55, 0.41), (4, 0.64, 0.25)]]}
    s = J.calibration_sentence(calib, 0.26, 99.6)
    assert "logit scale **4**" in s and "variance 0.25" in s and "target 0.26" in s and "from 0.17 to 0.41" in s
    assert "reads no person's label" in s and "64.0 % at the kept scale" in s and "took 100 s" in s
    assert "55.0 % at the grid's least decisive scale and 66.0 % at its most" in s  # the grid in its order
    calib["rows"] = [{**r, "logit_scale": float(r["logit_scale"])} for r in calib["rows"]]  # as the JSON stores them
    html = J.calibration_shown(calib).to_html()
    assert ">16<" in html and "16.000000" not in html and "0.64" in html and "<caption>The calibration grid" in html


def test_cost_sentence_picks_the_cheapest_near_the_best():
    s = J.cost_sentence(_table())
    # p_sim_single is best (61 %), p_sim_eval within a point and cheaper
    assert "61.0 %" in s and "`p_sim_single`" in s and "cheapest within a point of it is `p_sim_eval` at 2.00" in s
    assert "300 USD for people" in s


def test_bias_variance_sentence_branches():
    s = J.bias_variance_sentence(_table())
    assert "more consistent than people" in s and "the lowest variance of the three" in s
    s = J.bias_variance_sentence(_table(e_var=0.40, s_var=0.50))
    assert "less consistent than people" in s and "not below the others'" in s


def test_agreement_sentence():
    names = ["a", "b", "human", "human_majority", "p_sim_eval"]
    m = pd.DataFrame(50.0, index=names, columns=names)
    m.loc["a", "b"] = m.loc["b", "a"] = 90.0
    m.loc["human", "human_majority"] = m.loc["human_majority", "human"] = 70.0
    m.loc["a", "p_sim_eval"] = m.loc["p_sim_eval", "a"] = 30.0
    for n in names:
        m.loc[n, n] = 100.0
    s = J.agreement_sentence(m)
    assert "`a` and `b` (90 %)" in s and "`a` and `p_sim_eval` (30 %)" in s and "majority 70 %" in s


def test_style_sentence_inside_and_outside():
    s = J.style_sentence(_table(), n_list=12, draws=4)
    assert "0.50 (**outside** the real crowd's" in s and "0.65 (inside" in s and "12 pairs" in s
    s = J.style_sentence(_table(), n_list=0, draws=4)
    assert "P(list) is not measured here" in s and "nan" not in s


def test_picks_better_done_and_quality_read():
    assert J.picks_better_done([2, 1, None, 2], [2, 2, 1, None]) == 0.5
    assert J.picks_better_done([None], [None]) == 0.0

    class World:
        def reward_breakdown(self, instruction, input, output):
            return {"quality": float(output)}

    pairs = [{"instruction": "", "input": "", "output_1": "0.1", "output_2": "0.9"},
             {"instruction": "", "input": "", "output_1": "0.5", "output_2": "0.5"}]
    read = J.quality_read(World(), pairs, [[2, 2, 2, 1], [1, 1, 2, 2]],
                          {"p_sim_eval": [[2], [1]], "p_sim_single": [[1], [1]]})
    assert read.to_dict() == {"human (majority)": 1.0, "p_sim_eval": 1.0, "p_sim_single": 0.0}


def test_decides_sentence():
    decides = pd.DataFrame({"pairs where it differs": {"quality": 0.8}, "its side wins the majority": {"quality": 0.7}})
    read = pd.Series({"human (majority)": 0.7, "p_sim_eval": 0.55, "p_sim_single": 0.52})
    s = J.decides_sentence(decides, read, _table())
    assert "differs in 80% of the pairs" in s and "majority 70% of the time" in s and "55%" in s


@pytest.mark.parametrize("agree, likelier, phrase", [
    (50.0, True, "cannot tell a model's wrong answers"),
    (70.0, False, "mostly follows the people"),
])
def test_likelihood_sentence_branches(agree, likelier, phrase):
    gap = pd.DataFrame({"log-prob, model": {"gpt4": -1.0 if likelier else -3.0, "davinci": -3.0},
                        "log-prob, reference": {"gpt4": -2.0, "davinci": -2.0},
                        "people prefer model (%)": {"gpt4": 20.0, "davinci": 20.0},
                        "head prefers model (%)": {"gpt4": 60.0, "davinci": 50.0},
                        "head agrees with people (%)": {"gpt4": agree, "davinci": 50.0}})
    s = J.likelihood_sentence(gap, 0.8, 0.3)
    assert phrase in s and "R* rates the reference's answers 0.80" in s
    assert ("The tuned LMs of gpt4 find" in s) == likelier
    assert ("No family's LM finds" in s) == (not likelier)


def test_battery_sentence_branches():
    kinds = ["shuffle", "truncate"]
    fooled = pd.DataFrame({"shuffle": [100.0, 40.0, 80.0, 60.0, 50.0], "truncate": [100.0, 90.0, 70.0, 75.0, 45.0]},
                          index=["human (majority)", "gpt4_1", "p_sim_eval", "p_sim_single", "local_lm"])[kinds]
    s = J.battery_sentence(fooled)
    assert s.startswith("People's majority chooses the correct answer in every pair")
    assert "most fooled is `gpt4_1` (40 % on *shuffle*)" in s and "(pool `p_sim_eval`: 80 %)" in s
    assert "local LM judge (48 % on average)" in s
    fooled.loc["human (majority)", "truncate"] = 95.0
    s = J.battery_sentence(fooled.drop(index="local_lm"))
    assert "in 95 % or more of every kind" in s and "local LM" not in s


def test_paper_table_is_two_levels_and_fills_missing():
    t = J.paper_table(_table())
    assert list(t.index) == ["human", "p_sim_eval", "p_sim_ann", "p_sim_single"]
    assert t.loc["human", ("agreement", "paper")] == "65.7 %–66.0 %"
    assert t.loc["p_sim_ann", ("agreement", "paper")] == "–"
    assert t.loc["p_sim_eval", ("agreement", "ours")] == "60.0 %"


def _summary(table, seeds=((0, 0), (0, 1))):
    sft_ci = {"agreement": (0.60, 0.70), "variance": (0.30, 0.40), "p_longer": (0.40, 0.60), "p_list": (0.55, 0.75)}
    cal = pd.Series({"agreement": 0.66, "P(longer)": 0.63, "P(list)": 0.66})
    idx = pd.MultiIndex.from_tuples(list(seeds), names=["base seed", "SFT seed"])
    by_seed = pd.DataFrame({"P(longer)": [0.5 + 0.02 * i for i in range(len(seeds))],
                            "P(list)": [0.6 + 0.02 * i for i in range(len(seeds))]}, index=idx)
    inj = pd.DataFrame({"win_before": {"p_sim_eval": 0.5, "p_sim_single": 0.5},
                        "win_injected": {"p_sim_eval": 0.52, "p_sim_single": 0.55}})
    calib = {"logit_scale": 4, "rows": [{"logit_scale": k, "agreement": a, "variance": 0.3, "p_longer": 0.5,
                                         "p_list": 0.5} for k, a in [(1, 0.55), (4, 0.65)]]}
    return J.summary(table, sft_ci, cal, by_seed, 0, 0, calib, 0.5, inj)


def test_summary_branches():
    s = _summary(_table())
    assert "Across 2 SFT models (2 SFT seeds, one base model)" in s  # counted from the seed table
    assert "Across 3 SFT models (2 SFT seeds, 2 base models)" in _summary(_table(), ((0, 0), (0, 1), (1, 0)))
    assert "against 65.0 % on the judges' calibration pairs" in s  # the pool's agreement at the kept logit scale
    assert "0.30 on the calibration\npairs" in s  # and its variance there
    assert "like the paper's pool (0.26 vs 0.34), it is *more* consistent" in s
    assert "P(longer)'s 95 % interval over pairs, 0.40–0.60, reaches into the range" in s
    assert "There the people are calibrated" in s
    assert "5.0 points below the calibration pairs" in s
    assert "variance 0.45 is above the people's" in s
    s = _summary(_table(e_var=0.40, a_var=0.20, e_agree=0.66))
    assert "unlike the paper's pool" in s and "agree within two points" in s and "is below the people's" in s


def test_validation_shown_drops_kind_and_renames():
    shown = J.validation_shown(_table()).data
    assert "kind" not in shown and {"P(longer)", "USD / 1000"} <= set(shown.columns)


# -- the plumbing the chapter calls, on hand-made annotators and pairs ------------------------------------------
def _pair(o1, o2):
    return {"instruction": "i", "input": "", "output_1": o1, "output_2": o2}


def test_first_draws_adds_one_person_and_the_majority():
    labels = {"p_sim_eval": [[1, 2], [2, 2]]}
    humans = [[2, 1, 1], [2, 2, 1, 1]]
    assert J.first_draws(labels, humans) == {"p_sim_eval": [1, 2], "human": [2, 2], "human_majority": [1, None]}


def test_n_list_pairs_counts_pairs_with_exactly_one_list():
    lst = "- one\n- two\n- three"
    pairs = [_pair(lst, "prose."), _pair("prose.", lst), _pair(lst, lst), _pair("a.", "b.")]
    assert J.n_list_pairs(pairs) == 2


class _Always:
    """An annotator that always answers ``pick``."""

    def __init__(self, pick):
        self.pick = pick

    def annotate_pairs(self, records, seed=0):
        return [dict(r, preference=self.pick) for r in records]


def test_injection_table_has_a_row_per_named_annotator():
    t = J.injection_table({"a": _Always(1), "b": _Always(2), "c": _Always(1)}, [_pair("x", "y")] * 4, names=("a", "b"))
    assert list(t.index) == ["a", "b"]
    assert t.loc["a", "win_before"] == t.loc["a", "win_injected"] == 1.0 and t.loc["b", "win_injected"] == 0.0


def test_battery_judges_leave_out_the_noisy_pool_only():
    names = ["gpt4_1", "p_sim_eval", "p_sim_ann", "p_sim_single", "local_lm"]
    assert list(J.battery_judges(dict.fromkeys(names))) == ["gpt4_1", "p_sim_eval", "p_sim_single", "local_lm"]


def test_true_reward_of_sides_averages_each_side():
    class Farm:
        def true_rewards(self, outs):
            return [float(len(o["output"])) for o in outs]

    assert J.true_reward_of_sides(Farm(), [_pair("ab", "abcd"), _pair("abcd", "abcdef")]) == (3.0, 5.0)
