"""The ceilings: R* as the reward (PPO) and as the selector (oracle best-of-n), on micro."""

import math

import pytest
import torch

from farmlib.evaluation.ceilings import oracle_best_of_n, ppo_ceiling
from farmlib.methods.common import TrueRewardScorer, fixed_normal, score
from farmlib.world import format_prompt


def test_true_reward_scorer_reads_the_response_as_the_sampler_does(micro_farm):
    tok, world = micro_farm.tokenizer(), micro_farm.world
    recs = micro_farm.splits()["val"][:3]
    answers = ["The goat.", "1, 2, 3", "A farmer uses a rake."]
    prompts = [format_prompt(r["instruction"], r["input"]) for r in recs]
    q = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)  # left-padded, as rollout does
    resp = [tok(a, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for a in answers]
    width = max(map(len, resp))
    r_ids = torch.tensor([r + [tok.pad_token_id] * (width - len(r)) for r in resp])
    r_mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in resp])
    seq, mask = torch.cat([q["input_ids"], r_ids], 1), torch.cat([q["attention_mask"], r_mask], 1)
    got = score(TrueRewardScorer(world, tok, recs), seq, mask, q["input_ids"].size(1)).tolist()
    want = [world.true_reward(r["instruction"], r["input"], a) for r, a in zip(recs, answers)]
    assert got == torch.tensor(want).tolist()
    noisy = TrueRewardScorer(world, tok, recs, noise=0.5)
    again = score(noisy, seq, mask, q["input_ids"].size(1)).tolist()
    assert again == score(noisy, seq, mask, q["input_ids"].size(1)).tolist(), "an answer's error is fixed"
    assert again == torch.tensor([w + 0.5 * fixed_normal(p, a) for w, p, a in zip(want, prompts, answers)]).tolist()
    assert again != got


def test_oracle_best_of_n_rises_in_true_reward_along_n(micro_farm):
    rows = oracle_best_of_n(micro_farm, n_max=8, n_prompts=12)
    assert [r["n"] for r in rows] == [1, 2, 4, 8] and rows[0]["kl"] == 0
    assert all(a["true_reward"] <= b["true_reward"] for a, b in zip(rows, rows[1:])), "a prefix's best cannot fall"
    assert all(0 <= r["win_rate"] <= 100 for r in rows)


def test_ppo_ceiling_trains_against_r_star(micro_farm):
    out = ppo_ceiling(micro_farm, steps=2)
    assert "ppo" in out["path"] and 0 <= out["win_rate"] <= 100 and len(out["outputs"]) == micro_farm.profile.eval_size
    assert out["reward_noise"] == 0 and out["accuracy"] == 1 and 0 <= out["repetitive"] <= 1


def test_ppo_ceiling_at_an_accuracy_adds_the_matching_noise(micro_farm):
    from farmlib.methods import ppo
    from farmlib.methods.reward_model import held_out_gaps, noisy_accuracy

    out = ppo_ceiling(micro_farm, accuracy=0.8, steps=2)
    assert out["reward_noise"] > 0 and out["path"] != ppo_ceiling(micro_farm, steps=2)["path"]
    assert abs(noisy_accuracy(held_out_gaps(micro_farm), out["reward_noise"]) - 0.8) < 1e-6
    with pytest.raises(ValueError, match="reward_noise"):
        ppo.train(micro_farm, None, micro_farm.method_config("ppo", {"reward_noise": 0.5}))


def test_weakest_link_words_what_the_table_shows():
    import pandas as pd

    from farmlib.evaluation.diagnostics import weakest_link

    t = pd.DataFrame({"oracle_gain": [20.0, 15.0, 2.0], "rm_accuracy": [0.55, 0.7, 0.5]},
                     index=["describe", "compare", "arithmetic"])
    assert weakest_link(t) == ("2 of 3 families have at least 10 points of headroom (describe, compare); in 1 of "
                               "them (describe) the reward model ranks fewer than 60% of the pairs right, so it is "
                               "the weakest link there.")
    assert "the policy's samples are the limit" in weakest_link(t.assign(oracle_gain=[1.0, 2.0, 3.0]))
    assert "at least 60% right in each" in weakest_link(t.assign(rm_accuracy=[0.7, 0.8, 0.4]))


def test_per_family_has_a_row_per_family_with_its_four_numbers(micro_farm):
    from farmlib.evaluation.diagnostics import per_family
    from farmlib.methods import reward_model_path

    table = per_family(micro_farm, reward_model_path(micro_farm), n=4, n_prompts=12)
    assert {"sft_quality", "oracle_gain", "rm_accuracy", "judge_agreement"} <= set(table.columns)
    assert table["sft_quality"].between(0, 1).all() and table["n_prompts"].sum() == 12


