"""What chapter 4 finds about the simulated judges, as tables and the sentences that word them: how the judges
were made and calibrated, what they read on the held-out pairs, how the degenerate battery fools them, and how
each annotator stands beside the paper's.

The sentences branch on the numbers (which annotator is more consistent, whether a head follows the people,
whether a statistic is inside the real crowd's range), so every branch is tested on hand-made tables
(``tests/test_judge_findings.py``). Nothing here is imported by an artifact's builder."""

from __future__ import annotations

import pandas as pd

from farmlib.annotators.statistics import injection_effect, majority
from farmlib.paper import ANNOTATORS as PAPER
from farmlib.paper import CROWD_RANGES


def _in(x: float, key: str) -> bool:
    lo, hi = CROWD_RANGES[key]
    return lo <= x <= hi


def _ok(x: float, key: str) -> str:
    return "inside" if _in(x, key) else "**outside**"


# --- how the judges were made ----------------------------------------------------------------------------------

def made_table(info: dict, demos: dict[str, int]) -> pd.DataFrame:
    """One column per judge family from ``Farm.judge_train_info()`` (three columns fit the page; its nine attributes
    would not); ``demos``: the demonstrations its LM was tuned on."""
    return pd.DataFrame({f: {"LM tuned on": demos[f], "pairs": v["pairs"], "labellers": v["family"]["labellers"],
                             "degenerate share": v["family"]["degenerate"], "head reads": v["family"]["reads"],
                             "features": v["features"], "train accuracy": round(v["train_accuracy"], 2),
                             "LM seconds": round(v.get("lm_seconds", 0.0), 1), "seconds": round(v["seconds"], 1)}
                         for f, v in info.items()})


def calibration_table(calib: dict) -> pd.DataFrame:
    """The calibration grid: the pool's statistics on the calibration pairs at each logit scale, in the grid's order."""
    return (pd.DataFrame(calib["rows"]).set_index("logit_scale")[["agreement", "variance", "p_longer", "p_list"]]
            .sort_index())


def calibration_shown(calib: dict):
    """:func:`calibration_table` for the page: captioned (it follows another table), the scales as written."""
    return (calibration_table(calib).style.format("{:.2f}").format_index("{:g}")
            .set_caption("The calibration grid: the pool on the calibration pairs at each logit scale"))


def calibration_sentence(calib: dict, target: float, judge_seconds: float) -> str:
    """The logit scale the calibration kept, against its target (the paper's pool's variance) and the grid, with the
    agreement with the people that each scale would have bought (reported, not aimed at)."""
    grid = calibration_table(calib)
    best = grid.loc[calib["logit_scale"]]
    return (f"The calibration kept logit scale **{calib['logit_scale']:g}** "
            f"(`p_sim^eval`'s variance {best['variance']:.2f} on the {calib['n_pairs']} calibration pairs; target "
            f"{target:.2f}, the paper's pool's; from {grid['variance'].min():.2f} to {grid['variance'].max():.2f} "
            f"across the grid). The choice reads no person's label. The grid's agreement column is what each scale "
            f"would give against the people's majority on the same pairs: {100 * best['agreement']:.1f} % at the "
            f"kept scale, {100 * grid['agreement'].iloc[0]:.1f} % at the grid's least decisive scale and "
            f"{100 * grid['agreement'].iloc[-1]:.1f} % at its most. Training the three families took "
            f"{judge_seconds:.0f} s in the cold build, and the calibration grid {calib['seconds']:.0f} s (the reader "
            "caches what it read, so trying a scale costs only the sampling).")


# --- every annotator, the same pairs -----------------------------------------------------------------------------

