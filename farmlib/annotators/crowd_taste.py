"""The people's taste for length and lists: on which pairs it is measured, across training seeds, as the
writers' accuracy rises, and what moves it (chapter 4).

Each ``*_table`` builds a table (the ones that take a ``farm`` sample and label pairs; the others only read);
each ``*_sentence`` words what the table shows. The sentences branch on the numbers (inside or outside the real
crowd's range, which spread is larger), so every branch is tested on hand-made tables
(``tests/test_crowd_taste.py``). Nothing here is imported by an artifact's builder: wording a result never
retrains anything."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from farmlib.annotators.validation import content_gap, crowd_intervals, crowd_labels, sft_pairs, stats, writer_pairs
from farmlib.paper import CROWD_RANGES

#: the column of a writer's (or model's) win-rate against the reference under people, on the evaluation instructions
WIN = "win-rate vs reference (%)"
#: the two sets of labelled pairs the people are measured on: the demonstrator's answers their taste was set on, and
#: the book's SFT samples (the rows of ``calibration_and_sft_sets``; the keys of its intervals)
CALIBRATION_SET, SFT_SET = "demonstrator pairs (calibration)", "SFT pairs (reported)"
#: ``accuracy_table``'s row of the book's SFT model, after the writers'
SFT_ROW = "SFT 10k (this chapter's pairs)"


def temperature_row(temperature: float) -> str:
    """``what_moves_table``'s row that samples the SFT pairs at ``temperature`` instead of 1."""
    return f"temperature {temperature:g}, not 1"


def mean_quality(world, pairs: list[dict]) -> float:
    """Mean of R*'s ``quality`` over both outputs of every pair."""
    qs = [world.reward_breakdown(r["instruction"], r["input"], r[o])["quality"] for r in pairs
          for o in ("output_1", "output_2")]
    return sum(qs) / len(qs)


def crowd_row(world, pairs: list[dict], humans: list[list[int]], ci: dict | None = None) -> dict:
    """The people's statistics on ``pairs`` (labels ``humans``) beside what the outputs hold: mean quality and
    how much better done (and how much more defective) the longer output is. ``ci``: the 95 % intervals
    (``crowd_intervals``), written beside P(longer) and P(list) when given."""
    st, g = stats(humans, humans, pairs, is_human=True), content_gap(world, pairs)
    row = {"pairs": len(pairs), "mean quality": mean_quality(world, pairs),
           "quality longer − shorter": g["quality_longer"] - g["quality_shorter"],
           "defect cost longer − shorter": g["defect_cost_longer"] - g["defect_cost_shorter"],
           "agreement": st["agreement"], "P(longer)": st["p_longer"], "P(list)": st["p_list"]}
    if ci is not None:
        row |= {"P(longer) 95 %": "{:.2f}–{:.2f}".format(*ci["p_longer"]),
                "P(list) 95 %": "{:.2f}–{:.2f}".format(*ci["p_list"])}
    return row


def _in(x: float, key: str) -> bool:
    lo, hi = CROWD_RANGES[key]
    return lo <= x <= hi


def _span(xs: pd.Series) -> str:
    lo, hi = f"{xs.min():.2f}", f"{xs.max():.2f}"
    return lo if lo == hi else f"{lo}–{hi}"


# --- calibration pairs against SFT pairs -------------------------------------------------------------------------

def pair_sets_table(world, sets: dict[str, tuple[list[dict], list[list[int]]]]):
    """One row per set of labelled pairs (name -> (pairs, labels)): agreement, P(longer), P(list), and the quality
    of the longer vs the shorter and of the list vs the prose output. Returns the numeric table, the same with
    each statistic's 95 % interval written beside it (to show), and the intervals by set."""
    rows, intervals = {}, {}
    for name, (ps, hs) in sets.items():
        st, gap = stats(hs, hs, ps, is_human=True), content_gap(world, ps)
        rows[name] = {"pairs": len(ps), "agreement": st["agreement"], "P(longer)": st["p_longer"], "P(list)": st["p_list"],
                      "quality longer / shorter": f"{gap['quality_longer']:.2f} / {gap['quality_shorter']:.2f}",
                      "quality list / prose": f"{gap['quality_list']:.2f} / {gap['quality_prose']:.2f}"}
        intervals[name] = crowd_intervals(ps, hs)  # 95 %: the pairs redrawn, each with its labels
    table = pd.DataFrame(rows).T
    shown = table.copy()
    for col, key in [("agreement", "agreement"), ("P(longer)", "p_longer"), ("P(list)", "p_list")]:
        shown[col] = [f"{v:.2f} ({intervals[n][key][0]:.2f}–{intervals[n][key][1]:.2f})" for n, v in table[col].items()]
    return table, shown, intervals


