"""Chapter 16's analysis: best-of-n and PPO followed along the surrogate reward, R* and the win-rate, and whether
the win-rate falls after a peak (over-optimisation).

``*_curve`` functions build the tables (from cached artifacts); ``verdict`` and the ``*_sentence`` functions word
them, branching on whether a fall is larger than two standard errors, and are tested on hand-made curves
(``tests/test_overoptimisation.py``). Nothing here is imported by an artifact's builder."""

from __future__ import annotations

import math

import pandas as pd

from farmlib.evaluation.paired import instruction_scores, paired_difference
from farmlib.evaluation.win_rate import plus_minus
from farmlib.plotting import label_points


def mean_se(xs) -> tuple[float, float]:
    """Mean and standard error of the mean."""
    xs = list(xs)
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / max(len(xs) - 1, 1) / len(xs))


def _scored(farm, outs, reference, annotators, sur, true) -> dict:
    """A curve's row: rewards, length, and each annotator's win-rate, its standard error and each instruction's
    score (``scores <a>``: 1 won, 0.5 tie, 0 lost), which :func:`verdict` pairs across rows."""
    row = {"surrogate reward": sur[0], "se surrogate": sur[1], "true reward R*": true[0], "se R*": true[1],
           "length": sum(len(o["output"]) for o in outs) / len(outs)}
    for a in annotators:
        wr, ann = farm.evaluate(outs, a, reference=reference)
        row[f"win-rate {a}"], row[f"se {a}"] = wr.win_rate, wr.standard_error
        row[f"scores {a}"] = instruction_scores(ann)
    return row


def best_of_n_curve(farm, draw: dict, ns: list[int], reference: list[dict], annotators) -> pd.DataFrame:
    """One row per n of ``ns``: the KL bound, the chosen candidates' surrogate reward
    and R*, their length (characters) and their win-rate against ``reference`` under each annotator; each pick's
    R* (``R* each``, None on real data), which :func:`reward_sentence` pairs across rows."""
    from farmlib.methods.best_of_n import best_of, kl_bound, prefix_choices
    from farmlib.progress import progress

    choice = prefix_choices(draw["rewards"], ns)  # n -> the chosen candidate of each prompt
    rows = []
    for n in progress(ns, desc="best-of-n"):
        sur = mean_se(draw["rewards"][i][k] for i, k in enumerate(choice[n]))
        each = [draw["true_rewards"][i][k] for i, k in enumerate(choice[n])] if farm.is_farmworld else None
        true = mean_se(each) if each else (float("nan"), float("nan"))  # no R* on real data
        rows.append({"n": n, "KL bound": kl_bound(n), **_scored(farm, best_of(draw, n), reference, annotators, sur, true),
                     "R* each": each})
    return pd.DataFrame(rows).set_index("n")


def ppo_curve(farm, ppo_path: str, rm_path: str, n_prompts: int, reference: list[dict], annotators) -> pd.DataFrame:
    """One row per saved PPO policy (step 0: SFT 10k): held-out KL to SFT, surrogate reward, R*, length, win-rates."""
    from farmlib.artifacts import read_json
    from farmlib.methods import ppo
    from farmlib.methods.reward_model import load_reward_model, rewards
    from farmlib.progress import progress

    held = {e["step"]: e for e in read_json(f"{ppo_path}/held_out.json")}
    rm, tok = load_reward_model(rm_path, farm.profile.device), farm.tokenizer()
    steps = {0: farm.sft_model(), **ppo.checkpoints(ppo_path)}
    rows = []
    for step, path in progress(steps.items(), desc="PPO steps", total=len(steps)):
        outs = farm.samples(path, "eval", n=n_prompts, generator=f"ppo_step{step}")
        sur = mean_se(rewards(rm, tok, outs, max_length=farm.profile.model.max_length).tolist())
        true = mean_se(farm.true_rewards(outs)) if farm.is_farmworld else (float("nan"), float("nan"))
        rows.append({"step": step, "KL (held-out)": held[step]["kl"] if step in held else float("nan"),
                     **_scored(farm, outs, reference, annotators, sur, true)})
    return pd.DataFrame(rows).set_index("step")


def shown(table: pd.DataFrame, kl: str, annotators) -> pd.DataFrame:
    """Means ± standard errors, one column per quantity (fits the page)."""
    pm = lambda m, s, d=2: [plus_minus(a, b, d) for a, b in zip(table[m], table[s])]  # noqa: E731
    return pd.DataFrame({kl: table[kl].round(2), "surrogate reward": pm("surrogate reward", "se surrogate"),
                         "true reward R*": pm("true reward R*", "se R*"), "length (chars)": table["length"].round(0),
                         **{f"win-rate {a} (%)": pm(f"win-rate {a}", f"se {a}", 1) for a in annotators}},
                        index=table.index)


