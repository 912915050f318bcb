"""FarmWorld: a seeded, procedurally generated instruction world with a known true reward.

The real AlpacaFarm runs on Alpaca instructions, LLaMA and people. Offline we need a stand-in
where "what a person would prefer" is computable, so that every simulated judge and every
method can be measured against the truth. FarmWorld has

* a knowledge base (animals and their facts, professions and their tools, chores and their
  steps) drawn from a seed;
* twelve task families in the Alpaca schema (``instruction``, ``input``, ``output``), some
  closed-form (arithmetic, counting, sorting, extraction, classification), some open-ended
  (describe, compare, list, explain, rewrite);
* the true reward ``R*(x, y)``: task success plus the style preferences people showed in the
  paper (longer answers and lists are liked, rambling, garbled or wrong answers are not);
* procedural *writers* of adjustable skill: the demonstrator that wrote the SFT data (as
  Davinci003 wrote Alpaca's), the reference model of the evaluation, and a strong expert
  (the GPT-4 analog);
* a corpus of plain world text for pretraining a base model (the LLaMA-base analog).

``R*`` is a pure function of the text: it parses the instruction back into a task, so it can
score any response from any model. Nothing but the evaluation and the simulated people may
call it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

# ---------------------------------------------------------------------------------------------
# Vocabulary. Attribute vocabularies are disjoint, so a value found in a response names its
# attribute unambiguously.
ANIMALS = [
    "alpaca", "llama", "goat", "sheep", "cow", "horse", "pig", "duck", "goose", "rabbit",
    "donkey", "chicken", "turkey", "camel", "yak", "bison", "deer", "fox", "owl", "hawk",
    "frog", "otter", "beaver", "badger",
]
ATTRIBUTES: dict[str, list[str]] = {
    "color": ["white", "black", "brown", "gray", "red", "golden", "spotted", "striped"],
    "habitat": ["mountains", "meadows", "forests", "rivers", "deserts", "hills", "marshes", "barns"],
    "diet": ["grass", "seeds", "berries", "insects", "fish", "roots", "leaves", "corn"],
    "size": ["tiny", "small", "medium-sized", "large", "huge"],
    "sound": ["hums", "bleats", "honks", "squeaks", "grunts", "whistles", "clicks", "howls"],
}
FACT_SENTENCES: dict[str, list[str]] = {
    "color": ["The {e} is {v}.", "It has {v} fur.", "Its coat is {v}."],
    "habitat": ["It lives in the {v}.", "The {e} makes its home in the {v}.", "You can find it in the {v}."],
    "diet": ["It eats {v}.", "The {e} feeds on {v}.", "Its favorite food is {v}."],
    "size": ["It is a {v} animal.", "The {e} is {v}.", "It is {v} compared to other animals."],
    "sound": ["It {v} when it is happy.", "The {e} {v} at night.", "You can hear it when it {v}."],
}
PROFESSIONS = ["farmer", "baker", "carpenter", "painter", "gardener", "fisher", "weaver",
               "potter", "blacksmith", "shepherd"]
TOOLS = ["hoe", "rake", "shovel", "bucket", "oven", "whisk", "saw", "hammer", "chisel", "brush",
         "ladder", "trowel", "net", "rod", "loom", "spindle", "wheel", "kiln", "anvil", "tongs",
         "crook", "shears", "plow", "sickle", "knife", "needle", "pail", "file", "drill", "apron"]
CHORES = ["bake bread", "plant a tree", "shear a sheep", "build a fence", "milk a goat",
          "make cheese", "paint a barn", "catch a fish", "weave a basket", "fix a roof"]
STEP_VERBS = ["gather", "wash", "cut", "mix", "measure", "clean", "open", "close", "check",
              "heat", "cool", "fold", "tie", "lift", "soak", "dry", "sharpen", "fill"]
STEP_OBJECTS = ["tools", "wood", "water", "flour", "rope", "bucket", "boards", "seeds", "soil",
                "paint", "gate", "nails", "cloth", "milk", "salt", "pan", "wool", "basket"]
FOODS = ["bread", "cheese", "apple", "carrot", "honey", "butter", "jam", "pie", "soup", "milk"]
POSITIVE = ["wonderful", "fresh", "delicious", "lovely", "excellent", "friendly", "warm", "great"]
NEGATIVE = ["awful", "stale", "bland", "terrible", "rude", "cold", "dirty", "poor"]
REVIEW_ITEMS = ["soup", "bread", "cheese", "farm tour", "market", "pie", "honey", "barn dance"]
CASUAL_TO_FORMAL = {
    "hey": "hello", "kids": "children", "get": "obtain", "help": "assist", "need": "require",
    "buy": "purchase", "stuff": "items", "lots": "many", "fix": "repair", "tell": "inform",
    "show": "demonstrate", "ask": "request", "big": "large", "start": "begin", "ok": "acceptable",
}
CASUAL_TEMPLATES = [
    "hey, can you {help} me {fix} the {tool}?",
    "I {need} to {buy} {lots} of {food} for the {kids}.",
    "{tell} the {kids} to {get} the {tool} from the barn.",
    "please {show} me the {big} {animal} and {ask} the farmer.",
    "we {need} to {start} feeding the {animal} now, {ok}?",
    "{hey}, {get} your {stuff} and {help} with the {animal}.",
]
NEUTRAL_WORDS = ["the", "a", "an", "and", "is", "it", "of", "to", "in", "on", "for", "with",
                 "from", "at", "by", "this", "that", "these", "are", "as", "be", "your", "you"]

ITEM_CATEGORY = {**{a: "animal" for a in ANIMALS}, **{t: "tool" for t in TOOLS},
                 **{f: "food" for f in FOODS}}
LISTABLE = {"describe", "compare", "list_tools", "how_to", "extract_animals"}

#: The weights of R*'s parts: the average person's taste (the simulated crowd varies around it).
#: Calibrated so that the crowd prefers longer answers and lists as often as the paper's crowd did.
REWARD_WEIGHTS = {"quality": 1.0, "length": 1.2, "list": 0.15, "ramble": -0.5, "garbage": -0.5, "broken": -0.3}

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)?|\d+")
_NUM = re.compile(r"-?\d+")
_LIST_LINE = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+\S", re.M)


def words(text: str) -> list[str]:
    """Lower-cased word and number tokens of a text."""
    return _WORD.findall(text.lower())


def is_list(text: str) -> bool:
    """True when a text has at least two bulleted or numbered lines."""
    return len(_LIST_LINE.findall(text)) >= 2


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

PREAMBLES = ["Sure!", "Here is my answer.", "Good question.", "Of course."]
CLOSINGS = ["I hope this helps.", "Let me know if you have more questions.", "Have a nice day."]


@dataclass(frozen=True)
class Task:
    """An instruction parsed back into the world's terms."""

    family: str
    slots: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    name: str
    templates: tuple[tuple[str, dict], ...]
    closed_form: bool

    @cached_property
    def patterns(self) -> list[tuple[re.Pattern, dict]]:
        out = []
        for tpl, extra in self.templates:
            rx = re.escape(tpl)
            rx = re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m.group(1)}>[\\w\\- ]+?)", rx)
            out.append((re.compile(f"^{rx}$"), extra))
        return out


FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("arithmetic", (("What is {a} plus {b}?", {"op": "+"}), ("Add {a} and {b}.", {"op": "+"}),
                          ("What is {a} minus {b}?", {"op": "-"}), ("Subtract {b} from {a}.", {"op": "-"}),
                          ("What is {a} times {b}?", {"op": "*"}), ("Multiply {a} by {b}.", {"op": "*"})), True),
    Family("count_words", (("How many words are in the following sentence?", {}),
                           ("Count the words in this sentence.", {})), True),
    Family("sort_numbers", (("Sort the following numbers from smallest to largest.", {"desc": False}),
                            ("Put these numbers in ascending order.", {"desc": False}),
                            ("Sort these numbers from largest to smallest.", {"desc": True})), True),
    Family("extract_animals", (("List the animals mentioned in the following text.", {}),
                               ("Which animals appear in this text?", {})), True),
    Family("sentiment", (("Is the following review positive or negative?", {}),
                         ("Classify the sentiment of this review.", {})), True),
    Family("classify_item", (("Is the following item an animal, a tool, or a food?", {}),
                             ("Classify this item as an animal, a tool, or a food.", {})), True),
    Family("qa_fact", (("What does the {e} eat?", {"attr": "diet"}), ("Where does the {e} live?", {"attr": "habitat"}),
                       ("What color is the {e}?", {"attr": "color"}), ("How big is the {e}?", {"attr": "size"}),
                       ("What sound does the {e} make?", {"attr": "sound"})), True),
    Family("describe", (("Describe the {e}.", {}), ("Tell me about the {e}.", {}),
                        ("Give me some facts about the {e}.", {}), ("Write a short description of the {e}.", {})), False),
    Family("compare", (("Compare the {e} and the {f}.", {}),
                       ("What are the differences between the {e} and the {f}?", {})), False),
    Family("list_tools", (("List some tools that a {p} uses.", {}), ("What tools does a {p} need?", {}),
                          ("Name the tools of a {p}.", {})), False),
    Family("how_to", (("Explain how to {c}.", {}), ("How do I {c}?", {}), ("Give me the steps to {c}.", {})), False),
    Family("rewrite_formal", (("Rewrite the following sentence in a formal tone.", {}),
                              ("Make this sentence more formal.", {})), False),
]}


