"""Chapter 15's analysis: how much of each method's win-rate is bought with length, how often the longer output
is chosen against the reference, and how length grows along best-of-n and PPO.

The ``*_table`` functions build tables (those taking a ``farm`` read cached artifacts and annotate); the
``*_sentence`` functions word what a table shows, branching on the numbers, and are tested on hand-made tables
(``tests/test_length_findings.py``). The figures carry labelled axes with units. Nothing here is imported by an
artifact's builder."""

from __future__ import annotations

import pandas as pd

from farmlib.evaluation.length_controlled import length, length_controlled_win_rate
from farmlib.evaluation.win_rate import plus_minus
from farmlib.paper import ANNOTATORS as PAPER_ANNOTATORS
from farmlib.paper import LENGTHS_SIM, TABLE2
from farmlib.plotting import label_points

#: our row -> the paper's row in Table 7 (lengths) and Table 2 (win-rates)
PAPER_LENGTH = {"base": "LLaMA 7B", "sft10k": "SFT 10K", "sft52k": "SFT 52K", "expert": "GPT-4"}
PAPER_WIN = {"base": "LLaMA 7B (base)", "sft10k": "SFT 10k", "sft52k": "SFT 52k", "expert": "GPT-4", "ppo": "PPO",
             "dpo": "DPO", "best_of_n": "Best-of-1024", "expert_iteration": "Expert iteration",
             "feedme": "Binary FeedME", "quark": "Quark", "reward_conditioning": "Binary reward conditioning"}


def mean_length(outputs: list[dict], unit: str = "chars") -> float:
    """Average length of the ``output`` of each record, in ``unit`` (chars or words)."""
    return sum(length(o["output"], unit) for o in outputs) / len(outputs)


# --- raw and length-controlled win-rates -------------------------------------------------------------------------

def board_table(farm, names: list[str], annotators, unit: str = "chars"):
    """Each method's length and its raw and length-controlled win-rate against the reference under each annotator;
    also the annotations (method, annotator) -> records, which the style analysis reuses."""
    from farmlib import methods
    from farmlib.progress import progress

    rows, anns = [], {}
    for name in progress(names, desc="methods"):
        outs = methods.outputs(farm, name)
        row = {"method": name, "length": mean_length(outs, unit)}
        for a in annotators:
            anns[name, a] = farm.evaluate(outs, a)[1]  # each output against the reference's, one label per pair
            lc = length_controlled_win_rate(anns[name, a], unit=unit)
            row |= {f"raw {a}": lc.win_rate, f"raw se {a}": lc.raw_standard_error, f"LC {a}": lc.lc_win_rate,
                    f"LC se {a}": lc.standard_error, f"slope {a}": lc.slope}
        row["paper length"] = LENGTHS_SIM.get(PAPER_LENGTH.get(name, ""))
        row["paper sim"] = TABLE2.get(PAPER_WIN.get(name, ""), (None, None))[0]
        rows.append(row)
    board = pd.DataFrame(rows).set_index("method").sort_values(f"raw {annotators[0]}", ascending=False)
    return board, anns


def board_shown(board: pd.DataFrame, annotators, unit: str = "chars"):
    """The board as shown: means ± standard errors, one column per annotator and kind under the annotator's name,
    so the headers are short and the table fits the page."""
    cols = {("", f"length ({unit})"): board["length"].round(0).astype(int),
            **{(a, kind): [plus_minus(m, s) for m, s in zip(board[f"{kind} {a}"], board[f"{kind} se {a}"])]
               for a in annotators for kind in ("raw", "LC")},
            ("paper", "length"): board["paper length"], ("paper", "sim"): board["paper sim"]}
    shown = pd.DataFrame(cols, index=board.index)
    shown.columns = pd.MultiIndex.from_tuples(cols)
    return shown.style.format({("paper", "length"): "{:.0f}", ("paper", "sim"): "{:.1f}"}, na_rep="–")


def spearman(board: pd.DataFrame, annotators, leave_out=("reference", "expert")) -> dict:
    """Rank correlation of length with the raw and with the length-controlled win-rate, over the methods."""
    m = board.drop(index=list(leave_out), errors="ignore")
    return {a: (m["length"].corr(m[f"raw {a}"], method="spearman"), m["length"].corr(m[f"LC {a}"], method="spearman"))
            for a in annotators}


def moved_by_length(board: pd.DataFrame, a: str = "human") -> list[str]:
    """Methods whose raw and length-controlled win-rates under ``a`` differ by more than two standard errors (and a
    point)."""
    return [n for n in board.index if abs(board.loc[n, f"raw {a}"] - board.loc[n, f"LC {a}"])
            > max(2 * board.loc[n, f"LC se {a}"], 1.0)]


