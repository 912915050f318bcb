"""What scale would close the gap: the noisy-R* scorer's accuracy, the crossing of a curve with a bar, the
extrapolation of an accuracy curve, and the people's part in artifact keys."""

import math
import random

import pytest

from farmlib import Farm
from farmlib.annotators import people
from farmlib.methods.reward_model import crossing, noisy_accuracy, pairs_for_accuracy, sigma_for_accuracy


def test_noisy_accuracy_matches_a_simulation_and_falls_with_noise():
    rng = random.Random(0)
    gaps = [rng.expovariate(2.0) for _ in range(300)]
    accs = [noisy_accuracy(gaps, s) for s in (0, 0.1, 0.5, 2.0, 50.0)]
    assert accs[0] == 1.0 and all(a > b for a, b in zip(accs, accs[1:])) and abs(accs[-1] - 0.5) < 0.02
    sigma, hits, trials = 0.5, 0, 0
    for g in gaps:  # R* of the better output is g above the other; each gets its own noise
        for _ in range(40):
            hits += g + rng.gauss(0, sigma) > rng.gauss(0, sigma)
            trials += 1
    assert abs(hits / trials - noisy_accuracy(gaps, sigma)) < 0.01


def test_sigma_for_accuracy_inverts_noisy_accuracy():
    rng = random.Random(1)
    gaps = [rng.expovariate(1.0) for _ in range(200)]
    sigmas = [sigma_for_accuracy(gaps, a) for a in (0.95, 0.8, 0.7, 0.55)]
    assert all(a < b for a, b in zip(sigmas, sigmas[1:])), "less accurate, more noise"
    for a, s in zip((0.95, 0.8, 0.7, 0.55), sigmas):
        assert noisy_accuracy(gaps, s) == pytest.approx(a, abs=1e-6)
    assert sigma_for_accuracy(gaps, 1.0) == 0.0
    with pytest.raises(ValueError, match="accuracy"):
        sigma_for_accuracy(gaps, 0.5)


def test_crossing_interpolates_and_says_never():
    assert crossing([0.6, 0.8, 1.0], [20.0, 30.0, 40.0], 25.0) == pytest.approx(0.7)
    assert crossing([1.0, 0.6, 0.8], [40.0, 20.0, 30.0], 35.0) == pytest.approx(0.9)  # any order of points
    assert crossing([0.6, 1.0], [20.0, 30.0], 31.0) is None
    assert crossing([0.6, 1.0], [20.0, 30.0], 10.0) == 0.6


def test_pairs_for_accuracy_recovers_a_line_and_refuses_a_falling_one():
    pairs = [250, 500, 1000, 2000]
    acc = [0.55 + 0.03 * math.log2(p / 250) for p in pairs]
    fit = pairs_for_accuracy(pairs, acc, [0.02] * 4, 0.70)
    assert fit["per_doubling"] == pytest.approx(0.03)
    assert fit["pairs_needed"] == pytest.approx(250 * 2 ** 5)
    assert pairs_for_accuracy(pairs, acc[::-1], [0.02] * 4, 0.70)["pairs_needed"] is None


def test_artifacts_from_peoples_labels_change_with_the_people(tmp_path, monkeypatch):
    farm = Farm("micro", root=tmp_path)
    built = []

    def build(work):
        built.append(work)
        (work / "x.json").write_text("{}")

    a = farm.artifact("probe", {"annotator": "human", "n": 1}, build)
    assert farm.artifact("probe", {"annotator": "human", "n": 1}, build) == a and len(built) == 1
    key = people.crowd_key()
    monkeypatch.setattr(people, "crowd_key", lambda: {**key, "crowd": {**key["crowd"], "noise": 9.0}})
    b = farm.artifact("probe", {"annotator": "human", "n": 1}, build)
    assert b != a and len(built) == 2


def test_curve_pairs_go_past_the_preference_split_and_keep_their_first_pairs(micro_farm):
    from farmlib.methods.reward_model import curve_pairs

    sp = micro_farm.splits()
    few, many = curve_pairs(micro_farm, 5), curve_pairs(micro_farm, len(sp["preference"]) + 10)
    assert len(few) >= 1 and many[: len(few)] == few  # the first pairs do not depend on how many are asked
    assert len(many) >= len(sp["preference"]) + 10 > len(curve_pairs(micro_farm, len(sp["preference"])))
    unlabeled = {r["instruction"] for r in sp["unlabeled"]} - {r["instruction"] for r in sp["preference"]}
    assert any(r["instruction"] in unlabeled for r in many[len(sp["preference"]):])
