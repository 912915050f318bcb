"""Chapter 20's table of the paper's claims: read from the chapters' metrics, judged against our targets."""

import copy
import json

import pytest

from farmlib.evaluation import claims as C


def _board_row(method, sim, people, rep=0.1, dis=0.05):
    return {"method": method, "win_rate_p_sim_eval": sim, "win_rate_human": people, "repetition_rate": rep,
            "disfluency_rate": dis}


def _annotator(agreement, variance):
    return {"agreement": agreement, "variance": variance}


#: A build that meets every target.
GOOD = {
    "annotators": {
        "annotators": {"p_sim_eval": _annotator(0.65, 0.26), "p_sim_single": _annotator(0.66, 0.1),
                       "p_sim_ann": _annotator(0.6, 0.43)},
        "degenerate_correct_preferred": {"human (majority)": {"truncated": 99.0, "garbled words": 100.0},
                                         "p_sim_eval": {"truncated": 91.0, "garbled words": 97.0}},
    },
    "reward_model": {
        "config": {"annotator": "p_sim_ann"},
        "accuracy_curve": [{"labels": "p_sim_ann", "pairs": 0, "acc_people": 0.55, "se_people": 0.02},
                           {"labels": "p_sim_ann", "pairs": 8000, "acc_people": 0.70, "se_people": 0.02},
                           {"labels": "true_reward", "pairs": 8000, "acc_people": 0.9, "se_people": 0.02}],
        "ceilings": {"ppo_true_reward": {"win_rate": 40.0}, "sft10k_people": 26.0,
                     "oracle_best_of_n": [{"n": 1, "win_rate": 20.0}, {"n": 16, "win_rate": 50.0}]},
    },
    "dpo": {"dpo_ceiling": [{"pairs": 6920, "win_rate": 32.0}]},
    "best_of_n": {"config": {"n_max": 16}},
    "leaderboard": {
        "rows": [_board_row("expert", 70, 70), _board_row("ppo", 40, 36), _board_row("best_of_n", 38, 34),
                 _board_row("dpo", 35, 32), _board_row("expert_iteration", 33, 30), _board_row("sft52k", 31, 28),
                 _board_row("sft10k", 30, 26, rep=0.16, dis=0.06), _board_row("feedme", 29, 25),
                 _board_row("quark", 28, 24), _board_row("reward_conditioning", 27, 23), _board_row("base", 5, 8)],
        "spearman_sim_vs_human": 0.95,
        "versus_sft10k": [{"method": "best_of_n", "difference": 9.0, "noise": 1.3},
                          {"method": "dpo", "difference": 7.0, "noise": 1.1}],
        "versus_sft10k_board": [{"method": "ppo", "difference": 12.0, "se": 1.5},
                                {"method": "expert_iteration", "difference": 4.0, "se": 1.2}],
    },
    "overoptimisation": {"n": [1, 16, 64], "verdict": {"human": {"peak": 35.0, "peak_n": 16, "drop": 5.0,
                                                                 "se_drop": 1.5, "significant_fall": True}}},
    "label_noise": {"n": [1, 16, 64], "variants": [{"labels": "single judge", "win at peak": 36.0, "peak n": 64,
                                                    "fall": 0.0, "fall > 2 se": False}]},
    "end_to_end": {"correlations": {"spearman": {"value": 0.9}}},
}


def _with(path: str, value):
    m = copy.deepcopy(GOOD)
    *keys, last = path.split(".")
    d = m
    for k in keys:
        d = d[k]
    d[last] = value
    return m


def _verdicts(m):
    return {r["claim"]: r["met"] for r in C.claims(m)}


def test_a_build_that_meets_every_target_says_so():
    rows = C.claims(GOOD)
    assert len(rows) == 15 and all(r["met"] is True for r in rows), [r["claim"] for r in rows if not r["met"]]
    assert C.sentence(rows) == "This build meets 15 of the 15 targets it measures."
    assert list(C.shown(rows)["met"]) == ["yes"] * 15


