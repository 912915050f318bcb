"""FarmWorld's task families, one class each.

A family is everything FarmWorld knows about one kind of instruction:

* ``templates``: the instructions it is asked with, ``{slot}`` placeholders and the extra slots
  a template implies (``"Subtract {b} from {a}."`` means ``op = "-"``);
* ``closed_form``: whether it has one right answer (arithmetic) or rewards coverage (describe);
* ``listable``: whether people like its answer better as a list;
* ``phrases``: the words its writer uses beyond the templates and fact sentences (R* counts them as
  on the family's topic);
* ``sample``: how a task's slots and input are drawn;
* ``answer``: its correct answer (or the facts an open-ended answer should tell);
* ``quality``: task success in [0, 1], the family's part of the true reward R*;
* ``write``: how a writer of a given skill and style composes the body of a response.

``FarmWorld`` does the rest: it picks a family, parses an instruction back into a family and its
slots, adds the parts of R* every family shares (length, lists, rambling, garbling) and the
opening and closing sentences of a response.

To add a family, write one subclass of ``Family`` and register it in ``FAMILIES``. Note that the
world draws a family by its position in ``FAMILIES``, so a new family changes every split drawn
from every seed (``tests/test_world_families.py`` pins them, and will say so).
"""

from __future__ import annotations

import random
import re
from abc import ABC, abstractmethod
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

from farmlib.world.vocabulary import (
    ANIMALS,
    ATTRIBUTES,
    CASUAL_TEMPLATES,
    CASUAL_TO_FORMAL,
    CHORES,
    FACT_SENTENCES,
    FOODS,
    ITEM_CATEGORY,
    NEGATIVE,
    NUMBER,
    POSITIVE,
    PROFESSIONS,
    REVIEW_ITEMS,
    TOOLS,
    words,
)

if TYPE_CHECKING:
    from farmlib.world.farmworld import FarmWorld, Writer


class Family(ABC):
    """One kind of instruction: its templates, its tasks, its truth and its writer.

    Methods get the ``world`` (facts, tools and steps of one seed) and a task's ``slots`` (what
    the template's placeholders were filled with, plus the template's extra slots).
    """

    name: ClassVar[str]
    templates: ClassVar[tuple[tuple[str, dict], ...]]
    closed_form: ClassVar[bool]
    listable: ClassVar[bool] = False
    phrases: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def sample(self, world: FarmWorld, rng: random.Random, extra: dict) -> tuple[dict, str]:
        """Slots for the template (whose extra slots are ``extra``) and the task's input."""

    @abstractmethod
    def answer(self, world: FarmWorld, slots: dict, input: str) -> object:
        """The correct answer (closed-form families) or the relevant facts (open-ended)."""

    @abstractmethod
    def quality(self, world: FarmWorld, slots: dict, input: str, output: str, answer: object) -> float:
        """Task success in [0, 1] of a non-empty ``output``, ``answer`` being ``self.answer(...)``."""

    @abstractmethod
    def write(self, world: FarmWorld, slots: dict, input: str, writer: Writer, rng: random.Random) -> str:
        """The body of a response: content by the writer's skill, form by its style."""

    @cached_property
    def patterns(self) -> list[tuple[re.Pattern, dict]]:
        """The templates as regular expressions that recover the slots of an instruction."""
        out = []
        for tpl, extra in self.templates:
            rx = re.escape(tpl)
            rx = re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m.group(1)}>[\\w\\- ]+?)", rx)
            out.append((re.compile(f"^{rx}$"), extra))
        return out

    def parse(self, instruction: str) -> dict | None:
        """The slots of an instruction made from one of this family's templates, else None."""
        for rx, extra in self.patterns:
            m = rx.match(instruction.strip())
            if m:
                return {**extra, **m.groupdict()}
        return None

    def __repr__(self) -> str:
        return f"<Family {self.name}>"