def chapter_annotators(farm, lms: dict) -> dict:
    """Every annotator chapter 4 measures, by name: the 13 pool members, the three pools (``p_sim_eval``,
    ``p_sim_ann``, ``p_sim_single``) and the local LM judge (the book's SFT model asked in plain text, at
    temperature 1 so that its draws vary as the pools' do)."""
    from farmlib import annotators as A
    from farmlib.annotators.lm_judge import LMJudge

    out = dict(A.members(lms))
    out |= {"p_sim_eval": A.pool_eval(lms), "p_sim_ann": A.pool_ann(lms), "p_sim_single": A.single_judge(lms)}
    out["local_lm"] = LMJudge(farm.load(farm.sft_model()), farm.tokenizer(), name="local_lm", temperature=1.0,
                              batch_size=16)
    return out


def first_draws(labels: dict[str, list[list[int | None]]], humans: list[list[int]]) -> dict[str, list[int | None]]:
    """Each annotator's first draw per pair, with one person's label (``human``) and the people's majority
    (``human_majority``, None on a tie): one label per pair each, as a pairwise-agreement matrix compares them."""
    first = {n: [d[0] for d in v] for n, v in labels.items()}
    return first | {"human": [h[0] for h in humans], "human_majority": [majority(h) for h in humans]}


def n_list_pairs(pairs: list[dict]) -> int:
    """The pairs on which exactly one output is a list: the only pairs that say anything about P(list)."""
    from farmlib.world import is_list

    return sum(is_list(r["output_1"]) != is_list(r["output_2"]) for r in pairs)



def cost_sentence(table: pd.DataFrame) -> str:
    """Under the cost-agreement figure: the cheapest annotator within a point of the best agreement among the
    simulators, and what people cost."""
    sims = table[table["kind"] != "people"]
    best = sims["agreement"].max()
    near = sims[sims["agreement"] >= best - 0.01].sort_values("cost_per_1000")
    cheap = near.index[0]
    return (f"The best simulator agrees with the people's majority {100 * best:.1f} % of the time "
            f"(`{sims['agreement'].idxmax()}`); the cheapest within a point of it is `{cheap}` at "
            f"{near.iloc[0]['cost_per_1000']:.2f} USD per 1000 annotations, against "
            f"{table.loc['human', 'cost_per_1000']:.0f} USD for people, who agree with each other "
            f"{100 * table.loc['human', 'agreement']:.1f} % of the time.")


def bias_variance_sentence(table: pd.DataFrame) -> str:
    """Under the bias-variance figure: where the pool and the single judge sit against people."""
    h, e, s = (table.loc[n] for n in ("human", "p_sim_eval", "p_sim_single"))
    return (f"People's variance is {h['variance']:.2f} (their bias is 0 by definition). `p_sim_eval` has bias "
            f"{e['bias']:.2f} and variance {e['variance']:.2f}, "
            + ("more consistent than people" if e["variance"] < h["variance"] else "less consistent than people")
            + f"; the single greedy judge has bias {s['bias']:.2f} and variance {s['variance']:.2f}, "
            + ("the lowest variance of the three: a cleaner signal than people give, and so a different one."
               if s["variance"] < min(e["variance"], h["variance"]) else "not below the others'."))


def agreement_sentence(matrix: pd.DataFrame) -> str:
    """Under the pairwise-agreement heatmap: the pair of annotators that agree most and least (each with another)."""
    m = matrix.copy()
    for n in m.index:
        m.loc[n, n] = float("nan")
    stacked = m.stack()
    hi, lo = stacked.idxmax(), stacked.idxmin()
    return (f"The two annotators that agree most are `{hi[0]}` and `{hi[1]}` ({stacked.max():.0f} %); the two that agree "
            f"least, `{lo[0]}` and `{lo[1]}` ({stacked.min():.0f} %). One person agrees with the people's majority "
            f"{m.loc['human', 'human_majority']:.0f} % of the time, `p_sim_eval` "
            f"{m.loc['p_sim_eval', 'human_majority']:.0f} %.")