def test_a_curve_highest_at_its_last_n_reads_no_fall_rather_than_a_fall_of_zero():
    ours = {r["claim"]: r["this build"] for r in C.claims(GOOD)}
    assert ours["with the noisy pool's labels, best-of-n peaks and falls"] == "peak 35.0 % at n = 16, fall 5.0\u00a0±\u00a01.5"
    assert ours["with a single judge's labels, it does not fall"] == "highest at the last n = 64 (36.0 %): no fall"


@pytest.mark.parametrize("path, value, claim", [
    ("annotators.annotators.p_sim_eval.agreement", 0.706, "the judges agree with the people's majority"),
    ("annotators.annotators.p_sim_single.variance", 0.3, "a single judge agrees as often, with less variance than the pool"),
    ("annotators.annotators.p_sim_ann.variance", 0.3, "the noisy pool varies as people do"),
    ("leaderboard.spearman_sim_vs_human", 0.47, "the judges rank the methods as the people do"),
    ("end_to_end.correlations.spearman.value", 0.6, "trained on the judges' labels, methods rank as trained on people's"),
    ("overoptimisation.verdict.human.significant_fall", False, "with the noisy pool's labels, best-of-n peaks and falls"),
])
def test_each_target_missed_turns_its_row_alone(path, value, claim):
    verdicts = _verdicts(_with(path, value))
    assert verdicts[claim] is False and sum(v is False for v in verdicts.values()) == 1


def test_a_gain_must_clear_both_the_target_and_twice_its_noise():
    near = _with("leaderboard.versus_sft10k", [{"method": "best_of_n", "difference": 5.9, "noise": 1.3},
                                               {"method": "dpo", "difference": 6.0, "noise": 3.5}])
    v = _verdicts(near)
    assert v["best-of-n beats SFT 10k"] is False and v["DPO beats SFT 10k"] is False


def test_a_flat_reward_model_curve_does_not_rise_even_above_the_bar():
    flat = _with("reward_model.accuracy_curve", [{"labels": "p_sim_ann", "pairs": 0, "acc_people": 0.631, "se_people": 0.024},
                                                 {"labels": "p_sim_ann", "pairs": 7991, "acc_people": 0.636, "se_people": 0.024}])
    assert _verdicts(flat)["accuracy against people rises with the pairs"] is False


def test_the_sentence_tells_the_reward_models_misses_from_the_profiles():
    """Best-of-n misses where R*'s own pick clears the target (the reward model's gap); PPO misses where PPO on R*
    does not (the budget's)."""
    m = _with("leaderboard.versus_sft10k_board", [{"method": "ppo", "difference": 1.0, "se": 1.5},
                                                  {"method": "expert_iteration", "difference": 4.0, "se": 1.2}])
    m["leaderboard"]["versus_sft10k"][0]["difference"] = 2.0
    m["reward_model"]["ceilings"]["ppo_true_reward"]["win_rate"] = 28.7
    text = C.sentence(C.claims(m))
    assert "meets 13 of the 15" in text and "PPO beats SFT 10k; best-of-n beats SFT 10k" in text
    assert "reaches the target for best-of-n (+24.0 points)" in text
    assert "It does not for PPO (+2.7 points)" in text


def test_a_method_missing_from_the_leaderboard_is_not_judged():
    m = _with("leaderboard.versus_sft10k_board", [])
    rows = {r["claim"]: r for r in C.claims(m)}
    assert rows["PPO beats SFT 10k"]["met"] is None and rows["PPO beats SFT 10k"]["this build"] == "not on the leaderboard"
    assert "meets 13 of the 13" in C.sentence(list(rows.values()))


def test_the_clean_top_row_reads_the_best_method_under_people():
    m = copy.deepcopy(GOOD)
    m["leaderboard"]["rows"][1]["repetition_rate"] = 0.3  # PPO, on top, now repeats more than SFT 10k
    assert _verdicts(m)["the best method wins with clean text"] is False