# ---------------------------------------------------------------------------------------------
# What writers have in common: being right or wrong by their accuracy, telling more or less by
# their coverage, and writing a list or prose by their taste for lists.
def _maybe_wrong(value: str, pool: list[str], writer: Writer, rng: random.Random) -> str:
    return value if rng.random() < writer.accuracy else rng.choice([v for v in pool if v != value])


def _as_list(items: list[str], writer: Writer, rng: random.Random, lead: str) -> str:
    if len(items) >= 2 and rng.random() < writer.p_list:
        numbered = rng.random() < 0.5
        lines = [f"{i + 1}. {s}" if numbered else f"- {s}" for i, s in enumerate(items)]
        return lead + "\n" + "\n".join(lines)
    return (lead + " " if lead and rng.random() < 0.5 else "") + " ".join(items)


def _n_items(total: int, writer: Writer, rng: random.Random) -> int:
    k = sum(rng.random() < writer.coverage for _ in range(total))
    return max(1, k)


def _number_quality(output: str, answer: int, allowed: set) -> float:
    """1 for the right number alone, 0.4 for the right number among others, 0 without it."""
    nums = {int(x) for x in NUMBER.findall(output)}
    if answer not in nums:
        return 0.0
    return 1.0 if nums <= allowed else 0.4


def _facts_quality(world: FarmWorld, animals: list[str], ws: list[str], cap: int) -> float:
    """Right facts about the animals (up to ``cap``) minus wrong ones, scaled by naming them."""
    truth = {(k, world.facts[e][k]) for e in animals for k in ATTRIBUTES}
    told = {(world.value_attr[w], w) for w in ws if w in world.value_attr}
    right, wrong = len(told & truth), len(told - truth)
    named = sum(e in ws for e in animals) / len(animals)
    return max(0.0, min(right, cap) / cap - 0.25 * wrong) * (0.5 + 0.5 * named)


# ---------------------------------------------------------------------------------------------
# Closed-form families: one right answer.
class Arithmetic(Family):
    """Add, subtract or multiply two numbers."""

    name = "arithmetic"
    closed_form = True
    templates = (("What is {a} plus {b}?", {"op": "+"}), ("Add {a} and {b}.", {"op": "+"}),
                 ("What is {a} minus {b}?", {"op": "-"}), ("Subtract {b} from {a}.", {"op": "-"}),
                 ("What is {a} times {b}?", {"op": "*"}), ("Multiply {a} by {b}.", {"op": "*"}))
    phrases = ("The answer is", "equals", "To find this", "add", "together", "subtract", "from", "multiply", "by",
               "plus", "minus", "times")

    def sample(self, world, rng, extra):
        if extra["op"] == "*":
            return {"a": rng.randint(2, 12), "b": rng.randint(2, 20)}, ""
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        return ({"a": max(a, b), "b": min(a, b)} if extra["op"] == "-" else {"a": a, "b": b}), ""

    def parse(self, instruction):
        slots = super().parse(instruction)
        if slots:
            slots["a"], slots["b"] = int(slots["a"]), int(slots["b"])
        return slots

    def answer(self, world, slots, input):
        return {"+": slots["a"] + slots["b"], "-": slots["a"] - slots["b"], "*": slots["a"] * slots["b"]}[slots["op"]]

    def quality(self, world, slots, input, output, answer):
        # restating the question's numbers is fine; any other number is a hedge
        return _number_quality(output, answer, {answer, slots["a"], slots["b"]})

    def write(self, world, slots, input, writer, rng):
        a, b, op = slots["a"], slots["b"], slots["op"]
        ans = self.answer(world, slots, input)
        if rng.random() > writer.accuracy:
            ans += rng.choice([-10, -2, -1, 1, 2, 10])
        word = {"+": "plus", "-": "minus", "*": "times"}[op]
        form = rng.randrange(4)
        if form == 0:
            return str(ans)
        if form == 1:
            return f"{a} {word} {b} equals {ans}."
        if form == 2:
            return f"The answer is {ans}."
        verb = {"+": f"add {a} and {b} together", "-": f"subtract {b} from {a}", "*": f"multiply {a} by {b}"}[op]
        return f"{a} {word} {b} equals {ans}. To find this, {verb}."


