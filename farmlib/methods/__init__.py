"""Methods that learn from pairwise feedback, one readable file each, all starting from the SFT model.

``policy(farm, name)`` trains (or reuses) a method or baseline with the config the farm gives it
(:meth:`Farm.method_config`: dataclass defaults, then the profile, then a chapter's overrides);
``outputs(farm, name)`` samples its answers to the evaluation instructions.
"""

from __future__ import annotations

import dataclasses

from farmlib.methods import (
    best_of_n,
    dpo,
    expert_iteration,
    feedme,
    kto,
    ppo,
    quark,
    reward_conditioning,
    reward_model,
)
from farmlib.profiles import TrainConfig
from farmlib.world import EXPERT, REFERENCE

#: Each method's config dataclass, by the name used in profiles, chapters and the leaderboard.
CONFIGS = {
    "reward_model": reward_model.RewardModelConfig, "feedme": feedme.FeedMEConfig,
    "reward_conditioning": reward_conditioning.RewardConditioningConfig, "dpo": dpo.DPOConfig,
    "kto": kto.KTOConfig, "best_of_n": best_of_n.BestOfNConfig, "best_of_n_curve": best_of_n.BestOfNCurveConfig,
    "expert_iteration": expert_iteration.ExpertIterationConfig, "ppo": ppo.PPOConfig, "quark": quark.QuarkConfig,
}
METHODS = ["feedme", "reward_conditioning", "dpo", "best_of_n", "expert_iteration", "ppo", "quark", "kto"]
BASELINES = ["base", "sft10k", "sft52k", "reference", "expert"]
NEEDS_REWARD_MODEL = {"best_of_n", "expert_iteration", "ppo", "quark"}


def reward_model_path(farm, cfg=None) -> str:
    """The surrogate reward model (``cfg``: a RewardModelConfig; default: the profile's)."""
    return reward_model.train(farm, cfg or farm.method_config("reward_model"))


def sft52k(farm) -> str:
    """SFT on all four training splits (the SFT 52k analog), with about SFT 10k's number of steps."""
    p = farm.profile
    n10, n52 = len(farm.splits()["sft"]), sum(len(farm.splits()[s]) for s in ("sft", "preference", "unlabeled", "val"))
    epochs = max(1.0, round(p.sft.epochs * n10 / n52, 2))
    return farm.sft_model(splits=("sft", "preference", "unlabeled", "val"),
                          train=TrainConfig(**{**p.sft.__dict__, "epochs": epochs}))


def overrides(name: str, seed: int | None = None, feedback: str | None = None) -> tuple[dict | None, dict | None]:
    """(method overrides, reward-model overrides) for a retrained copy: ``seed`` goes to both, and
    ``feedback`` (an annotator: ``human``, ``p_sim_single``...) to whichever learns from the pairs — the
    reward model for the methods that use one, else the method itself."""
    method, rm = {}, {}
    if seed is not None:
        method["seed"] = rm["seed"] = seed
    if feedback is not None:
        (rm if name in NEEDS_REWARD_MODEL or name == "best_of_n" else method)["annotator"] = feedback
    return method or None, rm or None


def policy(farm, name: str, cfg=None, seed: int | None = None, feedback: str | None = None) -> tuple[str, str]:
    """(model path, prompt prefix) of a trained method or baseline; ``cfg`` defaults to the farm's.
    ``seed`` retrains with another training seed: the method's own (its config's ``seed``) and, for
    methods that use one, the reward model's; for SFT 10k the SFT run's. ``feedback`` retrains on
    another annotator's labels of the same pairs (default: the config's, ``p_sim_ann``). The base
    model, the SFT model the methods start from and the preference pairs stay the same.
    """
    if name == "sft10k" and seed is not None:
        return farm.sft_model(train=dataclasses.replace(farm.profile.sft, seed=seed)), ""
    if name in ("base", "sft10k", "sft52k"):
        return {"base": farm.base_model, "sft10k": farm.sft_model, "sft52k": lambda: sft52k(farm)}[name](), ""
    over, rm_over = overrides(name, seed, feedback)
    cfg = cfg or farm.method_config(name, over)
    module = {"feedme": feedme, "reward_conditioning": reward_conditioning, "dpo": dpo, "kto": kto,
              "expert_iteration": expert_iteration, "ppo": ppo, "quark": quark}[name]
    if name in NEEDS_REWARD_MODEL:
        path = module.train(farm, reward_model_path(farm, farm.method_config("reward_model", rm_over)), cfg)
    else:
        path = module.train(farm, cfg)
    return path, {"reward_conditioning": reward_conditioning.GOOD, "quark": quark.TAG}.get(name, "")


def outputs(farm, name: str, cfg=None, seed: int | None = None, feedback: str | None = None) -> list[dict]:
    """The responses of method ``name`` to the evaluation instructions (``generator`` = name);
    ``seed``, ``feedback``: a retrained copy (see :func:`policy`)."""
    if name in ("reference", "expert") and not farm.is_farmworld:
        farm.not_in_real_world(f"the FarmWorld writer behind the {name!r} row")
    if name == "reference":  # a second draw of the reference writer: the 50 % line
        return [dict(r, generator=name) for r in farm.writer_outputs(REFERENCE, "eval", seed=1)]
    if name == "expert":
        return [dict(r, generator=name) for r in farm.writer_outputs(EXPERT, "eval")]
    if name in ("base", "reference", "expert", "sft52k") and seed is not None:
        raise ValueError(f"{name!r} has no training seed here; seeds apply to SFT 10k and the methods")
    if name == "best_of_n":
        over, rm_over = overrides(name, seed, feedback)
        res = best_of_n.select(farm, reward_model_path(farm, farm.method_config("reward_model", rm_over)),
                               cfg or farm.method_config(name, over))
        return [dict(r, generator=name) for r in res["outputs"][max(res["outputs"])]]
    path, prefix = policy(farm, name, cfg, seed, feedback)
    return farm.samples(path, "eval", generator=name, prefix=prefix)
