"""The leaderboard of methods: each method trained with the farm's config, sampled on the evaluation
instructions, and judged against the reference by the simulated judges and by people.

Each row names the config it used (``config``: what differs from the method's dataclass defaults),
so a reader can tell the leaderboard's PPO from a chapter rerun with overrides.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path

import pandas as pd

from farmlib.evaluation.paired import instruction_scores, paired_difference
from farmlib.evaluation.win_rate import plus_minus
from farmlib.methods import BASELINES, CONFIGS, METHODS, outputs, policy
from farmlib.progress import progress

#: Our name -> the paper's row in Table 2 (None: the paper has no such row).
PAPER_NAME = {
    "expert": "GPT-4", "ppo": "PPO", "dpo": "DPO", "best_of_n": "Best-of-1024", "expert_iteration": "Expert iteration",
    "sft52k": "SFT 52k", "sft10k": "SFT 10k", "feedme": "Binary FeedME", "quark": "Quark",
    "reward_conditioning": "Binary reward conditioning", "base": "LLaMA 7B (base)", "kto": None, "reference": None,
}
def train_seconds(farm, name: str) -> float:
    """Training time of a method's last stage, from its artifact (NaN where there is none)."""
    if name in ("reference", "expert"):
        return float("nan")
    if name == "best_of_n":
        return float("nan")
    info = Path(policy(farm, name)[0]) / "train_info.json"
    return json.loads(info.read_text()).get("seconds", float("nan")) if info.exists() else float("nan")


def config_label(farm, name: str) -> str:
    """What the farm's config of ``name`` changes from the dataclass defaults ("defaults" if nothing)."""
    if name not in CONFIGS:
        return ""
    cfg, base = dataclasses.asdict(farm.method_config(name)), dataclasses.asdict(CONFIGS[name]())
    diff = [f"{k}={v}" for k, v in cfg.items() if base[k] != v]
    return ", ".join(diff) or "defaults"


def leaderboard_of_methods(farm, names: list[str] | None = None,
                           annotators: tuple[str, ...] = ("p_sim_eval", "human"),
                           ann_dir: Path | None = None) -> pd.DataFrame:
    """Win-rate vs the reference under each annotator, length, time, the config used, and the paper's
    Table 2 numbers; trains whatever is missing. With both the judges and the people, ``se_gap_p_sim_eval`` is the
    standard error of the judges' win-rate minus the people's, paired over the instructions (both judge the same
    answers, so their errors are not independent)."""
    from farmlib.artifacts import write_json
    from farmlib.paper import TABLE2

    annotators = farm.evaluation_annotators(annotators)
    if names is None:  # the writers' rows (reference, expert) exist only in FarmWorld
        names = [n for n in BASELINES + METHODS if farm.is_farmworld or n not in ("reference", "expert")]
    rows = []
    for name in names:
        outs = outputs(farm, name)
        row = {"method": name, "config": config_label(farm, name)}
        anns = win_rates(farm, outs, annotators, row)
        for a, ann in anns.items():
            if ann_dir is not None:
                write_json(Path(ann_dir) / a / f"{name}.json", ann)
        if "p_sim_eval" in anns and "human" in anns:  # the judges' level against the people's, on the same answers
            row["se_gap_p_sim_eval"] = paired_difference(instruction_scores(anns["p_sim_eval"]),
                                                         instruction_scores(anns["human"]))[1]
        row["avg_length"] = sum(len(o["output"]) for o in outs) / len(outs)
        row.update(defect_rates(farm, outs))
        row["train_seconds"] = train_seconds(farm, name)
        paper = TABLE2.get(PAPER_NAME.get(name) or "", (None, None))
        row["paper_row"], row["paper_sim"], row["paper_human"] = PAPER_NAME.get(name), paper[0], paper[1]
        rows.append(row)
    return pd.DataFrame(rows)


def win_rates(farm, outs: list[dict], annotators: tuple[str, ...], row: dict) -> dict[str, list[dict]]:
    """Evaluate ``outs`` under each annotator, writing ``win_rate_<a>`` and ``se_<a>`` into ``row``;
    returns each annotator's annotations."""
    anns = {}
    for a in annotators:
        wr, anns[a] = farm.evaluate(outs, a)
        row[f"win_rate_{a}"], row[f"se_{a}"] = wr.win_rate, wr.standard_error
    return anns