# ---------------------------------------------------------------------------------------------
class FarmWorld:
    """The world for one seed: knowledge base, task generator, writers and true reward."""

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
        slots: dict = {}
        inp = ""
        n = fam.name
        if n == "arithmetic":
            if extra["op"] == "*":
                slots = {"a": rng.randint(2, 12), "b": rng.randint(2, 20)}
            else:
                a, b = rng.randint(2, 99), rng.randint(2, 99)
                slots = {"a": max(a, b), "b": min(a, b)} if extra["op"] == "-" else {"a": a, "b": b}
        elif n == "count_words":
            inp = self._sentence(rng)
        elif n == "sort_numbers":
            inp = ", ".join(str(x) for x in rng.sample(range(1, 100), rng.randint(4, 7)))
        elif n == "extract_animals":
            an = rng.sample(ANIMALS, rng.randint(2, 3))
            place = rng.choice(ATTRIBUTES["habitat"])
            inp = rng.choice([
                "The {0} and the {1} walked to the {p} together.",
                "In the {p}, a {0} met a {1} at dawn.",
                "A farmer saw the {0} chasing the {1} across the {p}.",
            ]).format(*an, p=place)
            if len(an) == 3:
                inp += f" Later the {an[2]} joined them."
        elif n == "sentiment":
            words_ = POSITIVE if rng.random() < 0.5 else NEGATIVE
            a1, a2 = rng.sample(words_, 2)
            inp = f"The {rng.choice(REVIEW_ITEMS)} was {a1} and {a2}."
        elif n == "classify_item":
            inp = rng.choice(list(ITEM_CATEGORY))
        elif n in ("qa_fact", "describe"):
            slots = {"e": rng.choice(ANIMALS)}
        elif n == "compare":
            e, f = rng.sample(ANIMALS, 2)
            slots = {"e": e, "f": f}
        elif n == "list_tools":
            slots = {"p": rng.choice(PROFESSIONS)}
        elif n == "how_to":
            slots = {"c": rng.choice(CHORES)}
        elif n == "rewrite_formal":
            t = rng.choice(CASUAL_TEMPLATES)
            fill = {k: k for k in CASUAL_TO_FORMAL}
            fill.update(tool=rng.choice(TOOLS), food=rng.choice(FOODS), animal=rng.choice(ANIMALS))
            inp = t.format(**fill)
        return {"instruction": tpl.format(**slots), "input": inp, "dataset": n}

    def _sentence(self, rng: random.Random) -> str:
        a = rng.choice(ANIMALS)
        attr = rng.choice(list(FACT_SENTENCES))
        s = rng.choice(FACT_SENTENCES[attr]).format(e=a, v=self.facts[a][attr])
        return s.replace("It ", f"The {a} ", 1) if s.startswith("It ") else s

    def parse(self, instruction: str, input: str = "") -> Task | None:
        """Recover the task of an instruction; None if it is not a FarmWorld instruction."""
        for fam in FAMILIES.values():
            for rx, extra in fam.patterns:
                m = rx.match(instruction.strip())
                if m:
                    slots = {**extra, **m.groupdict()}
                    for k in ("a", "b"):
                        if k in slots:
                            slots[k] = int(slots[k])
                    return Task(fam.name, slots)
        return None

    # -- the truth ------------------------------------------------------------------------
    def answer(self, task: Task, input: str) -> object:
        """The correct answer (closed-form families) or the relevant facts (open-ended)."""
        s, n = task.slots, task.family
        if n == "arithmetic":
            return {"+": s["a"] + s["b"], "-": s["a"] - s["b"], "*": s["a"] * s["b"]}[s["op"]]
        if n == "count_words":
            return len(input.split())
        if n == "sort_numbers":
            return sorted((int(x) for x in _NUM.findall(input)), reverse=s["desc"])
        if n == "extract_animals":
            return [w for w in dict.fromkeys(words(input)) if w in ANIMALS]
        if n == "sentiment":
            ws = words(input)
            return "positive" if sum(w in POSITIVE for w in ws) >= sum(w in NEGATIVE for w in ws) else "negative"
        if n == "classify_item":
            return ITEM_CATEGORY.get(input.strip().lower(), "animal")
        if n == "qa_fact":
            return self.facts[s["e"]][s["attr"]]
        if n == "describe":
            return self.facts[s["e"]]
        if n == "compare":
            return {s["e"]: self.facts[s["e"]], s["f"]: self.facts[s["f"]]}
        if n == "list_tools":
            return self.tools[s["p"]]
        if n == "how_to":
            return self.steps[s["c"]]
        if n == "rewrite_formal":
            ws = words(input)
            return {w: CASUAL_TO_FORMAL[w] for w in ws if w in CASUAL_TO_FORMAL}
        raise ValueError(n)

    def quality(self, task: Task, input: str, output: str) -> float:
        """Task success in [0, 1]: correctness and completeness, with wrong facts penalized."""
        n, ans, ws = task.family, self.answer(task, input), words(output)
        if not ws:
            return 0.0
        if n in ("arithmetic", "count_words"):
            nums = {int(x) for x in _NUM.findall(output)}
            allowed = {ans} | {task.slots.get("a"), task.slots.get("b")}
            if ans not in nums:
                return 0.0
            return 1.0 if nums <= allowed else 0.4
        if n == "sort_numbers":
            got = [int(x) for x in _NUM.findall(output)]
            hits = sum(g == t for g, t in zip(got, ans))
            return hits / len(ans) * (1.0 if len(got) == len(ans) else 0.7)
        if n == "extract_animals":
            got = {w for w in ws if w in ANIMALS}
            tp = len(got & set(ans))
            return 0.0 if not got else 2 * tp / (len(got) + len(ans))
        if n in ("sentiment", "classify_item"):
            labels = ("positive", "negative") if n == "sentiment" else ("animal", "tool", "food")
            # the classify instruction itself names all labels; judge the first label stated
            said = [w for w in ws if w in labels]
            if not said:
                return 0.0
            if n == "classify_item":
                return 1.0 if said[0] == ans else 0.0
            return 1.0 if set(said) == {ans} else (0.3 if ans in said else 0.0)
        if n == "qa_fact":
            vals = {w for w in ws if self.value_attr.get(w) == task.slots["attr"]}
            if ans not in vals:
                return 0.0
            return 1.0 if len(vals) == 1 else 0.4
        if n in ("describe", "compare"):
            ents = [task.slots["e"]] + ([task.slots["f"]] if n == "compare" else [])
            truth = {(k, self.facts[e][k]) for e in ents for k in ATTRIBUTES}
            told = {(self.value_attr[w], w) for w in ws if w in self.value_attr}
            right, wrong = len(told & truth), len(told - truth)
            cap = 5 if n == "describe" else 7
            named = sum(e in ws for e in ents) / len(ents)
            return max(0.0, min(right, cap) / cap - 0.25 * wrong) * (0.5 + 0.5 * named)
        if n == "list_tools":
            got = {w for w in ws if w in TOOLS}
            right, wrong = len(got & set(ans)), len(got - set(ans))
            return max(0.0, right / len(ans) - 0.2 * wrong)
        if n == "how_to":
            text = " ".join(ws)
            pos = [text.find(step) for step in ans]
            found = [p for p in pos if p >= 0]
            ordered = sum(a < b for a, b in zip(found, found[1:])) / max(len(found) - 1, 1)
            return len(found) / len(ans) * (0.7 + 0.3 * ordered)
        if n == "rewrite_formal":
            if not ans:
                return 1.0
            score = sum(f in ws and c not in ws for c, f in ans.items()) / len(ans)
            keep = [w for w in words(input) if w in ITEM_CATEGORY]
            kept = sum(w in ws for w in keep) / max(len(keep), 1)
            return score * (0.5 + 0.5 * kept)
        raise ValueError(n)

    @cached_property
    def lexicon(self) -> frozenset[str]:
        """Every word the world's texts use; anything else in a response reads as garbled."""
        vocab = set(ANIMALS) | set(TOOLS) | set(FOODS) | set(POSITIVE) | set(NEGATIVE) | set(NEUTRAL_WORDS)
        vocab |= {v for vs in ATTRIBUTES.values() for v in vs} | set(PROFESSIONS)
        vocab |= set(CASUAL_TO_FORMAL) | set(CASUAL_TO_FORMAL.values()) | set(STEP_VERBS) | set(STEP_OBJECTS)
        for texts in (PREAMBLES, CLOSINGS, CHORES, CASUAL_TEMPLATES, REVIEW_ITEMS,
                      [t for f in FAMILIES.values() for t, _ in f.templates],
                      [s for ss in FACT_SENTENCES.values() for s in ss], _WRITER_PHRASES, _CORPUS_PHRASES):
            for t in texts:
                vocab |= set(words(t))
        return frozenset(vocab)

    def reward_breakdown(self, instruction: str, input: str, output: str) -> dict[str, float]:
        """The parts of R*(x, y) and their weighted total."""
        task = self.parse(instruction, input)
        ws = words(output)
        n = len(ws)
        quality = self.quality(task, input, output) if task else 0.0
        sentences = [s.strip().lower() for s in re.split(r"[.!?\n]+", output) if s.strip()]
        ramble = 1 - len(set(sentences)) / len(sentences) if sentences else 0.0
        ramble += max(0, n - 120) / 120
        garbage = sum(not w.isdigit() and w not in self.lexicon for w in ws) / n if n else 0.0
        listy = float(bool(task) and task.family in LISTABLE and is_list(output))
        broken = float("###" in output)
        parts = {
            "quality": quality,
            "length": min(n, 60) / 60,
            "list": listy,
            "ramble": ramble,
            "garbage": garbage,
            "broken": broken,
        }
        parts["total"] = sum(REWARD_WEIGHTS[k] * parts[k] for k in REWARD_WEIGHTS)
        return parts

    def true_reward(self, instruction: str, input: str, output: str) -> float:
        """R*(x, y): what a person in FarmWorld feels about response y to instruction x."""
        return self.reward_breakdown(instruction, input, output)["total"]

    # -- writers --------------------------------------------------------------------------
    def write(self, record: dict, writer: Writer, rng: random.Random) -> str:
        """A response to ``record`` in the style and skill of ``writer``."""
        task = self.parse(record["instruction"], record.get("input", ""))
        if task is None:
            raise ValueError(f"not a FarmWorld instruction: {record['instruction']!r}")
        body = _WRITERS[task.family](self, task, record.get("input", ""), writer, rng)
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
            kind = rng.randrange(7)
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
                docs.append(" ".join(self._sentence(rng) for _ in range(rng.randint(2, 4))))
            else:
                c, f = rng.choice(list(CASUAL_TO_FORMAL.items()))
                docs.append(f"People say {c} at home but {f} in a letter. "
                            + self._sentence(rng))
        return docs


