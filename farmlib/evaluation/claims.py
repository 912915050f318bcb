"""The paper's claims, checked against this build: one row per claim, read from the chapters' metrics files.

Each row gives what the paper found, the target this book holds itself to (:data:`TARGETS`: ours, from the issue
that asks for them, not the paper's), what this build measured, whether the target is met, and the chapter that
shows why. Where the number has an interval of about 95 % (a bootstrap over the pairs or instructions it was
measured on, or twice a method's noise either side), a row whose interval holds a bound of its target is *within
noise*: another build as good as this one — another training seed, or the same code on a CPU whose arithmetic
rounds otherwise — could land on the other side (:mod:`farmlib.evaluation.intervals`). Where the true reward R*
itself was tried by the same method (chapter 5's ceilings, chapter 8's DPO on R*'s labels), a method's row gives
what R* reached too: a target that R* does not reach by that method, at the profile's budget, is out of reach of
every reward model there.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from farmlib.artifacts import read_json
from farmlib.evaluation.intervals import straddles
from farmlib.evaluation.win_rate import plus_minus
from farmlib.paper import ANNOTATORS, END_TO_END, TABLE2

#: The metrics files the claims are read from, and the chapter that writes each.
SOURCES = {"annotators": "04_annotators", "reward_model": "05_reward_model", "dpo": "08_dpo", "ppo": "11_ppo",
           "best_of_n": "09_best_of_n", "leaderboard": "14_leaderboard", "overoptimisation": "16_overoptimisation",
           "label_noise": "17_label_noise", "end_to_end": "18_end_to_end"}

#: The book's targets (ours; percentages and points under the people unless said otherwise).
TARGETS = {
    "judges_agreement": (62.0, 68.0),  # p_sim_eval against the people's majority, %
    "single_agreement": 62.0,  # the single judge at least this, with less variance than the pool
    "noisy_variance": (0.38, 0.48),  # p_sim_ann's variance
    "battery_people": 95.0,  # the people prefer the correct answer on every kind of degenerate one, %
    "battery_judges": 90.0,  # the judges, on average over the kinds, %
    "spearman": 0.8, "methods": 9, "spread": 10.0,  # rankings: rho over at least 9 rows spread over > 10 points
    "levels": 10.0,  # every row's p_sim_eval win-rate within this many points of the people's
    "end_to_end": 0.7,  # Spearman, methods trained on simulated against on people's labels
    "ppo": 8.0, "best_of_n": 6.0, "dpo": 4.0, "expert_iteration": 0.0,  # points over SFT 10k, beyond twice the noise
    "reward_model": 63.0,  # held-out accuracy against the people's majority at the largest number of pairs, %
}

NOT_METHODS = ("reference", "expert")  # rows of the leaderboard that are writers, not methods or baselines
BASELINES = ("sft10k", "sft52k", "base")


def load(metrics: str | Path) -> dict[str, dict]:
    """The metrics files of :data:`SOURCES` in the folder ``metrics``; one error naming every missing file."""
    metrics = Path(metrics)
    missing = [f"{metrics / (name + '.json')} (chapter {chapter})" for name, chapter in SOURCES.items()
               if not (metrics / f"{name}.json").is_file()]
    if missing:
        raise FileNotFoundError("the claims are read from the chapters' metrics, and these are missing: "
                                + "; ".join(missing) + ". Build them first: farm book (or farm run <chapter>).")
    return {name: read_json(metrics / f"{name}.json") for name in SOURCES}


def _row(area: str, claim: str, paper: str, target: str, ours: str, met: bool | None, chapter: str,
         true_reward: str = "", key: str = "", interval: tuple[float, float] | None = None,
         bounds: tuple[float | None, float | None] = (None, None)) -> dict:
    """One claim. ``interval`` (the measured number's, in the target's units) against the target's ``bounds``
    (lower, upper) decides ``settled``: False where the interval holds a bound, None where there is no interval
    (or the verdict does not hinge on it)."""
    settled = None if interval is None or met is None else not straddles(*interval, bounds)
    return {"area": area, "claim": claim, "paper": paper, "target": target, "this build": ours, "met": met,
            "R* by the same method": true_reward, "chapter": chapter, "key": key,
            "interval": list(interval) if interval is not None else None, "settled": settled}


def _span(interval: tuple[float, float] | None, fmt: str = "{:.2f}") -> str:
    """`` (low–high)`` for a row's text, or nothing."""
    return "" if interval is None else f" ({fmt.format(interval[0])}–{fmt.format(interval[1])})"


