"""What chapter 5 says about its reward model, computed: the sentences and the table that read its runs
(what accuracy best-of-n would need, what scale of labels would reach it). Kept here, tested on hand-made
numbers, so the chapter's cells stay short."""

from __future__ import annotations

import numpy as np
import pandas as pd

from farmlib.evaluation.win_rate import plus_minus
from farmlib.methods.reward_model import pairs_for_accuracy


def gap_sentence(oracle: pd.DataFrame, sft_people: float, bar: float, oracle_gain: float, acc_needed: float | None,
                 n_max: int, acc_ours: float, ours_win_rate: float, ours_se: float) -> tuple[str, bool]:
    """(text, worse): best-of-``n_max`` picked by R* plus noise (``oracle``: sigma, win_rate, "accuracy vs R*")
    against our reward model's pick, in words; ``worse`` is whether ours does more than two standard errors
    worse than a random-error scorer of the same accuracy (its errors are systematic)."""
    perfect = float(oracle.loc[oracle["sigma"] == 0, "win_rate"].iloc[0]) if (oracle["sigma"] == 0).any() else float("nan")
    o = oracle.sort_values("accuracy vs R*")
    random_like = float(np.interp(acc_ours, o["accuracy vs R*"], o["win_rate"]))
    worse = ours_win_rate < random_like - 2 * ours_se
    found = ("the candidates hold better answers, and a good enough reward model finds them." if perfect > sft_people
             else "even a perfect scorer finds nothing better among these candidates.")
    need = (f"Random errors cost it gradually: to clear SFT 10k + {oracle_gain:g} points ({bar:.1f} %) a scorer needs "
            f"about **{100 * acc_needed:.0f} %** held-out accuracy against R*." if acc_needed is not None else
            f"No scorer of the grid, not even the noise-free one, clears SFT 10k + {oracle_gain:g} points ({bar:.1f} %) "
            f"at n = {n_max}.")
    errors = (f"below the {random_like:.1f} % of a random-error scorer of the same accuracy: its errors are not random "
              "but systematic (among an instruction's samples it prefers some that people like less; chapter 9 "
              "follows R* of its picks as n grows)." if worse else
              f"close to the {random_like:.1f} % of a random-error scorer of the same accuracy: its errors cost about "
              "what random ones would.")
    text = (f"With R* itself as the scorer, best-of-{n_max} wins {perfect:.1f} % under people, "
            f"{perfect - sft_people:+.1f} points over SFT 10k's {sft_people:.1f} %: {found} {need} Our reward model has "
            f"{100 * acc_ours:.1f} % and its best-of-{n_max} wins {ours_win_rate:.1f} %, {errors}")
    return text, worse


def _reach(v: float | None, largest: int) -> str:
    """The extrapolated pairs, in words: a number, or why there is none worth printing."""
    if v is None:
        return "no number of pairs (the fitted line does not rise)"
    return f"over 1,000 times its {largest:,} pairs" if v > 1000 * largest else f"about {float(f'{v:.2g}'):,.0f} pairs"


def scale_table(curve: pd.DataFrame, acc_needed: float) -> pd.DataFrame:
    """Per label source of the accuracy curve (columns labels, pairs, acc_true, se_true, "label agreement with
    R*"): its largest point, the points gained per doubling of pairs, and the pairs it needs for ``acc_needed``
    (measured where a point reaches it, else extrapolated along a line in log-pairs). A point at 0 pairs (before
    any label) is no label source's: it is left out."""
    rows = []
    for source, g in curve[curve["pairs"] > 0].groupby("labels", sort=False):
        fit = pairs_for_accuracy(list(g["pairs"]), list(g["acc_true"]), list(g["se_true"]), acc_needed)
        hit = g[g["acc_true"] >= acc_needed]  # measured points at or above the needed accuracy
        ext = _reach(fit["pairs_needed"], int(g["pairs"].max()))
        rows.append({"labels": source, "label agreement with R* (%)": 100 * g["label agreement with R*"].iloc[-1],
                     "pairs (largest point)": int(g["pairs"].max()), "accuracy there (%)": 100 * g["acc_true"].iloc[-1],
                     "standard error (%)": 100 * g["se_true"].iloc[-1],
                     "points per doubling of pairs": 100 * fit["per_doubling"],
                     "pairs for the needed accuracy": (f"measured: {int(hit['pairs'].iloc[0]):,} pairs" if len(hit) else
                                                       f"extrapolated: {ext}"),
                     "pairs_needed": int(hit["pairs"].iloc[0]) if len(hit) else fit["pairs_needed"],
                     "measured": len(hit) > 0, "extrapolation": ext})
    return pd.DataFrame(rows).set_index("labels")


