"""What every annotator is: something that adds ``preference`` (1, 2 or None) and ``annotator`` to
AlpacaEval-format comparisons ``(instruction, input, output_1, output_2)``."""

from __future__ import annotations

import math
import random
from typing import Protocol


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

