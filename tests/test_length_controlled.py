"""Length-controlled win-rate on hand-made annotations whose answer we know."""

import math
import random

import numpy as np
import pytest

from farmlib.evaluation.length_controlled import fit_logistic, length, length_controlled_win_rate


def _ann(len_ref: int, len_model: int, pref) -> dict:
    return {"instruction": "q", "output_1": "a" * len_ref, "output_2": "b" * len_model, "preference": pref}


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def test_fit_recovers_known_coefficients():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 20_000)
    y = (rng.random(x.size) < 1 / (1 + np.exp(-(0.4 + 2.0 * x)))).astype(float)
    (a, b), cov = fit_logistic(x, y)
    assert a == pytest.approx(0.4, abs=0.05) and b == pytest.approx(2.0, abs=0.1)
    assert 0 < cov[0, 0] < 1e-3


def test_preferences_that_depend_only_on_length_give_fifty_percent():
    """The model writes longer answers 80 % of the time and wins exactly through length: raw win-rate far
    above 50 %, length-controlled about 50 %."""
    rng = random.Random(0)
    anns = []
    for _ in range(3000):
        ref = rng.randint(100, 400)
        model = ref + (rng.randint(20, 300) if rng.random() < 0.8 else -rng.randint(20, 300))
        p_win = _sigmoid(3.0 * math.tanh((model - ref) / 150))  # depends on the length difference only
        anns.append(_ann(ref, model, 2 if rng.random() < p_win else 1))
    res = length_controlled_win_rate(anns)
    assert res.win_rate > 65
    assert res.lc_win_rate == pytest.approx(50, abs=4)
    assert abs(res.lc_win_rate - 50) < 2.5 * res.standard_error + 1
    assert res.slope > 1


def test_deterministic_length_preference_stays_finite_and_near_fifty():
    """Longer always wins (perfect separation): the prior on the slope keeps the fit finite."""
    rng = random.Random(1)
    anns = []
    for _ in range(400):
        ref, d = rng.randint(100, 400), rng.choice([-1, 1]) * rng.randint(10, 300)
        anns.append(_ann(ref, ref + d, 2 if d > 0 else 1))
    res = length_controlled_win_rate(anns)
    assert math.isfinite(res.lc_win_rate) and math.isfinite(res.standard_error)
    assert res.lc_win_rate == pytest.approx(50, abs=15)


def test_a_model_that_wins_regardless_of_length_keeps_its_raw_win_rate():
    rng = random.Random(2)
    anns = [_ann(rng.randint(100, 400), rng.randint(50, 700), 2 if rng.random() < 0.7 else 1) for _ in range(3000)]
    res = length_controlled_win_rate(anns)
    assert res.lc_win_rate == pytest.approx(res.win_rate, abs=2.5)
    assert res.lc_win_rate == pytest.approx(70, abs=3)
    assert abs(res.slope) < 0.5


def test_equal_lengths_give_the_raw_win_rate_exactly():
    anns = [_ann(200, 200, p) for p in [2] * 30 + [1] * 10 + [1.5] * 4]
    res = length_controlled_win_rate(anns)
    assert res.lc_win_rate == pytest.approx(res.win_rate, abs=1e-6)
    assert res.win_rate == pytest.approx(100 * 32 / 44)


def test_ties_count_half_and_missing_are_dropped():
    anns = [_ann(100, 100 + 10 * i, p) for i, p in enumerate([2, 1, 0, 1.5, None, float("nan"), 2, 1])]
    res = length_controlled_win_rate(anns)
    assert res.n == 6
    assert res.win_rate == pytest.approx(50)


def test_bootstrap_and_delta_standard_errors_agree():
    rng = random.Random(3)
    anns = []
    for _ in range(800):
        ref, model = rng.randint(100, 400), rng.randint(100, 600)
        anns.append(_ann(ref, model, 2 if rng.random() < _sigmoid(0.3 + math.tanh((model - ref) / 150)) else 1))
    delta = length_controlled_win_rate(anns)
    boot = length_controlled_win_rate(anns, se="bootstrap", n_boot=300)
    assert boot.lc_win_rate == delta.lc_win_rate
    assert boot.standard_error == pytest.approx(delta.standard_error, rel=0.25)


def test_units_and_bad_arguments():
    assert length("two words", "words") == 2 and length("two words") == 9
    with pytest.raises(ValueError):
        length("x", "tokens")
    with pytest.raises(ValueError):
        length_controlled_win_rate([_ann(1, 2, 2)] * 5, se="jackknife")
    assert math.isnan(length_controlled_win_rate([_ann(1, 2, 2)]).lc_win_rate)


def test_all_wins_or_all_losses_give_the_raw_win_rate():
    for pref, want in ((2, 100.0), (1, 0.0)):
        res = length_controlled_win_rate([_ann(100, 100 + 7 * i, pref) for i in range(20)])
        assert res.lc_win_rate == want and res.standard_error == 0.0 and res.slope == 0.0