def scale_sentence(scale: pd.DataFrame, acc_needed: float, n_max: int, n_train: int, arch: str, worse: bool) -> str:
    """:func:`scale_table` read aloud: where each label source stands against the needed accuracy, and whether the
    labels or the number of pairs hold the reward model back first."""
    need_pct = 100 * acc_needed

    def where(s: str, r) -> str:
        acc, se, n = r["accuracy there (%)"], r["standard error (%)"], r["pairs (largest point)"]
        side = ("at or above it" if acc >= need_pct else "within one standard error of it" if acc + se >= need_pct
                else f"{need_pct - acc:.1f} points short")
        out = f"With {s} labels the reward model reaches {acc:.1f} ± {se:.1f} % at {n:,} pairs, {side}"
        if acc < need_pct:
            out += (f" (a straight line in log-pairs through its points, {r['points per doubling of pairs']:+.1f} points "
                    f"per doubling, puts it at {r['extrapolation']})")
        return out

    noisy = scale.drop(index="true_reward", errors="ignore")
    clean = scale.loc["true_reward"] if "true_reward" in scale.index else None
    clean_gets_there = clean is not None and clean["accuracy there (%)"] + clean["standard error (%)"] >= need_pct
    if clean_gets_there:  # the first measured point at the needed accuracy, else the largest (within its error)
        n_clean = int(clean["pairs_needed"]) if clean["measured"] else int(clean["pairs (largest point)"])
    short = [s for s, r in noisy.iterrows() if r["accuracy there (%)"] + r["standard error (%)"] < need_pct]
    labels_note = "".join(  # only where those labels leave the reward model short: it can average their noise out
        f" `{s}`'s labels agree with R* on only {r['label agreement with R* (%)']:.0f} % of the training pairs: a reward "
        "model fitted to them learns that annotator's taste, errors included, and more of its labels bring it closer "
        "to R* only as far as the two agree."
        for s, r in noisy.iterrows() if s in short and r["label agreement with R* (%)"] < need_pct)
    if clean is None:
        limit = "Without R*'s own labels in the curve, it cannot say whether the labels or the pairs come first."
    elif clean_gets_there and not short:
        limit = (f"So neither holds it back at this scale: every source of labels brings the reward model to the "
                 f"accuracy best-of-{n_max} needs, R*'s own with about {n_clean:,} pairs ({n_clean / n_train:.2g}× what "
                 "the profile trains on).")
    elif clean_gets_there and labels_note:
        limit = (f"So the labels hold it back first: with labels that agree with R*, about {n_clean:,} pairs "
                 f"({n_clean / n_train:.2g}× what the profile trains on) are enough; with the judges' labels, "
                 f"more pairs buy {noisy['points per doubling of pairs'].max():.1f} points or less per doubling.")
    elif clean_gets_there:
        limit = f"So the number of pairs holds it back: about {n_clean:,} pairs are enough."
    else:
        limit = ("Even R*'s own labels fall short at the largest point, so the number of pairs (or the model's capacity) "
                 "holds it back before the labels do" + ("; the judges' labels add a taste of their own." if labels_note else "."))
    return (f"**What scale would close it.** Best-of-{n_max} needs about {need_pct:.1f} % held-out accuracy against R*. "
            + ". ".join(where(s, r) for s, r in scale.iterrows()) + f". The profile's reward model trains on "
            f"{n_train:,} pairs and is the SFT transformer ({arch})." + labels_note + " " + limit
            + " The needed accuracy assumes errors no costlier than random ones"
            + (" (our reward model's are costlier, above)" if worse else "") + ", and the lines are extrapolations of a "
            "few points (an order of magnitude, not a measurement). Capacity is the other lever: "
            "`python benchmarks/reward_readouts.py --capacity --big` reads the held-out pairs and best-of-n's candidates "
            "with models that know more than SFT 10k (SFT 52k, three SFT seeds, a model five times larger).")


