"""KTO (Ethayarajh et al., 2024), a method the paper lacks, with TRL's ``KTOTrainer``.

KTO needs no pairs: each output is labelled desirable or undesirable on its own. From our pairwise
feedback the winner of each pair is desirable and the loser undesirable — the same data DPO sees,
read one output at a time.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from farmlib.artifacts import write_json
from farmlib.dpo import run_trl
from farmlib.world import format_prompt


@dataclass
class KTOMethodConfig:
    annotator: str = "p_sim_ann"
    beta: float = 0.1
    epochs: float = 1.0  # TRL's KTO is the slowest trainer here on CPU (it also scores a mismatched "KL" batch)
    lr: float = 5e-4
    batch_size: int = 32
    seed: int = 0


def train(farm, cfg: KTOMethodConfig | None = None) -> str:
    cfg = cfg or KTOMethodConfig(**farm.profile.methods.get("kto", {}))
    prefs, sft, tok = farm.preference_data(cfg.annotator), farm.sft_model(), farm.tokenizer()

    def build(work: Path) -> None:
        from datasets import Dataset
        from trl import KTOConfig, KTOTrainer

        t0 = time.time()
        rows = []
        for r in prefs:
            prompt = format_prompt(r["instruction"], r["input"])
            rows += [{"prompt": prompt, "completion": r[f"output_{r['preference']}"] + tok.eos_token, "label": True},
                     {"prompt": prompt, "completion": r[f"output_{3 - r['preference']}"] + tok.eos_token, "label": False}]
        run_trl(farm, sft, work, KTOConfig, KTOTrainer, cfg, Dataset.from_list(rows), "kto")
        write_json(work / "train_info.json", {"seconds": time.time() - t0, "examples": len(rows)})

    return str(farm.store.get_or_build("kto", {"sft": farm.key(sft), "n": len(prefs), **asdict(cfg)}, build))
