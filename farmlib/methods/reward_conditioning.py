"""Binary reward conditioning: SFT on both outputs, each after a control tag saying if it won.

The winner is trained after ``[good]``, the loser after ``[bad]``; at test time the model is
sampled with ``[good]`` (``farm.samples(..., prefix=GOOD)``). The tags are plain text, so the
same code runs with any tokenizer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from farmlib.methods.common import PairsFinetuneConfig, loser, winner
from farmlib.profiles import TrainConfig
from farmlib.world import format_prompt

GOOD, BAD = "[good] ", "[bad] "


@dataclass
class RewardConditioningConfig(PairsFinetuneConfig):
    """Supervised fine-tuning on both outputs, each after its tag (fields: :class:`PairsFinetuneConfig`)."""


def conditioned_pairs(prefs: list[dict]) -> list[tuple[str, str]]:
    """(tag + prompt, output) for the winner (``GOOD``) and the loser (``BAD``) of each pair."""
    out = []
    for r in prefs:
        prompt = format_prompt(r["instruction"], r["input"])
        out += [(GOOD + prompt, winner(r)), (BAD + prompt, loser(r))]
    return out


def train(farm, cfg: RewardConditioningConfig | None = None) -> str:
    cfg = cfg or farm.method_config("reward_conditioning")
    prefs = farm.preference_data(cfg.annotator)
    train_cfg = TrainConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size, seed=cfg.seed)
    return farm.finetune("reward_conditioning", {"method": asdict(cfg), "n": len(prefs)},
                         conditioned_pairs(prefs), train_cfg)
