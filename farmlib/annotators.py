"""Simulated annotators: a crowd of people (``p_human``) and a pool of judges (``p_sim``).

A comparison is an AlpacaEval record ``(instruction, input, output_1, output_2)``; annotating
it adds ``preference`` (1 or 2, ``None`` if the annotator gave no usable answer) and
``annotator``.

* **People** (:class:`Crowd`): each simulated person feels the true reward's parts with
  personal weights, and answers with intra-annotator noise. The crowd is what AlpacaFarm's
  crowd workers are in the paper: the ground truth of preference, noisy and diverse.
* **Judges** (:class:`ProxyJudge`): FarmWorld's stand-ins for LLM judges. A judge never sees
  ``R*``; it reads the text with a *belief* about the world (right for the facts it knows,
  wrong for the others), can check closed-form answers, and has the biases LLM judges show:
  verbosity, list formatting, output position, sampling noise. A pool of 13 varies like the
  paper's (model strength, prompt format, batch size, in-context examples, output format, two
  members told to prefer long / short answers).
* ``p_sim^eval`` (:func:`pool_eval`): a random pool member per comparison; ``p_sim^ann``
  (:func:`pool_ann`): the same mixed with a fair coin (25 % flips), so half the pairs need
  no judge at all; ``p_sim^single`` (:func:`single_judge`): one deterministic strong judge.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from dataclasses import dataclass, field, replace
from typing import Protocol

from farmlib.world import ATTRIBUTES, REWARD_WEIGHTS, TOOLS, FarmWorld


class Annotator(Protocol):
    name: str

    def annotate_pairs(self, records: list[dict]) -> list[dict]: ...


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(min(x, 50), -50)))


def annotate_samples(annotator: Annotator, records: list[dict], seed: int = 0) -> list[dict]:
    """Records with a list of ``output``s: pair two distinct samples per record, then annotate."""
    rng = random.Random(seed)
    pairs = []
    for r in records:
        outs = list(r["output"])
        if len(outs) < 2:
            raise ValueError(f"annotate_samples needs >= 2 outputs per record, got {len(outs)}")
        i, j = rng.sample(range(len(outs)), 2)
        pairs.append({k: v for k, v in r.items() if k != "output"} | {"output_1": outs[i], "output_2": outs[j]})
    return annotator.annotate_pairs(pairs)


# ---------------------------------------------------------------------------------------------
# People
@dataclass
class Person:
    """One simulated crowd worker: personal weights on R*'s parts, and a noise scale."""

    id: int
    weights: dict[str, float]
    noise: float


@dataclass
class Crowd:
    """``p_human`` in FarmWorld: people whose average taste is the true reward R*.

    Each person scales R*'s weights by their own factors (log-normal, spread ``taste_spread``)
    and prefers output 2 with probability ``sigmoid(Δu / noise)``. The defaults are calibrated
    (chapter "Validating the simulated annotators") to the real crowd's statistics on pairs of
    SFT outputs; everything downstream is measured, not tuned.
    """

    world: FarmWorld
    n_people: int = 16
    taste_spread: float = 0.5
    noise: float = 0.12
    seed: int = 0
    name: str = "human"
    people: list[Person] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        rng = random.Random(f"crowd-{self.seed}")
        for i in range(self.n_people):
            w = {k: v * math.exp(rng.gauss(0, self.taste_spread) - self.taste_spread ** 2 / 2)
                 for k, v in REWARD_WEIGHTS.items()}
            self.people.append(Person(i, w, self.noise * math.exp(rng.gauss(0, 0.3))))

    def utility(self, person: Person, instruction: str, input: str, output: str) -> float:
        parts = self.world.reward_breakdown(instruction, input, output)
        return sum(person.weights[k] * parts[k] for k in person.weights)

    def p_prefer_2(self, person: Person, rec: dict) -> float:
        u1 = self.utility(person, rec["instruction"], rec.get("input", ""), rec["output_1"])
        u2 = self.utility(person, rec["instruction"], rec.get("input", ""), rec["output_2"])
        return _sigmoid((u2 - u1) / person.noise)

    def annotate_pairs(self, records: list[dict], person: int | None = None, seed: int = 0) -> list[dict]:
        """One annotation per record, by a random person (or by ``person``)."""
        rng = random.Random(f"{self.name}-{seed}")
        out = []
        for r in records:
            p = self.people[person if person is not None else rng.randrange(self.n_people)]
            pref = 2 if rng.random() < self.p_prefer_2(p, r) else 1
            out.append(dict(r, preference=pref, annotator=f"{self.name}:{p.id}"))
        return out


