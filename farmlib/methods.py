"""Every method and baseline behind one call: train (or reuse) it, sample the eval set, evaluate.

``outputs(farm, name)`` returns a method's responses to the evaluation instructions, training
whatever it needs on the way (all cached in the artifact store); ``leaderboard(farm)`` evaluates
them all against the reference with the simulated judges and with people.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from farmlib import best_of_n, dpo, expert_iteration, feedme, kto, ppo, quark, reward_conditioning, reward_model
from farmlib.profiles import TrainConfig
from farmlib.world import EXPERT, REFERENCE

#: Our name -> the paper's row in Table 2 (None: the paper has no such row).
PAPER_NAME = {
    "expert": "GPT-4", "ppo": "PPO", "dpo": "DPO", "best_of_n": "Best-of-1024", "expert_iteration": "Expert iteration",
    "sft52k": "SFT 52k", "sft10k": "SFT 10k", "feedme": "Binary FeedME", "quark": "Quark",
    "reward_conditioning": "Binary reward conditioning", "base": "LLaMA 7B (base)", "kto": None, "reference": None,
}
METHODS = ["feedme", "reward_conditioning", "dpo", "best_of_n", "expert_iteration", "ppo", "quark", "kto"]
BASELINES = ["base", "sft10k", "sft52k", "reference", "expert"]


def reward_model_path(farm) -> str:
    return reward_model.train(farm)


def sft52k(farm) -> str:
    """SFT on all four training splits (the SFT 52k analog), with about SFT 10k's number of steps."""
    p = farm.profile
    n10, n52 = len(farm.splits()["sft"]), sum(len(farm.splits()[s]) for s in ("sft", "preference", "unlabeled", "val"))
    epochs = max(1.0, round(p.sft.epochs * n10 / n52, 2))
    return farm.sft_model(splits=("sft", "preference", "unlabeled", "val"),
                          train=TrainConfig(**{**p.sft.__dict__, "epochs": epochs}))


def policy(farm, name: str) -> tuple[str, str]:
    """(model path, prompt prefix) of a trained method or baseline."""
    trainers = {
        "base": farm.base_model, "sft10k": farm.sft_model, "sft52k": lambda: sft52k(farm),
        "feedme": lambda: feedme.train(farm), "reward_conditioning": lambda: reward_conditioning.train(farm),
        "dpo": lambda: dpo.train(farm), "kto": lambda: kto.train(farm),
        "expert_iteration": lambda: expert_iteration.train(farm, reward_model_path(farm)),
        "ppo": lambda: ppo.train(farm, reward_model_path(farm)),
        "quark": lambda: quark.train(farm, reward_model_path(farm)),
    }
    prefix = {"reward_conditioning": reward_conditioning.GOOD, "quark": quark.TAG}.get(name, "")
    return trainers[name](), prefix


def outputs(farm, name: str) -> list[dict]:
    """The responses of method ``name`` to the evaluation instructions (``generator`` = name)."""
    if name == "reference":  # a second draw of the reference writer: the 50 % line
        return [dict(r, generator=name) for r in farm.writer_outputs(REFERENCE, "eval", seed=1)]
    if name == "expert":
        return [dict(r, generator=name) for r in farm.writer_outputs(EXPERT, "eval")]
    if name == "best_of_n":
        res = best_of_n.select(farm, reward_model_path(farm))
        return [dict(r, generator=name) for r in res["outputs"][max(res["outputs"])]]
    path, prefix = policy(farm, name)
    return farm.samples(path, "eval", generator=name, prefix=prefix)


def train_seconds(farm, name: str) -> float:
    """Training time of a method's last stage, from its artifact (NaN where there is none)."""
    if name in ("reference", "expert"):
        return float("nan")
    if name == "best_of_n":
        return float("nan")
    info = Path(policy(farm, name)[0]) / "train_info.json"
    return json.loads(info.read_text()).get("seconds", float("nan")) if info.exists() else float("nan")


def leaderboard(farm, names: list[str] | None = None, annotators: tuple[str, ...] = ("p_sim_eval", "human"),
                ann_dir: Path | None = None) -> pd.DataFrame:
    """Win-rate vs the reference under each annotator, length, time, and the paper's Table 2 numbers."""
    from farmlib.artifacts import write_json
    from farmlib.paper import TABLE2

    rows = []
    for name in names or BASELINES + METHODS:
        outs = outputs(farm, name)
        row = {"method": name}
        for a in annotators:
            wr, ann = farm.evaluate(outs, a)
            row[f"win_rate_{a}"], row[f"se_{a}"] = wr.win_rate, wr.standard_error
            if ann_dir is not None:
                write_json(Path(ann_dir) / a / f"{name}.json", ann)
        row["avg_length"] = sum(len(o["output"]) for o in outs) / len(outs)
        row["train_seconds"] = train_seconds(farm, name)
        paper = TABLE2.get(PAPER_NAME.get(name) or "", (None, None))
        row["paper_row"], row["paper_sim"], row["paper_human"] = PAPER_NAME.get(name), paper[0], paper[1]
        rows.append(row)
    return pd.DataFrame(rows)


def compare(farm, named_outputs: dict[str, list[dict]], annotators: tuple[str, ...] = ("p_sim_eval", "human")) -> pd.DataFrame:
    """Win-rate vs the reference (± standard error) under each annotator, and average length."""
    rows = []
    for name, outs in named_outputs.items():
        row = {"model": name}
        for a in annotators:
            wr, _ = farm.evaluate(outs, a)
            row[f"win-rate ({a})"] = f"{wr.win_rate:.1f} ± {wr.standard_error:.1f}"
        row["avg length (chars)"] = round(sum(len(o["output"]) for o in outs) / len(outs))
        rows.append(row)
    return pd.DataFrame(rows).set_index("model")


def side_by_side(farm, a: list[dict], b: list[dict], names: tuple[str, str], k: int = 4, seed: int = 0) -> pd.DataFrame:
    """``k`` evaluation instructions with both models' outputs and their true rewards R*."""
    import random

    idx = random.Random(seed).sample(range(len(a)), k)
    rows = []
    for i in idx:
        r = a[i]
        rows.append({"instruction": r["instruction"] + (f" [{r['input']}]" if r["input"] else ""),
                     names[0]: a[i]["output"], f"R* {names[0]}": round(farm.true_rewards([a[i]])[0], 2),
                     names[1]: b[i]["output"], f"R* {names[1]}": round(farm.true_rewards([b[i]])[0], 2)})
    return pd.DataFrame(rows)
