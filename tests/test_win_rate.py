import json
import math
import random
import subprocess
import sys

import pandas as pd
import pytest

from farmlib.cli import main
from farmlib.data import DataFormatError
from farmlib.evaluation.paired import paired_difference
from farmlib.evaluation.win_rate import leaderboard_from_files, plus_minus, preference_score, win_rate


def test_ties_count_half_and_nulls_are_left_out():
    wr = win_rate([2, 1, 0, 1.5, None, float("nan"), 2.0])
    assert wr.n_total == 5 and wr.n_wins == 2 and wr.n_draws == 2
    assert wr.win_rate == pytest.approx(100 * (1 + 0 + 0.5 + 0.5 + 1) / 5)
    scores = [1, 0, 0.5, 0.5, 1]
    sd = math.sqrt(sum((s - 0.6) ** 2 for s in scores) / 4)
    assert wr.standard_error == pytest.approx(100 * sd / math.sqrt(5))
    with pytest.raises(ValueError):
        preference_score(3)


def _ann(prefs, gen="m", out2="abcd"):
    return [{"instruction": f"q{i}", "output_1": "x", "output_2": out2, "generator_1": "ref", "generator_2": gen,
             "preference": p} for i, p in enumerate(prefs)]


def test_a_table_cell_never_breaks_inside_a_number_and_its_error():
    assert plus_minus(28.46, 2.25) == "28.5\u00a0±\u00a02.2"  # rounds like the prose (half to even at .x5)
    assert plus_minus(3.0, 1.5, sign=True) == "+3.0\u00a0±\u00a01.5" and plus_minus(-0.3, 0.07, 2, True) == "-0.30\u00a0±\u00a00.07"
    assert " " not in plus_minus(-12.0, 3.0, sign=True)  # no breaking space: a narrow column wraps between cells


def test_leaderboard_on_hand_made_file(tmp_path):
    f = tmp_path / "a.json"
    f.write_text(json.dumps(_ann([2, 2, 1, 1.5, None]) + _ann([1, 1], gen="other", out2="ab")))
    board = leaderboard_from_files([f])
    assert list(board.columns) == ["name", "win_rate", "standard_error", "n_total", "avg_length"]
    row = board.set_index("name").loc["m"]
    assert row.win_rate == pytest.approx(62.5) and row.n_total == 4 and row.avg_length == 4
    assert board.iloc[0]["name"] == "m"


def test_leaderboard_matches_alpaca_eval_on_real_files(shared):
    files = sorted(shared.glob("alpaca_eval/results/*/alpaca_eval_gpt4_annotations.json"))
    board = leaderboard_from_files(files).set_index("name")
    # AlpacaEval's published win-rates for these annotation files
    assert board.loc["gpt4", "win_rate"] == pytest.approx(95.28, abs=0.01)
    assert board.loc["alpaca-7b", "win_rate"] == pytest.approx(26.46, abs=0.01)
    assert board.loc["gpt-3.5-turbo-0301", "n_total"] == 804  # one null preference left out