class CountWords(Family):
    """Count the words of a sentence about an animal."""

    name = "count_words"
    closed_form = True
    templates = (("How many words are in the following sentence?", {}),
                 ("Count the words in this sentence.", {}))
    phrases = ("There are", "words in the sentence", "The answer is")

    def sample(self, world, rng, extra):
        return {}, world.sentence(rng)

    def answer(self, world, slots, input):
        return len(input.split())

    def quality(self, world, slots, input, output, answer):
        return _number_quality(output, answer, {answer})

    def write(self, world, slots, input, writer, rng):
        ans = self.answer(world, slots, input)
        if rng.random() > writer.accuracy:
            ans += rng.choice([-2, -1, 1, 2])
        return rng.choice([f"There are {ans} words in the sentence.", str(ans), f"The answer is {ans}."])


class SortNumbers(Family):
    """Sort four to seven numbers, ascending or descending."""

    name = "sort_numbers"
    closed_form = True
    templates = (("Sort the following numbers from smallest to largest.", {"desc": False}),
                 ("Put these numbers in ascending order.", {"desc": False}),
                 ("Sort these numbers from largest to smallest.", {"desc": True}))
    phrases = ("Here are the numbers sorted", "The answer is")

    def sample(self, world, rng, extra):
        return {}, ", ".join(str(x) for x in rng.sample(range(1, 100), rng.randint(4, 7)))

    def answer(self, world, slots, input):
        return sorted((int(x) for x in NUMBER.findall(input)), reverse=slots["desc"])

    def quality(self, world, slots, input, output, answer):
        got = [int(x) for x in NUMBER.findall(output)]
        hits = sum(g == t for g, t in zip(got, answer))
        return hits / len(answer) * (1.0 if len(got) == len(answer) else 0.7)

    def write(self, world, slots, input, writer, rng):
        nums = list(self.answer(world, slots, input))
        if rng.random() > writer.accuracy:  # two neighbours swapped
            i = rng.randrange(len(nums) - 1)
            nums[i], nums[i + 1] = nums[i + 1], nums[i]
        s = ", ".join(map(str, nums))
        return rng.choice([s, f"Here are the numbers sorted: {s}.", f"The answer is {s}."])


class ExtractAnimals(Family):
    """Name the animals a short story mentions."""

    name = "extract_animals"
    closed_form = True
    listable = True
    templates = (("List the animals mentioned in the following text.", {}),
                 ("Which animals appear in this text?", {}))
    phrases = ("The animals mentioned are",)
    stories = ("The {0} and the {1} walked to the {p} together.",
               "In the {p}, a {0} met a {1} at dawn.",
               "A farmer saw the {0} chasing the {1} across the {p}.")

    def sample(self, world, rng, extra):
        an = rng.sample(ANIMALS, rng.randint(2, 3))
        place = rng.choice(ATTRIBUTES["habitat"])
        inp = rng.choice(self.stories).format(*an, p=place)
        if len(an) == 3:
            inp += f" Later the {an[2]} joined them."
        return {}, inp

    def answer(self, world, slots, input):
        return [w for w in dict.fromkeys(words(input)) if w in ANIMALS]

    def quality(self, world, slots, input, output, answer):
        got = {w for w in words(output) if w in ANIMALS}
        tp = len(got & set(answer))
        return 0.0 if not got else 2 * tp / (len(got) + len(answer))  # F1

    def write(self, world, slots, input, writer, rng):
        an = list(self.answer(world, slots, input))
        if rng.random() > writer.accuracy:  # one missed or one too many
            an = an[:-1] if rng.random() < 0.5 else an + [rng.choice([a for a in ANIMALS if a not in an])]
        if len(an) >= 2 and rng.random() < writer.p_list:
            return "The animals mentioned are:\n" + "\n".join(f"- {a}" for a in an)
        return "The animals mentioned are the " + " and the ".join(an) + "."


