import random

import pytest

from farmlib.annotators import (
    Crowd,
    ProxyJudge,
    annotate_samples,
    default_pool,
    heldout_agreement,
    majority,
    pool_ann,
    pool_eval,
    prefers_lists,
    prefers_longer,
    single_judge,
)
from farmlib.world import DEMONSTRATOR, EXPERT, FarmWorld, Writer

W = FarmWorld(0)


def _pairs(n=300, seed=0):
    rng = random.Random(seed)
    poor = Writer("poor", accuracy=0.5, coverage=0.3, p_list=0.1)
    out = []
    for _ in range(n):
        r = W.sample_task(rng)
        out.append(dict(r, output_1=W.write(r, poor, rng), output_2=W.write(r, DEMONSTRATOR, rng)))
    return out


def test_statistics_by_hand():
    assert majority([1, 2, 2]) == 2 and majority([1, 2]) is None and majority([]) is None
    # pair 1: all agree -> 4/4; pair 2: [1,1,2,2] -> each held-out label loses to a 2-1 majority -> 0/4
    assert heldout_agreement([[1, 1, 1, 1], [1, 1, 2, 2]]) == pytest.approx(0.5)
    recs = [{"output_1": "a", "output_2": "bbb", "preference": 2}, {"output_1": "aaaa", "output_2": "b", "preference": 2}]
    assert prefers_longer(recs) == 0.5
    lst = {"output_1": "x", "output_2": "- a\n- b", "preference": 2}
    assert prefers_lists([lst]) == 1.0


def test_crowd_prefers_the_better_writer_but_disagrees():
    crowd = Crowd(W)
    assert len(crowd.people) >= 16
    pairs = _pairs()
    ann = crowd.annotate_pairs(pairs)
    assert all(a["preference"] in (1, 2) and a["annotator"].startswith("human:") for a in ann)
    assert sum(a["preference"] == 2 for a in ann) / len(ann) > 0.6
    labels = [[crowd.annotate_pairs([p], person=k, seed=k)[0]["preference"] for k in range(4)] for p in pairs]
    assert 0.55 < heldout_agreement(labels) < 0.95  # people disagree, but not at random


def test_judges_never_read_the_true_reward(monkeypatch):
    judge = ProxyJudge(W, default_pool()[0])
    monkeypatch.setattr(FarmWorld, "true_reward", lambda *a, **k: pytest.fail("judge read R*"))
    monkeypatch.setattr(W, "reward_breakdown", lambda *a, **k: pytest.fail("judge used the true world"))
    judge.annotate_pairs(_pairs(20))


def test_pool_has_13_members_and_order_is_randomized():
    pool = default_pool()
    assert len(pool) == 13 and len({j.name for j in pool}) == 13
    assert {j.model for j in pool} == {"gpt4", "chatgpt", "davinci"}
    assert {j.batch_size for j in pool} >= {1, 5} and {j.output_format for j in pool} == {"raw", "json"}
    # a judge with a strong position bias still gives position-neutral labels after un-swapping
    biased = ProxyJudge(W, default_pool()[12])
    same = [dict(p, output_2=p["output_1"]) for p in _pairs(400)]
    share_2 = sum(a["preference"] == 2 for a in biased.annotate_pairs(same)) / 400
    assert 0.4 < share_2 < 0.6


def test_noisy_pool_asks_a_judge_for_about_half_the_pairs():
    ann_pool = pool_ann(W, flip=0.5)
    out = ann_pool.annotate_pairs(_pairs(600))
    assert 0.44 < ann_pool.judged / 600 < 0.56
    assert sum(a["annotator"].endswith(":coin") for a in out) == 600 - ann_pool.judged


def test_single_judge_is_greedy_and_pool_varies():
    pairs = _pairs(300)
    single, pool = single_judge(W), pool_eval(W)
    same = [a["preference"] for a in single.annotate_pairs(pairs, seed=0)]
    assert same == [a["preference"] for a in single.annotate_pairs(pairs, seed=0)]
    # across seeds only the randomized order changes: the greedy judge barely moves, the pool does
    def agree(ann):
        a, b = ([x["preference"] for x in ann.annotate_pairs(pairs, seed=s)] for s in (1, 2))
        return sum(x == y for x, y in zip(a, b)) / len(a)

    assert agree(single) > 0.9 > agree(pool)


def test_annotate_samples_pairs_two_outputs():
    rng = random.Random(0)
    recs = [dict(r, output=[W.write(r, EXPERT, rng) for _ in range(3)]) for r in (W.sample_task(rng) for _ in range(5))]
    out = annotate_samples(single_judge(W), recs)
    assert all({"output_1", "output_2", "preference"} <= set(o) and "output" not in o for o in out)


def test_local_lm_judge_on_a_tiny_model(micro_farm):
    from farmlib.annotators.lm_judge import LMJudge

    judge = LMJudge(micro_farm.load(micro_farm.sft_model()), micro_farm.tokenizer(), temperature=1.0, batch_size=4)
    recs = _pairs(10)
    out = judge.annotate_pairs(recs)
    assert [r["preference"] in (1, 2) for r in out] == [True] * 10 and out[0]["annotator"] == "lm_judge"
    lp = judge.label_logprobs(recs[:3])
    assert lp.shape == (3, 2) and lp.exp().sum(-1).allclose(lp.new_ones(3))
    assert judge.seconds_per_1000() > 0


def test_injection_effect_is_measured():
    from farmlib.annotators import injection_effect

    eff = injection_effect(single_judge(W), _pairs(100))
    assert set(eff) == {"win_before", "win_injected", "missing_injected"} and eff["missing_injected"] < 0.05

    class Obedient:  # a judge that obeys the injected text, and otherwise picks output 2
        def annotate_pairs(self, records, seed=0):
            return [dict(r, preference=1 if "Output (a)" in r["output_1"] else 2) for r in records]

    eff = injection_effect(Obedient(), _pairs(20))
    assert eff == {"win_before": 0.0, "win_injected": 1.0, "missing_injected": 0.0}
