import random

import pytest

from farmlib.world import ATTRIBUTES, DEMONSTRATOR, EXPERT, FAMILIES, FarmWorld, Writer, is_list


def test_same_seed_same_world_and_tasks():
    a, b = FarmWorld(3), FarmWorld(3)
    assert a.facts == b.facts and a.tools == b.tools and a.steps == b.steps
    ra, rb = random.Random(5), random.Random(5)
    assert [a.sample_task(ra) for _ in range(50)] == [b.sample_task(rb) for _ in range(50)]
    assert a.corpus(20) == b.corpus(20)


def test_other_seed_other_world():
    assert FarmWorld(0).facts != FarmWorld(1).facts


def test_at_least_ten_families_with_inputs_and_without():
    w, rng = FarmWorld(0), random.Random(0)
    assert len(FAMILIES) >= 10
    recs = [w.sample_task(rng) for _ in range(600)]
    assert {r["dataset"] for r in recs} == set(FAMILIES)
    assert any(r["input"] for r in recs) and any(not r["input"] for r in recs)
    assert any(f.closed_form for f in FAMILIES.values()) and any(not f.closed_form for f in FAMILIES.values())


def test_every_template_parses_back_to_its_family():
    w, rng = FarmWorld(0), random.Random(1)
    for fam in FAMILIES:
        for _ in range(20):
            r = w.sample_task(rng, fam)
            assert w.parse(r["instruction"], r["input"]).family == fam
    assert w.parse("Write a poem about the sea.") is None


W = FarmWorld(0)


def reward(instruction, output, input=""):
    return W.reward_breakdown(instruction, input, output)


def test_arithmetic_right_wrong_and_hedged():
    assert reward("What is 17 plus 25?", "17 plus 25 equals 42.")["quality"] == 1.0
    assert reward("What is 17 plus 25?", "The answer is 41.")["quality"] == 0.0
    assert reward("What is 17 plus 25?", "It is 42 or maybe 43.")["quality"] == 0.4
    assert reward("Multiply 3 by 4.", "12")["quality"] == 1.0
    assert reward("Subtract 5 from 9.", "4")["quality"] == 1.0


def test_closed_form_families_by_hand():
    assert reward("Sort the following numbers from smallest to largest.", "2, 5, 9", "5, 2, 9")["quality"] == 1.0
    assert reward("Sort these numbers from largest to smallest.", "9, 5, 2", "5, 2, 9")["quality"] == 1.0
    assert reward("Sort the following numbers from smallest to largest.", "5, 2, 9", "5, 2, 9")["quality"] == pytest.approx(1 / 3)
    assert reward("How many words are in the following sentence?", "4", "The owl hums loudly.")["quality"] == 1.0
    assert reward("Is the following review positive or negative?", "Negative.", "The pie was stale and cold.")["quality"] == 1.0
    assert reward("Is the following review positive or negative?", "Positive.", "The pie was stale and cold.")["quality"] == 0.0
    assert reward("Is the following item an animal, a tool, or a food?", "It is a tool.", "hammer")["quality"] == 1.0
    q = reward("List the animals mentioned in the following text.", "The fox.", "The fox and the owl walked to the hills together.")
    assert q["quality"] == pytest.approx(2 / 3)  # F1 of {fox} against {fox, owl}


def test_open_ended_rewards_coverage_and_punishes_wrong_facts():
    f = W.facts["alpaca"]
    other = {k: next(v for v in vs if v != f[k]) for k, vs in
             {"color": ["white", "black"], "habitat": ["mountains", "meadows"]}.items()}
    one = reward("Describe the alpaca.", f"The alpaca is {f['color']}.")
    two = reward("Describe the alpaca.", f"The alpaca is {f['color']}. It lives in the {f['habitat']}.")
    wrong = reward("Describe the alpaca.", f"The alpaca is {other['color']}. It lives in the {other['habitat']}.")
    assert one["quality"] == pytest.approx(0.2) and two["quality"] == pytest.approx(0.4)
    assert wrong["quality"] == 0.0
    assert two["total"] > one["total"] > wrong["total"]