def defect_flags(farm, outs: list[dict]) -> dict[str, list[int]]:
    """Per output, in order: 1 where it says something twice (``repeats``), 1 where it puts side by side words no
    FarmWorld text does (``disfluent``), by R*'s parts (FarmWorld only; ``{}`` elsewhere)."""
    if not farm.is_farmworld:
        return {}
    parts = [farm.world.reward_breakdown(o["instruction"], o.get("input", ""), o["output"]) for o in outs]
    return {"repeats": [int(p["repetition"] > 0) for p in parts],
            "disfluent": [int(p["disfluency"] > 0) for p in parts]}


def defect_rates(farm, outs: list[dict]) -> dict[str, float]:
    """Share of outputs with any repetition, and with any disfluency, by R*'s parts (FarmWorld only):
    a method that climbs the leaderboard with degenerate text shows up here."""
    flags = defect_flags(farm, outs)
    if not flags:
        return {}
    n = max(len(outs), 1)
    return {"repetition_rate": sum(flags["repeats"]) / n, "disfluency_rate": sum(flags["disfluent"]) / n}


def seed_spread(farm, names: list[str], seeds: list[int],
                annotators: tuple[str, ...] = ("p_sim_eval", "human")) -> pd.DataFrame:
    """One row per (method, training seed): win-rates, standard errors and length of a copy of the
    method retrained with that seed (:func:`farmlib.methods.policy`), and each instruction's score
    (``scores_<annotator>``: 1 won, 0.5 tie, 0 lost, None unparsed) for paired comparisons
    (:func:`versus_baseline`); trains whatever is missing."""
    annotators = farm.evaluation_annotators(annotators)
    rows = []
    for name in names:
        for seed in progress(seeds, desc=f"seeds of {name}", leave=False):
            outs = outputs(farm, name, seed=seed)
            row = {"method": name, "seed": seed, "avg_length": sum(len(o["output"]) for o in outs) / len(outs)}
            for a, ann in win_rates(farm, outs, annotators, row).items():
                row[f"scores_{a}"] = instruction_scores(ann)
            rows.append(row)
    return pd.DataFrame(rows)


def spread_summary(runs: pd.DataFrame, annotators: tuple[str, ...] = ("p_sim_eval", "human")) -> pd.DataFrame:
    """Per method: mean over seeds, the seeds' standard deviation (training noise), the mean evaluation
    standard error (evaluation noise) and the range, for each annotator."""
    out = {}
    annotators = tuple(a for a in annotators if f"win_rate_{a}" in runs.columns)  # those that exist in this world
    for name, g in runs.groupby("method", sort=False):
        row = {"seeds": len(g)}
        for a in annotators:
            w = g[f"win_rate_{a}"]
            row.update({f"mean_{a}": w.mean(), f"seed_sd_{a}": w.std(ddof=1) if len(g) > 1 else float("nan"),
                        f"eval_se_{a}": g[f"se_{a}"].mean(), f"min_{a}": w.min(), f"max_{a}": w.max()})
        out[name] = row
    return pd.DataFrame.from_dict(out, orient="index")


def versus_baseline(runs: pd.DataFrame, baseline: str = "sft10k", annotator: str = "human") -> pd.DataFrame:
    """Each method's win-rate, averaged over its training seeds, minus ``baseline``'s, with the two noises of
    that difference, in points:

    * ``training``: sqrt(s_m² / k_m + s_b² / k_b), the seeds' standard deviations s over k seeds each;
    * ``evaluation``: paired, since both were judged on the same instructions: the standard error of the mean over
      instructions of (method's score − baseline's score), each instruction's score averaged over the seeds.

    ``verdict`` is ``better`` or ``worse`` where the difference is more than twice ``noise`` =
    sqrt(training² + evaluation²), else ``within noise``. ``runs``: :func:`seed_spread`'s rows."""
    col = f"scores_{annotator}"

    def per_instruction(name: str) -> list[float | None]:
        seeds = runs.loc[runs["method"] == name, col].tolist()
        return [None if None in scores else sum(scores) / len(scores) for scores in zip(*seeds)]

    summary = spread_summary(runs, (annotator,))
    base = per_instruction(baseline)
    rows = {}
    for name in summary.index.drop(baseline):
        evaluation = paired_difference(per_instruction(name), base)[1]
        m, b = summary.loc[name], summary.loc[baseline]
        training = math.sqrt(sum(r[f"seed_sd_{annotator}"] ** 2 / r["seeds"] for r in (m, b) if r["seeds"] > 1))
        diff, noise = m[f"mean_{annotator}"] - b[f"mean_{annotator}"], math.hypot(training, evaluation)
        rows[name] = {"difference": diff, "training": training, "evaluation": evaluation, "noise": noise,
                      "verdict": ("better" if diff > 0 else "worse") if abs(diff) > 2 * noise else "within noise"}
    return pd.DataFrame.from_dict(rows, orient="index")