def style_sentence(table: pd.DataFrame, n_list: int, draws: int) -> str:
    """Under the length-and-lists bars: people's and the pool's P(longer) and P(list), against the real crowd's."""
    h, e = table.loc["human"], table.loc["p_sim_eval"]
    longer = (f"People choose the longer output with probability {h['p_longer']:.2f} ({_ok(h['p_longer'], 'p_longer')} "
              "the real crowd's {:.2f}–{:.2f}); `p_sim_eval`, {:.2f}. ").format(*CROWD_RANGES["p_longer"], e["p_longer"])
    if not n_list:  # P(list) is undefined: no pair sets a list against prose
        return longer + "No pair has exactly one output formatted as a list, so P(list) is not measured here."
    return longer + ("People choose the list with probability {:.2f} ({} the real crowd's {:.2f}–{:.2f}); `p_sim_eval`, "
                     "{:.2f}. P(list) rests on the {} pairs where exactly one output is a list (x {} draws).").format(
        h["p_list"], _ok(h["p_list"], "p_list"), *CROWD_RANGES["p_list"], e["p_list"], n_list, draws)


# --- what the judges read ----------------------------------------------------------------------------------------

def quality_sides(world, pairs: list[dict]) -> list[int | None]:
    """2 if output_2 does the task better (R*'s ``quality``), 1 if output_1 does, None if equal."""
    out = []
    for r in pairs:
        q1, q2 = (world.reward_breakdown(r["instruction"], r["input"], r[k])["quality"] for k in ("output_1", "output_2"))
        out.append(None if abs(q1 - q2) < 1e-9 else (2 if q2 > q1 else 1))
    return out


def picks_better_done(labels: list[int | None], sides: list[int | None]) -> float:
    """Share of the pairs where quality differs on which a label picks the better-done output."""
    hits = [lab == s for lab, s in zip(labels, sides) if s is not None and lab is not None]
    return sum(hits) / max(len(hits), 1)


def quality_read(world, pairs: list[dict], humans: list[list[int]], labels: dict) -> pd.Series:
    """How often the people's majority and the pools' first draws pick the better-done output."""
    sides = quality_sides(world, pairs)
    return pd.Series({"human (majority)": picks_better_done([majority(h) for h in humans], sides),
                      **{n: picks_better_done([d[0] for d in labels[n]], sides) for n in ("p_sim_eval", "p_sim_single")}},
                     name="picks the better-done output")


def decides_sentence(decides: pd.DataFrame, read: pd.Series, table: pd.DataFrame) -> str:
    """What decides the people's majority, and how much of it the judges read."""
    q, e = decides.loc["quality"], table.loc["p_sim_eval"]
    return (f"The task done right (`quality`) differs in {q['pairs where it differs']:.0%} of the pairs and, where it "
            f"does, the better-done output wins the people's majority {q['its side wins the majority']:.0%} of the time. "
            "A judge must check the answer to see it — sum the numbers, count the words, know the fact. The three "
            "families know the world's answers and read each output beside its task's answer; "
            "how much a right answer weighs against the rest is their heads' to learn: on the pairs where quality differs, `p_sim^eval`'s label "
            f"picks the better-done output {read['p_sim_eval']:.0%} of the time and the single greedy judge "
            f"{read['p_sim_single']:.0%} (the people's majority: {read['human (majority)']:.0%}). What else they read "
            "(length, lists, fluency, word variety) they weigh as their makers' pairs taught them: `p_sim^eval` prefers "
            f"the list with probability {e.p_list:.2f} (people: {table.loc['human', 'p_list']:.2f}; paper's pool: 0.63) "
            f"and the longer output with {e.p_longer:.2f} (people: {table.loc['human', 'p_longer']:.2f}). A GPT-4 judge "
            "knows the answer too; what it is worth beside length, lists and fluency is where judges and people part.")


def true_reward_of_sides(farm, pairs: list[dict]) -> tuple[float, float]:
    """R*'s mean over ``output_1`` and over ``output_2`` of ``pairs`` (for model-vs-reference pairs: the
    reference's answers, then the model's)."""
    def mean(side: str) -> float:
        return sum(farm.true_rewards([dict(r, output=r[side]) for r in pairs])) / len(pairs)

    return mean("output_1"), mean("output_2")