def calibration_and_sft_sets(world, crowd, calib_pairs: list[dict], pairs: list[dict], humans: list[list[int]],
                             draws: int):
    """``pair_sets_table`` of the calibration pairs (labelled here by ``crowd``, ``draws`` people each) and of the
    SFT ``pairs`` (already labelled: ``humans``), under :data:`CALIBRATION_SET` and :data:`SFT_SET`."""
    return pair_sets_table(world, {CALIBRATION_SET: (calib_pairs, crowd_labels(crowd, calib_pairs, n=draws)),
                                   SFT_SET: (pairs, humans)})


def pair_sets_sentence(cal: pd.Series, sft: pd.Series, gap: dict) -> str:
    """What the calibration pairs (``cal``) and the SFT pairs (``sft``, content ``gap``) say about length and lists."""
    length = (f"Its longer outputs are hardly better done, so people who value content prefer them only "
              f"{sft['P(longer)']:.2f} of the time; the paper's 0.62 was measured on outputs of 7B models, whose longer "
              "answers usually tell more." if gap["quality_longer"] <= gap["quality_shorter"] + 0.05 else
              f"Its longer outputs are better done, and people prefer them {sft['P(longer)']:.2f} of the time.")
    lists = ("No pair of its outputs sets a list against prose." if pd.isna(sft["P(list)"]) else
             f"Its lists are better done, and people prefer them {sft['P(list)']:.2f} of the time."
             if gap["quality_list"] > gap["quality_prose"] + 0.05 else
             f"Its lists are hardly better done; people prefer them {sft['P(list)']:.2f} of the time, for the tidiness R* "
             "values in a list.")
    return (f"On the demonstrator's pairs (the people's calibration set) the crowd prefers the longer answer with probability {cal['P(longer)']:.2f} and the "
            f"list with {cal['P(list)']:.2f}; on our SFT pairs, {sft['P(longer)']:.2f}"
            + ("" if pd.isna(sft["P(list)"]) else f" and {sft['P(list)']:.2f}") + ". "
            f"The SFT model's longer outputs have mean quality {gap['quality_longer']:.2f} against "
            f"{gap['quality_shorter']:.2f} for the shorter ones"
            + ("" if pd.isna(gap["quality_list"]) else
               f", and its lists {gap['quality_list']:.2f} against {gap['quality_prose']:.2f} for prose")
            + f". {length} {lists}")


# --- across training seeds ---------------------------------------------------------------------------------------

def seed_table(farm, crowd, pairs: list[dict], humans: list[list[int]], ci: dict, sft_seeds, base_seeds, draws: int):
    """The people's P(longer) and P(list) on the pairs of SFT 10k retrained with each SFT seed (on the book's base
    model) and on each other base model (with the book's SFT seed). The book's own model reuses ``pairs``,
    ``humans`` and ``ci``. Returns the table (indexed by base seed, SFT seed) and each model's intervals."""
    from farmlib.methods import policy

    base0, sft0 = farm.profile.pretrain.seed, farm.profile.sft.seed
    rows, cis = {}, {}
    runs = [(base0, s) for s in dict.fromkeys([sft0, *sft_seeds])] + [(b, sft0) for b in dict.fromkeys(base_seeds)
                                                                      if b != base0]
    for b, s in runs:
        if (b, s) == (base0, sft0):
            ps, hs, c = pairs, humans, ci
        else:
            other = farm.models.with_base_seed(b)
            ps = sft_pairs(other, split="val", temperature=1.0, model=policy(other, "sft10k", seed=s)[0])
            hs = crowd_labels(crowd, ps, n=draws)
            c = crowd_intervals(ps, hs)
        st = stats(hs, hs, ps, is_human=True)
        cis[b, s] = c
        rows[b, s] = {"pairs": len(ps), "agreement": st["agreement"], "P(longer)": st["p_longer"],
                      "P(longer) 95 %": "{:.2f}–{:.2f}".format(*c["p_longer"]), "P(list)": st["p_list"],
                      "P(list) 95 %": "{:.2f}–{:.2f}".format(*c["p_list"])}
    return pd.DataFrame(rows).T.rename_axis(["base seed", "SFT seed"]), cis


