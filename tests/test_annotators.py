import random
from pathlib import Path

import pytest
import torch

from farmlib.annotators import (
    Crowd,
    LearnedJudge,
    annotate_samples,
    default_pool,
    heldout_agreement,
    majority,
    members,
    pool_ann,
    pool_eval,
    prefers_lists,
    prefers_longer,
    single_judge,
    style_preferences,
)
from farmlib.annotators.validation import crowd_intervals, crowd_labels
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
    labels = crowd_labels(crowd, pairs, n=4)  # four different people per pair, as chapter 4 measures
    assert 0.55 < heldout_agreement(labels) < 0.95  # people disagree, but not at random


def test_crowd_intervals_cover_the_estimate_and_narrow_with_more_pairs():
    crowd = Crowd(W)
    few, many = _pairs(60, seed=1), _pairs(600, seed=1)
    widths = []
    for pairs in (few, many):
        labels = crowd_labels(crowd, pairs, n=4)
        ci = crowd_intervals(pairs, labels, n_boot=300)
        p = prefers_longer([dict(r, preference=x) for r, h in zip(pairs, labels) for x in h])
        assert ci["p_longer"][0] <= p <= ci["p_longer"][1]
        a = heldout_agreement(labels)
        assert ci["agreement"][0] <= a <= ci["agreement"][1]
        assert ci["variance"] == pytest.approx((1 - ci["agreement"][1], 1 - ci["agreement"][0]))
        widths.append(ci["p_longer"][1] - ci["p_longer"][0])
    assert widths[1] < 0.6 * widths[0]  # ten times the pairs: about a third of the width
    # every label of a pair goes with it: identical pairs give a zero-width interval
    same = [{"output_1": "a", "output_2": "bbb"}] * 20
    assert crowd_intervals(same, [[2, 2, 2, 2]] * 20, n_boot=50)["p_longer"] == (1.0, 1.0)
    # ...and a redraw's statistics are its records': one dissenting label in four, the other output a list
    same = [{"output_1": "a list of one", "output_2": "- a\n- b"}] * 20
    labels = [[2, 2, 2, 1]] * 20
    ci = crowd_intervals(same, labels, n_boot=50)
    records = [dict(r, preference=x) for r, h in zip(same, labels) for x in h]
    assert ci["p_list"] == (prefers_lists(records),) * 2 == (0.75, 0.75)
    assert ci["p_longer"] == (0.25, 0.25)  # the list is the shorter output
    assert ci["agreement"] == (heldout_agreement(labels),) * 2 == (0.75, 0.75)


def test_style_preferences_redraw_instructions_not_records():
    # two methods against one reference on each of 40 instructions: on the first 20 every label picks the
    # longer output, on the last 20 none does; one list pair per instruction, its list always chosen
    recs = []
    for i in range(40):
        for method in ("a", "b"):
            recs.append({"instruction": f"task {i}", "input": "", "output_1": "ref", "output_2": "much longer " + method,
                         "preference": 2 if i < 20 else 1})
        recs.append({"instruction": f"task {i}", "input": "", "output_1": "ref", "output_2": "- a\n- b", "preference": 2})
    s = style_preferences(recs, n_boot=400)
    assert s["p_longer"] == pytest.approx(prefers_longer(recs)) == pytest.approx(0.5 * 80 / 120 + 40 / 120)
    assert s["n_p_longer"] == 120 and s["n_p_list"] == 40 and s["p_list"] == 1.0 and s["p_list_interval"] == (1.0, 1.0)
    lo, hi = s["p_longer_interval"]
    assert lo < s["p_longer"] < hi
    # instructions as the unit: twice the records per instruction, the same interval (records as the unit would shrink it)
    assert style_preferences(recs + recs, n_boot=400)["p_longer_interval"] == pytest.approx((lo, hi))
    # unlabelled records and equal lengths count nowhere; no boot, no interval
    none = style_preferences([dict(recs[0], preference=None), dict(recs[0], output_2="abc")], n_boot=0)
    assert none["n_p_longer"] == 0 and none["p_longer"] != none["p_longer"]