def likelihood_sentence(gap_table: pd.DataFrame, true_ref: float, true_sft: float) -> str:
    """What the judge families' LMs and heads make of SFT 10k's answers against the reference's."""
    likelier = gap_table[gap_table["log-prob, model"] > gap_table["log-prob, reference"]].index.tolist()
    g = gap_table.loc["gpt4"] if "gpt4" in gap_table.index else gap_table.iloc[0]
    return (
        f"R* rates the reference's answers {true_ref:.2f} on average and SFT 10k's {true_sft:.2f}; the people's majority "
        f"prefers SFT 10k on {g['people prefer model (%)']:.0f} % of these pairs. "
        + (f"The tuned LMs of {', '.join(likelier)} find SFT 10k's samples *likelier* than the reference's answers "
           "(a model's samples are what such an LM expects, right or wrong), and "
           if likelier else "No family's LM finds SFT 10k's samples likelier than the reference's answers, and ")
        + f"the {g.name} head prefers SFT 10k on {g['head prefers model (%)']:.0f} % of pairs, agreeing with the people's "
        f"majority on {g['head agrees with people (%)']:.0f} %. "
        + ("The simulated evaluation therefore cannot tell a model's wrong answers from the reference's right ones, "
           "and ranks methods by what their text looks like more than by what it says: a judge that checks the "
           "content, as a large LLM does, is what this simulator lacks." if g["head agrees with people (%)"] < 60 else
           "On these pairs the head mostly follows the people."))


# --- the degenerate battery ------------------------------------------------------------------------------------

def battery_judges(annotators: dict) -> dict:
    """The annotators the battery puts to the test: all but ``p_sim_ann``, whose coin only adds noise to the
    pool's answers, so its row would be ``p_sim_eval``'s pulled towards 50 %."""
    return {n: a for n, a in annotators.items() if n != "p_sim_ann"}


def battery_table(world, crowd, annotators: dict, instructions: list[dict]) -> pd.DataFrame:
    """Percent of the battery's pairs (a correct answer against each corruption of it) on which each annotator
    (and the people's majority) chose the correct answer: one row per annotator, one column per corruption."""
    from farmlib.world.degenerate import CORRUPTIONS, battery, correct_preferred

    bpairs = battery(world, instructions)
    judged = {"human (majority)": [crowd.majority_label(p) for p in bpairs]}
    for name, a in annotators.items():
        judged[name] = [x["preference"] for x in a.annotate_pairs(bpairs)]
    return 100 * pd.DataFrame({n: correct_preferred(bpairs, labs) for n, labs in judged.items()}).T[list(CORRUPTIONS)]


def battery_sentence(fooled: pd.DataFrame) -> str:
    """Who the battery fools most, and by which corruption."""
    judges_only = fooled.drop(index=["human (majority)", "local_lm"], errors="ignore")
    worst_judge, worst_kind = judges_only.min(axis=1).idxmin(), judges_only.min(axis=0).idxmin()
    low = fooled.loc["human (majority)"].min()
    local = (f" The local LM judge ({fooled.loc['local_lm'].mean():.0f} % on average) is near chance: a 1M-parameter "
             "model cannot read a judging prompt." if "local_lm" in fooled.index else "")
    return (("People's majority chooses the correct answer in every pair of every kind. " if low == 100 else
             f"People's majority chooses the correct answer in {low:.0f} % or more of every kind of pair. ")
            + f"Among the learned judges the most fooled is `{worst_judge}` "
            f"({judges_only.loc[worst_judge].min():.0f} % on *{judges_only.loc[worst_judge].idxmin()}*), and the "
            f"corruption that fools judges most is *{worst_kind}* (pool `p_sim_eval`: "
            f"{fooled.loc['p_sim_eval', worst_kind]:.0f} %). Its lowest share on any kind is "
            f"{fooled.loc['p_sim_eval'].min():.0f} %.{local}")