class Sentiment(Family):
    """Tell a positive review from a negative one."""

    name = "sentiment"
    closed_form = True
    templates = (("Is the following review positive or negative?", {}),
                 ("Classify the sentiment of this review.", {}))
    phrases = ("The review is", "positive", "negative")
    labels = ("positive", "negative")

    def sample(self, world, rng, extra):
        words_ = POSITIVE if rng.random() < 0.5 else NEGATIVE
        a1, a2 = rng.sample(words_, 2)
        return {}, f"The {rng.choice(REVIEW_ITEMS)} was {a1} and {a2}."

    def answer(self, world, slots, input):
        ws = words(input)
        return "positive" if sum(w in POSITIVE for w in ws) >= sum(w in NEGATIVE for w in ws) else "negative"

    def quality(self, world, slots, input, output, answer):
        said = [w for w in words(output) if w in self.labels]
        if not said:
            return 0.0
        return 1.0 if set(said) == {answer} else (0.3 if answer in said else 0.0)

    def write(self, world, slots, input, writer, rng):
        ans = _maybe_wrong(self.answer(world, slots, input), list(self.labels), writer, rng)
        return rng.choice([f"The review is {ans}.", ans.capitalize() + ".", f"{ans.capitalize()}. The review is {ans}."])


class ClassifyItem(Family):
    """Say whether an item is an animal, a tool or a food."""

    name = "classify_item"
    closed_form = True
    templates = (("Is the following item an animal, a tool, or a food?", {}),
                 ("Classify this item as an animal, a tool, or a food.", {}))
    phrases = ("This item is", "is a", "animal", "tool", "food")
    labels = ("animal", "tool", "food")

    def sample(self, world, rng, extra):
        return {}, rng.choice(list(ITEM_CATEGORY))

    def answer(self, world, slots, input):
        return ITEM_CATEGORY.get(input.strip().lower(), "animal")

    def quality(self, world, slots, input, output, answer):
        # the instruction itself names all labels; judge the first label stated
        said = [w for w in words(output) if w in self.labels]
        if not said:
            return 0.0
        return 1.0 if said[0] == answer else 0.0

    def write(self, world, slots, input, writer, rng):
        ans = _maybe_wrong(self.answer(world, slots, input), list(self.labels), writer, rng)
        art = "an" if ans == "animal" else "a"
        return rng.choice([f"This item is {art} {ans}.", ans.capitalize() + ".", f"{input.capitalize()} is {art} {ans}."])


class QaFact(Family):
    """One fact about one animal."""

    name = "qa_fact"
    closed_form = True
    templates = (("What does the {e} eat?", {"attr": "diet"}), ("Where does the {e} live?", {"attr": "habitat"}),
                 ("What color is the {e}?", {"attr": "color"}), ("How big is the {e}?", {"attr": "size"}),
                 ("What sound does the {e} make?", {"attr": "sound"}))

    def sample(self, world, rng, extra):
        return {"e": rng.choice(ANIMALS)}, ""

    def answer(self, world, slots, input):
        return world.facts[slots["e"]][slots["attr"]]

    def quality(self, world, slots, input, output, answer):
        vals = {w for w in words(output) if world.value_attr.get(w) == slots["attr"]}
        if answer not in vals:
            return 0.0
        return 1.0 if len(vals) == 1 else 0.4

    def write(self, world, slots, input, writer, rng):
        e, k = slots["e"], slots["attr"]
        v = _maybe_wrong(world.facts[e][k], ATTRIBUTES[k], writer, rng)
        s = rng.choice(FACT_SENTENCES[k]).format(e=e, v=v)
        return rng.choice([s, s.replace("It ", f"The {e} ", 1), v.capitalize() + "."])


