import pytest

from farmlib.evaluation import score_parts as SP


def rows(sft=(-1.4, -0.6, -0.8, 0.10), ppo=(-1.2, -0.44, -0.76, 0.104)):
    return [{"answers": name, "score": s, "reader": r, "backward": b, "true_reward": t, "length": 50.0}
            for name, (s, r, b, t) in (("SFT 10k", sft), ("ppo", ppo))]


def test_gain_splits_the_score_gained_between_its_parts():
    g = SP.gain(rows(), "SFT 10k", "ppo")
    assert g["score"] == pytest.approx(0.2) and g["reader"] == pytest.approx(0.16)
    assert g["backward"] == pytest.approx(0.04) and g["reader_share"] == pytest.approx(0.8)
    assert g["true_per_score"] == pytest.approx(0.004 / 0.2)


def test_a_score_that_did_not_rise_has_no_share_and_says_so():
    g = SP.gain(rows(ppo=(-1.5, -0.7, -0.8, 0.2)), "SFT 10k", "ppo")
    assert g["reader_share"] is None and g["true_per_score"] is None
    assert "did not raise the score" in SP.sentence(g, "PPO", "SFT 10k")


def test_the_sentence_sets_the_method_beside_choosing_among_sft_answers():
    g = SP.gain(rows(), "SFT 10k", "ppo")
    picks = SP.curve_gain([-1.8, -1.4, -1.0], [-0.2, 0.1, 0.4])
    assert picks["true_per_score"] == pytest.approx(0.75)
    text = SP.sentence(g, "PPO", "SFT 10k", picks=picks, picks_name="best-of-16's picks")
    assert "80 % of it the likelihood term and 20 % the backward term" in text
    assert "0.02 of R* per unit of score" in text and "best-of-16's picks gain 0.75" in text
    assert "where R* does not follow" in text
    # a method whose score brings R* with it, as choosing does, is told apart
    good = SP.gain(rows(ppo=(-1.2, -0.44, -0.76, 0.25)), "SFT 10k", "ppo")
    assert "at least half as well" in SP.sentence(good, "PPO", "SFT 10k", picks=picks)


def test_a_score_gain_within_twice_its_noise_is_not_split():
    r = rows()
    r[1]["score_se"] = 0.15  # the 0.2 gained is within two paired standard errors
    g = SP.gain(r, "SFT 10k", "ppo")
    assert g["score_se"] == 0.15 and g["reader_share"] is None and g["true_per_score"] is None
    text = SP.sentence(g, "PPO", "SFT 10k", picks=SP.curve_gain([-1.8, -1.0], [-0.2, 0.4]))
    assert "+0.200 ± 0.150" in text and "did not raise the score beyond noise" in text
    assert "% of it" not in text and "per unit of score" not in text and "R* moved by +0.004" in text
    r[1]["score_se"] = 0.05  # beyond twice its noise: split as before, its noise beside the gain
    text = SP.sentence(SP.gain(r, "SFT 10k", "ppo"), "PPO", "SFT 10k")
    assert "by 0.200 (± 0.050, paired standard error) over" in text and "80 % of it the likelihood term" in text


def test_the_repeat_readers_charge_is_a_part_of_its_own():
    r = rows()
    r[0]["repeats"], r[1]["repeats"] = -0.5, -0.45  # PPO's answers repeat less: the charge falls by 0.05
    r[1]["score"] += 0.05
    g = SP.gain(r, "SFT 10k", "ppo")
    assert g["repeats"] == pytest.approx(0.05) and g["score"] == pytest.approx(0.25)
    text = SP.sentence(g, "PPO", "SFT 10k")
    assert "64 % of it the likelihood term, 16 % the backward term and 20 % the repeat reader's charge" in text


def test_a_reward_model_without_a_backward_reader_gains_all_in_its_reader():
    g = SP.gain(rows(sft=(-1.4, -1.4, 0.0, 0.1), ppo=(-1.0, -1.0, 0.0, 0.2)), "SFT 10k", "ppo")
    assert "all of it the head" in SP.sentence(g, "PPO", "SFT 10k", "the head")


def test_parts_add_up_to_the_reward_models_score(micro_farm):
    from farmlib.methods import reward_model

    path = reward_model.train(micro_farm, micro_farm.method_config("reward_model"))
    rm, tok = reward_model.load_reward_model(path), micro_farm.tokenizer()
    recs = [dict(r) for r in micro_farm.splits()["val"][:4]]
    p = SP.parts(rm, tok, recs)
    score = reward_model.rewards(rm, tok, recs).tolist()
    assert p["score"] == pytest.approx(score)
    assert [r + b + c for r, b, c in zip(p["reader"], p["backward"], p["repeats"])] == pytest.approx(score)
    rm.config.repeat_weight = -2.0  # a charge of its own, out of the reader's part
    said_twice = [dict(recs[0], output=recs[0]["output"] + " " + recs[0]["output"])]
    assert SP.parts(rm, tok, said_twice)["repeats"] == [-2.0]
    rm.config.repeat_weight = 0.0
    assert all(b != 0 for b in p["backward"])  # the micro reward model has a backward reader
    plain = reward_model.load_reward_model(path, backward=False)  # without it the reader is the whole score
    q = SP.parts(plain, tok, recs)
    assert q["backward"] == [0.0] * 4 and q["reader"] == pytest.approx(q["score"])
    assert SP.reader_name(rm) == "the likelihood term"
    t = SP.table(rm, tok, {"val": recs}, true_rewards=micro_farm.true_rewards)
    assert t[0]["score"] == pytest.approx(sum(score) / 4) and "true_reward" in t[0]
    # paired against a base on the same instructions, each other row carries its gain's standard error
    other = [dict(r, output=r["output"] + " and more") for r in recs]
    t = SP.table(rm, tok, {"base": recs, "other": other}, base="base")
    d = [a - b for a, b in zip(SP.parts(rm, tok, other)["score"], score)]
    mean = sum(d) / 4
    assert "score_se" not in t[0]
    assert t[1]["score_se"] == pytest.approx((sum((x - mean) ** 2 for x in d) / 3 / 4) ** 0.5)
    with pytest.raises(ValueError, match="not on 'base'"):
        SP.table(rm, tok, {"base": recs, "other": other[::-1]}, base="base")
