"""The method chapters as lessons: the plumbing they share (:mod:`farmlib.lessons`) on hand-made data, and a
check that the code a chapter shows is the library's own, read from it at build time, never copied by hand."""

import ast
import importlib
import inspect
import json
import re
from types import SimpleNamespace

import pandas as pd
import pytest
from conftest import ROOT

from farmlib import lessons
from farmlib.evaluation.win_rate import WinRate
from farmlib.methods.dpo import dpo_loss
from farmlib.methods.ppo import policy_loss

METHOD_CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
METHOD_CHAPTERS = [p for p in METHOD_CHAPTERS if 5 <= int(p.name[:2]) <= 13]


# -- farmlib.lessons on hand-made data -------------------------------------------------------------
class FakeFarm:
    """What the lesson helpers ask of a farm: win-rates by annotator, R*, a metrics file."""

    is_farmworld = True

    def __init__(self, win_rates: dict[str, dict[str, float]]):
        self.win_rates, self.written = win_rates, {}

    def evaluation_annotators(self, wanted=("p_sim_eval", "human")):
        return tuple(wanted)

    def evaluate(self, outs, annotator):
        w = self.win_rates[outs[0]["generator"]][annotator]
        return WinRate(w, 2.0, len(outs), 0, 0), None

    def true_rewards(self, outs):
        return [len(o["output"]) / 10 for o in outs]

    class world:  # R*'s parts: an answer saying "again" repeats, one saying "salad" stumbles
        @staticmethod
        def reward_breakdown(instruction, input, output):
            return {"repetition": float("again" in output), "disfluency": float("salad" in output)}

    def write_metrics(self, chapter, metrics):
        self.written[chapter] = metrics


def _outs(generator: str, text: str, n: int = 4) -> list[dict]:
    return [{"instruction": f"q{i}", "input": "", "output": text, "generator": generator} for i in range(n)]


def test_source_text_is_getsource_in_a_python_fence():
    text = lessons.source_text(policy_loss)
    assert text.startswith("```python\n# farmlib.methods.ppo.policy_loss  (farmlib/methods/ppo.py, line ")
    assert text.endswith("\n```")
    assert inspect.getsource(policy_loss).rstrip() in text
    from farmlib.methods.ppo import experience  # decorated (torch.no_grad): its own file, not torch's

    assert "(farmlib/methods/ppo.py, line " in lessons.source_text(experience)
    two = lessons.source_text(policy_loss, dpo_loss)
    assert inspect.getsource(dpo_loss).rstrip() in two and two.count("```") == 2


def test_source_text_refuses_what_is_not_farmlibs():
    with pytest.raises(ValueError):
        lessons.source_text(json.dumps)
    with pytest.raises(ValueError):
        lessons.source_text()


def test_paper_row():
    assert lessons.paper_row("PPO") == "46.8 / 55.1"
    assert lessons.paper_row("DPO") == "46.8 / –"
    assert lessons.paper_row(None) == "no such row"


def test_summary_and_metrics_from_hand_made_win_rates():
    farm = FakeFarm({"m": {"p_sim_eval": 40.0, "human": 55.0}})
    outs = _outs("m", "a" * 30)
    s = lessons.summary(farm, outs)
    assert s == {"win_rate": {"p_sim_eval": 40.0, "human": 55.0}, "standard_error": {"p_sim_eval": 2.0, "human": 2.0},
                 "avg_length": 30.0, "true_reward": 3.0, "true_rewards": [3.0] * 4,
                 "defects": {"repeats": [0] * 4, "disfluent": [0] * 4}}
    cfg = SimpleNamespace(beta=0.1)
    assert lessons.write_method_metrics(farm, "dpo", "dpo", cfg, outs, 12, margin_first=0.0) is None
    m = farm.written["dpo"]
    assert m["run"] == "dpo" and m["config"] == {"beta": 0.1} and m["train_seconds"] == 12.0
    assert m["win_rate"]["human"] == 55.0 and m["avg_length"] == 30.0 and m["margin_first"] == 0.0