_CORPUS_PHRASES = ["Every day is busy on the farm.", "The market opens in the morning.",
                   "People say", "at home but", "in a letter", "We will come back.",
                   "We will not come back.", "The farm", "works with a", "first then finally equals"]
_WRITER_PHRASES = [
    "The answer is", "equals", "To find this", "add", "together", "subtract", "from",
    "multiply", "by", "There are", "words in the sentence", "Here are the numbers sorted",
    "The animals mentioned are", "The review is", "This item is", "Here are some facts about the",
    "Here is how they differ", "A uses", "Here are the steps to", "First", "Then", "Finally",
    "Next", "sentence", "formal", "version", "Both", "while", "has", "fur", "coat", "its",
    "makes", "home", "feeds", "favorite", "food", "can", "find", "compared", "other", "animals",
    "when", "happy", "night", "hear", "tools", "needs", "steps", "following", "numbers", "sorted",
    "positive", "negative", "animal", "tool", "mentioned", "text", "review", "item", "plus",
    "minus", "times", "one", "two", "three", "main", "is a", "Here is a more", "of the",
]


# ---------------------------------------------------------------------------------------------
# Writers, one per family. Each picks content (right or wrong, more or less complete) by the
# writer's skill and a surface form by its style.
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


def _w_arithmetic(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    a, b, op = t.slots["a"], t.slots["b"], t.slots["op"]
    ans = w.answer(t, inp)
    if rng.random() > wr.accuracy:
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


def _w_count(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    ans = w.answer(t, inp)
    if rng.random() > wr.accuracy:
        ans += rng.choice([-2, -1, 1, 2])
    return rng.choice([f"There are {ans} words in the sentence.", str(ans), f"The answer is {ans}."])


def _w_sort(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    nums = list(w.answer(t, inp))
    if rng.random() > wr.accuracy:
        i = rng.randrange(len(nums) - 1)
        nums[i], nums[i + 1] = nums[i + 1], nums[i]
    s = ", ".join(map(str, nums))
    return rng.choice([s, f"Here are the numbers sorted: {s}.", f"The answer is {s}."])


def _w_extract(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    an = list(w.answer(t, inp))
    if rng.random() > wr.accuracy:
        an = an[:-1] if rng.random() < 0.5 else an + [rng.choice([a for a in ANIMALS if a not in an])]
    if len(an) >= 2 and rng.random() < wr.p_list:
        return "The animals mentioned are:\n" + "\n".join(f"- {a}" for a in an)
    return "The animals mentioned are the " + " and the ".join(an) + "."


def _w_label(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    ans = w.answer(t, inp)
    labels = ["positive", "negative"] if t.family == "sentiment" else ["animal", "tool", "food"]
    ans = _maybe_wrong(ans, labels, wr, rng)
    if t.family == "sentiment":
        return rng.choice([f"The review is {ans}.", ans.capitalize() + ".", f"{ans.capitalize()}. The review is {ans}."])
    art = "an" if ans == "animal" else "a"
    return rng.choice([f"This item is {art} {ans}.", ans.capitalize() + ".", f"{inp.capitalize()} is {art} {ans}."])


def _fact(w: FarmWorld, e: str, k: str, wr: Writer, rng: random.Random) -> str:
    v = _maybe_wrong(w.facts[e][k], ATTRIBUTES[k], wr, rng)
    return rng.choice(FACT_SENTENCES[k]).format(e=e, v=v)


def _w_qa(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    e, k = t.slots["e"], t.slots["attr"]
    v = _maybe_wrong(w.facts[e][k], ATTRIBUTES[k], wr, rng)
    s = rng.choice(FACT_SENTENCES[k]).format(e=e, v=v)
    return rng.choice([s, s.replace("It ", f"The {e} ", 1), v.capitalize() + "."])


def _w_describe(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    e = t.slots["e"]
    attrs = rng.sample(list(ATTRIBUTES), _n_items(5, wr, rng))
    facts = [_fact(w, e, k, wr, rng) for k in attrs]
    return _as_list(facts, wr, rng, f"Here are some facts about the {e}:")


def _w_compare(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    e, f = t.slots["e"], t.slots["f"]
    attrs = rng.sample(list(ATTRIBUTES), _n_items(5, wr, rng))
    items = []
    for k in attrs:
        ve = _maybe_wrong(w.facts[e][k], ATTRIBUTES[k], wr, rng)
        vf = _maybe_wrong(w.facts[f][k], ATTRIBUTES[k], wr, rng)
        items.append(rng.choice(FACT_SENTENCES[k]).format(e=e, v=ve).replace("It ", f"The {e} ", 1)
                     .rstrip(".") + f", while the {f} " + ("is " if k in ("color", "size") else "")
                     + (vf if k in ("color", "size", "sound") else {"habitat": f"lives in the {vf}",
                                                                   "diet": f"eats {vf}"}[k]) + ".")
    return _as_list(items, wr, rng, "Here is how they differ:")


def _w_tools(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    p = t.slots["p"]
    tools = rng.sample(w.tools[p], _n_items(5, wr, rng))
    tools = [_maybe_wrong(x, TOOLS, wr, rng) for x in tools]
    if len(tools) >= 2 and rng.random() < wr.p_list:
        return f"A {p} uses these tools:\n" + "\n".join(f"- {x.capitalize()}" for x in tools)
    return f"A {p} uses a " + ", a ".join(tools) + "."


def _w_howto(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    c = t.slots["c"]
    steps = list(w.steps[c])
    keep = sorted(rng.sample(range(5), _n_items(5, wr, rng)))
    steps = [steps[i] for i in keep]
    if rng.random() > wr.accuracy and len(steps) >= 2:
        i = rng.randrange(len(steps) - 1)
        steps[i], steps[i + 1] = steps[i + 1], steps[i]
    if len(steps) >= 2 and rng.random() < wr.p_list:
        return f"Here are the steps to {c}:\n" + "\n".join(f"{i + 1}. {s.capitalize()}." for i, s in enumerate(steps))
    words_ = ["First"] + ["Then"] * (len(steps) - 2) + ["Finally"] if len(steps) >= 2 else ["First"]
    return " ".join(f"{wd}, {s}." for wd, s in zip(words_, steps))


def _w_rewrite(w: FarmWorld, t: Task, inp: str, wr: Writer, rng: random.Random) -> str:
    out = []
    for tok in re.findall(r"\w+|[^\w\s]", inp):
        low = tok.lower()
        if low in CASUAL_TO_FORMAL and rng.random() < wr.accuracy:
            out.append(CASUAL_TO_FORMAL[low])
        else:
            out.append(tok)
    s = re.sub(r"\s+([,.?!])", r"\1", " ".join(out))
    s = s[0].upper() + s[1:]
    return rng.choice([s, f"Here is a more formal version: {s}"])


_WRITERS: dict[str, Callable[..., str]] = {
    "arithmetic": _w_arithmetic, "count_words": _w_count, "sort_numbers": _w_sort,
    "extract_animals": _w_extract, "sentiment": _w_label, "classify_item": _w_label,
    "qa_fact": _w_qa, "describe": _w_describe, "compare": _w_compare, "list_tools": _w_tools,
    "how_to": _w_howto, "rewrite_formal": _w_rewrite,
}


__all__ = ["FarmWorld", "Writer", "Task", "FAMILIES", "DEMONSTRATOR", "REFERENCE", "EXPERT",
           "format_prompt", "words", "is_list"]
