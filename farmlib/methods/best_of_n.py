"""Best-of-n: sample n outputs from the SFT model at temperature 1, return the one the reward model likes best.

No training, only inference: the policy is SFT plus a reranker. ``select`` returns the outputs for
every n = 1, 2, 4, ..., n_max from one pool of samples (best-of-n uses the first n), with the mean
surrogate reward of the chosen outputs, which must rise with n.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from farmlib.artifacts import read_json, write_json
from farmlib.methods.reward_model import load_reward_model, rewards


@dataclass
class BestOfNConfig:
    """Rerank SFT samples with the reward model."""

    n_max: int = 8  # largest n; every power of two up to it is reported
    temperature: float = 1.0  # sampling temperature of the candidates
    split: str = "eval"  # whose instructions
    n_prompts: int | None = None  # first n_prompts of the split (None: all)
    seed: int = 0  # sampling of the candidates


def candidates(farm, cfg: BestOfNConfig, model: str | None = None) -> list[list[dict]]:
    """``n_max`` samples per prompt: ``[k][i]`` is sample k for prompt i (drawn with seed
    ``1000 + k + 100_000 * cfg.seed``)."""
    model = model or farm.sft_model()
    return [farm.samples(model, cfg.split, temperature=cfg.temperature, seed=1000 + k + 100_000 * cfg.seed,
                         generator=f"sample{k}", n=cfg.n_prompts) for k in range(cfg.n_max)]


def select(farm, rm_path: str, cfg: BestOfNConfig | None = None) -> dict:
    """``{"outputs": {n: records}, "mean_reward": {n: float}, "rewards": [k][i]}``, cached."""
    cfg = cfg or farm.method_config("best_of_n")
    cands = candidates(farm, cfg)

    def build(work: Path) -> None:
        rm, tok = load_reward_model(rm_path, farm.profile.device), farm.tokenizer()
        r = torch.stack([rewards(rm, tok, c, max_length=farm.profile.model.max_length) for c in cands])  # [k, i]
        out, mean = {}, {}
        n = 1
        while n <= cfg.n_max:
            best = r[:n].argmax(0)  # the first n samples compete
            out[n] = [dict(cands[k][i], generator=f"best_of_{n}") for i, k in enumerate(best.tolist())]
            mean[n] = r[:n].max(0).values.mean().item()
            n *= 2
        write_json(work / "best_of_n.json", {"outputs": out, "mean_reward": mean, "rewards": r.tolist()})

    path = farm.artifact("best_of_n", {"rm": rm_path, "sft": farm.sft_model(), **asdict(cfg)}, build)
    res = read_json(Path(path) / "best_of_n.json")
    res["outputs"] = {int(k): v for k, v in res["outputs"].items()}
    res["mean_reward"] = {int(k): v for k, v in res["mean_reward"].items()}
    return res