def test_preference_data_beyond_the_split_draws_more_pairs_per_instruction(micro_farm):
    size = len(micro_farm.splits()["preference"])
    one = micro_farm.preference_data("true_reward", n=size)
    more = micro_farm.preference_data("true_reward", n=2 * size + 3)
    assert len(more) > len(one) and more[:len(one)] == one  # the first round is the same pairs
    w = micro_farm.world
    for r in more:
        r1, r2 = (w.true_reward(r["instruction"], r["input"], r[f"output_{k}"]) for k in (1, 2))
        assert r["preference"] == (2 if r2 > r1 else 1) and r1 != r2  # R*'s own labels, ties left out


def test_ceiling_sentence_reads_the_numbers_it_is_given():
    from farmlib.evaluation.ceilings import ceiling_sentence

    oracle = [{"n": 1, "win_rate": 24.5}, {"n": 16, "win_rate": 48.5}, {"n": 64, "win_rate": 47.0}]
    up = ceiling_sentence(oracle, {"win_rate": 40.8, "se": 2.5}, 28.7, 2.3)
    assert "from 24.5 % at n = 1 to 47.0 % at n = 64" in up and "(best: 48.5 % at n = 16)" in up
    assert "+24.0 points" in up and "(+12.1 points), well above SFT 10k" in up
    assert "itself reaches" in up  # no budget given, none named
    flat = ceiling_sentence(oracle, {"win_rate": 30.5, "se": 2.3, "steps": 40, "rollout_batch": 64}, 28.7, 2.3)
    assert "itself (40 steps of 64 rollouts) reaches" in flat and "not even the true reward moves the policy" in flat


def test_ceiling_sentences_pair_the_instructions_where_they_carry_their_scores():
    from farmlib.evaluation.ceilings import ceiling_sentence, dpo_ceiling_sentence, teacher_sentence

    # 100 instructions: the method wins the same 30 as SFT 10k and 5 more; +5 points is noise for two standard
    # errors of 4.6 combined (2 · 6.5) but clear paired (2 · 2.2)
    sft = [1.0] * 30 + [0.0] * 70
    ours = [1.0] * 35 + [0.0] * 65
    oracle = [{"n": 1, "win_rate": 24.5}, {"n": 16, "win_rate": 48.5}]
    ppo = {"win_rate": 35.0, "se": 4.8}
    assert "not even the true reward" in ceiling_sentence(oracle, ppo, 30.0, 4.6)
    assert "well above SFT 10k" in ceiling_sentence(oracle, {**ppo, "scores": ours}, 30.0, 4.6, sft)
    row = {"win_rate": 35.0, "se": 4.8, "pairs": 987, "disfluent": 0.0}
    run, base = {"win_rate": 30.0, "se": 4.6, "pairs": 987}, {"win_rate": 30.0, "se": 4.6}
    assert "not even perfect labels" in dpo_ceiling_sentence([row], run, base)
    assert "+5.0 points past SFT 10k" in dpo_ceiling_sentence([{**row, "scores": ours}], run, {**base, "scores": sft})
    names = ("b1", "prior", "rm", "judges", "oracle")
    wins, se = dict(zip(names, (30.0, 30.0, 30.0, 35.0, 45.0))), dict.fromkeys(names, 4.6)
    assert "labels, not the reward model, are the weakest link" in teacher_sentence(wins, se, *names)
    scores = {"b1": sft, "prior": sft, "rm": sft, "judges": ours, "oracle": ours}
    assert "weakest link is the reward model's learning" in teacher_sentence(wins, se, *names, scores=scores)


def test_dpo_ceiling_trains_on_r_star_labels(micro_farm):
    from farmlib.evaluation.ceilings import dpo_ceiling

    rows = dpo_ceiling(micro_farm, sizes=(10, 20), epochs=0.5)
    assert [r["pairs"] for r in rows] == sorted(r["pairs"] for r in rows) and 0 < rows[0]["pairs"] <= 10
    assert all(0 <= r["win_rate"] <= 100 and 0 <= r["disfluent"] <= 1 for r in rows)


def test_dpo_ceiling_sentence_reads_the_numbers_it_is_given():
    from farmlib.evaluation.ceilings import dpo_ceiling_sentence

    def row(w, n):
        return {"win_rate": w, "se": 2.3, "pairs": n, "disfluent": 0.06}

    sft, run = {"win_rate": 29.5, "se": 2.3}, row(27.8, 987)
    assert "not even perfect labels" in dpo_ceiling_sentence([row(30.8, 987), row(30.0, 7991)], run, sft)
    up = dpo_ceiling_sentence([row(30.8, 987), row(40.0, 7991)], run, sft)
    assert "+10.5 points past SFT 10k" in up and "7,991 pairs" in up and "27.8 ± 2.3 %" in up
    assert "below SFT 10k" in dpo_ceiling_sentence([row(20.0, 987)], run, sft)