def test_a_crowd_of_another_taste_scales_the_same_people():
    """``taste`` moves the average person's weights; each person's own factors and noise stay as they were."""
    from farmlib.world import REWARD_WEIGHTS

    default, detail_lovers = Crowd(W), Crowd(W, taste=dict(REWARD_WEIGHTS, detail=2 * REWARD_WEIGHTS["detail"]))
    for a, b in zip(default.people, detail_lovers.people, strict=True):
        assert b.weights["detail"] == pytest.approx(2 * a.weights["detail"]) and b.noise == a.noise
        assert {k: v for k, v in b.weights.items() if k != "detail"} == {k: v for k, v in a.weights.items() if k != "detail"}
    # people who value detail more prefer the longer of two sensible answers more often
    rng = random.Random(3)
    pairs = []
    for _ in range(400):
        r = W.sample_task(rng)
        pairs.append(dict(r, output_1=W.write(r, DEMONSTRATOR, rng), output_2=W.write(r, DEMONSTRATOR, rng)))
    p = [prefers_longer([dict(r, preference=x) for r, h in zip(pairs, crowd_labels(c, pairs)) for x in h])
         for c in (default, detail_lovers)]
    assert p[1] > p[0] + 0.02, p


@pytest.fixture(scope="module")
def lms(micro_farm):
    """The three judge families of the micro farm (trained once, then loaded fresh: empty score caches)."""
    return micro_farm.judge_lms()


def test_a_reader_sees_what_an_answer_says_again():
    from farmlib.annotators.judges import N_SURFACE, said_again, surface

    assert said_again("The animals mentioned are:\n- cow\n- cow") == 1.0  # a list item twice
    assert said_again("The cow eats hay. It lives on farms. The cow eats hay!") == 1.0  # a sentence twice
    assert said_again("The cow eats hay. It lives on farms.") == 0.0
    loop = said_again("The cow eats" + " hay" * 20)
    assert 0.7 < loop < 1.0  # a loop: the share of words inside a run of four said before
    assert said_again("The cow eats hay and the cow eats grass.") == 0.0  # three words again is not a run of four
    # the same fact in other words, a clause twice in one sentence, an item named twice inline
    assert said_again("You can find it in the marshes, while the pig lives in the marshes.", "Where does the pig live?") == 1.0
    assert said_again("The pig is striped, while the pig is striped.") == 1.0
    assert said_again("The animals mentioned are the beaver and the beaver.") == 1.0
    assert said_again("The pig is striped, while the cow is striped.", "Compare the pig and the cow.") == 0.0
    assert len(surface("The cow eats hay.")) == N_SURFACE


def test_judges_never_read_the_true_reward(micro_farm, monkeypatch):
    """Every R* function raises; the learned judges (freshly loaded, nothing cached) still annotate."""
    from farmlib.annotators import JudgeLM, TextReader
    from farmlib.annotators import people as people_mod
    from farmlib.annotators.knowledge import Knowledge, KnowledgeReader
    from farmlib.annotators.learned import JUDGE_FAMILIES, train_judge
    from farmlib.world import true_reward as tr
    from farmlib.world.families import FAMILIES

    paths = {f: train_judge(micro_farm, cfg) for f, cfg in JUDGE_FAMILIES.items()}  # training may use the world
    base, tok = micro_farm.base_model(), micro_farm.tokenizer()
    pairs = _pairs(30)  # so may writing the pairs

    def forbidden(*a, **k):
        pytest.fail("a judge reached the true reward")

    for name in ("reward_breakdown", "true_reward", "quality", "answer", "parse", "_true_reward"):
        monkeypatch.setattr(FarmWorld, name, forbidden)
    for name in ("reward_parts", "total"):
        monkeypatch.setattr(tr, name, forbidden)
    monkeypatch.setattr(tr.TrueReward, "breakdown", forbidden)
    monkeypatch.setattr(tr.Grammar, "disfluency", forbidden)
    monkeypatch.setattr(people_mod, "total", forbidden)
    for name in ("utility", "p_prefer_2", "p_majority_2", "majority_label", "annotate_pairs"):
        monkeypatch.setattr(Crowd, name, forbidden)
    knows = KnowledgeReader(Knowledge.of(micro_farm.world))  # the world's facts, copied: its answers, not R*
    for fam in FAMILIES.values():  # the part of R* that scores task success
        monkeypatch.setattr(type(fam), "quality", forbidden)
    reader = TextReader.load(base, tok, max_length=micro_farm.profile.model.max_length)
    fresh = {f: JudgeLM.load(p, reader, name=f, knowledge=knows) for f, p in paths.items()}
    for ann in [pool_eval(fresh), pool_ann(fresh), single_judge(fresh), *members(fresh).values()]:
        out = ann.annotate_pairs(pairs)
        assert all(a["preference"] in (1, 2, None) for a in out)
    assert all(lm.scored > 0 for lm in fresh.values()) and reader.read > 0