def test_reading_says_gain_loss_or_noise_and_length():
    sft = {"win_rate": {"p_sim_eval": 40.0, "human": 50.0}, "standard_error": {"p_sim_eval": 2.0, "human": 2.0},
           "avg_length": 100.0, "true_reward": 1.0}
    ours = {"win_rate": {"p_sim_eval": 41.0, "human": 60.0}, "standard_error": {"p_sim_eval": 2.0, "human": 2.0},
            "avg_length": 150.0, "true_reward": 0.5}
    text = lessons.reading_text("ppo", sft, ours)
    assert "**Reading the table.** Under the simulated judges (`p_sim_eval`) ppo wins 41.0 %" in text
    assert "+1.0 points, within noise" in text  # 2 se of the difference = 5.7 points
    assert "+10.0 points, a clear gain" in text
    assert "(1.50×): longer" in text
    assert "from 1.000 to 0.500 (-0.500)" in text and "did not get better" in text
    worse = lessons.reading_text("x", sft, dict(ours, win_rate={"human": 40.0}, avg_length=50.0, true_reward=None))
    assert "-10.0 points, a clear loss" in worse and "shorter" in worse and "R*" not in worse


def test_reading_says_whether_r_star_moved_beyond_its_paired_noise():
    # 400 answers: the method's R* is SFT 10k's plus 0.004 on every answer (a clear gain, paired), or plus 0.4 on
    # half of them and minus 0.4 on the other half, shifted by 0.004 (within noise)
    base = {"win_rate": {}, "standard_error": {}, "avg_length": 50.0}
    theirs = [0.1 * (i % 7) for i in range(400)]
    sft = dict(base, true_rewards=theirs, true_reward=sum(theirs) / 400)
    steady = [r + 0.004 for r in theirs]
    text = lessons.reading_text("x", sft, dict(base, true_rewards=steady, true_reward=sum(steady) / 400))
    assert "(+0.004, a clear gain: two standard errors of the difference, paired over the instructions, are 0.000)" in text
    assert text.endswith("the answers got better.")
    noisy = [r + 0.004 + (0.4 if i % 2 else -0.4) for i, r in enumerate(theirs)]
    text = lessons.reading_text("x", sft, dict(base, true_rewards=noisy, true_reward=sum(noisy) / 400))
    assert "(+0.004, within noise: two standard errors of the difference, paired over the instructions, are 0.040)" in text
    assert text.endswith("the answers did not change beyond noise.")
    worse = [r - 0.1 for r in theirs]
    text = lessons.reading_text("x", sft, dict(base, true_rewards=worse, true_reward=sum(worse) / 400))
    assert text.endswith("the answers got worse.")


def test_reading_pairs_the_instructions_where_both_summaries_carry_them():
    # 400 instructions: the method wins the same 100 as SFT 10k and 12 more (+3 points). Unpaired, 3 points is
    # inside two standard errors (2 × 3.2); paired, nothing else differs and the gain is clear.
    sft_scores, our_scores = [1.0] * 100 + [0.0] * 300, [1.0] * 112 + [0.0] * 288
    sft = {"win_rate": {"human": 25.0}, "standard_error": {"human": 2.2}, "avg_length": 100.0, "true_reward": None}
    ours = {"win_rate": {"human": 28.0}, "standard_error": {"human": 2.2}, "avg_length": 100.0, "true_reward": None}
    assert "+3.0 points, within noise: two standard errors of the difference are 6.2" in lessons.reading_text("x", sft, ours)
    sft["scores"], ours["scores"] = {"human": sft_scores}, {"human": our_scores}
    text = lessons.reading_text("x", sft, ours)
    assert "+3.0 points, a clear gain: two standard errors of the difference, paired over the instructions, are 1.7" in text


