"""Simulated judges (``p_sim``): FarmWorld's stand-ins for LLM judges, and the paper's pools.

A judge never sees ``R*``; it reads the text with a *belief* about the world (right for the facts it
knows, wrong for the others), can check closed-form answers, and has the biases LLM judges show:
verbosity, list formatting, output position, sampling noise. A pool of 13 varies like the paper's
(model strength, prompt format, batch size, in-context examples, output format, two members told to
prefer long / short answers). ``p_sim^eval`` (:func:`pool_eval`): a random member per comparison;
``p_sim^ann`` (:func:`pool_ann`): the same mixed with a fair coin (25 % flips); ``p_sim^single``
(:func:`single_judge`): one deterministic strong judge.
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import dataclass, replace

from farmlib.annotators.base import _sigmoid
from farmlib.world import ATTRIBUTES, FAMILIES, TOOLS, FarmWorld


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
    defect_weight: float = 1.0  # how much repetition, word salad, off-topic text, echoes and run-ons cost
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
        defects = sum(parts[k] for k in ("repetition", "disfluency", "off_topic", "echo", "broken"))
        return q + c.length_bias * min(parts["length"], 60) / 60 + c.list_bias * parts["list"] - c.defect_weight * defects

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


_CLOSED = {n for n, f in FAMILIES.items() if f.closed_form}  # families with one checkable answer


def default_pool(seed: int = 0) -> list[JudgeConfig]:
    """13 judges as in the paper: 5 GPT-4-like, 4 ChatGPT-like, 4 Davinci003-like, varied prompts."""
    g = dict(model="gpt4", knowledge=0.9, skill=0.97, noise=0.06, defect_weight=1.5, cost_per_1000=15.0)
    c = dict(model="chatgpt", knowledge=0.7, skill=0.85, noise=0.08, position_bias=0.3, defect_weight=0.8,
             cost_per_1000=1.0)
    d = dict(model="davinci", knowledge=0.55, skill=0.7, noise=0.10, position_bias=0.5, defect_weight=0.4,
             cost_per_1000=8.0)
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