def test_people_like_lists_and_detail_but_no_defect():
    f = W.facts["goat"]
    prose = f"The goat is {f['color']}. It lives in the {f['habitat']}. It eats {f['diet']}."
    listed = f"Facts:\n- The goat is {f['color']}.\n- It lives in the {f['habitat']}.\n- It eats {f['diet']}."
    assert is_list(listed) and not is_list(prose)
    assert reward("Describe the goat.", listed)["total"] > reward("Describe the goat.", prose)["total"]
    one = reward("Describe the goat.", f"The goat is {f['color']}.")
    rambling = reward("Describe the goat.", " ".join([f"The goat is {f['color']}."] * 4))
    assert rambling["repetition"] == 1.0  # a sentence said twice costs in full
    assert rambling["total"] < one["total"]
    padded = f"The goat is {f['color']}. It lives in the {f['habitat']}. It eats {f['diet']}."
    twice = reward("Describe the goat.", padded + f" It eats {f['diet']}.")
    assert twice["repetition"] == 1.0 and twice["total"] < reward("Describe the goat.", padded)["total"]
    assert twice["total"] < reward("Describe the goat.", f"The goat is {f['color']}. It eats {f['diet']}.")["total"], \
        "a repeated sentence must cost more than the detail around it buys"
    loop = reward("Describe the goat.", "Here are some facts about the goat " + "goat " * 30)
    assert loop["repetition"] > 0.8 and loop["total"] < 0
    salad = reward("Describe the goat.", f"fur {f['color']} the It goat. eats lives the in {f['diet']} {f['habitat']}")
    assert salad["disfluency"] > 0.5 and salad["total"] < one["total"]
    assert reward("Describe the goat.", "zorp blix goat")["disfluency"] > 0.5
    # a word and a number run together: one garbled token to a reader, though "is2" splits into "is", "2"
    spaced = reward("Sort the following numbers from smallest to largest.", "The answer is 2, 5, 9.", "9, 2, 5")
    glued = reward("Sort the following numbers from smallest to largest.", "The answer is2, 5, 9.", "9, 2, 5")
    assert spaced["disfluency"] == 0 and glued["disfluency"] > 0 and glued["total"] < spaced["total"]
    assert reward("Describe the goat.", f"The goat is {f['color']}.\n### Instruction:")["broken"] == 1.0
    assert reward("Describe the goat.", f"The goat is {f['color']}~")["broken"] == 1.0
    assert reward("Describe the goat.", "")["total"] == 0.0


def test_saying_a_thing_twice_in_other_words_costs_in_full():
    """The forms PPO on R* found when a repeat cost only its share of repeated words: the same fact in two
    wordings joined by "while", a clause said twice inside one sentence, a list item named twice inline."""
    f, g = W.facts["cow"], W.facts["pig"]
    fact = f"The cow makes its home in the {f['habitat']}, while the cow lives in the {f['habitat']}."
    clause = f"The pig is {g['color']}. It eats {g['diet']}, while the pig is {g['color']}."
    assert reward("Where does the cow live?", fact)["repetition"] == 1.0
    assert reward("What color is the pig?", clause)["repetition"] == 1.0
    plain = reward("Where does the cow live?", f"The cow lives in the {f['habitat']}.")
    assert reward("Where does the cow live?", fact)["total"] < plain["total"]
    for said in ("The animals mentioned are the beaver and the beaver.",
                 "The animals mentioned are the goose and the hawk. The animals mentioned are the hawk and the goose."):
        assert reward("Which animals appear in this text?", said, "The goose and the hawk met the beaver.")["repetition"] == 1.0
    # the same value for two animals, "it" for the task's animal, and two enumerations of different items are not
    compare = (f"The cow lives in the {f['habitat']}, while the pig lives in the {f['habitat']}. "
               f"Its coat is {f['color']}, while the pig is {g['color']}.")
    assert reward("Compare the cow and the pig.", compare)["repetition"] == 0.0
    assert reward("Which animals appear in this text?", "The animals mentioned are the goose and the hawk.",
                  "The goose and the hawk met.")["repetition"] == 0.0