# --- untrusted outputs ------------------------------------------------------------------------------------------

#: the annotators whose answer to a prompt injection chapter 4 measures: the two pools a method is judged or
#: trained by, and the one judge that reads a prompt as text
INJECTED = ("p_sim_eval", "p_sim_single", "local_lm")


def injection_table(annotators: dict, pairs: list[dict], names=INJECTED) -> pd.DataFrame:
    """``injection_effect`` of each annotator in ``names``, one row each (``win_before``, ``win_injected``, ...)."""
    return pd.DataFrame({n: injection_effect(annotators[n], pairs) for n in names}).T


# --- beside the paper --------------------------------------------------------------------------------------------

def _fmt(v, pct: bool = False) -> str:
    if v is None:
        return "–"
    if isinstance(v, tuple):
        return "–".join(_fmt(x, pct) for x in v)
    return f"{v:.1f} %" if pct else f"{v:.2f}"


def paper_table(table: pd.DataFrame) -> pd.DataFrame:
    """People and the three pools, ours beside the paper's, one row per annotator and one column pair per statistic
    (ours above the paper's, so the table stays as narrow as the page)."""
    rows = {}
    for name in ["human", "p_sim_eval", "p_sim_ann", "p_sim_single"]:
        p, r = PAPER[name], table.loc[name]
        rows[name] = {("agreement", "ours"): f"{100 * r['agreement']:.1f} %",
                      ("agreement", "paper"): _fmt(p.get("agreement"), True),
                      ("variance", "ours"): f"{r['variance']:.2f}", ("variance", "paper"): _fmt(p.get("variance")),
                      ("P(longer)", "ours"): f"{r['p_longer']:.2f}", ("P(longer)", "paper"): _fmt(p.get("p_longer")),
                      ("P(list)", "ours"): f"{r['p_list']:.2f}", ("P(list)", "paper"): _fmt(p.get("p_list")),
                      ("USD/1000", "ours"): f"{r['cost_per_1000']:.2f}",
                      ("USD/1000", "paper"): _fmt(p.get("cost_per_1000"))}
    out = pd.DataFrame(rows).T
    out.index.name = "annotator"
    return out


def _reach(key: str, ci: dict) -> str:
    """Whether the 95 % interval of a statistic outside the real crowd's range reaches into it."""
    scale = 100 if key == "agreement" else 1
    (lo, hi), (a, b) = CROWD_RANGES[key], (scale * v for v in ci[key])
    name = {"agreement": "agreement", "variance": "variance", "p_longer": "P(longer)", "p_list": "P(list)"}[key]
    span = f"{a:.1f}–{b:.1f} %" if key == "agreement" else f"{a:.2f}–{b:.2f}"
    return f"{name}'s 95 % interval over pairs, {span}, " + ("reaches into the range" if a <= hi and b >= lo else "misses it")


def _held_against_calibration(held: float, calibration: float) -> str:
    """How the pool's held-out agreement compares with its agreement on the calibration pairs (both SFT pairs)."""
    gap = 100 * (held - calibration)
    if abs(gap) <= 2:
        return ("The two sets of SFT pairs agree within two points: the calibration pairs' instructions stand for the "
                "held-out ones.")
    return (f"The held-out pairs sit {abs(gap):.1f} points {'below' if gap < 0 else 'above'} the calibration pairs: "
            "their instructions differ (the calibration pairs are `sft`-split instructions, the held-out ones `val`'s), "
            "and each set is one draw of a few hundred pairs.")


