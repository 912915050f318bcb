"""FarmWorld: a seeded, procedurally generated instruction world with a known true reward.

The real AlpacaFarm runs on Alpaca instructions, LLaMA and people. Offline we need a stand-in
where "what a person would prefer" is computable, so that every simulated judge and every
method can be measured against the truth. FarmWorld has

* a knowledge base (animals and their facts, professions and their tools, chores and their
  steps) drawn from a seed;
* twelve task families in the Alpaca schema (``instruction``, ``input``, ``output``), some
  closed-form (arithmetic, counting, sorting, extraction, classification), some open-ended
  (describe, compare, list, explain, rewrite), one object each in ``families``;
* the true reward ``R*(x, y)``: task success plus the style preferences people showed in the
  paper (longer answers and lists are liked, rambling, garbled or wrong answers are not);
* procedural *writers* of adjustable skill: the demonstrator that wrote the SFT data (as
  Davinci003 wrote Alpaca's), the reference model of the evaluation, and a strong expert
  (the GPT-4 analog);
* a corpus of plain world text for pretraining a base model (the LLaMA-base analog): facts, sums,
  reviews, and pages of questions about an animal with their answers (web text taught LLaMA what a
  question asks; without them a small SFT model told another fact than the one asked about half the time).

``R*`` is a pure function of the text: it parses the instruction back into a task, so it can
score any response from any model. Nothing but the evaluation and the simulated people may
call it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cached_property

from farmlib.world.families import FAMILIES, LISTABLE, Family
from farmlib.world.true_reward import REWARD_WEIGHTS, TrueReward
from farmlib.world.vocabulary import (
    ANIMALS,
    ATTRIBUTES,
    CASUAL_TEMPLATES,
    CASUAL_TO_FORMAL,
    CHORES,
    CLOSINGS,
    FACT_SENTENCES,
    FOODS,
    ITEM_CATEGORY,
    NEGATIVE,
    NEUTRAL_WORDS,
    POSITIVE,
    PREAMBLES,
    PROFESSIONS,
    REVIEW_ITEMS,
    STEP_OBJECTS,
    STEP_VERBS,
    TOOLS,
    is_list,
    words,
)


def format_prompt(instruction: str, input: str = "") -> str:
    """Our prompt format: an instruction, an optional input, and the start of a response."""
    if input:
        return f"### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n"
    return f"### Instruction:\n{instruction}\n\n### Response:\n"


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Writer:
    """A procedural author of responses, of adjustable skill and style.

    accuracy: chance each answer or fact is right; coverage: share of the relevant facts told;
    p_list: chance to format a listable answer as a list; p_preamble / p_closing: chance of an
    opening / closing sentence; p_ramble: chance of repeating a sentence.
    """

    name: str
    accuracy: float = 0.85
    coverage: float = 0.55
    p_list: float = 0.3
    p_preamble: float = 0.3
    p_closing: float = 0.1
    p_ramble: float = 0.05


#: The demonstrator that wrote the SFT data (Alpaca's demonstrations came from Davinci003).
DEMONSTRATOR = Writer("demonstrator")
#: The fixed reference model of the evaluation (the Davinci003 analog): same style, own samples.
REFERENCE = Writer("reference")
#: The strongest model the world allows (the GPT-4 analog).
EXPERT = Writer("expert", accuracy=0.98, coverage=0.95, p_list=0.85, p_preamble=0.6,
                p_closing=0.3, p_ramble=0.0)


@dataclass(frozen=True)
class Task:
    """An instruction parsed back into the world's terms."""

    family: str
    slots: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