def seed_sentence(by_seed: pd.DataFrame, seed_ci: dict, base0: int, sft0: int) -> str:
    """How far P(longer) and P(list) move across SFT seeds and base models, against the real crowd's range and
    against the width of one model's interval."""
    pl, pli = by_seed["P(longer)"].astype(float), by_seed["P(list)"].astype(float)
    lo_l, hi_l = CROWD_RANGES["p_longer"]
    n_in = int(pl.map(lambda x: _in(x, "p_longer")).sum())
    n_in_list = int(pli.map(lambda x: _in(x, "p_list")).sum())
    width = sum(c["p_longer"][1] - c["p_longer"][0] for c in seed_ci.values()) / len(seed_ci)  # one model's interval
    sft_spread = pl.xs(base0, level="base seed")
    base_spread = pl.xs(sft0, level="SFT seed")

    def spread(p: pd.Series, what: str) -> str:
        if len(p) < 2:
            return f"one {what} only"
        d = p.max() - p.min()
        return (f"{len(p)} {what}s differ by up to {d:.3f} ({p.min():.3f}–{p.max():.3f}), "
                f"{'less' if d < width else 'more'} than the width of one model's 95 % interval ({width:.3f})")

    sd = lambda p: f"{p.std(ddof=1):.3f}" if len(p) > 1 else "–"  # noqa: E731 - one model has no spread
    return (
        f"Across these {len(by_seed)} SFT models the people prefer the longer output {pl.min():.2f} to {pl.max():.2f} of "
        f"the time (mean {pl.mean():.3f}, sd {sd(pl)})"
        + (" (no model's pairs set a list against prose)" if pli.isna().all() else
           f" and the list {pli.min():.2f} to {pli.max():.2f} (sd {sd(pli)})")
        + f"; {n_in} of the {len(by_seed)} put P(longer) inside the real crowd's range ({lo_l:.2f}–{hi_l:.2f})"
        + ("" if pli.isna().all() else
           ", and {} put P(list) inside its range ({:.2f}–{:.2f})".format(n_in_list, *CROWD_RANGES["p_list"]))
        + ". "
        + ("Every model falls below the range: the gap is not one model's unlucky draw. " if pl.max() < lo_l else
           "Every model falls above the range. " if pl.min() > hi_l else
           "Every model falls inside the range. " if n_in == len(by_seed) else
           f"Some models fall inside the range and some outside: one model's P(longer) is one draw, and their mean "
           f"({pl.mean():.2f}) is the number to set beside the paper's. ")
        + f"The {spread(sft_spread, 'SFT seed')}"
        + (". All share one base model (`base_seeds` adds others), so the spread over SFT seeds leaves out how far "
           "another pretraining run would land." if len(base_spread) < 2 else
           f"; the {spread(base_spread, 'base model')}. "
           + ("Retraining the base model moves the statistic more than reshuffling SFT does: a spread over SFT seeds "
              "alone, all on one base model, understates how far another pretraining run (or another machine, whose "
              "arithmetic trains another base model) would land."
              if base_spread.max() - base_spread.min() > sft_spread.max() - sft_spread.min() else
              "Retraining the base model moves the statistic no more than reshuffling SFT does.")))


# --- length follows content ------------------------------------------------------------------------------------

def accuracy_table(farm, crowd, accuracies, pairs: list[dict], humans: list[list[int]], ci: dict, draws: int):
    """Writers in the demonstrator's style at each accuracy, then SFT 10k (this chapter's ``pairs``): the
    people's P(longer) beside what the outputs hold, and each one's win-rate against the reference under people."""
    from farmlib.world import DEMONSTRATOR

    world, rows = farm.world, {}
    for acc in accuracies:
        writer = replace(DEMONSTRATOR, name=f"demonstrator-accuracy-{acc:g}", accuracy=acc)
        ps = writer_pairs(farm, writer, "val")
        hs = crowd_labels(crowd, ps, n=draws)
        rows[f"writer, accuracy {acc:g}"] = dict(crowd_row(world, ps, hs),
                                                 accuracy=acc,
                                                 **{WIN: farm.evaluate(farm.writer_outputs(writer, "eval"), "human")[0].win_rate})
    sft_outs = farm.samples(farm.sft_model(), "eval", generator="sft10k")
    rows[SFT_ROW] = dict(crowd_row(world, pairs, humans, ci), accuracy=float("nan"),
                         **{WIN: farm.evaluate(sft_outs, "human")[0].win_rate})
    cols = ["accuracy", "mean quality", "quality longer − shorter", "defect cost longer − shorter", "P(longer)", WIN]
    return pd.DataFrame(rows).T[cols].astype(float).rename_axis("outputs")