# ---------------------------------------------------------------------------------------------
# Open-ended families: the more right facts or steps, the better.
class Describe(Family):
    """Facts about one animal."""

    name = "describe"
    closed_form = False
    listable = True
    templates = (("Describe the {e}.", {}), ("Tell me about the {e}.", {}),
                 ("Give me some facts about the {e}.", {}), ("Write a short description of the {e}.", {}))
    phrases = ("Here are some facts about the",)

    def sample(self, world, rng, extra):
        return {"e": rng.choice(ANIMALS)}, ""

    def answer(self, world, slots, input):
        return world.facts[slots["e"]]

    def quality(self, world, slots, input, output, answer):
        return _facts_quality(world, [slots["e"]], words(output), cap=5)

    def write(self, world, slots, input, writer, rng):
        e = slots["e"]
        attrs = rng.sample(list(ATTRIBUTES), _n_items(5, writer, rng))
        facts = []
        for k in attrs:
            v = _maybe_wrong(world.facts[e][k], ATTRIBUTES[k], writer, rng)
            facts.append(rng.choice(FACT_SENTENCES[k]).format(e=e, v=v))
        return _as_list(facts, writer, rng, f"Here are some facts about the {e}:")


class Compare(Family):
    """How two animals differ."""

    name = "compare"
    closed_form = False
    listable = True
    templates = (("Compare the {e} and the {f}.", {}),
                 ("What are the differences between the {e} and the {f}?", {}))
    phrases = ("Here is how they differ", "while")

    def sample(self, world, rng, extra):
        e, f = rng.sample(ANIMALS, 2)
        return {"e": e, "f": f}, ""

    def answer(self, world, slots, input):
        return {slots["e"]: world.facts[slots["e"]], slots["f"]: world.facts[slots["f"]]}

    def quality(self, world, slots, input, output, answer):
        return _facts_quality(world, [slots["e"], slots["f"]], words(output), cap=7)

    def write(self, world, slots, input, writer, rng):
        e, f = slots["e"], slots["f"]
        attrs = rng.sample(list(ATTRIBUTES), _n_items(5, writer, rng))
        items = []
        for k in attrs:
            ve = _maybe_wrong(world.facts[e][k], ATTRIBUTES[k], writer, rng)
            vf = _maybe_wrong(world.facts[f][k], ATTRIBUTES[k], writer, rng)
            first = rng.choice(FACT_SENTENCES[k]).format(e=e, v=ve).replace("It ", f"The {e} ", 1).rstrip(".")
            second = {"color": f"is {vf}", "size": f"is {vf}", "sound": vf,
                      "habitat": f"lives in the {vf}", "diet": f"eats {vf}"}[k]
            items.append(f"{first}, while the {f} {second}.")
        return _as_list(items, writer, rng, "Here is how they differ:")


class ListTools(Family):
    """The tools of a profession."""

    name = "list_tools"
    closed_form = False
    listable = True
    templates = (("List some tools that a {p} uses.", {}), ("What tools does a {p} need?", {}),
                 ("Name the tools of a {p}.", {}))
    phrases = ("A uses", "tools")

    def sample(self, world, rng, extra):
        return {"p": rng.choice(PROFESSIONS)}, ""

    def answer(self, world, slots, input):
        return world.tools[slots["p"]]

    def quality(self, world, slots, input, output, answer):
        got = {w for w in words(output) if w in TOOLS}
        right, wrong = len(got & set(answer)), len(got - set(answer))
        return max(0.0, right / len(answer) - 0.2 * wrong)

    def write(self, world, slots, input, writer, rng):
        p = slots["p"]
        chosen, tools = rng.sample(world.tools[p], _n_items(5, writer, rng)), []
        for x in chosen:  # a wrong tool is one the list does not already name: no writer says a tool twice
            tools.append(_maybe_wrong(x, [t for t in TOOLS if t not in chosen and t not in tools], writer, rng))
        if len(tools) >= 2 and rng.random() < writer.p_list:
            return f"A {p} uses these tools:\n" + "\n".join(f"- {x.capitalize()}" for x in tools)
        return f"A {p} uses a " + ", a ".join(tools) + "."


