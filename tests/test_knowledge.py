"""What the judges know of the world: its answers, read from words, never its true reward."""
import random

import pytest

from farmlib.annotators.knowledge import (
    N_KNOWLEDGE,
    Knowledge,
    KnowledgeReader,
    answer_terms,
    knowledge_features,
)
from farmlib.world import FarmWorld

W = FarmWorld(0)


def test_knowledge_answers_as_the_world_does_without_holding_it():
    k, rng = Knowledge.of(W), random.Random(3)
    for _ in range(600):
        r = W.sample_task(rng)
        assert k.answer(r["instruction"], r["input"]) == W.answer(W.parse(r["instruction"], r["input"]), r["input"])
    assert k.answer("Write a poem about the sea.") is None  # not an instruction this world makes
    assert not any(isinstance(v, FarmWorld) for v in vars(k).values())
    W.facts["alpaca"]["color"], before = "purple", W.facts["alpaca"]["color"]  # a copy, not a view of the world
    try:
        assert k.answer("What color is the alpaca?") != "purple"
    finally:
        W.facts["alpaca"]["color"] = before


def test_answer_terms_flatten_in_order():
    assert answer_terms(1) == ["1"]
    assert answer_terms([3, 10, 22]) == ["3", "10", "22"]
    assert answer_terms({"color": "white", "diet": "grass"}) == ["white", "grass"]
    assert answer_terms(["gather the tools", "wash the wood"]) == ["gather", "the", "tools", "wash", "the", "wood"]
    assert answer_terms(None) == []


@pytest.mark.parametrize("answer, instruction, input, output, want", [
    # known, recall, precision, order, foreign, beside
    (1, "What is 6 minus 5?", "", "The answer is 1.", [1, 1, 1, 1, 0, 0]),
    (1, "What is 6 minus 5?", "", "The answer is 2.", [1, 0, 0, 0, 0, 0]),  # a wrong number, not one asked about
    (1, "What is 6 minus 5?", "", "6 minus 5 is 1.", [1, 1, 1, 1, 0, 0]),  # the question's own numbers are not claims
    ([3, 10, 22], "Sort these.", "10, 3, 22", "22, 10, 3", [1, 1, 1, 1 / 3, 0, 0]),  # all there, out of order
    ({"diet": "grass"}, "What does the goat eat?", "", "The goat eats fish. The owl is red.", [1, 0, 0, 0, 0.5, 0.5]),
    ("positive", "Is the review positive or negative?", "", "positive", [1, 1, 1, 1, 0, 0]),
    # a wrong answer attempts the task; a sentence about something else does not (courtesy is left out)
    (125, "What is 30 plus 95?", "", "Here is my answer. You can find it in the hills.", [1, 0, 0, 0, 0, 1]),
    (125, "What is 30 plus 95?", "", "The answer is 125.\nYou can find it in the hills.", [1, 1, 1, 1, 0, 0.5]),
    (125, "What is 30 plus 95?", "", "Here is my answer. Have a nice day.", [1, 0, 0, 0, 0, 1]),  # courtesy alone
])
def test_knowledge_features_by_hand(answer, instruction, input, output, want):
    assert knowledge_features(answer, instruction, input, output) == pytest.approx(want)


def test_an_instruction_it_does_not_know_reads_as_zeros():
    assert knowledge_features(None, "Write a poem.", "", "Roses are red.") == [0.0] * N_KNOWLEDGE
    reader = KnowledgeReader(Knowledge.of(W))
    f = reader.features([{"instruction": "Write a poem.", "input": "", "output": "x"},
                         {"instruction": "What is 2 plus 2?", "input": "", "output": "4"}])
    assert f.shape == (2, N_KNOWLEDGE) and f[0].abs().sum() == 0 and f[1, 1] == 1


def test_a_head_that_knows_will_not_load_without_knowledge(micro_farm):
    from farmlib.annotators import JudgeLM, TextReader
    from farmlib.annotators.learned import JUDGE_FAMILIES, train_judge

    knowing = [f for f, c in JUDGE_FAMILIES.items() if c.knows]
    assert knowing, "no judge family knows the world's answers"
    reader = TextReader.load(micro_farm.base_model(), micro_farm.tokenizer())
    with pytest.raises(ValueError, match="knows"):
        JudgeLM.load(train_judge(micro_farm, JUDGE_FAMILIES[knowing[0]]), reader)