def accuracy_shown(by_accuracy: pd.DataFrame):
    """The accuracy table as shown: without the ``accuracy`` column (the row names say it), P(longer) to three
    decimals (the writers' differ in the third), win-rates to one, the rest to two."""
    shown = by_accuracy.drop(columns="accuracy")
    return shown.style.format({**dict.fromkeys(shown.columns, "{:.2f}"), "P(longer)": "{:.3f}", WIN: "{:.1f}"})


def accuracy_sentence(by_accuracy: pd.DataFrame, sft_ci: tuple[float, float]) -> str:
    """Whether the people's preference for length follows the writers' accuracy, and where SFT 10k sits."""
    lo_l, hi_l = CROWD_RANGES["p_longer"]
    w, s = by_accuracy.dropna(subset=["accuracy"]), by_accuracy[by_accuracy["accuracy"].isna()].iloc[0]
    inside = w[w["P(longer)"].map(lambda x: _in(x, "p_longer"))]
    lo, hi = w.iloc[0], w.iloc[-1]
    enters = (f"It is inside the real crowd's range from accuracy {inside['accuracy'].iloc[0]:g} (mean quality "
              f"{inside['mean quality'].iloc[0]:.2f}) on." if len(inside) else
              "It is inside the real crowd's range at no accuracy tried.")
    below = s["mean quality"] < w["mean quality"].min()
    d_q, d_c = w["quality longer − shorter"], w["defect cost longer − shorter"]
    return (
        f"People prefer the longer of two answers {lo['P(longer)']:.2f} of the time when the writer is right "
        f"{lo['accuracy']:g} of the time, and {hi['P(longer)']:.2f} when it is right {hi['accuracy']:g} of the time: the "
        f"same people, only the content changes. {enters} Our SFT model's outputs have mean quality "
        f"{s['mean quality']:.2f}{', below every writer tried' if below else ''}; the longer of two gains "
        f"{s['quality longer − shorter']:+.2f} in quality over the shorter (writers: {d_q.min():+.2f} to {d_q.max():+.2f}) "
        f"and costs {s['defect cost longer − shorter']:+.2f} more in defects (writers: {d_c.min():+.2f} to "
        f"{d_c.max():+.2f}). People prefer it {s['P(longer)']:.2f} of the time (95 % interval over pairs "
        f"{sft_ci[0]:.2f}–{sft_ci[1]:.2f}). " + (
            "So the shortfall on SFT pairs is in what the model's outputs say, not in the people's taste."
            if s["P(longer)"] < lo_l else
            "On SFT pairs, too, the people's preference for length is inside the real crowd's range."
            if s["P(longer)"] <= hi_l else "On SFT pairs the people prefer length more than the real crowd does."))


def at_paper_win_rate(by_accuracy: pd.DataFrame, paper_win: float) -> dict | None:
    """The writers' accuracy and P(longer) interpolated at the paper's SFT 10k win-rate; None when no writer wins
    that often (or all win more)."""
    by_win = by_accuracy.dropna(subset=["accuracy"]).sort_values(WIN)
    if not by_win[WIN].min() <= paper_win <= by_win[WIN].max():
        return None
    return {"paper_win_rate": paper_win, "accuracy": float(np.interp(paper_win, by_win[WIN], by_win["accuracy"])),
            "p_longer": float(np.interp(paper_win, by_win[WIN], by_win["P(longer)"]))}


def standing_sentence(by_accuracy: pd.DataFrame, paper_win: float, at_paper: dict | None, paper_p_longer: float) -> str:
    """Where a model as good as the paper's SFT 10k would sit among the writers, and where ours sits."""
    w, s = by_accuracy.dropna(subset=["accuracy"]), by_accuracy[by_accuracy["accuracy"].isna()].iloc[0]
    if at_paper is not None:
        where = (f"Our writers win as often against our reference at accuracy about {at_paper['accuracy']:.2f}, where "
                 f"people prefer the longer answer about {at_paper['p_longer']:.3f} of the time (interpolated between the "
                 f"writers on either side): {'inside' if _in(at_paper['p_longer'], 'p_longer') else 'outside'} the real "
                 "crowd's range.")
    else:
        where = (f"No writer tried wins that often against our reference (they win {w[WIN].min():.1f} to "
                 f"{w[WIN].max():.1f} %).")
    weaker = s[WIN] < w[WIN].min()
    return (f"The paper's SFT 10k wins {paper_win:g} % of its comparisons with Davinci003 under people. {where} Our SFT "
            f"10k wins {s[WIN]:.1f} % against our reference{', less than every writer tried' if weaker else ''}, and "
            f"people prefer its longer output {s['P(longer)']:.2f} of the time. "
            + ("Against its reference, our SFT model is much weaker than the paper's was against Davinci003, and the "
               f"paper's {paper_p_longer:.2f} was measured on that stronger model's outputs."
               if s[WIN] < paper_win - 10 else ""))


