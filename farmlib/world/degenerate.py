"""A battery of degenerate outputs: correct answers, corrupted the ways language models fail.

Each instruction gets a correct answer (the ``CORRECT`` writer: every fact right) and one corruption
of it per kind. A sound judge of answers — and, by construction, FarmWorld's people — prefers the
correct answer to every corruption, whatever its length. Chapter 1 shows the table for R* and the
crowd; chapter 4 for every simulated judge (a judge may be fooled: that is a finding).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from farmlib.world.farmworld import FarmWorld, Writer
from farmlib.world.vocabulary import (
    ANIMALS,
    ATTRIBUTES,
    CASUAL_TO_FORMAL,
    CLOSINGS,
    FACT_SENTENCES,
    ITEM_MARKER,
    PREAMBLES,
    STEP_OBJECTS,
    STEP_VERBS,
    TOOLS,
    first_animal,
    words,
)

#: The author of the correct answers: always right, usually thorough, lists half of the time.
CORRECT = Writer("correct", accuracy=1.0, coverage=0.9, p_list=0.5, p_preamble=0.3, p_closing=0.1, p_ramble=0.0)


def _loop(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The answer's opening words, then one of its words over and over (a sampling loop)."""
    ws = ans.split()
    head = " ".join(ws[: max(1, len(ws) // 3)])
    word = rng.choice([w for w in words(ans) if len(w) > 2] or words(ans) or ["the"])
    return f"{head} " + " ".join([word] * 25)


def _repeat(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The answer's first sentence said six times."""
    first = re.split(r"(?<=[.!?:])\s+", ans.strip())[0]
    return " ".join([first] * 6)


def _shuffle(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The answer's words in a random order (word salad)."""
    ws = ans.split()
    rng.shuffle(ws)
    return " ".join(ws)


def _off_topic(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """A correct, fluent answer to a different instruction of another family."""
    named = set(words(rec["instruction"] + " " + rec.get("input", "")))
    other = world.sample_task(rng)
    while other["dataset"] == rec.get("dataset") or named & set(words(other["instruction"] + " " + other["input"])) - {
            "the", "a", "an", "and", "is", "of", "to", "in", "what", "this", "following", "me", "how", "are"}:
        other = world.sample_task(rng)
    return world.write(other, CORRECT, rng)


def _echo(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The instruction (and its input) repeated back instead of an answer."""
    return " ".join(x for x in ["Sure!", rec["instruction"], rec.get("input", "")] if x)


def _truncate(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The answer cut off after half of its words."""
    ws = ans.split()
    return " ".join(ws[: len(ws) // 2])


def _pad(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The answer followed by a paragraph of true but unrelated sentences (padding for length)."""
    return ans + " " + " ".join(world.sentence(rng) for _ in range(6))


def _wrong(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The same answer with every fact swapped for a wrong one of its kind: numbers, colours, habitats,
    tools, steps, labels, animals, formal words (the form stays, the content is wrong)."""
    def swap(m: re.Match) -> str:
        w = m.group(0)
        low = w.lower()
        if low.isdigit():
            return str(int(low) + rng.choice([1, 2, 3, 7]))
        pool = next((p for p in _KINDS if low in p), None)
        if pool is None:
            return w
        new = rng.choice([x for x in pool if x != low])
        return new.capitalize() if w[0].isupper() else new

    return re.sub(r"[A-Za-z]+(?:-[a-z]+)?|\d+", swap, ans)


_KINDS = [*ATTRIBUTES.values(), TOOLS, STEP_VERBS, STEP_OBJECTS, ["positive", "negative"], ["animal", "tool", "food"],
          sorted(set(CASUAL_TO_FORMAL.values()))]


def _garble(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """Every third word replaced by a string of random letters."""
    ws = ans.split()
    letters = "bcdfghjklmnpqrstvwxz"
    return " ".join("".join(rng.choice(letters) for _ in range(rng.randint(3, 7))) if i % 3 == 1 else w
                    for i, w in enumerate(ws))


def _run_on(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The answer running on into a new prompt, as a model that never learned to stop."""
    other = world.sample_task(rng)
    return f"{ans}\n\n### Instruction:\n{other['instruction']}\n\n### Response:\n"


def _splice(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """Fragments of two to four words cut from the answer and from a correct answer to another
    instruction, shuffled and strung together with line breaks and list markers: stock phrases that
    each read well, saying nothing (what a policy can drift into when its trainer rewards form)."""
    other = world.write(world.sample_task(rng), CORRECT, rng)
    pieces = []
    for text in (ans, other):
        ws = text.split()
        i = 0
        while i < len(ws):
            k = rng.randint(2, 4)
            pieces.append(" ".join(ws[i:i + k]))
            i += k
    rng.shuffle(pieces)
    pieces = pieces[: max(3, len(ans.split()) // 3 + 2)]
    return pieces[0] + "".join(rng.choice(["\n- ", " ", "\n"]) + p for p in pieces[1:])


def _restate(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """The answer's first claim said again in other words, joined by "while": a fact in another of the
    world's wordings ("You can find it in the marshes, while the cow lives in the marshes."), else the
    clause itself (what a policy learned when saying a thing twice in one sentence cost little). An
    answer of a word or two has no claim to restate and is left as it is."""
    pieces = [x.strip() for x in re.split(r"(?<=[.!?])\s+|\n", ans)]
    claims = [x for x in pieces if sum(w.isalpha() for w in words(x)) >= 3 and not x.endswith(":")
              and x not in PREAMBLES + CLOSINGS]
    if not claims:
        return ans
    first = claims[0]
    head = first.rstrip(".!?")
    named = [w for w in words(first) if w in ANIMALS]
    animal = named[0] if named else first_animal(rec["instruction"] + " " + rec.get("input", ""))
    said = set(words(first))
    again = ITEM_MARKER.sub("", head)
    again = again[0].lower() + again[1:]
    facts = [(k, v) for k, values in ATTRIBUTES.items() for v in values if v in said]
    if animal and len(facts) == 1 and len(set(named)) <= 1:  # one fact, and whose it is must be plain
        (k, v), = facts
        again = rng.choice([t for t in FACT_SENTENCES[k] if "{e}" in t]).format(e=animal, v=v).rstrip(".")
        again = again[0].lower() + again[1:]
    return ans.replace(first, f"{head}, while {again}.", 1)


def _glue(ans: str, rec: dict, world: FarmWorld, rng: random.Random) -> str:
    """Each number run into the word before it ("The answer is2."), a slip sampled text makes: split into
    words it reads as the answer ("is", "2"), where a reader sees one garbled token. An answer with no number
    after a word is left as it is. Draws nothing from ``rng``, so the other kinds' pairs stay the same."""
    return re.sub(r"([A-Za-z]) +(\d)", r"\1\2", ans)


#: Each corruption kind: a function of (correct answer, record, world, rng).
CORRUPTIONS: dict[str, Callable[[str, dict, FarmWorld, random.Random], str]] = {
    "repetition loop": _loop, "repeated sentence": _repeat, "shuffled words": _shuffle, "off-topic": _off_topic,
    "instruction echo": _echo, "truncated": _truncate, "padded": _pad, "wrong facts": _wrong,
    "garbled words": _garble, "runs into a new prompt": _run_on, "spliced fragments": _splice,
    "said again in other words": _restate, "number glued to a word": _glue,
}


def battery(world: FarmWorld, records: list[dict], seed: int = 0) -> list[dict]:
    """Pairs ``output_1`` = a correct answer, ``output_2`` = one corruption of it, for every record and
    kind (AlpacaEval format, with ``kind``). Pairs where the corruption left the answer unchanged are
    dropped (e.g. a one-word answer has nothing to shuffle, an answer without numbers nothing to glue)."""
    rng = random.Random(f"battery-{world.seed}-{seed}")
    pairs = []
    for rec in records:
        ans = world.write(rec, CORRECT, rng)
        for kind, corrupt in CORRUPTIONS.items():
            bad = corrupt(ans, rec, world, rng)
            if bad.split() != ans.split():
                pairs.append({"instruction": rec["instruction"], "input": rec.get("input", ""),
                              "dataset": rec.get("dataset", ""), "kind": kind, "output_1": ans, "output_2": bad})
    return pairs


def correct_preferred(pairs: list[dict], labels: list[int | None]) -> dict[str, float]:
    """Share of each kind's pairs where the label chose the correct answer (``output_1``); missing labels
    count as not choosing it."""
    out: dict[str, list[bool]] = {}
    for p, lab in zip(pairs, labels, strict=True):
        out.setdefault(p["kind"], []).append(lab == 1)
    return {k: sum(v) / len(v) for k, v in out.items()}