def _beyond(diff: float, noise: float, target: float) -> bool:
    """At least ``target`` points and more than twice ``noise`` above zero."""
    return diff >= target and diff > 2 * noise


# -- the simulator -------------------------------------------------------------------------------------------------
def annotator_rows(m: dict[str, dict]) -> list[dict]:
    ann = m["annotators"]["annotators"]
    ev, single, noisy = ann["p_sim_eval"], ann["p_sim_single"], ann["p_sim_ann"]
    lo, hi = TARGETS["judges_agreement"]
    vlo, vhi = TARGETS["noisy_variance"]
    people = m["annotators"]["degenerate_correct_preferred"]["human (majority)"]
    judges = m["annotators"]["degenerate_correct_preferred"]["p_sim_eval"]
    judges_mean = sum(judges.values()) / len(judges)
    paper_single = ANNOTATORS["p_sim_single"]
    ci = {k: tuple(100 * x for x in v) for k, v in m["annotators"].get("agreement_intervals", {}).items()}
    quieter = single["variance"] < ev["variance"]  # the single judge's row hinges on its agreement only if so
    return [
        _row("simulator", "the judges agree with the people's majority", f"{ANNOTATORS['p_sim_eval']['agreement']:.0f} %",
             f"{lo:.0f}–{hi:.0f} %", f"{100 * ev['agreement']:.1f} %{_span(ci.get('p_sim_eval'), '{:.1f}')}",
             lo <= 100 * ev["agreement"] <= hi, "04", key="judges_agreement", interval=ci.get("p_sim_eval"),
             bounds=(lo, hi)),
        _row("simulator", "a single judge agrees as often, with less variance than the pool",
             f"{paper_single['agreement']:.0f} %, variance {paper_single['variance'][0]:.2f}–{paper_single['variance'][1]:.2f}",
             f"≥ {TARGETS['single_agreement']:.0f} %, variance < the pool's",
             f"{100 * single['agreement']:.1f} %{_span(ci.get('p_sim_single'), '{:.1f}')}, variance "
             f"{single['variance']:.2f} (pool {ev['variance']:.2f})",
             100 * single["agreement"] >= TARGETS["single_agreement"] and quieter, "04",
             interval=ci.get("p_sim_single") if quieter else None, bounds=(TARGETS["single_agreement"], None)),
        _row("simulator", "the noisy pool varies as people do", f"variance {ANNOTATORS['p_sim_ann']['variance']:.2f}",
             f"{vlo:.2f}–{vhi:.2f}", f"{noisy['variance']:.2f}", vlo <= noisy["variance"] <= vhi, "04"),
        _row("simulator", "people and judges prefer a correct answer to a degenerate one", "–",
             f"people ≥ {TARGETS['battery_people']:.0f} % on every kind, judges ≥ {TARGETS['battery_judges']:.0f} %",
             f"people {min(people.values()):.0f} % on their lowest kind, judges {judges_mean:.0f} % on average",
             min(people.values()) >= TARGETS["battery_people"] and judges_mean >= TARGETS["battery_judges"], "04"),
    ]


def _methods(m: dict[str, dict]) -> list[dict]:
    return [r for r in m["leaderboard"]["rows"] if r["method"] not in NOT_METHODS]


def level_gap(row: dict) -> float:
    """A leaderboard row's judges' win-rate minus its people's, in points."""
    return row["win_rate_p_sim_eval"] - row["win_rate_human"]


def levels_interval(rows: list[dict]) -> tuple[float, float] | None:
    """About 95 % for the farthest row's distance between the judges' win-rate and the people's, ``max_i |g_i|``:
    from each row's own interval, ``|g_i|`` ± twice its paired standard error (``se_gap_p_sim_eval``, chapter 14),
    the largest low end to the largest high end. None where a row has no paired error (an older build's metrics)."""
    if not rows or any(r.get("se_gap_p_sim_eval") is None for r in rows):
        return None
    gaps = [(abs(level_gap(r)), r["se_gap_p_sim_eval"]) for r in rows]
    return max(max(g - 2 * se, 0.0) for g, se in gaps), max(g + 2 * se for g, se in gaps)


