"""Expert iteration: best-of-n on the unlabeled split, then SFT on the winners.

It distils the reranker of :mod:`farmlib.methods.best_of_n` into the policy, so that one sample is as good
as the best of n — at the price of one fine-tuning run instead of n samples per query.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from farmlib.methods import best_of_n
from farmlib.profiles import TrainConfig
from farmlib.world import format_prompt


@dataclass
class ExpertIterationConfig:
    """Best-of-n on unlabeled instructions, then supervised fine-tuning on the winners."""

    n: int = 8  # samples per instruction; the reward model keeps the best
    n_prompts: int = 500  # instructions of the unlabeled split
    epochs: float = 2.0  # passes over the winners
    lr: float = 5e-4  # peak learning rate
    batch_size: int = 32  # examples per step
    seed: int = 0  # the candidates' sampling and the data order


def train(farm, rm_path: str, cfg: ExpertIterationConfig | None = None) -> str:
    cfg = cfg or farm.method_config("expert_iteration")
    bon_cfg = best_of_n.BestOfNConfig(n_max=cfg.n, split="unlabeled", n_prompts=cfg.n_prompts, seed=cfg.seed)
    bon = best_of_n.select(farm, rm_path, bon_cfg)
    winners = bon["outputs"][max(bon["outputs"])]
    pairs = [(format_prompt(r["instruction"], r["input"]), r["output"]) for r in winners]
    train_cfg = TrainConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size, seed=cfg.seed)
    return farm.finetune("expert_iteration", {"method": asdict(cfg), "rm": rm_path}, pairs, train_cfg)