# --- what moves it ---------------------------------------------------------------------------------------------

def what_moves_table(farm, crowd, pairs, humans, ci, calib_pairs, draws: int, detail_tastes, other_temperature: float,
                     nucleus_top_p: float, sft_epochs_factor: float = 0) -> pd.DataFrame:
    """One row per change (the people's taste for detail, the decoding, the SFT model), each labelled by people
    on the same ``val`` instructions; the taste rows also relabel the calibration pairs. ``sft_epochs_factor``
    (0: no such row) adds SFT 10k trained that many times the profile's epochs."""
    from farmlib.annotators import Crowd
    from farmlib.methods import policy
    from farmlib.world import REWARD_WEIGHTS

    world = farm.world
    cols = ["pairs", "mean quality", "quality longer − shorter", "agreement", "P(longer)", "P(longer) 95 %", "P(list)"]

    def row(ps, people, what, hs=None, c=None):
        hs = hs if hs is not None else crowd_labels(people, ps, n=draws)
        c = c if c is not None else crowd_intervals(ps, hs)
        r = crowd_row(world, ps, hs, c)
        return {"what changes": what, **{k: r[k] for k in cols}}

    def calib_p_longer(people) -> float:
        hs = crowd_labels(people, calib_pairs, n=draws)
        return stats(hs, hs, calib_pairs, is_human=True)["p_longer"]

    moves = [dict(row(pairs, crowd, "nothing (the book's SFT pairs)", humans, ci),
                  **{"P(longer), calibration": calib_p_longer(crowd)})]
    for w in detail_tastes:
        people = Crowd(world, taste=dict(REWARD_WEIGHTS, detail=w))
        moves.append(dict(row(pairs, people, f"people: detail {w:g}, not {REWARD_WEIGHTS['detail']:g}"),
                          **{"P(longer), calibration": calib_p_longer(people)}))
    moves.append(row(sft_pairs(farm, "val", temperature=other_temperature), crowd, temperature_row(other_temperature)))
    moves.append(row(sft_pairs(farm, "val", 1.0, top_p=nucleus_top_p), crowd, f"nucleus sampling, top-p {nucleus_top_p:g}"))
    moves.append(row(sft_pairs(farm, "val", 1.0, model=policy(farm, "sft52k")[0]), crowd, "SFT 52k"))
    if sft_epochs_factor:
        longer_sft = replace(farm.profile.sft, epochs=farm.profile.sft.epochs * sft_epochs_factor)
        moves.append(row(sft_pairs(farm, "val", 1.0, model=farm.sft_model(train=longer_sft)), crowd,
                         f"SFT 10k, {longer_sft.epochs:g} epochs, not {farm.profile.sft.epochs:g}"))
    return pd.DataFrame(moves).set_index("what changes")


def what_moves_shown(what_moves: pd.DataFrame):
    """The what-moves table as shown: the columns its sentence reads, under headers that wrap (fits the page)."""
    cols = {"pairs": "pairs", "mean quality": "mean quality", "quality longer − shorter": "quality longer − shorter",
            "P(longer)": "P(longer)", "P(longer) 95 %": "P(longer) 95 %", "P(longer), calibration": "P(longer), demonstrator pairs"}
    return what_moves[list(cols)].rename(columns=cols).style.format(precision=2, na_rep="–")