def test_reading_says_when_answers_repeat_or_stumble_more_than_sfts():
    # 200 answers each: SFT 10k repeats in 30 (15 %), the method in 30 + 20 more (25 %), paired: a clear rise;
    # both stumble in the same 10 (5 %): within noise
    sft = {"repeats": [1] * 30 + [0] * 170, "disfluent": [1] * 10 + [0] * 190}
    ours = {"repeats": [1] * 50 + [0] * 150, "disfluent": [1] * 10 + [0] * 190}
    text = lessons.defects_text(sft, ours)
    assert "They say something twice in 25 % of answers against SFT 10k's 15 % (more often, beyond two standard errors)" in text
    assert "against SFT 10k's 5 % (within noise)" in text and "read the answers above" in text
    assert "less often, beyond two standard errors" in lessons.defects_text(ours, sft)
    assert "read the answers above" not in lessons.defects_text(ours, sft)
    same = lessons.defects_text(sft, sft)
    assert same.count("within noise") == 2 and "read the answers" not in same
    assert lessons.defects_text(None, ours) == "" and lessons.defects_text(sft, {}) == ""
    # unequal lengths are not paired: two independent shares (2 se of 25 % on 200 against 18 % on 100: 9.8 points)
    unpaired = lessons.defects_text({"repeats": [1] * 18 + [0] * 82, "disfluent": [1] * 5 + [0] * 95}, ours)
    assert "25 % of answers against SFT 10k's 18 % (within noise)" in unpaired and "read the answers" not in unpaired
    sft_summary = {"win_rate": {}, "standard_error": {}, "avg_length": 50.0, "true_reward": None, "defects": sft}
    assert "more often" in lessons.reading_text("x", sft_summary, dict(sft_summary, defects=ours))
    farm = FakeFarm({"m": {"p_sim_eval": 40.0, "human": 55.0}})
    s = lessons.summary(farm, _outs("m", "said again") + _outs("m", "word salad"))
    assert s["defects"] == {"repeats": [1] * 4 + [0] * 4, "disfluent": [0] * 4 + [1] * 4}


def test_evaluation_table_has_both_rows_and_the_paper(monkeypatch):
    farm = FakeFarm({"sft10k": {"p_sim_eval": 30.0, "human": 40.0}, "ppo": {"p_sim_eval": 35.0, "human": 45.0}})
    farm.is_farmworld = False  # no R* breakdown needed for the table's defect columns
    table, examples = lessons.evaluation(farm, _outs("sft10k", "short"), _outs("ppo", "longer one"), "ppo", "PPO", k=2)
    assert list(table.index) == ["sft10k", "ppo"]
    assert table.loc["ppo", "win-rate (human)"] == "45.0\u00a0±\u00a02.0"
    assert table.loc["ppo", "paper (sim / human)"] == "46.8 / 55.1"
    assert isinstance(examples, pd.DataFrame) and len(examples) == 2 and set(examples.columns) >= {"sft10k", "ppo"}


def test_loss_curve_draws_raw_and_smoothed():
    import matplotlib

    matplotlib.use("Agg")
    fig = lessons.loss_curve(pd.DataFrame({"step": range(5), "loss": [5, 4, 3, 2, 1.0]}), "t")
    assert len(fig.axes[0].lines) == 2


# -- the shown code is the library's ---------------------------------------------------------------
def _cells(nb):
    return json.loads(nb.read_text())["cells"]


def _shown_objects(nb) -> list[str]:
    """The dotted names of the objects a chapter shows with ``lessons.source(...)``."""
    names = []
    for c in _cells(nb):
        if c["cell_type"] != "code":
            continue
        tree = ast.parse("".join(c["source"]))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "source" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "lessons":
                names += [ast.unparse(a) for a in node.args]
    return names