def reward_sentence(curve: pd.DataFrame, n_max: int, ppo: pd.DataFrame | None, kl_max: float) -> str:
    """What the reward-against-KL figure shows: the surrogate climbs; does R* peak and fall? The fall's standard
    error is paired over the instructions where the curve keeps each pick's R* (``R* each``)."""
    top_true = curve["true reward R*"].idxmax()
    fall = curve["true reward R*"].max() - curve["true reward R*"].iloc[-1]
    paired = "R* each" in curve and curve["R* each"].iloc[-1] is not None  # the same instructions at every n
    se_fall = (mean_se([x - y for x, y in zip(curve.at[top_true, "R* each"], curve["R* each"].iloc[-1])])[1] if paired
               else math.hypot(curve.loc[top_true, "se R*"], curve["se R*"].iloc[-1]))
    return (
        f"**What to see.** The surrogate reward of best-of-n climbs from {curve['surrogate reward'].iloc[0]:.2f} (n = 1) to "
        f"{curve['surrogate reward'].iloc[-1]:.2f} (n = {n_max}) — by construction it cannot fall. The true reward R* goes "
        f"from {curve['true reward R*'].iloc[0]:.3f} to {curve['true reward R*'].iloc[-1]:.3f}; "
        + (f"its highest point is the last, n = {n_max}: it has not turned down." if top_true == curve.index[-1] else
           f"its highest point is at n = {top_true} ({curve['true reward R*'].max():.3f}), and n = {n_max} sits "
           f"{fall:.3f} below it ({'more' if fall > 2 * se_fall else 'less'} than two standard errors"
           f"{' of the paired fall' if paired else ''}, {2 * se_fall:.3f}).")
        + (f" PPO reaches a held-out KL of {ppo['KL (held-out)'].iloc[-1]:.1f} nats after {ppo.index[-1]} steps "
           f"(best-of-{n_max}'s bound is {kl_max:.1f}), with R* {ppo['true reward R*'].iloc[0]:.3f} → "
           f"{ppo['true reward R*'].iloc[-1]:.3f}." if ppo is not None else ""))


def verdict(curve: pd.DataFrame, annotators) -> dict:
    """Per annotator: where best-of-n's win-rate peaks, where it ends, and whether the fall exceeds two standard
    errors of the drop. Both points judge the same instructions against the same reference, so where the curve
    keeps each instruction's score (``scores <a>``) the drop's standard error is the paired one, of the mean
    per-instruction difference; otherwise the two points' standard errors are combined as if independent."""
    out = {}
    for a in annotators:
        w, s = curve[f"win-rate {a}"], curve[f"se {a}"]
        peak = w.idxmax()
        drop, paired = w.max() - w.iloc[-1], f"scores {a}" in curve
        if paired:
            se_drop = paired_difference(curve.at[peak, f"scores {a}"], curve[f"scores {a}"].iloc[-1])[1]
        else:
            se_drop = math.hypot(s.loc[peak], s.iloc[-1])
        out[a] = {"peak_n": int(peak), "peak": float(w.max()), "last": float(w.iloc[-1]), "drop": float(drop),
                  "se_drop": float(se_drop), "paired": paired, "significant_fall": bool(drop > 2 * se_drop)}
    return out


def _se_drop(v: dict) -> str:
    return f"± {v['se_drop']:.1f}" + (", paired over the instructions" if v.get("paired") else "")


def _curve_words(start: float, v: dict, n_max: int) -> str:
    """One annotator's best-of-n curve in words: where it peaks, where it ends, and whether the fall is beyond noise."""
    if v["peak_n"] == n_max:
        return f"{start:.1f} % at n = 1 to {v['last']:.1f} % at n = {n_max}, its highest: no sign of over-optimisation."
    words = f"{start:.1f} % at n = 1 to a high of {v['peak']:.1f} % at n = {v['peak_n']} and ends at {v['last']:.1f} % at n = {n_max}: "
    if v["significant_fall"]:
        return words + f"a fall of {v['drop']:.1f} points, larger than two standard errors of the fall ({_se_drop(v)}) — over-optimisation."
    if v["drop"] > 0:
        return words + (f"{v['drop']:.1f} points below its peak, less than two standard errors of the fall ({_se_drop(v)}; "
                        "not told apart from noise at this many instructions).")
    return words + f"as high at the largest n as anywhere: no sign of over-optimisation up to n = {n_max}."


def win_rate_sentence(curve: pd.DataFrame, verdicts: dict, n_max: int, n_prompts: int) -> str:
    """The verdict on over-optimisation under each annotator."""
    first = next(iter(verdicts))
    return ("**What to see.** "
            + " ".join(f"Under {a}, best-of-n's win-rate goes from {_curve_words(curve[f'win-rate {a}'].iloc[0], v, n_max)}"
                       for a, v in verdicts.items())
            + f" With {n_prompts} instructions one standard error of a win-rate is about "
              f"{curve[f'se {first}'].mean():.0f} points.")


