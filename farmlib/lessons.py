"""What every method chapter (05-13) does besides its own idea, as one call each.

A method chapter trains a policy, shows the code that teaches it, compares the policy's answers with
SFT 10k's, reads the comparison aloud and writes its metrics file. The idea stays on the page; the
plumbing lives here, tested once:

- :func:`source`: a ``farmlib`` object's code as a highlighted block, read from the library itself so the
  page cannot drift from the code (``tests/test_lessons.py`` checks every chapter shows its code this way);
- :func:`evaluation`: the win-rate table beside SFT 10k and the paper's row, and a few answers side by side;
- :func:`reading`: what the table says, in sentences computed from the run;
- :func:`write_method_metrics`: the chapter's metrics file (win-rates, standard errors, length, time);
- :func:`loss_curve`: the training loss of a fine-tuning method, per step and smoothed;
- :func:`dpo_curves`: DPO's loss beside its implicit rewards;
- :func:`ppo_curves`: PPO's reward-model score, KL to SFT and length, on rollouts and held-out prompts.
"""

from __future__ import annotations

import inspect
import math

from farmlib.evaluation.paired import instruction_scores, paired_difference, verdict
from farmlib.paper import TABLE2

#: What a method chapter cannot show on real data, and why (displayed through ``farm.real_data_note``).
REAL_NOTE = ("People and the true reward R* do not exist on real data: win-rates are judged by the real pool "
             "`p_sim_eval` against text-davinci-003's released outputs, and outputs are shown without R*.")


def _markdown(text: str):
    """``text`` as rendered Markdown in a notebook; the text itself outside one."""
    try:
        from IPython.display import Markdown
    except ImportError:  # pragma: no cover - IPython ships with the book extras
        return text
    return Markdown(text)


def qualified_name(obj) -> str:
    """``module.name`` of a function or class (``farmlib.methods.ppo.policy_loss``)."""
    return f"{obj.__module__}.{obj.__qualname__}"


def source_text(*objects) -> str:
    """The code of ``objects`` (functions or classes of ``farmlib``) as one fenced Python block, each
    preceded by a comment naming it and its file, exactly as ``inspect.getsource`` reads it."""
    if not objects:
        raise ValueError("name at least one function or class to show")
    parts = []
    for obj in objects:
        if not qualified_name(obj).startswith("farmlib."):
            raise ValueError(f"{qualified_name(obj)} is not farmlib's: a chapter shows the library's own code")
        obj = inspect.unwrap(obj)  # a decorated function (``@torch.no_grad()``): its own code and file
        lines, start = inspect.getsourcelines(obj)
        file = inspect.getsourcefile(obj) or ""
        rel = file[file.rfind("farmlib/"):] if "farmlib/" in file else file
        parts.append(f"# {qualified_name(obj)}  ({rel}, line {start})\n" + "".join(lines).rstrip())
    return "```python\n" + "\n\n\n".join(parts) + "\n```"


def source(*objects):
    """Display the code of ``objects`` in a notebook (Markdown with a highlighted block): the page shows what
    the library runs, read from it at build time. Outside a notebook, the Markdown text."""
    return _markdown(source_text(*objects))


def paper_row(paper: str | None) -> str:
    """The paper's Table 2 numbers for a row (``"46.8 / 55.1"``; ``–`` where it reports none)."""
    if not paper:
        return "no such row"
    return " / ".join("–" if v is None else f"{v}" for v in TABLE2[paper])


def evaluation(farm, sft_outs: list[dict], outs: list[dict], run: str, paper: str | None, k: int = 4):
    """(table, examples): win-rate against the reference under every evaluation annotator of this world,
    SFT 10k's row and the method's, the paper's numbers beside them; and ``k`` instructions with both
    models' answers (and R* in FarmWorld)."""
    from farmlib.evaluation.leaderboard import compare, side_by_side

    table = compare(farm, {"sft10k": sft_outs, run: outs})
    table["paper (sim / human)"] = [paper_row("SFT 10k"), paper_row(paper)]
    return table, side_by_side(farm, sft_outs, outs, ("sft10k", run), k=k)


def _length(outs: list[dict]) -> float:
    return sum(len(o["output"]) for o in outs) / max(len(outs), 1)


