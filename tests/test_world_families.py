"""FarmWorld's task families: one object each, and a fingerprint that pins the world's behaviour.

Every number in the book rests on FarmWorld drawing the same splits, writing the same responses
and scoring them with the same true reward for the same seed. The fingerprint below hashes all of
that (splits, writer outputs, R* and its parts, parsing, answers, the corpus) so that
a refactor of ``farmlib/world`` that changes a single random draw, template or weight fails here.
If a change to the world is *meant* to alter behaviour, update ``EXPECTED`` in the same commit and
say so: every cached result and every figure in the book changes with it.
"""

import hashlib
import json
import random

import pytest

from farmlib.world import (
    ATTRIBUTES,
    DEMONSTRATOR,
    EXPERT,
    FAMILIES,
    LISTABLE,
    REFERENCE,
    TOOLS,
    FarmWorld,
    Task,
    Writer,
    make_splits,
)
from farmlib.world.families import Family

#: sha256 of ``fingerprint()`` less its R* scores: what the world draws and writes. Recorded when every split
#: came to draw eval's mix of task families (before, the later splits ran out of the small families).
EXPECTED_WORLD = "d59d7d46074f720a5f5f3f5d99347f5be215f8c3a3ea8bb13a2c4c8efd7cefe9"
#: sha256 of the whole ``fingerprint()``, R* included; recorded with the splits above, R*'s ``detail``
#: weight at 3, and ``detail`` no longer counting words inside a phrase the answer already said.
EXPECTED = "134f7a0c87ce3195524da59e9d80b3672e4a970590a1aac42dca73f4751ea064"

MICRO = {"sft": 100, "preference": 100, "unlabeled": 200, "val": 20, "eval": 24}
BIGGER = {"sft": 2000, "preference": 300, "unlabeled": 300, "val": 50, "eval": 100}
POOR = Writer("poor", accuracy=0.3, coverage=0.2, p_list=0.6, p_preamble=0.5, p_closing=0.5, p_ramble=0.5)
DEGENERATE = ["", " ", "###", "### Instruction:\nDescribe the goat.", "42", "-7", "zorp blix", "1, 2, 3",
              "- a\n- b", "1. yes\n2. no", "Positive. Negative.", "animal tool food", "The the the. The the the.",
              "hello " * 150, "white black brown fox owl", "hoe rake saw", "first gather then wash"]

#: Hand-made records that sampling never draws.
EDGE_RECORDS = [
    {"instruction": "Make this sentence more formal.", "input": "The goat eats grass."},
    {"instruction": "Rewrite the following sentence in a formal tone.", "input": "Hey, get the kids a big pie."},
    {"instruction": "Sort these numbers from largest to smallest.", "input": "7, -3, 7, 0"},
    {"instruction": "How many words are in the following sentence?", "input": "  The  owl\thums.  "},
    {"instruction": "Is the following review positive or negative?", "input": "The pie was warm and stale."},
    {"instruction": "Is the following item an animal, a tool, or a food?", "input": "Hammer "},
    {"instruction": "Which animals appear in this text?", "input": "The fox saw the fox and an owl."},
    {"instruction": "  What is 99 minus 100?  ", "input": ""},
    {"instruction": "Compare the owl and the owl.", "input": ""},
]


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def _score(world: FarmWorld, rec: dict, output: str) -> list:
    ins, inp = rec["instruction"], rec.get("input", "")
    return [world.true_reward(ins, inp, output), _jsonable(world.reward_breakdown(ins, inp, output))]


def _record(world: FarmWorld, rec: dict, i: int) -> dict:
    ins, inp = rec["instruction"], rec.get("input", "")
    task = world.parse(ins, inp)
    outs = {wr.name: world.write(rec, wr, random.Random(f"fp-{world.seed}-{i}-{wr.name}"))
            for wr in (DEMONSTRATOR, REFERENCE, EXPERT, POOR)}
    # hedged answers (a right and a wrong one in the same response) and the bare answer
    mixed = [outs["expert"] + " " + outs["poor"], outs["poor"] + "\n" + outs["reference"], _bare(world.answer(task, inp))]
    row = {"rec": _jsonable(rec), "family": task.family, "slots": _jsonable(task.slots),
           "answer": _jsonable(world.answer(task, inp)), "outputs": outs,
           "scores": {k: _score(world, rec, o) for k, o in outs.items()},
           "quality": {k: world.quality(task, inp, o) for k, o in outs.items()},
           "mixed": [_score(world, rec, o) for o in mixed]}
    if "output" in rec:
        row["own"] = _score(world, rec, rec["output"])
    if i % 10 == 0:  # degenerate responses, on a sample of the records
        row["degenerate"] = [_score(world, rec, d) for d in DEGENERATE]
    return row


def _outcome(fn) -> str:
    """What a call returns, or the kind of error it raises."""
    try:
        return repr(fn())
    except Exception as e:  # the kind of error is part of the behaviour
        return type(e).__name__


def _bare(answer) -> str:
    """The answer alone, as plain words: ``[3, 5]`` -> ``"3 5"``, facts -> their values."""
    if isinstance(answer, dict):
        return " ".join(_bare(v) for v in answer.values())
    if isinstance(answer, list):
        return " ".join(map(str, answer))
    return str(answer)


