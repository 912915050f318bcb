"""Binary FeedME: keep fine-tuning the SFT model on the preferred output of each pair.

The simplest use of pairwise feedback: throw away the loser, treat the winner as a
demonstration. The loss is :func:`farmlib.lm.supervised.lm_loss`, as in SFT.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from farmlib.methods.common import PairsFinetuneConfig, winner
from farmlib.profiles import TrainConfig
from farmlib.world import format_prompt


@dataclass
class FeedMEConfig(PairsFinetuneConfig):
    """Supervised fine-tuning on the winners (fields: :class:`PairsFinetuneConfig`)."""


def train(farm, cfg: FeedMEConfig | None = None) -> str:
    cfg = cfg or farm.method_config("feedme")
    prefs = farm.preference_data(cfg.annotator)
    pairs = [(format_prompt(r["instruction"], r["input"]), winner(r)) for r in prefs]
    train_cfg = TrainConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size, seed=cfg.seed)
    return farm.finetune("feedme", {"method": asdict(cfg), "n": len(prefs)}, pairs, train_cfg)
