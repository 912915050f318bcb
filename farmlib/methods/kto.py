"""KTO (Ethayarajh et al., 2024), a method the paper lacks, with TRL's ``KTOTrainer``.

KTO needs no pairs: each output is labelled desirable or undesirable on its own. From our pairwise
feedback the winner of each pair is desirable and the loser undesirable — the same data DPO sees,
read one output at a time.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from farmlib.artifacts import write_json
from farmlib.methods.common import loser, run_trl, winner
from farmlib.world import format_prompt


@dataclass
class KTOConfig:
    """KTO from the SFT model, against the frozen SFT model."""

    annotator: str = "p_sim_ann"  # who labelled the preference pairs
    beta: float = 0.1  # strength of the KL constraint to the SFT model
    epochs: float = 1.0  # passes; TRL's KTO is the slowest trainer here on CPU (it also scores a mismatched "KL" batch)
    lr: float = 5e-4  # peak learning rate (cosine decay)
    batch_size: int = 32  # examples per step
    seed: int = 0  # data order


def dataset(prefs: list[dict], eos: str, seed: int = 0):
    """TRL's unpaired format: (prompt, completion, label) with the winner desirable, the loser not.

    Rows are shuffled (seeded): TRL estimates KTO's KL term from mismatched pairs, each row's prompt
    with the *previous* row's completion, so the winner and loser of one pair must not sit side by side.
    """
    from datasets import Dataset

    rows = []
    for r in prefs:
        prompt = format_prompt(r["instruction"], r["input"])
        rows += [{"prompt": prompt, "completion": winner(r) + eos, "label": True},
                 {"prompt": prompt, "completion": loser(r) + eos, "label": False}]
    random.Random(seed).shuffle(rows)
    return Dataset.from_list(rows)


def train(farm, cfg: KTOConfig | None = None) -> str:
    cfg = cfg or farm.method_config("kto")
    prefs, sft, tok = farm.preference_data(cfg.annotator), farm.sft_model(), farm.tokenizer()

    def build(work: Path) -> None:
        import trl

        t0 = time.time()
        data = dataset(prefs, tok.eos_token, cfg.seed)  # shuffled by the seed: TRL's KTO reads it in order
        run_trl(farm, sft, work, trl.KTOConfig, trl.KTOTrainer, cfg, data, "kto")
        write_json(work / "train_info.json", {"seconds": time.time() - t0, "examples": len(data)})

    return farm.artifact("kto", {"sft": sft, "n": len(prefs), "order": "shuffled", **asdict(cfg)}, build)
