"""Simulated people (``p_human``): each person feels the true reward's parts with personal weights
and answers with intra-annotator noise. The crowd is what AlpacaFarm's crowd workers are in the
paper: the ground truth of preference, noisy and diverse."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from farmlib.annotators.base import _sigmoid
from farmlib.world import REWARD_WEIGHTS, FarmWorld
from farmlib.world.true_reward import total


@dataclass
class Person:
    """One simulated crowd worker: personal weights on R*'s parts, and a noise scale."""

    id: int
    weights: dict[str, float]
    noise: float


def crowd_key() -> dict:
    """What makes FarmWorld's people what they are (the crowd's defaults, R*'s weights, and the digest of the code
    of the people and of R*, :func:`farmlib.provenance.modules_digest`): part of the key of every artifact built
    from people's labels, so a change of the people never reuses old labels."""
    from dataclasses import fields

    from farmlib.provenance import modules_digest

    return {"crowd": {f.name: f.default for f in fields(Crowd) if f.name in ("n_people", "taste_spread", "noise")},
            "weights": REWARD_WEIGHTS, "code": modules_digest(__name__)}


@dataclass
class Crowd:
    """``p_human`` in FarmWorld: people whose average taste is the true reward R*.

    Each person scales R*'s weights by their own factors (log-normal, spread ``taste_spread``)
    and prefers output 2 with probability ``sigmoid(Δu / noise)``. ``noise`` is set so that the
    crowd's agreement (one person against the majority of three others) lands inside the real
    crowd's range (63-69 %) on the demonstrator's calibration pairs. On pairs of SFT outputs, where one
    answer is often right and the other wrong, the people agree more; chapter "Validating the simulated
    annotators" measures both and tunes neither. Everything downstream is measured, not tuned.
    ``taste`` is the average person's weights (R*'s own by default); another taste makes other people, for
    questions such as "would people who value detail more prefer longer outputs?", never for the book's labels.
    """

    world: FarmWorld
    n_people: int = 16
    taste_spread: float = 0.5
    noise: float = 0.55
    seed: int = 0
    name: str = "human"
    taste: dict[str, float] = field(default_factory=lambda: dict(REWARD_WEIGHTS))  # the average person's weights
    people: list[Person] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        rng = random.Random(f"crowd-{self.seed}")
        for i in range(self.n_people):
            w = {k: v * math.exp(rng.gauss(0, self.taste_spread) - self.taste_spread ** 2 / 2)
                 for k, v in self.taste.items()}
            self.people.append(Person(i, w, self.noise * math.exp(rng.gauss(0, 0.3))))

    def utility(self, person: Person, instruction: str, input: str, output: str) -> float:
        return total(self.world.reward_breakdown(instruction, input, output), person.weights)

    def p_prefer_2(self, person: Person, rec: dict) -> float:
        u1 = self.utility(person, rec["instruction"], rec.get("input", ""), rec["output_1"])
        u2 = self.utility(person, rec["instruction"], rec.get("input", ""), rec["output_2"])
        return _sigmoid((u2 - u1) / person.noise)

    def p_majority_2(self, rec: dict) -> float:
        """The share of the crowd that would more likely than not choose output 2."""
        return sum(self.p_prefer_2(p, rec) > 0.5 for p in self.people) / self.n_people

    def majority_label(self, rec: dict) -> int:
        """What the crowd's majority prefers, ignoring each person's momentary noise (ties: output 1)."""
        return 2 if self.p_majority_2(rec) > 0.5 else 1

    def annotate_pairs(self, records: list[dict], person: int | None = None, seed: int = 0) -> list[dict]:
        """One annotation per record, by a random person (or by ``person``)."""
        rng = random.Random(f"{self.name}-{seed}")
        out = []
        for r in records:
            p = self.people[person if person is not None else rng.randrange(self.n_people)]
            pref = 2 if rng.random() < self.p_prefer_2(p, r) else 1
            out.append(dict(r, preference=pref, annotator=f"{self.name}:{p.id}"))
        return out