#: Gao, Schulman & Hilton's (2022) forms of a reward's gain over the initial policy against d = √KL.
GAO_FORMS = {"best_of_n": "d (α − β d)", "rl": "d (α − β log d)"}


def gao_fit(d, gain, form: str) -> dict | None:
    """Least-squares ``α, β`` of :data:`GAO_FORMS` ``[form]`` through the origin (no gain at d = 0), over the points
    with d > 0 and a finite gain; None with fewer than two. ``peak_d``: where the fitted gain is highest (None when
    it still rises: β ≤ 0); ``d_max``: the largest d fitted (a peak past it is the form's extrapolation)."""
    if form not in GAO_FORMS:
        raise ValueError(f"form is {form!r}; choose from {', '.join(GAO_FORMS)}")
    pts = [(x, y) for x, y in zip(d, gain) if x > 0 and math.isfinite(x) and math.isfinite(y)]
    if len(pts) < 2:
        return None
    basis = [(x, -x * x) if form == "best_of_n" else (x, -x * math.log(x)) for x, _ in pts]
    s11 = sum(a * a for a, _ in basis)
    s12 = sum(a * b for a, b in basis)
    s22 = sum(b * b for _, b in basis)
    t1 = sum(a * y for (a, _), (_, y) in zip(basis, pts))
    t2 = sum(b * y for (_, b), (_, y) in zip(basis, pts))
    det = s11 * s22 - s12 * s12
    if abs(det) < 1e-12:
        return None
    alpha, beta = (t1 * s22 - t2 * s12) / det, (s11 * t2 - s12 * t1) / det
    peak = None
    if beta > 0:
        peak = alpha / (2 * beta) if form == "best_of_n" else math.exp(alpha / beta - 1)
    return {"form": form, "alpha": alpha, "beta": beta, "peak_d": peak, "points": len(pts),
            "d_max": max(x for x, _ in pts)}


def gao_value(fit: dict, d: float) -> float:
    """The fitted gain at ``d``."""
    if d <= 0:
        return 0.0
    return d * (fit["alpha"] - fit["beta"] * (d if fit["form"] == "best_of_n" else math.log(d)))


def gao_fits(curve: pd.DataFrame, ppo: pd.DataFrame | None) -> dict:
    """Gao et al.'s forms fitted to the gains (over each method's own start) of the surrogate reward and of R*:
    ``{(method, quantity): fit}`` for best-of-n (d = √ of the KL bound) and PPO (d = √ of the held-out KL)."""
    out = {}
    for method, table, kl, form in (("best-of-n", curve, "KL bound", "best_of_n"), ("PPO", ppo, "KL (held-out)", "rl")):
        if table is None:
            continue
        d = [math.sqrt(max(k, 0.0)) for k in table[kl]]
        for col in ("surrogate reward", "true reward R*"):
            gain = [v - table[col].iloc[0] for v in table[col]]
            out[(method, col)] = gao_fit(d, gain, form)
    return out


def _peak_words(fit: dict) -> str:
    """Where a fit turns down, said against the range it was fitted on: a peak past the last point measured is the
    form's extrapolation, not something the run saw."""
    peak = fit["peak_d"]
    if not peak:
        return "no turn down (β ≤ 0)"
    if peak > fit.get("d_max", math.inf):
        return f"no turn down within the run (the fitted peak, √KL = {peak:.2f}, lies past its last √KL, {fit['d_max']:.2f})"
    return f"highest at √KL = {peak:.2f} (KL = {peak ** 2:.1f} nats)"


def gao_sentence(fits: dict) -> str:
    """:func:`gao_fits` read aloud: each fit's α and β, and where the truth's fitted gain peaks against the proxy's."""
    parts = []
    for method in ("best-of-n", "PPO"):
        sur, true = fits.get((method, "surrogate reward")), fits.get((method, "true reward R*"))
        if true is None:
            continue
        form = GAO_FORMS[true["form"]]
        s = f"For {method}, R*'s gain fits {form} with α = {true['alpha']:.2f}, β = {true['beta']:.2f}"
        s += f", {_peak_words(true)}"
        if sur is not None:
            s += f"; the surrogate's fit: {_peak_words(sur)}"
        parts.append(s + ".")
    if not parts:
        return ""
    return ("**Gao et al.'s forms.** " + " ".join(parts) + " Where the truth's curve turns down while the proxy's goes on "
            "rising, the proxy and the truth have parted: past that KL, more optimisation buys reward-model score, not "
            "what people want.")


