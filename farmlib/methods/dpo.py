"""Direct preference optimisation (Rafailov et al., 2023) with TRL's ``DPOTrainer``, beta = 0.1.

DPO skips the reward model: with ``pi`` the policy and ``ref`` the frozen SFT model, each pair's
implicit rewards are ``beta * log(pi(y|x) / ref(y|x))`` and the loss is Bradley–Terry on them
(:func:`dpo_loss`, the formula TRL minimises, written out here so it can be read; a test checks
that it equals TRL's on the same batch).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from farmlib.artifacts import write_json
from farmlib.methods.common import loser, run_trl, winner
from farmlib.world import format_prompt


@dataclass
class DPOConfig:
    """DPO from the SFT model, against the frozen SFT model."""

    annotator: str = "p_sim_ann"  # who labelled the preference pairs
    beta: float = 0.1  # strength of the implicit KL constraint to the SFT model
    epochs: float = 2.0  # passes over the pairs
    lr: float = 5e-4  # peak learning rate (cosine decay)
    batch_size: int = 32  # pairs per step
    seed: int = 0  # data order


def dpo_loss(pi_chosen: torch.Tensor, pi_rejected: torch.Tensor, ref_chosen: torch.Tensor,
             ref_rejected: torch.Tensor, beta: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean DPO loss and the per-pair implicit reward margin, from sequence log-probabilities:
    ``-log sigmoid(beta * ((log pi_w - log ref_w) - (log pi_l - log ref_l)))``."""
    margin = beta * ((pi_chosen - ref_chosen) - (pi_rejected - ref_rejected))
    return -F.logsigmoid(margin).mean(), margin


def dataset(prefs: list[dict], eos: str):
    """TRL's preference format: prompt, chosen, rejected."""
    from datasets import Dataset

    return Dataset.from_list([{"prompt": format_prompt(r["instruction"], r["input"]),
                               "chosen": winner(r) + eos, "rejected": loser(r) + eos} for r in prefs])


def train(farm, cfg: DPOConfig | None = None) -> str:
    """DPO from the SFT model on the annotator's pairs; the artifact keeps TRL's log as ``history.json``."""
    cfg = cfg or farm.method_config("dpo")
    prefs, sft, tok = farm.preference_data(cfg.annotator), farm.sft_model(), farm.tokenizer()

    def build(work: Path) -> None:
        import trl

        t0 = time.time()
        run_trl(farm, sft, work, trl.DPOConfig, trl.DPOTrainer, cfg, dataset(prefs, tok.eos_token), "dpo")
        write_json(work / "train_info.json", {"seconds": time.time() - t0, "pairs": len(prefs)})

    return farm.artifact("dpo", {"sft": sft, "n": len(prefs), **asdict(cfg)}, build)