def test_missing_metrics_are_named_with_the_chapter_that_writes_them(tmp_path):
    for name in ("annotators", "dpo"):
        (tmp_path / f"{name}.json").write_text(json.dumps(GOOD[name]))
    with pytest.raises(FileNotFoundError) as e:
        C.load(tmp_path)
    assert "reward_model.json (chapter 05_reward_model)" in str(e.value) and "farm book" in str(e.value)
    assert "annotators.json" not in str(e.value)


def test_a_build_that_misses_nothing_has_no_reasons_to_give():
    assert C.reasons(GOOD, C.claims(GOOD)) == ""


@pytest.mark.parametrize("crowd, says", [(0.676, "predicts the majority better than one of its members"),
                                         (0.731, "nearly as well as one of them does")])
def test_judges_above_the_band_are_set_beside_the_peoples_own_agreement(crowd, says):
    m = _with("annotators.annotators.p_sim_eval.agreement", 0.708)
    m["annotators"]["crowd"] = {"agreement": crowd}
    why = C.reasons(m, C.claims(m))
    assert why.startswith("- **The judges agree with the people's majority** (chapter 4): ")
    assert f"{100 * crowd:.1f} %" in why and says in why and why.count("\n") == 0


def test_a_ranking_of_close_rows_is_explained_by_their_spread_and_noise():
    m = _with("leaderboard.spearman_sim_vs_human", 0.47)
    why = C.reasons(m, C.claims(m))
    # the GOOD board without expert and base: 9 rows from 23 to 36 %; every method compared is beyond its noise
    assert "the 9 rows lie within 13.0 points" in why and "(23.0–36.0 %)" in why
    assert "0 of the 4 of them compared with SFT 10k" in why
    assert "other crowds" not in why  # a build without chapter 14's other crowds says nothing of them


def test_a_ranking_below_another_crowds_is_set_beside_it():
    m = _with("leaderboard.spearman_sim_vs_human", 0.7)
    m["leaderboard"]["spearman_other_crowds"] = {"crowds": [1, 2, 3], "people": [0.88, 0.68, 0.79],
                                                 "sim": [0.72, 0.48, 0.41]}
    why = C.reasons(m, C.claims(m))
    assert "3 other crowds of people" in why and "0.68–0.88 (mean 0.78)" in why and "is inside that range" in why
    assert "below the book's people's on 3 of the 3" in why and "asks for more than another crowd" in why
    assert "mostly noise" in why and "own taste" not in why  # the people's order does not reproduce either


def test_a_ranking_miss_says_what_the_judges_drawn_again_keep():
    m = _with("leaderboard.spearman_sim_vs_human", 0.7)
    judges = {"ppo": [43, 45], "quark": [19, 21], "dpo": [29, 31], "kto": [31, 29]}
    people = {"ppo": [35, 37], "quark": [23, 25], "dpo": [30, 30], "kto": [30, 30]}
    m["leaderboard"]["spearman_other_crowds"] = {"crowds": [1, 2, 3], "people": [0.90, 0.95, 0.98],
                                                 "sim": [0.72, 0.68, 0.71], "judges_again": [0.8],
                                                 "judges_again_vs_people": [0.75],
                                                 "win_rates": {"judges": judges, "people": people}}
    why = C.reasons(m, C.claims(m))  # gaps +8, -4, 0, 0 (mean +1); noise sqrt(1.5 / 2 + 0.5 / 2) = 1.0
    assert "is below that range" in why and "mostly noise" not in why
    assert "are ppo (+7.0), quark (-5.0): there the judges' taste differs" in why


