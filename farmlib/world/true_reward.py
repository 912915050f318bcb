"""The true reward R*(x, y): what the average FarmWorld person feels about response y to instruction x.

A person values *content*: the task done right (``quality``) and a clear, on-topic explanation of
it (``detail``), formatted as a list where a list fits. Length is worth something only through
that content: a sentence counts towards ``detail`` when it is fluent, on the task's topic, and not
said before, less any words inside a phrase the answer has already said (a loop tells nothing new).
What a person dislikes costs more than any length can buy:

* ``repetition``: anything said twice costs in full (1), however long the answer around it: a sentence,
  a clause, a fact in other words ("you can find it in the marshes, while the cow lives in the marshes"),
  a list item ("the beaver and the beaver"), or any run of five words (loops such as "horse horse
  horse"). A reader sees it at once, and an answer padded with facts should not buy one back;
* ``disfluency``: word pairs no FarmWorld text ever puts side by side (shuffled words, word salad,
  garbled tokens such as a word and a number run together, "is2", an answer that stops mid-phrase);
* ``off_topic``: sentences about something the task did not ask about (another animal, filler);
* ``echo``: the instruction (or a long input) repeated back;
* ``broken``: the response runs into a new prompt (``###``) or holds characters no answer uses.

Fluency is read off a *grammar* learned from the world's own texts (the pretraining corpus and the
writers' answers): the word pairs, with each word replaced by its class (an animal, a tool, a
number, a colour...), that those texts use. It is data, not a list of rules, and every writer's
answer is fluent by construction (a test checks it).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING

from farmlib.world.families import FAMILIES, LISTABLE
from farmlib.world.vocabulary import (
    ANIMALS,
    ATTRIBUTES,
    CASUAL_TO_FORMAL,
    CHORES,
    CLOSINGS,
    COURTESY,
    FOODS,
    NEGATIVE,
    NEUTRAL_WORDS,
    POSITIVE,
    PREAMBLES,
    PROFESSIONS,
    STEP_OBJECTS,
    STEP_VERBS,
    TOOLS,
    first_animal,
    is_list,
    pieces,
    said_twice,
    words,
)

if TYPE_CHECKING:
    from farmlib.world.farmworld import FarmWorld, Task

#: The weights of R*'s parts: the average person's taste (each simulated person varies around it).
#: ``detail`` and ``list`` were set on pairs of the demonstrator's answers (sensible outputs), aiming at
#: the paper's crowd (prefers the longer answer 0.58-0.68, the list 0.58-0.72); chapter 4 measures where
#: the people land on those pairs and on SFT pairs. ``detail`` is 3: at 1 and 2 the crowd preferred the
#: longer of two sensible answers 0.55 and 0.58 of the time; at 4 a repetition loop of a right answer
#: could beat the plain answer (the battery fell to 88 %). The defect weights are set so that no defect can
#: be paid for by length (the degenerate-output battery).
REWARD_WEIGHTS = {"quality": 1.0, "detail": 3.0, "list": 0.6,
                  "repetition": -2.0, "disfluency": -2.0, "off_topic": -1.5, "echo": -1.0, "broken": -1.0}

#: Words of ``detail`` at which more explanation stops helping.
DETAIL_CAP = 40
#: Characters an answer may use; anything else reads as garbled output.
_PLAIN = re.compile(r"[^A-Za-z0-9\s.,!?:;'()\-]")


# ---------------------------------------------------------------------------------------------
def word_class(w: str) -> str:
    """A word's class for the grammar: numbers, animals, tools, foods, professions, attribute values,
    step words and sentiment words stand for their class; any other word stands for itself."""
    if w.lstrip("-").isdigit():
        return "<num>"
    return _CLASSES.get(w, w)


_CLASSES: dict[str, str] = {}
for _cls, _ws in [("<step_verb>", STEP_VERBS), ("<step_obj>", STEP_OBJECTS), ("<pos>", POSITIVE),
                  ("<neg>", NEGATIVE), ("<profession>", PROFESSIONS), ("<food>", FOODS), ("<tool>", TOOLS),
                  *[(f"<{k}>", v) for k, v in ATTRIBUTES.items()], ("<animal>", ANIMALS)]:
    _CLASSES.update({w: _cls for w in _ws})  # later classes win: an animal is always <animal>


#: A token as the grammar reads it: like :func:`words`, except that letters and digits run together
#: ("is2", "2and") stay one token, a word no world text writes, where ``words`` would read "is 2".
_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z]+)?")


def _classes(text: str) -> list[str]:
    return [word_class(w) for w in _TOKEN.findall(text.lower())]


def _bigrams(text: str) -> Iterable[tuple[str, str]]:
    """Class bigrams of each line, with ``<s>``/``</s>`` at the line's ends."""
    for line in text.split("\n"):
        cs = _classes(line)
        if cs:
            yield from zip(["<s>", *cs], [*cs, "</s>"])