def board_sentence(board: pd.DataFrame, annotators, rho: dict, n_methods: int, people: str = "human") -> str:
    """What the raw-against-length-controlled figure shows."""
    gap = board[f"raw {people}"] - board[f"LC {people}"]
    moved = moved_by_length(board, people)
    fmt = lambda r: "undefined (a constant column)" if pd.isna(r) else f"{r:.2f}"  # noqa: E731
    return ("**What to see.** Each vertical segment joins a method's raw win-rate (dot) to its length-controlled one "
            "(cross). "
            + " ".join(f"Under {a}, the rank correlation of length with the raw win-rate over the {n_methods} methods is "
                       f"{fmt(rho[a][0])}, with the length-controlled one {fmt(rho[a][1])} (mean slope "
                       f"{board[f'slope {a}'].mean():.2f} logits per unit of length)." for a in annotators)
            + f" The largest gain from length under people is **{gap.idxmax()}** ({gap.max():+.1f} points raw minus "
            "length-controlled), " + (f"the largest loss **{gap.idxmin()}** ({gap.min():+.1f})" if gap.min() < 0 else
                                      "and no method loses from controlling for length")
            + ". Methods whose two win-rates "
            f"differ by more than two standard errors under people: {', '.join(moved) if moved else 'none'}.")


def board_figure(board: pd.DataFrame, annotators, unit: str = "chars"):
    """Raw (dot) and length-controlled (cross) win-rate against average length, one panel per annotator."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(annotators), figsize=(11, 4.2), sharey=True, squeeze=False)
    for ax, a in zip(axes[0], annotators):
        ax.scatter(board["length"], board[f"raw {a}"], label="raw win-rate", zorder=3)
        ax.scatter(board["length"], board[f"LC {a}"], marker="x", label="length-controlled", zorder=3)
        for _, r in board.iterrows():
            ax.plot([r["length"]] * 2, [r[f"raw {a}"], r[f"LC {a}"]], color="gray", lw=0.8)
        ax.axhline(50, color="gray", ls=":", lw=1)
        ax.set(xlabel=f"average output length ({unit})", ylabel="win-rate vs reference (%)", title=f"judged by {a}")
    axes[0][0].legend(fontsize="small")
    fig.tight_layout()
    for ax, a in zip(axes[0], annotators):
        label_points(ax, board["length"], board[f"raw {a}"], board.index, avoid=zip(board["length"], board[f"LC {a}"]))
    return fig


# --- longer and listed, against the reference --------------------------------------------------------------------

def style_table(anns: dict, board: pd.DataFrame, against: list[str], annotators):
    """Per method: P(longer) and P(list) under each annotator, and the pair counts; also the pooled statistics
    (with 95 % intervals over instructions) by annotator."""
    from farmlib.annotators import style_preferences

    style = {}
    for n in against:
        row = {"length": board.loc[n, "length"]}
        for a in annotators:
            s = style_preferences(anns[n, a], n_boot=0)
            row |= {f"P(longer) {a}": s["p_longer"], f"P(list) {a}": s["p_list"]}
        style[n] = row | {"pairs": s["n_p_longer"], "list pairs": s["n_p_list"]}
    pooled = {a: style_preferences([r for n in against for r in anns[n, a]]) for a in annotators}
    return pd.DataFrame(style).T, pooled


def paper_value(a: str, key: str) -> str:
    """The paper's Figure 9 value of ``key`` for annotator ``a``, as shown ("–" when it has none)."""
    v = PAPER_ANNOTATORS.get(a, {}).get(key)
    return "–" if v is None else (f"{v[0]:.2f}–{v[1]:.2f}" if isinstance(v, tuple) else f"{v:.2f}")