def _believing(seed: int) -> FarmWorld:
    """A world whose facts and tools were edited in place, as a judge's belief is."""
    w, rng = FarmWorld(seed), random.Random(f"fp-belief-{seed}")
    for facts in w.facts.values():
        for k in facts:
            if rng.random() > 0.7:
                facts[k] = rng.choice(ATTRIBUTES[k])
    for p, tools in w.tools.items():
        w.tools[p] = sorted(t if rng.random() < 0.7 else rng.choice(TOOLS) for t in tools)
    return w


def fingerprint() -> dict:
    out: dict = {}
    for seed in (0, 3):
        world = FarmWorld(seed)
        part: dict = {"facts": world.facts, "tools": world.tools, "steps": world.steps,
                      "corpus": world.corpus(1000) + world.corpus(100, seed=1)}
        for tag, sizes, split_seed in (("micro", MICRO, 0), ("micro1", MICRO, 1), ("bigger", BIGGER, 0)):
            splits = make_splits(world, sizes, split_seed)
            part[f"splits-{tag}"] = _jsonable(splits)
            # every record for the micro splits, every 7th for the bigger one (keeps the test quick)
            recs = [r for s in splits.values() for r in s]
            step = 7 if tag == "bigger" else 1
            part[f"rows-{tag}"] = [_record(world, r, i) for i, r in enumerate(recs) if i % step == 0]
        rng = random.Random(f"fp-families-{seed}")
        per_family = [world.sample_task(rng, fam) for fam in FAMILIES for _ in range(15)]
        part["per-family"] = [_record(world, r, i) for i, r in enumerate(per_family)]
        belief = _believing(seed)
        part["belief"] = [[_score(belief, r, o) for o in r_outs] for r, r_outs in
                          ((r, [world.write(r, EXPERT, random.Random(i)), *DEGENERATE[:6]])
                           for i, r in enumerate(per_family[::3]))]
        part["belief-writes"] = [belief.write(r, DEMONSTRATOR, random.Random(i)) for i, r in enumerate(per_family)]
        out[str(seed)] = part
    w0 = FarmWorld()
    out["default-seed"] = [w0.seed, w0.facts == FarmWorld(0).facts]
    out["edge-records"] = [_record(w0, r, 10 * i) for i, r in enumerate(EDGE_RECORDS)]
    out["errors"] = [_outcome(lambda: w0.reward_breakdown("Describe the zebra.", "", "")),
                     _outcome(lambda: w0.true_reward("Compare the owl and the emu.", "", "The owl hums.")),
                     _outcome(lambda: w0.parse("What is apple plus pear?")),
                     _outcome(lambda: w0.answer(Task("poetry", {}), "")),
                     _outcome(lambda: w0.quality(Task("poetry", {}), "", "A poem."))]
    out["not-farmworld"] = [FarmWorld(0).parse(s) is None for s in ("Write a poem about the sea.", "", "What is 2 plus?")]
    out["not-farmworld-reward"] = _score(FarmWorld(0), {"instruction": "Write a poem."}, "Roses are red.")
    out["families"] = [[f, FAMILIES[f].closed_form, _jsonable(FAMILIES[f].templates), f in LISTABLE] for f in FAMILIES]
    return out


def _without_rewards(x):
    """The fingerprint less every R* score: what the world draws and writes, not how it grades."""
    if isinstance(x, dict):
        return {k: _without_rewards(v) for k, v in x.items()
                if k not in ("scores", "quality", "mixed", "own", "degenerate", "belief", "errors", "not-farmworld-reward")}
    if isinstance(x, list):
        return [_without_rewards(v) for v in x]
    return x


def digest(rewards: bool = True) -> str:
    fp = fingerprint() if rewards else _without_rewards(fingerprint())
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()


def test_world_fingerprint_is_unchanged():
    """Same seeds, same splits, same writer outputs, same R*: byte for byte."""
    assert digest(rewards=False) == EXPECTED_WORLD, "FarmWorld's splits, writers or corpus changed"
    assert digest() == EXPECTED, ("FarmWorld's behaviour changed; to see where, dump fingerprint() as JSON "
                                  "before and after the change and diff the two. If R* changed on purpose, record the "
                                  "new digest (labels of the old R* are not reused: the people's key holds R*'s code)")


def test_every_family_is_one_object():
    for name, fam in FAMILIES.items():
        assert isinstance(fam, Family) and fam.name == name and fam.templates
    assert LISTABLE == {name for name, fam in FAMILIES.items() if fam.listable}


def test_a_family_must_say_how_to_write():
    class Silent(Family):  # samples, answers and grades, but has no writer
        name, templates, closed_form = "silent", (("Say nothing.", {}),), True

        def sample(self, world, rng, extra):
            return {}, ""

        def answer(self, world, slots, input):
            return ""

        def quality(self, world, slots, input, output, answer):
            return 1.0

    with pytest.raises(TypeError):
        Silent()


def test_write_rejects_a_foreign_instruction():
    with pytest.raises(ValueError):
        FarmWorld(0).write({"instruction": "Write a poem about the sea.", "input": ""}, DEMONSTRATOR, random.Random(0))


if __name__ == "__main__":
    print(digest())