def test_terms_sum_to_r_star_on_real_answers(micro_farm):
    from farmlib.evaluation.ceilings import terms

    world = micro_farm.world
    for r in micro_farm.splits()["val"][:6]:
        for out in (r["output"], "The goat. The goat.", "rake rake the the"):
            parts = world.reward_breakdown(r["instruction"], r["input"], out)
            assert abs(sum(terms(parts).values()) - parts["total"]) < 1e-9


class _World:
    """A world whose R* reads an answer's parts from a table: 'right' is right and detailed, 'wrong' is off-topic."""

    PARTS = {"right": {"quality": 1.0, "detail": 0.5, "off_topic": 0.0},
             "wrong": {"quality": 0.0, "detail": 0.0, "off_topic": 0.4},
             "plain": {"quality": 1.0, "detail": 0.0, "off_topic": 0.0},
             "thin": {"quality": 0.5, "detail": 0.0, "off_topic": 0.0}}

    def reward_breakdown(self, instruction, input, output):
        from farmlib.world.true_reward import total

        parts = {"list": 0.0, "repetition": 0.0, "disfluency": 0.0, "echo": 0.0, "broken": 0.0,
                 **self.PARTS[output]}
        return {**parts, "total": total(parts)}

    def true_reward(self, instruction, input, output):
        return self.reward_breakdown(instruction, input, output)["total"]


def _rec(output):
    return {"instruction": "x", "input": "", "output": output}


def test_oracle_picks_take_r_stars_favourite_and_ties_go_to_the_earlier():
    from farmlib.evaluation.ceilings import oracle_picks

    cands = [[_rec("wrong"), _rec("plain")], [_rec("right"), _rec("plain")]]  # [k][i]
    picks = oracle_picks(_World(), cands)
    assert [p["output"] for p in picks] == ["right", "plain"] and picks[1] is cands[0][1]
    assert [p["output"] for p in oracle_picks(_World(), cands, n=1)] == ["wrong", "plain"]


def test_headroom_shares_the_oracles_gain_out_by_term():
    from farmlib.evaluation.ceilings import headroom, headroom_sentence

    sel = {"b1": [_rec("wrong"), _rec("wrong")], "rm": [_rec("plain"), _rec("wrong")],
           "oracle": [_rec("right"), _rec("right")]}
    rows = {r["term"]: r for r in headroom(_World(), sel)}
    assert rows["quality"]["b1"] == 0 and rows["quality"]["rm"] == 0.5 and rows["quality"]["oracle"] == 1
    assert rows["detail"]["oracle"] == 1.5 and rows["detail"]["rm"] == 0  # w_d · detail on a right answer
    assert math.isclose(rows["off_topic"]["b1"], -0.6) and math.isclose(rows["off_topic"]["rm"], -0.3)
    assert math.isclose(rows["total"]["oracle"], 2.5) and math.isclose(rows["total"]["b1"], -0.6)
    text = headroom_sentence(list(rows.values()), "b1", "rm", "oracle", {"b1": 20.0, "rm": 25.0, "oracle": 40.0})
    assert text.startswith("Under the people, oracle wins 40.0 %")
    assert "+3.10 over b1 and rm +0.80 (26% of it)" in text
    assert "detail on a right answer +1.50, of which it takes 0%" in text and "less off-topic text +0.60" in text
    assert "most behind in detail on a right answer (1.50 of the 2.30 left)" in text
    flat = {"b1": sel["b1"], "rm": sel["b1"], "oracle": sel["b1"]}
    assert "no headroom" in headroom_sentence(headroom(_World(), flat), "b1", "rm", "oracle")


def test_misses_show_the_fluent_losses_and_count_them():
    from farmlib.evaluation.ceilings import misses

    picked = [_rec("thin"), _rec("wrong"), _rec("right")]
    rows, text = misses(_World(), picked, [_rec("right")] * 3, k=3)
    assert [r["the selector's pick"] for r in rows] == ["thin"], "the off-topic loss is lost, but not fluent"
    assert rows[0]["its R*"] == 0.5 and rows[0]["R* of R*'s pick"] == 2.5
    assert "by more than 0.5 on 2 of 3 instructions; on 1 of them (50%)" in text
    assert misses(_World(), [_rec("right")], [_rec("right")])[1] == "The selector never loses to R*'s pick by more than 0.5."


