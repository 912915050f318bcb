"""The sentences under chapters 1-3 and 14's figures, on hand-made tables."""

import pandas as pd

from farmlib.evaluation import captions


def test_writers_caption_orders_writers_and_finds_the_widest_family():
    writers = pd.DataFrame([
        {"writer": "expert", "family": "sum", "R*": 2.0}, {"writer": "expert", "family": "describe", "R*": 1.0},
        {"writer": "reference", "family": "sum", "R*": 0.5}, {"writer": "reference", "family": "describe", "R*": 0.9},
    ])
    s = captions.writers_caption(writers)
    assert s.startswith("Mean R* on the validation instructions: expert 1.50, reference 0.70.")
    assert "most on *sum* (1.50" in s and "least on *describe* (0.10)" in s


def test_family_share_caption():
    shares = pd.DataFrame({"sft": [0.5, 0.5], "eval": [0.6, 0.4], "val": [0.5, None]}, index=["sum", "describe"])
    s = captions.family_share_caption(shares)
    assert "at most 50.0 points (*describe*)" in s and "as little as 10.0 (*sum*)" in s


def test_loss_caption_branches():
    s = captions.loss_caption([6.0, 3.0, 2.5], 12000, [4.0, 2.0], 5.857)
    assert "over 5.9 epochs" in s
    assert "from 6.00 to 2.50 nats per token over 12,000 tokens" in s and "ending below" in s
    assert "ending above" in captions.loss_caption([6.0, 1.5], 100, [4.0, 2.0], 6)


def test_family_win_caption():
    fam = pd.DataFrame({"base": [0.0, 10.0], "sft10k": [20.0, 60.0], "expert": [90.0, 100.0]}, index=["sum", "describe"])
    s = captions.family_win_caption(fam)
    assert "most often on *describe* (60 %) and least on *sum* (20 %)" in s
    assert "base 5 %, sft10k 40 %, expert 95 %" in s
    fam["sft10k"] = 0.0
    assert "sft10k wins 0 % on every family" in captions.family_win_caption(fam)


def test_leaderboard_caption_counts_clear_wins_and_skips_missing_annotators():
    board = pd.DataFrame({"method": ["ppo", "dpo", "reference", "expert"], "win_rate_p_sim_eval": [60.0, 52.0, 50.0, 90.0],
                          "se_p_sim_eval": [2.0, 2.0, 0.0, 1.0]})
    s = captions.leaderboard_caption(board)
    assert "under `p_sim_eval` the top method is ppo (60.0 ± 2.0 %), and 1 of 2 methods beat" in s
    assert "human" not in s


def test_split_overlap_counts_shared_and_recurring_instructions():
    def rec(i):
        return {"instruction": f"task {i}", "input": ""}

    splits = {"eval": [rec(0), rec(1)], "sft": [rec(2), rec(2), rec(3)], "val": [rec(1), rec(3)]}
    o = captions.split_overlap(splits)
    assert o["pairs"] == {"eval∩sft": 0, "eval∩val": 1, "sft∩val": 1}
    assert o["eval_overlap"] == 1
    # rec(2) twice in sft, rec(3) in sft and val: two of five training records repeat an earlier instruction
    assert (o["recurring"], o["training_records"]) == (2, 5)
    assert (o["val_shared"], o["val_instructions"]) == (1, 2)  # rec(3) is asked in sft too; rec(1) only in eval
    s = captions.split_overlap_caption(o)
    assert "**1 instruction of `eval` is found in another split**" in s and "2 of the 5 records" in s and "40.0%" in s
    assert "1 of `val`'s 2 instructions (50%) are also asked in a training split" in s
    clean = captions.split_overlap({"eval": [rec(0)], "sft": [rec(1)]})
    assert captions.split_overlap_caption(clean).startswith("No instruction of `eval` is found in another split; 0 of the 1")
    assert "`val`" not in captions.split_overlap_caption(clean)


def test_degenerate_caption_names_the_closest_call_or_the_corruption_that_wins():
    d = pd.DataFrame({"crowd majority": [1.0, 0.9], "one person": [0.8, 0.7]}, index=["loop", "padded"])
    s = captions.degenerate_caption(d)
    assert "at least 90.0 % of pairs (the closest call: *padded*)" in s and "at least 70.0 %" in s and "R*" not in s
    d["R*"] = [1.0, 0.99]
    assert "R* itself prefers it in at least 99.0 % (*padded*)" in captions.degenerate_caption(d)
    d.loc["padded", "crowd majority"] = 0.4
    s = captions.degenerate_caption(d)
    assert s.startswith("**Not every corruption loses**") and "*padded*" in s and "only 40.0 %" in s