def test_no_judge_can_reach_the_world(lms):
    """Nothing reachable from a pool is a world, a true reward, a person, a crowd or a farm."""
    import gc
    import types

    from farmlib import Farm
    from farmlib.annotators import Person
    from farmlib.world.true_reward import Grammar, TrueReward

    forbidden = (FarmWorld, TrueReward, Grammar, Crowd, Person, Farm)
    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType)
    for root in [pool_eval(lms), pool_ann(lms), single_judge(lms)]:
        seen, todo = set(), [root]
        while todo:
            obj = todo.pop()
            if id(obj) in seen or isinstance(obj, skip):
                continue
            seen.add(id(obj))
            assert not isinstance(obj, forbidden), f"a judge holds a {type(obj).__name__}"
            todo.extend(gc.get_referents(obj))
        assert len(seen) > 100  # the walk went through the models


def test_judges_are_trained_on_their_makers_comparisons(micro_farm):
    from farmlib.annotators.learned import JUDGE_FAMILIES, makers_pairs

    sp = micro_farm.splits()
    fam = JUDGE_FAMILIES["chatgpt"]
    pairs = makers_pairs(micro_farm.world, sp["unlabeled"], fam, 40)
    assert len(pairs) == 40 and all(p["preference"] in (1, 2) for p in pairs)
    assert {p["annotator"].split(":")[0] for p in pairs} == {"chatgpt-makers"}  # not the crowd
    assert len({p["annotator"] for p in pairs}) <= fam.labellers
    held = {(r["instruction"], r["input"]) for r in sp["eval"]}  # the evaluation's instructions are never seen
    assert not held & {(p["instruction"], p["input"]) for p in pairs}
    info = micro_farm.judge_train_info()
    assert set(info) == {"gpt4", "chatgpt", "davinci"} and all(v["seconds"] > 0 for v in info.values())


def test_makers_rank_failures_against_each_other(micro_farm):
    """A failures pair sets two corruptions of one answer against each other: a clean answer (right, no defect
    under R*) is on one side of most ordinary pairs, of few failures pairs (a corruption of a short answer can
    leave it whole)."""
    from dataclasses import replace

    from farmlib.annotators.learned import JUDGE_FAMILIES, makers_pairs
    from farmlib.world.true_reward import DEFECTS

    w = micro_farm.world
    fam = replace(JUDGE_FAMILIES["chatgpt"], degenerate=0.0, failures=1.0)
    pairs = makers_pairs(w, micro_farm.splits()["unlabeled"], fam, 30)

    def clean(p, o):
        b = w.reward_breakdown(p["instruction"], p["input"], o)
        return b["quality"] >= 1 and not any(b[k] > 0 for k in DEFECTS)

    def with_clean(pairs):
        return sum(clean(p, p["output_1"]) or clean(p, p["output_2"]) for p in pairs) / len(pairs)

    plain = makers_pairs(w, micro_farm.splits()["unlabeled"], replace(fam, failures=0.0), 30)
    assert len(pairs) == 30 and with_clean(pairs) <= 0.15 < 0.5 <= with_clean(plain)


