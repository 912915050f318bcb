"""Chapter 15's length findings on hand-made tables: every branch that words a conclusion."""

import pandas as pd
import pytest

from farmlib.evaluation import length_findings as L

A = ["p_sim_eval", "human"]


def _board() -> pd.DataFrame:
    rows = {
        "ppo": {"length": 300.0, "raw p_sim_eval": 60.0, "LC p_sim_eval": 50.0, "LC se p_sim_eval": 2.0,
                "slope p_sim_eval": 0.5, "raw human": 55.0, "LC human": 45.0, "LC se human": 2.0, "slope human": 0.4},
        "dpo": {"length": 200.0, "raw p_sim_eval": 50.0, "LC p_sim_eval": 49.0, "LC se p_sim_eval": 2.0,
                "slope p_sim_eval": 0.1, "raw human": 48.0, "LC human": 47.5, "LC se human": 2.0, "slope human": 0.1},
        "sft10k": {"length": 100.0, "raw p_sim_eval": 40.0, "LC p_sim_eval": 45.0, "LC se p_sim_eval": 2.0,
                   "slope p_sim_eval": 0.3, "raw human": 40.0, "LC human": 46.0, "LC se human": 2.0, "slope human": 0.2},
        "expert": {"length": 50.0, "raw p_sim_eval": 90.0, "LC p_sim_eval": 90.0, "LC se p_sim_eval": 1.0,
                   "slope p_sim_eval": 0.0, "raw human": 90.0, "LC human": 90.0, "LC se human": 1.0, "slope human": 0.0},
    }
    return pd.DataFrame(rows).T


def test_mean_length_in_chars_and_words():
    outs = [{"output": "ab cd"}, {"output": "abc"}]
    assert L.mean_length(outs, "chars") == 4.0
    assert L.mean_length(outs, "words") == 1.5


def test_spearman_leaves_out_reference_and_expert():
    rho = L.spearman(_board(), A)
    assert rho["human"][0] == pytest.approx(1.0)  # ppo > dpo > sft10k in both length and raw win-rate
    assert rho["human"][1] == pytest.approx(-0.5)


def test_moved_by_length_and_sentence():
    b = _board()
    assert L.moved_by_length(b) == ["ppo", "sft10k"]  # dpo moves 0.5 (< a point); expert not at all
    s = L.board_sentence(b, A, L.spearman(b, A), 3)
    assert "**ppo** (+10.0 points" in s and "**sft10k** (-6.0)" in s and "people: ppo, sft10k." in s
    b.loc["ppo", "LC human"] = b.loc["sft10k", "LC human"] = 50.0
    b.loc["ppo", "raw human"] = b.loc["sft10k", "raw human"] = 50.5
    assert "under people: none." in L.board_sentence(b, A, L.spearman(b, A), 3)
    b["LC human"] = b["raw human"] - 1.0  # every method gains from length
    assert "no method loses from controlling for length" in L.board_sentence(b, A, L.spearman(b, A), 3)


@pytest.mark.filterwarnings("ignore:An input array is constant")
def test_constant_columns_word_an_undefined_correlation():
    b = _board()
    b["length"] = 100.0
    assert "undefined (a constant column)" in L.board_sentence(b, A, L.spearman(b, A), 3)


def test_by_side_counts_each_side():
    r = lambda o1, o2, p: {"output_1": o1, "output_2": o2, "preference": p}  # noqa: E731
    anns = {("m", "human"): [r("a", "bbb", 2), r("a", "bbb", 1), r("aaa", "b", 1), r("aa", "bb", 2), r("a", "b", None)]}
    side = L.by_side(anns, ["m"], ["human"])["human"]
    assert side == {"method_longer": 2, "method_chosen": 0.5, "reference_longer": 1, "reference_chosen": 1.0}


def test_against_paper_inside_above_below():
    pooled = {"human": {"p_longer": 0.6, "p_longer_interval": (0.55, 0.65)},
              "p_sim_eval": {"p_longer": 0.5, "p_longer_interval": (0.45, 0.55)}}
    assert "the paper's value lies inside" in L.against_paper(pooled, "human", "p_longer")
    assert "the paper's 0.64 lies above" in L.against_paper(pooled, "p_sim_eval", "p_longer")
    pooled["p_sim_eval"]["p_longer_interval"] = (0.7, 0.8)
    assert "lies below" in L.against_paper(pooled, "p_sim_eval", "p_longer")
    assert L.paper_value("nobody", "p_longer") == "–"


def test_stages_sentence_and_old_ppo_note():
    stages = pd.DataFrame({"length": [100.0, 150.0, 200.0, 100.0, 130.0]},
                          index=["best-of-1", "best-of-4", "best-of-16", "PPO step 0 (SFT 10k)", "PPO step 40"])
    s = L.stages_sentence(stages, [0, 40], 32, 16)
    assert "from 100 at n = 1 to 200 at n = 16 (+100%)" in s and "after 40 steps (+30%)" in s
    assert "trained before PPO saved" in s
    stages.loc["PPO step 20"] = 120.0
    assert "trained before" not in L.stages_sentence(stages, [0, 20, 40], 32, 16)
