"""Expert iteration's rounds: each samples from the last round's policy, fewer rounds are a prefix of more, and
chapter 10's table and sentences read the rounds as they are."""

import pytest

from farmlib.evaluation import expert_iteration_report as report


def _row(k, w, d, se, r_win=None, d1=0.0, se1=1.0):
    row = {"round": k, "candidates' reward": -1.0 + 0.1 * k, "winners' reward": -0.7 + 0.1 * k,
           "win_rate_human": w, "d_human": d, "se_human": se, "d1_human": d1, "se1_human": se1}
    if r_win is not None:
        row |= {"winners' R*": r_win, "eval R*": r_win - 0.2}
    return row


def test_round_sentence_reads_a_climb_beyond_noise():
    rows = [_row(1, 32.0, 4.8, 1.6, 0.55), _row(2, 34.2, 7.0, 1.6, 0.74), _row(3, 35.5, 8.2, 1.7, 0.79, d1=3.4, se1=1.5)]
    text = report.round_sentence(rows)
    assert "32.0 → 34.2 → 35.5 %" in text and "+8.2 ± 1.7" in text and "a clear gain" in text
    assert "+3.4 ± 1.5 points" in text and "more than twice its noise" in text and "0.55 → 0.79" in text and "truly better" in text


def test_round_sentence_says_when_later_rounds_add_nothing_or_lose():
    flat = report.round_sentence([_row(1, 30.0, 2.5, 1.6), _row(2, 30.5, 3.0, 1.6, d1=0.5, se1=1.2)])
    assert "within noise" in flat and "less than twice its noise" in flat and "R*" not in flat
    worse = report.round_sentence([_row(1, 33.0, 6.0, 1.5, 0.6), _row(2, 26.0, -1.0, 1.5, 0.5, d1=-7.0, se1=1.4)])
    assert "a loss of more than twice its noise" in worse and "did not get truly better" in worse
    one = report.round_sentence([_row(1, 30.0, 4.0, 1.5)])
    assert "a clear gain" in one and "From round 1" not in one


def test_round_table_has_a_row_per_round_and_the_paired_difference():
    table = report.round_table([_row(1, 32.0, 4.8, 1.6, 0.55), _row(2, 34.2, 7.0, 1.6, 0.74)])
    assert list(table.index) == ["round 1", "round 2"]
    assert table.loc["round 2", "people (vs SFT 10k)"] == "34.2 (+7.0\u00a0±\u00a01.6)"
    assert table.loc["round 1", "winners' R*"] == 0.55


def test_distil_sentence_share_and_beyond_one_round():
    assert "kept 50 %" in report.distil_sentence(-1.0, -0.6, -0.8, "ei", 8)
    assert "more than one round" in report.distil_sentence(-1.0, -0.6, -0.5, "ei", 8, rounds=3)
    one = report.distil_sentence(-1.0, -0.6, -0.5, "ei", 8)  # one round: no later round to credit
    assert "125 % of the reranker's gain, its samples scoring above the winners it learned from" in one
    assert "later rounds" not in one
    assert "nothing to distil" in report.distil_sentence(-1.0, -1.0, -0.9, "ei", 8)


def test_rounds_sample_from_the_last_policy_and_fewer_rounds_are_a_prefix(micro_farm):
    from farmlib import methods
    from farmlib.methods import expert_iteration

    rm = methods.reward_model_path(micro_farm)
    two = expert_iteration.iterate(micro_farm, rm, micro_farm.method_config("expert_iteration", {"rounds": 2}))
    assert [h["round"] for h in two] == [1, 2]
    assert two[0]["sampler"] == micro_farm.sft_model() and two[1]["sampler"] == two[0]["policy"]
    assert two[1]["policy"] != two[0]["policy"]
    one = expert_iteration.train(micro_farm, rm, micro_farm.method_config("expert_iteration", {"rounds": 1}))
    assert one == two[0]["policy"]  # round 1 is keyed without the number of rounds: reused
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        expert_iteration.iterate(micro_farm, rm, micro_farm.method_config("expert_iteration", {"rounds": 0}))