def versus_on_board(farm, names: list[str], baseline: str = "sft10k", annotator: str = "human") -> pd.DataFrame:
    """Each method's win-rate minus ``baseline``'s (one training run each), with the paired standard error of that
    difference over the instructions both were judged on, and ``verdict``: ``better`` or ``worse`` where the
    difference is more than twice it, else ``within noise``."""
    def scores(name: str) -> list[float | None]:
        _, ann = farm.evaluate(outputs(farm, name), annotator)
        return instruction_scores(ann)

    base, rows = scores(baseline), {}
    for name in names:
        if name == baseline:
            continue
        diff, se = paired_difference(scores(name), base)
        rows[name] = {"difference": diff, "se": se,
                      "verdict": ("better" if diff > 0 else "worse") if abs(diff) > 2 * se else "within noise"}
    return pd.DataFrame.from_dict(rows, orient="index")


def versus_sentence(table: pd.DataFrame, baseline: str = "SFT 10k") -> str:
    """:func:`versus_baseline`'s table read aloud, one clause a method."""
    def clause(name: str, r) -> str:
        verdict = (f"more than twice the noise: {r['verdict']} than {baseline}" if r["verdict"] != "within noise"
                   else "within twice the noise")
        return (f"**{name}** {r['difference']:+.1f} points (noise of that difference: training ± {r['training']:.1f}, "
                f"evaluation ± {r['evaluation']:.1f}; {verdict})")
    return f"Against {baseline}, averaged over seeds: " + "; ".join(clause(n, r) for n, r in table.iterrows()) + "."


def compare(farm, named_outputs: dict[str, list[dict]], annotators: tuple[str, ...] = ("p_sim_eval", "human")) -> pd.DataFrame:
    """Win-rate vs the reference (± standard error) under each annotator that exists in this world
    (:meth:`~farmlib.pipeline.Farm.evaluation_annotators`), average length, and (FarmWorld) the share of
    outputs with repetition or disfluency (:func:`defect_rates`)."""
    annotators = farm.evaluation_annotators(annotators)
    rows = []
    for name, outs in named_outputs.items():
        row = {"model": name}
        for a in annotators:
            wr, _ = farm.evaluate(outs, a)
            row[f"win-rate ({a})"] = plus_minus(wr.win_rate, wr.standard_error)
        row["avg length (chars)"] = round(sum(len(o["output"]) for o in outs) / len(outs))
        for k, v in defect_rates(farm, outs).items():  # degenerate text shows here (FarmWorld only)
            row[k.replace("_rate", "") + " %"] = round(100 * v)
        rows.append(row)
    return pd.DataFrame(rows).set_index("model")


def side_by_side(farm, a: list[dict], b: list[dict], names: tuple[str, str], k: int = 4, seed: int = 0) -> pd.DataFrame:
    """``k`` evaluation instructions with both models' outputs and (in FarmWorld) their true rewards R*."""
    idx = random.Random(seed).sample(range(len(a)), k)
    rows = []
    for i in idx:
        r = a[i]
        row = {"instruction": r["instruction"] + (f" [{r['input']}]" if r["input"] else "")}
        for name, x in zip(names, (a[i], b[i])):
            row[name] = x["output"]
            if farm.is_farmworld:
                row[f"R* {name}"] = round(farm.true_rewards([x])[0], 2)
        rows.append(row)
    return pd.DataFrame(rows)


def sim_vs_people(ax, rows: pd.DataFrame, title: str = "", far: float = 10.0, sim: str = "p_sim_eval",
                  people: str = "human") -> list[str]:
    """The judges' win-rate (``sim``) against the people's, one point per row of a leaderboard, zoomed on the
    rows near the median (:func:`farmlib.plotting.zoomed_scatter`). Returns the methods left off."""
    from farmlib.plotting import zoomed_scatter

    return zoomed_scatter(ax, rows, f"win_rate_{people}", f"win_rate_{sim}", f"se_{people}", f"se_{sim}",
                          "win-rate, simulated people (%)", f"win-rate, simulated judges {sim} (%)", title, far,
                          short=("people", "judges"))