def test_a_loop_tells_nothing_new():
    """Words inside a phrase the answer already said add no detail: a loop of a right answer is not worth
    more than the answer (it used to count as fluent detail and came within 0.1 of the plain answer)."""
    ins, item = "Is the following item an animal, a tool, or a food?", "rake"
    plain = W.reward_breakdown(ins, item, "Tool.")
    loop = W.reward_breakdown(ins, item, "Tool. " + "tool " * 25)
    assert loop["detail"] <= plain["detail"] + 0.1 and loop["total"] < plain["total"] - 1
    f = W.facts["goat"]
    one = W.reward_breakdown("Describe the goat.", "", f"The goat is {f['color']}.")
    looped = W.reward_breakdown("Describe the goat.", "", f"The goat is {f['color']} the goat is {f['color']} " * 4)
    more = W.reward_breakdown("Describe the goat.", "", f"The goat is {f['color']}. It lives in the {f['habitat']}.")
    assert looped["detail"] <= one["detail"] + 0.1 < more["detail"]  # new words still count


def test_off_topic_and_echo_cost_more_than_their_length():
    f, g = W.facts["goat"], W.facts["cow"]
    right = f"The goat is {f['color']}."
    padded = right + f" The cow is {g['color']}. The cow lives in the {g['habitat']}. The cow eats {g['diet']}."
    assert reward("Describe the goat.", padded)["off_topic"] == pytest.approx(0.75)
    assert reward("Describe the goat.", padded)["total"] < reward("Describe the goat.", right)["total"]
    echo = reward("Describe the goat.", "Sure! Describe the goat.")
    assert echo["echo"] == 1.0 and echo["total"] < 0
    # restating the numbers of a sum while explaining it is not an echo
    assert reward("Multiply 2 by 17.", "2 times 17 equals 34. To find this, multiply 2 by 17.")["echo"] == 0.0


def test_length_is_worth_something_only_when_right():
    f = W.facts["horse"]
    wrong = {k: next(v for v in vs if v != f[k]) for k, vs in ATTRIBUTES.items()}
    short_right = reward("Describe the horse.", f"The horse is {f['color']}.")
    long_wrong = reward("Describe the horse.", f"The horse is {wrong['color']}. It lives in the {wrong['habitat']}. "
                        f"It eats {wrong['diet']}. It is a {wrong['size']} animal. The horse {wrong['sound']} at night.")
    assert long_wrong["detail"] > short_right["detail"] and long_wrong["total"] < short_right["total"]


def test_expert_beats_demonstrator_and_writers_are_fluent():
    w, rng = FarmWorld(0), random.Random(0)
    recs = [w.sample_task(rng) for _ in range(400)]
    mean = {}
    for writer in (DEMONSTRATOR, EXPERT, Writer("poor", accuracy=0.3, coverage=0.2)):
        outs = [w.write(r, writer, rng) for r in recs]
        mean[writer.name] = sum(w.true_reward(r["instruction"], r["input"], o) for r, o in zip(recs, outs)) / len(recs)
        parts = [w.reward_breakdown(r["instruction"], r["input"], o) for r, o in zip(recs, outs)]
        # writers are fluent (a rambling writer's repeated sentence may join two sentences oddly: that is its defect)
        assert all(p["disfluency"] == 0 for p in parts if p["repetition"] == 0)
        assert all(p["echo"] == 0 and p["broken"] == 0 for p in parts)
        if writer is EXPERT:  # and the expert, who never rambles, is never off-topic or repetitive
            assert all(p["off_topic"] == 0 and p["repetition"] == 0 for p in parts)
    assert mean["expert"] > mean["demonstrator"] > mean["poor"]
