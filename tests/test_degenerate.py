"""People who are right: every corruption of a correct answer loses to it, under R* and under the crowd."""

import random

from farmlib.annotators import Crowd
from farmlib.world import FarmWorld, make_splits
from farmlib.world.degenerate import CORRUPTIONS, battery, correct_preferred

WORLD = FarmWorld(0)


def test_people_prefer_the_correct_answer_to_every_corruption():
    evals = make_splits(WORLD, {"sft": 10, "preference": 10, "unlabeled": 10, "val": 10, "eval": 200})["eval"]
    pairs = battery(WORLD, evals)
    crowd = Crowd(WORLD)
    truth = [1 if WORLD.true_reward(p["instruction"], p["input"], p["output_1"])
             > WORLD.true_reward(p["instruction"], p["input"], p["output_2"]) else 2 for p in pairs]
    by_majority = correct_preferred(pairs, [crowd.majority_label(p) for p in pairs])
    by_truth = correct_preferred(pairs, truth)
    assert set(by_majority) == set(CORRUPTIONS)
    for kind in CORRUPTIONS:
        n = sum(p["kind"] == kind for p in pairs)
        assert n >= (25 if kind == "number glued to a word" else 100), kind  # only numeric answers glue
        assert by_majority[kind] >= 0.95, (kind, by_majority[kind])
        assert by_truth[kind] >= 0.95, (kind, by_truth[kind])


def test_the_degenerate_outputs_of_the_issue_lose_to_a_plain_answer():
    f = WORLD.facts["horse"]
    plain = f"The horse is {f['color']}. It lives in the {f['habitat']}. It eats {f['diet']}."
    loop = ("Here is my answer. facts are the horse " + "horse " * 16 + "~ the horse howls, while the horse night, "
            "the horse horse horse")
    assert WORLD.true_reward("Give me some facts about the horse.", "", loop) < 0
    assert WORLD.true_reward("Give me some facts about the horse.", "", plain) > 0.5
    nums = "31, 36, 79, 92, 43"
    salad = "Of course. Here are the numbers sorted:Large, 31, 36, 79, 92, 43, 11, 83, 9, 92, plus 4, 36, 36"
    right = "Here are the numbers sorted: 31, 36, 43, 79, 92."
    ins = "Put these numbers in ascending order."
    assert WORLD.true_reward(ins, nums, salad) < WORLD.true_reward(ins, nums, right) - 1


def test_a_corruption_changes_the_answer():
    rng = random.Random(0)
    recs = [WORLD.sample_task(rng) for _ in range(30)]
    for p in battery(WORLD, recs):
        assert p["output_1"] != p["output_2"]
