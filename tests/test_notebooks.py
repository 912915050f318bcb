"""Every chapter runs end to end on the micro profile (seconds each)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from farmlib.book import BookError, build_book, chapters, execute_notebook

CHAPTERS = chapters(ROOT)


def test_notebooks_are_committed_without_outputs():
    for nb in CHAPTERS:
        cells = json.loads(nb.read_text())["cells"]
        assert not any(c.get("outputs") or c.get("execution_count") for c in cells if c["cell_type"] == "code"), nb
        assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in cells), nb
        ids = [c.get("id") for c in cells]  # nbformat 4.5: every cell has a unique id (a missing one warns, later fails)
        assert None not in ids and len(set(ids)) == len(ids), f"{nb.name}: a cell without a unique id"


_WIN_RATE = {"win_rate": dict, "standard_error": dict, "avg_length": float, "train_seconds": float,
             "run": str, "config": dict}
#: chapter -> (its metrics file, the key numbers it must write, with their types)
METRICS = {
    "01_farmworld": ("farmworld", {"split_sizes": dict, "writer_mean_true_reward": dict,
                                  "degenerate_correct_preferred": dict}),
    "02_sft": ("sft", {"parameters": int, "pretrain_final_loss": float, "sft_final_loss": float}),
    "03_evaluation": ("evaluation", {"win_rate": dict, "standard_error": dict, "n": int}),
    "04_annotators": ("annotators", {"n_pairs": int, "crowd": dict, "annotators": dict, "agreement_intervals": dict,
                                    "injection": dict, "crowd_by_sft_seed": dict, "crowd_by_base_seed": dict,
                                    "degenerate_correct_preferred": dict, "crowd_calibration_pairs": dict,
                                    "likelihood_gap": dict}),
    "05_reward_model": ("reward_model", {"val_accuracy": float, "val_accuracy_true": float, "n_train": int,
                                         "accuracy_curve": list, "oracle": list, "oracle_bar": float,
                                         "run": str, "config": dict}),
    "06_feedme": ("feedme", _WIN_RATE),
    "07_reward_conditioning": ("reward_conditioning", _WIN_RATE),
    "08_dpo": ("dpo", {**_WIN_RATE, "margin_first": float, "margin_last": float}),
    "09_best_of_n": ("best_of_n", {"n": list, "mean_reward": list, "win_rate": dict, "run": str, "config": dict}),
    "10_expert_iteration": ("expert_iteration", _WIN_RATE),
    "11_ppo": ("ppo", {**_WIN_RATE, "steps_per_second": float, "held_out": list}),
    "12_quark": ("quark", _WIN_RATE),
    "13_kto": ("kto", _WIN_RATE),
    "14_leaderboard": ("leaderboard", {"rows": list, "spearman_sim_vs_human": float, "spearman_interval": dict,
                                      "spearman_with_expert": float,
                                      "seed_runs": list, "seed_summary": list, "versus_sft10k": list, "versus_sft10k_board": list}),
    "15_length": ("length", {"rows": list, "spearman_length_raw": dict, "spearman_length_lc": dict,
                             "best_of_n_length": dict, "ppo_length": dict, "n_prompts": int, "config": dict,
                             "style_vs_reference": dict}),
    "16_overoptimisation": ("overoptimisation", {"n": list, "kl_bound": list, "mean_reward": list,
                                                 "mean_true_reward": list, "win_rate": dict, "standard_error": dict,
                                                 "verdict": dict, "ppo": list, "n_prompts": int, "run": str,
                                                 "config": dict}),
    "17_label_noise": ("label_noise", {"variants": list, "n": list, "win_rate": dict, "standard_error": dict,
                                       "mean_true_reward": dict, "n_prompts": int, "config": dict}),
    "18_end_to_end": ("end_to_end", {"rows": list, "correlations": dict, "transfer": list, "n_boot": int,
                                     "n_instructions": int}),
    "19_instruction_mix": ("instruction_mix", {"mixes": dict, "tables": dict, "correlation": dict,
                                               "single_family_spearman": dict, "methods": list}),
    "20_claims": ("claims", {"rows": list, "met": int, "measured": int, "within_noise": int, "reasons": str}),
}


def test_every_chapter_has_a_metrics_check():
    assert sorted(METRICS) == [c.stem for c in CHAPTERS]


def assert_clean_page(executed: Path) -> None:
    """What a reader would see that is plumbing: a returned path, tqdm's widget warning, any library's warning."""
    outputs = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                      for c in json.loads(executed.read_text())["cells"] for o in c.get("outputs", []))
    for noise in ("PosixPath(", "IProgress not found", "LOAD REPORT", "\x1b[A"):
        assert noise not in outputs, f"{executed.stem}: the rendered page shows {noise!r}"
    warning = re.search(r"\w*Warning: .*", outputs)  # FutureWarning, Pandas4Warning, UserWarning, ...
    assert warning is None, f"{executed.stem}: the rendered page shows {warning.group(0)[:120]!r}"


def _test_runs(tmp_path_factory) -> Path:
    """Shared by the chapters, like a book build; FARM_TEST_RUNS (set by .ci/run) keeps them for the book stage."""
    return Path(os.environ.get("FARM_TEST_RUNS") or tmp_path_factory.getbasetemp() / "nb_runs")


def _execute_selected(profile: str, test: str, request, tmp_path_factory) -> Path:
    """Execute, as ``farm book`` does (chapters side by side, each in its own process), every chapter whose
    ``test`` this pytest session selected; returns the folder of the executed copies (``<runs>/<profile>/executed``,
    where .ci/run's book stage finds them). Each chapter's executed copy and metrics file are removed first, so
    the chapter must write them again. A failure is left to the chapter's own test (:func:`_executed`)."""
    selected = [i.callspec.params["nb"] for i in request.session.items if getattr(i, "originalname", "") == test]
    runs = _test_runs(tmp_path_factory)
    out = runs / profile / "executed"
    for nb in selected:
        (out / nb.name).unlink(missing_ok=True)
        (runs / profile / "metrics" / f"{METRICS[nb.stem][0]}.json").unlink(missing_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FARM_RUNS", str(runs))
        try:
            build_book(profile, ROOT, html=False, only=[nb.stem for nb in selected], force=True, executed=out)
        except BookError:
            pass
    return out


@pytest.fixture(scope="session")
def micro_chapters(request, tmp_path_factory) -> Path:
    return _execute_selected("micro", "test_chapter_runs_on_micro_profile", request, tmp_path_factory)


@pytest.fixture(scope="session")
def real_micro_chapters(request, tmp_path_factory) -> Path:
    from farmlib.real import REFERENCE_FILE

    if not (ROOT.parent / "shared" / "data" / REFERENCE_FILE).exists():
        pytest.skip("real data files not found at ../shared/data")
    return _execute_selected("real-micro", "test_chapter_runs_on_real_micro_profile", request, tmp_path_factory)


def _executed(nb: Path, folder: Path, profile: str, tmp_path_factory, monkeypatch) -> Path:
    """The chapter's executed copy from the side-by-side run; a chapter that did not finish there (it
    failed, or a failure elsewhere stopped the run before it started) runs again alone, raising its own error."""
    out = folder / nb.name
    if not (out.exists() and "farm" in json.loads(out.read_text())["metadata"]):  # recorded only on success
        monkeypatch.setenv("FARM_RUNS", str(_test_runs(tmp_path_factory)))
        monkeypatch.setenv("FARM_PROGRESS", str(tmp_path_factory.mktemp("bars") / "progress"))  # as `farm book`
        execute_notebook(nb, out, {"profile": profile}, cwd=ROOT)
    return out


@pytest.mark.parametrize("nb", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_on_micro_profile(nb, micro_chapters, tmp_path_factory, monkeypatch):
    """The chapter executes and (re)writes its own metrics file with its key numbers."""
    out = _executed(nb, micro_chapters, "micro", tmp_path_factory, monkeypatch)
    runs = _test_runs(tmp_path_factory)
    name, keys = METRICS[nb.stem]
    path = runs / "micro" / "metrics" / f"{name}.json"
    assert path.exists(), f"{nb.stem} did not write {path.name}"
    assert_clean_page(out)
    metrics = json.loads(path.read_text())
    assert metrics["profile"] == "micro"
    for key, typ in keys.items():
        assert key in metrics, f"{path.name} lacks {key}"
        ok = isinstance(metrics[key], typ) or (typ is float and isinstance(metrics[key], int))
        assert ok, f"{path.name}: {key} is {type(metrics[key]).__name__}, not {typ.__name__}"
    for w in [metrics.get("win_rate", {})] if isinstance(metrics.get("win_rate"), dict) else []:
        assert all(0 <= v <= 100 for v in w.values() if isinstance(v, (int, float))), w
    if "run" in metrics:
        assert metrics["run"] == name  # no overrides: the row is the method's plain name


#: chapter -> the key numbers it writes on real data (real-micro); every real branch also writes "real": True
REAL_METRICS = {
    "01_farmworld": {"split_sizes": dict, "datasets": dict},
    "02_sft": {"parameters": int, "sft_final_loss": float, "mean_characters": dict},
    "03_evaluation": {"win_rate": dict, "standard_error": dict, "n": int},
    "04_annotators": {"n_pairs": int, "annotators": dict},
    "05_reward_model": {"val_accuracy": float, "n_train": int, "run": str, "config": dict},
    **{c: METRICS[c][1] for c in ("06_feedme", "07_reward_conditioning", "08_dpo", "10_expert_iteration", "11_ppo",
                                 "12_quark", "13_kto")},
    "09_best_of_n": {"n": list, "mean_reward": list, "win_rate": dict, "run": str, "config": dict},
    "14_leaderboard": {"rows": list},
    "15_length": {"rows": list, "spearman_length_raw": dict, "spearman_length_lc": dict, "best_of_n_length": dict,
                  "ppo_length": dict, "n_prompts": int, "style_vs_reference": dict},
    "16_overoptimisation": {"n": list, "mean_reward": list, "win_rate": dict, "verdict": dict, "ppo": list},
    "17_label_noise": {"variants": list, "n": list, "win_rate": dict, "n_prompts": int},
    "18_end_to_end": {"computed": bool},
    "19_instruction_mix": {"per_source": dict, "methods": list},
    "20_claims": {"computed": bool},
}


def test_every_chapter_has_a_real_metrics_check():
    assert sorted(REAL_METRICS) == [c.stem for c in CHAPTERS]


@pytest.mark.parametrize("nb", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_on_real_micro_profile(nb, real_micro_chapters, tmp_path_factory, monkeypatch):
    """The chapter executes on real data (real-micro: the AlpacaEval instructions and reference from ../shared,
    the judge pool behind the loopback server), never touches FarmWorld, and writes its real metrics."""
    out = _executed(nb, real_micro_chapters, "real-micro", tmp_path_factory, monkeypatch)
    name, keys = METRICS[nb.stem][0], REAL_METRICS[nb.stem]
    path = _test_runs(tmp_path_factory) / "real-micro" / "metrics" / f"{name}.json"
    metrics = json.loads(path.read_text())
    assert metrics["profile"] == "real-micro" and metrics.get("real") is True, f"{nb.stem}: not its real branch"
    for key, typ in keys.items():
        assert key in metrics, f"{path.name} lacks {key}"
        ok = isinstance(metrics[key], typ) or (typ is float and isinstance(metrics[key], int))
        assert ok, f"{path.name}: {key} is {type(metrics[key]).__name__}, not {typ.__name__}"
    assert "human" not in metrics.get("win_rate", {}), "no people on real data: a FarmWorld crowd slipped in"
    assert_clean_page(out)
    text = out.read_text()
    assert "Real data (real-micro)" in text, f"{nb.stem} does not say what it cannot compute on real data"


def test_farm_run_takes_parameters(tmp_path):
    env = {**os.environ, "FARM_RUNS": str(tmp_path / "runs")}
    out = tmp_path / "fw.ipynb"
    subprocess.run([sys.executable, "-m", "farmlib.cli", "run", "farmworld", "--profile", "micro",
                    "-p", "n_examples", "3", "-o", str(out)], cwd=ROOT, env=env, check=True, capture_output=True)
    nb = json.loads(out.read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert injected and "n_examples = 3" in "".join(injected[0]["source"])


def test_chapter_overrides_reach_the_artifact_and_name_the_row(tmp_path):
    """`farm run ppo -p overrides '{"steps": 2}'`: the Farm merges the override into PPO's config, the
    artifact's key holds it, and the chapter's metrics name the run ``ppo[steps=2]`` in a file of their own."""
    env = {**os.environ, "FARM_RUNS": str(tmp_path / "runs")}
    subprocess.run([sys.executable, "-m", "farmlib.cli", "run", "ppo", "--profile", "micro", "-p", "overrides",
                    '{"steps": 2}', "-o", str(tmp_path / "ppo.ipynb")], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    assert not (tmp_path / "runs" / "micro" / "metrics" / "ppo.json").exists(), "the chapter's own file is untouched"
    metrics = json.loads((tmp_path / "runs" / "micro" / "metrics" / "ppo[steps=2].json").read_text())
    assert metrics["run"] == "ppo[steps=2]" and metrics["config"]["steps"] == 2
    keys = [json.loads(p.read_text()) for p in (tmp_path / "runs" / "micro" / "ppo").glob("*/_artifact.json")]
    assert [k["steps"] for k in keys] == [2]