def test_a_flat_reward_model_curve_gives_what_the_labels_buy_per_doubling():
    m = _with("reward_model.accuracy_curve", [{"labels": "p_sim_ann", "pairs": 0, "acc_people": 0.614, "se_people": 0.024},
                                              {"labels": "p_sim_ann", "pairs": 7991, "acc_people": 0.606, "se_people": 0.024}])
    m["reward_model"]["pairs_needed"] = [
        {"labels": "true_reward", "label agreement with R* (%)": 100.0, "pairs (largest point)": 6713,
         "accuracy there (%)": 63.9, "points per doubling of pairs": 0.08, "pairs_needed": 2.2e6, "measured": False,
         "extrapolation": "about 2,200,000 pairs"},
        {"labels": "p_sim_ann", "label agreement with R* (%)": 64.6, "pairs (largest point)": 7991,
         "accuracy there (%)": 62.4, "points per doubling of pairs": -0.21, "pairs_needed": None, "measured": False,
         "extrapolation": "no number of pairs (the fitted line does not rise)"}]
    why = C.reasons(m, C.claims(m))
    assert "already agrees with the people on 61.4 %" in why
    assert "without the flipped quarter, agree with the people on 65.0 % of those pairs" in why
    assert "it starts where its teachers stand" in why  # 3.6 points: within twice its standard error
    assert "which agree with R* on 65 % of its training pairs, it moves -0.2 points" in why
    assert "no number of pairs reaches" in why and "takes about 2,200,000 pairs" in why


def test_a_reward_model_below_its_teachers_is_told_the_room_left():
    m = _with("reward_model.accuracy_curve", [{"labels": "p_sim_ann", "pairs": 0, "acc_people": 0.614, "se_people": 0.024},
                                              {"labels": "p_sim_ann", "pairs": 7991, "acc_people": 0.606, "se_people": 0.024}])
    m["annotators"]["annotators"]["p_sim_eval"]["agreement"] = 0.708
    why = C.reasons(m, C.claims(m))
    assert "on 70.8 % of those pairs (chapter 4): 9.4 points above its start, room their labels did not fill" in why


def test_a_reward_model_above_its_teachers_is_told_their_labels_pull_it_down():
    m = _with("reward_model.accuracy_curve", [{"labels": "p_sim_ann", "pairs": 0, "acc_people": 0.708, "se_people": 0.024},
                                              {"labels": "p_sim_ann", "pairs": 7991, "acc_people": 0.66, "se_people": 0.024}])
    m["annotators"]["annotators"]["p_sim_eval"]["agreement"] = 0.614
    why = C.reasons(m, C.claims(m))
    assert "it starts 9.4 points above its teachers" in why and "where its teachers stand" not in why


def test_the_papers_head_is_told_beside_the_reward_models_miss():
    m = _with("reward_model.accuracy_curve", [{"labels": "p_sim_ann", "pairs": 0, "acc_people": 0.693, "se_people": 0.012},
                                              {"labels": "p_sim_ann", "pairs": 7991, "acc_people": 0.683, "se_people": 0.012}])
    m["reward_model"]["accuracy_curve_paper_head"] = [
        {"labels": "p_sim_ann", "pairs": 999, "acc_people": 0.527, "se_people": 0.012},
        {"labels": "p_sim_ann", "pairs": 7991, "acc_people": 0.563, "se_people": 0.012}]
    why = C.reasons(m, C.claims(m))
    assert "a new head on the last token, learns from the same labels and rises: 52.7 % against the people" in why
    assert "56.3 % with 7,991." in why
    m["reward_model"]["accuracy_curve_paper_head"][1]["acc_people"] = 0.54
    assert "does not rise beyond its noise" in C.reasons(m, C.claims(m))


def test_no_fall_is_set_beside_how_little_the_labels_moved_the_picks():
    m = _with("overoptimisation.verdict.human.significant_fall", False)
    m["overoptimisation"]["mean_true_reward"] = [-0.17, 0.39, 0.32]
    m["best_of_n"]["headroom"] = {"terms": {"the untrained reward model's pick of 16": {"total": 0.246},
                                            "the reward model's pick of 16": {"total": 0.2455}}}
    why = C.reasons(m, C.claims(m))
    assert "a mean R* of 0.25 against the untrained pick's 0.25" in why and "left its picks where" in why
    assert "peaks at 0.39 (n = 16) and is 0.32 at n = 64" in why
    m["best_of_n"]["headroom"]["terms"]["the reward model's pick of 16"]["total"] = 0.62  # the labels moved them
    why = C.reasons(m, C.claims(m))
    assert "moved its picks towards R*" in why and "left its picks" not in why and "0.62 against" in why


