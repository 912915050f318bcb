"""Binary FeedME: keep fine-tuning the SFT model on the preferred output of each pair.

The simplest use of pairwise feedback: throw away the loser, treat the winner as a
demonstration. The loss is :func:`farmlib.sft.lm_loss`, as in SFT.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from farmlib.profiles import TrainConfig
from farmlib.world import format_prompt


@dataclass
class FeedMEConfig:
    annotator: str = "p_sim_ann"
    epochs: float = 2.0
    lr: float = 5e-4
    batch_size: int = 32


def train(farm, cfg: FeedMEConfig | None = None) -> str:
    cfg = cfg or FeedMEConfig(**farm.profile.methods.get("feedme", {}))
    prefs = farm.preference_data(cfg.annotator)
    pairs = [(format_prompt(r["instruction"], r["input"]), r[f"output_{r['preference']}"]) for r in prefs]
    train_cfg = TrainConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size)
    return farm.finetune("feedme", {"method": asdict(cfg), "n": len(prefs)}, pairs, train_cfg)
