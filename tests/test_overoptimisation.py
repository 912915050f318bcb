"""Chapter 16's over-optimisation findings on hand-made curves: every branch that words a conclusion."""

import math

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
    ([40.0, 60.0, 45.0], 2.0, "a fall of 15.0 points, larger than two standard errors of the fall (± 2.8) — "
                              "over-optimisation.", True),
    ([40.0, 60.0, 57.0], 2.0, "3.0 points below its peak, less than two standard errors of the fall (± 2.8;", False),
    ([40.0, 50.0, 60.0], 2.0, "from 40.0 % at n = 1 to 60.0 % at n = 4, its highest: no sign of over-optimisation.",
     False),
    ([40.0, 60.0, 60.0], 2.0, "a high of 60.0 % at n = 2 and ends at 60.0 % at n = 4: as high at the largest n as anywhere",
     False),
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
    rising = O.reward_sentence(_curve([40.0, 50.0, 60.0], true=(0.1, 0.2, 0.3)), 4, None, 0.64)
    assert "its highest point is the last, n = 4: it has not turned down." in rising and "sits" not in rising
    ppo = pd.DataFrame({"KL (held-out)": [0.0, 2.5], "true reward R*": [0.1, 0.05]}, index=[0, 40])
    s = O.reward_sentence(_curve([40.0, 60.0, 45.0], true=(0.1, 0.2, 0.195)), 4, ppo, 0.64)
    assert "less than two standard errors" in s and "held-out KL of 2.5 nats after 40 steps" in s


def test_shown_fits_one_column_per_quantity():
    t = O.shown(_curve([40.0, 60.0, 45.0]), "KL bound", ["human"])
    assert list(t.columns) == ["KL bound", "surrogate reward", "true reward R*", "length (chars)", "win-rate human (%)"]
    assert t.loc[2, "win-rate human (%)"] == "60.0\u00a0±\u00a02.0"


@pytest.mark.parametrize("form, alpha, beta, peak", [
    ("best_of_n", 0.8, 0.2, 2.0),  # d (α − β d) peaks at α / 2β
    ("rl", 0.5, 0.25, math.exp(0.5 / 0.25 - 1)),  # d (α − β log d) peaks at exp(α/β − 1)
])
def test_gao_fit_recovers_its_form_and_peak(form, alpha, beta, peak):
    d = [0.0, 0.5, 1.0, 1.5, 2.5, 3.0]
    gain = [O.gao_value({"form": form, "alpha": alpha, "beta": beta}, x) for x in d]
    fit = O.gao_fit(d, gain, form)
    assert fit["alpha"] == pytest.approx(alpha) and fit["beta"] == pytest.approx(beta)
    assert fit["peak_d"] == pytest.approx(peak) and fit["points"] == 5  # d = 0 carries no information


def test_gao_fit_edge_cases():
    assert O.gao_fit([0.0, 1.0], [0.0, 0.3], "best_of_n") is None  # one informative point
    rising = O.gao_fit([0.5, 1.0, 2.0], [0.5, 1.0, 2.0], "best_of_n")  # a straight line: β = 0, no peak
    assert rising["beta"] == pytest.approx(0.0, abs=1e-9) and rising["peak_d"] is None
    with pytest.raises(ValueError, match="form is 'linear'"):
        O.gao_fit([1.0, 2.0], [1.0, 2.0], "linear")


