"""FarmWorld's task families: one object each, and a fingerprint that pins the world's behaviour.

Every number in the book rests on FarmWorld drawing the same splits, writing the same responses
and scoring them with the same true reward for the same seed. The fingerprint below hashes all of
that (splits, writer outputs, R* and its parts, parsing, answers, the corpus, the lexicon) so that
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
    Writer,
    make_splits,
)

#: sha256 of ``fingerprint()``, recorded on the world before families became one object each.
EXPECTED = "663d1da10895ca048117d8bed02aa29776567d5d90f8506ed1358a8f55f39a1d"

MICRO = {"sft": 100, "preference": 100, "unlabeled": 200, "val": 20, "eval": 24}
BIGGER = {"sft": 2000, "preference": 300, "unlabeled": 300, "val": 50, "eval": 100}
POOR = Writer("poor", accuracy=0.3, coverage=0.2, p_list=0.6, p_preamble=0.5, p_closing=0.5, p_ramble=0.5)
DEGENERATE = ["", " ", "###", "### Instruction:\nDescribe the goat.", "42", "-7", "zorp blix", "1, 2, 3",
              "- a\n- b", "1. yes\n2. no", "Positive. Negative.", "animal tool food", "The the the. The the the.",
              "hello " * 150, "white black brown fox owl", "hoe rake saw", "first gather then wash"]


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
    row = {"rec": _jsonable(rec), "family": task.family, "slots": _jsonable(task.slots),
           "answer": _jsonable(world.answer(task, inp)), "outputs": outs,
           "scores": {k: _score(world, rec, o) for k, o in outs.items()},
           "quality": {k: world.quality(task, inp, o) for k, o in outs.items()}}
    if "output" in rec:
        row["own"] = _score(world, rec, rec["output"])
    if i % 10 == 0:  # degenerate responses, on a sample of the records
        row["degenerate"] = [_score(world, rec, d) for d in DEGENERATE]
    return row


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
                      "lexicon": sorted(world.lexicon),
                      "corpus": world.corpus(150) + world.corpus(40, seed=1)}
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
    out["not-farmworld"] = [FarmWorld(0).parse(s) is None for s in ("Write a poem about the sea.", "", "What is 2 plus?")]
    out["not-farmworld-reward"] = _score(FarmWorld(0), {"instruction": "Write a poem."}, "Roses are red.")
    out["families"] = [[f, FAMILIES[f].closed_form, _jsonable(FAMILIES[f].templates), f in LISTABLE] for f in FAMILIES]
    return out


def digest() -> str:
    return hashlib.sha256(json.dumps(fingerprint(), sort_keys=True).encode()).hexdigest()


def test_world_fingerprint_is_unchanged():
    """Same seeds, same splits, same writer outputs, same R*: byte for byte."""
    assert digest() == EXPECTED


def test_write_rejects_a_foreign_instruction():
    with pytest.raises(ValueError):
        FarmWorld(0).write({"instruction": "Write a poem about the sea.", "input": ""}, DEMONSTRATOR, random.Random(0))


if __name__ == "__main__":
    print(digest())