def reward_figure(curve: pd.DataFrame, ppo: pd.DataFrame | None):
    """Gain of the surrogate reward and of R* over each method's start, against √KL to SFT (best-of-n: the KL bound;
    PPO: the held-out KL), with Gao et al.'s fitted forms (:func:`gao_fits`) as lines."""
    import matplotlib.pyplot as plt

    fits = gao_fits(curve, ppo)
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    series = [("best-of-n", curve, "KL bound", "o", "C0")]
    if ppo is not None:
        series.append(("PPO", ppo, "KL (held-out)", "s", "C1"))
    points = {}  # (panel, method) -> the (d, gain) it draws: best-of-n's are named by n, PPO's kept clear
    for ax, col, se, title in ((axes[0], "surrogate reward", "se surrogate", "the surrogate: what is optimised"),
                               (axes[1], "true reward R*", "se R*", "R*: what people want")):
        for method, table, kl, marker, color in series:
            d = [math.sqrt(max(k, 0.0)) for k in table[kl]]
            gain = [v - table[col].iloc[0] for v in table[col]]
            points[(ax, method)] = list(zip(d, gain))
            ax.errorbar(d, gain, yerr=table[se], marker=marker, capsize=3, ls="none", color=color, label=method)
            fit = fits.get((method, col))
            if fit is not None:
                xs = [max(d) * i / 50 for i in range(51)]
                ax.plot(xs, [gao_value(fit, x) for x in xs], color=color, lw=1.2,
                        label=f"{GAO_FORMS[fit['form']]}: α={fit['alpha']:.2f}, β={fit['beta']:.2f}")
        ax.axhline(0, color="gray", ls=":", lw=1)
        ax.set(xlabel="√KL to the SFT model (√nats)", ylabel="gain over the start (reward units)", title=title)
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False, ncol=2)  # off the points
    fig.tight_layout()
    for ax in axes:
        d, gain = zip(*points[(ax, "best-of-n")])
        label_points(ax, d, gain, [f"n={n}" for n in curve.index], avoid=points.get((ax, "PPO"), ()))
    return fig


def win_rate_figure(curve: pd.DataFrame, ppo: pd.DataFrame | None, annotators):
    """Figure 5's analog: win-rate against the mean surrogate reward, one panel per annotator."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(annotators), figsize=(11, 3.8), sharey=True, squeeze=False)
    for ax, a in zip(axes[0], annotators):
        ax.errorbar(curve["surrogate reward"], curve[f"win-rate {a}"], yerr=curve[f"se {a}"], marker="o", capsize=3,
                    label="best-of-n")
        if ppo is not None:
            ax.errorbar(ppo["surrogate reward"], ppo[f"win-rate {a}"], yerr=ppo[f"se {a}"], marker="s", capsize=3,
                        label="PPO (by step)")
        ax.set(xlabel="mean surrogate reward (reward-model units)", ylabel="win-rate vs reference (%)",
               title=f"evaluated by {a}")
        ax.legend(fontsize="small")
    fig.tight_layout()
    for ax, a in zip(axes[0], annotators):  # best-of-n's points named by n, clear of PPO's
        label_points(ax, curve["surrogate reward"], curve[f"win-rate {a}"], [str(n) for n in curve.index],
                     avoid=[] if ppo is None else list(zip(ppo["surrogate reward"], ppo[f"win-rate {a}"])))
    return fig


def label_noise_sentence(table: pd.DataFrame, n_prompts: int, n_max: int) -> str:
    """Chapter 17's "What to see" from its table (one row per kind of label, with ``fall``, ``fall > 2 se``,
    ``peak n`` and ``RM accuracy vs R*``): which curves fall beyond their noise, the largest and smallest falls
    (one clause when every curve falls alike), and the spread of the reward models' accuracy."""
    falls = table.index[table["fall > 2 se"]].tolist()
    text = (f"**What to see.** On {n_prompts} instructions and n up to {n_max}, the reward models whose best-of-n "
            f"win-rate under people falls from its peak to n = {n_max} by more than two standard errors of the fall "
            f"(paired over the instructions): {', '.join(falls) if falls else 'none'}. ")
    top, low = table["fall"].idxmax(), table["fall"].idxmin()
    if table["fall"].max() <= 0:
        text += f"No curve is lower at n = {n_max} than at its peak. "
    elif table["fall"].max() == table["fall"].min():
        text += f"Every curve falls {table['fall'].max():.1f} points from its peak. "
    else:
        text += (f"The largest fall is with **{top}** ({table['fall'].max():.1f} points, peak at n = "
                 f"{table.loc[top, 'peak n']}); the smallest with **{low}** ({table['fall'].min():.1f}). ")
    acc = table["RM accuracy vs R*"]
    return text + (f"Reward-model accuracy against R* ranges from {acc.min():.3f} ({acc.idxmin()}) to {acc.max():.3f} "
                   f"({acc.idxmax()}). In the paper, 25 % flips is the smallest rate that over-optimises, and the fall "
                   "grows with the rate.")