def what_moves_sentence(what_moves: pd.DataFrame, writers_enter_quality: float | None) -> str:
    """Which change moves P(longer), whether any reaches the real crowd's range, and whether better outputs alone
    close the gap (``writers_enter_quality``: the mean quality from which writers reach the range, or None)."""
    base_row, rest = what_moves.iloc[0], what_moves.iloc[1:]
    taste_rows = what_moves[what_moves.index.str.startswith("people")]
    model_rows = rest[~rest.index.str.startswith("people")]
    lo_l, hi_l = CROWD_RANGES["p_longer"]
    rise = rest["P(longer)"] - base_row["P(longer)"]
    better = model_rows[(model_rows["mean quality"] > base_row["mean quality"] + 0.03) & (model_rows["P(longer)"] < lo_l)]
    return (
        f"People who value detail more prefer the longer demonstrator answer {_span(taste_rows['P(longer), calibration'])} "
        f"of the time (R*'s people: {base_row['P(longer), calibration']:.2f}), and the longer SFT output "
        f"{_span(taste_rows['P(longer)'])} (R*'s people: {base_row['P(longer)']:.2f}). The other SFT models and the other "
        f"decodings write outputs of mean quality {_span(model_rows['mean quality'])} (this chapter's: "
        f"{base_row['mean quality']:.2f}); people prefer their longer outputs {_span(model_rows['P(longer)'])} of the time. "
        f"The largest rise in P(longer) is {rise.max():+.2f} ({rise.idxmax()}); "
        + (f"at least one change reaches the real crowd's range ({lo_l:.2f}–{hi_l:.2f}). "
           if rest["P(longer)"].max() >= lo_l else
           f"no change reaches the real crowd's range ({lo_l:.2f}–{hi_l:.2f}). ")
        + (f"Better outputs alone do not close it ({'; '.join(better.index)}: mean quality "
           f"{_span(better['mean quality'])}, P(longer) {_span(better['P(longer)'])}). A longer answer's extra detail is "
           "worth as much as the answer is right (R*'s `detail` multiplies `quality`)"
           + (f", and the writers above reach the range only from mean quality {writers_enter_quality:.2f}."
              if writers_enter_quality is not None else ".") if len(better) else ""))


def sampling_sentence(q_greedy: float, q_sampled: float, temperature: float, t_row: pd.Series, sft_row: pd.Series) -> str:
    """How much better the SFT model answers greedily than the samples people label."""
    return (
        f"How much does the model know that its samples at temperature 1 do not show? Answering greedily (temperature 0), "
        f"the same SFT model's answers to the same `val` instructions have mean quality {q_greedy:.2f}, against "
        f"{q_sampled:.2f} for its samples at temperature 1, the temperature of this chapter's pairs. Greedy answers "
        "make no pairs (the two answers would be the same); between the two, at temperature "
        f"{temperature:g}, mean quality is {t_row['mean quality']:.2f} and people prefer the longer output "
        f"{t_row['P(longer)']:.2f} of the time. "
        + ("A million-parameter model's samples at temperature 1 are much worse than what it knows, and pairs of such "
           f"samples are what our people label: the longer of two gains {sft_row['quality longer − shorter']:+.2f} in "
           f"quality and costs {sft_row['defect cost longer − shorter']:+.2f} more in defects (the table above)."
           if q_greedy > q_sampled + 0.1 else "Sampling costs the model little here."))


def sampling_reading(q_greedy: float, q_sampled: float, temperature: float, what_moves: pd.DataFrame,
                     by_accuracy: pd.DataFrame) -> str:
    """:func:`sampling_sentence` with its rows found in the chapter's tables: the what-moves row sampled at
    ``temperature`` and the accuracy table's SFT row."""
    return sampling_sentence(q_greedy, q_sampled, temperature, what_moves.loc[temperature_row(temperature)],
                             by_accuracy.loc[SFT_ROW])


def greedy_and_sampled_quality(farm) -> tuple[float, float]:
    """Mean R* quality of the book's SFT model on the ``val`` instructions, answering greedily and sampling at
    temperature 1 (the samples this chapter's pairs are made of)."""
    sft = farm.sft_model()
    greedy = farm.samples(sft, split="val", temperature=0.0, generator="sft10k-greedy")
    sampled = farm.samples(sft, split="val", temperature=1.0, seed=1, generator="sft_a")
    return output_quality(farm.world, greedy), output_quality(farm.world, sampled)


def enters_range_quality(by_accuracy: pd.DataFrame) -> float | None:
    """The mean quality of the least accurate writer whose P(longer) is inside the real crowd's range (None: none is)."""
    w = by_accuracy.dropna(subset=["accuracy"])
    inside = w[w["P(longer)"].map(lambda x: _in(x, "p_longer"))]
    return float(inside["mean quality"].iloc[0]) if len(inside) else None


def output_quality(world, outputs: list[dict]) -> float:
    """Mean of R*'s ``quality`` over single outputs (records with ``output``)."""
    return sum(world.reward_breakdown(r["instruction"], r["input"], r["output"])["quality"] for r in outputs) / len(outputs)