def test_malformed_annotations_name_file_and_record(tmp_path, capsys):
    f = tmp_path / "bad.json"
    recs = _ann([2, 1])
    recs[1]["preference"] = "left"
    f.write_text(json.dumps(recs))
    with pytest.raises(DataFormatError, match=r"bad\.json: record 1: field 'preference'"):
        leaderboard_from_files([f])
    assert main(["leaderboard", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "record 1" in err
    del recs[1]["generator_2"]
    f.write_text(json.dumps(recs))
    with pytest.raises(DataFormatError, match="record 1: missing field 'generator_2'"):
        leaderboard_from_files([f])


def test_farm_leaderboard_console_script(tmp_path):
    f = tmp_path / "a.json"
    f.write_text(json.dumps(_ann([2, 1, 2, 2])))
    out = subprocess.run([sys.executable, "-m", "farmlib.cli", "leaderboard", str(f), "-o", str(tmp_path / "o.csv")],
                         capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "name,win_rate,standard_error,n_total,avg_length"
    assert out.splitlines()[1].startswith("m,75.0,")
    assert (tmp_path / "o.csv").read_text() == out


def _seed_runs(scores: dict[str, list[list[float]]]):
    """``seed_spread``-shaped rows from each method's per-seed instruction scores (people only)."""
    rows = []
    for name, seeds in scores.items():
        for k, s in enumerate(seeds):
            wr = win_rate(2.0 if x == 1 else 1.5 if x == 0.5 else 1.0 for x in s)
            rows.append({"method": name, "seed": k, "win_rate_human": wr.win_rate, "se_human": wr.standard_error,
                         "scores_human": s})
    return pd.DataFrame(rows)


def test_versus_baseline_counts_the_evaluation_noise_of_a_paired_difference():
    from farmlib.evaluation.leaderboard import versus_baseline, versus_sentence

    rng = random.Random(0)
    base = [[float(rng.random() < 0.3) for _ in range(400)]] * 3  # three seeds that agree exactly
    shifted = [list(s) for s in base]
    for s in shifted:  # the method wins 8 more instructions of 400 on every seed: +2 points, no seed noise
        flips = [i for i, x in enumerate(s) if x == 0][:8]
        for i in flips:
            s[i] = 1.0
    noisy = [[float(rng.random() < 0.3) for _ in range(400)] for _ in range(3)]  # unrelated draws
    t = versus_baseline(_seed_runs({"sft10k": base, "same_plus_2": shifted, "noisy": noisy}))
    r = t.loc["same_plus_2"]
    assert r["difference"] == pytest.approx(2.0) and r["training"] == 0
    d = [1.0] * 8 + [0.0] * 392  # the paired differences, by hand
    assert r["evaluation"] == pytest.approx(100 * math.sqrt(sum((x - 0.02) ** 2 for x in d) / 399 / 400))
    assert r["verdict"] == "better"  # 2 points, paired evaluation noise 0.7: a clean win
    n = t.loc["noisy"]
    assert n["evaluation"] > 2 and n["training"] > 0  # unpaired draws: noise a seed-only test would not see
    assert (n["verdict"] == "within noise") == (abs(n["difference"]) <= 2 * n["noise"])
    assert "**same_plus_2** +2.0 points" in versus_sentence(t) and "better than SFT 10k" in versus_sentence(t)


def test_versus_on_board_pairs_two_methods_on_their_instructions(monkeypatch):
    from farmlib.evaluation import leaderboard

    # each method's "outputs" are its per-instruction results against the reference: 1 won, 0 lost
    won = {"sft10k": [1.0] * 100 + [0.0] * 300, "up": [1.0] * 112 + [0.0] * 288, "same": [1.0] * 100 + [0.0] * 300}

    class Farm:
        def evaluate(self, outs, annotator):
            return None, [{"preference": 2.0 if x else 1.0} for x in outs]

    monkeypatch.setattr(leaderboard, "outputs", lambda farm, name: won[name])
    t = leaderboard.versus_on_board(Farm(), ["sft10k", "up", "same"])
    assert list(t.index) == ["up", "same"]
    assert t.loc["up", "difference"] == pytest.approx(3.0)  # 12 more of 400, nothing lost: se 0.85
    assert t.loc["up", "se"] == pytest.approx(100 * math.sqrt(0.03 * 0.97 / 399))
    assert t.loc["up", "verdict"] == "better"  # unpaired, 3 points is inside 2 × 3.2
    assert t.loc["same", "difference"] == 0 and t.loc["same", "verdict"] == "within noise"


def test_paired_difference_leaves_out_what_both_share():
    a, b = [1.0, 1.0, 0.0, 0.5, None], [1.0, 0.0, 0.0, 0.0, 1.0]  # the last instruction has no score for a
    mean, se = paired_difference(a, b)
    d = [0.0, 1.0, 0.0, 0.5]
    assert mean == pytest.approx(100 * sum(d) / 4)
    assert se == pytest.approx(100 * math.sqrt(sum((x - 0.375) ** 2 for x in d) / 3 / 4))
    assert paired_difference([1.0] * 10, [1.0] * 10) == (0.0, 0.0)  # the same results: no noise at all
