"""FarmWorld's five splits in the Alpaca schema, with the paper's proportions.

Records carry ``dataset`` (the task family, as AlpacaEval's field names the source set) and
``datasplit``; every split but ``eval`` has a demonstrator output.

Every split is a sample of the same task distribution, as the paper's splits are random parts of one
dataset: ``eval`` is drawn first (distinct instructions, uniform over the families until a family runs
out), and the other splits draw their families in ``eval``'s proportions. No instruction of ``eval``
appears in another split. The training splits and ``val`` may share an instruction (with its own
demonstration) when its family has few: there are only 30 ways to ask for the steps of a chore, and
drawing every split distinct would leave the later splits almost without the small families (the
splits before this design held 10 how-to demonstrations in 2,000, and a ``val`` split of only six
families).
"""

from __future__ import annotations

import random
from collections import Counter

from farmlib.data import SPLITS
from farmlib.world.families import FAMILIES
from farmlib.world.farmworld import DEMONSTRATOR, FarmWorld

#: Draws of one family allowed to land on ``eval``'s instructions before it counts as used up by ``eval``.
_TRIES = 1000


def make_splits(world: FarmWorld, sizes: dict[str, int], seed: int = 0) -> dict[str, list[dict]]:
    """FarmWorld's splits (see the module docstring); every split but ``eval`` carries a demonstrator output.

    ``eval`` is drawn first so that it does not depend on the training split sizes."""
    rng = random.Random(f"splits-{world.seed}-{seed}")
    out: dict[str, list[dict]] = {"eval": []}
    held: set[tuple[str, str]] = set()
    budget = 200 * sizes.get("eval", 0) + 1000
    while len(out["eval"]) < sizes.get("eval", 0):
        budget -= 1
        if budget < 0:
            raise ValueError(f"FarmWorld ran out of distinct instructions for an eval split of {sizes['eval']}")
        rec = world.sample_task(rng)
        if (rec["instruction"], rec["input"]) in held:
            continue
        held.add((rec["instruction"], rec["input"]))
        out["eval"].append(dict(rec, datasplit="eval"))
    mix = Counter(r["dataset"] for r in out["eval"]) or Counter(list(FAMILIES))  # no eval split: every family alike
    families, weights = list(mix), list(mix.values())
    for split in [s for s in SPLITS if s != "eval"]:
        out[split] = []
        for _ in range(sizes.get(split, 0)):
            family = rng.choices(families, weights)[0]
            for _ in range(_TRIES):
                rec = world.sample_task(rng, family)
                if (rec["instruction"], rec["input"]) not in held:
                    break
            else:
                raise ValueError(f"eval holds every {family} instruction FarmWorld has; draw a smaller eval split")
            rec["datasplit"] = split
            rec["output"] = world.write(rec, DEMONSTRATOR, rng)
            out[split].append(rec)
    return out