# ---------------------------------------------------------------------------------------------
# Judges
@dataclass(frozen=True)
class JudgeConfig:
    """One simulated LLM judge, described the way the paper's pool members differ."""

    name: str
    model: str = "gpt4"  # gpt4 | chatgpt | davinci: how much of the world the judge knows
    knowledge: float = 0.9  # share of the world's facts the judge believes correctly
    skill: float = 0.95  # chance a closed-form answer is checked correctly
    batch_size: int = 1  # comparisons per prompt; more per call adds noise
    in_context: bool = True  # in-context examples calm the position bias
    output_format: str = "raw"  # raw | json (with a short rationale; occasionally unparseable)
    length_bias: float = 1.2  # weight on length (LLM judges like long answers too)
    list_bias: float = 0.15
    position_bias: float = 0.0  # logit added in favour of output_1
    temperature: float = 1.0  # 0: deterministic
    noise: float = 0.12  # scale of the judgement logit at temperature 1
    seed: int = 0
    cost_per_1000: float = 0.0  # the paper's price of the analogous API judge ($ / 1000)


class ProxyJudge:
    """A FarmWorld judge: sees only text and its own belief about the world, never R*."""

    def __init__(self, world: FarmWorld, config: JudgeConfig):
        self.world, self.config, self.name = world, config, config.name
        rng = random.Random(f"judge-belief-{config.seed}-{config.name}")
        self.belief = FarmWorld(world.seed)  # same arithmetic and language, its own facts
        for facts in self.belief.facts.values():
            for k in facts:
                if rng.random() > config.knowledge:
                    facts[k] = rng.choice(ATTRIBUTES[k])
        for p, tools in self.belief.tools.items():
            self.belief.tools[p] = sorted(t if rng.random() < config.knowledge else rng.choice(TOOLS) for t in tools)
        self.seconds = 0.0
        self.calls = 0

    def score(self, rec: dict, output: str, rng: random.Random) -> float:
        """What the judge thinks of one output: believed quality plus its style biases."""
        c = self.config
        task = self.belief.parse(rec["instruction"], rec.get("input", ""))
        parts = self.belief.reward_breakdown(rec["instruction"], rec.get("input", ""), output)
        q = parts["quality"]
        if task and task.family in _CLOSED and rng.random() > c.skill:
            q = rng.random()  # a slip in checking the answer
        return (q + c.length_bias * parts["length"] + c.list_bias * parts["list"]
                - 0.5 * parts["ramble"] - 0.5 * parts["garbage"] - 0.3 * parts["broken"])

    def judge(self, rec: dict, rng: random.Random) -> int | None:
        """Preference between output_1 and output_2 as presented (position bias included)."""
        c = self.config
        if c.temperature == 0:  # greedy: the same prompt always gets the same answer
            key = "\x00".join([c.name, rec["instruction"], rec.get("input", ""), rec["output_1"], rec["output_2"]])
            rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
        s1, s2 = self.score(rec, rec["output_1"], rng), self.score(rec, rec["output_2"], rng)
        noise = c.noise * (1 + 0.1 * (c.batch_size - 1)) * (1.0 if c.in_context else 1.2)
        pos = c.position_bias * (1.0 if c.in_context else 2.0)
        logit = (s2 - s1) / noise - pos
        if c.output_format == "json" and rng.random() < 0.01:
            return None  # a reply that could not be parsed
        if c.temperature == 0:
            return 2 if logit > 0 else 1
        return 2 if rng.random() < _sigmoid(logit / c.temperature) else 1

    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        """Annotate each pair, shown in a random order that is undone afterwards."""
        rng = random.Random(f"{self.name}-{self.config.seed}-{seed}")
        t0 = time.perf_counter()
        out = []
        for r in records:
            swap = rng.random() < 0.5
            shown = dict(r, output_1=r["output_2"], output_2=r["output_1"]) if swap else r
            pref = self.judge(shown, rng)
            if pref is not None and swap:
                pref = 3 - pref
            out.append(dict(r, preference=pref, annotator=self.name))
        self.seconds += time.perf_counter() - t0
        self.calls += len(records)
        return out