def test_each_family_reads_with_its_own_instruction_tuned_lm(micro_farm):
    """A family's head reads its own LM, tuned on as many expert demonstrations as its config says (more for
    gpt4 than for davinci), from the unlabeled split only; the head names that LM by a relative path."""
    import torch

    from farmlib.annotators.learned import JUDGE_FAMILIES, judge_lm, n_demos, train_judge
    from farmlib.artifacts import read_json

    sizes = {}
    for f, fam in JUDGE_FAMILIES.items():
        lm = Path(judge_lm(micro_farm, fam))
        head = torch.load(Path(train_judge(micro_farm, fam)) / "head.pt")
        assert not Path(head["tuned"]).is_absolute()
        assert (Path(train_judge(micro_farm, fam)) / head["tuned"]).resolve() == lm.resolve()
        assert len(head["tuned_index"]) > 0
        sizes[f] = read_json(lm / "train_info.json")["examples"]
        assert sizes[f] == n_demos(micro_farm, fam)
    assert sizes["gpt4"] > sizes["chatgpt"] > sizes["davinci"]
    none = JUDGE_FAMILIES["davinci"].__class__("none", pairs=100, demos=0)
    assert judge_lm(micro_farm, none) is None and n_demos(micro_farm, none) == 0


def test_pool_has_13_members_and_order_is_randomized(lms):
    pool = default_pool()
    assert len(pool) == 13 and len({j.name for j in pool}) == 13
    assert {j.model for j in pool} == {"gpt4", "chatgpt", "davinci"}
    assert {j.batch_size for j in pool} >= {1, 5} and {j.output_format for j in pool} == {"raw", "json"}
    assert {j.prefer for j in pool} == {"", "long", "short"}
    # a judge with a strong position bias still gives position-neutral labels after un-swapping
    biased = LearnedJudge(lms["davinci"], default_pool()[12])
    same = [dict(p, output_2=p["output_1"]) for p in _pairs(400)]
    share_2 = sum(a["preference"] == 2 for a in biased.annotate_pairs(same)) / 400
    assert 0.4 < share_2 < 0.6


def test_pool_scores_each_output_once_per_family(micro_farm):
    from farmlib.annotators import JudgeLM, TextReader
    from farmlib.annotators.learned import JUDGE_FAMILIES, train_judge

    reader = TextReader.load(micro_farm.base_model(), micro_farm.tokenizer())
    fresh = {f: JudgeLM.load(train_judge(micro_farm, c), reader, name=f, knowledge=micro_farm.annotators.knowledge())
             for f, c in JUDGE_FAMILIES.items()}
    pairs = _pairs(50)
    for s in range(3):
        pool_eval(fresh).annotate_pairs(pairs, seed=s)
        single_judge(fresh).annotate_pairs(pairs, seed=s)
    outputs = {(p["instruction"], p["input"], p[k]) for p in pairs for k in ("output_1", "output_2")}
    assert fresh["gpt4"].scored == len(outputs) and reader.read == len(outputs)  # one forward per output
    for lm in fresh.values():  # and one per output through each family's own tuned LM
        assert lm.tuned is not None and lm.tuned.read == lm.scored
    assert all(lm.scored <= len(outputs) for lm in fresh.values())


def test_score_store_spares_a_second_process_the_reading(micro_farm, tmp_path):
    """A family's scores written to its store are read back, by a fresh judge with an empty reader, as the
    same numbers, and nothing is run through the LMs again; the logit scale applies on top of the store."""
    from farmlib.annotators import JudgeLM, TextReader
    from farmlib.annotators.judges import ScoreStore
    from farmlib.annotators.learned import JUDGE_FAMILIES, train_judge

    head = train_judge(micro_farm, JUDGE_FAMILIES["gpt4"])
    pairs = _pairs(40)
    first = JudgeLM.load(head, TextReader.load(micro_farm.base_model(), micro_farm.tokenizer()), name="gpt4",
                         store=ScoreStore(tmp_path / "gpt4.sqlite"), knowledge=micro_farm.annotators.knowledge())
    want = first.scores(pairs, "output_1")
    assert first.scored == len({p["output_1"] for p in pairs}) == len(first.store)
    reader = TextReader.load(micro_farm.base_model(), micro_farm.tokenizer())
    again = JudgeLM.load(head, reader, name="gpt4", logit_scale=3.0, store=ScoreStore(tmp_path / "gpt4.sqlite"),
                         knowledge=micro_farm.annotators.knowledge())
    assert again.scores(pairs, "output_1") == [3.0 * x for x in want]
    assert again.scored == 0 and reader.read == 0 and again.tuned.read == 0
    fresh = again.scores(pairs, "output_2")  # outputs it never saw are read, and stored
    assert again.scored > 0 and len(again.store) == len({p[k] for p in pairs for k in ("output_1", "output_2")})
    assert fresh == pytest.approx([3.0 * x for x in first.scores(pairs, "output_2")], abs=1e-5)