def test_teacher_sentence_names_the_link_that_loses_the_taste():
    from farmlib.evaluation.ceilings import teacher_sentence

    names = ("b1", "prior", "rm", "judges", "oracle")
    se = dict.fromkeys(names, 2.0)

    def said(b1, prior, rm, judges):
        return teacher_sentence(dict(zip(names, (b1, prior, rm, judges, 45.0))), se, *names)

    lost = said(20.0, 21.5, 22.0, 32.0)
    assert lost.startswith("Under the people, oracle wins 45.0 %, judges 32.0 %, rm 22.0 %, prior 21.5 % and b1 20.0 %.")
    assert "gain 12.0 points over b1" in lost and "moved the reward model's picks +0.5 points" in lost
    assert "weakest link is the reward model's learning" in lost
    kept = said(20.0, 21.0, 29.0, 32.0)
    assert "+8.0 points" in kept and "keeps its teacher's taste" in kept and "judges and R* (13.0 points)" in kept
    assert "labels, not the reward model, are the weakest link" in said(20.0, 21.0, 21.0, 24.0)  # 4 < 2 · hypot(2, 2)


class _Scores:
    def __init__(self, by_output):
        self.by_output = by_output

    def scores(self, records):
        return [self.by_output[r["output"]] for r in records]


class _JudgedFarm:
    """The pool's families, each scoring an output by a table: gpt4 (5 members) likes "a", davinci (4) "b"."""

    def judge_lms(self):
        return {"gpt4": _Scores({"a": 1.0, "b": 0.0, "c": 0.0}), "chatgpt": _Scores({"a": 0.0, "b": 0.0, "c": 0.0}),
                "davinci": _Scores({"a": 0.0, "b": 1.2, "c": 0.0})}


def test_teacher_picks_weigh_each_family_by_its_members():
    from farmlib.evaluation.ceilings import teacher_picks

    cands = [[_rec("b"), _rec("c")], [_rec("a"), _rec("c")]]  # [k][i]
    picks = teacher_picks(_JudgedFarm(), cands)
    # prompt 0: 5 · 1.0 for "a" beats 4 · 1.2 for "b" (an unweighted mean would pick "b"); prompt 1: a tie, the earlier
    assert [p["output"] for p in picks] == ["a", "c"] and picks[1] is cands[0][1]


def test_untrained_picks_read_the_sft_models_likelihood(micro_farm):
    from farmlib.evaluation.ceilings import untrained_picks

    demos = micro_farm.splits()["sft"][:4]  # answers the SFT model was trained on
    shuffled = [dict(r, output=" ".join(reversed(r["output"].split()))) for r in demos]
    picks = untrained_picks(micro_farm, [shuffled, demos])  # [k][i]: the demo is the second candidate
    assert [p["output"] for p in picks] == [r["output"] for r in demos]


def test_ppo_accuracy_sentence_reads_the_curve():
    from farmlib.evaluation.ceilings import ppo_accuracy_sentence

    rows = [{"accuracy": 1.0, "win_rate": 42.0}, {"accuracy": 0.7, "win_rate": 33.0}, {"accuracy": 0.9, "win_rate": 38.0}]
    text = ppo_accuracy_sentence(rows, 32.0, 8.0)
    assert "+1.0 points at 70%, +6.0 points at 90%, +10.0 points at 100%" in text
    assert "about 95% of held-out pairs" in text
    assert "no accuracy measured here" in ppo_accuracy_sentence(rows, 32.0, 12.0)
    assert "did not measure" in ppo_accuracy_sentence([], 32.0, 8.0)


def test_ppo_with_group_advantages_has_no_value_model(micro_farm):
    """PPO on R* (no reward model to train) with each prompt's answers compared among themselves: the history has no
    value model's explained variance, the gae runs have (a separate value model, or a head on the policy); a group
    advantage without a group, or an unknown value source, is refused."""
    from farmlib.artifacts import read_artifact
    from farmlib.methods import ppo

    cfg = micro_farm.method_config("ppo", {"reward": "true_reward", "steps": 2, "samples_per_prompt": 2,
                                           "advantage": "best", "rollout_batch": 4})
    hist = read_artifact(ppo.train(micro_farm, None, cfg))
    assert len(hist) == 2 and "explained_variance" not in hist[0] and hist[0]["value_loss"] == 0
    assert "explained_variance" in read_artifact(ppo_ceiling(micro_farm, steps=2)["path"])[0]
    head = read_artifact(ppo_ceiling(micro_farm, steps=2, value="policy")["path"])  # a value head on the policy
    assert "explained_variance" in head[0] and head[0]["value_loss"] > 0
    with pytest.raises(ValueError, match="samples_per_prompt >= 2"):
        ppo.train(micro_farm, None, micro_farm.method_config("ppo", {"advantage": "rloo", "reward": "true_reward"}))
    with pytest.raises(ValueError, match="choose 'model' .* or 'policy'"):
        ppo.train(micro_farm, None, micro_farm.method_config("ppo", {"value": "shared", "reward": "true_reward"}))
    with pytest.raises(ValueError, match="choose 'gae', 'rloo' or 'best'"):
        ppo.train(micro_farm, None, micro_farm.method_config("ppo", {"advantage": "mean", "reward": "true_reward"}))