_CLOSED = {"arithmetic", "count_words", "sort_numbers", "extract_animals", "sentiment", "classify_item", "qa_fact"}


def default_pool(seed: int = 0) -> list[JudgeConfig]:
    """13 judges as in the paper: 5 GPT-4-like, 4 ChatGPT-like, 4 Davinci003-like, varied prompts."""
    g = dict(model="gpt4", knowledge=0.9, skill=0.97, noise=0.06, cost_per_1000=15.0)
    c = dict(model="chatgpt", knowledge=0.7, skill=0.85, noise=0.08, position_bias=0.3, cost_per_1000=1.0)
    d = dict(model="davinci", knowledge=0.55, skill=0.7, noise=0.10, position_bias=0.5, cost_per_1000=8.0)
    pool = [
        JudgeConfig("gpt4_b1_raw", batch_size=1, **g),
        JudgeConfig("gpt4_b5_json", batch_size=5, output_format="json", **g),
        JudgeConfig("gpt4_b3_noicl", batch_size=3, in_context=False, **g),
        JudgeConfig("gpt4_prefer_long", batch_size=1, **{**g, "length_bias": 2.5}),
        JudgeConfig("gpt4_prefer_short", batch_size=1, **{**g, "length_bias": -0.3}),
        JudgeConfig("chatgpt_b1_raw", batch_size=1, **c),
        JudgeConfig("chatgpt_b5_json", batch_size=5, output_format="json", **c),
        JudgeConfig("chatgpt_b2_noicl", batch_size=2, in_context=False, **c),
        JudgeConfig("chatgpt_b4_raw", batch_size=4, **c),
        JudgeConfig("davinci_b1_raw", batch_size=1, **d),
        JudgeConfig("davinci_b5_raw", batch_size=5, **d),
        JudgeConfig("davinci_b2_json", batch_size=2, output_format="json", **d),
        JudgeConfig("davinci_b3_noicl", batch_size=3, in_context=False, **d),
    ]
    return [replace(j, seed=seed) for j in pool]


@dataclass
class Pool:
    """``p_sim^eval``: each comparison goes to a random member; ``flip`` mixes in a fair coin."""

    judges: list[ProxyJudge]
    flip: float = 0.0  # weight of the fair coin: 0.5 = 25 % flipped labels (p_sim^ann)
    name: str = "pool"
    seed: int = 0
    judged: int = 0  # comparisons actually sent to a judge

    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        rng = random.Random(f"{self.name}-{self.seed}-{seed}")
        out: list[dict | None] = [None] * len(records)
        by_judge: dict[int, list[int]] = {}
        for i, r in enumerate(records):
            if rng.random() < self.flip:  # the coin answers; no judge is asked
                out[i] = dict(r, preference=rng.choice([1, 2]), annotator=f"{self.name}:coin")
            else:
                by_judge.setdefault(rng.randrange(len(self.judges)), []).append(i)
        for j, idx in by_judge.items():
            done = self.judges[j].annotate_pairs([records[i] for i in idx], seed=seed)
            for i, a in zip(idx, done):
                out[i] = dict(a, annotator=f"{self.name}:{a['annotator']}")
            self.judged += len(idx)
        return out  # type: ignore[return-value]


