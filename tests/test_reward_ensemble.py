"""The reward-model ensemble (Coste et al. 2023): its combination rules, its members on micro, and its sentence."""

import pytest

from farmlib.methods import reward_ensemble as E


def test_members_are_standardised_before_they_combine():
    a, b = [1.0, 2.0, 3.0], [-30.0, 10.0, 20.0]  # b's scale is 20 times a's: raw means would be b's ranking
    z = [E.standardise(a), E.standardise(b)]
    assert all(abs(sum(m)) < 1e-12 for m in z) and E.standardise([2.0, 2.0]) == [0.0, 0.0]
    assert E.aggregate([a, b], "mean") == pytest.approx([(x + y) / 2 for x, y in zip(*z)])
    assert E.aggregate([a, b], "worst case") == pytest.approx([min(x, y) for x, y in zip(*z)])
    spread = [abs(x - y) / 2 for x, y in zip(*z)]  # the population sd of two numbers
    assert E.aggregate([a, b], "mean − std") == pytest.approx([(x + y) / 2 - s for x, y, s in zip(*z, spread)])
    with pytest.raises(ValueError, match="choose from mean"):
        E.aggregate([a], "median")


def test_members_start_from_their_own_base_and_learn_the_books_pairs(micro_farm):
    from farmlib.methods import reward_model_path
    from farmlib.methods.best_of_n import BestOfNConfig, candidates

    other = micro_farm.models.with_base_seed(1)
    assert micro_farm.models.with_base_seed(0) is micro_farm
    assert other.root == micro_farm.root and other.profile.pretrain.seed == 1, "another base, the same runs folder"
    sfts = E.member_sfts(micro_farm, [0, 1, 0])
    assert list(sfts) == [0, 1] and sfts[0] == micro_farm.sft_model() and sfts[1] != sfts[0]
    assert sfts[1].startswith(str(micro_farm.root))
    paths = E.members(micro_farm, [0, 1])
    assert paths[0] == reward_model_path(micro_farm), "the book's own base gives the book's reward model"
    cands = candidates(micro_farm, BestOfNConfig(n_max=2, n_prompts=6))
    flat = [c for row in cands for c in row]
    trained, prior = E.scores(micro_farm, flat, [0, 1]), E.scores(micro_farm, flat, [0, 1], trained=False)
    assert set(trained) == {0, 1} and all(len(s) == len(flat) for s in trained.values())
    assert trained[0] != trained[1] and trained[0] != prior[0]
    picked = E.selections(micro_farm, cands, [0, 1])
    assert "member: base 0 (the book's reward model)" in picked and "ensemble before any label: mean" in picked
    assert all(p in (cands[0][i], cands[1][i]) for outs in picked.values() for i, p in enumerate(outs))


def _row(name, vs, scores):
    return {"selector": name, "win-rate": 30.0 + vs, "se": 2.0, "vs SFT 10k": vs, "paired se": 1.5, "mean R*": 0.3,
            "scores": scores}


def test_sentence_says_whose_gain_it_is():
    n = 100
    book = [0.0] * n
    better = [1.0] * 10 + [0.0] * (n - 10)  # 10 points more, on the same instructions
    rows = [_row("member: base 0 (the book's reward model)", 4.0, book), _row("member: base 1", 6.0, better),
            _row("ensemble: mean", 6.0, better), _row("ensemble before any label: mean", 6.0, better)]
    text = E.sentence(rows)
    assert "between +4.0 and +6.0" in text and "by 2.0 points" in text
    assert "+10.0 ± 3.0 points (beyond twice" in text and "best member by +0.0 ± 0.0 points (within" in text
    assert text.endswith("readers', not its labels'.")
    rows[-1] = _row("ensemble before any label: mean", 4.0, book)
    assert E.sentence(rows).endswith("its labels move its picks.")


def test_shown_table_gives_each_number_its_error():
    t = E.shown([_row("ensemble: mean", 6.25, [1.0])])
    assert t.loc["ensemble: mean"].tolist() == ["36.2 ± 2.0", "+6.2 ± 1.5", "0.30"]