def test_a_no_fall_says_where_gao_fit_turns_down():
    m = _with("overoptimisation.verdict.human.significant_fall", False)
    m["overoptimisation"]["mean_true_reward"] = [-0.17, 0.39, 0.45]
    fit = {"method": "best-of-n", "quantity": "true reward R*", "alpha": 0.4, "beta": 0.07, "peak_d": 3.0}
    m["overoptimisation"]["gao_fits"] = [fit]
    why = C.reasons(m, C.claims(m))
    assert "peaks at KL = 9.0 nats, about n = 22,000; the curve drawn stops at n = 64 (KL 3.2)" in why
    fit["peak_d"] = 30.0  # 900 nats
    assert "does not turn down before KL = 50 nats (n = 64 reaches 3.2)" in C.reasons(m, C.claims(m))
    fit["peak_d"] = None  # beta <= 0: no turn at all
    assert "does not turn down before KL = 50 nats" in C.reasons(m, C.claims(m))
    fit["peak_d"] = 1.0  # a peak inside the drawn range: the measured curve speaks for itself
    assert "Gao et al.'s form fitted" not in C.reasons(m, C.claims(m))


def test_a_dpo_miss_is_set_beside_the_winners_learnt_alone():
    m = copy.deepcopy(GOOD)
    m["leaderboard"]["versus_sft10k"][1]["difference"] = 0.5  # DPO misses its +4
    assert "Fine-tuned on the reward model's winners" not in C.reasons(m, C.claims(m))  # no pushed-down rows
    m["dpo"]["pushed_down"] = [
        {"learnt from": "SFT on the winners", "gain": 4.8, "gain_se": 1.6, "disfluent": 0.03},
        {"learnt from": "DPO: the winner against the worst", "gain": -8.8, "gain_se": 1.9, "vs_winners": -13.5,
         "vs_winners_se": 2.0, "disfluent": 0.34, "chosen": -0.3, "rejected": -2.1}]
    why = C.reasons(m, C.claims(m))
    assert "- **DPO beats SFT 10k** (chapter 8): Fine-tuned on the reward model's winners alone" in why
    assert "(SFT 10k 6%)" in why and "costs 13.5 points against the winners alone" in why


def test_a_ppo_miss_is_set_beside_what_choosing_gains_per_unit_of_score():
    m = copy.deepcopy(GOOD)
    m["leaderboard"]["versus_sft10k_board"][0]["difference"] = 1.5  # PPO misses its +8
    assert "PPO raised" not in C.reasons(m, C.claims(m))  # chapter 11 wrote no split
    m["ppo"] = {"run": "ppo", "score_reader": "the likelihood term", "score_parts": [
        {"answers": "SFT 10k", "score": -1.38, "reader": -0.58, "backward": -0.80, "true_reward": 0.094},
        {"answers": "ppo", "score": -1.23, "reader": -0.46, "backward": -0.77, "true_reward": 0.098}]}
    m["best_of_n"] |= {"n": [1, 16], "mean_reward": [-1.76, -0.99], "mean_true_reward": [-0.16, 0.43]}
    why = C.reasons(m, C.claims(m))
    assert "- **PPO beats SFT 10k** (chapter 11): PPO raised the reward model's score of its answers by 0.150" in why
    assert "80 % of it the likelihood term" in why and "best-of-16's picks (chapter 9) gain 0.77" in why
    assert "where R* does not follow" in why
    m["ppo"]["score_parts"][1]["score_se"] = 0.09  # chapter 11 paired the scores: 0.150 is within twice its noise
    why = C.reasons(m, C.claims(m))
    assert "+0.150 ± 0.090" in why and "did not raise the score beyond noise" in why and "% of it" not in why


def test_a_missed_row_whose_reason_is_not_measured_is_left_out():
    m = _with("annotators.annotators.p_sim_eval.agreement", 0.708)  # no "crowd" in these metrics
    assert C.reasons(m, C.claims(m)) == ""