def ranking_rows(m: dict[str, dict]) -> list[dict]:
    rows = _methods(m)
    rho = m["leaderboard"]["spearman_sim_vs_human"]
    people = [r["win_rate_human"] for r in rows]
    spread = max(people) - min(people)
    off = [r["method"] for r in rows if abs(level_gap(r)) > TARGETS["levels"]]
    far = max(abs(level_gap(r)) for r in rows)
    far_ci = levels_interval(rows)
    e2e_all = m["end_to_end"]["correlations"]["spearman"]
    e2e = e2e_all["value"]
    e2e_ci = (e2e_all["low"], e2e_all["high"]) if "low" in e2e_all else None
    board = m["leaderboard"].get("spearman_interval")
    wide = len(rows) >= TARGETS["methods"] and spread > TARGETS["spread"]  # else the row misses whatever rho is
    rho_ci = (board["low"], board["high"]) if board and wide else None
    sft = TABLE2["SFT 10k"]
    return [
        _row("rankings", "the judges rank the methods as the people do", "Spearman 0.98",
             f"≥ {TARGETS['spearman']} over ≥ {TARGETS['methods']} rows spread > {TARGETS['spread']:.0f} points",
             f"{rho:.2f}{_span(rho_ci)} over {len(rows)} rows spread {spread:.1f} points",
             rho >= TARGETS["spearman"] and wide, "14", key="spearman", interval=rho_ci,
             bounds=(TARGETS["spearman"], None)),
        _row("rankings", "the judges' win-rates are the people's", f"SFT 10k {sft[0]} against {sft[1]} %",
             f"every row within {TARGETS['levels']:.0f} points",
             f"{len(rows) - len(off)} of {len(rows)} rows" + (f" (not: {', '.join(off)})" if off else "")
             + f", the farthest {far:.1f} points off{_span(far_ci, '{:.1f}')}", not off, "14",
             key="levels", interval=far_ci, bounds=(None, TARGETS["levels"])),
        _row("rankings", "trained on the judges' labels, methods rank as trained on people's",
             f"Spearman {END_TO_END['spearman']}", f"≥ {TARGETS['end_to_end']}", f"{e2e:.2f}{_span(e2e_ci)}",
             e2e >= TARGETS["end_to_end"], "18", interval=e2e_ci, bounds=(TARGETS["end_to_end"], None)),
    ]


# -- the methods ----------------------------------------------------------------------------------------------------
def _versus(m: dict[str, dict], method: str) -> tuple[float, float, str] | None:
    """(difference from SFT 10k, its noise, what the noise is): over training seeds where chapter 14 retrained the
    method, else one run paired over the instructions; None where the leaderboard has neither."""
    for r in m["leaderboard"].get("versus_sft10k", []):
        if r["method"] == method:
            return r["difference"], r["noise"], "seeds"
    for r in m["leaderboard"].get("versus_sft10k_board", []):
        if r["method"] == method:
            return r["difference"], r["se"], "paired"
    return None


def _sft10k_people(m: dict[str, dict]) -> float:
    return next(r["win_rate_human"] for r in m["leaderboard"]["rows"] if r["method"] == "sft10k")


def method_rows(m: dict[str, dict]) -> list[dict]:
    sft = _sft10k_people(m)
    ceil = m["reward_model"].get("ceilings", {})
    ppo_star = ceil.get("ppo_true_reward")
    oracle = {r["n"]: r["win_rate"] for r in ceil.get("oracle_best_of_n", [])}
    n_max = m["best_of_n"]["config"]["n_max"]
    dpo_star = (m["dpo"].get("dpo_ceiling") or [None])[-1]
    paper = {k: TABLE2[v][1] - TABLE2["SFT 10k"][1] for k, v in
             (("ppo", "PPO"), ("best_of_n", "Best-of-1024"), ("expert_iteration", "Expert iteration"))}
    # what R* itself reached by the same method, in points over SFT 10k under the people
    true_reward = {
        "ppo": (ppo_star["win_rate"] - ceil.get("sft10k_people", sft), "PPO on R*") if ppo_star else None,
        "best_of_n": (oracle[n_max] - sft, f"R*'s pick of {n_max}") if n_max in oracle else None,
        "dpo": (dpo_star["win_rate"] - sft, f"R*'s labels of {dpo_star['pairs']:,} pairs") if dpo_star else None,
        "expert_iteration": None,
    }
    names = {"ppo": "PPO", "best_of_n": "best-of-n", "dpo": "DPO", "expert_iteration": "expert iteration"}
    chapters = {"ppo": "11", "best_of_n": "09", "dpo": "08", "expert_iteration": "10"}
    rows = []
    for method, name in names.items():
        target = TARGETS[method]
        v = _versus(m, method)
        ours = ("not on the leaderboard" if v is None else
                plus_minus(v[0], v[1], sign=True) + (" over its seeds" if v[2] == "seeds" else ""))
        paper_text = f"{paper[method]:+.1f}" if method in paper else \
            f"{TABLE2['DPO'][0] - TABLE2['SFT 10k'][0]:+.1f} (simulator only)"
        star = true_reward[method]
        rows.append(_row("methods", f"{name} beats SFT 10k", paper_text,
                         f"≥ {target:+.0f} beyond twice the noise" if target else "above, beyond twice the noise",
                         ours, None if v is None else _beyond(v[0], v[1], target), chapters[method],
                         f"{star[0]:+.1f} ({star[1]})" if star else "", key=method,
                         interval=None if v is None else (v[0] - 2 * v[1], v[0] + 2 * v[1]), bounds=(target, None))
                    | {"method": name, "r_star": star[0] if star else None, "target_points": target})
    rows.append(clean_top_row(m))
    return rows


