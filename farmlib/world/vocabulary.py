"""FarmWorld's words: the vocabulary its knowledge base, tasks and writers draw from, and how text
is split into words.

Nothing here depends on a seed; ``farmworld`` turns this vocabulary into one world's facts.
"""

from __future__ import annotations

import re

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
#: The opening and closing sentences writers add around an answer.
PREAMBLES = ["Sure!", "Here is my answer.", "Good question.", "Of course."]
CLOSINGS = ["I hope this helps.", "Let me know if you have more questions.", "Have a nice day."]
NEUTRAL_WORDS = ["the", "a", "an", "and", "is", "it", "of", "to", "in", "on", "for", "with",
                 "from", "at", "by", "this", "that", "these", "are", "as", "be", "your", "you"]

#: The category of every nameable item: what classify_item asks about.
ITEM_CATEGORY = {**{a: "animal" for a in ANIMALS}, **{t: "tool" for t in TOOLS},
                 **{f: "food" for f in FOODS}}


# ---------------------------------------------------------------------------------------------
# Reading text.
_WORD = re.compile(r"[a-z]+(?:-[a-z]+)?|\d+")
#: A (possibly negative) integer in a text.
NUMBER = re.compile(r"-?\d+")
_LIST_LINE = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+\S", re.M)


def words(text: str) -> list[str]:
    """Lower-cased word and number tokens of a text."""
    return _WORD.findall(text.lower())


#: The writers' opening and closing sentences, as their words joined by spaces: friendly, about no task.
COURTESY = frozenset(" ".join(words(s)) for s in PREAMBLES + CLOSINGS)


def is_list(text: str) -> bool:
    """True when a text has at least two bulleted or numbered lines."""
    return len(_LIST_LINE.findall(text)) >= 2


#: A list item's number or bullet at the start of a line.
ITEM_MARKER = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+", re.M)
_PIECE_END = re.compile(r"[.!?\n]+")  # what ends a sentence or a list item


def pieces(text: str) -> list[str]:
    """A text's sentences and list items, their bullets and numbers taken off (empty pieces kept)."""
    return _PIECE_END.split(ITEM_MARKER.sub("", text))


_ITEM = (r"(?:(?:the|a|an)\s+)?(?:"
         + "|".join(sorted(set(ANIMALS) | set(TOOLS) | set(FOODS) | set(PROFESSIONS), key=len, reverse=True)) + r")\b")
#: A run of two or more items joined by commas, "and" or "or" ("the fox, the owl and the cow").
_ENUMERATION = re.compile(rf"\b{_ITEM}(?:(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+){_ITEM})+")
#: Where a clause ends: a sentence's end, a comma or colon, or a clause joined by "while"/"but".
_CLAUSE = re.compile(r"[.!?\n,;:]+|\b(?:while|but)\b")
_ANIMAL_SET = set(ANIMALS)
_FACT_VALUES = {v for vs in ATTRIBUTES.values() for v in vs}
_JOINERS = {"the", "a", "an", "and", "or"}


def first_animal(text: str) -> str | None:
    """The first animal a text names (what "it" means in an answer to it), if any."""
    return next((w for w in words(text) if w in _ANIMAL_SET), None)


def said_twice(text: str, subject: str | None = None) -> bool:
    """Whether a text says one thing twice, in any of the ways a reader notices beyond a repeated
    sentence: a clause said twice ("the pig is striped, while the pig is striped"), a fact about the
    same animal in two wordings ("you can find it in the marshes, while the pig lives in the marshes"),
    or an item named twice in its enumerations ("the beaver and the beaver"). ``subject`` is the animal
    a clause is about until it names one: "it" is the question's animal, as the world's writers use it."""
    low = ITEM_MARKER.sub("", text.lower())
    clauses = [words(c) for c in _CLAUSE.split(low)]
    said = [" ".join(c) for c in clauses if len(c) >= 3]  # "first", "then": connectives, not claims
    if len(set(said)) < len(said):
        return True
    facts: set[tuple[str, str]] = set()
    for clause in clauses:
        about = subject
        for w in clause:
            if w in _ANIMAL_SET:
                about = w
            elif w in _FACT_VALUES and about:  # "seeds" or "fish" in a chore's steps is no animal's fact
                if (about, w) in facts:
                    return True
                facts.add((about, w))
    items = [w for m in _ENUMERATION.finditer(low) for w in words(m.group()) if w not in _JOINERS]
    return len(set(items)) < len(items)


def said_again(text: str, question: str = "") -> float:
    """How much of the answer says again what it already said: 1 if a sentence or list item is said twice
    ("- cow\n- cow"), or a clause, a fact or an item of an enumeration, read as any reader reads them
    (:func:`said_twice`; "it" is the ``question``'s animal); else the share of its
    words inside a run of four words said before (a loop)."""
    said = [" ".join(words(s)) for s in pieces(text)]
    said = [s for s in said if s]
    if len(set(said)) < len(said) or said_twice(text, first_animal(question)):
        return 1.0
    w, seen, again = words(text), set(), set()
    for i in range(len(w) - 3):
        run = tuple(w[i:i + 4])
        if run in seen:
            again.update(range(i, i + 4))
        seen.add(run)
    return len(again) / max(len(w), 1)
