"""R*'s own labels (``true_reward``): the annotator with no noise and no taste of its own, FarmWorld only.

Not a judge and not a person: a ceiling. A reward model or a method trained on these labels shows what the
learned part achieves when the labels are perfect, so a shortfall with the simulated annotators' labels can be
split into what the labels lose and what the learner cannot represent. The judges never read R*
(``tests/test_annotators.py``); this annotator is R*.
"""

from __future__ import annotations

from dataclasses import dataclass

from farmlib.world import FarmWorld


@dataclass
class TrueRewardLabels:
    """Prefers the output with the higher R*; a tie gets no label (``None``), as an unsure person would give."""

    world: FarmWorld
    name: str = "true_reward"

    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        out = []
        for r in records:
            r1, r2 = (self.world.true_reward(r["instruction"], r.get("input", ""), r[f"output_{k}"]) for k in (1, 2))
            out.append(dict(r, preference=None if r1 == r2 else (2 if r2 > r1 else 1), annotator=self.name))
        return out