def test_an_outputs_features_do_not_depend_on_the_batch_it_was_read_in(micro_farm):
    """Read alone or among other outputs, an output's features are the same, bit for bit (each is padded to its own
    bucket length): the score store holds the same numbers whoever read first. Long outputs among 60 of other
    lengths, and one-word answers among 80 of their length, whose one to three LM-head rows MKL multiplies by
    another kernel than a batch's many (without :func:`~farmlib.annotators.judges.per_row` they differed on an
    AVX2 EPYC)."""
    from farmlib.annotators import TextReader

    recs = [dict(p, output=p["output_1"] + " " + p["output_2"][: 5 * k]) for k, p in enumerate(_pairs(60))]
    many = TextReader.load(micro_farm.base_model(), micro_farm.tokenizer()).features(recs)
    one = TextReader.load(micro_farm.base_model(), micro_farm.tokenizer())
    assert len(set(one.bucket([(r["instruction"], r["input"], r["output"]) for r in recs]))) > 2
    for k in (0, 17, 59):
        assert torch.equal(one.features([recs[k]])[0], many[k])

    words = [dict(p, output=p["output_2"].split()[0]) for p in _pairs(80, seed=1)]
    keys = [(r["instruction"], r["input"], r["output"]) for r in words]
    buckets = one.bucket(keys)
    many = TextReader.load(micro_farm.base_model(), micro_farm.tokenizer()).features(words)
    short = [k for k, key in enumerate(keys) if len(one.tok(key[2], add_special_tokens=False)["input_ids"]) <= 2
             and buckets.count(buckets[k]) > 8][:12]
    assert len(short) >= 10
    for k in short:
        assert torch.equal(one.features([words[k]])[0], many[k])


def test_a_judges_score_of_a_text_does_not_depend_on_the_rows_beside_it():
    """A judge head's score of one text (:func:`~farmlib.annotators.judges.rowdot`) has the same bits alone as among
    3,193 (as one row of a matrix product it did not: 47 of 50 rows differed on an AVX2 EPYC)."""
    from farmlib.annotators.judges import rowdot

    g = torch.Generator().manual_seed(0)
    X, w = torch.randn(3193, 1050, generator=g), torch.randn(1050, generator=g)  # a judge head's width
    scores = rowdot(X, w)
    assert all(torch.equal(rowdot(X[k:k + 1], w), scores[k:k + 1]) for k in range(0, 3193, 64))
    assert torch.allclose(scores, X @ w, rtol=1e-4, atol=1e-3)


def test_prefer_long_and_short_instructions_move_the_judge(lms):
    """The instruction moves the margin towards the longer (shorter) output; the model is the same."""
    pairs = [p for p in _pairs(100) if len(p["output_1"].split()) != len(p["output_2"].split())]
    ms = members(lms)
    plain, long, short = (ms[n].margins(pairs) for n in ("gpt4_b1_raw", "gpt4_prefer_long", "gpt4_prefer_short"))
    for p, a, b, c in zip(pairs, plain, long, short):
        longer_2 = len(p["output_2"].split()) > len(p["output_1"].split())
        assert (b > a > c) if longer_2 else (b < a < c)


def test_noisy_pool_asks_a_judge_for_about_half_the_pairs(lms):
    ann_pool = pool_ann(lms, flip=0.5)
    out = ann_pool.annotate_pairs(_pairs(600))
    assert 0.44 < ann_pool.judged / 600 < 0.56
    assert sum(a["annotator"].endswith(":coin") for a in out) == 600 - ann_pool.judged


