"""Random label flips for the label-noise ablation."""

from farmlib.methods.reward_model import flip_labels

PAIRS = [{"instruction": f"q{i}", "output_1": "a", "output_2": "b", "preference": 1 + i % 2} for i in range(4000)]


def _flipped(out):
    return {i for i, (a, b) in enumerate(zip(PAIRS, out)) if a["preference"] != b["preference"]}


def test_no_flips_is_the_identity():
    assert flip_labels(PAIRS, 0.0) is PAIRS


def test_flip_rate_is_the_share_flipped_and_rates_nest():
    sets = {r: _flipped(flip_labels(PAIRS, r)) for r in (0.175, 0.25, 0.35)}
    for r, s in sets.items():
        assert abs(len(s) / len(PAIRS) - r) < 0.03
    assert sets[0.175] <= sets[0.25] <= sets[0.35]  # a higher rate flips a superset
    assert _flipped(flip_labels(PAIRS, 0.25)) == sets[0.25]  # deterministic
    assert _flipped(flip_labels(PAIRS, 0.25, seed=1)) != sets[0.25]
    out = flip_labels(PAIRS, 0.25)
    assert all(o["preference"] == 3 - p["preference"] for i, (p, o) in enumerate(zip(PAIRS, out)) if i in sets[0.25])
    assert PAIRS[0]["preference"] == 1  # the input is not modified


def test_ties_and_missing_labels_are_never_flipped():
    odd = [{"preference": p} for p in (0, 1.5, None)] * 50
    assert flip_labels(odd, 0.9) == odd