class HowTo(Family):
    """The steps of a chore, in order."""

    name = "how_to"
    closed_form = False
    listable = True
    templates = (("Explain how to {c}.", {}), ("How do I {c}?", {}), ("Give me the steps to {c}.", {}))
    phrases = ("Here are the steps to", "First", "Then", "Finally")

    def sample(self, world, rng, extra):
        return {"c": rng.choice(CHORES)}, ""

    def answer(self, world, slots, input):
        return world.steps[slots["c"]]

    def quality(self, world, slots, input, output, answer):
        text = " ".join(words(output))
        pos = [text.find(step) for step in answer]
        found = [p for p in pos if p >= 0]
        ordered = sum(a < b for a, b in zip(found, found[1:])) / max(len(found) - 1, 1)
        return len(found) / len(answer) * (0.7 + 0.3 * ordered)

    def write(self, world, slots, input, writer, rng):
        c = slots["c"]
        steps = list(world.steps[c])
        keep = sorted(rng.sample(range(5), _n_items(5, writer, rng)))
        steps = [steps[i] for i in keep]
        if rng.random() > writer.accuracy and len(steps) >= 2:  # two neighbours swapped
            i = rng.randrange(len(steps) - 1)
            steps[i], steps[i + 1] = steps[i + 1], steps[i]
        if len(steps) >= 2 and rng.random() < writer.p_list:
            return f"Here are the steps to {c}:\n" + "\n".join(f"{i + 1}. {s.capitalize()}." for i, s in enumerate(steps))
        words_ = ["First"] + ["Then"] * (len(steps) - 2) + ["Finally"] if len(steps) >= 2 else ["First"]
        return " ".join(f"{wd}, {s}." for wd, s in zip(words_, steps))


class RewriteFormal(Family):
    """A casual sentence in a formal tone."""

    name = "rewrite_formal"
    closed_form = False
    templates = (("Rewrite the following sentence in a formal tone.", {}),
                 ("Make this sentence more formal.", {}))
    phrases = ("Here is a more", "formal", "version")

    def sample(self, world, rng, extra):
        t = rng.choice(CASUAL_TEMPLATES)
        fill = {k: k for k in CASUAL_TO_FORMAL}
        fill.update(tool=rng.choice(TOOLS), food=rng.choice(FOODS), animal=rng.choice(ANIMALS))
        return {}, t.format(**fill)

    def answer(self, world, slots, input):
        return {w: CASUAL_TO_FORMAL[w] for w in words(input) if w in CASUAL_TO_FORMAL}

    def quality(self, world, slots, input, output, answer):
        if not answer:
            return 1.0
        ws = words(output)
        score = sum(f in ws and c not in ws for c, f in answer.items()) / len(answer)
        keep = [w for w in words(input) if w in ITEM_CATEGORY]  # the sentence's things stay
        kept = sum(w in ws for w in keep) / max(len(keep), 1)
        return score * (0.5 + 0.5 * kept)

    def write(self, world, slots, input, writer, rng):
        out = []
        for tok in re.findall(r"\w+|[^\w\s]", input):
            low = tok.lower()
            if low in CASUAL_TO_FORMAL and rng.random() < writer.accuracy:
                out.append(CASUAL_TO_FORMAL[low])
            else:
                out.append(tok)
        s = re.sub(r"\s+([,.?!])", r"\1", " ".join(out))
        s = s[0].upper() + s[1:]
        return rng.choice([s, f"Here is a more formal version: {s}"])


# ---------------------------------------------------------------------------------------------
#: Every family, by name. The order is part of the world: a task's family is drawn by position.
FAMILIES: dict[str, Family] = {f.name: f for f in [
    Arithmetic(), CountWords(), SortNumbers(), ExtractAnimals(), Sentiment(), ClassifyItem(), QaFact(),
    Describe(), Compare(), ListTools(), HowTo(), RewriteFormal(),
]}
#: The families whose answers people like better as a list.
LISTABLE = {name for name, f in FAMILIES.items() if f.listable}

__all__ = ["FAMILIES", "LISTABLE", "Family", "Arithmetic", "CountWords", "SortNumbers", "ExtractAnimals", "Sentiment",
           "ClassifyItem", "QaFact", "Describe", "Compare", "ListTools", "HowTo", "RewriteFormal"]