class FarmWorld:
    """The world for one seed: knowledge base, task generator, writers and true reward.

    What is particular to a task family lives in its ``Family`` object (``FAMILIES``); the world
    holds the facts and what every family shares.
    """

    def __init__(self, seed: int = 0):
        self.seed = seed
        rng = random.Random(f"farmworld-kb-{seed}")
        self.facts = {a: {k: rng.choice(v) for k, v in ATTRIBUTES.items()} for a in ANIMALS}
        self.tools = {p: sorted(rng.sample(TOOLS, 5)) for p in PROFESSIONS}
        self.steps: dict[str, list[str]] = {}
        for c in CHORES:
            verbs = rng.sample(STEP_VERBS, 5)
            objs = rng.sample(STEP_OBJECTS, 5)
            self.steps[c] = [f"{v} the {o}" for v, o in zip(verbs, objs)]
        self.value_attr = {v: k for k, vs in ATTRIBUTES.items() for v in vs}

    # -- task generation ------------------------------------------------------------------
    def sample_task(self, rng: random.Random, family: str | None = None) -> dict:
        """One instruction record (Alpaca schema, no output) drawn from the world."""
        fam = FAMILIES[family or rng.choice(list(FAMILIES))]
        tpl, extra = rng.choice(fam.templates)
        slots, inp = fam.sample(self, rng, extra)
        return {"instruction": tpl.format(**slots), "input": inp, "dataset": fam.name}

    def sentence(self, rng: random.Random) -> str:
        """A true sentence about a random animal, naming it."""
        a = rng.choice(ANIMALS)
        attr = rng.choice(list(FACT_SENTENCES))
        s = rng.choice(FACT_SENTENCES[attr]).format(e=a, v=self.facts[a][attr])
        return s.replace("It ", f"The {a} ", 1) if s.startswith("It ") else s

    def parse(self, instruction: str, input: str = "") -> Task | None:
        """Recover the task of an instruction; None if it is not a FarmWorld instruction."""
        for fam in FAMILIES.values():
            slots = fam.parse(instruction)
            if slots is not None:
                return Task(fam.name, slots)
        return None

    # -- the truth ------------------------------------------------------------------------
    def answer(self, task: Task, input: str) -> object:
        """The correct answer (closed-form families) or the relevant facts (open-ended)."""
        return _family(task).answer(self, task.slots, input)

    def quality(self, task: Task, input: str, output: str) -> float:
        """Task success in [0, 1]: correctness and completeness, with wrong facts penalized."""
        fam = _family(task)
        ans = fam.answer(self, task.slots, input)
        if not words(output):
            return 0.0
        return fam.quality(self, task.slots, input, output, ans)

    def reward_breakdown(self, instruction: str, input: str, output: str) -> dict[str, float]:
        """The parts of R*(x, y) and their weighted ``total`` (see ``farmlib.world.true_reward``)."""
        return self._true_reward.breakdown(instruction, input, output)

    @cached_property
    def _true_reward(self) -> TrueReward:
        return TrueReward(self)

    def true_reward(self, instruction: str, input: str, output: str) -> float:
        """R*(x, y): what a person in FarmWorld feels about response y to instruction x."""
        return self.reward_breakdown(instruction, input, output)["total"]

    # -- writers --------------------------------------------------------------------------
    def write(self, record: dict, writer: Writer, rng: random.Random) -> str:
        """A response to ``record`` in the style and skill of ``writer``."""
        task = self.parse(record["instruction"], record.get("input", ""))
        if task is None:
            raise ValueError(f"not a FarmWorld instruction: {record['instruction']!r}")
        body = FAMILIES[task.family].write(self, task.slots, record.get("input", ""), writer, rng)
        out = body
        if rng.random() < writer.p_preamble:
            out = rng.choice(PREAMBLES) + " " + out
        if rng.random() < writer.p_ramble:
            first = re.split(r"(?<=[.!?])\s", body)[0]
            out = out + " " + first
        if rng.random() < writer.p_closing:
            out = out + ("\n" if "\n" in out else " ") + rng.choice(CLOSINGS)
        return out.strip()

    # -- base-model corpus ----------------------------------------------------------------
    def corpus(self, n_docs: int, seed: int = 0) -> list[str]:
        """Plain world text, no instructions: what the base model reads in pretraining."""
        rng = random.Random(f"corpus-{self.seed}-{seed}")
        docs = []
        for _ in range(n_docs):
            kind = rng.randrange(9)
            if kind == 0:
                a = rng.choice(ANIMALS)
                attrs = rng.sample(list(ATTRIBUTES), rng.randint(2, 5))
                docs.append(f"The {a}. " + " ".join(
                    rng.choice(FACT_SENTENCES[k]).format(e=a, v=self.facts[a][k]) for k in attrs))
            elif kind == 1:
                p = rng.choice(PROFESSIONS)
                ts = rng.sample(self.tools[p], rng.randint(2, 5))
                docs.append(f"A {p} works with a " + ", a ".join(ts) + ". " + rng.choice(_CORPUS_PHRASES))
            elif kind == 2:
                c = rng.choice(CHORES)
                st = self.steps[c]
                docs.append(f"To {c}, first {st[0]}. " + " ".join(f"Then {s}." for s in st[1:-1])
                            + f" Finally, {st[-1]}.")
            elif kind == 3:
                lines = []
                for _ in range(rng.randint(2, 5)):
                    a, b = rng.randint(2, 99), rng.randint(2, 99)
                    op, val = rng.choice([("plus", a + b), ("minus", a - b), ("times", a * b)])
                    lines.append(f"{a} {op} {b} equals {val}.")
                docs.append(" ".join(lines))
            elif kind == 4:
                good = rng.random() < 0.5
                adj = rng.sample(POSITIVE if good else NEGATIVE, 2)
                docs.append(f"The {rng.choice(REVIEW_ITEMS)} was {adj[0]} and {adj[1]}. "
                            + ("We will come back." if good else "We will not come back."))
            elif kind == 5:
                docs.append(" ".join(self.sentence(rng) for _ in range(rng.randint(2, 4))))
            elif kind == 6:
                c, f = rng.choice(list(CASUAL_TO_FORMAL.items()))
                docs.append(f"People say {c} at home but {f} in a letter. "
                            + self.sentence(rng))
            elif kind == 7:  # a page of questions and answers, as the web has (the base model learns what is asked)
                a = rng.choice(ANIMALS)
                qas = []
                for k in rng.sample(list(ATTRIBUTES), rng.randint(2, 4)):
                    ans = rng.choice(FACT_SENTENCES[k]).format(e=a, v=self.facts[a][k])
                    qas.append(QUESTIONS[k].format(e=a) + " " + ans.replace("It ", f"The {a} ", 1))
                docs.append(" ".join(qas))
            else:  # what kind of thing each thing is
                items = rng.sample(list(ITEM_CATEGORY), rng.randint(2, 4))
                docs.append(" ".join(f"{_LEAD[ITEM_CATEGORY[x]]} {x} is {'an' if ITEM_CATEGORY[x] == 'animal' else 'a'} "
                                     f"{ITEM_CATEGORY[x]}.".strip().capitalize() for x in items))
        return docs