def style_shown(style: pd.DataFrame, pooled: dict, annotators) -> pd.DataFrame:
    """The style table as shown: a pooled row with intervals and the paper's row, grouped columns."""
    order = ["length", "pairs", *[f"P(longer) {a}" for a in annotators], "list pairs",
             *[f"P(list) {a}" for a in annotators]]
    shown = style[order].map(lambda v: "–" if pd.isna(v) else f"{v:.2f}")
    shown[["length", "pairs", "list pairs"]] = style[["length", "pairs", "list pairs"]].map(lambda v: f"{v:.0f}")
    last = pooled[annotators[-1]]  # the pair counts of the table: the last annotator's labels
    ci = lambda a, k: f"{pooled[a][k]:.2f} ({pooled[a][k + '_interval'][0]:.2f}–{pooled[a][k + '_interval'][1]:.2f})"  # noqa: E731
    shown.loc["all (95 %)"] = ["–", f"{last['n_p_longer']}", *[ci(a, "p_longer") for a in annotators],
                               f"{last['n_p_list']}", *[ci(a, "p_list") for a in annotators]]
    shown.loc["paper (Fig 9)"] = ["–", "–", *[paper_value(a, "p_longer") for a in annotators], "–",
                                  *[paper_value(a, "p_list") for a in annotators]]
    shown.columns = pd.MultiIndex.from_tuples([("", "length"), ("P(longer)", "pairs"),
                                               *[("P(longer)", a) for a in annotators], ("P(list)", "pairs"),
                                               *[("P(list)", a) for a in annotators]])
    return shown


def by_side(anns: dict, against: list[str], annotators) -> dict:
    """Which side is chosen when the method's output (``output_2``) or the reference's (``output_1``) is the longer."""
    side = {}
    for a in annotators:
        recs = [r for n in against for r in anns[n, a]
                if r["preference"] in (1, 2) and len(r["output_1"]) != len(r["output_2"])]
        method_longer = [r["preference"] == 2 for r in recs if len(r["output_2"]) > len(r["output_1"])]
        reference_longer = [r["preference"] == 1 for r in recs if len(r["output_1"]) > len(r["output_2"])]
        side[a] = {"method_longer": len(method_longer), "method_chosen": sum(method_longer) / max(len(method_longer), 1),
                   "reference_longer": len(reference_longer),
                   "reference_chosen": sum(reference_longer) / max(len(reference_longer), 1)}
    return side


def against_paper(pooled: dict, a: str, key: str) -> str:
    """The pooled value with its interval, and where the paper's value lies."""
    p, (lo, hi), v = pooled[a][key], pooled[a][f"{key}_interval"], PAPER_ANNOTATORS.get(a, {}).get(key)
    where = ""
    if v is not None:
        v_lo, v_hi = v if isinstance(v, tuple) else (v, v)
        where = ("; the paper's value lies inside" if lo <= v_hi and v_lo <= hi else
                 f"; the paper's {v_lo:.2f} lies {'above' if v_lo > hi else 'below'}")
    return f"{p:.2f} (95 %: {lo:.2f}–{hi:.2f}{where})"


def style_sentence(style: pd.DataFrame, pooled: dict, side: dict, annotators, n_rows: int) -> str:
    """How often the longer output and the list are chosen against the reference, against the paper's Figure 9."""
    paper_people = PAPER_ANNOTATORS["human"]["p_longer"][0]
    col = style[f"P(longer) {annotators[-1]}"].astype(float)
    return (
        f"**What to see.** Pooled over the pairs of all {n_rows} rows, " + "; ".join(
            f"`{a}` chooses the longer output {against_paper(pooled, a, 'p_longer')} and the list "
            f"{against_paper(pooled, a, 'p_list')}" for a in annotators)
        + f". Under `{annotators[-1]}` the methods range from {col.min():.2f} ({col.idxmin()}) to {col.max():.2f} "
        f"({col.idxmax()}). Split by side: " + "; ".join(
            f"under `{a}`, a method whose output is the longer is chosen {s['method_chosen']:.0%} of the time "
            f"({s['method_longer']} pairs) and the reference, when its output is the longer, {s['reference_chosen']:.0%} "
            f"({s['reference_longer']} pairs): being the longer of the two is worth "
            f"{s['method_chosen'] + s['reference_chosen'] - 1:+.2f} in the chance of being chosen, for either side"
            for a, s in side.items())
        + f". The paper's people, at {paper_people:.2f} with both sides about equally often the longer, put that worth "
        f"near {2 * paper_people - 1:.2f}. Which outputs carry right content when they are longer, and which do not, is "
        "chapter 4's analysis.")