def test_gao_fits_sentence_and_figure():
    import matplotlib

    matplotlib.use("Agg")
    bon = pd.DataFrame({"KL bound": [0.0, 0.25, 1.0, 2.25, 4.0], "surrogate reward": [0.0, 0.5, 1.0, 1.5, 2.0],
                        "se surrogate": 0.05, "true reward R*": [0.0, 0.35, 0.6, 0.75, 0.8], "se R*": 0.02},
                       index=pd.Index([1, 2, 4, 8, 16], name="n"))
    ppo = pd.DataFrame({"KL (held-out)": [0.0, 1.0, 4.0], "surrogate reward": [0.0, 0.4, 0.9], "se surrogate": 0.05,
                        "true reward R*": [0.0, 0.3, 0.2], "se R*": 0.02}, index=pd.Index([0, 10, 20], name="step"))
    fits = O.gao_fits(bon, ppo)
    assert fits[("best-of-n", "true reward R*")]["peak_d"] == pytest.approx(2.0, rel=0.05)  # 0.8 d − 0.2 d²
    assert fits[("best-of-n", "surrogate reward")]["peak_d"] is None  # a straight line in d
    s = O.gao_sentence(fits)
    assert "For best-of-n, R*'s gain fits d (α − β d) with α = 0.80, β = 0.20, highest at √KL = 2.00" in s
    assert "the surrogate's fit: no turn down (β ≤ 0)" in s and "For PPO, R*'s gain fits d (α − β log d)" in s
    far = {("best-of-n", "true reward R*"): {**fits[("best-of-n", "true reward R*")], "peak_d": 47.13}}
    assert "no turn down within the run (the fitted peak, √KL = 47.13, lies past its last √KL, 2.00)" in O.gao_sentence(far)
    assert O.gao_sentence({}) == ""
    fig = O.reward_figure(bon, ppo)
    assert fig.axes[0].get_xlabel().startswith("√KL") and len(fig.axes[1].lines) >= 3  # two fits and the zero line


def test_verdict_pairs_the_instructions_where_the_curve_keeps_their_scores():
    # 200 instructions: at n = 2 the picks win 60, at n = 4 the same 60 but 8 of them now lose. Unpaired the
    # 4-point fall is well inside two standard errors (± 4.8); paired, every other instruction is the same, so
    # the fall's standard error is ± 1.4 and the fall is real.
    s2 = [1.0] * 60 + [0.0] * 140
    s4 = [0.0] * 8 + [1.0] * 52 + [0.0] * 140
    c = _curve([20.0, 30.0, 26.0], se=3.3)
    c["scores human"] = [[0.0] * 200, s2, s4]
    v = O.verdict(c, ["human"])["human"]
    assert v["paired"] and v["drop"] == pytest.approx(4.0)
    assert v["se_drop"] == pytest.approx(100 * O.mean_se([1.0] * 8 + [0.0] * 192)[1])
    assert v["significant_fall"]
    assert "paired over the instructions" in O.win_rate_sentence(c, {"human": v}, 4, 200)
    assert not O.verdict(c.drop(columns="scores human"), ["human"])["human"]["significant_fall"]


def test_reward_sentence_pairs_the_picks_where_the_curve_keeps_them():
    # 100 picks whose R* varies widely across instructions (se 0.1 at each n), the same picks at n = 2 and n = 4
    # except 10 that lose 0.5 each: a fall of 0.05 that only pairing tells from noise
    c = _curve([40.0, 60.0, 45.0], true=(0.1, 0.3, 0.25))
    c["se R*"] = 0.1
    assert "less than two standard errors, 0.283)" in O.reward_sentence(c, 4, None, 0.64)
    base = [(-1.0 if i % 2 else 1.0) + 0.3 for i in range(100)]
    c["R* each"] = [[x - 0.2 for x in base], base, base[:90] + [x - 0.5 for x in base[90:]]]
    se = O.mean_se([0.0] * 90 + [0.5] * 10)[1]
    assert f"more than two standard errors of the paired fall, {2 * se:.3f})" in O.reward_sentence(c, 4, None, 0.64)


def test_label_noise_sentence_names_falls_or_says_none_fell():
    import pandas as pd

    from farmlib.evaluation.overoptimisation import label_noise_sentence

    def table(falls, sig=(False, False)):
        return pd.DataFrame({"fall": falls, "fall > 2 se": list(sig), "peak n": [32, 16],
                             "RM accuracy vs R*": [0.70, 0.72]}, index=["single judge", "pool"])

    s = label_noise_sentence(table([1.5, 4.0], (False, True)), 200, 64)
    assert "by more than two standard errors of the fall (paired over the instructions): pool." in s
    assert "The largest fall is with **pool** (4.0 points, peak at n = 16); the smallest with **single judge** (1.5)" in s
    assert "ranges from 0.700 (single judge) to 0.720 (pool)" in s
    assert "No curve is lower at n = 64 than at its peak." in label_noise_sentence(table([0.0, 0.0]), 200, 64)
    assert "Every curve falls 2.0 points" in label_noise_sentence(table([2.0, 2.0]), 200, 64)