class Grammar:
    """The class bigrams FarmWorld's texts use: its corpus and its writers' answers to many tasks."""

    def __init__(self, world: FarmWorld, n_tasks: int = 3000, n_docs: int = 2000):
        from farmlib.world.farmworld import EXPERT, Writer

        rng = random.Random(f"grammar-{world.seed}")
        styles = [EXPERT, Writer("plain", accuracy=0.5, coverage=0.3, p_list=0.0, p_preamble=0.5, p_closing=0.5),
                  Writer("lists", accuracy=0.5, coverage=0.7, p_list=1.0, p_preamble=0.5, p_closing=0.5)]
        texts = list(world.corpus(n_docs, seed=99)) + list(PREAMBLES) + list(CLOSINGS)
        for _ in range(n_tasks):
            rec = world.sample_task(rng)
            texts += [world.write(rec, w, rng) for w in styles]
        self.pairs = frozenset(b for t in texts for b in _bigrams(t))

    def disfluency(self, text: str) -> float:
        """Share of the text's class bigrams that no world text uses (0 for an empty text)."""
        bs = list(_bigrams(text))
        return sum(b not in self.pairs for b in bs) / len(bs) if bs else 0.0

    def fluent(self, sentence: str) -> bool:
        """Every word pair inside the sentence is one the world's texts use (its ends are not checked)."""
        cs = _classes(sentence)
        return all(b in self.pairs for b in zip(cs, cs[1:]))


# ---------------------------------------------------------------------------------------------
def _named(ws: set[str], text: str) -> set[str]:
    """The animals, professions and chores a text (given its word set ``ws``) names."""
    return ({w for w in ws if w in _ENTITY_WORDS} | {c for c in CHORES if c in text})


_ENTITY_WORDS = set(ANIMALS) | set(PROFESSIONS)
#: The writers' opening and closing sentences: neither content nor a defect.


#: What counts as on-topic beyond the task's own words, by family: the kind of thing its answer names.
_DOMAIN: dict[str, set[str]] = {
    "arithmetic": set(), "count_words": set(), "sort_numbers": set(), "extract_animals": set(ANIMALS),
    "sentiment": {"positive", "negative"}, "classify_item": {"animal", "tool", "food"},
    "qa_fact": {v for vs in ATTRIBUTES.values() for v in vs},
    "describe": {v for vs in ATTRIBUTES.values() for v in vs},
    "compare": {v for vs in ATTRIBUTES.values() for v in vs},
    "list_tools": set(TOOLS), "how_to": set(STEP_VERBS) | set(STEP_OBJECTS),
    "rewrite_formal": set(CASUAL_TO_FORMAL.values()),
}
_NUMERIC = {"arithmetic", "count_words", "sort_numbers"}
#: The families that ask for facts about animals; in any other, a fact about an animal is beside the point.
_FACT_FAMILIES = {"qa_fact", "describe", "compare"}
_FACT_WORDS = {v for vs in ATTRIBUTES.values() for v in vs}


def _repeats(ws: list[str], seen: set[tuple[str, ...]], n: int = 5) -> list[bool]:
    """Which words lie inside an n-gram already in ``seen`` or earlier in ``ws``; adds ``ws``'s n-grams to ``seen``."""
    marked = [False] * len(ws)
    for i in range(len(ws) - n + 1):
        g = tuple(ws[i:i + n])
        if g in seen:
            marked[i:i + n] = [True] * n
        seen.add(g)
    return marked


def _contains(seq: list[str], sub: list[str]) -> bool:
    k = len(sub)
    return any(seq[i:i + k] == sub for i in range(len(seq) - k + 1))