def clean_top_row(m: dict[str, dict]) -> dict:
    """Whether the method on top under the people got there without more repeats or disfluencies than SFT 10k."""
    rows = _methods(m)
    sft = next(r for r in rows if r["method"] == "sft10k")
    top = max((r for r in rows if r["method"] not in BASELINES), key=lambda r: r["win_rate_human"])
    rep, dis = top["repetition_rate"], top["disfluency_rate"]
    return _row("methods", "the best method wins with clean text", "–",
                "repeats and disfluencies no more often than SFT 10k's",
                f"{top['method']}: {rep:.0%} and {dis:.0%} (SFT 10k {sft['repetition_rate']:.0%}, "
                f"{sft['disfluency_rate']:.0%})",
                rep <= sft["repetition_rate"] and dis <= sft["disfluency_rate"], "14")


# -- the reward model and over-optimisation -------------------------------------------------------------------------
def reward_rows(m: dict[str, dict]) -> list[dict]:
    annotator = m["reward_model"].get("config", {}).get("annotator", "p_sim_ann")
    curve = sorted((r for r in m["reward_model"].get("accuracy_curve", []) if r["labels"] == annotator),
                   key=lambda r: r["pairs"])
    rows = []
    if curve:
        first, last = curve[0], curve[-1]
        rise = 100 * (last["acc_people"] - first["acc_people"])
        rises = rise > 2 * 100 * last["se_people"]
        acc, se = 100 * last["acc_people"], 100 * last["se_people"]
        at_most = (acc - 2 * se, acc + 2 * se)
        rows.append(_row("reward model", "accuracy against people rises with the pairs", "–",
                         f"rises, and ≥ {TARGETS['reward_model']:.0f} % at the most pairs",
                         f"{100 * first['acc_people']:.1f} % with {first['pairs']:,} pairs → "
                         f"{100 * last['acc_people']:.1f} %{_span(at_most, '{:.1f}')} with {last['pairs']:,}",
                         rises and 100 * last["acc_people"] >= TARGETS["reward_model"], "05", key="reward_model",
                         interval=at_most if rises else None, bounds=(TARGETS["reward_model"], None)))
    v = m["overoptimisation"]["verdict"]["human"]
    n_last = m["overoptimisation"]["n"][-1]
    rows.append(_row("over-optimisation", "with the noisy pool's labels, best-of-n peaks and falls",
                     "falls (Fig. 5)", f"a fall beyond twice its standard error by n = {n_last}",
                     _peak_and_fall(v["peak"], v["peak_n"], n_last, plus_minus(v["drop"], v["se_drop"])),
                     bool(v["significant_fall"]), "16", key="overoptimisation"))
    single = next((r for r in m["label_noise"]["variants"] if r["labels"] == "single judge"), None)
    if single is not None:
        rows.append(_row("over-optimisation", "with a single judge's labels, it does not fall",
                         "no fall (Fig. 5)", "no fall beyond twice its standard error",
                         _peak_and_fall(single["win at peak"], single["peak n"], m["label_noise"]["n"][-1],
                                        f"{single['fall']:.1f}"),
                         not single["fall > 2 se"], "17", key="single_judge"))
    return rows