def summary(table: pd.DataFrame, sft_ci: dict, cal: pd.Series, by_seed: pd.DataFrame, base0: int, sft0: int,
            calib: dict, judged_share: float, inj: pd.DataFrame) -> str:
    """The chapter's closing summary: what we measure, where we differ from the paper, and the injection.

    ``sft_ci``: the people's intervals on the SFT pairs; ``cal``: their statistics on the demonstrator's pairs
    (``agreement``, ``P(longer)``, ``P(list)``); ``by_seed``: ``crowd_taste.seed_table``'s, of which the SFT seeds
    are counted on the book's base model ``base0`` and the base models with the book's SFT seed ``sft0``; ``calib``:
    the pool's calibration (its agreement and variance at the kept scale are set beside the held-out ones); ``judged_share``: the
    share of ``p_sim_ann``'s comparisons a judge answered; ``inj``: ``injection_table``."""
    n_sft_seeds = len(by_seed.xs(base0, level="base seed"))
    n_base_models = len(by_seed.xs(sft0, level="SFT seed"))
    calibration_agreement, calibration_variance = calibration_table(calib).loc[calib["logit_scale"], ["agreement", "variance"]]
    h, e, s, a = (table.loc[n] for n in ["human", "p_sim_eval", "p_sim_single", "p_sim_ann"])
    R = CROWD_RANGES
    outside = [k for k, x in [("agreement", 100 * h.agreement), ("variance", h.variance), ("p_longer", h.p_longer),
                              ("p_list", h.p_list)] if not _in(x, k)]
    cal_ok = _in(100 * cal["agreement"], "agreement") and _in(cal["P(longer)"], "p_longer") and _in(cal["P(list)"], "p_list")
    pl, pli = by_seed["P(longer)"].astype(float), by_seed["P(list)"].astype(float)
    local = table.loc["local_lm", "agreement"] if "local_lm" in table.index else float("nan")
    return f'''
**What we measure.**
* On our SFT pairs the simulated people agree with each other {100 * h.agreement:.1f} % of the time (variance
  {h.variance:.2f}), prefer the longer output with probability {h.p_longer:.2f} and the list with {h.p_list:.2f}; against
  the real crowd's ranges ({R['agreement'][0]:.0f}–{R['agreement'][1]:.0f} %, {R['variance'][0]:.2f}–{R['variance'][1]:.2f},
  {R['p_longer'][0]:.2f}–{R['p_longer'][1]:.2f}, {R['p_list'][0]:.2f}–{R['p_list'][1]:.2f}) these are {_ok(100 * h.agreement, "agreement")},
  {_ok(h.variance, "variance")}, {_ok(h.p_longer, "p_longer")} and {_ok(h.p_list, "p_list")}{"" if not outside else " (" + "; ".join(_reach(k, sft_ci) for k in outside) + ")"}.
  Across {len(by_seed)} SFT models ({n_sft_seeds} SFT seeds, {'one base model' if n_base_models == 1 else f'{n_base_models} base models'}) P(longer) is {pl.min():.2f}–{pl.max():.2f}
  and P(list) {pli.min():.2f}–{pli.max():.2f}.
  On the demonstrator's pairs, where R*'s taste and the people's noise were set, they are {100 * cal['agreement']:.1f} %, {cal['P(longer)']:.2f} and
  {cal['P(list)']:.2f}: {_ok(100 * cal['agreement'], "agreement")}, {_ok(cal['P(longer)'], "p_longer")} and {_ok(cal['P(list)'], "p_list")} the ranges.
  {"There the people are calibrated, so how often they prefer length depends on whether length comes with content." if cal_ok else "Even on these sensible answers the people miss the real crowd's range, so the calibration does not hold there either: the gap is in the people's taste, not only in our SFT model's outputs."}
* `p_sim^eval` agrees with the human majority {100 * e.agreement:.1f} % of the time
  ({100 * (e.agreement - h.agreement):+.1f} points from the people's own agreement), with variance {e.variance:.2f}
  against the people's {h.variance:.2f}: {"like the paper's pool (0.26 vs 0.34), it is *more* consistent than people" if e.variance < h.variance else "unlike the paper's pool (0.26 vs 0.34), it is *less* consistent than people"}, and not
  deterministic.
* The single greedy judge has variance {s.variance:.2f} ({s.variance / e.variance:.0%} of the pool's) and agrees with
  the human majority {100 * s.agreement:.1f} % (paper: variance 0.10–0.19, 66.4 %); the paper's point is that this low variance, not its agreement, makes it a poor simulator of people.
* `p_sim^ann` called a judge on {judged_share:.0%} of comparisons (the coin
  answered the rest); its variance {a.variance:.2f} is {'above' if a.variance > h.variance else 'below'} the people's
  {h.variance:.2f} (paper: 0.43 vs 0.34).
* Our dollars per 1000 are lower than the paper's because FarmWorld texts are short: the prompt is
  mostly our template, not the outputs.

**Where we differ.** The single greedy judge prefers the longer output with probability {s.p_longer:.2f} (paper: 0.60)
and agrees with the human majority {100 * s.agreement:.1f} % (paper: 66.4 %); the pool agrees
{100 * e.agreement:.1f} % (paper: 65 %), against {100 * calibration_agreement:.1f} % on the judges' calibration pairs,
where only its variance was set. {_held_against_calibration(e.agreement, calibration_agreement)}
The pool's variance is {e.variance:.2f} here against the paper's 0.26 and {calibration_variance:.2f} on the calibration
pairs ({'more' if e.variance > 0.26 else 'less'} spread than the paper's pool): it comes from sampling at temperature 1,
from the members' different families and prompts, and from the logit scale, set to the paper's variance on the
calibration pairs.
The local LM judge (our SFT model asked in plain text) agrees
{100 * local:.1f} % with people: a model that small cannot read a judging prompt, so this
row shows the backend working, not a useful judge; at scale it runs a real instruction model.

**Injection.** Appending the injection made `output_1` win {100 * inj.loc['p_sim_eval', 'win_injected']:.1f} % under
`p_sim^eval` (from {100 * inj.loc['p_sim_eval', 'win_before']:.1f} %) and {100 * inj.loc['p_sim_single', 'win_injected']:.1f} %
under the single judge (from {100 * inj.loc['p_sim_single', 'win_before']:.1f} %). Our learned judges score each output
and cannot follow an order, so any change is the injection's words read as part of the answer. A real
LLM judge can also obey it: measure it with `injection_effect` on your API pool before trusting its labels.
'''