#: How a page of questions and answers asks for each attribute of an animal: qa_fact's own questions.
QUESTIONS = {extra["attr"]: tpl for tpl, extra in FAMILIES["qa_fact"].templates}
#: The word before an item in a sentence saying what kind of thing it is ("Honey is a food.").
_LEAD = {"animal": "The", "tool": "A", "food": ""}


def _family(task: Task) -> Family:
    try:
        return FAMILIES[task.family]
    except KeyError:
        raise ValueError(task.family) from None


_CORPUS_PHRASES = ["Every day is busy on the farm.", "The market opens in the morning.",
                   "People say", "at home but", "in a letter", "We will come back.",
                   "We will not come back.", "The farm", "works with a", "first then finally equals"]
__all__ = ["ANIMALS", "ATTRIBUTES", "CASUAL_TEMPLATES", "CASUAL_TO_FORMAL", "CHORES", "CLOSINGS", "DEMONSTRATOR",
           "EXPERT", "FACT_SENTENCES", "FAMILIES", "FOODS", "ITEM_CATEGORY", "LISTABLE", "NEGATIVE", "NEUTRAL_WORDS",
           "POSITIVE", "PREAMBLES", "PROFESSIONS", "REFERENCE", "REVIEW_ITEMS", "REWARD_WEIGHTS", "STEP_OBJECTS",
           "STEP_VERBS", "TOOLS", "Family", "FarmWorld", "Task", "Writer", "format_prompt", "is_list", "words"]
