"""Expert iteration: best-of-n on the unlabeled split, then SFT on the winners; repeated for ``rounds`` rounds.

It distils the reranker of :mod:`farmlib.methods.best_of_n` into the policy, so that one sample is as good
as the best of n — at the price of one fine-tuning run instead of n samples per query. Each later round
draws its candidates from the last round's policy and fine-tunes it further on its own winners, so the
reranker is applied again to a better sampler (the paper runs one round; its Appendix B tries more).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from farmlib.methods import best_of_n
from farmlib.profiles import TrainConfig
from farmlib.world import format_prompt


@dataclass
class ExpertIterationConfig:
    """Best-of-n on unlabeled instructions, then supervised fine-tuning on the winners, ``rounds`` times. The
    defaults are the paper's (one round of best-of-16 on the whole unlabeled split); profiles set their own."""

    n: int = 16  # samples per instruction; the reward model keeps the best
    n_prompts: int | None = None  # first instructions of the unlabeled split (None: all of it)
    rounds: int = 1  # sample-rerank-fine-tune rounds; round k samples from round k-1's policy
    epochs: float = 2.0  # passes over a round's winners
    lr: float = 5e-4  # peak learning rate
    batch_size: int = 32  # examples per step
    seed: int = 0  # the candidates' sampling and the data order


def selection_config(cfg: ExpertIterationConfig) -> best_of_n.BestOfNConfig:
    """The best-of-n each round runs on the unlabeled split."""
    return best_of_n.BestOfNConfig(n_max=cfg.n, split="unlabeled", n_prompts=cfg.n_prompts, seed=cfg.seed)


def iterate(farm, rm_path: str, cfg: ExpertIterationConfig | None = None) -> list[dict]:
    """One record per round: ``{"round", "sampler", "policy", "selection"}`` (``selection``: best-of-n's
    result on the round's candidates). Round k's model is keyed by its sampler and its winners, not by
    ``rounds``, so a run with fewer rounds is a prefix of one with more."""
    cfg = cfg or farm.method_config("expert_iteration")
    if cfg.rounds < 1:
        raise ValueError(f"ExpertIterationConfig.rounds must be at least 1, got {cfg.rounds}")
    bon_cfg = selection_config(cfg)
    train_cfg = TrainConfig(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size, seed=cfg.seed)
    method = {k: v for k, v in asdict(cfg).items() if k != "rounds"}
    policy, history = farm.sft_model(), []
    for k in range(1, cfg.rounds + 1):
        selection = best_of_n.select(farm, rm_path, bon_cfg, model=policy)
        winners = selection["outputs"][max(selection["outputs"])]
        pairs = [(format_prompt(r["instruction"], r["input"]), r["output"]) for r in winners]
        config = {"method": method, "rm": rm_path} | ({"round": k} if k > 1 else {})
        sampler, policy = policy, farm.finetune("expert_iteration", config, pairs, train_cfg, start=policy)
        history.append({"round": k, "sampler": sampler, "policy": policy, "selection": selection})
    return history


def train(farm, rm_path: str, cfg: ExpertIterationConfig | None = None) -> str:
    """The last round's policy."""
    return iterate(farm, rm_path, cfg)[-1]["policy"]