def _peak_and_fall(peak: float, peak_n: int, n_last: int, fall: str) -> str:
    """Where best-of-n's win-rate peaks and how far it then falls; a peak at the last n has no fall to give."""
    if peak_n == n_last:
        return f"highest at the last n = {n_last} ({peak:.1f} %): no fall"
    return f"peak {peak:.1f} % at n = {peak_n}, fall {fall}"


def claims(m: dict[str, dict]) -> list[dict]:
    """Every row, in the book's order: the simulator, the rankings, the methods, the reward model."""
    return annotator_rows(m) + ranking_rows(m) + method_rows(m) + reward_rows(m)


# -- why a target is missed: what the same build measures beside it ---------------------------------------------------
def _why_agreement(m: dict[str, dict]) -> str | None:
    a = m["annotators"]
    if "crowd" not in a:
        return None
    ev, crowd, hi = 100 * a["annotators"]["p_sim_eval"]["agreement"], 100 * a["crowd"]["agreement"], TARGETS["judges_agreement"][1]
    people = ANNOTATORS["human"]["agreement"]
    text = (f"The judges agree with the people's majority on {ev:.1f} % of the pairs; one person agrees with the others' "
            f"on {crowd:.1f} %. The paper's judges sat at its crowd's level ({ANNOTATORS['p_sim_eval']['agreement']:.1f} "
            f"against {people[0]:.1f}–{people[1]:.1f} %).")
    if ev <= hi:
        return text + " Chapter 4's \"What decides the people\" shows what the judges weigh otherwise than the people do."
    quality = a.get("what_decides_people", {}).get("quality", {}).get("its side wins the majority")
    decided = (f" Where two answers differ in how right they are, the people's majority takes the righter one on "
               f"{100 * quality:.0f} % of the pairs, and ours hold each task's answer, as the paper's GPT-4 holds much of "
               "the world." if quality is not None else " Ours hold each task's answer, as the paper's GPT-4 holds much of the world.")
    if ev >= crowd:
        return text + decided + (" A judge that knows the answer predicts the majority better than one of its members "
                                 "does. The book reports this and does not make the judges know less to land in the band.")
    return text + decided + (" The people here agree with one another more than the paper's crowd did, and the judges "
                             "follow their majority nearly as well as one of them does.")


def _why_spearman(m: dict[str, dict]) -> str | None:
    rows = [r for r in _methods(m) if r["method"] != "base"]
    if len(rows) < 2:
        return None
    people = [r["win_rate_human"] for r in rows]
    ses = [r["se_human"] for r in rows if "se_human" in r]
    text = (f"Apart from the base model, the {len(rows)} rows lie within {max(people) - min(people):.1f} points of one "
            f"another under the people ({min(people):.1f}–{max(people):.1f} %)"
            + (f", and each win-rate's standard error is about {statistics.fmean(ses):.1f} points" if ses else "") + ".")
    board = m["leaderboard"]
    compared = {r["method"] for r in board.get("versus_sft10k_board", []) + board.get("versus_sft10k", [])} - {"base"}
    within = [abs(diff) <= 2 * noise for diff, noise, _ in (_versus(m, k) for k in compared)]
    if within:
        text += (f" {sum(within)} of the {len(within)} of them compared with SFT 10k differ from it by no more "
                 "than twice the noise of the difference.")
    crowds = board.get("spearman_other_crowds")
    if crowds and crowds.get("people"):
        from farmlib.evaluation.intervals import judges_taste_sentence, other_crowds_sentence

        rho = board["spearman_sim_vs_human"]
        text += " " + other_crowds_sentence(crowds, rho, TARGETS["spearman"])
        taste = judges_taste_sentence(crowds)
        if taste:
            return text + " " + taste
    return text + (" An order of rows that close is mostly noise: the ranking can be tested once the methods differ "
                   "(the methods' rows).")


def _why_levels(m: dict[str, dict]) -> str | None:
    rows = _methods(m)
    gaps = {r["method"]: level_gap(r) for r in rows}
    worst = max(gaps, key=lambda k: abs(gaps[k]))
    se = next(r.get("se_gap_p_sim_eval") for r in rows if r["method"] == worst)
    noise = "" if se is None else f" ± {se:.1f}, paired standard error"
    return (f"The judges' win-rates run {statistics.fmean(gaps.values()):+.1f} points from the people's on average; "
            f"the farthest row is {worst} ({gaps[worst]:+.1f}{noise}).")


