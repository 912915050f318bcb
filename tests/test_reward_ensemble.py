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


def test_members_are_seed_pairs_and_name_what_differs(micro_farm):
    assert E.as_members([[0, 1], (0, 1), [2, 0]]) == [(0, 1), (2, 0)], "distinct pairs, in order"
    with pytest.raises(ValueError, match=r"\(pretraining seed, SFT seed\), got \[1\]"):
        E.as_members([[1]])
    by_seed = [(0, 0), (0, 1)]
    assert E.label((0, 0), by_seed, micro_farm) == "member: SFT seed 0 (the book's reward model)"
    assert E.label((0, 1), by_seed, micro_farm) == "member: SFT seed 1"
    assert E.label((1, 0), [(0, 0), (1, 0)], micro_farm) == "member: base 1"
    assert E.label((1, 1), [(0, 0), (1, 1)], micro_farm) == "member: base 1, SFT seed 1"


def test_members_start_from_their_own_sft_model_and_learn_the_books_pairs(micro_farm):
    from farmlib.methods import policy, reward_model_path
    from farmlib.methods.best_of_n import BestOfNConfig, candidates

    other = micro_farm.models.with_base_seed(1)
    assert micro_farm.models.with_base_seed(0) is micro_farm
    assert other.root == micro_farm.root and other.profile.pretrain.seed == 1, "another base, the same runs folder"
    sfts = E.member_sfts(micro_farm, [(0, 0), (0, 1), (1, 0), (0, 0)])
    assert list(sfts) == [(0, 0), (0, 1), (1, 0)] and sfts[0, 0] == micro_farm.sft_model()
    assert sfts[0, 1] == policy(micro_farm, "sft10k", seed=1)[0], "the SFT seed's model chapters 4 and 14 train"
    assert len(set(sfts.values())) == 3 and sfts[1, 0].startswith(str(micro_farm.root))
    members = [(0, 0), (0, 1)]
    paths = E.members(micro_farm, members)
    assert paths[0, 0] == reward_model_path(micro_farm), "the book's own seeds give the book's reward model"
    cands = candidates(micro_farm, BestOfNConfig(n_max=2, n_prompts=6))
    flat = [c for row in cands for c in row]
    trained, prior = E.scores(micro_farm, flat, members), E.scores(micro_farm, flat, members, trained=False)
    assert set(trained) == set(members) and all(len(s) == len(flat) for s in trained.values())
    assert trained[0, 0] != trained[0, 1] and trained[0, 0] != prior[0, 0]
    picked = E.selections(micro_farm, cands, members)
    assert "member: SFT seed 0 (the book's reward model)" in picked and "ensemble before any label: mean" in picked
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
    assert t.loc["ensemble: mean"].tolist() == ["36.2\u00a0±\u00a02.0", "+6.2\u00a0±\u00a01.5", "0.30"]