def test_an_absent_fall_says_whether_the_picks_true_reward_fell():
    m = _with("overoptimisation.verdict.human.significant_fall", False)
    m["overoptimisation"]["mean_true_reward"] = [-0.2, 0.4, 0.0]  # the picks lose 0.4 of the 0.6 they gained
    why = C.reasons(m, C.claims(m))
    assert "lose 0.40 of the 0.60 they gained" in why and "little to lose" not in why


def test_picks_highest_at_the_last_n_are_not_said_to_peak_there():
    m = _with("overoptimisation.verdict.human.significant_fall", False)
    m["overoptimisation"]["mean_true_reward"] = [-0.2, 0.4, 0.58]
    why = C.reasons(m, C.claims(m))
    assert "goes from -0.20 (n = 1) to 0.58 at the last n = 64, its highest" in why and "peaks at 0.58" not in why


def test_levels_off_name_the_farthest_row():
    m = copy.deepcopy(GOOD)
    m["leaderboard"]["rows"][2]["win_rate_p_sim_eval"] = 50  # best-of-n: the judges 16 points above the people
    why = C.reasons(m, C.claims(m))
    assert "(chapter 14): The judges' win-rates run" in why and "the farthest row is best_of_n (+16.0)" in why
    m["leaderboard"]["rows"][2]["se_gap_p_sim_eval"] = 2.71
    assert "the farthest row is best_of_n (+16.0 ± 2.7, paired standard error)" in C.reasons(m, C.claims(m))


def test_levels_verdict_is_within_noise_where_the_farthest_rows_interval_holds_the_bound():
    rows = lambda m: {r["key"]: r for r in C.claims(m) if r["key"]}  # noqa: E731
    m = copy.deepcopy(GOOD)
    assert rows(m)["levels"]["interval"] is None and rows(m)["levels"]["settled"] is None  # an older build's metrics
    for r in m["leaderboard"]["rows"]:
        r["se_gap_p_sim_eval"] = 1.0
    m["leaderboard"]["rows"][2]["win_rate_p_sim_eval"] = 45.5  # best-of-n 11.5 points above the people
    levels = rows(m)["levels"]
    assert levels["met"] is False and levels["interval"] == [9.5, 13.5] and levels["settled"] is False
    assert levels["this build"] == "9 of 10 rows (not: best_of_n), the farthest 11.5 points off (9.5–13.5)"
    m["leaderboard"]["rows"][2]["se_gap_p_sim_eval"] = 0.5  # 10.5–12.5: clear of the bound
    assert rows(m)["levels"]["settled"] is True
    m["leaderboard"]["rows"][2]["win_rate_p_sim_eval"] = 34.0  # every gap 4 points or less: met, 2–6 holds no bound
    levels = rows(m)["levels"]
    assert levels["met"] is True and levels["interval"] == [2.0, 6.0] and levels["settled"] is True


def test_a_single_judge_fall_is_set_beside_the_other_label_variants():
    m = copy.deepcopy(GOOD)
    m["label_noise"] = {"n": [1, 16, 64], "variants": [
        {"labels": "single judge", "win at peak": 34.0, "peak n": 16, "fall": 2.5, "fall > 2 se": True,
         "RM accuracy vs R*": 0.699},
        {"labels": "pool + 25 % flips", "win at peak": 33.5, "peak n": 16, "fall": 1.0, "fall > 2 se": False,
         "RM accuracy vs R*": 0.705}],
        "win_rate": {"single judge": [19.0, 34.0, 31.5], "pool + 25 % flips": [19.0, 33.5, 32.5]},
        "standard_error": {"single judge": [2.8, 3.4, 3.3], "pool + 25 % flips": [2.8, 3.3, 3.3]}}
    why = C.reasons(m, C.claims(m))
    assert "(chapter 17): Chapter 17 fits the same reward model on 2 kinds of labels" in why
    assert "within 1.0 points of one another at every n (the most at n = 64)" in why
    assert "69.9–70.5 %" in why and "falls 2.5 points from its peak; the others fall 1.0." in why
    assert "less than one win-rate's standard error (3.3 points)" in why
    m["label_noise"]["win_rate"]["pool + 25 % flips"] = [19.0, 40.0, 39.5]  # labels that move the curve
    assert "standard error" not in C.reasons(m, C.claims(m))