def _why_reward_model(m: dict[str, dict]) -> str | None:
    rm = m["reward_model"]
    annotator = rm.get("config", {}).get("annotator", "p_sim_ann")
    prior = next((r for r in rm.get("accuracy_curve", []) if r["pairs"] == 0 and r["labels"] == annotator), None)
    scale = {r["labels"]: r for r in rm.get("pairs_needed") or []}
    parts = []
    if prior is not None:
        parts.append(f"Before any label the reward model, which reads the SFT model's likelihood of an answer, already "
                     f"agrees with the people on {100 * prior['acc_people']:.1f} % of the held-out pairs.")
        teachers = m.get("annotators", {}).get("annotators", {}).get("p_sim_eval", {}).get("agreement")
        if teachers is not None:  # chapter 4 scores the judges on the same held-out pairs of SFT samples
            room, noise = 100 * (teachers - prior["acc_people"]), 2 * 100 * prior["se_people"]
            parts.append(f"The judges whose labels it learns, without the flipped quarter, agree with the people on "
                         f"{100 * teachers:.1f} % of those pairs (chapter 4): "
                         + (f"{room:.1f} points above its start, room their labels did not fill." if room >= noise else
                            f"it starts {-room:.1f} points above its teachers, whose labels can only pull it towards "
                            "their own level." if room <= -noise else
                            "it starts where its teachers stand, and their labels can lift it little further."))
    head = sorted((r for r in rm.get("accuracy_curve_paper_head", []) if r["pairs"] > 0), key=lambda r: r["pairs"])
    if len(head) >= 2:
        a, b = head[0], head[-1]
        rose = 100 * (b["acc_people"] - a["acc_people"]) > 2 * 100 * max(a["se_people"], b["se_people"])
        parts.append(f"The paper's reward model, a new head on the last token, learns from the same labels "
                     f"{'and rises' if rose else 'and does not rise beyond its noise'}: {100 * a['acc_people']:.1f} % "
                     f"against the people with {a['pairs']:,} pairs, {100 * b['acc_people']:.1f} % with {b['pairs']:,}.")
    for labels, who in ((annotator, f"`{annotator}`'s labels"), ("true_reward", "R*'s own labels")):
        if labels in scale:
            r = scale[labels]
            agree = (f", which agree with R* on {r['label agreement with R* (%)']:.0f} % of its training pairs,"
                     if labels != "true_reward" else "")
            parts.append(f"With {who}{agree} it moves {r['points per doubling of pairs']:+.1f} points against R* per "
                         f"doubling of the pairs ({r['accuracy there (%)']:.1f} % at {r['pairs (largest point)']:,})"
                         + ("." if r["measured"] else
                            "; on that line no number of pairs reaches the accuracy chapter 5 finds best-of-n needs."
                            if r["extrapolation"].startswith("no number") else
                            f"; on that line, the accuracy chapter 5 finds best-of-n needs takes {r['extrapolation']}."))
    return " ".join(parts) or None


