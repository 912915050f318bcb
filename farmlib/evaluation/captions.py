"""The sentences under the figures and tables of the foundation chapters (1-3) and the leaderboard (14), and the
counts they read: each reads the table shown and says what it shows, so no number under a figure is typed by hand
(``tests/test_captions.py``). Nothing here is imported by an artifact's builder."""

from __future__ import annotations

import pandas as pd


def writers_caption(writers: pd.DataFrame) -> str:
    """Under chapter 1's writers figure: rows of (writer, family, R*) on the validation instructions."""
    by_writer = writers.groupby("writer")["R*"].mean().sort_values(ascending=False)
    by_family = writers.pivot_table(index="family", columns="writer", values="R*", aggfunc="mean")
    gap = (by_family.max(axis=1) - by_family.min(axis=1)).sort_values()
    return ("Mean R* on the validation instructions: " + ", ".join(f"{w} {r:.2f}" for w, r in by_writer.items())
            + f". The writers differ most on *{gap.index[-1]}* ({gap.iloc[-1]:.2f} between the best and the worst) and "
            f"least on *{gap.index[0]}* ({gap.iloc[0]:.2f}).")


def family_share_caption(shares: pd.DataFrame) -> str:
    """Under chapter 1's heatmap: each family's share (rows) of each split (columns)."""
    shares = shares.fillna(0)
    spread = (shares.max(axis=1) - shares.min(axis=1)).sort_values()
    return (f"Across the {shares.shape[1]} splits a family's share moves by at most {100 * spread.iloc[-1]:.1f} points "
            f"(*{spread.index[-1]}*) and by as little as {100 * spread.iloc[0]:.1f} (*{spread.index[0]}*): the splits "
            "draw their families in the same proportions, up to the sampling of small splits.")


def split_overlap(splits: dict[str, list[dict]]) -> dict:
    """How the splits share instructions (an instruction is its ``(instruction, input)``): ``pairs``, the count
    shared by each two splits (``"sft∩eval"``); ``eval_overlap``, ``eval``'s instructions found in another split;
    ``recurring``, the records of the other splits whose instruction an earlier record of them already had, out of
    ``training_records``; with a ``val`` split, ``val_shared`` of its ``val_instructions`` distinct instructions are
    also asked in a training split (``val`` holds the pairs chapters 4 and 5 measure on)."""
    keys = {s: {(r["instruction"], r["input"]) for r in recs} for s, recs in splits.items()}
    names = list(keys)
    train = [(r["instruction"], r["input"]) for s, recs in splits.items() if s != "eval" for r in recs]
    out = {"pairs": {f"{a}∩{b}": len(keys[a] & keys[b]) for i, a in enumerate(names) for b in names[i + 1:]},
           "eval_overlap": sum(len(keys["eval"] & k) for s, k in keys.items() if s != "eval"),
           "recurring": len(train) - len(set(train)), "training_records": len(train)}
    if "val" in keys:
        training = set().union(*(k for s, k in keys.items() if s not in ("eval", "val")))
        out |= {"val_shared": len(keys["val"] & training), "val_instructions": len(keys["val"])}
    return out


def split_overlap_caption(overlap: dict) -> str:
    """Under chapter 1's split sizes: whether ``eval`` leaks into training, how often training repeats itself, and
    how much of ``val`` is also asked in training."""
    n, rec, leak = overlap["training_records"], overlap["recurring"], overlap["eval_overlap"]
    shared, n_val = overlap.get("val_shared", 0), overlap.get("val_instructions", 0)
    return (("No instruction of `eval` is found in another split" if not leak else
             f"**{leak} instruction{'s' if leak > 1 else ''} of `eval` {'are' if leak > 1 else 'is'} found in another "
             "split**")
            + f"; {rec} of the {n} records of the other splits ({rec / max(n, 1):.1%}) repeat an instruction drawn "
            "before them"
            + (f"; {shared} of `val`'s {n_val} instructions ({shared / n_val:.0%}) are also asked in a training split, "
               "each with its own answers (held-out pairs there are new samples, not always new instructions)."
               if shared else "."))


def degenerate_caption(degenerate: pd.DataFrame) -> str:
    """Under chapter 1's battery: the share of pairs (0-1) on which the crowd's majority (``crowd majority``), one
    person (``one person``) and, where the table has it, R* (``R*``) pick the correct answer, one row per corruption."""
    crowd, one = degenerate["crowd majority"], degenerate["one person"]
    return ((f"Every corruption loses: the crowd's majority picks the correct answer in at least {100 * crowd.min():.1f} % "
             f"of pairs (the closest call: *{crowd.idxmin()}*), and a single noisy person in at least "
             f"{100 * one.min():.1f} %"
             + (f"; R* itself prefers it in at least {100 * degenerate['R*'].min():.1f} % (*{degenerate['R*'].idxmin()}*)."
                if "R*" in degenerate else ".")) if crowd.min() > 0.5 else
            (f"**Not every corruption loses**: on *{crowd.idxmin()}* the crowd's majority picks the correct answer in only "
             f"{100 * crowd.min():.1f} % of pairs, so a method can gain by learning that corruption."))


def loss_caption(pretrain: list[float], pretrain_tokens: int, sft: list[float], sft_epochs: float) -> str:
    """Under chapter 2's loss curves: the smoothed losses at the start and end of each training."""
    return (f"Pretraining lowers the loss from {pretrain[0]:.2f} to {pretrain[-1]:.2f} nats per token over "
            f"{pretrain_tokens:,} tokens; SFT lowers the response tokens' loss from {sft[0]:.2f} to {sft[-1]:.2f} over "
            f"{sft_epochs:.1f} epochs"
            + (", ending below where pretraining ended." if sft[-1] < pretrain[-1] else
               ", ending above where pretraining ended: answering in the format is harder than reading world text."))


def family_win_caption(fam: pd.DataFrame, model: str = "sft10k") -> str:
    """Under chapter 3's heatmap: win-rates (%) by family (rows) and model (columns)."""
    col = fam[model].sort_values()
    means = fam.mean()
    where = (f"{model} wins {col.iloc[0]:.0f} % on every family" if col.iloc[-1] - col.iloc[0] < 0.5 else
             f"{model} wins most often on *{col.index[-1]}* ({col.iloc[-1]:.0f} %) and least on *{col.index[0]}* "
             f"({col.iloc[0]:.0f} %)")
    return (f"{where}. Averaged over families (each counted once): "
            + ", ".join(f"{m} {v:.0f} %" for m, v in means.items()) + ".")


def leaderboard_caption(board: pd.DataFrame, annotators=("p_sim_eval", "human")) -> str:
    """Under chapter 14's bars: the top method under each annotator, and how many beat the reference."""
    b = board.set_index("method").drop(index=["reference", "expert"], errors="ignore")
    parts = []
    for a in annotators:
        col = f"win_rate_{a}"
        if col not in b:
            continue
        top = b[col].idxmax()
        beat = int((b[col] - 2 * b[f"se_{a}"] > 50).sum())
        parts.append(f"under `{a}` the top method is {top} ({b.loc[top, col]:.1f} ± {b.loc[top, f'se_{a}']:.1f} %), and "
                     f"{beat} of {len(b)} methods beat the reference by more than two standard errors")
    return "Leaving out the reference and the expert: " + "; ".join(parts) + "."