def summary(farm, outs: list[dict]) -> dict:
    """The numbers a chapter reads: ``{"win_rate": {annotator: %}, "standard_error": {annotator: %},
    "avg_length": chars, "true_reward": mean R* or None}``; ``"scores"``: each instruction's result under each
    annotator (1 won, 0.5 tie, 0 lost), which :func:`reading_text` pairs; and in FarmWorld ``"true_rewards"``, each
    answer's R*, which it pairs too, and ``"defects"``: each answer's repetition and disfluency flags
    (:func:`farmlib.evaluation.leaderboard.defect_flags`)."""
    from farmlib.evaluation.leaderboard import defect_flags

    ev = {a: farm.evaluate(outs, a) for a in farm.evaluation_annotators()}
    out = {"win_rate": {a: w.win_rate for a, (w, _) in ev.items()},
           "standard_error": {a: w.standard_error for a, (w, _) in ev.items()},
           "avg_length": _length(outs),
           "true_reward": None}
    if farm.is_farmworld:
        out["true_rewards"] = list(farm.true_rewards(outs))
        out["true_reward"] = sum(out["true_rewards"]) / len(outs)
        out["defects"] = defect_flags(farm, outs)
    if all(ann is not None for _, ann in ev.values()):
        out["scores"] = {a: instruction_scores(ann) for a, (_, ann) in ev.items()}
    return out


def reading_text(run: str, sft: dict, ours: dict) -> str:
    """Sentences comparing two :func:`summary` dicts (SFT 10k's, the method's): per annotator the win-rate
    change and whether it is beyond two standard errors of the difference (paired over the instructions where both
    dicts carry each instruction's ``scores``), the length change and (where both have one) the change in mean
    true reward R*."""
    said = []
    for a, w in ours["win_rate"].items():
        if a not in sft["win_rate"]:
            continue
        d = w - sft["win_rate"][a]
        paired = a in ours.get("scores", {}) and a in sft.get("scores", {})  # the same instructions, the same reference
        se = (paired_difference(ours["scores"][a], sft["scores"][a])[1] if paired
              else math.hypot(ours["standard_error"][a], sft["standard_error"][a]))
        judge = {"human": "the simulated people", "p_sim_eval": "the simulated judges (`p_sim_eval`)"}.get(a, f"`{a}`")
        clear = verdict(d, se)
        said.append(f"under {judge} {run} wins {w:.1f} % against SFT 10k's {sft['win_rate'][a]:.1f} % "
                    f"({d:+.1f} points, {clear}: two standard errors of the difference"
                    f"{', paired over the instructions,' if paired else ''} are {2 * se:.1f})")
    body = "; ".join(said)
    text = f"**Reading the table.** {body[:1].upper()}{body[1:]}." if said else "**Reading the table.**"
    ratio = ours["avg_length"] / max(sft["avg_length"], 1e-9)
    text += (f" Its answers average {ours['avg_length']:.0f} characters against SFT's {sft['avg_length']:.0f} "
             f"({ratio:.2f}×)")
    if ratio > 1.2:
        text += ": longer, and judges that like length reward that on its own (chapter 15)"
    elif ratio < 0.8:
        text += ": shorter, often a sign of answers cut off or collapsed"
    text += "."
    text += defects_text(sft.get("defects"), ours.get("defects"))
    if ours.get("true_reward") is not None and sft.get("true_reward") is not None:
        d = ours["true_reward"] - sft["true_reward"]
        text += (f" The true reward R*, which no method sees, moves from {sft['true_reward']:.3f} to "
                 f"{ours['true_reward']:.3f} ({d:+.3f}")
        mine, theirs = ours.get("true_rewards"), sft.get("true_rewards")
        if mine and theirs and len(mine) == len(theirs):  # the same instructions: the difference is paired
            se = paired_difference(mine, theirs)[1] / 100
            clear = verdict(d, se)
            moved = {"a clear gain": "got better", "a clear loss": "got worse"}.get(clear, "did not change beyond noise")
            text += (f", {clear}: two standard errors of the difference, paired over the instructions, are "
                     f"{2 * se:.3f}) on average: by the measure the world is made of, the answers {moved}.")
        else:
            text += (") on average: " + ("by the measure the world is made of, the answers got better." if d > 0 else
                     "whatever the judges say, the answers did not get better by the measure the world is made of."))
    return text


#: the defect flags :func:`defects_text` reads, and what each says of an answer
DEFECT_WORDS = {"repeats": "say something twice", "disfluent": "stumble (put words side by side as no FarmWorld text does)"}