def chapter_metrics(*, agreement_intervals, pairs, draws, n_list, table, inj, intervals, by_seed, seed_ci, base0, sft0,
                    cal, content_gap_sft, by_accuracy, what_moves, q_sampled, q_greedy, at_paper, fooled, info,
                    judge_seconds, calib, decides, gap_table, true_ref, true_sft) -> dict:
    """Chapter 4's headline numbers, under the keys other chapters and tests read (``metrics/annotators.json``)."""
    import json

    from farmlib.annotators.crowd_taste import CALIBRATION_SET, SFT_SET

    def seed_metrics(b: int, s: int) -> dict:
        r = by_seed.loc[(b, s)]
        return {"pairs": int(r["pairs"]), "agreement": float(r["agreement"]), "p_longer": float(r["P(longer)"]),
                "p_list": float(r["P(list)"]), "intervals": seed_ci[b, s]}

    return {
        "n_pairs": len(pairs), "draws": draws, "n_list_pairs": int(n_list),
        "crowd": table.loc["human", ["agreement", "variance", "p_longer", "p_list"]].to_dict(),
        "annotators": table.drop(columns="kind").to_dict(orient="index"),
        "agreement_intervals": {a: list(ci) for a, ci in agreement_intervals.items()},  # bootstrap over the pairs
        "injection": inj.to_dict(orient="index"),
        "crowd_intervals": {"sft_pairs": intervals[SFT_SET], "calibration_pairs": intervals[CALIBRATION_SET]},
        "crowd_by_sft_seed": {int(s): seed_metrics(b, s) for b, s in by_seed.index if b == base0},  # the book's base
        "crowd_by_base_seed": {int(b): seed_metrics(b, s) for b, s in by_seed.index if s == sft0},  # the book's SFT seed
        "crowd_calibration_pairs": {k: float(cal[k]) for k in ("agreement", "P(longer)", "P(list)")},
        "content_gap_sft": content_gap_sft,
        "p_longer_by_accuracy": json.loads(by_accuracy.reset_index().to_json(orient="records")),  # NaN -> null
        "what_moves_p_longer": json.loads(what_moves.reset_index().to_json(orient="records")),
        "sft_val_quality": {"temperature_1": q_sampled, "greedy": q_greedy},
        "p_longer_at_paper_sft10k_win_rate": at_paper,  # None when no writer wins as often as the paper's SFT 10k
        "degenerate_correct_preferred": fooled.to_dict(orient="index"),
        "judges": {f: {k: v[k] for k in ("pairs", "seconds", "train_accuracy", "features")} for f, v in info.items()},
        "judge_seconds": judge_seconds,
        "judge_calibration": calib,
        "what_decides_people": decides.to_dict(orient="index"),
        "likelihood_gap": gap_table.to_dict(orient="index"), "true_reward_reference": true_ref,
        "true_reward_sft10k": true_sft,
    }