def style_figure(style: pd.DataFrame, annotators):
    """How often each annotator chooses the longer output, method against reference, beside the paper's values."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.8))
    bars = style[[f"P(longer) {a}" for a in annotators]].astype(float).rename(columns=lambda c: c.split(" ", 1)[1])
    bars.plot.bar(ax=ax, width=0.75)
    ax.axhline(0.5, color="gray", ls=":", lw=1)
    for a, ls in zip(annotators, ("--", "-.")):
        v = PAPER_ANNOTATORS.get(a, {}).get("p_longer")
        if v is not None:
            ax.axhline(v[0] if isinstance(v, tuple) else v, color="black", ls=ls, lw=1, label=f"paper, {a}")
    ax.set(xlabel="method (each against the reference)", ylabel="P(the longer is chosen), 0-1", ylim=(0, 1),
           title="How often the longer output is chosen, method against reference")
    plt.setp(ax.get_xticklabels(), rotation=45, ha="right")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the bars, not on them
    fig.tight_layout()
    return fig


# --- length along the optimisation ------------------------------------------------------------------------------

def stages_table(farm, cfg, unit: str = "chars"):
    """Average length of best-of-n (n = 1, 4, 16, 128 and ``n_max``, from the over-optimisation chapter's draw) and of
    PPO at each saved step, on the same instructions. Returns the table, PPO's steps and the number of instructions."""
    from farmlib import methods
    from farmlib.methods.best_of_n import best_of, powers_of_two, prefix_draw
    from farmlib.methods.ppo import checkpoints

    draw = prefix_draw(farm, methods.reward_model_path(farm), cfg)
    n_prompts, stages = len(draw["candidates"]), []
    for n in powers_of_two(cfg.n_max):
        if n in (1, 4, 16, 128) or n == cfg.n_max:
            stages.append({"stage": f"best-of-{n}", "length": mean_length(best_of(draw, n), unit),
                           "paper (Table 7)": LENGTHS_SIM.get(f"Best-of-{n}", LENGTHS_SIM["SFT 10K"] if n == 1 else None)})
    steps = {0: farm.sft_model(), **checkpoints(methods.policy(farm, "ppo")[0])}
    for step, path in steps.items():
        outs = farm.samples(path, "eval", n=n_prompts, generator=f"ppo_step{step}")
        stages.append({"stage": f"PPO step {step}" + (" (SFT 10k)" if step == 0 else ""), "length": mean_length(outs, unit),
                       "paper (Table 7)": LENGTHS_SIM["SFT 10K"] if step == 0 else None})  # the paper's steps are of 390
    return pd.DataFrame(stages).set_index("stage"), list(steps), n_prompts


def stages_sentence(stages: pd.DataFrame, steps: list[int], n_prompts: int, n_max: int) -> str:
    """How much best-of-n and PPO lengthen the answers, beside the paper's Table 7."""
    bon, ppo = stages[stages.index.str.startswith("best-of")], stages[stages.index.str.startswith("PPO")]
    note = "" if len(steps) > 2 else (" This PPO artifact was trained before PPO saved its policies along the way, so "
                                      "only its start and end are shown; delete it to retrain with checkpoints.")
    sft = LENGTHS_SIM["SFT 10K"]
    return (
        f"**What to see.** On {n_prompts} instructions, best-of-n's average length goes from {bon['length'].iloc[0]:.0f} at "
        f"n = 1 to {bon['length'].iloc[-1]:.0f} at n = {n_max} ({bon['length'].iloc[-1] / bon['length'].iloc[0] - 1:+.0%}); "
        f"PPO's from {ppo['length'].iloc[0]:.0f} before training to {ppo['length'].iloc[-1]:.0f} after {max(steps)} steps "
        f"({ppo['length'].iloc[-1] / ppo['length'].iloc[0] - 1:+.0%}). In the paper both grow: best-of-128 is "
        f"{LENGTHS_SIM['Best-of-128'] / sft:.1f} times as long as SFT 10k, PPO after 20 and 80 of its 390 steps "
        f"{LENGTHS_SIM['PPO 20 steps'] / sft:.1f} and {LENGTHS_SIM['PPO 80 steps'] / sft:.1f} times (Table 7; our PPO "
        f"runs {max(steps)} steps in all, so its steps do not line up with the paper's).{note}")


def stages_figure(stages: pd.DataFrame, steps: list[int], unit: str = "chars"):
    """Average length along best-of-n (log n) and along PPO's steps."""
    import matplotlib.pyplot as plt

    bon, ppo = stages[stages.index.str.startswith("best-of")], stages[stages.index.str.startswith("PPO")]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    axes[0].plot([int(s.split("-")[-1]) for s in bon.index], bon["length"], "o-", label="ours")
    axes[0].set(xscale="log", xlabel="n, candidates per instruction (log scale)", ylabel=f"average length ({unit})",
                title="best-of-n")
    axes[1].plot(steps, ppo["length"], "o-")
    axes[1].set(xlabel="PPO step (optimiser updates)", ylabel=f"average length ({unit})", title="PPO")
    fig.tight_layout()
    return fig
