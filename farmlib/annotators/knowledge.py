"""What a strong judge knows of the world: its facts and its tasks' answers, never its taste.

The paper's judges are GPT-4-class models: they know that 6 − 5 = 1, what a farmer uses, which animals a
text names, and far more than the policy they judge. FarmWorld's judges know the same of their world:
:class:`Knowledge` holds a copy of the world's knowledge base (its animals' facts, its professions' tools,
its chores' steps) and, for an instruction made from one of the world's task templates, the task's correct
answer or the facts an answer should tell (``Family.answer``). It holds no world, no true reward, no
person: what a reply is *worth* is learned by each family's head from its makers' comparisons
(:mod:`farmlib.annotators.learned`), as an LLM judge's taste comes from its makers, not from the crowd.

:func:`knowledge_features` is what a judge notices when it holds the answer beside a reply, as a
reference-guided grader does: how much of the answer the reply says (``recall``), how much of what it
asserts of the answer's kind is right (``precision``), whether an ordered answer (numbers, a chore's steps)
comes in its order (``order``), how much of what it names is about something the task did not ask about
(``foreign``), and how many of its sentences say nothing of the task at all (``beside``: no word of the question,
of the answer or of the answer's kind; a courtesy sentence such as "Have a nice day." is not counted). It reads
words only; it is our own reading, not R*'s ``quality`` (a test checks the judges never reach R*).
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import torch

from farmlib.world.vocabulary import (
    ANIMALS,
    ATTRIBUTES,
    CASUAL_TO_FORMAL,
    COURTESY,
    FOODS,
    NEUTRAL_WORDS,
    PROFESSIONS,
    TOOLS,
    pieces,
    words,
)

#: ``known``, ``recall``, ``precision``, ``order``, ``foreign``, ``beside``.
N_KNOWLEDGE = 6

#: The kind of every word a judge can name: numbers, animals, tools, foods, professions, each attribute's
#: values, formal words. A reply's word of the answer's kind that is not the answer is a wrong claim.
_KIND = {**{a: "animal" for a in ANIMALS}, **{t: "tool" for t in TOOLS}, **{f: "food" for f in FOODS},
         **{p: "profession" for p in PROFESSIONS}, **{v: k for k, vs in ATTRIBUTES.items() for v in vs},
         **{w: "formal" for w in CASUAL_TO_FORMAL.values()}}
_ENTITY = {"animal", "tool", "food", "profession"}


def kind(w: str) -> str:
    """A word's kind (``number`` for a number), or "" for a word of no kind."""
    return "number" if w.lstrip("-").isdigit() else _KIND.get(w, "")


def answer_terms(answer: object) -> list[str]:
    """The words an answer consists of, in order (a dict's values, a list's items, a string's words)."""
    if answer is None:
        return []
    if isinstance(answer, dict):
        return [t for v in answer.values() for t in answer_terms(v)]
    if isinstance(answer, (list, tuple, set, frozenset)):
        return [t for v in answer for t in answer_terms(v)]
    return words(str(answer))


def _in_order(terms: list[str], said: list[str]) -> float:
    """The longest common subsequence of ``terms`` and ``said``, as a share of ``terms``."""
    prev = [0] * (len(said) + 1)
    for t in terms:
        cur = [0]
        for j, s in enumerate(said):
            cur.append(prev[j] + 1 if t == s else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1] / len(terms)


def beside(terms: list[str], kinds: set[str], asked: set[str], output: str) -> float:
    """The share of ``output``'s sentences (and list items) that name nothing of the task: no word of the question
    (``asked``, its neutral words aside) or of the answer (``terms``), and no word of the answer's ``kinds``. Courtesy
    sentences are left out, neither counted nor held against it; a reply of courtesy alone says nothing of the
    task (1)."""
    about = (asked - set(NEUTRAL_WORDS)) | set(terms)
    said = [words(s) for s in pieces(output)]
    said = [s for s in said if s and " ".join(s) not in COURTESY]
    off = sum(not any(w in about or kind(w) in kinds for w in s) for s in said)
    return off / len(said) if said else 1.0


def knowledge_features(answer: object, instruction: str, input: str, output: str) -> list[float]:
    """What a judge who knows ``answer`` notices of ``output`` (:data:`N_KNOWLEDGE` numbers, all 0 when it
    does not know the answer: an instruction from outside its world)."""
    terms = answer_terms(answer)
    if not terms:
        return [0.0] * N_KNOWLEDGE
    said, asked = words(output), set(words(instruction)) | set(words(input))
    want, kinds = set(terms), {kind(t) for t in terms} - {""}
    hits = want & set(said)
    wrong = {w for w in said if kind(w) in kinds and w not in want and w not in asked}
    named = [w for w in said if kind(w) in _ENTITY]
    foreign = sum(w not in want and w not in asked for w in named) / max(len(named), 1)
    ordered = isinstance(answer, (list, tuple)) and all(isinstance(a, int) or " " in str(a) for a in answer)
    order = _in_order(terms, [w for w in said if w in want]) if ordered else len(hits) / len(want)
    return [1.0, len(hits) / len(want), len(hits) / max(len(hits) + len(wrong), 1), order, foreign,
            beside(terms, kinds, asked, output)]


class Knowledge:
    """A copy of one world's knowledge base and its task templates: ``answer(instruction, input)`` is the
    task's answer, or None for an instruction the world does not make."""

    def __init__(self, facts: dict, tools: dict, steps: dict):
        self._kb = SimpleNamespace(facts=copy.deepcopy(facts), tools=copy.deepcopy(tools), steps=copy.deepcopy(steps),
                                   value_attr={v: k for k, vs in ATTRIBUTES.items() for v in vs})

    @classmethod
    def of(cls, world) -> Knowledge:
        """What a judge trained on ``world``'s text knows of it (the world itself is not kept)."""
        return cls(world.facts, world.tools, world.steps)

    def answer(self, instruction: str, input: str = "") -> object | None:
        from farmlib.world.families import FAMILIES

        for fam in FAMILIES.values():
            slots = fam.parse(instruction)
            if slots is not None:
                return fam.answer(self._kb, slots, input)
        return None


class KnowledgeReader:
    """:func:`knowledge_features` of records, beside the LM readers' features (:func:`read_features`)."""

    width = N_KNOWLEDGE

    def __init__(self, knowledge: Knowledge):
        self.knowledge = knowledge
        self._answers: dict[tuple[str, str], object] = {}

    def features(self, records: list[dict], key: str = "output") -> torch.Tensor:
        rows = []
        for r in records:
            task = (r["instruction"], r.get("input", ""))
            if task not in self._answers:
                self._answers[task] = self.knowledge.answer(*task)
            rows.append(knowledge_features(self._answers[task], *task, r[key]))
        return torch.tensor(rows, dtype=torch.float32).reshape(len(records), N_KNOWLEDGE)