def test_single_judge_is_greedy_and_pool_varies(lms):
    pairs = _pairs(300)
    single, pool = single_judge(lms), pool_eval(lms)
    same = [a["preference"] for a in single.annotate_pairs(pairs, seed=0)]
    assert same == [a["preference"] for a in single.annotate_pairs(pairs, seed=0)]
    # across seeds only the randomized order changes: the greedy judge barely moves, the pool does
    def agree(ann):
        a, b = ([x["preference"] for x in ann.annotate_pairs(pairs, seed=s)] for s in (1, 2))
        return sum(x == y for x, y in zip(a, b)) / len(a)

    assert agree(single) > 0.9 > agree(pool)


def test_annotate_samples_pairs_two_outputs(lms):
    rng = random.Random(0)
    recs = [dict(r, output=[W.write(r, EXPERT, rng) for _ in range(3)]) for r in (W.sample_task(rng) for _ in range(5))]
    out = annotate_samples(single_judge(lms), recs)
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


def test_injection_effect_is_measured(lms):
    from farmlib.annotators import injection_effect

    eff = injection_effect(single_judge(lms), _pairs(100))
    assert set(eff) == {"win_before", "win_injected", "missing_injected"} and eff["missing_injected"] < 0.05

    class Obedient:  # a judge that obeys the injected text, and otherwise picks output 2
        def annotate_pairs(self, records, seed=0):
            return [dict(r, preference=1 if "Output (a)" in r["output_1"] else 2) for r in records]

    eff = injection_effect(Obedient(), _pairs(20))
    assert eff == {"win_before": 0.0, "win_injected": 1.0, "missing_injected": 0.0}


def test_farm_builds_pools_that_share_three_learned_models(micro_farm):
    from farmlib.annotators.learned import CALIBRATION, calibrate

    ev, ann, single = (micro_farm.annotator(n) for n in ("p_sim_eval", "p_sim_ann", "p_sim_single"))
    assert len(ev.judges) == 13 and len({id(j.lm) for j in ev.judges}) == 3
    assert {id(j.lm) for j in ev.judges} == {id(j.lm) for j in ann.judges} and single.lm is micro_farm.judge_lms()["gpt4"]
    cal = calibrate(micro_farm)  # one knob, chosen on calibration pairs by the pool's own variance
    assert cal["logit_scale"] in [r["logit_scale"] for r in cal["rows"]] and len(cal["rows"]) == len(CALIBRATION["grid"])
    best = min(cal["rows"], key=lambda r: abs(r["variance"] - CALIBRATION["target_value"]))
    assert best["logit_scale"] == cal["logit_scale"] and CALIBRATION["target"] == "p_sim_eval variance"
    variances = [r["variance"] for r in cal["rows"]]
    assert variances[0] > variances[-1]  # the least decisive scale disagrees with itself more than the most


def test_what_decides_counts_where_a_part_differs_and_who_wins():
    from farmlib.annotators.validation import what_decides

    parts = ("quality", "detail", "list", "repetition", "disfluency", "off_topic", "echo", "broken")
    table = {"good": {"quality": 1.0}, "bad": {"quality": 0.0}, "loop": {"quality": 1.0, "repetition": 1.0}}

    class World:
        def reward_breakdown(self, instruction, input, output):
            return {k: table[output].get(k, 0.0) for k in parts}

    pairs = [{"instruction": "i", "output_1": "bad", "output_2": "good"},
             {"instruction": "i", "output_1": "good", "output_2": "bad"},
             {"instruction": "i", "output_1": "loop", "output_2": "good"},
             {"instruction": "i", "output_1": "good", "output_2": "bad"}]
    labels = [[2, 2, 1], [1, 1, 2], [2, 2, 2], [2, 2, 1]]  # the last: people pick the worse one
    d = what_decides(World(), pairs, labels)
    assert d.loc["quality", "pairs where it differs"] == 0.75 and d.loc["quality", "its side wins the majority"] == 2 / 3
    assert d.loc["repetition", "pairs where it differs"] == 0.25 and d.loc["repetition", "its side wins the majority"] == 1
    assert d["its side wins the majority"].isna().sum() == 6  # parts that never differ
