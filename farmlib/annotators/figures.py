"""Chapter 4's figures, each with labelled axes (with units) and a title; the sentence under each is computed by
``farmlib.annotators.judge_findings`` or ``crowd_taste``. They only draw what the tables hold."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from farmlib.paper import CROWD_RANGES
from farmlib.plotting import label_points

#: one colour per kind of annotator (the ``kind`` column of ``validation_table``)
COLORS = {"pool member": "tab:blue", "pool": "tab:green", "pool + noise": "tab:olive", "single": "tab:red",
          "local LM": "tab:purple", "people": "black"}


def cost_agreement(table: pd.DataFrame):
    """Fig 4's analog: each annotator's cost per 1000 annotations against its agreement with people."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for _, r in table.iterrows():
        x = max(r["cost_per_1000"], 0.01)  # a log axis has no 0: the free local LM sits at 0.01
        member = r["kind"] == "pool member"
        ax.scatter(x, 100 * r["agreement"], color=COLORS[r["kind"]], s=25 if member else 60, label=r["kind"])
    handles = dict(zip(*reversed(ax.get_legend_handles_labels())))  # one legend entry per kind
    ax.legend(handles.values(), handles.keys(), fontsize="small", loc="lower right")
    ax.set_xscale("log")
    ax.set(xlabel="cost per 1000 annotations (USD, log scale; local LM plotted at 0.01)",
           ylabel="agreement with human majority (%)", title="Fig 4 analog: cost vs agreement")
    fig.tight_layout()
    named = table[table["kind"] != "pool member"]
    label_points(ax, named["cost_per_1000"].clip(lower=0.01), 100 * named["agreement"], named.index)
    return fig


def bias_variance(table: pd.DataFrame):
    """Fig 7's analog: each annotator's bias against its variance (both shares of labels, 0-1)."""
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for _, r in table.iterrows():
        ax.scatter(r["bias"], r["variance"], color=COLORS[r["kind"]], s=25 if r["kind"] == "pool member" else 60)
    ax.set(xlabel="bias (share of pairs where the annotator's mode\ndiffers from the human majority)",
           ylabel="variance (share of draws that\ndiffer from the annotator's majority)",
           title="Fig 7 analog: bias vs variance")
    fig.tight_layout()
    label_points(ax, table["bias"], table["variance"], table.index)
    return fig


def agreement_heatmap(matrix: pd.DataFrame):
    """Fig 8's analog: pairwise agreement (%) of the annotators' first draws."""
    fig, ax = plt.subplots(figsize=(10, 8.5))
    sns.heatmap(matrix, annot=True, fmt=".0f", cmap="viridis", ax=ax, annot_kws={"fontsize": "x-small"},
                cbar_kws={"label": "agreement (% of pairs)"})
    ax.set(xlabel="annotator", ylabel="annotator", title="Fig 8 analog: pairwise agreement (%)")
    fig.tight_layout()
    return fig


def style_bars(table: pd.DataFrame):
    """Fig 9's analog: each annotator's probability of preferring the longer output and the list."""
    style = table[["p_longer", "p_list"]].rename(columns={"p_longer": "P(longer)", "p_list": "P(list)"})
    style = style.rename_axis("annotator").reset_index().melt(id_vars="annotator", var_name="statistic", value_name="P")
    fig, ax = plt.subplots(figsize=(10, 4))
    sns.barplot(style, x="annotator", y="P", hue="statistic", ax=ax)
    ax.axhline(0.5, color="gray", ls=":", lw=1)
    ax.set(xlabel="annotator", ylabel="probability of preferring (0-1)", ylim=(0, 1),
           title="Fig 9 analog: preference for longer outputs and lists")
    ax.legend(title="statistic", fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the bars, not on them
    ax.tick_params(axis="x", rotation=70)
    fig.tight_layout()
    return fig


def length_follows_content(by_accuracy: pd.DataFrame, win: str, paper_win: float):
    """P(people prefer the longer output) against the writers' mean quality and their win-rate, SFT 10k beside."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    w = by_accuracy.dropna(subset=["accuracy"])
    s = by_accuracy[by_accuracy["accuracy"].isna()].iloc[0]
    for ax, x, xlabel in [(axes[0], "mean quality", "mean task quality (R*'s, 0-1)"),
                          (axes[1], win, "people's win-rate vs the reference (%)")]:
        ax.axhspan(*CROWD_RANGES["p_longer"], color="tab:green", alpha=0.15,
                   label="real crowd's range ({:.2f}-{:.2f})".format(*CROWD_RANGES["p_longer"]))
        ax.plot(w[x], w["P(longer)"], "o-", label="writers, labelled by their accuracy")
        ax.scatter([s[x]], [s["P(longer)"]], color="tab:red", zorder=3, label="SFT 10k")
        ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        ax.set(xlabel=xlabel)
    paper_line = axes[1].axvline(paper_win, color="tab:purple", ls="--", lw=1,
                                 label=f"the paper's SFT 10k vs Davinci003 ({paper_win:g} %)")
    axes[0].set(ylabel="P(people prefer\nthe longer output)", title="Length is preferred as content rises")
    axes[1].set(title="... and as the writer nears the reference")
    axes[0].legend(fontsize="small", loc="upper left")
    axes[1].legend(handles=[paper_line], fontsize="small", loc="upper left")
    fig.tight_layout()
    for ax, x in ((axes[0], "mean quality"), (axes[1], win)):  # each writer's accuracy beside its point
        label_points(ax, w[x], w["P(longer)"], [f"{a:g}" for a in w["accuracy"]], offset=(4, -12))
    return fig


def battery_heatmap(fooled: pd.DataFrame):
    """The degenerate-output battery: percent of pairs on which each annotator chose the correct answer."""
    fig, ax = plt.subplots(figsize=(10, 6.5))
    sns.heatmap(fooled, annot=True, fmt=".0f", cmap="RdYlGn", vmin=0, vmax=100, ax=ax, annot_kws={"fontsize": "x-small"},
                cbar_kws={"label": "correct answer chosen (% of pairs)"})
    ax.set(xlabel="corruption of the correct answer", ylabel="annotator", title="Degenerate-output battery")
    ax.tick_params(axis="x", rotation=60, labelsize="small")
    fig.tight_layout()
    return fig
