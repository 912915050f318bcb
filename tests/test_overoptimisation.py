"""Chapter 16's over-optimisation findings on hand-made curves: every branch that words a conclusion."""

import pandas as pd
import pytest

from farmlib.evaluation import overoptimisation as O


def _curve(win, se=2.0, true=(0.1, 0.3, 0.2)) -> pd.DataFrame:
    n = [1, 2, 4][:len(win)]
    return pd.DataFrame({"KL bound": [0.0, 0.19, 0.64][:len(win)], "surrogate reward": [0.0, 0.5, 1.0][:len(win)],
                         "se surrogate": 0.1, "true reward R*": list(true)[:len(win)], "se R*": 0.01,
                         "length": 100.0, "win-rate human": win, "se human": se}, index=pd.Index(n, name="n"))


def test_mean_se():
    m, se = O.mean_se([1.0, 2.0, 3.0])
    assert m == 2.0 and se == pytest.approx(1 / 3 ** 0.5)
    assert O.mean_se([5.0]) == (5.0, 0.0)


@pytest.mark.parametrize("win, se, phrase, significant", [
    ([40.0, 60.0, 45.0], 2.0, "a fall larger than two standard errors — over-optimisation.", True),
    ([40.0, 60.0, 57.0], 2.0, "by less than two standard errors", False),
    ([40.0, 50.0, 60.0], 2.0, "no sign of over-optimisation up to n = 4.", False),
])
def test_verdict_and_sentence(win, se, phrase, significant):
    c = _curve(win, se)
    v = O.verdict(c, ["human"])
    assert v["human"]["significant_fall"] is significant
    s = O.win_rate_sentence(c, v, 4, 64)
    assert phrase in s and "one standard error of a win-rate is about 2 points" in s


def test_reward_sentence_fall_and_ppo():
    c = _curve([40.0, 60.0, 45.0])
    s = O.reward_sentence(c, 4, None, 0.64)
    assert "highest point is at n = 2 (0.300)" in s and "0.100 below it (more than two standard errors" in s
    assert "PPO" not in s
    ppo = pd.DataFrame({"KL (held-out)": [0.0, 2.5], "true reward R*": [0.1, 0.05]}, index=[0, 40])
    s = O.reward_sentence(_curve([40.0, 60.0, 45.0], true=(0.1, 0.2, 0.195)), 4, ppo, 0.64)
    assert "less than two standard errors" in s and "held-out KL of 2.5 nats after 40 steps" in s


def test_shown_fits_one_column_per_quantity():
    t = O.shown(_curve([40.0, 60.0, 45.0]), "KL bound", ["human"])
    assert list(t.columns) == ["KL bound", "surrogate reward", "true reward R*", "length (chars)", "win-rate human (%)"]
    assert t.loc[2, "win-rate human (%)"] == "60.0 ± 2.0"