def _loose(m):
    return {r["claim"] for r in C.claims(m) if r["settled"] is False}


def test_metrics_without_intervals_settle_nothing_but_the_methods_rows():
    """Older metrics files carry no intervals: their rows read as before; a method's gain always has its noise."""
    rows = C.claims(GOOD)
    assert {r["claim"] for r in rows if r["settled"] is not None} == {
        "PPO beats SFT 10k", "best-of-n beats SFT 10k", "DPO beats SFT 10k", "expert iteration beats SFT 10k",
        "accuracy against people rises with the pairs"}
    assert not _loose(GOOD)


@pytest.mark.parametrize("path, value, claim, met", [
    ("annotators.agreement_intervals", {"p_sim_eval": [0.61, 0.69], "p_sim_single": [0.63, 0.69]},
     "the judges agree with the people's majority", True),
    ("annotators.agreement_intervals", {"p_sim_eval": [0.63, 0.67], "p_sim_single": [0.60, 0.70]},
     "a single judge agrees as often, with less variance than the pool", True),
    ("leaderboard.spearman_interval", {"value": 0.95, "low": 0.75, "high": 0.99},
     "the judges rank the methods as the people do", True),
    ("end_to_end.correlations.spearman", {"value": 0.6, "low": 0.3, "high": 0.85},
     "trained on the judges' labels, methods rank as trained on people's", False),
    ("leaderboard.versus_sft10k_board", [{"method": "ppo", "difference": 9.0, "se": 1.0},
                                         {"method": "expert_iteration", "difference": 4.0, "se": 1.2}],
     "PPO beats SFT 10k", True),
])
def test_an_interval_that_holds_the_targets_bound_leaves_its_verdict_within_noise(path, value, claim, met):
    m = _with(path, value)
    rows = {r["claim"]: r for r in C.claims(m)}
    assert rows[claim]["met"] is met and _loose(m) == {claim}
    assert C.shown(list(rows.values())).loc[claim, "met"] == ("yes" if met else "no") + " (within noise)"
    text = C.sentence(list(rows.values()))
    assert "1 of the verdicts is within noise" in text and f"{claim} ({'met' if met else 'missed'})" in text


def test_an_interval_clear_of_the_target_settles_its_verdict_either_way():
    m = _with("annotators.agreement_intervals", {"p_sim_eval": [0.690, 0.73], "p_sim_single": [0.63, 0.69]})
    m["annotators"]["annotators"]["p_sim_eval"]["agreement"] = 0.71
    rows = {r["claim"]: r for r in C.claims(m)}
    row = rows["the judges agree with the people's majority"]
    assert row["met"] is False and row["settled"] is True and row["this build"] == "71.0 % (69.0–73.0)"
    assert rows["a single judge agrees as often, with less variance than the pool"]["settled"] is True
    assert "within noise" not in C.sentence(list(rows.values()))


def test_a_verdict_that_misses_on_another_count_is_not_within_noise():
    """The ranking's row misses with too narrow a spread whatever rho's interval; the single judge's with more
    variance than the pool whatever its agreement's."""
    m = _with("leaderboard.spearman_interval", {"value": 0.95, "low": 0.75, "high": 0.99})
    m["leaderboard"]["rows"] = [r for r in m["leaderboard"]["rows"] if r["method"] not in ("base", "quark", "feedme")]
    m["annotators"]["agreement_intervals"] = {"p_sim_eval": [0.63, 0.67], "p_sim_single": [0.60, 0.70]}
    m["annotators"]["annotators"]["p_sim_single"]["variance"] = 0.3
    rows = {r["claim"]: r for r in C.claims(m)}
    for claim in ("the judges rank the methods as the people do",
                  "a single judge agrees as often, with less variance than the pool"):
        assert rows[claim]["met"] is False and rows[claim]["settled"] is None, claim