def weights_sentence(m: dict, score_sd: float | None = None) -> str:
    """What the labels set of the readers' weights (``m``: :func:`farmlib.methods.reward_model.metrics`; each only
    where the reward model has that reader), and the repeat reader's charge beside ``score_sd``, the standard
    deviation of the scores of SFT 10k's answers. Empty for a reward model without these readers."""
    names = (("likelihood_weight", "the likelihood's weight *a*"), ("backward_weight", "the backward reader's λ"),
             ("repeat_weight", "the repeat reader's ρ"))
    parts = [f"{label} = {m[k]:.2f}" for k, label in names if m.get(k) is not None]
    if not parts:
        return ""
    out = "The labels set " + ", ".join(parts) + "."
    if m.get("repeat_weight") is not None and score_sd:
        out += (f" An answer that says a thing twice loses {abs(m['repeat_weight']):.2f} "
                f"({abs(m['repeat_weight']) / score_sd:.1f} standard deviations of SFT 10k's scores)"
                if m["repeat_weight"] < 0 else " The labels do not charge for saying a thing twice")
        out += "."
    return " " + out


def measured_sentence(m: dict, rho: float, score_sd: float | None = None) -> str:
    """The reward model's held-out accuracies (``m``: :func:`farmlib.methods.reward_model.metrics`), the Spearman
    correlation ``rho`` of its scores with R* across instructions, and its readers' weights
    (:func:`weights_sentence`), in words."""
    z = (m["val_accuracy_true"] - 0.5) / max(m["val_se_true"], 1e-9)
    return (f"**Measured.** Held-out accuracy against R*'s labels is {m['val_accuracy_true']:.1%} ± "
            f"{m['val_se_true']:.1%}, {z:.1f} standard errors {'above' if z > 0 else 'below'} chance; against "
            f"the noisy training labels {m['val_accuracy']:.1%} ± {m['val_se']:.1%}. The reward model's score "
            f"and R* have a Spearman correlation of {rho:.2f} on the SFT model's eval outputs, *across* instructions. "
            "Bradley–Terry only identifies reward differences between outputs of the same instruction: each "
            "instruction's offset is free, so a model can rank within prompts (what best-of-n and PPO use) while "
            "its scores are not comparable across prompts." + weights_sentence(m, score_sd))


def ceilings_figure(oracle_curve: pd.DataFrame, sft_win_rate: float, ppo_win_rate: float):
    """Oracle best-of-n (columns n, sqrt_kl, win_rate, se) against √KL, with SFT 10k's and PPO-on-R*'s win-rates
    under people as lines; returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(oracle_curve["sqrt_kl"], oracle_curve["win_rate"], yerr=oracle_curve["se"], marker="o", capsize=3,
                label="best-of-n picked by R*")
    for _, r in oracle_curve.iterrows():
        ax.annotate(f"n={r['n']:.0f}", (r["sqrt_kl"], r["win_rate"]), fontsize="small", xytext=(3, -10),
                    textcoords="offset points")
    ax.axhline(sft_win_rate, color="gray", ls=":", label="SFT 10k")
    ax.axhline(ppo_win_rate, color="tab:red", ls="--", label="PPO on R*")
    ax.set(xlabel="√KL from the SFT policy (nats^½, best-of-n's bound)", ylabel="win-rate vs reference, people (%)",
           title="Ceilings: R* as the selector and as PPO's reward")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def needed_accuracy_figure(oracle: pd.DataFrame, n_max: int, ours: tuple[float, float, float, float],
                           sft_people: float, bar: float, oracle_gain: float, acc_needed: float | None):
    """Best-of-``n_max`` win-rate under people against the scorer's held-out accuracy: R* plus noise (``oracle``:
    "accuracy vs R*", win_rate, se) and our reward model (``ours``: accuracy, its se, win-rate, its se), with SFT 10k,
    the bar SFT 10k + ``oracle_gain`` and the accuracy needed to clear it; returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    o = oracle.sort_values("accuracy vs R*")
    ax.errorbar(100 * o["accuracy vs R*"], o["win_rate"], yerr=o["se"], marker="o", capsize=3,
                label=f"best-of-{n_max} by R* + noise")
    acc, acc_se, wr, wr_se = ours
    ax.errorbar([100 * acc], [wr], xerr=[100 * acc_se], yerr=[wr_se], marker="s", color="tab:red", capsize=3,
                label=f"best-of-{n_max} by our reward model")
    ax.axhline(sft_people, color="gray", ls=":", label="SFT 10k")
    ax.axhline(bar, color="gray", ls="--", label=f"SFT 10k + {oracle_gain:g} points")
    if acc_needed is not None:
        ax.axvline(100 * acc_needed, color="tab:green", lw=1, alpha=0.6)
    ax.set(xlabel="held-out accuracy against R* (%)", ylabel="win-rate vs reference, people (%)",
           title="What best-of-n needs from its reward model")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def _pairs_axis(ax) -> None:
    """A log axis of training pairs labelled in plain numbers at 1, 2 and 5 times each power of ten (200, 500, 1,000),
    without the minor ticks' labels, which overlap on a narrow figure."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def accuracy_curve_figure(curve: pd.DataFrame):
    """Held-out accuracy against R* (with its standard error) by training pairs, one line per label source; a point
    at 0 pairs (the reward model before any label) is a dashed line across, as a log axis has no 0."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    untrained = curve[curve["pairs"] == 0]
    for source, g in curve[curve["pairs"] > 0].groupby("labels", sort=False):
        ax.errorbar(g["pairs"], 100 * g["acc_true"], yerr=100 * g["se_true"], marker="o", capsize=3, label=source)
    if len(untrained):
        ax.axhline(100 * untrained["acc_true"].iloc[0], color="black", ls="--", lw=1, label="before any label")
    ax.axhline(50, color="gray", ls=":", lw=1)
    _pairs_axis(ax)
    ax.set(xlabel="training pairs", ylabel="held-out accuracy against R* (%)",
           title="Reward-model accuracy by training pairs and label source")
    ax.legend(title="labels")
    fig.tight_layout()
    return fig


