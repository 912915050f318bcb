"""Best-of-n: sample n outputs from the SFT model at temperature 1, return the one the reward model likes best.

No training, only inference: the policy is SFT plus a reranker. ``select`` returns the outputs for
every n = 1, 2, 4, ..., n_max from one pool of samples (best-of-n uses the first n), with the mean
surrogate reward of the chosen outputs, which must rise with n.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from farmlib.artifacts import read_json, write_json
from farmlib.lm.sampling import respond
from farmlib.methods.reward_model import load_reward_model, rewards
from farmlib.provenance import data_digest


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


def select(farm, rm_path: str, cfg: BestOfNConfig | None = None, model: str | None = None) -> dict:
    """``{"outputs": {n: records}, "mean_reward": {n: float}, "rewards": [k][i]}``, cached; the candidates are
    ``model``'s samples (default: SFT's)."""
    cfg = cfg or farm.method_config("best_of_n")
    model = model or farm.sft_model()
    cands = candidates(farm, cfg, model)

    def build(work: Path) -> None:
        rm, tok = load_reward_model(rm_path, farm.profile.device), farm.tokenizer()
        flat = [x for c in cands for x in c]  # one call: each prompt's candidates share its reading
        r = rewards(rm, tok, flat, max_length=farm.profile.model.max_length).view(len(cands), -1)  # [k, i]
        out, mean = {}, {}
        n = 1
        while n <= cfg.n_max:
            best = r[:n].argmax(0)  # the first n samples compete
            out[n] = [dict(cands[k][i], generator=f"best_of_{n}") for i, k in enumerate(best.tolist())]
            mean[n] = r[:n].max(0).values.mean().item()
            n *= 2
        write_json(work / "best_of_n.json", {"outputs": out, "mean_reward": mean, "rewards": r.tolist()})

    path = farm.artifact("best_of_n", {"rm": rm_path, "sft": model, **asdict(cfg),  # "sft": the sampler
                                       "candidates": data_digest(cands)}, build)
    res = read_json(Path(path) / "best_of_n.json")
    res["outputs"] = {int(k): v for k, v in res["outputs"].items()}
    res["mean_reward"] = {int(k): v for k, v in res["mean_reward"].items()}
    return res


# -- one large draw, every n a prefix of it (the over-optimisation curve) -----------------------------
def kl_bound(n: int) -> float:
    """The standard analytic KL of best-of-n to the sampling policy, ``log n - (n - 1) / n`` (an upper
    bound; exact when the reward has no ties)."""
    return math.log(n) - (n - 1) / n


def n_at_kl(kl: float) -> float:
    """The n whose :func:`kl_bound` is ``kl`` (the bound rises with n, so bisection on log n); 1 for ``kl <= 0``.
    It says how many candidates a curve would need to reach a KL, e.g. where a fitted curve peaks."""
    if kl <= 0:
        return 1.0
    lo, hi = 0.0, kl + 2.0  # kl_bound(e^x) >= x - 1, so the root lies below log n = kl + 1
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid - (1 - math.exp(-mid)) < kl else (lo, mid)
    return math.exp((lo + hi) / 2)


def prefix_choices(rewards: Sequence[Sequence[float]], ns: Sequence[int]) -> dict[int, list[int]]:
    """For each ``n`` in ``ns``: per prompt, the index of the best of candidates ``0 .. n-1`` (``rewards[i][k]``:
    candidate k of prompt i; a tie goes to the earlier candidate). Best-of-n for smaller n is best-of-n_max
    on a prefix of the same draw, so the curve over n has no independent resampling noise."""
    out = {}
    for n in ns:
        if not 1 <= n <= min(len(r) for r in rewards):
            raise ValueError(f"n={n} is outside 1..{min(len(r) for r in rewards)} (the candidates per prompt)")
        out[n] = [max(range(n), key=lambda k, r=r: (r[k], -k)) for r in rewards]
    return out


def powers_of_two(n_max: int) -> list[int]:
    """1, 2, 4, ... up to ``n_max`` (and ``n_max`` itself)."""
    ns, n = [], 1
    while n < n_max:
        ns.append(n)
        n *= 2
    return ns + [n_max]


@dataclass
class BestOfNCurveConfig:
    """Best-of-n along n (the over-optimisation curve): one draw of ``n_max`` SFT samples per prompt on a
    subset of the evaluation instructions; best-of-n for every smaller n uses the first n of them."""

    n_max: int = 256  # candidates per prompt; every power of two up to it is reported
    n_prompts: int = 32  # the first n_prompts instructions of the split, n_max samples each
    temperature: float = 1.0  # sampling temperature of the candidates (the paper's 1.0)
    split: str = "eval"  # whose instructions
    seed: int = 0  # sampling of the draw


def draw(farm, cfg: BestOfNCurveConfig | None = None, model: str | None = None) -> tuple[str, list[list[dict]]]:
    """One draw of ``cfg.n_max`` SFT samples for each of the first ``cfg.n_prompts`` prompts: (the artifact
    ``best_of_n_draw``, its candidates ``[i][k]`` as records)."""
    cfg = cfg or farm.method_config("best_of_n_curve")
    n_max, temperature, seed = cfg.n_max, cfg.temperature, cfg.seed
    model = model or farm.sft_model()
    p = farm.profile
    recs = farm.splits()[cfg.split][:cfg.n_prompts]
    draw_cfg = {"model": model, "data": farm.data_key(), "max_new_tokens": p.max_new_tokens, **asdict(cfg)}

    def build_draw(work: Path) -> None:
        t0 = time.time()
        outs = respond(farm.load(model), farm.tokenizer(), [r for r in recs for _ in range(n_max)],
                       temperature=temperature, max_new_tokens=p.max_new_tokens, batch_size=p.gen_batch_size,
                       seed=seed, desc=f"draw {n_max} per prompt")
        write_json(work / "draw.json", [outs[i * n_max:(i + 1) * n_max] for i in range(len(recs))])
        write_json(work / "info.json", {"seconds": time.time() - t0})

    draw_path = farm.artifact("best_of_n_draw", draw_cfg, build_draw)
    texts = read_json(Path(draw_path) / "draw.json")
    return draw_path, [[{"instruction": r["instruction"], "input": r["input"], "dataset": r.get("dataset", ""),
                         "output": t, "generator": f"sample{k}"} for k, t in enumerate(row)]
                       for r, row in zip(recs, texts)]


def prefix_draw(farm, rm_path: str, cfg: BestOfNCurveConfig | None = None, model: str | None = None) -> dict:
    """One draw of ``cfg.n_max`` SFT samples for each of the first ``cfg.n_prompts`` prompts (:func:`draw`),
    scored by the reward model at ``rm_path`` and by R*: ``{"candidates": [i][k] records, "rewards": [i][k],
    "true_rewards": [i][k], "seconds": {...}}``. Two artifacts: the draw (``best_of_n_draw``, shared by every
    reward model) and its scores (``best_of_n_scores``)."""
    cfg = cfg or farm.method_config("best_of_n_curve")
    n_max, p = cfg.n_max, farm.profile
    draw_path, cands = draw(farm, cfg, model)

    def build_scores(work: Path) -> None:
        t0 = time.time()
        rm, tok = load_reward_model(rm_path, p.device), farm.tokenizer()
        flat = [c for row in cands for c in row]
        r = rewards(rm, tok, flat, max_length=p.model.max_length).tolist()
        write_json(work / "scores.json", {"rewards": [r[i * n_max:(i + 1) * n_max] for i in range(len(cands))],
                                          "true_rewards": [farm.true_rewards(row) for row in cands]
                                          if farm.is_farmworld else None})
        write_json(work / "info.json", {"seconds": time.time() - t0})

    score_path = farm.artifact("best_of_n_scores", {"draw": draw_path, "rm": rm_path}, build_scores)
    scores = read_json(Path(score_path) / "scores.json")
    return {"candidates": cands, **scores, "seconds": {"draw": read_json(Path(draw_path) / "info.json")["seconds"],
                                                       "score": read_json(Path(score_path) / "info.json")["seconds"]}}


def best_of(draw: dict, n: int, generator: str | None = None) -> list[dict]:
    """Best-of-``n`` records from a :func:`prefix_draw` (the reward model's favourite of the first n)."""
    return [dict(draw["candidates"][i][k], generator=generator or f"best_of_{n}")
            for i, k in enumerate(prefix_choices(draw["rewards"], [n])[n])]


# -- what accuracy would best-of-n need? ------------------------------------------------------------
def noisy_oracle(farm, sigmas: Sequence[float], cfg: BestOfNConfig | None = None, seeds: int = 3,
                 annotator: str = "human") -> list[dict]:
    """Best-of-``n_max`` on the candidates of :func:`candidates` (chapter 9's), chosen not by the reward
    model but by R* plus Gaussian noise of scale ``sigma``: a reward model whose every error is random,
    of known accuracy (:func:`farmlib.methods.reward_model.noisy_accuracy`). Per sigma: the mean win-rate
    of the picks under ``annotator`` over ``seeds`` noise draws, its mean standard error, and the spread
    of the draws (FarmWorld only)."""
    import numpy as np

    cfg = cfg or farm.method_config("best_of_n")
    cands = candidates(farm, cfg)  # [k][i]
    true = np.array([farm.true_rewards(c) for c in cands])  # [k, i]
    rows = []
    for sigma in sigmas:
        wins, ses = [], []
        for s in range(seeds):
            noisy = true + sigma * np.random.default_rng(s).standard_normal(true.shape)
            picks = [dict(cands[k][i], generator=f"oracle_sigma{sigma:g}") for i, k in enumerate(noisy.argmax(0))]
            wr = farm.evaluate(picks, annotator)[0]
            wins.append(wr.win_rate), ses.append(wr.standard_error)
        rows.append({"sigma": float(sigma), "win_rate": float(np.mean(wins)), "se": float(np.mean(ses)),
                     "seed_sd": float(np.std(wins, ddof=1)) if seeds > 1 else 0.0})
    return rows