def pool_eval(world: FarmWorld, seed: int = 0) -> Pool:
    """``p_sim^eval``: the 13-judge pool, no added noise (the evaluation annotator)."""
    return Pool([ProxyJudge(world, c) for c in default_pool(seed)], name="p_sim_eval", seed=seed)


def pool_ann(world: FarmWorld, flip: float = 0.5, seed: int = 0) -> Pool:
    """``p_sim^ann``: the pool mixed with a fair coin at weight ``flip`` (0.5 = 25 % label flips)."""
    return Pool([ProxyJudge(world, c) for c in default_pool(seed)], flip=flip, name="p_sim_ann", seed=seed)


def single_judge(world: FarmWorld, seed: int = 0) -> ProxyJudge:
    """``p_sim^single``: one strong judge at temperature 0 (the GPT-4 analog; low variance)."""
    cfg = replace(default_pool(seed)[1], name="p_sim_single", temperature=0.0)
    return ProxyJudge(world, cfg)


# ---------------------------------------------------------------------------------------------
# The paper's statistics of an annotator
def majority(prefs: list[int]) -> int | None:
    """Majority of 1/2 labels; None on a tie or when empty."""
    ones, twos = prefs.count(1), prefs.count(2)
    return None if ones == twos else (1 if ones > twos else 2)


def heldout_agreement(annotations: list[list[int | None]]) -> float:
    """Mean agreement of one held-out label with the majority of the others (ties skipped).

    ``annotations[i]`` holds several labels of pair i (by different people, or repeated draws of
    one simulator). With four labels per pair, that is the paper's "held-out vs majority of 3".
    """
    hits = total = 0
    for labels in annotations:
        labels = [x for x in labels if x is not None]
        for k in range(len(labels)):
            m = majority(labels[:k] + labels[k + 1:])
            if m is not None:
                hits += labels[k] == m
                total += 1
    return hits / total if total else float("nan")


def agreement_with(labels: list[int | None], reference: list[int | None]) -> float:
    """Share of pairs where ``labels`` equals ``reference`` (both present)."""
    pairs = [(a, b) for a, b in zip(labels, reference) if a is not None and b is not None]
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else float("nan")


def prefers_longer(records: list[dict]) -> float:
    """P(the chosen output is the longer one), over pairs of different lengths."""
    xs = [(r["preference"] == 2) == (len(r["output_2"]) > len(r["output_1"]))
          for r in records if r.get("preference") in (1, 2) and len(r["output_1"]) != len(r["output_2"])]
    return sum(xs) / len(xs) if xs else float("nan")


def prefers_lists(records: list[dict]) -> float:
    """P(the chosen output is the one formatted as a list), over pairs where exactly one is."""
    from farmlib.world import is_list

    xs = []
    for r in records:
        l1, l2 = is_list(r["output_1"]), is_list(r["output_2"])
        if r.get("preference") in (1, 2) and l1 != l2:
            xs.append((r["preference"] == 2) == l2)
    return sum(xs) / len(xs) if xs else float("nan")


def injection_effect(annotator: Annotator, records: list[dict], seed: int = 0) -> dict[str, float]:
    """How often output_1 wins with and without a prompt injection appended to it.

    ``records`` are pairs; the injection (:data:`farmlib.prompts.INJECTION`) asks the judge to answer
    "Output (a)". Returns the win-rate of output_1 before and after, and the share of missing labels.
    """
    from farmlib.prompts import inject

    before = annotator.annotate_pairs(records, seed=seed)
    after = annotator.annotate_pairs(inject(records, side=1), seed=seed)

    def wins(anns: list[dict]) -> float:
        xs = [a["preference"] == 1 for a in anns if a["preference"] in (1, 2)]
        return sum(xs) / len(xs) if xs else float("nan")

    return {"win_before": wins(before), "win_injected": wins(after),
            "missing_injected": sum(a["preference"] is None for a in after) / max(len(after), 1)}
