import numpy as np
import pytest

from farmlib.evaluation.end_to_end import correlations, scores, trained_both_ways


def _per_instruction(sim_rates, people_rates, n=400, seed=0):
    """Per-instruction 0/1 scores whose means are the given win-rates (exactly, in the full sample)."""
    rng = np.random.default_rng(seed)
    out = {}
    for i, (s, p) in enumerate(zip(sim_rates, people_rates)):
        a, b = np.zeros(n), np.zeros(n)
        a[: round(s * n)], b[: round(p * n)] = 1, 1
        out[f"m{i}"] = {"sim": rng.permutation(a), "people": rng.permutation(b)}
    return out


def test_correlations_on_hand_made_rankings():
    same = correlations(_per_instruction([0.2, 0.4, 0.6, 0.8], [0.25, 0.45, 0.65, 0.85]), n_boot=200)
    assert same.loc["spearman", "value"] == pytest.approx(1.0) and same.loc["pearson", "value"] == pytest.approx(1.0)
    assert same.loc["r2", "value"] == pytest.approx(1.0)
    flipped = correlations(_per_instruction([0.2, 0.4, 0.6, 0.8], [0.8, 0.6, 0.4, 0.2]), n_boot=200)
    assert flipped.loc["spearman", "value"] == pytest.approx(-1.0)
    # far-apart methods: resampling instructions cannot reorder them; close ones can
    assert same.loc["spearman", "low"] == pytest.approx(1.0)
    close = correlations(_per_instruction([0.49, 0.50, 0.51, 0.52], [0.50, 0.49, 0.52, 0.51]), n_boot=200)
    assert close.loc["spearman", "low"] < 0 < close.loc["spearman", "high"]
    for stat in ("spearman", "pearson", "r2"):
        assert close.loc[stat, "low"] <= close.loc[stat, "high"]


def test_a_ranking_of_ties_is_nan_without_a_warning():
    import warnings

    tied = _per_instruction([0.5, 0.5, 0.5], [0.2, 0.4, 0.6])
    for m in tied.values():  # the judges call every pair a tie: every redraw of the instructions ties the methods
        m["sim"] = np.full_like(m["sim"], 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's all-NaN warning would print on the chapter's page
        t = correlations(tied, n_boot=50)
    assert t.isna().all().all()


def test_scores_leave_out_missing_labels():
    s = scores([{"preference": 2}, {"preference": 1}, {"preference": 1.5}, {"preference": None}])
    assert s[:3].tolist() == [1.0, 0.0, 0.5] and np.isnan(s[3])


def test_methods_retrain_on_the_people_s_feedback(micro_farm):
    """``feedback="human"`` retrains the method (or its reward model) on the crowd's labels of the same
    pairs; a baseline is one model judged both ways."""
    from farmlib.methods import overrides, policy

    assert overrides("dpo", feedback="human") == ({"annotator": "human"}, None)
    assert overrides("ppo", seed=1, feedback="human") == ({"seed": 1}, {"seed": 1, "annotator": "human"})
    sim_path, _ = policy(micro_farm, "feedme")
    human_path, _ = policy(micro_farm, "feedme", feedback="human")
    assert sim_path != human_path
    board, per = trained_both_ways(micro_farm, ["sft10k", "feedme"])
    assert list(board["method"]) == ["sft10k", "feedme"] and list(board["feedback"]) == [False, True]
    assert len(per["feedme"]["sim"]) == len(per["feedme"]["people"]) == len(micro_farm.splits()["eval"])
    sft = board.set_index("method").loc["sft10k"]
    assert sft["sim_length"] == sft["people_length"]  # one model, judged two ways
    sim_labels = [r["preference"] for r in micro_farm.preference_data("p_sim_ann")]
    human_labels = [r["preference"] for r in micro_farm.preference_data("human")]
    assert len(sim_labels) == len(human_labels) and sim_labels != human_labels  # the same pairs, other labels