def _why_overoptimisation(m: dict[str, dict]) -> str | None:
    o, terms = m["overoptimisation"], m["best_of_n"].get("headroom", {}).get("terms", {})
    trained = next((v["total"] for k, v in terms.items() if k.startswith("the reward model's pick")), None)
    untrained = next((v["total"] for k, v in terms.items() if k.startswith("the untrained reward model's pick")), None)
    parts = ["An optimiser overshoots where the reward model is wrong in ways more candidates can find."]
    if trained is not None and untrained is not None:
        if trained - untrained < _MOVED_R_STAR:
            parts.append(f"This reward model's labels left its picks where its untrained self, the SFT model's "
                         f"likelihood, puts them: in chapter 9 its pick has a mean R* of {trained:.2f} against the "
                         f"untrained pick's {untrained:.2f}.")
        else:
            parts.append(f"This reward model's labels moved its picks towards R* from where its untrained self, the SFT "
                         f"model's likelihood, puts them: in chapter 9 its pick has a mean R* of {trained:.2f} against "
                         f"the untrained pick's {untrained:.2f}.")
    true, ns = o.get("mean_true_reward"), o["n"]
    if true:
        top = max(range(len(true)), key=true.__getitem__)
        gained, lost = true[top] - true[0], true[top] - true[-1]
        if top == len(true) - 1:  # highest at the last n: nothing gained was lost
            parts.append(f"Along n the picks' mean R* goes from {true[0]:.2f} (n = {ns[0]}) to {true[-1]:.2f} at the "
                         f"last n = {ns[-1]}, its highest: the picks have lost none of the true reward they gained, "
                         "so the people's win-rate has nothing to lose.")
        else:
            parts.append(f"Along n the picks' mean R* peaks at {true[top]:.2f} (n = {ns[top]}) and is {true[-1]:.2f} "
                         f"at n = {ns[-1]}" + (": the picks lose little of the true reward they gained, so the "
                                               "people's win-rate has little to lose." if lost <= gained / 4 else
                                               f": the picks lose {lost:.2f} of the {gained:.2f} they gained, more "
                                               "than the people's win-rate shows beyond its noise."))
    fit = next((f for f in o.get("gao_fits", []) if f["method"] == "best-of-n" and f["quantity"] == "true reward R*"),
               None)
    if fit is not None and true:
        from farmlib.methods.best_of_n import kl_bound, n_at_kl

        drawn = kl_bound(ns[-1])
        peak = fit["peak_d"] ** 2 if fit["peak_d"] else None
        if peak is None or peak > _FAR_KL:
            parts.append(f"Gao et al.'s form fitted to R*'s gain along n (chapter 16) does not turn down before "
                         f"KL = {_FAR_KL:.0f} nats (n = {ns[-1]} reaches {drawn:.1f}): on that fit, no draw one could make "
                         "shows this reward model's picks falling.")
        elif peak > drawn:
            parts.append(f"Gao et al.'s form fitted to R*'s gain along n (chapter 16) peaks at KL = {peak:.1f} nats, "
                         f"about n = {_round_n(n_at_kl(peak))}; the curve drawn stops at n = {ns[-1]} "
                         f"(KL {drawn:.1f}), before the turn.")
    return " ".join(parts)


_FAR_KL = 50.0  # nats: a best-of-n with this KL draws e^51 candidates per instruction
_MOVED_R_STAR = 0.05  # mean R* of chapter 9's picks: a trained reward model this far above its untrained self moved them


def _round_n(n: float) -> str:
    """n to two significant figures, with thousands separators."""
    return f"{float(f'{n:.2g}'):,.0f}"


def _why_single_judge(m: dict[str, dict]) -> str | None:
    """The single judge's curve set beside chapter 17's other label variants: when every variant's curve is the same
    within a point or two, which one's fall passes twice its standard error says nothing of its labels."""
    ln = m["label_noise"]
    curves, variants = ln.get("win_rate", {}), {v["labels"]: v for v in ln["variants"]}
    if len(curves) < 2 or len(variants) < 2 or "single judge" not in variants:
        return None
    spread = [max(c[i] for c in curves.values()) - min(c[i] for c in curves.values()) for i in range(len(ln["n"]))]
    at = max(range(len(spread)), key=spread.__getitem__)
    others = sorted(v["fall"] for k, v in variants.items() if k != "single judge")
    accs = [100 * v["RM accuracy vs R*"] for v in variants.values() if "RM accuracy vs R*" in v]
    ses = [c[at] for c in ln.get("standard_error", {}).values()]
    se = statistics.fmean(ses) if ses else None
    text = (f"Chapter 17 fits the same reward model on {len(curves)} kinds of labels. Their best-of-n curves lie within "
            f"{spread[at]:.1f} points of one another at every n (the most at n = {ln['n'][at]})"
            + (f", and their reward models rank held-out pairs as R* does on {min(accs):.1f}–{max(accs):.1f} %" if accs else "")
            + f". The single judge's curve falls {variants['single judge']['fall']:.1f} points from its peak; the others "
            + (f"fall {others[0]:.1f}." if others[0] == others[-1] else f"fall {others[0]:.1f} to {others[-1]:.1f}."))
    if se is not None and spread[at] <= se:
        text += (f" The curves differ by less than one win-rate's standard error ({se:.1f} points): "
                 "the labels barely move this reward model (the reward model's row), so which curve's fall passes "
                 "twice its standard error is noise.")
    return text


def _why_dpo(m: dict[str, dict]) -> str | None:
    """Chapter 8's pushed-down half: the reward model's winners learnt alone and by DPO against a loser."""
    from farmlib.evaluation import pushed_down

    rows = m["dpo"].get("pushed_down")
    if not rows or len(rows) < 2:
        return None
    sft = next(r for r in _methods(m) if r["method"] == "sft10k")
    return pushed_down.sentence(rows, sft["disfluency_rate"])