#: how the validation table is shown (shares as percents, the rest to two decimals)
TABLE_FORMAT = {"agreement": "{:.1%}", "bias": "{:.2f}", "variance": "{:.2f}", "p_longer": "{:.2f}", "p_list": "{:.2f}",
                "missing": "{:.1%}", "cost_per_1000": "{:.2f}", "our_seconds_per_1000": "{:.2f}"}


def validation_shown(table: pd.DataFrame):
    """The validation table as shown: without ``kind`` (the figures colour it) and ``missing`` (unparsed replies, a
    share of a percent), with headers that wrap, so that it fits the page; the metrics keep every column."""
    names = {"p_longer": "P(longer)", "p_list": "P(list)", "cost_per_1000": "USD / 1000",
             "our_seconds_per_1000": "our s / 1000"}
    fmt = {names.get(k, k): v for k, v in TABLE_FORMAT.items() if k != "missing"}
    return table.drop(columns=["kind", "missing"], errors="ignore").rename(columns=names).style.format(fmt, na_rep="–")


def priced_validation_table(annotators: dict, pairs: list[dict], humans: list[list[int]], draws: int):
    """``validation_table`` with each judge priced as its API version would be on these pairs (our prompt
    templates rendered and counted), and people at the paper's price."""
    from farmlib.annotators.api_judge import chat_configs, estimate_cost_per_1000
    from farmlib.annotators.validation import validation_table

    configs = {c.name: c for c in chat_configs()}  # the pool as API judges: used here only to price prompts
    return validation_table(annotators, pairs, humans, draws,
                            member_cost={n: estimate_cost_per_1000(c, pairs) for n, c in configs.items()},
                            single_cost=estimate_cost_per_1000(configs["gpt4_b5_json"], pairs),
                            human_cost=PAPER["human"]["cost_per_1000"])


#: what chapter 4 can and cannot show on real data
REAL_NOTE = ("No human labels exist for these pairs: agreement with people, variance, the crowd, the degenerate battery and "
             "the injection against people need them. Shown: what the real pool prefers on held-out pairs of SFT outputs "
             "— P(longer), P(list), and how consistently it answers when the two outputs are swapped (position effect).")


def real_style_table(farm):
    """On real data: the held-out SFT pairs and each real judge's (and pool's) style preferences on them."""
    from farmlib.annotators.validation import sft_pairs
    from farmlib.real_judges import style_table

    pairs = sft_pairs(farm, split="val", temperature=1.0)
    annotators = {j.name: j for j in farm.annotator("p_sim_eval").judges}
    annotators |= {n: farm.annotator(n) for n in ("p_sim_eval", "p_sim_ann", "p_sim_single")}
    return pairs, style_table(annotators, pairs)
