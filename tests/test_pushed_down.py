import pytest

from farmlib.evaluation import pushed_down as PD


def _cands(outputs):  # outputs[k][i]: answer k to instruction i
    return [[{"instruction": f"q{i}", "input": "", "output": o} for i, o in enumerate(row)] for row in outputs]


def test_pairs_take_the_best_against_the_worst_or_another():
    cands = _cands([["a0", "b0"], ["a1", "b1"], ["a2", "b2"]])
    rewards = [[0.1, 0.9], [0.5, -1.0], [-0.3, 0.2]]  # q0: best a1, worst a2; q1: best b0, worst b1
    worst = PD.pairs_from_scores(cands, rewards, "worst")
    assert [(p["output_1"], p["output_2"]) for p in worst] == [("a1", "a2"), ("b0", "b1")]
    assert all(p["preference"] == 1 and p["instruction"] == f"q{i}" for i, p in enumerate(worst))
    other = PD.pairs_from_scores(cands, rewards, "random", seed=3)
    assert [p["output_1"] for p in other] == ["a1", "b0"]
    assert all(p["output_2"] != p["output_1"] for p in other)
    assert other == PD.pairs_from_scores(cands, rewards, "random", seed=3)  # seeded


def test_pairs_skip_two_answers_that_read_the_same_and_name_a_bad_kind():
    cands = _cands([["same", "x"], ["same", "y"]])
    pairs = PD.pairs_from_scores(cands, [[1.0, 1.0], [0.0, 0.0]], "worst")
    assert [p["output_1"] for p in pairs] == ["x"]
    with pytest.raises(ValueError, match="rejected is 'best'"):
        PD.pairs_from_scores(cands, [[1.0, 1.0], [0.0, 0.0]], "best")


ROWS = [
    {"learnt from": PD.WINNERS, "gain": 4.8, "gain_se": 1.6, "disfluent": 0.03},
    {"learnt from": PD.REJECTED["worst"], "gain": -8.8, "gain_se": 1.9, "vs_winners": -13.5, "vs_winners_se": 2.0,
     "disfluent": 0.34, "chosen": -0.30, "rejected": -2.07},
    {"learnt from": PD.REJECTED["random"], "gain": -0.8, "gain_se": 1.6, "vs_winners": -5.5, "vs_winners_se": 1.5,
     "disfluent": 0.16, "chosen": -0.18, "rejected": -0.82},
]


def test_the_sentence_reads_each_row_against_the_winners():
    text = PD.sentence(ROWS, 0.06)
    assert "gains +4.8 ± 1.6 points over SFT 10k under the people (beyond twice its noise)" in text
    assert "the winner against the worst: -8.8 ± 1.9 over SFT 10k and -13.5 ± 2.0 against the winners alone" in text
    assert "34% of its answers disfluent (SFT 10k 6%)" in text
    assert "lowered the winners' own probability too (implicit reward -0.30)" in text
    assert "costs 5.5 to 13.5 points against the winners alone here, and the probability it took" in text


def test_the_sentence_says_so_when_the_pushed_down_half_is_noise():
    rows = [dict(ROWS[0], gain=0.8, gain_se=1.7),
            dict(ROWS[2], vs_winners=-1.0, vs_winners_se=1.5, chosen=0.2, rejected=-0.5)]
    text = PD.sentence(rows, 0.06)
    assert "(within twice its noise)" in text and "rose to +0.20 and the losers' fell to -0.50" in text
    assert "neither helps nor hurts beyond the noise" in text and "costs" not in text