def _imports(nb) -> dict[str, str]:
    """``{name: module}`` of the chapter's ``from farmlib... import name`` lines."""
    out = {}
    for c in _cells(nb):
        if c["cell_type"] == "code":
            for node in ast.walk(ast.parse("".join(c["source"]))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("farmlib"):
                    out.update({a.asname or a.name: node.module for a in node.names})
    return out


def _resolve(dotted: str, nb):
    """``ppo.policy_loss`` as the chapter names it (``ppo`` imported from ``farmlib.methods``), resolved."""
    head, _, rest = dotted.partition(".")
    base = _imports(nb).get(head)
    assert base, f"{nb.stem} shows {dotted}, but does not import {head} from farmlib"
    obj = importlib.import_module(base)
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(f"{obj.__name__}.{part}")
        except (ImportError, AttributeError):
            raise AssertionError(f"{nb.stem} shows {dotted}, which farmlib does not have") from None
    return obj


@pytest.mark.parametrize("nb", METHOD_CHAPTERS, ids=lambda p: p.stem)
def test_chapter_shows_its_code_from_the_library(nb):
    shown = _shown_objects(nb)
    assert shown, f"{nb.stem} shows none of its code with lessons.source(...)"
    for dotted in shown:
        obj = _resolve(dotted, nb)
        assert lessons.qualified_name(obj).startswith("farmlib."), dotted


@pytest.mark.parametrize("nb", METHOD_CHAPTERS, ids=lambda p: p.stem)
def test_no_hand_copied_library_code_in_the_prose(nb):
    """A fenced Python block in a markdown cell that defines a function of farmlib is a copy that can drift."""
    defined = set()
    for path in (ROOT / "farmlib").rglob("*.py"):
        defined |= set(re.findall(r"^\s*(?:def|class) (\w+)", path.read_text(), re.M))
    for c in _cells(nb):
        if c["cell_type"] != "markdown":
            continue
        for block in re.findall(r"```(?:python|py|\{code-cell\}[^\n]*)?\n(.*?)```", "".join(c["source"]), re.S):
            copied = set(re.findall(r"^\s*(?:def|class) (\w+)", block, re.M)) & defined
            assert not copied, f"{nb.stem} copies {sorted(copied)} by hand: show it with lessons.source(...)"


@pytest.mark.parametrize("nb", METHOD_CHAPTERS, ids=lambda p: p.stem)
def test_exercises_use_parameters_the_chapter_has(nb):
    """Every ``farm run <chapter> ... -p NAME VALUE`` of the exercises names this chapter and one of its parameters,
    and an ``overrides`` value names fields of the method's config (or the reward model's, for chapter 5)."""
    from farmlib.book import notebook_parameters
    from farmlib.methods import CONFIGS

    params = notebook_parameters(nb)
    text = "".join("".join(c["source"]) for c in _cells(nb) if c["cell_type"] == "markdown")
    runs = re.findall(r"farm run (\S+) --profile (\w+)((?: -p \S+ '[^']*'| -p \S+ \S+)*)", text)
    assert len(runs) >= 3, f"{nb.stem} has {len(runs)} exercises with a `farm run` line (3 to 5 wanted)"
    name = nb.stem.split("_", 1)[1]
    fields = {f for cls in CONFIGS.values() for f in cls.__dataclass_fields__} if name not in CONFIGS else \
        set(CONFIGS[name].__dataclass_fields__)
    for chapter, profile, ps in runs:
        assert chapter == nb.stem, f"{nb.stem}: an exercise runs {chapter}"
        assert profile in ("micro", "tiny"), profile
        for pname, value in re.findall(r"-p (\S+) (?:'([^']*)'|\S+)", ps):
            assert pname in params, f"{nb.stem}: exercise parameter {pname!r} is not in its parameters cell"
            if pname == "overrides":
                unknown = set(json.loads(value)) - fields
                assert not unknown, f"{nb.stem}: overrides {sorted(unknown)} are not fields of the {name} config"


# -- chapter 5's readings (farmlib.evaluation.reward_model_report) on hand-made numbers -----------------
def test_gap_sentence_compares_our_pick_with_random_errors():
    from farmlib.evaluation.reward_model_report import gap_sentence

    oracle = pd.DataFrame({"sigma": [0.0, 1.0, 5.0], "win_rate": [60.0, 50.0, 40.0],
                           "accuracy vs R*": [1.0, 0.75, 0.55]})
    text, worse = gap_sentence(oracle, sft_people=45.0, bar=51.0, oracle_gain=6.0, acc_needed=0.8, n_max=8,
                               acc_ours=0.75, ours_win_rate=42.0, ours_se=2.0)
    assert worse  # 42 < 50 - 2 * 2: a random-error scorer of 75 % accuracy wins 50 %
    assert "best-of-8 wins 60.0 % under people, +15.0 points over SFT 10k's 45.0 %" in text
    assert "about **80 %** held-out accuracy" in text and "systematic" in text
    text, worse = gap_sentence(oracle, 45.0, 51.0, 6.0, None, 8, 0.75, 49.0, 2.0)
    assert not worse and "No scorer of the grid" in text and "close to the 50.0 %" in text


def test_scale_table_and_sentence():
    from farmlib.evaluation.reward_model_report import scale_sentence, scale_table

    curve = pd.DataFrame({"labels": ["true_reward"] * 3 + ["p_sim_ann"] * 3, "pairs": [100, 200, 400] * 2,
                          "acc_true": [0.6, 0.7, 0.8, 0.55, 0.57, 0.59], "se_true": [0.02] * 6,
                          "label agreement with R*": [1.0] * 3 + [0.6] * 3})
    scale = scale_table(curve, 0.7)
    assert scale.loc["true_reward", "pairs for the needed accuracy"] == "measured: 200 pairs"
    assert scale.loc["true_reward", "pairs_needed"] == 200 and scale.loc["true_reward", "measured"]
    assert scale.loc["p_sim_ann", "pairs for the needed accuracy"].startswith("extrapolated: ")
    assert scale.loc["p_sim_ann", "accuracy there (%)"] == pytest.approx(59.0)
    text = scale_sentence(scale, 0.7, 8, 100, "1 layers, width 32", worse=False)
    assert text.startswith("**What scale would close it.** Best-of-8 needs about 70.0 % held-out accuracy")
    assert "So the labels hold it back first: with labels that agree with R*, about 200 pairs (2× what" in text
    assert "`p_sim_ann`'s labels agree with R* on only 60 %" in text
    # noisy labels that still bring the reward model to the needed accuracy hold nothing back (a ratio under 1 too)
    curve["acc_true"] = [0.6, 0.7, 0.8, 0.66, 0.69, 0.72]
    text = scale_sentence(scale_table(curve, 0.7), 0.7, 8, 400, "1 layers, width 32", worse=False)
    assert "So neither holds it back at this scale" in text and "about 200 pairs (0.5× what" in text
    assert "hold it back first" not in text and "agree with R* on only" not in text


def test_measured_sentence_and_chapter_5_figures():
    import matplotlib

    matplotlib.use("Agg")
    from farmlib.evaluation import reward_model_report as report

    m = {"val_accuracy_true": 0.6, "val_se_true": 0.05, "val_accuracy": 0.55, "val_se": 0.04}
    text = report.measured_sentence(m, 0.31)
    assert "60.0% ± 5.0%, 2.0 standard errors above chance" in text and "correlation of 0.31" in text
    assert "The labels set" not in text  # a head alone: no reader's weight to report
    m.update(likelihood_weight=0.75, backward_weight=0.8, repeat_weight=-3.0)
    text = report.measured_sentence(m, 0.31, score_sd=1.5)
    assert "*a* = 0.75, the backward reader's λ = 0.80, the repeat reader's ρ = -3.00" in text
    assert "loses 3.00 (2.0 standard deviations of SFT 10k's scores)" in text
    assert "do not charge" in report.measured_sentence(dict(m, repeat_weight=0.0), 0.31, score_sd=1.5)
    curve = pd.DataFrame({"n": [1, 4], "sqrt_kl": [0.0, 0.9], "win_rate": [40.0, 45.0], "se": [2.0, 2.0]})
    fig = report.ceilings_figure(curve, 41.0, 50.0)
    assert len(fig.axes[0].lines) >= 2 and len(fig.axes[0].texts) == 2  # the two lines, one label per n
    oracle = pd.DataFrame({"accuracy vs R*": [0.9, 0.6], "win_rate": [50.0, 42.0], "se": [2.0, 2.0]})
    fig = report.needed_accuracy_figure(oracle, 8, (0.62, 0.03, 41.0, 2.0), 40.0, 46.0, 6.0, 0.8)
    assert fig.axes[0].get_title() == "What best-of-n needs from its reward model"


def test_accuracy_curve_figure_and_sentence():
    import matplotlib

    from farmlib.evaluation import reward_model_report as report

    matplotlib.use("Agg")
    curve = pd.DataFrame({"labels": ["true_reward", "true_reward", "p_sim_ann", "p_sim_ann"], "pairs": [250, 1000, 250, 1000],
                          "acc_true": [0.6, 0.7, 0.5, 0.55], "se_true": [0.02, 0.02, 0.02, 0.02]})
    fig = report.accuracy_curve_figure(curve)
    assert fig.axes[0].get_xscale() == "log" and len(fig.axes[0].containers) == 2
    table = report.curve_table(curve)
    assert list(table.columns) == ["labels", "pairs", "vs R* (%)"] and table["vs R* (%)"][1] == "70.0\u00a0±\u00a02.0"
    wide = curve.assign(**{"label agreement with R*": 1.0, "acc_people": 0.6, "se_people": 0.02, "repeat_weight": -3.214})
    assert list(report.curve_table(wide).columns) == ["labels", "agree with R*", "pairs", "vs R* (%)", "vs people (%)", "ρ"]
    assert report.curve_table(wide)["ρ"][0] == -3.21
    s = report.curve_sentence(curve)
    assert "70.0 ± 2.0 % with true_reward labels (1000 pairs)" in s and "55.0 ± 2.0 % with p_sim_ann" in s
    assert "best point is true_reward labels at 1000 pairs" in s
    untrained = pd.DataFrame({"labels": ["true_reward", "p_sim_ann"], "pairs": [0, 0], "acc_true": [0.65, 0.65],
                              "se_true": [0.02, 0.02], "label agreement with R*": [1.0, 0.6]})
    curve = pd.concat([untrained, curve.assign(**{"label agreement with R*": [1.0, 1.0, 0.6, 0.6]})], ignore_index=True)
    fig = report.accuracy_curve_figure(curve)
    assert len(fig.axes[0].containers) == 2 and "before any label" in [t.get_text() for t in fig.axes[0].get_legend().texts]
    s = report.curve_sentence(curve)
    assert s.startswith("Before any label the reward model already ranks 65.0 ± 2.0 %") and "adds +5.0 points" in s
    assert list(report.scale_table(curve, 0.68).index) == ["true_reward", "p_sim_ann"]
    assert "people's majority" not in s  # no acc_people column, no sentence about it


def test_seen_and_new_halves_table_and_sentence():
    from farmlib.evaluation import reward_model_report as report

    # 100 seen pairs, 100 new; before any label 70 and 60 of them right
    before = [True] * 70 + [False] * 30 + [True] * 60 + [False] * 40

    def result(seen_flips, new_flips):  # pairs the trained model gets right that the untrained one got wrong
        after = list(before)
        for k in range(seen_flips):
            after[70 + k] = True
        for k in range(new_flips):
            after[160 + k] = True
        return {"seen": [True] * 100 + [False] * 100, "hits": {"before any label": before, "trained": after}}

    same = result(1, 0)
    assert report.seen_table(same).loc["trained", report.SEEN] == "71.0\u00a0±\u00a04.5 % (100)"
    assert report.seen_table(same).loc["before any label", report.NEW] == "60.0\u00a0±\u00a04.9 % (100)"
    s = report.seen_sentence(same)
    assert s.startswith("100 of the 200 held-out pairs") and "ranks 70.0 % of them as the people do and 60.0 % of the others" in s
    assert "first half by +1.0 points and the second by +0.0" in s and "did not teach" in s and "the easier ones" in s
    s = report.seen_sentence(result(12, 0))  # +12 against +0: paired noise about 3.3 points
    assert "part of the held-out accuracy is memory" in s and "60.0 % on the new half" in s
    assert "carries to instructions the reward model never saw" in report.seen_sentence(result(0, 12))
    few = {"seen": [True] + [False] * 9, "hits": {"before any label": [True] * 10, "trained": [True] * 10}}
    assert report.seen_sentence(few).startswith("1 of the 10 held-out pairs") and "too few" in report.seen_sentence(few)


def test_curve_sentence_reads_the_people_column():
    from farmlib.evaluation import reward_model_report as report

    curve = pd.DataFrame({"labels": ["true_reward"] * 3 + ["p_sim_ann"] * 3, "pairs": [0, 250, 8000] * 2,
                          "acc_true": [0.7] * 6, "se_true": [0.02] * 6, "acc_people": [0.65, 0.66, 0.72, 0.65, 0.66, 0.66],
                          "se_people": [0.02] * 6})
    s = report.curve_sentence(curve)
    assert "65.0 % at 0 and 72.0 ± 2.0 % at 8,000 pairs with true_reward labels" in s
    assert "66.0 ± 2.0 % at 8,000 pairs with p_sim_ann labels" in s and "so the labels move" in s
    flat = report.people_sentence(curve.assign(acc_people=0.65))
    assert "comes from where it started" in flat and "so the labels move" not in flat


def test_the_papers_head_is_drawn_and_read_beside_the_books_reward_model():
    import matplotlib

    from farmlib.evaluation import reward_model_report as report

    matplotlib.use("Agg")
    curve = pd.DataFrame({"labels": ["p_sim_ann"] * 3, "pairs": [0, 1000, 8000], "acc_people": [0.69, 0.68, 0.68],
                          "se_people": [0.02] * 3})
    head = pd.DataFrame({"labels": ["p_sim_ann"] * 3, "pairs": [250, 1000, 8000], "acc_people": [0.51, 0.53, 0.563],
                         "se_people": [0.02] * 3})
    fig = report.head_curve_figure(curve, head, "p_sim_ann")
    assert len(fig.axes[0].containers) == 2 and fig.axes[0].get_ylabel() == "held-out accuracy against people (%)"
    s = report.head_sentence(curve, head, "p_sim_ann", 0.63)
    assert "51.0 % of the held-out pairs with 250 pairs and 56.3 ± 2.0 % with 8,000" in s
    assert "rises 5.3 points, beyond twice its standard error" in s and "6.7 points below the 63 %" in s
    assert "starts at 69.0 % before any label and ends at 68.0 % with 8,000" in s and "already above where the paper's head ends" in s
    s = report.head_sentence(curve, head.assign(acc_people=[0.52, 0.55, 0.70]), "p_sim_ann", 0.63)
    assert "7.0 points above the 63 %" in s and "reaches where this book's starts" in s
    flat = report.head_sentence(curve, head.assign(acc_people=[0.52, 0.53, 0.54]), "p_sim_ann", 0.63)
    assert "moves +2.0 points, within twice its standard error (4.0)" in flat


def test_dpo_curves_two_panels_with_labels_that_do_not_overlap():
    import matplotlib

    matplotlib.use("Agg")
    steps = range(30)
    hist = pd.DataFrame({"step": steps, "loss": [0.69 - 0.01 * i for i in steps],
                         "rewards/margins": [0.02 * i for i in steps], "rewards/chosen": [-0.01 * i for i in steps],
                         "rewards/rejected": [-0.03 * i for i in steps]})
    fig = lessons.dpo_curves(hist, "DPO on p_sim_ann pairs")
    left, right = fig.axes[:2]
    assert len(left.lines) == 3 and len(right.lines) == 4  # loss, smoothed, log 2 | three rewards, zero
    assert all(ax.get_xlabel() and ax.get_ylabel() and ax.get_title() for ax in (left, right))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    # the right panel's y-label keeps a quarter inch from everything the left panel draws (tick labels included;
    # tight_layout left 0.18 in) and stays below the title (tight_layout let it run into it)
    label = right.yaxis.label.get_window_extent(renderer)
    assert label.x0 - left.get_tightbbox(renderer).x1 >= 0.25 * fig.dpi
    assert label.y1 < fig.texts[0].get_window_extent(renderer).y0


def test_ppo_curves_one_titled_panel_per_curve_with_the_held_out_points():
    import matplotlib

    matplotlib.use("Agg")
    hist = pd.DataFrame({"step": range(8), "reward": [0.1 * i for i in range(8)], "kl": [0.01 * i for i in range(8)],
                         "length_tokens": [20 - i for i in range(8)]})
    held = pd.DataFrame({"step": [0, 4, 8], "reward": [0.0, 0.3, 0.5], "kl": [0.0, 0.02, 0.05],
                         "length_tokens": [20, 18, 16]})
    fig = lessons.ppo_curves(hist, held)
    assert [ax.get_title() for ax in fig.axes] == [name for _, name, _ in lessons.PPO_CURVES]
    assert all(len(ax.lines) == 3 and ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for a, b in zip(fig.axes, fig.axes[1:]):  # each y-label clear of the panel to its left
        assert b.yaxis.label.get_window_extent(renderer).x0 > a.get_tightbbox(renderer).x1


def test_dpo_training_text_reads_the_first_and_last_tenth():
    import pandas as pd

    from farmlib.lessons import dpo_training_text

    rows = [{"loss": 0.69 - 0.01 * i, "rewards/margins": 0.01 * i, "rewards/accuracies": 0.5 + 0.02 * i,
             "rewards/chosen": -0.01 * i, "rewards/rejected": -0.02 * i} for i in range(20)]
    text, m0, m1 = dpo_training_text(pd.DataFrame(rows), 987, 21.4)
    assert (m0, m1) == (0.005, 0.185) and "987 pairs (21 s)" in text and "*both* fell" in text
    up = pd.DataFrame([dict(r, **{"rewards/chosen": 0.01 * i}) for i, r in enumerate(rows)])
    assert "the chosen answers became more likely" in dpo_training_text(up, 987, 21.4)[0]


def test_value_text_reads_the_explained_variance_at_both_ends():
    import pandas as pd

    from farmlib.lessons import value_text

    weak = pd.DataFrame({"explained_variance": [0.0] + [0.05] * 9})
    assert "0 % of the returns' variance at the first step and 5 % over the last 5" in value_text(weak)
    assert "no better than the batch's mean" in value_text(weak)
    good = pd.DataFrame({"explained_variance": [0.1] + [0.6] * 9})
    assert "takes out most of the spread" in value_text(good)
    assert value_text(pd.DataFrame({"reward": [1.0]})) == ""


def test_explained_variance_of_a_perfect_a_useless_and_a_bad_baseline():
    import torch

    from farmlib.methods.ppo import explained_variance

    returns = torch.tensor([[1.0, 2.0, 0.0], [3.0, 5.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    assert abs(explained_variance(returns, returns, mask) - 1.0) < 1e-6
    assert abs(explained_variance(torch.zeros_like(returns), returns, mask)) < 1e-6  # a constant: no better than the mean
    assert explained_variance(-returns, returns, mask) < 0