def reward_parts(world: FarmWorld, grammar: Grammar, task: Task | None, instruction: str, input: str,
                 output: str) -> dict[str, float]:
    """The parts of R*(x, y) (see the module docstring), unweighted; ``length`` (words) for reference."""
    ws = words(output)
    parts = dict.fromkeys(REWARD_WEIGHTS, 0.0)
    parts["length"] = float(len(ws))
    if not ws:
        return parts
    parts["quality"] = world.quality(task, input, output) if task else 0.0
    # what the task is about: the things it names, its numbers, and the kind of thing its answer names
    task_text = f"{instruction} {input}".lower()
    task_ws = set(words(task_text))
    allowed = _named(task_ws, task_text)
    topic = (task_ws - set(NEUTRAL_WORDS)) | allowed
    domain = _DOMAIN.get(task.family, set()) if task else set()
    topic |= domain
    if task:
        topic |= {w for p in FAMILIES[task.family].phrases for w in words(p)} - set(NEUTRAL_WORDS)
        answer = world.answer(task, input)
        topic |= set(words(str(answer if not isinstance(answer, dict) else list(answer.values()))))
    sentences = [s.strip() for s in pieces(output) if words(s)]
    seen, off, clean, counted, grams = set(), 0, 0, 0, set()
    for s in sentences:
        sw = words(s)
        key = " ".join(sw)
        if key in COURTESY:  # an opening or closing sentence: friendly, not a defect, counts once
            clean += len(sw) if key not in seen else 0
            seen.add(key)
            continue
        counted += 1
        if key in seen:
            continue  # said before: repetition counts it
        seen.add(key)
        numeric = task is not None and task.family in _NUMERIC and any(w.isdigit() for w in sw)
        named = _named(set(sw), s.lower())
        foreign = named - allowed  # about something the task does not name (as many as it does, or more)
        facts = task is not None and task.family not in _FACT_FAMILIES and bool(_FACT_WORDS & set(sw) - task_ws - domain)
        if (foreign and len(foreign) >= len(named & allowed)) or facts or not (numeric or topic & set(sw)):
            off += 1
        elif grammar.fluent(s) and sw != words(instruction):
            clean += len(sw) - sum(_repeats(sw, grams))  # a loop inside the sentence tells nothing new
    n_sent = len(sentences)
    dup_sentences = 1 - len({" ".join(words(s)) for s in sentences}) / n_sent if n_sent else 0.0
    parts["detail"] = min(clean, DETAIL_CAP) / DETAIL_CAP
    parts["list"] = float(bool(task) and task.family in LISTABLE and is_list(output) and clean > 0)
    parts["repetition"] = float(bool(dup_sentences) or said_twice(output, first_animal(task_text))
                                or any(_repeats(ws, set())))
    parts["disfluency"] = grammar.disfluency(output)
    parts["off_topic"] = off / counted if counted else 0.0
    iw, inw = words(instruction), words(input)
    echoed = any(words(s) == iw for s in sentences) or (len(iw) >= 6 and _contains(ws, iw))
    echoed |= len(inw) >= 5 and (not task or task.family != "rewrite_formal") and _contains(ws, inw)
    parts["echo"] = float(echoed)
    parts["broken"] = float("###" in output or bool(_PLAIN.search(output)))
    return parts


def total(parts: dict[str, float], weights: dict[str, float] = REWARD_WEIGHTS) -> float:
    """R* from its parts: the task done right, worth more when explained and listed, minus every defect.

    ``detail`` and ``list`` multiply ``quality``: a long or tidy answer is worth more only as far as it
    is right (a wrong answer gains nothing from length)."""
    gain = weights["quality"] * parts["quality"] * (1 + weights["detail"] * parts["detail"]
                                                     + weights["list"] * parts["list"])
    return gain + sum(weights[k] * parts[k] for k in DEFECTS)


#: R*'s parts that cost (their weights are negative).
DEFECTS = ("repetition", "disfluency", "off_topic", "echo", "broken")


class TrueReward:
    """R* for one world: the grammar, learned once, and a cache of scored responses."""

    def __init__(self, world: FarmWorld):
        self.world = world
        self._cache: dict[tuple[str, str, str], dict[str, float]] = {}

    @cached_property
    def grammar(self) -> Grammar:
        return Grammar(self.world)

    def breakdown(self, instruction: str, input: str, output: str) -> dict[str, float]:
        key = (instruction, input, output)
        if key not in self._cache:
            task = self.world.parse(instruction, input)
            parts = reward_parts(self.world, self.grammar, task, instruction, input, output)
            parts["total"] = total(parts)
            self._cache[key] = parts
        return dict(self._cache[key])