def _why_ppo(m: dict[str, dict]) -> str | None:
    """Chapter 11's split of the score PPO gained (:mod:`farmlib.evaluation.score_parts`), beside what best-of-n's
    picks gain in R* per unit of the same score (chapter 9)."""
    from farmlib.evaluation import score_parts

    ppo = m.get("ppo", {})
    rows, reader, run = ppo.get("score_parts"), ppo.get("score_reader"), ppo.get("run", "ppo")
    if not rows or not reader or any("true_reward" not in r for r in rows):
        return None
    bon = m.get("best_of_n", {})
    picks = (score_parts.curve_gain(bon["mean_reward"], bon["mean_true_reward"])
             if bon.get("mean_reward") and bon.get("mean_true_reward") else None)
    name = f"best-of-{bon['n'][-1]}'s picks (chapter 9)" if bon.get("n") else "best-of-n's picks (chapter 9)"
    return score_parts.sentence(score_parts.gain(rows, "SFT 10k", run), "PPO", "SFT 10k", reader, picks, name)


REASONS = {"judges_agreement": _why_agreement, "spearman": _why_spearman, "levels": _why_levels,
           "reward_model": _why_reward_model, "overoptimisation": _why_overoptimisation,
           "single_judge": _why_single_judge, "dpo": _why_dpo, "ppo": _why_ppo}


def reasons(m: dict[str, dict], rows: list[dict]) -> str:
    """For each missed row that this build measures a reason for (:data:`REASONS`), that reason, read from the same
    metrics: a Markdown list, empty when no such row is missed. The methods' misses are also the sentence's
    (:func:`sentence`: R* by the same method); DPO's has chapter 8's pushed-down half beside it, PPO's chapter 11's
    split of the score it gained."""
    items = []
    for r in rows:
        why = REASONS.get(r.get("key", ""))
        text = why(m) if why is not None and r["met"] is False else None
        if text:
            items.append(f"- **{r['claim'][0].upper() + r['claim'][1:]}** (chapter {int(r['chapter'])}): {text}")
    return "\n".join(items)


def shown(rows: list[dict]):
    """The table as the chapter shows it: the columns a reader needs, met as a word (the rows keep the book's
    order, area by area)."""
    import pandas as pd

    word = {True: "yes", False: "no", None: "–"}
    columns = ("claim", "paper", "target", "this build", "R* by the same method", "chapter")
    return pd.DataFrame([{**{k: r[k] for k in columns},
                          "met": word[r["met"]] + (" (within noise)" if r.get("settled") is False else "")}
                         for r in rows]).set_index("claim")


def sentence(rows: list[dict]) -> str:
    """How many targets this build meets and which it misses; for each missed method, whether R* itself reaches
    its target by the same method (then the gap is the reward model's) or not (then no reward model closes it at
    this budget)."""
    judged = [r for r in rows if r["met"] is not None]
    met = [r for r in judged if r["met"]]
    missed = [r for r in judged if not r["met"]]
    text = f"This build meets {len(met)} of the {len(judged)} targets it measures."
    if missed:
        text += " It misses these: " + "; ".join(r["claim"] for r in missed) + "."
    loose = [r for r in judged if r.get("settled") is False]
    if loose:
        one = len(loose) == 1
        text += (f" {len(loose)} of the verdicts {'is' if one else 'are'} within noise — the number's interval of "
                 f"about 95 % holds the target's bound, so another build as good as this one (another training seed, or "
                 f"another CPU's rounding) could turn {'it' if one else 'them'}: " + "; ".join(f"{r['claim']} ({'met' if r['met'] else 'missed'})"
                                                           for r in loose) + ".")
    tried = [r for r in missed if r.get("r_star") is not None]
    reached = [r for r in tried if r["r_star"] >= r["target_points"]]
    not_reached = [r for r in tried if r["r_star"] < r["target_points"]]

    def listed(rs):
        return " and ".join(f"{r['method']} ({r['r_star']:+.1f} points)" for r in rs)

    if reached:
        text += (f" The true reward itself, by the same method, reaches the target for {listed(reached)}: there the"
                 " gap is the reward model's (chapter 5 measures how accurate it would have to be).")
    if not_reached:
        text += (f" {'It does' if reached else 'The true reward itself, by the same method, does'} not for"
                 f" {listed(not_reached)}: at this profile's budget neither better labels nor a better reward model would close that gap.")
    return text