def defects_text(sft: dict | None, ours: dict | None) -> str:
    """A sentence on how often the method's answers repeat and stumble against SFT 10k's, from two
    :func:`farmlib.evaluation.leaderboard.defect_flags` dicts; each change beyond two standard errors of the
    difference (paired per instruction when both hold the same number of answers, in the same order, as
    :func:`summary` gives them) is said so. ``""`` when either dict is missing (not FarmWorld)."""
    if not sft or not ours:
        return ""
    said, worse = [], False
    for key, what in DEFECT_WORDS.items():
        a, b = ours[key], sft[key]
        ra, rb = 100 * sum(a) / max(len(a), 1), 100 * sum(b) / max(len(b), 1)
        if len(a) == len(b):
            se = paired_difference(a, b)[1]
        else:  # two independent shares
            se = math.hypot(math.sqrt(ra * (100 - ra) / max(len(a), 1)), math.sqrt(rb * (100 - rb) / max(len(b), 1)))
        d = ra - rb
        how = ("more often, beyond two standard errors" if d > 2 * se else
               "less often, beyond two standard errors" if d < -2 * se else "within noise")
        worse |= d > 2 * se
        said.append(f"{what} in {ra:.0f} % of answers against SFT 10k's {rb:.0f} % ({how})")
    text = f" They {said[0]}, and {said[1]}."
    if worse:
        text += (" The people charge for repeating and stumbling (chapter 4's degenerate battery), and a judge's gain"
                 " bought with them is none: read the answers above before the win-rate.")
    return text


def reading(farm, sft_outs: list[dict], outs: list[dict], run: str):
    """:func:`reading_text` of the two models' evaluations, as Markdown to display."""
    return _markdown(reading_text(run, summary(farm, sft_outs), summary(farm, outs)))


def write_method_metrics(farm, name: str, run: str, cfg, outs: list[dict], train_seconds: float,
                         **extra) -> None:
    """Write chapter ``name``'s metrics file: the run's name, its config, win-rate and standard error under
    every evaluation annotator, average length, training seconds and ``extra``. Returns nothing, so a chapter's
    last line writing them shows nothing on the page (:meth:`farmlib.pipeline.Farm.write_metrics`)."""
    s = summary(farm, outs)
    metrics = {"run": run, "config": vars(cfg), "win_rate": s["win_rate"], "standard_error": s["standard_error"],
               "avg_length": s["avg_length"], "train_seconds": float(train_seconds), **extra}
    farm.write_metrics(name, metrics)