def curve_table(curve: pd.DataFrame) -> pd.DataFrame:
    """:func:`farmlib.methods.reward_model.accuracy_curve`'s rows for the page: each accuracy with its standard error in
    one cell (%), and the repeat reader's ρ where the curve's reward models have one; narrow enough for the column."""
    def pm(acc: str, se: str) -> list[str]:
        return [plus_minus(100 * a, 100 * e) for a, e in zip(curve[acc], curve[se])]

    table = pd.DataFrame({"labels": curve["labels"]})
    if "label agreement with R*" in curve.columns:
        table["agree with R*"] = curve["label agreement with R*"].round(3)
    table["pairs"], table["vs R* (%)"] = curve["pairs"], pm("acc_true", "se_true")
    if "acc_people" in curve.columns:
        table["vs people (%)"] = pm("acc_people", "se_people")
    if "repeat_weight" in curve.columns:
        table["ρ"] = curve["repeat_weight"].round(2)
    return table


def curve_sentence(curve: pd.DataFrame) -> str:
    """What :func:`accuracy_curve_figure` shows: the reward model before any label (if measured), each label
    source's accuracy with all its pairs, and the best point."""
    untrained = curve[curve["pairs"] == 0]
    trained = curve[curve["pairs"] > 0]
    best = trained.loc[trained["acc_true"].idxmax()]
    by = trained[trained["pairs"] == trained.groupby("labels")["pairs"].transform("max")].set_index("labels")
    start = ""
    if len(untrained):
        u = untrained.iloc[0]
        gain = 100 * (best["acc_true"] - u["acc_true"])
        start = (f"Before any label the reward model already ranks {100 * u.acc_true:.1f} ± {100 * u.se_true:.1f} % of "
                 f"the held-out pairs as R* does; the best point adds {gain:+.1f} points to that. ")
    return (start + "With all its pairs, the reward model reaches "
            + ", ".join(f"{100 * r.acc_true:.1f} ± {100 * r.se_true:.1f} % with {s} labels ({int(r.pairs)} pairs)"
                        for s, r in by.iterrows())
            + f" (against R*). The best point is {best['labels']} labels at {int(best['pairs'])} pairs. "
            + "Where the noise-free curve still rises at the right end, more pairs would help; the gap between it and "
            + "the noisy sources is what label noise costs at this scale." + people_sentence(curve))


