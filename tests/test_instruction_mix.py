import math

import pytest

from farmlib.evaluation.instruction_mix import MIXES, mix_table, mix_win_rate, rank_agreement, single_families


def _ann(family, wins, losses):
    return [{"dataset": family, "preference": 2}] * wins + [{"dataset": family, "preference": 1}] * losses


def test_reweighting_on_hand_made_annotations():
    ann = _ann("a", 3, 1) + _ann("b", 1, 3)  # family a wins 75 %, b 25 %
    win, se = mix_win_rate(ann, {"a": 1, "b": 1})
    assert win == pytest.approx(50.0)
    assert mix_win_rate(ann, {"a": 1, "b": 0})[0] == pytest.approx(75.0)  # all weight on one family
    assert mix_win_rate(ann, {"a": 3, "b": 1})[0] == pytest.approx(62.5)  # weights need not sum to 1
    var = 0.75 / 3  # sample variance of [1, 1, 1, 0] and of [1, 0, 0, 0]
    assert se == pytest.approx(100 * math.sqrt(0.25 * var / 4 + 0.25 * var / 4))
    ties = [{"dataset": "a", "preference": 1.5}, {"dataset": "a", "preference": None}]
    assert mix_win_rate(ties, {"a": 1})[0] == pytest.approx(50.0)  # a tie is half, a missing label left out


def test_a_mix_needs_its_families():
    with pytest.raises(ValueError, match="families \\['b'\\]"):
        mix_win_rate(_ann("a", 1, 1), {"a": 1, "b": 1})


def test_named_mixes_cover_every_family_and_the_table_has_a_column_each():
    from farmlib.world.families import FAMILIES

    for w in MIXES.values():
        assert set(w) == set(FAMILIES) and all(v > 0 for v in w.values())
    ann = [a for f in FAMILIES for a in _ann(f, 1, 1)]
    t = mix_table({"m": ann})
    assert list(t.columns) == [c for m in MIXES for c in (m, f"{m} se")]
    assert t.loc["m", "demo traffic"] == pytest.approx(50.0)


def test_single_families_rank_methods_and_a_tied_family_ranks_nothing():
    import warnings

    import pandas as pd

    # family a orders three methods as the demo mix does, family b the other way, family c ties them all
    ann = {m: _ann("a", 1 + i, 3 - i) + _ann("b", 3 - i, 1 + i) + _ann("c", 2, 2) for i, m in enumerate("xyz")}
    demo = pd.Series({"x": 10.0, "y": 20.0, "z": 30.0})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's constant-input warning would print on the chapter's page
        row = single_families(ann, {"demo traffic": demo, "evaluation": demo[["z", "y", "x"]]})
    assert row["a"] == pytest.approx(1.0) and row["b"] == pytest.approx(-1.0) and math.isnan(row["c"])
    assert row["all families (evaluation)"] == pytest.approx(1.0)  # aligned by method, not by position
    assert rank_agreement(demo, pd.Series({"z": 5.0, "x": 1.0, "q": 0.0})) == pytest.approx(1.0)  # x, z shared