def loss_curve(hist, title: str, ylabel: str = "next-token loss (nats)", window: int = 10):
    """Plot a per-step ``loss`` column of a training history (a DataFrame with ``step`` and ``loss``), raw
    and as a moving average; returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(hist["step"], hist["loss"], lw=0.8, alpha=0.5, label="per step")
    ax.plot(hist["step"], hist["loss"].rolling(window, min_periods=1).mean(), label=f"moving average ({window})")
    ax.set(xlabel="optimizer step", ylabel=ylabel, title=title)
    ax.legend()
    fig.tight_layout()
    return fig


def dpo_curves(hist, title: str, window: int = 10):
    """DPO's training history (a DataFrame with ``step``, ``loss`` and the implicit rewards ``rewards/margins``,
    ``rewards/chosen``, ``rewards/rejected``) as two panels: the loss per step and smoothed, against log 2 (a zero
    margin: the policy is the reference); the margin and its two implicit rewards, smoothed. Returns the figure."""
    import matplotlib.pyplot as plt

    # constrained layout keeps the right panel's y-label clear of the left panel; 9 inches wide, the figure is
    # shrunk little to the page's text column, so its labels stay readable
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
    fig.get_layout_engine().set(wspace=0.06)
    smooth = {c: hist[c].rolling(window, min_periods=1).mean() for c in hist.columns if c != "step"}
    left.plot(hist["step"], hist["loss"], lw=0.8, alpha=0.4, label="per step")
    left.plot(hist["step"], smooth["loss"], label=f"moving average ({window})")
    left.axhline(math.log(2), color="gray", ls=":", lw=1, label="log 2: policy = reference")
    left.set(xlabel="optimizer step", ylabel="DPO loss (nats)", title="Loss")
    left.legend(fontsize="small")
    for col, label in [("rewards/margins", "margin m"), ("rewards/chosen", "chosen r̂(x, y_w)"),
                       ("rewards/rejected", "rejected r̂(x, y_l)")]:
        right.plot(hist["step"], smooth[col], label=label)
    right.axhline(0, color="gray", ls=":", lw=1)
    right.set(xlabel="optimizer step", ylabel=r"implicit reward $\beta\,\log(\pi/\pi_\mathrm{ref})$",
              title=f"Implicit rewards (moving average {window})")
    right.legend(fontsize="small")
    fig.suptitle(title)
    return fig


#: PPO's three training curves: (history column, panel title, y-axis label)
PPO_CURVES = [("reward", "Reward-model score", r"score $r_\phi$ (logit units)"),
              ("kl", "KL to SFT", "KL (nats per response)"),
              ("length_tokens", "Response length", "length (tokens per response)")]


def dpo_training_text(hist, pairs: int, seconds: float) -> tuple[str, float, float]:
    """Chapter 8's "What to see" from DPO's per-step history (a DataFrame with ``loss`` and the ``rewards/*``
    columns): the margin, training accuracy and loss over the first and last 10 % of steps, and whether both
    implicit rewards ended below the reference's. Returns (text, first margin, last margin)."""
    k = max(1, len(hist) // 10)
    first, last = hist.iloc[:k].mean(), hist.iloc[-k:].mean()
    m0, m1 = first["rewards/margins"], last["rewards/margins"]
    both_down = last["rewards/chosen"] < 0 and last["rewards/rejected"] < 0
    text = (f"**What to see.** Over {pairs} pairs ({seconds:.0f} s) the implicit reward margin went from {m0:.3f} "
            f"(first 10 % of steps) to {m1:.3f} (last 10 %), and the share of training pairs ranked right from "
            f"{first['rewards/accuracies']:.0%} to {last['rewards/accuracies']:.0%}; the loss from {first['loss']:.3f} "
            f"to {last['loss']:.3f}. At the end the chosen answers' implicit reward is {last['rewards/chosen']:+.3f} "
            f"and the rejected ones' {last['rewards/rejected']:+.3f}: "
            + ("*both* fell below the reference's: DPO widened the gap by making the rejected answers less likely "
               "faster than the chosen ones, a common pattern (the probability mass goes to answers that are in "
               "neither)." if both_down else
               "the chosen answers became more likely relative to the reference, the rejected ones less."))
    return text, float(m0), float(m1)


def ppo_curves(hist, held, title: str = "PPO", window: int = 5):
    """PPO's training (``hist``: one row per step, the rollout batch's ``reward``, ``kl`` and ``length_tokens``)
    and its held-out evaluations (``held``: the same columns, every ``eval_every`` steps), one panel per curve:
    per batch, smoothed, and on the held-out prompts. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(PPO_CURVES), figsize=(10, 3.5), layout="constrained")
    fig.get_layout_engine().set(wspace=0.06)
    for ax, (col, name, ylabel) in zip(axes, PPO_CURVES):
        ax.plot(hist["step"], hist[col], lw=0.8, alpha=0.4, label="rollout batch")
        ax.plot(hist["step"], hist[col].rolling(window, min_periods=1).mean(), label=f"moving average ({window})")
        if col in held:
            ax.plot(held["step"], held[col], "o-", label="held-out prompts")
        ax.set(xlabel="PPO step", ylabel=ylabel, title=name)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize="small",
               frameon=False)  # below the panels, off their curves
    fig.suptitle(title)
    return fig


def value_text(hist, window: int = 5) -> str:
    """Chapter 11's reading of the value model from PPO's per-step ``explained_variance`` (:func:`farmlib.methods.
    ppo.explained_variance`): how much of the returns' spread it accounted for at the first step and over the last
    ``window``, and what that leaves the advantages to be ("" for a history recorded without it)."""
    if "explained_variance" not in hist:
        return ""
    first, last = hist["explained_variance"].iloc[0], hist["explained_variance"].iloc[-window:].mean()
    text = (f"The value function accounted for {100 * first:.0f} % of the returns' variance at the first step and "
            f"{100 * last:.0f} % over the last {window}")
    if last < 0.2:
        return text + (": each token's advantage is then close to its whitened return, a baseline no better than the "
                       "batch's mean. An answer is credited for its instruction's typical score as much as for being "
                       "a better answer to it, and the gradient carries that spread as noise.")
    return text + ": a baseline that takes out most of the spread the answer's own tokens did not cause."
