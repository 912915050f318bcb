"""FarmWorld's five splits in the Alpaca schema, with the paper's proportions.

Records carry ``dataset`` (the task family, as AlpacaEval's field names the source set) and
``datasplit``; every split but ``eval`` has a demonstrator output.
"""

from __future__ import annotations

import random

from farmlib.data import SPLITS
from farmlib.world.farmworld import DEMONSTRATOR, FarmWorld


def make_splits(world: FarmWorld, sizes: dict[str, int], seed: int = 0) -> dict[str, list[dict]]:
    """Disjoint FarmWorld splits; every split but ``eval`` carries a demonstrator output.

    ``eval`` is drawn first so that it does not depend on the training split sizes.
    """
    rng = random.Random(f"splits-{world.seed}-{seed}")
    seen: set[tuple[str, str]] = set()
    out: dict[str, list[dict]] = {}
    budget = 200 * sum(sizes.values()) + 1000
    for split in ["eval"] + [s for s in SPLITS if s != "eval"]:
        out[split] = []
        while len(out[split]) < sizes.get(split, 0):
            budget -= 1
            if budget < 0:
                raise ValueError(f"FarmWorld ran out of distinct instructions for sizes {sizes}")
            rec = world.sample_task(rng)
            key = (rec["instruction"], rec["input"])
            if key in seen:
                continue
            seen.add(key)
            rec["datasplit"] = split
            if split != "eval":
                rec["output"] = world.write(rec, DEMONSTRATOR, rng)
            out[split].append(rec)
    return out