def people_sentence(curve: pd.DataFrame) -> str:
    """The curve against the people's majority (``acc_people``: what a reward model is meant to predict), for each
    label source from its first point to its last: whether the labels move it beyond twice the larger standard
    error. Empty when the curve has no such column."""
    if "acc_people" not in curve.columns:
        return ""
    parts, moved = [], []
    for source, g in curve.sort_values("pairs", kind="stable").groupby("labels", sort=False):
        a, b = g.iloc[0], g.iloc[-1]
        d, se = 100 * (b.acc_people - a.acc_people), 100 * max(a.se_people, b.se_people)
        parts.append(f"{100 * a.acc_people:.1f} % at {int(a.pairs):,} and {100 * b.acc_people:.1f} ± {100 * b.se_people:.1f} % "
                     f"at {int(b.pairs):,} pairs with {source} labels")
        moved.append(abs(d) > 2 * se)
    what = ("so the labels move what it agrees with the people on" if any(moved) else
            "within two standard errors of each other: what it agrees with the people on comes from where it started, "
            "not from the labels")
    return (" Against the people's majority on the same held-out pairs (what a reward model is meant to predict) it "
            "ranks " + "; ".join(parts) + f", {what}.")


def head_curve_figure(curve: pd.DataFrame, head: pd.DataFrame, labels: str):
    """Held-out accuracy against the people's majority by training pairs (``labels``' pairs): the book's reward model
    (``curve``; its point before any label a dashed line, as a log axis has no 0) beside the paper's, a new head on
    the last token (``head``), both with their standard errors."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.6))
    ours = curve[curve["labels"] == labels]
    for name, g in (("this book's (likelihood, backward reader)", ours[ours["pairs"] > 0]),
                    ("the paper's (a new head on the last token)", head[head["pairs"] > 0])):
        ax.errorbar(g["pairs"], 100 * g["acc_people"], yerr=100 * g["se_people"], marker="o", capsize=3, label=name)
    start = ours[ours["pairs"] == 0]
    if len(start):
        ax.axhline(100 * start["acc_people"].iloc[0], color="black", ls="--", lw=1, label="this book's, before any label")
    ax.axhline(50, color="gray", ls=":", lw=1)
    _pairs_axis(ax)
    ax.set(xlabel=f"training pairs ({labels}'s labels)", ylabel="held-out accuracy against people (%)",
           title="Two reward models on the same pairs")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    fig.tight_layout()
    return fig


def head_sentence(curve: pd.DataFrame, head: pd.DataFrame, labels: str, target: float) -> str:
    """What :func:`head_curve_figure` shows: where each reward model starts and ends against the people, whether the
    paper's head rises beyond twice the larger standard error of its two ends, and how far its last point is from
    ``target`` (a fraction, the accuracy the claim asks for)."""
    h = head[head["pairs"] > 0].sort_values("pairs", kind="stable")
    ours = curve[curve["labels"] == labels].sort_values("pairs", kind="stable")
    a, b = h.iloc[0], h.iloc[-1]
    d, se = 100 * (b.acc_people - a.acc_people), 100 * max(a.se_people, b.se_people)
    rise = (f"rises {d:.1f} points, beyond twice its standard error" if d > 2 * se else
            f"moves {d:+.1f} points, within twice its standard error ({2 * se:.1f})")
    o0, o1 = ours.iloc[0], ours.iloc[-1]
    end = (f"{100 * (target - b.acc_people):.1f} points below" if b.acc_people < target else
           f"{100 * (b.acc_people - target):.1f} points above")
    ahead = ("before any label it is already above where the paper's head ends." if o0.acc_people > b.acc_people else
             "the paper's head reaches where this book's starts.")
    return (f"The paper's reward model, a new head on the SFT model's last token, learns from the same `{labels}` pairs: "
            f"against the people's majority it ranks {100 * a.acc_people:.1f} % of the held-out pairs with "
            f"{int(a.pairs):,} pairs and {100 * b.acc_people:.1f} ± {100 * b.se_people:.1f} % with {int(b.pairs):,}: it "
            f"{rise}, and ends {end} the {100 * target:.0f} % the claim asks for at 10k pairs. This book's reward model "
            f"starts at {100 * o0.acc_people:.1f} % " + ("before any label" if o0.pairs == 0 else f"with {int(o0.pairs):,} pairs")
            + f" and ends at {100 * o1.acc_people:.1f} % "
            f"with {int(o1.pairs):,}: {ahead}")


# -- new instructions, or new samples of seen ones? -----------------------------------------------------------
#: The two halves of the held-out pairs: whether the reward model's training split also asks the pair's instruction.
SEEN, NEW = "asked in training", "not asked in training"


def seen_and_new(farm, path: str, cfg, split: str = "preference") -> dict:
    """Chapter 5's held-out pairs against the people's majority (pairs of SFT samples on ``val``), each marked by
    whether ``split`` also asks its instruction (``seen``), and for each pair whether the reward model at ``path``
    (``"trained"``) and the same reader before any label (``"before any label"``: the accuracy curve's first point)
    rank it as the people do (``hits``). The model before any label tells the halves' families apart from what
    training on the instructions taught; both read the same pairs, so their difference is paired."""
    from farmlib.annotators.validation import sft_pairs
    from farmlib.methods import backward_reader
    from farmlib.methods.reward_model import load_reward_model, new_reward_model, rewards

    tok, max_len, crowd = farm.tokenizer(), farm.profile.model.max_length, farm.annotator("human")
    held = [dict(r, preference=crowd.majority_label(r)) for r in sft_pairs(farm, split="val")]
    asked = {(r["instruction"], r["input"]) for r in farm.splits()[split]}
    models = {"before any label": new_reward_model(farm.sft_model(), tok, farm.profile.device, reads=cfg.reads,
                                                   backward=backward_reader.of_config(farm, cfg),
                                                   max_length=max_len),
              "trained": load_reward_model(path, farm.profile.device)}
    hits = {}
    for name, m in models.items():
        r1, r2 = (rewards(m, tok, held, k, max_length=max_len).tolist() for k in ("output_1", "output_2"))
        hits[name] = [(b > a) == (p["preference"] == 2) for a, b, p in zip(r1, r2, held)]
    return {"seen": [(p["instruction"], p["input"]) in asked for p in held], "hits": hits}


def _halves(result: dict, model: str) -> dict[str, np.ndarray]:
    seen = np.array(result["seen"], dtype=bool)
    h = np.array(result["hits"][model], dtype=float)
    return {SEEN: h[seen], NEW: h[~seen]}


def seen_table(result: dict) -> pd.DataFrame:
    """:func:`seen_and_new`'s accuracies as ``accuracy ± se % (pairs)``, one row per model, one column per half."""
    def cell(x: np.ndarray) -> str:
        a = x.mean() if len(x) else float("nan")
        return f"{plus_minus(100 * a, 100 * np.sqrt(a * (1 - a) / max(len(x), 1)))} % ({len(x)})"
    return pd.DataFrame({m: {h: cell(x) for h, x in _halves(result, m).items()} for m in result["hits"]}).T


def seen_sentence(result: dict) -> str:
    """What :func:`seen_table` shows: how much training moved each half, and whether the two halves moved alike
    within twice the noise of that difference (paired: each pair's change between the two models)."""
    before, after = _halves(result, "before any label"), _halves(result, "trained")
    n_seen, n = len(after[SEEN]), len(after[SEEN]) + len(after[NEW])
    if min(n_seen, n - n_seen) < 2:
        return (f"{n_seen} of the {n} held-out pairs ask an instruction the reward model's training pairs also asked: "
                "too few on one side to compare the halves.")
    change = {h: after[h] - before[h] for h in (SEEN, NEW)}  # -1, 0 or +1 per pair
    gain = {h: 100 * change[h].mean() for h in (SEEN, NEW)}
    noise = 100 * float(np.sqrt(sum(change[h].var(ddof=1) / len(change[h]) for h in (SEEN, NEW))))
    head = (f"{n_seen} of the {n} held-out pairs ask an instruction the reward model's training pairs also asked (with "
            f"other answers). Before any label the reader ranks {100 * before[SEEN].mean():.1f} % of them as the people do and "
            f"{100 * before[NEW].mean():.1f} % of the others; "
            f"training moves the first half by {gain[SEEN]:+.1f} points and the second by {gain[NEW]:+.1f}. ")
    d = gain[SEEN] - gain[NEW]
    easier = "easier" if before[SEEN].mean() >= before[NEW].mean() else "harder"
    if abs(d) <= 2 * noise:
        return head + (f"Those two moves differ by less than twice their noise ({2 * noise:.1f} points, paired over the "
                       "pairs): the labels did not teach the reward model the instructions it met more than the others, "
                       "and the gap between the halves, there before any label, is their families' (the small "
                       f"families, whose instructions recur across splits, are the {easier} ones here).")
    if d > 0:
        return head + (f"The seen half gained more, beyond twice the noise ({2 * noise:.1f} points): part of the held-out "
                       f"accuracy is memory of the instructions, and {100 * after[NEW].mean():.1f} % on the new half is "
                       "the number that says how the reward model meets a new instruction.")
    return head + (f"The new half gained more, beyond twice the noise ({2 * noise:.1f} points): what the labels taught "
                   "carries to instructions the reward model never saw.")
